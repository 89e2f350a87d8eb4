package substrait

import (
	"fmt"
	"slices"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/plan"
	"google.golang.org/protobuf/proto"
)

// Correlated subqueries that are not an equality join (join.go's decorrelate) are decorrelated
// over their domain (docs/architecture.md, "The executor and its fragments"): the distinct
// values of the outer columns they reference, a DISTINCT of the outer relation. The subquery
// is rewritten to read the domain as one more FROM item, its outer references turned into the
// domain's columns, so that it answers every domain row at once, the domain's columns first:
//
//   - without aggregates, the domain is joined to its FROM items under its WHERE (any
//     condition: the executor hashes on the equalities and tests the rest on each candidate
//     pair, a nested loop bounded by the query's ledger when there is no equality);
//   - with aggregates and no GROUP BY, the domain is left-joined to its FROM items under its
//     WHERE and grouped by, and every aggregate filtered to the joined rows, so that a domain
//     row no inner row joins is a group over no row (count() 0, other aggregates NULL, HAVING
//     tested) as PostgreSQL evaluates the subquery for that outer row;
//   - with GROUP BY, the domain's columns are grouped by first (a domain row without rows has
//     no group: no row, as PostgreSQL's);
//   - DISTINCT is per domain row (its columns are in the select list); DISTINCT ON's
//     expressions and ORDER BY start with the domain's columns; window functions are
//     partitioned by them first (windowByKeys); ORDER BY without LIMIT or DISTINCT ON is
//     dropped; LIMIT and OFFSET constants apply per domain row (limitPerKey);
//   - a set-returning function in its FROM that reads the outer row (lateralScope) is called
//     on each domain row, the domain first in FROM; with aggregates and no GROUP BY the
//     domain is left-joined to it (LEFT JOIN LATERAL … ON true) with an ordinality of its
//     own, and every aggregate filtered to the rows it marks that the WHERE keeps.
//
// The domain reads the outer relation a second time (cloneReads), filtered by the outer
// SELECT's WHERE conjuncts without subqueries that bind over it (binder.domainFilter), and by
// the partition and time conjuncts that reach the outer read when filters are pushed down,
// from an enclosing query's WHERE too (cloneReads, routeRead), so that its read is pinned as
// the outer one. The outer relation is then joined to the rewritten
// subquery with its columns IS NOT DISTINCT FROM the domain's (correlation.nullSafe: an outer
// NULL finds the domain row that answered for NULL). Refused by name: LIMIT or OFFSET that
// are not integer constants, WITH TIES, DISTINCT (or DISTINCT ON) with LIMIT, aggregates
// without GROUP BY over a WHERE holding a subquery (the LEFT JOIN's ON cannot
// carry it); aggregates of outer columns alone are refused before, for every correlated
// subquery (decorrelate).

// lateralScope is the scope of a correlated subquery's FROM items (items) when a function
// among them reads the outer row l (json_array_elements(t.value->'legs') of the outer t):
// bound after l's relation, as the rewritten subquery binds them after the domain, their
// columns are those after l's.
func (bd *binder) lateralScope(items []*pg.Node, l *boundRel) (*scope, error) {
	bd.domainSeq++
	probe := domainQual(bd.domainSeq)
	if bd.domains == nil {
		bd.domains = map[string]*boundRel{}
	}
	bd.domains[probe] = l
	defer delete(bd.domains, probe)
	f, err := bd.from(append([]*pg.Node{{Node: &pg.Node_RangeVar{RangeVar: &pg.RangeVar{Relname: probe, Inh: true}}}}, items...))
	if err != nil {
		return nil, err
	}
	return &scope{cols: f.sc.cols[len(l.sc.cols):]}, nil
}

// domainQual qualifies the domain relations' columns and names them in FROM (no SQL name).
func domainQual(k int) string { return fmt.Sprintf("?domain%d?", k) }

// markQual names the one-row relation whose column marks the inner rows of a left-joined
// domain.
func markQual(k int) string { return fmt.Sprintf("?mark%d?", k) }

// hasSubLink reports a subquery under n.
func hasSubLink(n *pg.Node) bool {
	return hasNode(n, func(x *pg.Node) bool { return x.GetSubLink() != nil })
}

// strNode is a String node of the syntax tree.
func strNode(s string) *pg.Node {
	return &pg.Node{Node: &pg.Node_String_{String_: &pg.String{Sval: s}}}
}

// colRef is the column reference qual.name.
func colRef(qual, name string) *pg.Node {
	return &pg.Node{Node: &pg.Node_ColumnRef{ColumnRef: &pg.ColumnRef{Fields: []*pg.Node{strNode(qual), strNode(name)}}}}
}

// decorrelateDomain binds sub, correlated with l (isOuter tells its outer column references,
// refs classifies an expression's), over its domain (above): the relation's first columns
// are the domain's, one correlation each (nullSafe), then sub's select list.
//
// With deferErrs (a scalar subquery's), the select list's errors are deferred as decorrelate
// defers them (deferTargets; errs as its) where that changes no row it answers: aggregate
// calls' arguments without GROUP BY or window functions, or a select list without
// aggregates (window functions' arguments stay computed on every row), without DISTINCT or
// ORDER BY under LIMIT (an ordering by a deferred value would pick other rows; without LIMIT
// the ordering is dropped, its keys' errors deferred with the value's: deferSortKeys); a
// HAVING whose aggregates cannot fail is deferred too (deferHaving), and an ORDER BY under a
// LIMIT without OFFSET (deferLimitedSort). Regrouped (bd.regrouped: oneRowPerKey gathers
// every row's error of an outer row), also with a plain DISTINCT (a failing row is one more
// distinct row) and aggregates' arguments under GROUP BY without HAVING (which would read a
// deferred value).
func (bd *binder) decorrelateDomain(sub *pg.SelectStmt, l *boundRel, isOuter func(*pg.Node) (bool, error), refs func(*pg.Node) (bool, bool, error), deferErrs, lateral bool) (_ *boundRel, _ []correlation, errs []int, _ error) {
	limited := sub.GetLimitCount() != nil || sub.GetLimitOffset() != nil
	count, offset, ok := constLimit(sub)
	if limited && (!ok || sub.GetLimitOption() == pg.LimitOption_LIMIT_OPTION_WITH_TIES) {
		return nil, nil, nil, unimplementedAre("correlated subqueries with a LIMIT or OFFSET that is not an integer constant, or WITH TIES")
	}
	dc := sub.GetDistinctClause()
	distinct := len(dc) > 0
	distinctOn := distinct && (len(dc) != 1 || dc[0].GetNode() != nil)
	if distinct && limited {
		return nil, nil, nil, unimplementedAre("correlated subqueries with DISTINCT and LIMIT or OFFSET")
	}
	bd.domainSeq++
	dq, mq := domainQual(bd.domainSeq), markQual(bd.domainSeq)
	c := proto.Clone(sub).(*pg.SelectStmt)
	c.DistinctClause, c.LimitCount, c.LimitOffset = nil, nil, nil
	// The ORDER BY is dropped; its keys that may fail are kept for deferSortKeys (a bare name
	// may be an output column's, which is no reference to rewrite).
	var dropped []*pg.Node
	if !limited && !distinctOn {
		for _, k := range c.GetSortClause() {
			if n := k.GetSortBy().GetNode(); n != nil && !simpleNode(n) && !hasSubLink(n) {
				dropped = append(dropped, k)
			}
		}
		c.SortClause = nil
	}
	// The outer references, each outer column once, become the domain's columns.
	var idx []int
	var outers []*pg.Node
	var rerr error
	rewrite := func(n *pg.Node) bool {
		cr := n.GetColumnRef()
		if cr == nil || rerr != nil {
			return rerr == nil
		}
		o, err := isOuter(n)
		if err != nil || !o {
			rerr = err
			return false
		}
		q, name, _ := refName(cr)
		i, err := l.sc.lookup(q, name)
		if err != nil {
			rerr = err
			return false
		}
		at := slices.Index(idx, i)
		if at < 0 {
			at = len(idx)
			idx = append(idx, i)
			outers = append(outers, proto.Clone(n).(*pg.Node))
		}
		n.Node = colRef(dq, fmt.Sprintf("?o%d?", at)).Node
		return false
	}
	var calls []*pg.Node // the functions in FROM that read the outer row, when lateral
	if lateral {
		for _, it := range c.GetFromClause() {
			if it.GetRangeFunction() != nil {
				calls = append(calls, it)
			}
		}
	}
	for _, part := range [][]*pg.Node{c.GetTargetList(), c.GetGroupClause(), {c.GetWhereClause(), c.GetHavingClause()}, c.GetSortClause(), c.GetWindowClause(), dc, dropped, calls} {
		for _, n := range part {
			if n != nil && rewrite(n) {
				walkPG(n.ProtoReflect(), rewrite)
			}
		}
	}
	if rerr != nil {
		return nil, nil, nil, rerr
	}
	// The domain: the distinct outer values, hidden columns of the domain's qualifier.
	es := make([]expr.Expression, len(idx))
	names := make([]string, len(idx))
	for i, x := range idx {
		es[i], names[i] = l.sc.ref(x), fmt.Sprintf("?o%d?", i)
	}
	if err := refuseIntervalKeys(es, "a correlated subquery's outer references"); err != nil {
		return nil, nil, nil, err
	}
	// The domain reads the outer relation again, through reads of its own: the route of a
	// read is found where it stands in the plan (Routes), and each of the two may be pinned
	// by other conjuncts (an enclosing query's time filter reaches the outer one only).
	lrel, err := bd.cloneReads(l.rel, true)
	if err != nil {
		return nil, nil, nil, err
	}
	src := &boundRel{rel: lrel, sc: l.sc, names: l.names}
	if len(bd.domainFilter) > 0 {
		conj := make([]expr.Expression, 0, len(bd.domainFilter))
		for _, n := range bd.domainFilter {
			// A conjunct over FROM items after a LATERAL one does not bind over l: it
			// narrows nothing here (its error, if any, is WHERE's).
			v, err := bd.bindExpr(n, l.sc)
			if err != nil {
				continue
			}
			e, err := bd.coerce(v, booleanType(), "WHERE")
			if err != nil {
				continue
			}
			conj = append(conj, e)
		}
		if len(conj) > 0 {
			cond, err := bd.and(conj)
			if err != nil {
				return nil, nil, nil, err
			}
			if src, err = bd.filtered(src, cond); err != nil {
				return nil, nil, nil, err
			}
		}
	}
	pr, err := bd.project(src, es, names)
	if err != nil {
		return nil, nil, nil, err
	}
	for i := range pr.sc.cols {
		pr.sc.cols[i].domainKey = true
	}
	d, err := bd.distinct(pr)
	if err != nil {
		return nil, nil, nil, err
	}
	for i := range d.sc.cols {
		d.sc.cols[i].qual, d.sc.cols[i].hidden = dq, true
		// A numeric whose display scale varies by row keeps varying: its scale is not in the
		// domain (equal values of different scales are one domain row), its text refused.
		d.sc.cols[i].vary = l.sc.cols[idx[i]].vary
	}
	if bd.domains == nil {
		bd.domains = map[string]*boundRel{}
	}
	bd.domains[dq] = d

	keys := make([]*pg.Node, len(idx))
	targets := make([]*pg.Node, 0, len(idx)+len(c.GetTargetList()))
	for i := range idx {
		keys[i] = colRef(dq, fmt.Sprintf("?o%d?", i))
		targets = append(targets, &pg.Node{Node: &pg.Node_ResTarget{ResTarget: &pg.ResTarget{Name: fmt.Sprintf("?key%d?", i), Val: keys[i]}}})
	}
	c.TargetList = append(targets, c.TargetList...)
	// Window functions see the rows of their domain row only: their partitions (of every
	// window not defined by reference to another) start with the keys.
	windowByKeys(c, keys)
	if distinctOn {
		// DISTINCT ON per domain row: the keys lead its expressions and the ORDER BY, whose
		// positions count the select list the keys now start.
		shifted := func(n *pg.Node) *pg.Node {
			n = clonePG(n)
			if iv := n.GetAConst().GetIval(); iv != nil {
				iv.Ival += int32(len(keys))
			}
			return n
		}
		on := slices.Clone(keys)
		for _, n := range dc {
			on = append(on, shifted(n))
		}
		c.DistinctClause = on
		order := make([]*pg.Node, 0, len(keys)+len(c.GetSortClause()))
		for _, k := range keys {
			order = append(order, &pg.Node{Node: &pg.Node_SortBy{SortBy: &pg.SortBy{Node: k}}})
		}
		for _, n := range c.GetSortClause() {
			sb := proto.Clone(n.GetSortBy()).(*pg.SortBy)
			sb.Node = shifted(sb.GetNode())
			order = append(order, &pg.Node{Node: &pg.Node_SortBy{SortBy: sb}})
		}
		c.SortClause = order
	}
	domainRV := &pg.Node{Node: &pg.Node_RangeVar{RangeVar: &pg.RangeVar{Relname: dq, Inh: true}}}
	aggregated := hasAggregate(sub.GetTargetList()) || sub.GetHavingClause() != nil
	switch {
	case aggregated && len(sub.GetGroupClause()) == 0 && sub.GetWhereClause() != nil && hasSubLink(sub.GetWhereClause()):
		return nil, nil, nil, unimplementedAre("correlated aggregate subqueries without GROUP BY whose WHERE holds a subquery")
	case aggregated && len(sub.GetGroupClause()) == 0 && lateral:
		// FROM domain LEFT JOIN LATERAL f(…) WITH ORDINALITY ON true, aggregates filtered
		// on the ordinality and the WHERE: a domain row the function yields no row for (or
		// none the WHERE keeps) is a group over no row.
		from := c.GetFromClause()
		rf := from[0].GetRangeFunction()
		if len(from) != 1 || rf.GetOrdinality() || rf.GetIsRowsfrom() || len(rf.GetFunctions()) != 1 {
			return nil, nil, nil, unimplementedAre("correlated aggregate subqueries over a set-returning function of the outer row beside other FROM items, WITH ORDINALITY or ROWS FROM")
		}
		rf = proto.Clone(rf).(*pg.RangeFunction)
		rf.Ordinality = true
		fc := rf.GetFunctions()[0].GetList().GetItems()[0].GetFuncCall()
		if bd.domainOrdinality == nil {
			bd.domainOrdinality = map[int32]bool{}
		}
		bd.domainOrdinality[fc.GetLocation()] = true
		qual := rf.GetAlias().GetAliasname()
		if qual == "" {
			qual = funcName(fc)
		}
		c.FromClause = []*pg.Node{{Node: &pg.Node_JoinExpr{JoinExpr: &pg.JoinExpr{Jointype: pg.JoinType_JOIN_LEFT, Larg: domainRV, Rarg: &pg.Node{Node: &pg.Node_RangeFunction{RangeFunction: rf}},
			Quals: &pg.Node{Node: &pg.Node_AConst{AConst: &pg.A_Const{Val: &pg.A_Const_Boolval{Boolval: &pg.Boolean{Boolval: true}}}}}}}}}
		conds := []*pg.Node{{Node: &pg.Node_NullTest{NullTest: &pg.NullTest{Arg: colRef(qual, "ordinality"), Nulltesttype: pg.NullTestType_IS_NOT_NULL}}}}
		if w := c.GetWhereClause(); w != nil {
			conds = append(conds, w)
		}
		joined := andNode(conds)
		c.WhereClause = nil
		for _, part := range [][]*pg.Node{c.GetTargetList(), {c.GetHavingClause()}} {
			for _, n := range part {
				if n != nil {
					filterAggregates(n, joined)
				}
			}
		}
		c.GroupClause = keys
	case aggregated && len(sub.GetGroupClause()) == 0:
		// FROM domain LEFT JOIN (items × mark) ON where, aggregates filtered on the mark.
		right := append(slices.Clone(c.GetFromClause()), &pg.Node{Node: &pg.Node_RangeSubselect{RangeSubselect: &pg.RangeSubselect{
			Subquery: &pg.Node{Node: &pg.Node_SelectStmt{SelectStmt: &pg.SelectStmt{TargetList: []*pg.Node{
				{Node: &pg.Node_ResTarget{ResTarget: &pg.ResTarget{Name: "?m?", Val: &pg.Node{Node: &pg.Node_AConst{AConst: &pg.A_Const{Val: &pg.A_Const_Boolval{Boolval: &pg.Boolean{Boolval: true}}}}}}}},
			}}}},
			Alias: &pg.Alias{Aliasname: mq},
		}}})
		acc := right[0]
		for _, it := range right[1:] {
			acc = &pg.Node{Node: &pg.Node_JoinExpr{JoinExpr: &pg.JoinExpr{Jointype: pg.JoinType_JOIN_INNER, Larg: acc, Rarg: it}}}
		}
		on := c.GetWhereClause()
		if on == nil {
			on = &pg.Node{Node: &pg.Node_AConst{AConst: &pg.A_Const{Val: &pg.A_Const_Boolval{Boolval: &pg.Boolean{Boolval: true}}}}}
		}
		c.FromClause = []*pg.Node{{Node: &pg.Node_JoinExpr{JoinExpr: &pg.JoinExpr{Jointype: pg.JoinType_JOIN_LEFT, Larg: domainRV, Rarg: acc, Quals: on}}}}
		c.WhereClause = nil
		joined := &pg.Node{Node: &pg.Node_NullTest{NullTest: &pg.NullTest{Arg: colRef(mq, "?m?"), Nulltesttype: pg.NullTestType_IS_NOT_NULL}}}
		for _, part := range [][]*pg.Node{c.GetTargetList(), {c.GetHavingClause()}} {
			for _, n := range part {
				if n != nil {
					filterAggregates(n, joined)
				}
			}
		}
		c.GroupClause = keys
	default:
		if lateral {
			// The domain first: the functions after it are called on each of its rows.
			c.FromClause = append([]*pg.Node{domainRV}, c.GetFromClause()...)
		} else {
			c.FromClause = append(c.FromClause, domainRV)
		}
		if aggregated || len(c.GetGroupClause()) > 0 {
			// GROUP BY's positions count the select list, which the keys now start.
			for _, g := range c.GetGroupClause() {
				if iv := g.GetAConst().GetIval(); iv != nil {
					iv.Ival += int32(len(keys))
				}
			}
			c.GroupClause = append(slices.Clone(keys), c.GetGroupClause()...)
		}
		if distinct && !distinctOn {
			c.DistinctClause = []*pg.Node{{}}
		}
	}
	regroup := bd.regrouped[sub]
	// Window functions (partitioned by the keys, windowByKeys) are computed on every row of
	// the partition, as PostgreSQL computes them over the rows an outer row selects: a
	// select list without aggregates reading them defers what it computes from them.
	windowed := len(c.GetWindowClause()) > 0 || slices.ContainsFunc(c.GetTargetList(), func(n *pg.Node) bool {
		return anyCall(n, func(fc *pg.FuncCall) bool { return fc.GetOver() != nil })
	})
	// An ORDER BY under a LIMIT of at least one row without OFFSET over a select list without
	// aggregates, DISTINCT or window functions: every row's error reaches the rows the LIMIT
	// keeps (deferLimitedSort).
	limitedSort := limited && len(c.GetSortClause()) > 0 && offset == 0 && count >= 1 && !distinct && !windowed &&
		!aggregated && len(sub.GetGroupClause()) == 0
	if deferErrs && (!distinct || regroup && !distinctOn) && (len(c.GetSortClause()) == 0 || limitedSort) &&
		(!windowed || !aggregated && len(sub.GetGroupClause()) == 0) {
		switch {
		case aggregated && len(sub.GetGroupClause()) == 0 && sub.GetHavingClause() == nil,
			aggregated && regroup && sub.GetHavingClause() == nil:
			errs = deferTargets(c, len(keys), true)
		case aggregated && sub.GetHavingClause() != nil && (len(sub.GetGroupClause()) == 0 || regroup):
			// HAVING too, where its aggregates cannot fail (deferHaving).
			h := proto.Clone(c).(*pg.SelectStmt)
			if herrs, ok := deferHaving(h, deferTargets(h, len(keys), true)); ok {
				c, errs = h, herrs
			}
		case limitedSort:
			errs = deferLimitedSort(c, keys, deferTargets(c, len(keys), false))
		case !aggregated && len(sub.GetGroupClause()) == 0:
			errs = deferSortKeys(c, len(keys), dropped, deferTargets(c, len(keys), false))
		}
		if !slices.ContainsFunc(errs, func(i int) bool { return i >= 0 }) {
			errs = nil
		}
	}
	if limited {
		c = limitPerKey(c, keys, count, offset)
	}
	// The domain is a FROM item of the rewritten subquery only (a statement naming it is
	// not answered from it).
	br, err := bd.bindSelect(c)
	delete(bd.domains, dq)
	if err != nil {
		return nil, nil, nil, err
	}
	corr := make([]correlation, len(outers))
	for i, o := range outers {
		corr[i] = correlation{outer: o, nullSafe: true}
	}
	return br, corr, errs, nil
}

// windowByKeys prepends keys to the PARTITION BY of every window of c (its select list's and
// ORDER BY's OVER clauses, its WINDOW clause) that is not defined by reference to another,
// which inherits the partition of the one it names.
func windowByKeys(c *pg.SelectStmt, keys []*pg.Node) {
	prepend := func(w *pg.WindowDef) {
		ks := make([]*pg.Node, len(keys))
		for i, k := range keys {
			ks[i] = clonePG(k)
		}
		w.PartitionClause = append(ks, w.GetPartitionClause()...)
	}
	for _, n := range c.GetWindowClause() {
		if w := n.GetWindowDef(); w != nil && w.GetRefname() == "" {
			prepend(w)
		}
	}
	visit := func(x *pg.Node) bool {
		// OVER w names a window of the WINDOW clause; OVER (w …) refers to one.
		if w := x.GetFuncCall().GetOver(); w != nil && w.GetName() == "" && w.GetRefname() == "" {
			prepend(w)
		}
		return true
	}
	for _, n := range append(slices.Clone(c.GetTargetList()), c.GetSortClause()...) {
		visit(n)
		walkPG(n.ProtoReflect(), visit)
	}
}

// filterAggregates adds cond to the FILTER of every aggregate call under n (not in nested
// subqueries, not window functions): each aggregates only the rows cond holds for.
func filterAggregates(n *pg.Node, cond *pg.Node) {
	visit := func(x *pg.Node) bool {
		fc := x.GetFuncCall()
		if fc == nil || !isAggregateCall(fc) {
			return true
		}
		if f := fc.GetAggFilter(); f != nil {
			fc.AggFilter = andNode([]*pg.Node{cond, f})
		} else {
			fc.AggFilter = cond
		}
		return false
	}
	if visit(n) {
		walkPG(n.ProtoReflect(), visit)
	}
}

// constLimit reads a SELECT's LIMIT and OFFSET when they are integer constants (count -1:
// none, LIMIT ALL or NULL).
func constLimit(sel *pg.SelectStmt) (count, offset int64, ok bool) {
	// intConst reads n, absent or NULL as def.
	intConst := func(n *pg.Node, def int64) (int64, bool) {
		c := n.GetAConst()
		switch {
		case n == nil:
			return def, true
		case c == nil:
			return 0, false
		case c.GetIsnull():
			return def, true
		case c.GetIval() != nil:
			return int64(c.GetIval().GetIval()), true
		}
		return 0, false
	}
	count, okc := intConst(sel.GetLimitCount(), -1)
	offset, oko := intConst(sel.GetLimitOffset(), 0)
	return count, offset, okc && oko && count >= -1 && offset >= 0
}

// limitPerKey applies c's LIMIT count and OFFSET offset (its ORDER BY's) to each domain row
// instead of the whole: c (its keys first in the select list, its LIMIT removed) numbered by
// row_number() OVER (PARTITION BY its keys ORDER BY its ORDER BY), then the rows numbered
// offset+1 to offset+count kept, under their select list's columns and names. ORDER BY's positions and
// output names are replaced by the select list's expressions (a window's ORDER BY reads
// input columns only).
func limitPerKey(c *pg.SelectStmt, keys []*pg.Node, count, offset int64) *pg.SelectStmt {
	var order []*pg.Node
	for _, n := range c.GetSortClause() {
		sb := proto.Clone(n.GetSortBy()).(*pg.SortBy)
		x := sb.GetNode()
		if iv := x.GetAConst().GetIval(); iv != nil && int(iv.GetIval()) >= 1 && int(iv.GetIval())+len(keys) <= len(c.GetTargetList()) {
			sb.Node = c.GetTargetList()[len(keys)+int(iv.GetIval())-1].GetResTarget().GetVal()
		} else if q, name, ok := refName(x.GetColumnRef()); ok && q == "" {
			for _, t := range c.GetTargetList()[len(keys):] {
				if t.GetResTarget().GetName() == name {
					sb.Node = t.GetResTarget().GetVal()
					break
				}
			}
		}
		order = append(order, &pg.Node{Node: &pg.Node_SortBy{SortBy: sb}})
	}
	c.SortClause = nil
	const lq = "?limited?"
	var outer []*pg.Node
	for i, t := range c.GetTargetList() {
		rt := t.GetResTarget()
		out := rt.GetName()
		if out == "" {
			out = figureColname(rt.GetVal())
		}
		name := fmt.Sprintf("?v%d?", i)
		rt.Name = name
		outer = append(outer, &pg.Node{Node: &pg.Node_ResTarget{ResTarget: &pg.ResTarget{Name: out, Val: colRef(lq, name)}}})
	}
	rn := &pg.Node{Node: &pg.Node_FuncCall{FuncCall: &pg.FuncCall{
		Funcname: []*pg.Node{strNode("row_number")},
		Over:     &pg.WindowDef{PartitionClause: keys, OrderClause: order, FrameOptions: frameRange | frameStartUnbPrec | frameEndCurrent},
	}}}
	c.TargetList = append(c.TargetList, &pg.Node{Node: &pg.Node_ResTarget{ResTarget: &pg.ResTarget{Name: "?rn?", Val: rn}}})
	intConst := func(v int64) *pg.Node {
		return &pg.Node{Node: &pg.Node_AConst{AConst: &pg.A_Const{Val: &pg.A_Const_Ival{Ival: &pg.Integer{Ival: int32(v)}}}}}
	}
	cmp := func(op string, v int64) *pg.Node {
		return &pg.Node{Node: &pg.Node_AExpr{AExpr: &pg.A_Expr{Kind: pg.A_Expr_Kind_AEXPR_OP, Name: []*pg.Node{strNode(op)}, Lexpr: colRef(lq, "?rn?"), Rexpr: intConst(v)}}}
	}
	var conds []*pg.Node
	if offset > 0 {
		conds = append(conds, cmp(">", offset))
	}
	if count >= 0 {
		conds = append(conds, cmp("<=", offset+count))
	}
	out := &pg.SelectStmt{
		TargetList: outer,
		FromClause: []*pg.Node{{Node: &pg.Node_RangeSubselect{RangeSubselect: &pg.RangeSubselect{
			Subquery: &pg.Node{Node: &pg.Node_SelectStmt{SelectStmt: c}},
			Alias:    &pg.Alias{Aliasname: lq},
		}}}},
	}
	out.WhereClause = andNode(conds)
	return out
}

// cloneReads copies rel with every table read under it a new relation (the rest shared where
// nothing under it changed). The copies of a domain (domain set: the outer relation read again)
// are linked to the reads they copy (binder.readLinks), so that the routed conjuncts that reach
// an outer read when filters are pushed down reach its copy too (routeRead): the domain is the
// distinct outer values of rows that each passed those conjuncts, so a filter on the outer
// read's rows narrows it to what the outer rows need, and an enclosing query's time filter
// (Superset's, outside `(SELECT …) AS virtual_table`) pins the copy as it pins the outer read.
// Any other copy (the marks' reads of a subquery, markJoin) keeps the links of the reads it
// copies, to the copy of their target when that is copied along.
func (bd *binder) cloneReads(rel plan.Rel, domain bool) (plan.Rel, error) {
	copies := map[*plan.NamedTableReadRel]*plan.NamedTableReadRel{}
	out, err := cloneReadsInto(rel, copies)
	if err != nil {
		return nil, err
	}
	if bd.readLinks == nil {
		bd.readLinks = map[*plan.NamedTableReadRel]*plan.NamedTableReadRel{}
	}
	for orig, c := range copies {
		if domain {
			bd.readLinks[c] = orig
		} else if t, ok := bd.readLinks[orig]; ok {
			if ct, ok := copies[t]; ok {
				t = ct
			}
			bd.readLinks[c] = t
		}
	}
	return out, nil
}

// cloneReadsInto is cloneReads's copy, recording each read's copy in copies.
func cloneReadsInto(rel plan.Rel, copies map[*plan.NamedTableReadRel]*plan.NamedTableReadRel) (plan.Rel, error) {
	if r, ok := rel.(*plan.NamedTableReadRel); ok {
		c := *r
		copies[r] = &c
		return &c, nil
	}
	ins := rel.GetInputs()
	if len(ins) == 0 {
		return rel, nil
	}
	out := make([]plan.Rel, len(ins))
	changed := false
	for i, in := range ins {
		c, err := cloneReadsInto(in, copies)
		if err != nil {
			return nil, err
		}
		out[i], changed = c, changed || c != in
	}
	if !changed {
		return rel, nil
	}
	c, err := rel.Copy(out...)
	if err != nil {
		return nil, fmt.Errorf("bind subquery: %w", err)
	}
	return c, nil
}
