package archive

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/flightsrv/flightsrv/routing"
)

// bruteMinMax is the reference MIN/MAX: count, least and greatest of the times inside r,
// computed without the reader.
func bruteMinMax(times []time.Time, r routing.TimeRange) (n uint64, lo, hi time.Time) {
	for _, t := range times {
		if !r.Contains(t) {
			continue
		}
		if n == 0 || t.Before(lo) {
			lo = t
		}
		if n == 0 || t.After(hi) {
			hi = t
		}
		n++
	}
	return n, lo, hi
}

// checkMinMax compares count(*), min and max of the partial-aggregate port (or of the rows
// when it declines, which it must exactly when wantDecline) with brute force.
func checkMinMax(t *testing.T, r *Reader, key string, b routing.BucketID, times []time.Time, rng routing.TimeRange, wantDecline bool) {
	t.Helper()
	wn, wlo, whi := bruteMinMax(times, rng.Intersect(b.Range()))
	n, lo, hi, declined, err := minMaxOf(context.Background(), r, key, b, rng)
	if err != nil {
		t.Fatalf("MinMax([%v, %v)): %v", rng.Start, rng.End, err)
	}
	if declined != wantDecline && wn > 0 {
		t.Fatalf("MinMax([%v, %v)): declined %v, want %v", rng.Start, rng.End, declined, wantDecline)
	}
	if n != wn || !lo.Equal(wlo) || !hi.Equal(whi) {
		t.Fatalf("MinMax([%v, %v)) = %d %v %v, want %d %v %v", rng.Start, rng.End, n, lo, hi, wn, wlo, whi)
	}
	if n > 0 && (lo.Location() != time.UTC || hi.Location() != time.UTC) {
		t.Fatalf("MinMax times not in UTC: %v %v", lo.Location(), hi.Location())
	}
	if n == 0 && (!lo.IsZero() || !hi.IsZero()) {
		t.Fatalf("MinMax of no record returned times %v %v", lo, hi)
	}
}

// TestMinMaxForeignParquet answers MIN/MAX over Parquet payloads written with other settings
// than ours — millisecond, microsecond and nanosecond units, isAdjustedToUTC=false, INT96,
// legacy converted types, nullable columns, no statistics, reversed, truncated or deprecated
// statistics, several unsorted row groups, row groups in reverse time order, empty row groups
// — and compares every answer with brute force over random ranges.
func TestMinMaxForeignParquet(t *testing.T) {
	t.Parallel()
	b := testBucket("general", routing.CalendarMonthUTC, time.Date(2023, 7, 4, 0, 0, 0, 0, time.UTC))
	rng := newRand(77)
	const n = 1200
	small := []parquet.WriterOption{parquet.MaxRowsPerRowGroup(150), parquet.PageBufferSize(512)}

	type variant struct {
		name  string
		data  []byte
		times []time.Time // the non-null event times
		rows  int
	}
	var variants []variant
	add := func(name string, data []byte, times []time.Time, rows int) {
		variants = append(variants, variant{name, data, times, rows})
	}
	{ // milliseconds, unsorted, several row groups, and footer damage on top
		ts := foreignTimes(rng, b, n, time.Millisecond, false)
		rows := make([]msRow, n)
		for i, tt := range ts {
			rows[i] = msRow{Channel: "general", EventTime: tt.UnixMilli(), Body: []byte{byte(i)}}
		}
		data := writeRows(t, rows, small...)
		add("ms-unsorted-multi-group", data, ts, n)
		add("ms-reversed-stats", rewriteFooter(t, data, reverseStats), ts, n)
		add("ms-truncated-stats", rewriteFooter(t, data, truncateStats), ts, n)
		add("ms-deprecated-stats-only", rewriteFooter(t, data, deprecatedStatsOnly), ts, n)
		add("ms-no-column-orders", rewriteFooter(t, data, dropColumnOrders), ts, n)
		add("ms-converted-type-only", rewriteFooter(t, data, convertedTypeOnly), ts, n)
		add("ms-empty-row-groups", rewriteFooter(t, data, insertEmptyRowGroups), ts, n)
	}
	{ // microseconds: one group, sorted groups, groups in reverse time order, no statistics
		ts := foreignTimes(rng, b, n, time.Microsecond, true)
		rows := make([]usRow, n)
		for i, tt := range ts {
			rows[i] = usRow{EventTime: tt.UnixMicro(), ID: int64(i)}
		}
		add("us-one-group", writeRows(t, rows, parquet.PageBufferSize(1024)), ts, n)
		data := writeRows(t, rows, small...)
		add("us-sorted-multi-group", data, ts, n)
		add("us-empty-row-groups", rewriteFooter(t, data, insertEmptyRowGroups), ts, n)
		add("us-no-page-index-reversed", rewriteFooter(t, data, func(md *format.FileMetaData) { dropPageIndex(md); reverseStats(md) }), ts, n)
		add("us-no-statistics", writeRows(t, rows, append(small, parquet.SkipPageBounds("event_time"), parquet.DataPageStatistics(false))...), ts, n)
		desc := slices.Clone(rows)
		slices.Reverse(desc)
		add("us-groups-in-reverse-time-order", writeRows(t, desc, small...), ts, n)
		// Sorted blocks written in a shuffled block order: every group is tight, but the groups
		// come in no time order.
		var blocks [][]usRow
		for i := 0; i < n; i += 150 {
			blocks = append(blocks, rows[i:min(i+150, n)])
		}
		rng.Shuffle(len(blocks), func(i, j int) { blocks[i], blocks[j] = blocks[j], blocks[i] })
		add("us-groups-shuffled", writeRows(t, slices.Concat(blocks...), small...), ts, n)
	}
	{ // nanoseconds, isAdjustedToUTC=false (read as UTC wall-clock time)
		ts := foreignTimes(rng, b, n, time.Nanosecond, false)
		rows := make([]localNsRow, n)
		for i, tt := range ts {
			rows[i] = localNsRow{ID: int64(i), EventTime: tt.UnixNano()}
		}
		add("ns-local-time-unsorted", writeRows(t, rows, small...), ts, n)
	}
	{ // optional microseconds with nulls
		all := foreignTimes(rng, b, n, time.Microsecond, true)
		rows := make([]optionalUsRow, n)
		var ts []time.Time
		for i, tt := range all {
			rows[i].V = "x"
			if i%9 == 4 || (i >= 300 && i < 450) { // one all-null row group too
				continue
			}
			v := tt.UnixMicro()
			rows[i].EventTime = &v
			ts = append(ts, tt)
		}
		add("us-optional-with-nulls", writeRows(t, rows, small...), ts, n)
	}
	{ // legacy INT96
		ts := foreignTimes(rng, b, n, time.Nanosecond, false)
		rows := make([]int96Row, n)
		for i, tt := range ts {
			rows[i] = int96Row{EventTime: toInt96(tt), V: int32(i)}
		}
		add("int96", writeRows(t, rows, small...), ts, n)
	}
	{ // our envelope with damaged statistics and extra empty groups
		recs := genRecords(rng, b, n)
		data, err := encodeParquetPayload(recs, 150, 256)
		if err != nil {
			t.Fatal(err)
		}
		ts := eventTimes(recs)
		add("envelope", data, ts, n)
		add("envelope-reversed-stats", rewriteFooter(t, data, reverseStats), ts, n)
		add("envelope-truncated-stats", rewriteFooter(t, data, truncateStats), ts, n)
		add("envelope-empty-row-groups", rewriteFooter(t, data, insertEmptyRowGroups), ts, n)
	}
	{ // a straddling first group holds the range's least value, an inside group follows it
		lo := b.Start.Add(10 * 24 * time.Hour)
		ts := []time.Time{
			lo.Add(-time.Hour), lo.Add(time.Minute), lo.Add(9 * 24 * time.Hour), // straddles [lo, lo+5d)
			lo.Add(time.Hour), lo.Add(2 * time.Hour), lo.Add(3 * time.Hour), // inside it
			lo.Add(-2 * time.Hour), lo.Add(4 * time.Hour), lo.Add(8 * 24 * time.Hour), // straddles again
		}
		rows := make([]msRow, len(ts))
		for i, tt := range ts {
			rows[i] = msRow{EventTime: tt.UnixMilli()}
		}
		data := writeRows(t, rows, parquet.MaxRowsPerRowGroup(3))
		add("straddling-group-holds-min", data, ts, len(ts))
	}

	for i, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			bkt := openTestBucket(t)
			key := publishRaw(t, bkt, b, FormatParquet, v.data, v.rows, nil)
			r, err := NewReader(bkt, ReaderOptions{TailBytes: 2048})
			if err != nil {
				t.Fatal(err)
			}
			fixed := []routing.TimeRange{
				b.Range(),
				{Start: b.Start.Add(-time.Hour), End: b.End.Add(time.Hour)},
				{Start: b.Start.Add(10 * 24 * time.Hour), End: b.Start.Add(15 * 24 * time.Hour)},
				{Start: b.End, End: b.End.Add(time.Hour)},
				{Start: b.Start.Add(time.Hour), End: b.Start.Add(time.Hour)},
			}
			for _, rg := range fixed {
				checkMinMax(t, r, key, b, v.times, rg, untrustedStats[v.name])
			}
			vr := newRand(uint64(2000 + i))
			for range 150 {
				checkMinMax(t, r, key, b, v.times, randomRange(vr, b, v.times), untrustedStats[v.name])
			}
		})
	}
}

// TestMinMaxArchives answers MIN/MAX over archives written by our Writer — Parquet with small
// row groups and pages, and JSON — through the default reader and a VerifyFully reader, and
// over empty archives, comparing with brute force.
func TestMinMaxArchives(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := testBucket("general", routing.CalendarDayUTC, time.Date(2024, 5, 9, 0, 0, 0, 0, time.UTC))
	recs := genRecords(newRand(12), b, 2000)
	times := eventTimes(recs)
	for _, f := range formats {
		bkt := openTestBucket(t)
		w, _ := NewWriter(bkt, WriterOptions{Prefix: testPrefix, Format: f, RowGroupRows: 128, PageBufferBytes: 256})
		key, err := w.Put(ctx, b, 1, recs)
		if err != nil {
			t.Fatal(err)
		}
		emptyKey, err := w.Put(ctx, b, 2, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, opts := range []ReaderOptions{{TailBytes: 1024}, {VerifyFully: true}} {
			t.Run(fmt.Sprintf("%s/verify=%v", f, opts.VerifyFully), func(t *testing.T) {
				r, _ := NewReader(bkt, opts)
				vr := newRand(55)
				checkMinMax(t, r, key, b, times, b.Range(), false)
				for range 200 {
					checkMinMax(t, r, key, b, times, randomRange(vr, b, times), false)
				}
				checkMinMax(t, r, emptyKey, b, nil, b.Range(), false)
				checkMinMax(t, r, emptyKey, b, nil, routing.TimeRange{Start: b.Start.Add(time.Hour), End: b.End}, false)
				other := testBucket("other", routing.CalendarDayUTC, b.Start)
				if _, err := r.Aggregate(ctx, key, other, routing.AggregateRequest{Range: other.Range(), Measures: []routing.Measure{routing.MinTime, routing.MaxTime}}); err == nil {
					t.Fatal("MinMax of another bucket's manifest succeeded")
				} else {
					requireOnly(t, "bucket mismatch", err, ErrBucketMismatch, other)
				}
			})
		}
	}
}

// TestMinMaxPushdownIO checks that statistics answer instead of data: once manifest and
// footer are cached, MIN/MAX of the whole bucket and of ranges made of whole row groups fetch
// nothing, and a range with one straddling page at each end fetches just those pages.
func TestMinMaxPushdownIO(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bkt := openTestBucket(t)
	b := testBucket("general", routing.CalendarMonthUTC, time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC))
	recs := make([]routing.Record, 1000)
	for i := range recs {
		recs[i] = routing.Record{
			PartitionKey: []byte("general"),
			EventTime:    b.Start.Add(time.Duration(i) * time.Minute),
			SortKey:      fmt.Appendf(nil, "k%04d", i),
			Value:        make([]byte, 100),
		}
	}
	w, _ := NewWriter(bkt, WriterOptions{Prefix: testPrefix, RowGroupRows: 100, PageBufferBytes: 256})
	key, err := w.Put(ctx, b, 1, recs)
	if err != nil {
		t.Fatal(err)
	}
	r, _ := NewReader(bkt, ReaderOptions{TailBytes: 1024})
	at := func(i int) time.Time { return recs[i].EventTime }
	minMax := func(rng routing.TimeRange, wn uint64, wlo, whi int) *routing.ReadStats {
		t.Helper()
		st := &routing.ReadStats{}
		n, lo, hi, declined, err := minMaxOf(routing.WithReadStats(ctx, st), r, key, b, rng)
		if err != nil || declined {
			t.Fatal(err, declined)
		}
		if n != wn || !lo.Equal(at(wlo)) || !hi.Equal(at(whi)) {
			t.Fatalf("MinMax([%v, %v)) = %d %v %v, want %d %v %v", rng.Start, rng.End, n, lo, hi, wn, at(wlo), at(whi))
		}
		return st
	}
	cold := minMax(routing.TimeRange{Start: at(150), End: at(300)}, 150, 150, 299)
	if cold.ObjectReads.Load() > 6 { // manifest, payload check, tail, rest of the footer, page index, one page
		t.Fatalf("cold MinMax: %d object reads", cold.ObjectReads.Load())
	}
	if st := minMax(b.Range(), 1000, 0, 999); st.ObjectReads.Load() != 0 {
		t.Fatalf("whole-bucket MinMax: %d object reads, want statistics only", st.ObjectReads.Load())
	}
	if st := minMax(routing.TimeRange{Start: at(100), End: at(300)}, 200, 100, 299); st.ObjectReads.Load() != 0 {
		t.Fatalf("MinMax of two whole row groups: %d object reads, want statistics only", st.ObjectReads.Load())
	}
	st := minMax(routing.TimeRange{Start: at(150), End: at(250)}, 100, 150, 249)
	if st.ObjectReads.Load() > 2 || st.BytesRead.Load() > 2*(8<<10+1024) {
		t.Fatalf("MinMax with straddling pages: %d reads of %d bytes, want two pages", st.ObjectReads.Load(), st.BytesRead.Load())
	}
	if st.ArchiveRows.Load() != 0 {
		t.Fatalf("MinMax decoded %d records", st.ArchiveRows.Load())
	}
}

// TestMinMaxOutsideBucket: a foreign payload whose values lie outside its bucket has
// untrusted statistics, so the values are decoded and the archive is refused.
func TestMinMaxOutsideBucket(t *testing.T) {
	t.Parallel()
	b := testBucket("general", routing.CalendarDayUTC, time.Date(2024, 5, 9, 0, 0, 0, 0, time.UTC))
	rows := []usRow{{EventTime: b.Start.UnixMicro()}, {EventTime: b.End.UnixMicro()}}
	bkt := openTestBucket(t)
	key := publishRaw(t, bkt, b, FormatParquet, writeRows(t, rows), len(rows), nil)
	r, _ := NewReader(bkt, ReaderOptions{})
	_, err := r.Aggregate(context.Background(), key, b, routing.AggregateRequest{Range: routing.TimeRange{Start: b.Start, End: b.Start.Add(time.Hour)}, Measures: []routing.Measure{routing.MinTime, routing.MaxTime}})
	requireOnly(t, "value outside the bucket", err, ErrRecordOutsideBucket, b)
}

func TestUnitTime(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		v, unit int64
		want    time.Time
	}{
		{0, 1, time.Unix(0, 0)},
		{-1, 1, time.Unix(0, -1)},
		{-1, 1_000, time.Unix(0, -1_000)},
		{-1_500, 1_000_000, time.Unix(-2, 500_000_000)},
		{time.Date(3000, 1, 1, 0, 0, 0, 1_000_000, time.UTC).UnixMilli(), 1_000_000, time.Date(3000, 1, 1, 0, 0, 0, 1_000_000, time.UTC)},
		{time.Date(1600, 1, 1, 0, 0, 0, 5_000, time.UTC).UnixMicro(), 1_000, time.Date(1600, 1, 1, 0, 0, 0, 5_000, time.UTC)},
	} {
		if got := unitTime(c.v, c.unit); !got.Equal(c.want) || got.Location() != time.UTC {
			t.Errorf("unitTime(%d, %d) = %v, want %v", c.v, c.unit, got, c.want)
		}
	}
}
