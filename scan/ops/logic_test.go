package ops_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/substrait-io/substrait-go/v8/expr"

	"github.com/flightsrv/flightsrv/scan/ops"
)

// TestShortCircuit: AND and OR decide a row at the first operand that can (a later operand
// failing only on decided rows answers), and FilterAll sets a conjunct failing on a batch
// aside until the others have filtered it; an operand failing on a row nothing decides is
// the data exception (22012), as PostgreSQL's. Over rn = 0…39 in batches of 10, 100 / (rn - 7)
// divides by zero at rn = 7 alone.
func TestShortCircuit(t *testing.T) {
	ctx := context.Background()
	mem := newMem(t, 0)
	p := newPlanner(t)
	lit := func(v int64) expr.Expression { return expr.NewPrimitiveLiteral(v, false) }
	guard := p.fn(urnComparison, "not_equal", p.ref(0), lit(7))
	isSeven := p.fn(urnComparison, "equal", p.ref(0), lit(7))
	divides := p.fn(urnComparison, "gt", p.fn(urnArithmetic, "divide", lit(100), p.fn(urnArithmetic, "subtract", p.ref(0), lit(7))), lit(0))
	compile := func(e expr.Expression) *ops.Expr { return p.compile(e)[0][0] }
	run := func(preds ...*ops.Expr) ([]int64, error) {
		bs, err := drain(t, ops.FilterAll(ctx, seqSource(t, mem, 40, sizesOf(40, 10)), preds, nil, mem))
		defer releaseBatches(bs)
		var rns []int64
		for _, v := range ints(t, bs, 0) {
			rns = append(rns, *v)
		}
		return rns, err
	}
	span := func(from, to int64) []int64 {
		var out []int64
		for i := from; i <= to; i++ {
			out = append(out, i)
		}
		return out
	}
	above7, from7 := span(8, 39), span(7, 39)
	for _, c := range []struct {
		name  string
		preds []expr.Expression
		want  []int64 // nil: division by zero
	}{
		{"and guard first", []expr.Expression{p.fn(urnBoolean, "and", guard, divides)}, above7},
		{"and guard last", []expr.Expression{p.fn(urnBoolean, "and", divides, guard)}, nil},
		{"or decided first", []expr.Expression{p.fn(urnBoolean, "or", isSeven, divides)}, from7},
		{"or decided last", []expr.Expression{p.fn(urnBoolean, "or", divides, isSeven)}, nil},
		{"not of or", []expr.Expression{p.fn(urnBoolean, "not", p.fn(urnBoolean, "or", isSeven, p.fn(urnBoolean, "not", divides)))}, above7},
		{"three operands", []expr.Expression{p.fn(urnBoolean, "and", guard, guard, divides)}, above7},
		{"conjuncts guard first", []expr.Expression{guard, divides}, above7},
		{"conjuncts guard last", []expr.Expression{divides, guard}, above7},
		{"conjunct alone", []expr.Expression{divides}, nil},
		{"conjunct unguarded", []expr.Expression{divides, p.fn(urnComparison, "gt", p.ref(0), lit(3))}, nil},
	} {
		var preds []*ops.Expr
		for _, e := range c.preds {
			preds = append(preds, compile(e))
		}
		got, err := run(preds...)
		var de *ops.DataError
		switch {
		case c.want == nil && (!errors.As(err, &de) || de.Code != "22012"):
			t.Errorf("%s: %v, %v; want division by zero (22012)", c.name, got, err)
		case c.want != nil && (err != nil || !slices.Equal(got, c.want)):
			t.Errorf("%s: %v, %v; want %v", c.name, got, err, c.want)
		}
	}
}
