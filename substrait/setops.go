package substrait

import (
	"fmt"
	"slices"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/extensions"
	"github.com/substrait-io/substrait-go/v8/plan"
	"github.com/substrait-io/substrait-go/v8/types"
)

// bindIntersectExcept binds INTERSECT and EXCEPT (without ALL) onto the relations the executor
// runs: both inputs, each tagged with its side (1 or 2), are concatenated (UNION ALL), grouped
// by every column (NULLs equal, as set operations compare rows) with the rows of each side
// counted, and the groups kept that occur on both sides (INTERSECT) or only on the left
// (EXCEPT): PostgreSQL's answer, each distinct row once. A filter pushed onto the result is
// pushed into both inputs (pushfilter.go: through the grouping keys and into every set
// input), which is sound for both operations since it depends only on a row's values.
// INTERSECT ALL and EXCEPT ALL, which repeat rows by their counts, are bound by setAll.
func (bd *binder) bindIntersectExcept(sel *pg.SelectStmt) (*boundRel, error) {
	op := "INTERSECT"
	if sel.GetOp() == pg.SetOperation_SETOP_EXCEPT {
		op = "EXCEPT"
	}
	l, larm, rarm, err := bd.setArms(sel, op)
	if err != nil {
		return nil, err
	}
	if sel.GetAll() {
		return bd.setAll(op, l, larm, rarm)
	}
	n := len(larm.sc.cols)
	u, err := bd.taggedUnion(op, l, larm, rarm)
	if err != nil {
		return nil, err
	}
	count := func(side int32) (plan.AggRelMeasure, error) {
		f, err := expr.NewAggregateFunc(bd.reg, extensions.ID{URN: URNAggregate, Name: "count"}, nil, types.AggInvocationAll, types.AggPhaseInitialToResult, nil)
		if err != nil {
			return plan.AggRelMeasure{}, fmt.Errorf("bind %s: %w", op, err)
		}
		on, err := bd.fn(URNComparison, "equal", booleanType(), u.sc.ref(n), expr.NewPrimitiveLiteral(side, false))
		if err != nil {
			return plan.AggRelMeasure{}, err
		}
		return bd.b.Measure(f, on), nil
	}
	left, err := count(1)
	if err != nil {
		return nil, err
	}
	right, err := count(2)
	if err != nil {
		return nil, err
	}
	groups := make([]expr.Expression, n)
	for i := range groups {
		groups[i] = u.sc.ref(i)
	}
	if err := refuseIntervalKeys(groups, op); err != nil {
		return nil, err
	}
	arel, err := bd.b.AggregateExprs(u.rel, []plan.AggRelMeasure{left, right}, groups)
	if err != nil {
		return nil, fmt.Errorf("bind %s: %w", op, err)
	}
	asc := &scope{cols: slices.Clone(u.sc.cols[:n])}
	countType := &types.Int64Type{Nullability: types.NullabilityRequired}
	asc.cols = append(asc.cols, col{typ: countType}, col{typ: countType})
	zero := expr.NewPrimitiveLiteral(int64(0), false)
	inLeft, err := bd.fn(URNComparison, "gt", booleanType(), asc.ref(n), zero)
	if err != nil {
		return nil, err
	}
	cmp := "gt"
	if op == "EXCEPT" {
		cmp = "equal"
	}
	inRight, err := bd.fn(URNComparison, cmp, booleanType(), asc.ref(n+1), zero)
	if err != nil {
		return nil, err
	}
	cond, err := bd.fn(URNBoolean, "and", booleanType(), inLeft, inRight)
	if err != nil {
		return nil, err
	}
	frel, err := bd.b.Filter(arel, cond)
	if err != nil {
		return nil, fmt.Errorf("bind %s: %w", op, err)
	}
	es := make([]expr.Expression, n)
	for i := range es {
		es[i] = asc.ref(i)
	}
	if es, err = bd.exceptScales(op, es, l); err != nil {
		return nil, err
	}
	out, err := bd.project(&boundRel{rel: frel, sc: asc, names: append(slices.Clone(l.names), "left", "right")}, es, l.names)
	return keepBpchar(out, larm, err)
}

// exceptScales casts es, the columns of an EXCEPT [ALL], back to the left input's numeric
// types where the right's scale differed (setArms compared them at the larger scale): EXCEPT
// answers left rows alone, so each value is exact at its own scale and shows it, as
// PostgreSQL's EXCEPT shows the left's 1.50 of SELECT 1.50 EXCEPT SELECT 2.5 (an integer's
// at scale 0).
func (bd *binder) exceptScales(op string, es []expr.Expression, l *boundRel) ([]expr.Expression, error) {
	if op != "EXCEPT" {
		return es, nil
	}
	for i, e := range es {
		lt := l.sc.cols[i].typ
		if familyOf(lt) == famInt && !unknownCol(l, i) {
			lt = numType(0) // an integer beside a numeric is numeric of display scale 0
		}
		if familyOf(lt) != famNumeric || familyOf(e.GetType()) != famNumeric || sameType(lt, e.GetType()) {
			continue
		}
		v, err := bd.cast(e, lt.WithNullability(nullableN))
		if err != nil {
			return nil, err
		}
		es[i] = v.e
	}
	return es, nil
}

// keepBpchar marks out's columns character(n) as larm's (setArms: both arms') are
// (bpchar.go).
func keepBpchar(out, larm *boundRel, err error) (*boundRel, error) {
	if err != nil {
		return nil, err
	}
	for i := range out.sc.cols {
		out.sc.cols[i].bpchar = larm.sc.cols[i].bpchar
	}
	return out, nil
}

// setAll binds INTERSECT ALL and EXCEPT ALL with PostgreSQL's multiset semantics: a row
// occurring m times on the left and n times on the right occurs min(m, n) times in the
// INTERSECT ALL and max(m - n, 0) times in the EXCEPT ALL (NULLs equal). Over both inputs
// tagged with their side and concatenated, two window functions partitioned by every column
// number each left row among its equals (row_number() OVER (PARTITION BY the columns, side))
// and count the right rows equal to it (count(right-side marker) OVER (PARTITION BY the
// columns)); the left rows numbered up to that count are the INTERSECT ALL, the others the
// EXCEPT ALL. A filter pushed onto the result passes below the windows on their common
// partition columns, into both inputs (pushfilter.go), which is sound since it removes whole
// groups of equal rows.
func (bd *binder) setAll(op string, l, larm, rarm *boundRel) (*boundRel, error) {
	n := len(larm.sc.cols)
	u, err := bd.taggedUnion(op+" ALL", l, larm, rarm)
	if err != nil {
		return nil, err
	}
	side := u.sc.ref(n)
	rn, err := bd.newWindow(extensions.ID{URN: URNArithmetic, Name: "row_number"}, nil)
	if err != nil {
		return nil, err
	}
	isRight, err := bd.fn(URNComparison, "equal", booleanType(), side, expr.NewPrimitiveLiteral(int32(2), false))
	if err != nil {
		return nil, err
	}
	marker, err := bd.ifThen([]expr.IfThenPair{{If: isRight, Then: side}}, expr.NewNullLiteral(side.GetType().WithNullability(nullableN)))
	if err != nil {
		return nil, err
	}
	right, err := bd.newWindow(extensions.ID{URN: URNAggregate, Name: "count:any"}, i64Type(), marker)
	if err != nil {
		return nil, err
	}
	for i := range n {
		if err := orderable(u.sc.ref(i), op+" ALL"); err != nil {
			return nil, err
		}
		rn.Partitions = append(rn.Partitions, u.sc.ref(i))
		right.Partitions = append(right.Partitions, u.sc.ref(i))
	}
	rn.Partitions = append(rn.Partitions, side)
	for _, w := range []*expr.WindowFunction{rn, right} {
		w.BoundsType, w.LowerBound, w.UpperBound = types.BoundsTypeRange, expr.Unbounded{}, expr.CurrentRow{}
	}
	kept, err := bd.keepWhere(u, []expr.Expression{rn, right}, func(ws []expr.Expression) (expr.Expression, error) {
		isLeft, err := bd.fn(URNComparison, "equal", booleanType(), side, expr.NewPrimitiveLiteral(int32(1), false))
		if err != nil {
			return nil, err
		}
		cmp := "lte"
		if op == "EXCEPT" {
			cmp = "gt"
		}
		within, err := bd.fn(URNComparison, cmp, booleanType(), ws[0], ws[1])
		if err != nil {
			return nil, err
		}
		return bd.fn(URNBoolean, "and", booleanType(), isLeft, within)
	})
	if err != nil {
		return nil, err
	}
	es := make([]expr.Expression, n)
	for i := range es {
		es[i] = kept.sc.ref(i)
	}
	if es, err = bd.exceptScales(op, es, l); err != nil {
		return nil, err
	}
	out, err := bd.project(kept, es, l.names)
	return keepBpchar(out, larm, err)
}

// taggedUnion is the UNION ALL of both arms of a set operation (op names it in errors), each
// row followed by its side: 1 for the left arm, 2 for the right; columns named as l's, then
// "side".
func (bd *binder) taggedUnion(op string, l, larm, rarm *boundRel) (*boundRel, error) {
	n := len(larm.sc.cols)
	if err := docGroupKeys(larm.sc.cols); err != nil {
		return nil, err
	}
	tag := func(arm *boundRel, side int32) (*boundRel, error) {
		es := make([]expr.Expression, 0, n+1)
		for i := range n {
			es = append(es, arm.sc.ref(i))
		}
		es = append(es, expr.NewPrimitiveLiteral(side, false))
		return bd.project(arm, es, append(slices.Clone(l.names), "side"))
	}
	lt, err := tag(larm, 1)
	if err != nil {
		return nil, err
	}
	rt, err := tag(rarm, 2)
	if err != nil {
		return nil, err
	}
	urel, err := bd.b.Set(plan.SetOpUnionAll, lt.rel, rt.rel)
	if err != nil {
		return nil, fmt.Errorf("bind %s: %w", op, err)
	}
	return &boundRel{rel: urel, sc: &scope{cols: slices.Clone(lt.sc.cols)}, names: lt.names}, nil
}
