package ops_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/types"

	"github.com/flightsrv/flightsrv/scan/ops"
)

var intCmpBase = types.NamedStruct{
	Names: []string{"a", "b", "c", "d", "e", "f", "g", "h"},
	Struct: types.StructType{Nullability: required, Types: []types.Type{
		&types.Int8Type{Nullability: nullable}, &types.Int8Type{Nullability: nullable},
		&types.Int16Type{Nullability: nullable}, &types.Int16Type{Nullability: nullable},
		&types.Int32Type{Nullability: nullable}, &types.Int32Type{Nullability: nullable},
		&types.Int64Type{Nullability: nullable}, &types.Int64Type{Nullability: nullable},
	}},
}

var intCmpSchema = arrow.NewSchema([]arrow.Field{
	{Name: "a", Type: arrow.PrimitiveTypes.Int8, Nullable: true}, {Name: "b", Type: arrow.PrimitiveTypes.Int8, Nullable: true},
	{Name: "c", Type: arrow.PrimitiveTypes.Int16, Nullable: true}, {Name: "d", Type: arrow.PrimitiveTypes.Int16, Nullable: true},
	{Name: "e", Type: arrow.PrimitiveTypes.Int32, Nullable: true}, {Name: "f", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	{Name: "g", Type: arrow.PrimitiveTypes.Int64, Nullable: true}, {Name: "h", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
}, nil)

// intCmpValues are the values compared, per width: each type's least and greatest, -1, 0, 1
// and a few between (nil: NULL).
func intCmpValues(bits int) []*int64 {
	lo, hi := int64(-1)<<(bits-1), int64(1)<<(bits-1)-1
	var out []*int64
	for _, v := range []int64{lo, lo + 1, -100, -1, 0, 1, 60, 61, 100, hi - 1, hi} {
		out = append(out, &v)
	}
	return append(out, nil)
}

func appendInt(b array.Builder, v *int64) {
	if v == nil {
		b.AppendNull()
		return
	}
	switch b := b.(type) {
	case *array.Int8Builder:
		b.Append(int8(*v))
	case *array.Int16Builder:
		b.Append(int16(*v))
	case *array.Int32Builder:
		b.Append(int32(*v))
	case *array.Int64Builder:
		b.Append(*v)
	}
}

func intLiteral(bits int, v int64) expr.Expression {
	switch bits {
	case 8:
		return expr.NewPrimitiveLiteral(int8(v), false)
	case 16:
		return expr.NewPrimitiveLiteral(int16(v), false)
	case 32:
		return expr.NewPrimitiveLiteral(int32(v), false)
	}
	return expr.NewPrimitiveLiteral(v, false)
}

// TestIntComparisonsExact: =, <>, <, <=, > and >= of two integers of one width (int2, int4,
// int8 and the 1-byte integers of client plans), column with column and column with constant
// on either side, over a batch and a slice of it, equal Go's integer comparisons of every
// pair of the widths' extremes, -1, 0, 1 and values between, NULL where an operand is.
func TestIntComparisonsExact(t *testing.T) {
	ctx := context.Background()
	mem := newMem(t, 0)
	ops_ := map[string]func(x, y int64) bool{
		"equal": func(x, y int64) bool { return x == y }, "not_equal": func(x, y int64) bool { return x != y },
		"lt": func(x, y int64) bool { return x < y }, "lte": func(x, y int64) bool { return x <= y },
		"gt": func(x, y int64) bool { return x > y }, "gte": func(x, y int64) bool { return x >= y },
	}
	p := newPlannerOver(t, intCmpBase, intCmpSchema)
	for w, bits := range []int{8, 16, 32, 64} {
		vals := intCmpValues(bits)
		b := array.NewRecordBuilder(mem, intCmpSchema)
		type pair struct{ x, y *int64 }
		var pairs []pair
		for _, x := range vals {
			for _, y := range vals {
				pairs = append(pairs, pair{x, y})
				for c := range intCmpSchema.NumFields() {
					if c/2 == w && c%2 == 0 {
						appendInt(b.Field(c), x)
					} else if c/2 == w {
						appendInt(b.Field(c), y)
					} else {
						b.Field(c).AppendNull()
					}
				}
			}
		}
		batch := b.NewRecordBatch()
		b.Release()
		slice := batch.NewSlice(5, int64(len(pairs)-2))
		check := func(what string, e *ops.Expr, batch arrow.RecordBatch, from int, want func(p pair) *bool) {
			t.Helper()
			got, err := e.Eval(ctx, batch, mem)
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			defer got.Release()
			bs := got.(*array.Boolean)
			for r := range bs.Len() {
				pr := pairs[from+r]
				switch w := want(pr); {
				case w == nil && bs.IsValid(r):
					t.Errorf("%s row %d: %v, want NULL", what, from+r, bs.Value(r))
				case w != nil && (bs.IsNull(r) || bs.Value(r) != *w):
					t.Errorf("%s row %d: %s, want %v", what, from+r, bs.ValueStr(r), *w)
				}
			}
		}
		for op, f := range ops_ {
			cols := func(pr pair) *bool {
				if pr.x == nil || pr.y == nil {
					return nil
				}
				r := f(*pr.x, *pr.y)
				return &r
			}
			for k, e := range p.compile(p.fn(urnComparison, op, p.ref(2*w), p.ref(2*w+1)))[0] {
				what := fmt.Sprintf("int%d %s, compilation %d", bits, op, k)
				check(what, e, batch, 0, cols)
				check(what+" sliced", e, slice, 5, cols)
			}
			for _, c := range vals[:len(vals)-1] {
				lit := intLiteral(bits, *c)
				// Constant with constant (a whole batch of the one answer).
				for _, d := range []int64{-1, 0, 1} {
					for k, e := range p.compile(p.fn(urnComparison, op, lit, intLiteral(bits, d)))[0] {
						want := f(*c, d)
						got, err := e.Eval(ctx, slice, mem)
						if err != nil {
							t.Fatal(err)
						}
						if bs, ok := got.(*array.Boolean); !ok || bs.Len() != int(slice.NumRows()) || bs.NullN() != 0 || bs.Value(0) != want || bs.Value(bs.Len()-1) != want {
							t.Errorf("int%d %d %s %d, compilation %d: %v, want %v", bits, *c, op, d, k, got, want)
						}
						got.Release()
					}
				}
				es := []expr.Expression{p.fn(urnComparison, op, p.ref(2*w), lit), p.fn(urnComparison, op, lit, p.ref(2*w+1))}
				for side, ces := range p.compile(es...) {
					for k, e := range ces {
						what := fmt.Sprintf("int%d %s with constant %d on side %d, compilation %d", bits, op, *c, side, k)
						check(what, e, slice, 5, func(pr pair) *bool {
							x, y := pr.x, c
							if side == 1 {
								x, y = c, pr.y
							}
							return cols(pair{x, y})
						})
					}
				}
			}
		}
		slice.Release()
		batch.Release()
	}
}

// BenchmarkIntCompare: (value->>'delay')::int > 60 as a warm read of the shredded-column cache
// evaluates it, an int4 column with a constant, over 3M rows in batches of 2,240 (the 3M-row
// fixture's mean bucket, one batch each), about 5% passing.
func BenchmarkIntCompare(b *testing.B) {
	const rows, batches = 2240, 64
	mem := memory.NewGoAllocator()
	p := newPlannerOver(b, intCmpBase, intCmpSchema)
	e := p.compile(p.fn(urnComparison, "gt", p.ref(4), intLiteral(32, 60)))[0][0]
	var bs []arrow.RecordBatch
	for k := range batches {
		rb := array.NewRecordBuilder(mem, intCmpSchema)
		for i := range rows {
			for c := range intCmpSchema.NumFields() {
				if c == 4 && (i+k)%13 != 0 {
					rb.Field(c).(*array.Int32Builder).Append(int32((i*7919+k)%1280 - 20))
				} else {
					rb.Field(c).AppendNull()
				}
			}
		}
		bs = append(bs, rb.NewRecordBatch())
		rb.Release()
	}
	b.SetBytes(rows * 4)
	i := 0
	for b.Loop() {
		out, err := e.Eval(context.Background(), bs[i%batches], nil)
		if err != nil {
			b.Fatal(err)
		}
		out.Release()
		i++
	}
}
