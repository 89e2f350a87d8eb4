package e2e

import (
	"context"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/jackc/pgx/v5"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Issue 18's user trial (BI tools' SQL against PostgreSQL 15 over the same rows): grouping sets
// of several expressions, Superset's late ratio, constant time bounds, and the refusals of
// functions (and, until numparam18, of numeric parameters).

// trial22Where is the flights of the three airports over March and April (archived March, hot
// April), several partitions listed.
const trial22Where = " FROM flights WHERE origin IN ('ORD', 'SFO', 'BOS') AND timestamp >= '2001-03-01' AND timestamp < '2001-05-01'"

// TestGroupingSetsSeveralColumnsAsPostgres: GROUPING SETS whose sets hold several expressions
// ((a, b), ()), by expression and by ordinal, beside a plain key (GROUP BY a, GROUPING SETS
// ((b, c), (c))), a parenthesised GROUP BY (a, b), ROLLUP of a list and GROUPING() of several
// arguments answer PostgreSQL's rows over the same flights.
func TestGroupingSetsSeveralColumnsAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	const d, late = "value->>'destination'", "((value->>'delay')::int > 30)"
	dests := " AND " + d + " IN ('ORD', 'LAX', 'BOS', 'SFO', 'DEN')"
	qs := []string{
		// The trial's reproducer.
		"SELECT origin, " + d + " AS dest, count(*) FROM flights WHERE origin IN ('BOS','SFO') AND timestamp >= '2001-02-01' AND timestamp < '2001-03-01' AND " + d +
			" IN ('ORD','LAX') GROUP BY GROUPING SETS ((origin, " + d + "), ()) ORDER BY 1 NULLS FIRST, 2 NULLS FIRST",
		"SELECT origin, " + d + " AS dest, count(*), sum((value->>'delay')::int), GROUPING(origin, " + d + ") AS g" + trial22Where + dests +
			" GROUP BY GROUPING SETS ((1, 2), ()) ORDER BY 5, 1 NULLS FIRST, 2 NULLS FIRST",
		"SELECT origin, " + d + " AS dest, " + late + " AS late, count(*), GROUPING(origin, " + d + ", " + late + ") AS g" + trial22Where + dests +
			" GROUP BY origin, GROUPING SETS ((" + d + ", " + late + "), (" + late + ")) ORDER BY 5, 1, 2 NULLS FIRST, 3 NULLS FIRST",
		"SELECT origin, " + d + " AS dest, count(*)" + trial22Where + dests + " GROUP BY (origin, " + d + ") ORDER BY 1, 2",
		"SELECT origin, " + d + " AS dest, " + late + " AS late, count(*), GROUPING(" + late + ", origin) AS g" + trial22Where + dests +
			" GROUP BY ROLLUP((origin, " + d + "), " + late + ") ORDER BY 5, 1 NULLS FIRST, 2 NULLS FIRST, 3 NULLS FIRST",
		"SELECT origin, " + d + " AS dest, max((value->>'delay')::int), GROUPING(origin, " + d + ") AS g" + trial22Where + dests +
			" GROUP BY GROUPING SETS ((origin, " + d + "), (origin), ((" + d + ")), ()) HAVING count(*) > 3 ORDER BY 4, 1 NULLS FIRST, 2 NULLS FIRST",
	}
	for _, cl := range clients {
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText, qs...)...)
	}
}

// TestVaryingScaleSumsAsPostgres: sum and avg of a CASE whose branches are numerics of
// different display scales (Superset's SUM(CASE WHEN … THEN 1.0 ELSE 0 END) / COUNT(*)) answer
// PostgreSQL's values, and as text its display scales: the sum's is the largest of the
// group's values' (0 for a group of 0s), the quotient's select_div_scale's of it.
func TestVaryingScaleSumsAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	const c = "CASE WHEN (value->>'delay')::int > 15 THEN 1.0 ELSE 0 END"
	texts := []string{
		"SELECT origin, (SUM(" + c + ") / COUNT(*))::text AS late_ratio, SUM(" + c + ")::text, AVG(" + c + ")::text" + trial22Where + " GROUP BY 1 ORDER BY 1",
		"SELECT g % 4 AS k, sum(CASE WHEN g % 7 = 0 THEN 1.50 ELSE 0 END)::text, avg(CASE WHEN g % 7 = 0 THEN 1.50 ELSE 0 END)::text, " +
			"sum(CASE WHEN g % 5 = 0 THEN 0.125 WHEN g % 3 = 0 THEN 2 END)::text, (sum(CASE WHEN g > 10 THEN 0.5 ELSE 1 END) FILTER (WHERE g % 2 = 0))::text, " +
			"round(sum(CASE WHEN g % 7 = 0 THEN 1.0 ELSE 0 END) * 100.0 / count(*), 2)::text FROM generate_series(1, 30) g GROUP BY 1 ORDER BY 1",
		"SELECT sum(CASE WHEN x > 1 THEN 1.5 ELSE 2 END)::text, avg(CASE WHEN x > 1 THEN 1.5 ELSE 2 END)::text FROM (VALUES (1), (NULL), (1)) v(x)",
	}
	values := []string{
		"SELECT origin, SUM(" + c + ") / COUNT(*) AS late_ratio, AVG(" + c + "), SUM(" + c + ")" + trial22Where + " GROUP BY 1 ORDER BY 1",
	}
	for _, cl := range clients {
		compareTextsAndValues(t, ctx, pg, cl, texts, values)
	}
}

// compareTextsAndValues compares each query of texts with PostgreSQL's rows by their text
// (compareNumericRows), and each of values by numeric value (compareNumericValues), on cl:
// each must answer rows.
func compareTextsAndValues(t *testing.T, ctx context.Context, pg *pgx.Conn, cl namedClient, texts, values []string) {
	t.Helper()
	for _, q := range texts {
		want, kinds := pgTexts(t, ctx, pg, q)
		if compareNumericRows(t, ctx, cl.c, q, want, kinds) == 0 {
			t.Errorf("%s (%s): no rows", q, cl.name)
		}
	}
	for _, q := range values {
		want, kinds := pgTexts(t, ctx, pg, q)
		if compareNumericValues(t, ctx, cl.c, q, want, kinds) == 0 {
			t.Errorf("%s (%s): no rows", q, cl.name)
		}
	}
}

// TestVaryingScaleFromSubqueryAsPostgres: an average (or a CASE of numerics of different
// scales) read from a derived table keeps each row's display scale (the derived table's hidden
// display-scale column): the trial's average of averages, its text, the text of the averages
// themselves, through column aliases, ORDER BY … LIMIT and two levels of derived tables,
// answer PostgreSQL's values and texts; under a join their text is refused (issue 18).
func TestVaryingScaleFromSubqueryAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	const (
		avgs = "(SELECT origin, avg((value->>'delay')::int) AS a" + trial22Where + " GROUP BY origin) t"
		c    = "CASE WHEN (value->>'delay')::int > 15 THEN 1.5 ELSE 2 END"
	)
	texts := []string{
		"SELECT avg(a)::text, sum(a)::text FROM " + avgs,
		"SELECT origin, a::text, (a * 2)::text, round(a, 1)::text FROM " + avgs + " ORDER BY 1",
		"SELECT o, x::text FROM (SELECT origin, avg((value->>'delay')::int)" + trial22Where + " GROUP BY origin ORDER BY 2 DESC LIMIT 2) t(o, x) ORDER BY 1",
		"SELECT avg(b)::text, sum(b)::text FROM (SELECT a AS b, origin FROM " + avgs + ") u",
		"SELECT avg(v)::text, sum(v)::text FROM (SELECT " + c + " AS v" + trial22Where + ") s",
		"SELECT * FROM (SELECT origin, avg((value->>'delay')::int)::text" + trial22Where + " GROUP BY origin) t ORDER BY 1",
		"SELECT a::text, (a / 2)::text, (1 / a)::text FROM (SELECT avg(g) AS a FROM generate_series(1, 3) g) s",
		"SELECT sqrt(a)::text, round(sqrt(a), 3)::text FROM (SELECT avg((value->>'distance')::int) AS a" + trial22Where + ") s",
	}
	values := []string{
		"SELECT avg(a), min(a), max(a), sum(a) FROM " + avgs,
		"SELECT * FROM " + avgs + " ORDER BY 1",
		"SELECT t.* FROM " + avgs + " ORDER BY 1",
	}
	for _, cl := range clients {
		compareTextsAndValues(t, ctx, pg, cl, texts, values)
		// min and max of varying numerics keep one row's display scale, a derived table under a
		// join keeps no display scale column: their text is refused.
		for _, q := range []string{"SELECT max(a)::text FROM " + avgs, "SELECT min(" + c + ")::text" + trial22Where,
			"SELECT t.origin, t.a::text, n FROM " + avgs + " JOIN (SELECT origin, count(*) AS n" + trial22Where + " GROUP BY origin) k ON k.origin = t.origin ORDER BY 1",
			"SELECT s.id, s.v::text FROM (SELECT id, " + c + " AS v" + trial22Where + ") s JOIN (VALUES ('x')) d(k) ON true ORDER BY 1 LIMIT 20"} {
			if _, err := run(ctx, cl.c, q); status.Code(err) != codes.Unimplemented {
				t.Errorf("%s (%s): %v, want a refusal", q, cl.name, err)
			}
		}
		// More column aliases than visible columns: refused (42P10 in PostgreSQL), no panic.
		if _, err := run(ctx, cl.c, "SELECT * FROM "+strings.TrimSuffix(avgs, " t")+" t(o, a, z)"); status.Code(err) != codes.InvalidArgument {
			t.Errorf("too many column aliases (%s): %v", cl.name, err)
		}
	}
}

// TestConstantTimeBoundsAsPostgres: time bounds written as constant expressions — AT TIME
// ZONE of constants (America/Chicago's spring-forward day), timezone(), a date minus days, a
// timestamp plus an interval — route the read and count PostgreSQL's rows; a bound that is
// not constant is refused naming the missing bound.
func TestConstantTimeBoundsAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	qs := []string{
		"SELECT count(*), min(timestamp)::text, max(timestamp)::text FROM flights WHERE origin = 'ORD' AND timestamp >= ('2001-04-01 00:00:00'::timestamp AT TIME ZONE 'America/Chicago') " +
			"AND timestamp < ('2001-04-02 00:00:00'::timestamp AT TIME ZONE 'America/Chicago')",
		"SELECT count(*) FROM flights WHERE origin = 'BOS' AND timestamp >= timezone('America/New_York', TIMESTAMP '2001-03-30 18:00') AND timestamp < TIMESTAMPTZ '2001-04-01 00:00:00+00' + INTERVAL '5 hours'",
		"SELECT count(*) FROM flights WHERE origin = 'SFO' AND timestamp >= DATE '2001-04-01' - 3 AND timestamp < DATE '2001-04-01' + 1",
		"SELECT (timestamp AT TIME ZONE 'America/Chicago')::date::text AS d, count(*) FROM flights WHERE origin = 'ORD' AND timestamp >= ('2001-03-31 00:00'::timestamp AT TIME ZONE 'America/Chicago') " +
			"AND timestamp < ('2001-04-03 00:00'::timestamp AT TIME ZONE 'America/Chicago') GROUP BY 1 ORDER BY 1",
	}
	for _, cl := range clients {
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText, qs...)...)
		refusedAs(t, ctx, cl.c, codes.InvalidArgument, map[string]string{
			"SELECT count(*) FROM flights WHERE origin = 'ORD' AND timestamp >= (value->>'scheduled')::timestamptz AND timestamp < '2001-04-02'": "needs timestamp >= <start>",
		})
	}
}

// TestStringDateJSONFunctionsAsPostgres: concat_ws, md5, translate, make_date, json_typeof
// and width_bucket (of double precision; its numeric form is refused by name) over the
// flights' fields and constants answer PostgreSQL's text (concat and concat_ws write a
// boolean as t or f, its output function's text); make_date of fields naming no day, or of a
// bigint, concat_ws without an argument after the separator and width_bucket's bad counts,
// NaN and infinite bounds are PostgreSQL's errors.
func TestStringDateJSONFunctionsAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	qs := []string{
		"SELECT id, md5(id), md5(value->>'destination'), translate(value->>'destination', 'AEIOU', 'ae'), " +
			"concat_ws('-', origin, value->>'destination', NULL, (value->>'delay')::int, 2.50, (value->>'delay')::int > 0), " +
			"json_typeof(value), json_typeof(value->'delay'), json_typeof(value->'nosuch'), make_date(2001, abs((value->>'delay')::int) % 12 + 1, 28)::text " +
			"FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-03-31' AND timestamp < '2001-04-02' ORDER BY id",
		"SELECT make_date(-44, 3, 15) - DATE '1970-01-01', make_date(2000, 2, 29)::text, make_date(5874897, 12, 31)::text, concat_ws(NULL, 'a'), concat_ws(',', NULL)," +
			" concat(true, NULL::boolean, 'x'), concat_ws(',', true, false), translate('abcabc', 'abb', 'x'), translate('héllo', 'él', 'E'), md5(''), md5('\\x00ff'::bytea), json_typeof('null'), json_typeof(' 1.5e3 '), json_typeof('[{}]')",
	}
	qs = append(qs,
		"SELECT id, width_bucket((value->>'delay')::int, -30, 120, 6), width_bucket((value->>'distance')::float8, 3000, 0, 7), width_bucket((value->>'delay')::int, 0, 1, 2147483646) "+
			"FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-03-31' AND timestamp < '2001-04-02' ORDER BY id",
		"SELECT width_bucket(5, 0, 10, 5), width_bucket(-1, 0, 10, 5), width_bucket(10, 0, 10, 5), width_bucket(0.1::float8 * 3, 0, 0.3, 3), width_bucket('5', 0, 10, 3), "+
			"width_bucket(1.5, 0::float8, 10, 3), width_bucket(0::float8, '-1e308'::float8, '1e308'::float8, 10), width_bucket('inf'::float8, 0, 10, 4), width_bucket(7::smallint, 10, 0, 4)")
	for _, cl := range clients {
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText, qs...)...)
		refusedAs(t, ctx, cl.c, codes.Unimplemented, map[string]string{"SELECT width_bucket(5.5, 0, 10, 5)": "width_bucket of numeric is not supported"})
		for q, state := range map[string]string{
			"SELECT width_bucket(1, 0, 10, 0)":              "2201G",
			"SELECT width_bucket('nan'::float8, 0, 10, 3)":  "2201G",
			"SELECT width_bucket(1, '-inf'::float8, 10, 3)": "2201G",
			"SELECT width_bucket(1, 2, 2, 3)":               "2201G",
			"SELECT width_bucket(20, 0, 10, 2147483647)":    "22003",
			"SELECT width_bucket(2, 0, 10, 3::bigint)":      "42883",
			"SELECT make_date(2013, 2, 30)":                 "22008",
			"SELECT make_date(0, 1, 1)":                     "22008",
			"SELECT make_date(2001, 13, 1)":                 "22008",
			"SELECT make_date(-4714, 11, 23)":               "22008",
			"SELECT make_date(2001::bigint, 1, 1)":          "42883",
			"SELECT concat_ws('')":                          "42883",
			`SELECT json_typeof('{"a": }')`:                 "22P02",
		} {
			refusedAsPostgres(t, ctx, cl.c, pg, q, state)
		}
	}
}

// sqlstateOf is the SQLSTATE a refusal carries (its ErrorInfo's metadata), "" when none.
func sqlstateOf(err error) string {
	for _, d := range status.Convert(err).Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok {
			return info.GetMetadata()["sqlstate"]
		}
	}
	return ""
}

// TestFunctionRefusalsAsPostgres: a function PostgreSQL has that flightsrv does not implement
// is refused by name, UNIMPLEMENTED with 0A000 (feature_not_supported); a name PostgreSQL does
// not know is its own 42883 (undefined_function) with its message; extract of a field
// PostgreSQL has and flightsrv does not is 0A000, of one it does not know its 22023; a numeric
// parameter beside a numeric (round(avg(x) * ?, 2)), once refused by name, is declared numeric.
func TestFunctionRefusalsAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	const w = " FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-04-01' AND timestamp < '2001-04-02'"
	for _, cl := range clients {
		for q, name := range map[string]string{
			"SELECT to_number(value->>'delay', '999')" + w:                                          "to_number",
			"SELECT pg_column_size(id)" + w:                                                         "pg_column_size",
			"SELECT (timestamp, timestamp + interval '1 hour') OVERLAPS (timestamp, timestamp)" + w: "overlaps",
			"SELECT regexp_matches(id, '1')" + w:                                                    "regexp_matches",
			"SELECT pg_size_pretty(length(id)::bigint)" + w:                                         "pg_size_pretty",
		} {
			if _, err := pg.Exec(ctx, q); err != nil {
				t.Fatalf("PostgreSQL %s: %v", q, err)
			}
			_, err := run(ctx, cl.c, q)
			if st := status.Convert(err); st.Code() != codes.Unimplemented || st.Message() != "function "+name+" is not supported" || sqlstateOf(err) != "0A000" {
				t.Errorf("%s (%s): %v %s, want UNIMPLEMENTED 0A000 naming %s", q, cl.name, err, sqlstateOf(err), name)
			}
		}
		for _, q := range []string{"SELECT no_such_function(1, 'a')" + w, "SELECT concat_wss('-', id)" + w} {
			refusedAsPostgres(t, ctx, cl.c, pg, q, "42883")
			if _, err := run(ctx, cl.c, q); sqlstateOf(err) != "42883" {
				t.Errorf("%s (%s): %v, want SQLSTATE 42883", q, cl.name, err)
			}
		}
		_, err := run(ctx, cl.c, "SELECT extract(julian FROM timestamp)"+w)
		if st := status.Convert(err); st.Code() != codes.Unimplemented || sqlstateOf(err) != "0A000" || !strings.Contains(st.Message(), "julian") {
			t.Errorf("extract(julian …) (%s): %v, want UNIMPLEMENTED 0A000", cl.name, err)
		}
		refusedAsPostgres(t, ctx, cl.c, pg, "SELECT extract(fortnight FROM timestamp)"+w, "22023")
		numericParameter(t, ctx, cl.c, "SELECT round(avg((value->>'delay')::int) * ?, 2)"+w)
		numericParameter(t, ctx, cl.c, "SELECT ? * sum((value->>'delay')::numeric(10,2))"+w)
	}
}

// numericParameter checks that q, whose parameter stands beside a numeric (refused at Prepare
// until numparam18), declares the parameter numeric, decimal128(38, 16)
// (TestNumericParametersAsPostgres compares the answers with PostgreSQL's).
func numericParameter(t *testing.T, ctx context.Context, cl *flightsql.Client, q string) {
	t.Helper()
	stmt, err := cl.Prepare(ctx, q)
	if err != nil {
		t.Errorf("%s: %v", q, err)
		return
	}
	defer stmt.Close(ctx)
	if ps := stmt.ParameterSchema(); ps.NumFields() != 1 || !arrow.TypeEqual(ps.Field(0).Type, numericDecl) {
		t.Errorf("%s: parameters %s, want one %s", q, ps, numericDecl)
	}
}
