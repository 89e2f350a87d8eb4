package archive

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/flightsrv/flightsrv/routing"
)

var histogramBinnings = []routing.Binning{
	routing.TruncBinning(routing.TruncSecond), routing.TruncBinning(routing.TruncMinute),
	routing.TruncBinning(routing.TruncHour), routing.TruncBinning(routing.TruncDay),
	routing.TruncBinning(routing.TruncWeek), routing.TruncBinning(routing.TruncMonth),
	routing.TruncBinning(routing.TruncQuarter), routing.TruncBinning(routing.TruncYear),
	routing.StrideBinning(15*time.Minute, time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)),
	routing.StrideBinning(7*time.Minute+3*time.Microsecond, time.Date(2023, 7, 4, 0, 0, 0, 1000, time.UTC)),
	routing.StrideBinning(36*time.Hour, time.Date(2024, 2, 29, 5, 0, 0, 0, time.UTC)),
}

// bruteBins is the reference histogram of the non-null times inside r.
func bruteBins(bin routing.Binning, times []time.Time, r routing.TimeRange) []binCount {
	var in []time.Time
	for _, t := range times {
		if r.Contains(t) {
			in = append(in, t)
		}
	}
	return binTimes(bin, in)
}

func equalBins(a, b []binCount) bool {
	return slices.EqualFunc(a, b, func(x, y binCount) bool { return x.Start.Equal(y.Start) && x.Count == y.Count })
}

type binVariant struct {
	name  string
	data  []byte
	times []time.Time // the non-null event times
	rows  int         // rows, nulls included
}

// untrustedStats are the variants whose event_time statistics cannot be used at all (no
// column orders, INT96): the port declines them and the executor reads their rows. (A
// TIMESTAMP_MILLIS converted type alone reads as a TIMESTAMP logical type through
// parquet-go, so its statistics are used.)
var untrustedStats = map[string]bool{"ms-no-column-orders": true, "int96": true}

// binVariants builds Parquet payloads with the statistics pitfalls of foreign_test.go: other
// units and UTC flags, unsorted rows, several and empty row groups, reversed, truncated,
// deprecated-only or absent statistics, no column orders, converted types, nulls, INT96,
// and our envelope with damaged statistics.
func binVariants(t *testing.T, b routing.BucketID) []binVariant {
	rng := newRand(77)
	const n = 1200
	small := []parquet.WriterOption{parquet.MaxRowsPerRowGroup(150), parquet.PageBufferSize(512)}
	var out []binVariant
	add := func(name string, data []byte, times []time.Time, rows int) {
		out = append(out, binVariant{name, data, times, rows})
	}
	{
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
	}
	{
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
	}
	{
		ts := foreignTimes(rng, b, n, time.Nanosecond, true)
		rows := make([]localNsRow, n)
		for i, tt := range ts {
			rows[i] = localNsRow{ID: int64(i), EventTime: tt.UnixNano()}
		}
		add("ns-local-time", writeRows(t, rows, small...), ts, n)
	}
	{
		all := foreignTimes(rng, b, n, time.Microsecond, true)
		rows := make([]optionalUsRow, n)
		var ts []time.Time
		for i, tt := range all {
			rows[i].V = "x"
			if i%9 == 4 {
				continue
			}
			v := tt.UnixMicro()
			rows[i].EventTime = &v
			ts = append(ts, tt)
		}
		add("us-optional-with-nulls", writeRows(t, rows, small...), ts, n)
	}
	{
		ts := foreignTimes(rng, b, n, time.Nanosecond, false)
		rows := make([]int96Row, n)
		for i, tt := range ts {
			rows[i] = int96Row{EventTime: toInt96(tt), V: int32(i)}
		}
		add("int96", writeRows(t, rows, small...), ts, n)
	}
	{
		recs := genRecords(rng, b, n)
		data, err := encodeParquetPayload(recs, 150, 256)
		if err != nil {
			t.Fatal(err)
		}
		ts := eventTimes(recs)
		add("envelope", data, ts, n)
		add("envelope-reversed-stats", rewriteFooter(t, data, reverseStats), ts, n)
		add("envelope-empty-row-groups", rewriteFooter(t, data, insertEmptyRowGroups), ts, n)
	}
	return out
}

// TestAggregateByBinForeignParquet bins payloads with statistics pitfalls and compares every
// answer with brute force.
func TestAggregateByBinForeignParquet(t *testing.T) {
	t.Parallel()
	b := testBucket("general", routing.CalendarMonthUTC, time.Date(2023, 7, 4, 0, 0, 0, 0, time.UTC))
	for i, v := range binVariants(t, b) {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			bkt := openTestBucket(t)
			key := publishRaw(t, bkt, b, FormatParquet, v.data, v.rows, nil)
			r, err := NewReader(bkt, ReaderOptions{TailBytes: 2048})
			if err != nil {
				t.Fatal(err)
			}
			vr := newRand(uint64(2000 + i))
			ranges := []routing.TimeRange{b.Range(), {Start: b.Start.Add(-time.Hour), End: b.End.Add(time.Hour)}}
			for range 25 {
				ranges = append(ranges, randomRange(vr, b, v.times))
			}
			for _, rg := range ranges {
				for _, bin := range histogramBinnings {
					clipped := rg.Intersect(b.Range())
					want := bruteBins(bin, v.times, clipped)
					got, declined, err := binsOf(ctx, r, key, b, rg, bin)
					if err != nil {
						t.Fatalf("%v [%v, %v): %v", bin, rg.Start, rg.End, err)
					}
					if !equalBins(got, want) {
						t.Fatalf("%v [%v, %v):\n got %v\nwant %v", bin, rg.Start, rg.End, got, want)
					}
					if declined != (untrustedStats[v.name] && !clipped.Empty()) {
						t.Fatalf("%v [%v, %v): declined %v", bin, rg.Start, rg.End, declined)
					}
				}
			}
		})
	}
}

// TestAggregateByBinFormats: envelope Parquet and JSON archives written by the Writer, with and
// without VerifyFully, against brute force.
func TestAggregateByBinFormats(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := testBucket("general", routing.CalendarYearUTC, time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC))
	recs := genRecords(newRand(8), b, 1500)
	times := eventTimes(recs)
	for _, f := range formats {
		for _, verify := range []bool{false, true} {
			bkt := openTestBucket(t)
			w, _ := NewWriter(bkt, WriterOptions{Prefix: testPrefix, Format: f, RowGroupRows: 100, PageBufferBytes: 256})
			key, err := w.Put(ctx, b, 1, recs)
			if err != nil {
				t.Fatal(err)
			}
			r, _ := NewReader(bkt, ReaderOptions{VerifyFully: verify, TailBytes: 1024})
			rng := newRand(9)
			for k := range 15 {
				rg := randomRange(rng, b, times)
				if k == 0 {
					rg = b.Range()
				}
				for _, bin := range histogramBinnings {
					clipped := rg.Intersect(b.Range())
					want := bruteBins(bin, times, clipped)
					got, declined, err := binsOf(ctx, r, key, b, rg, bin)
					if err != nil || declined {
						t.Fatalf("%s verify=%v %v: %v (declined %v)", f, verify, bin, err, declined)
					}
					if !equalBins(got, want) {
						t.Fatalf("%s verify=%v %v [%v, %v):\n got %v\nwant %v", f, verify, bin, rg.Start, rg.End, got, want)
					}
				}
			}
		}
	}
	bkt := openTestBucket(t)
	r, _ := NewReader(bkt, ReaderOptions{})
	if _, err := r.Aggregate(ctx, "k", b, routing.AggregateRequest{Range: b.Range(), Bin: &routing.Binning{}, Measures: []routing.Measure{routing.CountStar}}); !errors.Is(err, routing.ErrInvalidBinning) {
		t.Fatalf("zero binning: %v", err)
	}
}

// TestAggregateByBinPushdownIO: row groups and pages whose statistics put them inside the range
// and inside one bin answer without data reads; a group spanning bins has only its event_time
// pages fetched; a bucket inside one bin is answered by the manifest.
func TestAggregateByBinPushdownIO(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bkt := openTestBucket(t)
	b := testBucket("general", routing.CalendarDayUTC, time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC))
	recs := make([]routing.Record, 1440) // one a minute
	for i := range recs {
		recs[i] = routing.Record{PartitionKey: []byte("general"), EventTime: b.Start.Add(time.Duration(i) * time.Minute),
			SortKey: fmt.Appendf(nil, "k%04d", i), Value: make([]byte, 200)}
	}
	// Row groups of 60 rows are exactly the hours; pages of about 30 rows half-hours.
	w, _ := NewWriter(bkt, WriterOptions{Prefix: testPrefix, RowGroupRows: 60, PageBufferBytes: 256})
	key, err := w.Put(ctx, b, 1, recs)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := ParseManifest(mustRead(t, bkt, key))
	r, _ := NewReader(bkt, ReaderOptions{TailBytes: 1024})
	at := func(i int) time.Time { return recs[i].EventTime }
	bins := func(rng routing.TimeRange, bin routing.Binning) ([]binCount, *routing.ReadStats) {
		t.Helper()
		st := &routing.ReadStats{}
		got, declined, err := binsOf(routing.WithReadStats(ctx, st), r, key, b, rng, bin)
		if err != nil || declined {
			t.Fatal(err, declined)
		}
		if want := bruteBins(bin, eventTimes(recs), rng.Intersect(b.Range())); !equalBins(got, want) {
			t.Fatalf("%v: got %v, want %v", bin, got, want)
		}
		return got, st
	}
	hour := routing.TruncBinning(routing.TruncHour)
	if _, st := bins(b.Range(), hour); st.ObjectReads.Load() > 5 { // manifest, payload check, tail, footer rest, page index
		t.Fatalf("cold hourly histogram: %d object reads", st.ObjectReads.Load())
	}
	if got, st := bins(b.Range(), hour); st.ObjectReads.Load() != 0 || len(got) != 24 {
		t.Fatalf("hourly histogram of hour-aligned row groups: %d bins, %d object reads, want 24 bins from statistics", len(got), st.ObjectReads.Load())
	}
	if _, st := bins(b.Range(), routing.TruncBinning(routing.TruncDay)); st.ObjectReads.Load() != 0 {
		t.Fatalf("daily histogram of a day bucket: %d object reads, want the statistics' counts", st.ObjectReads.Load())
	}
	half := routing.StrideBinning(30*time.Minute, time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC))
	if _, st := bins(routing.TimeRange{Start: at(60), End: at(240)}, half); uint64(st.BytesRead.Load()) > m.PayloadBytes/4 {
		t.Fatalf("half-hour histogram: %d reads of %d bytes (payload %d): pages were not used", st.ObjectReads.Load(), st.BytesRead.Load(), m.PayloadBytes)
	}
	// A 90-minute bin splits every other hour group: only those groups' event_time pages are
	// fetched, never values.
	ninety := routing.StrideBinning(90*time.Minute, b.Start)
	if _, st := bins(routing.TimeRange{Start: at(0), End: at(360)}, ninety); st.ObjectReads.Load() == 0 || uint64(st.BytesRead.Load()) > m.PayloadBytes/8 {
		t.Fatalf("90-minute histogram: %d reads of %d bytes (payload %d)", st.ObjectReads.Load(), st.BytesRead.Load(), m.PayloadBytes)
	}
}

// TestAggregateByBinOutsideBucket: decoded values outside the bucket are a validation error.
func TestAggregateByBinOutsideBucket(t *testing.T) {
	t.Parallel()
	b := testBucket("general", routing.CalendarDayUTC, time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC))
	rows := []usRow{{EventTime: b.Start.UnixMicro()}, {EventTime: b.End.Add(time.Hour).UnixMicro()}}
	bkt := openTestBucket(t)
	key := publishRaw(t, bkt, b, FormatParquet, writeRows(t, rows), len(rows), nil)
	r, _ := NewReader(bkt, ReaderOptions{})
	hour := routing.TruncBinning(routing.TruncHour)
	_, err := r.Aggregate(context.Background(), key, b, routing.AggregateRequest{Range: routing.TimeRange{Start: b.Start, End: b.Start.Add(2 * time.Hour)}, Bin: &hour, Measures: []routing.Measure{routing.CountStar}})
	if !errors.Is(err, ErrRecordOutsideBucket) {
		t.Fatalf("error = %v, want ErrRecordOutsideBucket", err)
	}
}
