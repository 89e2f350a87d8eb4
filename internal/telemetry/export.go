package telemetry

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"

	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// Export configures OpenTelemetry export over OTLP (serve's --otlp-endpoint and
// --otlp-protocol). Its zero value leaves everything to the standard environment variables,
// which the official exporters read: OTEL_EXPORTER_OTLP_ENDPOINT (or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT / OTEL_EXPORTER_OTLP_METRICS_ENDPOINT for one signal),
// OTEL_EXPORTER_OTLP_PROTOCOL (or its _TRACES_ / _METRICS_ forms), and the headers, timeout,
// compression, certificate and insecure variables of the same families; OTEL_BSP_* (span
// batching), OTEL_METRIC_EXPORT_INTERVAL / _TIMEOUT (metric push) and OTEL_TRACES_SAMPLER are
// read by the SDK. A signal is exported when an endpoint is configured for it (by Endpoint or
// a variable) and its OTEL_{TRACES,METRICS}_EXPORTER is not "none"; OTEL_SDK_DISABLED=true
// exports nothing. Nothing configured: nothing exported (the Prometheus /metrics endpoint is
// served either way).
type Export struct {
	// Endpoint is the OTLP endpoint URL of both signals (http:// or https://, the scheme of
	// OTEL_EXPORTER_OTLP_ENDPOINT: over grpc, http:// is a plaintext connection; over
	// http/protobuf, the signal's path /v1/traces or /v1/metrics is appended). It overrides
	// every endpoint variable. "" leaves the endpoints to the variables.
	Endpoint string
	// Protocol is ProtocolGRPC or ProtocolHTTP for both signals, overriding the protocol
	// variables; "" leaves it to them (default ProtocolHTTP, the OpenTelemetry
	// specification's default).
	Protocol string
}

// The OTLP transports (the values of OTEL_EXPORTER_OTLP_PROTOCOL).
const (
	ProtocolGRPC = "grpc"
	ProtocolHTTP = "http/protobuf"
)

// Validate returns an error naming the flag for an Endpoint that is no http(s) URL with a
// host, or a Protocol other than ProtocolGRPC and ProtocolHTTP.
func (e Export) Validate() error {
	if e.Endpoint != "" {
		u, err := url.Parse(e.Endpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("--otlp-endpoint %q: want an http:// or https:// URL such as http://collector:4318", e.Endpoint)
		}
	}
	if e.Protocol != "" && e.Protocol != ProtocolGRPC && e.Protocol != ProtocolHTTP {
		return fmt.Errorf("--otlp-protocol %q: want %s or %s", e.Protocol, ProtocolGRPC, ProtocolHTTP)
	}
	return nil
}

// signal is one OTLP signal's configuration: its name in the variables (TRACES, METRICS)
// and URL path.
type signal struct{ env, path string }

var (
	traces  = signal{"TRACES", "v1/traces"}
	metrics = signal{"METRICS", "v1/metrics"}
)

// enabled reports whether sig is exported (see Export).
func (e Export) enabled(sig signal) bool {
	if strings.EqualFold(os.Getenv("OTEL_SDK_DISABLED"), "true") || strings.EqualFold(strings.TrimSpace(os.Getenv("OTEL_"+sig.env+"_EXPORTER")), "none") {
		return false
	}
	return e.Endpoint != "" || os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_"+sig.env+"_ENDPOINT") != ""
}

// protocol returns sig's transport: Protocol, else the signal's variable, else the general
// one, else ProtocolHTTP; an error for a value that is neither transport.
func (e Export) protocol(sig signal) (string, error) {
	p, from := e.Protocol, "--otlp-protocol"
	for _, v := range []string{"OTEL_EXPORTER_OTLP_" + sig.env + "_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		if p == "" {
			p, from = strings.TrimSpace(os.Getenv(v)), v
		}
	}
	switch p {
	case "":
		return ProtocolHTTP, nil
	case ProtocolGRPC, ProtocolHTTP:
		return p, nil
	}
	return "", fmt.Errorf("%s %q: want %s or %s", from, p, ProtocolGRPC, ProtocolHTTP)
}

// url returns the endpoint URL of sig when Endpoint is set ("" otherwise): Endpoint itself
// over grpc, Endpoint with the signal's path appended over http/protobuf, as the exporters
// treat OTEL_EXPORTER_OTLP_ENDPOINT.
func (e Export) url(sig signal, protocol string) string {
	if e.Endpoint == "" || protocol == ProtocolGRPC {
		return e.Endpoint
	}
	return strings.TrimSuffix(e.Endpoint, "/") + "/" + sig.path
}

// spanExporter returns the OTLP span exporter, or nil when traces are not exported.
func (e Export) spanExporter(ctx context.Context) (sdktrace.SpanExporter, error) {
	if !e.enabled(traces) {
		return nil, nil
	}
	p, err := e.protocol(traces)
	if err != nil {
		return nil, err
	}
	u := e.url(traces, p)
	if p == ProtocolGRPC {
		var opts []otlptracegrpc.Option
		if u != "" {
			opts = append(opts, otlptracegrpc.WithEndpointURL(u))
		}
		return otlptracegrpc.New(ctx, opts...)
	}
	var opts []otlptracehttp.Option
	if u != "" {
		opts = append(opts, otlptracehttp.WithEndpointURL(u))
	}
	return otlptracehttp.New(ctx, opts...)
}

// metricExporter returns the OTLP metric exporter, or nil when metrics are not exported.
func (e Export) metricExporter(ctx context.Context) (sdkmetric.Exporter, error) {
	if !e.enabled(metrics) {
		return nil, nil
	}
	p, err := e.protocol(metrics)
	if err != nil {
		return nil, err
	}
	u := e.url(metrics, p)
	if p == ProtocolGRPC {
		var opts []otlpmetricgrpc.Option
		if u != "" {
			opts = append(opts, otlpmetricgrpc.WithEndpointURL(u))
		}
		return otlpmetricgrpc.New(ctx, opts...)
	}
	var opts []otlpmetrichttp.Option
	if u != "" {
		opts = append(opts, otlpmetrichttp.WithEndpointURL(u))
	}
	return otlpmetrichttp.New(ctx, opts...)
}
