package substrait

import (
	"slices"

	pg "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"
)

// Subqueries over GROUPING SETS, ROLLUP and CUBE (issue 18). PostgreSQL evaluates a
// subquery of a grouped SELECT's select list or HAVING once per grouped row, its references
// to the outer query reading the row's grouping columns, which are NULL in the rows of a set
// that leaves them out: (SELECT count(*) FROM t WHERE t.o = f.o) over GROUP BY ROLLUP (o)
// counts each origin's rows, and no row (0) in the total row, where f.o is NULL. A reference
// to a column that is no grouping column is its 42803. The arms of the union (groupingsets.go)
// cannot join such a subquery before grouping, where each arm sees its own rows and the
// total row none, so subqueriesOverSets splits the SELECT in two, as windowsOverSets does: a
// derived table of the grouped rows — the statement without its subqueries: FROM, WHERE and
// GROUP BY, whose select list is every expression the select list and HAVING read outside
// their subqueries, then each grouping column under its own name — read under the alias of
// the statement's one FROM item, so that the subqueries' outer references name the grouping
// columns as they did; and over it the select list, HAVING as a WHERE, DISTINCT, ORDER BY and
// LIMIT/OFFSET.

// hasSetsSublinks reports whether sel's select list or HAVING holds a subquery.
func hasSetsSublinks(sel *pg.SelectStmt) bool {
	h := sel.GetHavingClause()
	return slices.ContainsFunc(sel.GetTargetList(), hasSubLink) || h != nil && hasSubLink(h)
}

// subqueriesOverSets binds sel, whose GROUP BY holds grouping sets (all of them sets) and
// whose select list or HAVING holds a subquery, as those subqueries over its grouped rows
// (above).
func (bd *binder) subqueriesOverSets(sel *pg.SelectStmt, sets [][]*pg.Node) (*boundRel, error) {
	from := sel.GetFromClause()
	if len(from) != 1 {
		return nil, unimplementedAre("subqueries in the select list or HAVING of a query with grouping sets over several FROM items or none")
	}
	var alias string
	switch {
	case from[0].GetRangeVar() != nil:
		rv := from[0].GetRangeVar()
		alias = rv.GetRelname()
		if a := rv.GetAlias(); a != nil {
			alias = a.GetAliasname()
		}
	case from[0].GetRangeSubselect() != nil && from[0].GetRangeSubselect().GetAlias() != nil && !from[0].GetRangeSubselect().GetLateral():
		alias = from[0].GetRangeSubselect().GetAlias().GetAliasname()
	default:
		return nil, unimplementedAre("subqueries in the select list or HAVING of a query with grouping sets over a join or a table function")
	}
	// The grouping columns, under their names: the subqueries' outer references read them.
	targets := sel.GetTargetList()
	var grouping []string
	groupingRef := map[string]*pg.Node{}
	for _, s := range sets {
		for _, g := range s {
			if iv := g.GetAConst().GetIval(); iv != nil && iv.GetIval() >= 1 && int(iv.GetIval()) <= len(targets) {
				g = targets[iv.GetIval()-1].GetResTarget().GetVal()
			}
			q, name, ok := refName(g.GetColumnRef())
			if !ok || (q != "" && q != alias) {
				continue
			}
			if _, seen := groupingRef[name]; !seen {
				grouping = append(grouping, name)
				groupingRef[name] = g
			}
		}
	}
	if err := bd.ungroupedOuterRefs(sel, alias, groupingRef); err != nil {
		return nil, err
	}
	// The subqueries stay, reading the grouping columns by name; what the select list and
	// HAVING read of the grouped rows outside them is lifted.
	sp := newGroupedSplit(sel, alias, hasSubLink)
	sp.inner.HavingClause = nil
	sp.within = func(n *pg.Node) bool { return n.GetSubLink() != nil }
	outer, err := sp.outerSelect("subqueries")
	if err != nil {
		return nil, err
	}
	if h := sel.GetHavingClause(); h != nil {
		w := proto.Clone(h).(*pg.Node)
		sp.rewrite(w)
		outer.WhereClause = w
	}
	named := make([]namedNode, len(grouping))
	for i, name := range grouping {
		named[i] = namedNode{name, groupingRef[name]}
	}
	return bd.bindSelect(sp.finish(outer, named))
}

// ungroupedOuterRefs is PostgreSQL's 42803 for a subquery of sel's select list or HAVING
// that reads a column of its one FROM item alias that is not a grouping column (grouping, by
// name): qualified by alias, or unqualified where the FROM item has the column and no FROM
// item of the subquery may (fromColumns). A subquery that reads a FROM item of the same name
// of its own is left to the binder.
func (bd *binder) ungroupedOuterRefs(sel *pg.SelectStmt, alias string, grouping map[string]*pg.Node) error {
	outerCols, outerKnown := bd.fromColumns(sel.GetFromClause()[0])
	var bad *Error
	var visit func(n *pg.Node) bool
	visit = func(n *pg.Node) bool {
		if bad != nil {
			return false
		}
		sl := n.GetSubLink()
		if sl == nil {
			return true
		}
		sub := sl.GetSubselect()
		shadowed, innerKnown := false, true
		var innerCols []string
		deepNodes(sub, func(x *pg.Node) bool {
			if rv := x.GetRangeVar(); rv != nil && (rv.GetRelname() == alias && rv.GetAlias() == nil || rv.GetAlias().GetAliasname() == alias) {
				shadowed = true
			}
			if rs := x.GetRangeSubselect(); rs != nil && rs.GetAlias().GetAliasname() == alias {
				shadowed = true
			}
			if x.GetRangeVar() != nil || x.GetRangeSubselect() != nil || x.GetRangeFunction() != nil {
				cols, ok := bd.fromColumns(x)
				innerCols, innerKnown = append(innerCols, cols...), innerKnown && ok
			}
			return !shadowed
		})
		if shadowed {
			return false
		}
		deepNodes(sub, func(x *pg.Node) bool {
			q, name, ok := refName(x.GetColumnRef())
			if !ok || bad != nil {
				return bad == nil
			}
			if _, g := grouping[name]; g {
				return true
			}
			if q == alias || q == "" && outerKnown && innerKnown && slices.Contains(outerCols, name) && !slices.Contains(innerCols, name) {
				bad = quoting(InvalidArgument, "42803", "subquery uses ungrouped column %q from outer query", alias+"."+name)
			}
			return bad == nil
		})
		return false
	}
	for _, t := range sel.GetTargetList() {
		if visit(t) {
			walkPG(t.ProtoReflect(), visit)
		}
	}
	if h := sel.GetHavingClause(); h != nil && visit(h) {
		walkPG(h.ProtoReflect(), visit)
	}
	if bad != nil {
		return bad
	}
	return nil
}

// fromColumns returns the column names of a FROM item when its text says them: a table of
// the catalog, a derived table or VALUES with a column list in its alias; known is false
// otherwise (a WITH query, a derived table named by its select list, a function).
func (bd *binder) fromColumns(n *pg.Node) (cols []string, known bool) {
	colnames := func(a *pg.Alias) ([]string, bool) {
		if a == nil || len(a.GetColnames()) == 0 {
			return nil, false
		}
		for _, c := range a.GetColnames() {
			cols = append(cols, c.GetString_().GetSval())
		}
		return cols, true
	}
	switch {
	case n.GetRangeVar() != nil:
		rv := n.GetRangeVar()
		if rv.GetAlias() != nil && len(rv.GetAlias().GetColnames()) > 0 {
			return colnames(rv.GetAlias())
		}
		if rv.GetSchemaname() != "" {
			return nil, false
		}
		def, err := lookupSQLTable(bd.cat, rv.GetRelname())
		if err != nil {
			return nil, false
		}
		return columnNames(def), true
	case n.GetRangeSubselect() != nil:
		return colnames(n.GetRangeSubselect().GetAlias())
	}
	return nil, false
}
