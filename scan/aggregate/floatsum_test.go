package aggregate_test

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flightsrv/flightsrv/scan/aggregate"
	"github.com/flightsrv/flightsrv/scan/ops"
)

var kxSchema = arrow.NewSchema([]arrow.Field{
	{Name: "k", Type: arrow.PrimitiveTypes.Int64},
	{Name: "x", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
}, nil)

func kxBatch(mem memory.Allocator, k []int64, x []float64) arrow.RecordBatch {
	b := array.NewRecordBuilder(mem, kxSchema)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).AppendValues(k, nil)
	b.Field(1).(*array.Float64Builder).AppendValues(x, nil)
	return b.NewRecordBatch()
}

// TestFloatSumOverflow: sum and avg of double precision overflow as PostgreSQL's float8pl and
// float8_accum do (checked against PostgreSQL 15: SELECT sum(x) FROM (VALUES (1e308::float8),
// (1e308::float8)) v(x) is 22003 "value out of range: overflow"): an infinite sum of finite
// values is that error, ungrouped, grouped and when partial sums are combined; an infinite
// value summed is infinite, and a sum that passes near the limit without passing it answers.
func TestFloatSumOverflow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	big := math.MaxFloat64 / 1.5
	for _, c := range []struct {
		name   string
		k      []int64
		x      []float64
		groups bool
		want   float64 // group 1's sum when not overflow
		over   bool
	}{
		{"ungrouped", []int64{1, 1}, []float64{1e308, 1e308}, false, 0, true},
		{"ungrouped, negative", []int64{1, 1, 1}, []float64{-1e308, 5, -1e308}, false, 0, true},
		{"grouped", []int64{1, 2, 1, 2}, []float64{big, 1, big, 2}, true, 0, true},
		{"infinite value", []int64{1, 1}, []float64{math.Inf(1), 1e308}, false, math.Inf(1), false},
		{"back under", []int64{1, 1, 1}, []float64{1e308, -1e308, 1e308}, false, 1e308, false},
		{"grouped, back under", []int64{1, 2, 1, 2}, []float64{1e308, 1, -1e308, 2}, true, 0, false},
	} {
		for _, f := range []aggregate.Func{aggregate.Sum, aggregate.Avg} {
			if f == aggregate.Avg && !c.over && !math.IsInf(c.want, 0) {
				// PostgreSQL's avg(float8) is float8_accum's, which also raises overflow when
				// its sum of squared differences passes the limit (1e308 and -1e308): not
				// checked here (the cases that answer are sum's).
				continue
			}
			spec := aggregate.Spec{Measures: []aggregate.Measure{{Func: f, Arg: 1, Filter: -1, Name: "s"}}}
			if c.groups {
				spec.Groups = []int{0}
			}
			mem := newLedger(t, 0)
			rec := kxBatch(mem, c.k, c.x)
			out, _, err := drain(ctx, batchesReader(t, kxSchema, []arrow.RecordBatch{rec}), kxSchema, spec, aggregate.Single, mem)
			rec.Release()
			checkOverflow(t, c.name, out, err, c.over, c.want, f == aggregate.Avg)
			release(out)
		}
	}
	// Two fragments' partial sums, each finite, combine past the limit.
	for _, f := range []aggregate.Func{aggregate.Sum, aggregate.Avg} {
		spec := aggregate.Spec{Measures: []aggregate.Measure{{Func: f, Arg: 1, Filter: -1, Name: "s"}}}
		mem := newLedger(t, 0)
		var partials []arrow.RecordBatch
		var pschema *arrow.Schema
		for range 2 {
			rec := kxBatch(mem, []int64{1}, []float64{1e308})
			out, s, err := drain(ctx, batchesReader(t, kxSchema, []arrow.RecordBatch{rec}), kxSchema, spec, aggregate.Partial, mem)
			rec.Release()
			if err != nil {
				t.Fatal(err)
			}
			partials, pschema = append(partials, out...), s
		}
		out, _, err := drain(ctx, batchesReader(t, pschema, partials), kxSchema, spec, aggregate.Final, mem)
		release(partials)
		checkOverflow(t, "partials combined", out, err, true, 0, false)
		release(out)
	}
}

func checkOverflow(t *testing.T, name string, out []arrow.RecordBatch, err error, over bool, want float64, avg bool) {
	t.Helper()
	var de *ops.DataError
	if over {
		if !errors.As(err, &de) || de.SQLState() != "22003" || de.Msg != "value out of range: overflow" {
			t.Errorf("%s (avg %v): %v, want 22003 value out of range: overflow", name, avg, err)
		}
		return
	}
	if err != nil || len(out) == 0 {
		t.Fatalf("%s (avg %v): %v", name, avg, err)
	}
	// Group 1 is the first row (groups come out in their order of appearance).
	if got := out[0].Column(int(out[0].NumCols() - 1)).(*array.Float64).Value(0); got != want {
		t.Errorf("%s (avg %v): %v, want %v", name, avg, got, want)
	}
}
