package archivefault

import (
	"context"
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

	"gocloud.dev/blob"
	_ "gocloud.dev/blob/fileblob"

	"github.com/flightsrv/flightsrv/archive"
	"github.com/flightsrv/flightsrv/internal/tablecheck"
	"github.com/flightsrv/flightsrv/internal/testsupport/blobfault"
	"github.com/flightsrv/flightsrv/internal/testsupport/pgtest"
	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/routing/sqlite"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

var bg = context.Background()

// fakeClock is a settable clock: the SQLite store's "database time".
type fakeClock struct{ ns atomic.Int64 }

func (c *fakeClock) now() time.Time          { return time.Unix(0, c.ns.Load()).UTC() }
func (c *fakeClock) advance(d time.Duration) { c.ns.Add(int64(d)) }

// hotStore is what the tests need of a hot-store adapter.
type hotStore interface {
	routing.HotStore
	routing.ArchiveStateStore
}

// today is the application clock of the appends: buckets of earlier days are eligible.
var today = time.Date(2024, 6, 10, 12, 0, 0, 0, time.UTC)

// env is one hot store, one file:// archive directory and the records appended to them.
type env struct {
	kind  string     // "sqlite" or "postgres"
	clk   *fakeClock // the SQLite store's clock; nil for PostgreSQL (database time)
	store hotStore
	files *blob.Bucket // the archive directory, without faults
	table *routing.DurableTable
	want  map[string][]routing.Record // every appended record per partition, sorted
	parts []string
	// eligible buckets end at or before cutoff (to be archived); hot ones stay hot.
	eligible, hot []routing.BucketID
	cutoff        time.Time
	lease         time.Duration
	// between, when set, runs between rounds of drive (readers catching up).
	between func()
}

// newEnv appends perBucket records to each of days daily buckets (the last one today, not
// eligible) of each partition.
func newEnv(t *testing.T, kind string, parts []string, days, perBucket int) *env {
	t.Helper()
	e := &env{kind: kind, want: map[string][]routing.Record{}, parts: parts, cutoff: today.Truncate(24 * time.Hour)}
	switch kind {
	case "sqlite":
		e.clk = &fakeClock{}
		e.clk.ns.Store(today.UnixNano())
		st, err := sqlite.Open(bg, sqlite.Config{Path: filepath.Join(t.TempDir(), "hot.db"), Clock: e.clk.now})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		if err := st.Migrate(bg); err != nil {
			t.Fatal(err)
		}
		e.store = st
		e.lease = time.Hour // fake time: advanced by the tests
	case "postgres":
		e.store, _ = pgtest.Start(t).NewStore(t)
		e.lease = 2 * time.Second // database time: real
	default:
		t.Fatalf("unknown store %q", kind)
	}
	var err error
	if e.files, err = blob.OpenBucket(bg, "file://"+t.TempDir()+"?metadata=skip"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.files.Close() })
	reader, err := archive.NewReader(e.files, archive.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	def := routing.TableDef{Name: "events", TableID: "events", PartitionColumn: "p", Strategy: routing.CalendarDayUTC, WritableBuckets: days}
	e.table, err = routing.NewDurableTable(def, e.store, reader, routing.Options{Cache: routing.NewRouteCache(64), Clock: func() time.Time { return today }})
	if err != nil {
		t.Fatal(err)
	}
	for pi, pk := range parts {
		for d := -(days - 1); d <= 0; d++ {
			b := routing.BucketFor(def.TableID, []byte(pk), def.Strategy, today.AddDate(0, 0, d))
			recs := make([]routing.Record, perBucket)
			for i := range recs {
				recs[i] = routing.Record{
					PartitionKey: []byte(pk),
					// Repeated event times (sort keys break the ties) and the bucket's first instant.
					EventTime: b.Start.Add(time.Duration((i/2)*613+pi) * time.Second),
					SortKey:   fmt.Appendf(nil, "%s-%d-%04d", pk, d, i),
					Value:     fmt.Appendf(nil, `{"i":%d,"p":%q}`, i, pk),
				}
			}
			if _, err := e.table.Append(bg, recs); err != nil {
				t.Fatal(err)
			}
			e.want[pk] = append(e.want[pk], recs...)
			if d < 0 {
				e.eligible = append(e.eligible, b)
			} else {
				e.hot = append(e.hot, b)
			}
		}
		slices.SortFunc(e.want[pk], func(a, b routing.Record) int { return routing.Compare(a.EventTime, a.SortKey, b.EventTime, b.SortKey) })
	}
	return e
}

// runnerOpts configures one archiver of an env.
type runnerOpts struct {
	state func(op string) stateFault                 // fault of each state-machine operation (nil: none)
	blob  blobfault.Injector                         // fault of each object operation (nil: none)
	hook  func(op string, s *routing.ArchiveSession) // called before each session operation
	renew time.Duration                              // renewal interval (default lease/3)
}

// runner returns an archiver over the env's store and archive directory with faults.
func (e *env) runner(t *testing.T, o runnerOpts) *archive.Archiver {
	t.Helper()
	bkt := e.files
	if o.blob != nil {
		bkt = blobfault.Wrap(e.files, o.blob)
	}
	w, err := archive.NewWriter(bkt, archive.WriterOptions{Prefix: "archives", RowGroupRows: 64, OperationTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	fs := &faultState{ArchiveStateStore: e.store, routes: e.store, inject: o.state, hook: o.hook, stall: e.stall}
	a, err := archive.NewArchiver(fs, w, fs, archive.ArchiverOptions{
		Lease: e.lease, RenewInterval: o.renew, Retry: 10 * time.Millisecond,
		Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// stall makes time pass beyond any lease: the fake clock jumps, or (PostgreSQL) the caller
// sleeps through one lease.
func (e *env) stall() {
	if e.clk != nil {
		e.clk.advance(e.lease + time.Minute)
		return
	}
	time.Sleep(e.lease + 100*time.Millisecond)
}

// pass lets leases and retry times of earlier rounds expire between rounds.
func (e *env) pass() {
	if e.clk != nil {
		e.clk.advance(e.lease + time.Minute)
		return
	}
	time.Sleep(50 * time.Millisecond)
}

// done reports whether every eligible bucket is archived with its hot rows deleted.
func (e *env) done(t *testing.T) bool {
	t.Helper()
	for _, b := range e.eligible {
		st, err := e.store.Status(bg, b)
		if err != nil {
			t.Fatal(err)
		}
		if st.State != routing.StateArchived || !st.HotDeleted {
			return false
		}
	}
	return true
}

// drive runs every runner's cycle concurrently, round after round, until done or maxRounds.
func (e *env) drive(t *testing.T, maxRounds int, runners ...*archive.Archiver) int {
	t.Helper()
	for round := 1; round <= maxRounds; round++ {
		var wg sync.WaitGroup
		for _, a := range runners {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, _ = a.RunOnce(bg, e.cutoff) // failures are injected; the end state is checked
			}()
		}
		wg.Wait()
		if e.between != nil {
			e.between()
		}
		if e.done(t) {
			return round
		}
		e.pass()
	}
	return -1
}

// check verifies the end state: every eligible bucket archived under a manifest that
// validates, hot rows deleted; today's buckets hot; and every partition's records read exactly
// once, in order, with counts equal to the reference.
func (e *env) check(t *testing.T) {
	t.Helper()
	reader, err := archive.NewReader(e.files, archive.ReaderOptions{VerifyFully: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range e.eligible {
		st, err := e.store.Status(bg, b)
		if err != nil {
			t.Fatal(err)
		}
		if st.State != routing.StateArchived || !st.HotDeleted || st.ManifestKey == "" {
			t.Fatalf("eligible bucket %s/%s: %+v", b.PartitionKey, b.Key, st)
		}
		if !strings.Contains(st.ManifestKey, "/generation-") {
			t.Fatalf("manifest key %s is not generation-addressed", st.ManifestKey)
		}
		if err := reader.Verify(bg, st.ManifestKey, b); err != nil {
			t.Fatalf("manifest of %s/%s: %v", b.PartitionKey, b.Key, err)
		}
	}
	for _, b := range e.hot {
		if r, err := e.store.Route(bg, b); err != nil || r.State != routing.StateHot {
			t.Fatalf("today's bucket: %+v, %v", r, err)
		}
	}
	if err := e.readAll(); err != nil {
		t.Fatal(err)
	}
}

// whole is a range covering every bucket of the env.
var whole = routing.TimeRange{Start: today.AddDate(0, 0, -30), End: today.AddDate(0, 0, 2)}

// readAll counts and scans every partition (ordered pages of 37 records, ascending) and
// compares with the reference: the check the readers run continuously.
func (e *env) readAll() error {
	for _, pk := range e.parts {
		want := e.want[pk]
		n, _, _, err := tablecheck.Count(bg, e.table, []byte(pk), whole)
		if err != nil {
			return fmt.Errorf("count %s: %w", pk, err)
		}
		if n != uint64(len(want)) {
			return fmt.Errorf("count %s = %d, want %d", pk, n, len(want))
		}
		var got []routing.Record
		var after *routing.Cursor
		for {
			page, err := e.table.QueryPage(bg, routing.Query{PartitionKey: []byte(pk), Range: whole, After: after, Limit: 37})
			if err != nil {
				return fmt.Errorf("scan %s: %w", pk, err)
			}
			got = append(got, page.Records...)
			if page.Next == nil {
				break
			}
			after = page.Next
		}
		if err := sameRecords(got, want); err != nil {
			return fmt.Errorf("scan %s: %w", pk, err)
		}
	}
	return nil
}

func sameRecords(got, want []routing.Record) error {
	if len(got) != len(want) {
		return fmt.Errorf("%d records, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if !g.EventTime.Equal(w.EventTime) || string(g.SortKey) != string(w.SortKey) || string(g.Value) != string(w.Value) || string(g.PartitionKey) != string(w.PartitionKey) {
			return fmt.Errorf("record %d = %s %s %s, want %s %s %s", i, g.EventTime, g.SortKey, g.Value, w.EventTime, w.SortKey, w.Value)
		}
	}
	return nil
}

// stateFault is what happens to one state-machine operation.
type stateFault int

const (
	stateNone stateFault = iota
	// stateFailBefore fails without touching the store (a lost connection).
	stateFailBefore
	// stateFailAfter runs the operation, then reports an unknown commit outcome.
	stateFailAfter
	// stateStall lets the lease expire (the worker stalls), then runs the operation.
	stateStall
)

func (f stateFault) String() string {
	return [...]string{"none", "fail-before", "ambiguous-commit", "stall-past-lease"}[f]
}

var errInjected = errors.New("injected hot-store failure")

// faultState wraps a store's archival state machine (and its route reads, which the archiver
// uses to resolve ambiguous outcomes) with injected faults.
type faultState struct {
	routing.ArchiveStateStore
	routes interface {
		Route(context.Context, routing.BucketID) (routing.Route, error)
	}
	inject func(op string) stateFault
	hook   func(op string, s *routing.ArchiveSession)
	stall  func()
}

func (f *faultState) do(op string, s *routing.ArchiveSession, call func() error) error {
	if f.hook != nil {
		f.hook(op, s)
	}
	fault := stateNone
	if f.inject != nil {
		fault = f.inject(op)
	}
	switch fault {
	case stateFailBefore:
		return fmt.Errorf("%w: %w", routing.ErrUnavailable, errInjected)
	case stateStall:
		f.stall()
	case stateFailAfter:
		if err := call(); err != nil {
			return err
		}
		return fmt.Errorf("%w: %w", routing.ErrCommitOutcome, errInjected)
	}
	return call()
}

func (f *faultState) Discover(ctx context.Context, before time.Time, limit int) (w []routing.ArchiveWork, err error) {
	err = f.do("discover", nil, func() (e error) { w, e = f.ArchiveStateStore.Discover(ctx, before, limit); return e })
	return w, err
}

func (f *faultState) ClaimArchive(ctx context.Context, b routing.BucketID, lease time.Duration) (s *routing.ArchiveSession, err error) {
	err = f.do("claim", nil, func() (e error) { s, e = f.ArchiveStateStore.ClaimArchive(ctx, b, lease); return e })
	if err != nil {
		return nil, err
	}
	return s, nil
}

func (f *faultState) ClaimCleanup(ctx context.Context, b routing.BucketID, lease time.Duration) (s *routing.ArchiveSession, err error) {
	err = f.do("claim_cleanup", nil, func() (e error) { s, e = f.ArchiveStateStore.ClaimCleanup(ctx, b, lease); return e })
	if err != nil {
		return nil, err
	}
	return s, nil
}

func (f *faultState) Renew(ctx context.Context, s *routing.ArchiveSession, lease time.Duration) error {
	return f.do("renew", s, func() error { return f.ArchiveStateStore.Renew(ctx, s, lease) })
}

func (f *faultState) Snapshot(ctx context.Context, s *routing.ArchiveSession) (r []routing.Record, err error) {
	err = f.do("snapshot", s, func() (e error) { r, e = f.ArchiveStateStore.Snapshot(ctx, s); return e })
	if err != nil {
		return nil, err
	}
	return r, nil
}

func (f *faultState) PublishArchive(ctx context.Context, s *routing.ArchiveSession, key string) error {
	return f.do("publish", s, func() error { return f.ArchiveStateStore.PublishArchive(ctx, s, key) })
}

func (f *faultState) DeleteHotBucket(ctx context.Context, s *routing.ArchiveSession) error {
	return f.do("delete", s, func() error { return f.ArchiveStateStore.DeleteHotBucket(ctx, s) })
}

func (f *faultState) DeferArchive(ctx context.Context, s *routing.ArchiveSession, retry time.Duration) error {
	return f.do("defer_archive", s, func() error { return f.ArchiveStateStore.DeferArchive(ctx, s, retry) })
}

func (f *faultState) DeferCleanup(ctx context.Context, s *routing.ArchiveSession, retry time.Duration) error {
	return f.do("defer_cleanup", s, func() error { return f.ArchiveStateStore.DeferCleanup(ctx, s, retry) })
}

func (f *faultState) Route(ctx context.Context, b routing.BucketID) (r routing.Route, err error) {
	err = f.do("route", nil, func() (e error) { r, e = f.routes.Route(ctx, b); return e })
	return r, err
}
