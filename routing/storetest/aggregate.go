package storetest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"gocloud.dev/blob"
	_ "gocloud.dev/blob/fileblob" // file:// archives in a temporary directory

	"github.com/flightsrv/flightsrv/archive"
	"github.com/flightsrv/flightsrv/routing"
)

// Binnings covers every date_trunc unit and date_bin strides with aligned, unaligned,
// pre-1970 and future origins (the future origin puts every record before it).
var Binnings = []routing.Binning{
	routing.TruncBinning(routing.TruncSecond), routing.TruncBinning(routing.TruncMinute),
	routing.TruncBinning(routing.TruncHour), routing.TruncBinning(routing.TruncDay),
	routing.TruncBinning(routing.TruncWeek), routing.TruncBinning(routing.TruncMonth),
	routing.TruncBinning(routing.TruncQuarter), routing.TruncBinning(routing.TruncYear),
	routing.StrideBinning(15*time.Minute, ts("2001-01-01T00:00:00Z")),
	routing.StrideBinning(7*time.Minute, ts("2001-01-01T00:00:00Z")),
	routing.StrideBinning(36*time.Hour, ts("2024-02-29T05:00:00Z")),
	routing.StrideBinning(1500*time.Microsecond, ts("1969-12-31T23:59:59.999999Z")),
	routing.StrideBinning(24*time.Hour, ts("1970-01-01T05:00:00Z")),
	routing.StrideBinning(1000*24*time.Hour, ts("2100-01-01T00:00:00Z")),
}

// RunAggregate checks the partial-aggregate port (routing.HotStore.AggregateRange, and
// routing.DurableTable.AggregateBucket over it with the archive package's real reader)
// against brute force: count(*), min and max of the timestamp, ungrouped and per time bin
// (every Binnings entry), directly over year, month and day buckets (boundary instants, times
// before 1970, sub-microsecond bounds, archiving and archived routes, never-appended buckets)
// with one statement each, then through AggregateBucket over hot, archiving and archived
// (Parquet and JSON, hot rows deleted or kept) month buckets with empty months between and a
// neighbouring partition, with and without the route cache, never building records; and the
// optional row-aggregate port (testRowAggregate, testSummedCount). open must
// return a new, empty, migrated store; it registers its own cleanup on t.
func RunAggregate(t *testing.T, open func(t *testing.T) Store) {
	t.Run("StorePort", func(t *testing.T) { t.Parallel(); testStoreBins(t, open(t)) })
	t.Run("DurableTable", func(t *testing.T) { t.Parallel(); testTableAggregate(t, open(t)) })
	t.Run("AnswerBatches", func(t *testing.T) { t.Parallel(); testAnswerBatches(t, open(t)) })
	t.Run("RowAggregate", func(t *testing.T) { t.Parallel(); testRowAggregate(t, open(t)) })
	t.Run("SummedCount", func(t *testing.T) { t.Parallel(); testSummedCount(t, open(t)) })
}

// requests are the shapes of request the suite asks, grouped by bin when set.
func requests(r routing.TimeRange, bin *routing.Binning) []routing.AggregateRequest {
	if bin != nil {
		return []routing.AggregateRequest{
			{Range: r, Bin: bin, Measures: []routing.Measure{routing.CountStar}},
			{Range: r, Bin: bin, Measures: []routing.Measure{routing.CountStar, routing.MinTime, routing.MaxTime}},
			{Range: r, Bin: bin, Measures: []routing.Measure{routing.MaxTime}},
		}
	}
	return []routing.AggregateRequest{
		{Range: r, Measures: []routing.Measure{routing.CountStar}}, {Range: r, Measures: []routing.Measure{routing.MinTime}}, {Range: r, Measures: []routing.Measure{routing.MaxTime}},
		{Range: r, Measures: []routing.Measure{routing.MinTime, routing.MaxTime}}, {Range: r, Measures: []routing.Measure{routing.CountStar, routing.MinTime, routing.MaxTime}},
	}
}

// brute is the partial aggregate of recs by definition: one group per non-empty bin of their
// event times, ascending, or exactly one group when ungrouped; states not asked for are
// zero (count) or not found (extremes).
func brute(req routing.AggregateRequest, recs []routing.Record) []routing.PartialGroup {
	var out []routing.PartialGroup
	if req.Bin == nil {
		out = append(out, routing.PartialGroup{})
	}
	for _, x := range recs {
		var bin time.Time
		if req.Bin != nil {
			bin = req.Bin.Floor(x.EventTime)
		}
		i := slices.IndexFunc(out, func(g routing.PartialGroup) bool { return g.Bin.Equal(bin) })
		if i < 0 {
			out = append(out, routing.PartialGroup{Bin: bin})
			i = len(out) - 1
		}
		g := &out[i]
		g.Count++
		t := x.EventTime.UTC()
		if !g.Found || t.Before(g.Min) {
			g.Min = t
		}
		if !g.Found || t.After(g.Max) {
			g.Max = t
		}
		g.Found = true
	}
	slices.SortFunc(out, func(x, y routing.PartialGroup) int { return x.Bin.Compare(y.Bin) })
	return masked(req, out)
}

// masked clears the states req does not ask for.
func masked(req routing.AggregateRequest, gs []routing.PartialGroup) []routing.PartialGroup {
	out := slices.Clone(gs)
	for i := range out {
		if !req.Asks(routing.MeasureCount) {
			out[i].Count = 0
		}
		if !req.Asks(routing.MeasureMin) {
			out[i].Min = time.Time{}
		}
		if !req.Asks(routing.MeasureMax) {
			out[i].Max = time.Time{}
		}
		if !req.Asks(routing.MeasureMin) && !req.Asks(routing.MeasureMax) {
			out[i].Found = false
		}
		if req.Bin == nil {
			out[i].Bin = time.Time{}
		}
	}
	return out
}

// partial reads an answer of PartialAggregateSchema(grouped) back into groups (a store's
// answer, or several buckets' answers merged by mergeGroups) and releases it.
func partial(t *testing.T, what string, r array.RecordReader, grouped bool) []routing.PartialGroup {
	t.Helper()
	gs, _ := partialBatches(t, what, r, grouped)
	return gs
}

// partialBatches is partial that also returns the answer's number of batches; it fails the
// test when a batch holds more than routing.MaxBatchRows rows.
func partialBatches(t *testing.T, what string, r array.RecordReader, grouped bool) ([]routing.PartialGroup, int) {
	t.Helper()
	defer r.Release()
	c := &cappedReader{RecordReader: r}
	out, err := routing.ReadPartial(c, grouped)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if c.over > 0 {
		t.Fatalf("%s: an answer batch of %d rows, more than MaxBatchRows (%d)", what, c.over, routing.MaxBatchRows)
	}
	if !grouped && len(out) != 1 {
		t.Fatalf("%s: an ungrouped answer of %d rows", what, len(out))
	}
	return out, c.batches
}

// cappedReader counts the batches it passes on and remembers the size of one larger than
// routing.MaxBatchRows.
type cappedReader struct {
	array.RecordReader
	batches int
	over    int64
}

func (c *cappedReader) Next() bool {
	if !c.RecordReader.Next() {
		return false
	}
	c.batches++
	if n := c.RecordBatch().NumRows(); n > routing.MaxBatchRows {
		c.over = n
	}
	return true
}

// testAnswerBatches: an answer of more groups than routing.MaxBatchRows — a per-second count
// over a day bucket holding records in MaxBatchRows+100 distinct seconds — comes in several
// batches of at most MaxBatchRows rows, from the store and through AggregateBucket, and its
// groups are brute force's.
func testAnswerBatches(t *testing.T, s Store) {
	b := dayBucket("t.bins.cap", "p", "2024-03-04")
	all := make([]routing.Record, routing.MaxBatchRows+100)
	for i := range all {
		all[i] = rec(b, b.Start.Add(time.Duration(i)*time.Second+time.Duration(i%7)*time.Microsecond), "k", "v")
	}
	for i := 0; i < len(all); i += 1000 {
		mustAppend(t, s, b, all[i:min(i+1000, len(all))]...)
	}
	bin := routing.TruncBinning(routing.TruncSecond)
	req := routing.AggregateRequest{Range: b.Range(), Bin: &bin, Measures: []routing.Measure{routing.CountStar, routing.MinTime, routing.MaxTime}}
	want := brute(req, all)
	if len(want) != len(all) {
		t.Fatalf("brute force: %d groups of %d records", len(want), len(all))
	}
	_, r, err := s.AggregateRange(context.Background(), b, req)
	if err != nil {
		t.Fatal(err)
	}
	gs, batches := partialBatches(t, "store answer", r, true)
	samePartial(t, "store answer", gs, want)
	if batches < 2 {
		t.Fatalf("store answer: %d groups in %d batch", len(gs), batches)
	}
	tbl, err := routing.NewDurableTable(routing.TableDef{Name: "cap", TableID: b.TableID, PartitionColumn: "p", Strategy: routing.CalendarDayUTC, WritableBuckets: 2},
		s, nil, routing.Options{Clock: func() time.Time { return b.End }})
	if err != nil {
		t.Fatal(err)
	}
	r, _, err = tbl.AggregateBucket(context.Background(), b, req)
	if err != nil {
		t.Fatal(err)
	}
	gs, batches = partialBatches(t, "AggregateBucket", r, true)
	samePartial(t, "AggregateBucket", gs, want)
	if batches < 2 {
		t.Fatalf("AggregateBucket: %d groups in %d batch", len(gs), batches)
	}
}

// mergeGroups merges per-bucket answers as the final aggregate does: states of equal bins (of
// every row when ungrouped) combined, ascending.
func mergeGroups(req routing.AggregateRequest, parts ...[]routing.PartialGroup) []routing.PartialGroup {
	var out []routing.PartialGroup
	if req.Bin == nil {
		out = append(out, routing.PartialGroup{})
	}
	for _, p := range parts {
		for _, g := range p {
			i := slices.IndexFunc(out, func(x routing.PartialGroup) bool { return x.Bin.Equal(g.Bin) })
			if i < 0 {
				out = append(out, routing.PartialGroup{Bin: g.Bin})
				i = len(out) - 1
			}
			x := &out[i]
			x.Count += g.Count
			if g.Found {
				if !x.Found || g.Min.Before(x.Min) {
					x.Min = g.Min
				}
				if !x.Found || g.Max.After(x.Max) {
					x.Max = g.Max
				}
				x.Found = true
			}
		}
	}
	slices.SortFunc(out, func(x, y routing.PartialGroup) int { return x.Bin.Compare(y.Bin) })
	return masked(req, out)
}

func samePartial(t *testing.T, what string, got, want []routing.PartialGroup) {
	t.Helper()
	eq := func(a, b routing.PartialGroup) bool {
		return a.Bin.Equal(b.Bin) && a.Count == b.Count && a.Found == b.Found && a.Min.Equal(b.Min) && a.Max.Equal(b.Max)
	}
	if !slices.EqualFunc(got, want, eq) {
		t.Fatalf("%s:\n got %v\nwant %v", what, got, want)
	}
}

// aggregateCall asks s once and drains the answer.
func aggregateCall(ctx context.Context, s Store, b routing.BucketID, req routing.AggregateRequest) error {
	_, r, err := s.AggregateRange(ctx, b, req)
	if r != nil {
		for r.Next() {
		}
		err = errors.Join(err, r.Err())
		r.Release()
	}
	return err
}

// mustAggregate asks s for req over b and returns the route and the groups (none when
// archived).
func mustAggregate(t *testing.T, s Store, b routing.BucketID, req routing.AggregateRequest) (routing.Route, []routing.PartialGroup) {
	t.Helper()
	route, r, err := s.AggregateRange(bg, b, req)
	if err != nil {
		t.Fatalf("AggregateRange: %v", err)
	}
	if route.State == routing.StateArchived {
		if r != nil {
			t.Fatalf("AggregateRange answered an archived bucket")
		}
		return route, nil
	}
	return route, partial(t, "AggregateRange", r, req.Bin != nil)
}

// mustCount returns the route and count(*) of b inside r from the port.
func mustCount(t *testing.T, s Store, b routing.BucketID, r routing.TimeRange) (routing.Route, uint64) {
	t.Helper()
	route, gs := mustAggregate(t, s, b, routing.AggregateRequest{Range: r, Measures: []routing.Measure{routing.CountStar}})
	if len(gs) == 0 {
		return route, 0
	}
	return route, uint64(gs[0].Count)
}

// mustMinMax returns the route and min/max of b inside r from the port (zero times when none).
func mustMinMax(t *testing.T, s Store, b routing.BucketID, r routing.TimeRange) (routing.Route, bool, time.Time, time.Time) {
	t.Helper()
	route, gs := mustAggregate(t, s, b, routing.AggregateRequest{Range: r, Measures: []routing.Measure{routing.MinTime, routing.MaxTime}})
	if len(gs) == 0 || !gs[0].Found {
		return route, false, time.Time{}, time.Time{}
	}
	return route, true, gs[0].Min, gs[0].Max
}

// tableAggregate asks every bucket of pk intersecting r through AggregateBucket and merges the
// answers; it returns them and how many buckets each tier answered.
func tableAggregate(t *testing.T, ctx context.Context, tbl *routing.DurableTable, pk []byte, req routing.AggregateRequest) (gs []routing.PartialGroup, hot, arch int) {
	t.Helper()
	var parts [][]routing.PartialGroup
	for _, b := range tbl.Buckets(pk, req.Range) {
		r, tier, err := tbl.AggregateBucket(ctx, b, req)
		if err != nil {
			t.Fatalf("AggregateBucket %s: %v", b.Key, err)
		}
		if tier == routing.TierArchive {
			arch++
		} else {
			hot++
		}
		parts = append(parts, partial(t, "AggregateBucket "+b.Key, r, req.Bin != nil))
	}
	return mergeGroups(req, parts...), hot, arch
}

// tableCount is count(*) of pk inside r through AggregateBucket, and the hot buckets asked.
func tableCount(t *testing.T, tbl *routing.DurableTable, pk []byte, r routing.TimeRange) (int64, int) {
	t.Helper()
	gs, hot, _ := tableAggregate(t, bg, tbl, pk, routing.AggregateRequest{Range: r, Measures: []routing.Measure{routing.CountStar}})
	return gs[0].Count, hot
}

func testStoreBins(t *testing.T, s Store) {
	rng := rand.New(rand.NewPCG(17, 19))
	year := func(table, y string) routing.BucketID {
		start := ts(y + "-01-01T00:00:00Z")
		return routing.BucketID{TableID: table, PartitionKey: []byte("p"), Strategy: routing.CalendarYearUTC,
			Key: "year:" + y, Start: start, End: start.AddDate(1, 0, 0)}
	}
	buckets := []routing.BucketID{year("t.bins.y", "2024"), year("t.bins.y", "1969"), feb2024("t.bins.m", "p"), dayBucket("t.bins.d", "p", "2024-03-04")}
	recs := map[string][]routing.Record{}
	for _, b := range buckets {
		span := int64(b.End.Sub(b.Start) / time.Microsecond)
		instants := []time.Time{b.Start, b.End.Add(-time.Microsecond)}
		for _, bin := range Binnings { // bin bounds inside the bucket, and their neighbours
			for at, n := bin.Floor(b.Start), 0; at.Before(b.End) && n < 40; at, n = bin.Next(at), n+1 {
				for _, d := range []time.Duration{-time.Microsecond, 0} {
					if x := at.Add(d); b.Range().Contains(x) {
						instants = append(instants, x)
					}
				}
			}
		}
		for range 300 {
			instants = append(instants, b.Start.Add(time.Duration(rng.Int64N(span))*time.Microsecond))
		}
		seen := map[int64]int{}
		var all []routing.Record
		for _, x := range instants {
			seen[x.UnixMicro()]++
			all = append(all, rec(b, x, fmt.Sprintf("k%d", seen[x.UnixMicro()]), "value-bins-must-not-read"))
		}
		for i := 0; i < len(all); i += 200 {
			mustAppend(t, s, b, all[i:min(i+200, len(all))]...)
		}
		recs[b.CacheKey()] = all
	}
	for _, b := range buckets {
		all := recs[b.CacheKey()]
		ranges := []routing.TimeRange{b.Range(), fullRange,
			{Start: b.Start.Add(-time.Hour), End: b.Start},
			{Start: b.Start.Add(time.Hour), End: b.Start.Add(time.Hour)},
			{Start: b.Start.Add(time.Nanosecond), End: b.End.Add(-999 * time.Nanosecond)}, // sub-µs bounds
		}
		for range 6 {
			a := all[rng.IntN(len(all))].EventTime
			e := all[rng.IntN(len(all))].EventTime.Add(time.Duration(rng.IntN(3)) * time.Microsecond / 2)
			if e.Before(a) {
				a, e = e, a
			}
			ranges = append(ranges, routing.TimeRange{Start: a, End: e})
		}
		bins := []*routing.Binning{nil}
		for i := range Binnings {
			bins = append(bins, &Binnings[i])
		}
		for _, bin := range bins {
			for _, r := range ranges {
				for _, req := range requests(r, bin) {
					stats := &routing.ReadStats{}
					route, rd, err := s.AggregateRange(routing.WithReadStats(bg, stats), b, req)
					what := fmt.Sprintf("%s %+v [%v, %v)", b.Key, req, r.Start, r.End)
					if err != nil {
						t.Fatalf("%s: %v", what, err)
					}
					wantRoute(t, what, route, routing.StateHot, "", false)
					samePartial(t, what, partial(t, what, rd, bin != nil), brute(req, expect(all, r, nil, false, len(all))))
					if n := stats.HotStatements.Load(); n != 1 {
						t.Fatalf("%s: %d statements, want 1", what, n)
					}
				}
			}
		}
	}

	// Archiving buckets are still counted from the hot store; archived ones return the route
	// and no bins; a bucket without metadata is hot and empty.
	m := buckets[2]
	bin := routing.TruncBinning(routing.TruncDay)
	req := routing.AggregateRequest{Range: m.Range(), Bin: &bin, Measures: []routing.Measure{routing.CountStar, routing.MinTime, routing.MaxTime}}
	want := brute(req, recs[m.CacheKey()])
	sess := mustClaim(t, s, m, time.Hour)
	route, got := mustAggregate(t, s, m, req)
	wantRoute(t, "archiving", route, routing.StateArchiving, "", false)
	samePartial(t, "archiving bucket", got, want)
	if err := s.PublishArchive(bg, sess, "archives/manifest-bins.json"); err != nil {
		t.Fatal(err)
	}
	for _, req := range append(requests(m.Range(), nil), req) {
		route, got = mustAggregate(t, s, m, req)
		if len(got) != 0 {
			t.Fatalf("archived bucket answered %v", got)
		}
		wantRoute(t, "archived", route, routing.StateArchived, "archives/manifest-bins.json", false)
	}
	never := dayBucket("t.bins.never", "p", "2024-03-04")
	route, got = mustAggregate(t, s, never, req)
	if len(got) != 0 || route.State != routing.StateHot {
		t.Fatalf("never-appended bucket: %+v %v", route, got)
	}
	route, got = mustAggregate(t, s, never, routing.AggregateRequest{Range: never.Range(), Measures: []routing.Measure{routing.CountStar, routing.MaxTime}})
	samePartial(t, "never-appended bucket, ungrouped", got, []routing.PartialGroup{{}})
	if _, _, err := s.AggregateRange(bg, never, routing.AggregateRequest{Range: never.Range(), Bin: &routing.Binning{}, Measures: []routing.Measure{routing.CountStar}}); !errors.Is(err, routing.ErrInvalidBinning) {
		t.Fatalf("zero binning: %v", err)
	}
}

// testTableAggregate checks routing.DurableTable.AggregateBucket over a store and the archive
// package's real reader against brute force: a year of month buckets of one partition, hot,
// archiving, and archived as Parquet (hot rows deleted or kept) and JSON, with empty months
// between, a neighbouring partition, every ungrouped request shape and every Binnings entry,
// with and without the route cache (the second pass answers archived buckets from it),
// ranges crossing bucket boundaries, inside empty months, outside the data and with
// sub-microsecond bounds; no record is ever built, and no bucket takes more than one statement.
func testTableAggregate(t *testing.T, s Store) {
	def := routing.TableDef{Name: "messages", TableID: "t.minmax", PartitionColumn: "channel_id",
		Strategy: routing.CalendarMonthUTC, WritableBuckets: 24}
	clock := func() time.Time { return ts("2026-01-10T00:00:00Z") }
	writer, err := routing.NewDurableTable(def, s, nil, routing.Options{Clock: clock})
	if err != nil {
		t.Fatal(err)
	}

	// Month m of 2025 (1-based) as a literal bucket of partition pk.
	month := func(pk string, m int) routing.BucketID {
		start := time.Date(2025, time.Month(m), 1, 0, 0, 0, 0, time.UTC)
		return routing.BucketID{TableID: def.TableID, PartitionKey: []byte(pk), Strategy: routing.CalendarMonthUTC,
			Key: fmt.Sprintf("month:2025-%02d", m), Start: start, End: start.AddDate(0, 1, 0)}
	}
	rng := rand.New(rand.NewPCG(31, 41))
	var all []routing.Record // partition "p"
	var seq int
	gen := func(pk string, m, n int) []routing.Record {
		b := month(pk, m)
		span := int64(b.End.Sub(b.Start) / time.Microsecond)
		var out []routing.Record
		for i := range n {
			t0 := b.Start.Add(time.Duration(rng.Int64N(span)) * time.Microsecond)
			switch {
			case i == 0 && m == 1:
				t0 = b.Start // the year's first instant
			case i == 0 && m == 12:
				t0 = b.End.Add(-time.Microsecond) // the year's last instant
			case i > 0 && rng.IntN(5) == 0:
				t0 = out[rng.IntN(len(out))].EventTime // a tie, broken by sort key
			}
			seq++
			out = append(out, rec(b, t0, fmt.Sprintf("id-%05d", seq), "value-min-max-must-not-read"))
		}
		return out
	}
	dataMonths := []int{1, 2, 4, 5, 7, 8, 11, 12} // 3, 6, 9 and 10 stay empty
	var batch []routing.Record
	for _, m := range dataMonths {
		recs := gen("p", m, 20+rng.IntN(40))
		all = append(all, recs...)
		batch = append(batch, recs...)
	}
	for _, m := range []int{3, 6, 9} { // the neighbour has rows where "p" has none
		batch = append(batch, gen("q", m, 5)...)
	}
	if n, err := writer.Append(bg, batch); err != nil || n != len(batch) {
		t.Fatalf("Append: %d of %d: %v", n, len(batch), err)
	}

	bkt, err := blob.OpenBucket(bg, "file://"+t.TempDir()+"?metadata=skip")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = bkt.Close() })
	parquetW, err := archive.NewWriter(bkt, archive.WriterOptions{Prefix: "archives", RowGroupRows: 8, PageBufferBytes: 256})
	if err != nil {
		t.Fatal(err)
	}
	jsonW, err := archive.NewWriter(bkt, archive.WriterOptions{Prefix: "archives", Format: archive.FormatJSON})
	if err != nil {
		t.Fatal(err)
	}
	reader, err := archive.NewReader(bkt, archive.ReaderOptions{TailBytes: 2048})
	if err != nil {
		t.Fatal(err)
	}
	archiveMonth := func(m int, w routing.ArchiveWriter, deleteHot bool) {
		b := month("p", m)
		sess := mustClaim(t, s, b, time.Hour)
		snap, err := s.Snapshot(bg, sess)
		if err != nil {
			t.Fatal(err)
		}
		key, err := w.Put(bg, b, sess.Generation, snap)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.PublishArchive(bg, sess, key); err != nil {
			t.Fatal(err)
		}
		if deleteHot {
			if err := s.DeleteHotBucket(bg, sess); err != nil {
				t.Fatal(err)
			}
		}
	}
	archiveMonth(2, parquetW, true)           // archived Parquet, hot rows deleted
	archiveMonth(4, jsonW, false)             // archived JSON, hot rows kept (cleanup pending)
	archiveMonth(8, parquetW, false)          // archived Parquet, hot rows kept
	archiveMonth(12, parquetW, true)          // the last month: MAX answers from the archive
	mustClaim(t, s, month("p", 7), time.Hour) // archiving: still read from the hot store
	mustClaim(t, s, month("p", 11), -time.Second)

	year := routing.TimeRange{Start: ts("2025-01-01T00:00:00Z"), End: ts("2026-01-01T00:00:00Z")}
	ranges := []routing.TimeRange{
		year,
		{Start: ts("2024-06-01T00:00:00Z"), End: ts("2026-06-01T00:00:00Z")},
		{Start: ts("2025-03-01T00:00:00Z"), End: ts("2025-04-01T00:00:00Z")}, // an empty month
		{Start: ts("2025-09-01T00:00:00Z"), End: ts("2025-11-01T00:00:00Z")}, // two empty months
		{Start: ts("2024-01-01T00:00:00Z"), End: ts("2025-01-01T00:00:00Z")}, // before the data
		{Start: ts("2025-02-01T00:00:00Z"), End: ts("2025-02-01T00:00:00.000001Z")},
		{Start: ts("2025-12-31T23:59:59.999999Z"), End: ts("2026-01-01T00:00:00Z")},
		{Start: ts("2025-12-31T23:59:59.9999991Z"), End: ts("2026-01-01T00:00:00Z")}, // sub-µs bound
		{Start: ts("2025-01-31T12:00:00Z"), End: ts("2025-03-02T12:00:00Z")},         // across an archived bucket
		{Start: ts("2025-08-10T00:00:00.0000005Z"), End: ts("2025-08-20T00:00:00Z")}, // inside an archived bucket
	}
	for range 60 {
		a := year.Start.Add(time.Duration(rng.Int64N(int64(year.End.Sub(year.Start)))))
		e := a.Add(time.Duration(rng.Int64N(int64(120 * 24 * time.Hour))))
		if rng.IntN(3) == 0 {
			a = all[rng.IntN(len(all))].EventTime
		}
		if rng.IntN(3) == 0 {
			e = all[rng.IntN(len(all))].EventTime.Add(time.Duration(rng.IntN(2)) * time.Microsecond)
		}
		if !a.Before(e) {
			a, e = e, a.Add(time.Microsecond)
		}
		ranges = append(ranges, routing.TimeRange{Start: a, End: e})
	}
	for _, cached := range []bool{false, true} {
		opts := routing.Options{Clock: clock}
		if cached {
			opts.Cache = routing.NewRouteCache(64)
		}
		tbl, err := routing.NewDurableTable(def, s, reader, opts)
		if err != nil {
			t.Fatal(err)
		}
		for pass := range 2 { // the second pass answers archived buckets from the cache
			for i, r := range ranges {
				reqs := requests(r, nil)
				if i < 16 { // every binning on the fixed ranges and a few random ones
					for j := range Binnings {
						reqs = append(reqs, requests(r, &Binnings[j])...)
					}
				}
				for _, req := range reqs {
					stats := &routing.ReadStats{}
					got, hot, arch := tableAggregate(t, routing.WithReadStats(bg, stats), tbl, []byte("p"), req)
					what := fmt.Sprintf("cache %v pass %d %+v [%v, %v)", cached, pass, req, r.Start, r.End)
					samePartial(t, what, got, brute(req, expect(all, r, nil, false, len(all))))
					if stats.HotRows.Load() != 0 || stats.ArchiveRows.Load() != 0 {
						t.Fatalf("%s: records were built (%d hot, %d archive)", what, stats.HotRows.Load(), stats.ArchiveRows.Load())
					}
					if stats.HotStatements.Load() > int64(hot+arch) {
						t.Fatalf("%s: %d statements for %d buckets", what, stats.HotStatements.Load(), hot+arch)
					}
				}
			}
		}
	}
}

// Count returns count(*) of b's records inside r through s's partial-aggregate port
// (routing.HotStore.AggregateRange), 0 when b is archived: for adapter tests that check
// what a concurrent reader sees.
func Count(ctx context.Context, s routing.HotStore, b routing.BucketID, r routing.TimeRange) (uint64, error) {
	_, rd, err := s.AggregateRange(ctx, b, routing.AggregateRequest{Range: r, Measures: []routing.Measure{routing.CountStar}})
	if err != nil || rd == nil {
		return 0, err
	}
	defer rd.Release()
	gs, err := routing.ReadPartial(rd, false)
	if err != nil || len(gs) != 1 {
		return 0, errors.Join(err, fmt.Errorf("storetest: an ungrouped answer of %d rows", len(gs)))
	}
	return uint64(gs[0].Count), nil
}
