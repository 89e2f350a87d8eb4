package sqlite_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flightsrv/flightsrv/routing"
)

// BenchmarkBucketRead reads one month bucket of 150,000 records (timestamp, id and a 60-byte
// value) with ScanRange (one statement streamed into Arrow builders), reporting rows/s.
func BenchmarkBucketRead(b *testing.B) {
	const rows = 150_000
	ctx := context.Background()
	s := migrated(b)
	start := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	bucket := routing.BucketFor("t.bench", []byte("ORD"), routing.CalendarMonthUTC, start)
	value := []byte(`{"carrier":"UA","flight":1234,"dest":"SFO","delay":-3,"x":"0"}`)[:60]
	for i := 0; i < rows; i += 10_000 {
		recs := make([]routing.Record, 10_000)
		for j := range recs {
			n := i + j
			recs[j] = routing.Record{PartitionKey: bucket.PartitionKey, EventTime: start.Add(time.Duration(n) * 10 * time.Second),
				SortKey: fmt.Appendf(nil, "id-%08d", n), Value: value}
		}
		if err := s.Append(ctx, bucket, recs); err != nil {
			b.Fatal(err)
		}
	}
	report := func(b *testing.B, n int64, t0 time.Time) {
		if n != int64(b.N)*rows {
			b.Fatalf("read %d rows in %d loops", n, b.N)
		}
		b.ReportMetric(float64(n)/time.Since(t0).Seconds(), "rows/s")
	}
	b.Run("ScanRange", func(b *testing.B) {
		b.ReportAllocs()
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		defer mem.AssertSize(b, 0)
		var n int64
		t0 := time.Now()
		for b.Loop() {
			_, r, err := s.ScanRange(ctx, bucket, routing.BatchRequest{Range: bucket.Range(),
				Columns: []routing.Column{routing.ColumnTimestamp, routing.ColumnID, routing.ColumnValue}, Limit: -1, Alloc: mem})
			if err != nil {
				b.Fatal(err)
			}
			for r.Next() {
				n += r.RecordBatch().NumRows()
			}
			if err := r.Err(); err != nil {
				b.Fatal(err)
			}
			r.Release()
		}
		report(b, n, t0)
	})
}
