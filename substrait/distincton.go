package substrait

import (
	"fmt"
	"slices"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/extensions"
	"github.com/substrait-io/substrait-go/v8/types"
)

// SELECT DISTINCT ON (e, …) keeps the first row of each group of rows equal on the DISTINCT ON
// expressions (NULLs equal), first in the statement's ORDER BY. It is bound onto the
// relations the executor runs (docs/sql.md): above the select list's
// projection, a window relation computing row_number() OVER (PARTITION BY the DISTINCT ON
// columns ORDER BY the statement's ORDER BY keys), a filter keeping row number 1, and a
// projection dropping the row number; ORDER BY and LIMIT then apply as to any SELECT.
//
// PostgreSQL's rules (parse_clause.c's transformDistinctOnClause) are kept: DISTINCT ON items
// are select-list names, ordinals or expressions as ORDER BY items are (an expression not in
// the select list is evaluated beside it and dropped); the ORDER BY keys that are DISTINCT ON
// expressions must all come before any that is not (42P10 otherwise), and DISTINCT ON
// expressions missing from ORDER BY are fine only when every ORDER BY key is a DISTINCT ON
// expression (42P10 otherwise: DISTINCT ON (x) … ORDER BY y). Without ORDER BY, which row of
// a group is kept is unspecified, as in PostgreSQL.

// isDistinctOn reports a DISTINCT clause dc that is DISTINCT ON (…), not plain DISTINCT
// (one nil item).
func isDistinctOn(dc []*pg.Node) bool {
	return len(dc) > 1 || len(dc) == 1 && dc[0].GetNode() != nil
}

// errDistinctOnOrder is PostgreSQL's refusal of an ORDER BY that does not start with the
// DISTINCT ON expressions.
var errDistinctOnOrder = &Error{Code: InvalidArgument, SQLState: "42P10", Msg: "SELECT DISTINCT ON expressions must match initial ORDER BY expressions"}

// distinctOnKeys binds the DISTINCT ON items (dc) as ORDER BY items are bound, over the select
// list outs (with the ORDER BY's extra expressions already appended) and checks them against
// the ORDER BY keys (bound from the items sorts). It returns the column of each item (deduplicated) and the extra
// expressions evaluated beside the select list for the items that are not in it.
func (bd *binder) distinctOnKeys(dc, sorts []*pg.Node, keys []sortKeyRef, items []bselItem, outs []expr.Expression, names []string, in *scope) ([]int, []expr.Expression, error) {
	onSorts := make([]*pg.Node, len(dc))
	for i, n := range dc {
		if err := nonIntegerConstant(n, "DISTINCT ON"); err != nil {
			return nil, nil, err
		}
		if c := n.GetAConst(); c != nil && c.GetIval() != nil {
			if pos := int(c.GetIval().GetIval()); pos < 1 || pos > len(items) {
				return nil, nil, &Error{Code: InvalidArgument, SQLState: "42P10", Msg: fmt.Sprintf("SELECT DISTINCT ON position %d is not in select list", pos)}
			}
		}
		onSorts[i] = &pg.Node{Node: &pg.Node_SortBy{SortBy: &pg.SortBy{Node: n}}}
	}
	padded := slices.Clone(names)
	for len(padded) < len(outs) {
		padded = append(padded, "")
	}
	on, extra, err := bd.sortKeys(onSorts, items, outs, padded, in, false)
	if err != nil {
		return nil, nil, err
	}
	var cols []int
	for _, k := range on {
		if !slices.Contains(cols, k.col) {
			cols = append(cols, k.col)
		}
	}
	// ORDER BY key ki is DISTINCT ON item di when it is its column, the same expression bound
	// again, or the same expression written (GROUPING(x) in both, bound to two columns).
	all := append(slices.Clone(outs), extra...)
	same := func(di, ki int) bool {
		a, b := on[di].col, keys[ki].col
		if a == b || a >= 0 && b >= 0 && a < len(all) && b < len(all) && sameExpr(all[a], all[b]) {
			return true
		}
		return len(sorts) == len(keys) && len(on) == len(dc) && samePG(dc[di], sorts[ki].GetSortBy().GetNode())
	}
	anyOn := func(ki int) bool {
		for di := range on {
			if same(di, ki) {
				return true
			}
		}
		return false
	}
	skipped := false
	for ki := range keys {
		if !anyOn(ki) {
			skipped = true
		} else if skipped {
			return nil, nil, errDistinctOnOrder
		}
	}
	// A DISTINCT ON expression missing from an ORDER BY that has a key of another expression
	// is refused too (transformDistinctOnClause adds the missing ones after the ORDER BY's
	// keys, which it allows only when none was skipped).
	for di := range on {
		found := false
		for ki := range keys {
			found = found || same(di, ki)
		}
		if skipped && !found {
			return nil, nil, errDistinctOnOrder
		}
	}
	return cols, extra, nil
}

// distinctOn keeps, of proj's rows, the first of each group equal on the columns on, in the
// order of keys (columns of proj), and returns the rows with proj's columns.
func (bd *binder) distinctOn(proj *boundRel, on []int, keys []sortKeyRef) (*boundRel, error) {
	rn, err := bd.newWindow(extensions.ID{URN: URNArithmetic, Name: "row_number"}, nil)
	if err != nil {
		return nil, err
	}
	for _, c := range on {
		e := proj.sc.ref(c)
		if err := orderable(e, "DISTINCT ON"); err != nil {
			return nil, err
		}
		rn.Partitions = append(rn.Partitions, e)
	}
	for _, k := range keys {
		rn.Sorts = append(rn.Sorts, expr.SortField{Expr: proj.sc.ref(k.col), Kind: sortDirection(k)})
	}
	rn.BoundsType, rn.LowerBound, rn.UpperBound = types.BoundsTypeRange, expr.Unbounded{}, expr.CurrentRow{}
	return bd.keepWhere(proj, []expr.Expression{rn}, func(ws []expr.Expression) (expr.Expression, error) {
		return bd.fn(URNComparison, "equal", booleanType(), ws[0], expr.NewPrimitiveLiteral(int64(1), false))
	})
}

// keepWhere evaluates the window functions wfs over br (one window ProjectRel), keeps the
// rows where cond (built over references to the functions' columns) is true, and returns
// them with br's columns only.
func (bd *binder) keepWhere(br *boundRel, wfs []expr.Expression, cond func(ws []expr.Expression) (expr.Expression, error)) (*boundRel, error) {
	w, refs, err := bd.windowProject(br, wfs)
	if err != nil {
		return nil, err
	}
	c, err := cond(refs)
	if err != nil {
		return nil, err
	}
	f, err := bd.b.Filter(w.rel, c)
	if err != nil {
		return nil, fmt.Errorf("bind window filter: %w", err)
	}
	es := make([]expr.Expression, len(br.sc.cols))
	for i := range es {
		es[i] = w.sc.ref(i)
	}
	names := br.names
	if len(names) < len(es) {
		names = slices.Clone(names)
		for len(names) < len(es) {
			names = append(names, fmt.Sprintf("?column%d?", len(names)))
		}
	}
	out, err := bd.project(&boundRel{rel: f, sc: w.sc, names: w.names}, es, names[:len(es)])
	if err != nil {
		return nil, err
	}
	for i := range es {
		c, src := &out.sc.cols[i], br.sc.cols[i]
		c.bpchar = src.bpchar // character(n) columns stay so (bpchar.go)
		// A varying numeric and its display scale's hidden column (keepScales) stay paired.
		c.vary, c.scaleName = src.vary, src.scaleName
		if src.hidden {
			c.name, c.qual, c.hidden = src.name, src.qual, src.hidden
		}
	}
	out.names = br.names
	return out, nil
}

// sortDirection is a bound ORDER BY key's Substrait direction.
func sortDirection(k sortKeyRef) types.SortDirection {
	switch {
	case k.desc && k.nullsFirst:
		return types.SortDescNullsFirst
	case k.desc:
		return types.SortDescNullsLast
	case k.nullsFirst:
		return types.SortAscNullsFirst
	}
	return types.SortAscNullsLast
}
