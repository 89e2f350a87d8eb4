package e2e

import (
	"testing"

	"google.golang.org/grpc/codes"
)

// Issue 18, trial29's W2, W3, W5 and wrong errors: lag and lead of integers with numeric
// defaults, column names of CASE and sublinks, NULLIF's type, and errors PostgreSQL raises.

// typ18bLagTexts are lag and lead whose result is numeric while the value's and the default's
// display scales differ (trial29 W2): each value at its own display scale, as PostgreSQL's.
var typ18bLagTexts = []string{
	"SELECT x, lag(x, 1, 1.5) OVER (ORDER BY x)::text FROM generate_series(1, 4) x ORDER BY x",
	"SELECT x, lead(x, 1, 2.25) OVER (ORDER BY x)::text FROM generate_series(1, 4) x ORDER BY x",
	"SELECT x, (lag(x, 1, 1.5) OVER (ORDER BY x) * 2)::text, lag(x::bigint, 1, 1.5) OVER (ORDER BY x)::text, lag(x::smallint, 2, 1.5) OVER (ORDER BY x)::text FROM generate_series(1, 4) x ORDER BY x",
	"SELECT x, lag(x::numeric, 1, 1.5) OVER (ORDER BY x)::text, lag(1.50, 1, x) OVER (ORDER BY x)::text, lag(x, 1, 2.0) OVER (ORDER BY x DESC)::text FROM generate_series(1, 4) x ORDER BY x",
	"SELECT x, lead(x, 1, x / 2.0) OVER (ORDER BY x)::text, lag(x, 1, x / 3.0) OVER (ORDER BY x)::text FROM generate_series(1, 3) x ORDER BY x",
	"SELECT x, lag(x / 3.0, 1, 7) OVER (ORDER BY x)::text, lead(x / 4.0) OVER (ORDER BY x)::text, lead(x / 4.0, 2, 0.5) OVER (ORDER BY x)::text FROM generate_series(1, 4) x ORDER BY x",
	"SELECT k, lag(x::numeric, 1, 9.99) OVER (ORDER BY k)::text, lead(7, 1, x::numeric) OVER (ORDER BY k)::text FROM (VALUES (1, '2345'), (2, '1.50'), (3, '0'), (4, NULL), (5, '-0.125')) v(k, x) ORDER BY k",
	"SELECT (lag(g * 0.5, 1, CASE WHEN g > 1 THEN 1.5 ELSE 2 END) OVER (ORDER BY g))::text, lead(CASE WHEN g > 2 THEN 1.5 ELSE 2 END, 1, 0.25) OVER (ORDER BY g)::text FROM generate_series(1, 3) g ORDER BY g",
	"SELECT id, lead((value->>'delay')::int, 1, 1.25) OVER (ORDER BY id)::text FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-03-31' AND timestamp < '2001-04-02' ORDER BY id",
	"SELECT id, lag(7, 1, (value->>'distance')::numeric) OVER (ORDER BY id)::text FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-03-31' AND timestamp < '2001-04-01' ORDER BY id",
	// first_value, last_value and nth_value of a numeric whose scale varies by row: each the
	// value it takes, at its own scale, over the frame.
	"SELECT k, first_value(x::numeric) OVER (ORDER BY k)::text, last_value(x::numeric) OVER (ORDER BY k)::text, nth_value(x::numeric, 2) OVER (ORDER BY k)::text, " +
		"last_value(x::numeric) OVER (ORDER BY k ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING)::text, first_value(x::numeric) OVER (ORDER BY k DESC)::text " +
		"FROM (VALUES (1, '2345'), (2, '1.50'), (3, '0'), (4, NULL), (5, '-0.125')) v(k, x) ORDER BY k",
	"SELECT x, first_value(x / 3.0) OVER w::text, last_value(x / 4.0) OVER w::text, nth_value(x / 2.0, 3) OVER w::text FROM generate_series(1, 5) x WINDOW w AS (ORDER BY x ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING) ORDER BY x",
	"SELECT id, first_value((value->>'distance')::numeric) OVER (PARTITION BY value->>'destination' ORDER BY id)::text, nth_value((value->>'distance')::numeric / 3, 2) OVER (ORDER BY id)::text FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-03-31' AND timestamp < '2001-04-01' ORDER BY id",
}

// TestLagLeadScaleAsPostgres: lag and lead of an integer with a numeric default, or of a
// numeric with a default of another display scale, answer PostgreSQL's text (trial29 W2); so
// do first_value, last_value and nth_value of a numeric whose display scale varies by row.
func TestLagLeadScaleAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	compared := 0
	for _, cl := range clients {
		for _, q := range typ18bLagTexts {
			want, kinds := pgTexts(t, ctx, pg, q)
			if n := compareNumericRows(t, ctx, cl.c, q, want, kinds); n == 0 {
				t.Errorf("%s (%s): no rows", q, cl.name)
			} else {
				compared += n
			}
		}
	}
	t.Logf("%d rows compared with PostgreSQL's", compared)
}

// TestCaseSublinkColumnNamesAsPostgres: a CASE whose ELSE is a column or a function is named
// after it, quantified comparisons (ALL, ANY, SOME) are ?column?, and a cast keeps either name
// as PostgreSQL's FigureColnameInternal does (trial29 W3); a derived table's column so named
// answers by that name.
func TestCaseSublinkColumnNamesAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	for _, cl := range clients {
		for _, q := range []string{
			"SELECT CASE WHEN x = 3 THEN 2.5 ELSE x END, CASE x WHEN 1 THEN 'a' ELSE upper('b') END, CASE WHEN x > 1 THEN 1 END, CASE WHEN x > 1 THEN 1 ELSE 2 END, " +
				"CASE WHEN x > 1 THEN 'a' ELSE x::text END, CASE WHEN x > 1 THEN 1 ELSE CASE WHEN x > 2 THEN 2 ELSE x END END, (CASE WHEN x > 1 THEN 1 ELSE x END)::text, " +
				"(CASE WHEN x > 1 THEN 1 ELSE 2 END)::text FROM generate_series(1, 3) g(x)",
			"SELECT x > ALL (SELECT y FROM generate_series(1, 2) y), x < ANY (SELECT y FROM generate_series(1, 2) y), x = SOME (SELECT y FROM generate_series(1, 2) y), " +
				"x > ALL (VALUES (1), (2)), x = SOME (VALUES (1), (2)), x IN (SELECT 1), x <> ALL (SELECT 1), (x > ALL (SELECT 1))::text, x FROM generate_series(1, 3) x",
			"SELECT CASE WHEN x = 2 THEN 0 ELSE lag(x) OVER (ORDER BY x) END::text, CASE WHEN x = 2 THEN 0 ELSE x END::text FROM generate_series(1, 3) x",
		} {
			sameColumnNames(t, ctx, cl.c, pg, q)
		}
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText,
			"SELECT sub.x FROM (SELECT CASE WHEN x = 3 THEN 0 ELSE x END FROM generate_series(1, 3) g(x)) sub ORDER BY 1",
			"SELECT sub.upper FROM (SELECT CASE x WHEN 1 THEN 'a' ELSE upper('b') END FROM generate_series(1, 3) g(x)) sub ORDER BY 1",
		)...)
		refusedAsPostgres(t, ctx, cl.c, pg, "SELECT x, CASE WHEN x = 3 THEN 0 ELSE x END FROM generate_series(1, 3) x ORDER BY x", "42702")
	}
}

// TestNullIfOperandTypeAsPostgres: NULLIF(a, b) is of the left operand's type of the =
// operator PostgreSQL picks: a's own where a cross-type operator takes both integers
// (int24eq, int48eq), the common type otherwise (trial29 W5).
func TestNullIfOperandTypeAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	comparePG(t, ctx, pg, byName(clients), sameSQL(pgTypes,
		"SELECT x, nullif(x::smallint, 70000), nullif(x, 2::bigint), nullif(x::bigint, 2), nullif(x::smallint, 2::smallint), nullif(1, 2.2), nullif(x, 2.0), nullif(x::smallint, 2.5), "+
			"nullif(x::real, 2), nullif(x::float8, 2::real), nullif(x, 2::float8) FROM generate_series(1, 3) x ORDER BY x",
		"SELECT id, nullif((value->>'delay')::smallint, 0::bigint), nullif((value->>'delay')::int, (value->>'distance')::bigint) FROM flights "+
			"WHERE origin = 'BOS' AND timestamp >= '2001-03-31' AND timestamp < '2001-04-01' ORDER BY id",
	)...)
}

// TestWrongErrorsAsPostgres: the errors PostgreSQL raises where flightsrv raised others
// (trial29 "E wrong errors"), and a date IN a list of timestamps, which PostgreSQL answers.
func TestWrongErrorsAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	for _, cl := range clients {
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText,
			"SELECT date '2001-01-01' IN (timestamp '2001-01-01', timestamp '2001-01-02'), date '2001-01-03' IN (timestamp '2001-01-01', timestamp '2001-01-02'), "+
				"date '2001-01-01' IN (timestamp '2001-01-01 00:00:01'), date '2001-01-01' NOT IN (timestamp '2001-01-01', date '2001-01-02')",
			"SELECT id FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-03-30' AND timestamp < '2001-04-02' "+
				"AND timestamp::date IN (date '2001-03-31', timestamp '2001-04-01 00:00') ORDER BY id",
			// A scale past the precision (PostgreSQL 15): values below 10^(p-s) in magnitude.
			"SELECT 0.01234::numeric(4,5)::text, (-0.099994)::numeric(4,5)::text, '0.00001'::numeric(2,5)::text, 0::numeric(1,3)::text",
			"SELECT x, (x / 1000.0)::numeric(3,4)::text, (x::text || 'e-3')::numeric(2,4)::text, (-x / 70.0)::numeric(4,5)::text FROM generate_series(1, 3) x ORDER BY x",
		)...)
		for q, state := range map[string]string{
			"SELECT value->>'delay' IN ('1', 2) FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-03-31' AND timestamp < '2001-04-01'":                          "42883",
			"SELECT value->>'destination' IN ((value->>'delay')::int, 1) FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-03-31' AND timestamp < '2001-04-01'": "42883",
			"SELECT lag(x, 1::bigint) OVER (ORDER BY x) FROM generate_series(1, 3) x":                                                                                  "42883",
			"SELECT lead(x, 1.0) OVER (ORDER BY x), ntile(2::bigint) OVER () FROM generate_series(1, 3) x":                                                             "42883",
			"SELECT nth_value(x, '1'::text) OVER (ORDER BY x) FROM generate_series(1, 3) x":                                                                            "42883",
			"SELECT x % 2, first(x::text ORDER BY x) FROM generate_series(1, 3) x GROUP BY 1":                                                                          "42883",
			"SELECT x % 2, last(x::text) FROM generate_series(1, 3) x GROUP BY 1":                                                                                      "42883",
			"SELECT '{\"k\": 1}'::json ? 'k'":                              "42883",
			"SELECT ('{\"k\": 1}'::json)['k']":                             "42804",
			"SELECT (1)[1], ('abc'::text)[1]":                              "42804",
			"SELECT 0.12345::numeric(4,5)":                                 "22003",
			"SELECT (x / 10.0)::numeric(3,4) FROM generate_series(1, 2) x": "22003",
		} {
			refusedAsPostgres(t, ctx, cl.c, pg, q, state)
		}
		refusedAs(t, ctx, cl.c, codes.Unimplemented, map[string]string{
			"SELECT 'J2451911'::date":            "Julian day input",
			"SELECT date 'J 2451911'":            "Julian day input",
			"SELECT 'J2451911 04:05'::timestamp": "Julian day input",
		})
	}
}

// TestStarSRFAsPostgres: a set-returning function called with * or WITHIN GROUP, which the
// binder read as an aggregate and rewrote for ever (FuzzSQL), is PostgreSQL's error.
func TestStarSRFAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	for _, cl := range clients {
		for q, state := range map[string]string{
			"SELECT generate_series(*)":                                        "42883",
			"SELECT generate_series(*), row_number() OVER ()":                  "42883",
			"SELECT 1 ORDER BY generate_series(*)":                             "42883",
			"SELECT generate_series(1, 2) WITHIN GROUP (ORDER BY 1)":           "42809",
			"SELECT generate_series(1, 2) WITHIN GROUP (ORDER BY 1), count(*)": "42809",
		} {
			refusedAsPostgres(t, ctx, cl.c, pg, q, state)
		}
	}
}
