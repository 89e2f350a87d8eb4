package aggregate_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flightsrv/flightsrv/scan/aggregate"
	"github.com/flightsrv/flightsrv/scan/ledger"
)

var benchSchema = arrow.NewSchema([]arrow.Field{
	{Name: "k", Type: arrow.PrimitiveTypes.Int64},
	{Name: "ks", Type: arrow.BinaryTypes.String},
	{Name: "v", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "x", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
}, nil)

// benchBatches returns rows rows of benchSchema in batches of 8,192: k uniform in
// [0, groups) (ks its text), v and x random with 1% NULLs.
func benchBatches(rows, groups int) []arrow.RecordBatch {
	rng := rand.New(rand.NewPCG(7, 8))
	b := array.NewRecordBuilder(memory.DefaultAllocator, benchSchema)
	defer b.Release()
	var out []arrow.RecordBatch
	for from := 0; from < rows; from += 8192 {
		for range min(8192, rows-from) {
			k := rng.IntN(groups)
			b.Field(0).(*array.Int64Builder).Append(int64(k))
			b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("origin-%04d", k))
			if rng.IntN(100) == 0 {
				b.Field(2).AppendNull()
				b.Field(3).AppendNull()
				continue
			}
			b.Field(2).(*array.Int64Builder).Append(rng.Int64N(1 << 40))
			b.Field(3).(*array.Float64Builder).Append(rng.NormFloat64())
		}
		out = append(out, b.NewRecordBatch())
	}
	return out
}

// BenchmarkAggregate aggregates 1M rows into ~1,000 groups with count(*), sum(v) and min(x),
// grouped by an int64 key, by a text key, and ungrouped; and as Partial over 4 fragments then
// Final.
func BenchmarkAggregate(b *testing.B) {
	const rows, groups = 1 << 20, 1000
	recs := benchBatches(rows, groups)
	defer release(recs)
	measures := []aggregate.Measure{
		{Func: aggregate.CountStar, Filter: -1, Name: "n"},
		{Func: aggregate.Sum, Arg: 2, Filter: -1, Name: "sum_v"},
		{Func: aggregate.Min, Arg: 3, Filter: -1, Name: "min_x"},
	}
	run := func(b *testing.B, spec aggregate.Spec, mode aggregate.Mode, in []arrow.RecordBatch, schema *arrow.Schema, mem *ledger.Ledger) []arrow.RecordBatch {
		rr, err := array.NewRecordReader(schema, in)
		if err != nil {
			b.Fatal(err)
		}
		out, _, err := drain(context.Background(), rr, benchSchema, spec, mode, mem)
		if err != nil {
			b.Fatal(err)
		}
		return out
	}
	for _, bc := range []struct {
		name   string
		groups []int
	}{
		{"key=int64", []int{0}},
		{"key=utf8", []int{1}},
		{"ungrouped", nil},
	} {
		b.Run(bc.name, func(b *testing.B) {
			spec := aggregate.Spec{Groups: bc.groups, Measures: measures}
			mem := ledger.New(memory.NewGoAllocator(), 0)
			b.ReportAllocs()
			for b.Loop() {
				release(run(b, spec, aggregate.Single, recs, benchSchema, mem))
			}
			b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
	b.Run("key=int64/partial4+final", func(b *testing.B) {
		spec := aggregate.Spec{Groups: []int{0}, Measures: measures}
		pschema, _ := aggregate.PartialSchema(benchSchema, spec)
		mem := ledger.New(memory.NewGoAllocator(), 0)
		b.ReportAllocs()
		for b.Loop() {
			var partials []arrow.RecordBatch
			for f := range 4 {
				partials = append(partials, run(b, spec, aggregate.Partial, recs[f*len(recs)/4:(f+1)*len(recs)/4], benchSchema, mem)...)
			}
			release(run(b, spec, aggregate.Final, partials, pschema, mem))
			release(partials)
		}
		b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	})
}

// BenchmarkFloatAvg aggregates 1M rows of doubles with avg(x) (PostgreSQL's float8_accum: N,
// Sx and Sxx per group) and, beside it, sum(x) and var_samp(x), grouped by an int64 key into
// ~1,000 groups and ungrouped, in Single mode.
func BenchmarkFloatAvg(b *testing.B) {
	const rows, groups = 1 << 20, 1000
	recs := benchBatches(rows, groups)
	defer release(recs)
	for _, f := range []aggregate.Func{aggregate.Avg, aggregate.Sum, aggregate.VarSamp} {
		for _, bc := range []struct {
			name   string
			groups []int
		}{{"key=int64", []int{0}}, {"ungrouped", nil}} {
			b.Run(f.String()+"/"+bc.name, func(b *testing.B) {
				spec := aggregate.Spec{Groups: bc.groups, Measures: []aggregate.Measure{{Func: f, Arg: 3, Filter: -1, Name: "m"}}}
				mem := ledger.New(memory.NewGoAllocator(), 0)
				b.ReportAllocs()
				for b.Loop() {
					rr, err := array.NewRecordReader(benchSchema, recs)
					if err != nil {
						b.Fatal(err)
					}
					out, _, err := drain(context.Background(), rr, benchSchema, spec, aggregate.Single, mem)
					if err != nil {
						b.Fatal(err)
					}
					release(out)
				}
				b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
			})
		}
	}
}

// BenchmarkGroupedFragments aggregates 64 fragments of one batch each (8,192 rows, about
// 1,000 groups of a composite key: int64 and text), each fragment a Partial aggregate of its
// own, as a cold grouped query over many archived buckets runs them, with a garbage collection
// after every fourth fragment: under serve's default memory limit such a query collects every
// few megabytes (bench's BenchmarkAnalytical, issue 19). Metrics per op (the 64 fragments):
// time, and the bytes and allocations the groupers' scratch takes when it does not outlive the
// collections (the collections themselves run with the timer stopped).
//
// Issue 19 (-benchtime 20x -count 5, load average above 20 on 2 cores, so times are noise):
// the scratch in a sync.Pool 17.6 MB and 70,956 allocations per op; in a free list
// (internal/freelist) 14.1 MB and 70,787 (the rest is the groups' builders, maps and output).
func BenchmarkGroupedFragments(b *testing.B) {
	const fragments, groups = 64, 1000
	recs := benchBatches(8192, groups)
	defer release(recs)
	spec := aggregate.Spec{Groups: []int{0, 1}, Measures: []aggregate.Measure{{Func: aggregate.CountStar, Filter: -1, Name: "n"}}}
	mem := ledger.New(memory.NewGoAllocator(), 0)
	b.ReportAllocs()
	for b.Loop() {
		for f := range fragments {
			if f%4 == 0 {
				b.StopTimer()
				runtime.GC()
				b.StartTimer()
			}
			rr, err := array.NewRecordReader(benchSchema, recs)
			if err != nil {
				b.Fatal(err)
			}
			out, _, err := drain(context.Background(), rr, benchSchema, spec, aggregate.Partial, mem)
			if err != nil {
				b.Fatal(err)
			}
			release(out)
		}
	}
}
