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
//	flightsrv.query.first_batch    seconds from a call's start to its first record batch
//	                               written (DoGet: the time to first batch of an execution)
type callMetrics struct {
	calls, rows, buckets, bytes, objects, statements, sent metric.Int64Counter
	duration, first                                        metric.Float64Histogram
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
	c.first, err = m.Float64Histogram("flightsrv.query.first_batch", metric.WithUnit("s"),
		metric.WithDescription("Time from a call's start to its first record batch written (time to first batch)."),
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

// firstBatch records a call's time to its first batch.
func (m *callMetrics) firstBatch(ctx context.Context, rpc, command, statement string, d time.Duration) {
	if m == nil {
		return
	}
	if statement == "" {
		statement = "none"
	}
	m.first.Record(ctx, d.Seconds(), metric.WithAttributes(attribute.String("rpc", rpc), attribute.String("command", metricCommand(command)),
		attribute.String("statement", statement)))
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
}
