package ops

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/types"
)

// TestInSetAsSQL: IN lists of text and of 16-, 32- and 64-bit integers, with and without a
// NULL, over columns with NULLs (whole and sliced), answer as SQL's IN does (computed here
// row by row: NULL for a NULL x, true when x is listed, else NULL if the list holds a NULL,
// else false) and as compute's is_in over the same value set does.
func TestInSetAsSQL(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx := compute.WithAllocator(context.Background(), mem)
	rng := rand.New(rand.NewPCG(1, 2))
	const rows = 3000
	for _, kind := range []string{"text", "int16", "int32", "int64"} {
		for _, withNull := range []bool{false, true} {
			var opts []expr.Expression
			listed := map[int64]bool{}
			for range 200 {
				v := rng.Int64N(1000) - 500
				listed[v] = true
				switch kind {
				case "text":
					opts = append(opts, expr.NewPrimitiveLiteral(fmt.Sprint(v), false))
				case "int16":
					opts = append(opts, expr.NewPrimitiveLiteral(int16(v), false))
				case "int32":
					opts = append(opts, expr.NewPrimitiveLiteral(int32(v), false))
				case "int64":
					opts = append(opts, expr.NewPrimitiveLiteral(v, false))
				}
			}
			var at arrow.DataType
			var nt types.Type
			switch kind {
			case "text":
				at, nt = arrow.BinaryTypes.String, &types.StringType{Nullability: types.NullabilityNullable}
			case "int16":
				at, nt = arrow.PrimitiveTypes.Int16, &types.Int16Type{Nullability: types.NullabilityNullable}
			case "int32":
				at, nt = arrow.PrimitiveTypes.Int32, &types.Int32Type{Nullability: types.NullabilityNullable}
			case "int64":
				at, nt = arrow.PrimitiveTypes.Int64, &types.Int64Type{Nullability: types.NullabilityNullable}
			}
			if withNull {
				opts = append(opts[:100:100], append([]expr.Expression{expr.NewNullLiteral(nt)}, opts[100:]...)...)
			}
			set, arr, ok := newInSet(opts)
			if !ok {
				t.Fatalf("%s: no set", kind)
			}
			b := array.NewBuilder(mem, at)
			xs := make([]*int64, rows)
			for i := range rows {
				if rng.IntN(10) == 0 {
					b.AppendNull()
					continue
				}
				v := rng.Int64N(1200) - 600
				xs[i] = &v
				switch b := b.(type) {
				case *array.StringBuilder:
					b.Append(fmt.Sprint(v))
				case *array.Int16Builder:
					b.Append(int16(v))
				case *array.Int32Builder:
					b.Append(int32(v))
				case *array.Int64Builder:
					b.Append(v)
				}
			}
			col := b.NewArray()
			b.Release()
			for _, sl := range [][2]int{{0, rows}, {7, 2500}} {
				x := array.NewSlice(col, int64(sl[0]), int64(sl[1]))
				got, ok := set.eval(ctx, compute.NewDatumWithoutOwning(x))
				if !ok {
					t.Fatalf("%s: no lookup", kind)
				}
				ref, err := compute.CallFunction(ctx, "is_in", &compute.SetOptions{ValueSet: compute.NewDatumWithoutOwning(arr), NullBehavior: compute.NullMatchingInconclusive}, compute.NewDatumWithoutOwning(x))
				if err != nil {
					t.Fatal(err)
				}
				g := got.(*compute.ArrayDatum).MakeArray().(*array.Boolean)
				r := ref.(*compute.ArrayDatum).MakeArray().(*array.Boolean)
				for i := range x.Len() {
					var want *bool
					switch v := xs[sl[0]+i]; {
					case v == nil:
					case listed[*v]:
						want = new(bool)
						*want = true
					case !withNull:
						want = new(bool)
					}
					for name, a := range map[string]*array.Boolean{"inSet": g, "is_in": r} {
						if (want == nil) != a.IsNull(i) || (want != nil && a.Value(i) != *want) {
							t.Fatalf("%s list (NULL %v), row %d (%v): %s gives %v (null %v)", kind, withNull, sl[0]+i, xs[sl[0]+i], name, a.Value(i), a.IsNull(i))
						}
					}
				}
				g.Release()
				r.Release()
				got.Release()
				ref.Release()
				x.Release()
			}
			col.Release()
			arr.Release()
		}
	}
}

// TestInSetDeclines: lists the set does not take (mixed kinds, floats, a type variation)
// take the general path.
func TestInSetDeclines(t *testing.T) {
	for name, opts := range map[string][]expr.Expression{
		"mixed":     {expr.NewPrimitiveLiteral("a", false), expr.NewPrimitiveLiteral(int64(1), false)},
		"widths":    {expr.NewPrimitiveLiteral(int32(1), false), expr.NewPrimitiveLiteral(int64(1), false)},
		"floats":    {expr.NewPrimitiveLiteral(1.5, false)},
		"variation": {&expr.PrimitiveLiteral[string]{Value: "a", Type: &types.StringType{TypeVariationRef: 1}}},
		"only NULL": {expr.NewNullLiteral(&types.DateType{})},
	} {
		if _, _, ok := newInSet(opts); ok {
			t.Errorf("%s: taken", name)
		}
	}
}
