package ops

import (
	"context"
	"errors"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/flightsrv/flightsrv/scan/ledger"
)

// Guarded returns e guarded by cond, a boolean expression over the same input: Eval of the
// result answers e's value on the rows where cond is true and NULL, or e's value, on the
// others, and never fails on a row where cond is not true. It is how PostgreSQL evaluates an
// aggregate's arguments under its FILTER clause: only on the rows the filter passes, so
// sum(10 / x) FILTER (WHERE x <> 0) divides no row by zero.
//
// Evaluation stays eager: e runs on the whole batch first (no cost when it succeeds), and only
// when that fails with a data exception (a *DataError or a kernel's invalid value, as
// logicNode retries an operand) is cond evaluated and e evaluated again on the rows it passes,
// whose error then stands. The result reads the columns of both (Reads). e and cond stay
// usable on their own; the result is, like every Expr, safe for one Eval at a time per
// goroutine.
func (e *Expr) Guarded(cond *Expr) (*Expr, error) {
	if cond == nil || !arrow.TypeEqual(cond.typ, arrow.FixedWidthTypes.Boolean) {
		return nil, errors.New("ops: guard: the condition is not a boolean expression")
	}
	if !sameTypes(e.in, cond.in) {
		return nil, errors.New("ops: guard: the condition's input is not the expression's")
	}
	g := *e
	g.guard = cond
	g.reads = make([]bool, e.in.NumFields())
	for i := range g.reads {
		g.reads[i] = e.Reads(i) || cond.Reads(i)
	}
	return &g, nil
}

// evalGuarded is Eval of an expression with a guard (Guarded).
func (e *Expr) evalGuarded(ctx context.Context, batch arrow.RecordBatch, mem *ledger.Ledger) (arrow.Array, error) {
	out, err := e.eval(ctx, batch, mem)
	if err == nil || !retryable(err) || ctxErr(ctx) != nil {
		return out, err
	}
	c, cerr := e.guard.Eval(ctx, batch, mem)
	if cerr != nil {
		return nil, cerr
	}
	cond := c.(*array.Boolean)
	rows := int(batch.NumRows())
	var pass []int
	for i := range rows {
		if cond.IsValid(i) && cond.Value(i) {
			pass = append(pass, i)
		}
	}
	c.Release()
	alloc := allocator(mem)
	if len(pass) == rows {
		return nil, err // every row passes: e's error is the rows'
	}
	if len(pass) == 0 {
		return array.MakeArrayOfNull(alloc, e.typ, rows), nil
	}
	cctx := computeCtx(ctx, mem)
	sub, terr := takeRows(cctx, batch, pass, rows)
	if terr != nil {
		return nil, terr
	}
	// The sub-batch's rows are not the batch's: JSON fields an operator shares per batch
	// (withJSONShare) are extracted again for them.
	vals, err := e.eval(withJSONShare(ctx, nil), sub, mem)
	sub.Release()
	if err != nil {
		return nil, err
	}
	defer vals.Release()
	ib := array.NewInt64Builder(alloc)
	defer ib.Release()
	ib.Reserve(rows)
	next := 0
	for i := range rows {
		if next < len(pass) && pass[next] == i {
			ib.UnsafeAppend(int64(next))
			next++
			continue
		}
		ib.UnsafeAppendBoolToBitmap(false)
	}
	idx := ib.NewArray()
	defer idx.Release()
	return takeArray(cctx, vals, idx)
}
