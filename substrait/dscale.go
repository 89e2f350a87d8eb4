package substrait

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/types"
	"google.golang.org/protobuf/proto"
)

// Numerics whose display scale varies row by row.
//
// PostgreSQL's numeric values carry their own display scale: avg of integers is numeric_div's
// quotient, whose scale select_div_scale chooses from the sum and the count (16 significant
// digits or more: 1.5000000000000000, 15000.0000000000000000 for one row of 15000 but
// 15000.000000000000 for two), and CASE or COALESCE of numerics of different scales keeps
// each value's own (CASE … THEN 1.5 ELSE 2 END shows 2). One decimal column has one scale:
// such a value is held at a scale that holds every row exactly (avg's ops.AvgScale, the
// largest of the branches'), which clients read as an exact decimal, and its display scale
// travels beside it in the binder (bval.ds) as an int32 expression bound only when the value
// is written as text (::text, ||, concat): numeric_text_at writes each row at its own scale,
// the text numeric_out writes.
//
// Display scales follow PostgreSQL's rules (docs/architecture.md, decision 18): an
// average's is select_div_scale of its exact sum and count (numeric_div_scale over two more
// measures of the aggregate, or window functions of the window, with the same argument,
// DISTINCT and FILTER), a bare quotient's that of its operands' values and display scales
// (numericDivide); a + b and
// a - b take the larger of the two, a * b their sum; unary minus, abs and a cast to
// unconstrained numeric keep it; round, trunc, ceil, floor and casts to numeric(p,s) fix it;
// CASE, COALESCE, GREATEST and LEAST take the chosen argument's (branchScale, minMaxScale),
// NULLIF(a, b) and COALESCE(a) a's (nullIfScale).
//
// A derived table's or WITH query's SELECT, read alone, computes each varying numeric's display scale as one more hidden
// column (binder.keepScales, markScales), which the scope names beside the value
// (col.scaleName): the query reading it binds that column as the value's display scale
// (scope.scaleOf), so an average of averages follows PostgreSQL's scales. DISTINCT ON keeps
// it with its row; a set operation's arms carry theirs (markArms, setArms), and UNION,
// INTERSECT and EXCEPT show a group's one scale (finishSet, numeric_group_scale). A scalar subquery's
// value is joined with its display scale beside it, the subquery bound a second time as
// scale(x) (scaleJoin, sublinkScale). Where the scale cannot be followed — a varying numeric
// read from a derived table, CTE or set operation under a join (the scope's col.vary without
// scaleName, which every projection passing the column keeps), a GROUP BY key
// (but a scalar subquery's, groupedScale), min or max (one row's value) — its text is refused
// by name (lostScale), never written at the column's scale.

// dscale binds the int32 display scale of each row of a varying numeric.
type dscale func() (expr.Expression, error)

// lostScale is the display scale of a varying numeric whose scales the binder cannot follow
// from where it is: asking for it (its text) is refused by name.
func lostScale(what string) dscale {
	return func() (expr.Expression, error) {
		return nil, &lostScaleError{what: what, err: refused(Unimplemented, "0A000", "the text of %s is not supported: PostgreSQL shows each value at its own display scale, "+
			"which flightsrv follows only in the select list that computes it (round it or cast it to numeric(p,s), or write the text there)", what)}
	}
}

// scaleOf is the display scale of the varying numeric column i of sc: the hidden column
// scaleName names (a derived table's, keepScales), read through numeric_scale_known (a row of
// a set operation whose equal values came with different display scales holds -1 there,
// finishSet, and is refused where its scale is read), lostScale where the scope has none.
func (bd *binder) scaleOf(sc *scope, i int) dscale {
	if n := sc.cols[i].scaleName; n != "" {
		if j := slices.IndexFunc(sc.cols, func(c col) bool { return c.name == n }); j >= 0 {
			ref := sc.ref(j)
			return onceScale(func() (expr.Expression, error) {
				return bd.fn(URNPostgres, "numeric_scale_known", i32Type(), ref)
			})
		}
	}
	return lostScale("a numeric whose display scale varies by row (an average) read from a subquery, CTE or set operation")
}

// markScales marks sel, the SELECT of a derived table read alone (the one FROM item of its
// query: under a join, the hidden columns would change the join's plan, and its varying
// numerics' text stays refused), for its varying numerics to carry their display scales out
// (keepScales): a plain SELECT (no set operation) without plain DISTINCT, whose select list
// is bound by bindSimple (DISTINCT ON keeps whole rows, their scales with them), VALUES, or a
// set operation (UNION, INTERSECT, EXCEPT, ALL or not), whose arms carry theirs too (setArms,
// markArms) and whose groups of equal rows show one scale (finishSet).
func (bd *binder) markScales(sel *pg.SelectStmt) {
	if bd.keepScales == nil {
		bd.keepScales = map[*pg.SelectStmt]bool{}
	}
	bd.keepScales[sel] = true
}

// loneCTE is the SELECT of the non-recursive WITH query that is sel's one FROM item (by its
// name, not shadowed by a correlated subquery's domain or a recursive query's working table),
// nil for any other FROM: like a derived table read alone, it carries its varying numerics'
// display scales out (markScales), for this reference only.
func (bd *binder) loneCTE(sel *pg.SelectStmt) *pg.SelectStmt {
	fc := sel.GetFromClause()
	if len(fc) != 1 || fc[0].GetRangeVar() == nil {
		return nil
	}
	rv := fc[0].GetRangeVar()
	name := rv.GetRelname()
	if rv.GetSchemaname() != "" || rv.GetCatalogname() != "" || bd.domains[name] != nil || bd.workTables[name] != nil || bd.active[name] {
		return nil
	}
	c := bd.cte(name)
	if c == nil || bd.recursive[c] {
		return nil
	}
	return c.GetCtequery().GetSelectStmt()
}

// lostScaleError is lostScale's refusal (an *Error, its Unwrap) with what it names, so that an
// operation reading the display scale (a quotient, avg) names the value in its own refusal.
type lostScaleError struct {
	what string
	err  *Error
}

func (e *lostScaleError) Error() string { return e.err.Error() }
func (e *lostScaleError) Unwrap() error { return e.err }

// lostWhat is what a lostScale refusal names ("a numeric whose display scale varies by row"
// for any other error).
func lostWhat(err error) string {
	if le, ok := errors.AsType[*lostScaleError](err); ok {
		return le.what
	}
	return "a numeric whose display scale varies by row"
}

// scaleExpr is the display scale of v as an int32 expression: its ds, else its type's scale
// (integers 0, an untyped constant the digits after its point, NULL 0).
func (bd *binder) scaleExpr(v bval) (expr.Expression, error) {
	if v.ds != nil {
		return v.ds()
	}
	return expr.NewPrimitiveLiteral(staticScale(v), true), nil
}

// staticScale is the display scale of a value whose scale is its type's.
func staticScale(v bval) int32 {
	switch {
	case v.str != nil:
		if _, s, err := parseNumericText(*v.str); err == nil {
			return s
		}
	case v.e != nil:
		if s, ok := numScale(v.typ()); ok {
			return s
		}
	}
	return 0
}

// combineScale is the display scale of l op r for + and - ("max") or * ("add"), nil when
// neither varies.
func (bd *binder) combineScale(op string, l, r bval) dscale {
	if l.ds == nil && r.ds == nil {
		return nil
	}
	return onceScale(func() (expr.Expression, error) {
		a, err := bd.scaleExpr(l)
		if err != nil {
			return nil, err
		}
		b, err := bd.scaleExpr(r)
		if err != nil {
			return nil, err
		}
		return bd.fn(URNPostgres, "numeric_dscale", i32Type(), types.Enum(op), a, b)
	})
}

// onceScale binds f at most once (a value written as text twice asks for its scale twice).
func onceScale(f dscale) dscale {
	var (
		once sync.Once
		e    expr.Expression
		err  error
	)
	return func() (expr.Expression, error) {
		once.Do(func() { e, err = f() })
		return e, err
	}
}

// varyingScales reports whether values of one column (CASE, COALESCE, GREATEST/LEAST) of
// numeric type have display scales that differ: one varies already, or their scales differ.
func varyingScales(vs []bval) bool {
	scale := int32(-1)
	for _, v := range vs {
		if v.ds != nil {
			return true
		}
		if v.null || v.param > 0 || (v.e != nil && !isNumber(familyOf(v.typ()))) {
			continue
		}
		if v.str != nil {
			if _, _, err := parseNumericText(*v.str); err != nil {
				continue
			}
		}
		s := staticScale(v)
		if scale >= 0 && s != scale {
			return true
		}
		scale = s
	}
	return false
}

// branchScale is the display scale of CASE WHEN conds[i] THEN vs[i] … ELSE vs[last] END (and
// of COALESCE, whose conditions are the IS NOT NULL tests): the chosen branch's.
func (bd *binder) branchScale(conds []expr.Expression, vs []bval) dscale {
	return onceScale(func() (expr.Expression, error) {
		pairs := make([]expr.IfThenPair, len(conds))
		for i, c := range conds {
			s, err := bd.scaleExpr(vs[i])
			if err != nil {
				return nil, err
			}
			pairs[i] = expr.IfThenPair{If: c, Then: s}
		}
		els, err := bd.scaleExpr(vs[len(vs)-1])
		if err != nil {
			return nil, err
		}
		return bd.ifThen(pairs, els)
	})
}

// nullIfScale is the display scale of NULLIF(l, r), bound as x (l given the comparison's
// common type): l's own, as PostgreSQL's NULLIF answers its first argument's value unchanged
// (ExecEvalNullIf) — an average's or a quotient's varying scale, or l's type's scale where the
// common type holds it at a larger one (NULLIF(1.5, 2.25) shows 1.5); nil where x shows l's.
func nullIfScale(l bval, x expr.Expression) dscale {
	if l.ds != nil || familyOf(x.GetType()) != famNumeric {
		return l.ds
	}
	if l.untyped() && l.str == nil || l.e != nil && !isNumber(familyOf(l.typ())) {
		return nil // a NULL, a parameter (typed by the comparison), another type
	}
	s := staticScale(l)
	if xs, ok := numScale(x.GetType()); ok && xs == s {
		return nil
	}
	return func() (expr.Expression, error) { return expr.NewPrimitiveLiteral(s, true), nil }
}

// minMaxScale is the display scale of GREATEST or LEAST of vs, whose value the binder chose
// step by step (steps[k]: the accumulated value is NULL, vs[k+1] is better): the chosen
// argument's, as PostgreSQL's ExecEvalMinMax answers one of its arguments unchanged (the first
// of equal values: GREATEST(1.50, 1.5) shows 1.50).
func (bd *binder) minMaxScale(steps [][2]expr.Expression, vs []bval) dscale {
	return onceScale(func() (expr.Expression, error) {
		acc, err := bd.scaleExpr(vs[0])
		if err != nil {
			return nil, err
		}
		for k, st := range steps {
			s, err := bd.scaleExpr(vs[k+1])
			if err != nil {
				return nil, err
			}
			if acc, err = bd.ifThen([]expr.IfThenPair{{If: st[0], Then: s}, {If: st[1], Then: s}}, acc); err != nil {
				return nil, err
			}
		}
		return acc, nil
	})
}

// avgDisplayScale is the display scale of avg(x) of integers, the aggregate call fc bound in ac:
// select_div_scale of the exact sum and the count of the same values (two more measures of
// the aggregate, added only when the text is asked for).
func (bd *binder) avgDisplayScale(fc *pg.FuncCall, ac *aggCtx) dscale {
	return onceScale(func() (expr.Expression, error) {
		if ac.built {
			return lostScale("avg of integers outside the select list, HAVING and ORDER BY of its query")()
		}
		return bd.sumCountScale(fc, func(c *pg.FuncCall) (bval, error) {
			saved := bd.agg
			bd.agg = ac
			defer func() { bd.agg = saved }()
			return bd.measure(c, ac)
		})
	})
}

// sumCountScale is numeric_div_scale(sum(x), count(x)) of the avg call fc: bind binds each of
// the two calls (fc renamed, its arguments, FILTER, DISTINCT and window kept) as fc is bound.
func (bd *binder) sumCountScale(fc *pg.FuncCall, bind func(*pg.FuncCall) (bval, error)) (expr.Expression, error) {
	vs, err := sumAndCount(fc, bind)
	if err != nil {
		return nil, err
	}
	return bd.fn(URNPostgres, "numeric_div_scale", i32Type(), vs[0].e, vs[1].e)
}

// sumAndCount binds sum(x) and count(x) of the avg call fc with bind: fc renamed, its
// arguments, FILTER, DISTINCT and window kept.
func sumAndCount(fc *pg.FuncCall, bind func(*pg.FuncCall) (bval, error)) ([2]bval, error) {
	var vs [2]bval
	for i, name := range []string{"sum", "count"} {
		c := &pg.FuncCall{Funcname: []*pg.Node{pg.MakeStrNode(name)}, Args: fc.GetArgs(), AggFilter: fc.GetAggFilter(),
			AggDistinct: fc.GetAggDistinct(), Over: fc.GetOver(), Funcformat: fc.GetFuncformat(), Location: fc.GetLocation()}
		v, err := bind(c)
		if err != nil {
			return vs, err
		}
		vs[i] = v
	}
	return vs, nil
}

// varyingText is the text of the varying numeric v, each row at its own display scale.
func (bd *binder) varyingText(v bval) (bval, error) {
	ds, err := v.ds()
	if err != nil {
		return bval{}, err
	}
	f, err := bd.fn(URNPostgres, "numeric_text_at", strType(), v.e, ds)
	return typed(f), err
}

// quotientScale is the scale a bare numeric quotient is held at: PostgreSQL's quotients of
// values of small display scales show 16 to 20 digits after the point, and select_div_scale
// never gives fewer than either operand's.
const quotientScale = 20

// numericDivide is a / b of numerics (x and y, of scales sx and sy, bound from l and r) outside
// round, trunc, ceil, floor and numeric(p,s), which take numericQuotient's path: PostgreSQL's
// quotient, whose display scale select_div_scale chooses per row (numeric_div_scale), held at
// max(quotientScale, sx, sy) digits after the point (numeric_div_exact: a quotient with more
// digits that are not zeros is refused at run time, never rounded). An operand whose display
// scale varies by row (an average, avg(x) / 2) passes both operands' display scales to the
// two kernels, since select_div_scale reads them; one the binder cannot follow (lostScale) is
// refused by name.
func (bd *binder) numericDivide(l, r bval, x, y expr.Expression, sx, sy int32) (bval, error) {
	args := []types.FuncArg{x, y}
	if l.ds != nil || r.ds != nil {
		dl, errl := bd.scaleExpr(l)
		dr, errr := bd.scaleExpr(r)
		if err := cmp.Or(errl, errr); err != nil {
			return bval{}, refused(Unimplemented, "0A000", "the numeric operator / of %s is not supported: round it (round(a / b, n)) or cast it to numeric(p,s)", lostWhat(err))
		}
		args = append(args, dl, dr)
	}
	s := max(quotientScale, sx, sy)
	if s > 38 {
		return bval{}, unimplemented("a numeric quotient of operands with more than 38 digits after the point")
	}
	f, err := bd.fn(URNPostgres, "numeric_div_exact", numType(s), append([]types.FuncArg{types.Enum(strconv.Itoa(int(s)))}, args...)...)
	if err != nil {
		return bval{}, err
	}
	out := typed(f)
	out.ds = onceScale(func() (expr.Expression, error) {
		return bd.fn(URNPostgres, "numeric_div_scale", i32Type(), args...)
	})
	return out, nil
}

// scaleJoin joins to br, where scalarJoin left the value of the scalar subquery sl, the display
// scales of that value when it is a numeric whose display scale varies by row (an average, a
// quotient): the same subquery with its select list's one expression x written scale(x)
// (PostgreSQL's numeric_scale, whose value is each row's display scale), bound by scalarJoin
// as sl is, its value a hidden column that sublinkScale reads (bd.sublinkScales). The
// subquery is computed twice. Only a plain SELECT without DISTINCT, LIMIT or OFFSET, whose
// one row is the same both times, is followed; ok is false for any other, or where scale(x)
// does not bind (a display scale the subquery cannot follow itself): its text stays refused
// (sublinkScale's lostScale).
func (bd *binder) scaleJoin(br *boundRel, sl *pg.SubLink, atSite bool) (_ *boundRel, ok bool) {
	i, found := bd.sublinks[sl]
	if !found || i >= len(br.sc.cols) || !br.sc.cols[i].vary {
		return nil, false
	}
	sub := sl.GetSubselect().GetSelectStmt()
	if sub == nil || sub.GetOp() != pg.SetOperation_SETOP_NONE && sub.GetOp() != pg.SetOperation_SET_OPERATION_UNDEFINED ||
		len(sub.GetDistinctClause()) > 0 || sub.GetLimitCount() != nil || sub.GetLimitOffset() != nil || len(sub.GetTargetList()) != 1 {
		return nil, false
	}
	c := proto.Clone(sl).(*pg.SubLink)
	rt := c.GetSubselect().GetSelectStmt().GetTargetList()[0].GetResTarget()
	if rt == nil || rt.GetVal() == nil {
		return nil, false
	}
	rt.Val = &pg.Node{Node: &pg.Node_FuncCall{FuncCall: &pg.FuncCall{Funcname: []*pg.Node{pg.MakeStrNode("scale")},
		Args: []*pg.Node{rt.GetVal()}, Funcformat: pg.CoercionForm_COERCE_EXPLICIT_CALL, Location: -1}}}
	out, _, err := bd.scalarJoin(br, c, atSite)
	if err != nil {
		return nil, false
	}
	j, found := bd.sublinks[c]
	if !found || j >= len(out.sc.cols) || familyOf(out.sc.cols[j].typ) != famInt {
		return nil, false
	}
	if bd.sublinkScales == nil {
		bd.sublinkScales = map[*pg.SubLink]int{}
	}
	bd.sublinkScales[sl] = j
	return out, true
}

// sublinkScale is the display scale of the value of the scalar subquery sl, column i of sc:
// nil where it does not vary, scaleJoin's hidden column, else lostScale.
func (bd *binder) sublinkScale(sl *pg.SubLink, i int, sc *scope) dscale {
	if !sc.cols[i].vary {
		return nil
	}
	if j, ok := bd.sublinkScales[sl]; ok && j < len(sc.cols) && sc.cols[j].qual == subqueryQual {
		ref := sc.ref(j)
		return func() (expr.Expression, error) { return ref, nil }
	}
	return lostScale("a scalar subquery of a numeric whose display scale varies by row (an average)")
}

// groupedScale is the display scale, above the aggregation of ac, of a grouping key whose
// display scale ds varies by row: the key of ac that is ds's expression itself (a scalar
// subquery's display scale, grouped by beside its value: scaleJoin), one value per group;
// a constant display scale; lostScale for any other (equal values of different scales are
// one group, whose text PostgreSQL takes from whichever row it meets).
func groupedScale(ds dscale, ac *aggCtx) dscale {
	return onceScale(func() (expr.Expression, error) {
		if e, err := ds(); err == nil {
			if isLiteral(e) {
				return e, nil // one display scale (NULLIF(g, 2.5)'s)
			}
			if i := ac.keys.find(ac.groups, e, nil); i >= 0 {
				return ac.ref(i), nil
			}
		}
		return lostScale("a numeric whose display scale varies by row used as a GROUP BY key")()
	})
}

// comparedSublinks are the scalar subqueries of sel that are an operand of a comparison
// (=, <>, <, <=, >, >=, IS [NOT] DISTINCT FROM) and nothing else: their values are compared by
// value, never read at a display scale, so scaleJoin does not compute their scales.
func comparedSublinks(sel *pg.SelectStmt) map[*pg.SubLink]bool {
	out := map[*pg.SubLink]bool{}
	walkPG(sel.ProtoReflect(), func(n *pg.Node) bool {
		a := n.GetAExpr()
		if a == nil {
			return true
		}
		switch a.GetKind() {
		case pg.A_Expr_Kind_AEXPR_OP:
			if len(a.GetName()) != 1 {
				return true
			}
			switch a.GetName()[0].GetString_().GetSval() {
			case "=", "<>", "!=", "<", "<=", ">", ">=":
			default:
				return true
			}
		case pg.A_Expr_Kind_AEXPR_DISTINCT, pg.A_Expr_Kind_AEXPR_NOT_DISTINCT:
		default:
			return true
		}
		for _, side := range []*pg.Node{a.GetLexpr(), a.GetRexpr()} {
			if sl := side.GetSubLink(); sl != nil && sl.GetSubLinkType() == pg.SubLinkType_EXPR_SUBLINK {
				out[sl] = true
			}
		}
		return true
	})
	return out
}

// extremeScale is the display scale of min or max (name) of a numeric whose display scale
// ds varies: a constant one stays (NULLIF(g, 2.5)'s, every value's), any other is lost —
// PostgreSQL's numeric_smaller and numeric_larger keep the value they meet last among equal
// ones (max of 2 and 2.0 shows either, by the rows' order), so the extreme's text is refused.
func extremeScale(name string, ds dscale) dscale {
	return onceScale(func() (expr.Expression, error) {
		if e, err := ds(); err == nil && isLiteral(e) {
			return e, nil
		}
		return lostScale(name + " of a numeric whose display scale varies by row")()
	})
}

// isLiteral reports a constant expression (a literal display scale).
func isLiteral(e expr.Expression) bool {
	_, ok := e.(expr.Literal)
	return ok
}

// isScaleCol reports a hidden column holding the display scales of a varying numeric beside
// it (keepScales: col.scaleName names it).
func isScaleCol(c col) bool {
	return c.hidden && c.qual == subqueryQual && strings.HasPrefix(c.name, "?dscale")
}

// visibleCols is br without the hidden display scale columns after its visible ones (a set
// operation's arm read alone, markArms): a view of its scope, with the same relation, for
// reading its columns' kinds and untyped literals — never to project over.
func visibleCols(br *boundRel) *boundRel {
	n := len(br.sc.cols)
	for n > 0 && isScaleCol(br.sc.cols[n-1]) {
		n--
	}
	if n == len(br.sc.cols) {
		return br
	}
	return &boundRel{rel: br.rel, sc: &scope{cols: br.sc.cols[:n]}, names: br.names[:min(n, len(br.names))], unknown: br.unknown}
}

// markArms marks both arms of sel, a set operation read alone (keepScales), for their varying
// numerics to carry their display scales out as well (markScales); the function it returns
// unmarks those it marked, once they are bound.
func (bd *binder) markArms(sel *pg.SelectStmt) func() {
	var marked []*pg.SelectStmt
	for _, a := range []*pg.SelectStmt{sel.GetLarg(), sel.GetRarg()} {
		if a != nil && !bd.keepScales[a] {
			bd.markScales(a)
			if bd.keepScales[a] {
				marked = append(marked, a)
			}
		}
	}
	return func() {
		for _, a := range marked {
			delete(bd.keepScales, a)
		}
	}
}

// armScale is the display scale, as a nullable int32 expression over full (the arm as bound,
// its hidden columns included), of the visible column i of a set operation's arm (view, its
// visible columns): the hidden column named beside a varying one, the constant scale of one
// that does not vary (its type's, an untyped literal's digits after the point, a NULL's 0);
// ok false where the arm's own scales are lost (lostScale).
func armScale(full, view *boundRel, i int) (_ expr.Expression, ok bool) {
	c := view.sc.cols[i]
	if !c.vary {
		return expr.NewPrimitiveLiteral(staticScale(armValue(view, i)), true), true
	}
	if c.scaleName == "" {
		return nil, false
	}
	j := slices.IndexFunc(full.sc.cols, func(h col) bool { return h.name == c.scaleName })
	if j < 0 {
		return nil, false
	}
	return nullable(full.sc.ref(j)), true
}

// setScales chooses the columns of a set operation read alone (keep, keepScales) that carry
// their display scales as hidden columns (setArms): the numeric ones whose scale varies (vary,
// by arm or by row) where both arms' scales are known (armScale; EXCEPT's right arm, whose
// rows are never shown, a constant where its own are lost). It returns them, each arm's scale
// expressions for them (over lfull, rfull), and the hidden columns' names.
func (bd *binder) setScales(keep bool, op string, lfull, rfull, l, r *boundRel, common []types.Type, vary []bool) (cols []int, scales [2][]expr.Expression, names []string) {
	if !keep {
		return nil, scales, nil
	}
	for i, v := range vary {
		if !v || familyOf(common[i]) != famNumeric {
			continue
		}
		ls, lok := armScale(lfull, l, i)
		rs, rok := armScale(rfull, r, i)
		if !rok && op == "EXCEPT" {
			rs, rok = expr.NewPrimitiveLiteral(int32(0), true), true
		}
		if !lok || !rok {
			continue
		}
		cols = append(cols, i)
		scales[0], scales[1] = append(scales[0], ls), append(scales[1], rs)
		bd.scaleSeq++
		names = append(names, fmt.Sprintf("?dscale%d?", bd.scaleSeq))
	}
	return cols, scales, names
}

// scaledArm is a set operation's arm full (view its visible columns) as the set operation
// reads it: its visible columns, then the display scales setScales chose (scales, named
// names), without the arm's own hidden columns.
func (bd *binder) scaledArm(full, view *boundRel, scales []expr.Expression, names []string) (*boundRel, error) {
	n := len(view.sc.cols)
	if len(full.sc.cols) == n && len(scales) == 0 {
		return full, nil
	}
	es := make([]expr.Expression, 0, n+len(scales))
	for i := range n {
		es = append(es, full.sc.ref(i))
	}
	es = append(es, scales...)
	vn := slices.Clone(view.names)
	for len(vn) < n {
		vn = append(vn, fmt.Sprintf("?column%d?", len(vn)))
	}
	out, err := bd.project(full, es, append(vn[:n], names...))
	if err != nil {
		return nil, err
	}
	for k := range n {
		c := full.sc.cols[k]
		out.sc.cols[k].bpchar, out.sc.cols[k].vary = c.bpchar, c.vary
	}
	out.unknown = full.unknown
	return out, nil
}

// nameScales marks the last len(names) columns of arm (a set operation's, setArms) as the
// hidden display scales of its columns cols, named beside them (col.scaleName).
func nameScales(arm *boundRel, cols []int, names []string) {
	n := len(arm.sc.cols) - len(names)
	for k, i := range cols {
		h := &arm.sc.cols[n+k]
		h.name, h.qual, h.hidden = names[k], subqueryQual, true
		arm.sc.cols[i].scaleName = names[k]
	}
}
