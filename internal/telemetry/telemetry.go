// Package telemetry sets up OpenTelemetry for the flightsrv process, and is the one place
// that does: a MeterProvider exported on a Prometheus /metrics endpoint and, when OTLP export
// is configured (export.go: the standard OTEL_EXPORTER_OTLP_* variables or serve's
// --otlp-endpoint and --otlp-protocol), pushed over OTLP as well; a TracerProvider whose spans
// are batched to the OTLP exporter when traces are exported (otherwise they are sampled and
// dropped); and the W3C trace-context propagator. Components take their meters and tracers
// from the global providers installed here (otel.Meter, otel.Tracer), so tests that install
// nothing get no-op instruments. Export failures (a collector down) are logged, rate-limited,
// and never fail a query.
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/contrib/instrumentation/runtime"
	"go.opentelemetry.io/otel"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/exemplar"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/flightsrv/flightsrv/internal/ratelog"
)

// Telemetry owns the process's providers. Shutdown flushes and stops them.
type Telemetry struct {
	Meter    *sdkmetric.MeterProvider
	Tracer   *sdktrace.TracerProvider
	Registry *prometheus.Registry
	// Traces and Metrics report whether each signal is exported over OTLP (Export).
	Traces, Metrics bool
}

// Service names the process in every metric and span (OpenTelemetry's resource):
// service.name "flightsrv", service.version Version and service.instance.id Instance (the
// listen address, or the host name when empty).
type Service struct {
	Version, Instance string
}

// Setup installs global meter and tracer providers of svc's resource and the W3C trace-context
// (and baggage) propagator; metrics are collected into a Prometheus registry served by
// Handler, and exported over OTLP as exp and the environment configure (Export). Extra span
// processors (for example a test's in-memory recorder) may be passed; with none and no OTLP
// trace export, spans are not recorded (NeverSample). Errors: an invalid
// export configuration (naming the flag or variable), or an exporter that cannot be made;
// nothing is installed then. The exporters connect lazily: a collector that is down does not
// fail Setup.
func Setup(ctx context.Context, svc Service, exp Export, spans ...sdktrace.SpanProcessor) (*Telemetry, error) {
	if err := exp.Validate(); err != nil {
		return nil, err
	}
	spanExp, err := exp.spanExporter(ctx)
	if err != nil {
		return nil, fmt.Errorf("OTLP trace exporter: %w", err)
	}
	metricExp, err := exp.metricExporter(ctx)
	if err != nil {
		if spanExp != nil {
			_ = spanExp.Shutdown(ctx)
		}
		return nil, fmt.Errorf("OTLP metric exporter: %w", err)
	}
	reg := prometheus.NewRegistry()
	prom, err := otelprom.New(otelprom.WithRegisterer(reg))
	if err != nil {
		return nil, err
	}
	if svc.Instance == "" {
		svc.Instance, _ = os.Hostname()
	}
	res, err := resource.Merge(resource.Default(), resource.NewWithAttributes(semconv.SchemaURL,
		semconv.ServiceName("flightsrv"), semconv.ServiceVersion(svc.Version), semconv.ServiceInstanceID(svc.Instance)))
	if err != nil {
		return nil, err
	}
	mopts := []sdkmetric.Option{sdkmetric.WithReader(prom), sdkmetric.WithResource(res)}
	if os.Getenv("OTEL_METRICS_EXEMPLAR_FILTER") == "" {
		// No exemplars unless the variable asks for them (the SDK's default, trace_based,
		// would attach a sampled span's ids to every measurement made under it once traces
		// are exported: a reservoir offer per measurement and reader, gocloud.dev's per-call
		// latencies among them). /metrics never shows exemplars (its text format has none).
		mopts = append(mopts, sdkmetric.WithExemplarFilter(exemplar.AlwaysOffFilter))
	}
	if metricExp != nil {
		// The push interval and timeout come from OTEL_METRIC_EXPORT_INTERVAL and
		// OTEL_METRIC_EXPORT_TIMEOUT (60 s and 30 s by default).
		mopts = append(mopts, sdkmetric.WithReader(sdkmetric.NewPeriodicReader(metricExp)))
	}
	mp := sdkmetric.NewMeterProvider(mopts...)
	// The Go runtime's memory and scheduler (go.memory.used, go.memory.limit,
	// go.memory.allocated, go.goroutine.count…), from OpenTelemetry's runtime instrumentation.
	if err := runtime.Start(runtime.WithMeterProvider(mp)); err != nil {
		_ = mp.Shutdown(ctx)
		return nil, fmt.Errorf("Go runtime metrics: %w", err)
	}
	opts := []sdktrace.TracerProviderOption{sdktrace.WithResource(res)}
	if spanExp != nil {
		// Batched (OTEL_BSP_SCHEDULE_DELAY, OTEL_BSP_MAX_QUEUE_SIZE…): a query never waits
		// for the collector; spans beyond the queue are dropped.
		opts = append(opts, sdktrace.WithBatcher(spanExp, batchOptions()...))
	}
	for _, sp := range spans {
		opts = append(opts, sdktrace.WithSpanProcessor(sp))
	}
	if len(spans) == 0 && spanExp == nil {
		// No processor would ever see a recorded span: spans are not recorded, which spares
		// the per-bucket spans' allocations (about 3% of an analytical query's CPU and of the
		// heap it allocates, bench's BenchmarkAnalytical); their span contexts, and so the
		// trace IDs in the logs and the context propagated to peers, are made all the same.
		opts = append(opts, sdktrace.WithSampler(sdktrace.NeverSample()))
	}
	tp := sdktrace.NewTracerProvider(opts...)
	otel.SetMeterProvider(mp)
	otel.SetTracerProvider(ownSpans{tp})
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	failures := ratelog.New(nil, 1.0/60, 3)
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		failures.Warn("telemetry export failed", "err", err.Error())
	}))
	return &Telemetry{Meter: mp, Tracer: tp, Registry: reg, Traces: spanExp != nil, Metrics: metricExp != nil}, nil
}

// DefaultExportBatchSpans is the most spans exported in one request when
// OTEL_BSP_MAX_EXPORT_BATCH_SIZE is not set (the SDK's own default is 512). A request of 512 of
// flightsrv's spans outgrows gRPC's pooled buffers (the largest below 1 MiB holds 32 KiB): its
// codec then marshals each into a fresh 1 MiB buffer, and under serve's 40 MiB memory limit
// (cmd/flightsrv/memlimit.go) that churn and the batch held at once made the collector run
// more often (bench's BenchmarkOTLPExport, bench/doc.go: 45 MB of such buffers over 700
// queries). Requests of 64
// spans fit in 32 KiB buffers, reused; at bench's rate (about 35 queries a second, 14 spans
// each) that is 8 requests a second.
const DefaultExportBatchSpans = 64

// batchOptions returns the batch span processor's options: DefaultExportBatchSpans as the
// export batch size unless OTEL_BSP_MAX_EXPORT_BATCH_SIZE sets one (bounded by a smaller
// OTEL_BSP_MAX_QUEUE_SIZE, as the SDK bounds its own default); the SDK reads the other
// OTEL_BSP_* variables itself.
func batchOptions() []sdktrace.BatchSpanProcessorOption {
	if os.Getenv("OTEL_BSP_MAX_EXPORT_BATCH_SIZE") != "" {
		return nil
	}
	n := DefaultExportBatchSpans
	if q, err := strconv.Atoi(strings.TrimSpace(os.Getenv("OTEL_BSP_MAX_QUEUE_SIZE"))); err == nil && q > 0 {
		n = min(n, q)
	}
	return []sdktrace.BatchSpanProcessorOption{sdktrace.WithMaxExportBatchSize(n)}
}

// untracedScopes are the instrumentation scopes (tracer names) given a no-op tracer: those of
// gocloud.dev, whose blob package starts a span for every object-store call (Attributes,
// ListPage, each ranged read: 12 of the 26 spans of an ORD scan in bench's
// BenchmarkOTLPExport). flightsrv's own pulpitum.archive.read and pulpitum.archive.write spans
// already carry those calls' count and bytes (docs/pulpitum-v4.md §6.1); recording and
// exporting the library's spans nearly doubled what a query exported (bench/doc.go).
// gocloud.dev's metrics are kept.
var untracedScopes = []string{"gocloud.dev/"}

// ownSpans is the process's TracerProvider: the SDK's, except that the tracers of
// untracedScopes start no span (their calls' spans are their caller's).
type ownSpans struct{ *sdktrace.TracerProvider }

func (p ownSpans) Tracer(name string, opts ...trace.TracerOption) trace.Tracer {
	for _, prefix := range untracedScopes {
		if strings.HasPrefix(name, prefix) {
			return noop.Tracer{}
		}
	}
	return p.TracerProvider.Tracer(name, opts...)
}

// Handler serves the Prometheus text exposition of the process's metrics.
func (t *Telemetry) Handler() http.Handler {
	return promhttp.HandlerFor(t.Registry, promhttp.HandlerOpts{})
}

// Shutdown stops both providers, flushing what they hold.
func (t *Telemetry) Shutdown(ctx context.Context) error {
	return errors.Join(t.Meter.Shutdown(ctx), t.Tracer.Shutdown(ctx))
}
