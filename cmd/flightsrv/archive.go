package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/flightsrv/flightsrv/archive"
	"github.com/flightsrv/flightsrv/internal/telemetry"
)

// archiveConfig holds the flags of archive. The durations and the scan limit are the
// reference runner's settings (docs/pulpitum-v4.md §4.2, "Settings").
type archiveConfig struct {
	store, archive, prefix, format, before, metricsListen string
	loop                                                  bool
	interval, lease, renew, retry, orphanDelay            time.Duration
	scanLimit                                             int
}

// orphanEvery is how often --loop collects orphans.
const orphanEvery = time.Hour

// defaultArchiveConfig returns the flags' defaults.
func defaultArchiveConfig() archiveConfig {
	return archiveConfig{prefix: "archives", format: "parquet", interval: 15 * time.Second,
		lease: archive.DefaultLease, retry: archive.DefaultRetry, scanLimit: archive.DefaultScanLimit,
		orphanDelay: archive.DefaultOrphanDelay}
}

func (c *archiveConfig) validate() error {
	switch {
	case c.interval <= 0:
		return errors.New("--interval must be positive")
	case c.lease <= 0:
		return errors.New("--lease must be positive")
	case c.renew < 0 || c.renew >= c.lease:
		return fmt.Errorf("--renew (%s) must be shorter than --lease (%s)", c.renew, c.lease)
	case c.retry <= 0:
		return errors.New("--retry must be positive")
	case c.scanLimit <= 0:
		return errors.New("--scan-limit must be positive")
	case c.orphanDelay < 0:
		return errors.New("--orphan-delay must not be negative")
	case c.orphanDelay > 0 && c.orphanDelay <= c.lease:
		return fmt.Errorf("--orphan-delay (%s) must exceed --lease (%s): an upload may be published until its lease ends", c.orphanDelay, c.lease)
	}
	return nil
}

// cutoff returns the eligible-before instant at now: --before, or Jan 1 of the previous UTC
// year (the reference's default, recomputed at every cycle of --loop).
func (c *archiveConfig) cutoff(now time.Time) (time.Time, error) {
	if c.before == "" {
		return time.Date(now.UTC().Year()-1, 1, 1, 0, 0, 0, 0, time.UTC), nil
	}
	t, err := parseInstant(c.before)
	if err != nil {
		return time.Time{}, fmt.Errorf("--before: %w", err)
	}
	if t.After(now) {
		return time.Time{}, fmt.Errorf("--before %s is in the future: it would archive buckets that are still being written", t.Format(time.RFC3339))
	}
	return t, nil
}

func cmdArchive(ctx context.Context, args []string) error {
	c := defaultArchiveConfig()
	fs := newFlags("archive")
	fs.StringVar(&c.store, "store", "sqlite://flightsrv.db", "hot store: postgres://… (CockroachDB or PostgreSQL) or sqlite://PATH")
	fs.StringVar(&c.archive, "archive", "flightsrv-archive", "archive location: a gocloud.dev/blob URL or a directory")
	fs.StringVar(&c.prefix, "prefix", c.prefix, "object-key prefix of new archives")
	fs.StringVar(&c.format, "format", c.format, "payload format of new archives: parquet or json")
	fs.StringVar(&c.before, "before", "", "eligible-before cutoff: archive buckets ending at or before this instant, RFC 3339 (default: Jan 1 of the previous UTC year, recomputed every cycle)")
	fs.BoolVar(&c.loop, "loop", false, "keep running: one cycle every --interval until interrupted (default: run until no due work is left, then exit)")
	fs.DurationVar(&c.interval, "interval", c.interval, "pause between cycles of --loop")
	fs.DurationVar(&c.lease, "lease", c.lease, "archive lease claimed per bucket and renewed while it is worked on")
	fs.DurationVar(&c.renew, "renew", 0, "lease renewal interval, shorter than --lease (default: max(lease/3, 1s))")
	fs.DurationVar(&c.retry, "retry", c.retry, "delay before a failed bucket is retried")
	fs.IntVar(&c.scanLimit, "scan-limit", c.scanLimit, "work items one cycle discovers")
	fs.DurationVar(&c.orphanDelay, "orphan-delay", c.orphanDelay, "delete payloads and manifests never published once they are this old (at the end of a run; hourly with --loop); 0 keeps them")
	fs.StringVar(&c.metricsListen, "metrics-listen", "", "serve Prometheus metrics at http://ADDR/metrics (default: off)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := c.validate(); err != nil {
		return err
	}
	if _, err := c.cutoff(time.Now()); err != nil {
		return err
	}
	st, err := openValidated(ctx, c.store)
	if err != nil {
		return err
	}
	defer st.Close()
	if c.metricsListen != "" {
		tel, err := telemetry.Setup(ctx, telemetry.Service{Version: version}, telemetry.Export{})
		if err != nil {
			return err
		}
		defer shutdownTelemetry(tel)
		stop, err := serveMetrics(c.metricsListen, tel.Handler())
		if err != nil {
			return err
		}
		defer stop()
	}
	r, err := newArchiveRunner(ctx, st, c)
	if err != nil {
		return err
	}
	defer r.close()
	if c.loop {
		return r.loop(ctx)
	}
	sum, err := r.drain(ctx)
	printSummary(os.Stdout, sum)
	return err
}

// archiveRunner is an Archiver with the archive bucket it writes to and, unless
// --orphan-delay is 0, an orphan collector.
type archiveRunner struct {
	a       *archive.Archiver
	orphans *archive.OrphanCollector
	c       archiveConfig
	store   string // what the hot store is, for logs (PostgreSQL, CockroachDB, SQLite)
	close   func() error
}

func newArchiveRunner(ctx context.Context, st *openedStore, c archiveConfig) (*archiveRunner, error) {
	format, err := archive.ParseFormat(c.format)
	if err != nil {
		return nil, err
	}
	bucket, err := openArchive(ctx, c.archive)
	if err != nil {
		return nil, err
	}
	w, err := archive.NewWriter(bucket, archive.WriterOptions{Prefix: c.prefix, Format: format})
	if err != nil {
		bucket.Close()
		return nil, err
	}
	a, err := archive.NewArchiver(st, w, st, archive.ArchiverOptions{Lease: c.lease, RenewInterval: c.renew, Retry: c.retry, ScanLimit: c.scanLimit})
	if err != nil {
		bucket.Close()
		return nil, err
	}
	r := &archiveRunner{a: a, c: c, store: st.kind, close: bucket.Close}
	if c.orphanDelay > 0 {
		if r.orphans, err = archive.NewOrphanCollector(bucket, st, archive.OrphanOptions{Prefix: c.prefix, Delay: c.orphanDelay}); err != nil {
			bucket.Close()
			return nil, err
		}
	}
	return r, nil
}

// collectOrphans runs one orphan collection, when enabled; a failure is logged.
func (r *archiveRunner) collectOrphans(ctx context.Context) {
	if r.orphans == nil {
		return
	}
	if _, err := r.orphans.Collect(ctx); err != nil && ctx.Err() == nil {
		slog.Warn("archive orphan collection failed", "err", err)
	}
}

// drain runs cycles until one makes no progress: every due bucket is archived and cleaned,
// or failed (a failed bucket is deferred and not discovered again before its retry time). It
// returns an error naming how many buckets failed, after trying all of them.
func (r *archiveRunner) drain(ctx context.Context) (archive.RunSummary, error) {
	var total archive.RunSummary
	slog.Info("archiving due buckets", "store", r.store)
	for {
		cutoff, err := r.c.cutoff(time.Now())
		if err != nil {
			return total, err
		}
		sum, err := r.a.RunOnce(ctx, cutoff)
		total.Add(sum)
		if err != nil && (ctx.Err() != nil || sum.Failed == 0) {
			return total, fmt.Errorf("archive cycle: %w", err) // the cycle itself failed
		}
		if sum.Discovered == 0 || sum.Published+sum.Cleaned == 0 {
			break
		}
	}
	r.collectOrphans(ctx)
	if total.Failed > 0 {
		return total, fmt.Errorf("%d bucket(s) failed; they are retried after --retry (%s) by the next run", total.Failed, r.c.retry)
	}
	return total, nil
}

// loop runs one cycle every interval until ctx ends; a failed cycle is logged (the archiver
// logs each failed item) and the next one runs after the interval. It returns nil when ctx
// is cancelled (SIGINT, SIGTERM): the bucket in progress keeps its lease, which expires.
func (r *archiveRunner) loop(ctx context.Context) error {
	slog.Info("archive runner started", "store", r.store, "interval", r.c.interval, "lease", r.c.lease, "retry", r.c.retry, "scan_limit", r.c.scanLimit)
	t := time.NewTimer(0)
	defer t.Stop()
	var collected time.Time
	for {
		select {
		case <-ctx.Done():
			slog.Info("archive runner stopped")
			return nil
		case <-t.C:
		}
		cutoff, err := r.c.cutoff(time.Now())
		if err != nil {
			return err
		}
		sum, err := r.a.RunOnce(ctx, cutoff)
		if err != nil && ctx.Err() == nil && sum.Failed == 0 {
			slog.Warn("archive cycle failed", "err", err)
		}
		if time.Since(collected) >= orphanEvery {
			r.collectOrphans(ctx)
			collected = time.Now()
		}
		t.Reset(r.c.interval)
	}
}

// printSummary writes what a run did, with one line per failed bucket: table id, bucket key
// and the key-free reason (no partition value).
func printSummary(w io.Writer, sum archive.RunSummary) {
	fmt.Fprintf(w, "archived %d buckets, cleaned %d", sum.Published, sum.Cleaned)
	if sum.Failed > 0 {
		fmt.Fprintf(w, ", %d failed:", sum.Failed)
	}
	fmt.Fprintln(w)
	for _, f := range sum.Failures {
		next := "retried after its lease expires"
		if f.Deferred {
			next = "deferred to its retry time"
		}
		fmt.Fprintf(w, "  table %s, bucket %s (%s, %s): %s\n", f.Bucket.TableID, f.Bucket.Key, f.Kind, next, oneLine(f.Err))
	}
}

// oneLine joins the lines of an error's message (errors.Join separates with newlines).
func oneLine(err error) string { return strings.ReplaceAll(err.Error(), "\n", "; ") }

// serveMetrics serves h at http://addr/metrics until the returned stop is called.
func serveMetrics(addr string, h http.Handler) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--metrics-listen: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", h)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	slog.Info("serving metrics", "addr", ln.Addr().String())
	return func() { _ = srv.Close() }, nil
}
