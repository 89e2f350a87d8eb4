package server

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// flakyStore is a routing.Pinger whose answer the test sets.
type flakyStore struct{ down atomic.Bool }

func (f *flakyStore) Ping(context.Context) error {
	if f.down.Load() {
		return errors.New("connection refused")
	}
	return nil
}

// TestHealthFollowsStores: SERVING at once when the stores answer, NOT_SERVING while one does
// not, SERVING again when it is back, and NOT_SERVING for good from a drain on; the service
// name "" and the Flight service's answer alike.
func TestHealthFollowsStores(t *testing.T) {
	hot, arch := &flakyStore{}, &flakyStore{}
	h := newHealthReporter([]storeProbe{{"hot store", hot}, {"archive", arch}}, time.Millisecond, slog.New(slog.DiscardHandler))
	status := func() healthpb.HealthCheckResponse_ServingStatus {
		var last healthpb.HealthCheckResponse_ServingStatus
		for _, svc := range []string{"", flightServiceName} {
			res, err := h.hs.Check(context.Background(), &healthpb.HealthCheckRequest{Service: svc})
			if err != nil {
				t.Fatal(err)
			}
			if svc != "" && res.GetStatus() != last {
				t.Fatalf("service %q answers %v, the server %v", svc, res.GetStatus(), last)
			}
			last = res.GetStatus()
		}
		return last
	}
	if s := status(); s != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Fatalf("before the first probe: %v", s)
	}
	h.start()
	defer h.close()
	if s := status(); s != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("stores up: %v", s)
	}
	eventually := func(want healthpb.HealthCheckResponse_ServingStatus) {
		t.Helper()
		for range 5000 {
			if status() == want {
				return
			}
			time.Sleep(time.Millisecond)
		}
		t.Fatalf("never %v", want)
	}
	arch.down.Store(true)
	eventually(healthpb.HealthCheckResponse_NOT_SERVING)
	arch.down.Store(false)
	eventually(healthpb.HealthCheckResponse_SERVING)
	h.drain()
	if s := status(); s != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Fatalf("draining: %v", s)
	}
	h.probe()
	if s := status(); s != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Fatalf("draining, stores up: %v", s)
	}
}
