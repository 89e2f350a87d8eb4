package e2e

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/flightsrv/flightsrv/internal/querylog"
)

// partitionWord finds the partition value ORD as a word (SQL text holds ORDER BY).
var partitionWord = regexp.MustCompile(`\bORD\b`)

// TestCountIsTracedAndMeasured checks the seed's observability plan: a pushed-down COUNT(*)
// has its "COUNT <table>" span with the routed-aggregate attributes and a bucket count, no
// attribute carries the partition value, the pushdown counter and duration histogram are
// labelled by source and outcome only, and no record-read span appears for the count.
func TestCountIsTracedAndMeasured(t *testing.T) {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	prevT, prevM := otel.GetTracerProvider(), otel.GetMeterProvider()
	otel.SetTracerProvider(tp)
	otel.SetMeterProvider(mp)
	t.Cleanup(func() { otel.SetTracerProvider(prevT); otel.SetMeterProvider(prevM) })

	e := newEnv(t) // built after the providers are installed, so its instruments use them
	cl := dial(t, e.on)
	from, to := ts("2001-03-15T00:00:00Z"), ts("2001-04-15T00:00:00Z")
	if got, want := scalarCount(t, mustRun(t, cl, countSQL("ORD", from, to))), int64(len(expected(e.sample, "ORD", from, to))); got != want {
		t.Fatalf("count %d, want %d", got, want)
	}

	var count sdktrace.ReadOnlySpan
	for _, s := range spans.Ended() {
		if s.Name() == "COUNT flights" {
			count = s
		}
		for _, kv := range s.Attributes() {
			if partitionWord.MatchString(kv.Value.Emit()) {
				t.Errorf("span %q attribute %s carries the partition value", s.Name(), kv.Key)
			}
		}
	}
	if count == nil {
		t.Fatalf("no COUNT span among %d spans", len(spans.Ended()))
	}
	attrs := map[attribute.Key]attribute.Value{}
	for _, kv := range count.Attributes() {
		attrs[kv.Key] = kv.Value
	}
	for k, want := range map[attribute.Key]string{
		"db.operation.name": "COUNT", "pulpitum.sql.mode": "routed_aggregate", "pulpitum.aggregate": "count",
	} {
		if got := attrs[k].AsString(); got != want {
			t.Errorf("attribute %s = %q, want %q", k, got, want)
		}
	}
	if n := attrs["pulpitum.query.buckets_scanned"].AsInt64(); n != 2 {
		t.Errorf("buckets_scanned = %d, want 2", n)
	}
	// The March bucket is archived and ORD's April bucket is archiving (read from the hot store).
	if attrs["pulpitum.query.archive_buckets"].AsInt64() != 1 || attrs["pulpitum.query.hot_buckets"].AsInt64() != 1 {
		t.Errorf("tiers: %v hot, %v archive", attrs["pulpitum.query.hot_buckets"].Emit(), attrs["pulpitum.query.archive_buckets"].Emit())
	}
	for _, s := range spans.Ended() {
		if s.Parent().SpanID() == count.SpanContext().SpanID() && strings.Contains(s.Name(), "routed durable bucket range") && !strings.Contains(s.Name(), "COUNT") {
			t.Errorf("record read span %q under the count", s.Name())
		}
	}

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != "flightsrv.aggregate.pushdowns" {
				continue
			}
			for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
				src, _ := dp.Attributes.Value("source")
				out, _ := dp.Attributes.Value("outcome")
				if dp.Attributes.Len() != 2 {
					t.Errorf("pushdown counter labels %v", dp.Attributes.ToSlice())
				}
				if src.AsString() == "mixed" && out.AsString() == "success" && dp.Value >= 1 {
					found = true
				}
			}
		}
	}
	if !found {
		t.Fatal("no pushdown counter point with source=mixed, outcome=success")
	}
}

// TestListActionsIsHonest: ListActions advertises what the server does, and an unknown action
// is UNIMPLEMENTED (clients fall back on that code).
func TestListActionsIsHonest(t *testing.T) {
	e := newEnv(t)
	cl := dial(t, e.on)
	ctx := context.Background()
	stream, err := cl.Client.ListActions(ctx, &flight.Empty{})
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for {
		a, err := stream.Recv()
		if err != nil {
			break
		}
		types = append(types, a.GetType())
	}
	if !slices.Contains(types, "CreatePreparedStatement") || slices.Contains(types, "BeginTransaction") {
		t.Fatalf("advertised actions %v", types)
	}
	do, err := cl.Client.DoAction(ctx, &flight.Action{Type: "NoSuchAction"})
	if err == nil {
		_, err = do.Recv()
	}
	if status.Code(err) != codes.Unimplemented {
		t.Fatalf("unknown action: %v", err)
	}
}

// TestReadsAreTraced: every DoGet span carries what its query read from the stores
// (routing.ReadStats through internal/querylog's Reads): an archived scan of ORD's February
// fetched objects and bytes and decoded exactly the rows it returned; a hot scan of July sent
// statements and read its rows from the hot store; a pushed-down count read no record at all.
func TestReadsAreTraced(t *testing.T) {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	prevT := otel.GetTracerProvider()
	otel.SetTracerProvider(tp)
	t.Cleanup(func() { otel.SetTracerProvider(prevT) })

	e := newEnv(t)
	cl := dial(t, e.on)
	doGet := func(sql string) (rows int64, attrs map[attribute.Key]attribute.Value) {
		t.Helper()
		before := len(spans.Ended())
		res := mustRun(t, cl, sql)
		for _, n := range res.batchRows {
			rows += n
		}
		for _, s := range spans.Ended()[before:] {
			if s.Name() == "arrow.flight.protocol.FlightService/DoGet" {
				attrs = map[attribute.Key]attribute.Value{}
				for _, kv := range s.Attributes() {
					attrs[kv.Key] = kv.Value
				}
			}
		}
		if attrs == nil {
			t.Fatalf("%s: no DoGet span", sql)
		}
		return rows, attrs
	}
	feb := "origin = 'ORD' AND timestamp >= '2001-02-01' AND timestamp < '2001-03-01'"
	rows, a := doGet("SELECT timestamp, id, value FROM flights WHERE " + feb)
	if rows == 0 || a["flightsrv.read.archive_rows"].AsInt64() != rows || a["flightsrv.read.hot_rows"].AsInt64() != 0 ||
		a["flightsrv.read.objects"].AsInt64() == 0 || a["flightsrv.read.bytes"].AsInt64() == 0 {
		t.Errorf("archived scan of %d rows: %v", rows, a)
	}
	rows, a = doGet("SELECT id FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-06-01' AND timestamp < '2001-06-08'")
	if rows == 0 || a["flightsrv.read.hot_rows"].AsInt64() != rows || a["flightsrv.read.hot_statements"].AsInt64() == 0 ||
		a["flightsrv.read.archive_rows"].AsInt64() != 0 {
		t.Errorf("hot scan of %d rows: %v", rows, a)
	}
	_, a = doGet("SELECT count(*) FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01'")
	if a["flightsrv.read.hot_rows"].AsInt64() != 0 || a["flightsrv.read.archive_rows"].AsInt64() != 0 || a["flightsrv.read.hot_statements"].AsInt64() == 0 {
		t.Errorf("pushed-down count: %v", a)
	}
}

// TestQueriesAreMeasured: every Flight call counts in flightsrv.rpc.calls and
// flightsrv.rpc.duration (bounds from a millisecond to an hour) by rpc, command, statement kind
// and code; rows, buckets by tier and object-store bytes are counted; labels hold fixed words
// only (an invented command is "other", never its text nor a partition value).
func TestQueriesAreMeasured(t *testing.T) {
	reader := recordMetrics(t)
	e := newEnv(t) // after the provider: its servers' instruments use it
	cl := dial(t, e.on)
	ctx := context.Background()
	res := mustRun(t, cl, "SELECT timestamp, id FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-02-01' AND timestamp < '2001-02-08'")
	var rows int64
	for _, n := range res.batchRows {
		rows += n
	}
	if _, err := run(ctx, cl, "SELECT id FROM flights WHERE id = 'x'"); status.Code(err) != codes.InvalidArgument {
		t.Fatal(err)
	}
	do, err := cl.Client.DoAction(ctx, &flight.Action{Type: "ORD-secret-action"})
	if err == nil {
		_, _ = do.Recv()
	}

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		t.Fatal(err)
	}
	calls := map[string]int64{}
	var sent, archived, bytesRead int64
	var bounds []float64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch m.Name {
			case "flightsrv.rpc.calls":
				for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
					var key []string
					for _, k := range []attribute.Key{"rpc", "command", "statement", "code"} {
						v, _ := dp.Attributes.Value(k)
						key = append(key, v.AsString())
					}
					calls[strings.Join(key, " ")] += dp.Value
					for _, kv := range dp.Attributes.ToSlice() {
						if strings.Contains(kv.Value.Emit(), "ORD") {
							t.Errorf("label %s holds a client's word: %s", kv.Key, kv.Value.Emit())
						}
					}
				}
			case "flightsrv.rpc.duration":
				for _, dp := range m.Data.(metricdata.Histogram[float64]).DataPoints {
					bounds = dp.Bounds
				}
			case "flightsrv.query.rows":
				for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
					sent += dp.Value
				}
			case "flightsrv.query.buckets":
				for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
					if v, _ := dp.Attributes.Value("tier"); v.AsString() == "archive" {
						archived += dp.Value
					}
				}
			case "flightsrv.query.read.bytes":
				for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
					bytesRead += dp.Value
				}
			}
		}
	}
	for _, want := range []string{
		"GetFlightInfo CommandStatementQuery SELECT OK", "DoGet TicketStatementQuery SELECT OK",
		"GetFlightInfo CommandStatementQuery SELECT InvalidArgument", "DoAction other none Unimplemented",
	} {
		if calls[want] < 1 {
			t.Errorf("no call counted as %q; counted %v", want, calls)
		}
	}
	if sent != rows || archived < 1 || bytesRead == 0 {
		t.Errorf("rows sent %d of %d, archived buckets %d, bytes read %d", sent, rows, archived, bytesRead)
	}
	if !slices.Equal(bounds, querylog.DurationBuckets) {
		t.Errorf("duration bounds %v", bounds)
	}
}
