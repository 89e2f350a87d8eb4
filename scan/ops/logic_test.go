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

// TestGuarded: an expression guarded by a condition (an aggregate's argument under its FILTER)
// answers on the rows the condition passes and never fails on the others; a failure on a row
// it passes stands. Over rn = 0…19 in batches of 10, 100 / (rn - 7) divides by zero at rn = 7.
func TestGuarded(t *testing.T) {
	ctx := context.Background()
	mem := newMem(t, 0)
	p := newPlanner(t)
	lit := func(v int64) expr.Expression { return expr.NewPrimitiveLiteral(v, false) }
	compile := func(e expr.Expression) *ops.Expr { return p.compile(e)[0][0] }
	quotient := compile(p.fn(urnArithmetic, "divide", lit(100), p.fn(urnArithmetic, "subtract", p.ref(0), lit(7))))
	for _, c := range []struct {
		name  string
		guard expr.Expression
		fails bool
	}{
		{"guard excludes the row", p.fn(urnComparison, "not_equal", p.ref(0), lit(7)), false},
		{"guard passes the row", p.fn(urnComparison, "gt", p.ref(0), lit(3)), true},
		{"guard passes nothing", p.fn(urnComparison, "lt", p.ref(0), lit(0)), false},
	} {
		cond := compile(c.guard)
		g, err := quotient.Guarded(cond)
		if err != nil {
			t.Fatal(err)
		}
		bs, err := drain(t, seqSource(t, mem, 20, sizesOf(20, 10)))
		if err != nil {
			t.Fatal(err)
		}
		for bi, b := range bs {
			got, err := g.Eval(ctx, b, mem)
			var de *ops.DataError
			if c.fails && bi == 0 {
				if !errors.As(err, &de) || de.Code != "22012" {
					t.Errorf("%s: batch %d: %v, want division by zero (22012)", c.name, bi, err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%s: batch %d: %v", c.name, bi, err)
			}
			passes, err := cond.Eval(ctx, b, mem)
			if err != nil {
				t.Fatal(err)
			}
			for i := range int(b.NumRows()) {
				rn := int64(bi*10 + i)
				pass := passes.IsValid(i) && passes.(interface{ Value(int) bool }).Value(i)
				switch {
				case pass && (got.IsNull(i) || got.(interface{ Value(int) int64 }).Value(i) != 100/(rn-7)):
					t.Errorf("%s: rn %d: %v, want %d", c.name, rn, got, 100/(rn-7))
				case !pass && rn == 7 && got.IsValid(i):
					t.Errorf("%s: rn 7 answered %v", c.name, got)
				}
			}
			passes.Release()
			got.Release()
		}
		releaseBatches(bs)
	}
	if _, err := quotient.Guarded(quotient); err == nil {
		t.Error("a guard of type int64 was accepted")
	}
}
