package storetest

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"gocloud.dev/blob"

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

// RunHistogram checks per-bin counts (routing.HotBinCounter, which the store must implement)
// against brute force: directly over year, month and day buckets (boundary instants, times
// before 1970, sub-microsecond bounds, archiving and archived routes, never-appended
// buckets), then through routing.DurableTable.CountByBin with the archive package's real
// reader over hot, archiving and archived (Parquet and JSON) month buckets. open must return a
// new, empty, migrated store; it registers its own cleanup on t.
func RunHistogram(t *testing.T, open func(t *testing.T) Store) {
	t.Run("StoreBins", func(t *testing.T) { t.Parallel(); testStoreBins(t, open(t)) })
	t.Run("DurableTableBins", func(t *testing.T) { t.Parallel(); testTableBins(t, open(t)) })
}

func binCounter(t *testing.T, s Store) routing.HotBinCounter {
	t.Helper()
	hc, ok := s.(routing.HotBinCounter)
	if !ok {
		t.Fatalf("%T does not implement routing.HotBinCounter", s)
	}
	return hc
}

func times(recs []routing.Record) []time.Time {
	out := make([]time.Time, len(recs))
	for i := range recs {
		out[i] = recs[i].EventTime
	}
	return out
}

func sameBins(t *testing.T, what string, got, want []routing.Bin) {
	t.Helper()
	if !slices.EqualFunc(got, want, func(a, b routing.Bin) bool { return a.Start.Equal(b.Start) && a.Count == b.Count }) {
		t.Fatalf("%s:\n got %v\nwant %v", what, got, want)
	}
	for _, b := range got {
		if b.Start.Location() != time.UTC {
			t.Fatalf("%s: bin start %v not in UTC", what, b.Start)
		}
	}
}

func testStoreBins(t *testing.T, s Store) {
	hc := binCounter(t, s)
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
		for _, bin := range Binnings {
			for _, r := range ranges {
				stats := &routing.ReadStats{}
				route, got, err := hc.CountRangeByBin(routing.WithReadStats(bg, stats), b, r, bin)
				what := fmt.Sprintf("%s %v [%v, %v)", b.Key, bin, r.Start, r.End)
				if err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				wantRoute(t, what, route, routing.StateHot, "", false)
				sameBins(t, what, got, routing.BinTimes(bin, times(expect(all, r, nil, false, len(all)))))
				if n := stats.HotStatements.Load(); n != 1 {
					t.Fatalf("%s: %d statements, want 1", what, n)
				}
			}
		}
	}

	// Archiving buckets are still counted from the hot store; archived ones return the route
	// and no bins; a bucket without metadata is hot and empty.
	m := buckets[2]
	bin := routing.TruncBinning(routing.TruncDay)
	want := routing.BinTimes(bin, times(recs[m.CacheKey()]))
	sess := mustClaim(t, s, m, time.Hour)
	route, got, err := hc.CountRangeByBin(bg, m, m.Range(), bin)
	if err != nil {
		t.Fatal(err)
	}
	wantRoute(t, "archiving", route, routing.StateArchiving, "", false)
	sameBins(t, "archiving bucket", got, want)
	if err := s.PublishArchive(bg, sess, "archives/manifest-bins.json"); err != nil {
		t.Fatal(err)
	}
	route, got, err = hc.CountRangeByBin(bg, m, m.Range(), bin)
	if err != nil || len(got) != 0 {
		t.Fatalf("archived bucket: %v, %v", got, err)
	}
	wantRoute(t, "archived", route, routing.StateArchived, "archives/manifest-bins.json", false)
	never := dayBucket("t.bins.never", "p", "2024-03-04")
	route, got, err = hc.CountRangeByBin(bg, never, never.Range(), bin)
	if err != nil || len(got) != 0 || route.State != routing.StateHot {
		t.Fatalf("never-appended bucket: %+v %v %v", route, got, err)
	}
	if _, _, err := hc.CountRangeByBin(bg, never, never.Range(), routing.Binning{}); !errors.Is(err, routing.ErrInvalidBinning) {
		t.Fatalf("zero binning: %v", err)
	}
}

func testTableBins(t *testing.T, s Store) {
	def := routing.TableDef{Name: "messages", TableID: "t.bins.table", PartitionColumn: "channel_id",
		Strategy: routing.CalendarMonthUTC, WritableBuckets: 24}
	clock := func() time.Time { return ts("2026-01-10T00:00:00Z") }
	writer, err := routing.NewDurableTable(def, s, nil, routing.Options{Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	month := func(m int) routing.BucketID {
		return routing.BucketFor(def.TableID, []byte("p"), def.Strategy, time.Date(2025, time.Month(m), 1, 0, 0, 0, 0, time.UTC))
	}
	rng := rand.New(rand.NewPCG(23, 29))
	var all []routing.Record
	for _, m := range []int{1, 2, 3, 5, 6, 8, 9, 12} { // April, July, October and November empty
		b := month(m)
		span := int64(b.End.Sub(b.Start) / time.Microsecond)
		n := 40 + rng.IntN(60)
		for i := range n {
			at := b.Start.Add(time.Duration(rng.Int64N(span)) * time.Microsecond)
			switch i {
			case 0:
				at = b.Start
			case 1:
				at = b.End.Add(-time.Microsecond)
			}
			all = append(all, rec(b, at, fmt.Sprintf("id-%02d-%03d", m, i), "value"))
		}
	}
	if n, err := writer.Append(bg, all); err != nil || n != len(all) {
		t.Fatalf("Append: %d of %d: %v", n, len(all), err)
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
		b := month(m)
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
	archiveMonth(2, parquetW, true)
	archiveMonth(3, jsonW, false)
	archiveMonth(8, parquetW, false)
	mustClaim(t, s, month(5), time.Hour) // archiving

	yr := routing.TimeRange{Start: ts("2025-01-01T00:00:00Z"), End: ts("2026-01-01T00:00:00Z")}
	ranges := []routing.TimeRange{
		yr,
		{Start: ts("2024-11-01T00:00:00Z"), End: ts("2026-03-01T00:00:00Z")},
		{Start: ts("2025-01-31T12:00:00Z"), End: ts("2025-03-02T12:00:00Z")}, // across archived buckets
		{Start: ts("2025-04-01T00:00:00Z"), End: ts("2025-05-01T00:00:00Z")}, // empty month
		{Start: ts("2025-02-01T00:00:00Z"), End: ts("2025-02-01T00:00:00.000001Z")},
		{Start: ts("2025-08-10T00:00:00.0000005Z"), End: ts("2025-08-20T00:00:00Z")},
	}
	for range 10 {
		a := yr.Start.Add(time.Duration(rng.Int64N(int64(yr.End.Sub(yr.Start)))))
		e := a.Add(time.Duration(rng.Int64N(int64(90 * 24 * time.Hour))))
		if rng.IntN(2) == 0 {
			a = all[rng.IntN(len(all))].EventTime
		}
		if !a.Before(e) {
			a, e = e, a.Add(time.Microsecond)
		}
		ranges = append(ranges, routing.TimeRange{Start: a, End: e})
	}
	for _, fanout := range []int{1, 3} {
		opts := routing.Options{Fanout: fanout, Clock: clock, Cache: routing.NewRouteCache(64)}
		tbl, err := routing.NewDurableTable(def, s, reader, opts)
		if err != nil {
			t.Fatal(err)
		}
		for pass := range 2 { // the second pass answers archived buckets from the route cache
			for _, bin := range Binnings {
				for _, r := range ranges {
					stats := &routing.ReadStats{}
					got, res, err := tbl.CountByBin(routing.WithReadStats(bg, stats), []byte("p"), r, bin)
					what := fmt.Sprintf("fanout %d pass %d %v [%v, %v)", fanout, pass, bin, r.Start, r.End)
					if err != nil {
						t.Fatalf("%s: %v", what, err)
					}
					want := expect(all, r, nil, false, len(all))
					sameBins(t, what, got, routing.BinTimes(bin, times(want)))
					if res.Count != uint64(len(want)) || res.HotBuckets+res.ArchiveBuckets != res.Buckets {
						t.Fatalf("%s: result %+v for %d records", what, res, len(want))
					}
					if stats.HotRows.Load() != 0 || stats.ArchiveRows.Load() != 0 {
						t.Fatalf("%s: records were built (%d hot, %d archive)", what, stats.HotRows.Load(), stats.ArchiveRows.Load())
					}
					if stats.HotStatements.Load() > int64(res.Buckets) {
						t.Fatalf("%s: %d statements for %d buckets", what, stats.HotStatements.Load(), res.Buckets)
					}
				}
			}
		}
	}
}
