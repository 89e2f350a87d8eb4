package e2e

import "testing"

// TestGroupingSetsOrderByAsPostgres: ORDER BY an aggregate or another expression over the
// grouped rows of ROLLUP, CUBE and GROUPING SETS answers PostgreSQL's rows (trial24's D3: it
// was 42803 or 42P10); an output alias inside an ORDER BY expression is PostgreSQL's 42703.
func TestGroupingSetsOrderByAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	qs := []string{
		"SELECT origin, count(*)" + trial23Where + " GROUP BY ROLLUP (origin) ORDER BY count(*) DESC, origin",
		// Not CUBE (origin, …) ORDER BY origin here: PostgreSQL 15 drops a sort key its WHERE
		// pins (origin = 'ORD') though grouping sets make it NULL in some rows.
		"SELECT value->>'destination' d, (value->>'delay')::int > 0 late, count(*) n" + trial23Where + " GROUP BY CUBE (value->>'destination', (value->>'delay')::int > 0) ORDER BY sum((value->>'delay')::int) DESC NULLS LAST, 1, 2 LIMIT 12",
		"SELECT value->>'destination' d, (value->>'delay')::int > 0 late, avg((value->>'delay')::int)::text" + trial23Where + " GROUP BY GROUPING SETS ((value->>'destination'), ((value->>'delay')::int > 0), ()) ORDER BY avg((value->>'delay')::int), 1, 2",
		"SELECT origin, count(*)" + trial23Where + " GROUP BY ROLLUP (origin) ORDER BY origin || 'x' NULLS FIRST",
		"SELECT value->>'destination' d, count(*) c" + trial23Where + " GROUP BY ROLLUP (value->>'destination') ORDER BY max(id), c",
		"SELECT value->>'destination' d, count(*) c" + trial23Where + " GROUP BY ROLLUP (value->>'destination') ORDER BY c DESC, d LIMIT 5",
	}
	for _, cl := range clients {
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText, qs...)...)
		refusedWithState(t, ctx, cl.c, pg, "SELECT origin, count(*) c"+trial23Where+" GROUP BY ROLLUP (origin) ORDER BY c * 2", "42703")
		// trial24's D9: a column qualified by another schema names no FROM item.
		refusedWithState(t, ctx, cl.c, pg, "SELECT f.f.timestamp FROM flights f WHERE origin = 'ORD' AND timestamp >= '2001-03-31 12:00' AND timestamp < '2001-04-01 18:00'", "42P01")
	}
}

// TestMakeIntervalAsPostgres: make_interval of constants, positional or named (ibis writes
// RANGE frames' offsets as make_interval(days => 3)), answers PostgreSQL's interval, folds
// into timestamp arithmetic and RANGE frames, and keeps PostgreSQL's errors.
func TestMakeIntervalAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	qs := []string{
		`SELECT make_interval(days => 3)::text, make_interval(1, 2, 3, 4, 5, 6, 7.5)::text, make_interval(secs => -1.0000005)::text, make_interval(hours => 2, years => 1)::text, make_interval()::text, make_interval(days => NULL) IS NULL, make_interval(days => 2147483647, weeks => 1)::text, make_interval(mins => -90)::text`,
		`SELECT (timestamp '2001-01-31 10:00' + make_interval(months => 1))::text, (date '2001-03-01' - make_interval(days => 1, hours => 12))::text`,
		"SELECT id, count(*) OVER (ORDER BY timestamp RANGE BETWEEN make_interval(hours => 1) PRECEDING AND CURRENT ROW)" + trial23Where + " ORDER BY timestamp, id",
		"SELECT count(*)" + trial23Where + " AND timestamp < timestamp '2001-03-31 12:00' + make_interval(hours => 6)",
	}
	for _, cl := range clients {
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText, qs...)...)
		for q, state := range map[string]string{
			`SELECT make_interval(days => 1.5)`:            "42883",
			`SELECT make_interval(1, 2, 3, 4, 5, 6, 7, 8)`: "42883",
			`SELECT make_interval(days => 1, days => 2)`:   "42601",
		} {
			refusedWithState(t, ctx, cl.c, pg, q, state)
		}
	}
}

// TestConstantBoundsFoldedAsPostgres: time bounds that are date_trunc of a timestamp constant
// or of now(), or a cast of now() to date ± days (Metabase's relative filters), bound the read
// and answer PostgreSQL's rows (trial24's D4: they were refused as missing bounds).
func TestConstantBoundsFoldedAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	qs := []string{
		"SELECT count(*), min(id) FROM flights WHERE origin = 'ORD' AND timestamp >= date_trunc('month', timestamptz '2001-03-17 10:00+00') AND timestamp < date_trunc('month', timestamptz '2001-03-17 10:00+00') + interval '1 month'",
		"SELECT count(*) FROM flights WHERE origin = 'ORD' AND timestamp >= date_trunc('week', timestamp '2001-03-31 10:00') AND timestamp < date_trunc('day', timestamp '2001-04-02 10:00')",
		"SELECT count(*) FROM flights WHERE origin = 'ORD' AND timestamp >= CAST(timestamp '2001-04-02 10:00' AS date) - 3 AND timestamp < CAST(timestamptz '2001-04-02 10:00+00' AS date)",
		`SELECT count(*) FROM flights WHERE origin = 'ORD' AND "timestamp" >= DATE_TRUNC('day', NOW() + INTERVAL '-30 day') AND "timestamp" < NOW()`,
		"SELECT count(*) FROM flights WHERE origin = 'ORD' AND timestamp >= CAST(now() AS date) - 7 AND timestamp < CAST(now() AS date)",
	}
	for _, cl := range clients {
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText, qs...)...)
	}
}

// TestNullTestsOfNumericsAsPostgres: IS [NOT] NULL of numerics under OR, AND and CASE, and row
// comparisons of numerics (which compare element by element through such tests), answer
// PostgreSQL's rows (trial25: arrow-go's unary compare functions promoted a decimal argument
// as if there were two, and the request failed with INTERNAL).
func TestNullTestsOfNumericsAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	qs := []string{
		`SELECT 1.5 IS NULL OR 2.5 IS NULL, (1.5, 1) < (2.5, 3), (2.5::numeric(4,1), 1) < (2.50, 3)`,
		`SELECT x IS NULL OR y IS NULL, x IS NOT NULL OR y IS NULL, CASE WHEN x IS NULL OR y IS NULL THEN 0 ELSE 1 END FROM (VALUES (1.5, 2.5), (NULL, 1), (3.25, NULL)) v(x, y) ORDER BY 1, 2, 3`,
		`SELECT k FROM (VALUES (1, 1.0, 'a'), (3, 2.50, NULL), (4, 2.5, 'a')) t(k, x, s) WHERE (x, s) < (2.5, 'b') ORDER BY k`,
		"SELECT count(*)" + trial23Where + " AND ((value->>'delay')::numeric IS NULL OR (value->>'distance')::numeric(10,1) IS NOT NULL)",
	}
	for _, cl := range clients {
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText, qs...)...)
	}
}

// TestRecursiveJSONBAsPostgres: a jsonb column of a recursive CTE's working table compares,
// sorts and combines by value in the recursive term and above it (trial25's W1: it compared
// bytewise, '1.0'::jsonb = '1' false), as does jsonb IN (…) anywhere; a recursive UNION
// without ALL over json is PostgreSQL's 42883, over jsonb refused by name.
func TestRecursiveJSONBAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	qs := []string{
		`WITH RECURSIVE r(j, n) AS (SELECT '1.0'::jsonb, 0 UNION ALL SELECT j, n + 1 FROM r WHERE n < 2) SELECT n, j = '1', j IN ('1','2'), j <> '1', j::text FROM r ORDER BY n`,
		`WITH RECURSIVE r(j, n) AS (SELECT '{"a": 1.0}'::jsonb, 0 UNION ALL SELECT j, n + 1 FROM r WHERE n < 2 AND j = '{"a":1}') SELECT count(*) FROM r WHERE j = '{"a":1}'`,
		`SELECT '1.0'::jsonb IN ('1', '2'), (SELECT '1.0'::jsonb) IN ('1', '2'), '1.0'::jsonb NOT IN ('1'), '{"b":1,"a":2}'::jsonb IN ('{"a":2,"b":1.0}')`,
		`WITH RECURSIVE r(j, n) AS (SELECT '2'::jsonb, 0 UNION ALL SELECT j, n + 1 FROM r WHERE n < 1) SELECT j < '10', greatest(j, '10')::text FROM r`,
		`WITH RECURSIVE r(j, n) AS (SELECT '{"a":1}'::jsonb, 0 UNION ALL SELECT j || jsonb_build_object('n', n), n + 1 FROM r WHERE n < 2) SELECT n, j::text, j ? 'n', j @> '{"a":1}' FROM r ORDER BY n`,
	}
	for _, cl := range clients {
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText, qs...)...)
		refusedWithState(t, ctx, cl.c, pg, `WITH RECURSIVE r(j) AS (SELECT '{"a":1}'::json UNION SELECT '{"a":1}'::json FROM r) SELECT count(*) FROM r`, "42883")
	}
}
