package telemetry

import (
	"strings"
	"testing"
)

// TestExportConfiguration: a signal is exported when an endpoint is configured for it (the
// flag, the general variable or the signal's own) unless its exporter is "none" or the SDK is
// disabled; the flag's protocol overrides the signal's variable, which overrides the general
// one, and http/protobuf is the default; a bad endpoint or protocol names its flag or
// variable; over http/protobuf the flag's endpoint gets the signal's path.
func TestExportConfiguration(t *testing.T) {
	for _, v := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
		"OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL",
		"OTEL_TRACES_EXPORTER", "OTEL_METRICS_EXPORTER", "OTEL_SDK_DISABLED"} {
		t.Setenv(v, "")
	}
	if (Export{}).enabled(traces) || (Export{}).enabled(metrics) {
		t.Fatal("exporting with nothing configured")
	}
	if !(Export{Endpoint: "http://c:4318"}).enabled(traces) {
		t.Fatal("the flag's endpoint does not export traces")
	}
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://c:4318/v1/traces")
	if !(Export{}).enabled(traces) || (Export{}).enabled(metrics) {
		t.Fatal("the traces endpoint variable should export traces only")
	}
	t.Setenv("OTEL_TRACES_EXPORTER", "none")
	if (Export{}).enabled(traces) {
		t.Fatal("OTEL_TRACES_EXPORTER=none exports traces")
	}
	t.Setenv("OTEL_TRACES_EXPORTER", "")
	t.Setenv("OTEL_SDK_DISABLED", "true")
	if (Export{Endpoint: "http://c:4318"}).enabled(traces) {
		t.Fatal("OTEL_SDK_DISABLED=true exports traces")
	}

	if p, _ := (Export{}).protocol(traces); p != ProtocolHTTP {
		t.Fatalf("default protocol %q", p)
	}
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
	t.Setenv("OTEL_EXPORTER_OTLP_METRICS_PROTOCOL", "http/protobuf")
	if p, _ := (Export{}).protocol(traces); p != ProtocolGRPC {
		t.Fatalf("traces protocol %q, want the general variable's grpc", p)
	}
	if p, _ := (Export{}).protocol(metrics); p != ProtocolHTTP {
		t.Fatalf("metrics protocol %q, want the metrics variable's http/protobuf", p)
	}
	if p, _ := (Export{Protocol: ProtocolGRPC}).protocol(metrics); p != ProtocolGRPC {
		t.Fatalf("the flag's protocol does not override: %q", p)
	}
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")
	if _, err := (Export{}).protocol(traces); err == nil || !strings.Contains(err.Error(), "OTEL_EXPORTER_OTLP_PROTOCOL") {
		t.Fatalf("http/json: %v", err)
	}
	for _, bad := range []Export{{Endpoint: "collector:4317"}, {Endpoint: "ftp://c"}, {Protocol: "udp"}} {
		if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "--otlp-") {
			t.Errorf("%+v: %v", bad, err)
		}
	}
	e := Export{Endpoint: "http://c:4318/"}
	if u := e.url(metrics, ProtocolHTTP); u != "http://c:4318/v1/metrics" {
		t.Errorf("http metrics URL %q", u)
	}
	if u := e.url(traces, ProtocolGRPC); u != "http://c:4318/" {
		t.Errorf("grpc URL %q", u)
	}
}
