package e2e

import (
	"testing"
)

// Issue 18's numerics whose display scale varies by row (an average, a quotient, text cast to
// numeric) under NULLIF, one-argument COALESCE, GREATEST/LEAST and scalar subqueries (trial28
// W3, W4): their text and values are PostgreSQL's, each value at its own display scale; a
// cast of a scalar subquery is named as PostgreSQL names it (W6).

// nsc18Texts are compared with PostgreSQL's text exactly.
var nsc18Texts = []string{
	// NULLIF answers its first argument at its display scale.
	"SELECT NULLIF(avg(x), 0)::text FROM (VALUES (9), (10), (10)) v(x)",
	"SELECT (sum(x) / NULLIF(avg(x), 0))::text, (57 / NULLIF(avg(x), 0))::text, (NULLIF(avg(x), 0) * 3)::text, (NULLIF(avg(x), 0) + 1)::text, " +
		"(2 - NULLIF(avg(x), 0))::text, (NULLIF(avg(x), 0) / 7)::text, (NULLIF(avg(x), 0) % 3)::text FROM (VALUES (9), (10), (10)) v(x)",
	"SELECT (57 / NULLIF(a, 0))::text, (57 / COALESCE(NULLIF(a, 0), 1))::text FROM (SELECT avg(x) a FROM (VALUES (9), (10), (10)) v(x)) y",
	"SELECT NULLIF(avg(x), 0)::text, NULLIF(avg(x), avg(x))::text FROM (VALUES (0), (0)) v(x)",
	"SELECT NULLIF(1.5, 2.25)::text, NULLIF(2.25, 1.5)::text, NULLIF(1, 2.5)::text, NULLIF(1.50, 1.5)::text, NULLIF('1.5', 2.25)::text",
	"SELECT g, NULLIF(g * 1.5, 3)::text, NULLIF(g::numeric, 2.00)::text, NULLIF(count(*) * 1.0 / 3, 0)::text FROM generate_series(1, 3) g GROUP BY g ORDER BY g",
	"SELECT NULLIF(g, 2.5)::text, count(*) FROM generate_series(1, 3) g GROUP BY 1 ORDER BY 1",
	"SELECT max(NULLIF(g, 2.5))::text, min(NULLIF(g * 1.5, 0.25))::text FROM generate_series(1, 3) g",
	"SELECT k, NULLIF(x::numeric, 0)::text, COALESCE(x::numeric)::text, (10 / NULLIF(x::numeric, 0))::text FROM (VALUES (1, '2345'), (2, '1.50'), (3, '0'), (4, NULL), (5, '-0.125')) v(k, x) ORDER BY k",
	"SELECT COALESCE(avg(x))::text, (COALESCE(avg(x)) / 7)::text FROM (VALUES (9), (10), (10)) v(x)",
	// CASE with a NULLIF inside, ROUND of a NULLIF, GREATEST/LEAST, a window avg in a NULLIF.
	"SELECT (CASE WHEN count(*) > 1 THEN NULLIF(avg(x), 0) END)::text, round(NULLIF(avg(x), 0), 2)::text, round(1 / NULLIF(avg(x), 0), 3)::text FROM (VALUES (9), (10), (10)) v(x)",
	"SELECT g, (g / NULLIF(avg(g) OVER (), 0))::text, NULLIF(avg(g) OVER (ORDER BY g), 1)::text FROM generate_series(1, 4) g ORDER BY g",
	"SELECT g, ((g - avg(g) OVER ()) / NULLIF(stddev_pop(g) OVER (), 0))::text FROM generate_series(1, 5) g ORDER BY g",
	"SELECT GREATEST(NULLIF(avg(x), 0), 1)::text, LEAST(avg(x), 9.5, 10)::text, GREATEST(1.50, 1.5, 1)::text, LEAST(1.5, 1.50)::text, GREATEST(NULL, 2.5, avg(x))::text, " +
		"GREATEST(avg(x) / 3, 3.2)::text, GREATEST(1.5, 2, 0.25)::text, LEAST(1.5, 2, 0.25)::text, (LEAST(avg(x), 9) / 7)::text FROM (VALUES (9), (10), (10)) v(x)",
	"SELECT g, GREATEST(avg(g) OVER (ORDER BY g), 1.5, g)::text, LEAST(g * 0.5, 1)::text FROM generate_series(1, 4) g ORDER BY g",
	// Scalar subqueries of varying numerics, uncorrelated.
	"SELECT (SELECT avg(x) FROM (VALUES (9), (10), (10)) v(x))::text",
	"SELECT ((SELECT avg(x) FROM (VALUES (9), (10), (10)) v(x)) / 7)::text, ((SELECT avg(x) FROM (VALUES (9), (10), (10)) v(x)) + 1)::text",
	"SELECT g, (g - (SELECT avg(h) FROM generate_series(1, 4) h))::text, (g / (SELECT avg(h) FROM generate_series(1, 4) h))::text FROM generate_series(1, 3) g ORDER BY g",
	"SELECT (SELECT NULLIF(avg(x), 0) FROM (VALUES (9), (10), (10)) v(x))::text, (SELECT sum(x) / 3.0 FROM (VALUES (1), (2)) v(x))::text",
	// ... and correlated.
	"SELECT k, (SELECT avg(x) FROM (VALUES (1, 9), (1, 10), (1, 10), (2, 4), (3, NULL)) w(j, x) WHERE j = k)::text FROM (VALUES (1), (2), (3), (4)) v(k) ORDER BY k",
	// The flights: the BI tools' safe division and "vs overall".
	"SELECT origin, NULLIF(avg((value->>'delay')::int), 0)::text, (count(*) FILTER (WHERE (value->>'delay')::int > 15) / NULLIF(avg((value->>'delay')::int), 0))::text " +
		"FROM flights WHERE origin IN ('ORD', 'BOS') AND timestamp >= '2001-03-15' AND timestamp < '2001-04-15' GROUP BY 1 ORDER BY 1",
	"SELECT origin, (avg((value->>'delay')::int) - (SELECT avg((value->>'delay')::int) FROM flights WHERE origin IN ('ORD', 'BOS') AND timestamp >= '2001-03-15' AND timestamp < '2001-04-15'))::text " +
		"FROM flights WHERE origin IN ('ORD', 'BOS') AND timestamp >= '2001-03-15' AND timestamp < '2001-04-15' GROUP BY 1 ORDER BY 1",
	"SELECT origin, (avg((value->>'delay')::int) / (SELECT avg((value->>'delay')::int) FROM flights WHERE origin IN ('ORD', 'BOS') AND timestamp >= '2001-03-15' AND timestamp < '2001-04-15'))::text, " +
		"(SELECT avg((value->>'delay')::int) FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-03-15' AND timestamp < '2001-04-15')::text " +
		"FROM flights WHERE origin IN ('ORD', 'BOS') AND timestamp >= '2001-03-15' AND timestamp < '2001-04-15' GROUP BY 1 ORDER BY 1",
	"SELECT a.id, (SELECT avg((value->>'delay')::int) FROM flights b WHERE b.origin = 'ORD' AND b.timestamp >= '2001-03-30' AND b.timestamp < '2001-04-02' " +
		"AND b.value->>'destination' = a.value->>'destination')::text FROM flights a WHERE a.origin = 'BOS' AND a.timestamp >= '2001-03-31' AND a.timestamp < '2001-04-01' ORDER BY 1",
	// A WITH query's averages read alone (by this reference; another under a join).
	"WITH s AS (SELECT avg(x) a, sum(x) / 7.0 q FROM (VALUES (9), (10), (10)) v(x)) SELECT NULLIF(a, 0)::text, (57 / a)::text, q::text, (SELECT a FROM s)::text FROM s",
	"WITH s AS (SELECT k, avg(x) a FROM (VALUES (1, 9), (1, 10), (2, 4)) v(k, x) GROUP BY k) SELECT s.k, a::text, (a / 3)::text FROM s ORDER BY 1",
	// A derived table's and a CTE-free WHERE subquery's averages, an IN list of them.
	"SELECT g FROM generate_series(1, 4) g WHERE g > (SELECT avg(h) FROM generate_series(1, 4) h) ORDER BY g",
	"SELECT g, (g IN (SELECT avg(h) FROM generate_series(1, 3) h)), g * 1.0 = ANY (SELECT avg(h) FROM generate_series(1, 3) h GROUP BY h % 2) FROM generate_series(1, 3) g ORDER BY g",
	"SELECT id, NULLIF((value->>'distance')::numeric, 0)::text, COALESCE((value->>'distance')::numeric)::text FROM flights " +
		"WHERE origin = 'BOS' AND timestamp >= '2001-03-31' AND timestamp < '2001-04-01' ORDER BY id",
}

// TestNumericScaleNullIfSubqueryAsPostgres: NULLIF, one-argument COALESCE, GREATEST/LEAST and
// scalar subqueries of numerics whose display scale varies answer PostgreSQL's text and
// values, pushdown on and off; where the scale cannot be followed the text is refused by name.
func TestNumericScaleNullIfSubqueryAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	compared := 0
	for _, cl := range clients {
		compared += compareTextsAsPostgres(t, ctx, pg, cl, nsc18Texts)
		// A cast of a scalar subquery is named after the subquery's column (W6).
		sameColumnNames(t, ctx, cl.c, pg, "SELECT (SELECT 1.50)::text, (SELECT 1 + 1)::int, (SELECT 1.5 AS x)::text, (SELECT avg(x) FROM (VALUES (1)) v(x))::text")
		// Where the display scale cannot be followed, the text is refused by name.
		for _, q := range []string{
			// A correlated subquery reading an outer average, a scalar subquery under LIMIT,
			// GREATEST of a CTE's average.
			"WITH s AS (SELECT avg(g) AS a FROM generate_series(1, 3) g) SELECT GREATEST(s.a, 1)::text FROM s, s t",
			"SELECT ((SELECT a))::text FROM (SELECT avg(x) a FROM (VALUES (9), (10), (10)) v(x)) y",
			"SELECT (SELECT avg(x) FROM (VALUES (9), (10), (10)) v(x) LIMIT 1)::text",
		} {
			refusedNamingDisplayScale(t, ctx, pg, cl, q)
		}
	}
	t.Logf("%d rows compared with PostgreSQL's", compared)
}
