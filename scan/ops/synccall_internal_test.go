package ops

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"runtime/metrics"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/compute/exprs"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/arrow/scalar"
	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/extensions"
	"github.com/substrait-io/substrait-go/v8/plan"
	"github.com/substrait-io/substrait-go/v8/types"

	"github.com/flightsrv/flightsrv/internal/fuzzcount"
)

// The calls of synccall.go are compared with arrow-go's own (compute.CallFunction,
// compute.FilterRecordBatch, exprs.ExecuteScalarExpression) on random arrays of every type the
// engine's kernels see: with and without nulls, all null, sliced (offsets that are and are not
// multiples of 8), empty, and against scalars. Results must be equal (type, values, validity),
// errors equal word for word, the wrapper's memory all released (a checked allocator), and no
// call of the same-typed cases may fall back to the library (syncFallbacks).

// syncTypes are the value types the comparisons run over.
var syncTypes = []arrow.DataType{
	arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Int16, arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64,
	arrow.PrimitiveTypes.Uint8, arrow.PrimitiveTypes.Uint32, arrow.PrimitiveTypes.Uint64,
	arrow.PrimitiveTypes.Float32, arrow.PrimitiveTypes.Float64,
	arrow.FixedWidthTypes.Boolean, arrow.BinaryTypes.String, arrow.BinaryTypes.LargeString, arrow.BinaryTypes.Binary,
	&arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}, &arrow.TimestampType{Unit: arrow.Microsecond},
	arrow.FixedWidthTypes.Date32, &arrow.Decimal128Type{Precision: 20, Scale: 2},
}

// randArray returns n random values of dt (small magnitudes, so that sums overflow only for the
// narrow types), about nullPct% null; all nulls when nullPct is 100.
func randArray(r *rand.Rand, mem memory.Allocator, dt arrow.DataType, n, nullPct int) arrow.Array {
	b := array.NewBuilder(mem, dt)
	defer b.Release()
	words := []string{"", "a", "ORD", "SFO", "zürich", "ORD "}
	for range n {
		if r.IntN(100) < nullPct {
			b.AppendNull()
			continue
		}
		v := r.Int64N(200) - 100
		switch bb := b.(type) {
		case *array.Int8Builder:
			bb.Append(int8(v))
		case *array.Int16Builder:
			bb.Append(int16(v * 300))
		case *array.Int32Builder:
			bb.Append(int32(v * 20_000_000))
		case *array.Int64Builder:
			bb.Append(v * 90_000_000_000_000_000)
		case *array.Uint8Builder:
			bb.Append(uint8(v + 100))
		case *array.Uint32Builder:
			bb.Append(uint32(v+100) * 40_000_000)
		case *array.Uint64Builder:
			bb.Append(uint64(v + 100))
		case *array.Float32Builder:
			bb.Append(float32(v) / 3)
		case *array.Float64Builder:
			bb.Append(float64(v) / 7)
		case *array.BooleanBuilder:
			bb.Append(v%2 == 0)
		case *array.StringBuilder:
			bb.Append(words[r.IntN(len(words))])
		case *array.LargeStringBuilder:
			bb.Append(words[r.IntN(len(words))])
		case *array.BinaryBuilder:
			bb.Append([]byte(words[r.IntN(len(words))]))
		case *array.TimestampBuilder:
			bb.Append(arrow.Timestamp(v * 86_400_000_000))
		case *array.Date32Builder:
			bb.Append(arrow.Date32(v * 100))
		case *array.Decimal128Builder:
			bb.Append(decimal128.FromI64(v * 12345))
		default:
			panic(fmt.Sprintf("randArray: %s", dt))
		}
	}
	return b.NewArray()
}

// syncShape is one way of presenting an argument.
type syncShape struct {
	name          string
	n, nullPct    int
	slice, scalar bool
}

var syncShapes = []syncShape{
	{name: "dense", n: 300},
	{name: "nulls", n: 300, nullPct: 30},
	{name: "all null", n: 300, nullPct: 100},
	{name: "sliced by 3", n: 300, nullPct: 20, slice: true},
	{name: "empty", n: 0},
	{name: "one", n: 1, nullPct: 50},
	{name: "scalar", n: 300, scalar: true},
	{name: "null scalar", n: 300, nullPct: 100, scalar: true},
}

// syncArg returns an argument of shape s: an array of s.n values (sliced [3, s.n+3) of a longer
// one when s.slice) or a scalar.
func syncArg(r *rand.Rand, mem memory.Allocator, dt arrow.DataType, s syncShape) compute.Datum {
	if s.scalar {
		a := randArray(r, mem, dt, 1, s.nullPct)
		defer a.Release()
		sc, err := scalar.GetScalar(a, 0)
		if err != nil {
			panic(err)
		}
		d := compute.NewDatum(sc)
		if rel, ok := sc.(scalar.Releasable); ok {
			rel.Release()
		}
		return d
	}
	if !s.slice {
		a := randArray(r, mem, dt, s.n, s.nullPct)
		defer a.Release()
		return compute.NewDatum(a)
	}
	a := randArray(r, mem, dt, s.n+10, s.nullPct)
	defer a.Release()
	sl := array.NewSlice(a, 3, int64(s.n+3))
	defer sl.Release()
	return compute.NewDatum(sl)
}

// sameOutcome fails t unless the wrapper's answer (got, gerr) is the library's (want, werr).
func sameOutcome(t *testing.T, what string, got compute.Datum, gerr error, want compute.Datum, werr error) {
	t.Helper()
	if (gerr != nil) != (werr != nil) || (gerr != nil && gerr.Error() != werr.Error()) {
		t.Errorf("%s: error %v, the library's %v", what, gerr, werr)
		return
	}
	if gerr != nil {
		return
	}
	if got.Kind() != want.Kind() {
		t.Errorf("%s: a %s, the library's a %s", what, got.Kind(), want.Kind())
		return
	}
	switch w := want.(type) {
	case *compute.ArrayDatum:
		ga, wa := got.(*compute.ArrayDatum).MakeArray(), w.MakeArray()
		defer ga.Release()
		defer wa.Release()
		if !arrow.TypeEqual(ga.DataType(), wa.DataType()) || !array.ApproxEqual(ga, wa, array.WithNaNsEqual(true), array.WithAbsTolerance(0)) || ga.NullN() != wa.NullN() {
			t.Errorf("%s: %s %v, the library's %s %v", what, ga.DataType(), ga, wa.DataType(), wa)
		}
	case *compute.ScalarDatum:
		gs := got.(*compute.ScalarDatum).Value
		if !arrow.TypeEqual(gs.DataType(), w.Value.DataType()) || !scalar.ApproxEquals(gs, w.Value, scalar.WithNaNsEqual(true), scalar.WithAbsTolerance(0)) {
			t.Errorf("%s: %v, the library's %v", what, gs, w.Value)
		}
	default:
		t.Errorf("%s: the library answered a %s", what, want.Kind())
	}
}

// compareCall calls name on args with both paths and compares them. Each runs on a checked
// allocator: what the wrapper's call leaves allocated must be what the library's does (some
// arrow-go kernels leak on their error paths, whoever runs them).
func compareCall(t *testing.T, what, name string, opts compute.FunctionOptions, args ...compute.Datum) {
	t.Helper()
	mine, lib := memory.NewCheckedAllocator(memory.NewGoAllocator()), memory.NewCheckedAllocator(memory.NewGoAllocator())
	got, gerr := callFunction(compute.WithAllocator(context.Background(), mine), name, opts, args...)
	want, werr := compute.CallFunction(compute.WithAllocator(context.Background(), lib), name, opts, args...)
	sameOutcome(t, what, got, gerr, want, werr)
	releaseBoth(got, want)
	if m, l := mine.CurrentAlloc(), lib.CurrentAlloc(); m != l {
		t.Errorf("%s: %d bytes left allocated, the library's call %d", what, m, l)
	}
}

// TestCallFunctionMatchesLibrary compares callFunction with compute.CallFunction for the
// functions the query path calls (Expr's callNode, foldNode, inNode and the exprs subtrees:
// comparisons, arithmetic, boolean logic, null tests, is_in; gather's and window's take),
// over every type and argument shape, including the errors (overflow, division by zero, a
// take out of bounds, arrays of different lengths).
func TestCallFunctionMatchesLibrary(t *testing.T) {
	r := rand.New(rand.NewPCG(19, 16))
	mem := memory.NewGoAllocator()
	before := syncFallbacks.Load()
	binary := []string{"equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
		"add", "add_unchecked", "sub", "multiply", "multiply_unchecked", "divide", "divide_unchecked"}
	for _, dt := range syncTypes {
		for _, s1 := range syncShapes {
			for _, s2 := range syncShapes {
				if s2.n != s1.n && !s1.scalar && !s2.scalar {
					continue
				}
				a, b := syncArg(r, mem, dt, s1), syncArg(r, mem, dt, s2)
				for _, fn := range binary {
					if _, ok := compute.GetFunctionRegistry().GetFunction(fn); !ok {
						t.Fatalf("no function %s", fn)
					}
					compareCall(t, fmt.Sprintf("%s(%s %s, %s)", fn, dt, s1.name, s2.name), fn, nil, a, b)
				}
				if dt.ID() == arrow.BOOL {
					for _, fn := range []string{"and_kleene", "or_kleene", "and", "or", "xor"} {
						compareCall(t, fmt.Sprintf("%s(%s, %s)", fn, s1.name, s2.name), fn, nil, a, b)
					}
				}
				a.Release()
				b.Release()
			}
			a := syncArg(r, mem, dt, s1)
			for _, fn := range []string{"is_null", "is_not_null", "invert", "negate", "abs", "is_nan"} {
				// invert takes booleans, is_nan floats; the null tests no decimals (arrow-go's
				// dispatch panics on those, the engine tests decimals with its own kernels).
				if (dt.ID() == arrow.BOOL || fn != "invert") && (arrow.IsFloating(dt.ID()) || fn != "is_nan") &&
					(!arrow.IsDecimal(dt.ID()) || (fn != "is_null" && fn != "is_not_null")) {
					compareCall(t, fmt.Sprintf("%s(%s %s)", fn, dt, s1.name), fn, nil, a)
				}
			}
			set := randArray(r, mem, dt, 4, 25)
			for _, nb := range []compute.NullMatchingBehavior{compute.NullMatchingInconclusive, compute.NullMatchingMatch} {
				compareCall(t, fmt.Sprintf("is_in(%s %s)", dt, s1.name), "is_in",
					&compute.SetOptions{ValueSet: compute.NewDatumWithoutOwning(set), NullBehavior: nb}, a)
			}
			set.Release()
			if !s1.scalar {
				// take: indices in range with nulls, out of range, empty; both option sets.
				n := int(a.Len())
				for _, k := range []int{0, 1, 500} {
					ib := array.NewInt32Builder(mem)
					for range k {
						switch {
						case n == 0 || r.IntN(10) == 0:
							ib.AppendNull()
						default:
							ib.Append(int32(r.IntN(n)))
						}
					}
					idx := ib.NewArray()
					ib.Release()
					for _, opts := range []*compute.TakeOptions{compute.DefaultTakeOptions(), {BoundsCheck: false}} {
						compareCall(t, fmt.Sprintf("array_take(%s %s, %d indices)", dt, s1.name, k), "array_take", opts, a, compute.NewDatumWithoutOwning(idx))
					}
					compareCall(t, fmt.Sprintf("array_take(%s %s, %d indices, nil options)", dt, s1.name, k), "array_take", nil, a, compute.NewDatumWithoutOwning(idx))
					idx.Release()
				}
				oob, _, _ := array.FromJSON(mem, arrow.PrimitiveTypes.Int64, strings.NewReader(fmt.Sprintf("[0, %d]", n+5)))
				compareCall(t, fmt.Sprintf("array_take(%s %s, out of bounds)", dt, s1.name), "array_take", nil, a, compute.NewDatumWithoutOwning(oob))
				oob.Release()
				mask := syncArg(r, mem, arrow.FixedWidthTypes.Boolean, syncShape{n: n, nullPct: 20})
				for _, ns := range []compute.NullSelectionBehavior{compute.SelectionDropNulls, compute.SelectionEmitNulls} {
					if n == 0 && (arrow.IsBaseBinary(dt.ID())) {
						// arrow-go v18.8.0's filter of an empty binary or string array reads
						// past its zero-length offsets and panics (on its own goroutine: the
						// process ends; the engine filters with take, filterDropNulls).
						continue
					}
					compareCall(t, fmt.Sprintf("array_filter(%s %s)", dt, s1.name), "array_filter", &compute.FilterOptions{NullSelection: ns}, a, mask)
				}
				mask.Release()
			}
			a.Release()
		}
	}
	if n := syncFallbacks.Load() - before; n != 0 {
		t.Errorf("%d calls of one type went to the library", n)
	}
	// Arguments of different types: the implicit casts DispatchBest asks for (castDatum),
	// then the kernel here; arrays of different lengths: the library's error.
	i32, i64 := randArray(r, mem, arrow.PrimitiveTypes.Int32, 50, 10), randArray(r, mem, arrow.PrimitiveTypes.Int64, 50, 10)
	f64, short := randArray(r, mem, arrow.PrimitiveTypes.Float64, 50, 10), randArray(r, mem, arrow.PrimitiveTypes.Int64, 49, 10)
	for _, fn := range []string{"equal", "less", "add", "multiply"} {
		compareCall(t, fn+"(int32, int64)", fn, nil, compute.NewDatumWithoutOwning(i32), compute.NewDatumWithoutOwning(i64))
		compareCall(t, fn+"(int64, float64)", fn, nil, compute.NewDatumWithoutOwning(i64), compute.NewDatumWithoutOwning(f64))
		compareCall(t, fn+"(int64[50], int64[49])", fn, nil, compute.NewDatumWithoutOwning(i64), compute.NewDatumWithoutOwning(short))
	}
	// power and sqrt take doubles: DispatchBest casts integers and decimals to them.
	for _, dt := range syncTypes {
		if arrow.IsInteger(dt.ID()) || arrow.IsFloating(dt.ID()) || arrow.IsDecimal(dt.ID()) {
			for _, s := range syncShapes {
				a, b := syncArg(r, mem, dt, s), syncArg(r, mem, dt, syncShapes[1])
				if s.n == 300 {
					compareCall(t, fmt.Sprintf("power(%s %s, %s)", dt, s.name, syncShapes[1].name), "power", nil, a, b)
				}
				compareCall(t, fmt.Sprintf("sqrt(%s %s)", dt, s.name), "sqrt", nil, a)
				a.Release()
				b.Release()
			}
		}
	}
	compareCall(t, "no such function", "no_such_function", nil, compute.NewDatumWithoutOwning(i64))
	compareCall(t, "is_in without options", "is_in", nil, compute.NewDatumWithoutOwning(i64))
	for _, a := range []arrow.Array{i32, i64, f64, short} {
		a.Release()
	}
}

// goroutinesCreated reads the runtime's count of goroutines created since the process started.
func goroutinesCreated(t *testing.T) uint64 {
	s := []metrics.Sample{{Name: "/sched/goroutines-created:goroutines"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		t.Skip("no /sched/goroutines-created metric")
	}
	return s[0].Value.Uint64()
}

// filterGreater filters b by x > 0 (a column of b's length), dropping nulls, through arrow-go's
// calls (lib) or the wrapper's (callFunction, filterDropNulls), and releases the result.
func filterGreater(t *testing.T, ctx context.Context, lib bool, x arrow.Array, b arrow.RecordBatch) {
	t.Helper()
	var (
		d   compute.Datum
		out arrow.RecordBatch
		err error
	)
	if lib {
		d, err = compute.CallFunction(ctx, "greater", nil, compute.NewDatumWithoutOwning(x), compute.NewDatum(int64(0)))
	} else {
		d, err = callFunction(ctx, "greater", nil, compute.NewDatumWithoutOwning(x), compute.NewDatum(int64(0)))
	}
	if err != nil {
		t.Fatal(err)
	}
	mask := d.(*compute.ArrayDatum).MakeArray()
	d.Release()
	defer mask.Release()
	if lib {
		out, err = compute.FilterRecordBatch(ctx, b, mask, &compute.FilterOptions{NullSelection: compute.SelectionDropNulls})
	} else {
		out, err = filterDropNulls(ctx, b, mask)
	}
	if err != nil {
		t.Fatal(err)
	}
	out.Release()
}

// releaseBoth releases each of rs that is not nil.
func releaseBoth(rs ...interface{ Release() }) {
	for _, r := range rs {
		if r != nil {
			r.Release()
		}
	}
}

// TestCallFunctionStartsNoGoroutine: 200 comparisons, takes and batch filters through the
// wrapper start no goroutine (arrow-go's own calls start one each, which this test checks too,
// so that it can fail); a few are allowed for the test binary's own background work.
func TestCallFunctionStartsNoGoroutine(t *testing.T) {
	mem := memory.NewGoAllocator()
	r := rand.New(rand.NewPCG(1, 2))
	x := randArray(r, mem, arrow.PrimitiveTypes.Int64, 1000, 10)
	defer x.Release()
	idx := randArray(r, mem, arrow.PrimitiveTypes.Uint8, 100, 0)
	defer idx.Release()
	b := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "x", Type: x.DataType(), Nullable: true}, {Name: "y", Type: x.DataType(), Nullable: true}}, nil), []arrow.Array{x, x}, 1000)
	defer b.Release()
	ctx := compute.WithAllocator(context.Background(), mem)
	checkNoGoroutines(t, func(lib bool) {
		filterGreater(t, ctx, lib, x, b)
		var (
			taken arrow.Array
			err   error
		)
		if lib {
			taken, err = compute.TakeArray(ctx, x, idx)
		} else {
			taken, err = takeOpts(ctx, x, idx, nil)
		}
		if err != nil {
			t.Fatal(err)
		}
		taken.Release()
	})
}

// checkNoGoroutines runs round(true), arrow-go's own calls, and round(false), the same through
// the wrappers, 200 times each, and fails unless the library's started a goroutine a round at
// least (else the test cannot tell) and the wrappers' at most one in twenty rounds (the test
// binary's own background work).
func checkNoGoroutines(t *testing.T, round func(lib bool)) {
	t.Helper()
	const calls = 200
	run := func(lib bool) uint64 {
		t0 := goroutinesCreated(t)
		for range calls {
			round(lib)
		}
		return goroutinesCreated(t) - t0
	}
	if lib := run(true); lib < calls {
		t.Fatalf("arrow-go's calls started %d goroutines in %d rounds: the test cannot tell", lib, calls)
	}
	if own := run(false); own > calls/20 {
		t.Errorf("the wrappers' calls started %d goroutines in %d rounds", own, calls)
	}
}

// TestFilterDropNullsMatchesLibrary compares filterDropNulls with compute.FilterRecordBatch
// (SelectionDropNulls) over masks with and without nulls, all true, all false, at offsets
// that are and are not multiples of 8, and lengths around the 64-bit words and the 16-bit
// index limit.
func TestFilterDropNullsMatchesLibrary(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	mem := memory.NewGoAllocator()
	before := syncFallbacks.Load()
	for _, n := range []int{0, 1, 7, 63, 64, 65, 130, 1000, 65534, 65535, 70000} {
		for _, off := range []int{0, 3, 8, 61} {
			for _, nulls := range []int{0, 30, 100} {
				for _, truePct := range []int{0, 50, 100} {
					if n > 1000 && (off != 3 || nulls != 30 || truePct != 50) {
						continue // the wider indices, once
					}
					mb := array.NewBooleanBuilder(mem)
					for range n + off {
						if r.IntN(100) < nulls {
							mb.AppendNull()
						} else {
							mb.Append(r.IntN(100) < truePct)
						}
					}
					full := mb.NewArray()
					mb.Release()
					mask := array.NewSlice(full, int64(off), int64(off+n))
					full.Release()
					cols := []arrow.Array{randArray(r, mem, arrow.PrimitiveTypes.Int64, n, 10), randArray(r, mem, arrow.BinaryTypes.String, n, 10),
						randArray(r, mem, arrow.FixedWidthTypes.Boolean, n, 10), randArray(r, mem, &arrow.Decimal128Type{Precision: 20, Scale: 2}, n, 10)}
					fields := make([]arrow.Field, len(cols))
					for i, c := range cols {
						fields[i] = arrow.Field{Name: fmt.Sprint("c", i), Type: c.DataType(), Nullable: true}
					}
					b := array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, int64(n))
					releaseArrays(cols)
					checked := memory.NewCheckedAllocator(memory.NewGoAllocator())
					got, gerr := filterDropNulls(compute.WithAllocator(context.Background(), checked), b, mask)
					want, werr := compute.FilterRecordBatch(context.Background(), b, mask, &compute.FilterOptions{NullSelection: compute.SelectionDropNulls})
					what := fmt.Sprintf("%d rows at offset %d, %d%% null, %d%% true", n, off, nulls, truePct)
					switch {
					case gerr != nil || werr != nil:
						t.Errorf("%s: error %v, the library's %v", what, gerr, werr)
					case !array.RecordEqual(got, want):
						t.Errorf("%s: %d rows, the library's %d", what, got.NumRows(), want.NumRows())
					}
					releaseBoth(got, want)
					checked.AssertSize(t, 0)
					b.Release()
					mask.Release()
				}
			}
		}
	}
	if n := syncFallbacks.Load() - before; n != 0 {
		t.Errorf("%d filters went to the library", n)
	}
	b := array.NewRecordBatch(arrow.NewSchema(nil, nil), nil, 3)
	defer b.Release()
	two, _, _ := array.FromJSON(mem, arrow.FixedWidthTypes.Boolean, strings.NewReader("[true, false]"))
	defer two.Release()
	_, gerr := filterDropNulls(context.Background(), b, two)
	_, werr := compute.FilterRecordBatch(context.Background(), b, two, compute.DefaultFilterOptions())
	if gerr == nil || werr == nil || gerr.Error() != werr.Error() {
		t.Errorf("a mask of another length: error %v, the library's %v", gerr, werr)
	}
}

// TestEvalSubstraitMatchesExprs compares evalSubstrait with exprs.ExecuteScalarExpression on
// nested Substrait calls over a batch's columns and literals (the arrowNode subtrees):
// comparisons, arithmetic (with its overflow and division by zero), boolean logic and null
// tests, as the SQL front end writes them (plan.NewBuilderDefault).
func TestEvalSubstraitMatchesExprs(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	mem := memory.NewGoAllocator()
	const (
		cmp   = extensions.SubstraitDefaultURNPrefix + "functions_comparison"
		arith = extensions.SubstraitDefaultURNPrefix + "functions_arithmetic"
		boo   = extensions.SubstraitDefaultURNPrefix + "functions_boolean"
	)
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "c0", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "c1", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "c2", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "c3", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
		{Name: "c4", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	base := types.NamedStruct{Names: []string{"c0", "c1", "c2", "c3", "c4"}, Struct: types.StructType{Nullability: types.NullabilityRequired, Types: []types.Type{
		&types.Int32Type{Nullability: types.NullabilityNullable}, &types.Int64Type{Nullability: types.NullabilityNullable},
		&types.Float64Type{Nullability: types.NullabilityNullable}, &types.BooleanType{Nullability: types.NullabilityNullable},
		&types.StringType{Nullability: types.NullabilityNullable},
	}}}
	bld := plan.NewBuilderDefault()
	read := bld.NamedScan([]string{"t"}, base)
	ref := func(i int) expr.Expression {
		f, err := bld.RootFieldRef(read, int32(i))
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	fn := func(urn, name string, args ...types.FuncArg) expr.Expression {
		f, err := bld.ScalarFn(urn, name, nil, args...)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return f
	}
	i32 := func(v int32) expr.Expression { return expr.NewPrimitiveLiteral(v, false) }
	es := map[string]expr.Expression{
		"c0 + 7 > c0 * 3":       fn(cmp, "gt", fn(arith, "add", ref(0), i32(7)), fn(arith, "multiply", ref(0), i32(3))),
		"c0 * c0 (overflow)":    fn(arith, "multiply", ref(0), ref(0)),
		"c1 / (c1 - c1) (÷ 0)":  fn(arith, "divide", ref(1), fn(arith, "subtract", ref(1), ref(1))),
		"c2 / 2 <= c2":          fn(cmp, "lte", fn(arith, "divide", ref(2), expr.NewPrimitiveLiteral(2.0, false)), ref(2)),
		"c3 and not c3 or null": fn(boo, "or", fn(boo, "and", ref(3), fn(boo, "not", ref(3))), fn(cmp, "is_null", ref(4))),
		"c4 = 'ORD'":            fn(cmp, "equal", ref(4), expr.NewPrimitiveLiteral("ORD", false)),
		"c4 is not null":        fn(cmp, "is_not_null", ref(4)),
		"1 + 2 (all literals)":  fn(arith, "add", i32(1), i32(2)),
		"abs(c1) >= c1":         fn(cmp, "gte", fn(arith, "abs", ref(1)), ref(1)),
		"c0 (a bare reference)": ref(0),
		"'x' (a bare literal)":  expr.NewPrimitiveLiteral("x", false),
		"sqrt(c2) is nan (NaN)": fn(cmp, "is_nan", fn(arith, "sqrt", ref(2))),
	}
	pl, err := bld.Plan(read, base.Names)
	if err != nil {
		t.Fatal(err)
	}
	ext := exprs.NewExtensionSetDefault(pl.ExtensionRegistry())
	before := syncFallbacks.Load()
	for _, n := range []int{0, 1, 257} {
		cols := []arrow.Array{randArray(r, mem, schema.Field(0).Type, n, 20), randArray(r, mem, schema.Field(1).Type, n, 20),
			randArray(r, mem, schema.Field(2).Type, n, 20), randArray(r, mem, schema.Field(3).Type, n, 20), randArray(r, mem, schema.Field(4).Type, n, 20)}
		b := array.NewRecordBatch(schema, cols, int64(n))
		releaseArrays(cols)
		for name, e := range es {
			checked := memory.NewCheckedAllocator(memory.NewGoAllocator())
			got, gerr := evalSubstrait(exprs.WithExtensionIDSet(compute.WithAllocator(context.Background(), checked), ext), schema, e, b)
			want, werr := exprs.ExecuteScalarExpression(exprs.WithExtensionIDSet(context.Background(), ext), schema, e, compute.NewDatumWithoutOwning(b))
			sameOutcome(t, fmt.Sprintf("%s over %d rows", name, n), got, gerr, want, werr)
			releaseBoth(got, want)
			checked.AssertSize(t, 0)
		}
		b.Release()
	}
	if n := syncFallbacks.Load() - before; n != 0 {
		t.Errorf("%d calls went to the library", n)
	}
}

// FuzzFilterDropNulls compares filterDropNulls with compute.FilterRecordBatch on masks made of
// the input's bits: values from the first half, validity from the second (all valid when
// withNulls is false), sliced from bit off, over a batch of an integer and a string column.
func FuzzFilterDropNulls(f *testing.F) {
	f.Add([]byte{0xff, 0x00, 0xa5, 0x5a}, uint8(0), true)
	f.Add([]byte{0x01, 0x80, 0xff, 0xff, 0x0f, 0xf0, 0x33, 0xcc, 0x01}, uint8(3), false)
	f.Add(bytes.Repeat([]byte{0xfe, 0x7f}, 40), uint8(61), true)
	f.Fuzz(func(t *testing.T, data []byte, off uint8, withNulls bool) {
		fuzzcount.Add()
		mem := memory.NewGoAllocator()
		half := len(data) / 2
		bits := half * 8
		o := int(off) % (bits + 1)
		mb := array.NewBooleanBuilder(mem)
		for i := range bits {
			if withNulls && data[half+i/8]&(1<<(i%8)) == 0 {
				mb.AppendNull()
			} else {
				mb.Append(data[i/8]&(1<<(i%8)) != 0)
			}
		}
		full := mb.NewArray()
		mb.Release()
		defer full.Release()
		mask := array.NewSlice(full, int64(o), int64(bits))
		defer mask.Release()
		n := mask.Len()
		ib, sb := array.NewInt64Builder(mem), array.NewStringBuilder(mem)
		for i := range n {
			ib.Append(int64(i))
			sb.Append(fmt.Sprint(i))
		}
		cols := []arrow.Array{ib.NewArray(), sb.NewArray()}
		ib.Release()
		sb.Release()
		b := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "i", Type: cols[0].DataType()}, {Name: "s", Type: cols[1].DataType()}}, nil), cols, int64(n))
		releaseArrays(cols)
		defer b.Release()
		got, gerr := filterDropNulls(context.Background(), b, mask)
		want, werr := compute.FilterRecordBatch(context.Background(), b, mask, &compute.FilterOptions{NullSelection: compute.SelectionDropNulls})
		defer releaseBoth(got, want)
		if gerr != nil || werr != nil {
			t.Fatalf("error %v, the library's %v", gerr, werr)
		}
		if !array.RecordEqual(got, want) {
			t.Fatalf("%d rows, the library's %d", got.NumRows(), want.NumRows())
		}
	})
}
