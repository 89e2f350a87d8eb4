package substrait

import (
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/cockroachdb/apd/v3"
	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/plan"
	"github.com/substrait-io/substrait-go/v8/types"
)

// general is a statement bound by the binder (bind.go) at prepare time without parameter
// values and again at bind time with them.
type general struct {
	node    *pg.Node // the SELECT (or SHOW)
	explain bool
	// analyze and json are EXPLAIN's options ANALYZE and FORMAT JSON.
	analyze, json bool
	params        []types.Type
	// declared holds, where it is not paramArrowType's, a parameter's declared Arrow type
	// (float64 for one compared with integers: floatCompared).
	declared []arrow.DataType
	// nullErrs: PostgreSQL's refusals of a NULL value of a parameter, by number, where it
	// has its own (paramState.nullErrs).
	nullErrs map[int]*Error
}

// explainOptions are the options of an EXPLAIN statement.
type explainOptions struct {
	on, analyze, json bool
}

// Bound is a bound general statement.
type Bound struct {
	// Plan is the Substrait plan of a statement over tables; nil for a table-less one.
	Plan *plan.Plan
	// Routes describe the plan's routed reads in bind order (for EXPLAIN).
	Routes []RouteInfo
	// Constants are the select list of a table-less statement (SELECT 1, version(), SHOW …),
	// expressions over no input, evaluated once; Rows is 1, or 0 under LIMIT 0.
	Constants []expr.Expression
	Registry  expr.ExtensionRegistry
	Rows      int
	// Schema is the result schema (names, Arrow types, nullability).
	Schema *arrow.Schema
	// Volatile reports a binding that read the statement's clock (now(), current_timestamp,
	// current_date) or the session's user (current_user…): another binding of the same
	// statement and values may give another plan.
	Volatile bool
}

// parseOne runs the pre-parse checks and the parser, and unwraps EXPLAIN: its options ANALYZE
// [boolean] and FORMAT TEXT | JSON are read, any other is UNIMPLEMENTED.
func parseOne(sql string) (*pg.Node, explainOptions, error) {
	var ex explainOptions
	if strings.IndexByte(sql, 0) >= 0 {
		return nil, ex, ErrNulInQuery
	}
	if len(sql) > MaxSQLBytes {
		return nil, ex, ErrQueryTooLong
	}
	if !utf8.ValidString(sql) {
		return nil, ex, ErrInvalidUTF8Query
	}
	res, err := parseStatement(sql)
	if err != nil {
		return nil, ex, err
	}
	switch n := len(res.GetStmts()); {
	case n == 0:
		return nil, ex, ErrEmptyQuery
	case n > 1:
		return nil, ex, unimplementedAre("multiple statements")
	}
	node := res.GetStmts()[0].GetStmt()
	if stmt := node.GetExplainStmt(); stmt != nil {
		ex.on, node = true, stmt.GetQuery()
		for _, o := range stmt.GetOptions() {
			d := o.GetDefElem()
			switch name := strings.ToLower(d.GetDefname()); {
			case name == "analyze":
				ex.analyze = true
				if arg := d.GetArg(); arg != nil {
					switch v := explainOptionWord(arg); v {
					case "true", "on", "1":
					case "false", "off", "0":
						ex.analyze = false
					default:
						return nil, ex, unimplementedAre("EXPLAIN ANALYZE values other than a boolean")
					}
				}
			case name == "format":
				switch explainOptionWord(d.GetArg()) {
				case "text":
				case "json":
					ex.json = true
				default:
					return nil, ex, unimplementedAre("EXPLAIN formats other than TEXT and JSON")
				}
			default:
				return nil, ex, unimplementedAre("EXPLAIN options other than ANALYZE and FORMAT")
			}
		}
	}
	return node, ex, nil
}

// explainOptionWord returns an EXPLAIN option's argument as a lower-case word (a boolean, an
// identifier, a string or an integer; "" for anything else).
func explainOptionWord(n *pg.Node) string {
	switch {
	case n.GetBoolean() != nil:
		return strconv.FormatBool(n.GetBoolean().GetBoolval())
	case n.GetString_() != nil:
		return strings.ToLower(n.GetString_().GetSval())
	case n.GetInteger() != nil:
		return strconv.Itoa(int(n.GetInteger().GetIval()))
	case n.GetAConst() != nil && n.GetAConst().GetSval() != nil:
		return strings.ToLower(n.GetAConst().GetSval().GetSval())
	}
	return ""
}

// prepareGeneral binds sql with the general binder, without parameter values.
func prepareGeneral(sql string, cat Catalog, opts BindOptions) (*general, *Bound, error) {
	node, ex, err := parseOne(sql)
	if err != nil {
		return nil, nil, err
	}
	if node.GetSelectStmt() == nil && node.GetVariableShowStmt() == nil {
		return nil, nil, unimplemented(statementName(node))
	}
	g := &general{node: node, explain: ex.on, analyze: ex.analyze, json: ex.json}
	ps := &paramState{types: map[int]types.Type{}, placeholders: map[expr.Expression]int{}}
	bound, err := g.bind(cat, ps, opts)
	if err != nil {
		return nil, nil, err
	}
	g.nullErrs = ps.nullErrs
	g.params = make([]types.Type, len(ps.types))
	g.declared = make([]arrow.DataType, len(ps.types))
	for i := range g.params {
		t, ok := ps.types[i+1]
		if !ok {
			return nil, nil, errorf(InvalidArgument, "parameters must be numbered consecutively from $1 ($%d is missing)", i+1)
		}
		g.params[i] = t
		switch {
		case ps.floatCompared(i + 1):
			g.declared[i] = arrow.PrimitiveTypes.Float64
		case ps.int4Only(i + 1):
			g.declared[i] = arrow.PrimitiveTypes.Int32
		}
	}
	return g, bound, nil
}

// bind binds the statement with the parameter values in ps (none at prepare time).
func (g *general) bind(cat Catalog, ps *paramState, opts BindOptions) (*Bound, error) {
	bd := newBinder(cat, ps, opts)
	if show := g.node.GetVariableShowStmt(); show != nil {
		return bd.show(show.GetName())
	}
	sel := g.node.GetSelectStmt()
	if err := starWithoutTables(sel); err != nil {
		return nil, err
	}
	bd.allowTypeof(sel)
	if constantSelect(sel) {
		return bd.tableless(sel)
	}
	br, err := bd.bindSelect(sel)
	if err == nil {
		br, err = bd.padResult(br)
	}
	if err != nil {
		return nil, bd.deepRefError(err)
	}
	schema, err := arrowSchema(br.sc, br.names)
	if err != nil {
		return nil, err
	}
	// Every FilterRel's conjuncts go as far down as they soundly may (filterPusher), and
	// each read's route is taken from what reaches it (routeRead).
	fp := filterPusher{reg: bd.reg, atRead: bd.routeRead, falsy: bd.constantlyFalse}
	root, err := fp.push(br.rel, nil)
	if err != nil {
		return nil, err
	}
	p, err := bd.b.Plan(root, br.names)
	if err != nil {
		return nil, fmt.Errorf("substrait: build plan: %w", err)
	}
	if err := checkPlanSize(p); err != nil {
		return nil, err
	}
	return &Bound{Plan: p, Routes: bd.routes, Schema: schema, Volatile: bd.volatile}, nil
}

// constantSelect reports whether sel is a SELECT without FROM that only evaluates its select
// list (no WITH, WHERE, GROUP BY, HAVING, aggregate, DISTINCT, ORDER BY or set operation):
// the statement a connection pool sends to validate a connection, evaluated once without the
// executor (tableless); a select list with a subquery is not (its subqueries are joins). Every other SELECT without FROM reads one row of no columns from a
// VirtualTableReadRel (bindSimple), so that UNION, WHERE, aggregates and ORDER BY apply as
// they do over a table.
func constantSelect(sel *pg.SelectStmt) bool {
	op := sel.GetOp()
	return (op == pg.SetOperation_SETOP_NONE || op == pg.SetOperation_SET_OPERATION_UNDEFINED) &&
		len(sel.GetFromClause()) == 0 && sel.GetWithClause() == nil && sel.GetWhereClause() == nil &&
		len(sel.GetGroupClause()) == 0 && sel.GetHavingClause() == nil && !hasAggregate(sel.GetTargetList()) &&
		len(sel.GetDistinctClause()) == 0 && len(sel.GetSortClause()) == 0 && len(sel.GetValuesLists()) == 0 &&
		len(sel.GetWindowClause()) == 0 && len(sel.GetTargetList()) > 0 && !listHasWindow(sel.GetTargetList()) &&
		!slices.ContainsFunc(sel.GetTargetList(), hasSubLink) && !slices.ContainsFunc(sel.GetTargetList(), hasSRF)
}

// tableless binds a constantSelect: constant expressions, evaluated once.
func (bd *binder) tableless(sel *pg.SelectStmt) (*Bound, error) {
	empty := &scope{}
	if err := bd.opts.checkColumns(len(sel.GetTargetList())); err != nil {
		return nil, err
	}
	items, err := bd.expandTargets(sel.GetTargetList(), empty)
	if err != nil {
		return nil, err
	}
	out := &Bound{Rows: 1, Registry: bd.reg}
	sc := &scope{}
	var names []string
	for _, it := range items {
		v, err := bd.bindExpr(it.node, empty)
		if err == nil {
			v, err = bd.padded(v) // a character(n) value is sent blank-padded
		}
		if err != nil {
			return nil, err
		}
		e, err := bd.defaultType(v)
		if err != nil {
			return nil, err
		}
		out.Constants = append(out.Constants, e)
		sc.cols = append(sc.cols, col{name: it.name, typ: e.GetType()})
		names = append(names, it.name)
	}
	offset, err := bd.limitValue(sel.GetLimitOffset(), "OFFSET")
	if err != nil {
		return nil, err
	}
	count, err := bd.limitValue(sel.GetLimitCount(), "LIMIT")
	if err != nil {
		return nil, err
	}
	if count == 0 || offset > 0 {
		out.Rows = 0
	}
	if out.Schema, err = arrowSchema(sc, names); err != nil {
		return nil, err
	}
	return out, nil
}

// showSettings are the settings SHOW answers, as PostgreSQL 15 spells them for a UTC session.
var showSettings = map[string]string{
	"server_version":                "15.0",
	"server_version_num":            "150000",
	"server_encoding":               "UTF8",
	"client_encoding":               "UTF8",
	"standard_conforming_strings":   "on",
	"timezone":                      "UTC",
	"datestyle":                     "ISO, MDY",
	"intervalstyle":                 "postgres",
	"integer_datetimes":             "on",
	"search_path":                   `"$user", public`,
	"transaction_isolation":         "read committed",
	"default_transaction_read_only": "on",
	"transaction_read_only":         "on",
	"max_identifier_length":         "63",
	"lc_collate":                    "C",
	"lc_ctype":                      "C",
	"application_name":              "",
	"is_superuser":                  "off",
	"extra_float_digits":            "1",
	"statement_timeout":             "0",
}

// showColumns are the names of SHOW's column that PostgreSQL spells in mixed case (its
// settings' own names); the other settings' columns are their lower-case names.
var showColumns = map[string]string{"timezone": "TimeZone", "datestyle": "DateStyle", "intervalstyle": "IntervalStyle"}

func (bd *binder) show(name string) (*Bound, error) {
	v, ok := showSettings[strings.ToLower(name)]
	if !ok {
		if n := strings.ToLower(name); n != "all" && !knownParameter(n) {
			return nil, errUnknownParameter
		}
		// The name is the client's text: not echoed.
		return nil, unimplemented("SHOW of this setting")
	}
	e := expr.NewPrimitiveLiteral(v, true)
	column := strings.ToLower(name)
	if c, ok := showColumns[column]; ok {
		column = c
	}
	sc := &scope{cols: []col{{name: column, typ: e.GetType()}}}
	schema, err := arrowSchema(sc, []string{column})
	if err != nil {
		return nil, err
	}
	return &Bound{Constants: []expr.Expression{e}, Registry: bd.reg, Rows: 1, Schema: schema}, nil
}

// BindGeneral binds a general statement's parameter values (args[i] is $i+1: Go strings,
// []byte, integers, floats, bools, time.Time, or []any for = ANY($n)) under opts.
func (s *Statement) BindGeneral(opts BindOptions, args ...any) (*Bound, error) {
	if len(args) != len(s.g.params) {
		return nil, errorf(InvalidArgument, "statement has %d parameters, %d values given", len(s.g.params), len(args))
	}
	for i, a := range args {
		if a == nil {
			if err := s.g.nullParam(i + 1); err != nil {
				return nil, err
			}
		}
	}
	ps := &paramState{types: map[int]types.Type{}, vals: args, placeholders: map[expr.Expression]int{}}
	for i, t := range s.g.params {
		ps.types[i+1] = t
	}
	b, err := s.g.bind(s.cat, ps, opts)
	if err == nil && len(args) > 0 {
		b.Schema = declaredSchema(b.Schema, s.dataSchema)
	}
	return b, err
}

// declaredSchema is the schema a statement bound with parameter values answers with: the
// dataset schema its preparation declared (declared, nil when none), whose columns a bound
// value can only make NOT NULL where the declaration has them nullable (a parameter is NULL
// until bound) — clients compare the two (ADBC's "endpoint 0 returned inconsistent
// schema") — when bound has declared's column types; else bound.
func declaredSchema(bound, declared *arrow.Schema) *arrow.Schema {
	if declared == nil || bound == nil || bound.NumFields() != declared.NumFields() || bound.Equal(declared) {
		return bound
	}
	for i := range bound.NumFields() {
		b, d := bound.Field(i), declared.Field(i)
		if !arrow.TypeEqual(b.Type, d.Type) || b.Nullable && !d.Nullable {
			return bound
		}
	}
	return declared
}

// BindGeneralRecord binds row `row` of rec (column i is $i+1, any Arrow type of the family the
// parameter schema declares) under opts.
func (s *Statement) BindGeneralRecord(opts BindOptions, rec arrow.RecordBatch, row int) (*Bound, error) {
	vals, err := recordRow(rec, row, len(s.g.params), func(i int, col arrow.Array) (any, error) {
		if isNullAt(col, row) {
			if err := s.g.nullParam(i + 1); err != nil {
				return nil, err
			}
			return nil, nil
		}
		return arrowValue(col, row, i+1)
	})
	if err != nil {
		return nil, err
	}
	return s.BindGeneral(opts, vals...)
}

// recordRow reads row `row` of rec as n parameter values with read (column i holds $i+1); a
// nil rec holds none. A column count other than n, or a row rec does not have, is
// InvalidArgument.
func recordRow(rec arrow.RecordBatch, row, n int, read func(i int, col arrow.Array) (any, error)) ([]any, error) {
	ncols := 0
	if rec != nil {
		ncols = int(rec.NumCols())
	}
	if ncols != n {
		return nil, errorf(InvalidArgument, "statement has %d parameters, %d parameter columns given", n, ncols)
	}
	if ncols == 0 {
		return nil, nil
	}
	if row < 0 || int64(row) >= rec.NumRows() {
		return nil, errorf(InvalidArgument, "parameter row %d does not exist", row)
	}
	vals := make([]any, ncols)
	for i := range ncols {
		v, err := read(i, rec.Column(i))
		if err != nil {
			return nil, err
		}
		vals[i] = v
	}
	return vals, nil
}

// isNullAt reports whether row of arr is NULL: a null slot, or any row of an array of Arrow's
// null type (which has no validity bitmap: arrow-go's IsNull says false for it; ADBC and
// pyarrow bind a parameter that is None as one).
func isNullAt(arr arrow.Array, row int) bool {
	return arr.DataType().ID() == arrow.NULL || arr.IsNull(row)
}

// nullParam is the refusal of a NULL value for parameter pos where there is one, nil where
// the NULL is bound as a NULL of the parameter's type, as PostgreSQL binds it (`col = $1`
// matches no row, `coalesce($1::int, 5)` is 5). The refusals: PostgreSQL's own where it has
// one (a window frame's offset, 22004); a timestamp parameter is a time bound (timestamp >= $n,
// timestamp < $n, or a timestamp compared in the query), which SQL's NULL would make match
// nothing, so the message says what it is.
func (g *general) nullParam(pos int) *Error {
	if err, ok := g.nullErrs[pos]; ok {
		return err
	}
	return nil
}

// arrowValue reads one parameter value as a Go value.
// A NULL (a list's NULL element among them) is nil.
func arrowValue(arr arrow.Array, row, pos int) (any, error) {
	if isNullAt(arr, row) {
		return nil, nil
	}
	if n, overflow, ok := arrowInt(arr, row); ok {
		if overflow {
			return nil, limitRange(pos)
		}
		return n, nil
	}
	switch a := arr.(type) {
	case *array.Dictionary:
		return arrowValue(a.Dictionary(), a.GetValueIndex(row), pos)
	case *array.String:
		return a.Value(row), nil
	case *array.LargeString:
		return a.Value(row), nil
	case *array.StringView:
		return a.Value(row), nil
	case *array.Binary:
		return a.Value(row), nil
	case *array.Boolean:
		return a.Value(row), nil
	case *array.Float32:
		return float64(a.Value(row)), nil
	case *array.Float64:
		return a.Value(row), nil
	case *array.Timestamp:
		unit := a.DataType().(*arrow.TimestampType).Unit
		ns, ok := toNanos(int64(a.Value(row)), unit)
		if !ok {
			return nil, paramRange(pos)
		}
		return time.Unix(0, ns).UTC(), nil
	case *array.MonthDayNanoInterval:
		return a.Value(row), nil
	case *array.Duration:
		ns, ok := toNanos(int64(a.Value(row)), a.DataType().(*arrow.DurationType).Unit)
		if !ok {
			return nil, paramRange(pos)
		}
		return durationInterval(ns), nil
	case *array.Decimal32:
		return decimalValue(big.NewInt(int64(a.Value(row))), a.DataType()), nil
	case *array.Decimal64:
		return decimalValue(big.NewInt(int64(a.Value(row))), a.DataType()), nil
	case *array.Decimal128:
		return decimalValue(a.Value(row).BigInt(), a.DataType()), nil
	case *array.Decimal256:
		return decimalValue(a.Value(row).BigInt(), a.DataType()), nil
	case *array.Date32:
		return dateParam(int64(a.Value(row)), pos)
	case *array.Date64:
		// Milliseconds since the epoch, of a whole day by Arrow's rule; the day they fall in.
		ms := int64(a.Value(row))
		days := ms / 86_400_000
		if ms%86_400_000 < 0 {
			days--
		}
		return dateParam(days, pos)
	case *array.Time32:
		// A time of day (the JDBC driver's setTime fills time32[ms]).
		ms := int64(a.Value(row))
		if a.DataType().(*arrow.Time32Type).Unit == arrow.Second {
			ms *= 1000
		}
		return timeOfDayParam(ms * 1000), nil
	case *array.Time64:
		if a.DataType().(*arrow.Time64Type).Unit == arrow.Microsecond {
			// A time of day (ADBC binds a Python datetime.time as time64[us]).
			return timeOfDayParam(a.Value(row)), nil
		}
		// arrow-go's database/sql driver binds a time.Time as time64[ns] holding UnixNano
		// (its only builder for time.Time): an instant, not a time of day.
		ns, ok := toNanos(int64(a.Value(row)), a.DataType().(*arrow.Time64Type).Unit)
		if !ok {
			return nil, paramRange(pos)
		}
		return time.Unix(0, ns).UTC(), nil
	case array.ListLike:
		start, end := a.ValueOffsets(row)
		vals := a.ListValues()
		out := make([]any, 0, end-start)
		for j := start; j < end; j++ {
			v, err := arrowValue(vals, int(j), pos)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	}
	return nil, errorf(InvalidArgument, "parameter $%d has the unsupported type %s", pos, arr.DataType())
}

// PostgreSQL's dates, in days since 1970-01-01: from 4714-11-24 BC (Julian day 0) to
// 5874897-12-31 (date_recv refuses others: "date out of range", 22008).
const (
	minDateDays = -2_440_588
	maxDateDays = 2_147_483_494 - 2_440_588 - 1
)

// dateParam is the date parameter $pos of days since 1970-01-01, as midnight UTC; outside
// PostgreSQL's dates it is 22008, as date_recv refuses it (trial 32 F1).
func dateParam(days int64, pos int) (any, error) {
	if days < minDateDays || days > maxDateDays {
		return nil, &Error{Code: InvalidArgument, SQLState: "22008", Msg: fmt.Sprintf("parameter $%d: date out of range", pos)}
	}
	return time.Unix(days*86_400, 0).UTC(), nil
}

// durationInterval is the interval a duration of ns nanoseconds binds (ADBC binds a Python
// timedelta as duration[us]): whole days and the rest of the day, never negative, as psycopg
// sends a timedelta to PostgreSQL ("%d days %d.%06d seconds" of its days, seconds and
// microseconds), so timedelta(hours=-1) is '-1 days +23:00:00' in both. Declared interval
// (placeholders.go).
func durationInterval(ns int64) arrow.MonthDayNanoInterval {
	const day = 86_400_000_000_000
	days := ns / day
	if ns%day < 0 {
		days--
	}
	return arrow.MonthDayNanoInterval{Days: int32(days), Nanoseconds: ns - days*day}
}

// decimalValue is the numeric a decimal of Arrow type t holds as the integer n: n × 10^-scale,
// its display scale t's scale (a value of decimal128(10, 2) shows two digits after the point).
func decimalValue(n *big.Int, t arrow.DataType) *apd.Decimal {
	d := apd.NewWithBigInt(new(apd.BigInt).SetMathBigInt(new(big.Int).Abs(n)), -t.(arrow.DecimalType).GetScale())
	d.Negative = n.Sign() < 0
	return d
}

// paramArrowType is the declared Arrow type of a general statement's parameter. A number is
// declared at the widest type of its family, int64 or float64, whatever narrower type the
// statement gives it ($1::smallint, $1::real): a client binds its value in the declared type
// (the JDBC driver fills a vector of it), so a narrower declaration would let the client narrow
// the value, while int64 carries it whole and the server converts it to the parameter's type
// with PostgreSQL's range check (paramLiteral), as PostgreSQL casts a parameter its client
// declares bigint or double precision.
func paramArrowType(t types.Type) arrow.DataType {
	switch familyOf(t) {
	case famTimestamp:
		if _, wall := t.(*types.PrecisionTimestampType); wall {
			return paramWallclockType
		}
		return paramTimestampType
	case famString:
		return arrow.BinaryTypes.String
	case famBinary:
		return arrow.BinaryTypes.Binary
	case famBool:
		return arrow.FixedWidthTypes.Boolean
	case famInt:
		return arrow.PrimitiveTypes.Int64
	case famFloat:
		return arrow.PrimitiveTypes.Float64
	case famDate:
		return arrow.FixedWidthTypes.Date32
	case famTime:
		// time32[ms]: the JDBC driver's setTime writes milliseconds of the day into whatever
		// time vector it is given (time64[us] read its 06:59:30 as 00:00:25.17); ADBC binds
		// its own time64[us], accepted as well (arrowValue).
		return arrow.FixedWidthTypes.Time32ms
	case famNumeric:
		// decimal128(38, 16) for a numeric parameter, decimal128(p, s) for one cast to
		// numeric(p,s) (numparam.go), which ADBC and the JDBC driver's setBigDecimal bind
		// exactly (the driver refuses a BigDecimal of another scale).
		d := t.(*types.DecimalType)
		return &arrow.Decimal128Type{Precision: d.Precision, Scale: d.Scale}
	}
	if lt, ok := t.(*types.ListType); ok {
		return arrow.ListOf(paramArrowType(lt.Type))
	}
	return arrow.BinaryTypes.String
}

// generalParamSchema is the parameter schema of parameters of types ts: declared[i] when set,
// else paramArrowType(ts[i]); every field nullable, as a NULL binds as its type's NULL (JDBC's
// driver refuses setNull on a field declared non-nullable).
func generalParamSchema(ts []types.Type, declared []arrow.DataType) *arrow.Schema {
	fields := make([]arrow.Field, len(ts))
	for i, t := range ts {
		typ := paramArrowType(t)
		if i < len(declared) && declared[i] != nil {
			typ = declared[i]
		}
		fields[i] = arrow.Field{Name: "$" + strconv.Itoa(i+1), Type: typ, Nullable: true}
	}
	return arrow.NewSchema(fields, nil)
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
