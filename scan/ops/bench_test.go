package ops_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/types"

	"github.com/flightsrv/flightsrv/scan/ledger"
	"github.com/flightsrv/flightsrv/scan/ops"
)

// The scan's row shape: (partition, timestamp, id, value) in the stores; the benchmarks use
// (timestamp, id, ~60-byte value).
var benchSchema = arrow.NewSchema([]arrow.Field{
	{Name: "timestamp", Type: tsType},
	{Name: "id", Type: arrow.BinaryTypes.String},
	{Name: "value", Type: arrow.BinaryTypes.Binary},
}, nil)

// benchBatches builds n rows in batches of 8,192 whose timestamps are ts(i) for row i.
func benchBatches(mem memory.Allocator, first, n int, ts func(i int) int64) []arrow.RecordBatch {
	var out []arrow.RecordBatch
	value := make([]byte, 60)
	for start := first; start < first+n; start += ops.MaxBatchRows {
		end := min(first+n, start+ops.MaxBatchRows)
		b := array.NewRecordBuilder(mem, benchSchema)
		tb := b.Field(0).(*array.TimestampBuilder)
		ib := b.Field(1).(*array.StringBuilder)
		vb := b.Field(2).(*array.BinaryBuilder)
		for i := start; i < end; i++ {
			tb.Append(arrow.Timestamp(ts(i)))
			ib.Append(fmt.Sprintf("%012d", i))
			value[i%60] = byte(i)
			vb.Append(value)
		}
		out = append(out, b.NewRecordBatch())
		b.Release()
	}
	return out
}

func readerOf(bs []arrow.RecordBatch) array.RecordReader {
	r, err := array.NewRecordReader(benchSchema, bs)
	if err != nil {
		panic(err)
	}
	return r
}

// report reports rows/s of wall time and, where measured, rows per CPU second of the process
// since cpu0 (all goroutines, the garbage collector's included).
func report(b *testing.B, rows int64, cpu0 time.Duration) {
	b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
	if cpu := cpuTime() - cpu0; cpu > 0 {
		b.ReportMetric(float64(rows)/cpu.Seconds(), "rows/cpu-s")
	}
}

func count(b *testing.B, r array.RecordReader) int64 {
	defer r.Release()
	var n int64
	for r.Next() {
		n += r.RecordBatch().NumRows()
	}
	if err := r.Err(); err != nil {
		b.Fatal(err)
	}
	return n
}

// BenchmarkMerge merges 6 inputs of 200,000 rows sorted by (timestamp, id): the ordered scan of
// six buckets. Non-overlapping inputs are the buckets of one partition; interleaved ones
// (round-robin timestamps) are the worst case.
func BenchmarkMerge(b *testing.B) {
	const inputs, per = 6, 200_000
	keys := []ops.SortKey{{Column: 0}, {Column: 1}}
	for _, shape := range []string{"non-overlapping", "interleaved"} {
		b.Run(shape, func(b *testing.B) {
			mem := ledger.New(memory.NewGoAllocator(), 0)
			var data [][]arrow.RecordBatch
			for in := range inputs {
				ts := func(i int) int64 { return int64(i) * 1e6 }
				if shape == "interleaved" {
					ts = func(i int) int64 { return int64((i-in*per)*inputs+in) * 1e6 }
				}
				data = append(data, benchBatches(mem, in*per, per, ts))
			}
			defer func() {
				for _, bs := range data {
					releaseBatches(bs)
				}
			}()
			ctx := context.Background()
			b.ReportAllocs()
			var rows int64
			cpu0 := cpuTime()
			for b.Loop() {
				ins := make([]array.RecordReader, inputs)
				for i, bs := range data {
					ins[i] = readerOf(bs)
				}
				rows += count(b, ops.Merge(ctx, ins, keys, mem))
			}
			if rows != int64(b.N)*inputs*per {
				b.Fatalf("merged %d rows", rows)
			}
			report(b, rows, cpu0)
		})
	}
}

// BenchmarkTopK takes the 10 latest rows of 1,000,000 in random order: from one input, and
// from each of 500 inputs of 2,000 rows (a top-k per archived bucket, as a routed query's
// fragments run it: BenchmarkAnalytical's 3M rows are 1,341 buckets of about 2,200 rows).
func BenchmarkTopK(b *testing.B) {
	const n = 1_000_000
	mem := ledger.New(memory.NewGoAllocator(), 0)
	r := rand.New(rand.NewPCG(1, 2))
	perm := r.Perm(n)
	keys := []ops.SortKey{{Column: 0, Desc: true}, {Column: 1, Desc: true}}
	ctx := context.Background()
	for _, inputs := range []int{1, 500} {
		per := n / inputs
		data := make([][]arrow.RecordBatch, inputs)
		for i := range data {
			data[i] = benchBatches(mem, i*per, per, func(j int) int64 { return int64(perm[j]) * 1e6 })
		}
		b.Run(fmt.Sprintf("inputs=%d", inputs), func(b *testing.B) {
			b.ReportAllocs()
			var rows int64
			cpu0 := cpuTime()
			for b.Loop() {
				for _, d := range data {
					if got := count(b, ops.TopK(ctx, readerOf(d), keys, 10, mem)); got != 10 {
						b.Fatalf("got %d rows", got)
					}
				}
				rows += n
			}
			report(b, rows, cpu0)
		})
		for _, d := range data {
			releaseBatches(d)
		}
	}
}

// BenchmarkSort sorts 1,000,000 rows in random order by (timestamp, id) (four rows per
// timestamp) and by id, with this package's comparator sort ("own", what Sort does) and with
// arrow-go's sort_indices ("arrow").
func BenchmarkSort(b *testing.B) {
	const n = 1_000_000
	mem := ledger.New(memory.NewGoAllocator(), 0)
	r := rand.New(rand.NewPCG(1, 2))
	perm := r.Perm(n)
	data := benchBatches(mem, 0, n, func(i int) int64 { return int64(perm[i]/4) * 1e6 })
	defer releaseBatches(data)
	ctx := context.Background()
	for _, ks := range []struct {
		name string
		keys []ops.SortKey
	}{
		{"timestamp,id", []ops.SortKey{{Column: 0}, {Column: 1}}},
		{"id", []ops.SortKey{{Column: 1, Desc: true}}},
	} {
		for _, path := range []string{"arrow", "own"} {
			b.Run(ks.name+"/"+path, func(b *testing.B) {
				if path == "arrow" {
					defer ops.UseArrowSort()()
				}
				b.ReportAllocs()
				var rows int64
				cpu0 := cpuTime()
				for b.Loop() {
					rows += count(b, ops.Sort(ctx, readerOf(data), ks.keys, mem))
				}
				report(b, rows, cpu0)
			})
		}
	}
}

// BenchmarkFilter runs the front end's scan filter (and(and(equal(id, …), gte(ts, …)),
// lt(ts, …)), through arrow-go's exprs) over 1,000,000 rows keeping about half.
func BenchmarkFilter(b *testing.B) {
	const n = 1_000_000
	mem := ledger.New(memory.NewGoAllocator(), 0)
	data := benchBatches(mem, 0, n, func(i int) int64 { return int64(i) * 1e6 })
	defer releaseBatches(data)
	base := types.NamedStruct{Names: []string{"timestamp", "id", "value"}, Struct: types.StructType{Nullability: required, Types: []types.Type{
		&types.PrecisionTimestampTzType{PrecisionTimestampType: types.PrecisionTimestampType{Precision: types.PrecisionNanoSeconds, Nullability: required}},
		&types.StringType{Nullability: required}, &types.BinaryType{Nullability: required},
	}}}
	p := newPlannerOver(b, base, benchSchema)
	pred := p.compile(p.fn(urnBoolean, "and",
		p.fn(urnBoolean, "and",
			p.fn(urnComparison, "gte", p.ref(1), expr.NewPrimitiveLiteral("", false)),
			p.fn(urnComparison, "gte", p.ref(0), tsLit(n/4*1e6))),
		p.fn(urnComparison, "lt", p.ref(0), tsLit(n*3/4*1e6))))[0][0]
	ctx := context.Background()
	b.ReportAllocs()
	var rows int64
	cpu0 := cpuTime()
	for b.Loop() {
		if got := count(b, ops.Filter(ctx, readerOf(data), pred, mem)); got != n/2 {
			b.Fatalf("kept %d rows", got)
		}
		rows += n
	}
	report(b, rows, cpu0)
}
