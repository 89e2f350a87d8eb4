package routing

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
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

// memStore is an in-memory HotStore: records and routes per bucket key. It counts calls by
// name and tracks the maximum number of concurrent calls.
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

// AggregateRange answers by brute force, counting grouped and ungrouped calls apart.
func (m *memStore) AggregateRange(_ context.Context, b BucketID, req AggregateRequest) (Route, array.RecordReader, error) {
	name := "aggregate"
	if req.Bin != nil {
		name = "aggregate by bin"
	}
	defer m.enter(name)()
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

// AppendStream is not used by these tests: the stores' write port is tested by storetest.
func (m *memStore) AppendStream(context.Context, string, Strategy, IngestSource) (int64, error) {
	return 0, ErrOperationFailed
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

// memArchive is an ArchiveReader over the same records, keyed by manifest key; decline makes
// Aggregate return ErrNoAggregate (a payload whose statistics cannot be trusted).
type memArchive struct {
	store   *memStore
	calls   atomic.Int64
	decline bool
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

func (a *memArchive) AggregateGroups(_ context.Context, _ string, b BucketID, req AggregateRequest) ([]PartialGroup, error) {
	a.calls.Add(1)
	if a.decline {
		return nil, ErrNoAggregate
	}
	return bruteGroups(req, a.records(b, req.Range)), nil
}

// readGroups reads an answer back into groups and releases it.
func readGroups(t *testing.T, r array.RecordReader, grouped bool) []PartialGroup {
	t.Helper()
	defer r.Release()
	out, err := ReadPartial(r, grouped)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestAggregateBucket checks AggregateBucket against brute force over hot and archived day
// buckets (archived routes cached), every test binning and ungrouped, partial ranges and
// ranges without records; an archive that cannot answer returns ErrNoAggregate.
func TestAggregateBucket(t *testing.T) {
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
	ms := newMemStore()
	ma := &memArchive{store: ms}
	cache := NewRouteCache(100)
	tbl, err := NewDurableTable(def, ms, ma, Options{Cache: cache})
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
	bins := []*Binning{nil}
	for i := range testBinnings {
		bins = append(bins, &testBinnings[i])
	}
	for _, bin := range bins {
		for _, r := range ranges {
			for _, want := range []AggregateRequest{{Measures: []Measure{CountStar, MinTime, MaxTime}}, {Measures: []Measure{CountStar}}, {Measures: []Measure{MaxTime}}} {
				req := want
				req.Range, req.Bin = r, bin
				for _, b := range tbl.Buckets(pk, r) {
					rd, tier, err := tbl.AggregateBucket(ctx, b, req)
					if err != nil {
						t.Fatal(err)
					}
					if _, stored := byBucket[b.CacheKey()]; stored && (tier == TierArchive) != (b.Start.Day()%2 == 0) {
						t.Fatalf("%s answered by tier %v", b.Key, tier)
					}
					got := readGroups(t, rd, bin != nil)
					var recs []Record
					for _, x := range byBucket[b.CacheKey()] {
						if r.Contains(x.EventTime) {
							recs = append(recs, x)
						}
					}
					exp := bruteGroups(req, recs)
					if bin == nil {
						var one PartialGroup
						for _, g := range exp {
							one.add(g)
						}
						exp = []PartialGroup{one}
					}
					for i := range exp {
						if !req.Asks(MeasureCount) {
							exp[i].Count = 0
						}
						if bin == nil {
							exp[i].Bin = time.Time{}
						}
						if !req.Asks(MeasureMin) {
							exp[i].Min = time.Time{}
						}
						if !req.Asks(MeasureMax) {
							exp[i].Max = time.Time{}
						}
						exp[i].Found = exp[i].Found && (req.Asks(MeasureMin) || req.Asks(MeasureMax))
					}
					if !slices.EqualFunc(got, exp, func(x, y PartialGroup) bool {
						return x.Bin.Equal(y.Bin) && x.Count == y.Count && x.Found == y.Found && x.Max.Equal(y.Max) && x.Min.Equal(y.Min)
					}) {
						t.Fatalf("%v %+v [%v, %v) %s:\n got %v\nwant %v", bin, want, r.Start, r.End, b.Key, got, exp)
					}
				}
			}
		}
	}
	if cache.Len() == 0 {
		t.Error("archived routes were not cached")
	}
	ma.decline = true
	b := BucketFor(def.TableID, pk, def.Strategy, day0.Add(24*time.Hour))
	if _, tier, err := tbl.AggregateBucket(ctx, b, AggregateRequest{Range: b.Range(), Measures: []Measure{CountStar}}); !errors.Is(err, ErrNoAggregate) || tier != TierArchive {
		t.Fatalf("declining archive: tier %v, %v", tier, err)
	}
	if _, _, err := tbl.AggregateBucket(ctx, b, AggregateRequest{Range: b.Range(), Bin: &Binning{}}); !errors.Is(err, ErrInvalidBinning) {
		t.Fatalf("zero binning: %v", err)
	}
}

// TestAggregateBucketInsideOneBin: a bucket whose part of the range lies inside one bin is
// asked ungrouped (a hot count, the manifest's record count), never per bin, and its row
// becomes that bin's.
func TestAggregateBucketInsideOneBin(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	def := TableDef{Name: "m", TableID: "m", PartitionColumn: "p", Strategy: CalendarMonthUTC, WritableBuckets: 100}
	ms := newMemStore()
	pk := []byte("p")
	tbl, err := NewDurableTable(def, ms, nil, Options{})
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
	quarter := TruncBinning(TruncQuarter)
	var got []PartialGroup
	for _, b := range tbl.Buckets(pk, r) {
		rd, _, err := tbl.AggregateBucket(ctx, b, AggregateRequest{Range: r, Bin: &quarter})
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, readGroups(t, rd, true)...)
	}
	want := []int64{2, 2, 2, 2, 2}
	starts := []string{"2024-01-01", "2024-01-01", "2024-01-01", "2024-04-01", "2024-04-01"}
	for i, g := range got {
		if g.Count != want[i] || g.Bin.Format(time.DateOnly) != starts[i] || g.Found {
			t.Fatalf("bucket %d answered %+v", i, g)
		}
	}
	if len(got) != 5 || ms.called("aggregate") != 5 || ms.called("aggregate by bin") != 0 {
		t.Fatalf("%d groups from %d ungrouped and %d grouped calls", len(got), ms.called("aggregate"), ms.called("aggregate by bin"))
	}
	// An empty bucket inside one bin answers no group.
	empty := BucketFor(def.TableID, pk, def.Strategy, utc("2024-07-01T00:00:00Z"))
	rd, _, err := tbl.AggregateBucket(ctx, empty, AggregateRequest{Range: empty.Range(), Bin: &quarter})
	if err != nil || len(readGroups(t, rd, true)) != 0 {
		t.Fatalf("empty bucket: %v", err)
	}
}

// ScanRange and ReadBatches complete the ports; the aggregate tests never read batches.
func (m *memStore) ScanRange(context.Context, BucketID, BatchRequest) (Route, BatchReader, error) {
	return Route{}, nil, errors.New("memStore: batch reads are not faked")
}

func (a *memArchive) ReadBatches(context.Context, string, BucketID, BatchRequest) (BatchReader, error) {
	return nil, errors.New("memArchive: batch reads are not faked")
}

// Partitions is not used by these tests (partition discovery has its conformance test in
// routing/storetest).
func (m *memStore) Partitions(context.Context, string, Strategy, TimeRange, int) ([]Partition, error) {
	return nil, errors.New("memStore: partition discovery not implemented")
}
