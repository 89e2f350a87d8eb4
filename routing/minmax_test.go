package routing_test

import (
	"context"
	"errors"
	"fmt"
	"github.com/apache/arrow-go/v18/arrow/array"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/flightsrv/flightsrv/routing"
)

// memStore is a hand-written HotStore double for the MIN/MAX walk: event times per bucket key,
// routes per bucket key, and a count of MinMaxRange calls per bucket. Methods the walk must
// not use panic (through the nil embedded interface).
type memStore struct {
	routing.HotStore
	mu     sync.Mutex
	times  map[string][]time.Time
	routes map[string]routing.Route
	probes map[string]int
	fail   map[string]error
}

func newMemStore() *memStore {
	return &memStore{times: map[string][]time.Time{}, routes: map[string]routing.Route{}, probes: map[string]int{}, fail: map[string]error{}}
}

func (s *memStore) MinMaxRange(_ context.Context, b routing.BucketID, r routing.TimeRange) (routing.Route, bool, time.Time, time.Time, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.probes[b.Key]++
	if err := s.fail[b.Key]; err != nil {
		return routing.Route{}, false, time.Time{}, time.Time{}, err
	}
	route := s.routes[b.Key]
	if route.State == routing.StateArchived {
		return route, false, time.Time{}, time.Time{}, nil
	}
	var found bool
	var lo, hi time.Time
	for _, t := range s.times[b.Key] {
		if !r.Contains(t) {
			continue
		}
		if !found || t.Before(lo) {
			lo = t
		}
		if !found || t.After(hi) {
			hi = t
		}
		found = true
	}
	return route, found, lo, hi, nil
}

func (s *memStore) totalProbes() (total int, twice bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, n := range s.probes {
		total += n
		twice = twice || n > 1
	}
	return total, twice
}

func (s *memStore) reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.probes)
}

// memArchive is an ArchiveReader double over the same event times (keyed by manifest key =
// bucket key). With minmax set it also implements routing.ArchiveMinMaxer.
type memArchive struct {
	times map[string][]time.Time
	mu    sync.Mutex
	calls int
}

func (a *memArchive) inRange(key string, r routing.TimeRange) []time.Time {
	a.mu.Lock()
	a.calls++
	a.mu.Unlock()
	var out []time.Time
	for _, t := range a.times[key] {
		if r.Contains(t) {
			out = append(out, t)
		}
	}
	slices.SortFunc(out, time.Time.Compare)
	return out
}

func (a *memArchive) Read(_ context.Context, key string, b routing.BucketID, req routing.ReadRequest) ([]routing.Record, error) {
	ts := a.inRange(key, req.Range.Intersect(b.Range()))
	if req.Desc {
		slices.Reverse(ts)
	}
	var out []routing.Record
	for _, t := range ts[:min(len(ts), req.Limit)] {
		out = append(out, routing.Record{PartitionKey: b.PartitionKey, EventTime: t, SortKey: []byte("k"), Value: []byte{}})
	}
	return out, nil
}

func (a *memArchive) Count(_ context.Context, key string, b routing.BucketID, r routing.TimeRange) (uint64, error) {
	return uint64(len(a.inRange(key, r.Intersect(b.Range())))), nil
}

func (a *memArchive) Aggregate(context.Context, string, routing.BucketID, routing.AggregateRequest) (array.RecordReader, error) {
	return nil, routing.ErrNoAggregate
}

type memMinMaxArchive struct{ *memArchive }

func (a memMinMaxArchive) MinMax(_ context.Context, key string, b routing.BucketID, r routing.TimeRange) (uint64, time.Time, time.Time, error) {
	ts := a.inRange(key, r.Intersect(b.Range()))
	if len(ts) == 0 {
		return 0, time.Time{}, time.Time{}, nil
	}
	return uint64(len(ts)), ts[0], ts[len(ts)-1], nil
}

var mmDef = routing.TableDef{Name: "messages", TableID: "t", PartitionColumn: "channel_id", Strategy: routing.CalendarMonthUTC, WritableBuckets: 1}

// bruteMinMax is the reference answer over every time of every bucket.
func bruteMinMax(all []time.Time, r routing.TimeRange) (found bool, lo, hi time.Time) {
	for _, t := range all {
		if !r.Contains(t) {
			continue
		}
		if !found || t.Before(lo) {
			lo = t
		}
		if !found || t.After(hi) {
			hi = t
		}
		found = true
	}
	return found, lo, hi
}

// TestMinMaxWalk compares DurableTable.MinMax with brute force over random data in month
// buckets (sparse and dense, some buckets archived, both archive reader kinds), random
// ranges, every fan-out from 1 to 6 and each of MIN, MAX and both; it checks that no bucket
// is probed twice and that a walk never probes more than Fanout-1 buckets past the one that
// answers it.
func TestMinMaxWalk(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(5, 8))
	start := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	end := start.AddDate(4, 0, 0)
	for round := range 40 {
		st := newMemStore()
		arch := &memArchive{times: map[string][]time.Time{}}
		density := []int{0, 2, 10, 50, 90}[round%5]
		var all []time.Time
		for b := routing.BucketFor("t", []byte("p"), mmDef.Strategy, start); b.Start.Before(end); b = routing.BucketFor("t", []byte("p"), mmDef.Strategy, b.End) {
			if rng.IntN(100) >= density {
				continue
			}
			for range 1 + rng.IntN(4) {
				tt := b.Start.Add(time.Duration(rng.Int64N(int64(b.End.Sub(b.Start))))).Truncate(time.Microsecond)
				if rng.IntN(8) == 0 {
					tt = b.Start
				}
				st.times[b.Key] = append(st.times[b.Key], tt)
				all = append(all, tt)
			}
			if rng.IntN(3) == 0 {
				st.routes[b.Key] = routing.Route{State: routing.StateArchived, ManifestKey: b.Key}
				arch.times[b.Key] = st.times[b.Key]
			} else if rng.IntN(4) == 0 {
				st.routes[b.Key] = routing.Route{State: routing.StateArchiving}
			}
		}
		var ar routing.ArchiveReader = arch
		if round%2 == 0 {
			ar = memMinMaxArchive{arch}
		}
		fanout := 1 + round%6
		tbl, err := routing.NewDurableTable(mmDef, st, ar, routing.Options{Fanout: fanout})
		if err != nil {
			t.Fatal(err)
		}
		for range 30 {
			a := start.Add(time.Duration(rng.Int64N(int64(end.Sub(start)))))
			e := a.Add(time.Duration(rng.Int64N(int64(end.Sub(a)))) + time.Nanosecond)
			if rng.IntN(4) == 0 && len(all) > 0 {
				a = all[rng.IntN(len(all))]
			}
			if rng.IntN(4) == 0 && len(all) > 0 {
				e = all[rng.IntN(len(all))].Add(time.Duration(rng.IntN(2)) * time.Microsecond)
			}
			if !a.Before(e) {
				a, e = e, a.Add(time.Microsecond)
			}
			r := routing.TimeRange{Start: a, End: e}
			found, wlo, whi := bruteMinMax(all, r)
			buckets := tbl.Buckets([]byte("p"), r)
			first, last := -1, -1
			for i, b := range buckets {
				if f, _, _ := bruteMinMax(st.times[b.Key], r); f {
					if first < 0 {
						first = i
					}
					last = i
				}
			}
			for _, want := range []routing.Extremes{routing.WantMin, routing.WantMax, routing.WantMinMax} {
				st.reset()
				res, err := tbl.MinMax(ctx, []byte("p"), r, want)
				if err != nil {
					t.Fatal(err)
				}
				what := fmt.Sprintf("round %d fanout %d want %d range [%v, %v)", round, fanout, want, r.Start, r.End)
				if res.Found != found {
					t.Fatalf("%s: found = %v, want %v", what, res.Found, found)
				}
				if found && want&routing.WantMin != 0 && !res.Min.Equal(wlo) {
					t.Fatalf("%s: min = %v, want %v", what, res.Min, wlo)
				}
				if found && want&routing.WantMax != 0 && !res.Max.Equal(whi) {
					t.Fatalf("%s: max = %v, want %v", what, res.Max, whi)
				}
				if res.Buckets != len(buckets) || res.Probed != res.HotBuckets+res.ArchiveBuckets {
					t.Fatalf("%s: result %+v for %d buckets", what, res, len(buckets))
				}
				probes, twice := st.totalProbes()
				if twice {
					t.Fatalf("%s: a bucket was probed twice", what)
				}
				// Cached archived routes answer without a hot probe.
				if probes > res.Probed {
					t.Fatalf("%s: %d hot probes for %d probed buckets", what, probes, res.Probed)
				}
				// Bound per walk: the buckets up to the answering one (all of them when none
				// answers) plus at most fanout-1 beyond it.
				n := len(buckets)
				bound := 0
				if want&routing.WantMin != 0 {
					if first < 0 {
						bound += n
					} else {
						bound += first + fanout
					}
				}
				if want&routing.WantMax != 0 {
					if last < 0 {
						bound += n
					} else {
						bound += n - 1 - last + fanout
					}
				}
				if res.Probed > min(bound, n) {
					t.Fatalf("%s: probed %d buckets, bound %d (first %d, last %d of %d)", what, res.Probed, bound, first, last, n)
				}
			}
		}
	}
}

// TestMinMaxEarlyStop: MIN over a year of month buckets whose first month has data asks one
// bucket, not twelve; MAX whose last month has data asks one; both ask two.
func TestMinMaxEarlyStop(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := newMemStore()
	year := routing.TimeRange{Start: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), End: time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)}
	for m := range 12 {
		b := routing.BucketFor("t", []byte("p"), mmDef.Strategy, year.Start.AddDate(0, m, 3))
		st.times[b.Key] = []time.Time{b.Start.Add(time.Hour), b.Start.Add(48 * time.Hour)}
	}
	tbl, err := routing.NewDurableTable(mmDef, st, nil, routing.Options{Fanout: 4})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		want   routing.Extremes
		probes int
	}{{routing.WantMin, 1}, {routing.WantMax, 1}, {routing.WantMinMax, 2}} {
		st.reset()
		res, err := tbl.MinMax(ctx, []byte("p"), year, c.want)
		if err != nil {
			t.Fatal(err)
		}
		if n, _ := st.totalProbes(); n != c.probes || res.Probed != c.probes || res.Buckets != 12 {
			t.Fatalf("want %d: %d store probes, result %+v; want %d probes", c.want, n, res, c.probes)
		}
		if !res.Found || (c.want&routing.WantMin != 0 && !res.Min.Equal(time.Date(2026, 1, 1, 1, 0, 0, 0, time.UTC))) ||
			(c.want&routing.WantMax != 0 && !res.Max.Equal(time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC))) {
			t.Fatalf("want %d: result %+v", c.want, res)
		}
	}

	// Only the middle month has data: MIN walks 1 + 2 + 4 buckets (windows doubling up to the
	// fan-out), finding month 6 in the third round.
	st2 := newMemStore()
	june := routing.BucketFor("t", []byte("p"), mmDef.Strategy, time.Date(2026, 6, 10, 0, 0, 0, 0, time.UTC))
	st2.times[june.Key] = []time.Time{june.Start.Add(time.Minute)}
	tbl2, _ := routing.NewDurableTable(mmDef, st2, nil, routing.Options{Fanout: 4})
	res, err := tbl2.MinMax(ctx, []byte("p"), year, routing.WantMin)
	if err != nil {
		t.Fatal(err)
	}
	if res.Probed != 7 || !res.Found || !res.Min.Equal(june.Start.Add(time.Minute)) {
		t.Fatalf("sparse MIN: %+v, want 7 probes and June's time", res)
	}
}

// TestMinMaxRoutesAndErrors checks the route cache (an archived bucket is asked of the hot
// store once), the archive-less error, store errors, and invalid calls.
func TestMinMaxRoutesAndErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := newMemStore()
	jan := routing.BucketFor("t", []byte("p"), mmDef.Strategy, time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC))
	st.times[jan.Key] = []time.Time{jan.Start.Add(time.Hour)}
	st.routes[jan.Key] = routing.Route{State: routing.StateArchived, ManifestKey: jan.Key}
	arch := &memArchive{times: map[string][]time.Time{jan.Key: st.times[jan.Key]}}
	cache := routing.NewRouteCache(16)
	tbl, _ := routing.NewDurableTable(mmDef, st, memMinMaxArchive{arch}, routing.Options{Cache: cache})
	r := routing.TimeRange{Start: jan.Start, End: jan.Start.AddDate(0, 3, 0)}
	for i := range 2 {
		res, err := tbl.MinMax(ctx, []byte("p"), r, routing.WantMin)
		if err != nil || !res.Found || !res.Min.Equal(jan.Start.Add(time.Hour)) || res.ArchiveBuckets != 1 || res.Source() != "archive" {
			t.Fatalf("call %d: %+v %v", i, res, err)
		}
	}
	if n, _ := st.totalProbes(); n != 1 || cache.Len() != 1 {
		t.Fatalf("archived bucket probed %d times in the hot store, cache holds %d", n, cache.Len())
	}

	noArchive, _ := routing.NewDurableTable(mmDef, st, nil, routing.Options{})
	if _, err := noArchive.MinMax(ctx, []byte("p"), r, routing.WantMin); !errors.Is(err, routing.ErrOperationFailed) {
		t.Fatalf("archived bucket without an archive reader: %v", err)
	}

	boom := errors.New("boom")
	feb := routing.BucketFor("t", []byte("p"), mmDef.Strategy, time.Date(2026, 2, 5, 0, 0, 0, 0, time.UTC))
	st.fail[feb.Key] = boom
	if _, err := noArchive.MinMax(ctx, []byte("p"), routing.TimeRange{Start: feb.Start, End: feb.End}, routing.WantMax); !errors.Is(err, boom) {
		t.Fatalf("store error: %v", err)
	}
	if _, err := tbl.MinMax(ctx, []byte("p"), routing.TimeRange{Start: r.End, End: r.Start}, routing.WantMin); !errors.Is(err, routing.ErrInvalidTimeRange) {
		t.Fatalf("reversed range: %v", err)
	}
	if _, err := tbl.MinMax(ctx, []byte("p"), r, 0); err == nil {
		t.Fatal("MinMax asking for nothing succeeded")
	}

	// A store answering outside the asked range is not believed.
	liar := &lyingStore{memStore: newMemStore()}
	lt, _ := routing.NewDurableTable(mmDef, liar, nil, routing.Options{})
	if _, err := lt.MinMax(ctx, []byte("p"), r, routing.WantMin); !errors.Is(err, routing.ErrOperationFailed) {
		t.Fatalf("answer outside the range: %v", err)
	}
}

type lyingStore struct{ *memStore }

func (s *lyingStore) MinMaxRange(_ context.Context, b routing.BucketID, r routing.TimeRange) (routing.Route, bool, time.Time, time.Time, error) {
	return routing.Route{}, true, r.Start.Add(-time.Hour), r.Start, nil
}

// ReadBatches completes the port; the MIN/MAX tests never read batches.
func (a *memArchive) ReadBatches(context.Context, string, routing.BucketID, routing.BatchRequest) (routing.BatchReader, error) {
	return nil, errors.New("memArchive: batch reads are not faked")
}
