package ops

import (
	"context"
	"errors"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/substrait-io/substrait-go/v8/expr"

	"github.com/flightsrv/flightsrv/scan/ledger"
)

// logicNode is SQL's AND or OR of two or more operands (Substrait functions_boolean and/or,
// Kleene logic: AND is false where an operand is false, else null where one is null, else
// true; OR is its dual). As in PostgreSQL, whose AND and OR stop at the first operand that
// decides a row, an operand counts only on the rows its predecessors leave undecided (AND: not
// false; OR: not true): `k = 'delay' AND (v::text)::int > 10` never fails on a row whose k is
// not 'delay', and `x = 0 OR 1 / x > 2` never divides by zero.
//
// Evaluating every operand on the whole batch and combining them is the fast path, taken
// whenever it succeeds (the operands are pure, so rows evaluated needlessly change nothing).
// An operand that fails there with a data exception (a *DataError, or a kernel's invalid
// value) is evaluated again on the undecided rows alone, and its error stands if it fails on
// them too. An operand is not evaluated at all once the earlier ones decide every row of the
// batch.
//
// The conjuncts at the top of a WHERE, HAVING or JOIN … ON condition, which PostgreSQL's
// planner orders by estimated cost rather than as written, are not one logicNode but a
// FilterAll's predicates or a join's residual conjuncts, which set a failing conjunct aside.
type logicNode struct {
	or   bool
	args []node
}

func (n *logicNode) staticType() arrow.DataType { return arrow.FixedWidthTypes.Boolean }

// logic compiles the and/or call v.
func (c *compiler) logic(v *expr.ScalarFunction) (node, error) {
	if v.NArgs() == 0 {
		return nil, errors.New("ops: compile: " + v.Name() + " without arguments")
	}
	n := &logicNode{or: v.Name() == "or", args: make([]node, v.NArgs())}
	for i := range n.args {
		a, ok := v.Arg(i).(expr.Expression)
		if !ok {
			return nil, errors.New("ops: compile: " + v.Name() + " has an argument that is not a value")
		}
		var err error
		if n.args[i], err = c.compile(a); err != nil {
			return nil, err
		}
	}
	return n, nil
}

// retryable reports whether err is a failure on values that evaluating fewer rows may avoid.
func retryable(err error) bool {
	var de *DataError
	return errors.As(err, &de) || errors.Is(err, arrow.ErrInvalid)
}

func (n *logicNode) eval(ctx context.Context, b arrow.RecordBatch) (compute.Datum, error) {
	mem := compute.GetAllocator(ctx)
	rows := int(b.NumRows())
	var acc arrow.Array // the operands combined so far; nil before the first
	defer func() {
		if acc != nil {
			acc.Release()
		}
	}()
	for _, a := range n.args {
		if acc != nil && n.decidesAll(acc) {
			break
		}
		d, err := a.eval(ctx, b)
		if err != nil {
			if acc == nil || !retryable(err) {
				return nil, err
			}
			if d, err = n.onUndecided(ctx, a, b, acc); err != nil {
				return nil, err
			}
		}
		next, err := n.combine(ctx, acc, d, rows, mem)
		if err != nil {
			return nil, err
		}
		if acc != nil {
			acc.Release()
		}
		acc = next
	}
	return compute.NewDatum(acc), nil
}

// combine returns acc and d combined (d alone, as an array, when acc is nil); d is released.
func (n *logicNode) combine(ctx context.Context, acc arrow.Array, d compute.Datum, rows int, mem memory.Allocator) (arrow.Array, error) {
	defer d.Release()
	if acc == nil {
		return toArray(d, rows, mem)
	}
	fn := "and_kleene"
	if n.or {
		fn = "or_kleene"
	}
	ad := compute.NewDatum(acc)
	defer ad.Release()
	out, err := callFunction(ctx, fn, nil, ad, d)
	if err != nil {
		return nil, err
	}
	defer out.Release()
	return toArray(out, rows, mem)
}

// decidesAll reports whether acc decides every row: AND all false, OR all true (no nulls);
// never for no rows (compilation evaluates every operand on the empty batch).
func (n *logicNode) decidesAll(acc arrow.Array) bool {
	if acc.Len() == 0 || acc.NullN() > 0 {
		return false
	}
	a := acc.(*array.Boolean)
	set := bitutil.CountSetBits(a.Data().Buffers()[1].Bytes(), a.Data().Offset(), a.Len())
	if n.or {
		return set == a.Len()
	}
	return set == 0
}

// onUndecided evaluates the operand a on the rows of b that acc leaves undecided and returns
// its values at those rows, null at the others (which acc decides whatever they hold).
func (n *logicNode) onUndecided(ctx context.Context, a node, b arrow.RecordBatch, acc arrow.Array) (compute.Datum, error) {
	mem := compute.GetAllocator(ctx)
	ab := acc.(*array.Boolean)
	rows := ab.Len()
	var undecided []int
	for i := range rows {
		if ab.IsNull(i) || ab.Value(i) != n.or {
			undecided = append(undecided, i)
		}
	}
	sub, err := takeRows(ctx, b, undecided, rows)
	if err != nil {
		return nil, err
	}
	d, err := a.eval(ctx, sub)
	sub.Release()
	if err != nil {
		return nil, err
	}
	vals, err := toArray(d, len(undecided), mem)
	d.Release()
	if err != nil {
		return nil, err
	}
	defer vals.Release()
	v := vals.(*array.Boolean)
	bb := array.NewBooleanBuilder(mem)
	defer bb.Release()
	bb.Reserve(rows)
	next := 0
	for i := range rows {
		if next < len(undecided) && undecided[next] == i {
			if v.IsNull(next) {
				bb.UnsafeAppendBoolToBitmap(false)
			} else {
				bb.UnsafeAppend(v.Value(next))
			}
			next++
			continue
		}
		bb.UnsafeAppendBoolToBitmap(false)
	}
	out := bb.NewArray()
	defer out.Release()
	return compute.NewDatum(out), nil
}

// conjunctsPass clears pass[i] (one flag per row of b, set by the caller) where a predicate
// of preds is not true on row i of b: the conjuncts of a join's or a LATERAL function's ON
// condition. As PostgreSQL's planner orders such conjuncts by cost, not as written, one that
// fails on b with a data exception (retryable) is set aside and evaluated after the others,
// on the rows they pass, its error standing if it fails on those too (FilterAll does the
// same for a WHERE condition).
func conjunctsPass(ctx context.Context, b arrow.RecordBatch, preds []*Expr, pass []bool, mem *ledger.Ledger) error {
	var set []*Expr
	for _, p := range preds {
		m, err := p.Eval(ctx, b, mem)
		if err != nil {
			if len(preds) == 1 || !retryable(err) || ctxErr(ctx) != nil {
				return err
			}
			set = append(set, p)
			continue
		}
		andPass(pass, nil, m.(*array.Boolean))
		m.Release()
	}
	for _, p := range set {
		var rows []int
		for i, ok := range pass {
			if ok {
				rows = append(rows, i)
			}
		}
		if len(rows) == 0 {
			return nil
		}
		sub, err := takeRows(computeCtx(ctx, mem), b, rows, len(pass))
		if err != nil {
			return err
		}
		m, err := p.Eval(ctx, sub, mem)
		sub.Release()
		if err != nil {
			return err
		}
		andPass(pass, rows, m.(*array.Boolean))
		m.Release()
	}
	return nil
}

// andPass clears pass[at[k]] (pass[k] when at is nil) where m's row k is not true.
func andPass(pass []bool, at []int, m *array.Boolean) {
	if at == nil && m.NullN() == 0 {
		for i := range pass {
			pass[i] = pass[i] && m.Value(i)
		}
		return
	}
	for k := range m.Len() {
		i := k
		if at != nil {
			i = at[k]
		}
		pass[i] = pass[i] && m.IsValid(k) && m.Value(k)
	}
}
