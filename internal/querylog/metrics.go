package querylog

import (
	"context"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// The metrics of every Flight call (issue 20), recorded when the call ends, labelled by rpc
// (the Flight method), command (the Flight SQL command or action type), statement (the kind
// the engine recorded) and code (the gRPC code's name): fixed words only, never SQL text, a
// partition value or a key, and command only among the names the protocol defines ("other"
// for anything a client made up), so that no client can grow the label sets.
//
//	flightsrv.rpc.calls            calls
//	flightsrv.rpc.duration         seconds, buckets from a millisecond to an hour
//	flightsrv.query.rows           rows sent
//	flightsrv.query.buckets        buckets read, by tier (hot, archive)
//	flightsrv.query.read.bytes     bytes fetched from object storage
//	flightsrv.query.read.objects   object-store reads
//	flightsrv.query.hot_statements statements sent to the hot store
//	flightsrv.query.bytes_sent     Flight data bytes sent to clients
//	flightsrv.query.row_groups     Parquet row groups, by outcome (read, pruned by statistics)
//	flightsrv.query.pages          Parquet pages, by outcome (read, pruned by statistics)
//
// and of every logical query (logical.go: a query's GetFlightInfo and DoGets, on any
// replica, as one), labelled by statement and code:
//
//	flightsrv.query.duration       seconds from the start of the GetFlightInfo that planned
//	                               the query to the last byte of its last DoGet (a refused
//	                               GetFlightInfo: to its end; an update's DoPut: its own)
//	flightsrv.query.first_batch    seconds from the same start to the first record batch of
//	                               its first DoGet written (statement only; none for a query
//	                               that sent no batch)
//
// Pushdown applied or not is query's flightsrv.aggregate.pushdowns (outcome success,
// fallback, error); admission's are server's flightsrv.admission.*; memory is the engine's
// flightsrv.memory.* and the Go runtime's go.memory.* (internal/telemetry); panics
// recovered are internal/panics' flightsrv.panics.recovered.
type callMetrics struct {
	calls, rows, buckets, bytes, objects, statements, sent, rowGroups, pages metric.Int64Counter
	duration, first, latency                                                 metric.Float64Histogram
}

// DurationBuckets are the bounds (seconds) of flightsrv.rpc.duration: a metadata call takes a
// millisecond, a pushed-down count some, a scan seconds, an analytical query minutes.
var DurationBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900, 1800, 3600}

// newCallMetrics makes the instruments from the global meter provider (a server's
// interceptors make theirs when they are made: ServerOptions); nil if one could not be made.
func newCallMetrics() *callMetrics {
	m := otel.Meter("flightsrv")
	var (
		c   callMetrics
		err error
		all []error
	)
	counter := func(name, unit, desc string) metric.Int64Counter {
		var k metric.Int64Counter
		k, err = m.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		all = append(all, err)
		return k
	}
	c.calls = counter("flightsrv.rpc.calls", "{call}", "Flight calls by rpc, command, statement kind and gRPC code.")
	c.rows = counter("flightsrv.query.rows", "{row}", "Rows sent to clients.")
	c.buckets = counter("flightsrv.query.buckets", "{bucket}", "Buckets read, by tier (hot, archive).")
	c.bytes = counter("flightsrv.query.read.bytes", "By", "Bytes fetched from object storage.")
	c.objects = counter("flightsrv.query.read.objects", "{read}", "Object-store reads.")
	c.statements = counter("flightsrv.query.hot_statements", "{statement}", "Statements sent to the hot store.")
	c.sent = counter("flightsrv.query.bytes_sent", "By", "Flight data bytes sent to clients.")
	c.rowGroups = counter("flightsrv.query.row_groups", "{row_group}", "Parquet row groups read or pruned by statistics, by outcome (read, pruned).")
	c.pages = counter("flightsrv.query.pages", "{page}", "Parquet pages read or pruned by statistics, by outcome (read, pruned).")
	c.first, err = m.Float64Histogram("flightsrv.query.first_batch", metric.WithUnit("s"),
		metric.WithDescription("Time from a query's GetFlightInfo start to the first record batch of its first DoGet written (time to first batch)."),
		metric.WithExplicitBucketBoundaries(DurationBuckets...))
	all = append(all, err)
	c.latency, err = m.Float64Histogram("flightsrv.query.duration", metric.WithUnit("s"),
		metric.WithDescription("Latency of logical queries, from the GetFlightInfo start to the last byte of the last DoGet."),
		metric.WithExplicitBucketBoundaries(DurationBuckets...))
	all = append(all, err)
	c.duration, err = m.Float64Histogram("flightsrv.rpc.duration", metric.WithUnit("s"),
		metric.WithDescription("Duration of Flight calls, from the call's start to its last message."),
		metric.WithExplicitBucketBoundaries(DurationBuckets...))
	all = append(all, err)
	for _, e := range all {
		if e != nil {
			return nil
		}
	}
	return &c
}

// metricCommand is command when the protocol defines it (a Flight SQL message or a known
// action type), else "other" (or "none" when empty).
func metricCommand(command string) string {
	switch {
	case command == "":
		return "none"
	case KnownAction(command):
		return command
	}
	if _, err := protoregistry.GlobalTypes.FindMessageByName(protoreflect.FullName("arrow.flight.protocol.sql." + command)); err == nil {
		return command
	}
	return "other"
}

// query records one logical query (logical.go).
func (m *callMetrics) query(ctx context.Context, q LogicalQuery) {
	if m == nil {
		return
	}
	m.latency.Record(ctx, q.Latency.Seconds(), metric.WithAttributes(attribute.String("statement", q.Statement), attribute.String("code", q.Code.String())))
	if q.HasFirst {
		m.first.Record(ctx, q.First.Seconds(), metric.WithAttributes(attribute.String("statement", q.Statement)))
	}
}

// record adds one ended call to the metrics.
func (m *callMetrics) record(ctx context.Context, rpc, command, statement, code string, d time.Duration, rows, sent int64, hot, archive int, reads Reads) {
	if m == nil {
		return
	}
	if statement == "" {
		statement = "none"
	}
	call := metric.WithAttributes(attribute.String("rpc", rpc), attribute.String("command", metricCommand(command)),
		attribute.String("statement", statement), attribute.String("code", code))
	m.calls.Add(ctx, 1, call)
	m.duration.Record(ctx, d.Seconds(), call)
	query := metric.WithAttributes(attribute.String("rpc", rpc), attribute.String("command", metricCommand(command)), attribute.String("statement", statement))
	if rows > 0 {
		m.rows.Add(ctx, rows, query)
	}
	if sent > 0 {
		m.sent.Add(ctx, sent, query)
	}
	if hot > 0 {
		m.buckets.Add(ctx, int64(hot), metric.WithAttributes(attribute.String("tier", "hot")))
	}
	if archive > 0 {
		m.buckets.Add(ctx, int64(archive), metric.WithAttributes(attribute.String("tier", "archive")))
	}
	if reads.BytesRead > 0 {
		m.bytes.Add(ctx, reads.BytesRead)
	}
	if reads.ObjectReads > 0 {
		m.objects.Add(ctx, reads.ObjectReads)
	}
	if reads.HotStatements > 0 {
		m.statements.Add(ctx, reads.HotStatements)
	}
	for _, c := range []struct {
		k       metric.Int64Counter
		outcome string
		n       int64
	}{{m.rowGroups, "read", reads.RowGroupsRead}, {m.rowGroups, "pruned", reads.RowGroupsPruned}, {m.pages, "read", reads.PagesRead}, {m.pages, "pruned", reads.PagesPruned}} {
		if c.n > 0 {
			c.k.Add(ctx, c.n, metric.WithAttributes(attribute.String("outcome", c.outcome)))
		}
	}
}
