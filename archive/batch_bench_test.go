package archive

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/parquet-go/parquet-go/format"

	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/scan/ledger"
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

// reportRate reports rows/s over the benchmark's wall time and, where the process CPU time is
// known, cpu-ms/op and rows/cpu-s: the CPU the process spent (every goroutine, the garbage
// collector included) since cpu0. On a shared machine the wall-clock rate swings with the
// other load; the CPU figures much less.
func reportRate(b *testing.B, rows int, cpu0 time.Duration, cpuOK bool) {
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	if cpu1, ok := processCPU(); ok && cpuOK && cpu1 > cpu0 {
		cpu := cpu1 - cpu0
		b.ReportMetric(float64(cpu.Microseconds())/1e3/float64(b.N), "cpu-ms/op")
		b.ReportMetric(float64(rows)*float64(b.N)/cpu.Seconds(), "rows/cpu-s")
	}
}

// BenchmarkArchiveScan reads one archived month bucket (100,000 rows) with the columns
// timestamp, id and value: ReadBatches into Arrow batches (allocated by memory.GoAllocator, and
// by the engine's recycling ledger.Pool), next to Read as the scan path used
// it (the whole bucket in one call, which also verifies the digest, and pages of 16,384 rows
// with a cursor), over the whole bucket and over its middle half. Metrics rows/s, and the
// process CPU time per op and rows per CPU second (see reportRate).
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
		for _, a := range []struct {
			name string
			mem  memory.Allocator
		}{{"go", memory.NewGoAllocator()}, {"pool", &ledger.Pool{}}} {
			b.Run(rg.name+"/ReadBatches/alloc="+a.name, func(b *testing.B) {
				b.ReportAllocs()
				mem := a.mem
				cpu0, cpuOK := processCPU()
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
				reportRate(b, rg.rows, cpu0, cpuOK)
			})
		}
		b.Run(rg.name+"/Read", func(b *testing.B) {
			b.ReportAllocs()
			cpu0, cpuOK := processCPU()
			for b.Loop() {
				got, err := readRecords(r, ctx, key, bk, routing.ReadRequest{Range: rg.rng, Limit: n})
				if err != nil || len(got) != rg.rows {
					b.Fatalf("%d rows, %v", len(got), err)
				}
			}
			reportRate(b, rg.rows, cpu0, cpuOK)
		})
		b.Run(rg.name+"/Read-pages", func(b *testing.B) {
			b.ReportAllocs()
			cpu0, cpuOK := processCPU()
			for b.Loop() {
				var after *routing.Cursor
				got := 0
				for {
					page, err := readRecords(r, ctx, key, bk, routing.ReadRequest{Range: rg.rng, After: after, Limit: 16384})
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
			reportRate(b, rg.rows, cpu0, cpuOK)
		})
	}
}

// BenchmarkArchiveScanZstdFloor decompresses, with the decoder ReadBatches uses, every data
// page of the timestamp, id and value columns of BenchmarkArchiveScan's bucket, each once,
// into a reused buffer: the cost no decoding of the whole bucket can go below. Metrics rows/s
// (of the bucket's 100,000 rows) and MB/s of decompressed output.
func BenchmarkArchiveScanZstdFloor(b *testing.B) {
	const n = 100_000
	r, key, bk, _ := benchArchive(b, n)
	ft, rr := testFooter(b, r, key, bk)
	if err := rr.prefetch([]byteRange{{0, ft.size}}); err != nil {
		b.Fatal(err)
	}
	type page struct {
		body  []byte
		codec format.CompressionCodec
		size  int
	}
	var pages []page
	total := 0
	sc := getScratch()
	defer putScratch(sc)
	leaves := []int{ft.ts.leaf, ft.file.Root().Column("sort_key").Index(), ft.file.Root().Column("value").Index()}
	for g := range ft.groups {
		for _, leaf := range leaves {
			oi := ft.groups[g].offsets[leaf]
			for p, loc := range oi.PageLocations {
				raw, err := rr.bytesAt(loc.Offset, int64(loc.CompressedPageSize))
				if err != nil {
					b.Fatal(err)
				}
				s, e := pageRows(oi, p, ft.groups[g].numRows)
				rp := rawPage{first: s, rows: e - s}
				if !sc.parseHeader(raw, &rp, 0) || rp.hdr.Type != format.DataPageV2 {
					b.Fatal("unexpected page")
				}
				h := rp.hdr.DataPageHeaderV2.V
				lv := int(h.RepetitionLevelsByteLength + h.DefinitionLevelsByteLength)
				codec := ft.file.Metadata().RowGroups[g].Columns[leaf].MetaData.Codec
				pages = append(pages, page{rp.body[lv:], codec, int(rp.hdr.UncompressedPageSize) - lv})
				total += int(rp.hdr.UncompressedPageSize) - lv
			}
		}
	}
	buf := make([]byte, 1<<20)
	b.SetBytes(int64(total))
	b.ReportAllocs()
	for b.Loop() {
		for _, p := range pages {
			if _, err := decompress(p.codec, p.body, p.size, buf[:p.size+zstdSlack]); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}
