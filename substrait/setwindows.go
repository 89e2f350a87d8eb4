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
	inner := proto.Clone(sel).(*pg.SelectStmt)
	inner.TargetList, inner.SortClause, inner.DistinctClause, inner.WindowClause, inner.WithClause = nil, nil, nil, nil, nil
	inner.LimitCount, inner.LimitOffset, inner.LimitOption = nil, nil, pg.LimitOption_LIMIT_OPTION_DEFAULT
	// The inner select list starts with the statement's targets (a windowed one as a
	// placeholder), so that GROUP BY's ordinals and output names still mean them.
	var outerTargets []*pg.Node
	lift := func(n *pg.Node) *pg.Node {
		i := len(inner.TargetList)
		inner.TargetList = append(inner.TargetList, pg.MakeResTargetNodeWithVal(proto.Clone(n).(*pg.Node), 0))
		return colRef(setsWindowAlias, setsWindowColumn(i))
	}
	var rewrite func(n *pg.Node)
	rewrite = func(n *pg.Node) {
		if n == nil {
			return
		}
		if !containsWindow(n) {
			if readsGroupedRows(n) {
				m := lift(n)
				proto.Reset(n)
				proto.Merge(n, m)
			}
			return
		}
		if fc := n.GetFuncCall(); fc != nil && fc.GetOver() != nil {
			for _, a := range fc.GetArgs() {
				rewrite(a)
			}
			rewrite(fc.GetAggFilter())
			for _, o := range fc.GetAggOrder() {
				rewrite(o.GetSortBy().GetNode())
			}
			rewriteWindowDef(fc.GetOver(), rewrite)
			return
		}
		childNodes(n.ProtoReflect(), rewrite)
	}
	for _, t := range sel.GetTargetList() {
		rt := t.GetResTarget()
		if rt == nil || rt.GetVal() == nil {
			return nil, unimplemented("this select list item")
		}
		if cr := rt.GetVal().GetColumnRef(); cr != nil && len(cr.GetFields()) > 0 && cr.GetFields()[len(cr.GetFields())-1].GetAStar() != nil {
			return nil, unimplementedAre("`*` in a select list with window functions over grouping sets")
		}
		if !containsWindow(rt.GetVal()) {
			inner.TargetList = append(inner.TargetList, proto.Clone(t).(*pg.Node))
			continue
		}
		inner.TargetList = append(inner.TargetList, pg.MakeResTargetNodeWithVal(pg.MakeAConstIntNode(0, 0), 0))
	}
	// Then the expressions the windowed targets read are lifted after them.
	for i, t := range sel.GetTargetList() {
		rt := t.GetResTarget()
		name := rt.GetName()
		if name == "" {
			name = figureColname(rt.GetVal())
		}
		v := colRef(setsWindowAlias, setsWindowColumn(i))
		if containsWindow(rt.GetVal()) {
			v = proto.Clone(rt.GetVal()).(*pg.Node)
			rewrite(v)
		}
		outerTargets = append(outerTargets, pg.MakeResTargetNodeWithNameAndVal(name, v, 0))
	}
	outNames := map[string]bool{}
	for _, t := range outerTargets {
		outNames[t.GetResTarget().GetName()] = true
	}
	// ORDER BY and DISTINCT ON keys that are ordinals or output names keep meaning the
	// outer select list; other keys are expressions over the grouped rows.
	key := func(n *pg.Node) {
		if n.GetAConst() != nil {
			return
		}
		if cr := n.GetColumnRef(); cr != nil && len(cr.GetFields()) == 1 && outNames[cr.GetFields()[0].GetString_().GetSval()] {
			return
		}
		rewrite(n)
	}
	outer := &pg.SelectStmt{TargetList: outerTargets, WithClause: sel.GetWithClause(), LimitCount: sel.GetLimitCount(),
		LimitOffset: sel.GetLimitOffset(), LimitOption: sel.GetLimitOption(), Op: pg.SetOperation_SETOP_NONE}
	for _, s := range sel.GetSortClause() {
		c := proto.Clone(s).(*pg.Node)
		if sb := c.GetSortBy(); sb != nil {
			key(sb.GetNode())
		}
		outer.SortClause = append(outer.SortClause, c)
	}
	for _, d := range sel.GetDistinctClause() {
		c := proto.Clone(d).(*pg.Node)
		if c.GetNode() != nil {
			key(c)
		}
		outer.DistinctClause = append(outer.DistinctClause, c)
	}
	for _, w := range sel.GetWindowClause() {
		c := proto.Clone(w).(*pg.Node)
		rewriteWindowDef(c.GetWindowDef(), rewrite)
		outer.WindowClause = append(outer.WindowClause, c)
	}
	cols := make([]*pg.Node, len(inner.TargetList))
	for i := range cols {
		cols[i] = strNode(setsWindowColumn(i))
	}
	outer.FromClause = []*pg.Node{{Node: &pg.Node_RangeSubselect{RangeSubselect: &pg.RangeSubselect{
		Subquery: &pg.Node{Node: &pg.Node_SelectStmt{SelectStmt: inner}},
		Alias:    &pg.Alias{Aliasname: setsWindowAlias, Colnames: cols},
	}}}}
	return bd.bindSelect(outer)
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
