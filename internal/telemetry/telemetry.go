// Package telemetry sets up OpenTelemetry for the flightsrv process: a MeterProvider exported
// on a Prometheus /metrics endpoint and a TracerProvider (spans are recorded and can be
// exported by the OTLP-configured collector later; with no exporter they are sampled and
// dropped). Components take their meters and tracers from the global providers installed here
// (otel.Meter, otel.Tracer), so tests that install nothing get no-op instruments.
package telemetry

import (
	"context"
	"errors"
	"net/http"
	"os"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
)

// Telemetry owns the process's providers. Shutdown flushes and stops them.
type Telemetry struct {
	Meter    *sdkmetric.MeterProvider
	Tracer   *sdktrace.TracerProvider
	Registry *prometheus.Registry
}

// Service names the process in every metric and span (OpenTelemetry's resource):
// service.name "flightsrv", service.version Version and service.instance.id Instance (the
// listen address, or the host name when empty).
type Service struct {
	Version, Instance string
}

// Setup installs global meter and tracer providers of svc's resource; metrics are collected
// into a Prometheus registry served by Handler. Extra span processors (for example a test's
// in-memory recorder) may be passed; with none, spans are not recorded (NeverSample).
func Setup(svc Service, spans ...sdktrace.SpanProcessor) (*Telemetry, error) {
	reg := prometheus.NewRegistry()
	exp, err := otelprom.New(otelprom.WithRegisterer(reg))
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
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exp), sdkmetric.WithResource(res))
	opts := []sdktrace.TracerProviderOption{sdktrace.WithResource(res)}
	for _, sp := range spans {
		opts = append(opts, sdktrace.WithSpanProcessor(sp))
	}
	if len(spans) == 0 {
		// No processor would ever see a recorded span: spans are not recorded, which spares
		// the per-bucket spans' allocations (about 3% of an analytical query's CPU and of the
		// heap it allocates, bench's BenchmarkAnalytical); their span contexts, and so the
		// trace IDs in the logs and the context propagated to peers, are made all the same.
		opts = append(opts, sdktrace.WithSampler(sdktrace.NeverSample()))
	}
	tp := sdktrace.NewTracerProvider(opts...)
	otel.SetMeterProvider(mp)
	otel.SetTracerProvider(tp)
	return &Telemetry{Meter: mp, Tracer: tp, Registry: reg}, nil
}

// Handler serves the Prometheus text exposition of the process's metrics.
func (t *Telemetry) Handler() http.Handler {
	return promhttp.HandlerFor(t.Registry, promhttp.HandlerOpts{})
}

// Shutdown stops both providers, flushing what they hold.
func (t *Telemetry) Shutdown(ctx context.Context) error {
	return errors.Join(t.Meter.Shutdown(ctx), t.Tracer.Shutdown(ctx))
}
