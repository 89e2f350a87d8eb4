package substrait

import (
	"errors"
	"fmt"
	"slices"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/plan"
	"github.com/substrait-io/substrait-go/v8/types"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Joins and subqueries (docs/architecture.md, "The executor and its fragments"): FROM lists,
// JOIN … ON / USING / NATURAL and CROSS JOIN become JoinRels; EXISTS, IN (SELECT …) and
// their negations written as WHERE conjuncts become semi and anti JoinRels, and scalar
// subqueries single JoinRels (JOIN_TYPE_LEFT_SINGLE), decorrelated when their only
// correlations are equalities between an outer and an inner expression in their WHERE. The
// executor runs every JoinRel as a hash join on its equalities (scan/join.go).

// joinTypes maps PostgreSQL's join types onto Substrait's.
var pgJoinTypes = map[pg.JoinType]plan.JoinType{
	pg.JoinType_JOIN_INNER: plan.JoinTypeInner,
	pg.JoinType_JOIN_LEFT:  plan.JoinTypeLeft,
	pg.JoinType_JOIN_RIGHT: plan.JoinTypeRight,
	pg.JoinType_JOIN_FULL:  plan.JoinTypeOuter,
}

// fromList binds a FROM list of several items: their cross product, left to right.
// A derived table's deferred targets (joinItem) raise their errors on the product's rows.
func (bd *binder) fromList(items []*pg.Node) (*fromItem, error) {
	acc, accErr, err := bd.joinItem(items[0], nil, false)
	if err != nil {
		return nil, err
	}
	for _, it := range items[1:] {
		if rf := it.GetRangeFunction(); rf != nil && needsProjectSet(rf) {
			// A function after other items is called on each of their rows (PostgreSQL's
			// implicit LATERAL of a function in FROM): a ProjectSet over them.
			if len(accErr) > 0 {
				if acc.boundRel, err = bd.raiseColumns(acc.boundRel, accErr); err != nil {
					return nil, err
				}
				accErr = nil
			}
			j, err := bd.projectSet(acc.boundRel, rf, false)
			if err != nil {
				return nil, err
			}
			acc = &fromItem{boundRel: j}
			continue
		}
		if rs := it.GetRangeSubselect(); rs.GetLateral() {
			if len(accErr) > 0 {
				if acc.boundRel, err = bd.raiseColumns(acc.boundRel, accErr); err != nil {
					return nil, err
				}
				accErr = nil
			}
			j, err := bd.lateral(acc.boundRel, rs, plan.JoinTypeInner, nil)
			if err != nil {
				return nil, err
			}
			acc = &fromItem{boundRel: j}
			continue
		}
		r, rErr, err := bd.joinItem(it, nil, false)
		if err != nil {
			return nil, err
		}
		j, err := bd.joinRels(acc.boundRel, r.boundRel, plan.JoinTypeInner, trueLit())
		if err != nil {
			return nil, err
		}
		acc, accErr = &fromItem{boundRel: j}, shiftErrs(accErr, rErr, len(acc.sc.cols))
	}
	if len(accErr) > 0 {
		br, err := bd.raiseColumns(acc.boundRel, accErr)
		if err != nil {
			return nil, err
		}
		acc = &fromItem{boundRel: br}
	}
	return acc, nil
}

func trueLit() expr.Expression { return expr.NewPrimitiveLiteral(true, false) }

// joinRels joins l and r under cond (over l's columns then r's): the output scope is both
// scopes, the side(s) an outer join NULL-extends made nullable.
func (bd *binder) joinRels(l, r *boundRel, jt plan.JoinType, cond expr.Expression) (*boundRel, error) {
	j, err := bd.b.Join(l.rel, r.rel, cond, jt)
	if err != nil {
		return nil, fmt.Errorf("bind join: %w", err)
	}
	ts := j.RecordType().Types()
	sc := &scope{}
	names := []string{}
	for _, in := range []*boundRel{l, r} {
		if (jt == plan.JoinTypeLeftSemi || jt == plan.JoinTypeLeftAnti) && in == r {
			break
		}
		for i, c := range in.sc.cols {
			c.typ = ts[len(sc.cols)]
			sc.cols = append(sc.cols, c)
			if i < len(in.names) {
				names = append(names, in.names[i])
			} else {
				names = append(names, c.name)
			}
		}
	}
	return &boundRel{rel: j, sc: sc, names: names}, nil
}

// joinedScope is the scope a join condition is bound in: l's columns then r's.
func joinedScope(l, r *scope) *scope {
	return &scope{cols: append(slices.Clone(l.cols), r.cols...)}
}

// joinExpr binds JOIN … ON / USING / NATURAL / CROSS JOIN.
func (bd *binder) joinExpr(je *pg.JoinExpr) (*fromItem, error) {
	jt, ok := pgJoinTypes[je.GetJointype()]
	if !ok {
		return nil, unimplemented("this join type")
	}
	if je.GetAlias() != nil {
		return nil, unimplementedAre("aliases of a join")
	}
	if je.GetJoinUsingAlias() != nil {
		return nil, unimplementedAre("aliases of USING columns")
	}
	// Under an inner join without USING, a derived table's deferred targets (joinItem) raise
	// their errors on the joined rows; so do those of the NULL-extended side of a LEFT or
	// RIGHT join that are strict.
	plain := len(je.GetUsingClause()) == 0 && !je.GetIsNatural()
	inner := jt == plan.JoinTypeInner && plain
	// The references of ON's conjuncts that are not equalities, which raiseLateralCond
	// places: an equality is a hash or merge key, whose sides PostgreSQL evaluates on every
	// row of theirs.
	var onConds []*pg.Node
	if q := je.GetQuals(); q != nil {
		for _, c := range splitAnd(q) {
			if ae := c.GetAExpr(); ae == nil || ae.GetKind() != pg.A_Expr_Kind_AEXPR_OP || len(ae.GetName()) != 1 || ae.GetName()[0].GetString_().GetSval() != "=" {
				onConds = append(onConds, c)
			}
		}
	}
	on := bd.refNames(onConds)
	item := func(n *pg.Node, right bool) (*fromItem, map[int]int, error) {
		switch {
		case inner:
			return bd.joinItem(n, on, false)
		case plain && (jt == plan.JoinTypeLeft && right || jt == plan.JoinTypeRight && !right):
			return bd.joinItem(n, on, true)
		}
		f, err := bd.fromOne(n)
		return f, nil, err
	}
	lf, lErr, err := item(je.GetLarg(), false)
	if err != nil {
		return nil, err
	}
	if rf := je.GetRarg().GetRangeFunction(); rf != nil && needsProjectSet(rf) {
		return bd.joinSet(lf, lErr, je, rf, jt)
	}
	if rs := je.GetRarg().GetRangeSubselect(); rs.GetLateral() && len(lErr) > 0 {
		br, err := bd.raiseColumns(lf.boundRel, lErr)
		if err != nil {
			return nil, err
		}
		lf, lErr = &fromItem{boundRel: br}, nil
	}
	if rs := je.GetRarg().GetRangeSubselect(); rs.GetLateral() {
		if len(je.GetUsingClause()) > 0 || je.GetIsNatural() {
			return nil, unimplementedAre("LATERAL subqueries joined with USING or NATURAL")
		}
		j, err := bd.lateral(lf.boundRel, rs, jt, je.GetQuals())
		if err != nil {
			return nil, err
		}
		return &fromItem{boundRel: j}, nil
	}
	rf, rErr, err := item(je.GetRarg(), true)
	if err != nil {
		return nil, err
	}
	l, r := lf.boundRel, rf.boundRel
	sc := joinedScope(l.sc, r.sc)
	var using []string
	for _, u := range je.GetUsingClause() {
		using = append(using, u.GetString_().GetSval())
	}
	if je.GetIsNatural() {
		for _, c := range l.sc.cols {
			if c.hidden || slices.Contains(using, c.name) {
				continue
			}
			if slices.ContainsFunc(r.sc.cols, func(o col) bool { return !o.hidden && o.name == c.name }) {
				using = append(using, c.name)
			}
		}
	}
	var conj []expr.Expression
	type pair struct{ l, r int }
	var pairs []pair
	for _, name := range using {
		li, err := l.sc.lookup("", name)
		if err != nil {
			return nil, quoting(InvalidArgument, "42703", "column %q specified in USING clause does not exist in left table", name)
		}
		ri, err := r.sc.lookup("", name)
		if err != nil {
			return nil, quoting(InvalidArgument, "42703", "column %q specified in USING clause does not exist in right table", name)
		}
		lv, rv := typed(sc.ref(li)), typed(sc.ref(len(l.sc.cols)+ri))
		lv.bytea, lv.json, lv.jsonb, lv.bpchar = l.sc.cols[li].bytea, l.sc.cols[li].json, l.sc.cols[li].jsonb, l.sc.cols[li].bpchar
		rv.bytea, rv.json, rv.jsonb, rv.bpchar = r.sc.cols[ri].bytea, r.sc.cols[ri].json, r.sc.cols[ri].jsonb, r.sc.cols[ri].bpchar
		eq, err := bd.compare("=", lv, rv)
		var pe *Error
		if errors.As(err, &pe) && pe.SQLState == "42883" && opTypeName(lv) != opTypeName(rv) {
			// Types without a common one: PostgreSQL's select_common_type for the merged
			// column refuses them before any operator is looked up (one type without = , json
			// USING json, is the operator's 42883).
			lc, rc := l.sc.cols[li], r.sc.cols[ri]
			return nil, &Error{Code: InvalidArgument, SQLState: "42804", Msg: fmt.Sprintf("JOIN/USING types %s and %s cannot be matched",
				modTypeName(lc.typ, lc.bpchar, false, lc.typmod), modTypeName(rc.typ, rc.bpchar, false, rc.typmod))}
		}
		if err != nil {
			return nil, err
		}
		conj = append(conj, eq)
		pairs = append(pairs, pair{li, ri})
	}
	cond, err := bd.onCond(conj, je.GetQuals(), sc)
	if err != nil {
		return nil, err
	}
	valErr := shiftErrs(lErr, rErr, len(l.sc.cols))
	if len(valErr) > 0 {
		// A conjunct over the derived table alone PostgreSQL evaluates at its scan, one over
		// both sides on the joined rows (raiseLateralCond).
		if cond, err = bd.raiseLateralCond(cond, sc, len(l.sc.cols), valErr); err != nil {
			return nil, err
		}
	}
	j, err := bd.joinRels(l, r, jt, cond)
	if err != nil {
		return nil, err
	}
	if len(valErr) > 0 {
		if j, err = bd.raiseColumns(j, valErr); err != nil {
			return nil, err
		}
	}
	if len(pairs) == 0 {
		return &fromItem{boundRel: j}, nil
	}
	// USING: the merged columns first (the left's, the right's for a right join, their
	// COALESCE for a full join), then every other column; the sides' own columns stay
	// reachable qualified only.
	var exprs []expr.Expression
	var cols []col
	var ds []dscale
	nl := len(l.sc.cols)
	for k, p := range pairs {
		lv, rv := j.sc.ref(p.l), j.sc.ref(nl+p.r)
		n, err := bpcharCommon([]bval{{e: lv, bpchar: l.sc.cols[p.l].bpchar}, {e: rv, bpchar: r.sc.cols[p.r].bpchar}})
		if err != nil && jt != plan.JoinTypeOuter {
			// Each side's values keep their own length: the merged column is one side's.
			n, err = l.sc.cols[p.l].bpchar, nil
			if jt == plan.JoinTypeRight {
				n = r.sc.cols[p.r].bpchar
			}
		}
		if err != nil {
			return nil, err
		}
		v, err := bd.mergedColumn(j, nl, p.l, p.r, jt)
		if err != nil {
			return nil, err
		}
		exprs = append(exprs, v.e)
		cols = append(cols, col{name: using[k], typ: v.e.GetType(), bpchar: n, bytea: v.bytea, json: v.json, jsonb: v.jsonb, typmod: v.typmod})
		ds = append(ds, v.ds)
	}
	exprs, cols, err = bd.usingScales(exprs, cols, ds)
	if err != nil {
		return nil, err
	}
	width := len(j.sc.cols)
	mapping := make([]int32, 0, width+len(exprs))
	out := &boundRel{sc: &scope{}}
	for k := range pairs {
		mapping = append(mapping, int32(width+k))
		out.sc.cols = append(out.sc.cols, cols[k])
		out.names = append(out.names, using[k])
	}
	for i, c := range j.sc.cols {
		mapping = append(mapping, int32(i))
		isUsing := slices.ContainsFunc(pairs, func(p pair) bool { return p.l == i || nl+p.r == i })
		c.hidden = c.hidden || isUsing
		out.sc.cols = append(out.sc.cols, c)
		out.names = append(out.names, c.name)
	}
	// The merged columns' display scales (usingScales), hidden, last.
	for k := len(pairs); k < len(exprs); k++ {
		mapping = append(mapping, int32(width+k))
		out.sc.cols = append(out.sc.cols, cols[k])
		out.names = append(out.names, cols[k].name)
	}
	pr, err := bd.b.ProjectRemap(j.rel, mapping, exprs...)
	if err != nil {
		return nil, fmt.Errorf("bind USING: %w", err)
	}
	out.rel = pr
	return &fromItem{boundRel: out}, nil
}

// onCond is a join's condition: the conjuncts conj, then those of quals (JOIN … ON, may be
// nil) bound over sc; true when there are none.
func (bd *binder) onCond(conj []expr.Expression, quals *pg.Node, sc *scope) (expr.Expression, error) {
	if quals != nil {
		for _, c := range splitAnd(quals) {
			v, err := bd.bindExpr(c, sc)
			if err != nil {
				return nil, err
			}
			e, err := bd.coerce(v, booleanType(), "JOIN/ON")
			if err != nil {
				return nil, err
			}
			conj = append(conj, e)
		}
	}
	if len(conj) == 0 {
		return trueLit(), nil
	}
	return bd.and(conj)
}

// and is the conjunction of conj (one conjunct: itself).
func (bd *binder) and(conj []expr.Expression) (expr.Expression, error) {
	if len(conj) == 1 {
		return conj[0], nil
	}
	args := make([]types.FuncArg, len(conj))
	for i, c := range conj {
		args[i] = c
	}
	return bd.fn(URNBoolean, "and", booleanType(), args...)
}

// andNode is the conjunction of conds in SQL's syntax tree (nil for none, one: itself).
func andNode(conds []*pg.Node) *pg.Node {
	switch len(conds) {
	case 0:
		return nil
	case 1:
		return conds[0]
	}
	return &pg.Node{Node: &pg.Node_BoolExpr{BoolExpr: &pg.BoolExpr{Boolop: pg.BoolExprType_AND_EXPR, Args: conds}}}
}

// walkPG calls fn on every Node under m, not descending into a node for which fn returns
// false, nor into nested SELECTs (their own scope).
func walkPG(m protoreflect.Message, fn func(n *pg.Node) bool) {
	pgWalker{fn}.msg(m.Interface())
}

// subqueries binds the subqueries of a simple SELECT over its FROM item: WHERE conjuncts that
// are EXISTS, IN (SELECT …), or their negations become semi and anti joins onto from, and
// scalar subqueries of the select list and WHERE single joins adding a hidden column each
// (bd.sublinks); it returns the FROM item and the WHERE left to bind.
func (bd *binder) subqueries(from *fromItem, sel *pg.SelectStmt) (*fromItem, *pg.Node, error) {
	w := sel.GetWhereClause()
	var rest []*pg.Node
	if w != nil {
		for _, c := range splitAnd(w) {
			neg := false
			n := c
			if b := c.GetBoolExpr(); b != nil && b.GetBoolop() == pg.BoolExprType_NOT_EXPR && len(b.GetArgs()) == 1 {
				if sl := b.GetArgs()[0].GetSubLink(); sl != nil {
					neg, n = true, b.GetArgs()[0]
				}
			}
			sl := n.GetSubLink()
			if sl == nil || (sl.GetSubLinkType() != pg.SubLinkType_EXISTS_SUBLINK && sl.GetSubLinkType() != pg.SubLinkType_ANY_SUBLINK) {
				rest = append(rest, c)
				continue
			}
			br, err := bd.semiJoin(from.boundRel, sl, neg)
			if err != nil {
				return nil, nil, err
			}
			from = &fromItem{boundRel: br}
		}
	}
	// EXISTS anywhere in the WHERE left, and IN (SELECT …) under AND, OR and NOT only: mark
	// joins.
	var marks []mark
	for _, n := range rest {
		collectMarks(n, filterTrue, &marks)
	}
	nWhereMarks := len(marks)
	groupedSel := len(sel.GetGroupClause()) > 0 || sel.GetHavingClause() != nil || hasAggregate(sel.GetTargetList())
	byKeysSel := len(sel.GetGroupClause()) > 0 && bd.gsets[sel] == nil
	if !groupedSel || byKeysSel {
		// In the select list (and a grouped query's HAVING): marks as well, exact in any
		// expression. In a query grouped by keys, each is joined before grouping and grouped
		// by (as a scalar subquery's value, below), one value per group when its outer
		// references are grouped columns.
		for _, t := range sel.GetTargetList() {
			collectMarks(t, inExpression, &marks)
		}
		if h := sel.GetHavingClause(); h != nil {
			collectMarks(h, filterTrue, &marks)
		}
	}
	marked := map[*pg.SubLink]bool{}
	for k, m := range marks {
		br, corr, err := bd.markJoin(from.boundRel, m)
		if err != nil {
			return nil, nil, err
		}
		if groupedSel && k >= nWhereMarks {
			if err := groupedRefs(sel, from.sc, corr); err != nil {
				return nil, nil, err
			}
			if x := m.sl.GetTestexpr(); x != nil && (containsAggregate(x) || groupedRefs(sel, from.sc, []correlation{{outer: x}}) != nil) {
				return nil, nil, unimplementedAre("IN (SELECT …) in a grouped query over other than GROUP BY columns")
			}
			if bd.subqueryKeys == nil {
				bd.subqueryKeys = map[*pg.SelectStmt][]int{}
			}
			bd.subqueryKeys[sel] = append(bd.subqueryKeys[sel], len(br.sc.cols)-1)
		}
		from = &fromItem{boundRel: br}
		marked[m.sl] = true
	}
	// Scalar subqueries, and any other subquery left in an expression.
	var scalars []*pg.SubLink
	var bad *Error
	check := func(n *pg.Node) bool {
		sl := n.GetSubLink()
		if sl == nil {
			return true
		}
		if marked[sl] {
			return false
		}
		if sl.GetSubLinkType() != pg.SubLinkType_EXPR_SUBLINK {
			if bad == nil {
				bad = sublinkRefusal(sl)
			}
			return false
		}
		scalars = append(scalars, sl)
		return false
	}
	for _, n := range rest {
		check(n)
		walkPG(n.ProtoReflect(), check)
	}
	nWhere := len(scalars)
	for _, t := range sel.GetTargetList() {
		walkPG(t.ProtoReflect(), check)
	}
	nTargets := len(scalars)
	if h := sel.GetHavingClause(); h != nil {
		check(h)
		walkPG(h.ProtoReflect(), check)
	}
	nHaving := len(scalars) - nTargets
	for _, n := range sel.GetSortClause() {
		walkPG(n.ProtoReflect(), check)
	}
	for _, n := range sel.GetGroupClause() {
		walkPG(n.ProtoReflect(), check)
	}
	if bad != nil {
		return nil, nil, bad
	}
	// In a query grouped by keys, an uncorrelated scalar subquery of the select list or HAVING
	// is one value for every row: its hidden column is grouped by too (bindSimple), which
	// splits no group, and they read it as a key. Without GROUP BY, grouping by it would turn
	// the one row of an aggregate over no row into none. WHERE's are read before grouping.
	byKeys := len(sel.GetGroupClause()) > 0 && bd.gsets[sel] == nil
	grouped := len(sel.GetGroupClause()) > 0 || sel.GetHavingClause() != nil || hasAggregate(sel.GetTargetList())
	switch {
	case len(scalars) > nTargets+nHaving:
		return nil, nil, unimplementedAre("scalar subqueries in ORDER BY or GROUP BY")
	case len(scalars) > nWhere && grouped && !byKeys:
		return nil, nil, unimplementedAre("scalar subqueries in an aggregate query without GROUP BY")
	}
	compared := comparedSublinks(sel)
	for k, sl := range scalars {
		// Grouped by, a select list's or HAVING's subquery value raises its errors where
		// it is computed; elsewhere where the expression reading it evaluates it.
		atSite := !(grouped && k >= nWhere)
		br, corr, err := bd.scalarJoin(from.boundRel, sl, atSite)
		if err != nil {
			return nil, nil, err
		}
		keys := []int{len(br.sc.cols) - 1}
		// A numeric whose display scale varies by row carries it beside (scaleJoin), unless
		// it is only compared (by value).
		if !compared[sl] {
			if sbr, ok := bd.scaleJoin(br, sl, atSite); ok {
				br = sbr
				keys = append(keys, len(br.sc.cols)-1)
			}
		}
		if grouped && k >= nWhere {
			// A correlated one is a function of its outer references: one value per group
			// when they are all grouping columns, as PostgreSQL requires.
			if err := groupedRefs(sel, from.sc, corr); err != nil {
				return nil, nil, err
			}
			if bd.subqueryKeys == nil {
				bd.subqueryKeys = map[*pg.SelectStmt][]int{}
			}
			bd.subqueryKeys[sel] = append(bd.subqueryKeys[sel], keys...)
		}
		from = &fromItem{boundRel: br}
	}
	return from, andNode(rest), nil
}

// correlation is one equality of a correlated subquery's WHERE: an inner expression equal to
// an outer one; or, nullSafe, an outer column that the subquery's relation answers for
// (decorrelateDomain), matched IS NOT DISTINCT FROM.
type correlation struct {
	inner, outer *pg.Node
	nullSafe     bool
}

// isPlainCount reports a count() call without FILTER (its value over no row is 0).
func isPlainCount(t *pg.Node) bool {
	fc := t.GetFuncCall()
	return fc != nil && len(fc.GetFuncname()) > 0 && fc.GetFuncname()[len(fc.GetFuncname())-1].GetString_().GetSval() == "count" && fc.GetOver() == nil && fc.GetAggFilter() == nil
}

// harmlessLimit reports a LIMIT that EXISTS ignores: a constant of at least 1, or ALL, and
// no OFFSET.
func harmlessLimit(sub *pg.SelectStmt) bool {
	lc := sub.GetLimitCount()
	if lc == nil || sub.GetLimitOffset() != nil || sub.GetOp() != pg.SetOperation_SETOP_NONE {
		return false
	}
	c := lc.GetAConst()
	if c == nil {
		return false
	}
	return c.GetIsnull() || (c.GetIval() != nil && c.GetIval().GetIval() >= 1)
}

// decorrelate binds sub, a subquery of l (the outer relation, its scope the outer scope). An
// uncorrelated one binds as it is. A correlated simple SELECT whose references to outer
// columns all sit in WHERE conjuncts `inner = outer` (either order), without LIMIT, DISTINCT,
// GROUP BY or HAVING, binds with those conjuncts removed and their inner expressions as its
// first output columns (keys), then its own select list, grouped by the keys when group is set
// (a scalar subquery of one aggregate). Any other correlated SELECT is decorrelated over its
// domain (decorrelateDomain, domain.go). Its WITH queries are visible while its FROM binds
// (one reading outer columns is refused by name); set operations (a UNION under EXISTS, IN,
// ANY or ALL is expanded before, quantified.go's expandUnion) and aggregates of outer columns
// are refused by name.
//
// With deferErrs, the select-list expressions of a subquery decorrelated on equalities that
// may fail are deferred (deferred.go): errs holds, per target, the position of its error
// column in the relation (after every target), -1 for none; nil when none is deferred.
func (bd *binder) decorrelate(sub *pg.SelectStmt, l *boundRel, group, deferErrs bool) (*boundRel, []correlation, []int, error) {
	outer := l.sc
	bd.level++
	bd.enclosing = append(bd.enclosing, enclosingScope{sc: outer, level: bd.level})
	defer func() { bd.level--; bd.enclosing = bd.enclosing[:len(bd.enclosing)-1] }()
	br, err := bd.bindSelect(sub)
	if err == nil {
		if group && deferErrs && deferrableAlone(sub, bd.regrouped[sub]) {
			// An uncorrelated scalar subquery: PostgreSQL evaluates it (an initplan) when an
			// expression first reads it, so its select list's errors wait there too.
			grouped := len(sub.GetGroupClause()) > 0 || sub.GetHavingClause() != nil || hasAggregate(sub.GetTargetList())
			if sub.GetLimitCount() == nil && sub.GetLimitOffset() == nil && !slices.ContainsFunc(sub.GetTargetList(), func(t *pg.Node) bool {
				return mayDeferTarget(t.GetResTarget().GetVal(), grouped)
			}) {
				// deferTargets would defer nothing: no clone (it would copy every subquery
				// nested in sub, each level of a nest of scalar subqueries all those below it).
				return br, nil, nil, nil
			}
			c := proto.Clone(sub).(*pg.SelectStmt)
			var errs []int
			switch {
			case c.GetLimitCount() == nil && c.GetLimitOffset() == nil:
				errs = deferTargets(c, 0, grouped)
			case !deferrableLimit(c, grouped):
				// PostgreSQL computes rows the LIMIT drops (the groups, the sorted rows, the
				// rows OFFSET skips): their errors stay computed on every row.
				return br, nil, nil, nil
			case !grouped && len(c.GetSortClause()) > 0:
				errs = deferLimitedSort(c, nil, deferTargets(c, 0, false))
			default:
				errs = deferTargets(c, 0, grouped)
			}
			if !slices.ContainsFunc(errs, func(i int) bool { return i >= 0 }) {
				return br, nil, nil, nil
			}
			dbr, derr := bd.bindSelect(c)
			if derr != nil {
				return nil, nil, nil, derr
			}
			return dbr, nil, errs, nil
		}
		if group && deferErrs && bd.regrouped[sub] && unionOfPlain(sub, true) {
			// A UNION [ALL] of plain SELECTs, each arm's errors deferred (deferUnion).
			c := proto.Clone(sub).(*pg.SelectStmt)
			if !deferUnion(c) {
				return br, nil, nil, nil
			}
			dbr, derr := bd.bindSelect(c)
			if derr != nil {
				return nil, nil, nil, derr
			}
			return dbr, nil, []int{1}, nil
		}
		return br, nil, nil, nil
	}
	// A correlated subquery fails binding alone on its outer references (an unknown column or
	// table), or on an aggregate of outer columns where aggregates are not allowed.
	var pe *Error
	if !errors.As(err, &pe) {
		return nil, nil, nil, err
	}
	nameErr := pe.SQLState == "42703" || pe.SQLState == "42P01"
	if !nameErr && pe.Msg != "aggregate functions are not allowed here" {
		return nil, nil, nil, err
	}
	if sub.GetOp() != pg.SetOperation_SETOP_NONE && sub.GetOp() != pg.SetOperation_SET_OPERATION_UNDEFINED {
		return nil, nil, nil, unimplementedAre("correlated subqueries with set operations (but a UNION under EXISTS, IN, ANY or ALL)")
	}
	if wc := sub.GetWithClause(); wc != nil {
		// Its WITH queries are FROM items of its own: visible while its FROM binds here; the
		// rewritten subquery keeps its WITH clause.
		pop, err := bd.pushWith(wc)
		if err != nil {
			return nil, nil, nil, err
		}
		defer pop()
	}
	inner := &scope{} // without FROM: every column reference is outer (decorrelateDomain)
	lateral := false  // a function in its FROM reads the outer row (lateralScope)
	if len(sub.GetFromClause()) > 0 {
		inFrom, ferr := bd.from(sub.GetFromClause())
		if ferr != nil {
			if errors.As(ferr, &pe) && (pe.SQLState == "42703" || pe.SQLState == "42P01") && sub.GetWithClause() != nil {
				return nil, nil, nil, unimplementedAre("correlated subqueries whose WITH queries read the outer query's columns")
			}
			if errors.As(ferr, &pe) && (pe.SQLState == "42703" || pe.SQLState == "42P01") && slices.ContainsFunc(sub.GetFromClause(), readsColumns) {
				// A function in its FROM reads the outer query's columns (projectset.go):
				// called on each domain row (domain.go).
				sc, lerr := bd.lateralScope(sub.GetFromClause(), l)
				if errors.As(lerr, &pe) && (pe.SQLState == "42703" || pe.SQLState == "42P01") {
					// One under a join of its FROM, or a column of no query.
					return nil, nil, nil, unimplementedAre("functions in a correlated subquery's FROM that read the outer query's columns under a join")
				}
				if lerr != nil {
					return nil, nil, nil, lerr
				}
				inFrom, lateral = &fromItem{boundRel: &boundRel{sc: sc}}, true
			} else {
				return nil, nil, nil, ferr
			}
		}
		inner = inFrom.sc
	}
	// outerRef reports whether a column reference resolves only in the outer scope; an
	// unresolvable one is the subquery's binding error.
	isOuter := func(n *pg.Node) (bool, error) {
		cr := n.GetColumnRef()
		qual, name, ok := refName(cr)
		if !ok {
			return false, nil
		}
		if _, err := inner.lookup(qual, name); err == nil {
			return false, nil
		}
		_, err := outer.lookup(qual, name)
		if err == nil {
			return true, nil
		}
		bd.noteDeepRef(qual, name, err)
		return false, err
	}
	// refs classifies the column references under n: whether some are inner, some outer.
	refs := func(n *pg.Node) (in, out bool, err error) {
		visit := func(x *pg.Node) bool {
			if x.GetColumnRef() == nil || err != nil {
				return err == nil
			}
			o, e := isOuter(x)
			if e != nil {
				err = e
			} else if o {
				out = true
			} else {
				in = true
			}
			return false
		}
		if visit(n) {
			walkPG(n.ProtoReflect(), visit)
		}
		return
	}
	// An aggregate whose arguments and filter read outer columns only is the outer query's
	// (PostgreSQL's outer aggregates): refused. One that reads inner columns too is the
	// subquery's.
	var aggErr error
	outerAggregate := func(fc *pg.FuncCall) bool {
		if !isAggregateCall(fc) {
			return false
		}
		anyIn, anyOut := false, false
		for _, a := range append(slices.Clone(fc.GetArgs()), fc.GetAggFilter()) {
			if a == nil {
				continue
			}
			in, out, err := refs(a)
			if err != nil {
				aggErr = err
				return true
			}
			anyIn, anyOut = anyIn || in, anyOut || out
		}
		return anyOut && !anyIn
	}
	for _, n := range append(slices.Clone(sub.GetTargetList()), sub.GetWhereClause(), sub.GetHavingClause()) {
		if n != nil && anyCall(n, outerAggregate) {
			if aggErr != nil {
				return nil, nil, nil, aggErr
			}
			return nil, nil, nil, unimplementedAre("aggregates of an outer query's columns in a subquery")
		}
	}
	if !nameErr {
		return nil, nil, nil, err
	}
	// The correlations that are equalities between an inner and an outer expression, in
	// WHERE conjuncts; any other outer reference (a correlation of another shape, an outer
	// column in the select list, HAVING or GROUP BY) needs the domain (decorrelateDomain).
	var kept []*pg.Node
	var corr []correlation
	domain := false
	if w := sub.GetWhereClause(); w != nil {
		for _, c := range splitAnd(w) {
			_, out, err := refs(c)
			if err != nil {
				return nil, nil, nil, err
			}
			if !out {
				kept = append(kept, c)
				continue
			}
			ae := c.GetAExpr()
			if ae == nil || ae.GetKind() != pg.A_Expr_Kind_AEXPR_OP || len(ae.GetName()) != 1 || ae.GetName()[0].GetString_().GetSval() != "=" {
				domain = true
				continue
			}
			lin, lout, _ := refs(ae.GetLexpr())
			rin, rout, _ := refs(ae.GetRexpr())
			switch {
			case lin && !lout && rout && !rin:
				corr = append(corr, correlation{inner: ae.GetLexpr(), outer: ae.GetRexpr()})
			case rin && !rout && lout && !lin:
				corr = append(corr, correlation{inner: ae.GetRexpr(), outer: ae.GetLexpr()})
			default:
				domain = true
			}
		}
	}
	outNames := map[string]bool{}
	for _, t := range sub.GetTargetList() {
		if name := t.GetResTarget().GetName(); name != "" {
			outNames[name] = true
		}
	}
	for _, part := range [][]*pg.Node{sub.GetTargetList(), sub.GetGroupClause(), {sub.GetHavingClause()}, sub.GetSortClause()} {
		for _, n := range part {
			if n == nil {
				continue
			}
			if q, name, ok := refName(n.GetSortBy().GetNode().GetColumnRef()); ok && q == "" && outNames[name] {
				continue // ORDER BY an output column's name, as PostgreSQL reads a bare one
			}
			if _, out, err := refs(n); err != nil {
				return nil, nil, nil, err
			} else if out {
				domain = true
			}
		}
	}
	if len(corr) == 0 && !domain && !lateral {
		return nil, nil, nil, err
	}
	if len(sub.GetFromClause()) == 0 || lateral {
		domain = true
	}
	grouped := len(sub.GetGroupClause()) > 0 || sub.GetHavingClause() != nil || hasAggregate(sub.GetTargetList())
	if sub.GetLimitCount() != nil || sub.GetLimitOffset() != nil || len(sub.GetDistinctClause()) > 0 || len(sub.GetGroupClause()) > 0 ||
		sub.GetHavingClause() != nil || (grouped && !group) || len(sub.GetWindowClause()) > 0 ||
		slices.ContainsFunc(append(slices.Clone(sub.GetTargetList()), sub.GetSortClause()...), func(n *pg.Node) bool {
			return anyCall(n, func(fc *pg.FuncCall) bool { return fc.GetOver() != nil })
		}) {
		domain = true
	}
	if grouped && group && !domain {
		// Grouped by its correlation keys, a subquery's value over no row is a missing group,
		// which scalarJoin answers as NULL, or 0 for a count(): right for one aggregate call
		// (count's 0, any other's NULL); an expression (COALESCE(sum(…), 0), count(*) + 1) or
		// a count with FILTER needs the domain.
		t := sub.GetTargetList()[0].GetResTarget().GetVal()
		if fc := t.GetFuncCall(); !isPlainCount(t) && (fc == nil || !isAggregateCall(fc) || containsCount(t)) {
			domain = true
		}
	}
	if domain {
		return bd.decorrelateDomain(sub, l, isOuter, refs, deferErrs && group, lateral)
	}
	c := proto.Clone(sub).(*pg.SelectStmt)
	c.SortClause = nil
	c.WhereClause = andNode(kept)
	var targets []*pg.Node
	for i, k := range corr {
		targets = append(targets, &pg.Node{Node: &pg.Node_ResTarget{ResTarget: &pg.ResTarget{Name: fmt.Sprintf("?key%d?", i), Val: k.inner}}})
		if grouped {
			c.GroupClause = append(c.GroupClause, k.inner)
		}
	}
	c.TargetList = append(targets, c.TargetList...)
	var errs []int
	if deferErrs {
		errs = deferTargets(c, len(corr), grouped)
		if !grouped {
			errs = deferSortKeys(c, len(corr), sub.GetSortClause(), errs)
		}
		if !slices.ContainsFunc(errs, func(i int) bool { return i >= 0 }) {
			errs = nil
		}
	}
	br, err = bd.bindSelect(c)
	if err != nil {
		return nil, nil, nil, err
	}
	return br, corr, errs, nil
}

// deferrableLimit reports an uncorrelated subquery's LIMIT under which its deferred errors
// reach the rows it answers as PostgreSQL raises them: an integer constant without OFFSET or
// WITH TIES (PostgreSQL computes the rows OFFSET skips), and, grouped, no GROUP BY (its
// aggregate computes every group before the LIMIT keeps some).
func deferrableLimit(c *pg.SelectStmt, grouped bool) bool {
	_, offset, ok := constLimit(c)
	return ok && offset == 0 && c.GetLimitOption() != pg.LimitOption_LIMIT_OPTION_WITH_TIES &&
		(!grouped || len(c.GetGroupClause()) == 0)
}

// deferrableAlone reports an uncorrelated subquery whose select list deferTargets may
// rewrite: a plain SELECT with one target, without set operations, VALUES, DISTINCT (an added
// error column would change what it computes), grouping sets, or window functions beside
// aggregates. Window functions over plain rows are computed on every row (their arguments
// eagerly, as PostgreSQL's WindowAgg reads every row), what the target computes from them
// deferred. Regrouped (oneRowPerKey gathers every row's error), a plain DISTINCT may be
// deferred too: a failing row is one more distinct row whose error reaches the reading
// expression.
func deferrableAlone(sub *pg.SelectStmt, regrouped bool) bool {
	dc := sub.GetDistinctClause()
	windowed := len(sub.GetWindowClause()) > 0 || slices.ContainsFunc(sub.GetTargetList(), func(n *pg.Node) bool {
		return anyCall(n, func(fc *pg.FuncCall) bool { return fc.GetOver() != nil })
	})
	grouped := len(sub.GetGroupClause()) > 0 || sub.GetHavingClause() != nil || hasAggregate(sub.GetTargetList())
	return (sub.GetOp() == pg.SetOperation_SETOP_NONE || sub.GetOp() == pg.SetOperation_SET_OPERATION_UNDEFINED) &&
		len(sub.GetValuesLists()) == 0 && (len(dc) == 0 || regrouped && len(dc) == 1 && dc[0].GetNode() == nil) && len(sub.GetTargetList()) == 1 &&
		!slices.ContainsFunc(sub.GetGroupClause(), func(n *pg.Node) bool { return n.GetGroupingSet() != nil }) &&
		(!windowed || !grouped)
}

// refName reads a column reference's qualifier and name (schema-qualified as columnRef
// does).
func refName(cr *pg.ColumnRef) (qual, name string, ok bool) {
	if cr == nil {
		return "", "", false
	}
	f := cr.GetFields()
	switch len(f) {
	case 1:
		return "", f[0].GetString_().GetSval(), f[0].GetString_() != nil
	case 2:
		return f[0].GetString_().GetSval(), f[1].GetString_().GetSval(), f[1].GetString_() != nil
	case 3:
		return f[1].GetString_().GetSval(), f[2].GetString_().GetSval(), f[2].GetString_() != nil
	}
	return "", "", false
}

// corrConds binds the correlation equalities: outer expressions over l's scope, the
// subquery's first len(corr) columns at offset nl of sc (the joined scope).
func (bd *binder) corrConds(l *scope, sc *scope, nl int, corr []correlation) ([]expr.Expression, error) {
	var out []expr.Expression
	for i, c := range corr {
		ov, err := bd.bindExpr(c.outer, l)
		if err != nil {
			return nil, err
		}
		var eq expr.Expression
		if c.nullSafe {
			eq, err = bd.fn(URNComparison, "is_not_distinct_from", booleanType(), ov.e, sc.ref(nl+i))
		} else {
			eq, err = bd.compare("=", ov, typed(sc.ref(nl+i)))
		}
		if err != nil {
			return nil, err
		}
		out = append(out, eq)
	}
	return out, nil
}

// linkedRel binds the subquery of EXISTS or x IN/= ANY (SELECT …) sl over l's scope: its
// decorrelated relation (the correlation keys first, then the select list), correlations,
// and whether it is IN, whose subquery must have one column. With deferErrs, IN's value is
// deferred where it may fail (decorrelate): errs as decorrelate's. EXISTS never evaluates its
// select list: a plain one (no aggregate, grouping, window, DISTINCT ON, ORDER BY or LIMIT) is
// dropped, as PostgreSQL's planner drops it (simplify_EXISTS_query).
func (bd *binder) linkedRel(l *boundRel, sl *pg.SubLink, deferErrs bool) (_ *boundRel, _ []correlation, _ bool, errs []int, _ error) {
	sub := sl.GetSubselect().GetSelectStmt()
	if sub == nil {
		return nil, nil, false, nil, unimplemented("this subquery")
	}
	isIn := sl.GetSubLinkType() == pg.SubLinkType_ANY_SUBLINK
	if isIn {
		if op := sl.GetOperName(); len(op) > 0 && (len(op) != 1 || op[0].GetString_().GetSval() != "=") {
			return nil, nil, false, nil, unimplementedAre("ANY (SELECT …) with an operator other than =")
		}
	}
	row, isRow := rowArgs(sl.GetTestexpr())
	width := 1
	if isRow {
		width = len(row)
	}
	if sl.GetSubLinkType() == pg.SubLinkType_EXISTS_SUBLINK && harmlessLimit(sub) {
		// EXISTS asks for one row: LIMIT n (n ≥ 1 or ALL) and ORDER BY change nothing.
		sub = proto.Clone(sub).(*pg.SelectStmt)
		sub.LimitCount, sub.SortClause = nil, nil
	}
	if sl.GetSubLinkType() == pg.SubLinkType_EXISTS_SUBLINK && plainExists(sub) {
		sub = proto.Clone(sub).(*pg.SelectStmt)
		sub.TargetList = []*pg.Node{pg.MakeResTargetNodeWithVal(pg.MakeAConstIntNode(1, -1), -1)}
		sub.DistinctClause = nil
	}
	// A row's subquery raises its select list's errors on every row (not deferred).
	r, corr, errs, err := bd.decorrelate(sub, l, false, deferErrs && isIn && !isRow)
	if err != nil {
		return nil, nil, false, nil, err
	}
	if n := len(r.sc.cols) - len(corr) - deferredCount(errs); isIn && n > width {
		return nil, nil, false, nil, &Error{Code: InvalidArgument, SQLState: "42601", Msg: "subquery has too many columns"}
	} else if isIn && n < width {
		return nil, nil, false, nil, &Error{Code: InvalidArgument, SQLState: "42601", Msg: "subquery has too few columns"}
	}
	return r, corr, isIn, errs, nil
}

// plainExists reports an EXISTS subquery whose select list PostgreSQL never evaluates: a
// simple SELECT with a FROM clause, without aggregates, GROUP BY, HAVING, window functions,
// DISTINCT ON, ORDER BY, LIMIT or OFFSET.
func plainExists(sub *pg.SelectStmt) bool {
	dc := sub.GetDistinctClause()
	return (sub.GetOp() == pg.SetOperation_SETOP_NONE || sub.GetOp() == pg.SetOperation_SET_OPERATION_UNDEFINED) &&
		len(sub.GetFromClause()) > 0 && len(sub.GetValuesLists()) == 0 &&
		len(sub.GetGroupClause()) == 0 && sub.GetHavingClause() == nil && !hasAggregate(sub.GetTargetList()) &&
		len(sub.GetWindowClause()) == 0 && !slices.ContainsFunc(sub.GetTargetList(), func(n *pg.Node) bool {
		return anyCall(n, func(fc *pg.FuncCall) bool { return fc.GetOver() != nil })
	}) && (len(dc) == 0 || len(dc) == 1 && dc[0].GetNode() == nil) && len(sub.GetSortClause()) == 0 &&
		sub.GetLimitCount() == nil && sub.GetLimitOffset() == nil
}

// deferredCount is the number of error columns errs (decorrelate's) names.
func deferredCount(errs []int) int {
	n := 0
	for _, e := range errs {
		if e >= 0 {
			n++
		}
	}
	return n
}

// inEquality binds IN's x = y: x the test expression of sl over the outer scope l, y column
// yi of sc (the outer relation joined to the subquery's); it returns both sides, unified.
func (bd *binder) inEquality(sl *pg.SubLink, l, sc *scope, yi int) (x, y, eq expr.Expression, err error) {
	if _, isRow := rowArgs(sl.GetTestexpr()); isRow {
		return nil, nil, nil, unimplementedAre("row values IN (SELECT …) outside a WHERE condition of their own")
	}
	return bd.inPair(sl.GetTestexpr(), l, sc, yi)
}

// notFalse is eq IS NOT FALSE for the equality eq of x and y: eq OR x IS NULL OR y IS NULL.
func (bd *binder) notFalse(eq, x, y expr.Expression) (expr.Expression, error) {
	xn, err := bd.fn(URNComparison, "is_null", booleanType(), x)
	if err != nil {
		return nil, err
	}
	yn, err := bd.fn(URNComparison, "is_null", booleanType(), y)
	if err != nil {
		return nil, err
	}
	return bd.fn(URNBoolean, "or", booleanType(), eq, xn, yn)
}

// inPair binds the equality of test (over the outer scope l) and column yi of sc.
func (bd *binder) inPair(test *pg.Node, l, sc *scope, yi int) (x, y, eq expr.Expression, err error) {
	tv, err := bd.bindExpr(test, l)
	if err != nil {
		return nil, nil, nil, err
	}
	yv := typed(sc.ref(yi))
	yv.bpchar = sc.cols[yi].bpchar // a constant beside a character(n) column is bpchar
	if x, y, err = bd.unify(tv, yv, "="); err != nil {
		return nil, nil, nil, err
	}
	if err := refuseIntervalKeys([]expr.Expression{x}, "IN (SELECT …)"); err != nil {
		return nil, nil, nil, err
	}
	eq, err = bd.fn(URNComparison, "equal", booleanType(), x, y)
	return x, y, eq, err
}

// semiJoin binds EXISTS (SELECT …) or x IN (SELECT …) (NOT when neg) as a semi (anti) join
// onto l.
func (bd *binder) semiJoin(l *boundRel, sl *pg.SubLink, neg bool) (*boundRel, error) {
	r, corr, isIn, errs, err := bd.linkedRel(l, sl, true)
	if err != nil {
		return nil, err
	}
	sc := joinedScope(l.sc, r.sc)
	nl := len(l.sc.cols)
	conj, err := bd.corrConds(l.sc, sc, nl, corr)
	if err != nil {
		return nil, err
	}
	if row, isRow := rowArgs(sl.GetTestexpr()); isIn && isRow {
		// (a, b) IN (SELECT x, y …): a = x AND b = y; NOT IN keeps a row when no s makes the
		// row equality true or NULL, an anti join on each pair's (a = x) IS NOT FALSE (as
		// below for one value), whose AND is the equality's IS NOT FALSE.
		for i, e := range row {
			x, y, eq, err := bd.inPair(e, l.sc, sc, nl+len(corr)+i)
			if err != nil {
				return nil, err
			}
			if neg {
				if eq, err = bd.notFalse(eq, x, y); err != nil {
					return nil, err
				}
			}
			conj = append(conj, eq)
		}
	} else if isIn {
		x, y, eq, err := bd.inEquality(sl, l.sc, sc, nl+len(corr))
		if err != nil {
			return nil, err
		}
		if neg {
			// x NOT IN (S) keeps x when no s makes x = s true or NULL: an anti join on
			// (x = s) IS NOT FALSE, which the executor runs as a null-aware hash anti join.
			// Correlated, the correlation equalities are the hash keys and this condition the
			// residual: a row is kept when no s of its own key's set makes it true or NULL, so
			// an empty set keeps it (NOT IN of no row is true) and a NULL among its set drops it.
			or, err := bd.notFalse(eq, x, y)
			if err != nil {
				return nil, err
			}
			conj = append(conj, or)
		} else {
			conj = append(conj, eq)
		}
		if len(errs) > 0 {
			// IN's value is tested on the pairs of its correlation keys only.
			last := len(conj) - 1
			if conj[last], err = bd.raiseAt(conj[last], sc, map[int]int{nl + len(corr): nl + errs[0]}); err != nil {
				return nil, err
			}
		}
	}
	cond := trueLit()
	if len(conj) > 0 {
		if cond, err = bd.and(conj); err != nil {
			return nil, err
		}
	}
	jt := plan.JoinTypeLeftSemi
	if neg {
		jt = plan.JoinTypeLeftAnti
	}
	return bd.joinRels(l, r, jt, cond)
}

// scalarJoin binds a scalar subquery as a single join onto l, its value a hidden column of
// the result (bd.sublinks), and returns its correlations (none: uncorrelated). A correlated one of aggregates is grouped by its correlation
// keys; its count, over no row, answers 0 as PostgreSQL's (COALESCE of the missing group).
// Its select list's errors are deferred (substrait/deferred.go); atSite, they are carried as
// a second hidden column (bd.sublinkErrs) and raised where the expression reading the
// subquery evaluates it (sublinkValue), as PostgreSQL evaluates a subquery only when its
// expression is reached: a CASE branch no row takes, COALESCE's argument after a non-NULL
// one (issue 18). Otherwise they are raised on every outer row.
func (bd *binder) scalarJoin(l *boundRel, sl *pg.SubLink, atSite bool) (_ *boundRel, _ []correlation, _ error) {
	sub := sl.GetSubselect().GetSelectStmt()
	if sub == nil {
		return nil, nil, unimplemented("this subquery")
	}
	regroup := atSite && !atMostOneRow(sub)
	if regroup {
		if bd.regrouped == nil {
			bd.regrouped = map[*pg.SelectStmt]bool{}
		}
		bd.regrouped[sub] = true
	}
	r, corr, errs, err := bd.decorrelate(sub, l, true, true)
	if err != nil {
		return nil, nil, err
	}
	if len(r.sc.cols)-len(corr)-deferredCount(errs) != 1 {
		return nil, nil, &Error{Code: InvalidArgument, SQLState: "42601", Msg: "subquery must return only one column"}
	}
	if regroup {
		// Its more-than-one-row error raised where it is read, too.
		if r, errs, _, err = bd.oneRowPerKey(r, len(corr), errs); err != nil {
			return nil, nil, err
		}
	}
	// Grouped by its correlation keys (not the domain's, whose groups answer every outer row),
	// a count's missing group is 0.
	countZero := len(corr) > 0 && !corr[0].nullSafe && hasAggregate(sub.GetTargetList()) &&
		isPlainCount(sub.GetTargetList()[0].GetResTarget().GetVal())
	sc := joinedScope(l.sc, r.sc)
	nl := len(l.sc.cols)
	conj, err := bd.corrConds(l.sc, sc, nl, corr)
	if err != nil {
		return nil, nil, err
	}
	cond := trueLit()
	if len(conj) > 0 {
		if cond, err = bd.and(conj); err != nil {
			return nil, nil, err
		}
	}
	j, err := bd.joinRels(l, r, plan.JoinTypeLeftSingle, cond)
	if err != nil {
		return nil, nil, err
	}
	// Keep l's columns and the value, hidden; a deferred one raises its error on the pairs
	// (an outer row without a pair reads a NULL error), or where it is read (atSite).
	vi := nl + len(corr)
	var val expr.Expression = j.sc.ref(vi)
	if countZero {
		nn, err := bd.fn(URNComparison, "is_not_null", booleanType(), val)
		if err != nil {
			return nil, nil, err
		}
		if val, err = bd.ifThen([]expr.IfThenPair{{If: nn, Then: val}}, expr.NewPrimitiveLiteral(int64(0), true)); err != nil {
			return nil, nil, err
		}
	}
	// The value keeps the subquery column's kind (bytea, json, jsonb).
	keepKind := func(out *boundRel) {
		if out != nil && vi < len(j.sc.cols) {
			c, src := &out.sc.cols[len(out.sc.cols)-1], j.sc.cols[vi]
			c.bytea, c.json, c.jsonb, c.bpchar, c.typmod, c.vary = src.bytea, src.json, src.jsonb, src.bpchar, src.typmod, src.vary
		}
	}
	if len(errs) > 0 && atSite {
		out, corr, err := bd.hideDeferred(l, j, val, j.sc.ref(nl+errs[0]), sl, corr)
		keepKind(out)
		return out, corr, err
	}
	if len(errs) > 0 {
		if val, err = bd.raiseDeferred(j.sc.ref(nl+errs[0]), val); err != nil {
			return nil, nil, err
		}
	}
	out, err := bd.hideValue(l, j, val, sl)
	keepKind(out)
	return out, corr, err
}

// hideDeferred is hideValue of a scalar subquery's value val whose errors errCol
// (deferred_error's) are raised where it is read (scalarJoin's atSite): both are hidden
// columns, the error's recorded in bd.sublinkErrs.
func (bd *binder) hideDeferred(l, j *boundRel, val, errCol expr.Expression, sl *pg.SubLink, corr []correlation) (*boundRel, []correlation, error) {
	name := fmt.Sprintf("?subquery%d?", len(bd.sublinks))
	out, err := bd.keepWith(l, j, []expr.Expression{errCol, val}, []string{name + " error", name})
	if err != nil {
		return nil, nil, err
	}
	if bd.sublinks == nil {
		bd.sublinks = map[*pg.SubLink]int{}
	}
	if bd.sublinkErrs == nil {
		bd.sublinkErrs = map[*pg.SubLink]int{}
	}
	bd.sublinks[sl] = len(out.sc.cols) - 1
	bd.sublinkErrs[sl] = len(out.sc.cols) - 2
	return out, corr, nil
}

// hideValue keeps l's columns of j (l joined to a subquery's relation) and adds val, the value
// of the subquery sl, as a hidden column that the SubLink's binding reads (bd.sublinks).
func (bd *binder) hideValue(l, j *boundRel, val expr.Expression, sl *pg.SubLink) (*boundRel, error) {
	out, err := bd.keepWith(l, j, []expr.Expression{val}, []string{fmt.Sprintf("?subquery%d?", len(bd.sublinks))})
	if err != nil {
		return nil, err
	}
	if bd.sublinks == nil {
		bd.sublinks = map[*pg.SubLink]int{}
	}
	bd.sublinks[sl] = len(out.sc.cols) - 1
	return out, nil
}

// keepWith keeps l's columns of j (whose first columns they are) and adds vals as hidden
// columns named names.
func (bd *binder) keepWith(l, j *boundRel, vals []expr.Expression, names []string) (*boundRel, error) {
	nl := len(l.sc.cols)
	mapping := make([]int32, 0, nl+len(vals))
	for i := range nl {
		mapping = append(mapping, int32(i))
	}
	for k := range vals {
		mapping = append(mapping, int32(len(j.sc.cols)+k))
	}
	pr, err := bd.b.ProjectRemap(j.rel, mapping, vals...)
	if err != nil {
		return nil, fmt.Errorf("bind subquery: %w", err)
	}
	out := &boundRel{rel: pr, sc: &scope{cols: slices.Clone(l.sc.cols)}, names: slices.Clone(l.names)}
	for k, v := range vals {
		out.sc.cols = append(out.sc.cols, col{name: names[k], qual: subqueryQual, typ: v.GetType(), hidden: true})
	}
	return out, nil
}

// polarity is how a WHERE condition's subterm counts toward the filter (collectMarks): where
// its NULL filters the row as false does (filterTrue: under AND and OR from the WHERE's top),
// as true does (filterFalse: under one more NOT than that), or anywhere else (inExpression).
// AND and OR are monotone in the truth order false < NULL < true, so a subterm's NULL may be
// read as false in the first place and as true in the second without changing which rows
// pass.
type polarity int

const (
	inExpression polarity = iota
	filterTrue
	filterFalse
)

// mark is a subquery bound as a mark join: its SubLink, and how IN's NULL is read: as false
// (neither flag), as true (nullAsTrue: under NOT) or as NULL (exact: in an expression).
type mark struct {
	sl                *pg.SubLink
	nullAsTrue, exact bool
}

// collectMarks appends to marks the subqueries of a WHERE condition n (not a conjunct the
// semi and anti joins took) that markJoin answers exactly: EXISTS anywhere (it is never NULL),
// and IN/= ANY (SELECT …) under AND, OR and NOT only from the WHERE's top, where a NULL answer
// filters the row as false (or, under NOT, as true) does. Subqueries inside other subqueries
// are their own query's.
func collectMarks(n *pg.Node, pol polarity, marks *[]mark) {
	if b := n.GetBoolExpr(); b != nil {
		inner := pol
		if b.GetBoolop() == pg.BoolExprType_NOT_EXPR {
			switch pol {
			case filterTrue:
				inner = filterFalse
			case filterFalse:
				inner = filterTrue
			}
		}
		for _, a := range b.GetArgs() {
			collectMarks(a, inner, marks)
		}
		return
	}
	if sl := n.GetSubLink(); sl != nil {
		switch sl.GetSubLinkType() {
		case pg.SubLinkType_EXISTS_SUBLINK:
			*marks = append(*marks, mark{sl: sl})
		case pg.SubLinkType_ANY_SUBLINK:
			*marks = append(*marks, mark{sl: sl, nullAsTrue: pol == filterFalse, exact: pol == inExpression})
		}
		return
	}
	walkPG(n.ProtoReflect(), func(x *pg.Node) bool {
		if x.GetBoolExpr() != nil || x.GetSubLink() != nil {
			collectMarks(x, inExpression, marks)
			return false
		}
		return true
	})
}

// markJoin binds EXISTS (SELECT …) or x IN (SELECT …) (collectMarks) as a mark: whether a row
// of the subquery matches, a hidden column (hideValue). For IN, PostgreSQL's NULL (no match,
// and x or a value NULL, over a subquery of some row) is read as false; or, from three marks
// over the subquery's relation (bound once, read three times: x = y for some y, some y NULL,
// some row at all), as true when m.nullAsTrue (the first, or the second, or x NULL and the
// third), or as NULL when m.exact (true for the first, else NULL for the second or x NULL and
// the third, else false: PostgreSQL's three-valued IN). It returns the subquery's
// correlations too.
func (bd *binder) markJoin(l *boundRel, m mark) (*boundRel, []correlation, error) {
	sl := m.sl
	if _, isRow := rowArgs(sl.GetTestexpr()); isRow {
		return nil, nil, unimplementedAre("row values IN (SELECT …) outside a WHERE condition of their own")
	}
	r, corr, isIn, errs, err := bd.linkedRel(l, sl, true)
	if err != nil {
		return nil, nil, err
	}
	errAt := -1
	if len(errs) > 0 {
		errAt = errs[0]
	}
	if !isIn || (!m.nullAsTrue && !m.exact) {
		j, m, err := bd.markOf(l, r, corr, isIn, false, sl, errAt)
		if err != nil {
			return nil, nil, err
		}
		out, err := bd.hideValue(l, j, m, sl)
		return out, corr, err
	}
	// x = y for some y; some y NULL; some row at all: three marks side by side.
	cur := l
	for k, mode := range []struct{ in, null bool }{{in: true}, {null: true}, {}} {
		if k > 0 {
			// Each mark reads the subquery through reads of its own (a read's route is
			// found where it stands in the plan).
			rel, err := bd.cloneReads(r.rel, false)
			if err != nil {
				return nil, nil, err
			}
			r = &boundRel{rel: rel, sc: r.sc, names: r.names}
		}
		j, m, err := bd.markOf(cur, r, corr, mode.in, mode.null, sl, errAt)
		if err != nil {
			return nil, nil, err
		}
		if cur, err = bd.keepWith(cur, j, []expr.Expression{m}, []string{fmt.Sprintf("?mark%d?", k)}); err != nil {
			return nil, nil, err
		}
	}
	nl := len(l.sc.cols)
	x, _, _, err := bd.inEquality(sl, l.sc, joinedScope(l.sc, r.sc), nl+len(corr))
	if err != nil {
		return nil, nil, err
	}
	xn, err := bd.fn(URNComparison, "is_null", booleanType(), x)
	if err != nil {
		return nil, nil, err
	}
	nullAny, err := bd.fn(URNBoolean, "and", booleanType(), xn, cur.sc.ref(nl+2))
	if err != nil {
		return nil, nil, err
	}
	var v expr.Expression
	if m.exact {
		unknown, err := bd.fn(URNBoolean, "or", booleanType(), cur.sc.ref(nl+1), nullAny)
		if err != nil {
			return nil, nil, err
		}
		v, err = bd.ifThen([]expr.IfThenPair{{If: cur.sc.ref(nl), Then: expr.NewPrimitiveLiteral(true, true)},
			{If: unknown, Then: expr.NewNullLiteral(booleanType().WithNullability(types.NullabilityNullable))}},
			expr.NewPrimitiveLiteral(false, true))
	} else {
		v, err = bd.fn(URNBoolean, "or", booleanType(), cur.sc.ref(nl), cur.sc.ref(nl+1), nullAny)
	}
	if err != nil {
		return nil, nil, err
	}
	out, err := bd.hideValue(l, cur, v, sl)
	return out, corr, err
}

// markOf left-joins l (single) to the distinct correlation keys of r, a linked subquery's
// relation (linkedRel), with IN's value too when in (matched by x = y) or only its rows whose
// value is NULL when null, and a true column; it returns the join and the mark, whether that
// column matched. One row of the distinct side at most matches a row of l, so the join is a
// single join. errAt is the column of r holding IN's deferred errors (decorrelate), -1 for
// none: carried beside the keys, they are raised on the pairs of the correlation keys.
func (bd *binder) markOf(l, r *boundRel, corr []correlation, in, null bool, sl *pg.SubLink, errAt int) (*boundRel, expr.Expression, error) {
	keep := len(corr)
	if in {
		keep++
	}
	src := r
	if null {
		yn, err := bd.fn(URNComparison, "is_null", booleanType(), r.sc.ref(len(corr)))
		if err != nil {
			return nil, nil, err
		}
		if src, err = bd.filtered(r, yn); err != nil {
			return nil, nil, err
		}
	}
	es := make([]expr.Expression, 0, keep+1)
	names := make([]string, 0, keep+1)
	for i := range keep {
		es, names = append(es, src.sc.ref(i)), append(names, fmt.Sprintf("?key%d?", i))
	}
	if errAt >= 0 {
		es, names = append(es, src.sc.ref(errAt)), append(names, "?errors?")
	}
	markAt := len(es)
	es, names = append(es, expr.NewPrimitiveLiteral(true, false)), append(names, "?mark?")
	if err := refuseIntervalKeys(es[:keep], "IN (SELECT …)"); err != nil {
		return nil, nil, err
	}
	d, err := bd.distinctOf(src, es, names)
	if err != nil {
		return nil, nil, err
	}
	sc := joinedScope(l.sc, d.sc)
	nl := len(l.sc.cols)
	conj, err := bd.corrConds(l.sc, sc, nl, corr)
	if err != nil {
		return nil, nil, err
	}
	if in {
		_, _, eq, err := bd.inEquality(sl, l.sc, sc, nl+len(corr))
		if err != nil {
			return nil, nil, err
		}
		conj = append(conj, eq)
	}
	if errAt >= 0 {
		// Every pair of the correlation keys evaluates IN's value, as PostgreSQL evaluates
		// the subquery's rows its correlation selects.
		raise, err := bd.raiseDeferred(sc.ref(nl+keep), expr.NewPrimitiveLiteral(true, false))
		if err != nil {
			return nil, nil, err
		}
		conj = append(conj, raise)
	}
	cond, err := bd.onCond(conj, nil, nil)
	if err != nil {
		return nil, nil, err
	}
	j, err := bd.joinRels(l, d, plan.JoinTypeLeftSingle, cond)
	if err != nil {
		return nil, nil, err
	}
	m, err := bd.fn(URNComparison, "is_not_null", booleanType(), j.sc.ref(nl+markAt))
	if err != nil {
		return nil, nil, err
	}
	return j, m, nil
}

// subqueryQual qualifies the hidden column of a scalar subquery's value: no SQL name.
const subqueryQual = "?subquery?"

// containsCount reports a count() (or regr_count()) call under n: an aggregate whose value
// over no row is not NULL.
func containsCount(n *pg.Node) bool {
	found := false
	walkPG(n.ProtoReflect(), func(x *pg.Node) bool {
		if fc := x.GetFuncCall(); fc != nil && len(fc.GetFuncname()) > 0 {
			name := fc.GetFuncname()[len(fc.GetFuncname())-1].GetString_().GetSval()
			found = name == "count" || name == "regr_count"
		}
		return !found
	})
	return found
}

// sublinkValue is a bound scalar subquery's value: its hidden column of sc.
func (bd *binder) sublinkValue(sl *pg.SubLink, sc *scope) (bval, error) {
	if i, ok := bd.sublinks[sl]; ok && i < len(sc.cols) && sc.cols[i].qual == subqueryQual {
		if ei, ok := bd.sublinkErrs[sl]; ok && ei < len(sc.cols) && sc.cols[ei].qual == subqueryQual {
			// Its errors raised here, on the rows that evaluate this expression (scalarJoin).
			v, err := bd.raiseDeferred(sc.ref(ei), sc.ref(i))
			out := typed(v)
			out.bytea, out.json, out.jsonb, out.bpchar, out.typmod = sc.cols[i].bytea, sc.cols[i].json, sc.cols[i].jsonb, sc.cols[i].bpchar, sc.cols[i].typmod
			out.ds = bd.sublinkScale(sl, i, sc)
			return out, err
		}
		out := typed(sc.ref(i))
		out.bytea, out.json, out.jsonb, out.bpchar, out.typmod = sc.cols[i].bytea, sc.cols[i].json, sc.cols[i].jsonb, sc.cols[i].bpchar, sc.cols[i].typmod
		out.ds = bd.sublinkScale(sl, i, sc)
		return out, nil
	}
	return bval{}, sublinkRefusal(sl)
}

// sublinkRefusal names a subquery in a place where it is not bound.
func sublinkRefusal(sl *pg.SubLink) *Error {
	switch sl.GetSubLinkType() {
	case pg.SubLinkType_EXPR_SUBLINK:
		return unimplementedAre("scalar subqueries here (in a grouped query, HAVING, ORDER BY, GROUP BY or another subquery's expression)")
	case pg.SubLinkType_EXISTS_SUBLINK, pg.SubLinkType_ANY_SUBLINK:
		return unimplementedAre("EXISTS, IN and ANY subqueries in ORDER BY or GROUP BY, or in an aggregate query without GROUP BY")
	case pg.SubLinkType_ALL_SUBLINK:
		return unimplementedAre("ALL (SELECT …) subqueries here (in ORDER BY, GROUP BY or a join's ON)")
	case pg.SubLinkType_ARRAY_SUBLINK:
		return unimplementedAre("ARRAY (SELECT …) subqueries")
	}
	return unimplementedAre("subqueries in expressions")
}

// checkJoinType refuses, by name, the join types the executor does not run (the right-hand
// semi, anti and single joins, mark joins): substrait-go cannot even type their output.
func checkJoinType(t plan.JoinType) error {
	switch t {
	case plan.JoinTypeInner, plan.JoinTypeLeft, plan.JoinTypeRight, plan.JoinTypeOuter,
		plan.JoinTypeLeftSemi, plan.JoinTypeLeftAnti, plan.JoinTypeLeftSingle:
		return nil
	}
	return unimplementedAre("JoinRels of type " + t.String())
}

// checkHashJoinType is checkJoinType for a HashJoinRel.
func checkHashJoinType(t plan.HashMergeJoinType) error {
	switch t {
	case plan.HashMergeInner, plan.HashMergeLeft, plan.HashMergeRight, plan.HashMergeOuter:
		return nil
	}
	return unimplementedAre(fmt.Sprintf("HashJoinRels of type %d (only inner, left, right and outer)", t))
}

// groupedRefs checks that the outer column references of a correlated scalar subquery of a
// grouped SELECT's select list or HAVING (under its correlations' outer expressions) are all
// columns the SELECT groups by: a plain column of GROUP BY, written by name, by position or by
// output name (sc is the SELECT's FROM scope). As PostgreSQL's parser, a grouped expression
// over a column does not group the column; any other reference is its error (SQLSTATE 42803).
func groupedRefs(sel *pg.SelectStmt, sc *scope, corr []correlation) error {
	var keys []int
	targets := sel.GetTargetList()
	for _, g := range sel.GetGroupClause() {
		if iv := g.GetAConst().GetIval(); iv != nil && iv.GetIval() >= 1 && int(iv.GetIval()) <= len(targets) {
			g = targets[iv.GetIval()-1].GetResTarget().GetVal()
		}
		q, name, ok := refName(g.GetColumnRef())
		if !ok {
			continue
		}
		if i, err := sc.lookup(q, name); err == nil {
			keys = append(keys, i)
			continue
		}
		for _, t := range targets {
			if rt := t.GetResTarget(); q == "" && rt.GetName() == name {
				if tq, tn, ok := refName(rt.GetVal().GetColumnRef()); ok {
					if i, err := sc.lookup(tq, tn); err == nil {
						keys = append(keys, i)
					}
				}
			}
		}
	}
	var bad *Error
	check := func(n *pg.Node) bool {
		q, name, isRef := refName(n.GetColumnRef())
		if !isRef || bad != nil {
			return bad == nil
		}
		if i, err := sc.lookup(q, name); err != nil || !slices.Contains(keys, i) {
			if q != "" {
				name = q + "." + name
			}
			bad = quoting(InvalidArgument, "42803", "subquery uses ungrouped column %q from outer query", name)
		}
		return false
	}
	for _, c := range corr {
		if check(c.outer) {
			walkPG(c.outer.ProtoReflect(), check)
		}
	}
	if bad != nil {
		return bad
	}
	return nil
}

// lateral binds l JOIN LATERAL (subquery) ON quals (jt inner or left; quals nil: true): the
// subquery decorrelated against l as any correlated subquery (decorrelate; its LIMIT per row
// of l, CROSS JOIN LATERAL (SELECT … ORDER BY … LIMIT n) being the top n of each), joined on
// its correlations and quals. Its correlation keys stay as hidden columns of the result.
func (bd *binder) lateral(l *boundRel, rs *pg.RangeSubselect, jt plan.JoinType, quals *pg.Node) (*boundRel, error) {
	sub := rs.GetSubquery().GetSelectStmt()
	if sub == nil {
		return nil, unimplemented("this subquery")
	}
	r, corr, errs, err := bd.decorrelate(sub, l, false, true)
	if err != nil {
		return nil, err
	}
	if len(corr) > 0 && jt != plan.JoinTypeInner && jt != plan.JoinTypeLeft {
		return nil, &Error{Code: InvalidArgument, SQLState: "42P10", Msg: "the combining JOIN type must be INNER or LEFT for a LATERAL reference"}
	}
	alias, colnames := "", []*pg.Node(nil)
	if al := rs.GetAlias(); al != nil {
		alias, colnames = al.GetAliasname(), al.GetColnames()
	}
	nk := len(corr)
	nerr := deferredCount(errs)
	if len(colnames) > len(r.sc.cols)-nk-nerr {
		return nil, errorf(InvalidArgument, "too many column aliases: %d for %d columns", len(colnames), len(r.sc.cols)-nk-nerr)
	}
	rq := &boundRel{rel: r.rel, sc: &scope{}, names: slices.Clone(r.names)}
	for i, c := range r.sc.cols {
		c.qual = alias
		switch {
		case i < nk, i >= len(r.sc.cols)-nerr:
			c.qual, c.hidden = subqueryQual, true
		case i-nk < len(colnames):
			c.name = colnames[i-nk].GetString_().GetSval()
			rq.names[i] = c.name
		}
		rq.sc.cols = append(rq.sc.cols, c)
	}
	sc := joinedScope(l.sc, rq.sc)
	nl := len(l.sc.cols)
	conj, err := bd.corrConds(l.sc, sc, nl, corr)
	if err != nil {
		return nil, err
	}
	cond, err := bd.onCond(conj, quals, sc)
	if err != nil {
		return nil, err
	}
	if len(errs) == 0 {
		return bd.joinRels(l, rq, jt, cond)
	}
	// Deferred values raise their errors on the pairs: in the join's condition, and in the
	// columns the join answers.
	valErr := map[int]int{}
	for k, e := range errs {
		if e >= 0 {
			valErr[nl+nk+k] = nl + e
		}
	}
	if cond, err = bd.raiseLateralCond(cond, sc, nl, valErr); err != nil {
		return nil, err
	}
	j, err := bd.joinRels(l, rq, jt, cond)
	if err != nil {
		return nil, err
	}
	return bd.raiseColumns(j, valErr)
}
