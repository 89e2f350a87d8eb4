package cockroach_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/routing/cockroach"
	"github.com/flightsrv/flightsrv/routing/storetest"
)

func TestStatementSpans(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	s := migrated(t, cockroach.Config{TracerProvider: tp})

	const secret = "secret-channel-4411"
	b := routing.BucketFor("t.spans", []byte(secret), routing.CalendarDayUTC, time.Date(2024, 2, 29, 12, 0, 0, 0, time.UTC))
	if err := s.Append(ctx, b, []routing.Record{{PartitionKey: []byte(secret), EventTime: b.Start, SortKey: []byte("k"), Value: []byte("v")}}); err != nil {
		t.Fatal(err)
	}
	stats := &routing.ReadStats{}
	if err := storetest.Drain(s.ScanRange(routing.WithReadStats(ctx, stats), b, routing.BatchRequest{Range: b.Range(), Columns: routing.AllColumns, Limit: 10})); err != nil {
		t.Fatal(err)
	}
	if _, err := storetest.Count(ctx, s, b, b.Range()); err != nil {
		t.Fatal(err)
	}

	byName := map[string][]sdktrace.ReadOnlySpan{}
	for _, sp := range spans.Ended() {
		byName[sp.Name()] = append(byName[sp.Name()], sp)
		for _, kv := range sp.Attributes() {
			if v := kv.Value.Emit(); strings.Contains(v, secret) || strings.Contains(v, b.Key) {
				t.Errorf("span %q attribute %s reveals a partition or bucket value: %q", sp.Name(), kv.Key, v)
			}
		}
	}
	for _, name := range []string{"pulpitum.schema.migrate", "BEGIN", "COMMIT", "SELECT pulpitum_v4_bucket_metadata",
		"INSERT pulpitum_v4_bucket_metadata", "APPEND durable bucket", "SELECT routed durable bucket scan",
		"SELECT routed durable bucket count"} {
		if len(byName[name]) == 0 {
			t.Errorf("no span %q; got %v", name, keysOf(byName))
		}
	}
	read := byName["SELECT routed durable bucket scan"][0]
	if read.SpanKind() != trace.SpanKindClient {
		t.Errorf("read span kind = %v", read.SpanKind())
	}
	want := map[attribute.Key]string{
		"db.system.name":     "cockroachdb",
		"db.operation.name":  "SELECT",
		"db.collection.name": "pulpitum_v4_records",
		"db.query.summary":   "SELECT routed durable bucket scan",
		"server.address":     "127.0.0.1",
	}
	got := map[attribute.Key]attribute.Value{}
	for _, kv := range read.Attributes() {
		got[kv.Key] = kv.Value
	}
	for k, v := range want {
		if got[k].Emit() != v {
			t.Errorf("read span %s = %q, want %q", k, got[k].Emit(), v)
		}
	}
	if n := got["db.response.returned_rows"].AsInt64(); n != 2 {
		t.Errorf("db.response.returned_rows = %d, want 2 (the route row and the record)", n)
	}
	if text := got["db.query.text"].AsString(); !strings.Contains(text, "$1") {
		t.Errorf("db.query.text is not the parameterised statement: %q", text)
	}
	// The migration's statements are children of the migrate span.
	migrate := byName["pulpitum.schema.migrate"][0]
	children := 0
	for _, sp := range spans.Ended() {
		if sp.Parent().SpanID() == migrate.SpanContext().SpanID() {
			children++
		}
	}
	if children < 4 {
		t.Errorf("migrate span has %d statement children", children)
	}
	if stats.HotStatements.Load() != 1 {
		t.Errorf("ScanRange counted %d statements", stats.HotStatements.Load())
	}
}

func keysOf[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
