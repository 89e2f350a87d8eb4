package archive

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/flightsrv/flightsrv/internal/panics"
	"github.com/flightsrv/flightsrv/routing"
)

// RouteReader reads a bucket's current route; routing.HotStore satisfies it. The archiver uses
// it to resolve an ambiguous publish (docs/pulpitum-v4.md §4.2, step 4).
type RouteReader interface {
	Route(ctx context.Context, b routing.BucketID) (routing.Route, error)
}

// Archiver defaults (docs/pulpitum-v4.md §4.2, "Settings").
const (
	DefaultLease     = 60 * time.Second
	DefaultRetry     = 15 * time.Second
	DefaultScanLimit = 64
)

// ArchiverOptions configures an Archiver. Zero values take the defaults.
type ArchiverOptions struct {
	// Lease is the archive lease claimed and renewed (default 60 s).
	Lease time.Duration
	// RenewInterval is the lease renewal period (default max(Lease/3, 1 s)); it must be
	// shorter than Lease.
	RenewInterval time.Duration
	// Retry is the delay before a deferred cut-over or cleanup is retried (default 15 s).
	Retry time.Duration
	// ScanLimit bounds the work items one cycle discovers (default 64).
	ScanLimit int
	// Invalidate, when set, is called with a bucket around each of its route transitions
	// (claim, defer, publish) so that a process-local route cache forgets it; typically
	// (*routing.RouteCache).Invalidate.
	Invalidate func(routing.BucketID)
	// Logger receives one line per cycle and per failed item, without partition values,
	// object keys or tokens: a failed item is named by its table id and bucket key (a time
	// label such as month:2001-02), so that an operator can find it (default slog.Default()).
	Logger *slog.Logger
	// MeterProvider and TracerProvider default to the global providers.
	MeterProvider  metric.MeterProvider
	TracerProvider trace.TracerProvider
}

// Archiver is the archive runner (the reference's DurableArchiveRecoveryRunner): each RunOnce
// discovers due work in an ArchiveStateStore, claims it, and drives each bucket through
// snapshot → upload (ArchiveWriter.Put, which verifies) → publish → cleanup under a renewed
// lease. Several archivers may run against one store concurrently: claims and every
// owner-conditioned statement fence them. An Archiver is safe for concurrent use, but one
// RunOnce at a time per process is the intended use.
type Archiver struct {
	state      routing.ArchiveStateStore
	writer     routing.ArchiveWriter
	routes     RouteReader
	invalidate func(routing.BucketID)
	opts       ArchiverOptions
	log        *slog.Logger
	tracer     trace.Tracer
	m          archiverMetrics
}

// RunSummary counts what one cycle did.
type RunSummary struct {
	Discovered int // work items listed by Discover
	Claimed    int // claims won (cut-over and cleanup)
	Skipped    int // items whose claim was lost to another archiver or became due elsewhere
	Published  int // buckets cut over to their archive
	Cleaned    int // buckets whose hot rows were deleted
	Failed     int // items that failed (see Failures)
	// Failures lists the failed items in processing order.
	Failures []ItemFailure
}

// Add adds the counts and failures of o to s.
func (s *RunSummary) Add(o RunSummary) {
	s.Discovered += o.Discovered
	s.Claimed += o.Claimed
	s.Skipped += o.Skipped
	s.Published += o.Published
	s.Cleaned += o.Cleaned
	s.Failed += o.Failed
	s.Failures = append(s.Failures, o.Failures...)
}

// ItemFailure is one work item that failed in a cycle. Err carries no partition value, object
// key or token (every error of the stores and the writer is key-free); Bucket does, and is for
// the caller to report as it sees fit.
type ItemFailure struct {
	Bucket routing.BucketID
	Kind   routing.WorkKind
	// Deferred is true when the bucket was given a retry time (now + ArchiverOptions.Retry):
	// a failed snapshot, upload or cleanup. False when the lease decides recovery instead (a
	// renewal failure, a stale session, a failed deferral): the bucket is taken over once the
	// lease has expired.
	Deferred bool
	Err      error
}

// NewArchiver returns an Archiver over the state machine state, writing with writer and
// resolving ambiguous publishes with routes.
func NewArchiver(state routing.ArchiveStateStore, writer routing.ArchiveWriter, routes RouteReader, opts ArchiverOptions) (*Archiver, error) {
	if state == nil || writer == nil || routes == nil {
		return nil, errors.New("archive: archiver needs a state store, a writer and a route reader")
	}
	if opts.Lease <= 0 {
		opts.Lease = DefaultLease
	}
	if opts.RenewInterval <= 0 {
		opts.RenewInterval = max(opts.Lease/3, time.Second)
	}
	if opts.RenewInterval >= opts.Lease {
		return nil, errors.New("archive: lease renewal interval must be shorter than the lease")
	}
	if opts.Retry <= 0 {
		opts.Retry = DefaultRetry
	}
	if opts.ScanLimit <= 0 {
		opts.ScanLimit = DefaultScanLimit
	}
	if opts.Invalidate == nil {
		opts.Invalidate = func(routing.BucketID) {}
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.MeterProvider == nil {
		opts.MeterProvider = otel.GetMeterProvider()
	}
	if opts.TracerProvider == nil {
		opts.TracerProvider = otel.GetTracerProvider()
	}
	m, err := newArchiverMetrics(opts.MeterProvider.Meter("pulpitum"))
	if err != nil {
		return nil, err
	}
	return &Archiver{
		state: state, writer: writer, routes: routes, invalidate: opts.Invalidate, opts: opts,
		log: opts.Logger, tracer: opts.TracerProvider.Tracer("github.com/flightsrv/flightsrv/archive"), m: m,
	}, nil
}

// RunOnce runs one cycle: Discover(eligibleBefore, ScanLimit) lists cleanup work first, then
// cut-overs of buckets ending at or before eligibleBefore; items are processed in that order.
// Unlike the reference runner, whose first failing item aborts the rest of the cycle
// (docs/pulpitum-v4.md §4.2, §11.8), a failing item never stops the others: it is deferred
// with its own retry time (or left to its lease's expiry when renewal failed), listed in
// RunSummary.Failures and logged, and the cycle goes on. RunOnce returns an error when
// Discover fails, when ctx ends (the remaining items are not started), or when any item
// failed (wrapping every item's error); the summary is complete in every case.
func (a *Archiver) RunOnce(ctx context.Context, eligibleBefore time.Time) (sum RunSummary, err error) {
	start := time.Now()
	ctx, span := a.tracer.Start(ctx, "pulpitum.archive.coordinator.cycle")
	a.m.cycles.Add(ctx, 1, a.m.outcome("started"))
	defer func() {
		outcome := "success"
		if err != nil {
			outcome = "failure"
			span.SetStatus(codes.Error, err.Error())
			a.log.WarnContext(ctx, "archive cycle failed", "claimed", sum.Claimed, "published", sum.Published, "cleaned", sum.Cleaned, "err", err)
		} else if sum.Discovered > 0 {
			a.log.InfoContext(ctx, "archive cycle done", "discovered", sum.Discovered, "claimed", sum.Claimed,
				"skipped", sum.Skipped, "published", sum.Published, "cleaned", sum.Cleaned)
		}
		a.m.cycles.Add(ctx, 1, a.m.outcome(outcome))
		a.m.cycleDuration.Record(ctx, time.Since(start).Seconds(), a.m.outcome(outcome))
		span.SetAttributes(
			attribute.Int("pulpitum.archive.discovered", sum.Discovered),
			attribute.Int("pulpitum.archive.claimed", sum.Claimed),
			attribute.Int("pulpitum.archive.published", sum.Published),
			attribute.Int("pulpitum.archive.cleaned", sum.Cleaned),
		)
		span.End()
	}()
	// A panic inside the cycle fails this cycle (logged and counted by internal/panics; the
	// bucket in progress keeps its lease, which expires); the next cycle runs as usual.
	defer panics.Recover("archive cycle", &err)
	work, err := a.state.Discover(ctx, eligibleBefore, a.opts.ScanLimit)
	if err != nil {
		return sum, err
	}
	sum.Discovered = len(work)
	jobs := make([]*job, len(work))
	for i := range work {
		jobs[i] = a.m.queue(ctx)
	}
	defer func() {
		for _, j := range jobs {
			j.end(ctx) // items not started when ctx ended leave the queue too
		}
	}()
	var errs []error
	for i, item := range work {
		if err := ctx.Err(); err != nil {
			errs = append(errs, err)
			break
		}
		var deferred bool
		var itemErr error
		switch item.Kind {
		case routing.WorkCutover:
			deferred, itemErr = a.cutover(ctx, item.Bucket, &sum, jobs[i])
		case routing.WorkCleanup:
			deferred, itemErr = a.cleanupItem(ctx, item.Bucket, &sum, jobs[i])
		default:
			itemErr = errors.New("archive: unknown archive work kind")
		}
		jobs[i].end(ctx)
		if itemErr == nil {
			continue
		}
		// One failing bucket never stops the others: it is deferred (or left to its lease)
		// and reported; the cycle goes on with the next item.
		sum.Failed++
		sum.Failures = append(sum.Failures, ItemFailure{Bucket: item.Bucket, Kind: item.Kind, Deferred: deferred, Err: itemErr})
		a.log.WarnContext(ctx, "archive item failed", "table", item.Bucket.TableID, "bucket", item.Bucket.Key,
			"kind", item.Kind.String(), "deferred", deferred, "err", itemErr)
		errs = append(errs, itemErr)
	}
	if len(errs) > 0 {
		return sum, fmt.Errorf("archive: %d of %d work items failed: %w", sum.Failed, sum.Discovered, errors.Join(errs...))
	}
	return sum, nil
}

// Coordinator phases (docs/pulpitum-v4.md §6.2).
const (
	phaseQueued           = "queued"
	phaseClaimed          = "claimed"
	phaseUploading        = "uploading"
	phaseUploadedVerified = "uploaded_verified"
	phasePublished        = "published_cleanup_pending"
	phaseCompleted        = "completed"
	phaseRetryScheduled   = "retry_scheduled"
	phaseFailed           = "failed_needs_attention"
)

// cutover claims one due bucket and drives it to archived and cleaned (§4.2, "Per Cutover
// item"). deferred reports whether a failed bucket was given a retry time.
func (a *Archiver) cutover(ctx context.Context, b routing.BucketID, sum *RunSummary, j *job) (deferred bool, err error) {
	ctx, span := a.tracer.Start(ctx, "pulpitum.durable_archive.cutover")
	defer endOp(span, &err)
	strategy := a.m.strategy(b.Strategy)
	s, err := a.claim(ctx, "claim", sum, j, func(ctx context.Context) (*routing.ArchiveSession, error) {
		return a.state.ClaimArchive(ctx, b, a.opts.Lease)
	})
	if s == nil {
		// An ambiguous claim may have committed under a token only this call knew: nobody
		// can use that session, and its lease expiry hands the bucket to the next claim.
		return false, err
	}
	a.invalidate(b)
	a.m.runs.Add(ctx, 1, strategy, a.m.outcome("started"))
	start := time.Now()
	ren := a.startRenewer(ctx, s)
	defer ren.stop()

	var recs []routing.Record
	opErr := a.op(ctx, "snapshot", phaseClaimed, func(ctx context.Context) (e error) {
		recs, e = a.state.Snapshot(ctx, s)
		return e
	})
	if deferred, err := a.supervise(ctx, ren, opErr, b, s, j, "snapshot"); err != nil {
		return deferred, err
	}

	j.to(ctx, phaseUploading)
	var key string
	opErr = a.op(ctx, "upload", phaseUploading, func(ctx context.Context) (e error) {
		key, e = a.writer.Put(ctx, b, s.Generation, recs)
		return e
	})
	if deferred, err := a.supervise(ctx, ren, opErr, b, s, j, "upload"); err != nil {
		return deferred, err
	}
	j.to(ctx, phaseUploadedVerified)
	// The renewer may have failed while the upload finished: publishing is the read
	// cut-over, so it must not start once renewal has failed.
	if err := ren.failure(); err != nil {
		j.to(ctx, phaseFailed)
		return false, err
	}

	pubErr := a.op(ctx, "publish", phaseUploadedVerified, func(ctx context.Context) error {
		return a.state.PublishArchive(ctx, s, key)
	})
	a.invalidate(b)
	published := func() {
		sum.Published++
		j.to(ctx, phasePublished)
		a.m.records.Add(ctx, int64(len(recs)), strategy, a.m.outcome("success"))
		a.m.runs.Add(ctx, 1, strategy, a.m.outcome("success"))
		a.m.duration.Record(ctx, time.Since(start).Seconds(), strategy, a.m.outcome("success"))
	}
	if pubErr != nil {
		// The outcome is ambiguous (a lost acknowledgement, a commit whose result is
		// unknown): re-read the durable route to learn what happened.
		route, rerr := a.routes.Route(ctx, b)
		switch {
		case rerr != nil:
			a.m.failure(ctx, strategy, "publish")
			j.to(ctx, phaseFailed)
			return false, errors.Join(pubErr, rerr)
		case route.State == routing.StateArchived && !route.HotDeleted &&
			route.ManifestKey == key && route.Generation == s.Generation:
			// Our publish committed; continue to cleanup with the same session.
		case route.State == routing.StateArchiving && route.Generation == s.Generation:
			a.m.failure(ctx, strategy, "publish")
			if err := ren.failure(); err != nil {
				j.to(ctx, phaseFailed)
				return false, errors.Join(pubErr, err)
			}
			derr := a.deferArchive(ctx, s, j)
			return derr == nil, errors.Join(pubErr, derr)
		default:
			// Another generation owns the bucket now: this session is stale.
			a.m.failure(ctx, strategy, "publish")
			j.to(ctx, phaseFailed)
			return false, pubErr
		}
	}
	published()
	if err := ren.failure(); err != nil {
		// The cut-over committed; cleanup waits for the lease to expire.
		j.to(ctx, phaseFailed)
		return false, err
	}
	return a.cleanup(ctx, s, ren, sum, j)
}

// cleanupItem claims an archived bucket whose hot rows remain and deletes them
// (§4.2, "Per Cleanup item").
func (a *Archiver) cleanupItem(ctx context.Context, b routing.BucketID, sum *RunSummary, j *job) (deferred bool, err error) {
	ctx, span := a.tracer.Start(ctx, "pulpitum.durable_archive.cleanup")
	defer endOp(span, &err)
	s, err := a.claim(ctx, "claim_cleanup", sum, j, func(ctx context.Context) (*routing.ArchiveSession, error) {
		return a.state.ClaimCleanup(ctx, b, a.opts.Lease)
	})
	if s == nil {
		return false, err
	}
	ren := a.startRenewer(ctx, s)
	defer ren.stop()
	return a.cleanup(ctx, s, ren, sum, j)
}

// claim runs one claim operation (claim or claim_cleanup) in its span: a session is counted
// claimed, a lost race (no session, no error) skipped. The session is nil on error.
func (a *Archiver) claim(ctx context.Context, operation string, sum *RunSummary, j *job, claim func(context.Context) (*routing.ArchiveSession, error)) (*routing.ArchiveSession, error) {
	var s *routing.ArchiveSession
	if err := a.op(ctx, operation, phaseQueued, func(ctx context.Context) (e error) {
		s, e = claim(ctx)
		return e
	}); err != nil {
		return nil, err
	}
	if s == nil {
		sum.Skipped++
		return nil, nil
	}
	sum.Claimed++
	j.to(ctx, phaseClaimed)
	return s, nil
}

// cleanup is step 5: delete the hot rows; on failure defer the cleanup and return the error.
// An ambiguous delete is resolved by re-reading the route: hot_deleted set means it committed.
func (a *Archiver) cleanup(ctx context.Context, s *routing.ArchiveSession, ren *renewer, sum *RunSummary, j *job) (deferred bool, err error) {
	if err := ren.failure(); err != nil {
		j.to(ctx, phaseFailed)
		return false, err
	}
	opErr := a.op(ctx, "cleanup", phasePublished, func(ctx context.Context) error {
		return a.state.DeleteHotBucket(ctx, s)
	})
	if opErr != nil {
		if route, rerr := a.routes.Route(ctx, s.Bucket); rerr == nil && route.State == routing.StateArchived &&
			route.HotDeleted && route.Generation == s.Generation {
			opErr = nil // the delete committed; its acknowledgement was lost
		}
	}
	if opErr != nil {
		a.m.failure(ctx, a.m.strategy(s.Bucket.Strategy), "delete_hot")
		if err := ren.failure(); err != nil {
			j.to(ctx, phaseFailed)
			return false, errors.Join(opErr, err)
		}
		derr := a.op(ctx, "retry_cleanup", phasePublished, func(ctx context.Context) error {
			return a.state.DeferCleanup(ctx, s, a.opts.Retry)
		})
		j.to(ctx, phaseRetryScheduled)
		return derr == nil, errors.Join(opErr, derr)
	}
	sum.Cleaned++
	j.to(ctx, phaseCompleted)
	return false, nil
}

// supervise applies the rules after a snapshot or upload: a failed renewal wins (nothing else
// runs; lease expiry decides recovery), then an operation error defers the cut-over.
func (a *Archiver) supervise(ctx context.Context, ren *renewer, opErr error, b routing.BucketID, s *routing.ArchiveSession, j *job, stage string) (deferred bool, err error) {
	if err := ren.failure(); err != nil {
		j.to(ctx, phaseFailed)
		return false, errors.Join(opErr, err)
	}
	if opErr == nil {
		return false, nil
	}
	a.m.failure(ctx, a.m.strategy(b.Strategy), stage)
	derr := a.deferArchive(ctx, s, j)
	return derr == nil, errors.Join(opErr, derr)
}

// deferArchive returns the bucket to hot with a retry time.
func (a *Archiver) deferArchive(ctx context.Context, s *routing.ArchiveSession, j *job) error {
	err := a.op(ctx, "retry_cutover", phaseRetryScheduled, func(ctx context.Context) error {
		return a.state.DeferArchive(ctx, s, a.opts.Retry)
	})
	a.invalidate(s.Bucket)
	j.to(ctx, phaseRetryScheduled)
	return err
}

// op runs one store or upload operation inside its span
// (pulpitum.archive.coordinator.<operation>).
func (a *Archiver) op(ctx context.Context, operation, phase string, fn func(context.Context) error) error {
	ctx, span := a.tracer.Start(ctx, "pulpitum.archive.coordinator."+operation, trace.WithAttributes(
		attribute.String("pulpitum.archive.operation", operation),
		attribute.String("pulpitum.archive.coordinator.phase", phase),
	))
	err := fn(ctx)
	endOp(span, &err)
	return err
}

func endOp(span trace.Span, err *error) {
	if *err != nil {
		span.SetStatus(codes.Error, (*err).Error())
	}
	span.End()
}

// renewer renews one session's lease every RenewInterval until stopped; the first failure is
// kept and renewal stops (§4.2, "lease renewer").
type renewer struct {
	cancel context.CancelFunc
	done   chan struct{}
	mu     sync.Mutex
	err    error
}

func (a *Archiver) startRenewer(ctx context.Context, s *routing.ArchiveSession) *renewer {
	ctx, cancel := context.WithCancel(ctx)
	r := &renewer{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		defer panics.Handle("lease renewer", func(err error) {
			r.mu.Lock()
			r.err = err
			r.mu.Unlock()
		})
		t := time.NewTicker(a.opts.RenewInterval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if err := a.state.Renew(ctx, s, a.opts.Lease); err != nil {
				if ctx.Err() != nil {
					return // stopped while renewing: not a lease failure
				}
				r.mu.Lock()
				r.err = errors.Join(errors.New("archive: lease renewal failed"), err)
				r.mu.Unlock()
				return
			}
		}
	}()
	return r
}

// failure returns the renewal error, if renewal has failed.
func (r *renewer) failure() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// stop ends renewal and waits for the goroutine.
func (r *renewer) stop() {
	r.cancel()
	<-r.done
}

// archiverMetrics are the instruments of docs/pulpitum-v4.md §6.2 (meter "pulpitum"). Label
// values are fixed sets: strategy, outcome, stage, phase; never a table, partition, bucket,
// object key or error text.
type archiverMetrics struct {
	runs, failures, records, cycles, transitions metric.Int64Counter
	jobs                                         metric.Int64UpDownCounter
	duration, cycleDuration                      metric.Float64Histogram
}

func newArchiverMetrics(m metric.Meter) (archiverMetrics, error) {
	var am archiverMetrics
	var errs []error
	counter := func(name, desc string) metric.Int64Counter {
		c, err := m.Int64Counter(name, metric.WithDescription(desc))
		errs = append(errs, err)
		return c
	}
	histogram := func(name, desc string) metric.Float64Histogram {
		h, err := m.Float64Histogram(name, metric.WithDescription(desc), metric.WithUnit("s"))
		errs = append(errs, err)
		return h
	}
	am.runs = counter("pulpitum.archive.runs", "Bucket cut-overs started and completed.")
	am.failures = counter("pulpitum.archive.failures", "Bucket archival failures by stage.")
	am.records = counter("pulpitum.archive.records", "Records archived by completed cut-overs.")
	am.duration = histogram("pulpitum.archive.duration", "Duration of completed cut-overs (claim to publish).")
	am.cycles = counter("pulpitum.archive.coordinator.cycles", "Archive runner cycles.")
	am.cycleDuration = histogram("pulpitum.archive.coordinator.duration", "Duration of archive runner cycles.")
	am.transitions = counter("pulpitum.archive.coordinator.phase.transitions", "Archive job phase transitions.")
	jobs, err := m.Int64UpDownCounter("pulpitum.archive.coordinator.jobs", metric.WithDescription("Work items of the archive cycle in progress, by coordinator phase."))
	errs = append(errs, err)
	am.jobs = jobs
	return am, errors.Join(errs...)
}

func (m archiverMetrics) strategy(s routing.Strategy) metric.MeasurementOption {
	return metric.WithAttributes(attribute.String("pulpitum.bucket.strategy", s.String()))
}

func (m archiverMetrics) outcome(o string) metric.MeasurementOption {
	return metric.WithAttributes(attribute.String("pulpitum.archive.outcome", o))
}

func (m archiverMetrics) failure(ctx context.Context, strategy metric.MeasurementOption, stage string) {
	m.failures.Add(ctx, 1, strategy, metric.WithAttributes(attribute.String("pulpitum.archive.stage", stage)))
}

// job is one work item of a cycle on its way through the coordinator phases: each move counts a
// phase transition and moves the item in the jobs gauge (pulpitum.archive.coordinator.jobs,
// the items of the cycle in progress in each phase). Used by one goroutine.
type job struct {
	m     archiverMetrics
	phase string // "" once ended
}

// queue returns a new job in phase queued.
func (m archiverMetrics) queue(ctx context.Context) *job {
	j := &job{m: m}
	j.to(ctx, phaseQueued)
	return j
}

func phaseAttr(phase string) metric.MeasurementOption {
	return metric.WithAttributes(attribute.String("pulpitum.archive.coordinator.phase", phase))
}

// to moves the job to phase.
func (j *job) to(ctx context.Context, phase string) {
	if j.phase != "" {
		j.m.jobs.Add(ctx, -1, phaseAttr(j.phase))
	}
	j.phase = phase
	j.m.jobs.Add(ctx, 1, phaseAttr(phase))
	j.m.transitions.Add(ctx, 1, phaseAttr(phase))
}

// end takes the job out of the gauge (its item is done, whatever its last phase); a second
// end does nothing.
func (j *job) end(ctx context.Context) {
	if j.phase != "" {
		j.m.jobs.Add(ctx, -1, phaseAttr(j.phase))
		j.phase = ""
	}
}
