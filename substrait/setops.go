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
	n := len(l.sc.cols) // larm's visible columns; its display scales follow (setArms)
	u, err := bd.taggedUnion(op, l, larm, rarm)
	if err != nil {
		return nil, err
	}
	pairs := scalePairs(larm, n)
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
	measures := []plan.AggRelMeasure{left, right}
	scaleMeasures, err := bd.groupScaleMeasures(u, pairs, n+1)
	if err != nil {
		return nil, err
	}
	arel, err := bd.b.AggregateExprs(u.rel, append(measures, scaleMeasures...), groups)
	if err != nil {
		return nil, fmt.Errorf("bind %s: %w", op, err)
	}
	asc := &scope{cols: slices.Clone(u.sc.cols[:n])}
	countType := &types.Int64Type{Nullability: types.NullabilityRequired}
	asc.cols = append(asc.cols, col{typ: countType}, col{typ: countType})
	for range scaleMeasures {
		asc.cols = append(asc.cols, col{typ: i32Type()})
	}
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
	in := &boundRel{rel: frel, sc: asc, names: append(slices.Clone(l.names), "left", "right")}
	return bd.finishSet(in, es, pairs, n+2, l, larm)
}

// unionDistinct groups the rows of out, a UNION's (l its left input's visible columns, larm
// its left arm), by their visible columns (distinct), each display scale the group's
// (finishSet). A jsonb column, which distinctJSONB groups by its canonical text, leaves the
// display scales out: their text stays refused.
func (bd *binder) unionDistinct(out, l, larm *boundRel) (*boundRel, error) {
	n := len(l.sc.cols)
	if len(out.sc.cols) == n {
		return bd.distinct(out)
	}
	es := make([]expr.Expression, n)
	for i := range es {
		es[i] = out.sc.ref(i)
	}
	pairs := scalePairs(larm, n)
	if len(pairs) == 0 || slices.ContainsFunc(out.sc.cols[:n], func(c col) bool { return c.jsonb && !c.domainKey }) {
		v, err := bd.project(out, es, l.names)
		if err != nil {
			return nil, err
		}
		for i := range v.sc.cols {
			v.sc.cols[i].bpchar = out.sc.cols[i].bpchar
		}
		return bd.distinct(v)
	}
	if err := docGroupKeys(out.sc.cols[:n]); err != nil {
		return nil, err
	}
	measures, err := bd.groupScaleMeasures(out, pairs, n)
	if err != nil {
		return nil, err
	}
	arel, err := bd.b.AggregateExprs(out.rel, measures, es)
	if err != nil {
		return nil, fmt.Errorf("bind union: %w", err)
	}
	asc := &scope{cols: slices.Clone(out.sc.cols[:n])}
	for range measures {
		asc.cols = append(asc.cols, col{typ: i32Type()})
	}
	for i := range es {
		es[i] = asc.ref(i)
	}
	return bd.finishSet(&boundRel{rel: arel, sc: asc, names: l.names}, es, pairs, n, l, larm)
}

// scalePair is a visible column of a set operation's arm (col) whose display scale is the
// arm's hidden column k after its visible ones (setArms).
type scalePair struct{ col, k int }

// scalePairs are the display scales larm (n visible columns, then hidden ones) carries.
func scalePairs(larm *boundRel, n int) []scalePair {
	var out []scalePair
	for i, c := range larm.sc.cols[:n] {
		if c.scaleName == "" {
			continue
		}
		if j := slices.IndexFunc(larm.sc.cols[n:], func(h col) bool { return h.name == c.scaleName }); j >= 0 {
			out = append(out, scalePair{col: i, k: j})
		}
	}
	return out
}

// groupScaleMeasures are min and max of each display scale of pairs over the rows of u, whose
// hidden display scales start at column first: a group's range of scales, which
// numeric_group_scale reads (groupScales).
func (bd *binder) groupScaleMeasures(u *boundRel, pairs []scalePair, first int) ([]plan.AggRelMeasure, error) {
	var out []plan.AggRelMeasure
	for _, p := range pairs {
		for _, name := range []string{"min", "max"} {
			f, err := expr.NewAggregateFunc(bd.reg, extensions.ID{URN: URNArithmetic, Name: name}, nil, types.AggInvocationAll, types.AggPhaseInitialToResult, nil, u.sc.ref(first+p.k))
			if err != nil {
				return nil, fmt.Errorf("bind display scale: %w", err)
			}
			out = append(out, bd.b.Measure(f, nil))
		}
	}
	return out, nil
}

// finishSet projects in, the rows of a set operation that groups equal rows (UNION, INTERSECT,
// EXCEPT), to es (its visible columns, over in) and, for each of pairs, the display scale
// of the row's value: numeric_group_scale of the group's least and greatest scales, which in
// holds from column first on (min, max per pair, groupScaleMeasures) — one scale where the
// group's members agree, -1 where equal values of different scales meet (PostgreSQL shows
// the one its plan meets first), refused only where the scale is read (scaleOf), so that the
// values alone still answer. The columns keep larm's kinds and names
// (l's), the display scales named beside them as larm names them.
func (bd *binder) finishSet(in *boundRel, es []expr.Expression, pairs []scalePair, first int, l, larm *boundRel) (*boundRel, error) {
	n := len(es)
	names := slices.Clone(l.names)
	for k, p := range pairs {
		ds, err := bd.fn(URNPostgres, "numeric_group_scale", i32Type(), in.sc.ref(p.col), in.sc.ref(first+2*k), in.sc.ref(first+2*k+1))
		if err != nil {
			return nil, err
		}
		es = append(es, ds)
		names = append(names, larm.sc.cols[n+p.k].name)
	}
	out, err := bd.project(in, es, names)
	if err != nil {
		return nil, err
	}
	for i := range out.sc.cols[:n] {
		c, src := &out.sc.cols[i], larm.sc.cols[i]
		c.bpchar, c.vary, c.scaleName = src.bpchar, src.vary, "" // character(n) columns stay so (bpchar.go)
	}
	for k, p := range pairs {
		h := &out.sc.cols[n+k]
		h.qual, h.hidden = subqueryQual, true
		out.sc.cols[p.col].scaleName = h.name
	}
	out.names = l.names
	return out, nil
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
	n := len(l.sc.cols) // larm's visible columns; its display scales follow (setArms)
	u, err := bd.taggedUnion(op+" ALL", l, larm, rarm)
	if err != nil {
		return nil, err
	}
	pairs := scalePairs(larm, n)
	side := u.sc.ref(n)
	// A group's range of display scales (finishSet): over both sides for INTERSECT ALL, whose
	// rows PostgreSQL shows from either, over the left rows for EXCEPT ALL.
	width := len(u.sc.cols)
	if len(pairs) > 0 {
		var wfs []expr.Expression
		for _, p := range pairs {
			s := u.sc.ref(n + 1 + p.k)
			if op == "EXCEPT" {
				isLeft, err := bd.fn(URNComparison, "equal", booleanType(), side, expr.NewPrimitiveLiteral(int32(1), false))
				if err != nil {
					return nil, err
				}
				if s, err = bd.ifThen([]expr.IfThenPair{{If: isLeft, Then: s}}, expr.NewNullLiteral(s.GetType().WithNullability(nullableN))); err != nil {
					return nil, err
				}
			}
			for _, name := range []string{"min", "max"} {
				w, err := bd.newWindow(extensions.ID{URN: URNArithmetic, Name: name}, i32Type(), s)
				if err != nil {
					return nil, err
				}
				for i := range n {
					w.Partitions = append(w.Partitions, u.sc.ref(i))
				}
				w.BoundsType, w.LowerBound, w.UpperBound = types.BoundsTypeRange, expr.Unbounded{}, expr.Unbounded{}
				wfs = append(wfs, w)
			}
		}
		if u, _, err = bd.windowProject(u, wfs); err != nil {
			return nil, err
		}
	}
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
	return bd.finishSet(kept, es, pairs, width, l, larm)
}

// taggedUnion is the UNION ALL of both arms of a set operation (op names it in errors), each
// row followed by its side: 1 for the left arm, 2 for the right; columns named as l's (its
// visible columns), then "side", then the arms' display scales (setArms) as larm names them.
func (bd *binder) taggedUnion(op string, l, larm, rarm *boundRel) (*boundRel, error) {
	n := len(l.sc.cols)
	if err := docGroupKeys(larm.sc.cols[:n]); err != nil {
		return nil, err
	}
	tag := func(arm *boundRel, side int32) (*boundRel, error) {
		es := make([]expr.Expression, 0, len(arm.sc.cols)+1)
		names := append(slices.Clone(l.names), "side")
		for i := range n {
			es = append(es, arm.sc.ref(i))
		}
		es = append(es, expr.NewPrimitiveLiteral(side, false))
		for j := n; j < len(arm.sc.cols); j++ { // the display scales (setArms), after the side
			es, names = append(es, arm.sc.ref(j)), append(names, larm.sc.cols[j].name)
		}
		return bd.project(arm, es, names)
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
