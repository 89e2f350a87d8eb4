package server

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/flightsrv/flightsrv/flightsql"
	"github.com/flightsrv/flightsrv/internal/auth"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
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
// prepared-statement tickets: where a query's work happens) with a short queue: beyond max
// running queries a query waits up to wait for a slot, at most maxQueued wait, and the rest
// are refused at once with UNAVAILABLE, which clients and load balancers treat as retriable
// (another replica, or later). When draining, queued and new queries are refused the same
// way. Polls' background runs and writes (admitPoll) take the same slots but at most a share
// of them, and wait for it in a queue of their own.
//
// Slots are shared fairly among owners (ownerOf: the authenticated user, else the client
// connection), so that one client cannot keep the others out (trial 33 G1: one HTTP/2
// connection with a zero flow-control window opened 1,000 result streams, held every slot
// and every place of the queue until --stall-timeout, and reconnected):
//   - a freed slot goes to the waiter whose owner runs the fewest queries (the oldest of
//     those), not to the oldest waiter;
//   - a query that finds the queue full takes the place of the newest waiter of the owner
//     with the most waiting, when that owner has at least two more waiting than its own owner
//     (that waiter is refused as the queue being full: longest queue drop), else it is
//     refused;
//   - while a waiter's owner runs fewer than its share of the slots (max(1, slots / owners
//     running or waiting)), a query stream of an owner running more than its share that its
//     client has not been reading for yield (Config.ContendedStallTimeout; slowLocked) is
//     reclaimed — and while a waiter's owner runs nothing, such a stream of any owner
//     (stalledLocked): its reclaim function closes its connection, which ends its streams and
//     frees their slots. A client that reads its results is never reclaimed, however many
//     slots it holds.
//
// Safe for concurrent use.
type admission struct {
	maxRunning int
	maxPolls   int // slots polls' runs may hold together, in [1, maxRunning]
	maxQueued  int
	wait       time.Duration
	// yield is how long a stream of an owner over its share may stall while others wait
	// before it is reclaimed (0: never). Set before the first admission.
	yield time.Duration

	mu           sync.Mutex
	running      int // slots held, polls' included
	pollsRunning int
	queued       int // stream waiters
	pollsQueued  int
	waiters      []*waiter // streams' and polls', in arrival order
	owners       map[string]*owner
	streams      map[*grant]struct{} // running query streams that can be reclaimed
	reclaimArmed bool                // a reclaim check is scheduled
	draining     chan struct{}       // closed by drain
	idle         chan struct{}       // made by drain; closed once no query runs

	m admissionMetrics
}

// owner is what one owner holds: slots, places in the streams' queue, and slots of its
// reclaimed streams that are not given back yet.
type owner struct{ running, queued, reclaimed int }

// waiter is a query or poll waiting for a slot. ready is closed once g is set (a slot was
// granted) or evicted is (its place was taken); both are guarded by admission.mu.
type waiter struct {
	owner   string
	poll    bool
	reclaim func()
	ready   chan struct{}
	g       *grant
	evicted bool
}

// grant is a slot held by a query stream or a poll's run. release gives it back (once; later
// calls do nothing). A stream's sends mark themselves with sending so that a stall can be seen
// (stallStream).
type grant struct {
	a       *admission
	owner   string
	poll    bool
	reclaim func() // nil: never reclaimed
	// sendingSince is when the stream's current send began (UnixNano), 0 between sends;
	// blocked is the time (ns) its finished sends took, and sent their bytes.
	sendingSince atomic.Int64
	blocked      atomic.Int64
	sent         atomic.Int64
	reclaimed    bool // guarded by a.mu
	// markAt and markBlocked open the window over which stalledLocked measures the share of
	// time the stream's sends waited for its client (guarded by a.mu; markAt zero: none).
	markAt      time.Time
	markBlocked int64
	markSent    int64
	once        sync.Once
}

// ownerOf returns whom the admission of ctx's call is charged to: "user NAME" for an
// authenticated user, else "conn ADDR" for the client's connection (its peer address), else
// "" (a call without either, as in tests).
func ownerOf(ctx context.Context) string {
	if u := auth.UserFrom(ctx); u != "" {
		return "user " + u
	}
	if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
		return "conn " + p.Addr.String()
	}
	return ""
}

// admissionMetrics are admission's instruments (issue 20): flightsrv.admission.running and
// .queued (gauges read at collection), .refusals by reason (full: queue full, evicted: a
// waiter whose place a query of a less served owner took, wait: the wait expired, draining),
// .wait (seconds a query waited for its slot, refused or not) and .reclaims (streams whose
// connection was closed to give their slots to other owners).
type admissionMetrics struct {
	refusals metric.Int64Counter
	wait     metric.Float64Histogram
	reclaims metric.Int64Counter
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
	a := &admission{maxRunning: maxRunning, maxPolls: min(max(maxPolls, 1), maxRunning), maxQueued: maxQueued, wait: wait,
		owners: map[string]*owner{}, streams: map[*grant]struct{}{}, draining: make(chan struct{})}
	a.m.refusals, _ = meter.Int64Counter("flightsrv.admission.refusals", metric.WithUnit("{query}"),
		metric.WithDescription("Queries refused by admission control, by reason (full, evicted, wait, draining)."))
	a.m.wait, _ = meter.Float64Histogram("flightsrv.admission.wait", metric.WithUnit("s"),
		metric.WithDescription("Time queries waited for a slot."),
		metric.WithExplicitBucketBoundaries(0.001, 0.01, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60))
	a.m.reclaims, _ = meter.Int64Counter("flightsrv.admission.reclaims", metric.WithUnit("{query}"),
		metric.WithDescription("Query streams whose connection was closed because their client stopped reading while it held more than its share of the slots and others waited."))
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

// admit is admitStream for a query that is never reclaimed; it returns the grant's release.
func (a *admission) admit(ctx context.Context) (release func(), err error) {
	g, err := a.admitStream(ctx, nil)
	if err != nil {
		return nil, err
	}
	return g.release, nil
}

// admitStream waits for a slot for a query stream of ctx's owner (ownerOf) and returns it;
// the caller releases it exactly once (later calls do nothing). reclaim, when not nil, is
// what ends the stream when admission reclaims its slot (the admission doc); it is called
// once at most, from another goroutine, and must not block. Errors are gRPC statuses:
// UNAVAILABLE when the queue is full (or the query's place in it was taken), the wait expires
// or the server drains (each message says which, with the configured bound and its flag), or
// the context's own status when the caller goes away while waiting.
func (a *admission) admitStream(ctx context.Context, reclaim func()) (*grant, error) {
	if a.isDraining() {
		return nil, a.refused(ctx, "draining", refuse(ctx, flightsql.ErrShuttingDown))
	}
	o := ownerOf(ctx)
	a.mu.Lock()
	if a.running < a.maxRunning {
		g := a.grantLocked(o, false, reclaim)
		a.mu.Unlock()
		return g, nil
	}
	if a.queued >= a.maxQueued && !a.evictLocked(o) {
		a.mu.Unlock()
		return nil, a.refused(ctx, "full", a.fullError(ctx))
	}
	w := a.enqueueLocked(o, false, reclaim)
	a.mu.Unlock()
	start := time.Now()
	defer a.waited(ctx, start)
	timer := time.NewTimer(a.wait)
	defer timer.Stop()
	var reason string
	var err error
	select {
	case <-w.ready:
	case <-timer.C:
		reason, err = "wait", refuse(ctx, &flightsql.QueueWaitError{Wait: a.wait, Slots: a.maxRunning})
	case <-a.draining:
		reason, err = "draining", refuse(ctx, flightsql.ErrShuttingDown)
	case <-ctx.Done():
		err = status.FromContextError(ctx.Err()).Err()
	}
	return a.settle(ctx, w, reason, err)
}

// settle ends w's wait, which ended with err (nil: w.ready was closed): it returns w's slot
// when one was granted and the caller is still there and the server not draining (a slot
// granted as the wait expired is taken), else gives a granted slot back and returns the
// refusal (reason: its metric's; "" for none counted).
func (a *admission) settle(ctx context.Context, w *waiter, reason string, err error) (*grant, error) {
	a.mu.Lock()
	switch {
	case w.g != nil:
		a.mu.Unlock()
		if ctx.Err() == nil && !a.isDraining() {
			return w.g, nil
		}
		w.g.release()
		if err == nil {
			reason, err = "draining", refuse(ctx, flightsql.ErrShuttingDown)
			if ctx.Err() != nil {
				reason, err = "", status.FromContextError(ctx.Err()).Err()
			}
		}
	case w.evicted:
		a.mu.Unlock()
		reason, err = "evicted", a.fullError(ctx)
	default:
		a.dequeueLocked(w)
		a.mu.Unlock()
	}
	if reason != "" {
		return nil, a.refused(ctx, reason, err)
	}
	return nil, err
}

// fullError is the refusal of a query that finds the queue full.
func (a *admission) fullError(ctx context.Context) error {
	return refuse(ctx, &flightsql.QueueFullError{Slots: a.maxRunning, Queued: a.maxQueued})
}

// admitPoll admits the background run of a poll (PollFlightInfo) or a write: it waits for a
// slot while polls hold fewer than maxPolls, and returns the function that gives it back
// (call it exactly once). So polls never hold more than maxPolls slots together and at least
// maxRunning-maxPolls are always left to query streams, however many polls clients start and
// abandon. A poll is asynchronous — its client keeps polling and sees progress 0 while it
// waits — so it waits in a queue of its own, bounded only by ctx (the poll's run: cancelled
// when the poll expires unasked or is cancelled) and draining: it takes none of the places of
// the queue of admitStream (maxQueued) and is never refused for waiting (wait). Waiting polls
// and streams are served by the same fair order. Errors are UNAVAILABLE when the server
// drains, else the context's own status.
func (a *admission) admitPoll(ctx context.Context) (release func(), err error) {
	if a.isDraining() {
		return nil, a.refused(ctx, "draining", refuse(ctx, flightsql.ErrShuttingDown))
	}
	o := ownerOf(ctx)
	a.mu.Lock()
	if a.running < a.maxRunning && a.pollsRunning < a.maxPolls {
		g := a.grantLocked(o, true, nil)
		a.mu.Unlock()
		return g.release, nil
	}
	w := a.enqueueLocked(o, true, nil)
	a.mu.Unlock()
	var reason string
	select {
	case <-w.ready:
	case <-a.draining:
		reason, err = "draining", refuse(ctx, flightsql.ErrShuttingDown)
	case <-ctx.Done():
		err = status.FromContextError(ctx.Err()).Err()
	}
	g, err := a.settle(ctx, w, reason, err)
	if err != nil {
		return nil, err
	}
	return g.release, nil
}

// ownerLocked returns o's holdings, made on first use.
func (a *admission) ownerLocked(o string) *owner {
	h := a.owners[o]
	if h == nil {
		h = &owner{}
		a.owners[o] = h
	}
	return h
}

// runningOf returns the slots o holds (a.mu held).
func (a *admission) runningOf(o string) int {
	if h := a.owners[o]; h != nil {
		return h.running
	}
	return 0
}

// forgetLocked drops o's holdings once it holds nothing.
func (a *admission) forgetLocked(o string) {
	if h := a.owners[o]; h != nil && *h == (owner{}) {
		delete(a.owners, o)
	}
}

// grantLocked gives o a slot (one is free).
func (a *admission) grantLocked(o string, poll bool, reclaim func()) *grant {
	g := &grant{a: a, owner: o, poll: poll, reclaim: reclaim}
	a.running++
	a.ownerLocked(o).running++
	if poll {
		a.pollsRunning++
	}
	if reclaim != nil {
		a.streams[g] = struct{}{}
	}
	return g
}

// enqueueLocked queues a waiter of o and schedules the reclaim check.
func (a *admission) enqueueLocked(o string, poll bool, reclaim func()) *waiter {
	w := &waiter{owner: o, poll: poll, reclaim: reclaim, ready: make(chan struct{})}
	a.waiters = append(a.waiters, w)
	if poll {
		a.pollsQueued++
	} else {
		a.queued++
		a.ownerLocked(o).queued++
	}
	a.armReclaimLocked()
	return w
}

// dequeueLocked takes w out of the queue.
func (a *admission) dequeueLocked(w *waiter) {
	for i, x := range a.waiters {
		if x == w {
			a.waiters = append(a.waiters[:i], a.waiters[i+1:]...)
			break
		}
	}
	if w.poll {
		a.pollsQueued--
		return
	}
	a.queued--
	a.owners[w.owner].queued--
	a.forgetLocked(w.owner)
}

// evictLocked makes room in the full streams' queue for a query of o: it refuses the newest
// waiting stream of the owner with the most waiting streams when that owner has at least two
// more than o, and reports whether it did.
func (a *admission) evictLocked(o string) bool {
	mine := 0
	if h := a.owners[o]; h != nil {
		mine = h.queued
	}
	var victim *waiter
	most := mine + 1
	for i := len(a.waiters) - 1; i >= 0; i-- {
		w := a.waiters[i]
		if !w.poll && a.owners[w.owner].queued > most {
			victim, most = w, a.owners[w.owner].queued
		}
	}
	if victim == nil {
		return false
	}
	a.dequeueLocked(victim)
	victim.evicted = true
	close(victim.ready)
	return true
}

// eligibleLocked reports whether w may take a free slot now.
func (a *admission) eligibleLocked(w *waiter) bool {
	return !w.poll || a.pollsRunning < a.maxPolls
}

// dispatchLocked gives free slots to waiters, each to the eligible waiter whose owner runs
// the fewest queries (the oldest of those). A draining admission gives none.
func (a *admission) dispatchLocked() {
	if a.isDraining() {
		return
	}
	for a.running < a.maxRunning {
		var best *waiter
		fewest := 0
		for _, w := range a.waiters {
			if !a.eligibleLocked(w) {
				continue
			}
			if n := a.runningOf(w.owner); best == nil || n < fewest {
				best, fewest = w, n
			}
		}
		if best == nil {
			return
		}
		a.dequeueLocked(best)
		best.g = a.grantLocked(best.owner, best.poll, best.reclaim)
		close(best.ready)
	}
}

// release gives g's slot back to the next waiter (the first call only).
func (g *grant) release() {
	g.once.Do(func() {
		a := g.a
		a.mu.Lock()
		defer a.mu.Unlock()
		a.running--
		h := a.owners[g.owner]
		h.running--
		if g.reclaimed {
			h.reclaimed--
		}
		a.forgetLocked(g.owner)
		if g.poll {
			a.pollsRunning--
		}
		delete(a.streams, g)
		if a.running == 0 && a.idle != nil {
			select {
			case <-a.idle:
			default:
				close(a.idle)
			}
		}
		a.dispatchLocked()
	})
}

// sending marks the start of one send of g's stream (done: its end, of n bytes).
func (g *grant) sending(start bool) { g.sendingBytes(start, 0) }

// sendingBytes is sending, with the bytes of a send that ended (start false).
func (g *grant) sendingBytes(start bool, n int) {
	if g == nil {
		return
	}
	if start {
		g.sendingSince.Store(time.Now().UnixNano())
		return
	}
	if since := g.sendingSince.Swap(0); since != 0 {
		g.blocked.Add(time.Now().UnixNano() - since)
	}
	g.sent.Add(int64(n))
}

// blockedAt returns the time (ns) g's sends have waited up to now, the current one included.
func (g *grant) blockedAt(now time.Time) int64 {
	b := g.blocked.Load()
	if since := g.sendingSince.Load(); since != 0 {
		b += max(0, now.UnixNano()-since)
	}
	return b
}

// A stream counts as not read (stalledLocked) over a window when its sends waited for its
// client at least slowFraction of the time and its client took fewer than slowBytesPerSecond:
// a client that stops, or trickles a few KiB a second (trial 34 S2), is; one that reads as
// fast as it is sent, or a slower consumer still taking its results (a notebook converting
// them as they come), is not.
const (
	slowFraction       = 0.9
	slowBytesPerSecond = 256 << 10
)

// slowLocked reports whether g was not read (above) over a window of at least yield ending
// at now; each window that has lasted yield closes there and the next one opens (a.mu held).
func (a *admission) slowLocked(g *grant, now time.Time) bool {
	b, n := g.blockedAt(now), g.sent.Load()
	if g.markAt.IsZero() {
		g.markAt, g.markBlocked, g.markSent = now, b, n
		return false
	}
	window := now.Sub(g.markAt)
	if window < a.yield {
		return false
	}
	slow := float64(b-g.markBlocked) >= slowFraction*float64(window) &&
		float64(n-g.markSent) < slowBytesPerSecond*window.Seconds()
	g.markAt, g.markBlocked, g.markSent = now, b, n
	return slow
}

// reclaimEvery is how often stalled streams are looked for while queries wait.
func (a *admission) reclaimEvery() time.Duration {
	return min(max(a.yield/4, 10*time.Millisecond), time.Second)
}

// armReclaimLocked schedules a reclaim check unless one is scheduled or reclaiming is off.
func (a *admission) armReclaimLocked() {
	if a.yield <= 0 || a.reclaimArmed {
		return
	}
	a.reclaimArmed = true
	time.AfterFunc(a.reclaimEvery(), a.reclaimStalled)
}

// reclaimStalled reclaims the stalled streams of owners over their share (the admission doc)
// and schedules the next check while anyone waits.
func (a *admission) reclaimStalled() {
	a.mu.Lock()
	a.reclaimArmed = false
	if len(a.waiters) == 0 {
		a.mu.Unlock()
		return
	}
	victims := a.stalledLocked(time.Now())
	a.armReclaimLocked()
	a.mu.Unlock()
	for _, g := range victims {
		if a.m.reclaims != nil {
			a.m.reclaims.Add(context.Background(), 1)
		}
		g.reclaim()
	}
}

// stalledLocked marks and returns the streams to reclaim at now. While an eligible waiter's
// owner runs fewer than its share, the streams of owners running more than theirs whose sends
// waited for their client slowFraction of the last window of yield (slowLocked) are
// reclaimed, as many per owner as it runs over its share (less those reclaimed already); and
// while a waiter's owner runs nothing, such streams of any owner are reclaimed, one per
// starving owner less the reclaims under way, those of owners running the most first (trial 34 S1: eight connections
// each holding one stalled stream, each within its share, kept everyone else out).
func (a *admission) stalledLocked(now time.Time) []*grant {
	contenders := map[string]bool{}
	for o, h := range a.owners {
		if h.running > 0 {
			contenders[o] = true
		}
	}
	starving := map[string]bool{}
	for _, w := range a.waiters {
		if a.eligibleLocked(w) {
			contenders[w.owner] = true
			if a.runningOf(w.owner) == 0 {
				starving[w.owner] = true
			}
		}
	}
	share := max(1, a.maxRunning/max(1, len(contenders)))
	deserving := false
	for _, w := range a.waiters {
		if a.eligibleLocked(w) && a.runningOf(w.owner) < share {
			deserving = true
			break
		}
	}
	if !deserving {
		for g := range a.streams {
			g.markAt = time.Time{} // the next contention measures afresh
		}
		return nil
	}
	var out, others []*grant
	for g := range a.streams {
		if g.reclaimed || !a.slowLocked(g, now) {
			continue
		}
		if h := a.owners[g.owner]; h.running-h.reclaimed > share {
			g.reclaimed = true
			h.reclaimed++
			out = append(out, g)
			continue
		}
		others = append(others, g)
	}
	// Slots already being reclaimed go to the starving owners first.
	need := len(starving)
	for _, h := range a.owners {
		need -= h.reclaimed
	}
	if need <= 0 {
		return out
	}
	slices.SortFunc(others, func(x, y *grant) int {
		return cmp.Compare(a.owners[y.owner].running-a.owners[y.owner].reclaimed, a.owners[x.owner].running-a.owners[x.owner].reclaimed)
	})
	for _, g := range others[:min(need, len(others))] {
		g.reclaimed = true
		a.owners[g.owner].reclaimed++
		out = append(out, g)
	}
	return out
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
