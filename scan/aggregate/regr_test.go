package aggregate_test

import (
	"context"
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flightsrv/flightsrv/scan/aggregate"
)

// TestRegressionAggregates: corr, covar_pop, covar_samp and the regr_ family over (Y, X) pairs
// with NULLs in either (left out) and a FILTER, in one pass (Single) and as partial states of
// 1, 3 and 7 fragments combined by Final, agree to 1e-12 with the statistics' definitions
// computed in two passes (means first, then the sums of products of deviations).
func TestRegressionAggregates(t *testing.T) {
	const n = 1000
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "y", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "x", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "f", Type: arrow.FixedWidthTypes.Boolean},
	}, nil)
	yb, xb := array.NewFloat64Builder(memory.DefaultAllocator), array.NewFloat64Builder(memory.DefaultAllocator)
	fb := array.NewBooleanBuilder(memory.DefaultAllocator)
	var ys, xs []float64 // the pairs aggregated: neither NULL, filter true
	for i := range n {
		y, x := 1000+37*math.Sin(float64(i)), float64(i%97)*1.5+0.25
		yNull, xNull, in := i%11 == 0, i%13 == 0, i%3 != 0
		if yNull {
			yb.AppendNull()
		} else {
			yb.Append(y)
		}
		if xNull {
			xb.AppendNull()
		} else {
			xb.Append(x)
		}
		fb.Append(in)
		if !yNull && !xNull && in {
			ys, xs = append(ys, y), append(xs, x)
		}
	}
	cols := []arrow.Array{yb.NewArray(), xb.NewArray(), fb.NewArray()}
	rec := array.NewRecordBatch(schema, cols, n)
	defer rec.Release()
	for _, c := range cols {
		c.Release()
	}

	var mx, my float64
	for i := range xs {
		mx, my = mx+xs[i], my+ys[i]
	}
	cnt := float64(len(xs))
	mx, my = mx/cnt, my/cnt
	var sxx, syy, sxy float64
	for i := range xs {
		sxx += (xs[i] - mx) * (xs[i] - mx)
		syy += (ys[i] - my) * (ys[i] - my)
		sxy += (xs[i] - mx) * (ys[i] - my)
	}
	want := map[aggregate.Func]float64{
		aggregate.Corr: sxy / math.Sqrt(sxx*syy), aggregate.CovarPop: sxy / cnt, aggregate.CovarSamp: sxy / (cnt - 1),
		aggregate.RegrAvgX: mx, aggregate.RegrAvgY: my, aggregate.RegrCount: cnt, aggregate.RegrIntercept: my - sxy/sxx*mx,
		aggregate.RegrR2: sxy * sxy / (sxx * syy), aggregate.RegrSlope: sxy / sxx, aggregate.RegrSxx: sxx, aggregate.RegrSxy: sxy, aggregate.RegrSyy: syy,
	}
	var spec aggregate.Spec
	var funcs []aggregate.Func
	for f := range want {
		funcs = append(funcs, f)
		spec.Measures = append(spec.Measures, aggregate.Measure{Func: f, Arg: 0, Arg2: 1, Filter: 2, Name: f.String()})
	}
	check := func(what string, out []arrow.RecordBatch) {
		t.Helper()
		if len(out) != 1 || out[0].NumRows() != 1 {
			t.Fatalf("%s: %d batches", what, len(out))
		}
		for i, f := range funcs {
			var got float64
			switch c := out[0].Column(i).(type) {
			case *array.Float64:
				got = c.Value(0)
			case *array.Int64:
				got = float64(c.Value(0))
			}
			if w := want[f]; math.Abs(got-w) > 1e-12*math.Abs(w) {
				t.Errorf("%s: %s is %v, want %v", what, f, got, w)
			}
		}
	}
	mem := newLedger(t, 0)
	single, _, err := drain(context.Background(), readerOf(t, rec, []int64{0, 300, n}), schema, spec, aggregate.Single, mem)
	if err != nil {
		t.Fatal(err)
	}
	check("single", single)
	release(single)
	pschema, err := aggregate.PartialSchema(schema, spec)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []int64{1, 3, 7} {
		var partials []arrow.RecordBatch
		for f := range k {
			out, _, err := drain(context.Background(), readerOf(t, rec, []int64{f * n / k, (f + 1) * n / k}), schema, spec, aggregate.Partial, mem)
			if err != nil {
				t.Fatal(err)
			}
			partials = append(partials, out...)
		}
		final, _, err := drain(context.Background(), batchesReader(t, pschema, partials), schema, spec, aggregate.Final, mem)
		release(partials)
		if err != nil {
			t.Fatal(err)
		}
		check("fragments", final)
		release(final)
	}
}
