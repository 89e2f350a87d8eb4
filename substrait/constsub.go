package substrait

import (
	pg "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"
)

// withConstantSubqueries returns sel with each scalar subquery of its WHERE that only selects
// a constant — (SELECT false) OR (origin = 'ORD' AND …), (SELECT 1 <> 1) — replaced by that
// constant, so that the route analysis and the constant folding see it (a subquery is a join
// otherwise, and its value is not known when the read is routed). PostgreSQL answers the
// same: its planner plans such a subquery as an initplan and folds its select list while it
// plans it (so (SELECT 1/0) fails before any row, as the constant does). The constant is an
// expression of literals, casts, operators and AND/OR/NOT, without a column, function,
// parameter or subquery (random() would be evaluated once there, per row here); a bare
// string literal or NULL is not replaced (a subquery's select list types it text, where it
// stays untyped in place). sel is returned unchanged (not copied) when there is none.
func withConstantSubqueries(sel *pg.SelectStmt) *pg.SelectStmt {
	w := sel.GetWhereClause()
	if w == nil || !hasNode(w, func(n *pg.Node) bool { return constantSubquery(n) != nil }) {
		return sel
	}
	out := proto.Clone(sel).(*pg.SelectStmt)
	if c := constantSubquery(out.GetWhereClause()); c != nil {
		out.WhereClause = c
		return out
	}
	walkPG(out.GetWhereClause().ProtoReflect(), func(n *pg.Node) bool {
		if c := constantSubquery(n); c != nil {
			n.Node = c.Node
			return false
		}
		return true
	})
	return out
}

// constantSubquery returns the constant that n, a scalar subquery SELECT <constant> with no
// other clause, selects (withConstantSubqueries); nil for any other node.
func constantSubquery(n *pg.Node) *pg.Node {
	sl := n.GetSubLink()
	if sl == nil || sl.GetSubLinkType() != pg.SubLinkType_EXPR_SUBLINK {
		return nil
	}
	s := sl.GetSubselect().GetSelectStmt()
	if s == nil || len(s.GetTargetList()) != 1 || len(s.GetFromClause()) != 0 || s.GetWhereClause() != nil ||
		len(s.GetGroupClause()) != 0 || s.GetHavingClause() != nil || len(s.GetWindowClause()) != 0 ||
		len(s.GetDistinctClause()) != 0 || len(s.GetSortClause()) != 0 || s.GetLimitCount() != nil ||
		s.GetLimitOffset() != nil || s.GetWithClause() != nil || len(s.GetValuesLists()) != 0 ||
		s.GetIntoClause() != nil || len(s.GetLockingClause()) != 0 ||
		(s.GetOp() != pg.SetOperation_SETOP_NONE && s.GetOp() != pg.SetOperation_SET_OPERATION_UNDEFINED) {
		return nil
	}
	v := s.GetTargetList()[0].GetResTarget().GetVal()
	if v == nil {
		return nil
	}
	if c := v.GetAConst(); c != nil && (c.GetIsnull() || c.GetSval() != nil || c.GetBsval() != nil) {
		return nil // untyped: text in the subquery
	}
	if hasNode(v, func(x *pg.Node) bool { return !constantTree(x) }) {
		return nil
	}
	return v
}

// constantTree reports a node of an expression of constants: a literal, a cast (its type's
// name nodes too), an operator or AND/OR/NOT.
func constantTree(n *pg.Node) bool {
	switch n.GetNode().(type) {
	case *pg.Node_AConst, *pg.Node_TypeCast, *pg.Node_AExpr, *pg.Node_BoolExpr, *pg.Node_String_, *pg.Node_Integer:
		return true
	}
	return false
}
