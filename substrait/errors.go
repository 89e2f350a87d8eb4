package substrait

import (
	"errors"
	"fmt"
	"strings"
)

// Code classifies an *Error by what the caller should tell the client. The Flight SQL layer
// maps it to a gRPC status code (InvalidArgument → INVALID_ARGUMENT, Unimplemented →
// UNIMPLEMENTED, NotFound → NOT_FOUND); this package knows nothing of gRPC. Any error of this
// package that is not an *Error is an internal failure (INTERNAL).
type Code uint8

const (
	// InvalidArgument: the query is well formed SQL or Substrait but breaks the routed
	// contract (docs/pulpitum-v4.md §5.2–§5.3), names an unknown column, carries an invalid
	// literal, or a parameter value cannot be bound.
	InvalidArgument Code = iota + 1
	// Unimplemented: the query uses a construct flightsrv does not support (joins, subqueries
	// in expressions, window functions, DML, DDL, unknown functions, other Substrait
	// relations…). Flight SQL clients fall back on this code (docs/flightsql-clients.md).
	Unimplemented
	// NotFound: the query names a table the catalog does not hold.
	NotFound
)

// String returns the code's name as spelled by gRPC (INVALID_ARGUMENT, UNIMPLEMENTED,
// NOT_FOUND).
func (c Code) String() string {
	switch c {
	case InvalidArgument:
		return "INVALID_ARGUMENT"
	case Unimplemented:
		return "UNIMPLEMENTED"
	case NotFound:
		return "NOT_FOUND"
	}
	return fmt.Sprintf("code(%d)", uint8(c))
}

// Error is a planning error with a classification and a client-safe message. Messages never
// contain partition values, literal values or parameter values (docs/pulpitum-v4.md §5.3,
// error privacy); they may name SQL constructs, columns, tables and parameter positions. A
// message quoting the client's own text that may hold a value — an identifier that names no
// column (`WHERE origin = ORD` names ORD), the token of a syntax error — also has a LogMsg
// without it, which is what logs hold (internal/querylog's rule: no line holds a value).
//
// Two *Error values are equal under errors.Is when their Code and Msg are equal, so the
// sentinels below can be matched even when a copy is returned; an error whose Msg is a
// sentinel's followed by ": " and a reason (ErrInvalidPlan's refusals say why) matches the
// sentinel too.
type Error struct {
	Code Code
	Msg  string
	// LogMsg, when set, is Msg with the client's own text it quotes (an unknown identifier,
	// the token of a syntax error) replaced by a placeholder: what a log line may hold. Empty
	// when Msg quotes none (LogMessage then returns Msg).
	LogMsg string
	// SQLState is PostgreSQL's SQLSTATE for the condition (42601 syntax_error, 42703
	// undefined_column…), or "" when none is set.
	SQLState string
	// untypedParam is the parameter of a 42P18 refusal (could not determine the data type of
	// parameter $n), 0 otherwise: what DeclareParameterTypes declares.
	untypedParam int
}

// LogMessage returns the message a log line may hold: LogMsg, or Msg when it is empty.
func (e *Error) LogMessage() string {
	if e.LogMsg != "" {
		return e.LogMsg
	}
	return e.Msg
}

// Error returns the message prefixed with the package name.
func (e *Error) Error() string { return "substrait: " + e.Msg }

// Is reports whether target is an *Error with the same code and message.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code && (t.Msg == e.Msg || strings.HasPrefix(e.Msg, t.Msg+": "))
}

// CodeOf returns the Code of the first *Error in err's chain, and false when there is none
// (an internal error).
func CodeOf(err error) (Code, bool) {
	var e *Error
	if errors.As(err, &e) {
		return e.Code, true
	}
	return 0, false
}

// errorf is a refusal whose message quotes no client text. Its SQLState is PostgreSQL's for
// the condition its format names (formatStates), or feature_not_supported (0A000) for an
// Unimplemented one.
func errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Msg: fmt.Sprintf(format, args...), SQLState: stateOf(code, format)}
}

// refused is a refusal with an explicit SQLSTATE whose message, formatted from the binder's
// own words (a construct, a known function's name, a type name), quotes no client text: the
// log holds it whole (quoting is for the client's text).
func refused(code Code, sqlstate, format string, args ...any) *Error {
	return &Error{Code: code, SQLState: sqlstate, Msg: fmt.Sprintf(format, args...)}
}

// formatStates maps the words of errorf's formats to PostgreSQL's SQLSTATE for the same
// condition (PostgreSQL's errcodes.txt names them), first match wins.
var formatStates = []struct{ words, state string }{
	{"could not determine the data type of parameter", "42P18"},
	{"parameter", ""}, // a parameter's binding: no condition of PostgreSQL's fits
	{"INSERT", ""},
	{"operator does not exist", "42883"},
	{"does not exist", "42883"}, // function f(t) does not exist, function f with n arguments…
	{"argument(s)", "42883"},    // f takes 1 argument(s): no such function
	{"arguments (", "42883"},
	{"takes exactly one argument", "42883"},
	{"to %d arguments", "42883"},
	{"takes 1 to 2 arguments", "42883"},
	{"takes two or three arguments", "42883"},
	{"takes two arguments", "42883"},
	{"takes at least one argument", "42883"},
	{"takes a document and at least one key", "42883"},
	{"needs a number", "42883"},
	{"needs a bytea value", "42883"},
	{"must be a number", "42883"},
	{"FILTER is not implemented", "0A000"},
	{"could not identify an ordering operator", "42883"},
	{"could not identify an equality operator", "42883"},
	{"could not identify a comparison function", "42883"},
	{"JSON operators need", "42883"},
	{"must appear in the GROUP BY clause", "42803"},
	{"aggregate function", "42803"}, // …s are not allowed here, calls cannot be nested
	{"arguments to GROUPING", "42803"},
	{"window", "42P20"},
	{"cannot cast type", "42846"},
	{"invalid input syntax", "22P02"},
	{"malformed array literal", "22P02"},
	{"invalid numeric literal", "22P02"},
	{"out of range", "22003"},
	{"invalid interval literal", "22007"},
	{"cannot be matched", "42804"},
	{"must be %s, not %s", "42804"},
	{"same number of columns", "42601"},
	{"cannot use DISTINCT with WITHIN GROUP", "42601"},
	{"position %d is not in select list", "42P10"},
	{"ORDER BY expressions must appear in select list", "42P10"},
	{"too many column aliases", "42P10"},
	{"is ambiguous", "42702"},
	{"OFFSET must not be negative", "2201X"},
	{"is not an aggregate function", "42809"},
	{"is not an ordered-set aggregate", "42809"},
	{"is not a valid", "42809"},
	{"too many grouping sets", "54001"},
	{"GROUPING must have fewer than 32 arguments", "54023"},
	{"NUMERIC", "22023"}, // type modifiers
	{"date_trunc unit", "22023"},
	{"date_bin", "22023"},
}

// stateOf is errorf's SQLSTATE for code and format ("" when none fits).
func stateOf(code Code, format string) string {
	if code == Unimplemented {
		return "0A000"
	}
	if code != InvalidArgument {
		return ""
	}
	for _, f := range formatStates {
		if strings.Contains(format, f.words) {
			return f.state
		}
	}
	return ""
}

// quoting is an error whose message quotes ident, the client's own text naming something
// that does not exist (a column, a table, a function): format has one verb for it, %q or %s.
// The log form says <identifier> instead (Error.LogMsg), since an unquoted value (WHERE
// origin = ORD) reads as an identifier.
func quoting(code Code, sqlstate, format, ident string) *Error {
	return &Error{Code: code, SQLState: sqlstate, Msg: fmt.Sprintf(format, ident),
		LogMsg: strings.NewReplacer("%q", "<identifier>", "%s", "<identifier>").Replace(format)}
}

// undefinedColumn is PostgreSQL's undefined_column (42703): column "x" does not exist.
func undefinedColumn(name string) *Error {
	return quoting(InvalidArgument, "42703", "column %q does not exist", name)
}

// missingFromEntry is PostgreSQL's undefined_table (42P01) for a qualifier naming no FROM
// item.
func missingFromEntry(qual string) *Error {
	return quoting(InvalidArgument, "42P01", "missing FROM-clause entry for table %q", qual)
}

// unimplemented names an unsupported construct: "<construct> is not supported".
func unimplemented(construct string) *Error {
	return &Error{Code: Unimplemented, SQLState: "0A000", Msg: construct + " is not supported"}
}

// unimplementedAre names an unsupported construct in the plural: "<constructs> are not
// supported".
func unimplementedAre(constructs string) *Error {
	return &Error{Code: Unimplemented, SQLState: "0A000", Msg: constructs + " are not supported"}
}

// Pulpitum's routed-predicate planning errors for an empty route (docs/pulpitum-v4.md §5.3).
// flightsrv no longer returns them: an empty range and contradictory partition pins answer no
// rows, as PostgreSQL does (an Empty route); they remain for callers matching them.
var (
	// ErrInvalidTimestampRange: the lower bound is not before the upper bound (start ≥ end).
	//
	// Deprecated: such a read has an Empty route and answers no rows.
	ErrInvalidTimestampRange = &Error{Code: InvalidArgument, Msg: "timestamp range is empty: start must be before end"}
	// ErrConflictingShardEquality: partition equalities and IN lists with no value in common.
	//
	// Deprecated: such a read has an Empty route and answers no rows.
	ErrConflictingShardEquality = &Error{Code: InvalidArgument, Msg: "conflicting partition column equalities"}
)

// MaxSQLBytes bounds the SQL text of one statement (1 MiB): every supported query is a few
// hundred bytes, and the parse tree of a huge literal costs many times its size.
const MaxSQLBytes = 1 << 20

// Literal and statement errors outside the reference's list (InvalidArgument).
var (
	// ErrInvalidTimestampLiteral: a timestamp bound that is not a finite date/time literal
	// (see ParseTimestamp for the accepted forms).
	ErrInvalidTimestampLiteral = &Error{Code: InvalidArgument, Msg: "invalid timestamp literal"}
	// ErrTimestampOutOfRange: a timestamp bound outside the nanosecond range of
	// timestamp[ns] (1677-09-21 to 2262-04-11 UTC), PostgreSQL's SQLSTATE for a timestamp out
	// of range (22008; PostgreSQL's own range is wider: date '2300-01-01'::timestamp answers
	// there).
	ErrTimestampOutOfRange = &Error{Code: InvalidArgument, SQLState: "22008", Msg: "timestamp is outside the nanosecond range (1677-09-21 to 2262-04-11)"}
	// ErrNegativeLimit: LIMIT below zero.
	ErrNegativeLimit = &Error{Code: InvalidArgument, Msg: "LIMIT must not be negative", SQLState: "2201W"}
	// ErrMixedPlaceholders: a statement using both `?` and `$n` placeholders.
	ErrMixedPlaceholders = &Error{Code: InvalidArgument, Msg: "cannot mix ? and $n placeholders"}
	// ErrEmptyQuery: SQL text holding no statement.
	ErrEmptyQuery = &Error{Code: InvalidArgument, Msg: "empty query"}
	// ErrNulInQuery: SQL text containing a NUL byte (PostgreSQL's parser would silently stop
	// there and run a truncated statement).
	ErrNulInQuery = &Error{Code: InvalidArgument, Msg: "SQL text contains a NUL byte"}
	// ErrInvalidUTF8Query: SQL text that is not valid UTF-8.
	ErrInvalidUTF8Query = &Error{Code: InvalidArgument, Msg: "SQL text is not valid UTF-8"}
	// ErrQueryTooLong: SQL text longer than MaxSQLBytes.
	ErrQueryTooLong = &Error{Code: InvalidArgument, Msg: "SQL text is longer than 1 MiB"}
	// ErrInvalidPlan: Substrait plan bytes that do not decode, or a plan that is internally
	// inconsistent. Refusals return it with the reason appended ("invalid Substrait plan:
	// <reason>"), which errors.Is matches.
	ErrInvalidPlan = &Error{Code: InvalidArgument, Msg: "invalid Substrait plan"}
)
