package substrait

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/substrait-io/substrait-go/v8/plan"

	"github.com/flightsrv/flightsrv/routing"
)

// Statement is a parsed and analysed SQL statement whose parameter values may still be
// missing (a Flight SQL prepared statement). It is immutable and safe for concurrent use;
// binding never changes it.
//
// Parameters are `$n` or `?` (rewritten to `$1`, `$2`… left to right). Each takes its type
// from where it is used (pulpitum-reference.md §5.4 types binds by position the same way):
// compared with the partition column → utf8; a timestamp bound → timestamp[ns, tz=UTC];
// LIMIT → int64. Value-independent errors are reported by Prepare; the checks that need
// values (conflicting partition values, start ≥ end, negative LIMIT) run at bind time.
type Statement struct {
	sql         string
	t           *template
	g           *general // set instead of t for statements outside the canonical shapes
	cat         Catalog
	paramSchema *arrow.Schema
	dataSchema  *arrow.Schema
}

// ExplainSchema is the dataset schema of an EXPLAIN statement: one utf8 column named
// "QUERY PLAN" (PostgreSQL's name), one row per line of output.
var ExplainSchema = arrow.NewSchema([]arrow.Field{{Name: "QUERY PLAN", Type: arrow.BinaryTypes.String}}, nil)

// Prepare parses sql with the PostgreSQL grammar, resolves it against the catalog and checks
// the routed contract. Supported:
//
//	[EXPLAIN] SELECT <columns> | * | <aggregates>
//	FROM <table> [[AS] alias]
//	WHERE <partition_col> = 'p' AND timestamp >= L AND timestamp < L   (any order, either operand order)
//	[ORDER BY timestamp [ASC|DESC] [, id <same direction>]]
//	[LIMIT n | ALL | $n] | [FETCH FIRST n ROWS ONLY]
//
// where <aggregates> are COUNT(*), COUNT(column), MIN(timestamp) and MAX(timestamp) with
// optional aliases; or a histogram, COUNT(*) grouped by date_trunc(unit, timestamp) or
// date_bin(INTERVAL stride, timestamp, origin), with GROUP BY and ORDER BY naming the bin by
// position, alias or expression (see groupby.go). Errors are *Error values (see the package
// documentation for codes).
func Prepare(sql string, cat Catalog) (*Statement, error) {
	return PrepareWith(sql, cat, BindOptions{})
}

// PrepareWith is Prepare under session options. A statement outside the canonical shapes
// above is bound by the general binder (IsGeneral; bind.go): any SELECT over one table per
// FROM, subqueries in FROM and WITH, UNION [ALL], table-less statements and SHOW.
func PrepareWith(sql string, cat Catalog, opts BindOptions) (*Statement, error) {
	t, err := analyzeSQL(sql, cat)
	if err != nil {
		if code, ok := CodeOf(err); ok && code == NotFound {
			return nil, err
		}
		g, bound, gerr := prepareGeneral(sql, cat, opts)
		if gerr != nil {
			return nil, gerr
		}
		s := &Statement{sql: sql, g: g, cat: cat, paramSchema: generalParamSchema(g.params), dataSchema: bound.Schema}
		if g.explain {
			s.dataSchema = ExplainSchema
		}
		return s, nil
	}
	fields := make([]arrow.Field, len(t.params))
	for i, k := range t.params {
		fields[i] = arrow.Field{Name: "$" + strconv.Itoa(i+1), Type: k.arrowType()}
	}
	s := &Statement{sql: sql, t: t, cat: cat, paramSchema: arrow.NewSchema(fields, nil)}
	if t.explain {
		s.dataSchema = ExplainSchema
	} else if t.group != nil {
		s.dataSchema = groupedSchema(t.agg, t.group)
	} else {
		s.dataSchema = OutputSchema(t.def, t.columns, t.agg)
	}
	return s, nil
}

// FromSQL plans a statement without parameters: Prepare followed by Bind.
func FromSQL(sql string, cat Catalog) (*plan.Plan, error) {
	s, err := Prepare(sql, cat)
	if err != nil {
		return nil, err
	}
	return s.Bind()
}

// paramTimestampType is the declared type of timestamp parameters: timestamp[ms, tz=UTC].
// Milliseconds, not the column's nanoseconds, because the Arrow Flight SQL JDBC driver writes
// epoch milliseconds into whatever unit the parameter schema declares (apache/arrow-java#838),
// which would bind 2001-01-01 as 1970-01-01T00:16:18Z under a nanosecond declaration. Clients
// that send their own type (ADBC, arrow-go, pyarrow) keep any precision: bound values of every
// unit are coerced (see BindRecord).
var paramTimestampType = &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}

func (k paramKind) arrowType() arrow.DataType {
	switch k {
	case paramPartition:
		return arrow.BinaryTypes.String
	case paramTimestamp:
		return paramTimestampType
	}
	return arrow.PrimitiveTypes.Int64
}

// SQL returns the statement text as given to Prepare.
func (s *Statement) SQL() string { return s.sql }

// Table returns the routed table a canonical statement reads (the zero TableDef for a
// general statement).
func (s *Statement) Table() routing.TableDef {
	if s.t == nil {
		return routing.TableDef{}
	}
	return s.t.def
}

// IsExplain reports whether the statement is EXPLAIN <query>: Bind then returns the plan of
// the inner query, which the caller prints (Explain) instead of executing.
func (s *Statement) IsExplain() bool {
	if s.g != nil {
		return s.g.explain
	}
	return s.t.explain
}

// NumParams returns the number of parameters ($1…$n).
func (s *Statement) NumParams() int {
	if s.g != nil {
		return len(s.g.params)
	}
	return len(s.t.params)
}

// ParameterSchema returns one non-null field per parameter, named "$1", "$2"…, typed by
// position: utf8, timestamp[ns, tz=UTC] or int64.
func (s *Statement) ParameterSchema() *arrow.Schema { return s.paramSchema }

// DatasetSchema returns the result schema (OutputSchema; ExplainSchema for EXPLAIN). It is
// the same for every binding.
func (s *Statement) DatasetSchema() *arrow.Schema { return s.dataSchema }

// Query binds the parameter values and returns the resolved query. args[i] is the value of
// $i+1: string or []byte (valid UTF-8) for a partition value; time.Time or a timestamp
// string (ParseTimestamp) for a timestamp bound; any Go integer for LIMIT. NULL (nil) is
// refused, as is a wrong count or type, with InvalidArgument naming the position and the
// expected type.
func (s *Statement) Query(args ...any) (*Query, error) {
	if s.g != nil {
		return nil, errNotCanonical
	}
	if len(args) != len(s.t.params) {
		return nil, errorf(InvalidArgument, "statement has %d parameters, %d values given", len(s.t.params), len(args))
	}
	vals := make([]any, len(args))
	for i, a := range args {
		v, err := coerceGo(s.t.params[i], i+1, a)
		if err != nil {
			return nil, err
		}
		vals[i] = v
	}
	return s.resolve(vals)
}

// Bind binds the parameter values (see Query) and returns the canonical plan (see Build).
func (s *Statement) Bind(args ...any) (*plan.Plan, error) {
	if s.g != nil {
		return planOf(s.BindGeneral(BindOptions{}, args...))
	}
	q, err := s.Query(args...)
	if err != nil {
		return nil, err
	}
	return Build(q)
}

// QueryRecord binds row `row` of rec: column i holds the value of $i+1 in any Arrow type a
// client may send: timestamps in s, ms, us or ns with or without a zone (a zone-less value
// is read as UTC), date32/date64 (midnight UTC); utf8, large_utf8, string_view or a
// dictionary of those; any signed or unsigned integer width. A nil rec binds no parameter.
func (s *Statement) QueryRecord(rec arrow.RecordBatch, row int) (*Query, error) {
	if s.g != nil {
		return nil, errNotCanonical
	}
	vals, err := recordRow(rec, row, len(s.t.params), func(i int, col arrow.Array) (any, error) {
		return coerceArrow(s.t.params[i], i+1, col, row)
	})
	if err != nil {
		return nil, err
	}
	return s.resolve(vals)
}

// BindRecord binds one row of rec (see QueryRecord) and returns the canonical plan.
func (s *Statement) BindRecord(rec arrow.RecordBatch, row int) (*plan.Plan, error) {
	if s.g != nil {
		return planOf(s.BindGeneralRecord(BindOptions{}, rec, row))
	}
	q, err := s.QueryRecord(rec, row)
	if err != nil {
		return nil, err
	}
	return Build(q)
}

// resolve re-runs the routed-predicate checks with every value known and assembles the
// query. vals[i] is the coerced value of $i+1.
func (s *Statement) resolve(vals []any) (*Query, error) {
	t := s.t
	c := &collector{resolve: func(o operand) (any, bool) { return vals[o.param-1], true }}
	for _, a := range t.atoms {
		if err := c.add(a); err != nil {
			return nil, err
		}
	}
	if err := c.finish(); err != nil {
		return nil, err
	}
	part, r := c.routed()
	// The statement is shared: the query gets its own copies of the selection.
	q := &Query{Table: t.def, Partition: part, Range: r, Columns: slices.Clone(t.columns), Order: t.order, Limit: -1}
	if t.agg != nil {
		q.Aggregate = &Aggregate{Measures: slices.Clone(t.agg.Measures)}
	}
	if t.group != nil {
		g := *t.group
		q.Group = &g
	}
	if t.limit != nil {
		q.Limit = t.limit.n
		if t.limit.param > 0 {
			q.Limit = vals[t.limit.param-1].(int64)
		}
	}
	return q, nil
}

// wrongType is the InvalidArgument for a value of the wrong type: it names the position and
// the expected type, and the type received (never the value).
func wrongType(kind paramKind, pos int, got string) *Error {
	return errorf(InvalidArgument, "parameter $%d must be %s, got %s", pos, kind, got)
}

func nullParam(pos int) *Error {
	return errorf(InvalidArgument, "parameter $%d must not be NULL", pos)
}

// coerceGo converts a Go value to the parameter's type: string, time.Time (UTC) or int64.
func coerceGo(kind paramKind, pos int, v any) (any, error) {
	if v == nil {
		return nil, nullParam(pos)
	}
	switch kind {
	case paramPartition:
		switch x := v.(type) {
		case string:
			return x, nil
		case []byte:
			if utf8.Valid(x) {
				return string(x), nil
			}
			return nil, errorf(InvalidArgument, "parameter $%d must be valid UTF-8", pos)
		}
	case paramTimestamp:
		switch x := v.(type) {
		case time.Time:
			if err := checkNanoRange(x); err != nil {
				return nil, paramRange(pos)
			}
			return x.UTC(), nil
		case string:
			return timestampText(pos, x)
		}
	case paramLimit:
		var n int64
		switch x := v.(type) {
		case int:
			n = int64(x)
		case int8:
			n = int64(x)
		case int16:
			n = int64(x)
		case int32:
			n = int64(x)
		case int64:
			n = x
		case uint:
			if uint64(x) > math.MaxInt64 {
				return nil, limitRange(pos)
			}
			n = int64(x)
		case uint8:
			n = int64(x)
		case uint16:
			n = int64(x)
		case uint32:
			n = int64(x)
		case uint64:
			if x > math.MaxInt64 {
				return nil, limitRange(pos)
			}
			n = int64(x)
		default:
			return nil, wrongType(kind, pos, fmt.Sprintf("%T", v))
		}
		if n < 0 {
			return nil, ErrNegativeLimit
		}
		return n, nil
	}
	return nil, wrongType(kind, pos, fmt.Sprintf("%T", v))
}

func paramRange(pos int) *Error {
	return errorf(InvalidArgument, "parameter $%d is outside the nanosecond timestamp range", pos)
}

// timestampText parses a timestamp bound sent as text (an ISO 8601 / RFC 3339 string, as
// ADBC binds a Python str and JDBC a setString): ParseTimestamp's forms, zone-less values in
// UTC. The refusal names the position and the reason, never the text.
func timestampText(pos int, s string) (any, error) {
	t, err := ParseTimestamp(s)
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			return nil, errorf(InvalidArgument, "parameter $%d: %s", pos, e.Msg)
		}
		return nil, errorf(InvalidArgument, "parameter $%d: %s", pos, ErrInvalidTimestampLiteral.Msg)
	}
	return t.UTC(), nil
}

func limitRange(pos int) *Error {
	return errorf(InvalidArgument, "parameter $%d is outside the int64 range", pos)
}

// coerceArrow reads row `row` of arr as the parameter's type.
func coerceArrow(kind paramKind, pos int, arr arrow.Array, row int) (any, error) {
	if arr.IsNull(row) {
		return nil, nullParam(pos)
	}
	if d, ok := arr.(*array.Dictionary); ok {
		return coerceArrow(kind, pos, d.Dictionary(), d.GetValueIndex(row))
	}
	got := arr.DataType().String()
	switch kind {
	case paramPartition:
		switch a := arr.(type) {
		case *array.String:
			return a.Value(row), nil
		case *array.LargeString:
			return a.Value(row), nil
		case *array.StringView:
			return a.Value(row), nil
		}
	case paramTimestamp:
		switch a := arr.(type) {
		case *array.Timestamp:
			unit := a.DataType().(*arrow.TimestampType).Unit
			ns, ok := toNanos(int64(a.Value(row)), unit)
			if !ok {
				return nil, paramRange(pos)
			}
			return time.Unix(0, ns).UTC(), nil
		case *array.Date32:
			t := a.Value(row).ToTime()
			if checkNanoRange(t) != nil {
				return nil, paramRange(pos)
			}
			return t.UTC(), nil
		case *array.Date64:
			t := a.Value(row).ToTime()
			if checkNanoRange(t) != nil {
				return nil, paramRange(pos)
			}
			return t.UTC(), nil
		case *array.Time64:
			// arrow-go's database/sql driver binds a time.Time as time64[ns] holding
			// UnixNano (its only builder for time.Time): an instant, not a time of day.
			ns, ok := toNanos(int64(a.Value(row)), a.DataType().(*arrow.Time64Type).Unit)
			if !ok {
				return nil, paramRange(pos)
			}
			return time.Unix(0, ns).UTC(), nil
		case *array.String:
			return timestampText(pos, a.Value(row))
		case *array.LargeString:
			return timestampText(pos, a.Value(row))
		case *array.StringView:
			return timestampText(pos, a.Value(row))
		}
	case paramLimit:
		n, overflow, ok := arrowInt(arr, row)
		switch {
		case !ok:
			return nil, wrongType(kind, pos, got)
		case overflow:
			return nil, limitRange(pos)
		}
		if n < 0 {
			return nil, ErrNegativeLimit
		}
		return n, nil
	}
	return nil, wrongType(kind, pos, got)
}

// arrowInt reads row `row` of a signed or unsigned integer array (ok false for any other
// type); overflow reports a uint64 above the int64 range.
func arrowInt(arr arrow.Array, row int) (n int64, overflow, ok bool) {
	switch a := arr.(type) {
	case *array.Int8:
		return int64(a.Value(row)), false, true
	case *array.Int16:
		return int64(a.Value(row)), false, true
	case *array.Int32:
		return int64(a.Value(row)), false, true
	case *array.Int64:
		return a.Value(row), false, true
	case *array.Uint8:
		return int64(a.Value(row)), false, true
	case *array.Uint16:
		return int64(a.Value(row)), false, true
	case *array.Uint32:
		return int64(a.Value(row)), false, true
	case *array.Uint64:
		if a.Value(row) > math.MaxInt64 {
			return 0, true, true
		}
		return int64(a.Value(row)), false, true
	}
	return 0, false, false
}

// toNanos converts v in unit to nanoseconds, reporting overflow.
func toNanos(v int64, unit arrow.TimeUnit) (int64, bool) {
	var mult int64
	switch unit {
	case arrow.Second:
		mult = int64(time.Second)
	case arrow.Millisecond:
		mult = int64(time.Millisecond)
	case arrow.Microsecond:
		mult = int64(time.Microsecond)
	default:
		return v, true
	}
	if v > math.MaxInt64/mult || v < math.MinInt64/mult {
		return 0, false
	}
	return v * mult, true
}

// errNotCanonical is the error of Query and QueryRecord on a general statement.
var errNotCanonical = &Error{Code: Unimplemented, Msg: "this statement is not a canonical routed query (bind it with BindGeneral)"}

// planOf returns a bound general statement's plan; a table-less statement has none.
func planOf(b *Bound, err error) (*plan.Plan, error) {
	if err != nil {
		return nil, err
	}
	if b.Plan == nil {
		return nil, &Error{Code: Unimplemented, Msg: "a statement without a table has no Substrait plan"}
	}
	return b.Plan, nil
}
