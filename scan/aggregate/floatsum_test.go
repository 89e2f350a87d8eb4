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
// avg is float8_avg over float8_accum's N, Sx and Sxx, so it also raises where the sum of
// squared differences Sxx overflows and the sum does not (PostgreSQL: avg over 1e200 and
// -1e200 is 22003, sum 0), in one pass and in float8_combine of two fragments' states. The sum
// of -0 alone is -0 (float8pl takes the first value as its state), its avg 0 (float8_accum's
// Sx starts at 0).
func TestFloatSumOverflow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	big := math.MaxFloat64 / 1.5
	negZero := math.Copysign(0, -1)
	for _, c := range []struct {
		name             string
		k                []int64
		x                []float64
		groups           bool
		sum, avg         float64 // group 1's answers when not overflow
		sumOver, avgOver bool
	}{
		{"ungrouped", []int64{1, 1}, []float64{1e308, 1e308}, false, 0, 0, true, true},
		{"ungrouped, negative", []int64{1, 1, 1}, []float64{-1e308, 5, -1e308}, false, 0, 0, true, true},
		{"grouped", []int64{1, 2, 1, 2}, []float64{big, 1, big, 2}, true, 0, 0, true, true},
		{"infinite value", []int64{1, 1}, []float64{math.Inf(1), 1e308}, false, math.Inf(1), math.Inf(1), false, false},
		{"back under", []int64{1, 1, 1}, []float64{1e308, -1e308, 1e308}, false, 1e308, 0, false, true},
		{"grouped, back under", []int64{1, 2, 1, 2}, []float64{1e308, 1, -1e308, 2}, true, 0, 0, false, true},
		{"squares over", []int64{1, 1}, []float64{1e200, -1e200}, false, 0, 0, false, true},
		{"grouped, squares over", []int64{1, 2, 1}, []float64{1e154, 2, -1e154}, true, 0, 0, false, true},
		{"NaN first", []int64{1, 1, 1}, []float64{math.NaN(), 1e308, 1e308}, false, math.NaN(), math.NaN(), false, false},
		{"-0", []int64{1}, []float64{negZero}, false, negZero, 0, false, false},
		{"grouped, -0", []int64{1, 2, 1}, []float64{negZero, 3, negZero}, true, negZero, 0, false, false},
		{"-0 and 0", []int64{1, 1}, []float64{negZero, 0}, false, 0, 0, false, false},
		{"tiny", []int64{1, 1, 1}, []float64{5e-324, -5e-324, 5e-324}, false, 5e-324, 0, false, false},
	} {
		for _, f := range []aggregate.Func{aggregate.Sum, aggregate.Avg} {
			over, want := c.sumOver, c.sum
			if f == aggregate.Avg {
				over, want = c.avgOver, c.avg
			}
			spec := aggregate.Spec{Measures: []aggregate.Measure{{Func: f, Arg: 1, Filter: -1, Name: "s"}}}
			if c.groups {
				spec.Groups = []int{0}
			}
			mem := newLedger(t, 0)
			rec := kxBatch(mem, c.k, c.x)
			out, _, err := drain(ctx, batchesReader(t, kxSchema, []arrow.RecordBatch{rec}), kxSchema, spec, aggregate.Single, mem)
			rec.Release()
			checkOverflow(t, c.name, out, err, over, want, f == aggregate.Avg)
			release(out)
		}
	}
	// Two fragments' partial states, each finite, combine past the limit: the sums (float8pl,
	// float8_combine's Sx), and avg's Sxx (float8_combine) where the sum is 0.
	for _, c := range []struct {
		name             string
		x1, x2           float64
		sum              float64
		sumOver, avgOver bool
	}{
		{"partial sums combined", 1e308, 1e308, 0, true, true},
		{"partial squares combined", 1e200, -1e200, 0, false, true},
		{"partial -0 combined", math.Copysign(0, -1), math.Copysign(0, -1), math.Copysign(0, -1), false, false},
	} {
		for _, f := range []aggregate.Func{aggregate.Sum, aggregate.Avg} {
			spec := aggregate.Spec{Measures: []aggregate.Measure{{Func: f, Arg: 1, Filter: -1, Name: "s"}}}
			mem := newLedger(t, 0)
			var partials []arrow.RecordBatch
			var pschema *arrow.Schema
			for _, x := range []float64{c.x1, c.x2} {
				rec := kxBatch(mem, []int64{1}, []float64{x})
				out, s, err := drain(ctx, batchesReader(t, kxSchema, []arrow.RecordBatch{rec}), kxSchema, spec, aggregate.Partial, mem)
				rec.Release()
				if err != nil {
					t.Fatal(err)
				}
				partials, pschema = append(partials, out...), s
			}
			out, _, err := drain(ctx, batchesReader(t, pschema, partials), kxSchema, spec, aggregate.Final, mem)
			release(partials)
			if f == aggregate.Sum {
				checkOverflow(t, c.name, out, err, c.sumOver, c.sum, false)
			} else {
				checkOverflow(t, c.name, out, err, c.avgOver, 0, true)
			}
			release(out)
		}
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
	got := out[0].Column(int(out[0].NumCols() - 1)).(*array.Float64).Value(0)
	if math.Float64bits(got) != math.Float64bits(want) && !(math.IsNaN(got) && math.IsNaN(want)) {
		t.Errorf("%s (avg %v): %v, want %v", name, avg, got, want)
	}
}
