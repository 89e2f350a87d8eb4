package substrait

import (
	"fmt"

	pg "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Window functions over GROUPING SETS, ROLLUP and CUBE (issue 18). PostgreSQL evaluates a
// SELECT's windows over its grouped rows, and the grouped rows of several grouping sets are
// the rows of every set together: sum(count(*)) OVER () over GROUP BY ROLLUP(origin) adds
// the total row's count to the origins' (each counted twice), rank() OVER (ORDER BY count(*)
// DESC) ranks the total first. The grouping sets are bound as the UNION ALL of one grouped
// arm per set (groupingsets.go), so the windows cannot be evaluated in the arms, each of
// which would see its own set's rows alone. windowsOverSets splits such a SELECT in two: a
// derived table that is the statement without its windows — its FROM, WHERE, GROUP BY and
// HAVING, whose select list is every expression the windowed parts read (the targets
// without a window, and the arguments, FILTERs, partition and order keys of each window and
// the grouped expressions around them) — and, over it, the select list with its windows, the
// WINDOW clause, DISTINCT, ORDER BY and LIMIT/OFFSET, reading those columns.

// setsWindowAlias and setsWindowColumn name the derived table of the grouped rows and its
// columns: names no query can write unquoted, so that none shadows the statement's own.
const setsWindowAlias = "*grouped rows*"

func setsWindowColumn(i int) string { return fmt.Sprintf("*grouped %d*", i+1) }

// windowsOverSets serves as well a SELECT over grouping sets without windows whose ORDER BY
// or DISTINCT ON reads GROUPING() (bindGroupingSets): the key is a column of the grouped rows.

// hasSetsWindows reports whether sel, a SELECT whose GROUP BY holds grouping sets, computes
// window functions (in its select list, ORDER BY or WINDOW clause).
func hasSetsWindows(sel *pg.SelectStmt) bool {
	return listHasWindow(sel.GetTargetList()) || listHasWindow(sel.GetSortClause()) || len(sel.GetWindowClause()) > 0
}

// windowsOverSets binds sel, whose GROUP BY holds several grouping sets and which computes
// window functions, as its windows over the rows of every grouping set (above).
func (bd *binder) windowsOverSets(sel *pg.SelectStmt) (*boundRel, error) {
	sp := newGroupedSplit(sel, setsWindowAlias, containsWindow)
	sp.inner.WindowClause = nil
	// Within a window call, its arguments, FILTER, aggregate ORDER BY and window definition
	// read the grouped rows.
	sp.within = func(n *pg.Node) bool {
		fc := n.GetFuncCall()
		if fc == nil || fc.GetOver() == nil {
			return false
		}
		for _, a := range fc.GetArgs() {
			sp.rewrite(a)
		}
		sp.rewrite(fc.GetAggFilter())
		for _, o := range fc.GetAggOrder() {
			sp.rewrite(o.GetSortBy().GetNode())
		}
		rewriteWindowDef(fc.GetOver(), sp.rewrite)
		return true
	}
	outer, err := sp.outerSelect("window functions")
	if err != nil {
		return nil, err
	}
	for _, w := range sel.GetWindowClause() {
		c := proto.Clone(w).(*pg.Node)
		rewriteWindowDef(c.GetWindowDef(), sp.rewrite)
		outer.WindowClause = append(outer.WindowClause, c)
	}
	return bd.bindSelect(sp.finish(outer, nil))
}

// groupedSplit splits a SELECT over grouping sets in two (windowsOverSets,
// subqueriesOverSets): inner, a derived table of the grouped rows named alias — the
// statement's FROM, WHERE and GROUP BY (and whatever clauses the caller leaves in it), whose
// select list starts with the statement's targets (each target that holds a special
// expression as a placeholder, so that GROUP BY's ordinals and output names still mean
// them), followed by every expression the outer SELECT reads of the grouped rows (lift) —
// and the outer SELECT over it, which evaluates the special expressions (windows,
// subqueries). Not safe for concurrent use; one per binding.
type groupedSplit struct {
	sel   *pg.SelectStmt
	inner *pg.SelectStmt
	alias string
	// special reports whether an expression holds what only the outer SELECT can evaluate.
	special func(*pg.Node) bool
	// within rewrites a special node's own parts and reports true, or reports false to
	// have rewrite descend into its children; nil descends always.
	within func(n *pg.Node) bool
}

// newGroupedSplit starts the split of sel: inner is sel without its select list, ORDER BY,
// DISTINCT, WITH and LIMIT/OFFSET, which the outer SELECT takes.
func newGroupedSplit(sel *pg.SelectStmt, alias string, special func(*pg.Node) bool) *groupedSplit {
	inner := proto.Clone(sel).(*pg.SelectStmt)
	inner.TargetList, inner.SortClause, inner.DistinctClause, inner.WithClause = nil, nil, nil, nil
	inner.LimitCount, inner.LimitOffset, inner.LimitOption = nil, nil, pg.LimitOption_LIMIT_OPTION_DEFAULT
	return &groupedSplit{sel: sel, inner: inner, alias: alias, special: special}
}

// lift appends n to the inner select list and returns the outer reference to it; an
// expression lifted already is referred to again (GROUPING(x) in DISTINCT ON and ORDER BY is
// one column, as PostgreSQL's one target entry, which their match reads: distinctOnKeys).
func (sp *groupedSplit) lift(n *pg.Node) *pg.Node {
	for i, t := range sp.inner.TargetList {
		if samePG(t.GetResTarget().GetVal(), n) {
			return colRef(sp.alias, setsWindowColumn(i))
		}
	}
	i := len(sp.inner.TargetList)
	sp.inner.TargetList = append(sp.inner.TargetList, pg.MakeResTargetNodeWithVal(proto.Clone(n).(*pg.Node), 0))
	return colRef(sp.alias, setsWindowColumn(i))
}

// rewrite replaces, in place, each largest part of n without a special expression that
// reads the grouped rows by its lifted column; constants stay where they are written.
func (sp *groupedSplit) rewrite(n *pg.Node) {
	if n == nil {
		return
	}
	if !sp.special(n) {
		if readsGroupedRows(n) {
			m := sp.lift(n)
			proto.Reset(n)
			proto.Merge(n, m)
		}
		return
	}
	if sp.within != nil && sp.within(n) {
		return
	}
	childNodes(n.ProtoReflect(), sp.rewrite)
}

// outerSelect fills the inner select list with the statement's targets and returns the
// outer SELECT: the select list over the derived table, WITH, LIMIT/OFFSET, and ORDER BY and
// DISTINCT ON, whose keys that are ordinals or output names keep meaning the outer select
// list while other keys are rewritten over the grouped rows. what names the special
// expressions in the refusal of `*`.
func (sp *groupedSplit) outerSelect(what string) (*pg.SelectStmt, error) {
	targets := sp.sel.GetTargetList()
	for _, t := range targets {
		rt := t.GetResTarget()
		if rt == nil || rt.GetVal() == nil {
			return nil, unimplemented("this select list item")
		}
		if cr := rt.GetVal().GetColumnRef(); cr != nil && len(cr.GetFields()) > 0 && cr.GetFields()[len(cr.GetFields())-1].GetAStar() != nil {
			return nil, unimplementedAre("`*` in a select list with " + what + " over grouping sets")
		}
		if sp.special(rt.GetVal()) {
			sp.inner.TargetList = append(sp.inner.TargetList, pg.MakeResTargetNodeWithVal(pg.MakeAConstIntNode(0, 0), 0))
		} else {
			sp.inner.TargetList = append(sp.inner.TargetList, proto.Clone(t).(*pg.Node))
		}
	}
	outer := &pg.SelectStmt{WithClause: sp.sel.GetWithClause(), LimitCount: sp.sel.GetLimitCount(),
		LimitOffset: sp.sel.GetLimitOffset(), LimitOption: sp.sel.GetLimitOption(), Op: pg.SetOperation_SETOP_NONE}
	outNames := map[string]bool{}
	for i, t := range targets {
		rt := t.GetResTarget()
		name := rt.GetName()
		if name == "" {
			name = figureColname(rt.GetVal())
		}
		v := colRef(sp.alias, setsWindowColumn(i))
		if sp.special(rt.GetVal()) {
			v = proto.Clone(rt.GetVal()).(*pg.Node)
			sp.rewrite(v)
		}
		outer.TargetList = append(outer.TargetList, pg.MakeResTargetNodeWithNameAndVal(name, v, 0))
		outNames[name] = true
	}
	key := func(n *pg.Node) {
		if n.GetAConst() != nil {
			return
		}
		if cr := n.GetColumnRef(); cr != nil && len(cr.GetFields()) == 1 && outNames[cr.GetFields()[0].GetString_().GetSval()] {
			return
		}
		sp.rewrite(n)
	}
	for _, s := range sp.sel.GetSortClause() {
		c := proto.Clone(s).(*pg.Node)
		if sb := c.GetSortBy(); sb != nil {
			key(sb.GetNode())
		}
		outer.SortClause = append(outer.SortClause, c)
	}
	for _, d := range sp.sel.GetDistinctClause() {
		c := proto.Clone(d).(*pg.Node)
		if c.GetNode() != nil {
			key(c)
		}
		outer.DistinctClause = append(outer.DistinctClause, c)
	}
	return outer, nil
}

// finish appends named (expressions under their own names: the grouping columns of
// subqueriesOverSets) to the inner select list and sets outer's FROM to the derived table.
func (sp *groupedSplit) finish(outer *pg.SelectStmt, named []namedNode) *pg.SelectStmt {
	cols := make([]*pg.Node, len(sp.inner.TargetList), len(sp.inner.TargetList)+len(named))
	for i := range cols {
		cols[i] = strNode(setsWindowColumn(i))
	}
	for _, nn := range named {
		sp.inner.TargetList = append(sp.inner.TargetList, pg.MakeResTargetNodeWithVal(proto.Clone(nn.node).(*pg.Node), 0))
		cols = append(cols, strNode(nn.name))
	}
	outer.FromClause = []*pg.Node{{Node: &pg.Node_RangeSubselect{RangeSubselect: &pg.RangeSubselect{
		Subquery: &pg.Node{Node: &pg.Node_SelectStmt{SelectStmt: sp.inner}},
		Alias:    &pg.Alias{Aliasname: sp.alias, Colnames: cols},
	}}}}
	return outer
}

// namedNode is an expression lifted into a derived table under a name of its own.
type namedNode struct {
	name string
	node *pg.Node
}

// readsGroupedRows reports whether n (an expression without window functions) reads the
// grouped rows — a column, an aggregate, GROUPING() or a subquery — rather than being a
// constant, which stays where it is written (ntile(4), lag(x, 1, 0) keep constant arguments).
func readsGroupedRows(n *pg.Node) bool {
	if containsAggregate(n) {
		return true
	}
	found := false
	check := func(x *pg.Node) bool {
		found = found || x.GetColumnRef() != nil || x.GetGroupingFunc() != nil || x.GetSubLink() != nil
		return !found
	}
	if check(n) {
		walkPG(n.ProtoReflect(), check)
	}
	return found
}

// rewriteWindowDef applies rewrite to the partition and order keys of a window definition.
func rewriteWindowDef(w *pg.WindowDef, rewrite func(*pg.Node)) {
	if w == nil {
		return
	}
	for _, p := range w.GetPartitionClause() {
		rewrite(p)
	}
	for _, o := range w.GetOrderClause() {
		rewrite(o.GetSortBy().GetNode())
	}
}

// childNodes calls f on the Nodes directly under m (through messages that are not Nodes,
// such as a TypeName, but not into the Nodes it finds).
func childNodes(m protoreflect.Message, f func(*pg.Node)) {
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.Kind() != protoreflect.MessageKind || fd.IsMap() {
			return true
		}
		visit := func(x protoreflect.Message) {
			if n, ok := x.Interface().(*pg.Node); ok {
				f(n)
				return
			}
			childNodes(x, f)
		}
		if fd.IsList() {
			for i, l := 0, v.List(); i < l.Len(); i++ {
				visit(l.Get(i).Message())
			}
			return true
		}
		visit(v.Message())
		return true
	})
}
