package server

import (
	"context"
	"sync"
	"time"

	"github.com/flightsrv/flightsrv/flightsql"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// Admission-control defaults (Config.MaxQueries, MaxQueued, QueueWait). The seed's fan-out
// section asks that a replica's work be bounded so that one burst of queries cannot take every
// hot-store connection or all of its memory; each running query already holds at most its
// fan-out of bucket reads and its query-memory limit.
const (
	DefaultMaxQueries = 8
	DefaultMaxQueued  = 128
	DefaultQueueWait  = 30 * time.Second
)

// retryPushback is the gRPC retry pushback (gRFC A6) sent with admission refusals: clients
// whose service config retries UNAVAILABLE wait this long before the next attempt.
const retryPushback = "1000"

// admission bounds the queries a server executes at once (DoGet of statement and
// prepared-statement tickets: where a query's work happens) with a short FIFO-ish queue:
// beyond max running queries a query waits up to wait for a slot, at most maxQueued wait, and
// the rest are refused at once with UNAVAILABLE, which clients and load balancers treat as
// retriable (another replica, or later). When draining, queued and new queries are refused
// the same way. Polls' background runs (admitPoll) take the same slots but at most a share of
// them, and wait for it in a queue of their own. Safe for concurrent use.
type admission struct {
	slots     chan struct{} // one token per running query
	polls     chan struct{} // one token per poll run holding a slot or waiting for one
	maxQueued int
	wait      time.Duration

	mu           sync.Mutex
	queued       int
	running      int
	pollsQueued  int           // poll runs waiting (for a token of polls, then a slot)
	pollsRunning int           // poll runs holding a slot
	draining     chan struct{} // closed by drain
	idle         chan struct{} // made by drain; closed once no query runs

	m admissionMetrics
}

// admissionMetrics are admission's instruments (issue 20): flightsrv.admission.running and
// .queued (gauges read at collection), .refusals by reason (full: queue full, wait: the wait
// expired, draining) and .wait (seconds a query waited for its slot, refused or not).
type admissionMetrics struct {
	refusals metric.Int64Counter
	wait     metric.Float64Histogram
}

// newAdmission returns a controller for maxRunning queries (≥ 1) and maxQueued waiting ones
// (≥ 0), each waiting at most wait (> 0), of which at most maxPolls (clamped to [1,
// maxRunning]; PollShare gives the default) are polls' runs.
func newAdmission(maxRunning, maxQueued, maxPolls int, wait time.Duration) *admission {
	return newAdmissionMeter(maxRunning, maxQueued, maxPolls, wait, otel.Meter("flightsrv"))
}

// PollShare returns the default of Config.MaxPollQueries for maxQueries slots: half of them
// (rounded down), at least 1, so that polls leave at least half of the slots to query streams
// (with a single slot, polls and streams share it).
func PollShare(maxQueries int) int { return max(1, maxQueries/2) }

// newAdmissionMeter is newAdmission with its instruments made from meter.
func newAdmissionMeter(maxRunning, maxQueued, maxPolls int, wait time.Duration, meter metric.Meter) *admission {
	a := &admission{slots: make(chan struct{}, maxRunning), polls: make(chan struct{}, min(max(maxPolls, 1), maxRunning)),
		maxQueued: maxQueued, wait: wait, draining: make(chan struct{})}
	a.m.refusals, _ = meter.Int64Counter("flightsrv.admission.refusals", metric.WithUnit("{query}"),
		metric.WithDescription("Queries refused by admission control, by reason (full, wait, draining)."))
	a.m.wait, _ = meter.Float64Histogram("flightsrv.admission.wait", metric.WithUnit("s"),
		metric.WithDescription("Time queries waited for a slot."),
		metric.WithExplicitBucketBoundaries(0.001, 0.01, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60))
	gauge := func(name, desc string, read func() int) {
		_, _ = meter.Int64ObservableGauge(name, metric.WithUnit("{query}"), metric.WithDescription(desc),
			metric.WithInt64Callback(func(_ context.Context, o metric.Int64Observer) error {
				o.Observe(int64(read()))
				return nil
			}))
	}
	gauge("flightsrv.admission.running", "Queries running.", func() int { r, _ := a.inFlight(); return r })
	gauge("flightsrv.admission.queued", "Queries waiting for a slot.", func() int { _, q := a.inFlight(); return q })
	gauge("flightsrv.admission.polls_running", "Polls' background runs holding a slot (counted in running too).", func() int { r, _ := a.pollsInFlight(); return r })
	gauge("flightsrv.admission.polls_queued", "Polls' background runs waiting for a slot (not counted in queued).", func() int { _, q := a.pollsInFlight(); return q })
	return a
}

// refused counts a refusal for reason and returns err.
func (a *admission) refused(ctx context.Context, reason string, err error) error {
	if a.m.refusals != nil {
		a.m.refusals.Add(ctx, 1, metric.WithAttributes(attribute.String("reason", reason)))
	}
	return err
}

// waited records how long a query waited for its slot.
func (a *admission) waited(ctx context.Context, since time.Time) {
	if a.m.wait != nil {
		a.m.wait.Record(ctx, time.Since(since).Seconds())
	}
}

// admit waits for a slot and returns the function that gives it back (call it exactly once).
// Errors are gRPC statuses: UNAVAILABLE when the queue is full, the wait expires or the
// server drains (each message says which, with the configured bound and its flag), or the
// context's own status when the caller goes away while waiting.
func (a *admission) admit(ctx context.Context) (release func(), err error) {
	select {
	case <-a.draining:
		return nil, a.refused(ctx, "draining", refuse(ctx, flightsql.ErrShuttingDown))
	default:
	}
	select {
	case a.slots <- struct{}{}:
		return a.started(), nil
	default:
	}
	start := time.Now()
	a.mu.Lock()
	if a.queued >= a.maxQueued {
		a.mu.Unlock()
		return nil, a.refused(ctx, "full", refuse(ctx, &flightsql.QueueFullError{Slots: cap(a.slots), Queued: a.maxQueued}))
	}
	a.queued++
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		a.queued--
		a.mu.Unlock()
	}()
	timer := time.NewTimer(a.wait)
	defer timer.Stop()
	defer a.waited(ctx, start)
	select {
	case a.slots <- struct{}{}:
		return a.started(), nil
	case <-timer.C:
		return nil, a.refused(ctx, "wait", refuse(ctx, &flightsql.QueueWaitError{Wait: a.wait, Slots: cap(a.slots)}))
	case <-a.draining:
		return nil, a.refused(ctx, "draining", refuse(ctx, flightsql.ErrShuttingDown))
	case <-ctx.Done():
		return nil, status.FromContextError(ctx.Err()).Err()
	}
}

// admitPoll admits the background run of a poll (PollFlightInfo): it waits for one of the
// polls' cap(a.polls) places, then for a query slot, and returns the function that gives both
// back (call it exactly once). So polls never hold more than cap(a.polls) slots together and
// at least cap(a.slots)-cap(a.polls) are always left to query streams, however many polls
// clients start and abandon. A poll is asynchronous — its client keeps polling and sees
// progress 0 while it waits — so it waits in a queue of its own, bounded only by ctx (the
// poll's run: cancelled when the poll expires unasked or is cancelled) and draining: it takes
// none of the places of the queue of admit (maxQueued) and is never refused for waiting
// (wait). Errors are UNAVAILABLE when the server drains, else the context's own status.
func (a *admission) admitPoll(ctx context.Context) (release func(), err error) {
	if a.isDraining() {
		return nil, a.refused(ctx, "draining", refuse(ctx, flightsql.ErrShuttingDown))
	}
	a.mu.Lock()
	a.pollsQueued++
	a.mu.Unlock()
	dequeue := func(running int) {
		a.mu.Lock()
		a.pollsQueued--
		a.pollsRunning += running
		a.mu.Unlock()
	}
	select {
	case a.polls <- struct{}{}:
	case <-a.draining:
		dequeue(0)
		return nil, a.refused(ctx, "draining", refuse(ctx, flightsql.ErrShuttingDown))
	case <-ctx.Done():
		dequeue(0)
		return nil, status.FromContextError(ctx.Err()).Err()
	}
	select {
	case a.slots <- struct{}{}:
	case <-a.draining:
		<-a.polls
		dequeue(0)
		return nil, a.refused(ctx, "draining", refuse(ctx, flightsql.ErrShuttingDown))
	case <-ctx.Done():
		<-a.polls
		dequeue(0)
		return nil, status.FromContextError(ctx.Err()).Err()
	}
	dequeue(1)
	rel := a.started()
	var once sync.Once
	return func() {
		once.Do(func() {
			a.mu.Lock()
			a.pollsRunning--
			a.mu.Unlock()
			rel()
			<-a.polls
		})
	}, nil
}

// started counts a query that got a slot and returns its release.
func (a *admission) started() func() {
	a.mu.Lock()
	a.running++
	a.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			<-a.slots
			a.mu.Lock()
			a.running--
			if a.running == 0 && a.idle != nil {
				select {
				case <-a.idle:
				default:
					close(a.idle)
				}
			}
			a.mu.Unlock()
		})
	}
}

// drain refuses every queued and later query and returns a channel closed once no query runs
// (the same channel on every call). Running queries are not touched.
func (a *admission) drain() <-chan struct{} {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.idle == nil {
		close(a.draining)
		a.idle = make(chan struct{})
		if a.running == 0 {
			close(a.idle)
		}
	}
	return a.idle
}

// inFlight returns the numbers of running and queued queries.
func (a *admission) inFlight() (running, queued int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.running, a.queued
}

// pollsInFlight returns the numbers of polls' runs holding a slot (counted by inFlight's
// running too) and waiting for one (not counted by inFlight's queued).
func (a *admission) pollsInFlight() (running, queued int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.pollsRunning, a.pollsQueued
}

// refuse returns the client's status of an admission refusal (flightsql.Status: UNAVAILABLE
// naming the bound) and sets the retry pushback trailer when ctx is a gRPC server call's
// context.
func refuse(ctx context.Context, err error) error {
	_ = grpc.SetTrailer(ctx, metadata.Pairs("grpc-retry-pushback-ms", retryPushback))
	return flightsql.Status(err, nil)
}

// isDraining reports whether drain was called.
func (a *admission) isDraining() bool {
	select {
	case <-a.draining:
		return true
	default:
		return false
	}
}
