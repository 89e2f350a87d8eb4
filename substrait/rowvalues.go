package substrait

import (
	pg "github.com/pganalyze/pg_query_go/v6"
)

// Row-value comparisons (PostgreSQL's "Row Constructor Comparison", transformAExprOp's
// make_row_comparison_op), bound as the comparisons of their elements they stand for:
//
//   - (a, b) = (x, y) is a = x AND b = y, (a, b) <> (x, y) is a <> x OR b <> y (three-valued:
//     NULL when no pair decides and some pair is NULL);
//   - (a, b) < (x, y) (and <=, >, >=) compares the pairs left to right and stops at the first
//     pair that is unequal or NULL: NULL if either of that pair is NULL, else that pair's
//     strict comparison; if every pair before the last is equal, the last pair's comparison
//     with the operator itself (so (1, 2) <= (1, 2) is true);
//   - (a, b) IS [NOT] DISTINCT FROM (x, y) is the OR (AND) of the pairs';
//   - (a, b) [NOT] IN ((x1, y1), (x2, y2)) is the OR of the rows' equalities (NOT IN: the AND
//     of their inequalities), each row as above.
//
// Each element's comparison is the one of its types (an unknown literal reads as its
// partner's type; a pair without an operator is PostgreSQL's 42883). Rows of different
// lengths are PostgreSQL's 42601 "unequal number of entries in row expressions". An element
// of the left row is written once per comparison reading it (a row < row comparison reads
// an element up to three times).

// errRowLengths is PostgreSQL's refusal of rows of different lengths.
var errRowLengths = &Error{Code: InvalidArgument, SQLState: "42601", Msg: "unequal number of entries in row expressions"}

// rowArgs returns the elements of n when it is a row constructor ((a, b) or ROW(a, b)).
func rowArgs(n *pg.Node) ([]*pg.Node, bool) {
	r := n.GetRowExpr()
	if r == nil {
		return nil, false
	}
	return r.GetArgs(), true
}

// refuseRowSubqueries refuses by name a row compared with a subquery ((a, b) = (SELECT x,
// y), PostgreSQL's ROWCOMPARE_SUBLINK) in sel's WHERE, select list or HAVING, before its
// subqueries bind as scalar ones (which would refuse their two columns in the wrong words).
func refuseRowSubqueries(sel *pg.SelectStmt) error {
	var err error
	// A list of them, so that each is visited itself too.
	all := &pg.List{}
	for _, n := range append([]*pg.Node{sel.GetWhereClause(), sel.GetHavingClause()}, sel.GetTargetList()...) {
		if n != nil {
			all.Items = append(all.Items, n)
		}
	}
	walkPG(all.ProtoReflect(), func(x *pg.Node) bool {
		if a := x.GetAExpr(); a != nil && a.GetLexpr().GetRowExpr() != nil && a.GetRexpr().GetSubLink() != nil {
			err = unimplementedAre("row values compared with a subquery")
		}
		return err == nil
	})
	return err
}

// rowComparison returns the expression a comparison of rows stands for (above), ok false when
// a is not one: an operator (=, <>, !=, <, <=, >, >=) or IS [NOT] DISTINCT FROM between two row
// constructors, or [NOT] IN of a row constructor and a list of rows.
func (bd *binder) rowComparison(a *pg.A_Expr, sc *scope) (*pg.Node, bool, error) {
	left, ok := rowArgs(a.GetLexpr())
	if !ok {
		return nil, false, nil
	}
	op := ""
	if names := a.GetName(); len(names) > 0 {
		op = names[len(names)-1].GetString_().GetSval()
	}
	if op == "!=" {
		op = "<>"
	}
	if a.GetRexpr().GetSubLink() != nil {
		// PostgreSQL's ROWCOMPARE_SUBLINK.
		return nil, false, unimplementedAre("row values compared with a subquery")
	}
	switch a.GetKind() {
	case pg.A_Expr_Kind_AEXPR_OP:
		right, ok := rowArgs(a.GetRexpr())
		if !ok || !comparisonOps[op] {
			return nil, false, nil
		}
		n, err := rowCompare(op, left, right)
		return n, err == nil, err
	case pg.A_Expr_Kind_AEXPR_DISTINCT, pg.A_Expr_Kind_AEXPR_NOT_DISTINCT:
		right, ok := rowArgs(a.GetRexpr())
		if !ok {
			return nil, false, nil
		}
		if len(left) != len(right) {
			return nil, false, errRowLengths
		}
		pairs := make([]*pg.Node, len(left))
		for i := range left {
			pairs[i] = pg.MakeAExprNode(a.GetKind(), a.GetName(), left[i], right[i], -1)
		}
		if a.GetKind() == pg.A_Expr_Kind_AEXPR_DISTINCT {
			return boolOf(pg.BoolExprType_OR_EXPR, pairs), true, nil
		}
		return boolOf(pg.BoolExprType_AND_EXPR, pairs), true, nil
	case pg.A_Expr_Kind_AEXPR_IN:
		list := a.GetRexpr().GetList().GetItems()
		if len(list) == 0 {
			return nil, false, nil
		}
		// IN is "=", NOT IN "<>".
		tests := make([]*pg.Node, len(list))
		for i, item := range list {
			right, ok := rowArgs(item)
			if !ok {
				// A row beside a value: PostgreSQL's record = <type>.
				v, err := bd.bindExpr(item, sc)
				if err != nil {
					return nil, false, err
				}
				name := "unknown"
				if !v.untyped() {
					name = typeName(v.typ())
				}
				return nil, false, &Error{Code: InvalidArgument, SQLState: "42883", Msg: "operator does not exist: record = " + name}
			}
			n, err := rowCompare(op, left, right)
			if err != nil {
				return nil, false, err
			}
			tests[i] = n
		}
		if op == "<>" {
			return boolOf(pg.BoolExprType_AND_EXPR, tests), true, nil
		}
		return boolOf(pg.BoolExprType_OR_EXPR, tests), true, nil
	}
	return nil, false, nil
}

// rowCompare is the comparison op of the rows left and right.
func rowCompare(op string, left, right []*pg.Node) (*pg.Node, error) {
	if len(left) != len(right) {
		return nil, errRowLengths
	}
	cmp := func(op string, i int) *pg.Node {
		return pg.MakeAExprNode(pg.A_Expr_Kind_AEXPR_OP, []*pg.Node{pg.MakeStrNode(op)}, left[i], right[i], -1)
	}
	pairs := make([]*pg.Node, len(left))
	switch op {
	case "=", "<>":
		for i := range left {
			pairs[i] = cmp(op, i)
		}
		if op == "=" {
			return boolOf(pg.BoolExprType_AND_EXPR, pairs), nil
		}
		return boolOf(pg.BoolExprType_OR_EXPR, pairs), nil
	}
	strict := op[:1] // < or >
	n := cmp(op, len(left)-1)
	for i := len(left) - 2; i >= 0; i-- {
		isNull := func(x *pg.Node) *pg.Node {
			return &pg.Node{Node: &pg.Node_NullTest{NullTest: &pg.NullTest{Arg: x, Nulltesttype: pg.NullTestType_IS_NULL, Location: -1}}}
		}
		null := &pg.Node{Node: &pg.Node_AConst{AConst: &pg.A_Const{Isnull: true, Location: -1}}}
		n = &pg.Node{Node: &pg.Node_CaseExpr{CaseExpr: &pg.CaseExpr{Args: []*pg.Node{
			{Node: &pg.Node_CaseWhen{CaseWhen: &pg.CaseWhen{Expr: boolOf(pg.BoolExprType_OR_EXPR, []*pg.Node{isNull(left[i]), isNull(right[i])}), Result: null, Location: -1}}},
			{Node: &pg.Node_CaseWhen{CaseWhen: &pg.CaseWhen{Expr: cmp("<>", i), Result: cmp(strict, i), Location: -1}}},
		}, Defresult: n, Location: -1}}}
	}
	return n, nil
}

// boolOf is the AND or OR of ns (the one node itself).
func boolOf(op pg.BoolExprType, ns []*pg.Node) *pg.Node {
	if len(ns) == 1 {
		return ns[0]
	}
	return pg.MakeBoolExprNode(op, ns, -1)
}
