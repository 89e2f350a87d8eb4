package e2e

import (
	"testing"
)

// Issue 18: an aggregate's FILTER guards its arguments, as PostgreSQL evaluates them only on
// the rows the filter passes: sum(10 / x) FILTER (WHERE x <> 0) divides no row by zero
// (trial30's E1: every aggregate answered 22012 where PostgreSQL answers).

// TestAggregateFilterGuardsArgumentsAsPostgres: aggregates of every kind (plain, DISTINCT,
// ordered, ordered-set, binary) whose argument or ORDER BY key fails on rows their FILTER
// leaves out, over VALUES, generate_series, routed reads (pushdown on and off, the value
// column declared json and not) and a join, against PostgreSQL over the same rows; a row the
// filter passes still fails as PostgreSQL's does.
func TestAggregateFilterGuardsArgumentsAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	vals := "FROM (VALUES (0, 'a'), (5, '7'), (20, 'b'), (NULL, '9'), (2, '12'), (0, 'c')) v(x, s)"
	values := []string{
		"SELECT sum(10 / x) FILTER (WHERE x <> 0), count(10 / x) FILTER (WHERE x <> 0), avg(100 / x) FILTER (WHERE x <> 0)::text " + vals,
		"SELECT max(10 / x) FILTER (WHERE x <> 0), min(s::int) FILTER (WHERE s ~ '^[0-9]+$'), sum(s::int) FILTER (WHERE s ~ '^[0-9]+$') " + vals,
		"SELECT count(DISTINCT 10 / x) FILTER (WHERE x <> 0), sum(DISTINCT s::int) FILTER (WHERE s ~ '^[0-9]+$') " + vals,
		"SELECT string_agg((10 / x)::text, ',' ORDER BY x) FILTER (WHERE x <> 0), array_agg(s::int ORDER BY s::int DESC) FILTER (WHERE s ~ '^[0-9]+$')::text " + vals,
		"SELECT string_agg(s, ',' ORDER BY 100 / x) FILTER (WHERE x <> 0) " + vals,
		"SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY 10 / x::float8) FILTER (WHERE x <> 0), mode() WITHIN GROUP (ORDER BY s::int) FILTER (WHERE s ~ '^[0-9]+$') " + vals,
		"SELECT corr(10 / x, s::int) FILTER (WHERE x <> 0 AND s ~ '^[0-9]+$'), stddev(100 / x) FILTER (WHERE x <> 0)::text, bool_and(10 / x > 1) FILTER (WHERE x <> 0) " + vals,
		"SELECT x % 2 AS k, sum(10 / x) FILTER (WHERE x <> 0), count(*) FILTER (WHERE x <> 0) " + vals + " GROUP BY 1 ORDER BY 1",
		"SELECT g % 3 AS k, sum(100 / (g % 5)) FILTER (WHERE g % 5 <> 0), max(1000 / (g % 7)) FILTER (WHERE g % 7 > 0) FROM generate_series(1, 200) g GROUP BY 1 ORDER BY 1",
		"SELECT sum(100 / (g % 5)) FILTER (WHERE g % 5 <> 0) OVER (ORDER BY g ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) FROM generate_series(1, 12) g ORDER BY g",
	}
	for _, cl := range clients {
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText, values...)...)
	}
	rng := " WHERE origin IN ('ORD', 'BOS') AND timestamp >= '2001-03-20' AND timestamp < '2001-04-10'"
	delay := "(value->>'delay')::int"
	docs := []string{
		"SELECT count(*), sum(1000 / " + delay + ") FILTER (WHERE " + delay + " <> 0), max(1000 / " + delay + ") FILTER (WHERE " + delay + " > 0) FROM flights" + rng,
		"SELECT origin, sum(1000 / " + delay + ") FILTER (WHERE " + delay + " <> 0), avg(100 / " + delay + ") FILTER (WHERE " + delay + " < 0)::text FROM flights" + rng + " GROUP BY 1 ORDER BY 1",
		"SELECT date_trunc('day', timestamp)::text AS d, count(DISTINCT 1000 / " + delay + ") FILTER (WHERE " + delay + " <> 0) FROM flights" + rng + " GROUP BY 1 ORDER BY 1",
		"SELECT (min(timestamp) FILTER (WHERE " + delay + " <> 0 AND 1000 / " + delay + " > 5))::text, count(*) FILTER (WHERE " + delay + " <> 0 AND 1000 / " + delay + " > 5) FROM flights" + rng,
		"SELECT f.origin, sum(100 / g.x) FILTER (WHERE g.x <> 0) FROM flights f JOIN (VALUES ('ORD', 0), ('ORD', 4), ('BOS', 0), ('BOS', 5)) g(o, x) ON g.o = f.origin" + " WHERE f.origin IN ('ORD', 'BOS') AND f.timestamp >= '2001-03-30' AND f.timestamp < '2001-04-02' GROUP BY 1 ORDER BY 1",
	}
	for _, cl := range jsonDeclaredClients(t, ctx, newEnv(t)) {
		comparePG(t, ctx, pg, one(cl), sameSQL(pgText, docs...)...)
	}
	// A row the filter passes fails as PostgreSQL's does.
	for _, cl := range clients {
		for q, state := range map[string]string{
			"SELECT sum(10 / x) FILTER (WHERE x IS NOT NULL) " + vals:                               "22012",
			"SELECT max(s::int) FILTER (WHERE x <> 0) " + vals:                                      "22P02",
			"SELECT sum(1000 / " + delay + ") FILTER (WHERE " + delay + " >= 0) FROM flights" + rng: "22012",
			// A FILTER's own AND evaluates left to right, as a select list's does.
			"SELECT count(*) FILTER (WHERE 1000 / " + delay + " > 5 AND " + delay + " <> 0) FROM flights" + rng: "22012",
		} {
			refusedWithState(t, ctx, cl.c, pg, q, state)
		}
	}
}

// TestQuotedAliasesAsPostgres: a quoted alias or CTE name keeps its case, so a reference in
// another case is PostgreSQL's 42P01 (trial30's E3: `FROM flights "T"` was qualified by `t`),
// while unquoted names fold to lower case and Metabase's schema-qualified quoted names bind.
func TestQuotedAliasesAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	rng := " WHERE origin = 'ORD' AND timestamp >= '2001-04-01' AND timestamp < '2001-04-01 08:00'"
	for _, cl := range clients {
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText,
			`SELECT "T".id FROM flights "T"`+rng+` ORDER BY 1`,
			`SELECT T.id, t.origin FROM flights t`+rng+` ORDER BY 1`,
			`SELECT "Flights2".id FROM (SELECT id FROM flights`+rng+`) "Flights2" ORDER BY 1`,
			`WITH "C" AS (SELECT 1 AS a) SELECT "C".a FROM "C"`,
			`SELECT "V".a FROM (VALUES (1)) "V"(a)`,
		)...)
		// The oracle's table is not in its schema public.
		comparePG(t, ctx, pg, one(cl.c), pairCases(pgText, [][2]string{{
			`SELECT "public"."flights"."origin", count(*) FROM "public"."flights"` + rng + ` GROUP BY "public"."flights"."origin"`,
			`SELECT "flights"."origin", count(*) FROM "flights"` + rng + ` GROUP BY "flights"."origin"`,
		}})...)
		for _, q := range []string{
			`SELECT t.id FROM flights "T"` + rng,
			`SELECT "T".id FROM flights t` + rng,
			`SELECT t.* FROM flights "T"` + rng,
			`SELECT count(*) FROM flights "T"` + rng + ` AND t.id <> ''`,
			`WITH "C" AS (SELECT 1 AS a) SELECT c.a FROM "C"`,
			`SELECT v.a FROM (VALUES (1)) "V"(a)`,
			`SELECT "Public"."flights"."origin" FROM flights` + rng,
		} {
			refusedWithState(t, ctx, cl.c, pg, q, "42P01")
		}
	}
}
