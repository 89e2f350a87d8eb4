package substrait

import (
	"fmt"
	"slices"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/substrait-io/substrait-go/v8/expr"
	"google.golang.org/protobuf/proto"
)

// Derived tables under an inner join (issue 18; docs/architecture.md, "Errors only from rows
// that are paired"). PostgreSQL pulls a simple derived table up into the query that reads it
// (no aggregates, GROUP BY, HAVING, DISTINCT, window functions, LIMIT, set operations, VALUES
// or set-returning functions): its select list becomes the outer query's expressions,
// evaluated where they are read, so under an inner join (JOIN … ON, CROSS JOIN, a FROM list)
// an expression read in the select list, GROUP BY, HAVING or ORDER BY is evaluated on the
// joined rows alone, whichever join method its plan takes (checked with EXPLAIN on
// PostgreSQL 15: hash, merge and nested loop). One read in WHERE or a join's ON over the
// derived table alone is evaluated at its scan, on every row, and one on the NULL-extended
// side of an outer join that is not strict is evaluated at its scan too (a placeholder); those
// stay computed where the derived table is. joinItem defers the others as a correlated
// subquery's select list (deferTargets): the derived table computes their deferred values and
// errors, and the join's output raises them (raiseColumns).

// pulledUp reports a derived table's SELECT that PostgreSQL pulls up into the query reading
// it (above), whose targets are expressions of their own (no `*`).
func pulledUp(sel *pg.SelectStmt) bool {
	if (sel.GetOp() != pg.SetOperation_SETOP_NONE && sel.GetOp() != pg.SetOperation_SET_OPERATION_UNDEFINED) ||
		len(sel.GetValuesLists()) > 0 || len(sel.GetDistinctClause()) > 0 || len(sel.GetGroupClause()) > 0 ||
		sel.GetHavingClause() != nil || hasAggregate(sel.GetTargetList()) || len(sel.GetWindowClause()) > 0 ||
		sel.GetLimitCount() != nil || sel.GetLimitOffset() != nil || sel.GetWithClause() != nil ||
		len(sel.GetLockingClause()) > 0 || len(sel.GetFromClause()) == 0 {
		return false
	}
	for _, t := range sel.GetTargetList() {
		v := t.GetResTarget().GetVal()
		if hasSubLink(v) || anyCall(v, func(fc *pg.FuncCall) bool { return fc.GetOver() != nil || setReturning[funcName(fc)] }) {
			return false
		}
		if cr := v.GetColumnRef(); cr != nil && slices.ContainsFunc(cr.GetFields(), func(f *pg.Node) bool { return f.GetAStar() != nil }) {
			return false
		}
	}
	return true
}

// setReturning are PostgreSQL's set-returning functions a select list may call (a derived
// table calling one is not pulled up).
var setReturning = map[string]bool{"generate_series": true, "unnest": true, "generate_subscripts": true,
	"regexp_matches": true, "regexp_split_to_table": true, "json_array_elements": true, "jsonb_array_elements": true,
	"json_array_elements_text": true, "jsonb_array_elements_text": true, "json_each": true, "jsonb_each": true,
	"json_each_text": true, "jsonb_each_text": true, "json_object_keys": true, "jsonb_object_keys": true,
	"string_to_table": true, "jsonb_path_query": true}

// condRefs counts the column names a SELECT's WHERE and FROM (its joins' ON conditions)
// reference, at any depth: a derived table's target of one of these names is not deferred
// (it may be read at the derived table's scan, above).
func (bd *binder) condRefs(sel *pg.SelectStmt) map[string]int {
	return bd.refNames(append(slices.Clone(sel.GetFromClause()), sel.GetWhereClause()))
}

// refNames counts the references to each column name under ns, at any depth. A nested
// SELECT's counts are its whole statement's, taken once per SELECT (bd.selNames) and added:
// every level of `SELECT (SELECT (SELECT …)))` or of nested derived tables asks for the names
// under it, which walking again at each level made quadratic in the depth (trial 32 F9: 400
// levels of derived tables took 0.9 s, 1,000 levels 46 s on a loaded machine).
func (bd *binder) refNames(ns []*pg.Node) map[string]int {
	names := map[string]int{}
	visit := bd.nameCounter(names)
	for _, n := range ns {
		if n != nil && visit(n) {
			walkPG(n.ProtoReflect(), visit)
		}
	}
	return names
}

// selectNames counts the references to each column name anywhere in s (refNames of the whole
// statement), once per statement: the map is shared and must not be changed.
func (bd *binder) selectNames(s *pg.SelectStmt) map[string]int {
	if names, ok := bd.selNames[s]; ok {
		return names
	}
	names := map[string]int{}
	walkPG(s.ProtoReflect(), bd.nameCounter(names))
	if bd.selNames == nil {
		bd.selNames = map[*pg.SelectStmt]map[string]int{}
	}
	bd.selNames[s] = names
	return names
}

// nameCounter is refNames' walkPG visitor: it counts a column reference's name into names, a
// nested SELECT's counts (selectNames) too, and goes below neither.
func (bd *binder) nameCounter(names map[string]int) func(n *pg.Node) bool {
	return func(n *pg.Node) bool {
		if cr := n.GetColumnRef(); cr != nil {
			if f := cr.GetFields(); len(f) > 0 {
				names[f[len(f)-1].GetString_().GetSval()]++
			}
			return false
		}
		if s := n.GetSelectStmt(); s != nil {
			for k, c := range bd.selectNames(s) {
				names[k] += c
			}
			return false // walkPG does not go below a nested SELECT either
		}
		return true
	}
}

// Under an outer join, PostgreSQL pulls a derived table on the NULL-extended side up too, and
// wraps each target in a placeholder, evaluated at the derived table's scan on every row,
// unless it reads one of its columns and holds nothing that is not strict (pullup_replace_
// vars_callback: a strict expression of a column is NULL on the NULL-extended rows by
// itself): such a target is evaluated where it is read, on the joined rows, as under an inner
// join (EXPLAIN VERBOSE on PostgreSQL 15: the Merge Left Join's output computes it). The
// preserved side's rows all reach the join's output: computing its targets at its scan
// raises what the output would.

// joinItem binds a FROM item that an inner join reads, or the NULL-extended side of an outer
// join (nullable), as fromOne does. A derived table PostgreSQL pulls up has the targets that
// may fail and that no condition but on (the references of the ON condition of the join that
// reads it, which raiseCond places) reads (condNames) deferred, on the NULL-extended side
// the strict ones only (strictPG): valErr maps each such column of the item to its error
// column (hidden), for raiseColumns above the join.
func (bd *binder) joinItem(item *pg.Node, on map[string]int, nullable bool) (*fromItem, map[int]int, error) {
	rs := item.GetRangeSubselect()
	sel := rs.GetSubquery().GetSelectStmt()
	if rs == nil || rs.GetLateral() || sel == nil || !pulledUp(sel) {
		f, err := bd.fromOne(item)
		return f, nil, err
	}
	alias, colnames := "", []*pg.Node(nil)
	if al := rs.GetAlias(); al != nil {
		alias, colnames = al.GetAliasname(), al.GetColnames()
	}
	nt := len(sel.GetTargetList())
	if len(colnames) > nt {
		return nil, nil, errorf(InvalidArgument, "too many column aliases: %d for %d columns", len(colnames), nt)
	}
	c := proto.Clone(sel).(*pg.SelectStmt)
	errs := deferTargetsExcept(c, 0, false, func(i int, rt *pg.ResTarget) bool {
		name := rt.GetName()
		if i < len(colnames) {
			name = colnames[i].GetString_().GetSval()
		} else if name == "" {
			name = figureColname(rt.GetVal())
		}
		return bd.condNames[name] > on[name] || nullable && !strictPG(rt.GetVal())
	})
	if deferredCount(errs) == 0 {
		f, err := bd.fromOne(item)
		return f, nil, err
	}
	bd.level++
	first := len(bd.reads)
	br, err := bd.bindSelect(c)
	bd.level--
	if err != nil {
		return nil, nil, err
	}
	if alias != "" {
		bd.placeReads(first, alias)
	}
	out := requalify(br, alias, colnames)
	valErr := map[int]int{}
	for k, e := range errs {
		if e >= 0 {
			valErr[k] = e
			out.sc.cols[e].qual, out.sc.cols[e].hidden = subqueryQual, true
		}
	}
	return &fromItem{boundRel: out}, valErr, nil
}

// raiseColumns projects j so that each column i of valErr reads raise_deferred(its error
// column, it): the deferred values raise their errors on j's rows alone.
func (bd *binder) raiseColumns(j *boundRel, valErr map[int]int) (*boundRel, error) {
	width := len(j.sc.cols)
	mapping := make([]int32, width)
	var exprs []expr.Expression
	for i := range width {
		mapping[i] = int32(i)
		if e, ok := valErr[i]; ok {
			v, err := bd.raiseDeferred(j.sc.ref(e), j.sc.ref(i))
			if err != nil {
				return nil, err
			}
			mapping[i] = int32(width + len(exprs))
			exprs = append(exprs, v)
		}
	}
	pr, err := bd.b.ProjectRemap(j.rel, mapping, exprs...)
	if err != nil {
		return nil, fmt.Errorf("bind join: %w", err)
	}
	return &boundRel{rel: pr, sc: j.sc, names: j.names}, nil
}

// shiftErrs is valErr of a join's right item, whose columns follow nl left ones, merged
// into l's (nil when both are empty).
func shiftErrs(l, r map[int]int, nl int) map[int]int {
	if len(l) == 0 && len(r) == 0 {
		return nil
	}
	out := map[int]int{}
	for v, e := range l {
		out[v] = e
	}
	for v, e := range r {
		out[nl+v] = nl + e
	}
	return out
}

// strictPG reports an expression PostgreSQL leaves unwrapped on an outer join's NULL-extended
// side (above): it reads a column, and is made of column references, constants, casts,
// operators (every built-in operator the binder binds is strict) and calls of strictFuncs
// only. CASE, COALESCE, NULLIF, GREATEST/LEAST, AND/OR, IS [NOT] NULL, IS DISTINCT FROM, IN
// lists, subqueries and any other call are taken as not strict (wrapped: evaluated on every
// row, the eager rule).
func strictPG(n *pg.Node) bool {
	col, ok := false, true
	var visit func(x *pg.Node) bool
	visit = func(x *pg.Node) bool {
		if !ok {
			return false
		}
		switch v := x.GetNode().(type) {
		case *pg.Node_ColumnRef:
			col = true
			return false
		case *pg.Node_AConst, *pg.Node_TypeName, *pg.Node_String_:
			return false
		case *pg.Node_TypeCast:
			return true
		case *pg.Node_AExpr:
			ok = v.AExpr.GetKind() == pg.A_Expr_Kind_AEXPR_OP
			return ok
		case *pg.Node_FuncCall:
			fc := v.FuncCall
			ok = strictFuncs[funcName(fc)] && fc.GetAggFilter() == nil && fc.GetOver() == nil && !fc.GetAggStar() &&
				len(fc.GetAggOrder()) == 0 && !fc.GetFuncVariadic()
			if ok {
				for _, a := range fc.GetArgs() {
					if visit(a) {
						walkPG(a.ProtoReflect(), visit)
					}
				}
			}
			return false
		}
		ok = false
		return false
	}
	if visit(n) {
		walkPG(n.ProtoReflect(), visit)
	}
	return ok && col
}

// strictFuncs are functions the binder binds that PostgreSQL's catalog marks strict
// (pg_proc.proisstrict), by name: of every overload it has.
var strictFuncs = map[string]bool{"abs": true, "length": true, "char_length": true, "character_length": true,
	"octet_length": true, "lower": true, "upper": true, "round": true, "trunc": true, "floor": true, "ceil": true,
	"ceiling": true, "sqrt": true, "mod": true, "substr": true, "replace": true, "btrim": true, "ltrim": true,
	"rtrim": true, "left": true, "right": true, "strpos": true, "sign": true, "date_trunc": true, "md5": true,
	"power": true, "exp": true, "ln": true, "log": true, "split_part": true, "reverse": true, "initcap": true,
	"lpad": true, "rpad": true, "repeat": true, "name_in": true, "gcd": true, "lcm": true, "ascii": true}
