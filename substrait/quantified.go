package substrait

import (
	"errors"

	pg "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"
)

// A correlated UNION [ALL] under EXISTS, IN, ANY or ALL is first expanded into the same test
// of each arm, joined by OR (AND for ALL): expandUnion.
//
// Quantified comparisons with a subquery other than IN: x op ANY (SELECT y …) with op one of
// <, <=, >, >=, <>, and x op ALL (SELECT y …) with op one of =, <>, <, <=, >, >=. Before a
// SELECT binds (bindSimple), each in its WHERE, select list and HAVING is rewritten into an
// expression over scalar subqueries of one aggregate each over the same subquery, which bind,
// correlated or not, as any scalar subquery (join.go): an uncorrelated one is evaluated once,
// so that x > ALL (SELECT …) costs two reads of the subquery (three for <> ANY and = ALL), not a nested
// loop. PostgreSQL's three-valued logic is kept:
//
//   - x op ANY (S) is true when some y of S makes x op y true, else NULL when some makes it
//     NULL (a NULL y, or a NULL x over an S of some row), else false (S empty: false). It is
//     CASE WHEN x op m THEN true WHEN n OR (x IS NULL AND n IS NOT NULL) THEN NULL ELSE false
//     END (n read once: CASE n WHEN true THEN true WHEN false THEN x IS NULL ELSE false END),
//     where m is (SELECT max(y) …) for < and <=, (SELECT min(y) …) for > and >= (a total
//     order: some y exceeds x exactly when the greatest does), and x <> min OR x <> max for <>
//     (some non-NULL y differs from x exactly when the least or the greatest does); n is
//     (SELECT bool_or(y IS NULL) …): true when some y is NULL, false over rows without, NULL
//     over none.
//   - x op ALL (S) is false when some y makes x op y false, else NULL when some makes it NULL,
//     else true (S empty: true): CASE WHEN NOT (x op m) THEN false WHEN n … THEN NULL ELSE
//     true END, m the least y for < and <=, the greatest for > and >=, and x = min AND x = max
//     for = (each the operator written, which a type error names); x <> ALL (S) is
//     NOT (x IN (S)), which binds as NOT IN does.
//
// The aggregate replaces S's select list when S is a plain SELECT (no set operation, GROUP
// BY, HAVING, aggregate, window, LIMIT, OFFSET or subquery in its select list; its DISTINCT
// and ORDER BY change no extreme and are dropped); any other S is read as a derived table,
// which must then be uncorrelated (a correlated one is refused by name). Refused by name as
// well: other operators (LIKE ANY, …), row values, a subquery whose select list is *, and one
// whose value reads the outer query's columns alone (x = ALL (SELECT o.y FROM …): max(o.y) would be the outer query's
// aggregate, refused as such by decorrelate).

// comparisonOps are the comparisons ALL and ANY (SELECT …) take ("!=" read as "<>").
var comparisonOps = map[string]bool{"=": true, "<>": true, "<": true, "<=": true, ">": true, ">=": true}

// quantifiedOp reads a SubLink that rewriteQuantified rewrites: its kind (ALL or not) and
// operator; ok false for any other SubLink (EXISTS, IN, = ANY, scalar, ARRAY).
func quantifiedOp(sl *pg.SubLink) (op string, all, ok bool) {
	t := sl.GetSubLinkType()
	if t != pg.SubLinkType_ALL_SUBLINK && t != pg.SubLinkType_ANY_SUBLINK {
		return "", false, false
	}
	names := sl.GetOperName()
	if len(names) == 0 {
		return "=", t == pg.SubLinkType_ALL_SUBLINK, t == pg.SubLinkType_ALL_SUBLINK // IN
	}
	op = names[len(names)-1].GetString_().GetSval()
	if op == "!=" {
		op = "<>"
	}
	all = t == pg.SubLinkType_ALL_SUBLINK
	return op, all, all || op != "="
}

// rewriteQuantified returns a copy of sel whose correlated UNIONs and quantified comparisons
// (above) in WHERE, the select list and HAVING are rewritten, or sel itself when it has none.
// Nested SELECTs are rewritten when they bind. The copy is the binder's own: a prepared
// statement's tree, which other binds may read at once, is never changed.
func (bd *binder) rewriteQuantified(sel *pg.SelectStmt) (*pg.SelectStmt, error) {
	found := false
	probe := func(n *pg.Node) bool {
		if sl := n.GetSubLink(); sl != nil {
			_, _, ok := quantifiedOp(sl)
			found = found || ok || unionArms(sl) != nil
		}
		return !found
	}
	for _, n := range append([]*pg.Node{sel.GetWhereClause(), sel.GetHavingClause()}, sel.GetTargetList()...) {
		if n != nil && probe(n) {
			walkPG(n.ProtoReflect(), probe)
		}
	}
	if !found {
		return sel, nil
	}
	c := proto.Clone(sel).(*pg.SelectStmt)
	var rerr error
	var visit func(n *pg.Node) bool
	visit = func(n *pg.Node) bool {
		sl := n.GetSubLink()
		if sl == nil || rerr != nil {
			return rerr == nil
		}
		if arms := unionArms(sl); arms != nil && bd.correlated(sl.GetSubselect().GetSelectStmt()) {
			n.Node = expandUnion(sl, arms).Node
			walkPG(n.ProtoReflect(), visit)
			return false
		}
		if _, _, ok := quantifiedOp(sl); !ok {
			if x := sl.GetTestexpr(); x != nil && visit(x) {
				walkPG(x.ProtoReflect(), visit)
			}
			return false
		}
		if x := sl.GetTestexpr(); x != nil && visit(x) {
			walkPG(x.ProtoReflect(), visit)
		}
		out, err := bd.quantified(sl)
		if err != nil {
			rerr = err
			return false
		}
		n.Node = out.Node
		return false
	}
	// A select-list item keeps the name PostgreSQL figures from what was written
	// (FigureColnameInternal: x > ALL (…) is ?column?, not the rewrite's "case").
	names := make([]string, len(c.GetTargetList()))
	for i, n := range c.GetTargetList() {
		if rt := n.GetResTarget(); rt != nil && rt.GetName() == "" && rt.GetVal() != nil {
			names[i] = figureColname(rt.GetVal())
		}
	}
	for _, n := range append([]*pg.Node{c.GetWhereClause(), c.GetHavingClause()}, c.GetTargetList()...) {
		if n != nil && visit(n) {
			walkPG(n.ProtoReflect(), visit)
		}
	}
	if rerr != nil {
		return nil, rerr
	}
	for i, n := range c.GetTargetList() {
		if rt := n.GetResTarget(); names[i] != "" && figureColname(rt.GetVal()) != names[i] {
			rt.Name = names[i]
		}
	}
	if arm, ok := bd.gsets[sel]; ok {
		bd.gsets[c] = arm
	}
	return c, nil
}

// unionArms returns the arms of the UNION [ALL] that EXISTS, IN, ANY or ALL sl reads (nested
// UNIONs flattened, the UNION's WITH given to each arm), or nil when sl is of another kind or
// reads another subquery (a set operation with ORDER BY, LIMIT or OFFSET, INTERSECT or EXCEPT
// inside, an arm with a WITH of its own under a UNION with one).
func unionArms(sl *pg.SubLink) []*pg.SelectStmt {
	switch sl.GetSubLinkType() {
	case pg.SubLinkType_EXISTS_SUBLINK, pg.SubLinkType_ANY_SUBLINK, pg.SubLinkType_ALL_SUBLINK:
	default:
		return nil
	}
	var arms []*pg.SelectStmt
	var flat func(s *pg.SelectStmt, with *pg.WithClause) bool
	flat = func(s *pg.SelectStmt, with *pg.WithClause) bool {
		if s.GetOp() != pg.SetOperation_SETOP_UNION {
			if s.GetWithClause() != nil && with != nil {
				return false
			}
			a := proto.Clone(s).(*pg.SelectStmt)
			if with != nil {
				a.WithClause = proto.Clone(with).(*pg.WithClause)
			}
			arms = append(arms, a)
			return true
		}
		if len(s.GetSortClause()) > 0 || s.GetLimitCount() != nil || s.GetLimitOffset() != nil || len(s.GetLockingClause()) > 0 {
			return false
		}
		if w := s.GetWithClause(); w != nil {
			if with != nil || w.GetRecursive() {
				return false
			}
			with = w
		}
		return flat(s.GetLarg(), with) && flat(s.GetRarg(), with)
	}
	sub := sl.GetSubselect().GetSelectStmt()
	if sub.GetOp() != pg.SetOperation_SETOP_UNION || !flat(sub, nil) {
		return nil
	}
	return arms
}

// correlated reports whether sub reads an outer query's columns: binding it alone fails on an
// unknown column or table, or on an aggregate where none is allowed (an outer query's
// aggregate); any other error is its own, found again when it binds.
func (bd *binder) correlated(sub *pg.SelectStmt) bool {
	_, err := bd.bindSelect(proto.Clone(sub).(*pg.SelectStmt))
	var pe *Error
	return errors.As(err, &pe) && (pe.SQLState == "42703" || pe.SQLState == "42P01" || pe.Msg == "aggregate functions are not allowed here")
}

// expandUnion is EXISTS, IN, ANY or ALL sl over the UNION of arms (unionArms) as the same
// test of each arm, joined by OR (EXISTS, IN and ANY: some row of some arm) or AND (ALL: every
// row of every arm). Exact in PostgreSQL's three-valued logic (OR and AND are associative and
// a set's duplicates change neither), it lets a correlated UNION decorrelate arm by arm.
func expandUnion(sl *pg.SubLink, arms []*pg.SelectStmt) *pg.Node {
	tests := make([]*pg.Node, len(arms))
	for i, a := range arms {
		t := &pg.SubLink{SubLinkType: sl.GetSubLinkType(), OperName: sl.GetOperName(), Subselect: &pg.Node{Node: &pg.Node_SelectStmt{SelectStmt: a}}, Location: -1}
		if x := sl.GetTestexpr(); x != nil {
			t.Testexpr = clonePG(x)
		}
		tests[i] = &pg.Node{Node: &pg.Node_SubLink{SubLink: t}}
	}
	op := pg.BoolExprType_OR_EXPR
	if sl.GetSubLinkType() == pg.SubLinkType_ALL_SUBLINK {
		op = pg.BoolExprType_AND_EXPR
	}
	return pg.MakeBoolExprNode(op, tests, -1)
}

// quantified is the expression a quantified comparison sl stands for (rewriteQuantified).
func (bd *binder) quantified(sl *pg.SubLink) (*pg.Node, error) {
	op, all, _ := quantifiedOp(sl)
	kind := "ANY (SELECT …)"
	if all {
		kind = "ALL (SELECT …)"
	}
	if !comparisonOps[op] {
		return nil, unimplementedAre(kind + " with an operator other than =, <>, <, <=, > and >=")
	}
	x := sl.GetTestexpr()
	if x.GetRowExpr() != nil {
		return nil, unimplementedAre("row values compared with " + kind)
	}
	sub := sl.GetSubselect().GetSelectStmt()
	if sub == nil {
		return nil, unimplemented("this subquery")
	}
	not := func(n *pg.Node) *pg.Node {
		return pg.MakeBoolExprNode(pg.BoolExprType_NOT_EXPR, []*pg.Node{n}, -1)
	}
	if all && op == "<>" {
		// x <> ALL (S): NOT (x IN (S)).
		in := &pg.SubLink{SubLinkType: pg.SubLinkType_ANY_SUBLINK, Testexpr: x, Subselect: sl.GetSubselect(), Location: -1}
		return not(&pg.Node{Node: &pg.Node_SubLink{SubLink: in}}), nil
	}
	agg, err := bd.aggregateOf(sub, kind)
	if err != nil {
		return nil, err
	}
	cmp := func(o, fn string) *pg.Node {
		return pg.MakeAExprNode(pg.A_Expr_Kind_AEXPR_OP, []*pg.Node{pg.MakeStrNode(o)}, clonePG(x), agg(fn, nil), -1)
	}
	// m decides: ANY is true where it is, ALL false where it is not.
	var m *pg.Node
	switch {
	case !all && (op == "<" || op == "<="), all && (op == ">" || op == ">="):
		m = cmp(op, "max")
	case !all && (op == ">" || op == ">="), all && (op == "<" || op == "<="):
		m = cmp(op, "min")
	case all: // =
		m = pg.MakeBoolExprNode(pg.BoolExprType_AND_EXPR, []*pg.Node{cmp(op, "min"), cmp(op, "max")}, -1)
	default: // <> ANY
		m = pg.MakeBoolExprNode(pg.BoolExprType_OR_EXPR, []*pg.Node{cmp(op, "min"), cmp(op, "max")}, -1)
	}
	isNull := func(n *pg.Node, t pg.NullTestType) *pg.Node {
		return &pg.Node{Node: &pg.Node_NullTest{NullTest: &pg.NullTest{Arg: n, Nulltesttype: t, Location: -1}}}
	}
	boolConst := func(v bool) *pg.Node {
		return &pg.Node{Node: &pg.Node_AConst{AConst: &pg.A_Const{Val: &pg.A_Const_Boolval{Boolval: &pg.Boolean{Boolval: v}}}}}
	}
	// n OR (x IS NULL AND n IS NOT NULL), reading n once: CASE n WHEN true THEN true WHEN
	// false THEN x IS NULL ELSE false END.
	n := agg("bool_or", func(y *pg.Node) *pg.Node { return isNull(y, pg.NullTestType_IS_NULL) })
	unknown := &pg.Node{Node: &pg.Node_CaseExpr{CaseExpr: &pg.CaseExpr{Arg: n, Args: []*pg.Node{
		pg.MakeCaseWhenNode(boolConst(true), boolConst(true), -1),
		pg.MakeCaseWhenNode(boolConst(false), isNull(clonePG(x), pg.NullTestType_IS_NULL), -1),
	}, Defresult: boolConst(false), Location: -1}}}
	null := &pg.Node{Node: &pg.Node_TypeCast{TypeCast: &pg.TypeCast{Arg: &pg.Node{Node: &pg.Node_AConst{AConst: &pg.A_Const{Isnull: true}}},
		TypeName: &pg.TypeName{Names: []*pg.Node{pg.MakeStrNode("pg_catalog"), pg.MakeStrNode("bool")}, Typemod: -1}, Location: -1}}}
	decides, decided := m, boolConst(true)
	if all {
		decides, decided = not(m), boolConst(false)
	}
	ce := &pg.CaseExpr{Args: []*pg.Node{pg.MakeCaseWhenNode(decides, decided, -1), pg.MakeCaseWhenNode(unknown, null, -1)}, Defresult: boolConst(all), Location: -1}
	return &pg.Node{Node: &pg.Node_CaseExpr{CaseExpr: ce}}, nil
}

// clonePG copies a syntax tree node (each use of an expression in a rewrite its own, as the
// binder keys subqueries by their nodes).
func clonePG(n *pg.Node) *pg.Node { return proto.Clone(n).(*pg.Node) }

// aggregateOf returns a maker of scalar subqueries of one aggregate over sub's one column y:
// agg(fn, arg) is (SELECT fn(arg(y)) …) (arg nil: y itself), its own copy each time
// (quantified). kind names the construct in refusals.
func (bd *binder) aggregateOf(sub *pg.SelectStmt, kind string) (func(fn string, arg func(*pg.Node) *pg.Node) *pg.Node, error) {
	width, star := selectWidth(sub)
	if star {
		return nil, unimplementedAre(kind + " over a select list of *")
	}
	switch {
	case width == 0:
		return nil, &Error{Code: InvalidArgument, SQLState: "42601", Msg: "subquery must return only one column"}
	case width > 1:
		return nil, &Error{Code: InvalidArgument, SQLState: "42601", Msg: "subquery has too many columns"}
	}
	link := func(s *pg.SelectStmt) *pg.Node {
		return &pg.Node{Node: &pg.Node_SubLink{SubLink: &pg.SubLink{SubLinkType: pg.SubLinkType_EXPR_SUBLINK,
			Subselect: &pg.Node{Node: &pg.Node_SelectStmt{SelectStmt: s}}, Location: -1}}}
	}
	call := func(fn string, y *pg.Node, arg func(*pg.Node) *pg.Node) *pg.Node {
		if arg != nil {
			y = arg(y)
		}
		return pg.MakeFuncCallNode([]*pg.Node{pg.MakeStrNode(fn)}, []*pg.Node{y}, -1)
	}
	windowed := func(fc *pg.FuncCall) bool { return fc.GetOver() != nil }
	// A subquery in y would be one inside the aggregate (max(y + (SELECT …))), which an
	// aggregate query without GROUP BY cannot hold: such an S is read as a derived table.
	nested := len(sub.GetTargetList()) > 0 && hasSubLink(sub.GetTargetList()[0])
	plain := !nested && (sub.GetOp() == pg.SetOperation_SETOP_NONE || sub.GetOp() == pg.SetOperation_SET_OPERATION_UNDEFINED) &&
		len(sub.GetValuesLists()) == 0 && len(sub.GetGroupClause()) == 0 && sub.GetHavingClause() == nil &&
		!hasAggregate(sub.GetTargetList()) && len(sub.GetWindowClause()) == 0 && !anyCall(sub.GetTargetList()[0], windowed) &&
		sub.GetLimitCount() == nil && sub.GetLimitOffset() == nil && (len(sub.GetDistinctClause()) == 0 || sub.GetDistinctClause()[0].GetNode() == nil)
	if plain {
		return func(fn string, arg func(*pg.Node) *pg.Node) *pg.Node {
			c := proto.Clone(sub).(*pg.SelectStmt)
			y := c.GetTargetList()[0].GetResTarget().GetVal()
			c.TargetList = []*pg.Node{pg.MakeResTargetNodeWithVal(call(fn, y, arg), -1)}
			c.DistinctClause, c.SortClause = nil, nil
			return link(c)
		}, nil
	}
	// Any other subquery is a derived table, which cannot read the outer query's columns: a
	// correlated one is refused.
	if bd.correlated(sub) {
		if nested {
			return nil, unimplementedAre("correlated " + kind + " subqueries whose select list holds a subquery")
		}
		return nil, unimplementedAre("correlated " + kind + " subqueries with set operations, GROUP BY, HAVING, aggregates, window functions, DISTINCT ON, LIMIT or OFFSET")
	}
	const q = "?quantified?"
	return func(fn string, arg func(*pg.Node) *pg.Node) *pg.Node {
		from := &pg.Node{Node: &pg.Node_RangeSubselect{RangeSubselect: &pg.RangeSubselect{
			Subquery: &pg.Node{Node: &pg.Node_SelectStmt{SelectStmt: proto.Clone(sub).(*pg.SelectStmt)}},
			Alias:    &pg.Alias{Aliasname: q, Colnames: []*pg.Node{pg.MakeStrNode("?y?")}},
		}}}
		return link(&pg.SelectStmt{TargetList: []*pg.Node{pg.MakeResTargetNodeWithVal(call(fn, colRef(q, "?y?"), arg), -1)}, FromClause: []*pg.Node{from}})
	}, nil
}

// selectWidth is the number of columns a SELECT answers (a set operation's: its first arm's),
// or star when its select list holds a * (known only once bound).
func selectWidth(sel *pg.SelectStmt) (width int, star bool) {
	for sel.GetOp() != pg.SetOperation_SETOP_NONE && sel.GetOp() != pg.SetOperation_SET_OPERATION_UNDEFINED && sel.GetLarg() != nil {
		sel = sel.GetLarg()
	}
	if vl := sel.GetValuesLists(); len(vl) > 0 {
		return len(vl[0].GetList().GetItems()), false
	}
	for _, t := range sel.GetTargetList() {
		v := t.GetResTarget().GetVal()
		if cr := v.GetColumnRef(); cr != nil && len(cr.GetFields()) > 0 && cr.GetFields()[len(cr.GetFields())-1].GetAStar() != nil {
			return 0, true
		}
	}
	return len(sel.GetTargetList()), false
}
