package routing

import (
	"context"
	"errors"
	"fmt"
	"github.com/apache/arrow-go/v18/arrow/array"
	"math/big"
	"math/rand/v2"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t.UTC()
}

// refFloor is an independent definition of the bins: Go's Truncate counts from the zero time
// 0001-01-01T00:00:00Z, a Monday, so it yields ISO weeks; date_bin is computed with big
// integers; calendar units walk months.
func refFloor(b Binning, t time.Time) time.Time {
	t = t.UTC()
	switch b.Unit {
	case TruncSecond:
		return t.Truncate(time.Second)
	case TruncMinute:
		return t.Truncate(time.Minute)
	case TruncHour:
		return t.Truncate(time.Hour)
	case TruncDay:
		return t.Truncate(24 * time.Hour)
	case TruncWeek:
		return t.Truncate(7 * 24 * time.Hour)
	case TruncMonth, TruncQuarter, TruncYear:
		step := map[TruncUnit]int{TruncMonth: 1, TruncQuarter: 3, TruncYear: 12}[b.Unit]
		s := time.Date(t.Year(), time.January, 1, 0, 0, 0, 0, time.UTC)
		for s.AddDate(0, step, 0).Compare(t) <= 0 {
			s = s.AddDate(0, step, 0)
		}
		return s
	}
	d := new(big.Int).Sub(big.NewInt(t.Truncate(time.Microsecond).UnixNano()), big.NewInt(b.Origin.UnixNano()))
	w := big.NewInt(int64(b.Stride))
	q := new(big.Int).Div(d, w) // Euclidean: floors for a positive divisor
	q.Mul(q, w).Add(q, big.NewInt(b.Origin.UnixNano()))
	return time.Unix(0, q.Int64()).UTC()
}

var testBinnings = []Binning{
	TruncBinning(TruncSecond), TruncBinning(TruncMinute), TruncBinning(TruncHour), TruncBinning(TruncDay),
	TruncBinning(TruncWeek), TruncBinning(TruncMonth), TruncBinning(TruncQuarter), TruncBinning(TruncYear),
	StrideBinning(15*time.Minute, utc("2001-01-01T00:00:00Z")),
	StrideBinning(7*time.Minute, utc("2001-01-01T00:00:00Z")),
	StrideBinning(36*time.Hour, utc("2024-02-29T05:00:00Z")),
	StrideBinning(1500*time.Microsecond, utc("1969-12-31T23:59:59.999999Z")),
	StrideBinning(24*time.Hour, utc("1970-01-01T00:00:00Z")),
	StrideBinning(100*365*24*time.Hour, utc("2200-01-01T00:00:00Z")),
}

func TestBinningFloor(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	times := []time.Time{
		utc("2024-01-01T00:00:00Z"), utc("2023-12-31T23:59:59.999999Z"), utc("2024-02-29T12:00:00Z"),
		utc("2024-03-04T00:00:00Z"), utc("2024-03-03T23:59:59.999999999Z"), utc("1969-12-31T23:59:59.999999Z"),
		utc("1970-01-01T00:00:00Z"), utc("2000-12-31T23:50:00Z"), utc("1900-06-15T07:08:09.000001Z"),
	}
	for range 3000 {
		times = append(times, time.Unix(0, rng.Int64N(int64(250*365*24*time.Hour))-int64(100*365*24*time.Hour)).UTC())
	}
	for _, b := range testBinnings {
		if err := b.Validate(); err != nil {
			t.Fatalf("%v: %v", b, err)
		}
		for _, tt := range times {
			f := b.Floor(tt)
			if want := refFloor(b, tt); !f.Equal(want) {
				t.Fatalf("%v: Floor(%v) = %v, want %v", b, tt, f, want)
			}
			if f.Location() != time.UTC || f.After(tt) || !tt.Before(b.Next(f)) {
				t.Fatalf("%v: %v not in [%v, %v)", b, tt, f, b.Next(f))
			}
			if !b.Floor(f).Equal(f) || !b.Floor(b.Next(f)).Equal(b.Next(f)) {
				t.Fatalf("%v: bin starts are not fixed points at %v", b, f)
			}
			if !b.Contains(TimeRange{f, b.Next(f)}) || b.Contains(TimeRange{f, b.Next(f).Add(time.Nanosecond)}) {
				t.Fatalf("%v: Contains wrong around %v", b, f)
			}
		}
	}
	// PostgreSQL's answers (PostgreSQL 15).
	for _, c := range []struct {
		b       Binning
		in, out string
	}{
		{StrideBinning(15*time.Minute, utc("2001-01-01T00:00:00Z")), "2000-12-31T23:50:00Z", "2000-12-31T23:45:00Z"},
		{StrideBinning(7*time.Minute, utc("2001-01-01T00:00:00Z")), "2000-12-31T23:50:00Z", "2000-12-31T23:46:00Z"},
		{StrideBinning(24*time.Hour, utc("2001-01-01T05:00:00Z")), "2024-03-01T10:00:00Z", "2024-03-01T05:00:00Z"},
		{TruncBinning(TruncWeek), "2024-03-03T10:00:00Z", "2024-02-26T00:00:00Z"},
		{TruncBinning(TruncQuarter), "2024-08-03T10:00:00Z", "2024-07-01T00:00:00Z"},
	} {
		if got := c.b.Floor(utc(c.in)); !got.Equal(utc(c.out)) {
			t.Errorf("%v: Floor(%s) = %v, want %s", c.b, c.in, got, c.out)
		}
	}
}

func TestBinningValidateAndString(t *testing.T) {
	t.Parallel()
	bad := []Binning{
		{},
		{Unit: 99},
		{Unit: TruncDay, Stride: time.Hour},
		{Stride: time.Hour},
		{Stride: -time.Hour, Origin: utc("2001-01-01T00:00:00Z")},
		{Stride: 1500 * time.Nanosecond, Origin: utc("2001-01-01T00:00:00Z")},
		{Stride: time.Hour, Origin: utc("2001-01-01T00:00:00.0000005Z")},
	}
	for _, b := range bad {
		if err := b.Validate(); !errors.Is(err, ErrInvalidBinning) {
			t.Errorf("%+v: Validate = %v", b, err)
		}
	}
	for b, want := range map[Binning]string{
		TruncBinning(TruncHour): "date_trunc('hour', timestamp)",
		StrideBinning(15*time.Minute, utc("2001-01-01T00:00:00Z")): "date_bin(INTERVAL '15 minutes', timestamp, TIMESTAMPTZ '2001-01-01T00:00:00Z')",
		StrideBinning(36*time.Hour, utc("2001-01-01T00:00:00Z")):   "date_bin(INTERVAL '36 hours', timestamp, TIMESTAMPTZ '2001-01-01T00:00:00Z')",
		StrideBinning(24*time.Hour, utc("2001-01-01T00:00:00Z")):   "date_bin(INTERVAL '1 day', timestamp, TIMESTAMPTZ '2001-01-01T00:00:00Z')",
	} {
		if got := b.String(); got != want {
			t.Errorf("String() = %q, want %q", got, want)
		}
	}
}

func TestStrategyInsideBins(t *testing.T) {
	t.Parallel()
	origin := utc("2001-01-01T00:00:00Z")
	for _, s := range []Strategy{CalendarDayUTC, CalendarMonthUTC, CalendarYearUTC} {
		for _, b := range append(testBinnings, StrideBinning(48*time.Hour, origin), StrideBinning(24*time.Hour, origin.Add(time.Hour))) {
			// The claim must hold for every bucket: check a few years of them.
			want := true
			for _, bk := range BucketsForRange("t", []byte("p"), s, TimeRange{utc("2023-01-01T00:00:00Z"), utc("2026-01-01T00:00:00Z")}) {
				if !b.Contains(bk.Range()) {
					want = false
					break
				}
			}
			if got := StrategyInsideBins(s, b); got && !want || (!got && want && b.Unit != 0) {
				t.Errorf("StrategyInsideBins(%v, %v) = %v, buckets inside one bin: %v", s, b, got, want)
			}
		}
	}
}

func TestMergeBins(t *testing.T) {
	t.Parallel()
	h := func(n int) time.Time { return utc("2024-01-01T00:00:00Z").Add(time.Duration(n) * time.Hour) }
	got := MergeBins([]Bin{{h(0), 1}, {h(2), 2}}, nil, []Bin{{h(2), 3}, {h(3), 0}, {h(5), 1}}, []Bin{{h(5), 1}})
	want := []Bin{{h(0), 1}, {h(2), 5}, {h(5), 2}}
	if !slices.Equal(got, want) {
		t.Fatalf("MergeBins = %v, want %v", got, want)
	}
	if got := MergeBins([]Bin{{h(3), 1}}, []Bin{{h(1), 1}}); !slices.Equal(got, []Bin{{h(1), 1}, {h(3), 1}}) {
		t.Fatalf("unsorted parts: %v", got)
	}
}

// memStore is an in-memory HotStore: records and routes per bucket key. It counts calls and
// tracks the maximum number of concurrent calls. withBins enables HotBinCounter.
type memStore struct {
	mu       sync.Mutex
	recs     map[string][]Record
	routes   map[string]Route
	delay    time.Duration
	calls    map[string]int
	cur, max atomic.Int64
}

func newMemStore() *memStore {
	return &memStore{recs: map[string][]Record{}, routes: map[string]Route{}, calls: map[string]int{}}
}

func (m *memStore) enter(name string) func() {
	m.mu.Lock()
	m.calls[name]++
	m.mu.Unlock()
	n := m.cur.Add(1)
	for {
		x := m.max.Load()
		if n <= x || m.max.CompareAndSwap(x, n) {
			break
		}
	}
	time.Sleep(m.delay)
	return func() { m.cur.Add(-1) }
}

func (m *memStore) called(name string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.calls[name]
}

func (m *memStore) inRange(b BucketID, r TimeRange) (Route, []Record) {
	m.mu.Lock()
	defer m.mu.Unlock()
	route := m.routes[b.CacheKey()]
	if route.State == StateArchived {
		return route, nil
	}
	var out []Record
	for _, x := range m.recs[b.CacheKey()] {
		if r.Contains(x.EventTime) {
			out = append(out, x)
		}
	}
	return route, out
}

func (m *memStore) ReadRange(_ context.Context, b BucketID, req ReadRequest) (Route, []Record, error) {
	defer m.enter("read")()
	route, recs := m.inRange(b, req.Range)
	var out []Record
	for i := range recs {
		if req.After.Admits(&recs[i], false) && len(out) < req.Limit {
			out = append(out, recs[i])
		}
	}
	return route, out, nil
}

func (m *memStore) CountRange(_ context.Context, b BucketID, r TimeRange) (Route, uint64, error) {
	defer m.enter("count")()
	route, recs := m.inRange(b, r)
	return route, uint64(len(recs)), nil
}

func (m *memStore) MinMaxRange(_ context.Context, b BucketID, r TimeRange) (Route, bool, time.Time, time.Time, error) {
	defer m.enter("minmax")()
	route, recs := m.inRange(b, r)
	if len(recs) == 0 {
		return route, false, time.Time{}, time.Time{}, nil
	}
	return route, true, recs[0].EventTime, recs[len(recs)-1].EventTime, nil
}

func (m *memStore) AggregateRange(_ context.Context, b BucketID, req AggregateRequest) (Route, array.RecordReader, error) {
	defer m.enter("aggregate")()
	route, recs := m.inRange(b, req.Range)
	if route.State == StateArchived {
		return route, nil, nil
	}
	r, err := req.Answer(bruteGroups(req, recs))
	return route, r, err
}

// bruteGroups is the partial aggregate of recs by definition: one group per bin of their
// event times (one group when ungrouped), ascending.
func bruteGroups(req AggregateRequest, recs []Record) []PartialGroup {
	var out []PartialGroup
	for _, x := range recs {
		var bin time.Time
		if req.Bin != nil {
			bin = req.Bin.Floor(x.EventTime)
		}
		g := PartialGroup{Bin: bin, Count: 1, Min: x.EventTime.UTC(), Max: x.EventTime.UTC(), Found: true}
		i := slices.IndexFunc(out, func(p PartialGroup) bool { return p.Bin.Equal(bin) })
		if i < 0 {
			out = append(out, g)
			continue
		}
		out[i].add(g)
	}
	slices.SortFunc(out, func(x, y PartialGroup) int { return x.Bin.Compare(y.Bin) })
	return out
}

func (m *memStore) Append(_ context.Context, b BucketID, recs []Record) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := b.CacheKey()
	m.recs[k] = append(m.recs[k], recs...)
	slices.SortFunc(m.recs[k], func(x, y Record) int { return Compare(x.EventTime, x.SortKey, y.EventTime, y.SortKey) })
	return nil
}

func (m *memStore) Route(_ context.Context, b BucketID) (Route, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.routes[b.CacheKey()], nil
}

// binStore adds HotBinCounter to memStore.
type binStore struct{ *memStore }

func (s binStore) CountRangeByBin(_ context.Context, b BucketID, r TimeRange, bin Binning) (Route, []Bin, error) {
	defer s.enter("bins")()
	route, recs := s.inRange(b, r)
	times := make([]time.Time, len(recs))
	for i := range recs {
		times[i] = recs[i].EventTime
	}
	return route, BinTimes(bin, times), nil
}

// memArchive is an ArchiveReader over the same records, keyed by manifest key; withBins
// enables ArchiveBinCounter.
type memArchive struct {
	store *memStore
	calls atomic.Int64
}

func (a *memArchive) records(b BucketID, r TimeRange) []Record {
	a.store.mu.Lock()
	defer a.store.mu.Unlock()
	var out []Record
	for _, x := range a.store.recs[b.CacheKey()] {
		if r.Contains(x.EventTime) {
			out = append(out, x)
		}
	}
	return out
}

func (a *memArchive) Read(_ context.Context, _ string, b BucketID, req ReadRequest) ([]Record, error) {
	a.calls.Add(1)
	var out []Record
	for _, x := range a.records(b, req.Range) {
		if req.After.Admits(&x, false) && len(out) < req.Limit {
			out = append(out, x)
		}
	}
	return out, nil
}

func (a *memArchive) Count(_ context.Context, _ string, b BucketID, r TimeRange) (uint64, error) {
	a.calls.Add(1)
	return uint64(len(a.records(b, r))), nil
}

func (a *memArchive) Aggregate(_ context.Context, _ string, b BucketID, req AggregateRequest) (array.RecordReader, error) {
	a.calls.Add(1)
	return req.Answer(bruteGroups(req, a.records(b, req.Range)))
}

type binArchive struct{ *memArchive }

func (a binArchive) CountByBin(_ context.Context, _ string, b BucketID, r TimeRange, bin Binning) ([]Bin, error) {
	a.calls.Add(1)
	var times []time.Time
	for _, x := range a.records(b, r) {
		times = append(times, x.EventTime)
	}
	return BinTimes(bin, times), nil
}

// TestCountByBin checks the port against BinTimes over every combination of store and
// archive capabilities, with archived buckets, bins spanning buckets and partial ranges.
func TestCountByBin(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	def := TableDef{Name: "m", TableID: "m", PartitionColumn: "p", Strategy: CalendarDayUTC, WritableBuckets: 1000}
	rng := rand.New(rand.NewPCG(5, 6))
	pk := []byte("p")
	day0 := utc("2024-02-25T00:00:00Z")
	var all []Record
	for i := range 3000 {
		at := day0.Add(time.Duration(rng.Int64N(int64(10 * 24 * time.Hour)))).Truncate(time.Microsecond)
		if i%50 == 0 {
			at = day0.Add(time.Duration(rng.IntN(10)) * 24 * time.Hour) // bucket starts
		}
		all = append(all, Record{PartitionKey: pk, EventTime: at, SortKey: fmt.Appendf(nil, "%05d", i)})
	}
	ranges := []TimeRange{
		{day0, day0.Add(10 * 24 * time.Hour)},
		{day0.Add(-time.Hour), day0.Add(11 * 24 * time.Hour)},
		{day0.Add(90 * time.Minute), day0.Add(3*24*time.Hour + 7*time.Minute)},
		{day0.Add(5 * time.Hour), day0.Add(5*time.Hour + time.Minute)},
		{all[7].EventTime, all[7].EventTime.Add(time.Nanosecond)},
		{day0.Add(-48 * time.Hour), day0.Add(-24 * time.Hour)}, // no record
	}
	for _, withBins := range []bool{false, true} {
		for _, archBins := range []bool{false, true} {
			ms := newMemStore()
			ms.delay = 200 * time.Microsecond
			var hot HotStore = ms
			if withBins {
				hot = binStore{ms}
			}
			ma := &memArchive{store: ms}
			var ar ArchiveReader = ma
			if archBins {
				ar = binArchive{ma}
			}
			cache := NewRouteCache(100)
			tbl, err := NewDurableTable(def, hot, ar, Options{Fanout: 3, Cache: cache})
			if err != nil {
				t.Fatal(err)
			}
			byBucket := map[string][]Record{}
			for _, x := range all {
				b := BucketFor(def.TableID, pk, def.Strategy, x.EventTime)
				byBucket[b.CacheKey()] = append(byBucket[b.CacheKey()], x)
			}
			for k, recs := range byBucket {
				b := BucketFor(def.TableID, pk, def.Strategy, recs[0].EventTime)
				if err := ms.Append(ctx, b, recs); err != nil {
					t.Fatal(err)
				}
				if b.Start.Day()%2 == 0 {
					ms.routes[k] = Route{State: StateArchived, ManifestKey: "manifest-" + b.Key}
				}
			}
			for _, bin := range testBinnings {
				for _, r := range ranges {
					var times []time.Time
					for _, x := range all {
						if r.Contains(x.EventTime) {
							times = append(times, x.EventTime)
						}
					}
					want := BinTimes(bin, times)
					got, res, err := tbl.CountByBin(ctx, pk, r, bin)
					if err != nil {
						t.Fatal(err)
					}
					if !slices.Equal(got, want) {
						t.Fatalf("bins=%v archive bins=%v %v [%v, %v): got %v\nwant %v", withBins, archBins, bin, r.Start, r.End, got, want)
					}
					if res.Count != uint64(len(times)) || res.Buckets != len(tbl.Buckets(pk, r)) || res.HotBuckets+res.ArchiveBuckets != res.Buckets {
						t.Fatalf("result %+v for %d records", res, len(times))
					}
				}
			}
			if withBins && ms.called("read") != 0 {
				t.Errorf("a store with HotBinCounter was read %d times", ms.called("read"))
			}
			if !withBins && ms.called("bins") != 0 {
				t.Error("bins counted by a store without the capability")
			}
			if m := ms.max.Load(); m > 3 {
				t.Errorf("%d concurrent store calls, fan-out is 3", m)
			}
			if cache.Len() == 0 {
				t.Error("archived routes were not cached")
			}
		}
	}
}

// TestBinBucketInsideOneBin: a bucket inside one bin is answered by the bucket count, never
// by a per-bin statement or a record read.
func TestBinBucketInsideOneBin(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	def := TableDef{Name: "m", TableID: "m", PartitionColumn: "p", Strategy: CalendarMonthUTC, WritableBuckets: 100}
	ms := newMemStore()
	pk := []byte("p")
	tbl, err := NewDurableTable(def, binStore{ms}, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for m := range 5 {
		b := BucketFor(def.TableID, pk, def.Strategy, utc("2024-01-01T00:00:00Z").AddDate(0, m, 0))
		recs := []Record{{PartitionKey: pk, EventTime: b.Start, SortKey: []byte("a")}, {PartitionKey: pk, EventTime: b.End.Add(-time.Microsecond), SortKey: []byte("b")}}
		if err := ms.Append(ctx, b, recs); err != nil {
			t.Fatal(err)
		}
	}
	r := TimeRange{utc("2024-01-01T00:00:00Z"), utc("2024-06-01T00:00:00Z")}
	got, _, err := tbl.CountByBin(ctx, pk, r, TruncBinning(TruncQuarter))
	if err != nil {
		t.Fatal(err)
	}
	want := []Bin{{utc("2024-01-01T00:00:00Z"), 6}, {utc("2024-04-01T00:00:00Z"), 4}}
	if !slices.Equal(got, want) || ms.called("count") != 5 || ms.called("bins") != 0 {
		t.Fatalf("got %v with %d counts and %d bin statements, want %v from 5 counts", got, ms.called("count"), ms.called("bins"), want)
	}
	if _, _, err := tbl.CountByBin(ctx, pk, TimeRange{r.End, r.Start}, TruncBinning(TruncDay)); !errors.Is(err, ErrInvalidTimeRange) {
		t.Fatalf("reversed range: %v", err)
	}
	if _, _, err := tbl.CountByBin(ctx, pk, r, Binning{}); !errors.Is(err, ErrInvalidBinning) {
		t.Fatalf("zero binning: %v", err)
	}
	keys := make([]string, 0)
	for k := range ms.calls {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if !slices.Equal(keys, []string{"count"}) {
		t.Fatalf("store calls %v, want only count", keys)
	}
}

// ScanRange and ReadBatches complete the ports; the count and bin tests never read batches.
func (s *memStore) ScanRange(context.Context, BucketID, BatchRequest) (Route, BatchReader, error) {
	return Route{}, nil, errors.New("memStore: batch reads are not faked")
}

func (a *memArchive) ReadBatches(context.Context, string, BucketID, BatchRequest) (BatchReader, error) {
	return nil, errors.New("memArchive: batch reads are not faked")
}
