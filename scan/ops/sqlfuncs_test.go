package ops_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/extensions"
	"github.com/substrait-io/substrait-go/v8/types"

	"github.com/flightsrv/flightsrv/scan/ops"
)

// The kernels of ops.URNPostgres over a small batch. The expected values are PostgreSQL 15's
// answers to the same expressions (and DuckDB's, where it has the function: the SQL golden
// corpus of testdata/sql runs them end to end against DuckDB).

var sqlfnSchema = arrow.NewSchema([]arrow.Field{
	{Name: "doc", Type: arrow.BinaryTypes.Binary, Nullable: true},
	{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "n", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}, Nullable: true},
}, nil)

var sqlfnRows = []struct {
	doc *string
	s   *string
	n   *int64
	ts  *time.Time
}{
	{strp(`{"a":"x\"y","b":12.50,"c":null,"obj":{"k":[1,"two"]},"arr":[10,20,30]}`), strp("Héllo_World%"), i64p(4), tsp("2001-03-04T05:06:07.123456Z")},
	{strp(`[1,{"a":true}]`), strp("abc"), i64p(0), tsp("2000-12-31T23:59:59Z")},
	{strp(`{"a.b":1,"a":{"b":2}}`), strp(""), i64p(-3), tsp("2001-01-07T00:00:00Z")},
	{nil, nil, nil, nil},
}

func strp(s string) *string { return &s }
func i64p(n int64) *int64   { return &n }
func tsp(s string) *time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return &t
}

func sqlfnBatch(mem memory.Allocator) arrow.RecordBatch {
	b := array.NewRecordBuilder(mem, sqlfnSchema)
	defer b.Release()
	for _, r := range sqlfnRows {
		if r.doc == nil {
			b.Field(0).AppendNull()
		} else {
			b.Field(0).(*array.BinaryBuilder).Append([]byte(*r.doc))
		}
		if r.s == nil {
			b.Field(1).AppendNull()
		} else {
			b.Field(1).(*array.StringBuilder).Append(*r.s)
		}
		if r.n == nil {
			b.Field(2).AppendNull()
		} else {
			b.Field(2).(*array.Int64Builder).Append(*r.n)
		}
		if r.ts == nil {
			b.Field(3).AppendNull()
		} else {
			b.Field(3).(*array.TimestampBuilder).Append(arrow.Timestamp(r.ts.UnixNano()))
		}
	}
	return b.NewRecordBatch()
}

// sqlfnReg is shared by the parallel tests: building a function writes its anchor into the
// registry, so building and compiling hold sqlfnMu.
var (
	sqlfnReg = expr.NewEmptyExtensionRegistry(extensions.GetDefaultCollectionWithNoError())
	sqlfnMu  sync.Mutex
)

func col(i int) expr.Expression {
	rt := types.NewRecordTypeFromTypes([]types.Type{
		&types.BinaryType{Nullability: types.NullabilityNullable},
		&types.StringType{Nullability: types.NullabilityNullable},
		&types.Int64Type{Nullability: types.NullabilityNullable},
		&types.PrecisionTimestampTzType{PrecisionTimestampType: types.PrecisionTimestampType{Precision: types.PrecisionNanoSeconds, Nullability: types.NullabilityNullable}},
	})
	r, err := expr.NewRootFieldRef(expr.NewStructFieldRef(int32(i)), rt)
	if err != nil {
		panic(err)
	}
	return r
}

func str(s string) expr.Expression { return expr.NewPrimitiveLiteral(s, false) }
func num(n int64) expr.Expression  { return expr.NewPrimitiveLiteral(n, false) }

var (
	strOut  = &types.StringType{Nullability: types.NullabilityNullable}
	binOut  = &types.BinaryType{Nullability: types.NullabilityNullable}
	boolOut = &types.BooleanType{Nullability: types.NullabilityNullable}
	i64Out  = &types.Int64Type{Nullability: types.NullabilityNullable}
)

func own(name string, out types.Type, args ...types.FuncArg) expr.Expression {
	sqlfnMu.Lock()
	defer sqlfnMu.Unlock()
	f, err := expr.NewCustomScalarFunc(sqlfnReg, extensions.NewScalarFuncVariant(ops.OwnFunctionID(name)), out, nil, args...)
	if err != nil {
		panic(err)
	}
	return f
}

func std(urn, name string, out types.Type, args ...types.FuncArg) expr.Expression {
	sqlfnMu.Lock()
	defer sqlfnMu.Unlock()
	f, err := expr.NewCustomScalarFunc(sqlfnReg, extensions.NewScalarFuncVariant(extensions.ID{URN: extensions.SubstraitDefaultURNPrefix + urn, Name: name}), out, nil, args...)
	if err != nil {
		panic(err)
	}
	return f
}

// evalSQLFn evaluates e over the batch and returns its values as strings ("NULL" for nulls).
func evalSQLFn(t *testing.T, e expr.Expression) ([]string, error) {
	t.Helper()
	mem := newMem(t, 0)
	batch := sqlfnBatch(mem)
	defer batch.Release()
	sqlfnMu.Lock()
	x, err := ops.Compile(e, sqlfnSchema, sqlfnReg)
	sqlfnMu.Unlock()
	if err != nil {
		return nil, err
	}
	out, err := x.Eval(context.Background(), batch, mem)
	if err != nil {
		return nil, err
	}
	defer out.Release()
	vals := make([]string, out.Len())
	for i := range vals {
		switch {
		case out.IsNull(i):
			vals[i] = "NULL"
		case out.DataType().ID() == arrow.BINARY:
			vals[i] = string(out.(*array.Binary).Value(i))
		default:
			vals[i] = out.ValueStr(i)
		}
	}
	return vals, nil
}

func TestSQLFunctions(t *testing.T) {
	t.Parallel()
	n := col(2)
	nonZero := std("functions_comparison", "not_equal", boolOut, n, num(0))
	div := std("functions_arithmetic", "divide", i64Out, num(100), n)
	caseDiv, err := expr.NewIfThen(expr.IfThenPair{If: nonZero, Then: div}, expr.NewPrimitiveLiteral(int64(-1), true))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		e    expr.Expression
		want []string
	}{
		// doc ->> 'a': strings unquoted, other values as JSON text, JSON null is NULL
		{"->> string", own("json_get_text", strOut, col(0), str("a")), []string{`x"y`, "NULL", `{"b":2}`, "NULL"}},
		{"->> number keeps its text", own("json_get_text", strOut, col(0), str("b")), []string{"12.50", "NULL", "NULL", "NULL"}},
		{"->> JSON null", own("json_get_text", strOut, col(0), str("c")), []string{"NULL", "NULL", "NULL", "NULL"}},
		{"->> key with a dot is a key", own("json_get_text", strOut, col(0), str("a.b")), []string{"NULL", "NULL", "1", "NULL"}},
		{"-> object", own("json_get", binOut, col(0), str("obj")), []string{`{"k":[1,"two"]}`, "NULL", "NULL", "NULL"}},
		{"-> array index", own("json_get", binOut, col(0), num(1)), []string{"NULL", `{"a":true}`, "NULL", "NULL"}},
		{"->> negative index", own("json_get_text", strOut, own("json_get", binOut, col(0), str("arr")), num(-1)), []string{"30", "NULL", "NULL", "NULL"}},
		{"#>> path", own("json_path_text", strOut, col(0), str("obj"), str("k"), str("1")), []string{"two", "NULL", "NULL", "NULL"}},
		{"#>> path through an array", own("json_path_text", strOut, col(0), str("1"), str("a")), []string{"NULL", "true", "NULL", "NULL"}},
		{"#> path", own("json_path", binOut, col(0), str("a"), str("b")), []string{"NULL", "NULL", "2", "NULL"}},
		// LIKE: % and _ wildcards, \ escapes, anchored; ILIKE folds case
		{"like", own("like", boolOut, col(1), str("H%o\\_W%\\%")), []string{"true", "false", "false", "NULL"}},
		{"like one character", own("like", boolOut, col(1), str("a_c")), []string{"false", "true", "false", "NULL"}},
		{"like empty", own("like", boolOut, col(1), str("")), []string{"false", "false", "true", "NULL"}},
		{"ilike", own("ilike", boolOut, col(1), str("héllo%")), []string{"true", "false", "false", "NULL"}},
		// strings
		{"lower", own("lower", strOut, col(1)), []string{"héllo_world%", "abc", "", "NULL"}},
		{"upper", own("upper", strOut, col(1)), []string{"HÉLLO_WORLD%", "ABC", "", "NULL"}},
		{"char_length counts characters", own("char_length", i64Out, col(1)), []string{"12", "3", "0", "NULL"}},
		{"substring", own("substring", strOut, col(1), num(2), num(3)), []string{"éll", "bc", "", "NULL"}},
		{"substring from 0", own("substring", strOut, col(1), num(0), num(3)), []string{"Hé", "ab", "", "NULL"}},
		{"substring from n", own("substring", strOut, col(1), n), []string{"lo_World%", "abc", "", "NULL"}},
		{"replace", own("replace", strOut, col(1), str("l"), str("L")), []string{"HéLLo_WorLd%", "abc", "", "NULL"}},
		{"starts_with", own("starts_with", boolOut, col(1), str("ab")), []string{"false", "true", "false", "NULL"}},
		{"btrim", own("btrim", strOut, col(1), str("H%a")), []string{"éllo_World", "bc", "", "NULL"}},
		{"concat skips NULL", own("concat", strOut, str("<"), col(1), str(">")), []string{"<Héllo_World%>", "<abc>", "<>", "<>"}},
		{"|| is NULL with a NULL", own("concat_strict", strOut, str("<"), col(1)), []string{"<Héllo_World%", "<abc", "<", "NULL"}},
		// date_part and to_char in UTC
		{"date_part year", own("date_part", i64Out, types.Enum("YEAR"), col(3)), []string{"2001", "2000", "2001", "NULL"}},
		{"date_part dow", own("date_part", i64Out, types.Enum("DOW"), col(3)), []string{"0", "0", "0", "NULL"}},
		{"date_part isodow", own("date_part", i64Out, types.Enum("ISODOW"), col(3)), []string{"7", "7", "7", "NULL"}},
		{"date_part week", own("date_part", i64Out, types.Enum("WEEK"), col(3)), []string{"9", "52", "1", "NULL"}},
		{"date_part doy", own("date_part", i64Out, types.Enum("DOY"), col(3)), []string{"63", "366", "7", "NULL"}},
		// Seconds and milliseconds keep the microseconds, as PostgreSQL's extract does.
		{"date_part millisecond", own("date_part", &types.Float64Type{Nullability: types.NullabilityNullable}, types.Enum("MILLISECOND"), col(3)), []string{"7123.456", "59000", "0", "NULL"}},
		{"date_part second", own("date_part", &types.Float64Type{Nullability: types.NullabilityNullable}, types.Enum("SECOND"), col(3)), []string{"7.123456", "59", "0", "NULL"}},
		{"extract epoch", own("extract", &types.DecimalType{Precision: 38, Scale: 6, Nullability: types.NullabilityNullable}, types.Enum("EPOCH"), col(3)), []string{"983682367.123456", "978307199", "978825600", "NULL"}},
		{"extract second", own("extract", &types.DecimalType{Precision: 38, Scale: 6, Nullability: types.NullabilityNullable}, types.Enum("SECOND"), col(3)), []string{"7.123456", "59", "0", "NULL"}},
		{"extract millisecond", own("extract", &types.DecimalType{Precision: 38, Scale: 3, Nullability: types.NullabilityNullable}, types.Enum("MILLISECOND"), col(3)), []string{"7123.456", "59000", "0", "NULL"}},
		{"extract hour", own("extract", &types.DecimalType{Precision: 38, Nullability: types.NullabilityNullable}, types.Enum("HOUR"), col(3)), []string{"5", "23", "0", "NULL"}},
		{"date_part epoch", own("date_part", &types.Float64Type{Nullability: types.NullabilityNullable}, types.Enum("EPOCH"), col(3)), []string{"9.83682367123456e+08", "9.78307199e+08", "9.788256e+08", "NULL"}},
		{"to_char", own("to_char", strOut, col(3), str(`YYYY-MM-DD HH24:MI:SS.US Dy Mon Q "Q"`)), []string{"2001-03-04 05:06:07.123456 Sun Mar 1 Q", "2000-12-31 23:59:59.000000 Sun Dec 4 Q", "2001-01-07 00:00:00.000000 Sun Jan 1 Q", "NULL"}},
		// CASE evaluates a value only on the rows it gives: no division by zero
		{"CASE is lazy", caseDiv, []string{"25", "-1", "-33", "-1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := evalSQLFn(t, tt.e)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Fatalf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestSQLFunctionErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		e        expr.Expression
		want     string
		sqlstate string // a data exception's (*ops.DataError), PostgreSQL's
	}{
		{"invalid JSON", own("json_get_text", strOut, col(1), str("a")), "invalid input syntax for type json", "22P02"},
		{"negative substring length", own("substring", strOut, col(1), num(1), num(-1)), "negative substring length not allowed", "22011"},
		{"LIKE pattern ending in escape", own("like", boolOut, col(1), str("a\\")), "LIKE pattern must not end with escape character", "22025"},
		{"unknown date_part field", own("date_part", i64Out, types.Enum("FORTNIGHT"), col(3)), "not supported", ""},
		{"lower of a number", own("lower", strOut, col(2)), "must be text", ""},
		{"unknown function", own("nosuch", strOut, col(1)), "not supported", ""},
	} {
		_, err := evalSQLFn(t, tc.e)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "Héllo") {
			t.Errorf("%s: error %v quotes a value", tc.name, err)
		}
		var de *ops.DataError
		if got := errors.As(err, &de); got != (tc.sqlstate != "") || (got && de.SQLState() != tc.sqlstate) {
			t.Errorf("%s: error %v (%T), want a data exception %q", tc.name, err, err, tc.sqlstate)
		}
	}
}

func TestToChar(t *testing.T) {
	t.Parallel()
	at := time.Date(2001, 7, 4, 15, 4, 5, 0, time.UTC)
	for format, want := range map[string]string{
		"YYYY-MM-DD":       "2001-07-04",
		"HH12:MI AM":       "03:04 PM",
		"Day, DD Month YY": "Wednesday, 04 July      01",
		"DDD D":            "185 4",
		`"at" HH24"h"`:     "at 15h",
		"MONTH mon DY dy":  "JULY      jul WED wed",
	} {
		if got := ops.ToChar(at, format); got != want {
			t.Errorf("ToChar(%q) = %q, want %q", format, got, want)
		}
	}
}

func TestRoundHalfEven(t *testing.T) {
	t.Parallel()
	// PostgreSQL: 2.5::float8::int = 2, (-2.5)::float8::int = -2, 3.5::float8::int = 4.
	for in, want := range map[float64]string{2.5: "2", -2.5: "-2", 3.5: "4", 0.49: "0"} {
		f := own("round", &types.Float64Type{Nullability: types.NullabilityNullable}, expr.NewPrimitiveLiteral(in, false))
		got, err := evalSQLFn(t, f)
		if err != nil || got[0] != want {
			t.Errorf("round(%v) = %v (%v), want %s", in, got, err, want)
		}
	}
}

// TestDatesBeyondNanoseconds: to_char, date_part, age and timestamp - timestamp read a date
// (date32) as its midnight UTC without going through timestamp[ns], so that dates outside
// 1677-09-21..2262-04-11 answer as PostgreSQL 15 does (its values below); a difference past
// ±292 years is exact; a date PostgreSQL's timestamp cannot hold is its 22008.
func TestDatesBeyondNanoseconds(t *testing.T) {
	t.Parallel()
	date := func(y int, m time.Month, d int) expr.Expression {
		return expr.NewPrimitiveLiteral(types.Date(time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix()/86400), false)
	}
	ivOut := types.NewIntervalCompoundType().WithPrecision(types.PrecisionMicroSeconds).WithNullability(types.NullabilityNullable)
	f64Out := &types.Float64Type{Nullability: types.NullabilityNullable}
	text := func(iv expr.Expression) expr.Expression { return own("interval_text", strOut, iv) }
	four := func(s string) []string { return []string{s, s, s, s} }
	for _, c := range []struct {
		name string
		e    expr.Expression
		want []string
	}{
		{"to_char", own("to_char", strOut, date(1600, 1, 1), str("YYYY-MM-DD Dy")), four("1600-01-01 Sat")},
		{"date_part year BC", own("date_part", i64Out, types.Enum("YEAR"), date(-43, 3, 15)), four("-44")},
		{"date_part century BC", own("date_part", i64Out, types.Enum("CENTURY"), date(-43, 3, 15)), four("-1")},
		{"date_part epoch", own("date_part", f64Out, types.Enum("EPOCH"), date(2300, 1, 1)), four("1.0413792e+10")},
		{"age of dates", text(own("timestamp_age", ivOut, date(2001, 1, 1), date(1600, 1, 1))), four("401 years")},
		{"date - date as timestamps", text(own("timestamp_diff", ivOut, date(2001, 1, 1), date(1700, 1, 1))), four("109938 days")},
		{"timestamp - date", text(own("timestamp_diff", ivOut, col(3), date(1600, 1, 1))),
			[]string{"146525 days 05:06:07.123456", "146462 days 23:59:59", "146469 days", "NULL"}},
		{"date - timestamp", text(own("timestamp_diff", ivOut, date(2300, 1, 1), col(3))),
			[]string{"109144 days 18:53:52.876544", "109207 days 00:00:01", "109201 days", "NULL"}},
		{"age(timestamp, date)", text(own("timestamp_age", ivOut, col(3), date(1600, 1, 1))),
			[]string{"401 years 2 mons 3 days 05:06:07.123456", "400 years 11 mons 30 days 23:59:59", "401 years 6 days", "NULL"}},
	} {
		got, err := evalSQLFn(t, c.e)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	// date '294277-01-01' is past PostgreSQL's timestamp: its date_part and to_char are 22008.
	for _, e := range []expr.Expression{
		own("to_char", strOut, date(294277, 1, 1), str("YYYY")),
		own("date_part", i64Out, types.Enum("YEAR"), date(294277, 1, 1)),
	} {
		var de *ops.DataError
		if _, err := evalSQLFn(t, e); !errors.As(err, &de) || de.Code != "22008" || de.Msg != "date out of range for timestamp" {
			t.Errorf("%v: %v, want 22008 date out of range for timestamp", e, err)
		}
	}
}
