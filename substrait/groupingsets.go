package substrait

import (
	"slices"

	"google.golang.org/protobuf/proto"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/substrait-io/substrait-go/v8/expr"

	"github.com/flightsrv/flightsrv/internal/exprs"
)

// GROUP BY with GROUPING SETS, ROLLUP and CUBE (docs/sql.md, "Grouping sets, ROLLUP and CUBE") is bound as the
// UNION ALL of one grouped SELECT per grouping set, each with the statement's FROM, WHERE,
// select list and HAVING: in the arm of a set, a grouping expression outside the set is NULL
// (of its type) wherever the select list or HAVING uses it, and GROUPING(a, b, …) is the
// constant whose bits (the last argument the lowest) say which arguments are outside the set,
// as PostgreSQL defines them. ORDER BY, LIMIT and OFFSET apply to the union. Each arm reads the
// routed table again under the same routed predicate. Window functions run over the union
// (windowsOverSets, setwindows.go), as PostgreSQL runs them over every set's grouped rows.

// maxGroupingSets bounds the grouping sets of one GROUP BY (PostgreSQL refuses more than 4,096;
// each is an arm of the union here, and the union's own bound of 256 branches applies).
const maxGroupingSets = 256

// groupingArm is what bindSimple needs of an arm: every grouping expression of the statement
// (those outside the arm's set are NULL in it; GROUPING()'s arguments are among them).
type groupingArm struct {
	all []*pg.Node
}

// expandGroupingSets returns the grouping sets of a GROUP BY clause that holds grouping sets
// (each a list of expressions), or nil when it holds none.
func expandGroupingSets(clause []*pg.Node) ([][]*pg.Node, error) {
	has := false
	for _, n := range clause {
		if n.GetGroupingSet() != nil {
			has = true
		}
	}
	if !has {
		return nil, nil
	}
	sets := [][]*pg.Node{{}}
	for _, n := range clause {
		elem, err := setsOf(n)
		if err != nil {
			return nil, err
		}
		var next [][]*pg.Node
		for _, s := range sets {
			for _, e := range elem {
				next = append(next, append(append([]*pg.Node{}, s...), e...))
				if len(next) > maxGroupingSets {
					return nil, errorf(InvalidArgument, "too many grouping sets present (at most %d)", maxGroupingSets)
				}
			}
		}
		sets = next
	}
	return sets, nil
}

// setsOf returns the grouping sets one GROUP BY element stands for.
func setsOf(n *pg.Node) ([][]*pg.Node, error) {
	gs := n.GetGroupingSet()
	if gs == nil {
		return [][]*pg.Node{{n}}, nil
	}
	items := gs.GetContent()
	// An item of ROLLUP or CUBE may be a parenthesised list (a SIMPLE set): one unit.
	unit := func(i *pg.Node) []*pg.Node {
		if s := i.GetGroupingSet(); s != nil && s.GetKind() == pg.GroupingSetKind_GROUPING_SET_SIMPLE {
			return s.GetContent()
		}
		if args, ok := implicitRow(i); ok {
			return args
		}
		return []*pg.Node{i}
	}
	switch gs.GetKind() {
	case pg.GroupingSetKind_GROUPING_SET_EMPTY:
		return [][]*pg.Node{{}}, nil
	case pg.GroupingSetKind_GROUPING_SET_SIMPLE:
		return [][]*pg.Node{items}, nil
	case pg.GroupingSetKind_GROUPING_SET_ROLLUP:
		var out [][]*pg.Node
		for k := len(items); k >= 0; k-- {
			var s []*pg.Node
			for _, i := range items[:k] {
				s = append(s, unit(i)...)
			}
			out = append(out, s)
		}
		return out, nil
	case pg.GroupingSetKind_GROUPING_SET_CUBE:
		if len(items) > 8 {
			return nil, errorf(InvalidArgument, "CUBE of more than 8 elements is not supported (%d grouping sets at most)", maxGroupingSets)
		}
		var out [][]*pg.Node
		for mask := (1 << len(items)) - 1; mask >= 0; mask-- {
			var s []*pg.Node
			for b, i := range items {
				if mask&(1<<(len(items)-1-b)) != 0 {
					s = append(s, unit(i)...)
				}
			}
			out = append(out, s)
		}
		return out, nil
	case pg.GroupingSetKind_GROUPING_SET_SETS:
		var out [][]*pg.Node
		for _, i := range items {
			// GROUPING SETS ((a, b), ()): a parenthesised list is one set of several
			// expressions, as PostgreSQL's flatten_grouping_sets reads an implicit row.
			if args, ok := implicitRow(i); ok {
				out = append(out, args)
				continue
			}
			sub, err := setsOf(i)
			if err != nil {
				return nil, err
			}
			out = append(out, sub...)
		}
		return out, nil
	}
	return nil, unimplemented("this grouping set")
}

// implicitRow returns the expressions of n when it is a parenthesised list (a, b) — an
// implicit row, not ROW(a, b), which stays a row value as PostgreSQL keeps it.
func implicitRow(n *pg.Node) ([]*pg.Node, bool) {
	r := n.GetRowExpr()
	if r == nil || r.GetRowFormat() != pg.CoercionForm_COERCE_IMPLICIT_CAST {
		return nil, false
	}
	return r.GetArgs(), true
}

// flattenGroupRows replaces, in sel's GROUP BY, a parenthesised list (a, b) by its
// expressions: PostgreSQL groups GROUP BY (a, b) as GROUP BY a, b (flatten_grouping_sets).
// sel is changed in place; the change is idempotent and keeps the statement's meaning.
func flattenGroupRows(sel *pg.SelectStmt) {
	clause := sel.GetGroupClause()
	if !slices.ContainsFunc(clause, func(n *pg.Node) bool { _, ok := implicitRow(n); return ok }) {
		return
	}
	var flat []*pg.Node
	for _, n := range clause {
		if args, ok := implicitRow(n); ok {
			flat = append(flat, args...)
			continue
		}
		flat = append(flat, n)
	}
	sel.GroupClause = flat
}

// bindGroupingSets binds sel, whose GROUP BY holds grouping sets, as the union of its arms.
func (bd *binder) bindGroupingSets(sel *pg.SelectStmt, sets [][]*pg.Node) (*boundRel, error) {
	if len(sets) > 1 && (hasSetsWindows(sel) || listHasGrouping(sel.GetSortClause()) || listHasGrouping(sel.GetDistinctClause()) || sortReadsGroupedRows(sel)) {
		// The windows run over every set's rows (setwindows.go), not in each arm; so do an
		// ORDER BY or DISTINCT ON of GROUPING(), and an ORDER BY of any other expression
		// over the grouped rows (count(*) DESC, origin || 'x'): a column of the grouped rows
		// there (the union of the arms has only the select list's).
		return bd.windowsOverSets(sel)
	}
	if hasSetsSublinks(sel) {
		// Its subqueries read the grouped rows of every set (setsubq.go).
		return bd.subqueriesOverSets(sel, sets)
	}
	var all []*pg.Node
	for _, s := range sets {
		all = append(all, s...)
	}
	arm := func(s []*pg.Node) *pg.SelectStmt {
		c := proto.Clone(sel).(*pg.SelectStmt)
		c.SortClause, c.LimitCount, c.LimitOffset, c.WithClause = nil, nil, nil, nil
		c.GroupClause = s
		if len(s) == 0 && c.GetHavingClause() == nil {
			// GROUP BY (): one row even over no input, as an ungrouped aggregate.
			c.GroupClause = nil
		}
		if bd.gsets == nil {
			bd.gsets = map[*pg.SelectStmt]*groupingArm{}
		}
		bd.gsets[c] = &groupingArm{all: all}
		return c
	}
	u := arm(sets[0])
	for _, s := range sets[1:] {
		u = &pg.SelectStmt{Op: pg.SetOperation_SETOP_UNION, All: true, Larg: u, Rarg: arm(s)}
	}
	outer := &pg.SelectStmt{Op: pg.SetOperation_SETOP_UNION, All: true, Larg: u.GetLarg(), Rarg: u.GetRarg(),
		SortClause: sel.GetSortClause(), LimitCount: sel.GetLimitCount(), LimitOffset: sel.GetLimitOffset(), LimitOption: sel.GetLimitOption()}
	if len(sets) == 1 {
		u.SortClause, u.LimitCount, u.LimitOffset, u.LimitOption = sel.GetSortClause(), sel.GetLimitCount(), sel.GetLimitOffset(), sel.GetLimitOption()
		return bd.bindSelect(u)
	}
	return bd.bindSelect(outer)
}

// nullGroups binds the grouping expressions of an arm's statement that are outside its set
// (ac.groups) into ac.nulled.
func (bd *binder) nullGroups(arm *groupingArm, items []bselItem, ac *aggCtx) error {
	for _, n := range arm.all {
		e, _, err := bd.groupExpr(n, items, ac.in)
		if err != nil {
			return err
		}
		if err := refuseIntervalKeys([]expr.Expression{e}, "GROUPING SETS, ROLLUP or CUBE"); err != nil {
			return err
		}
		if !containsExpr(ac.groups, e) && !containsExpr(ac.nulled, e) {
			ac.nulled = append(ac.nulled, e)
		}
	}
	return nil
}

func containsExpr(es []expr.Expression, e expr.Expression) bool {
	for _, x := range es {
		if sameExpr(x, e) {
			return true
		}
	}
	return false
}

// groupingValue binds GROUPING(args) in an arm: the bits of the arguments outside its set.
func (bd *binder) groupingValue(g *pg.GroupingFunc, ac *aggCtx) (bval, error) {
	if len(g.GetArgs()) > 31 {
		return bval{}, errorf(InvalidArgument, "GROUPING must have fewer than 32 arguments")
	}
	var v int32
	for _, a := range g.GetArgs() {
		v <<= 1
		e, err := bd.plainOver(a, ac)
		if err != nil {
			return bval{}, err
		}
		switch {
		case containsExpr(ac.nulled, e):
			v |= 1
		case !containsExpr(ac.groups, e):
			return bval{}, errorf(InvalidArgument, "arguments to GROUPING must be grouping expressions of the associated query level")
		}
	}
	return typed(expr.NewPrimitiveLiteral(v, false)), nil
}

// plainOver binds n over the aggregate's input, outside the aggregate context.
func (bd *binder) plainOver(n *pg.Node, ac *aggCtx) (expr.Expression, error) {
	saved := bd.agg
	bd.agg = nil
	defer func() { bd.agg = saved }()
	return bd.value(n, ac.in)
}

// sameExpr reports whether a and b are the same expression, as GROUP BY and ORDER BY match
// an expression of the select list with a key: Equals, or equal Substrait messages, where a
// NaN literal equals a NaN literal (proto.Equal), so that CASE x WHEN 'NaN' … is recognised as
// its GROUP BY key (expr's Equals compares floats with ==).
func sameExpr(a, b expr.Expression) bool {
	return exprs.Same(a, b)
}

// sortReadsGroupedRows reports whether an ORDER BY key of sel is an expression over its
// grouped rows rather than an ordinal or an output column's name (PostgreSQL matches a bare
// name to the select list first): such a key, count(*) or origin || 'x', is no column of the
// union of the grouping sets' arms.
func sortReadsGroupedRows(sel *pg.SelectStmt) bool {
	out := map[string]bool{}
	for _, t := range sel.GetTargetList() {
		rt := t.GetResTarget()
		if rt == nil {
			continue
		}
		name := rt.GetName()
		if name == "" && rt.GetVal() != nil {
			name = figureColname(rt.GetVal())
		}
		out[name] = true
	}
	for _, s := range sel.GetSortClause() {
		n := s.GetSortBy().GetNode()
		if n == nil || n.GetAConst() != nil {
			continue
		}
		if cr := n.GetColumnRef(); cr != nil && len(cr.GetFields()) == 1 && out[cr.GetFields()[0].GetString_().GetSval()] {
			continue
		}
		if readsGroupedRows(n) {
			return true
		}
	}
	return false
}

// listHasGrouping reports whether a GROUPING() call is among the nodes of list (ORDER BY's
// SortBy keys, DISTINCT ON's expressions).
func listHasGrouping(list []*pg.Node) bool {
	found := false
	check := func(x *pg.Node) bool {
		found = found || x.GetGroupingFunc() != nil
		return !found
	}
	for _, n := range list {
		if check(n) {
			walkPG(n.ProtoReflect(), check)
		}
	}
	return found
}
