package e2e

import (
	"testing"
)

// Issue 18's numeric display scales through derived tables and set operations (trial31 D2,
// D3, D3b, D9, D9b): a numeric whose display scale varies by row (VALUES of different scales,
// an average, a quotient, sqrt, CASE/COALESCE/GREATEST of different scales, an untyped
// literal arm) read back from a derived table or WITH query under DISTINCT ON, UNION [ALL],
// INTERSECT [ALL] or EXCEPT [ALL] shows each value at its own display scale, as PostgreSQL's
// text; where flightsrv cannot know it, the text is refused by name.

// scale18Ord is ORD's flights of a morning, with their delays as integers.
const scale18Ord = "(SELECT id, timestamp, value->>'destination' AS dest, (value->>'delay')::int AS delay FROM flights " +
	"WHERE origin = 'ORD' AND timestamp >= '2001-04-01 06:00' AND timestamp < '2001-04-01 09:00') b"

// scale18Texts are compared with PostgreSQL's text exactly.
var scale18Texts = []string{
	// D3: DISTINCT ON in a derived table or WITH query keeps each row's display scale.
	"SELECT k, x::text FROM (SELECT DISTINCT ON (k) k, x FROM (VALUES (1, 1.5), (2, 3), (2, 4.25), (3, 0.100)) v(k, x) ORDER BY k, x DESC) s ORDER BY k",
	"SELECT k, x::text, (x * 2)::text, to_json(x)::text FROM (SELECT DISTINCT ON (k) k, x FROM (VALUES (1, 1.5), (2, 3)) v(k, x) ORDER BY k) s ORDER BY k",
	"WITH c AS (SELECT DISTINCT ON (k) k, x FROM (VALUES (1, 1.5), (2, 3), (1, 2)) v(k, x) ORDER BY k, x) SELECT k, x::text FROM c ORDER BY k",
	"SELECT k, a::text FROM (SELECT DISTINCT ON (k % 2) k, avg(x) AS a FROM (VALUES (1, 9), (1, 10), (2, 4), (3, 5), (3, 6)) v(k, x) GROUP BY k ORDER BY k % 2, k) s ORDER BY k",
	"SELECT dest, x::text FROM (SELECT DISTINCT ON (dest) dest, delay / 4.0 AS x FROM " + scale18Ord + " ORDER BY dest, timestamp DESC, id) s ORDER BY 1",
	"SELECT dest, x::text, y::text FROM (SELECT DISTINCT ON (dest) dest, CASE WHEN delay > 0 THEN 1.5 ELSE 2 END AS x, sqrt(delay * delay + 2.0) AS y FROM " + scale18Ord +
		" ORDER BY dest, id) s ORDER BY 1 LIMIT 12",
	// D9: UNION ALL of two reads with another column beside an average or sqrt.
	"SELECT origin, x::text FROM (SELECT origin, avg((value->>'delay')::int) AS x FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-04-01' AND timestamp < '2001-04-02' GROUP BY origin " +
		"UNION ALL SELECT origin, avg((value->>'delay')::int) FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-04-01' AND timestamp < '2001-04-02' GROUP BY origin) s ORDER BY 1",
	"SELECT id, x::text FROM (SELECT id, sqrt(2.0) AS x FROM " + scale18Ord + " UNION ALL SELECT id, sqrt(2.0) FROM " + scale18Ord + ") s ORDER BY 1, 2",
	"SELECT k, x::text FROM (SELECT dest AS k, avg(delay) AS x FROM " + scale18Ord + " GROUP BY dest UNION ALL SELECT 'all', avg(delay) FROM " + scale18Ord + ") s ORDER BY 1",
	// D9b: arms whose scale is chosen per row (GREATEST, COALESCE, CASE) or varies by arm.
	"SELECT id, x::text FROM (SELECT id, NULLIF(0, delay) * -3.100 AS x FROM " + scale18Ord + " UNION ALL SELECT id, COALESCE(0.5, 2.0) * GREATEST(3, 0.10) FROM " + scale18Ord + ") s ORDER BY 1, 2",
	"SELECT id, x::text FROM (SELECT id, 1.25 + delay AS x FROM " + scale18Ord + " UNION ALL SELECT id, CASE WHEN delay > 5 THEN 0.10 ELSE 2 END FROM " + scale18Ord + ") s ORDER BY 1, 2",
	"SELECT x::text FROM (SELECT 1.5 AS x UNION ALL SELECT avg(g) FROM generate_series(1, 4) g UNION ALL SELECT 2 UNION ALL SELECT g / 3.0 FROM generate_series(1, 2) g) s ORDER BY 1",
	// D3b: INTERSECT, EXCEPT and UNION, distinct and ALL, of varying scales.
	"SELECT x::text FROM (SELECT n AS x FROM (VALUES (1.5), (0.10)) v(n) INTERSECT SELECT n FROM (VALUES (1.5), (0.10)) w(n)) s ORDER BY 1",
	"WITH c AS (SELECT n AS x FROM (VALUES (1.5), (0.10), (3)) v(n) INTERSECT SELECT n FROM (VALUES (1.5), (0.10)) w(n)) SELECT x::text FROM c ORDER BY 1",
	"SELECT x::text FROM (SELECT n AS x FROM (VALUES (1.5), (0.10), (2)) v(n) EXCEPT SELECT n FROM (VALUES (1.5)) w(n)) s ORDER BY 1",
	"SELECT x::text FROM (SELECT n AS x FROM (VALUES (1.5), (0.10), (2)) v(n) UNION SELECT n FROM (VALUES (1.5), (3)) w(n)) s ORDER BY 1",
	"SELECT x::text FROM (SELECT n AS x FROM (VALUES (1.5), (1.5), (0.10), (2)) v(n) INTERSECT ALL SELECT n FROM (VALUES (1.5), (0.10), (1.5), (0.10)) w(n)) s ORDER BY 1",
	"SELECT x::text FROM (SELECT n AS x FROM (VALUES (1.5), (1.5), (0.10), (2)) v(n) EXCEPT ALL SELECT n FROM (VALUES (1.5), (0.10)) w(n)) s ORDER BY 1",
	"SELECT x::text FROM (SELECT n AS x FROM (VALUES (1.5), (0.10)) v(n) UNION ALL SELECT 2.25 UNION SELECT '7.125' UNION ALL SELECT avg(g) FROM generate_series(1, 2) g) s ORDER BY 1",
	"SELECT dest, x::text FROM (SELECT dest, delay / 4.0 AS x FROM " + scale18Ord + " INTERSECT SELECT value->>'destination', (value->>'delay')::int / 4.0 FROM flights " +
		"WHERE origin = 'ORD' AND timestamp >= '2001-04-01 07:00' AND timestamp < '2001-04-01 12:00') s ORDER BY 1, 2",
	"SELECT x::text, count(*) FROM (SELECT avg(delay) AS x FROM " + scale18Ord + " GROUP BY dest UNION SELECT avg((value->>'delay')::int) FROM flights " +
		"WHERE origin = 'BOS' AND timestamp >= '2001-04-01' AND timestamp < '2001-04-02' GROUP BY value->>'destination') s GROUP BY 1 ORDER BY 1",
	// D2: an untyped literal arm is numeric_in's value at its own display scale.
	"SELECT x::text, (x || ''), to_json(x)::text FROM (SELECT 1.50 AS x UNION ALL SELECT '2.5') s ORDER BY 1",
	"SELECT x::text FROM (SELECT '2.5' AS x UNION ALL SELECT 1.50 UNION ALL SELECT '3') s ORDER BY 1",
	"SELECT x::text FROM (SELECT 1.500::numeric(6,3) AS x UNION ALL SELECT '2.5') s ORDER BY 1",
	"SELECT x::text FROM (SELECT '1.50'::numeric AS x UNION SELECT '2.5' UNION SELECT NULL) s ORDER BY 1",
	"WITH c AS (SELECT 1.50 AS x UNION ALL SELECT '2.5') SELECT x::text FROM c ORDER BY 1",
	"SELECT x::text FROM (SELECT '2.5' AS x EXCEPT SELECT 1.50) s ORDER BY 1",
	"SELECT x::text FROM (SELECT 1.50 AS x EXCEPT SELECT '2.5') s ORDER BY 1",
}

// TestNumericScaleSetOpsAsPostgres: numerics whose display scale varies, read back from a
// derived table or WITH query under DISTINCT ON and set operations, answer PostgreSQL's
// text, pushdown on and off; where flightsrv cannot know a value's display scale (equal
// values of different scales in one row of a UNION, a set operation under a join or in a
// scalar subquery) the text is refused by name.
func TestNumericScaleSetOpsAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	compared := 0
	for _, cl := range clients {
		compared += compareTextsAsPostgres(t, ctx, pg, cl, scale18Texts)
		for _, q := range []string{
			// PostgreSQL shows whichever of 1.5 and 1.50 its plan meets first.
			"SELECT x::text FROM (SELECT n AS x FROM (VALUES (1.5), (2)) v(n) UNION SELECT n FROM (VALUES (1.50)) w(n)) s",
			"SELECT x::text FROM (SELECT n AS x FROM (VALUES (1.5), (1.50)) v(n) INTERSECT ALL SELECT n FROM (VALUES (1.50), (0.1)) w(n)) s",
			// Under a join, and in a scalar subquery, the scales are not carried.
			"SELECT s.x::text FROM (SELECT 1.50 AS x UNION ALL SELECT '2.5') s, (VALUES (1)) t(k)",
			"SELECT (SELECT 1.50 UNION ALL SELECT '2.5' LIMIT 1 OFFSET 1)::text",
			"SELECT s.x::text FROM (SELECT DISTINCT ON (k) k, x FROM (VALUES (1, 1.5), (2, 3)) v(k, x) ORDER BY k) s JOIN (VALUES (1), (2)) t(k) ON s.k = t.k",
		} {
			refusedNamingDisplayScale(t, ctx, pg, cl, q)
		}
	}
	t.Logf("%d rows compared with PostgreSQL's", compared)
}
