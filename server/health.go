package server

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/flightsrv/flightsrv/internal/panics"
	"github.com/flightsrv/flightsrv/internal/querylog"
	"github.com/flightsrv/flightsrv/routing"
)

// DefaultHealthInterval is how often the stores' reachability is probed (Config.HealthInterval).
const DefaultHealthInterval = 5 * time.Second

// healthProbeTimeout bounds one probe of one store.
const healthProbeTimeout = 2 * time.Second

// flightServiceName is the Flight service's full gRPC name, the service name health checks
// ask about ("" asks about the server as a whole; both get the same answer).
const flightServiceName = "arrow.flight.protocol.FlightService"

// healthReporter keeps gRPC health checking (grpc.health.v1, the standard load balancers and
// Kubernetes probes use) in step with what the server can do: SERVING while every store it
// reads answers a probe (routing.Pinger) within healthProbeTimeout, NOT_SERVING while one does
// not and from the start of a drain on. Stores that cannot be probed count as reachable. A
// failed probe is logged once per change, without the store's error text in any answer.
type healthReporter struct {
	hs       *health.Server
	probes   []storeProbe
	interval time.Duration
	logger   *slog.Logger

	mu       sync.Mutex
	draining bool
	healthy  bool
	started  bool
	stop     chan struct{}
	done     chan struct{}
}

// storeProbe is one store health checking asks, named for logs.
type storeProbe struct {
	name string
	p    routing.Pinger
}

// storeProbes returns the probes of hot and archive: those that implement routing.Pinger.
func storeProbes(hot routing.HotStore, archive routing.ArchiveReader) []storeProbe {
	var out []storeProbe
	if p, ok := hot.(routing.Pinger); ok {
		out = append(out, storeProbe{"hot store", p})
	}
	if p, ok := archive.(routing.Pinger); ok {
		out = append(out, storeProbe{"archive", p})
	}
	return out
}

// newHealthReporter asks probes every interval once start is called; the answer is
// NOT_SERVING until the first probe succeeds.
func newHealthReporter(probes []storeProbe, interval time.Duration, logger *slog.Logger) *healthReporter {
	h := &healthReporter{hs: health.NewServer(), probes: probes, interval: interval, logger: logger, stop: make(chan struct{}), done: make(chan struct{})}
	h.set(healthpb.HealthCheckResponse_NOT_SERVING)
	return h
}

// start probes once synchronously (so a server that starts healthy answers SERVING at once),
// then every interval until close.
func (h *healthReporter) start() {
	h.probe()
	h.mu.Lock()
	h.started = true
	h.mu.Unlock()
	go func() {
		defer close(h.done)
		t := time.NewTicker(h.interval)
		defer t.Stop()
		for {
			select {
			case <-h.stop:
				return
			case <-t.C:
				h.safeProbe()
			}
		}
	}()
}

// probe asks every store once and publishes the result.
func (h *healthReporter) probe() {
	ok := true
	for _, p := range h.probes {
		ctx, cancel := context.WithTimeout(context.Background(), healthProbeTimeout)
		err := p.p.Ping(ctx)
		cancel()
		if err != nil {
			ok = false
			h.mu.Lock()
			was := h.healthy
			h.mu.Unlock()
			if was {
				// The error's class only: an archive's error names object keys and paths,
				// which hold partition values (trial 33 W1); debug has the whole error.
				h.logger.Warn("health: store unreachable", "store", p.name, "error_class", querylog.ErrorClass(err),
					"timeout", errors.Is(err, context.DeadlineExceeded))
				h.logger.Debug("health: store unreachable (detail)", "store", p.name, "err", err)
			}
			break
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if ok && !h.healthy {
		h.logger.Info("health: stores reachable")
	}
	h.healthy = ok
	h.publishLocked()
}

// drain reports NOT_SERVING from now on.
func (h *healthReporter) drain() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.draining = true
	h.publishLocked()
}

// close stops probing (idempotent once started) and reports NOT_SERVING.
func (h *healthReporter) close() {
	select {
	case <-h.stop:
		return
	default:
		close(h.stop)
	}
	h.mu.Lock()
	started := h.started
	h.mu.Unlock()
	if started {
		<-h.done
	}
	h.hs.Shutdown()
}

func (h *healthReporter) publishLocked() {
	st := healthpb.HealthCheckResponse_NOT_SERVING
	if h.healthy && !h.draining {
		st = healthpb.HealthCheckResponse_SERVING
	}
	h.set(st)
}

func (h *healthReporter) set(st healthpb.HealthCheckResponse_ServingStatus) {
	h.hs.SetServingStatus("", st)
	h.hs.SetServingStatus(flightServiceName, st)
}

// healthMethodPrefix is the gRPC method prefix of the health service.
const healthMethodPrefix = "/grpc.health.v1.Health/"

// healthUnauthenticated lets health checks past the authentication interceptor next: load
// balancers and orchestrators probe without credentials, and the answer (SERVING or
// NOT_SERVING) reveals nothing else.
func healthUnauthenticated(next grpc.UnaryServerInterceptor) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		if strings.HasPrefix(info.FullMethod, healthMethodPrefix) {
			return handler(ctx, req)
		}
		return next(ctx, req, info, handler)
	}
}

// healthUnauthenticatedStream is healthUnauthenticated for streaming calls (Health/Watch).
func healthUnauthenticatedStream(next grpc.StreamServerInterceptor) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		if strings.HasPrefix(info.FullMethod, healthMethodPrefix) {
			return handler(srv, ss)
		}
		return next(srv, ss, info, handler)
	}
}

// safeProbe is probe for the probing goroutine: a panic inside a store's Ping is logged and
// counted (internal/panics) and reports the server NOT_SERVING until a later probe succeeds,
// instead of ending the process or the probing.
func (h *healthReporter) safeProbe() {
	defer panics.Handle("health probe", func(error) {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.healthy = false
		h.publishLocked()
	})
	h.probe()
}
