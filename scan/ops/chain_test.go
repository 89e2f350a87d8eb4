package ops_test

import (
	"context"
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/extensions"

	"github.com/flightsrv/flightsrv/scan/ops"
)

const urnString = extensions.SubstraitDefaultURNPrefix + "functions_string"

// chains are the left-deep chains of n calls whose compilation was quadratic (issue 18's user
// trial: SELECT x*x*…*x with 4,000 real factors took 70 s to compile, with int 0.07 s), each
// with its value for a row whose x is v (grp 1, id "ab").
var chains = []struct {
	name  string
	build func(p *planner, n int) expr.Expression
	want  func(n int, x float64) float64
}{
	// x*x*…*x: every level's argument types were found by evaluating the argument's whole
	// subtree on the empty batch.
	{"float product", func(p *planner, n int) expr.Expression {
		x := p.ref(colIndex(p.t, "x"))
		e := expr.Expression(x)
		for range n {
			e = p.fn(urnArithmetic, "multiply", e, x)
		}
		return e
	}, func(n int, x float64) float64 { return math.Pow(x, float64(n+1)) }},
	// char_length(id)*grp*…*grp: each level asked whether arrow-go could run its whole subtree
	// (no: char_length is this package's), walking it to the leaf.
	{"int product over a kernel of ours", func(p *planner, n int) expr.Expression {
		grp := p.ref(colIndex(p.t, "grp"))
		e := p.fn(urnString, "char_length", p.ref(colIndex(p.t, "id")))
		for range n {
			e = p.fn(urnArithmetic, "multiply", e, grp)
		}
		return e
	}, func(int, float64) float64 { return 2 }},
}

// TestChainLinear: compiling a chain of 2n calls allocates about twice what a chain of n does
// (a quadratic compilation, four times), and the chain computes its value. Counting
// allocations, not time, so that a busy machine cannot fail it.
func TestChainLinear(t *testing.T) {
	const n = 100
	for _, c := range chains {
		t.Run(c.name, func(t *testing.T) {
			allocs := func(n int) float64 {
				p := newPlanner(t)
				e := c.build(p, n)
				reg := p.registry()
				return testing.AllocsPerRun(2, func() {
					if _, err := ops.Compile(e, rowsSchema, reg); err != nil {
						t.Fatal(err)
					}
				})
			}
			a, b := allocs(n), allocs(2*n)
			if r := b / a; r > 2.6 {
				t.Errorf("compiling %d calls allocates %.0f times, %d calls %.0f: %.2f× for twice the calls (quadratic)", n, a, 2*n, b, r)
			}
			p := newPlanner(t)
			x := chainEval(t, p, c.build(p, 2*n))
			for i, v := range []float64{1, -1, 1.5} {
				if want := c.want(2*n, v); x[i] != want {
					t.Errorf("x = %g: %g, want %g", v, x[i], want)
				}
			}
		})
	}
}

// chainEval evaluates e over three rows whose x is 1, -1 and 1.5 (grp 1, id "ab")
// and returns its values as float64.
func chainEval(t *testing.T, p *planner, e expr.Expression) []float64 {
	t.Helper()
	mem := newMem(t, 0)
	b := array.NewRecordBuilder(mem, rowsSchema)
	defer b.Release()
	for _, x := range []float64{1, -1, 1.5} {
		b.Field(0).(*array.Int64Builder).Append(1)
		b.Field(1).AppendNull()
		b.Field(2).(*array.StringBuilder).Append("ab")
		b.Field(3).(*array.Int64Builder).Append(1)
		b.Field(4).(*array.Float64Builder).Append(x)
		b.Field(5).(*array.BooleanBuilder).Append(false)
		b.Field(6).AppendNull()
	}
	batch := b.NewRecordBatch()
	defer batch.Release()
	ce, err := ops.Compile(e, rowsSchema, p.registry())
	if err != nil {
		t.Fatal(err)
	}
	out, err := ce.Eval(context.Background(), batch, mem)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Release()
	var vals []float64
	for i := range out.Len() {
		switch a := out.(type) {
		case *array.Float64:
			vals = append(vals, a.Value(i))
		case *array.Int64:
			vals = append(vals, float64(a.Value(i)))
		case *array.Int32:
			vals = append(vals, float64(a.Value(i)))
		default:
			t.Fatalf("result of type %s", out.DataType())
		}
	}
	return vals
}
