package substrait

import (
	"math"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/substrait-io/substrait-go/v8/plan"
)

// Statement is a parsed and analysed SQL statement whose parameter values may still be
// missing (a Flight SQL prepared statement). It is immutable and safe for concurrent use;
// binding never changes it.
//
// Parameters are `$n` or `?` (rewritten to `$1`, `$2`… left to right). Each takes its type
// from where it is used (docs/pulpitum-v4.md §5.4 types binds by position the same way),
// declared in the parameter schema as its Arrow family: compared with the partition column
// or another text → utf8; a timestamp → timestamp[ms, tz=UTC] (paramTimestampType: the JDBC
// driver's unit; values of every unit are accepted); LIMIT, OFFSET and integers → int64, but
// a parameter only compared with smallint or integer expressions → float64 (numparam.go);
// numeric → decimal128(38, 16), or (p, s) when cast to numeric(p,s); = ANY($n) → a list. Value-independent errors are reported by Prepare; the checks that need
// values (a negative LIMIT; the emptiness of a route, which answers no rows) run at bind time.
type Statement struct {
	sql         string
	g           *general
	cat         Catalog
	paramSchema *arrow.Schema
	dataSchema  *arrow.Schema
}

// ExplainSchema is the dataset schema of an EXPLAIN statement: one utf8 column named
// "QUERY PLAN" (PostgreSQL's name), one row per line of output.
var ExplainSchema = arrow.NewSchema([]arrow.Field{{Name: "QUERY PLAN", Type: arrow.BinaryTypes.String}}, nil)

// Prepare parses sql with the PostgreSQL grammar, binds it against the catalog without
// parameter values (the binder: any SELECT over one table per FROM, subqueries in FROM and
// WITH, UNION [ALL], table-less statements and SHOW, [EXPLAIN] of those) and checks the routed
// contract of every read (see the package documentation). Errors are *Error values (see the
// package documentation for codes).
func Prepare(sql string, cat Catalog) (*Statement, error) {
	return PrepareWith(sql, cat, BindOptions{})
}

// PrepareWith is Prepare under session options (the analytical mode, the partition bound,
// the clock and the user: BindOptions).
func PrepareWith(sql string, cat Catalog, opts BindOptions) (*Statement, error) {
	g, bound, err := prepareGeneral(sql, cat, opts)
	if err != nil {
		return nil, err
	}
	s := &Statement{sql: sql, g: g, cat: cat, paramSchema: generalParamSchema(g.params, g.declared), dataSchema: bound.Schema}
	if g.explain {
		s.dataSchema = ExplainSchema
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

// SQL returns the statement text as given to Prepare.
func (s *Statement) SQL() string { return s.sql }

// IsExplain reports whether the statement is EXPLAIN <query>: Bind then returns the plan of
// the inner query, which the caller prints (Explain) instead of executing.
func (s *Statement) IsExplain() bool { return s.g.explain }

// ExplainAnalyze reports whether the statement is EXPLAIN ANALYZE <query>: the caller
// executes the query, discards its rows and prints the plan with what each operator did.
func (s *Statement) ExplainAnalyze() bool { return s.g.explain && s.g.analyze }

// ExplainJSON reports whether the statement is EXPLAIN (FORMAT JSON) <query>: one row holding
// a JSON document instead of one row per line.
func (s *Statement) ExplainJSON() bool { return s.g.explain && s.g.json }

// NumParams returns the number of parameters ($1…$n).
func (s *Statement) NumParams() int { return len(s.g.params) }

// ParameterSchema returns one non-null field per parameter, named "$1", "$2"…, typed by
// position as the Statement's documentation lists.
func (s *Statement) ParameterSchema() *arrow.Schema { return s.paramSchema }

// DatasetSchema returns the result schema (OutputSchema; ExplainSchema for EXPLAIN). It is
// the same for every binding.
func (s *Statement) DatasetSchema() *arrow.Schema { return s.dataSchema }

// Bind binds the parameter values (see BindGeneral) and returns the plan; a table-less
// statement has none (Unimplemented).
func (s *Statement) Bind(args ...any) (*plan.Plan, error) {
	return planOf(s.BindGeneral(BindOptions{}, args...))
}

// BindRecord binds one row of rec (see BindGeneralRecord) and returns the plan.
func (s *Statement) BindRecord(rec arrow.RecordBatch, row int) (*plan.Plan, error) {
	return planOf(s.BindGeneralRecord(BindOptions{}, rec, row))
}

// nullParam is the refusal of a NULL value for parameter pos where flightsrv cannot bind one
// yet (a date_bin stride): a feature flightsrv does not have (PostgreSQL binds the NULL), so
// UNIMPLEMENTED and 0A000.
func nullParam(pos int) *Error {
	return refused(Unimplemented, "0A000", "parameter $%d must not be NULL here", pos)
}

// boundNull reports whether parameter p is bound to NULL (never at prepare time, when no
// value is bound).
func (bd *binder) boundNull(p int) bool {
	return bd.ps.vals != nil && p >= 1 && p <= len(bd.ps.vals) && bd.ps.vals[p-1] == nil
}

func paramRange(pos int) *Error {
	return errorf(InvalidArgument, "parameter $%d is outside the nanosecond timestamp range", pos)
}

func limitRange(pos int) *Error {
	return errorf(InvalidArgument, "parameter $%d is outside the int64 range", pos)
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
