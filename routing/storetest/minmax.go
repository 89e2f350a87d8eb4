package storetest

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"gocloud.dev/blob"
	_ "gocloud.dev/blob/fileblob" // file:// archives in a temporary directory

	"github.com/flightsrv/flightsrv/archive"
	"github.com/flightsrv/flightsrv/routing"
)

// RunMinMax checks routing.DurableTable.MinMax over a store and the archive package's real
// reader against brute force: a year of month buckets of one partition, hot, archiving, and
// archived as Parquet (hot rows deleted or kept) and JSON, with empty months between, a
// neighbouring partition, every extreme (MIN, MAX, both), several fan-outs with and without
// the route cache, ranges crossing bucket boundaries, inside empty months and outside the
// data; then the early stop: a MIN whose first bucket answers sends one hot statement.
// open must return a new, empty, migrated store; it registers its own cleanup on t.
func RunMinMax(t *testing.T, open func(t *testing.T) Store) {
	s := open(t)
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
	extremes := []routing.Extremes{routing.WantMin, routing.WantMax, routing.WantMinMax}
	for _, fanout := range []int{1, 2, 4} {
		for _, cached := range []bool{false, true} {
			opts := routing.Options{Fanout: fanout, Clock: clock}
			if cached {
				opts.Cache = routing.NewRouteCache(64)
			}
			tbl, err := routing.NewDurableTable(def, s, reader, opts)
			if err != nil {
				t.Fatal(err)
			}
			for pass := range 2 { // the second pass answers archived buckets from the cache
				for _, r := range ranges {
					want := expect(all, r, nil, false, len(all))
					count, err := tbl.Count(bg, []byte("p"), r)
					if err != nil {
						t.Fatalf("Count: %v", err)
					}
					for _, x := range extremes {
						stats := &routing.ReadStats{}
						res, err := tbl.MinMax(routing.WithReadStats(bg, stats), []byte("p"), r, x)
						what := fmt.Sprintf("fanout %d cache %v pass %d want %d [%v, %v)", fanout, cached, pass, x, r.Start, r.End)
						if err != nil {
							t.Fatalf("%s: MinMax: %v", what, err)
						}
						if res.Found != (len(want) > 0) || res.Found != (count.Count > 0) {
							t.Fatalf("%s: found = %v; brute force has %d records, Count %d", what, res.Found, len(want), count.Count)
						}
						if res.Found && x&routing.WantMin != 0 && !res.Min.Equal(want[0].EventTime) {
							t.Fatalf("%s: min = %v, want %v", what, res.Min, want[0].EventTime)
						}
						if res.Found && x&routing.WantMax != 0 && !res.Max.Equal(want[len(want)-1].EventTime) {
							t.Fatalf("%s: max = %v, want %v", what, res.Max, want[len(want)-1].EventTime)
						}
						if res.Found && (res.Min.Location() != time.UTC || res.Max.Location() != time.UTC) {
							t.Fatalf("%s: times not in UTC", what)
						}
						if stats.HotRows.Load() != 0 || stats.ArchiveRows.Load() != 0 {
							t.Fatalf("%s: MinMax built records (%d hot, %d archive)", what, stats.HotRows.Load(), stats.ArchiveRows.Load())
						}
						if res.Probed > res.Buckets || res.Probed != res.HotBuckets+res.ArchiveBuckets {
							t.Fatalf("%s: result %+v", what, res)
						}
					}
				}
			}
		}
	}

	// Early stop: MIN over the year asks January only — one statement, one bucket of twelve;
	// MAX asks December only, which is archived: one statement for its route, then the archive.
	tbl, err := routing.NewDurableTable(def, s, reader, routing.Options{Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		want       routing.Extremes
		statements int64
		probed     int
		source     string
	}{
		{routing.WantMin, 1, 1, "hot"},
		{routing.WantMax, 1, 1, "archive"},
		{routing.WantMinMax, 2, 2, "mixed"},
	} {
		stats := &routing.ReadStats{}
		res, err := tbl.MinMax(routing.WithReadStats(bg, stats), []byte("p"), year, c.want)
		if err != nil {
			t.Fatal(err)
		}
		if res.Buckets != 12 || res.Probed != c.probed || stats.HotStatements.Load() != c.statements || res.Source() != c.source {
			t.Fatalf("early stop, want %d: %+v with %d hot statements; want %d probes, %d statements, source %s",
				c.want, res, stats.HotStatements.Load(), c.probed, c.statements, c.source)
		}
	}
	// A partition without records: NULL after asking every bucket once.
	res, err := tbl.MinMax(bg, []byte("nobody"), year, routing.WantMinMax)
	if err != nil || res.Found || res.Probed != 12 {
		t.Fatalf("empty partition: %+v %v", res, err)
	}
}
