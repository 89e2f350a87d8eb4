package archive

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flightsrv/flightsrv/routing"
)

// benchArchive archives one month bucket of n flight-like records (ids of 12 bytes, JSON
// values of about 150 bytes) with the writer's defaults and returns a reader over it.
func benchArchive(b *testing.B, n int) (*Reader, string, routing.BucketID, []routing.Record) {
	b.Helper()
	ctx := context.Background()
	bkt := openTestBucket(b)
	bk := testBucket("ORD", routing.CalendarMonthUTC, time.Date(2001, 3, 1, 0, 0, 0, 0, time.UTC))
	rng := newRand(1)
	recs := make([]routing.Record, n)
	step := bk.End.Sub(bk.Start) / time.Duration(n)
	for i := range recs {
		recs[i] = routing.Record{
			PartitionKey: []byte("ORD"),
			EventTime:    bk.Start.Add(time.Duration(i) * step).Truncate(time.Microsecond),
			SortKey:      fmt.Appendf(nil, "%012d", i),
			Value: fmt.Appendf(nil, `{"carrier":"UA","flight":%d,"dest":"%s","dep_delay":%d,"arr_delay":%d,"distance":%d,"tail":"N%05d","cancelled":false}`,
				rng.IntN(9000), []string{"SFO", "LAX", "JFK", "DEN", "ATL"}[rng.IntN(5)], rng.IntN(120)-10, rng.IntN(140)-20, 200+rng.IntN(2500), rng.IntN(99999)),
		}
	}
	w, err := NewWriter(bkt, WriterOptions{Prefix: testPrefix})
	if err != nil {
		b.Fatal(err)
	}
	key, err := w.Put(ctx, bk, 1, recs)
	if err != nil {
		b.Fatal(err)
	}
	r, err := NewReader(bkt, ReaderOptions{})
	if err != nil {
		b.Fatal(err)
	}
	return r, key, bk, recs
}

// BenchmarkArchiveScan reads one archived month bucket (100,000 rows) with the columns
// timestamp, id and value: ReadBatches into Arrow batches, next to Read as the scan path used
// it (the whole bucket in one call, which also verifies the digest, and pages of 16,384 rows
// with a cursor), over the whole bucket and over its middle half. Metric rows/s.
func BenchmarkArchiveScan(b *testing.B) {
	const n = 100_000
	r, key, bk, recs := benchArchive(b, n)
	ctx := context.Background()
	cols := []routing.Column{routing.ColumnTimestamp, routing.ColumnID, routing.ColumnValue}
	mid := routing.TimeRange{Start: recs[n/4].EventTime, End: recs[3*n/4].EventTime}
	for _, rg := range []struct {
		name string
		rng  routing.TimeRange
		rows int
	}{{"whole", bk.Range(), n}, {"middle-half", mid, n / 2}} {
		b.Run(rg.name+"/ReadBatches", func(b *testing.B) {
			b.ReportAllocs()
			mem := memory.NewGoAllocator()
			for b.Loop() {
				br, err := r.ReadBatches(ctx, key, bk, routing.BatchRequest{Range: rg.rng, Columns: cols, Limit: -1, Alloc: mem})
				if err != nil {
					b.Fatal(err)
				}
				got := 0
				for br.Next() {
					got += int(br.RecordBatch().NumRows())
				}
				if err := br.Err(); err != nil || got != rg.rows {
					b.Fatalf("%d rows, %v", got, err)
				}
				br.Release()
			}
			b.ReportMetric(float64(rg.rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
		b.Run(rg.name+"/Read", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				got, err := r.Read(ctx, key, bk, routing.ReadRequest{Range: rg.rng, Limit: n})
				if err != nil || len(got) != rg.rows {
					b.Fatalf("%d rows, %v", len(got), err)
				}
			}
			b.ReportMetric(float64(rg.rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
		b.Run(rg.name+"/Read-pages", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var after *routing.Cursor
				got := 0
				for {
					page, err := r.Read(ctx, key, bk, routing.ReadRequest{Range: rg.rng, After: after, Limit: 16384})
					if err != nil {
						b.Fatal(err)
					}
					got += len(page)
					if len(page) < 16384 {
						break
					}
					last := page[len(page)-1]
					after = &routing.Cursor{EventTime: last.EventTime, SortKey: last.SortKey}
				}
				if got != rg.rows {
					b.Fatalf("%d rows", got)
				}
			}
			b.ReportMetric(float64(rg.rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
