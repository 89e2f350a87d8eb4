package substrait

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/flightsrv/flightsrv/routing"
)

// paramKind is the type a parameter takes from the position where it is used.
type paramKind uint8

const (
	paramPartition paramKind = iota + 1 // compared with the partition column: utf8
	paramTimestamp                      // a timestamp bound: timestamp[ns, tz=UTC]
	paramLimit                          // LIMIT: int64
)

func (k paramKind) String() string {
	switch k {
	case paramPartition:
		return "utf8 (partition column value)"
	case paramTimestamp:
		return "a timestamp (timestamp bound, any unit)"
	case paramLimit:
		return "int64 (LIMIT)"
	}
	return "unknown"
}

// template is a statement analysed once at prepare time: everything but parameter values.
type template struct {
	def     routing.TableDef
	atoms   []atom // the accepted conjuncts, in order
	columns []OutputColumn
	agg     *Aggregate
	group   *TimeBin // GROUP BY a time bin (groupby.go)
	order   Order
	limit   *operand // nil: no LIMIT
	params  []paramKind
	explain bool
}

// sqlAnalyzer turns one parsed SELECT into a template.
type sqlAnalyzer struct {
	cat       Catalog
	def       routing.TableDef
	qualifier string // the name that may qualify columns: the alias, else the table name
	params    map[int]paramKind
}

// analyzeSQL parses sql with the PostgreSQL grammar (after rewriting `?` placeholders) and
// analyses it against the catalog. Errors are *Error values.
func analyzeSQL(sql string, cat Catalog) (*template, error) {
	// The C parser stops at a NUL byte: refuse it rather than run a truncated statement.
	if strings.IndexByte(sql, 0) >= 0 {
		return nil, ErrNulInQuery
	}
	if len(sql) > MaxSQLBytes {
		return nil, ErrQueryTooLong
	}
	if !utf8.ValidString(sql) {
		return nil, ErrInvalidUTF8Query
	}
	res, err := parseStatement(sql)
	if err != nil {
		return nil, err
	}
	switch n := len(res.GetStmts()); {
	case n == 0:
		return nil, ErrEmptyQuery
	case n > 1:
		return nil, unimplementedAre("multiple statements")
	}
	node := res.GetStmts()[0].GetStmt()
	explain := false
	if ex := node.GetExplainStmt(); ex != nil {
		if len(ex.GetOptions()) > 0 {
			return nil, unimplementedAre("EXPLAIN options")
		}
		explain, node = true, ex.GetQuery()
	}
	sel := node.GetSelectStmt()
	if sel == nil {
		return nil, unimplemented(statementName(node))
	}
	a := &sqlAnalyzer{cat: cat, params: map[int]paramKind{}}
	t, err := a.selectStmt(sel)
	if err != nil {
		return nil, err
	}
	t.explain = explain
	return t, nil
}

// statementName names a non-SELECT statement for an Unimplemented error.
func statementName(n *pg.Node) string {
	switch n.GetNode().(type) {
	case *pg.Node_InsertStmt:
		return "INSERT"
	case *pg.Node_UpdateStmt:
		return "UPDATE"
	case *pg.Node_DeleteStmt:
		return "DELETE"
	case *pg.Node_MergeStmt:
		return "MERGE"
	case *pg.Node_CopyStmt:
		return "COPY"
	case *pg.Node_CreateStmt, *pg.Node_CreateTableAsStmt:
		return "CREATE TABLE"
	case *pg.Node_DropStmt:
		return "DROP"
	case *pg.Node_AlterTableStmt:
		return "ALTER TABLE"
	case *pg.Node_TruncateStmt:
		return "TRUNCATE"
	case *pg.Node_TransactionStmt:
		return "transaction control (BEGIN, COMMIT, ROLLBACK)"
	case *pg.Node_VariableSetStmt:
		return "SET"
	case *pg.Node_VariableShowStmt:
		return "SHOW"
	case *pg.Node_GrantStmt:
		return "GRANT"
	case *pg.Node_ExplainStmt:
		return "nested EXPLAIN"
	}
	name := strings.TrimPrefix(fmt.Sprintf("%T", n.GetNode()), "*pg_query.Node_")
	return "statement " + name
}

func (a *sqlAnalyzer) selectStmt(sel *pg.SelectStmt) (*template, error) {
	switch {
	case sel.GetWithClause() != nil:
		return nil, unimplementedAre("WITH (common table expressions)")
	case sel.GetOp() != pg.SetOperation_SETOP_NONE && sel.GetOp() != pg.SetOperation_SET_OPERATION_UNDEFINED:
		return nil, unimplemented(strings.TrimPrefix(sel.GetOp().String(), "SETOP_"))
	case len(sel.GetValuesLists()) > 0:
		return nil, unimplemented("VALUES")
	case sel.GetIntoClause() != nil:
		return nil, unimplemented("SELECT INTO")
	case len(sel.GetLockingClause()) > 0:
		return nil, unimplemented("FOR UPDATE / FOR SHARE")
	}
	if err := a.from(sel.GetFromClause()); err != nil {
		return nil, err
	}
	switch {
	case len(sel.GetDistinctClause()) > 0:
		return nil, unimplemented("DISTINCT")
	case len(sel.GetWindowClause()) > 0:
		return nil, unimplemented("WINDOW")
	case len(sel.GetGroupClause()) > 0 || sel.GetGroupDistinct():
		return a.groupedSelect(sel)
	case sel.GetHavingClause() != nil:
		return nil, unimplemented("HAVING")
	case sel.GetLimitOffset() != nil && !isZero(sel.GetLimitOffset()):
		// OFFSET 0 (sent by paginating tools for the first page) is a no-op.
		return nil, unimplemented("OFFSET")
	case sel.GetLimitOption() == pg.LimitOption_LIMIT_OPTION_WITH_TIES:
		return nil, unimplemented("FETCH FIRST … WITH TIES")
	}
	t := &template{def: a.def}
	if err := a.targets(sel.GetTargetList(), t); err != nil {
		return nil, err
	}
	if err := a.orderBy(sel.GetSortClause(), t); err != nil {
		return nil, err
	}
	if err := a.limit(sel.GetLimitCount(), t); err != nil {
		return nil, err
	}
	return a.routedTail(sel, t)
}

// routedTail reads the routed predicate of the WHERE clause into t and lists its parameters.
func (a *sqlAnalyzer) routedTail(sel *pg.SelectStmt, t *template) (*template, error) {
	c := &collector{}
	if err := a.where(sel.GetWhereClause(), c); err != nil {
		return nil, err
	}
	if err := c.finish(); err != nil {
		return nil, err
	}
	t.atoms = c.atoms
	params, err := a.paramList()
	if err != nil {
		return nil, err
	}
	t.params = params
	return t, nil
}

// from resolves the single routed table of the FROM clause.
func (a *sqlAnalyzer) from(items []*pg.Node) error {
	switch len(items) {
	case 0:
		return unimplemented("SELECT without FROM")
	case 1:
	default:
		return unimplemented("JOIN")
	}
	switch n := items[0].GetNode().(type) {
	case *pg.Node_RangeVar:
		rv := n.RangeVar
		// Tables are listed under the one schema "public" of the unnamed catalog (the Flight
		// SQL layer's GetTables), so tools that qualify names generate public.<table>.
		if rv.GetCatalogname() != "" || (rv.GetSchemaname() != "" && rv.GetSchemaname() != "public") {
			return unimplementedAre("table names qualified by a catalog or a schema other than public")
		}
		def, err := lookupTable(a.cat, rv.GetRelname())
		if err != nil {
			return err
		}
		a.def, a.qualifier = def, rv.GetRelname()
		if al := rv.GetAlias(); al != nil {
			if len(al.GetColnames()) > 0 {
				return unimplementedAre("column aliases in FROM")
			}
			a.qualifier = al.GetAliasname()
		}
		return nil
	case *pg.Node_JoinExpr:
		return unimplemented("JOIN")
	case *pg.Node_RangeSubselect:
		return unimplementedAre("subqueries")
	case *pg.Node_RangeFunction, *pg.Node_RangeTableFunc:
		return unimplementedAre("table functions")
	case *pg.Node_RangeTableSample:
		return unimplemented("TABLESAMPLE")
	}
	return unimplemented("this FROM item")
}

// columnRef resolves a column reference (optionally qualified by the table name or alias)
// to a column index of TableSchema. Unknown columns are InvalidArgument (PostgreSQL's
// undefined_column is a query error, not a missing resource).
func (a *sqlAnalyzer) columnRef(cr *pg.ColumnRef) (int, error) {
	fields := cr.GetFields()
	var name string
	switch len(fields) {
	case 1:
		name = fields[0].GetString_().GetSval()
	case 2:
		q := fields[0].GetString_().GetSval()
		if !strings.EqualFold(q, a.qualifier) {
			return -1, missingFromEntry(q)
		}
		name = fields[1].GetString_().GetSval()
	default:
		return -1, unimplementedAre("qualified column references with a schema")
	}
	if name == "" { // A_Star
		return -1, unimplemented("* in this position")
	}
	idx, ok := columnIndex(a.def, name)
	if !ok {
		return -1, undefinedColumn(name)
	}
	return idx, nil
}

// isStar reports whether a column reference ends in * (SELECT *, SELECT m.*).
func isStar(cr *pg.ColumnRef) bool {
	f := cr.GetFields()
	return len(f) > 0 && f[len(f)-1].GetAStar() != nil
}

// funcName returns the lower-case name of a function call; a pg_catalog qualifier is
// dropped, any other qualifier is kept (and later refused as an unknown function).
func funcName(fc *pg.FuncCall) string {
	var parts []string
	for _, n := range fc.GetFuncname() {
		parts = append(parts, n.GetString_().GetSval())
	}
	if len(parts) == 2 && parts[0] == "pg_catalog" {
		parts = parts[1:]
	}
	return strings.ToLower(strings.Join(parts, "."))
}

// targets analyses the select list: columns (including * expansion) or ungrouped
// aggregates, never both.
func (a *sqlAnalyzer) targets(list []*pg.Node, t *template) error {
	if len(list) == 0 {
		return unimplemented("an empty select list")
	}
	names := columnNames(a.def)
	var measures []Measure
	firstColumn := ""
	for _, n := range list {
		rt := n.GetResTarget()
		if rt == nil || len(rt.GetIndirection()) > 0 {
			return unimplemented("this select list item")
		}
		switch v := rt.GetVal().GetNode().(type) {
		case *pg.Node_ColumnRef:
			if isStar(v.ColumnRef) {
				if f := v.ColumnRef.GetFields(); len(f) == 2 {
					if q := f[0].GetString_().GetSval(); !strings.EqualFold(q, a.qualifier) {
						return missingFromEntry(q)
					}
				} else if len(f) > 2 {
					return unimplementedAre("qualified column references with a schema")
				}
				for _, c := range names {
					t.columns = append(t.columns, OutputColumn{Column: c, Name: c})
				}
				if firstColumn == "" {
					firstColumn = names[0]
				}
				continue
			}
			idx, err := a.columnRef(v.ColumnRef)
			if err != nil {
				return err
			}
			name := rt.GetName()
			if name == "" {
				name = names[idx]
			}
			t.columns = append(t.columns, OutputColumn{Column: names[idx], Name: name})
			if firstColumn == "" {
				firstColumn = names[idx]
			}
		case *pg.Node_FuncCall:
			m, err := a.measure(v.FuncCall, rt.GetName())
			if err != nil {
				return err
			}
			measures = append(measures, m)
		case *pg.Node_ParamRef:
			return unimplementedAre("parameters in the select list")
		case *pg.Node_TypeCast:
			if v.TypeCast.GetArg().GetParamRef() != nil {
				return unimplementedAre("parameters in the select list")
			}
			return unimplementedAre("expressions in the select list")
		case *pg.Node_SubLink:
			return unimplementedAre("subqueries")
		default:
			return unimplementedAre("expressions in the select list")
		}
	}
	if len(measures) > 0 {
		if firstColumn != "" {
			return errorf(InvalidArgument, "column %q must appear in the GROUP BY clause or be used in an aggregate function", firstColumn)
		}
		t.columns = nil
		t.agg = &Aggregate{Measures: measures}
	}
	return nil
}

// measure recognises COUNT(*), COUNT(column), MIN(timestamp) and MAX(timestamp).
func (a *sqlAnalyzer) measure(fc *pg.FuncCall, alias string) (Measure, error) {
	name := funcName(fc)
	if fc.GetOver() != nil {
		return Measure{}, unimplementedAre("window functions")
	}
	var m Measure
	switch name {
	case "count":
		m.Func = Count
	case "min":
		m.Func = Min
	case "max":
		m.Func = Max
	case "date_trunc":
		return Measure{}, unimplemented("date_trunc outside GROUP BY")
	default:
		return Measure{}, quoting(Unimplemented, "42883", "function %s is not supported", name)
	}
	upper := strings.ToUpper(name)
	switch {
	case fc.GetAggDistinct():
		return Measure{}, unimplemented(upper + "(DISTINCT …)")
	case fc.GetAggFilter() != nil:
		return Measure{}, unimplemented("aggregate FILTER")
	case len(fc.GetAggOrder()) > 0 || fc.GetAggWithinGroup():
		return Measure{}, unimplementedAre("ordered aggregates")
	case fc.GetFuncVariadic():
		return Measure{}, unimplemented("VARIADIC")
	}
	m.Name = alias
	if m.Name == "" {
		m.Name = name
	}
	args := fc.GetArgs()
	if fc.GetAggStar() {
		if m.Func != Count {
			return Measure{}, errorf(InvalidArgument, "%s(*) is not a valid aggregate", upper)
		}
		m.Func = CountStar
		return m, nil
	}
	if len(args) != 1 {
		return Measure{}, errorf(InvalidArgument, "%s takes exactly one argument", upper)
	}
	switch arg := args[0].GetNode().(type) {
	case *pg.Node_ColumnRef:
		if isStar(arg.ColumnRef) {
			return Measure{}, unimplemented(upper + "(table.*)")
		}
		idx, err := a.columnRef(arg.ColumnRef)
		if err != nil {
			return Measure{}, err
		}
		m.Column = columnNames(a.def)[idx]
		if m.Func != Count && idx != timestampField {
			return Measure{}, unimplemented(upper + "(" + m.Column + ")")
		}
		return m, nil
	case *pg.Node_AConst:
		// COUNT(1): a non-null constant is counted on every row, exactly COUNT(*).
		if m.Func == Count && !arg.AConst.GetIsnull() && arg.AConst.GetIval() != nil {
			m.Func = CountStar
			return m, nil
		}
	}
	return Measure{}, unimplemented(upper + " of an expression")
}

// orderBy accepts ORDER BY timestamp [ASC|DESC] [, id in the same direction]. Names resolve
// first against output names, then against table columns (PostgreSQL's rule); positions
// refer to select-list items.
func (a *sqlAnalyzer) orderBy(sorts []*pg.Node, t *template) error {
	if len(sorts) == 0 {
		return nil
	}
	if t.agg != nil {
		return unimplemented("ORDER BY with aggregates")
	}
	var cols []int
	desc := make([]bool, 0, len(sorts))
	for _, n := range sorts {
		sb := n.GetSortBy()
		if sb.GetSortbyDir() == pg.SortByDir_SORTBY_USING {
			return unimplemented("ORDER BY … USING")
		}
		idx, err := a.sortColumn(sb.GetNode(), t)
		if err != nil {
			return err
		}
		cols = append(cols, idx)
		desc = append(desc, sb.GetSortbyDir() == pg.SortByDir_SORTBY_DESC)
	}
	ok := cols[0] == timestampField &&
		(len(cols) == 1 || (len(cols) == 2 && cols[1] == idField && desc[1] == desc[0]))
	if !ok {
		return unimplemented("ORDER BY other than timestamp [, id] in one direction")
	}
	t.order = OrderAsc
	if desc[0] {
		t.order = OrderDesc
	}
	return nil
}

func (a *sqlAnalyzer) sortColumn(n *pg.Node, t *template) (int, error) {
	switch v := n.GetNode().(type) {
	case *pg.Node_AConst:
		if v.AConst.GetIval() == nil {
			return -1, unimplementedAre("ORDER BY expressions")
		}
		pos := int(v.AConst.GetIval().GetIval())
		if pos < 1 || pos > len(t.columns) {
			return -1, errorf(InvalidArgument, "ORDER BY position %d is not in select list", pos)
		}
		idx, _ := columnIndex(a.def, t.columns[pos-1].Column)
		return idx, nil
	case *pg.Node_ColumnRef:
		if f := v.ColumnRef.GetFields(); len(f) == 1 {
			name := f[0].GetString_().GetSval()
			found := -1
			for _, c := range t.columns {
				if c.Name != name {
					continue
				}
				idx, _ := columnIndex(a.def, c.Column)
				if found >= 0 && found != idx {
					return -1, errorf(InvalidArgument, "ORDER BY %q is ambiguous", name)
				}
				found = idx
			}
			if found >= 0 {
				return found, nil
			}
		}
		return a.columnRef(v.ColumnRef)
	}
	return -1, unimplementedAre("ORDER BY expressions")
}

// limit accepts LIMIT n, LIMIT ALL / NULL (no limit), FETCH FIRST n ROWS ONLY and LIMIT $n.
func (a *sqlAnalyzer) limit(n *pg.Node, t *template) error {
	if n == nil {
		return nil
	}
	if tc := n.GetTypeCast(); tc != nil {
		if typeFamily(tc.GetTypeName()) != "int" {
			return unimplementedAre("LIMIT expressions")
		}
		n = tc.GetArg()
	}
	switch v := n.GetNode().(type) {
	case *pg.Node_ParamRef:
		p, err := a.param(v.ParamRef, paramLimit)
		if err != nil {
			return err
		}
		t.limit = &operand{param: p}
		return nil
	case *pg.Node_AConst:
		c := v.AConst
		switch {
		case c.GetIsnull():
			return nil
		case c.GetIval() != nil:
			if c.GetIval().GetIval() < 0 {
				return ErrNegativeLimit
			}
			t.limit = &operand{n: int64(c.GetIval().GetIval())}
			return nil
		case c.GetFval() != nil:
			// Integers beyond int32 arrive as Float nodes.
			v, err := strconv.ParseInt(c.GetFval().GetFval(), 10, 64)
			if err != nil {
				return errorf(InvalidArgument, "LIMIT must be an integer in the int64 range")
			}
			if v < 0 {
				return ErrNegativeLimit
			}
			t.limit = &operand{n: v}
			return nil
		}
		return errorf(InvalidArgument, "LIMIT must be an integer in the int64 range")
	case *pg.Node_AExpr:
		if v.AExpr.GetKind() == pg.A_Expr_Kind_AEXPR_OP && v.AExpr.GetLexpr() == nil {
			if c := v.AExpr.GetRexpr().GetAConst(); c != nil && len(v.AExpr.GetName()) == 1 &&
				v.AExpr.GetName()[0].GetString_().GetSval() == "-" {
				return ErrNegativeLimit
			}
		}
	}
	return unimplementedAre("LIMIT expressions")
}

// param records the use of $n with the type its position gives it.
func (a *sqlAnalyzer) param(p *pg.ParamRef, kind paramKind) (int, error) {
	n := int(p.GetNumber())
	if n < 1 {
		return 0, errorf(InvalidArgument, "parameter $%d is invalid: parameters are numbered from $1", n)
	}
	if prev, ok := a.params[n]; ok && prev != kind {
		return 0, errorf(InvalidArgument, "parameter $%d is used both as %s and as %s", n, prev, kind)
	}
	a.params[n] = kind
	return n, nil
}

// paramList returns the parameter kinds by position; numbering must be consecutive from $1
// (pulpitum-reference.md §5.4).
func (a *sqlAnalyzer) paramList() ([]paramKind, error) {
	out := make([]paramKind, len(a.params))
	for i := range out {
		k, ok := a.params[i+1]
		if !ok {
			return nil, errorf(InvalidArgument, "parameters must be numbered consecutively from $1 ($%d is missing)", i+1)
		}
		out[i] = k
	}
	return out, nil
}

// where reads the WHERE clause as a left-to-right list of AND-ed conjuncts.
func (a *sqlAnalyzer) where(n *pg.Node, c *collector) error {
	if n == nil {
		return nil
	}
	if b := n.GetBoolExpr(); b != nil && b.GetBoolop() == pg.BoolExprType_AND_EXPR {
		for _, arg := range b.GetArgs() {
			if err := a.where(arg, c); err != nil {
				return err
			}
		}
		return nil
	}
	at, err := a.conjunct(n)
	if err != nil {
		return err
	}
	return c.add(at)
}

// swapped gives the operator of `b op a` for `a op b`.
var swapped = map[string]string{"=": "=", "<": ">", ">": "<", "<=": ">=", ">=": "<=", "<>": "<>"}

// conjunct classifies one conjunct: `partition_col = value`, `timestamp >= value` or
// `timestamp < value`, in either operand order (a literal on the left swaps the operator:
// L <= ts ⇒ ts >= L, L > ts ⇒ ts < L; pulpitum-reference.md §5.2, avoiding the reference's
// literal-left quirk). Everything else is ErrUnsupportedPredicate.
func (a *sqlAnalyzer) conjunct(n *pg.Node) (atom, error) {
	if containsSubLink(n) {
		return atom{}, unimplementedAre("subqueries")
	}
	e := n.GetAExpr()
	if e == nil || e.GetKind() != pg.A_Expr_Kind_AEXPR_OP || len(e.GetName()) != 1 ||
		e.GetLexpr() == nil || e.GetRexpr() == nil {
		return atom{}, ErrUnsupportedPredicate
	}
	op := e.GetName()[0].GetString_().GetSval()
	lcol, lok, err := a.columnSide(e.GetLexpr())
	if err != nil {
		return atom{}, err
	}
	rcol, rok, err := a.columnSide(e.GetRexpr())
	if err != nil {
		return atom{}, err
	}
	col, value := lcol, e.GetRexpr()
	switch {
	case lok && !rok:
	case rok && !lok:
		col, value = rcol, e.GetLexpr()
		s, ok := swapped[op]
		if !ok {
			return atom{}, ErrUnsupportedPredicate
		}
		op = s
	default:
		return atom{}, ErrUnsupportedPredicate
	}
	switch {
	case col == partitionField && op == "=":
		v, err := a.stringValue(value)
		return atom{kind: atomPartition, val: v}, err
	case col == timestampField && op == ">=":
		v, err := a.timestampValue(value)
		return atom{kind: atomLower, val: v}, err
	case col == timestampField && op == "<":
		v, err := a.timestampValue(value)
		return atom{kind: atomUpper, val: v}, err
	}
	return atom{}, ErrUnsupportedPredicate
}

// columnSide reports whether n is a column reference (possibly wrapped in a cast to the
// column's own type family), and which column. Unknown columns are errors.
func (a *sqlAnalyzer) columnSide(n *pg.Node) (int, bool, error) {
	if tc := n.GetTypeCast(); tc != nil {
		cr := tc.GetArg().GetColumnRef()
		if cr == nil || isStar(cr) {
			return -1, false, nil
		}
		idx, err := a.columnRef(cr)
		if err != nil {
			return -1, false, err
		}
		fam := typeFamily(tc.GetTypeName())
		if (idx == timestampField && fam == "timestamptz") || ((idx == partitionField || idx == idField) && fam == "text") {
			return idx, true, nil
		}
		return -1, false, nil // a cast that changes the column's meaning: not a column
	}
	cr := n.GetColumnRef()
	if cr == nil || isStar(cr) {
		return -1, false, nil
	}
	idx, err := a.columnRef(cr)
	return idx, err == nil, err
}

// stringValue reads the value compared with the partition column: a string literal
// (optionally cast to text/varchar without length) or a parameter.
func (a *sqlAnalyzer) stringValue(n *pg.Node) (operand, error) {
	if tc := n.GetTypeCast(); tc != nil {
		if typeFamily(tc.GetTypeName()) != "text" {
			return operand{}, ErrUnsupportedPredicate
		}
		n = tc.GetArg()
	}
	switch v := n.GetNode().(type) {
	case *pg.Node_ParamRef:
		p, err := a.param(v.ParamRef, paramPartition)
		return operand{param: p}, err
	case *pg.Node_AConst:
		if !v.AConst.GetIsnull() && v.AConst.GetSval() != nil {
			return operand{str: v.AConst.GetSval().GetSval()}, nil
		}
	}
	return operand{}, ErrUnsupportedPredicate
}

// timestampValue reads a timestamp bound: a string literal (untyped, or TIMESTAMPTZ,
// TIMESTAMP or DATE typed, in any cast syntax) or a parameter.
func (a *sqlAnalyzer) timestampValue(n *pg.Node) (operand, error) {
	fam := ""
	if tc := n.GetTypeCast(); tc != nil {
		fam = typeFamily(tc.GetTypeName())
		if fam != "timestamptz" && fam != "date" {
			return operand{}, ErrUnsupportedPredicate
		}
		n = tc.GetArg()
	}
	switch v := n.GetNode().(type) {
	case *pg.Node_ParamRef:
		if fam == "date" {
			return operand{}, ErrUnsupportedPredicate
		}
		p, err := a.param(v.ParamRef, paramTimestamp)
		return operand{param: p}, err
	case *pg.Node_AConst:
		if v.AConst.GetIsnull() || v.AConst.GetSval() == nil {
			return operand{}, ErrUnsupportedPredicate
		}
		s := v.AConst.GetSval().GetSval()
		parse := ParseTimestamp
		if fam == "date" {
			parse = parseDate
		}
		ts, err := parse(s)
		return operand{ts: ts}, err
	}
	return operand{}, ErrUnsupportedPredicate
}

// typeFamily classifies a cast target: "text" (text, varchar, CockroachDB's string),
// "timestamptz" (timestamptz, timestamp), "date", "int" (int2, int4, int8) or "" (anything
// else, including types with modifiers such as varchar(3) or timestamptz(3), whose casts
// change the value, and arrays).
func typeFamily(tn *pg.TypeName) string {
	if tn == nil || len(tn.GetTypmods()) > 0 || len(tn.GetArrayBounds()) > 0 || tn.GetSetof() || tn.GetPctType() {
		return ""
	}
	names := tn.GetNames()
	if len(names) == 2 && names[0].GetString_().GetSval() == "pg_catalog" {
		names = names[1:]
	}
	if len(names) != 1 {
		return ""
	}
	switch names[0].GetString_().GetSval() {
	case "text", "varchar", "string":
		return "text"
	case "timestamptz", "timestamp":
		return "timestamptz"
	case "date":
		return "date"
	case "int2", "int4", "int8", "int", "integer", "bigint", "smallint":
		return "int"
	}
	return ""
}

// containsSubLink reports whether a subquery appears anywhere in the expression.
func containsSubLink(n *pg.Node) bool {
	switch v := n.GetNode().(type) {
	case *pg.Node_SubLink:
		return true
	case *pg.Node_AExpr:
		return containsSubLink(v.AExpr.GetLexpr()) || containsSubLink(v.AExpr.GetRexpr())
	case *pg.Node_BoolExpr:
		for _, arg := range v.BoolExpr.GetArgs() {
			if containsSubLink(arg) {
				return true
			}
		}
	case *pg.Node_TypeCast:
		return containsSubLink(v.TypeCast.GetArg())
	case *pg.Node_List:
		for _, it := range v.List.GetItems() {
			if containsSubLink(it) {
				return true
			}
		}
	}
	return false
}

// isZero reports whether n is the integer literal 0.
func isZero(n *pg.Node) bool {
	c := n.GetAConst()
	return c != nil && !c.GetIsnull() && c.GetIval() != nil && c.GetIval().GetIval() == 0
}
