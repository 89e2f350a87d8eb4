package e2e

import (
	"context"
	"errors"
	"math/big"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// numericText writes row i of a as PostgreSQL's text output would write the value: a
// decimal128 with every digit of its scale (PostgreSQL's numeric_out), booleans as true and
// false, integers in decimal, floats in the shortest form that reads back (PostgreSQL's
// float8out with extra_float_digits 1, the default); NULL as "NULL". kind is the type's
// PostgreSQL name, for the result-type check.
func numericText(t *testing.T, a arrow.Array, i int) (text, kind string) {
	t.Helper()
	kind = map[arrow.Type]string{arrow.DECIMAL128: "numeric", arrow.BOOL: "boolean", arrow.INT16: "smallint",
		arrow.INT32: "integer", arrow.INT64: "bigint", arrow.FLOAT64: "double precision", arrow.STRING: "text"}[a.DataType().ID()]
	if a.IsNull(i) {
		return "NULL", kind
	}
	switch v := a.(type) {
	case *array.Decimal128:
		scale := int(v.DataType().(*arrow.Decimal128Type).Scale)
		bi := v.Value(i).BigInt()
		neg := bi.Sign() < 0
		digits := new(big.Int).Abs(bi).String()
		if scale > 0 {
			if len(digits) <= scale {
				digits = strings.Repeat("0", scale-len(digits)+1) + digits
			}
			digits = digits[:len(digits)-scale] + "." + digits[len(digits)-scale:]
		}
		if neg {
			digits = "-" + digits
		}
		return digits, kind
	case *array.Boolean:
		return strconv.FormatBool(v.Value(i)), kind
	case *array.Int16:
		return strconv.FormatInt(int64(v.Value(i)), 10), kind
	case *array.Int32:
		return strconv.FormatInt(int64(v.Value(i)), 10), kind
	case *array.Int64:
		return strconv.FormatInt(v.Value(i), 10), kind
	case *array.Float64:
		return strconv.FormatFloat(v.Value(i), 'g', -1, 64), kind
	case *array.String:
		return v.Value(i), kind
	}
	t.Fatalf("type %s in a numeric result", a.DataType())
	return "", ""
}

// pgTexts runs q on PostgreSQL and returns every row's values as text (::text of each column
// is what the test compares) with the columns' type names.
func pgTexts(t *testing.T, ctx context.Context, pg *pgx.Conn, q string, args ...any) ([][]string, []string) {
	t.Helper()
	rows, err := pg.Query(ctx, q, append([]any{pgx.QueryExecModeSimpleProtocol}, args...)...)
	if err != nil {
		t.Fatalf("PostgreSQL %s: %v", q, err)
	}
	defer rows.Close()
	var kinds []string
	for _, f := range rows.FieldDescriptions() {
		kinds = append(kinds, map[uint32]string{1700: "numeric", 16: "boolean", 21: "smallint", 23: "integer", 20: "bigint", 701: "double precision", 25: "text"}[f.DataTypeOID])
	}
	var out [][]string
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			t.Fatal(err)
		}
		row := make([]string, len(vals))
		raw := rows.RawValues()
		for j := range vals {
			if raw[j] == nil {
				row[j] = "NULL"
				continue
			}
			switch rows.FieldDescriptions()[j].DataTypeOID {
			case 16:
				row[j] = strconv.FormatBool(vals[j].(bool))
			case 701:
				row[j] = strconv.FormatFloat(vals[j].(float64), 'g', -1, 64)
			default:
				row[j] = string(raw[j]) // text format: PostgreSQL's own output
			}
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("PostgreSQL %s: %v", q, err)
	}
	return out, kinds
}

// compareNumericRows runs q through flightsrv and compares every value's text and type with
// PostgreSQL's (want, kinds: pgTexts), row by row; it returns the number of rows compared.
func compareNumericRows(t *testing.T, ctx context.Context, cl *flightsql.Client, q string, want [][]string, kinds []string) int {
	t.Helper()
	return compareRowsBy(t, ctx, cl, q, want, kinds, func(got, want string) bool { return got == want })
}

// compareNumericValues is compareNumericRows comparing numerics by value, not text: for
// columns whose values PostgreSQL shows at their own display scales (a UNION or VALUES of
// numerics of different scales), which the Arrow column holds at its one scale.
func compareNumericValues(t *testing.T, ctx context.Context, cl *flightsql.Client, q string, want [][]string, kinds []string) int {
	t.Helper()
	return compareRowsBy(t, ctx, cl, q, want, kinds, func(got, want string) bool { return sameNumericValue(got, want, "numeric") })
}

func compareRowsBy(t *testing.T, ctx context.Context, cl *flightsql.Client, q string, want [][]string, kinds []string, eq func(got, want string) bool) int {
	t.Helper()
	res, err := run(ctx, cl, q)
	if err != nil {
		t.Errorf("%.80s: %v", q, err)
		return 0
	}
	defer res.release()
	row := 0
	for _, rec := range res.recs {
		for i := range int(rec.NumRows()) {
			for c := range int(rec.NumCols()) {
				got, kind := numericText(t, rec.Column(c), i)
				if row >= len(want) || !eq(got, want[row][c]) || kind != kinds[c] {
					t.Errorf("%.80s, row %d column %d: %s (%s), PostgreSQL %v %v", q, row, c, got, kind, want[min(row, len(want)-1)], kinds)
				}
			}
			row++
		}
	}
	if row != len(want) {
		t.Errorf("%.80s: %d rows, PostgreSQL %d", q, row, len(want))
	}
	return row
}

// numericConstants are table-less numeric expressions, each compared with PostgreSQL's answer.
var numericConstants = []string{
	"5 % 1.5", "-7.25 % 2", "mod(10, 3.3)", "mod(-0.5, 0.3)::text", "7 % 2.50", "mod(1.5, 7)", "(1e20 + 0.5) % 3",
	"0.1 + 0.2", "0.1 + 0.2 = 0.3", "1.50", "1e2", "1.5e-3", "-0.0", "0.000", "2.5 * 2.5", "1.1 - 2.25", "-1.25",
	"-(1.25)", "10 + 0.5", "3 * 1.25", "0.001 * 0.001", "99999999999999999999.99 + 0.01",
	"12345678901234567890.123456789 * 10", "-12345678901234567890 - 0.5",
	"round(2.5)", "round(-2.5)", "round(1.2345, 2)", "round(-1.2345, 3)", "round(1234.5, -2)", "round(5, 2)",
	"round(0.5)", "round(1.5, 3)", "round(-0.004, 2)",
	"trunc(1.25, 1)", "trunc(-1.99)", "trunc(-1.99, 1)", "ceil(2.1)", "ceil(-2.1)", "ceiling(2.0)", "floor(-2.1)", "floor(2.9)",
	"abs(-1.50)", "abs(2.25)",
	"2.5::int", "(-2.5)::int", "1.5::float8", "0.1::float8 + 0.2::float8", "1.5 + 1.5::float8", "0.5 * 3::float8",
	"12.345::numeric(5,2)", "12.345::decimal(10,1)", "'1.005'::numeric(10,2)", "'  -3.5e1 '::numeric", "'0.10'::numeric",
	"7::numeric", "7::numeric(5,2)", "0.125::numeric(10,2)", "(-0.125)::numeric(10,2)", "CAST(2.5 AS numeric(3))",
	"1.5 < 2", "1.50 = 1.5", "2 > 1.99", "1.5 <> 1.50", "2.0 >= 2", "-1.5 <= -1.5", "3 * 0.1 = 0.3",
	"123.456::text", "(-0.5)::text", "1e2::text", "(0.1 + 0.2)::text", "round(2.345, 2)::text",
	"(1.25 * 4)::int", "(1.25 * 4)::bigint",
	"CASE WHEN 1 < 2 THEN 1.5 ELSE 2.0 END", "COALESCE(NULL, 2.50)", "GREATEST(1.5, 2.0, 0.2)", "LEAST(1.5, 2.0, 0.2)",
	// sqrt, exp, ln, log and sign of numerics: PostgreSQL's scales, their text exactly.
	"sqrt(2.0)::text", "sqrt(0.0)::text", "sqrt(10000000000.00)::text", "sqrt(0.0001)::text", "sqrt(123.456)::text", "sqrt(4.00)::text", "sqrt(0.5)::text",
	"exp(1.0)::text", "exp(0.5)::text", "exp(-2.5)::text", "exp(10.0)::text", "exp(0.001)::text", "exp(0.0)::text", "exp(30.25)::text",
	"ln(2.5)::text", "ln(10.0)::text", "ln(1.05)::text", "ln(0.5)::text", "ln(1.0)::text", "ln(12345678.9)::text", "ln(0.95)::text", "ln(1.1)::text", "ln(0.9)::text", "ln(1.0001)::text",
	"log(2, 8)::text", "log(2.0, 8)::text", "log(10, 1000)::text", "log(100.0)::text", "log(0.001)::text", "log(1.5, 7.25)::text", "log(3, 100000000000000000000)::text", "log(7, 49)::text",
	"log(1.1)::text", "log(2.5, 2.5)::text", "log('4', '64')::text", "log(12345.678)::text",
	"sign(-1.5)::text", "sign(0.0)::text", "sign(2.25)::text", "(sign(-1.5) * 2.5)::text", "(sqrt(2.0) * 2)::text", "round(ln(2.0), 3)", "ln(2.0) > 0.69",
	// power and ^ of numerics: power_var_int's scale for integer exponents, power_var's for others.
	"power(2.0, 3)::text", "(2.0 ^ 3)::text", "power(2, 0.5)::text", "(2 ^ 0.5)::text", "power(1.5, -2)::text", "power(10.0, -3)::text", "power(0.0, 0)::text",
	"power(0.0, 1.5)::text", "power(-2.0, 3)::text", "power(-2.5, 2)::text", "power(9.0, 0.5)::text", "power(1.0001, 10000)::text", "power(2.5, 10)::text",
	"power(7, 2.0)::text", "pow(1.1, 10)::text", "power(12.34, 1.5)::text", "power(0.5, 0.25)::text", "2 ^ 10", "(2.0 ^ 3 ^ 2)::text", "power(100.0, 2)::text",
	"power(0.001, 3)::text", "power(3.7, -1)::text", "power(123.456, 0.1)::text", "power(-1.5, -3)::text", "power(10, 3.0)::text", "power(2.0, 50)::text", "power(0.5, 0)::text",
	"trunc(5, 1)", "trunc(-17, -1)", "trunc('1.55', 1)", "round('2.345', 2)", "round(7, 2)",
	"round(1.0 / 3, 4)", "round(2 / 3.0, 20)", "round(10 / 4.0)", "trunc(-7 / 2.0)", "floor(7 / 2.0)", "ceil(-7 / 2.0)",
	"round(1 / 7.0, 2)", "(1 / 3.0)::numeric(10,5)", "round(100.0 / 3, 2)", "round(1e20 / 3, 2)", "round(0.00001 / 3, 30)",
	"round(-5.5 / 2, 0)", "round(123456789.123 / 0.0007, 3)", "floor(2.99999999999999999999 / 1)", "round(0.5 / 7, 36)",
	"CAST(7 * 100.0 / 9 AS numeric(12,4))",
	// Directed roundings of values whose every digit lies below the kept place (trial24's D1).
	"floor(-0.05)", "ceil(0.05)", "floor(-0.0001)", "ceil(0.001::numeric(10,5))", "floor(-1.0/20.0)",
	"ceil(-0.05)", "floor(0.05)", "trunc(-0.05)", "round(-0.05)", "round(0.005, 2)", "trunc(-0.0004, 3)",
	"round(-0.0006, 3)", "ceil(-1 / 300.0)", "floor(1 / 300.0)", "(-0.05)::numeric(3,0)",
	"1.5 IN (1.50, 2)", "1.5 BETWEEN 1 AND 2", "NULL::numeric + 1.5", "1.5 + '2.25'",
	// float8out's text: positional below 1e15 and down to 1e-4, exponential outside.
	"1234567::float8::text", "1e15::float8::text", "123456789012345::float8::text", "123456789012345678::float8::text",
	"0.0001::float8::text", "0.00001::float8::text", "(-2.5e-7)::float8::text", "'1e300'::float8::text", "(0.1::float8 * 3)::text",
}

// TestNumericAsPostgres: PostgreSQL's numeric, exactly: decimal literals, numeric(p,s) casts
// from integers, floats and text, + - * and comparisons with integer widening, unary minus,
// round/trunc/ceil/floor/abs, and casts back to integers, floats and text answer what
// PostgreSQL answers, value, scale (its text form) and type (numeric as Arrow decimal128),
// for constants and over the flights' JSON fields in hot and archived buckets; its errors keep
// PostgreSQL's SQLSTATE; what the engine does not compute in numeric is UNIMPLEMENTED.
func TestNumericAsPostgres(t *testing.T) {
	e := newEnv(t)
	cl := dial(t, e.on)
	ctx := context.Background()
	pg := pgUTC(t, ctx, e.url)
	compared := 0
	for _, x := range numericConstants {
		q := "SELECT " + x
		want, kinds := pgTexts(t, ctx, pg, q)
		res, err := run(ctx, cl, q)
		if err != nil {
			t.Errorf("%s: %v", q, err)
			continue
		}
		got, kind := numericText(t, res.recs[0].Column(0), 0)
		if got != want[0][0] || kind != kinds[0] {
			t.Errorf("%s: %s (%s), PostgreSQL %s (%s)", q, got, kind, want[0][0], kinds[0])
		}
		res.release()
		compared++
	}

	// Over the rows: ORD in March (archived) and April (archiving and hot).
	where := " FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-30' AND timestamp < '2001-04-03'"
	var docs []string
	for _, rec := range mustRun(t, cl, "SELECT convert_from(value, 'UTF8')"+where+" ORDER BY timestamp, id").recs {
		for i := range int(rec.NumRows()) {
			docs = append(docs, rec.Column(0).(*array.String).Value(i))
		}
	}
	if len(docs) < 300 {
		t.Fatalf("only %d rows", len(docs))
	}
	overRows := []string{
		"round((value->>'distance')::numeric, 2)",
		"round((value->>'distance')::numeric(10,2) * 1.0375, 2)",
		"round(((value->>'distance')::float8 / 7)::numeric, 2)",
		"round(((value->>'delay')::float8 * 1.1)::numeric, 1)",
		"trunc((value->>'distance')::numeric, -2)",
		"trunc(((value->>'distance')::float8 / 3)::numeric, 3)",
		"(value->>'delay')::numeric(6,1) * 1.05",
		"(value->>'delay')::int * 0.5 + 1.25",
		"(value->>'delay')::int > 2.5",
		"(value->>'delay')::int * 0.25 = 1.5",
		"abs((value->>'delay')::numeric(8,2) - 10.125)",
		"-((value->>'distance')::numeric(10,3))",
		"((value->>'delay')::int * 1.5)::int",
		"((value->>'delay')::int * 1.5)::float8",
		"((value->>'delay')::int * 1.5)::text",
		"ceil((value->>'delay')::int * 0.3)",
		"floor((value->>'delay')::int * 0.3)",
		"round((value->>'delay')::int * 0.35, 1)",
		"(value->>'distance')::numeric(12,4)",
		"(value->>'distance')::int::numeric - 0.001",
		"round((value->>'delay')::int * 100.0 / (value->>'distance')::int, 2)",
		"((value->>'distance')::int / 7.0)::numeric(10,3)",
		"floor((value->>'delay')::int / 10.0)",
		"ceil((value->>'delay')::int / 10.0)",
		"floor(((value->>'delay')::int - -20.0) / 20.0) * 20.0 + -20.0",
		"ceil((value->>'delay')::int / 100.0)",
		"floor((value->>'delay')::int / 1000.0)",
		"round((value->>'delay')::numeric(8,2) / 3, 5)",
		"trunc((value->>'distance')::int / 0.3, 1)",
		"CASE WHEN (value->>'delay')::int > 10 THEN (value->>'delay')::int * 1.5 ELSE 0.2 END",
		// % and mod of numerics: mod_var, the larger scale, the dividend's sign.
		"(value->>'distance')::numeric(10,2) % 7.5",
		"mod((value->>'delay')::int * 1.25, 3)",
		"(value->>'delay')::int % 2.75::numeric(6,3)",
		"mod(-(value->>'distance')::numeric(10,1), 0.7)::text",
		"(value->>'delay')::numeric(8,2) % NULLIF((value->>'delay')::int % 4, 0)",
		// sqrt, exp, ln, log of numerics: each value at its own display scale.
		"sqrt((value->>'distance')::numeric(10,2))::text, ln((value->>'distance')::int * 1.0)::text, log((value->>'distance')::numeric(10,1))::text",
		"exp((value->>'delay')::int * 0.01)::text, log(2, (value->>'distance')::int)::text, sign((value->>'delay')::numeric(8,2))::text",
		"power((value->>'distance')::numeric(10,1), 0.5)::text, ((value->>'delay')::int * 0.1 ^ 2)::text, power(1.01, (value->>'delay')::int % 50)::text",
	}
	for _, x := range overRows {
		want, kinds := pgTexts(t, ctx, pg, "SELECT "+x+" FROM unnest($1::json[]) WITH ORDINALITY AS t(value, n) ORDER BY n", docs)
		compared += compareNumericRows(t, ctx, cl, "SELECT "+x+where+" ORDER BY timestamp, id", want, kinds)
	}
	// avg of numerics of one scale: numeric_avg's exact sum over the count (numeric_div), its
	// text at PostgreSQL's display scale (the Arrow column holds it at scale 20).
	for _, x := range []string{
		"avg((value->>'delay')::numeric(8,2))::text, count((value->>'delay')::numeric(8,2))",
		"avg((value->>'distance')::int * 0.001)::text, avg((value->>'distance')::int * 1.5)::text",
		"(avg((value->>'delay')::numeric(9,4)) FILTER (WHERE (value->>'delay')::int < 0))::text",
		"avg((value->>'delay')::numeric(8,2)) FILTER (WHERE (value->>'delay')::int > 100000)",
		"round(avg((value->>'distance')::numeric(10,1)), 3), avg(1.25)::text, (avg(2.5) * 2)::text, (avg(0.5) + 1)::text",
		// text and double precision cast to numeric without a scale: each value's own scale.
		"avg((value->>'delay')::numeric)::text, sum((value->>'distance')::numeric)::text, count(*)",
		"avg(((value->>'delay')::float8 / 8)::numeric)::text, sum(((value->>'distance')::float8 * 0.1)::numeric)::text",
		"(avg((value->>'delay')::numeric) FILTER (WHERE (value->>'delay')::int > 5) / 2)::text, round(avg((value->>'distance')::numeric), 2)",
		// DISTINCT of numerics: distinct values (1.5 and 1.50 are one), the exact sum of them,
		// numeric_avg's quotient of the two.
		"count(DISTINCT (value->>'delay')::numeric(8,2)), sum(DISTINCT (value->>'delay')::int * 0.5), avg(DISTINCT (value->>'delay')::numeric(8,2))::text, count(DISTINCT 1.5)",
		"count(DISTINCT CASE WHEN (value->>'delay')::int > 0 THEN 1.5 ELSE 1.50 END), sum(DISTINCT (value->>'distance')::int * 0.001) FILTER (WHERE (value->>'delay')::int > 0), " +
			"(avg(DISTINCT (value->>'distance')::int * 0.25) FILTER (WHERE (value->>'delay')::int < 10))::text, avg(DISTINCT (value->>'delay')::int * 0.1)::text",
	} {
		want, kinds := pgTexts(t, ctx, pg, "SELECT "+x+" FROM unnest($1::json[]) AS t(value)", docs)
		compared += compareNumericRows(t, ctx, cl, "SELECT "+x+where, want, kinds)
	}
	// UNION and VALUES of numerics of different scales: PostgreSQL's values (each at its own
	// display scale there, at the column's larger scale here), with integers, NULLs, DISTINCT,
	// ORDER BY and arithmetic above them.
	for _, q := range []string{
		"SELECT 1.5 UNION ALL SELECT 2.25 UNION ALL SELECT 3",
		"SELECT x, x * 2, x + 0.001 FROM (SELECT 1.5 AS x UNION SELECT 1.50 UNION SELECT NULL::int UNION SELECT -7) t ORDER BY x NULLS FIRST",
		"SELECT column1, column2 FROM (VALUES (1, 'a'), (2.5, 'b'), (0.125, 'c'), (NULL, 'd')) v ORDER BY column1",
		"SELECT d, n FROM (SELECT (value->>'delay')::int AS d, 1 AS n" + where + " UNION ALL SELECT (value->>'delay')::numeric(8,2) / 4, 2" + where + ") t ORDER BY d, n",
		"SELECT (value->>'distance')::int % 3.5 AS m" + where + " UNION SELECT (value->>'distance')::int % 7" + where + " ORDER BY 1",
	} {
		pgq := strings.ReplaceAll(q, where, " FROM unnest($1::json[]) AS t(value)")
		var args []any
		if pgq != q {
			args = append(args, docs)
		}
		want, kinds := pgTexts(t, ctx, pg, pgq, args...)
		if compareNumericValues(t, ctx, cl, q, want, kinds) == 0 {
			t.Errorf("%.60s: no rows", q)
		}
	}
	// Ordered and limited by a numeric (the sort's comparison of decimal128).
	for _, x := range []string{
		"SELECT id, round((value->>'distance')::int * 1.1, 1) AS m FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-30' AND timestamp < '2001-04-03' ORDER BY m DESC, id LIMIT 25",
		"SELECT id, (value->>'delay')::int * 0.5 AS h FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-30' AND timestamp < '2001-04-03' ORDER BY h, id DESC LIMIT 40",
	} {
		pgq := strings.Replace(strings.Replace(x, "FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-30' AND timestamp < '2001-04-03'", "FROM unnest($1::json[]) WITH ORDINALITY AS t(value, n) JOIN (SELECT n, id FROM unnest($2::text[]) WITH ORDINALITY AS u(id, n)) i USING (n)", 1), "SELECT DISTINCT round", "SELECT DISTINCT round", 1)
		var ids []string
		for _, rec := range mustRun(t, cl, "SELECT id"+where+" ORDER BY timestamp, id").recs {
			for i := range int(rec.NumRows()) {
				ids = append(ids, rec.Column(0).(*array.String).Value(i))
			}
		}
		want, kinds := pgTexts(t, ctx, pg, pgq, docs, ids)
		if compareNumericRows(t, ctx, cl, x, want, kinds) == 0 {
			t.Errorf("%.60s: no rows", x)
		}
	}
	t.Logf("%d numeric values compared with PostgreSQL's", compared)

	// PostgreSQL's errors, with its SQLSTATE and message.
	unnest := " FROM unnest($1::json[]) AS t(value)"
	for _, c := range []struct{ expr, from string }{
		{"power(0.0, -1)", ""}, {"power(-8.0, 0.5)", ""}, {"(-8.0) ^ 1.5", ""},
		{"sqrt(-1.0)", ""}, {"ln(0.0)", ""}, {"ln(-1.5)", ""}, {"log(0, 5)", ""}, {"log(2, -5.5)", ""}, {"log(1, 10)", ""},
		{"123.45::numeric(4,2)", ""}, {"'abc'::numeric", ""}, {"'1.5x'::numeric(5,1)", ""}, {"99999.5::numeric(5)", ""},
		{"3000000000.5::int", ""}, {"round(1.0 / 0, 2)", ""}, {"5.5 % 0", ""}, {"mod((value->>'delay')::numeric(8,2), 0.00)", where}, {"(10.0 / 3)::numeric(1,1)", ""}, {"(1e20 * 1e10)::int", ""},
		{"(value->>'destination')::numeric(5,1)", where}, {"(value->>'distance')::numeric(3,1)", where},
		{"round((value->>'destination')::numeric, 1)", where},
		// smallint's and the integers' overflows (arrow-go's checked add and subtract missed
		// the negative overflow of add and the positive one of subtract).
		{"32767::smallint + 1::smallint", ""}, {"(-32768)::smallint - 1::smallint", ""}, {"-((-32768)::smallint)", ""},
		{"40000::smallint", ""}, {"(-2147483648)::int + (-1)", ""}, {"2147483647 - (-1)", ""},
		// A negative integer constant is typed after its sign as PostgreSQL's grammar types it:
		// -2147483648 is an integer, whose doubling overflows.
		{"-2147483648 * 2", ""}, {"-9223372036854775808 - 1", ""},
		{"(-9223372036854775807)::bigint + (-5)::bigint", ""}, {"5::bigint - (-9223372036854775807)::bigint", ""},
		{"(value->>'distance')::smallint * 100::smallint", where}, {"(value->>'delay')::smallint - 32767::smallint", where},
	} {
		var pgErr *pgconn.PgError
		var err error
		if c.from == "" {
			_, err = pg.Exec(ctx, "SELECT "+c.expr)
		} else {
			_, err = pg.Exec(ctx, "SELECT "+c.expr+unnest, docs)
		}
		if !errors.As(err, &pgErr) {
			t.Fatalf("PostgreSQL %s: %v", c.expr, err)
		}
		_, err = run(ctx, cl, "SELECT "+c.expr+c.from)
		st := status.Convert(err)
		if st.Code() != codes.InvalidArgument || !strings.HasPrefix(pgErr.Message, st.Message()) {
			t.Errorf("%s: %v, want INVALID_ARGUMENT %q (%s)", c.expr, err, pgErr.Message, pgErr.Code)
		}
	}
	// What is not computed in numeric is refused by name.
	for _, q := range []string{
		"SELECT 1 / 30000.0", "SELECT exp(-80.5)", "SELECT exp(-20.5)",
		"SELECT sqrt(0.0000000000001)", "SELECT stddev(g * 0.001) FROM generate_series(1, 10) g",
		"SELECT avg(DISTINCT CASE WHEN (value->>'delay')::int > 0 THEN 1.5 ELSE 2 END)" + where,
		"SELECT round(1.5, (value->>'delay')::int)" + where,
		// (UNION, UNION ALL, VALUES and EXCEPT answer: TestSetOperationScalesAsPostgres.)
		"SELECT 1.5 INTERSECT SELECT 1.50", "SELECT 2 INTERSECT ALL SELECT 2.5",
		"SELECT avg(x::numeric) FROM (VALUES ('0.12345678901234567')) v(x)", "SELECT sum(DISTINCT x::numeric)::text FROM (VALUES ('1.5')) v(x)",
		"SELECT avg(CASE WHEN (value->>'delay')::int > 0 THEN 1.5 ELSE 2 END) OVER ()" + where,
	} {
		if _, err := run(ctx, cl, q); status.Code(err) != codes.Unimplemented {
			t.Errorf("%.80s: %v, want UNIMPLEMENTED", q, err)
		}
	}
}
