package substrait

import (
	"fmt"
	"slices"

	pg "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"
)

// hasWindowCall reports whether n calls a window function (outside subqueries).
func hasWindowCall(n *pg.Node) bool {
	return anyCall(n, func(fc *pg.FuncCall) bool { return fc.GetOver() != nil })
}

// postponedAlias names the derived table postponeSRFs adds, and postponedColumn its columns:
// names no client identifier can reach unquoted.
const postponedAlias = "?post?"

func postponedColumn(k int) *pg.Node {
	return &pg.Node{Node: &pg.Node_ColumnRef{ColumnRef: &pg.ColumnRef{Fields: []*pg.Node{
		{Node: &pg.Node_String_{String_: &pg.String{Sval: postponedAlias}}},
		{Node: &pg.Node_String_{String_: &pg.String{Sval: fmt.Sprintf("?c%d?", k+1)}}},
	}}}}
}

// postponeSRFs rewrites a select list whose set-returning functions PostgreSQL evaluates after
// its aggregates and window functions — those of a query that groups (aggregates, GROUP BY,
// HAVING) outside its GROUP BY (SELECT generate_series(1, 3), count(*) … is three rows of the
// count), and any beside a window function (SELECT a, generate_series(1, 2), row_number()
// OVER () …: the window runs over FROM's rows, then each row is expanded) — into that order: a
// derived table computing the query without them (its FROM, WHERE, GROUP BY, HAVING and
// windows; each other select-list item at its position, each argument of the postponed calls
// that is not a literal, and each ORDER BY key that is not an output column), under a query
// calling them over its columns with the DISTINCT, ORDER BY and LIMIT; so are the calls of
// an ORDER BY key (SELECT count(*) … ORDER BY generate_series(1, 2) is two rows) but for one
// that is a GROUP BY expression. ok is false when sel has none to postpone. Refused by name:
// * in such a select list, and DISTINCT ON. Rows that tie on every ORDER BY key come in no set order
// (PostgreSQL sorts before its ProjectSet there, so the calls' rows keep their order).
func postponeSRFs(sel *pg.SelectStmt) (post *pg.SelectStmt, ok bool, err error) {
	targets := sel.GetTargetList()
	grouped := len(sel.GetGroupClause()) > 0 || hasAggregate(targets) || sortHasAggregate(sel.GetSortClause()) || sel.GetHavingClause() != nil
	windowed := slices.ContainsFunc(targets, hasWindowCall)
	if !grouped && !windowed {
		return nil, false, nil
	}
	postponed := make([]bool, len(targets))
	for k, t := range targets {
		postponed[k] = hasSRF(t) && !(grouped && groupedTarget(sel, k))
	}
	// An ORDER BY key calling one, but for a GROUP BY expression (evaluated before the
	// grouping), runs after them too.
	grouping := func(n *pg.Node) bool {
		return slices.ContainsFunc(sel.GetGroupClause(), func(g *pg.Node) bool { return samePG(g, n) })
	}
	if !slices.Contains(postponed, true) && !slices.ContainsFunc(sel.GetSortClause(), func(sb *pg.Node) bool {
		return hasSRF(sb.GetSortBy().GetNode()) && !grouping(sb.GetSortBy().GetNode())
	}) {
		return nil, false, nil
	}
	if dc := sel.GetDistinctClause(); len(dc) > 1 || len(dc) == 1 && dc[0].GetNode() != nil {
		return nil, false, unimplementedAre("set-returning functions beside aggregates or window functions under DISTINCT ON")
	}
	inner := proto.Clone(sel).(*pg.SelectStmt)
	inner.SortClause, inner.DistinctClause, inner.LimitCount, inner.LimitOffset = nil, nil, nil, nil
	inner.LockingClause, inner.TargetList = nil, nil
	outer := &pg.SelectStmt{DistinctClause: sel.GetDistinctClause(), LimitCount: sel.GetLimitCount(), LimitOffset: sel.GetLimitOffset(), LimitOption: sel.GetLimitOption()}
	add := func(name string, val *pg.Node) *pg.Node {
		k := len(inner.TargetList)
		inner.TargetList = append(inner.TargetList, &pg.Node{Node: &pg.Node_ResTarget{ResTarget: &pg.ResTarget{Name: name, Val: val}}})
		return postponedColumn(k)
	}
	outNames := make([]string, len(targets))
	for k, t := range targets {
		rt := t.GetResTarget()
		if rt == nil || slices.ContainsFunc(rt.GetVal().GetColumnRef().GetFields(), func(f *pg.Node) bool { return f.GetAStar() != nil }) {
			return nil, false, unimplemented("* in a select list whose set-returning functions run after its aggregates or window functions")
		}
		outNames[k] = rt.GetName()
		if outNames[k] == "" {
			outNames[k] = figureColname(rt.GetVal())
		}
		if postponed[k] {
			add("", &pg.Node{Node: &pg.Node_AConst{AConst: &pg.A_Const{Isnull: true}}})
		} else {
			// Kept at its position: GROUP BY 1 and GROUP BY an output name still find it.
			add(rt.GetName(), rt.GetVal())
		}
	}
	for k, t := range targets {
		val := postponedColumn(k)
		if postponed[k] {
			val = proto.Clone(t.GetResTarget().GetVal()).(*pg.Node)
			postponeCalls(val, add)
		}
		outer.TargetList = append(outer.TargetList, &pg.Node{Node: &pg.Node_ResTarget{ResTarget: &pg.ResTarget{Name: outNames[k], Val: val}}})
	}
	for _, sb := range sel.GetSortClause() {
		sb = proto.Clone(sb).(*pg.Node)
		key := sb.GetSortBy()
		n := key.GetNode()
		switch f := n.GetColumnRef().GetFields(); {
		case n.GetAConst() != nil: // an output ordinal
		case len(f) == 1 && slices.Contains(outNames, f[0].GetString_().GetSval()): // an output name
		case hasSRF(n) && !grouping(n):
			key.Node = proto.Clone(n).(*pg.Node)
			postponeCalls(key.Node, add)
		default:
			if at := slices.IndexFunc(targets, func(t *pg.Node) bool { return samePG(t.GetResTarget().GetVal(), n) }); at >= 0 && !postponed[at] {
				key.Node = postponedColumn(at)
			} else {
				key.Node = add("", n)
			}
		}
		outer.SortClause = append(outer.SortClause, sb)
	}
	cols := make([]*pg.Node, len(inner.TargetList))
	for k := range cols {
		cols[k] = &pg.Node{Node: &pg.Node_String_{String_: &pg.String{Sval: fmt.Sprintf("?c%d?", k+1)}}}
	}
	outer.FromClause = []*pg.Node{{Node: &pg.Node_RangeSubselect{RangeSubselect: &pg.RangeSubselect{
		Subquery: &pg.Node{Node: &pg.Node_SelectStmt{SelectStmt: inner}},
		Alias:    &pg.Alias{Aliasname: postponedAlias, Colnames: cols},
	}}}}
	return outer, true, nil
}

// postponeCalls rewrites val (a select-list item postponeSRFs postpones) to read from the
// derived table (add computes an expression there and returns its reference) the arguments of
// its set-returning calls that are not literals, and each largest part outside them that reads
// a column, an aggregate, a window or a subquery (generate_series(1, a) + a).
func postponeCalls(val *pg.Node, add func(string, *pg.Node) *pg.Node) {
	visit := func(n *pg.Node) bool {
		if fc := n.GetFuncCall(); fc != nil && setReturning[funcName(fc)] {
			for i, a := range fc.GetArgs() {
				if !isLiteralArg(a) {
					fc.Args[i] = add("", a)
				}
			}
			return false
		}
		if !hasSRF(n) && readsInput(n) {
			n.Node = add("", proto.Clone(n).(*pg.Node)).Node
			return false
		}
		return true
	}
	if visit(val) {
		walkPG(val.ProtoReflect(), visit)
	}
}

// readsInput reports whether the expression n reads a column, an aggregate, a window
// function or a subquery.
func readsInput(n *pg.Node) bool {
	found := false
	deepNodes(n, func(x *pg.Node) bool {
		fc := x.GetFuncCall()
		found = found || x.GetColumnRef() != nil || x.GetSubLink() != nil || fc != nil && (isAggregateCall(fc) || fc.GetOver() != nil)
		return !found
	})
	return found
}

// isLiteralArg reports whether a is a literal, possibly cast (1, '1 hour', '2001-01-01'::date),
// which a postponed call keeps as written: its type resolves against the call's other
// arguments as it would have.
func isLiteralArg(a *pg.Node) bool {
	for a.GetTypeCast() != nil {
		a = a.GetTypeCast().GetArg()
	}
	return a.GetAConst() != nil
}
