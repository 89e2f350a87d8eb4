package substrait

import (
	"fmt"
	"slices"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/extensions"
	"github.com/substrait-io/substrait-go/v8/plan"
	"github.com/substrait-io/substrait-go/v8/types"
	"google.golang.org/protobuf/proto"
)

// Errors only from rows that are paired (issue 18; docs/architecture.md, "Errors only from
// rows that are paired"). PostgreSQL evaluates a correlated subquery's select list for the
// rows its correlation selects, once per outer row; decorrelated (join.go's decorrelate), the
// subquery's relation computes it for every one of its rows, paired or not, so a cast of a
// text that is not a number, or a division by zero, on a row no outer row pairs would fail
// the query where PostgreSQL answers. A correlated subquery decorrelated on equalities
// therefore computes each select-list expression that may fail as two columns, its
// deferred_value (NULL where it fails) and its deferred_error (scan/ops/deferred.go), and the
// join that pairs it reads raise_deferred(error, value): the error is raised on the pairs
// only. An aggregate's arguments are deferred the same way, their errors gathered per group
// by min (any error of the group: PostgreSQL raises the first its scan meets, which no plan
// here orders). The filter pushdown and the executor's join lowering never move an
// expression reading raise_deferred below the join (HasDeferredRaise).

// The internal functions' names, longer than PostgreSQL's identifiers (NAMEDATALEN 64: the
// parser truncates longer names), so that no SQL text can call them.
const (
	deferredValueFn = "?deferred value: its argument, null where evaluating it fails on the row?"
	deferredErrorFn = "?deferred error: the error of evaluating its argument on the row, or null?"
)

// deferredCall builds the internal call fn(arg) in the syntax tree.
func deferredCall(fn string, arg *pg.Node) *pg.Node {
	return pg.MakeFuncCallNode([]*pg.Node{pg.MakeStrNode(fn)}, []*pg.Node{clonePG(arg)}, -1)
}

// bindDeferred binds deferredValueFn or deferredErrorFn (funcCall).
func (bd *binder) bindDeferred(name string, fc *pg.FuncCall, sc *scope) (bval, error) {
	if len(fc.GetArgs()) != 1 {
		return bval{}, fmt.Errorf("bind %s: one argument", name)
	}
	v, err := bd.bindExpr(fc.GetArgs()[0], sc)
	if err != nil {
		return bval{}, err
	}
	e := v.e
	if v.untyped() {
		if e, err = bd.coerce(v, strType(), "subquery"); err != nil {
			return bval{}, err
		}
	}
	if name == deferredErrorFn {
		f, err := bd.fn(URNPostgres, "deferred_error", strType(), e)
		return typed(f), err
	}
	f, err := bd.fn(URNPostgres, "deferred_value", e.GetType().WithNullability(types.NullabilityNullable), e)
	out := typed(f)
	out.bytea, out.json, out.jsonb, out.bpchar, out.typmod = v.bytea, v.json, v.jsonb, v.bpchar, v.typmod // the value's kind, deferred with it
	if ds := v.ds; ds != nil {
		// A varying numeric's display scale (dscale.go), deferred as its value.
		out.ds = onceScale(func() (expr.Expression, error) {
			s, err := ds()
			if err != nil {
				return nil, err
			}
			return bd.fn(URNPostgres, "deferred_value", s.GetType().WithNullability(types.NullabilityNullable), s)
		})
	}
	return out, err
}

// raiseDeferred is raise_deferred(errs, v): v, raising the error of the first row whose errs
// is not NULL.
func (bd *binder) raiseDeferred(errs, v expr.Expression) (expr.Expression, error) {
	return bd.fn(URNPostgres, "raise_deferred", v.GetType(), errs, v)
}

// HasDeferredRaise reports whether e reads raise_deferred: an expression PostgreSQL evaluates
// on a join's pairs alone, which no rewrite may move below the join.
func HasDeferredRaise(e expr.Expression) bool {
	found := false
	var visit expr.VisitFunc
	visit = func(x expr.Expression) expr.Expression {
		if found {
			return x
		}
		if f, ok := x.(*expr.ScalarFunction); ok && f.ID().URN == URNPostgres && f.Name() == "raise_deferred" {
			found = true
			return x
		}
		return x.Visit(visit)
	}
	if e != nil {
		visit(e)
	}
	return found
}

// simpleNode reports an expression that cannot fail: a column reference or a constant, or
// IS [NOT] NULL of one (the quantified comparisons' bool_or(y IS NULL), quantified.go).
func simpleNode(n *pg.Node) bool {
	if nt := n.GetNullTest(); nt != nil {
		n = nt.GetArg()
	}
	return n == nil || n.GetColumnRef() != nil || n.GetAConst() != nil
}

// deferTargets rewrites the select list of c, a correlated subquery decorrelated on
// equalities whose first nKeys targets are its correlation keys, so that each target that may
// fail is its deferred value, and appends its deferred error as one more target (above). A
// grouped c's targets are single aggregate calls (decorrelate), whose arguments are deferred
// and whose errors are min(deferred error) over the group's rows, under the call's FILTER. It
// returns, per target after the keys, the position of its error column in c's select list, -1
// for none.
func deferTargets(c *pg.SelectStmt, nKeys int, grouped bool) []int {
	return deferTargetsExcept(c, nKeys, grouped, nil)
}

// deferTargetsExcept is deferTargets, leaving the targets after the keys for which keep (when
// not nil) reports true, by their position among them, as they are.
func deferTargetsExcept(c *pg.SelectStmt, nKeys int, grouped bool, keep func(int, *pg.ResTarget) bool) []int {
	targets := c.GetTargetList()
	errs := make([]int, 0, len(targets)-nKeys)
	var extra []*pg.Node
	for i, t := range targets[nKeys:] {
		rt := t.GetResTarget()
		v := rt.GetVal()
		var errNode *pg.Node
		if keep != nil && keep(i, rt) {
			// As it is.
		} else if !mayDeferTarget(v, grouped) {
			// Nothing of it is deferred.
		} else if fc := v.GetFuncCall(); grouped && fc != nil && isAggregateCall(fc) {
			var mins []*pg.Node
			nfc := proto.Clone(fc).(*pg.FuncCall)
			for i, a := range fc.GetArgs() {
				if !deferredArg(a) {
					continue
				}
				nfc.Args[i] = deferredCall(deferredValueFn, a)
				m := pg.MakeFuncCallNode([]*pg.Node{pg.MakeStrNode("min")}, []*pg.Node{deferredCall(deferredErrorFn, a)}, -1)
				if f := fc.GetAggFilter(); f != nil {
					m.GetFuncCall().AggFilter = clonePG(f)
				}
				mins = append(mins, m)
			}
			switch len(mins) {
			case 0:
			case 1:
				errNode = mins[0]
			default:
				errNode = &pg.Node{Node: &pg.Node_CoalesceExpr{CoalesceExpr: &pg.CoalesceExpr{Args: mins, Location: -1}}}
			}
			if errNode != nil {
				rt.Val = &pg.Node{Node: &pg.Node_FuncCall{FuncCall: nfc}}
			}
		} else if !grouped {
			errNode = deferredCall(deferredErrorFn, v)
			rt.Val = deferredCall(deferredValueFn, v)
			if rt.GetName() == "" {
				rt.Name = figureColname(v) // the name the call would otherwise hide
			}
		}
		if errNode == nil {
			errs = append(errs, -1)
			continue
		}
		errs = append(errs, len(targets)+len(extra))
		extra = append(extra, &pg.Node{Node: &pg.Node_ResTarget{ResTarget: &pg.ResTarget{
			Name: fmt.Sprintf("?error%d?", len(extra)), Val: errNode, Location: -1}}})
	}
	c.TargetList = append(targets, extra...)
	return errs
}

// deferredArg reports whether deferTargets defers the expression a (a target's, or an
// aggregate argument's): one that may fail (not simpleNode) and reads no subquery.
func deferredArg(a *pg.Node) bool {
	return !simpleNode(a) && !hasSubLink(a)
}

// mayDeferTarget reports whether deferTargets rewrites the select-list expression v (of a
// grouped subquery when grouped): ungrouped, v itself is deferred (deferredArg); grouped, an
// aggregate call with an argument deferredArg defers. When it is false for every target,
// deferTargets leaves the select list as it is and answers -1 for each, so a caller may skip
// cloning the statement (decorrelate: a clone per nesting level of scalar subqueries copied
// every level below it, quadratic in the depth).
func mayDeferTarget(v *pg.Node, grouped bool) bool {
	if !grouped {
		return deferredArg(v)
	}
	fc := v.GetFuncCall()
	return fc != nil && isAggregateCall(fc) && slices.ContainsFunc(fc.GetArgs(), deferredArg)
}

// raiseAt returns e with every reference to a column of valErr's keys (positions in the scope
// e is bound over) replaced by raise_deferred(its error column, it).
func (bd *binder) raiseAt(e expr.Expression, sc *scope, valErr map[int]int) (expr.Expression, error) {
	return bd.raiseWith("raise_deferred", e, sc, valErr)
}

// raiseLateralCond is raiseAt over a LATERAL join's condition (sc: the outer scope's nl
// columns, then the subquery's), or an inner join's over a derived table (derived.go),
// conjunct by conjunct: one over one side's columns alone (the subquery's, the derived
// table's) reads raise_deferred_here, which the filter pushdown and the join lowering may move onto the
// subquery's rows as any conjunct over one side, since PostgreSQL, having pulled the
// subquery up, evaluates it at its scan, on every row (its select list it evaluates on the
// joined rows alone).
func (bd *binder) raiseLateralCond(cond expr.Expression, sc *scope, nl int, valErr map[int]int) (expr.Expression, error) {
	conj := []expr.Expression{cond}
	if f, ok := cond.(*expr.ScalarFunction); ok && f.ID().URN == URNBoolean && f.Name() == "and" {
		conj = conj[:0]
		for i := range f.NArgs() {
			a, ok := f.Arg(i).(expr.Expression)
			if !ok {
				return bd.raiseAt(cond, sc, valErr)
			}
			conj = append(conj, a)
		}
	}
	for i, c := range conj {
		fn := "raise_deferred"
		if lo, hi := refRange(c); lo >= nl || lo >= 0 && hi < nl {
			fn = "raise_deferred_here"
		}
		var err error
		if conj[i], err = bd.raiseWith(fn, c, sc, valErr); err != nil {
			return nil, err
		}
	}
	return bd.and(conj)
}

// refRange is the least and the greatest column e references plainly (lo a large number and
// hi -1 for none; lo -1 when one reference is not plain).
func refRange(e expr.Expression) (lo, hi int) {
	lo, hi = 1<<30, -1
	var visit expr.VisitFunc
	visit = func(x expr.Expression) expr.Expression {
		if fr, ok := x.(*expr.FieldReference); ok {
			i, plain := fieldIndex(fr)
			switch {
			case !plain:
				lo = -1
			case lo >= 0:
				lo, hi = min(lo, i), max(hi, i)
			}
			return x
		}
		return x.Visit(visit)
	}
	visit(e)
	return lo, hi
}

func (bd *binder) raiseWith(fn string, e expr.Expression, sc *scope, valErr map[int]int) (expr.Expression, error) {
	if len(valErr) == 0 {
		return e, nil
	}
	var rerr error
	var visit expr.VisitFunc
	visit = func(x expr.Expression) expr.Expression {
		if fr, ok := x.(*expr.FieldReference); ok {
			if i, plain := fieldIndex(fr); plain {
				if ei, ok := valErr[i]; ok {
					r, err := bd.fn(URNPostgres, fn, x.GetType(), sc.ref(ei), x)
					if err != nil {
						rerr = err
					}
					return r
				}
			}
			return x
		}
		return x.Visit(visit)
	}
	out := visit(e)
	return out, rerr
}

// fieldIndex is the input column a plain root field reference reads.
func fieldIndex(fr *expr.FieldReference) (int, bool) {
	sf, ok := fr.Reference.(*expr.StructFieldRef)
	if !ok || sf.Child != nil || fr.Root != expr.RootReference {
		return 0, false
	}
	return int(sf.Field), true
}

// atMostOneRow reports a subquery that answers at most one row (per outer row, decorrelated
// on its correlation keys or over its domain): one of aggregates without GROUP BY, a LIMIT of
// 0 or 1 (not FETCH FIRST 1 ROW WITH TIES, which keeps the row's peers), one VALUES row.
func atMostOneRow(sub *pg.SelectStmt) bool {
	if sub.GetOp() != pg.SetOperation_SETOP_NONE && sub.GetOp() != pg.SetOperation_SET_OPERATION_UNDEFINED {
		return false
	}
	if count, _, ok := constLimit(sub); ok && count >= 0 && count <= 1 && sub.GetLimitOption() != pg.LimitOption_LIMIT_OPTION_WITH_TIES {
		return true
	}
	if vl := sub.GetValuesLists(); len(vl) > 0 {
		return len(vl) == 1
	}
	return len(sub.GetGroupClause()) == 0 && (sub.GetHavingClause() != nil || hasAggregate(sub.GetTargetList()))
}

// oneRowPerKey groups r, a scalar subquery's relation (its nk correlation keys, its value,
// then its deferred errors; errs as decorrelate's), by its keys, so that the single join
// pairs an outer row with one row at most and never raises: the keys, the value (min of the
// group's value, its one value where it has one), and one error column: the group's deferred
// error (min, as deferTargets gathers an aggregate's), else subquery_rows_error of its row
// count (scan/ops/deferred.go), PostgreSQL's 21000 where it has more than one row. Read
// through raise_deferred where the expression reading the subquery evaluates it, the
// cardinality error is raised on those rows alone, as PostgreSQL raises it when it runs the
// subquery there (issue 18). ok is false, r unchanged, where the value's type has no min or
// a key is an interval (the join then raises 21000 on every outer row with two rows; a
// DISTINCT or grouped select list deferred for the regrouping, bd.regrouped, then raises
// 21000 there too where a failing row beside a good one would raise its own error).
// PostgreSQL raises a select-list error of the first two rows it reads before 21000; which
// rows those are its plan decides, so a group with both a failing row and two rows raises the
// select list's error here.
func (bd *binder) oneRowPerKey(r *boundRel, nk int, errs []int) (_ *boundRel, _ []int, ok bool, _ error) {
	vt := r.sc.cols[nk].typ
	id := extensions.ID{Name: "min"}
	if familyOf(vt) == famNumeric {
		id.URN = extensions.SubstraitDefaultURNPrefix + "functions_arithmetic_decimal"
	} else if id.URN, ok = minMaxURN(familyOf(vt)); !ok {
		return r, errs, false, nil
	}
	groups := make([]expr.Expression, nk)
	for i := range groups {
		groups[i] = r.sc.ref(i)
	}
	if refuseIntervalKeys(groups, "") != nil {
		return r, errs, false, nil
	}
	measure := func(id extensions.ID, args ...types.FuncArg) (plan.AggRelMeasure, error) {
		f, err := expr.NewAggregateFunc(bd.reg, id, nil, types.AggInvocationAll, types.AggPhaseInitialToResult, nil, args...)
		if err != nil {
			return plan.AggRelMeasure{}, fmt.Errorf("bind subquery: %w", err)
		}
		return bd.b.Measure(f, nil), nil
	}
	minV, err := measure(id, r.sc.ref(nk))
	if err != nil {
		return nil, nil, false, err
	}
	count, err := measure(extensions.ID{URN: URNAggregate, Name: "count"})
	if err != nil {
		return nil, nil, false, err
	}
	measures := []plan.AggRelMeasure{minV, count}
	if len(errs) > 0 && errs[0] >= 0 {
		minE, err := measure(extensions.ID{URN: URNPostgres, Name: "min"}, r.sc.ref(errs[0]))
		if err != nil {
			return nil, nil, false, err
		}
		measures = append(measures, minE)
	}
	var gs [][]expr.Expression
	if nk > 0 {
		gs = [][]expr.Expression{groups}
	}
	arel, err := bd.b.AggregateExprs(r.rel, measures, gs...)
	if err != nil {
		return nil, nil, false, fmt.Errorf("bind subquery: %w", err)
	}
	asc := &scope{cols: slices.Clone(r.sc.cols[:nk+1])}
	asc.cols[nk].typ = vt.WithNullability(types.NullabilityNullable)
	asc.cols = append(asc.cols, col{typ: &types.Int64Type{Nullability: types.NullabilityRequired}}, col{typ: strType()})
	var rowsErr expr.Expression
	if rowsErr, err = bd.fn(URNPostgres, "subquery_rows_error", strType(), asc.ref(nk+1)); err != nil {
		return nil, nil, false, err
	}
	if len(measures) == 3 {
		nn, err := bd.fn(URNComparison, "is_not_null", booleanType(), asc.ref(nk+2))
		if err != nil {
			return nil, nil, false, err
		}
		if rowsErr, err = bd.ifThen([]expr.IfThenPair{{If: nn, Then: asc.ref(nk + 2)}}, rowsErr); err != nil {
			return nil, nil, false, err
		}
	}
	mapping := make([]int32, 0, nk+2)
	for i := range nk + 1 {
		mapping = append(mapping, int32(i))
	}
	mapping = append(mapping, int32(nk+1+len(measures)-1))
	pr, err := bd.b.ProjectRemap(arel, mapping, rowsErr)
	if err != nil {
		return nil, nil, false, fmt.Errorf("bind subquery: %w", err)
	}
	out := &boundRel{rel: pr, sc: &scope{cols: append(asc.cols[:nk+1], col{name: "?error?", typ: strType(), hidden: true})}}
	out.names = append(slices.Clone(r.names[:min(len(r.names), nk+1)]), "?error?")
	return out, []int{nk + 1}, true, nil
}

// unionOfPlain reports a UNION [ALL] (top: the subquery itself, without ORDER BY or LIMIT)
// whose arms are UNIONs of the same kind or SELECTs deferrableAlone would defer regrouped,
// without ORDER BY or LIMIT (an ordering by a deferred value would pick other rows).
// INTERSECT and EXCEPT would match an arm's error column against the other's: not taken.
func unionOfPlain(sel *pg.SelectStmt, top bool) bool {
	if sel.GetLimitCount() != nil || sel.GetLimitOffset() != nil || len(sel.GetSortClause()) > 0 {
		return false
	}
	switch sel.GetOp() {
	case pg.SetOperation_SETOP_UNION:
		return unionOfPlain(sel.GetLarg(), false) && unionOfPlain(sel.GetRarg(), false)
	case pg.SetOperation_SETOP_NONE, pg.SetOperation_SET_OPERATION_UNDEFINED:
		return !top && deferrableAlone(sel, true)
	}
	return false
}

// deferUnion rewrites each arm of a UNION that unionOfPlain accepts as deferTargets does (an
// arm with nothing to defer answers a NULL error), so that the union's second column is every
// row's deferred error; it reports whether an arm defers one.
func deferUnion(sel *pg.SelectStmt) bool {
	if sel.GetOp() == pg.SetOperation_SETOP_UNION {
		l, r := deferUnion(sel.GetLarg()), deferUnion(sel.GetRarg())
		return l || r
	}
	grouped := len(sel.GetGroupClause()) > 0 || sel.GetHavingClause() != nil || hasAggregate(sel.GetTargetList())
	if errs := deferTargets(sel, 0, grouped); errs[0] >= 0 {
		return true
	}
	sel.TargetList = append(sel.TargetList, &pg.Node{Node: &pg.Node_ResTarget{ResTarget: &pg.ResTarget{
		Name: "?error0?", Val: deferredCall(deferredErrorFn, pg.MakeAConstIntNode(0, -1)), Location: -1}}})
	return false
}

// deferSortKeys gathers the errors of the ORDER BY keys (keys) that decorrelation drops from
// c, a correlated subquery without grouping whose first nKeys targets are its correlation
// keys (errs as deferTargets'), into its first target's deferred error, appending one where
// that target has none: PostgreSQL sorts the rows its correlation selects for an outer row,
// evaluating every key on each of them (EXPLAIN VERBOSE on PostgreSQL 15: the subplan's Sort
// over the scan computing the key), before it reads one, so a key that fails there fails the
// subquery as its select list would. A key naming an output column (by position or name) is
// (simpleNode) is the target's, whose error is already there, or an input column, which
// cannot fail; a key holding a subquery is left out.
func deferSortKeys(c *pg.SelectStmt, nKeys int, keys []*pg.Node, errs []int) []int {
	return deferSortKeysAs(c, nKeys, keys, errs, false)
}

// deferSortKeysAs is deferSortKeys; with replace, each key whose error it gathers is replaced
// in place by its deferred value (an ORDER BY kept, under LIMIT: deferLimitedSort).
func deferSortKeysAs(c *pg.SelectStmt, nKeys int, keys []*pg.Node, errs []int, replace bool) []int {
	targets := c.GetTargetList()
	if len(errs) == 0 || len(targets) <= nKeys {
		return errs
	}
	var keyErrs []*pg.Node
	for _, k := range keys {
		n := k.GetSortBy().GetNode()
		if n == nil || simpleNode(n) || hasSubLink(n) {
			continue
		}
		keyErrs = append(keyErrs, deferredCall(deferredErrorFn, n))
		if replace {
			k.GetSortBy().Node = deferredCall(deferredValueFn, n)
		}
	}
	if len(keyErrs) == 0 {
		return errs
	}
	if e := errs[0]; e >= 0 {
		rt := targets[e].GetResTarget()
		rt.Val = &pg.Node{Node: &pg.Node_CoalesceExpr{CoalesceExpr: &pg.CoalesceExpr{Args: append([]*pg.Node{rt.GetVal()}, keyErrs...), Location: -1}}}
		return errs
	}
	errNode := keyErrs[0]
	if len(keyErrs) > 1 {
		errNode = &pg.Node{Node: &pg.Node_CoalesceExpr{CoalesceExpr: &pg.CoalesceExpr{Args: keyErrs, Location: -1}}}
	}
	errs = slices.Clone(errs)
	errs[0] = len(targets)
	c.TargetList = append(targets, &pg.Node{Node: &pg.Node_ResTarget{ResTarget: &pg.ResTarget{
		Name: "?sorterror?", Val: errNode, Location: -1}}})
	return errs
}

// deferLimitedSort defers the errors of c, a subquery without grouping, DISTINCT or window
// functions whose ORDER BY is kept under a LIMIT without OFFSET (its first nKeys targets, keys,
// its correlation keys over its domain: none uncorrelated), whose targets deferTargets has
// deferred (errs as its). PostgreSQL computes the select list and the sort keys on every row
// an outer row selects, below its Sort (EXPLAIN VERBOSE on PostgreSQL 15: the scan's output),
// before the LIMIT keeps the first: so the keys that may fail sort by their deferred values
// (deferSortKeysAs), and the error column is the least error of those rows, min(error) OVER
// (PARTITION BY keys), which every row the LIMIT keeps carries (a LIMIT of at least one row
// keeps one row of each partition).
func deferLimitedSort(c *pg.SelectStmt, keys []*pg.Node, errs []int) []int {
	errs = deferSortKeysAs(c, len(keys), c.GetSortClause(), errs, true)
	if len(errs) == 0 || errs[0] < 0 {
		return errs
	}
	rt := c.GetTargetList()[errs[0]].GetResTarget()
	rt.Val = &pg.Node{Node: &pg.Node_FuncCall{FuncCall: &pg.FuncCall{
		Funcname: []*pg.Node{pg.MakeStrNode("min")},
		Args:     []*pg.Node{rt.GetVal()},
		Over: &pg.WindowDef{PartitionClause: slices.Clone(keys),
			FrameOptions: frameRange | frameStartUnbPrec | frameEndCurrent},
		Location: -1,
	}}}
	return errs
}

// deferHaving defers the HAVING clause of c, a grouped subquery whose targets deferTargets has
// deferred (errs as its), where its aggregates' arguments and filters cannot fail
// (simpleNode): PostgreSQL evaluates HAVING on the groups an outer row selects, so HAVING h
// becomes deferred_value(h) IS TRUE OR error IS NOT NULL — a group whose aggregate argument
// or HAVING fails is kept, its error (the select list's, else deferred_error(h)) read where
// the subquery is, as the groups PostgreSQL computes and raises on. ok is false, c unchanged,
// where an aggregate of h may fail (its argument would be computed on every row).
func deferHaving(c *pg.SelectStmt, errs []int) (_ []int, ok bool) {
	h := c.GetHavingClause()
	if h == nil {
		return errs, true
	}
	if hasSubLink(h) || len(errs) == 0 || anyCall(h, func(fc *pg.FuncCall) bool {
		return isAggregateCall(fc) && (slices.ContainsFunc(fc.GetArgs(), func(a *pg.Node) bool { return !simpleNode(a) }) ||
			fc.GetAggFilter() != nil && !simpleNode(fc.GetAggFilter()))
	}) {
		return errs, false
	}
	hErr := deferredCall(deferredErrorFn, h)
	targets := c.GetTargetList()
	if e := errs[0]; e >= 0 {
		rt := targets[e].GetResTarget()
		rt.Val = &pg.Node{Node: &pg.Node_CoalesceExpr{CoalesceExpr: &pg.CoalesceExpr{Args: []*pg.Node{rt.GetVal(), hErr}, Location: -1}}}
	} else {
		errs = slices.Clone(errs)
		errs[0] = len(targets)
		c.TargetList = append(targets, &pg.Node{Node: &pg.Node_ResTarget{ResTarget: &pg.ResTarget{
			Name: "?havingerror?", Val: hErr, Location: -1}}})
	}
	kept := &pg.Node{Node: &pg.Node_BooleanTest{BooleanTest: &pg.BooleanTest{Arg: deferredCall(deferredValueFn, h), Booltesttype: pg.BoolTestType_IS_TRUE, Location: -1}}}
	failed := &pg.Node{Node: &pg.Node_NullTest{NullTest: &pg.NullTest{Arg: clonePG(c.GetTargetList()[errs[0]].GetResTarget().GetVal()), Nulltesttype: pg.NullTestType_IS_NOT_NULL, Location: -1}}}
	c.HavingClause = pg.MakeBoolExprNode(pg.BoolExprType_OR_EXPR, []*pg.Node{kept, failed}, -1)
	return errs, true
}
