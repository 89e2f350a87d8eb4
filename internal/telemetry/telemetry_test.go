package telemetry

import (
	"context"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"gocloud.dev/blob"
	_ "gocloud.dev/blob/memblob" // mem:// buckets
)

// TestServiceNamed: the process's metrics name the service (service.name flightsrv, its
// version and instance) instead of unknown_service, as Prometheus' target_info shows them.
func TestServiceNamed(t *testing.T) {
	prevM, prevT := otel.GetMeterProvider(), otel.GetTracerProvider()
	defer func() { otel.SetMeterProvider(prevM); otel.SetTracerProvider(prevT) }()
	tel, err := Setup(context.Background(), Service{Version: "1.2.3", Instance: "127.0.0.1:32010"}, Export{})
	if err != nil {
		t.Fatal(err)
	}
	defer tel.Shutdown(context.Background())
	c, _ := otel.Meter("test").Int64Counter("flightsrv.test.things")
	c.Add(context.Background(), 1)
	rec := httptest.NewRecorder()
	tel.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	for _, want := range []string{`service_name="flightsrv"`, `service_version="1.2.3"`, `service_instance_id="127.0.0.1:32010"`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %s:\n%.3000s", want, body)
		}
	}
	if strings.Contains(string(body), "unknown_service") {
		t.Error("/metrics names unknown_service")
	}
}

// TestObjectStoreCallsAreNotSpans: under the providers Setup installs, a gocloud.dev bucket's
// calls (a real in-memory bucket: a write, an attributes call, a ranged read) start no span of
// their own; the caller's span is the one recorded, and the providers' other tracers still
// record theirs (untracedScopes).
func TestObjectStoreCallsAreNotSpans(t *testing.T) {
	prevM, prevT := otel.GetMeterProvider(), otel.GetTracerProvider()
	defer func() { otel.SetMeterProvider(prevM); otel.SetTracerProvider(prevT) }()
	rec := tracetest.NewSpanRecorder()
	tel, err := Setup(context.Background(), Service{Version: "test"}, Export{}, rec)
	if err != nil {
		t.Fatal(err)
	}
	defer tel.Shutdown(context.Background())
	ctx, span := otel.Tracer("github.com/flightsrv/flightsrv/archive").Start(context.Background(), "pulpitum.archive.read")
	bucket, err := blob.OpenBucket(ctx, "mem://")
	if err != nil {
		t.Fatal(err)
	}
	defer bucket.Close()
	if err := bucket.WriteAll(ctx, "payload", []byte("0123456789"), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := bucket.Attributes(ctx, "payload"); err != nil {
		t.Fatal(err)
	}
	r, err := bucket.NewRangeReader(ctx, "payload", 2, 4, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(r)
	r.Close()
	if err != nil || string(got) != "2345" {
		t.Fatalf("ranged read %q, %v", got, err)
	}
	span.End()
	var names []string
	for _, s := range rec.Ended() {
		names = append(names, s.Name())
	}
	if len(names) != 1 || names[0] != "pulpitum.archive.read" {
		t.Fatalf("spans recorded %q, want only the caller's pulpitum.archive.read", names)
	}
}

// TestExportBatchSize: spans are exported DefaultExportBatchSpans to a request unless
// OTEL_BSP_MAX_EXPORT_BATCH_SIZE sets the size (then the SDK's reading of it stands), and
// never more than a smaller OTEL_BSP_MAX_QUEUE_SIZE holds.
func TestExportBatchSize(t *testing.T) {
	batch := func() int {
		o := sdktrace.BatchSpanProcessorOptions{MaxExportBatchSize: -1}
		for _, opt := range batchOptions() {
			opt(&o)
		}
		return o.MaxExportBatchSize
	}
	t.Setenv("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "")
	t.Setenv("OTEL_BSP_MAX_QUEUE_SIZE", "")
	if n := batch(); n != DefaultExportBatchSpans {
		t.Fatalf("batch of %d spans, want %d", n, DefaultExportBatchSpans)
	}
	t.Setenv("OTEL_BSP_MAX_QUEUE_SIZE", "16")
	if n := batch(); n != 16 {
		t.Fatalf("batch of %d spans under a queue of 16", n)
	}
	t.Setenv("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "300")
	if n := batch(); n != -1 {
		t.Fatalf("OTEL_BSP_MAX_EXPORT_BATCH_SIZE=300 overridden with %d", n)
	}
}
