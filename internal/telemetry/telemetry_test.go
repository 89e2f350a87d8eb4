package telemetry

import (
	"context"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"go.opentelemetry.io/otel"
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
