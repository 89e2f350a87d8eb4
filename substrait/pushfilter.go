package substrait

import (
	"fmt"
	"slices"

	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/extensions"
	"github.com/substrait-io/substrait-go/v8/plan"
	"github.com/substrait-io/substrait-go/v8/types"
)

// filterPusher moves the conjuncts of a plan's FilterRels as far down the relation tree as
// their meaning allows, so that the conjuncts over a routed read's columns — Superset's time
// filter written outside `(SELECT … FROM flights WHERE origin = …) AS virtual_table`, a
// HAVING over a grouping key, a WHERE over a CTE or a UNION — reach the FilterRel directly
// above the read, where the route is read (route, Routes) and the executor evaluates them
// per bucket. It is the textbook predicate pushdown, restricted to what is sound for every
// input:
//
//   - through a FilterRel (its conjuncts join those from above; inner ones first, so that
//     they keep being evaluated first), a SortRel, and a ProjectRel for conjuncts whose
//     every column is an input column passed through (directly, as a plain field reference,
//     or under a cast that only makes it nullable; a computed column is not inlined) — over
//     window functions, only conjuncts whose every column is a plain partition key of every
//     window (they remove whole partitions);
//   - through an AggregateRel of one grouping set, only for conjuncts over at least one
//     column and only over grouping keys that are plain field references (a filter on the
//     keys selects whole groups; a constant conjunct over a global aggregate would turn its
//     one row into none, so it stays above);
//   - into every input of a SetRel (a filter over the union, intersection or difference of
//     its inputs is that of their filtered inputs);
//   - through a JoinRel (join.go): conjuncts over one side's columns into that side where
//     the join does not NULL-extend it (both sides of an inner join, the left of left,
//     semi, anti and single joins, the right of a right join; neither of a full join), and
//     the join condition's conjuncts over one side into the side it filters (a side that
//     is not preserved: both of an inner join, the right of left, semi, anti and single
//     joins, the left of a right join); an outer join under a conjunct no NULL-extended row
//     passes (nullRejecting) is first simplified into the join that does not extend that
//     side; and the conjuncts going into one side that compare a column with constants are
//     carried to the other side's columns the join's equalities equate with it, where that
//     side is filtered too (transfer);
//   - never through a FetchRel that drops rows (LIMIT/OFFSET count rows before the filter;
//     one of OFFSET 0 and no LIMIT only maps columns, and is passed) nor into a relation kind
//     it does not know, which is returned unchanged with the conjuncts above it.
//
// Conjuncts that stop above a relation are put back in a FilterRel there. A FilterRel with an
// emit mapping keeps its own condition (dropping it would lose the mapping); conjuncts from
// above still pass it. Relations are copied, never changed in place.
type filterPusher struct {
	// reg registers the `and` that joins conjuncts (the binder's registry, or a client
	// plan's own, so that the function's anchor is declared in the plan).
	reg expr.ExtensionRegistry
	// atRead returns the relation that reads r under conj (conjuncts over r's output,
	// possibly none), in plan order of the reads.
	atRead func(r *plan.NamedTableReadRel, conj []expr.Expression) (plan.Rel, error)
	// changed records whether a conjunct passed a relation other than a FilterRel (a
	// stack of FilterRels over a read is where Routes reads routes already).
	changed bool
	// falsy, when set, reports a conjunct that is a constant false or NULL (the binder's
	// constantlyFalse): a relation under one answers no rows, so every read under it reads
	// nothing (nothing).
	falsy func(expr.Expression) bool
}

// isFalsy reports whether a conjunct of conj (nested ands split) is falsy.
func (fp *filterPusher) isFalsy(conj []expr.Expression) bool {
	if fp.falsy == nil {
		return false
	}
	for _, c := range conj {
		if slices.ContainsFunc(splitConj(c), fp.falsy) {
			return true
		}
	}
	return false
}

// nothing returns rel with every read under it reading nothing: each read under a FilterRel
// of the constant false (atRead's route of it is Empty: it reads no bucket), the relations
// between unchanged. It is the plan of a relation whose rows are all discarded — one under a
// constant false or NULL filter, the side of a join whose condition is one that the join does
// not preserve — which PostgreSQL plans as a Result whose one-time filter is false and runs
// nothing under it, so no read needs a route there.
func (fp *filterPusher) nothing(rel plan.Rel) (plan.Rel, error) {
	if r, ok := rel.(*plan.NamedTableReadRel); ok {
		return fp.atRead(r, []expr.Expression{expr.NewPrimitiveLiteral(false, false)})
	}
	ins := rel.GetInputs()
	if len(ins) == 0 {
		return rel, nil
	}
	fp.changed = true
	outs := make([]plan.Rel, len(ins))
	for i, in := range ins {
		var err error
		if outs[i], err = fp.nothing(in); err != nil {
			return nil, err
		}
	}
	return rel.Copy(outs...)
}

// through returns r over its one input in pushed down by the conjuncts down (over in's output),
// filtered by kept (conjuncts over r's output that stop above it).
func (fp *filterPusher) through(r plan.Rel, in plan.Rel, down, kept []expr.Expression) (plan.Rel, error) {
	fp.changed = fp.changed || len(down) > 0
	pushed, err := fp.push(in, down)
	if err != nil {
		return nil, err
	}
	out, err := r.Copy(pushed)
	if err != nil {
		return nil, err
	}
	return fp.filter(out, kept)
}

// push returns a relation equal to rel filtered by above (conjuncts over rel's output).
func (fp *filterPusher) push(rel plan.Rel, above []expr.Expression) (plan.Rel, error) {
	mapping := rel.OutputMapping()
	// direct maps an output column of rel to its direct output (before the emit mapping).
	direct := func(i int) (int, bool) {
		if mapping == nil {
			return i, true
		}
		if i < 0 || i >= len(mapping) {
			return 0, false
		}
		return int(mapping[i]), true
	}
	if _, read := rel.(*plan.NamedTableReadRel); !read && fp.isFalsy(above) {
		// No row passes: every read under rel reads nothing, and the filter stays above.
		out, err := fp.nothing(rel)
		if err != nil {
			return nil, err
		}
		return fp.filter(out, above)
	}
	switch r := rel.(type) {
	case *plan.NamedTableReadRel:
		// The conjuncts stay over the read's output: a FilterRel directly above the read sees
		// that (the base schema itself when, as in the binder's plans, it has no emit mapping).
		var conj []expr.Expression
		for _, c := range above {
			conj = append(conj, splitConj(c)...)
		}
		return fp.atRead(r, conj)
	case *plan.FilterRel:
		own := splitConj(r.Condition())
		if mapping != nil {
			down, kept := remapAll(above, direct, false)
			changed := fp.changed
			out, err := fp.through(r, r.Input(), down, kept)
			fp.changed = changed // passing a FilterRel is no change (see changed)
			return out, err
		}
		return fp.push(r.Input(), append(own, above...))
	case *plan.SortRel:
		down, kept := remapAll(above, direct, false)
		return fp.through(r, r.Input(), down, kept)
	case *plan.ProjectRel:
		n := len(r.Input().RecordType().Types())
		exprs := r.Expressions()
		// Over window functions, only filters on columns that partition every window pass
		// (windowPartitionColumns, window.go).
		keys, windowed := windowPartitionColumns(exprs)
		src := func(i int) (int, bool) {
			d, ok := direct(i)
			if !ok {
				return 0, false
			}
			if windowed {
				return d, d < n && keys[d]
			}
			if d < n {
				return d, true
			}
			if k := d - n; k < len(exprs) {
				if fr, ok := passThrough(exprs[k]); ok {
					return rootFieldIndex(fr)
				}
			}
			return 0, false
		}
		down, kept := remapAll(above, src, windowed)
		return fp.through(r, r.Input(), down, kept)
	case *plan.AggregateRel:
		refs := r.GroupingReferences()
		groups := r.GroupingExpressions()
		src := func(i int) (int, bool) {
			d, ok := direct(i)
			if !ok || len(refs) != 1 || d >= len(refs[0]) {
				return 0, false
			}
			g := int(refs[0][d])
			if g >= len(groups) {
				return 0, false
			}
			if fr, ok := groups[g].(*expr.FieldReference); ok {
				return rootFieldIndex(fr)
			}
			return 0, false
		}
		down, kept := remapAll(above, src, true)
		return fp.through(r, r.Input(), down, kept)
	case *plan.FetchRel:
		if r.Offset() == 0 && r.Count() == plan.FETCH_COUNT_ALL_RECORDS {
			// Keeping every row (the binder's emit of a subquery's ORDER BY without LIMIT, its
			// sort keys dropped), it is a projection: the conjuncts pass its emit mapping.
			down, kept := remapAll(above, direct, false)
			return fp.through(r, r.Input(), down, kept)
		}
		in, err := fp.push(r.Input(), nil)
		if err != nil {
			return nil, err
		}
		out, err := r.Copy(in)
		if err != nil {
			return nil, err
		}
		return fp.filter(out, above)
	case *plan.SetRel:
		down, kept := remapAll(above, direct, false)
		if r.Op() == plan.SetOpUnspecified {
			down, kept = nil, above
		}
		fp.changed = fp.changed || len(down) > 0
		ins := make([]plan.Rel, len(r.Inputs()))
		for i, in := range r.Inputs() {
			var err error
			if ins[i], err = fp.push(in, down); err != nil {
				return nil, err
			}
		}
		out, err := r.Copy(ins...)
		if err != nil {
			return nil, err
		}
		return fp.filter(out, kept)
	case *plan.JoinRel:
		return fp.join(r, above, direct)
	case *plan.ExtensionSingleRel:
		if _, ok := r.Definition().(*ProjectSet); ok {
			// The conjuncts over its input's columns pass it: an input row they drop
			// yields no row (outer or not).
			down, kept := inputConjuncts(above, r)
			return fp.through(r, r.Input(), down, kept)
		}
	case *plan.ExtensionMultiRel:
		// A recursive query (recursive.go): the conjuncts stay above it (its rows are its
		// terms' of every iteration); its terms' own filters are pushed within them.
		ins := make([]plan.Rel, len(r.GetInputs()))
		for i, in := range r.GetInputs() {
			var err error
			if ins[i], err = fp.push(in, nil); err != nil {
				return nil, err
			}
		}
		out, err := r.Copy(ins...)
		if err != nil {
			return nil, err
		}
		return fp.filter(out, above)
	}
	// A relation kind the pusher does not know (routesOf refuses it later): unchanged.
	return fp.filter(rel, above)
}

// passThrough reads a projected expression as an input column passed through: a plain field
// reference, possibly under casts that only make it nullable (the binder's UNION arms).
func passThrough(e expr.Expression) (*expr.FieldReference, bool) {
	for {
		c, ok := e.(*expr.Cast)
		if !ok || !sameType(c.Type, c.Input.GetType()) {
			break
		}
		e = c.Input
	}
	fr, ok := e.(*expr.FieldReference)
	return fr, ok
}

// filter puts conj (conjuncts over rel's output) in a FilterRel above rel; rel itself when
// there are none.
func (fp *filterPusher) filter(rel plan.Rel, conj []expr.Expression) (plan.Rel, error) {
	if len(conj) == 0 {
		return rel, nil
	}
	cond, err := fp.and(conj)
	if err != nil {
		return nil, err
	}
	f, err := plan.NewBuilderDefault().Filter(rel, cond)
	if err != nil {
		return nil, fmt.Errorf("substrait: push filters: %w", err)
	}
	return f, nil
}

// and joins conjuncts with functions_boolean's and (one conjunct stands alone).
func (fp *filterPusher) and(conj []expr.Expression) (expr.Expression, error) {
	if len(conj) == 1 {
		return conj[0], nil
	}
	args := make([]types.FuncArg, len(conj))
	for i, c := range conj {
		args[i] = c
	}
	f, err := expr.NewCustomScalarFunc(fp.reg, extensions.NewScalarFuncVariant(extensions.ID{URN: URNBoolean, Name: "and"}), booleanType(), nil, args...)
	if err != nil {
		return nil, fmt.Errorf("substrait: push filters: %w", err)
	}
	return f, nil
}

// remapAll rewrites each conjunct of conj (nested ands split) through src, which maps a
// column of the relation above to one of the relation below: down holds the conjuncts every
// column of which maps (rewritten), kept the others (unchanged). needRef keeps conjuncts
// that reference no column.
func remapAll(conj []expr.Expression, src func(int) (int, bool), needRef bool) (down, kept []expr.Expression) {
	for _, c := range conj {
		for _, c := range splitConj(c) {
			if m, ok := remapRefs(c, src, needRef); ok {
				down = append(down, m)
			} else {
				kept = append(kept, c)
			}
		}
	}
	return down, kept
}

// remapRefs rewrites the root field references of e through src; false when one does not
// map (or is not a root reference), or when needRef is set and e references no column.
func remapRefs(e expr.Expression, src func(int) (int, bool), needRef bool) (expr.Expression, bool) {
	ok, refs := true, 0
	var visit func(e expr.Expression) expr.Expression
	visit = func(e expr.Expression) expr.Expression {
		if fr, isRef := e.(*expr.FieldReference); isRef {
			i, root := rootFieldIndex(fr)
			if !root {
				ok = false
				return e
			}
			j, found := src(i)
			if !found {
				ok = false
				return e
			}
			refs++
			if j == i {
				return e
			}
			nr, err := expr.NewRootFieldRefFromType(expr.NewStructFieldRef(int32(j)), fr.GetType())
			if err != nil {
				ok = false
				return e
			}
			return nr
		}
		return e.Visit(visit)
	}
	out := visit(e)
	if !ok || (needRef && refs == 0) {
		return nil, false
	}
	return out, true
}

// join pushes the conjuncts above a JoinRel (over its output, direct maps them to its direct
// output) and those of its condition into its inputs where the join type allows (see
// filterPusher).
func (fp *filterPusher) join(r *plan.JoinRel, above []expr.Expression, direct func(int) (int, bool)) (plan.Rel, error) {
	if err := checkJoinType(r.Type()); err != nil {
		return nil, err
	}
	nl := len(r.Left().RecordType().Types())
	t := r.Type()
	// Conjuncts above, over the join's output: first onto its direct output.
	mapped, keptAbove := remapAll(above, direct, false)
	if r.OutputMapping() != nil {
		mapped, keptAbove = nil, above
	}
	// An outer join under a conjunct that no NULL-extended row passes (a comparison of a
	// column of that side) is the join that does not extend that side (the textbook
	// outer-join simplification): LEFT JOIN … WHERE b.x = 1 is an inner join, so b's route
	// may come from that WHERE.
	rejects := func(lo, hi int) bool {
		return slices.ContainsFunc(mapped, func(c expr.Expression) bool { return nullRejecting(c, lo, hi) })
	}
	width := len(r.JoinedRecordType().Types())
	switch {
	case t == plan.JoinTypeLeft && rejects(nl, width),
		t == plan.JoinTypeRight && rejects(0, nl),
		t == plan.JoinTypeOuter && rejects(0, nl) && rejects(nl, width):
		t = plan.JoinTypeInner
	case t == plan.JoinTypeOuter && rejects(0, nl):
		t = plan.JoinTypeLeft
	case t == plan.JoinTypeOuter && rejects(nl, width):
		t = plan.JoinTypeRight
	}
	var whereL, whereR, onL, onR bool
	switch t {
	case plan.JoinTypeInner:
		whereL, whereR, onL, onR = true, true, true, true
	case plan.JoinTypeLeft, plan.JoinTypeLeftSemi, plan.JoinTypeLeftAnti, plan.JoinTypeLeftSingle:
		whereL, onR = true, true
	case plan.JoinTypeRight:
		whereR, onL = true, true
	}
	leftOf := func(i int) (int, bool) { return i, i < nl }
	rightOf := func(i int) (int, bool) { return i - nl, i >= nl }
	split := func(conj []expr.Expression, l, r bool) (downL, downR, kept []expr.Expression) {
		// A conjunct reading a deferred error is evaluated on the pairs (deferred.go).
		var pinned []expr.Expression
		for _, c := range conj {
			if HasDeferredRaise(c) {
				pinned = append(pinned, c)
			} else {
				kept = append(kept, c)
			}
		}
		if l {
			downL, kept = remapAll(kept, leftOf, true)
		}
		if r {
			downR, kept = remapAll(kept, rightOf, true)
		}
		return downL, downR, append(kept, pinned...)
	}
	aboveL, aboveR, restAbove := split(mapped, whereL, whereR)
	var cond []expr.Expression
	if e := r.Expr(); e != nil && !isTrueLiteral(e) {
		cond = splitConj(e)
	}
	condL, condR, restCond := split(cond, onL, onR)
	// A side's filters of a column by constants hold for the other side's column that the
	// join equates with it, on a side whose rows matter only where they match (transfer):
	// `JOIN flights b ON b.origin = a.origin WHERE a.origin = 'ORD'` pins b to ORD too, and a
	// correlated `EXISTS (SELECT … WHERE i.origin = o.origin …)` its inner read.
	eqs := cond
	if t == plan.JoinTypeInner {
		eqs = append(slices.Clone(cond), mapped...)
	}
	if onR {
		condR = append(condR, transfer(append(slices.Clone(condL), aboveL...), eqs, nl, r.Left().RecordType().Types(), r.Right().RecordType().Types(), false)...)
	}
	if onL {
		condL = append(condL, transfer(append(slices.Clone(condR), aboveR...), eqs, nl, r.Left().RecordType().Types(), r.Right().RecordType().Types(), true)...)
	}
	fp.changed = fp.changed || len(aboveL)+len(aboveR)+len(condL)+len(condR) > 0
	// A constant false or NULL join condition matches no pair: a side the join does not
	// preserve contributes no row and reads nothing (the right of generate_series(1, 3) g
	// LEFT JOIN flights f ON false; both sides of an inner join; neither of a full join).
	falseOn := fp.isFalsy(cond)
	side := func(in plan.Rel, conj []expr.Expression, dropped bool) (plan.Rel, error) {
		if falseOn && dropped {
			return fp.nothing(in)
		}
		return fp.push(in, conj)
	}
	left, err := side(r.Left(), append(condL, aboveL...), onL)
	if err != nil {
		return nil, err
	}
	right, err := side(r.Right(), append(condR, aboveR...), onR)
	if err != nil {
		return nil, err
	}
	newCond := expr.Expression(expr.NewPrimitiveLiteral(true, false))
	if len(restCond) > 0 {
		if newCond, err = fp.and(restCond); err != nil {
			return nil, err
		}
	}
	var out plan.Rel
	if t != r.Type() {
		fp.changed = true
		var post expr.Expression
		if f := r.PostJoinFilter(); f != nil && !isTrueLiteral(f) {
			post = f
		}
		if out, err = plan.NewBuilderDefault().JoinAndFilter(left, right, newCond, post, t); err != nil {
			return nil, fmt.Errorf("substrait: push filters: %w", err)
		}
	} else {
		first := true
		out, err = r.CopyWithExpressionRewrite(func(e expr.Expression) (expr.Expression, error) {
			if first {
				first = false
				return newCond, nil
			}
			return e, nil
		}, left, right)
		if err != nil {
			return nil, err
		}
	}
	// What stays above: the conjuncts that did not map onto the direct output and those that
	// went to no side (the direct output is the output: no emit mapping).
	var stay []expr.Expression
	stay = append(stay, keptAbove...)
	stay = append(stay, restAbove...)
	return fp.filter(out, stay)
}

// transfer returns, for each conjunct of from (over one side of a join: the left, or the
// right when toLeft) that compares one of its columns with constants (literals, parameters),
// the same conjunct over each column of the other side that a conjunct of eqs (over the join's
// columns, the left's nl first) equates with it (=, IS NOT DISTINCT FROM, plain columns of one
// type): every matching pair of rows has equal values there, so the other side's rows that
// fail it match no row of this side. A conjunct with a function of the column, another column
// or a volatile operand is not carried.
func transfer(from, eqs []expr.Expression, nl int, lt, rt []types.Type, toLeft bool) []expr.Expression {
	type pair struct{ from, to int }
	var pairs []pair
	for _, e := range eqs {
		f, ok := e.(*expr.ScalarFunction)
		if !ok || f.ID().URN != URNComparison || (f.Name() != "equal" && f.Name() != "is_not_distinct_from") || f.NArgs() != 2 {
			continue
		}
		a, okA := f.Arg(0).(*expr.FieldReference)
		b, okB := f.Arg(1).(*expr.FieldReference)
		if !okA || !okB {
			continue
		}
		i, rootA := rootFieldIndex(a)
		j, rootB := rootFieldIndex(b)
		if !rootA || !rootB {
			continue
		}
		if i > j {
			i, j = j, i
		}
		if i >= nl || j < nl || j-nl >= len(rt) || !sameType(lt[i], rt[j-nl]) {
			continue
		}
		if toLeft {
			pairs = append(pairs, pair{from: j - nl, to: i})
		} else {
			pairs = append(pairs, pair{from: i, to: j - nl})
		}
	}
	if len(pairs) == 0 {
		return nil
	}
	var out []expr.Expression
	for _, c := range from {
		col, ok := constantFilter(c)
		if !ok {
			continue
		}
		for _, p := range pairs {
			if p.from != col {
				continue
			}
			if m, ok := remapRefs(c, func(k int) (int, bool) { return p.to, k == p.from }, true); ok {
				out = append(out, m)
			}
		}
	}
	return out
}

// constantFilter reports a conjunct that compares one root column with constants: a
// comparison (=, <>, <, <=, >, >=) of the column and a literal or parameter (under casts), or
// the column IN a list of them. It returns the column.
func constantFilter(c expr.Expression) (int, bool) {
	col := func(e any) (int, bool) {
		fr, ok := e.(*expr.FieldReference)
		if !ok {
			return 0, false
		}
		return rootFieldIndex(fr)
	}
	constant := func(e any) bool {
		x, ok := e.(expr.Expression)
		if !ok {
			return false
		}
		_, ok = literalOf(x)
		return ok
	}
	switch f := c.(type) {
	case *expr.ScalarFunction:
		switch {
		case f.ID().URN != URNComparison || f.NArgs() != 2:
			return 0, false
		case f.Name() != "equal" && f.Name() != "not_equal" && f.Name() != "lt" && f.Name() != "lte" && f.Name() != "gt" && f.Name() != "gte":
			return 0, false
		}
		if i, ok := col(f.Arg(0)); ok && constant(f.Arg(1)) {
			return i, true
		}
		if i, ok := col(f.Arg(1)); ok && constant(f.Arg(0)) {
			return i, true
		}
	case *expr.SingularOrList:
		i, ok := col(f.Value)
		if !ok {
			return 0, false
		}
		for _, o := range f.Options {
			if !constant(o) {
				return 0, false
			}
		}
		return i, true
	}
	return 0, false
}

// nullRejecting reports a conjunct that is never true when the columns [lo, hi) are all
// NULL: a comparison (=, <>, <, <=, >, >=) or IN list one of whose operands is a plain
// reference to one of them (SQL's comparisons of NULL are NULL).
func nullRejecting(c expr.Expression, lo, hi int) bool {
	in := func(e any) bool {
		fr, ok := e.(*expr.FieldReference)
		if !ok {
			return false
		}
		i, root := rootFieldIndex(fr)
		return root && i >= lo && i < hi
	}
	switch f := c.(type) {
	case *expr.ScalarFunction:
		if f.ID().URN != URNComparison {
			return false
		}
		switch f.Name() {
		case "equal", "not_equal", "lt", "lte", "gt", "gte":
		default:
			return false
		}
		for i := range f.NArgs() {
			if in(f.Arg(i)) {
				return true
			}
		}
	case *expr.SingularOrList:
		return in(f.Value)
	}
	return false
}

// isTrueLiteral reports the literal true.
func isTrueLiteral(e expr.Expression) bool {
	b, ok := e.(*expr.PrimitiveLiteral[bool])
	return ok && b.Value
}
