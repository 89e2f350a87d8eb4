package substrait

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute/exprs"
	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/extensions"
	"github.com/substrait-io/substrait-go/v8/plan"
	"github.com/substrait-io/substrait-go/v8/types"
	"google.golang.org/protobuf/proto"

	"github.com/flightsrv/flightsrv/routing"
)

// The binder: every SELECT over the routed tables, bound from pg_query's parse tree to
// Substrait relations that the executor (package scan) runs as they are; the executor's
// pushdown rewrite finds the aggregates the stores answer (COUNT(*), MIN/MAX(timestamp), per
// time bin) wherever they sit in these plans.
//
// A SELECT binds bottom up:
//
//	FROM       ReadRel of the table (or the relation of a subquery / WITH query)
//	WHERE      FilterRel: the routed conjuncts of a table read first (partition equality or
//	           IN list, timestamp bounds normalised to >= and <), then the residual conjuncts
//	GROUP BY   AggregateRel (grouping expressions, then the measures)
//	HAVING     FilterRel over the aggregate's output
//	select     ProjectRel (select list, then ORDER BY keys that are not in it)
//	DISTINCT   AggregateRel grouping every output column
//	ORDER BY   SortRel
//	LIMIT      FetchRel (offset, count), emitting only the select list
//
// and UNION ALL is a SetRel of its arms. The routed predicate of each table read is taken from
// anywhere in its WHERE's conjunction (Routes reads it back from the plan).

// BindOptions are the session's settings that change how SQL binds.
type BindOptions struct {
	// Analytical lets a query read a table without pinning its partitions: the partitions of
	// the time range are discovered from the stores (the read's route has no partition list).
	Analytical bool
	// MaxPartitions bounds the partitions one read may list (IN, = ANY); 0 means
	// DefaultMaxPartitions. The server sets it from --max-partitions, which the refusal names.
	MaxPartitions int
	// Now is the statement's clock for now() and current_timestamp (zero: time.Now()),
	// truncated to microseconds as PostgreSQL's is.
	Now time.Time
	// User is the session's authenticated user, what current_user, session_user and user
	// answer ("": the server runs without authentication, and they answer "flightsrv").
	User string
	// MaxOutputColumns bounds the columns of a select list (0: none): a longer one is refused
	// with an *OutputColumnsError before its expressions are bound. The server derives it from
	// what a query's memory can hold (every column of every batch costs memory whatever its
	// rows), so that a statement of 50,000 columns is refused before it is planned.
	MaxOutputColumns int
}

// OutputColumnsError is the refusal of a select list of more columns than
// BindOptions.MaxOutputColumns. It is not an *Error: the caller words it, naming the limit the
// bound comes from.
type OutputColumnsError struct {
	Columns, Max int
}

// Error names the select list's columns and the bound, nothing of the statement's text.
func (e *OutputColumnsError) Error() string {
	return fmt.Sprintf("substrait: a select list of %d columns, more than the %d a query may return", e.Columns, e.Max)
}

// PartitionListError is the refusal of a read whose statement lists more partitions (IN,
// = ANY) than BindOptions.MaxPartitions: the statement itself asks too much, before any bucket
// is touched (the protocol boundary answers INVALID_ARGUMENT). Like *OutputColumnsError it is
// not an *Error: the caller words it, naming the setting the bound comes from. It names the
// table and the counts, never a partition value.
type PartitionListError struct {
	Table         string
	Listed, Limit int
}

// Error names the table and the counts.
func (e *PartitionListError) Error() string {
	return fmt.Sprintf("substrait: %s lists %d partitions, more than the %d a read may list", e.Table, e.Listed, e.Limit)
}

// checkColumns refuses a select list of n columns past PostgreSQL's limit (errTooManyTargets)
// or opts.MaxOutputColumns.
func (o BindOptions) checkColumns(n int) error {
	if n > MaxOutputColumns {
		return errTooManyTargets
	}
	if o.MaxOutputColumns > 0 && n > o.MaxOutputColumns {
		return &OutputColumnsError{Columns: n, Max: o.MaxOutputColumns}
	}
	return nil
}

// DefaultMaxPartitions is the default bound on the partitions one read may list.
const DefaultMaxPartitions = 64

// col is one column of a scope.
type col struct {
	name string
	qual string // the table name or alias that may qualify it
	typ  types.Type
	// hidden columns are not part of `*` and are reachable qualified only: the sides' own
	// columns of a USING join, a scalar subquery's value (join.go).
	hidden bool
	// vary marks a numeric column whose values' display scales differ row by row (dscale.go):
	// its text is refused where it is read, unless scaleName names the hidden column of the
	// same scope that holds each row's display scale (a derived table's, keepScales).
	vary      bool
	scaleName string
	// bytea marks a binary column of bytea values, not JSON documents (bytea.go): its text is
	// byteaout's.
	bytea bool
	// json marks a binary column known to hold json documents (a table declaring JSON values,
	// a ::json cast); jsonb one of jsonb documents in jsonb's canonical text (jsonb.go).
	json, jsonb bool
	// bpchar is n for a column of character(n) values held without their trailing spaces,
	// -1 for one of bpchar without a length (bval.bpchar, bpchar.go), 0 for any other.
	bpchar int32
	// typmod is the column's type modifier as PostgreSQL names the type with it (bval.typmod).
	typmod string
	// scalar marks the one column of a function in FROM that returns a base type
	// (json_array_elements' value, without ORDINALITY): its table's name alone reads it, as
	// PostgreSQL reads a whole-row reference to such a function (e->>'x' of
	// json_array_elements(…) e).
	scalar bool
	// domainKey marks a column of a correlated subquery's domain (domain.go): the outer
	// rows' own values, grouped, ordered and partitioned bytewise even when json or jsonb (each
	// distinct document is one domain row, as PostgreSQL evaluates the subquery for each outer
	// row; json has no equality to group it by).
	domainKey bool
}

// scope is the columns an expression may reference: the output of the FROM relation.
type scope struct {
	cols []col
}

func (s *scope) recordType() *types.RecordType {
	ts := make([]types.Type, len(s.cols))
	for i, c := range s.cols {
		ts[i] = c.typ
	}
	return types.NewRecordTypeFromTypes(ts)
}

// starQual is the qualifier of the i'th column (qualified qual) as * expands it when its name
// is ambiguous: lookup resolves it to column i alone.
func starQual(i int, qual string) string {
	return "\x00" + strconv.Itoa(i) + "\x00" + qual
}

// lookup resolves a (possibly qualified) column name. Names and qualifiers match exactly, as
// PostgreSQL compares identifiers after folding unquoted ones to lower case (the parser has
// folded them): `FROM flights "T"` is not qualified by `t`, which is 42P01.
func (s *scope) lookup(qual, name string) (int, error) {
	if rest, ok := strings.CutPrefix(qual, "\x00"); ok {
		idx, q, _ := strings.Cut(rest, "\x00")
		if i, err := strconv.Atoi(idx); err == nil && i < len(s.cols) && s.cols[i].name == name && s.cols[i].qual == q {
			return i, nil
		}
		qual = q
	}
	found := -1
	for i, c := range s.cols {
		if c.name != name || (qual != "" && c.qual != qual) || (qual == "" && c.hidden) {
			continue
		}
		if found >= 0 {
			return -1, quoting(InvalidArgument, "42702", "column reference %q is ambiguous", name)
		}
		found = i
	}
	if found < 0 && qual == "" {
		for i, c := range s.cols {
			if c.scalar && !c.hidden && c.qual == name {
				if found >= 0 {
					return -1, quoting(InvalidArgument, "42702", "column reference %q is ambiguous", name)
				}
				found = i
			}
		}
	}
	if found < 0 {
		if qual != "" {
			for _, c := range s.cols {
				if c.qual == qual {
					return -1, quoting(InvalidArgument, "42703", "column %q does not exist", qual+"."+name)
				}
			}
			return -1, missingFromEntry(qual)
		}
		return -1, undefinedColumn(name)
	}
	return found, nil
}

// ambiguity returns whether s.lookup(c.qual, c.name) of a column c = s.cols[i] that * lists
// (not hidden unless qualified) fails, answered in O(1) per column after one pass over s
// rather than a lookup (O(width)) per column: more than one column of c's name under c's
// qualifier (hidden ones included) when c has one, else more than one unhidden column of c's
// name (42702 either way).
func (s *scope) ambiguity() func(i int) bool {
	type qualName struct{ qual, name string }
	qualified, unhidden := map[qualName]int{}, map[string]int{}
	for _, c := range s.cols {
		qualified[qualName{c.qual, c.name}]++
		if !c.hidden {
			unhidden[c.name]++
		}
	}
	return func(i int) bool {
		c := s.cols[i]
		switch {
		case strings.HasPrefix(c.qual, "\x00"):
			_, err := s.lookup(c.qual, c.name) // lookup reads such a qualifier as starQual's
			return err != nil
		case c.qual != "":
			return qualified[qualName{c.qual, c.name}] > 1
		default:
			return unhidden[c.name] > 1
		}
	}
}

// ref is a reference to column i of s, typed as the column: the type NewRootFieldRef would
// read out of s.recordType(), without building that record type (O(width)) per reference.
func (s *scope) ref(i int) expr.Expression {
	r, err := expr.NewRootFieldRefFromType(expr.NewStructFieldRef(int32(i)), s.cols[i].typ)
	if err != nil {
		panic(err) // a struct field reference from the root is always accepted
	}
	return r
}

// boundRel is a bound relation and the scope of its output.
type boundRel struct {
	rel plan.Rel
	sc  *scope
	// names are the output column names (the select list's).
	names []string
	// unknown[i], when it holds a string constant or NULL (unknownCol), is output column i
	// as written in the select list of a plain SELECT (not grouped, not DISTINCT): PostgreSQL's
	// unknown-type literal, which a set operation types from its other arm (setArms: SELECT
	// 'NaN'::float8 UNION SELECT 'Infinity' is double precision). Elsewhere the column is
	// text, as PostgreSQL resolves unknown outputs. nil when no column is one.
	unknown []bval
}

// paramState records the parameters a statement uses: their types (inferred from where they
// are used) and, when binding, their values.
type paramState struct {
	types map[int]types.Type
	vals  []any // nil at prepare time
	// placeholders maps the stand-in literals of prepare time to their parameter number.
	placeholders map[expr.Expression]int
	// nullErrs holds, by parameter number, PostgreSQL's own refusal of a NULL value where it
	// has one (a window frame's offset: "frame starting offset must not be null"), recorded
	// at prepare time; other NULL parameters are refused by nullParam.
	nullErrs map[int]*Error
	// intCmp and intUses count, by parameter number at prepare time, the comparisons of a
	// parameter with a smallint or integer expression and every use that gives it an integer
	// type (comparisons included): a parameter whose integer uses are all such comparisons is
	// declared float64 (paramDecls).
	intCmp, intUses map[int]int
	// int4Args counts, by parameter number at prepare time, the uses of a parameter as an
	// argument PostgreSQL's function declares integer (int4Arg): a parameter whose integer
	// uses are all such arguments is declared int32 (PostgreSQL's integer parameter there).
	int4Args map[int]int
}

// nullOffset records, at prepare time, that a NULL bound to the parameter standing for e is
// PostgreSQL's 22004 refusal of a NULL frame offset (which: "starting" or "ending"); the
// first offset a parameter stands for names the refusal, as PostgreSQL evaluates the start
// offset first (ExecWindowAgg).
func (ps *paramState) nullOffset(e expr.Expression, which string) {
	num, ok := ps.placeholders[e]
	if !ok || ps.vals != nil {
		return
	}
	if ps.nullErrs == nil {
		ps.nullErrs = map[int]*Error{}
	}
	if _, seen := ps.nullErrs[num]; !seen {
		ps.nullErrs[num] = errNullOffset(which)
	}
}

// errNullOffset is PostgreSQL's refusal of a NULL window frame offset (which: "starting" or
// "ending").
func errNullOffset(which string) *Error {
	return &Error{Code: InvalidArgument, SQLState: "22004", Msg: fmt.Sprintf("frame %s offset must not be null", which)}
}

// binder binds one statement.
type binder struct {
	cat    Catalog
	b      plan.Builder
	reg    expr.ExtensionRegistry
	ps     *paramState
	ctes   []map[string]*pg.CommonTableExpr
	opts   BindOptions
	now    time.Time
	agg    *aggCtx
	routes []RouteInfo
	// boundErr is the first data exception the evaluation of a read's time bound raised
	// (constantBound): the read's refusal when a bound is missing for it.
	boundErr error
	// comparing is set while the operands of a comparison are given their common type
	// (compare): there a date or text constant beyond timestamp[ns] is clamped to its range,
	// which orders it as PostgreSQL's value does (and bounds a read); anywhere else such a
	// constant read as a timestamp is 22008 "timestamp out of range" (coerce).
	comparing bool
	// inCTE guards against a WITH query referencing itself.
	active map[string]bool
	// recursive holds the WITH RECURSIVE queries that read themselves (recursive.go);
	// workTables, by name, the working tables of those whose recursive term is being bound;
	// nextWorkTable numbers them.
	recursive     map[*pg.CommonTableExpr]bool
	workTables    map[string]*boundRel
	nextWorkTable int
	// volatile is set when the statement read the clock or the session's user (clock, user):
	// its plan then differs from one binding to the next.
	volatile bool
	// gsets are the arms of GROUP BY grouping sets being bound (groupingsets.go).
	gsets map[*pg.SelectStmt]*groupingArm
	// win is the window state of the select list being bound (window.go); nil where window
	// functions are not allowed. inWindow is set while a window function's parts are bound.
	win      *winCtx
	inWindow bool
	// typeofCalls are the pg_typeof calls the statement may answer (allowTypeof): the
	// select-list columns of its outermost SELECT.
	typeofCalls map[*pg.FuncCall]bool
	// sublinks maps each scalar subquery bound as a single join to its hidden column in the
	// scope of its SELECT (join.go).
	sublinks map[*pg.SubLink]int
	// sublinkErrs maps a scalar subquery whose errors wait on the expression that reads it
	// (scalarJoin's atSite) to the hidden column of its deferred error, next to its value.
	sublinkErrs map[*pg.SubLink]int
	// sublinkScales maps a scalar subquery whose numeric value's display scale varies by row
	// to the hidden column of that display scale (scaleJoin, dscale.go).
	sublinkScales map[*pg.SubLink]int
	// regrouped marks the scalar subqueries whose relation oneRowPerKey groups by their
	// correlation keys (scalarJoin): every row's deferred error reaches the expression reading
	// it, so a DISTINCT or GROUP BY select list may be deferred too (decorrelate).
	regrouped map[*pg.SelectStmt]bool
	// keepScales marks the SELECTs of derived tables (FROM (SELECT …)) whose varying
	// numerics carry their display scales out as hidden columns (col.scaleName, dscale.go);
	// scaleSeq numbers those columns.
	keepScales map[*pg.SelectStmt]bool
	scaleSeq   int
	// condNames are the column names the WHERE and ON conditions of the SELECT whose FROM is
	// being bound reference (derived.go's joinItem).
	condNames map[string]int
	// selNames memoizes selectNames: the column-name counts of each SELECT of the statement.
	selNames map[*pg.SelectStmt]map[string]int
	// subqueryKeys are, per grouped SELECT, the hidden columns of its select list's and
	// HAVING's uncorrelated scalar subqueries, grouped by as keys (join.go).
	subqueryKeys map[*pg.SelectStmt][]int
	// domains are the bound domains of the correlated subqueries being bound, by the name
	// their rewritten FROM reads them under (domain.go); domainSeq numbers them.
	domains   map[string]*boundRel
	domainSeq int
	// domainOrdinality marks the functions in FROM whose ORDINALITY a domain added to mark
	// the rows they yield (domain.go), by their call's location in the statement (the
	// subquery is copied as it is rewritten): the column is hidden, the function's own
	// column still readable by the table's name (col.scalar).
	domainOrdinality map[int32]bool
	// domainFilter are the WHERE conjuncts without subqueries of the SELECT whose subqueries
	// are being bound, which its correlated subqueries' domains are filtered by (domain.go).
	domainFilter []*pg.Node
	// readLinks maps a domain's copy of an outer read to the read it copies (domain.go,
	// cloneReads); readRouted holds the routed conjuncts that reached each read when filters
	// were pushed down (routeRead), which the copies read as well.
	readLinks  map[*plan.NamedTableReadRel]*plan.NamedTableReadRel
	readRouted map[*plan.NamedTableReadRel][]expr.Expression
	// level is the nesting of the query being bound: a subquery (decorrelate) or a derived
	// table is one level below the query it stands in. enclosing are the scopes of the queries
	// the subqueries being decorrelated stand in, innermost last; deepRefs are the refusals
	// of references past them (noteDeepRef), by the name error each stands for, firstDeepRef
	// the first, and resolvable the name errors of references decorrelation resolves.
	level        int
	enclosing    []enclosingScope
	deepRefs     map[string]*Error
	firstDeepRef *Error
	// wholeRows are the refusals of whole-row references (noteWholeRow), by the name error
	// each stands for.
	wholeRows  map[string]*Error
	resolvable map[string]bool
	// reads are the statement's table reads in the order bound, each labelled in readPlace
	// with the alias it is read under (route refusals name it: readLabel).
	reads     []*plan.NamedTableReadRel
	readPlace map[*plan.NamedTableReadRel]readLabel
}

// enclosingScope is the scope of a query a subquery being decorrelated stands in, and the
// level of that subquery.
type enclosingScope struct {
	sc    *scope
	level int
}

// RouteInfo describes one routed read of a bound statement, for EXPLAIN and checks.
type RouteInfo struct {
	Table routing.TableDef
	// Partitions are the pinned partition values; nil when the read is analytical (no pin).
	Partitions [][]byte
	// Range is the finite half-open time range [Start, End), UTC.
	Range routing.TimeRange
	// Ranges, when not nil, are the disjoint ranges (sorted, at least two) whose union the
	// read's time filter allows (an OR of ranges, an IN list of instants); Range is their hull
	// and the read asks only the buckets they cover.
	Ranges []routing.TimeRange
	// RouteConjuncts and Residual count the WHERE conjuncts that became the route and the
	// residual filters that run in the fragments.
	RouteConjuncts, Residual int
	// Analytical reports a read that pins no partition (BindOptions.Analytical): it reads
	// every partition of its range, discovered at execution.
	Analytical bool
	// Empty reports a route that reads nothing (contradictory partition pins, or bounds
	// leaving no instant): Partitions is empty, Range empty, and the read answers no rows.
	Empty bool
}

func newBinder(cat Catalog, ps *paramState, opts BindOptions) *binder {
	b := plan.NewBuilder(collection())
	now := opts.Now
	if now.IsZero() {
		now = time.Now()
	}
	if opts.MaxPartitions <= 0 {
		opts.MaxPartitions = DefaultMaxPartitions
	}
	// PostgreSQL's clock has microseconds: a finer now() would reach clients as a timestamp
	// that drivers converting to microsecond datetimes refuse (ADBC's fetchall in Python).
	// Its type stays timestamp[ns, UTC], the timestamp column's, although PostgreSQL's
	// timestamptz and DuckDB's now() (Arrow timestamp[us, tz]) are microsecond types: one
	// instant type keeps comparisons, UNION ALL, CASE and COALESCE with the column free of
	// unit casts here and in tools reading the result (DuckDB over the Arrow result reads both
	// as TIMESTAMPTZ_NS and compares them; test_sql_trial.py test_now_has_the_columns_type).
	now = now.UTC().Truncate(time.Microsecond)
	return &binder{cat: cat, b: b, reg: b.GetExprBuilder().Reg, ps: ps, opts: opts, now: now, active: map[string]bool{}}
}

// clock is the statement's clock (BindOptions.Now), for now(), current_timestamp and
// current_date: reading it makes the binding volatile.
func (bd *binder) clock() time.Time {
	bd.volatile = true
	return bd.now
}

// pushWith makes the WITH queries of wc visible by name (bound where they are read) until pop
// is called.
func (bd *binder) pushWith(wc *pg.WithClause) (pop func(), err error) {
	m := map[string]*pg.CommonTableExpr{}
	for _, n := range wc.GetCtes() {
		c := n.GetCommonTableExpr()
		if c == nil {
			return nil, unimplemented("this WITH item")
		}
		if wc.GetRecursive() && selfReferencing(c) {
			if err := recursiveShape(c); err != nil {
				return nil, err
			}
			if bd.recursive == nil {
				bd.recursive = map[*pg.CommonTableExpr]bool{}
			}
			bd.recursive[c] = true
		}
		if _, dup := m[c.GetCtename()]; dup {
			// PostgreSQL's transformWithClause refuses a name listed twice in one WITH.
			return nil, refused(InvalidArgument, "42712", `WITH query name "%s" specified more than once`, c.GetCtename())
		}
		// MATERIALIZED / NOT MATERIALIZED hints change nothing for a read-only plan.
		m[c.GetCtename()] = c
	}
	bd.ctes = append(bd.ctes, m)
	return func() { bd.ctes = bd.ctes[:len(bd.ctes)-1] }, nil
}

// bindSelect binds a SELECT (with its set operations, ORDER BY and LIMIT).
func (bd *binder) bindSelect(sel *pg.SelectStmt) (*boundRel, error) {
	if bd.limitZero(sel) {
		sel = withoutRows(sel)
	}
	if wc := sel.GetWithClause(); wc != nil {
		pop, err := bd.pushWith(wc)
		if err != nil {
			return nil, err
		}
		defer pop()
	}
	switch {
	case len(sel.GetValuesLists()) > 0:
		return bd.bindValues(sel)
	case sel.GetIntoClause() != nil:
		return nil, unimplemented("SELECT INTO")
	case len(sel.GetLockingClause()) > 0:
		return nil, unimplemented("FOR UPDATE / FOR SHARE")
	}
	var (
		br  *boundRel
		err error
	)
	switch op := sel.GetOp(); op {
	case pg.SetOperation_SETOP_NONE, pg.SetOperation_SET_OPERATION_UNDEFINED:
		flattenGroupRows(sel)
		sets, err := expandGroupingSets(sel.GetGroupClause())
		if err != nil {
			return nil, err
		}
		if sets != nil {
			return bd.bindGroupingSets(sel, sets)
		}
		return bd.bindSimple(sel)
	case pg.SetOperation_SETOP_UNION:
		br, err = bd.bindUnion(sel)
	case pg.SetOperation_SETOP_INTERSECT, pg.SetOperation_SETOP_EXCEPT:
		br, err = bd.bindIntersectExcept(sel)
	default:
		return nil, unimplemented(strings.TrimPrefix(op.String(), "SETOP_"))
	}
	if err != nil {
		return nil, err
	}
	return bd.orderLimit(sel, br, nil, nil)
}

// isLimitZero reports a SELECT whose LIMIT (or FETCH FIRST … ROWS) is the integer constant 0.
func isLimitZero(sel *pg.SelectStmt) bool {
	c := sel.GetLimitCount().GetAConst()
	return c != nil && !c.GetIsnull() && c.GetIval() != nil && c.GetIval().GetIval() == 0
}

// limitZero reports a SELECT whose LIMIT is 0: the integer constant (isLimitZero) or an
// expression of constants whose value is 0 (LIMIT 1 - 1, folded by limitValue). A LIMIT
// holding a parameter or a subquery is not read here (its value is the executor's).
func (bd *binder) limitZero(sel *pg.SelectStmt) bool {
	if isLimitZero(sel) {
		return true
	}
	n := sel.GetLimitCount()
	if n == nil || n.GetAConst() != nil || hasSubLink(n) || hasParamRef(n) {
		return false
	}
	v, err := bd.limitValue(n, "LIMIT")
	return err == nil && v == 0
}

// hasParamRef reports a parameter ($n) under n.
func hasParamRef(n *pg.Node) bool {
	return hasNode(n, func(x *pg.Node) bool { return x.GetParamRef() != nil })
}

// hasNode reports whether n, or a node under it outside nested SELECTs (walkPG), is one that
// is reports.
func hasNode(n *pg.Node, is func(*pg.Node) bool) bool {
	found := is(n)
	if !found {
		walkPG(n.ProtoReflect(), func(x *pg.Node) bool {
			found = found || is(x)
			return !found
		})
	}
	return found
}

// withoutRows returns a copy of sel, a SELECT whose LIMIT is 0, whose WHERE (each set
// operation arm's) is ANDed with false: it answers the same (no rows, its columns), and its
// routed reads read no bucket whatever they pin (constantlyFalse, route), as PostgreSQL's
// LIMIT 0 runs no scan — SELECT * FROM t LIMIT 0 is the schema probe of BI tools and drivers.
// A read under a derived table that the false cannot reach still needs its route.
func withoutRows(sel *pg.SelectStmt) *pg.SelectStmt {
	sel = proto.Clone(sel).(*pg.SelectStmt)
	var add func(s *pg.SelectStmt)
	add = func(s *pg.SelectStmt) {
		switch {
		case s == nil || len(s.GetValuesLists()) > 0:
		case s.GetOp() == pg.SetOperation_SETOP_NONE || s.GetOp() == pg.SetOperation_SET_OPERATION_UNDEFINED:
			if len(s.GetFromClause()) == 0 {
				return
			}
			f := &pg.Node{Node: &pg.Node_AConst{AConst: &pg.A_Const{Val: &pg.A_Const_Boolval{Boolval: &pg.Boolean{}}}}}
			if w := s.GetWhereClause(); w != nil {
				// After the WHERE, so that its parameters are still bound (and typed) first.
				f = pg.MakeBoolExprNode(pg.BoolExprType_AND_EXPR, []*pg.Node{w, f}, 0)
			}
			s.WhereClause = f
		default:
			add(s.GetLarg())
			add(s.GetRarg())
		}
	}
	add(sel)
	return sel
}

// bindUnion binds UNION ALL (a SetRel) and UNION (the same, then DISTINCT).
func (bd *binder) bindUnion(sel *pg.SelectStmt) (*boundRel, error) {
	l, larm, rarm, err := bd.setArms(sel, "UNION")
	if err != nil {
		return nil, err
	}
	rel, err := bd.b.Set(plan.SetOpUnionAll, larm.rel, rarm.rel)
	if err != nil {
		return nil, fmt.Errorf("bind union: %w", err)
	}
	out := &boundRel{rel: rel, sc: &scope{}, names: l.names}
	for i, c := range larm.sc.cols {
		if c.hidden {
			out.sc.cols = append(out.sc.cols, c) // a display scale (setArms)
			continue
		}
		out.sc.cols = append(out.sc.cols, col{name: l.names[i], typ: c.typ, vary: c.vary || rarm.sc.cols[i].vary, bytea: c.bytea || rarm.sc.cols[i].bytea, json: c.json, jsonb: c.jsonb, bpchar: c.bpchar, typmod: c.typmod, scaleName: c.scaleName}) // setArms: both arms'
	}
	if !sel.GetAll() {
		return bd.unionDistinct(out, l, larm)
	}
	return out, nil
}

// setArms binds the two inputs of a set operation (op names it in errors) and casts them to
// common column types: the left input as bound (its visible columns), and both arms cast.
// A set operation read alone (keepScales) carries each numeric column whose display scale
// varies (by arm or by row) with its display scale as a hidden column after the visible
// ones, in both arms (setScales): larm's visible column names it (col.scaleName).
func (bd *binder) setArms(sel *pg.SelectStmt, op string) (l, larm, rarm *boundRel, err error) {
	keep := bd.keepScales[sel]
	if keep {
		// Its arms carry their own varying numerics' display scales out, for this binding.
		defer bd.markArms(sel)()
	}
	lfull, err := bd.bindSelect(sel.GetLarg())
	if err != nil {
		return nil, nil, nil, err
	}
	rfull, err := bd.bindSelect(sel.GetRarg())
	if err != nil {
		return nil, nil, nil, err
	}
	l, r := visibleCols(lfull), visibleCols(rfull)
	if len(l.sc.cols) != len(r.sc.cols) {
		return nil, nil, nil, errorf(InvalidArgument, "each %s query must have the same number of columns", op)
	}
	// Both arms must declare the same types: numbers are promoted to the wider type, a
	// timestamp and a timestamptz or a date to datetimeCommon's (PostgreSQL's UNION type
	// resolution, for the types we have), and every column is nullable in both.
	common := make([]types.Type, len(l.sc.cols))
	vary := make([]bool, len(l.sc.cols))
	for i := range l.sc.cols {
		lt, rt := l.sc.cols[i].typ, r.sc.cols[i].typ
		lu, ru := unknownCol(l, i), unknownCol(r, i)
		switch {
		case lu && !ru:
			lt = rt
		case ru && !lu:
			rt = lt
		}
		lf, rf := familyOf(lt), familyOf(rt)
		switch {
		case sameType(lt, rt):
			common[i] = lt
		case isNumber(lf) && isNumber(rf):
			common[i] = widerNumber(lt, rt)
		case datetimeCommon(lt, rt) != nil:
			common[i] = datetimeCommon(lt, rt)
		default:
			lc, rc := l.sc.cols[i], r.sc.cols[i]
			return nil, nil, nil, errorf(InvalidArgument, "%s types %s and %s cannot be matched", op,
				modTypeName(lt, lc.bpchar, false, lc.typmod), modTypeName(rt, rc.bpchar, false, rc.typmod))
		}
		if familyOf(common[i]) == famNumeric {
			// An untyped literal arm ('2.5') is numeric_in's value, at its own display
			// scale, not the other arm's.
			lv, rv := bval{e: expr.NewNullLiteral(lt)}, bval{e: expr.NewNullLiteral(rt)}
			for _, u := range []struct {
				br *boundRel
				v  *bval
			}{{l, &lv}, {r, &rv}} {
				if unknownCol(u.br, i) && u.br.unknown[i].str != nil {
					// Held at a scale that holds it exactly (7.125 beside 1.50).
					us := staticScale(u.br.unknown[i])
					*u.v = bval{e: expr.NewNullLiteral(numType(us))}
					if cs, _ := numScale(common[i]); cs < us {
						common[i] = widerNumber(common[i], numType(us))
					}
				}
			}
			err := sameScales([]bval{lv, rv}, op)
			if err != nil && op == "INTERSECT" {
				// INTERSECT shows the value of the input PostgreSQL's plan hashes first
				// (the smaller), 1.5 or 1.50; EXCEPT the left's (exceptScales).
				return nil, nil, nil, err
			}
			// UNION keeps each value's display scale (SELECT 1.5 UNION ALL SELECT 2.25
			// shows 1.5 and 2.25): the column holds them exactly at the larger scale
			// (widerNumber), its display scale varying by row (col.vary, dscale.go); so
			// does EXCEPT's left untyped literal.
			vary[i] = err != nil && (op != "EXCEPT" || lu) || l.sc.cols[i].vary || r.sc.cols[i].vary && op != "EXCEPT"
		}
		common[i] = common[i].WithNullability(nullableN)
	}
	carry, scales, names := bd.setScales(keep, op, lfull, rfull, l, r, common, vary)
	if larm, err = bd.scaledArm(lfull, l, scales[0], names); err != nil {
		return nil, nil, nil, err
	}
	if rarm, err = bd.scaledArm(rfull, r, scales[1], names); err != nil {
		return nil, nil, nil, err
	}
	ts := slices.Clone(common)
	for range names {
		ts = append(ts, i32Type())
	}
	if larm, err = bd.castProject(larm, ts, r); err != nil {
		return nil, nil, nil, err
	}
	if rarm, err = bd.castProject(rarm, ts, l); err != nil {
		return nil, nil, nil, err
	}
	for i, v := range vary {
		larm.sc.cols[i].vary = larm.sc.cols[i].vary || v
		larm.sc.cols[i].bytea = l.sc.cols[i].bytea || r.sc.cols[i].bytea
		// An unknown literal beside json (jsonb) is read as json (jsonb: castProject).
		lc, rc := l.sc.cols[i], r.sc.cols[i]
		lu, ru := unknownCol(l, i), unknownCol(r, i)
		larm.sc.cols[i].json = (lc.json || lu) && (rc.json || ru) && !(lu && ru)
		larm.sc.cols[i].jsonb = (lc.jsonb || lu) && (rc.jsonb || ru) && !(lu && ru)
		if larm.sc.cols[i].bpchar, err = bpcharCommon([]bval{armValue(l, i), armValue(r, i)}); err != nil {
			return nil, nil, nil, err
		}
		// PostgreSQL's select_common_typmod: the arms' modifier when they have the same.
		larm.sc.cols[i].typmod = ""
		if lc.typmod == rc.typmod && !lu && !ru {
			larm.sc.cols[i].typmod = lc.typmod
		}
	}
	for _, arm := range []*boundRel{larm, rarm} {
		nameScales(arm, carry, names)
	}
	return l, larm, rarm, nil
}

// armValue is a set operation arm's output column i as a value for bpcharCommon: its unknown
// literal, or its type and character(n) length.
func armValue(br *boundRel, i int) bval {
	if unknownCol(br, i) {
		return br.unknown[i]
	}
	return bval{e: br.sc.ref(i), bpchar: br.sc.cols[i].bpchar}
}

// unknownCol reports whether br's output column i is an unknown literal (boundRel.unknown).
func unknownCol(br *boundRel, i int) bool {
	return i < len(br.unknown) && (br.unknown[i].str != nil || br.unknown[i].null)
}

// castProject returns br with its columns of the types ts (nullable numbers of the same
// family or wider): a ProjectRel of casts where a column's type differs. other is the set
// operation's other arm, whose bytea columns type br's unknown literals (boundRel.unknown).
func (bd *binder) castProject(br *boundRel, ts []types.Type, other *boundRel) (*boundRel, error) {
	need := false
	exprsOut := make([]expr.Expression, len(br.sc.cols))
	for i, c := range br.sc.cols {
		exprsOut[i] = br.sc.ref(i)
		if c.typ.Equals(ts[i]) {
			continue
		}
		need = true
		if unknownCol(br, i) {
			// An unknown literal of the arm is read as a constant of the column's type (by
			// byteain beside a bytea column, jsonb_in beside a jsonb one).
			oc := other.sc.cols[i]
			e, err := bd.coerceBeside(br.unknown[i], bval{bytea: oc.bytea}, ts[i], "UNION")
			if oc.jsonb && familyOf(ts[i]) == famBinary {
				var j bval
				j, err = bd.jsonbCast(br.unknown[i])
				e = j.e
			}
			if err != nil {
				return nil, err
			}
			exprsOut[i] = nullable(e)
			continue
		}
		if sameType(c.typ, ts[i]) {
			exprsOut[i] = nullable(exprsOut[i])
			continue
		}
		e, err := bd.coerce(typed(exprsOut[i]), ts[i], "UNION")
		if err != nil {
			return nil, err
		}
		exprsOut[i] = nullable(e)
	}
	if !need {
		return br, nil
	}
	return bd.project(br, exprsOut, br.names)
}

// project puts a ProjectRel emitting exactly es (over br's scope) above br.
func (bd *binder) project(br *boundRel, es []expr.Expression, names []string) (*boundRel, error) {
	if identity(es, len(br.sc.cols)) {
		// The select list is the input's columns in order (SELECT * of a table, the measures
		// of an aggregate): no ProjectRel, which the executor would run per batch for nothing.
		out := &boundRel{rel: br.rel, sc: &scope{}, names: names}
		for i, c := range br.sc.cols {
			out.sc.cols = append(out.sc.cols, col{name: names[i], typ: c.typ, vary: c.vary, bytea: c.bytea, json: c.json, jsonb: c.jsonb, bpchar: c.bpchar, typmod: c.typmod})
		}
		return out, nil
	}
	p, err := bd.b.Project(br.rel, es...)
	if err != nil {
		return nil, fmt.Errorf("bind project: %w", err)
	}
	emit := make([]int32, len(es))
	for i := range es {
		emit[i] = int32(len(br.sc.cols) + i)
	}
	rel, err := p.Remap(emit...)
	if err != nil {
		return nil, fmt.Errorf("bind project: %w", err)
	}
	out := &boundRel{rel: rel, sc: &scope{}, names: names}
	for i, e := range es {
		out.sc.cols = append(out.sc.cols, col{name: names[i], typ: e.GetType()})
		if fr, ok := e.(*expr.FieldReference); ok {
			if j, ok := rootFieldIndex(fr); ok && j < len(br.sc.cols) {
				// A column passed through keeps its kind (bytea, json, jsonb: INTERSECT's
				// bytea showed its bytes as text) and its type modifier.
				// A numeric whose display scale varies by row keeps varying (dscale.go): its
				// text stays refused unless the caller names its scale again (scaleName).
				c, src := &out.sc.cols[i], br.sc.cols[j]
				c.bytea, c.json, c.jsonb, c.typmod, c.domainKey, c.vary = src.bytea, src.json, src.jsonb, src.typmod, src.domainKey, src.vary
			}
		}
	}
	return out, nil
}

// identity reports whether es are plain references to the input's columns 0..width-1 in order.
func identity(es []expr.Expression, width int) bool {
	if len(es) != width {
		return false
	}
	for i, e := range es {
		if !routedColumn(e, i) {
			return false
		}
	}
	return true
}

// distinct groups every column of br (SELECT DISTINCT, UNION).
func (bd *binder) distinct(br *boundRel) (*boundRel, error) {
	groups := make([]expr.Expression, len(br.sc.cols))
	for i := range groups {
		groups[i] = br.sc.ref(i)
	}
	// Interval columns group by their span, as PostgreSQL's interval_cmp compares them
	// (scan/aggregate's intervalSpanKey), shown as one of the equal values.
	if slices.ContainsFunc(br.sc.cols, func(c col) bool { return c.jsonb && !c.domainKey }) {
		return bd.distinctJSONB(br)
	}
	if err := docGroupKeys(br.sc.cols); err != nil {
		return nil, err
	}
	rel, err := bd.b.AggregateExprs(br.rel, nil, groups)
	if err != nil {
		return nil, fmt.Errorf("bind distinct: %w", err)
	}
	return &boundRel{rel: rel, sc: &scope{cols: slices.Clone(br.sc.cols)}, names: br.names}, nil
}

// bindSimple binds one SELECT without set operations.
func (bd *binder) bindSimple(sel *pg.SelectStmt) (*boundRel, error) {
	if err := refuseRowSubqueries(sel); err != nil {
		return nil, err
	}
	// ALL and ANY (SELECT …) other than IN: scalar subqueries of aggregates (quantified.go).
	sel, err := bd.rewriteQuantified(sel)
	if err != nil {
		return nil, err
	}
	// Set-returning functions in the select list: a ROWS FROM item after FROM (projectset.go).
	if sel, err = selectSRFs(sel); err != nil {
		return nil, err
	}
	// Its WHERE conjuncts without a subquery narrow the domains of its correlated subqueries
	// and LATERAL items (domain.go): they are applied above the joins, but a domain must read
	// only the rows they keep (a routed read's pins among them).
	saved := bd.domainFilter
	bd.domainFilter = nil
	defer func() { bd.domainFilter = saved }()
	if w := sel.GetWhereClause(); w != nil {
		for _, c := range splitAnd(w) {
			if !hasSubLink(c) {
				bd.domainFilter = append(bd.domainFilter, c)
			}
		}
	}
	savedNames := bd.condNames
	bd.condNames = bd.condRefs(sel)
	if fc := sel.GetFromClause(); len(fc) == 1 && fc[0].GetRangeSubselect() != nil && !fc[0].GetRangeSubselect().GetLateral() {
		// A derived table read alone carries its varying numerics' display scales out (not
		// one under a join, whose plan the hidden columns would change).
		bd.markScales(fc[0].GetRangeSubselect().GetSubquery().GetSelectStmt())
	}
	// So does a WITH query read alone (bound at each reference: marked for this one only).
	cteSel := bd.loneCTE(sel)
	if cteSel != nil && !bd.keepScales[cteSel] {
		bd.markScales(cteSel)
	} else {
		cteSel = nil
	}
	from, err := bd.from(sel.GetFromClause())
	if cteSel != nil {
		delete(bd.keepScales, cteSel)
	}
	bd.condNames = savedNames
	if err != nil {
		return nil, err
	}
	if from == nil {
		// No FROM: one row of no columns, which the select list is evaluated over.
		one, err := bd.b.VirtualTableFromExpr([]string{}, expr.VirtualTableExpressionValue{})
		if err != nil {
			return nil, fmt.Errorf("bind values: %w", err)
		}
		from = &fromItem{boundRel: &boundRel{rel: one, sc: &scope{}}}
	}
	// Subqueries: semi and anti joins for WHERE's EXISTS and IN conjuncts, single joins for
	// scalar subqueries (join.go); those selecting a constant are that constant (constsub.go).
	sel = withConstantSubqueries(sel)
	from, w, err := bd.subqueries(from, sel)
	if err != nil {
		return nil, err
	}
	// WHERE
	if w != nil || from.read != nil {
		if from, err = bd.where(from, w); err != nil {
			return nil, err
		}
	}
	in := from.boundRel
	targets := sel.GetTargetList()
	if len(targets) == 0 {
		return nil, unimplemented("an empty select list")
	}
	grouped := len(sel.GetGroupClause()) > 0 || sel.GetHavingClause() != nil || hasAggregate(targets) ||
		sortHasAggregate(sel.GetSortClause()) || bd.gsets[sel] != nil
	if sel.GetGroupDistinct() {
		return nil, unimplemented("GROUP BY DISTINCT")
	}
	// The select list: expressions over in (or over the aggregate), with names. Its limits
	// count the client's entries, not the hidden ones a rewrite added (hiddenTargets).
	hidden := hiddenTargets(targets)
	if err := bd.opts.checkColumns(len(targets) - hidden); err != nil {
		return nil, err
	}
	items, err := bd.expandTargets(targets, in.sc)
	if err != nil {
		return nil, err
	}
	if err := bd.opts.checkColumns(len(items) - hidden); err != nil {
		return nil, err
	}
	if len(items)-hidden+len(sel.GetGroupClause())+len(sel.GetSortClause()) > MaxOutputColumns &&
		len(items)-hidden+junkTargets(items, sel) > MaxOutputColumns {
		return nil, errTooManyTargets
	}
	var (
		base   *boundRel // the relation the select list is evaluated over
		having expr.Expression
		ac     *aggCtx
	)
	if grouped {
		ac = &aggCtx{in: in.sc}
		for _, g := range sel.GetGroupClause() {
			ge, coll, err := bd.groupExpr(g, items, in.sc)
			if err != nil {
				return nil, err
			}
			// A key listed twice (GROUP BY b, 2 naming one expression) groups once, as
			// PostgreSQL's planner does: the result is the same, and one time bin stays a
			// grouping the stores answer. Under other COLLATE clauses it is another key
			// (aggCtx.collations), one the select list can name.
			if ac.group(ge, coll) < 0 {
				ac.groups = append(ac.groups, ge)
				ac.collations = append(ac.collations, coll)
			}
		}
		// Uncorrelated scalar subqueries' values, one for every row, are keys too (join.go).
		for _, i := range bd.subqueryKeys[sel] {
			ac.groups = append(ac.groups, in.sc.ref(i))
		}
		if arm := bd.gsets[sel]; arm != nil {
			if err := bd.nullGroups(arm, items, ac); err != nil {
				return nil, err
			}
		}
		bd.agg = ac
		defer func() { bd.agg = nil }()
	}
	// Window functions are allowed in the select list and ORDER BY only (window.go).
	windowed := len(sel.GetWindowClause()) > 0 || listHasWindow(targets) || listHasWindow(sel.GetSortClause())
	if windowed {
		if bd.win, err = newWinCtx(sel.GetWindowClause()); err != nil {
			return nil, err
		}
	}
	outs := make([]expr.Expression, len(items))
	names := make([]string, len(items))
	vary := make([]bool, len(items))     // outs[i]'s display scale varies by row (dscale.go)
	bpchar := make([]int32, len(items))  // outs[i] is character(n) (bpchar.go)
	bytea := make([]bool, len(items))    // outs[i] is bytea (bytea.go)
	jsonb := make([]bool, len(items))    // outs[i] is jsonb (jsonb.go)
	json := make([]bool, len(items))     // outs[i] is json
	typmod := make([]string, len(items)) // outs[i]'s type modifier (bval.typmod)
	var unknown []bval                   // boundRel.unknown
	// A derived table's varying numerics carry their display scales out (keepScales): each
	// one's scale expression, bound with the select list (an average's adds its measures).
	// Under DISTINCT ON, whose kept rows are whole rows of the select list, they travel with
	// their rows; plain DISTINCT would group by them.
	keepScales := bd.keepScales[sel] && (len(sel.GetDistinctClause()) == 0 || isDistinctOn(sel.GetDistinctClause()))
	var scales []expr.Expression
	var scaleOf []int
	for i, it := range items {
		v, err := bd.bindExpr(it.node, in.sc)
		if err != nil {
			return nil, err
		}
		e, err := bd.defaultType(v)
		if err != nil {
			return nil, err
		}
		vary[i], bytea[i], json[i], jsonb[i], bpchar[i], typmod[i] = v.ds != nil, v.bytea, v.json, v.jsonb, v.bpchar, v.typmod
		if keepScales && v.ds != nil {
			if s, err := v.ds(); err == nil {
				scales, scaleOf = append(scales, s), append(scaleOf, i)
			}
		}
		outs[i], names[i] = e, it.name
		if v.untyped() && v.param == 0 && !grouped && len(sel.GetDistinctClause()) == 0 {
			if _, iv := v.intervalConst(); !iv {
				if unknown == nil {
					unknown = make([]bval, len(items))
				}
				unknown[i] = v
			}
		}
	}
	win := bd.win
	bd.win = nil
	if grouped && sel.GetHavingClause() != nil {
		h, err := bd.bindExpr(sel.GetHavingClause(), in.sc)
		if err != nil {
			return nil, err
		}
		if having, err = bd.coerce(h, booleanType(), "HAVING"); err != nil {
			return nil, err
		}
	}
	// ORDER BY keys: output columns, or expressions evaluated beside the select list.
	bd.win = win
	dc := sel.GetDistinctClause()
	distinctOn := isDistinctOn(dc)
	keys, extra, err := bd.sortKeys(sel.GetSortClause(), items, outs, names, in.sc, len(dc) > 0 && !distinctOn)
	for i, k := range keys {
		// A json or jsonb output column sorts by docSortKey's key, computed beside it.
		if err == nil && k.col < len(outs) && (json[k.col] || jsonb[k.col]) {
			var e expr.Expression
			if e, err = bd.docSortKey(bval{e: outs[k.col], json: json[k.col], jsonb: jsonb[k.col]}, outs[k.col]); err == nil {
				keys[i].col = len(outs) + len(extra)
				extra = append(extra, e)
			}
		}
	}
	var onCols []int
	if err == nil && distinctOn {
		var more []expr.Expression
		onCols, more, err = bd.distinctOnKeys(dc, sel.GetSortClause(), keys, items, append(slices.Clone(outs), extra...), names, in.sc)
		extra = append(extra, more...)
	}
	bd.win = nil
	if err != nil {
		return nil, err
	}
	if grouped {
		bd.agg = nil
		ac.built = true
		base, err = bd.aggregate(in, ac)
		if err != nil {
			return nil, err
		}
		if having != nil {
			f, err := bd.b.Filter(base.rel, having)
			if err != nil {
				return nil, fmt.Errorf("bind having: %w", err)
			}
			base = &boundRel{rel: f, sc: base.sc}
		}
	} else {
		base = in
	}
	all := append(append(slices.Clone(outs), extra...), scales...)
	// The window functions of the select list and ORDER BY: one ProjectRel over base.
	if base, all, err = bd.windowProject(base, all); err != nil {
		return nil, err
	}
	allNames := slices.Clone(names)
	for i := range extra {
		allNames = append(allNames, fmt.Sprintf("?sort%d?", i))
	}
	for range scales {
		bd.scaleSeq++
		allNames = append(allNames, fmt.Sprintf("?dscale%d?", bd.scaleSeq))
	}
	proj, err := bd.project(base, all, allNames)
	if err != nil {
		return nil, err
	}
	for i, v := range vary {
		proj.sc.cols[i].vary = proj.sc.cols[i].vary || v
		proj.sc.cols[i].bytea = proj.sc.cols[i].bytea || bytea[i]
		proj.sc.cols[i].json = proj.sc.cols[i].json || json[i]
		proj.sc.cols[i].jsonb = proj.sc.cols[i].jsonb || jsonb[i]
		// Set, not kept: a select list that passes its input through (project's identity
		// path) carries the input's kinds, and x::text of a character(n) column is x's
		// reference itself, text without the padding (bpchar.go).
		proj.sc.cols[i].bpchar = bpchar[i]
		proj.sc.cols[i].typmod = typmod[i]
	}
	for k, i := range scaleOf {
		sc := &proj.sc.cols[len(outs)+len(extra)+k]
		sc.qual, sc.hidden = subqueryQual, true
		proj.sc.cols[i].scaleName = sc.name
	}
	switch {
	case distinctOn:
		if proj, err = bd.distinctOn(proj, onCols, keys); err != nil {
			return nil, err
		}
	case len(dc) > 0:
		if proj, err = bd.distinct(proj); err != nil {
			return nil, err
		}
	}
	proj.names = names
	if len(extra) == 0 {
		proj.unknown = unknown
	}
	return bd.orderLimit(sel, proj, keys, names)
}

// bselItem is one select-list entry after * expansion.
type bselItem struct {
	node *pg.Node
	name string
}

func (bd *binder) expandTargets(list []*pg.Node, sc *scope) ([]bselItem, error) {
	var out []bselItem
	for _, n := range list {
		rt := n.GetResTarget()
		if rt == nil || len(rt.GetIndirection()) > 0 {
			return nil, unimplemented("this select list item")
		}
		if cr := rt.GetVal().GetColumnRef(); cr != nil && isStar(cr) {
			qual := ""
			switch f := cr.GetFields(); len(f) {
			case 1:
			case 2:
				qual = f[0].GetString_().GetSval()
			case 3:
				if f[0].GetString_().GetSval() != "public" {
					return nil, missingFromEntry(f[1].GetString_().GetSval())
				}
				qual = f[1].GetString_().GetSval()
			default:
				return nil, unimplementedAre("column references qualified by a catalog")
			}
			found := false
			ambiguous := sc.ambiguity()
			for i, c := range sc.cols {
				if (qual != "" && c.qual != qual) || (qual == "" && c.hidden) {
					continue
				}
				found = true
				q := c.qual
				if ambiguous(i) {
					// Two columns of one FROM item named alike ((SELECT 1, 1) t(a, a)): *
					// lists both, as PostgreSQL does; a reference by name stays ambiguous.
					q = starQual(i, c.qual)
				}
				out = append(out, bselItem{node: columnRefNode(q, c.name, i), name: c.name})
			}
			if !found && qual != "" {
				return nil, missingFromEntry(qual)
			}
			continue
		}
		name := rt.GetName()
		if name == "" {
			name = figureColname(rt.GetVal())
		}
		out = append(out, bselItem{node: rt.GetVal(), name: name})
	}
	if len(out)-hiddenTargets(list) > MaxOutputColumns {
		return nil, errTooManyTargets
	}
	return out, nil
}

// starWithoutTables is PostgreSQL's 42601 for sel, or a SELECT in it (a set operation's arm,
// a subquery, a WITH query), whose select list holds an unqualified * and which has no FROM
// item (ExpandAllTables: an outer query's columns do not count): SELECT *, SQLAlchemy's
// EXISTS (SELECT * WHERE …). It is checked on the statement before it is bound, since a
// correlated subquery is rewritten over its domain (domain.go) and an EXISTS's select list
// is never bound.
func starWithoutTables(sel *pg.SelectStmt) error {
	var err error
	var check func(s *pg.SelectStmt)
	visit := func(n *pg.Node) bool {
		check(n.GetSelectStmt())
		return err == nil
	}
	check = func(s *pg.SelectStmt) {
		if s == nil || err != nil {
			return
		}
		simple := s.GetOp() == pg.SetOperation_SETOP_NONE || s.GetOp() == pg.SetOperation_SET_OPERATION_UNDEFINED
		if simple && len(s.GetFromClause()) == 0 && len(s.GetValuesLists()) == 0 && slices.ContainsFunc(s.GetTargetList(), func(t *pg.Node) bool {
			cr := t.GetResTarget().GetVal().GetColumnRef()
			return cr != nil && len(cr.GetFields()) == 1 && isStar(cr)
		}) {
			err = refused(InvalidArgument, "42601", "SELECT * with no tables specified is not valid")
			return
		}
		check(s.GetLarg())
		check(s.GetRarg())
		walkPG(s.ProtoReflect(), visit)
	}
	check(sel)
	return err
}

// hiddenTargets counts the entries of a select list that a rewrite of the statement added
// (deferred.go's error columns "?error0?"…: a name in question marks, at no location of the
// client's text), which PostgreSQL's target list does not hold.
func hiddenTargets(list []*pg.Node) int {
	n := 0
	for _, t := range list {
		rt := t.GetResTarget()
		name := rt.GetName()
		if rt != nil && rt.GetLocation() < 0 && len(name) > 2 && name[0] == '?' && name[len(name)-1] == '?' && name != "?column?" {
			n++
		}
	}
	return n
}

// junkTargets counts the entries PostgreSQL adds to the target list of sel, whose select list
// is items, for its GROUP BY and ORDER BY expressions (findTargetlistEntrySQL99's resjunk
// entries): each distinct expression that is neither an entry of the select list (the same
// expression, wherever written) nor a reference to one (an output column's name or number)
// nor a GROUP BY entry already counted. Grouping sets count their expressions likewise. The
// select list and these are PostgreSQL's target list, at most MaxOutputColumns entries.
func junkTargets(items []bselItem, sel *pg.SelectStmt) int {
	seen := map[string]bool{}
	key := func(n *pg.Node) string {
		b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(withoutLocations(n))
		return string(b)
	}
	names := map[string]bool{}
	for _, it := range items {
		seen[key(it.node)] = true
		names[it.name] = true
	}
	n := 0
	var add func(e *pg.Node)
	add = func(e *pg.Node) {
		if gs := e.GetGroupingSet(); gs != nil {
			for _, c := range gs.GetContent() {
				add(c)
			}
			return
		}
		if c := e.GetAConst(); c != nil && c.GetIval() != nil {
			return // a select-list entry by its number
		}
		if cr := e.GetColumnRef(); cr != nil && len(cr.GetFields()) == 1 && names[cr.GetFields()[0].GetString_().GetSval()] {
			return // an output column by its name
		}
		if k := key(e); !seen[k] {
			seen[k] = true
			n++
		}
	}
	for _, g := range sel.GetGroupClause() {
		add(g)
	}
	for _, o := range sel.GetSortClause() {
		if sb := o.GetSortBy(); sb != nil {
			add(sb.GetNode())
		}
	}
	return n
}

// columnRefNode is a ColumnRef for an expanded * entry.
func columnRefNode(qual, name string, _ int) *pg.Node {
	var fields []*pg.Node
	if qual != "" {
		fields = append(fields, pg.MakeStrNode(qual))
	}
	fields = append(fields, pg.MakeStrNode(name))
	return pg.MakeColumnRefNode(fields, 0)
}

// figureColname names an unaliased select-list expression as PostgreSQL does: a column's
// name, a function's name, a cast's argument's name or its type's, else ?column?.
func figureColname(n *pg.Node) string {
	name, _ := figureColnameStrength(n)
	return name
}

// figureColnameStrength is PostgreSQL's FigureColnameInternal: the name and its strength, 2
// for a name that a cast keeps (a column's, a function's), 1 for a name a cast replaces by
// its type's (CASE's "case", a cast's type name: (interval '90 minutes')::text is text), 0
// for none (?column?). A CASE is named after its ELSE when that name is strong (CASE WHEN …
// ELSE upper(s) END is upper), "case" otherwise.
func figureColnameStrength(n *pg.Node) (string, int) {
	switch v := n.GetNode().(type) {
	case *pg.Node_TypeCast:
		if s, strength := figureColnameStrength(v.TypeCast.GetArg()); strength > 1 {
			return s, strength
		}
		if tn := v.TypeCast.GetTypeName(); tn != nil && len(tn.GetNames()) > 0 {
			names := tn.GetNames()
			return pgTypeName(names[len(names)-1].GetString_().GetSval()), 1
		}
		return "?column?", 0
	case *pg.Node_CaseExpr:
		// Its ELSE's name where that is a column's or a function's (CASE … ELSE x END is x),
		// else "case".
		if s, strength := figureColnameStrength(v.CaseExpr.GetDefresult()); strength > 1 {
			return s, strength
		}
		return "case", 1
	case *pg.Node_SubLink:
		if v.SubLink.GetSubLinkType() == pg.SubLinkType_EXPR_SUBLINK {
			// The subquery's column's name, which PostgreSQL has already figured (?column?
			// too): a cast keeps it, (SELECT 1.50)::text is ?column?.
			return subqueryColname(v.SubLink.GetSubselect().GetSelectStmt()), 2
		}
	}
	if s := figureColnameOther(n); s != "?column?" {
		return s, 2
	}
	return "?column?", 0
}

// figureColnameOther names the expressions whose names casts keep.
func figureColnameOther(n *pg.Node) string {
	switch v := n.GetNode().(type) {
	case *pg.Node_ColumnRef:
		f := v.ColumnRef.GetFields()
		if len(f) > 0 {
			if s := f[len(f)-1].GetString_(); s != nil {
				return s.GetSval()
			}
		}
	case *pg.Node_FuncCall:
		name := funcName(v.FuncCall)
		if i := strings.LastIndexByte(name, '.'); i >= 0 {
			name = name[i+1:]
		}
		return name
	case *pg.Node_CoalesceExpr:
		return "coalesce"
	case *pg.Node_AExpr:
		if v.AExpr.GetKind() == pg.A_Expr_Kind_AEXPR_NULLIF {
			return "nullif"
		}
	case *pg.Node_SqlvalueFunction:
		return sqlValueName(v.SqlvalueFunction.GetOp())
	case *pg.Node_MinMaxExpr:
		if v.MinMaxExpr.GetOp() == pg.MinMaxOp_IS_GREATEST {
			return "greatest"
		}
		return "least"
	case *pg.Node_GroupingFunc:
		return "grouping"
	case *pg.Node_AArrayExpr:
		return "array"
	case *pg.Node_RowExpr:
		return "row"
	case *pg.Node_CollateClause:
		return figureColnameOther(v.CollateClause.GetArg())
	case *pg.Node_AIndirection:
		// The last field name among the indirections, else the subscripted expression's
		// name: (regexp_match(…))[1] is regexp_match.
		name := ""
		for _, i := range v.AIndirection.GetIndirection() {
			if s := i.GetString_(); s != nil {
				name = s.GetSval()
			}
		}
		if name != "" {
			return name
		}
		return figureColnameOther(v.AIndirection.GetArg())
	case *pg.Node_SubLink:
		switch v.SubLink.GetSubLinkType() {
		case pg.SubLinkType_EXISTS_SUBLINK:
			return "exists"
		case pg.SubLinkType_ARRAY_SUBLINK:
			return "array"
		case pg.SubLinkType_EXPR_SUBLINK:
			return subqueryColname(v.SubLink.GetSubselect().GetSelectStmt())
		}
	}
	return "?column?"
}

// subqueryColname is the name of a scalar subquery's column, which PostgreSQL gives the
// subquery itself (FigureColnameInternal, EXPR_SUBLINK: the subquery's first target's name):
// its leftmost select's first item's alias or figured name. A `*` item, whose name would need
// the subquery bound, is ?column?.
func subqueryColname(sel *pg.SelectStmt) string {
	for sel.GetLarg() != nil {
		sel = sel.GetLarg()
	}
	targets := sel.GetTargetList()
	if len(targets) == 0 {
		return "?column?"
	}
	rt := targets[0].GetResTarget()
	if rt.GetName() != "" {
		return rt.GetName()
	}
	if cr := rt.GetVal().GetColumnRef(); cr != nil {
		if f := cr.GetFields(); len(f) > 0 && f[len(f)-1].GetAStar() != nil {
			return "?column?"
		}
	}
	return figureColname(rt.GetVal())
}

// pgTypeName maps the grammar's internal type names to PostgreSQL's output names.
func pgTypeName(s string) string {
	switch s {
	case "int4":
		return "int4"
	case "int8":
		return "int8"
	case "float8":
		return "float8"
	case "bool":
		return "bool"
	}
	return s
}

// nonIntegerConstant is PostgreSQL's 42601 "non-integer constant in GROUP BY" (ORDER BY,
// DISTINCT ON) for an item of those clauses that is a constant other than an integer (a
// string, a decimal, a boolean, NULL): an integer constant is a position in the select list,
// and PostgreSQL refuses the others rather than group or sort by a constant
// (findTargetlistEntrySQL92). A cast constant ('x'::text) is an expression, as there.
func nonIntegerConstant(n *pg.Node, clause string) error {
	if c := n.GetAConst(); c != nil && c.GetIval() == nil {
		return refused(InvalidArgument, "42601", "non-integer constant in %s", clause)
	}
	return nil
}

// sortKey is one bound ORDER BY key: an output column of the projection.
type sortKeyRef struct {
	col        int
	desc       bool
	nullsFirst bool
}

// sortKeys binds ORDER BY: a name of the select list (PostgreSQL's rule: output names first),
// an ordinal, or an expression (matched against the select list, else evaluated beside it and
// dropped after the sort). extra are those additional expressions.
func (bd *binder) sortKeys(sorts []*pg.Node, items []bselItem, outs []expr.Expression, names []string, in *scope, distinct bool) ([]sortKeyRef, []expr.Expression, error) {
	var keys []sortKeyRef
	var extra []expr.Expression
	for _, n := range sorts {
		sb := n.GetSortBy()
		if sb.GetSortbyDir() == pg.SortByDir_SORTBY_USING {
			return nil, nil, unimplemented("ORDER BY … USING")
		}
		k := sortKeyRef{col: -1, desc: sb.GetSortbyDir() == pg.SortByDir_SORTBY_DESC}
		switch sb.GetSortbyNulls() {
		case pg.SortByNulls_SORTBY_NULLS_FIRST:
			k.nullsFirst = true
		case pg.SortByNulls_SORTBY_NULLS_LAST:
		default:
			k.nullsFirst = k.desc // PostgreSQL: NULLs sort as larger than any value
		}
		node := sb.GetNode()
		if err := nonIntegerConstant(node, "ORDER BY"); err != nil {
			return nil, nil, err
		}
		if c := node.GetAConst(); c != nil && c.GetIval() != nil {
			pos := int(c.GetIval().GetIval())
			if pos < 1 || pos > len(outs) {
				return nil, nil, errorf(InvalidArgument, "ORDER BY position %d is not in select list", pos)
			}
			k.col = pos - 1
		} else if cr := node.GetColumnRef(); cr != nil && len(cr.GetFields()) == 1 && cr.GetFields()[0].GetString_() != nil {
			name := cr.GetFields()[0].GetString_().GetSval()
			for i, nm := range names {
				if nm != name {
					continue
				}
				if k.col >= 0 && !sameExpr(outs[k.col], outs[i]) {
					return nil, nil, quoting(InvalidArgument, "42702", "ORDER BY %q is ambiguous", name)
				}
				if k.col < 0 {
					k.col = i
				}
			}
		}
		if k.col < 0 {
			v, err := bd.bindExpr(node, in)
			if err != nil {
				return nil, nil, err
			}
			e, err := bd.defaultType(v)
			if err == nil {
				e, err = bd.docSortKey(v, e)
			}
			if err != nil {
				return nil, nil, err
			}
			for i, o := range outs {
				if sameExpr(o, e) {
					k.col = i
					break
				}
			}
			if k.col < 0 {
				if distinct {
					return nil, nil, errorf(InvalidArgument, "for SELECT DISTINCT, ORDER BY expressions must appear in select list")
				}
				k.col = len(outs) + len(extra)
				extra = append(extra, e)
			}
		}
		keys = append(keys, k)
	}
	return keys, extra, nil
}

// orderLimit adds ORDER BY (keys over br's columns; nil: bound here from the statement over
// the output names, for set operations), LIMIT/OFFSET, and drops columns past names.
func (bd *binder) orderLimit(sel *pg.SelectStmt, br *boundRel, keys []sortKeyRef, names []string) (*boundRel, error) {
	if keys == nil && len(sel.GetSortClause()) > 0 {
		outs := make([]expr.Expression, len(br.sc.cols))
		for i := range outs {
			outs[i] = br.sc.ref(i)
		}
		items := make([]bselItem, len(br.names))
		for i, n := range br.names {
			items[i] = bselItem{name: n}
		}
		var err error
		var extra []expr.Expression
		keys, extra, err = bd.sortKeys(sel.GetSortClause(), items, outs, br.names, br.sc, true)
		if err != nil {
			return nil, err
		}
		for _, k := range keys {
			if k.col < len(br.sc.cols) && br.sc.cols[k.col].json {
				return nil, errJSONOrdering
			}
		}
		if len(extra) > 0 {
			return nil, errorf(InvalidArgument, "ORDER BY on a UNION must name its output columns")
		}
	}
	if names == nil {
		names = br.names
	}
	offset, err := bd.limitValue(sel.GetLimitOffset(), "OFFSET")
	if err != nil {
		return nil, err
	}
	ties := sel.GetLimitOption() == pg.LimitOption_LIMIT_OPTION_WITH_TIES
	count, err := bd.limitValue(sel.GetLimitCount(), "LIMIT")
	if err != nil {
		return nil, err
	}
	if offset < 0 {
		offset = 0
	}
	if ties && count < 0 && hasParamRef(sel.GetLimitCount()) {
		// A count holding a parameter bound NULL: no count, as PostgreSQL's executor reads
		// it (nodeLimit), every row after the offset.
		ties = false
	}
	if ties {
		if br, err = bd.withTies(sel, br, keys, offset, count); err != nil {
			return nil, err
		}
		if count != 0 {
			offset, count = 0, -1 // withTies kept the rows
		}
	}
	rel := br.rel
	if len(keys) > 0 {
		sorts := make([]expr.SortField, len(keys))
		for i, k := range keys {
			sorts[i] = expr.SortField{Expr: br.sc.ref(k.col), Kind: sortDirection(k)}
			if k.col < len(br.sc.cols) && br.sc.cols[k.col].jsonb {
				// A set operation's jsonb column sorts by jsonb's order (docSortKey).
				e, err := bd.docSortKey(bval{e: sorts[i].Expr, jsonb: true}, sorts[i].Expr)
				if err != nil {
					return nil, err
				}
				sorts[i].Expr = e
			}
		}
		s, err := bd.b.Sort(rel, sorts...)
		if err != nil {
			return nil, fmt.Errorf("bind sort: %w", err)
		}
		rel = s
	}
	visible := make([]int32, len(names))
	for i := range visible {
		visible[i] = int32(i)
	}
	// The hidden display scales of the visible columns (keepScales) stay, after them.
	for _, c := range br.sc.cols[:len(names)] {
		if c.scaleName != "" {
			if j := slices.IndexFunc(br.sc.cols, func(s col) bool { return s.name == c.scaleName }); j >= len(names) {
				visible = append(visible, int32(j))
			}
		}
	}
	trim := len(visible) < len(br.sc.cols)
	if offset > 0 || count >= 0 || trim {
		var f *plan.FetchRel
		if trim {
			f, err = bd.b.FetchRemap(rel, offset, count, visible)
		} else {
			f, err = bd.b.Fetch(rel, offset, count)
		}
		if err != nil {
			return nil, fmt.Errorf("bind fetch: %w", err)
		}
		rel = f
	}
	out := &boundRel{rel: rel, sc: &scope{cols: make([]col, len(visible))}, names: names}
	for i, j := range visible {
		out.sc.cols[i] = br.sc.cols[j]
	}
	if len(br.unknown) >= len(names) {
		out.unknown = br.unknown[:len(names)]
	}
	return out, nil
}

// withTies keeps, of br's rows in the order of keys (columns of br), those FETCH FIRST count
// ROWS WITH TIES after OFFSET offset returns, as PostgreSQL's nodeLimit does: the rows after
// the first offset whose position is at most offset+count, and the peers (rows equal on every
// key, NULLs equal) of the last of them. Bound as row_number() and rank() OVER (ORDER BY the
// keys) and a filter (row_number > offset AND rank <= offset+count: a row past offset+count
// ranked within it shares the rank of that last row), the rows keeping br's columns. A count
// of 0 returns no row (the caller's LIMIT 0). PostgreSQL's errors: no ORDER BY (42601), a NULL
// count (2201W).
func (bd *binder) withTies(sel *pg.SelectStmt, br *boundRel, keys []sortKeyRef, offset, count int64) (*boundRel, error) {
	switch {
	case len(keys) == 0:
		return nil, &Error{Code: InvalidArgument, SQLState: "42601", Msg: "WITH TIES cannot be specified without ORDER BY clause"}
	case count < 0:
		// transformLimitClause's refusal of a NULL constant (a parameter bound NULL is no
		// count: the caller does not come here).
		return nil, &Error{Code: InvalidArgument, SQLState: "2201W", Msg: "row count cannot be null in FETCH FIRST ... WITH TIES clause"}
	case count == 0:
		return br, nil
	}
	var wfs []expr.Expression
	for _, name := range []string{"row_number", "rank"} {
		wf, err := bd.newWindow(extensions.ID{URN: URNArithmetic, Name: name}, nil)
		if err != nil {
			return nil, err
		}
		for _, k := range keys {
			e := br.sc.ref(k.col)
			if err := orderable(e, "ORDER BY"); err != nil {
				return nil, err
			}
			wf.Sorts = append(wf.Sorts, expr.SortField{Expr: e, Kind: sortDirection(k)})
		}
		wf.BoundsType, wf.LowerBound, wf.UpperBound = types.BoundsTypeRange, expr.Unbounded{}, expr.CurrentRow{}
		wfs = append(wfs, wf)
	}
	kept, err := bd.keepWhere(br, wfs, func(ws []expr.Expression) (expr.Expression, error) {
		after, err := bd.fn(URNComparison, "gt", booleanType(), ws[0], expr.NewPrimitiveLiteral(offset, false))
		if err != nil || count > math.MaxInt64-offset {
			return after, err // every row after offset
		}
		within, err := bd.fn(URNComparison, "lte", booleanType(), ws[1], expr.NewPrimitiveLiteral(offset+count, false))
		if err != nil {
			return nil, err
		}
		return bd.fn(URNBoolean, "and", booleanType(), after, within)
	})
	if err != nil {
		return nil, err
	}
	// The same columns as br's, so its scope (names, display scales, hidden keys) holds.
	return &boundRel{rel: kept.rel, sc: br.sc, names: br.names, unknown: br.unknown}, nil
}

// limitValue reads LIMIT or OFFSET: an integer constant, a parameter, ALL or NULL (-1: none),
// or an expression of constants (LIMIT 1 - 1), evaluated as PostgreSQL's executor evaluates
// it when it starts (its error is the statement's: LIMIT 1/0 is 22012). An expression holding
// a parameter takes any value at prepare time and is evaluated with the values bound.
func (bd *binder) limitValue(n *pg.Node, what string) (int64, error) {
	if n == nil {
		return -1, nil
	}
	if c := n.GetAConst(); c != nil && c.GetIsnull() {
		return -1, nil
	}
	e, err := bd.bindExpr(n, &scope{})
	if err != nil {
		return 0, err
	}
	if !e.untyped() && (familyOf(e.typ()) == famNumeric || familyOf(e.typ()) == famFloat) {
		// PostgreSQL casts a numeric or double precision LIMIT, OFFSET or FETCH count to
		// bigint (transformLimitClause's coerce_to_specific_type, an assignment cast): numeric
		// rounds half away from zero (LIMIT 2.5 is 3), double precision to even (2.5::float8
		// is 2).
		if e, err = bd.cast(e.e, i64Type()); err != nil {
			return 0, err
		}
	}
	v, err := bd.coerce(e, i64Type(), what)
	if err != nil {
		return 0, err
	}
	v, err = bd.foldIntCasts(v)
	if err != nil {
		return 0, err
	}
	if _, ok := bd.ps.placeholders[v]; ok && bd.ps.vals == nil {
		return 0, nil // prepare time: any value
	}
	if bd.holdsParameter(v) && bd.ps.vals == nil {
		return 0, nil // prepare time: any value
	}
	lit, ok := v.(*expr.PrimitiveLiteral[int64])
	if !ok {
		if _, null := v.(*expr.NullLiteral); null {
			return -1, nil
		}
		if lit, ok, err = bd.constantInt64(v); err != nil || !ok {
			if err == nil {
				err = unimplementedAre(what + " expressions")
			}
			return 0, err
		}
		if lit == nil {
			return -1, nil // NULL: no limit
		}
	}
	if lit.Value < 0 {
		if what == "LIMIT" {
			return 0, ErrNegativeLimit
		}
		return 0, &Error{Code: InvalidArgument, SQLState: "2201X", Msg: "OFFSET must not be negative"}
	}
	return lit.Value, nil
}

// constantInt64 evaluates v, a bigint expression of constants, as a literal of its value (nil
// for NULL); ok is false when v is no such expression (constantEvaluator), and err is the
// evaluation's data exception.
func (bd *binder) constantInt64(v expr.Expression) (*expr.PrimitiveLiteral[int64], bool, error) {
	a, ok, err := bd.evalConstantErr(v)
	if err != nil || !ok {
		return nil, false, err
	}
	defer a.Release()
	x, isInt := a.(*array.Int64)
	if !isInt || a.Len() != 1 {
		return nil, false, nil
	}
	if x.IsNull(0) {
		return nil, true, nil
	}
	return expr.NewPrimitiveLiteral(x.Value(0), false).(*expr.PrimitiveLiteral[int64]), true, nil
}

// foldIntCasts folds the casts between integer types around an integer literal or a
// parameter's stand-in, as a LIMIT or OFFSET of a parameter cast holds them (`LIMIT ?::int`
// under JDBC, `($1::bigint)::int` once a bound int64 declares the parameter): the literal as a
// bigint literal, refused with PostgreSQL's 22003 (int84, int82: "integer out of range") when a
// cast's type cannot hold it; the stand-in itself at prepare time. Any other expression is
// returned as it is.
func (bd *binder) foldIntCasts(e expr.Expression) (expr.Expression, error) {
	c, ok := e.(*expr.Cast)
	if !ok || familyOf(c.Type) != famInt || familyOf(c.Input.GetType()) != famInt {
		return e, nil
	}
	in, err := bd.foldIntCasts(c.Input)
	if err != nil {
		return nil, err
	}
	if _, ph := bd.ps.placeholders[in]; ph && bd.ps.vals == nil {
		return in, nil
	}
	lit, ok := foldNumber(in, i64Type()).(*expr.PrimitiveLiteral[int64])
	if !ok {
		return e, nil
	}
	if _, err := intLiteral(lit.Value, c.Type, false); err != nil {
		return nil, err
	}
	return lit, nil
}

// fromItem is the bound FROM clause; read is set when it is one routed table read whose
// WHERE has not been bound yet.
type fromItem struct {
	*boundRel
	read *plan.NamedTableReadRel
	def  routing.TableDef
}

func (bd *binder) from(items []*pg.Node) (*fromItem, error) {
	if err := checkFromNames(items); err != nil {
		return nil, err
	}
	switch len(items) {
	case 0:
		return nil, nil
	case 1:
		return bd.fromOne(items[0])
	}
	return bd.fromList(items)
}

// placeRead labels read r with l unless it has a label.
func (bd *binder) placeRead(r *plan.NamedTableReadRel, l readLabel) {
	if bd.readPlace == nil {
		bd.readPlace = map[*plan.NamedTableReadRel]readLabel{}
	}
	if _, ok := bd.readPlace[r]; !ok {
		bd.readPlace[r] = l
	}
}

// placeReads labels the reads bound since the first'th as read in the derived table or WITH
// query alias, but those labelled already (by their own alias, or a nearer derived table's).
func (bd *binder) placeReads(first int, alias string) {
	for _, r := range bd.reads[first:] {
		bd.placeRead(r, readLabel{how: "in", place: alias})
	}
}

// errTooManyTargets is PostgreSQL's refusal of a select list past MaxOutputColumns entries,
// its MaxTupleAttributeNumber (transformTargetList's 54011), before any entry is bound and
// before the memory bound of BindOptions.MaxOutputColumns (20,000 constants were 53200).
var errTooManyTargets = &Error{Code: InvalidArgument, SQLState: "54011", Msg: "target lists can have at most 1664 entries"}

// fromOne binds one FROM item.
func (bd *binder) fromOne(item *pg.Node) (*fromItem, error) {
	switch n := item.GetNode().(type) {
	case *pg.Node_RangeVar:
		rv := n.RangeVar
		name := rv.GetRelname()
		alias, colnames := name, []*pg.Node(nil)
		if al := rv.GetAlias(); al != nil {
			alias, colnames = al.GetAliasname(), al.GetColnames()
		}
		if rv.GetSchemaname() == "" && rv.GetCatalogname() == "" {
			if d, ok := bd.domains[name]; ok {
				return &fromItem{boundRel: d}, nil
			}
			if wt, ok := bd.workTables[name]; ok {
				return &fromItem{boundRel: requalify(wt, alias, colnames)}, checkRename(wt, colnames)
			}
			if cte := bd.cte(name); cte != nil && bd.recursive[cte] {
				return bd.bindRecursive(cte, alias, colnames)
			}
			if cte := bd.cte(name); cte != nil {
				if bd.active[name] {
					return nil, unimplementedAre("recursive WITH queries")
				}
				bd.active[name] = true
				sel := cte.GetCtequery().GetSelectStmt()
				if sel == nil {
					return nil, unimplemented("a WITH query that is not a SELECT")
				}
				// The WITH query binds in the scope of its definition, without later CTEs.
				first := len(bd.reads)
				br, err := bd.bindSelect(sel)
				delete(bd.active, name)
				if err != nil {
					return nil, err
				}
				bd.placeReads(first, alias)
				if cn := cte.GetAliascolnames(); len(cn) > 0 {
					if err := rename(br, cn); err != nil {
						return nil, err
					}
				}
				return &fromItem{boundRel: requalify(br, alias, colnames)}, checkRename(br, colnames)
			}
		}
		if rv.GetCatalogname() != "" || (rv.GetSchemaname() != "" && rv.GetSchemaname() != "public") {
			return nil, unimplementedAre("table names qualified by a catalog or a schema other than public")
		}
		def, err := lookupSQLTable(bd.cat, name)
		if err != nil {
			return nil, err
		}
		read := bd.b.NamedScan([]string{def.Name}, baseSchema(def))
		bd.reads = append(bd.reads, read)
		if rv.GetAlias() != nil {
			bd.placeRead(read, readLabel{how: "as", place: alias})
		}
		sc := &scope{}
		for i, c := range columnNames(def) {
			sc.cols = append(sc.cols, col{name: c, qual: alias, typ: baseSchema(def).Struct.Types[i], json: c == ValueColumn && def.JSONValues})
		}
		br := &boundRel{rel: read, sc: sc, names: columnNames(def)}
		if len(colnames) > 0 {
			if err := rename(br, colnames); err != nil {
				return nil, err
			}
		}
		return &fromItem{boundRel: br, read: read, def: def}, nil
	case *pg.Node_RangeSubselect:
		rs := n.RangeSubselect
		sel := rs.GetSubquery().GetSelectStmt()
		if sel == nil {
			return nil, unimplemented("this subquery")
		}
		bd.level++
		first := len(bd.reads)
		br, err := bd.bindSelect(sel)
		bd.level--
		if err == nil && rs.GetAlias() != nil {
			bd.placeReads(first, rs.GetAlias().GetAliasname())
		}
		if err != nil {
			var pe *Error
			if rs.GetLateral() && errors.As(err, &pe) && (pe.SQLState == "42703" || pe.SQLState == "42P01") {
				// LATERAL after a FROM item or on a join's right side is bound by
				// fromList and joinExpr (join.go); here it could only reference an
				// outer query.
				return nil, unimplementedAre("LATERAL subqueries first in FROM or on a join's left side")
			}
			return nil, err
		}
		alias, colnames := "", []*pg.Node(nil)
		if al := rs.GetAlias(); al != nil {
			alias, colnames = al.GetAliasname(), al.GetColnames()
		}
		if err := checkRename(br, colnames); err != nil {
			return nil, err
		}
		return &fromItem{boundRel: requalify(br, alias, colnames)}, nil
	case *pg.Node_JoinExpr:
		return bd.joinExpr(n.JoinExpr)
	case *pg.Node_RangeFunction:
		return bd.rangeFunction(n.RangeFunction)
	case *pg.Node_RangeTableFunc:
		return nil, unimplementedAre("table functions")
	case *pg.Node_RangeTableSample:
		return nil, unimplemented("TABLESAMPLE")
	}
	return nil, unimplemented("this FROM item")
}

func (bd *binder) cte(name string) *pg.CommonTableExpr {
	for i := len(bd.ctes) - 1; i >= 0; i-- {
		if c, ok := bd.ctes[i][name]; ok {
			return c
		}
	}
	return nil
}

// rename applies column aliases to br's first columns.
func rename(br *boundRel, colnames []*pg.Node) error {
	if len(colnames) > len(br.sc.cols) {
		return errorf(InvalidArgument, "too many column aliases: %d for %d columns", len(colnames), len(br.sc.cols))
	}
	for i, cn := range colnames {
		br.sc.cols[i].name = cn.GetString_().GetSval()
		if i < len(br.names) {
			br.names[i] = br.sc.cols[i].name
		}
	}
	return nil
}

func checkRename(br *boundRel, colnames []*pg.Node) error {
	n := len(br.sc.cols)
	if len(br.names) > 0 {
		n = min(n, len(br.names)) // not the hidden display scales (keepScales)
	}
	if len(colnames) > n {
		return errorf(InvalidArgument, "too many column aliases: %d for %d columns", len(colnames), n)
	}
	return nil
}

// requalify gives a subquery's columns their FROM alias (and column aliases).
func requalify(br *boundRel, alias string, colnames []*pg.Node) *boundRel {
	out := &boundRel{rel: br.rel, sc: &scope{}, names: slices.Clone(br.names)}
	for i, c := range br.sc.cols {
		if !c.hidden || c.qual != subqueryQual { // a display scale's stays unnamed (keepScales)
			c.qual = alias
		}
		if i < len(colnames) {
			c.name = colnames[i].GetString_().GetSval()
			out.names[i] = c.name
		}
		out.sc.cols = append(out.sc.cols, c)
	}
	return out
}

// where binds the WHERE clause above the FROM item. Over a table read, the routed conjuncts
// are found anywhere in the conjunction and placed first, normalised; the rest are residual.
func (bd *binder) where(from *fromItem, w *pg.Node) (*fromItem, error) {
	var conj []expr.Expression
	if w != nil {
		for _, c := range splitAnd(w) {
			e, err := bd.bindExpr(c, from.sc)
			if err != nil {
				return nil, err
			}
			be, err := bd.coerce(e, booleanType(), "WHERE")
			if err != nil {
				return nil, err
			}
			conj = append(conj, splitConj(be)...)
		}
	}
	if len(conj) == 0 {
		return from, nil
	}
	cond := conj[0]
	if len(conj) > 1 {
		args := make([]types.FuncArg, len(conj))
		for i, c := range conj {
			args[i] = c
		}
		f, err := bd.fn(URNBoolean, "and", booleanType(), args...)
		if err != nil {
			return nil, err
		}
		cond = f
	}
	f, err := bd.b.Filter(from.rel, cond)
	if err != nil {
		return nil, fmt.Errorf("bind where: %w", err)
	}
	return &fromItem{boundRel: &boundRel{rel: f, sc: from.sc, names: from.names}}, nil
}

// distinctOf is the distinct rows of es over br, named names.
func (bd *binder) distinctOf(br *boundRel, es []expr.Expression, names []string) (*boundRel, error) {
	pr, err := bd.project(br, es, names)
	if err != nil {
		return nil, err
	}
	return bd.distinct(pr)
}

// filtered is br under the condition cond.
func (bd *binder) filtered(br *boundRel, cond expr.Expression) (*boundRel, error) {
	f, err := bd.b.Filter(br.rel, cond)
	if err != nil {
		return nil, fmt.Errorf("bind filter: %w", err)
	}
	return &boundRel{rel: f, sc: br.sc, names: br.names}, nil
}

// splitAnd flattens nested ANDs of a WHERE clause. The conjuncts after a FALSE constant are
// dropped, as PostgreSQL's planner drops them (simplify_and_arguments stops at the first
// operand that folds to false, before folding the next), so a constant of theirs that would
// fail (1/0 = 1) is never folded: WHERE false AND 1/0 = 1 selects nothing, without an error.
func splitAnd(n *pg.Node) []*pg.Node {
	out := appendConjuncts(nil, n)
	for i, c := range out {
		if isFalseConst(c) {
			return out[:i+1]
		}
	}
	return out
}

func appendConjuncts(out []*pg.Node, n *pg.Node) []*pg.Node {
	if b := n.GetBoolExpr(); b != nil && b.GetBoolop() == pg.BoolExprType_AND_EXPR {
		for _, a := range b.GetArgs() {
			out = appendConjuncts(out, a)
		}
		return out
	}
	return append(out, n)
}

// isFalseConst reports whether n is the constant FALSE.
func isFalseConst(n *pg.Node) bool {
	c := n.GetAConst()
	return c != nil && c.GetBoolval() != nil && !c.GetBoolval().GetBoolval()
}

// modTypeName names a value's type t as PostgreSQL's messages do (format_type_be: the type
// without its modifier): character for a char(n) or bpchar value (bpchar, bval.bpchar),
// character varying for a varchar one (varchar, or typmod naming it), else typeName's.
func modTypeName(t types.Type, bpchar int32, varchar bool, typmod string) string {
	switch {
	case bpchar != 0:
		return "character"
	case varchar || strings.HasPrefix(typmod, "character varying"):
		return "character varying"
	}
	return typeName(t)
}

// typeName spells a Substrait type for messages as PostgreSQL names the type it stands for
// (integer, double precision, text, bytea, timestamp with time zone…); a type without a
// PostgreSQL counterpart keeps Substrait's name.
func typeName(t types.Type) string {
	switch v := t.(type) {
	case nil:
		return "unknown"
	case *types.BooleanType:
		return "boolean"
	case *types.Int8Type, *types.Int16Type:
		return "smallint"
	case *types.Int32Type:
		return "integer"
	case *types.Int64Type:
		return "bigint"
	case *types.Float32Type:
		return "real"
	case *types.Float64Type:
		return "double precision"
	case *types.DecimalType:
		return "numeric"
	case *types.StringType, *types.VarCharType, *types.FixedCharType:
		return "text"
	case *types.BinaryType, *types.FixedBinaryType:
		return "bytea"
	case *types.DateType:
		return "date"
	case *types.PrecisionTimeType, *types.TimeType:
		return "time without time zone"
	case *types.PrecisionTimestampTzType, *types.TimestampTzType:
		return "timestamp with time zone"
	case *types.PrecisionTimestampType, *types.TimestampType:
		return "timestamp without time zone"
	case *types.IntervalDayType, *types.IntervalYearType, *types.IntervalCompoundType, types.IntervalCompoundType:
		return "interval"
	case *types.ListType:
		return typeName(v.Type) + "[]"
	}
	return t.WithNullability(types.NullabilityRequired).String()
}

// sameType compares types ignoring nullability; a missing type (nil: a client plan's
// expression whose type it leaves out) is the same as none (trial 33 G4).
func sameType(a, b types.Type) bool {
	if a == nil || b == nil {
		return false
	}
	return a.WithNullability(types.NullabilityNullable).Equals(b.WithNullability(types.NullabilityNullable))
}

// ArrowSchema returns the Arrow schema of a bound relation's output: names, the Arrow types
// arrow-go's compute/exprs maps the Substrait types to, and their nullability.
func arrowSchema(sc *scope, names []string) (*arrow.Schema, error) {
	ext := exprs.NewExtensionSetDefault(expr.NewEmptyExtensionRegistry(collection()))
	fields := make([]arrow.Field, len(sc.cols))
	for i, c := range sc.cols {
		t, nullable, err := exprs.FromSubstraitType(c.typ, ext)
		if isIntervalType(c.typ) {
			// arrow-go v18.8.0 does not map interval_compound: the executor's
			// month_day_nano_interval (scan/ops interval.go).
			t, nullable, err = arrow.FixedWidthTypes.MonthDayNanoInterval, true, nil
		}
		if l, ok := c.typ.(*types.ListType); ok && isIntervalType(l.Type) {
			// An array of intervals (percentile_cont(ARRAY[…]) of intervals).
			t, nullable, err = arrow.ListOf(arrow.FixedWidthTypes.MonthDayNanoInterval), true, nil
		}
		if err != nil {
			return nil, fmt.Errorf("substrait: output column %d: %w", i, err)
		}
		fields[i] = arrow.Field{Name: names[i], Type: t, Nullable: nullable}
	}
	return arrow.NewSchema(fields, nil), nil
}
