package archive

import (
	"testing"
	"time"

	"github.com/flightsrv/flightsrv/routing"
)

// BenchmarkOpenFooter opens the footer of one Parquet payload held in memory, as a cold read
// does after fetching the payload's tail: 200 records of a month bucket with the writer's
// defaults (one row group, five columns), close to bench's BenchmarkAnalytical payloads
// (29 KB on average). Metrics: time and allocations per footer.
//
// Issue 19, interleaved runs of both builds (-cpu 1, 20,000 footers a run, 5 runs each,
// load average 2 on 2 cores): before (the footer decoded a second time by parquet-go's
// reflective thrift decoder for event_time's raw statistics, offset indexes through
// thrift.Unmarshal) median 15.7 µs, 10,257 B and 114 allocations per footer; after
// (leafStatistics, one scratch buffer and reader for the offset indexes) 14.0 µs, 8,601 B
// and 93 allocations.
func BenchmarkOpenFooter(b *testing.B) {
	bk := testBucket("ORD", routing.CalendarMonthUTC, time.Date(2001, 3, 1, 0, 0, 0, 0, time.UTC))
	recs := genRecords(newRand(1), bk, 200)
	data, err := encodeParquetPayload(recs, DefaultRowGroupRows, DefaultPageBufferBytes)
	if err != nil {
		b.Fatal(err)
	}
	rr := &rangeReader{size: int64(len(data))}
	rr.addRegion(0, data)
	b.ReportAllocs()
	for b.Loop() {
		ft, err := openFooter(rr, 8<<10)
		if err != nil || ft.numRows != int64(len(recs)) {
			b.Fatalf("%v, %d rows", err, ft.numRows)
		}
	}
	b.ReportMetric(float64(len(data)), "payload-bytes")
}
