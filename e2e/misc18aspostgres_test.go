package e2e

import (
	"context"
	"testing"

	"google.golang.org/grpc/codes"
)

// Issue 18's leftovers of trials 27 and 28, each answered as PostgreSQL 15 answers it.

// realSumTexts are sums of reals (PostgreSQL's sum(real): real, added in single precision in
// the order the rows come; float4pl) and averages of reals (double precision), as aggregates
// and over windows, compared with PostgreSQL's text exactly. The flights' rows are summed in
// an order both sides share (a derived table's ORDER BY and LIMIT, a window's).
var realSumTexts = []string{
	"SELECT sum(x)::text, avg(x)::text, sum(x) IS NULL FROM (VALUES (1.1::real), (2.2::real), (3.3::real)) v(x)",
	"SELECT sum(x)::text, avg(x)::text FROM (VALUES (1.1::real), (2.2::real), (3.3::real)) v(x) WHERE false",
	"SELECT sum(g::real)::text, sum(g::real / 3::real)::text, avg(g::real / 3::real)::text FROM generate_series(1, 100000) g",
	"SELECT sum(x)::text FROM (VALUES ('-0'::real)) v(x)",
	"SELECT sum(x)::text FROM (VALUES ('-0'::real), ('0'::real)) v(x)",
	"SELECT sum(x)::text FROM (VALUES ('NaN'::real), ('Infinity'::real)) v(x)",
	"SELECT sum(x)::text FROM (VALUES ('-Infinity'::real), ('Infinity'::real)) v(x)",
	"SELECT sum(x)::text FROM (VALUES ('Infinity'::real), ('3e38'::real), ('3e38'::real)) v(x)",
	"SELECT k, sum(x)::text, sum(x) FILTER (WHERE x > 1)::text, avg(x)::text FROM (VALUES (1, 0.1::real), (1, 0.2::real), (2, 16777216::real), (2, 1::real), (2, 1::real), (3, NULL)) v(k, x) GROUP BY k ORDER BY k",
	"SELECT g, (sum(g::real / 7::real) OVER (ORDER BY g))::text, (sum(g::real / 7::real) OVER (ORDER BY g ROWS 2 PRECEDING))::text, " +
		"(avg(g::real / 7::real) OVER (ORDER BY g ROWS 2 PRECEDING))::text, (sum(g::real) OVER ())::text FROM generate_series(1, 50) g ORDER BY g",
	"SELECT g, (sum(NULLIF(g, 2)::real) OVER (ORDER BY g ROWS BETWEEN 1 PRECEDING AND CURRENT ROW))::text FROM generate_series(1, 4) g ORDER BY g",
	"SELECT origin, sum(d)::text, avg(d / 7::real)::text FROM (SELECT origin, (value->>'delay')::real AS d FROM flights " +
		"WHERE origin IN ('ORD', 'BOS') AND timestamp >= '2001-03-15' AND timestamp < '2001-04-15' ORDER BY timestamp, id LIMIT 100000) s GROUP BY 1 ORDER BY 1",
	"SELECT id, (sum((value->>'distance')::real / 7::real) OVER (ORDER BY timestamp, id))::text, " +
		"(sum((value->>'delay')::real) OVER (PARTITION BY value->>'destination' ORDER BY timestamp, id ROWS 3 PRECEDING))::text FROM flights " +
		"WHERE origin = 'BOS' AND timestamp >= '2001-03-25' AND timestamp < '2001-04-01' ORDER BY timestamp, id",
}

// TestRealSumAsPostgres: sum(real) is real, PostgreSQL's single precision sum, as an aggregate
// and over windows (trial 27's refusal); avg(real) is double precision; a sum that overflows
// from finite values is 22003; sum(DISTINCT real), and sum(real) of a routed table's rows
// aggregated bucket by bucket, are refused by name.
func TestRealSumAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	compared := 0
	for _, cl := range clients {
		compared += compareTextsAsPostgres(t, ctx, pg, cl, realSumTexts)
		comparePG(t, ctx, pg, one(cl.c), nonEmptyTyped(
			"SELECT sum(x) AS s, avg(x) AS a FROM (VALUES (1.5::real), (2.5::real)) v(x)",
			"SELECT sum(x) OVER (ORDER BY x) AS s, avg(x) OVER () AS a FROM (VALUES (1.5::real), (2.5::real)) v(x) ORDER BY x",
		)...)
		for _, q := range []string{
			"SELECT sum(x) FROM (VALUES (1e38::real), (1e38::real), (3e38::real)) v(x)",
			"SELECT sum(x) OVER (ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM (VALUES (3e38::real), (3e38::real), (-3e38::real)) v(x)",
		} {
			refusedAsPostgres(t, ctx, cl.c, pg, q, "22003")
		}
		refusedAs(t, ctx, cl.c, codes.Unimplemented, map[string]string{
			"SELECT sum(DISTINCT x) FROM (VALUES (0.1::real), (0.2::real)) v(x)": "sum(DISTINCT real) is not supported",
			// A routed table's rows are summed bucket by bucket: not PostgreSQL's one pass.
			"SELECT sum((value->>'delay')::real) FROM flights WHERE origin = 'ORD' AND " + trialRange:                                                "sum of real over a routed table's rows",
			"SELECT sum(d) FROM (SELECT (value->>'delay')::real AS d FROM flights WHERE origin = 'ORD' AND " + trialRange + " ORDER BY timestamp) s": "sum of real over a routed table's rows",
		})
	}
	t.Logf("%d rows compared with PostgreSQL's", compared)
}

// TestSetUnknownParameterAsPostgres: SET, RESET, SHOW and current_setting of a name that is no
// PostgreSQL 15 parameter are its 42704 (trial 28: ours was 0A000); SET and RESET of a
// parameter a session cannot change are its 55P02, in its words; every parameter of
// PostgreSQL's pg_settings is known (SHOW answers it or refuses it by name, never 42704); a
// known parameter flightsrv does not keep is refused by name (0A000), as is a SET of one.
func TestSetUnknownParameterAsPostgres(t *testing.T) {
	e := newEnv(t)
	cl := dial(t, e.on)
	ctx := context.Background()
	pg := pgUTC(t, ctx, e.url)
	for q, state := range map[string]string{
		"SET no_such_parameter = 1": "42704", "SET SESSION no_such_parameter TO DEFAULT": "42704", "RESET no_such_parameter": "42704",
		"SHOW no_such_parameter": "42704", "SHOW no_such.parameter": "42704", "SELECT current_setting('no_such_parameter')": "42704",
		"SET shared_buffers = '1GB'": "55P02", "RESET shared_buffers": "55P02", "SET block_size = 1": "55P02", "SET server_version = '16'": "55P02",
		"SET log_connections = on": "55P02", "SET archive_command = 'x'": "55P02", "SET ignore_system_indexes = on": "55P02",
	} {
		refusedAsPostgres(t, ctx, cl, pg, q, state)
	}
	names := pgTextRows(t, ctx, pg, "SELECT name FROM pg_settings ORDER BY 1")
	if len(names) < 300 {
		t.Fatalf("PostgreSQL's pg_settings: %d names", len(names))
	}
	for _, n := range append(names, []string{"is_superuser"}, []string{"role"}, []string{"seed"}) {
		if _, err := run(ctx, cl, "SHOW "+n[0]); statusSQLState(err) == "42704" {
			t.Errorf("SHOW %s: %v, PostgreSQL answers it", n[0], err)
		}
	}
	refusedAs(t, ctx, cl, codes.Unimplemented, map[string]string{
		"SET work_mem = '64MB'":                    "SET of this parameter",
		"SET my.custom = 1":                        "SET of this parameter",
		"SHOW work_mem":                            "SHOW of this setting",
		"SELECT current_setting('shared_buffers')": "current_setting of this parameter",
		"SELECT current_setting('work_mem', true)": "current_setting of this parameter",
	})
}

// TestStringFunctionIntegerArgumentsAsPostgres: substring, substr, left, right, repeat, lpad,
// rpad and split_part take integer where PostgreSQL 15 takes it: a bigint, numeric, real or
// double precision argument there is its 42883 in its words (trial 27: a bigint-typed bound of
// substring(x FROM ?) answered), naming substring(x FROM n) pg_catalog.substring as it does;
// smaller integers, untyped literals and the pattern forms answer.
func TestStringFunctionIntegerArgumentsAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	for _, cl := range clients {
		for _, q := range []string{
			"SELECT substring('abcdef' from 2::bigint)", "SELECT substring('abcdef', 2::bigint)", "SELECT substring('abcdef' from 2 for 3::bigint)",
			"SELECT substr('abcdef', 2::bigint)", "SELECT left('abc', 2::bigint)", "SELECT right('abc', 2::bigint)", "SELECT repeat('a', 2::bigint)",
			"SELECT lpad('a', 3::bigint)", "SELECT rpad('a', 3::bigint, 'x')", "SELECT split_part('a,b', ',', 2::bigint)",
			"SELECT substring('abcdef'::bytea from 2::bigint)", "SELECT substring('abcdef' from 2.0)", "SELECT substring('abc' from 2::numeric)",
			"SELECT substring('abc' from 2::real)", "SELECT left('abc', 2.0)", "SELECT repeat('ab', 2::float8)",
			"SELECT substring('abcdef' from g) FROM generate_series(1::bigint, 2) g",
			"SELECT substring(id from length(id)::bigint - 2) FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-03-31' AND timestamp < '2001-04-01'",
		} {
			refusedAsPostgres(t, ctx, cl.c, pg, q, "42883")
		}
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText,
			"SELECT substring('abcdef' from 2::smallint), substring('abcdef' from 2 for 3), substr('abcdef', 2::int), left('abc', 2), repeat('ab', '2'), "+
				"lpad('a', 3::smallint), split_part('a,b', ',', 2), substring('abc123' from '[0-9]+'), substring('abcdef' from 2 for '3')",
			"SELECT id, substring(id from length(id) - 2), left(id, (value->>'delay')::int % 3) FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-03-31' AND timestamp < '2001-04-01' ORDER BY id",
		)...)
		// A bound bigint (psycopg's int8, ADBC's int64) is a bigint argument too; a bound
		// string is the pattern.
		compareBoundN(ctx, t, pg, []namedClient{cl}, "SELECT substring('abcdef' from ?)", "SELECT substring('abcdef' from $1::bigint)", nil, int64(2))
		compareBoundN(ctx, t, pg, []namedClient{cl}, "SELECT left('abcdef', ?)", "SELECT left('abcdef', $1::bigint)", nil, int64(2))
		compareBoundN(ctx, t, pg, []namedClient{cl}, "SELECT substring('abc123' from ?)", "SELECT substring('abc123' from $1)", nil, "[0-9]+")
	}
}

// intervalPercentileTexts are percentile_cont of intervals, interpolated as PostgreSQL's
// percentile_cont_interval_final interpolates them (interval_mi, interval_mul, interval_pl:
// fractions of months cascading into days and of days into time), compared as text.
var intervalPercentileTexts = []string{
	"SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY x)::text, percentile_cont(0.25) WITHIN GROUP (ORDER BY x)::text, " +
		"percentile_cont(0.33) WITHIN GROUP (ORDER BY x DESC)::text, percentile_cont(0) WITHIN GROUP (ORDER BY x)::text, percentile_cont(1) WITHIN GROUP (ORDER BY x)::text " +
		"FROM (VALUES (interval '1 day'), (interval '2 mons 3 hours'), (interval '-1 year 5 min'), (NULL), (interval '1 mon 1.5 seconds')) v(x)",
	"SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY x)::text, percentile_cont(0.1) WITHIN GROUP (ORDER BY x)::text FROM (VALUES (interval '1 mon'), (interval '2 mons 1 day')) v(x)",
	"SELECT percentile_cont(0.7) WITHIN GROUP (ORDER BY x)::text FROM (VALUES (interval '3 mons'), (interval '1 year -3 days 00:00:00.000007')) v(x)",
	"SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY x)::text FROM (VALUES (NULL::interval)) v(x)",
	"SELECT k, percentile_cont(0.5) WITHIN GROUP (ORDER BY x)::text, (percentile_cont(0.9) WITHIN GROUP (ORDER BY x) FILTER (WHERE k > 1))::text " +
		"FROM (VALUES (1, interval '1 hour'), (1, interval '3 days'), (2, interval '1 mon'), (2, interval '7 mons'), (2, interval '5 days 1 hour'), (3, NULL)) v(k, x) GROUP BY k ORDER BY k",
	"SELECT origin, percentile_cont(0.5) WITHIN GROUP (ORDER BY (value->>'delay')::int * interval '1 minute')::text, " +
		"percentile_cont(0.37) WITHIN GROUP (ORDER BY (value->>'distance')::int * interval '1.3 days')::text FROM flights " +
		"WHERE origin IN ('ORD', 'BOS') AND timestamp >= '2001-03-15' AND timestamp < '2001-04-15' GROUP BY 1 ORDER BY 1",
}

// TestIntervalPercentileAsPostgres: percentile_cont of intervals answers PostgreSQL's
// interval (trial 27's refusal), of type interval; an interpolation past interval's range is
// its 22008; percentile_disc of intervals is refused by name (an array of fractions over
// intervals answers: tools18_test.go).
func TestIntervalPercentileAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	for _, cl := range clients {
		compareTextsAsPostgres(t, ctx, pg, cl, intervalPercentileTexts)
		comparePG(t, ctx, pg, one(cl.c), nonEmptyTyped(
			"SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY x) AS p FROM (VALUES (interval '1 day'), (interval '2 days')) v(x)")...)
		refusedAsPostgres(t, ctx, cl.c, pg, "SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY x) FROM (VALUES (interval '170000000 years'), (interval '-170000000 years')) v(x)", "22008")
		refusedAs(t, ctx, cl.c, codes.Unimplemented, map[string]string{
			"SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY x) FROM (VALUES (interval '1 day')) v(x)": "percentile_disc of interval is not supported"})
	}
}

// setScaleTexts are set operations and VALUES of numerics of different display scales whose
// text PostgreSQL writes at each row's own scale (trial 28): a UNION ALL of two SELECTs and a
// VALUES list read alone as a derived table or WITH query, an EXCEPT [ALL] (the left's rows,
// at the left's scale), compared with PostgreSQL's text exactly.
var setScaleTexts = []string{
	"SELECT x::text FROM (SELECT 1.5 AS x UNION ALL SELECT 2.250) s",
	"SELECT (x * 2)::text, (x + 1.0)::text, x || '', concat(x, '|') FROM (SELECT 1.5 AS x UNION ALL SELECT 2.250) s",
	"SELECT x::text FROM (SELECT 1 AS x UNION ALL SELECT 2.50) s ORDER BY 1",
	"WITH w AS (SELECT 1.5 AS x, 'a' AS y UNION ALL SELECT 2.250, 'b') SELECT y, x::text FROM w ORDER BY y DESC",
	"SELECT x::text FROM (SELECT 1.5 AS x UNION ALL SELECT 2.250 ORDER BY 1 DESC LIMIT 5) s",
	"SELECT x::text FROM (VALUES (1.5), (2.250), (NULL), (3), (-0.0010)) v(x)",
	"SELECT y, (x * 2)::text, (x / 3)::text FROM (VALUES (1.5, 'a'), (2.250, 'b')) v(x, y) ORDER BY y DESC",
	"WITH w(x) AS (VALUES (1.5), (2.250)) SELECT x::text FROM w ORDER BY x",
	"SELECT column1::text FROM (VALUES (1/3.0), (2.250)) v ORDER BY 1",
	"SELECT sum(x)::text, count(*) FROM (VALUES (1.5), (2.250)) v(x)",
	"SELECT 1.50 EXCEPT SELECT 2.5", "SELECT x::text FROM (SELECT 2 AS x EXCEPT ALL SELECT 2.5) s", "SELECT column1 || '' FROM (VALUES (1), (2.5)) v",
	"SELECT x::text FROM (SELECT 1.50 AS x EXCEPT SELECT 2.5) s",
	"SELECT x::text FROM (SELECT 1.50 AS x EXCEPT ALL SELECT 2.5) s",
	"SELECT x::text FROM (SELECT g * 1.50 AS x FROM generate_series(1, 4) g EXCEPT SELECT 3.0) s ORDER BY 1",
	// A UNION's rows and a UNION ALL of three arms carry their scales too (scale18).
	"SELECT x::text FROM (SELECT 1.5 AS x UNION SELECT 2.250) s ORDER BY 1",
	"SELECT x::text FROM (SELECT 1.5 AS x UNION ALL SELECT 2.250 UNION ALL SELECT 3) s ORDER BY 1",
}

// TestSetOperationScalesAsPostgres: the text of a UNION ALL's, a VALUES list's and an
// EXCEPT's numerics of different display scales is PostgreSQL's, each row at its own scale;
// where the scale cannot be followed (INTERSECT of arms of different scales, which shows the
// value of whichever input PostgreSQL's plan hashes first; max of them, a window's sum) the
// text is refused by name.
func TestSetOperationScalesAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	for _, cl := range clients {
		compareTextsAsPostgres(t, ctx, pg, cl, setScaleTexts)
		for _, q := range []string{
			// One row's value of them (max), a sum over a window: refused as of any
			// varying numeric.
			"SELECT max(x)::text FROM (VALUES (1.5), (2.250)) v(x)",
			"SELECT x::text, sum(x) OVER ()::text FROM (SELECT 1.5 AS x UNION ALL SELECT 2.250) s ORDER BY 1",
		} {
			refusedNamingDisplayScale(t, ctx, pg, cl, q)
		}
		refusedAs(t, ctx, cl.c, codes.Unimplemented, map[string]string{"SELECT 1.5 INTERSECT SELECT 1.50": "INTERSECT of numeric values of different scales"})
	}
}
