package e2e

import (
	"testing"
)

// Issue 18: AND and OR stop at the operand that decides a row, as PostgreSQL's do, so a guard
// keeps a cast or a division from the rows it excludes (`e.key = 'delay' AND
// (e.value::text)::int > 10` failed with 22P02 on the rows whose key is not 'delay'); the
// conjuncts of a WHERE, HAVING or ON condition, which PostgreSQL's planner orders by cost, not
// as written, answer in either order; an operand that fails on a row no earlier operand
// decides still fails as PostgreSQL's does.

// shortCircuitRange is a slice of the flights of a day and a half from one airport.
const shortCircuitRange = " f.origin = 'ORD' AND f.timestamp >= '2001-03-31 12:00' AND f.timestamp < '2001-04-01 18:00'"

// TestAndOrShortCircuitAsPostgres: guarded casts and divisions in WHERE, HAVING, ON, select
// lists, CASE conditions and nested AND/OR/NOT, over the flights' documents (routed reads,
// pushdown on and off, the value column declared json and not) and over VALUES, against
// PostgreSQL over the same rows.
func TestAndOrShortCircuitAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	each := "FROM flights f, json_each(f.value) e WHERE" + shortCircuitRange
	asNumber := "(e.value::text)::int"
	docs := []string{
		// WHERE: a guard before, after, and around the cast.
		"SELECT count(*), sum(" + asNumber + ") " + each + " AND e.key = 'delay' AND " + asNumber + " > 10",
		"SELECT count(*), sum(" + asNumber + ") " + each + " AND " + asNumber + " > 10 AND e.key = 'delay'",
		"SELECT count(*) " + each + " AND (e.key <> 'delay' OR " + asNumber + " > 10)",
		"SELECT count(*) " + each + " AND NOT (e.key <> 'distance' OR " + asNumber + " <= 500)",
		"SELECT count(*) " + each + " AND e.key IN ('delay', 'distance') AND " + asNumber + " BETWEEN 0 AND 100",
		// A select list evaluates left to right.
		"SELECT f.id, e.key, e.key = 'delay' AND " + asNumber + " > 10, e.key = 'destination' OR " + asNumber + " < 0 " + each + " ORDER BY f.timestamp, f.id, e.key",
		"SELECT f.id, e.key, CASE WHEN e.key = 'distance' AND " + asNumber + " > 1000 THEN 'long' WHEN e.key = 'distance' THEN 'short' END " + each + " ORDER BY f.timestamp, f.id, e.key",
		// HAVING, and a guard on a group's rows.
		"SELECT e.key, count(*) " + each + " GROUP BY e.key HAVING e.key <> 'destination' AND sum(" + asNumber + ") > 0 ORDER BY 1",
		"SELECT e.key, sum(CASE WHEN e.key <> 'destination' AND " + asNumber + " > 0 THEN 1 ELSE 0 END) " + each + " GROUP BY 1 ORDER BY 1",
		// The routed read's own conjuncts, in both orders.
		"SELECT count(*) FROM flights f WHERE" + shortCircuitRange + " AND f.value->>'destination' ~ '^[0-9]+$' AND (f.value->>'destination')::int > 5",
		"SELECT count(*) FROM flights f WHERE" + shortCircuitRange + " AND (f.value->>'destination')::int > 5 AND f.value->>'destination' ~ '^[0-9]+$'",
		"SELECT count(*) FROM flights f WHERE" + shortCircuitRange + " AND (f.value->>'delay')::int > 0 AND 1000 / (f.value->>'delay')::int > 10",
		"SELECT count(*) FROM flights f WHERE" + shortCircuitRange + " AND 1000 / (f.value->>'delay')::int > 10 AND (f.value->>'delay')::int > 0",
		// A join's condition, in both orders.
		"SELECT count(*) FROM flights f JOIN flights g ON g.id = f.id AND g.timestamp = f.timestamp AND g.origin = f.origin AND g.value->>'destination' ~ '^[0-9]+$' AND (g.value->>'destination')::int > length(f.id) WHERE" + shortCircuitRange,
		"SELECT count(*) FROM flights f JOIN flights g ON g.id = f.id AND g.timestamp = f.timestamp AND g.origin = f.origin AND (f.value->>'destination')::int + (g.value->>'delay')::int > 5 AND f.value->>'destination' ~ '^[0-9]+$' WHERE" + shortCircuitRange,
		"SELECT count(*) FROM flights f LEFT JOIN json_each(f.value) e ON e.key = 'delay' AND " + asNumber + " > 10 WHERE" + shortCircuitRange,
		"SELECT count(*) FROM flights f LEFT JOIN json_each(f.value) e ON " + asNumber + " > 10 AND e.key = 'delay' WHERE" + shortCircuitRange,
	}
	for _, cl := range jsonDeclaredClients(t, ctx, newEnv(t)) {
		comparePG(t, ctx, pg, one(cl), sameSQL(pgText, docs...)...)
	}
	values := []string{
		"SELECT x, x <> 0 AND 100 / x > 10, x = 0 OR 100 / x > 10, NOT (x = 0 OR 100 / x <= 10) FROM (VALUES (0), (5), (20), (NULL)) v(x) ORDER BY x",
		"SELECT x FROM (VALUES (0), (5), (20), (NULL)) v(x) WHERE x <> 0 AND 100 / x > 10 ORDER BY x",
		"SELECT x FROM (VALUES (0), (5), (20), (NULL)) v(x) WHERE 100 / x > 10 AND x <> 0 ORDER BY x",
		"SELECT x FROM (VALUES (0), (5), (20), (NULL)) v(x) WHERE x IS NULL OR x = 0 OR 100 / x > 10 ORDER BY x",
		"SELECT x, y FROM (VALUES (0, 'a'), (5, '7'), (20, 'b'), (NULL, '9')) v(x, y) WHERE y ~ '^[0-9]+$' AND y::int + 100 / x > 0 ORDER BY x",
		"SELECT s, (s ~ '^[0-9]+$' AND s::int > 5) OR s = 'x' FROM (VALUES ('7'), ('x'), ('y'), (NULL), ('3')) v(s) ORDER BY s",
		"SELECT g, g % 3 <> 0 AND 10 / (g % 3) > 2 AND (g % 3 = 1 OR 1 / (g % 3 - 1) = 1) FROM generate_series(1, 9) g ORDER BY g",
		"SELECT g % 4 AS k, count(*) FROM generate_series(1, 40) g GROUP BY 1 HAVING 100 / (g % 4) > 40 AND g % 4 <> 0 ORDER BY 1",
		"SELECT a.x, b.y FROM (VALUES (0), (2)) a(x) JOIN (VALUES ('1'), ('z')) b(y) ON a.x <> 0 AND b.y ~ '^[0-9]' AND 10 / a.x + b.y::int > 0 ORDER BY 1, 2",
	}
	for _, cl := range clients {
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText, values...)...)
	}
	// An operand that fails on a row nothing earlier decides fails as PostgreSQL's does.
	for _, cl := range clients {
		for q, state := range map[string]string{
			"SELECT count(*) " + each + " AND e.key = 'destination' AND " + asNumber + " > 10": "22P02",
			"SELECT " + asNumber + " > 10 AND e.key = 'delay' " + each:                         "22P02",
			"SELECT count(*) " + each + " AND (" + asNumber + " > 10 OR e.key <> 'delay')":     "22P02",
			"SELECT x <> 5 AND 100 / x > 1 FROM (VALUES (0), (5)) v(x)":                        "22012",
			"SELECT x FROM (VALUES (0), (5)) v(x) WHERE 100 / x > 1 OR x = 0":                  "22012",
		} {
			refusedWithState(t, ctx, cl.c, pg, q, state)
		}
	}
}
