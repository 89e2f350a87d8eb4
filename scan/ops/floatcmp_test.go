package ops_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/types"

	"github.com/flightsrv/flightsrv/scan/ops"
)

// pgFloatOrder is PostgreSQL's order of float8 values (float8_cmp_internal: NaN equal to NaN
// and above +Infinity, -0 equal to 0), written out as ranks: values of one rank are equal.
var pgFloatOrder = []struct {
	v    float64
	rank int
}{
	{math.Inf(-1), 0}, {-2, 1}, {math.Copysign(0, -1), 2}, {0, 2}, {1.5, 3}, {3e38, 4}, {math.Inf(1), 5},
	{math.NaN(), 6}, {math.Inf(1) * 0, 6}, // two NaNs of different bits
}

var floatCmpBase = types.NamedStruct{
	Names: []string{"x", "y", "a", "b"},
	Struct: types.StructType{Nullability: required, Types: []types.Type{
		&types.Float64Type{Nullability: nullable}, &types.Float64Type{Nullability: nullable},
		&types.Float32Type{Nullability: nullable}, &types.Float32Type{Nullability: nullable},
	}},
}

var floatCmpSchema = arrow.NewSchema([]arrow.Field{
	{Name: "x", Type: arrow.PrimitiveTypes.Float64, Nullable: true}, {Name: "y", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "a", Type: arrow.PrimitiveTypes.Float32, Nullable: true}, {Name: "b", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
}, nil)

// TestFloatComparisonsAsPostgres: =, <>, <, <=, > and >= of doubles and of reals, column with column and column with constant, answer PostgreSQL's order
// (pgFloatOrder) for every pair of NaN, ±Infinity, ±0 and finite values and NULL (a NULL
// operand gives NULL), over a batch and over a slice of it, compiled from the builder's plan
// and from its protobuf form. It failed with arrow-go's IEEE comparisons (NaN = NaN false).
func TestFloatComparisonsAsPostgres(t *testing.T) {
	ctx := context.Background()
	mem := newMem(t, 0)
	n := len(pgFloatOrder) + 1 // the last: NULL
	b := array.NewRecordBuilder(mem, floatCmpSchema)
	defer b.Release()
	type pair struct{ i, j int }
	var pairs []pair
	for i := range n {
		for j := range n {
			pairs = append(pairs, pair{i, j})
			for c, k := range []int{i, j, i, j} {
				if k == n-1 {
					b.Field(c).AppendNull()
					continue
				}
				v := pgFloatOrder[k].v
				if c < 2 {
					b.Field(c).(*array.Float64Builder).Append(v)
				} else {
					b.Field(c).(*array.Float32Builder).Append(float32(v))
				}
			}
		}
	}
	batch := b.NewRecordBatch()
	defer batch.Release()
	ops_ := map[string]func(c int) bool{
		"equal": func(c int) bool { return c == 0 }, "not_equal": func(c int) bool { return c != 0 },
		"lt": func(c int) bool { return c < 0 }, "lte": func(c int) bool { return c <= 0 },
		"gt": func(c int) bool { return c > 0 }, "gte": func(c int) bool { return c >= 0 },
	}
	// want is op of values i and j: nil for NULL.
	want := func(op string, i, j int) *bool {
		if i == n-1 || j == n-1 {
			return nil
		}
		r := ops_[op](pgFloatOrder[i].rank - pgFloatOrder[j].rank)
		return &r
	}
	check := func(what string, e *ops.Expr, batch arrow.RecordBatch, rowPair func(r int) (int, int), op string) {
		t.Helper()
		got, err := e.Eval(ctx, batch, mem)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		defer got.Release()
		bs := got.(*array.Boolean)
		for r := range bs.Len() {
			i, j := rowPair(r)
			w := want(op, i, j)
			switch {
			case w == nil && bs.IsValid(r):
				t.Errorf("%s of %v and %v: %v, want NULL", what, val(i), val(j), bs.Value(r))
			case w != nil && (bs.IsNull(r) || bs.Value(r) != *w):
				t.Errorf("%s of %v and %v: %s, want %v", what, val(i), val(j), bs.ValueStr(r), *w)
			}
		}
	}
	slice := batch.NewSlice(7, int64(len(pairs)-3))
	defer slice.Release()
	p := newPlannerOver(t, floatCmpBase, floatCmpSchema)
	for op := range ops_ {
		for _, cols := range [][2]int{{0, 1}, {2, 3}} {
			for k, e := range p.compile(p.fn(urnComparison, op, p.ref(cols[0]), p.ref(cols[1])))[0] {
				what := fmt.Sprintf("%s(%s, %s) compilation %d", op, floatCmpSchema.Field(cols[0]).Name, floatCmpSchema.Field(cols[1]).Name, k)
				check(what, e, batch, func(r int) (int, int) { return pairs[r].i, pairs[r].j }, op)
				check(what+" sliced", e, slice, func(r int) (int, int) { return pairs[r+7].i, pairs[r+7].j }, op)
			}
		}
		// Column with constant, either side.
		for j := range n - 1 {
			lit := expr.NewPrimitiveLiteral(pgFloatOrder[j].v, false)
			exprs := []expr.Expression{p.fn(urnComparison, op, p.ref(0), lit), p.fn(urnComparison, op, lit, p.ref(1))}
			for side, es := range p.compile(exprs...) {
				for k, e := range es {
					what := fmt.Sprintf("%s with constant %v on side %d, compilation %d", op, pgFloatOrder[j].v, side, k)
					check(what, e, batch, func(r int) (int, int) {
						if side == 0 {
							return pairs[r].i, j
						}
						return j, pairs[r].j
					}, op)
				}
			}
		}
	}
}

func val(i int) any {
	if i == len(pgFloatOrder) {
		return "NULL"
	}
	return pgFloatOrder[i].v
}

// TestFloatInListAsPostgres: x IN (list) of doubles finds -0 in a list holding 0 and 0 in one
// holding -0 (PostgreSQL's float8eq), and a NaN of any bits in a list holding NaN; it found
// neither zero with arrow-go's is_in, which hashes the bits.
func TestFloatInListAsPostgres(t *testing.T) {
	ctx := context.Background()
	mem := newMem(t, 0)
	b := array.NewRecordBuilder(mem, floatCmpSchema)
	defer b.Release()
	for _, v := range pgFloatOrder {
		b.Field(0).(*array.Float64Builder).Append(v.v)
		b.Field(1).AppendNull()
		b.Field(2).(*array.Float32Builder).Append(float32(v.v))
		b.Field(3).AppendNull()
	}
	batch := b.NewRecordBatch()
	defer batch.Release()
	p := newPlannerOver(t, floatCmpBase, floatCmpSchema)
	for _, list := range [][]float64{{0, math.NaN()}, {math.Copysign(0, -1), math.Inf(1) * 0, 7}} {
		opts := make([]expr.Expression, len(list))
		opts32 := make([]expr.Expression, len(list))
		for i, v := range list {
			opts[i] = expr.NewPrimitiveLiteral(v, false)
			opts32[i] = expr.NewPrimitiveLiteral(float32(v), false)
		}
		ins := []expr.Expression{&expr.SingularOrList{Value: p.ref(0), Options: opts}, &expr.SingularOrList{Value: p.ref(2), Options: opts32}}
		for c, es := range p.compile(ins...) {
			for _, e := range es {
				got, err := e.Eval(ctx, batch, mem)
				if err != nil {
					t.Fatal(err)
				}
				for r, v := range pgFloatOrder {
					in := v.rank == 2 || v.rank == 6 // 0, -0 and the NaNs
					if g := got.(*array.Boolean).Value(r); g != in {
						t.Errorf("column %d: %v IN %v = %v, PostgreSQL %v", c, v.v, list, g, in)
					}
				}
				got.Release()
			}
		}
	}
}

// BenchmarkFloatCompare: x < y over 1M doubles, PostgreSQL's order (ops.Expr, floatcmp.go)
// beside arrow-go's IEEE less it replaces.
func BenchmarkFloatCompare(b *testing.B) {
	const n = 1_000_000
	mem := memory.NewGoAllocator()
	rb := array.NewRecordBuilder(mem, floatCmpSchema)
	defer rb.Release()
	for i := range n {
		rb.Field(0).(*array.Float64Builder).Append(float64(i) * 0.37)
		rb.Field(1).(*array.Float64Builder).Append(float64(n-i) * 0.41)
		rb.Field(2).AppendNull()
		rb.Field(3).AppendNull()
	}
	batch := rb.NewRecordBatch()
	defer batch.Release()
	p := newPlannerOver(b, floatCmpBase, floatCmpSchema)
	e := p.compile(p.fn(urnComparison, "lt", p.ref(0), p.ref(1)))[0][0]
	b.Run("own", func(b *testing.B) {
		for b.Loop() {
			out, err := e.Eval(context.Background(), batch, nil)
			if err != nil {
				b.Fatal(err)
			}
			out.Release()
		}
	})
	b.Run("arrow", func(b *testing.B) {
		for b.Loop() {
			out, err := compute.CallFunction(context.Background(), "less", nil, compute.NewDatum(batch.Column(0)), compute.NewDatum(batch.Column(1)))
			if err != nil {
				b.Fatal(err)
			}
			out.Release()
		}
	})
}

// BenchmarkCompareFloatSort sorts 1M doubles (1% NaN) with ops.CompareFloat, PostgreSQL's order
// of floats as ORDER BY and the ordered-set aggregates compare them.
func BenchmarkCompareFloatSort(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	src := make([]float64, 1_000_000)
	for i := range src {
		src[i] = rng.NormFloat64()
		if rng.IntN(100) == 0 {
			src[i] = math.NaN()
		}
	}
	xs := make([]float64, len(src))
	for b.Loop() {
		copy(xs, src)
		slices.SortFunc(xs, ops.CompareFloat)
	}
}
