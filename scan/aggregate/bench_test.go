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

// BenchmarkGroupedOriginDestination aggregates as a cold origin, destination, count(*) GROUP
// BY 1, 2 over archived buckets runs (bench's BenchmarkAnalytical, issue 19): 128 fragments of
// one 2,300-row batch each (a bucket's rows), each a Partial aggregate of its own, grouped by
// two text keys, the partition's origin (one value in a fragment) and a destination drawn from
// 300 three-letter codes with a skew (the busiest first). Metrics per op (the 128 fragments).
//
// Issue 19 (-cpu 1 -benchtime 120x, the test binary's user CPU by /usr/bin/time less its
// setup, as the load average of 15–20 on 2 cores made wall times noise): a Go map of each
// row's encoded pair 18.2 ms an op; each column's values numbered apart and the pair of
// numbers in an open-addressing table 17.0 ms; with the three-letter codes packed into
// integers instead of a map of strings 13.4 ms (BenchmarkGroupedFragments, int64 and
// 11-byte text keys of 1,000 groups, the same before and after).
func BenchmarkGroupedOriginDestination(b *testing.B) {
	const fragments, rows, dests = 128, 2300, 300
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "origin", Type: arrow.BinaryTypes.String},
		{Name: "destination", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	rng := rand.New(rand.NewPCG(3, 4))
	code := func(i int) string { return string([]byte{'A' + byte(i/676), 'A' + byte(i/26%26), 'A' + byte(i%26)}) }
	recs := make([]arrow.RecordBatch, fragments)
	for f := range recs {
		rb := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		for range rows {
			rb.Field(0).(*array.StringBuilder).Append(code(f))
			d := int(float64(dests) * rng.Float64() * rng.Float64()) // skewed towards 0
			rb.Field(1).(*array.StringBuilder).Append(code(d))
		}
		recs[f] = rb.NewRecordBatch()
		rb.Release()
	}
	defer release(recs)
	spec := aggregate.Spec{Groups: []int{0, 1}, Measures: []aggregate.Measure{{Func: aggregate.CountStar, Filter: -1, Name: "n"}}}
	mem := ledger.New(memory.NewGoAllocator(), 0)
	b.ReportAllocs()
	for b.Loop() {
		for _, rec := range recs {
			rr, err := array.NewRecordReader(schema, []arrow.RecordBatch{rec})
			if err != nil {
				b.Fatal(err)
			}
			out, _, err := drain(context.Background(), rr, schema, spec, aggregate.Partial, mem)
			if err != nil {
				b.Fatal(err)
			}
			release(out)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*fragments*rows), "ns/row")
}
