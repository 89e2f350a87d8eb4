package substrait

import (
	"fmt"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/plan"
	"github.com/substrait-io/substrait-go/v8/types"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// WITH RECURSIVE (issue 18), as PostgreSQL 15 evaluates it (its "WITH Queries" chapter): a
// recursive query non-recursive-term UNION [ALL] recursive-term evaluates the
// non-recursive term into the working table and the result, then, while the working table
// holds rows, the recursive term over the working table alone (its one reference to the
// query), its rows (for UNION those not already in the result, duplicates among them once)
// the next working table and more of the result. The binder binds such a query, where it is
// read, as an ExtensionMultiRel of the two terms whose definition is a *RecursiveUnion; the
// recursive term's reference to the query is an ExtensionLeafRel whose definition is a
// *WorkTable of the same ID, which the executor feeds the working table (scan/recursive.go).
// The shapes PostgreSQL's parser refuses (checkWellFormedRecursion) are refused with its
// errors when the WITH clause is read (recursiveShape), whether the query is read or not.

// RecursiveUnion defines the relation of a WITH RECURSIVE query: inputs [non-recursive term,
// recursive term], both of the query's column types; Distinct for UNION (rows already in the
// result, and repeats, are dropped), else UNION ALL. ID names the WorkTable the recursive term
// reads; Name is the query's name (the client's identifier: for EXPLAIN only).
type RecursiveUnion struct {
	ID       int
	Distinct bool
	Name     string
}

// Schema is the non-recursive term's record type (the query's columns).
func (r *RecursiveUnion) Schema(inputs []plan.Rel) types.RecordType {
	return inputs[0].RecordType()
}

// Build describes the relation for the plan's protobuf form (EXPLAIN).
func (r *RecursiveUnion) Build([]plan.Rel) *anypb.Any {
	op := "UNION ALL"
	if r.Distinct {
		op = "UNION"
	}
	a, _ := anypb.New(wrapperspb.String(fmt.Sprintf("recursive %s, work table %d", op, r.ID)))
	return a
}

// Expressions is nil: the relation computes nothing itself.
func (r *RecursiveUnion) Expressions([]plan.Rel) []expr.Expression { return nil }

// WorkTable defines the leaf relation that reads the working table of the RecursiveUnion of
// the same ID, of the record type Type.
type WorkTable struct {
	ID   int
	Type types.RecordType
}

// Schema is the working table's record type.
func (w *WorkTable) Schema([]plan.Rel) types.RecordType { return w.Type }

// Build describes the relation for the plan's protobuf form (EXPLAIN).
func (w *WorkTable) Build([]plan.Rel) *anypb.Any {
	a, _ := anypb.New(wrapperspb.String(fmt.Sprintf("work table %d", w.ID)))
	return a
}

// Expressions is nil: the relation computes nothing.
func (w *WorkTable) Expressions([]plan.Rel) []expr.Expression { return nil }

// selfReferencing reports whether the WITH query c reads its own name anywhere in its query.
func selfReferencing(c *pg.CommonTableExpr) bool {
	return countRefs(c.GetCtequery(), c.GetCtename()) > 0
}

// countRefs counts the FROM items of n that name the table name (unqualified).
func countRefs(n *pg.Node, name string) int {
	if n == nil {
		return 0
	}
	k := 0
	deepNodes(n, func(x *pg.Node) bool {
		if rv := x.GetRangeVar(); rv != nil && rv.GetRelname() == name && rv.GetSchemaname() == "" && rv.GetCatalogname() == "" {
			k++
		}
		return true
	})
	return k
}

// deepNodes calls fn on n and, while fn returns true, on every Node below it, subqueries'
// included (walkPG stops at a nested SELECT).
func deepNodes(n *pg.Node, fn func(*pg.Node) bool) {
	if n == nil || !fn(n) {
		return
	}
	childNodes(n.ProtoReflect(), func(c *pg.Node) { deepNodes(c, fn) })
}

// recursiveShape refuses a recursive WITH query c (one that reads itself) of a shape
// PostgreSQL refuses, with its error: not non-recursive-term UNION [ALL] recursive-term
// (42P19), ORDER BY, OFFSET or LIMIT on the union (0A000), a reference in the
// non-recursive term, more than once, in a subquery, on the NULL-extended side of an outer
// join, under INTERSECT ALL or EXCEPT ALL or on EXCEPT's right (42P19), an aggregate in the recursive term (42P19); and
// the SEARCH and CYCLE clauses, by name.
func recursiveShape(c *pg.CommonTableExpr) error {
	name := c.GetCtename()
	if c.GetSearchClause() != nil || c.GetCycleClause() != nil {
		return unimplementedAre("SEARCH and CYCLE clauses of WITH RECURSIVE")
	}
	sel := c.GetCtequery().GetSelectStmt()
	if sel == nil || sel.GetOp() != pg.SetOperation_SETOP_UNION || sel.GetLarg() == nil || sel.GetRarg() == nil {
		return quoting(InvalidArgument, "42P19", "recursive query %q does not have the form non-recursive-term UNION [ALL] recursive-term", name)
	}
	notImplemented := func(what string) error {
		return &Error{Code: Unimplemented, SQLState: "0A000", Msg: what + " in a recursive query is not implemented"}
	}
	switch {
	case len(sel.GetSortClause()) > 0:
		return notImplemented("ORDER BY")
	case sel.GetLimitOffset() != nil:
		return notImplemented("OFFSET")
	case sel.GetLimitCount() != nil:
		return notImplemented("LIMIT")
	case len(sel.GetLockingClause()) > 0:
		return notImplemented("FOR UPDATE/SHARE")
	}
	wrong := func(where string) error {
		return quoting(InvalidArgument, "42P19", "recursive reference to query %q must not appear "+where, name)
	}
	larg := &pg.Node{Node: &pg.Node_SelectStmt{SelectStmt: sel.GetLarg()}}
	rarg := &pg.Node{Node: &pg.Node_SelectStmt{SelectStmt: sel.GetRarg()}}
	if countRefs(larg, name) > 0 {
		return wrong("within its non-recursive term")
	}
	var bad error
	check := func(x *pg.Node) bool {
		if bad != nil {
			return false
		}
		switch {
		case x.GetSubLink() != nil && countRefs(x.GetSubLink().GetSubselect(), name) > 0:
			bad = wrong("within a subquery")
		case x.GetJoinExpr() != nil:
			j := x.GetJoinExpr()
			l, r := countRefs(j.GetLarg(), name), countRefs(j.GetRarg(), name)
			switch j.GetJointype() {
			case pg.JoinType_JOIN_LEFT:
				if r > 0 {
					bad = wrong("within an outer join")
				}
			case pg.JoinType_JOIN_RIGHT:
				if l > 0 {
					bad = wrong("within an outer join")
				}
			case pg.JoinType_JOIN_FULL:
				if l+r > 0 {
					bad = wrong("within an outer join")
				}
			}
		case x.GetSelectStmt() != nil && (x.GetSelectStmt().GetOp() == pg.SetOperation_SETOP_INTERSECT || x.GetSelectStmt().GetOp() == pg.SetOperation_SETOP_EXCEPT):
			// PostgreSQL (checkWellFormedRecursionWalker): INTERSECT ALL and EXCEPT ALL hold
			// no reference, EXCEPT none on its right; INTERSECT may.
			s := x.GetSelectStmt()
			op := "INTERSECT"
			if s.GetOp() == pg.SetOperation_SETOP_EXCEPT {
				op = "EXCEPT"
			}
			in := &pg.Node{Node: &pg.Node_SelectStmt{SelectStmt: s}}
			right := &pg.Node{Node: &pg.Node_SelectStmt{SelectStmt: s.GetRarg()}}
			if s.GetAll() && countRefs(in, name) > 0 || op == "EXCEPT" && countRefs(right, name) > 0 {
				bad = wrong("within " + op)
			}
		}
		return bad == nil
	}
	deepNodes(rarg, check)
	if bad != nil {
		return bad
	}
	if countRefs(rarg, name) > 1 {
		return wrong("more than once")
	}
	if r := sel.GetRarg(); r.GetOp() == pg.SetOperation_SETOP_NONE && (hasAggregate(r.GetTargetList()) || r.GetHavingClause() != nil && containsAggregate(r.GetHavingClause())) {
		return &Error{Code: InvalidArgument, SQLState: "42P19", Msg: "aggregate functions are not allowed in a recursive query's recursive term"}
	}
	return nil
}

// bindRecursive binds the recursive WITH query c, read as alias (with the column aliases
// colnames): its non-recursive term, whose column types (a literal of unknown type as text)
// are the query's; its recursive term with the query's name reading the working table; the
// recursive term's columns cast to the query's types where PostgreSQL's UNION resolution
// gives the non-recursive term's type, else PostgreSQL's 42804.
func (bd *binder) bindRecursive(c *pg.CommonTableExpr, alias string, colnames []*pg.Node) (*fromItem, error) {
	name := c.GetCtename()
	sel := c.GetCtequery().GetSelectStmt()
	first := len(bd.reads)
	l, err := bd.bindSelect(sel.GetLarg())
	if err != nil {
		return nil, err
	}
	if cn := c.GetAliascolnames(); len(cn) > 0 {
		if err := checkRename(l, cn); err != nil {
			return nil, err
		}
		if err := rename(l, cn); err != nil {
			return nil, err
		}
	}
	ts := make([]types.Type, len(l.sc.cols))
	for i, col := range l.sc.cols {
		ts[i] = col.typ
		if unknownCol(l, i) {
			ts[i] = strType()
		}
		ts[i] = ts[i].WithNullability(nullableN)
	}
	larm, err := bd.castProject(l, ts, l)
	if err != nil {
		return nil, err
	}
	rt := types.NewRecordTypeFromTypes(ts)
	bd.nextWorkTable++
	id := bd.nextWorkTable
	leaf, err := bd.b.ExtensionLeaf(&WorkTable{ID: id, Type: *rt})
	if err != nil {
		return nil, fmt.Errorf("bind recursive query: %w", err)
	}
	// The working table's columns keep the non-recursive term's kinds (bytea, json, jsonb:
	// castProject's projection does not carry them), so that a jsonb column compares, sorts
	// and groups by value in the recursive term and above it.
	kinds := func(i int) col {
		c := col2(larm.sc.cols[i], ts[i])
		c.bytea, c.json, c.jsonb, c.bpchar, c.typmod = l.sc.cols[i].bytea, l.sc.cols[i].json, l.sc.cols[i].jsonb, l.sc.cols[i].bpchar, l.sc.cols[i].typmod
		return c
	}
	if !sel.GetAll() {
		for i := range ts {
			switch {
			case l.sc.cols[i].json:
				return nil, errJSONEquality
			case l.sc.cols[i].jsonb:
				return nil, unimplementedAre("recursive UNION (without ALL) over jsonb columns")
			case isIntervalType(ts[i]):
				// PostgreSQL's UNION takes '1 day' and '24 hours' as one row (interval_cmp),
				// which the recursive union's own deduplication (scan/recursive.go), hashing
				// the fields apart, would not (DISTINCT and a plain UNION group by the span:
				// scan/aggregate's intervalSpanKey).
				return nil, unimplemented("recursive UNION (without ALL) of an interval")
			}
		}
	}
	wt := &boundRel{rel: leaf, sc: &scope{}, names: larm.names}
	for i := range larm.sc.cols {
		wt.sc.cols = append(wt.sc.cols, kinds(i))
	}
	if bd.workTables == nil {
		bd.workTables = map[string]*boundRel{}
	}
	saved, had := bd.workTables[name]
	bd.workTables[name] = wt
	r, err := bd.bindSelect(sel.GetRarg())
	if had {
		bd.workTables[name] = saved
	} else {
		delete(bd.workTables, name)
	}
	if err != nil {
		return nil, err
	}
	if len(r.sc.cols) != len(ts) {
		return nil, &Error{Code: InvalidArgument, SQLState: "42601", Msg: "each UNION query must have the same number of columns"}
	}
	for i := range ts {
		if err := recursiveColumnType(name, i, ts[i], l.sc.cols[i].typmod, r, i); err != nil {
			return nil, err
		}
		// A bpchar column (character(n) without its modifier, as max() answers it, or bpchar
		// without a length) takes the recursive term's values with their own padding, which
		// flightsrv's character(n) column would not keep: refused unless they are its own kind.
		if _, err := bpcharCommon([]bval{armValue(l, i), armValue(r, i)}); err != nil {
			return nil, err
		}
	}
	rarm, err := bd.castProject(r, ts, l)
	if err != nil {
		return nil, err
	}
	multi, err := bd.b.ExtensionMulti([]plan.Rel{larm.rel, rarm.rel}, &RecursiveUnion{ID: id, Distinct: !sel.GetAll(), Name: name})
	if err != nil {
		return nil, fmt.Errorf("bind recursive query: %w", err)
	}
	out := &boundRel{rel: multi, sc: &scope{}, names: larm.names}
	for i := range larm.sc.cols {
		out.sc.cols = append(out.sc.cols, kinds(i))
	}
	bd.placeReads(first, alias)
	return &fromItem{boundRel: requalify(out, alias, colnames)}, checkRename(out, colnames)
}

// recursiveColumnType checks column i of a recursive query's recursive term r against the
// non-recursive term's type t (with its type modifier typmod, bval.typmod), as PostgreSQL's
// analyzeCTE does: the UNION of the two (select_common_type, select_common_typmod: the
// modifier both terms have, else none) must be the non-recursive term's type and modifier,
// else 42804 (a varchar(3) column whose recursive term computes s || 'b' is character
// varying overall, a character(3) one bpchar). Numerics of different scales without a
// modifier are refused by name.
func recursiveColumnType(name string, i int, t types.Type, typmod string, r *boundRel, ri int) error {
	rtyp, rmod := r.sc.cols[ri].typ, r.sc.cols[ri].typmod
	unknown := unknownCol(r, ri)
	if unknown {
		rmod = "" // a literal of unknown type takes the type without its modifier
	}
	var overall types.Type
	switch lf, rf := familyOf(t), familyOf(rtyp); {
	case unknown || sameType(rtyp, t):
		overall = t
	case isNumber(lf) && isNumber(rf) && !(lf == famNumeric && rf == famNumeric):
		overall = widerNumber(t, rtyp)
	case datetimeCommon(t, rtyp) != nil:
		overall = datetimeCommon(t, rtyp)
	case lf == famNumeric && rf == famNumeric && typmod != "" && rmod != typmod:
		overall = t // numeric(p,s) beside another modifier: numeric overall
	case lf == famNumeric && rf == famNumeric:
		return unimplementedAre("recursive queries whose numeric columns change scale in the recursive term")
	default:
		return errorf(InvalidArgument, "UNION types %s and %s cannot be matched", typeName(t), typeName(rtyp))
	}
	same := sameType(overall, t)
	if same && (typmod == "" || rmod == typmod) {
		return nil
	}
	have, got := typeName(t), typeName(overall)
	if typmod != "" {
		have = typmod
		if same {
			got = typmod[:strings.IndexByte(typmod, '(')] // the type without its modifier
			if got == "character" {
				got = "bpchar" // format_type's name of bpchar without a length
			}
		}
	}
	return &Error{Code: InvalidArgument, SQLState: "42804",
		Msg:    fmt.Sprintf("recursive query %q column %d has type %s in non-recursive term but type %s overall", name, i+1, have, got),
		LogMsg: fmt.Sprintf("recursive query <identifier> column %d has type %s in non-recursive term but type %s overall", i+1, have, got)}
}

// col2 is col with the type t and the flags a column of a set operation keeps.
func col2(c col, t types.Type) col {
	return col{name: c.name, typ: t, vary: c.vary, bytea: c.bytea, json: c.json, jsonb: c.jsonb, bpchar: c.bpchar, typmod: c.typmod}
}
