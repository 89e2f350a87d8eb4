package archivefault

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flightsrv/flightsrv/archive"
	"github.com/flightsrv/flightsrv/internal/testsupport/blobfault"
	"github.com/flightsrv/flightsrv/routing"
)

// once returns an injector that applies fault to the first operation op (of the state
// machine), and counts whether it fired.
func onceState(op string, fault stateFault, fired *atomic.Int32) func(string) stateFault {
	var done atomic.Bool
	return func(got string) stateFault {
		if got == op && done.CompareAndSwap(false, true) {
			fired.Add(1)
			return fault
		}
		return stateNone
	}
}

// onceBlob applies fault to the first object operation op on a key of the given kind
// ("records-" for payloads, "manifest-" for manifests).
func onceBlob(op blobfault.Op, kind string, fault blobfault.Fault, fired *atomic.Int32) blobfault.Injector {
	var done atomic.Bool
	return func(got blobfault.Op, key string) blobfault.Fault {
		if got == op && strings.Contains(key, "/"+kind) && done.CompareAndSwap(false, true) {
			fired.Add(1)
			return fault
		}
		return blobfault.None
	}
}

// TestFaultAtEveryStep injects one failure at each step of the protocol — every state-machine
// operation failing before it reaches the store, committing with an unknown outcome, or
// running after the worker stalled past its lease; every object write and read-back failing,
// succeeding ambiguously or timing out — and, in separate cases, a failure of the deferral
// that follows a failure. The archiver then runs cycles until it is done: every record must be
// readable exactly once with counts equal to the reference, every eligible bucket archived
// under a valid manifest, and today's buckets hot.
func TestFaultAtEveryStep(t *testing.T) {
	t.Parallel()
	type tc struct {
		name  string
		state []func(*atomic.Int32) func(string) stateFault
		blob  func(*atomic.Int32) blobfault.Injector
	}
	var cases []tc
	for _, op := range []string{"discover", "claim", "renew", "snapshot", "publish", "delete"} {
		for _, f := range []stateFault{stateFailBefore, stateFailAfter, stateStall} {
			cases = append(cases, tc{name: op + "/" + f.String(), state: []func(*atomic.Int32) func(string) stateFault{
				func(n *atomic.Int32) func(string) stateFault { return onceState(op, f, n) }}})
		}
	}
	// A failure whose recovery step fails too: the deferral after a failed snapshot or delete,
	// the cleanup claim that follows a deferred cleanup, and the route read that resolves an
	// ambiguous publish or delete.
	for _, pair := range []struct {
		first string
		fault stateFault
		then  string
	}{
		{"snapshot", stateFailBefore, "defer_archive"}, {"delete", stateFailBefore, "defer_cleanup"},
		{"delete", stateFailBefore, "claim_cleanup"}, {"publish", stateFailAfter, "route"},
		{"publish", stateFailBefore, "route"}, {"delete", stateFailAfter, "route"},
	} {
		for _, f := range []stateFault{stateFailBefore, stateFailAfter} {
			cases = append(cases, tc{name: pair.first + "-" + pair.fault.String() + "+" + pair.then + "/" + f.String(), state: []func(*atomic.Int32) func(string) stateFault{
				func(n *atomic.Int32) func(string) stateFault { return onceState(pair.first, pair.fault, n) },
				func(n *atomic.Int32) func(string) stateFault { return onceState(pair.then, f, n) },
			}})
		}
	}
	for _, op := range []blobfault.Op{blobfault.OpWrite, blobfault.OpRead} {
		for _, kind := range []string{"records-", "manifest-"} {
			for _, f := range []blobfault.Fault{blobfault.FailBefore, blobfault.FailAfter, blobfault.StallBefore, blobfault.StallAfter} {
				cases = append(cases, tc{name: fmt.Sprintf("%s-%s/%s", op, strings.TrimSuffix(kind, "-"), f),
					blob: func(n *atomic.Int32) blobfault.Injector { return onceBlob(op, kind, f, n) }})
			}
		}
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, "sqlite", []string{"alpha", "beta"}, 3, 90)
			var fired atomic.Int32
			var o runnerOpts
			if strings.HasPrefix(c.name, "renew/") {
				o.renew = time.Millisecond
				// The first snapshot waits for the first renewal, so that the renewal's
				// fault always lands while a bucket is being worked on.
				renewed := make(chan struct{})
				var renewOnce, waitOnce sync.Once
				o.hook = func(op string, _ *routing.ArchiveSession) {
					switch op {
					case "renew":
						renewOnce.Do(func() { close(renewed) })
					case "snapshot":
						waitOnce.Do(func() { <-renewed })
					}
				}
			}
			if len(c.state) > 0 {
				var injectors []func(string) stateFault
				for _, mk := range c.state {
					injectors = append(injectors, mk(&fired))
				}
				o.state = func(op string) stateFault {
					for _, in := range injectors {
						if f := in(op); f != stateNone {
							return f
						}
					}
					return stateNone
				}
			}
			if c.blob != nil {
				o.blob = c.blob(&fired)
			}
			if rounds := e.drive(t, 10, e.runner(t, o)); rounds < 0 {
				t.Fatalf("not done after 10 rounds")
			}
			if want := max(len(c.state), 1); int(fired.Load()) != want {
				t.Fatalf("%d faults fired, want %d", fired.Load(), want)
			}
			e.check(t)
		})
	}
}

// TestCompetingRunnersUnderRandomFaults runs two archivers against the same buckets, each
// with its own random faults in the object store and the hot store, while readers count and
// scan every partition continuously and compare each answer with the reference. Every answer
// must be the reference's, whatever the buckets' states; at the end every record is readable
// exactly once. On PostgreSQL the runners, the readers and the database run truly
// concurrently, with leases in database time.
func TestCompetingRunnersUnderRandomFaults(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"sqlite", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, kind, []string{"a", "b", "c", "d"}, 4, 60)
			var mu sync.Mutex
			rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 9))
			seed := rng.Uint64()
			t.Logf("seed %d", seed)
			rng = rand.New(rand.NewPCG(seed, 1))
			var faults atomic.Int64
			chance := func() float64 { mu.Lock(); defer mu.Unlock(); return rng.Float64() }
			stateFaults := []stateFault{stateFailBefore, stateFailAfter}
			if kind == "sqlite" {
				stateFaults = append(stateFaults, stateStall) // fake time: stalls are free
			}
			newRunner := func() *archive.Archiver {
				return e.runner(t, runnerOpts{
					state: func(op string) stateFault {
						if op == "discover" || chance() >= 0.12 {
							return stateNone
						}
						faults.Add(1)
						mu.Lock()
						defer mu.Unlock()
						return stateFaults[rng.IntN(len(stateFaults))]
					},
					blob: func(op blobfault.Op, key string) blobfault.Fault {
						if chance() >= 0.08 {
							return blobfault.None
						}
						faults.Add(1)
						mu.Lock()
						defer mu.Unlock()
						return blobfault.Fault(1 + rng.IntN(4))
					},
				})
			}
			r1, r2 := newRunner(), newRunner()

			stop := make(chan struct{})
			var readers sync.WaitGroup
			var reads atomic.Int64
			var readErr atomic.Value
			for range 2 {
				readers.Add(1)
				go func() {
					defer readers.Done()
					for {
						select {
						case <-stop:
							return
						default:
						}
						if err := e.readAll(); err != nil {
							readErr.CompareAndSwap(nil, err)
							return
						}
						reads.Add(1)
					}
				}()
			}
			// Between rounds, wait for two more full read passes, so that readers see the
			// states each round leaves (hot, archiving under a lost lease, archived with or
			// without hot rows) as well as the transitions during rounds.
			e.between = func() {
				for target := reads.Load() + 2; reads.Load() < target && readErr.Load() == nil; {
					time.Sleep(time.Millisecond)
				}
			}
			rounds := e.drive(t, 60, r1, r2)
			close(stop)
			readers.Wait()
			if err, _ := readErr.Load().(error); err != nil {
				t.Fatalf("a reader got an answer other than the reference's: %v", err)
			}
			if rounds < 0 {
				t.Fatalf("not done after 60 rounds (%d faults)", faults.Load())
			}
			t.Logf("%d rounds, %d faults injected, %d full read passes", rounds, faults.Load(), reads.Load())
			e.check(t)
		})
	}
}

// TestStaleWorkerIsFenced: a worker claims a bucket and stalls past its lease; another takes
// the bucket over, archives and cleans it. When the first resumes, its upload goes to its own
// generation's keys (never over the new owner's objects), and every owner-conditioned write it
// attempts — publish, delete, renew, defer, snapshot — is rejected as stale; the records stay
// readable exactly once from the new owner's archive. Over SQLite (the store's clock jumps) and
// PostgreSQL (the lease expires in database time).
func TestStaleWorkerIsFenced(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"sqlite", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			testStaleWorkerIsFenced(t, kind)
		})
	}
}

func testStaleWorkerIsFenced(t *testing.T, kind string) {
	e := newEnv(t, kind, []string{"only"}, 2, 120)
	b := e.eligible[0]
	resume := make(chan struct{})
	stalled := make(chan *routing.ArchiveSession, 1)
	// The stale worker stalls in its snapshot, and its renewer in its first renewal (with the
	// fake clock of SQLite it never gets there): its lease expires.
	stale := e.runner(t, runnerOpts{renew: e.lease / 2, hook: func(op string, s *routing.ArchiveSession) {
		switch op {
		case "snapshot":
			stalled <- s
			<-resume
		case "renew":
			<-resume
		}
	}})
	var staleSum archive.RunSummary
	var staleErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		staleSum, staleErr = stale.RunOnce(bg, e.cutoff)
	}()
	old := <-stalled
	e.stall() // its lease expires
	// Another runner takes the bucket over (in as many cycles as it needs: on PostgreSQL a
	// cycle slower than its own lease is retried by the next).
	if rounds := e.drive(t, 10, e.runner(t, runnerOpts{})); rounds < 0 {
		t.Fatal("the takeover did not finish in 10 cycles")
	}
	st, err := e.store.Status(bg, b)
	if err != nil || st.Generation <= old.Generation || st.State != routing.StateArchived || !st.HotDeleted {
		t.Fatalf("status after takeover = %+v, %v", st, err)
	}
	published := st.ManifestKey
	close(resume)
	<-done
	if !errors.Is(staleErr, routing.ErrStaleArchiveSession) || staleSum.Published != 0 || staleSum.Failed != 1 {
		t.Fatalf("stale worker's cycle = %+v, %v; want a stale-session failure", staleSum, staleErr)
	}
	// Its later writes, one by one.
	for name, err := range map[string]error{
		"publish":       e.store.PublishArchive(bg, old, published),
		"delete":        e.store.DeleteHotBucket(bg, old),
		"renew":         e.store.Renew(bg, old, time.Hour),
		"defer archive": e.store.DeferArchive(bg, old, time.Hour),
		"defer cleanup": e.store.DeferCleanup(bg, old, time.Hour),
	} {
		if !errors.Is(err, routing.ErrStaleArchiveSession) {
			t.Fatalf("stale %s = %v", name, err)
		}
	}
	if _, err := e.store.Snapshot(bg, old); !errors.Is(err, routing.ErrStaleArchiveSession) {
		t.Fatalf("stale snapshot = %v", err)
	}
	// The stale upload (same records, its own generation) lands beside, not over, the new one.
	w, err := archive.NewWriter(e.files, archive.WriterOptions{Prefix: "archives"})
	if err != nil {
		t.Fatal(err)
	}
	staleKey, err := w.Put(bg, b, old.Generation, e.want["only"][:120])
	if err != nil {
		t.Fatal(err)
	}
	if staleKey == published || !strings.Contains(staleKey, fmt.Sprintf("/generation-%d/", old.Generation)) ||
		!strings.Contains(published, fmt.Sprintf("/generation-%d/", st.Generation)) {
		t.Fatalf("stale key %s, published %s", staleKey, published)
	}
	if st2, err := e.store.Status(bg, b); err != nil || st2.ManifestKey != published || !st2.HotDeleted {
		t.Fatalf("route after the stale worker = %+v, %v", st2, err)
	}
	e.check(t)
}
