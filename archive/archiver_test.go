package archive

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"gocloud.dev/blob"

	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/routing/sqlite"
)

// clock is a settable clock for the SQLite store (its "database time").
type clock struct{ ns atomic.Int64 }

func (c *clock) now() time.Time          { return time.Unix(0, c.ns.Load()).UTC() }
func (c *clock) set(t time.Time)         { c.ns.Store(t.UnixNano()) }
func (c *clock) advance(d time.Duration) { c.ns.Add(int64(d)) }

// faultyState wraps a real ArchiveStateStore and injects failures (a hand-written fake in the
// database/sql fakedb style). Hooks run instead of, or around, the real calls.
type faultyState struct {
	routing.ArchiveStateStore
	mu          sync.Mutex
	calls       map[string]int
	snapshot    func(ctx context.Context, s *routing.ArchiveSession) ([]routing.Record, error)
	publish     func(ctx context.Context, s *routing.ArchiveSession, key string) error
	deleteHot   func(ctx context.Context, s *routing.ArchiveSession) error
	renew       func(ctx context.Context, s *routing.ArchiveSession, lease time.Duration) error
	claimResult func(b routing.BucketID) bool // false: pretend the claim was lost
}

func (f *faultyState) count(name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.calls == nil {
		f.calls = map[string]int{}
	}
	f.calls[name]++
}

func (f *faultyState) called(name string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[name]
}

func (f *faultyState) ClaimArchive(ctx context.Context, b routing.BucketID, lease time.Duration) (*routing.ArchiveSession, error) {
	f.count("claim")
	if f.claimResult != nil && !f.claimResult(b) {
		return nil, nil
	}
	return f.ArchiveStateStore.ClaimArchive(ctx, b, lease)
}

func (f *faultyState) Snapshot(ctx context.Context, s *routing.ArchiveSession) ([]routing.Record, error) {
	f.count("snapshot")
	if f.snapshot != nil {
		return f.snapshot(ctx, s)
	}
	return f.ArchiveStateStore.Snapshot(ctx, s)
}

func (f *faultyState) PublishArchive(ctx context.Context, s *routing.ArchiveSession, key string) error {
	f.count("publish")
	if f.publish != nil {
		return f.publish(ctx, s, key)
	}
	return f.ArchiveStateStore.PublishArchive(ctx, s, key)
}

func (f *faultyState) DeleteHotBucket(ctx context.Context, s *routing.ArchiveSession) error {
	f.count("delete")
	if f.deleteHot != nil {
		return f.deleteHot(ctx, s)
	}
	return f.ArchiveStateStore.DeleteHotBucket(ctx, s)
}

func (f *faultyState) Renew(ctx context.Context, s *routing.ArchiveSession, lease time.Duration) error {
	f.count("renew")
	if f.renew != nil {
		return f.renew(ctx, s, lease)
	}
	return f.ArchiveStateStore.Renew(ctx, s, lease)
}

func (f *faultyState) DeferArchive(ctx context.Context, s *routing.ArchiveSession, retry time.Duration) error {
	f.count("defer_archive")
	return f.ArchiveStateStore.DeferArchive(ctx, s, retry)
}

func (f *faultyState) DeferCleanup(ctx context.Context, s *routing.ArchiveSession, retry time.Duration) error {
	f.count("defer_cleanup")
	return f.ArchiveStateStore.DeferCleanup(ctx, s, retry)
}

// failingWriter fails Put while fail is set.
type failingWriter struct {
	routing.ArchiveWriter
	fail atomic.Bool
	puts atomic.Int32
}

func (w *failingWriter) Put(ctx context.Context, b routing.BucketID, gen int64, recs []routing.Record) (string, error) {
	w.puts.Add(1)
	if w.fail.Load() {
		return "", errors.New("injected upload failure")
	}
	return w.ArchiveWriter.Put(ctx, b, gen, recs)
}

type archiverEnv struct {
	clk    *clock
	store  *sqlite.Store
	state  *faultyState
	writer *failingWriter
	reader *Reader
	table  *routing.DurableTable
	cache  *routing.RouteCache
	recs   map[string][]routing.Record // by bucket cache key
	bs     []routing.BucketID
}

var archiverDay = time.Date(2024, 6, 10, 12, 0, 0, 0, time.UTC)

func newArchiverEnv(t *testing.T, partitions ...string) *archiverEnv {
	t.Helper()
	ctx := context.Background()
	e := &archiverEnv{clk: &clock{}, recs: map[string][]routing.Record{}}
	e.clk.set(archiverDay)
	st, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(t.TempDir(), "hot.db"), Clock: e.clk.now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	e.store = st
	e.state = &faultyState{ArchiveStateStore: st}
	bkt := openTestBucket(t)
	w, err := NewWriter(bkt, WriterOptions{Prefix: testPrefix, RowGroupRows: 64})
	if err != nil {
		t.Fatal(err)
	}
	e.writer = &failingWriter{ArchiveWriter: w}
	if e.reader, err = NewReader(bkt, ReaderOptions{}); err != nil {
		t.Fatal(err)
	}
	e.cache = routing.NewRouteCache(16)
	def := routing.TableDef{Name: "messages", TableID: "messages", PartitionColumn: "channel_id", Strategy: routing.CalendarDayUTC, WritableBuckets: 2}
	e.table, err = routing.NewDurableTable(def, st, e.reader, routing.Options{Cache: e.cache, Clock: e.clk.now})
	if err != nil {
		t.Fatal(err)
	}
	// Two days of records per partition: yesterday and today.
	for pi, pk := range partitions {
		for d := -1; d <= 0; d++ {
			b := routing.BucketFor("messages", []byte(pk), routing.CalendarDayUTC, archiverDay.AddDate(0, 0, d))
			recs := make([]routing.Record, 150+pi)
			for i := range recs {
				recs[i] = routing.Record{
					PartitionKey: []byte(pk),
					EventTime:    b.Start.Add(time.Duration(i*397+pi) * time.Second),
					SortKey:      fmt.Appendf(nil, "m%05d", i),
					Value:        fmt.Appendf(nil, "value %d of %s", i, pk),
				}
			}
			if _, err := e.table.Append(ctx, recs); err != nil {
				t.Fatal(err)
			}
			e.recs[b.CacheKey()] = recs
			e.bs = append(e.bs, b)
		}
	}
	return e
}

func (e *archiverEnv) archiver(t *testing.T, opts ArchiverOptions) *Archiver {
	t.Helper()
	opts.Invalidate = e.cache.Invalidate
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	a, err := NewArchiver(e.state, e.writer, e.store, opts)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// checkReads compares every bucket's reads and counts through the durable table (hot or
// archived) with the appended records.
func (e *archiverEnv) checkReads(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	for _, b := range e.bs {
		want := e.recs[b.CacheKey()]
		got, _, err := e.table.ReadBucket(ctx, b, routing.ReadRequest{Range: b.Range(), Limit: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		sameRecords(t, "bucket read", got, want)
		half := routing.TimeRange{Start: b.Start.Add(3 * time.Hour), End: b.Start.Add(9 * time.Hour)}
		n, err := tableBucketCount(ctx, e.table, b, half)
		if err != nil || n != bruteCount(eventTimes(want), half) {
			t.Fatalf("bucket count = %d, %v; want %d", n, err, bruteCount(eventTimes(want), half))
		}
	}
}

func (e *archiverEnv) route(t *testing.T, b routing.BucketID) routing.Route {
	t.Helper()
	r, err := e.store.Route(context.Background(), b)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestArchiverCutsOverAgainstSQLite runs the archiver against the real embedded store: due
// buckets are archived and cleaned, reads before and after give the same records, and the
// route cache then serves the archived routes.
func TestArchiverCutsOverAgainstSQLite(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newArchiverEnv(t, "general", "random")
	e.checkReads(t)
	metrics := sdkmetric.NewManualReader()
	a := e.archiver(t, ArchiverOptions{MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(metrics))})
	eligible := routing.BucketFor("", nil, routing.CalendarDayUTC, archiverDay).Start // yesterday's buckets end here
	sum, err := a.RunOnce(ctx, eligible)
	if err != nil {
		t.Fatal(err)
	}
	if !sameCounts(sum, RunSummary{Discovered: 2, Claimed: 2, Published: 2, Cleaned: 2}) {
		t.Fatalf("summary = %+v", sum)
	}
	for _, b := range e.bs {
		r := e.route(t, b)
		if b.End.After(eligible) {
			if r.State != routing.StateHot {
				t.Fatalf("today's bucket is %v", r.State)
			}
			continue
		}
		if r.State != routing.StateArchived || !r.HotDeleted || r.ManifestKey == "" {
			t.Fatalf("yesterday's bucket route = %+v", r)
		}
		if err := e.reader.Verify(ctx, r.ManifestKey, b); err != nil {
			t.Fatalf("Verify: %v", err)
		}
	}
	e.checkReads(t)
	if e.cache.Len() != 2 {
		t.Fatalf("route cache holds %d routes, want the 2 archived ones", e.cache.Len())
	}
	sum, err = a.RunOnce(ctx, eligible)
	if err != nil || !sameCounts(sum, RunSummary{}) {
		t.Fatalf("second cycle = %+v, %v; want nothing to do", sum, err)
	}

	// Metrics follow docs/pulpitum-v4.md §6.2, with fixed label sets only.
	sums := archiverMetricSums(t, metrics)
	for name, want := range map[string]int64{
		"pulpitum.archive.runs/started": 2, "pulpitum.archive.runs/success": 2, "pulpitum.archive.records/success": 150 + 151, // yesterday's two buckets
		"pulpitum.archive.coordinator.cycles/started": 2, "pulpitum.archive.coordinator.cycles/success": 2,
		"pulpitum.archive.coordinator.phase.transitions/completed": 2,
	} {
		if sums[name] != want {
			t.Errorf("%s = %d, want %d", name, sums[name], want)
		}
	}
}

func TestArchiverFailures(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	eligible := routing.BucketFor("", nil, routing.CalendarDayUTC, archiverDay).Start
	injected := errors.New("injected")

	t.Run("snapshot failure defers that bucket alone", func(t *testing.T) {
		t.Parallel()
		e := newArchiverEnv(t, "a", "b", "c")
		failing := e.bs[2] // partition b's yesterday bucket, the second in discovery order
		e.state.snapshot = func(ctx context.Context, s *routing.ArchiveSession) ([]routing.Record, error) {
			if s.Bucket.Equal(failing) {
				return nil, injected
			}
			return e.store.Snapshot(ctx, s)
		}
		a := e.archiver(t, ArchiverOptions{Retry: time.Minute})
		sum, err := a.RunOnce(ctx, eligible)
		if !errors.Is(err, injected) || !sameCounts(sum, RunSummary{Discovered: 3, Claimed: 3, Published: 2, Cleaned: 2, Failed: 1}) {
			t.Fatalf("RunOnce = %+v, %v; want the other two buckets archived in the same cycle", sum, err)
		}
		if f := sum.Failures; len(f) != 1 || !f[0].Bucket.Equal(failing) || f[0].Kind != routing.WorkCutover || !f[0].Deferred || !errors.Is(f[0].Err, injected) {
			t.Fatalf("failures = %+v", f)
		}
		if e.state.called("defer_archive") != 1 || e.route(t, failing).State != routing.StateHot {
			t.Fatalf("bucket not deferred back to hot")
		}
		// Its own retry time is not yet due: nothing is discovered; once due, it archives.
		e.state.snapshot = nil
		if sum, err := a.RunOnce(ctx, eligible); err != nil || !sameCounts(sum, RunSummary{}) {
			t.Fatalf("cycle before the retry time = %+v, %v", sum, err)
		}
		e.clk.advance(time.Minute)
		if sum, err := a.RunOnce(ctx, eligible); err != nil || !sameCounts(sum, RunSummary{Discovered: 1, Claimed: 1, Published: 1, Cleaned: 1}) {
			t.Fatalf("cycle after the retry time = %+v, %v", sum, err)
		}
		e.checkReads(t)
	})

	t.Run("a partition value too long for the key scheme fails alone, key-free", func(t *testing.T) {
		t.Parallel()
		long := strings.Repeat("p", 128) // hex segment of 256 bytes: beyond a file name's 255
		e := newArchiverEnv(t, "a", long, "c")
		a := e.archiver(t, ArchiverOptions{Retry: time.Hour})
		sum, err := a.RunOnce(ctx, eligible)
		var kerr *KeyLimitError
		if !errors.As(err, &kerr) || !sameCounts(sum, RunSummary{Discovered: 3, Claimed: 3, Published: 2, Cleaned: 2, Failed: 1}) {
			t.Fatalf("RunOnce = %+v, %v", sum, err)
		}
		if kerr.Part != "partition key" || kerr.Bytes != 256 || kerr.Limit != 255 {
			t.Fatalf("key limit error = %+v", kerr)
		}
		msg := sum.Failures[0].Err.Error()
		if strings.Contains(msg, long[:16]) || strings.Contains(msg, hex.EncodeToString([]byte(long))[:16]) ||
			!strings.Contains(msg, "partition key's object-key segment would be 256 bytes") {
			t.Fatalf("reason %q", msg)
		}
		if r := e.route(t, e.bs[2]); r.State != routing.StateHot || !sum.Failures[0].Deferred {
			t.Fatalf("long partition's route = %+v", r)
		}
		e.checkReads(t) // every bucket reads its records, from the hot tier or the archive
	})

	t.Run("upload failure defers", func(t *testing.T) {
		t.Parallel()
		e := newArchiverEnv(t, "a")
		e.writer.fail.Store(true)
		a := e.archiver(t, ArchiverOptions{Retry: time.Second})
		if _, err := a.RunOnce(ctx, eligible); err == nil || e.state.called("defer_archive") != 1 {
			t.Fatalf("RunOnce = %v with %d deferrals", err, e.state.called("defer_archive"))
		}
		if r := e.route(t, e.bs[0]); r.State != routing.StateHot {
			t.Fatalf("route after failed upload = %+v", r)
		}
		e.writer.fail.Store(false)
		e.clk.advance(time.Second)
		if sum, err := a.RunOnce(ctx, eligible); err != nil || sum.Cleaned != 1 {
			t.Fatalf("retry = %+v, %v", sum, err)
		}
		e.checkReads(t)
	})

	t.Run("publish error after commit continues to cleanup", func(t *testing.T) {
		t.Parallel()
		e := newArchiverEnv(t, "a")
		e.state.publish = func(ctx context.Context, s *routing.ArchiveSession, key string) error {
			if err := e.store.PublishArchive(ctx, s, key); err != nil {
				return err
			}
			return injected // the commit happened, its acknowledgement was lost
		}
		sum, err := e.archiver(t, ArchiverOptions{}).RunOnce(ctx, eligible)
		if err != nil || sum.Published != 1 || sum.Cleaned != 1 {
			t.Fatalf("RunOnce = %+v, %v", sum, err)
		}
		e.checkReads(t)
	})

	t.Run("publish error before commit defers", func(t *testing.T) {
		t.Parallel()
		e := newArchiverEnv(t, "a")
		e.state.publish = func(context.Context, *routing.ArchiveSession, string) error { return injected }
		sum, err := e.archiver(t, ArchiverOptions{}).RunOnce(ctx, eligible)
		if !errors.Is(err, injected) || sum.Published != 0 || e.state.called("defer_archive") != 1 {
			t.Fatalf("RunOnce = %+v, %v", sum, err)
		}
		if r := e.route(t, e.bs[0]); r.State != routing.StateHot {
			t.Fatalf("route = %+v", r)
		}
	})

	t.Run("cleanup failure defers the cleanup, a later cycle cleans", func(t *testing.T) {
		t.Parallel()
		e := newArchiverEnv(t, "a")
		e.state.deleteHot = func(context.Context, *routing.ArchiveSession) error { return injected }
		a := e.archiver(t, ArchiverOptions{Retry: time.Minute})
		sum, err := a.RunOnce(ctx, eligible)
		if !errors.Is(err, injected) || sum.Published != 1 || sum.Cleaned != 0 || e.state.called("defer_cleanup") != 1 {
			t.Fatalf("RunOnce = %+v, %v", sum, err)
		}
		if r := e.route(t, e.bs[0]); r.State != routing.StateArchived || r.HotDeleted {
			t.Fatalf("route = %+v", r)
		}
		e.checkReads(t) // published: reads come from the archive, not the retained hot rows
		e.state.deleteHot = nil
		e.clk.advance(time.Minute)
		sum, err = a.RunOnce(ctx, eligible)
		if err != nil || !sameCounts(sum, RunSummary{Discovered: 1, Claimed: 1, Cleaned: 1}) {
			t.Fatalf("cleanup cycle = %+v, %v", sum, err)
		}
		if r := e.route(t, e.bs[0]); !r.HotDeleted {
			t.Fatalf("route = %+v", r)
		}
	})

	t.Run("lost claim is skipped", func(t *testing.T) {
		t.Parallel()
		e := newArchiverEnv(t, "a")
		e.state.claimResult = func(routing.BucketID) bool { return false }
		sum, err := e.archiver(t, ArchiverOptions{}).RunOnce(ctx, eligible)
		if err != nil || !sameCounts(sum, RunSummary{Discovered: 1, Skipped: 1}) || e.state.called("snapshot") != 0 {
			t.Fatalf("RunOnce = %+v, %v", sum, err)
		}
	})

	t.Run("renewal failure stops the item without further phases", func(t *testing.T) {
		t.Parallel()
		e := newArchiverEnv(t, "a")
		renewed := make(chan struct{})
		var once sync.Once
		e.state.renew = func(context.Context, *routing.ArchiveSession, time.Duration) error {
			once.Do(func() { close(renewed) })
			return injected
		}
		e.state.snapshot = func(ctx context.Context, s *routing.ArchiveSession) ([]routing.Record, error) {
			<-renewed // the operation in flight finishes after the renewal failed
			time.Sleep(10 * time.Millisecond)
			return e.store.Snapshot(ctx, s)
		}
		a := e.archiver(t, ArchiverOptions{Lease: 300 * time.Millisecond, RenewInterval: 20 * time.Millisecond})
		_, err := a.RunOnce(ctx, eligible)
		if !errors.Is(err, injected) {
			t.Fatalf("RunOnce = %v, want the renewal failure", err)
		}
		if e.writer.puts.Load() != 0 || e.state.called("defer_archive") != 0 || e.state.called("publish") != 0 {
			t.Fatalf("phases ran after the renewal failure: puts=%d defers=%d", e.writer.puts.Load(), e.state.called("defer_archive"))
		}
		if r := e.route(t, e.bs[0]); r.State != routing.StateArchiving {
			t.Fatalf("route = %+v; lease expiry decides recovery", r)
		}
		// After the lease expires another cycle takes the bucket over.
		e.state.renew, e.state.snapshot = nil, nil
		e.clk.advance(time.Second)
		a2 := e.archiver(t, ArchiverOptions{})
		if sum, err := a2.RunOnce(ctx, eligible); err != nil || sum.Cleaned != 1 {
			t.Fatalf("takeover = %+v, %v", sum, err)
		}
		e.checkReads(t)
	})
}

// sameCounts compares the counters of two summaries (not their failure lists).
func sameCounts(got, want RunSummary) bool {
	got.Failures, want.Failures = nil, nil
	return fmt.Sprint(got) == fmt.Sprint(want)
}

// TestOrphanCollection: objects written but never published are deleted once older than the
// safety delay — a deferred attempt's payload and manifest — while the published archive, an
// in-flight attempt's objects, young objects and keys of other forms are kept; reads are the
// same afterwards.
func TestOrphanCollection(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	eligible := routing.BucketFor("", nil, routing.CalendarDayUTC, archiverDay).Start
	e := newArchiverEnv(t, "a", "b")
	injected := errors.New("injected")
	failed := false
	e.state.publish = func(ctx context.Context, s *routing.ArchiveSession, key string) error {
		if s.Bucket.Equal(e.bs[0]) && !failed {
			failed = true
			return injected
		}
		return e.store.PublishArchive(ctx, s, key)
	}
	a := e.archiver(t, ArchiverOptions{Retry: time.Minute})
	if sum, _ := a.RunOnce(ctx, eligible); sum.Published != 1 || sum.Failed != 1 {
		t.Fatalf("first cycle = %+v", sum)
	}
	e.clk.advance(time.Minute)
	if sum, err := a.RunOnce(ctx, eligible); err != nil || sum.Published != 1 {
		t.Fatalf("retry = %+v, %v", sum, err)
	}
	// An attempt in flight: partition b's today bucket claimed and uploaded, not published.
	inflight, err := e.store.ClaimArchive(ctx, e.bs[3], time.Hour)
	if err != nil || inflight == nil {
		t.Fatalf("claim: %v", err)
	}
	recs, err := e.store.Snapshot(ctx, inflight)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.writer.Put(ctx, e.bs[3], inflight.Generation, recs); err != nil {
		t.Fatal(err)
	}
	bkt := e.writer.ArchiveWriter.(*Writer).store.bucket
	if err := bkt.WriteAll(ctx, testPrefix+"/notes/readme.txt", []byte("not an archive object"), nil); err != nil {
		t.Fatal(err)
	}
	list := func() []string {
		var keys []string
		it := bkt.List(&blob.ListOptions{Prefix: testPrefix + "/"})
		for {
			o, err := it.Next(ctx)
			if err != nil {
				break
			}
			keys = append(keys, o.Key)
		}
		return keys
	}
	before := list()
	if len(before) != 2*2+2+2+1 { // two published, one deferred attempt, one in flight, one note
		t.Fatalf("objects before collection: %v", before)
	}
	quiet := slog.New(slog.DiscardHandler)
	young, err := NewOrphanCollector(bkt, e.store, OrphanOptions{Prefix: testPrefix, Delay: time.Hour, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	if sum, err := young.Collect(ctx); err != nil || sum.Deleted != 0 || sum.Scanned != len(before) || sum.Kept != len(before)-1 {
		t.Fatalf("collection within the delay = %+v, %v", sum, err)
	}
	old, err := NewOrphanCollector(bkt, e.store, OrphanOptions{Prefix: testPrefix, Delay: time.Hour, Logger: quiet,
		Now: func() time.Time { return time.Now().Add(2 * time.Hour) }})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := old.Collect(ctx)
	if err != nil || sum.Deleted != 2 || sum.Kept != len(before)-3 {
		t.Fatalf("collection after the delay = %+v, %v", sum, err)
	}
	after := list()
	gone := map[string]bool{}
	for _, k := range before {
		gone[k] = !slices.Contains(after, k)
	}
	deferredDir := bucketDir(testPrefix, e.bs[0], 1) + "/"
	for k, g := range gone {
		if g != strings.HasPrefix(k, deferredDir) {
			t.Fatalf("object %s deleted = %v (deleted: the deferred generation 1 of partition a only)", k, g)
		}
	}
	for _, b := range e.bs[:3:3] {
		if r := e.route(t, b); r.State == routing.StateArchived {
			if err := e.reader.Verify(ctx, r.ManifestKey, b); err != nil {
				t.Fatal(err)
			}
		}
	}
	e.checkReads(t)
}

// TestArchiverSettings: the runner's defaults are the reference's (docs/pulpitum-v4.md
// §4.2): lease 60 s renewed every max(lease/3, 1 s), retry 15 s, scan limit 64; a renewal
// interval that is not shorter than the lease is refused.
func TestArchiverSettings(t *testing.T) {
	t.Parallel()
	e := newArchiverEnv(t)
	a := e.archiver(t, ArchiverOptions{})
	if o := a.opts; o.Lease != time.Minute || o.RenewInterval != 20*time.Second || o.Retry != 15*time.Second || o.ScanLimit != 64 {
		t.Fatalf("defaults: lease %v, renew %v, retry %v, scan limit %d", o.Lease, o.RenewInterval, o.Retry, o.ScanLimit)
	}
	if a := e.archiver(t, ArchiverOptions{Lease: 2 * time.Second}); a.opts.RenewInterval != time.Second {
		t.Fatalf("renewal of a 2 s lease every %v, want 1s", a.opts.RenewInterval)
	}
	for _, o := range []ArchiverOptions{{Lease: time.Second}, {Lease: time.Minute, RenewInterval: time.Minute}} {
		if _, err := NewArchiver(e.state, e.writer, e.store, o); err == nil {
			t.Errorf("lease %v renewed every %v accepted", o.Lease, o.RenewInterval)
		}
	}
}
