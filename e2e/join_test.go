package e2e

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/server"
)

// ordSummary and bosSummary are per-destination summaries of ORD's and BOS's flights of the
// join corpus's range (few rows each, a NULL destination for short flights, n their count, m
// the greatest or least delay).
const (
	ordSummary = "(SELECT CASE WHEN (value->>'distance')::int > 700 THEN value->>'destination' END AS d, count(*) AS n, max((value->>'delay')::int) AS m FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-25' AND timestamp < '2001-04-05' GROUP BY 1)"
	bosSummary = "(SELECT CASE WHEN (value->>'distance')::int > 700 THEN value->>'destination' END AS d, count(*) AS n, min((value->>'delay')::int) AS m FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-03-25' AND timestamp < '2001-04-05' GROUP BY 1)"
)

// joinQueries is the join corpus, over the rows of the window corpus (windowFrom: ORD's and
// BOS's flights from March 25, archived, to April 5, 2001, ORD's April bucket archiving and
// BOS's hot): every join type, USING and NATURAL, self-joins of the routed table with
// different ranges, joins of CTEs, subqueries and VALUES, NULL keys (a destination kept only
// for long flights), duplicate keys (many flights share a destination), empty sides, and
// EXISTS, IN, NOT IN (with and without a NULL), scalar subqueries, correlated and not. Each
// query orders every row it returns, so that answers compare row by row.
func joinQueries() []string {
	const (
		ord   = "(SELECT * FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-25' AND timestamp < '2001-04-05')"
		bos   = "(SELECT * FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-03-25' AND timestamp < '2001-04-05')"
		ordE  = "(SELECT * FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-25' AND timestamp < '2001-03-25')" // empty
		dest  = "(value->>'destination')"
		delay = "(value->>'delay')::int"
		nk    = "CASE WHEN (value->>'distance')::int > 700 THEN value->>'destination' END" // a key with NULLs
		// per-destination summaries (few rows each side, keys with NULLs)
		od    = ordSummary
		bd    = bosSummary
		rngA  = " a.timestamp >= '2001-03-25' AND a.timestamp < '2001-04-05'"
		rngB  = " b.timestamp >= '2001-03-25' AND b.timestamp < '2001-04-05'"
		ordIn = "SELECT id FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-25' AND timestamp < '2001-04-05'"
	)
	return []string{
		// Inner joins of summaries, every way of writing them.
		"SELECT o.d, o.n, b.n FROM " + od + " o JOIN " + bd + " b ON o.d = b.d ORDER BY 1",
		"SELECT o.d, o.n, b.n FROM " + od + " o INNER JOIN " + bd + " b ON b.d = o.d AND o.n > b.n ORDER BY 1",
		"SELECT o.d, o.n, b.n FROM " + od + " o, " + bd + " b WHERE o.d = b.d ORDER BY 1",
		"SELECT d, o.n, b.n FROM " + od + " o JOIN " + bd + " b USING (d) ORDER BY 1",
		"SELECT * FROM " + od + " o JOIN " + bd + " b USING (d) ORDER BY 1",
		"SELECT * FROM " + od + " o NATURAL JOIN " + bd + " b ORDER BY 1",
		"SELECT * FROM (SELECT d, n FROM " + od + " x) o NATURAL JOIN (SELECT d, m FROM " + bd + " y) b ORDER BY 1",
		"SELECT o.d, b.d FROM " + od + " o JOIN " + bd + " b ON o.d < b.d ORDER BY 1, 2",
		"SELECT count(*) FROM " + od + " o CROSS JOIN " + bd + " b",
		"SELECT o.d, b.d FROM " + od + " o JOIN " + bd + " b ON true WHERE o.n = 1 ORDER BY 1, 2",
		// Outer joins: NULL keys never match, unmatched rows NULL-extended.
		"SELECT o.d, o.n, b.d, b.n FROM " + od + " o LEFT JOIN " + bd + " b ON o.d = b.d ORDER BY 1, 3, 2, 4",
		"SELECT o.d, o.n, b.d, b.n FROM " + od + " o RIGHT JOIN " + bd + " b ON o.d = b.d ORDER BY 3, 1, 2, 4",
		"SELECT o.d, o.n, b.d, b.n FROM " + od + " o FULL JOIN " + bd + " b ON o.d = b.d ORDER BY 1, 3, 2, 4",
		"SELECT d, o.n, b.n FROM " + od + " o FULL JOIN " + bd + " b USING (d) ORDER BY 1, 2, 3",
		"SELECT d, o.n, b.n FROM " + od + " o LEFT JOIN " + bd + " b USING (d) ORDER BY 1, 2",
		"SELECT d, o.n, b.n FROM " + od + " o RIGHT JOIN " + bd + " b USING (d) ORDER BY 1, 3",
		"SELECT o.d, b.d FROM " + od + " o LEFT JOIN " + bd + " b ON o.d = b.d AND b.n > 5 ORDER BY 1, 2",
		"SELECT o.d, b.d FROM " + od + " o LEFT JOIN " + bd + " b ON o.d = b.d WHERE b.d IS NULL ORDER BY 1",
		"SELECT o.d, b.d FROM " + od + " o FULL JOIN " + bd + " b ON o.d = b.d AND o.n < b.n ORDER BY 1, 2",
		"SELECT o.d, b.d FROM " + od + " o FULL JOIN " + bd + " b ON o.n = b.n + 1000000 ORDER BY 1, 2",
		"SELECT o.d, b.d FROM " + od + " o LEFT JOIN " + bd + " b ON o.d < b.d ORDER BY 1, 2",
		"SELECT o.d, b.d FROM " + od + " o RIGHT JOIN " + bd + " b ON o.n > b.n * 20 ORDER BY 2, 1",
		"SELECT o.d, b.d FROM " + od + " o FULL JOIN " + bd + " b ON o.d = b.d AND o.n BETWEEN b.n - 2 AND b.n + 2 ORDER BY 1, 2",
		// Outer joins under a WHERE that no NULL-extended row passes: inner (or one-sided).
		"SELECT count(*), count(b.id) FROM flights a LEFT JOIN flights b ON a.id = b.id WHERE a.origin = 'ORD' AND" + rngA + " AND b.origin = 'ORD' AND b.timestamp >= '2001-03-30' AND b.timestamp < '2001-04-02'",
		"SELECT o.d, o.n, b.d FROM " + od + " o FULL JOIN " + bd + " b ON o.d = b.d WHERE o.n > 1 ORDER BY 1, 2, 3",
		"SELECT o.d, b.d, b.n FROM " + od + " o FULL JOIN " + bd + " b ON o.d = b.d WHERE b.n IN (1, 2, 3) ORDER BY 2, 3, 1",
		"SELECT o.d, b.d FROM " + od + " o FULL JOIN " + bd + " b ON o.d = b.d WHERE b.n IS NULL OR o.n IS NULL ORDER BY 1, 2",
		// Empty sides.
		"SELECT a.id, b.id FROM " + ordE + " a JOIN " + bos + " b ON a.id = b.id ORDER BY 1",
		"SELECT count(*) FROM " + bos + " b LEFT JOIN " + ordE + " a ON a.id = b.id",
		"SELECT count(*), count(a.id) FROM " + ordE + " a RIGHT JOIN " + bos + " b ON a.id = b.id",
		"SELECT count(*) FROM " + ordE + " a FULL JOIN " + od + " b ON a.id = b.d",
		// Rows of the routed table: duplicates (many flights per destination), hot and archived.
		"SELECT count(*), sum(" + delay + ") FROM flights a JOIN " + bd + " b ON a.value->>'destination' = b.d WHERE a.origin = 'ORD' AND" + rngA,
		"SELECT a.id, b.id FROM flights a JOIN flights b ON a.id = b.id WHERE a.origin = 'ORD' AND b.origin = 'ORD' AND" + rngA + " AND b.timestamp >= '2001-04-01' AND b.timestamp < '2001-04-05' ORDER BY 1",
		"SELECT count(*) FROM flights a JOIN flights b ON a.id = b.id AND a.timestamp = b.timestamp WHERE a.origin = 'ORD' AND b.origin = 'ORD' AND" + rngA + " AND" + rngB,
		"SELECT count(*) FROM flights a LEFT JOIN flights b ON a.id = b.id AND b.origin = 'ORD' AND b.timestamp >= '2001-03-30' AND b.timestamp < '2001-04-02' WHERE a.origin = 'ORD' AND" + rngA + " AND b.id IS NULL",
		"SELECT a.origin, count(*) FROM flights a JOIN flights b ON a.value->>'destination' = b.value->>'destination' AND a.timestamp::date = b.timestamp::date WHERE a.origin IN ('ORD', 'BOS') AND b.origin = 'BOS' AND" + rngA + " AND" + rngB + " GROUP BY 1 ORDER BY 1",
		"SELECT a.id, b.id, a.timestamp FROM " + ord + " a JOIN " + bos + " b ON a.timestamp = b.timestamp AND " + "(a.value->>'destination') = (b.value->>'destination') ORDER BY 1, 2",
		"SELECT date_trunc('day', a.timestamp) AS day, count(DISTINCT b.id) FROM " + ord + " a JOIN " + bos + " b ON date_trunc('day', a.timestamp) = date_trunc('day', b.timestamp) AND a.value->>'destination' = b.value->>'destination' GROUP BY 1 ORDER BY 1",
		"SELECT x.day, x.n, y.n FROM (SELECT date_trunc('day', timestamp) AS day, count(*) AS n FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-25' AND timestamp < '2001-04-05' GROUP BY 1) x FULL JOIN (SELECT date_trunc('day', timestamp) AS day, count(*) AS n FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-03-28' AND timestamp < '2001-04-05' GROUP BY 1) y ON x.day = y.day ORDER BY 1",
		// The time filter written on the join's output pins the side it names.
		"SELECT count(*) FROM flights a JOIN " + bd + " b ON a.value->>'destination' = b.d WHERE a.origin = 'ORD' AND a.timestamp >= '2001-04-01' AND a.timestamp < '2001-04-03'",
		"SELECT count(*) FROM (SELECT a.id, a.timestamp, b.n FROM flights a JOIN " + bd + " b ON a.value->>'destination' = b.d WHERE a.origin = 'BOS') t WHERE timestamp >= '2001-03-30' AND timestamp < '2001-04-02'",
		"SELECT count(*) FROM flights a LEFT JOIN " + bd + " b ON a.value->>'destination' = b.d WHERE a.origin = 'BOS' AND" + rngA,
		// CTEs and VALUES.
		"WITH o AS " + od + ", b AS " + bd + " SELECT o.d, o.m, b.m FROM o JOIN b ON o.d = b.d ORDER BY 1",
		"WITH o AS " + od + " SELECT o1.d, o2.d FROM o o1 JOIN o o2 ON o1.n = o2.n AND o1.d < o2.d ORDER BY 1, 2",
		"SELECT v.code, v.label, o.n FROM (VALUES ('DEN', 'Denver'), ('SFO', 'San Francisco'), ('XXX', 'none'), (NULL, 'null')) AS v(code, label) LEFT JOIN " + od + " o ON o.d = v.code ORDER BY 1",
		"SELECT v.code, count(a.id) FROM (VALUES ('DEN'), ('LAX'), ('ZZZ')) AS v(code) LEFT JOIN flights a ON a.value->>'destination' = v.code AND a.origin = 'BOS' AND" + rngA + " GROUP BY 1 ORDER BY 1",
		"SELECT x, y FROM (VALUES (1), (2), (2), (NULL)) AS a(x) FULL JOIN (VALUES (2), (3), (NULL)) AS b(y) ON x = y ORDER BY 1, 2",
		"SELECT x, y FROM (VALUES (1.5::float8), ('NaN'::float8), (0)) AS a(x) JOIN (VALUES (-0.0::float8), ('NaN'::float8), (1.5)) AS b(y) ON x = y ORDER BY 1",
		"SELECT * FROM (VALUES (1, 'a'), (2, 'b')) AS a(k, v) JOIN (VALUES (1, 'c'), (1, 'd'), (3, 'e')) AS b(k, w) USING (k) ORDER BY 1, 2, 3",
		"SELECT * FROM (VALUES (1, 'a'), (2, 'b')) AS a(k, v) NATURAL FULL JOIN (VALUES (1, 'c'), (3, 'e')) AS b(k, w) ORDER BY 1",
		// Three-way joins and joins over joins.
		"SELECT o.d, b.n, v.label FROM " + od + " o JOIN " + bd + " b ON o.d = b.d JOIN (VALUES ('DEN', 'Denver'), ('SFO', 'SF')) v(code, label) ON v.code = o.d ORDER BY 1",
		"SELECT o.d, b.d, v.code FROM " + od + " o LEFT JOIN " + bd + " b ON o.d = b.d FULL JOIN (VALUES ('DEN'), ('QQQ')) v(code) ON v.code = b.d ORDER BY 1, 3",
		"SELECT count(*) FROM " + od + " o, " + bd + " b, (VALUES (1), (2)) v(k) WHERE o.d = b.d",
		// EXISTS and NOT EXISTS, correlated and not.
		"SELECT o.d FROM " + od + " o WHERE EXISTS (SELECT 1 FROM " + bd + " b WHERE b.d = o.d) ORDER BY 1",
		"SELECT o.d FROM " + od + " o WHERE NOT EXISTS (SELECT 1 FROM " + bd + " b WHERE b.d = o.d) ORDER BY 1",
		"SELECT o.d FROM " + od + " o WHERE EXISTS (SELECT 1 FROM " + bd + " b WHERE b.d = o.d AND b.n > 3) AND o.n > 1 ORDER BY 1",
		"SELECT count(*) FROM " + od + " o WHERE EXISTS (SELECT 1 FROM " + bd + " b)",
		"SELECT count(*) FROM " + od + " o WHERE NOT EXISTS (SELECT 1 FROM " + ordE + " b)",
		"SELECT count(*) FROM flights a WHERE a.origin = 'ORD' AND" + rngA + " AND EXISTS (SELECT 1 FROM flights b WHERE b.origin = 'BOS' AND" + rngB + " AND b.value->>'destination' = a.value->>'destination')",
		// IN and NOT IN, NULLs in the subquery.
		"SELECT o.d, o.n FROM " + od + " o WHERE o.d IN (SELECT d FROM " + bd + " b) ORDER BY 1",
		"SELECT o.d, o.n FROM " + od + " o WHERE o.d NOT IN (SELECT d FROM " + bd + " b) ORDER BY 1",
		"SELECT o.d, o.n FROM " + od + " o WHERE o.d NOT IN (SELECT d FROM " + bd + " b WHERE d IS NOT NULL) ORDER BY 1",
		"SELECT o.d FROM " + od + " o WHERE o.d NOT IN (SELECT d FROM " + bd + " b WHERE false) ORDER BY 1",
		"SELECT count(*) FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-03-25' AND timestamp < '2001-04-05' AND id IN (" + ordIn + ")",
		"SELECT count(*) FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-03-25' AND timestamp < '2001-04-05' AND value->>'destination' IN (SELECT value->>'destination' FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-04-01' AND timestamp < '2001-04-02')",
		"SELECT o.d FROM " + od + " o WHERE o.n IN (SELECT n FROM " + bd + " b WHERE b.d = o.d) ORDER BY 1",
		"SELECT x FROM (VALUES (1), (2), (NULL)) a(x) WHERE x NOT IN (SELECT 3) ORDER BY 1",
		"SELECT x FROM (VALUES (1), (2), (NULL)) a(x) WHERE x IN (SELECT y FROM (VALUES (2), (NULL)) b(y)) ORDER BY 1",
		// Scalar subqueries.
		"SELECT o.d, o.n, (SELECT max(n) FROM " + bd + " b) AS top FROM " + od + " o ORDER BY 1",
		"SELECT o.d, o.n FROM " + od + " o WHERE o.n > (SELECT avg(n) FROM " + od + " x) ORDER BY 1",
		"SELECT o.d, (SELECT b.n FROM " + bd + " b WHERE b.d = o.d) AS bn FROM " + od + " o ORDER BY 1",
		"SELECT o.d, (SELECT max(" + delay + ") FROM flights f WHERE f.origin = 'BOS' AND f.timestamp >= '2001-03-25' AND f.timestamp < '2001-04-05' AND f.value->>'destination' = o.d) AS worst FROM " + od + " o ORDER BY 1",
		"SELECT o.d, (SELECT count(*) FROM flights f WHERE f.origin = 'BOS' AND f.timestamp >= '2001-03-25' AND f.timestamp < '2001-04-05' AND f.value->>'destination' = o.d) AS c FROM " + od + " o ORDER BY 1",
		"SELECT id, (SELECT 42) FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-04-01' AND timestamp < '2001-04-01 02:00' ORDER BY 1",
		"SELECT o.d, (SELECT n FROM " + bd + " b WHERE b.d = 'nowhere') FROM " + od + " o ORDER BY 1",
		// Scalar subqueries in grouped queries: a share of the total, HAVING against an
		// average, a global aggregate filtered by one, a correlated one in WHERE.
		"SELECT " + dest + " AS d, count(*)::float8 * 100 / (SELECT count(*) FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-25' AND timestamp < '2001-04-05') AS pct FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-25' AND timestamp < '2001-04-05' GROUP BY 1 ORDER BY 1",
		"SELECT " + dest + " AS d, count(*) FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-03-25' AND timestamp < '2001-04-05' GROUP BY 1 HAVING count(*) > (SELECT avg(n) FROM " + bd + " x) ORDER BY 1",
		"SELECT count(*) FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-03-25' AND timestamp < '2001-04-05' AND " + delay + " > (SELECT avg(" + delay + ") FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-03-25' AND timestamp < '2001-04-05')",
		"SELECT f.value->>'destination', count(*) FROM flights f WHERE f.origin = 'ORD' AND f.timestamp >= '2001-03-25' AND f.timestamp < '2001-04-05' AND (f.value->>'delay')::int > (SELECT avg((g.value->>'delay')::int) FROM flights g WHERE g.origin = 'ORD' AND g.timestamp >= '2001-03-25' AND g.timestamp < '2001-04-05' AND g.value->>'destination' = f.value->>'destination') GROUP BY 1 ORDER BY 1",
		// Subqueries under OR and NOT (mark joins): EXISTS anywhere, IN under AND and OR.
		"SELECT count(*) FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-03-25' AND timestamp < '2001-04-05' AND (" + delay + " > 60 OR value->>'destination' IN (SELECT value->>'destination' FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-04-01' AND timestamp < '2001-04-02'))",
		"SELECT id FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-03-25' AND timestamp < '2001-04-05' AND (" + delay + " > 200 OR EXISTS (SELECT 1 FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-25' AND timestamp < '2001-04-05' AND " + delay + " > 900)) ORDER BY id",
		"SELECT id FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-03-25' AND timestamp < '2001-04-05' AND (" + delay + " > 200 OR NOT EXISTS (SELECT 1 FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-25' AND timestamp < '2001-04-05' AND " + delay + " > 100)) ORDER BY id",
		"SELECT a.id FROM flights a WHERE a.origin = 'BOS' AND" + rngA + " AND ((a.value->>'delay')::int < -15 OR EXISTS (SELECT 1 FROM flights b WHERE b.origin = 'ORD' AND" + rngB + " AND b.value->>'destination' = a.value->>'destination' AND (b.value->>'delay')::int > 120)) ORDER BY 1",
		"SELECT a.id, NOT EXISTS (SELECT 1 FROM flights b WHERE b.origin = 'ORD' AND" + rngB + " AND b.id = a.id) IS NOT NULL AS t FROM flights a WHERE a.origin = 'BOS' AND" + rngA + " AND (a.id < '0000050000' OR NOT EXISTS (SELECT 1 FROM flights b WHERE b.origin = 'ORD' AND" + rngB + " AND b.value->>'destination' = a.value->>'destination')) ORDER BY 1",
		"SELECT o.d, o.n FROM " + od + " o WHERE o.n > 50 OR (o.m > 100 AND o.d IN (SELECT d FROM " + bd + " b WHERE b.n > 5)) ORDER BY 1",
		"SELECT o.d, o.n FROM " + od + " o WHERE o.d IS NULL OR o.n IN (SELECT n FROM " + bd + " b WHERE b.d = o.d) OR o.m < 0 ORDER BY 1",
		"SELECT x FROM (VALUES (1), (2), (NULL), (4)) a(x) WHERE x = 4 OR x IN (SELECT y FROM (VALUES (2), (NULL)) b(y)) ORDER BY 1",
		"SELECT g FROM generate_series(1, 20) g WHERE g % 7 = 0 OR g IN (SELECT h * 3 FROM generate_series(1, 4) h) OR EXISTS (SELECT 1 FROM generate_series(1, 2) k WHERE k * 10 = g) ORDER BY 1",
		"SELECT " + dest + " AS d, count(*) FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-03-25' AND timestamp < '2001-04-05' AND (" + dest + " = 'DCA' OR " + dest + " IN (SELECT " + dest + " FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-31' AND timestamp < '2001-04-01' AND " + delay + " > 60)) GROUP BY 1 ORDER BY 1",
		// Correlated NOT IN (an anti join on the correlation keys, NOT IN's condition the
		// residual: an empty set keeps the row, a NULL in its own set drops it), and NOT IN
		// under OR and IN under NOT (three marks: a match, a NULL, any row).
		"SELECT o.d, o.n FROM " + od + " o WHERE o.m NOT IN (SELECT b.m FROM " + bd + " b WHERE b.n = o.n) ORDER BY 1",
		"SELECT o.d, o.n FROM " + od + " o WHERE o.n NOT IN (SELECT b.n FROM " + bd + " b WHERE b.d = o.d) ORDER BY 1",
		"SELECT x, k FROM (VALUES (1, 'a'), (2, 'a'), (NULL, 'a'), (1, 'b'), (2, 'b'), (NULL, 'c'), (1, NULL)) a(x, k) WHERE x NOT IN (SELECT y FROM (VALUES (1, 'a'), (NULL, 'b'), (3, 'b'), (5, NULL)) b(y, j) WHERE j = k) ORDER BY 1, 2",
		"SELECT count(*) FROM flights a WHERE a.origin = 'ORD' AND" + rngA + " AND a.value->>'destination' NOT IN (SELECT b.value->>'destination' FROM flights b WHERE b.origin = 'BOS' AND" + rngB + " AND b.timestamp::date = a.timestamp::date)",
		"SELECT o.d, o.n FROM " + od + " o WHERE o.n > 40 OR o.d NOT IN (SELECT d FROM " + bd + " b) ORDER BY 1",
		"SELECT o.d, o.n FROM " + od + " o WHERE o.n > 40 OR o.d NOT IN (SELECT d FROM " + bd + " b WHERE d IS NOT NULL) ORDER BY 1",
		"SELECT o.d, o.n FROM " + od + " o WHERE NOT (o.n > 40 OR o.d IN (SELECT d FROM " + bd + " b WHERE b.n > 2)) ORDER BY 1",
		"SELECT x FROM (VALUES (1), (2), (NULL), (4)) a(x) WHERE x = 4 OR x NOT IN (SELECT y FROM (VALUES (2), (NULL)) b(y)) ORDER BY 1",
		"SELECT x FROM (VALUES (1), (2), (NULL), (4)) a(x) WHERE x = 4 OR x NOT IN (SELECT y FROM (VALUES (2), (3)) b(y)) ORDER BY 1",
		"SELECT x FROM (VALUES (1), (2), (NULL), (4)) a(x) WHERE x = 4 OR x NOT IN (SELECT y FROM (VALUES (2)) b(y) WHERE false) ORDER BY 1",
		"SELECT x, k FROM (VALUES (1, 'a'), (2, 'a'), (NULL, 'a'), (1, 'b'), (2, 'b'), (NULL, 'c'), (7, 'd')) a(x, k) WHERE k = 'd' OR NOT (x IN (SELECT y FROM (VALUES (1, 'a'), (NULL, 'b'), (3, 'b')) b(y, j) WHERE j = k) OR x > 1) ORDER BY 1, 2",
		// Correlations of any shape, over the subquery's domain (the outer values it reads):
		// non-equalities, equalities with a residual, outer columns in the select list,
		// expressions over count(), GROUP BY, HAVING and DISTINCT in the subquery, EXISTS's
		// harmless LIMIT, NULL outer values.
		"SELECT o.d, o.n FROM " + od + " o WHERE EXISTS (SELECT 1 FROM " + bd + " b WHERE b.n > o.n * 3) ORDER BY 1",
		"SELECT o.d, o.n FROM " + od + " o WHERE NOT EXISTS (SELECT 1 FROM " + bd + " b WHERE b.n > o.n) ORDER BY 1",
		"SELECT o.d, o.n FROM " + od + " o WHERE EXISTS (SELECT 1 FROM " + bd + " b WHERE b.d = o.d AND b.n < o.n) ORDER BY 1",
		"SELECT o.d, o.n FROM " + od + " o WHERE o.n > 30 OR EXISTS (SELECT 1 FROM " + bd + " b WHERE b.d <> o.d AND b.m > o.m) ORDER BY 1",
		"SELECT o.d, (SELECT count(*) FROM " + bd + " b WHERE b.n < o.n) AS c, (SELECT max(b.m) FROM " + bd + " b WHERE b.d = o.d AND b.n <= o.n) AS m FROM " + od + " o ORDER BY 1",
		"SELECT o.d, (SELECT count(*) + 1 FROM " + bd + " b WHERE b.d = o.d) AS c, (SELECT count(b.m) * 10 FROM " + bd + " b WHERE b.d = o.d) AS c10, (SELECT COALESCE(sum(b.n), -1) FROM " + bd + " b WHERE b.d = o.d) AS s FROM " + od + " o ORDER BY 1",
		"SELECT o.d, (SELECT max(b.n) - o.n FROM " + bd + " b WHERE b.d = o.d) AS diff, (SELECT o.m || '/' || b.m FROM " + bd + " b WHERE b.d = o.d) AS pair FROM " + od + " o ORDER BY 1",
		"SELECT o.d, (SELECT max(b.n) FROM " + bd + " b WHERE b.d = o.d GROUP BY b.d) AS g, (SELECT count(*) FROM " + bd + " b WHERE b.n < o.n HAVING count(*) > 3) AS h FROM " + od + " o ORDER BY 1",
		"SELECT o.d, o.n FROM " + od + " o WHERE o.n IN (SELECT DISTINCT b.n FROM " + bd + " b WHERE b.d <> o.d) ORDER BY 1",
		"SELECT o.d, o.n FROM " + od + " o WHERE o.n NOT IN (SELECT b.n FROM " + bd + " b WHERE b.m > o.m) ORDER BY 1",
		"SELECT o.d FROM " + od + " o WHERE EXISTS (SELECT 1 FROM " + bd + " b WHERE b.d = o.d ORDER BY b.n LIMIT 1) AND NOT EXISTS (SELECT b.d FROM " + bd + " b WHERE b.n > o.n * 50 LIMIT ALL) ORDER BY 1",
		"SELECT x, (SELECT count(*) FROM (VALUES (1), (2), (NULL)) b(y) WHERE y IS NOT DISTINCT FROM x OR y > x) AS c, (SELECT sum(y) FILTER (WHERE y > 1) FROM (VALUES (1), (2), (NULL)) b(y) WHERE x IS NULL OR y < x) AS s FROM (VALUES (1), (NULL), (3)) a(x) ORDER BY 1",
		// LIMIT and OFFSET per outer row (row_number over the domain's rows): the latest
		// earlier flight, top values, EXISTS over LIMIT 0.
		"SELECT o.d, (SELECT b.n FROM " + bd + " b WHERE b.d <> o.d ORDER BY b.n DESC, b.d LIMIT 1) AS top, (SELECT b.d FROM " + bd + " b WHERE b.n < o.n ORDER BY 1 LIMIT 1 OFFSET 2) AS third FROM " + od + " o ORDER BY 1",
		"SELECT o.d, o.n FROM " + od + " o WHERE o.n IN (SELECT b.n FROM " + bd + " b WHERE b.m < o.m ORDER BY b.n DESC, b.d LIMIT 2 OFFSET 1) OR EXISTS (SELECT 1 FROM " + bd + " b WHERE b.d = o.d LIMIT 0) ORDER BY 1",
		"SELECT a.id, (SELECT b.id FROM flights b WHERE b.origin = 'ORD' AND" + rngB + " AND b.value->>'destination' = a.value->>'destination' AND b.timestamp < a.timestamp ORDER BY b.timestamp DESC, b.id DESC LIMIT 1) AS prev FROM flights a WHERE a.origin = 'BOS' AND a.timestamp >= '2001-04-01' AND a.timestamp < '2001-04-01 12:00' ORDER BY 1",
		// IN (SELECT …) in an expression and the select list: PostgreSQL's three values (true, a
		// NULL in the set or a NULL x over a set of some row, false).
		"SELECT x, x IN (SELECT y FROM (VALUES (2), (NULL)) b(y)) AS i, x NOT IN (SELECT y FROM (VALUES (2), (3)) b(y)) AS n, x IN (SELECT y FROM (VALUES (1)) b(y) WHERE false) AS e FROM (VALUES (1), (2), (NULL)) a(x) ORDER BY 1",
		"SELECT x, k, CASE WHEN x IN (SELECT y FROM (VALUES (1, 'a'), (NULL, 'b'), (3, 'b')) b(y, j) WHERE j = k) THEN 'in' ELSE 'not' END AS c FROM (VALUES (1, 'a'), (2, 'a'), (NULL, 'a'), (3, 'b'), (2, 'b'), (NULL, 'c')) a(x, k) WHERE (x IN (SELECT y FROM (VALUES (1, 'a'), (NULL, 'b'), (3, 'b')) b(y, j) WHERE j = k)) IS NOT TRUE OR k = 'b' ORDER BY 1, 2",
		"SELECT o.d, o.d IN (SELECT d FROM " + bd + " b WHERE b.n > o.n) AS more FROM " + od + " o ORDER BY 1",
		"SELECT id, id IN (SELECT b.id FROM flights b WHERE b.origin = 'ORD' AND" + rngB + ") AS both_ FROM flights a WHERE a.origin = 'BOS' AND a.timestamp >= '2001-04-01' AND a.timestamp < '2001-04-01 06:00' ORDER BY 1",
		// Nested correlated subqueries, correlated subqueries in CTEs and derived tables, a
		// correlation through a USING column, a scalar subquery of a scalar subquery.
		"SELECT o.d FROM " + od + " o WHERE EXISTS (SELECT 1 FROM " + bd + " b WHERE b.d = o.d AND EXISTS (SELECT 1 FROM " + bd + " c WHERE c.n < b.n AND c.m > b.m)) ORDER BY 1",
		"SELECT o.d, (SELECT max(b.n) FROM " + bd + " b WHERE b.d = o.d AND b.d NOT IN (SELECT c.d FROM " + bd + " c WHERE c.m < b.m AND c.d IS NOT NULL)) AS c, (SELECT b.n FROM " + bd + " b WHERE b.d = o.d AND b.n > o.n - 1 AND EXISTS (SELECT 1 FROM " + bd + " c WHERE c.m < b.m)) AS e FROM " + od + " o ORDER BY 1",
		"WITH o AS " + od + ", b AS " + bd + " SELECT o.d, (SELECT max(b.n) FROM b WHERE b.n <= o.n) AS le FROM o WHERE o.n > (SELECT avg(n) FROM b WHERE b.m >= o.m) ORDER BY 1",
		"SELECT t.d, t.c FROM (SELECT o.d, (SELECT count(*) FROM " + bd + " b WHERE b.n > o.n) AS c FROM " + od + " o) t WHERE t.c > 2 ORDER BY 1",
		"SELECT d, o.n, (SELECT count(*) FROM " + bd + " c WHERE c.d < d) AS before FROM " + od + " o JOIN " + bd + " b USING (d) ORDER BY 1",
		"SELECT o.d, (SELECT (SELECT count(*) FROM " + bd + " c WHERE c.n < b.n) FROM " + bd + " b WHERE b.d = o.d) AS x FROM " + od + " o ORDER BY 1",
		"SELECT o.d, (SELECT string_agg(b.d, ',' ORDER BY b.d) FROM " + bd + " b WHERE b.n = o.n) AS same_n, (SELECT bool_and(b.m > o.m) FROM " + bd + " b WHERE b.n < o.n) AS all_more FROM " + od + " o ORDER BY 1",
		"SELECT o.d, (SELECT count(*) FROM " + bd + " b WHERE b.n < o.n LIMIT 1) AS c, (SELECT max(b.n) FROM " + bd + " b WHERE b.d <> o.d GROUP BY b.n % 3 ORDER BY 1 DESC LIMIT 1) AS top FROM " + od + " o ORDER BY 1",
		"SELECT o.d FROM " + od + " o WHERE EXISTS (SELECT b.n % 2 FROM " + bd + " b WHERE b.n < o.n GROUP BY 1 HAVING count(*) > 2) AND NOT EXISTS (SELECT 1 FROM " + bd + " b WHERE b.m > o.m HAVING count(*) > 5) ORDER BY 1",
		// EXISTS and IN in a grouped query's select list and HAVING, over its GROUP BY columns.
		"SELECT o.d, count(*), EXISTS (SELECT 1 FROM " + bd + " b WHERE b.d = o.d) AS bos, o.d IN (SELECT b.d FROM " + bd + " b WHERE b.n > 3) AS busy FROM (SELECT d, n FROM " + od + " x) o GROUP BY o.d HAVING count(*) >= 1 AND (o.d IS NULL OR o.d NOT IN (SELECT b.d FROM " + bd + " b WHERE b.n > 40)) ORDER BY 1",
		// LATERAL: top n per row, aggregates per row, ON over the lateral side, no FROM.
		"SELECT o.d, t.d, t.n FROM " + od + " o CROSS JOIN LATERAL (SELECT b.d, b.n FROM " + bd + " b WHERE b.n < o.n ORDER BY b.n DESC, b.d LIMIT 2) t ORDER BY 1, 3 DESC, 2",
		"SELECT o.d, t.c, t.s FROM " + od + " o LEFT JOIN LATERAL (SELECT count(*) AS c, sum(b.n) AS s FROM " + bd + " b WHERE b.d = o.d) t ON true ORDER BY 1",
		"SELECT o.d, t.m FROM " + od + " o LEFT JOIN LATERAL (SELECT b.m FROM " + bd + " b WHERE b.d = o.d) t ON t.m > 0 ORDER BY 1, 2",
		"SELECT o.d, x.v, (SELECT o.n + 1 WHERE o.n > 2) AS n1 FROM " + od + " o, LATERAL (SELECT o.n * 2 AS v) x ORDER BY 1",
		"SELECT d.dest, t.id, t.delay FROM (VALUES ('DEN'), ('LAX'), ('ZZZ')) d(dest) CROSS JOIN LATERAL (SELECT id, " + delay + " AS delay FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-03-25' AND timestamp < '2001-04-05' AND value->>'destination' = d.dest ORDER BY " + delay + " DESC, id LIMIT 3) t ORDER BY 1, 3 DESC, 2",
		"SELECT a.id, t.n FROM flights a JOIN LATERAL (SELECT count(*) AS n FROM flights b WHERE b.origin = 'ORD' AND" + rngB + " AND b.timestamp BETWEEN a.timestamp - interval '30 minutes' AND a.timestamp) t ON true WHERE a.origin = 'BOS' AND a.timestamp >= '2001-04-02' AND a.timestamp < '2001-04-02 08:00' ORDER BY 1",
		// Correlated scalar subqueries in a grouped query's select list and HAVING, over its
		// GROUP BY expressions.
		"SELECT a.dest, count(*), (SELECT count(*) FROM flights b WHERE b.origin = 'BOS' AND" + rngB + " AND b.value->>'destination' = a.dest) AS bos FROM (SELECT value->>'destination' AS dest FROM " + ord + " x) a GROUP BY 1 ORDER BY 1",
		"SELECT o.d, count(*), (SELECT max(b.n) FROM " + bd + " b WHERE b.d = o.d) AS bn, (SELECT count(*) FROM " + bd + " b WHERE b.n < o.n2) AS under FROM (SELECT d, n, n AS n2 FROM " + od + " x) o GROUP BY o.d, o.n2 HAVING count(*) <= (SELECT count(*) FROM " + bd + " b WHERE b.d = o.d) + 1 ORDER BY 1",
		"SELECT a.day, count(*) AS n, (SELECT count(*) FROM flights b WHERE b.origin = 'BOS' AND" + rngB + " AND b.timestamp::date = a.day) AS bos, (SELECT count(*) FROM flights b WHERE b.origin = 'BOS' AND" + rngB + " AND b.timestamp::date < a.day) AS before FROM (SELECT timestamp::date AS day FROM " + ord + " x) a GROUP BY a.day ORDER BY 1",
		"SELECT a.id, (SELECT count(*) FROM flights b WHERE b.origin = 'ORD' AND" + rngB + " AND b.timestamp < a.timestamp AND b.timestamp >= a.timestamp - interval '1 hour') AS hour_before FROM flights a WHERE a.origin = 'BOS' AND a.timestamp >= '2001-04-01' AND a.timestamp < '2001-04-01 09:00' ORDER BY 1",
		"SELECT a.id, (SELECT max(b.timestamp) FROM flights b WHERE b.origin = 'ORD' AND" + rngB + " AND b.value->>'destination' = a.value->>'destination' AND b.timestamp < a.timestamp) AS last_ord FROM flights a WHERE a.origin = 'BOS' AND a.timestamp >= '2001-03-31' AND a.timestamp < '2001-04-01 12:00' ORDER BY 1",
	}
}

// subqueryQueries are subqueries of the join corpus's rows that each answer rows: correlated
// subqueries under an enclosing query's filters (Superset's virtual datasets), ALL and ANY
// with any comparison, correlated subqueries with DISTINCT ON, window functions, UNION and WITH
// inside.
func subqueryQueries() []string {
	const (
		// Superset's PostgreSQL time literals
		ts31 = "TO_TIMESTAMP('2001-03-31 00:00:00.000000', 'YYYY-MM-DD HH24:MI:SS.US')"
		ts02 = "TO_TIMESTAMP('2001-04-02 00:00:00.000000', 'YYYY-MM-DD HH24:MI:SS.US')"
		od   = ordSummary
		bd   = bosSummary
		ax   = " FROM (VALUES (1), (2), (3), (NULL)) a(x) ORDER BY 1"
		bosD = "SELECT (value->>'delay')::int FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-03-31' AND timestamp < '2001-04-02' AND (value->>'delay')::int < 60"
		ordF = " FROM flights a WHERE a.origin = 'ORD' AND a.timestamp >= '2001-03-31 06:00' AND a.timestamp < '2001-04-01 12:00'"
	)
	return []string{
		// A read pinned by an equality with a pinned column: the inner read of a correlation
		// i.origin = o.origin (through the domain, the outer partition written outside the
		// virtual table), a self-join's partition and time range.
		"SELECT id FROM (SELECT id, timestamp FROM flights o WHERE origin = 'ORD' AND EXISTS (SELECT 1 FROM flights i WHERE i.origin = o.origin AND i.timestamp >= '2001-03-25' AND i.timestamp < '2001-04-05' AND i.timestamp < o.timestamp AND i.timestamp >= o.timestamp - interval '2 minutes')) AS virtual_table WHERE timestamp >= " + ts31 + " AND timestamp < '2001-03-31 12:00' ORDER BY 1",
		"SELECT count(*), count(DISTINCT a.id) FROM flights a WHERE a.origin = 'BOS' AND a.timestamp >= '2001-04-01' AND a.timestamp < '2001-04-02' AND EXISTS (SELECT 1 FROM flights i WHERE i.origin = a.origin AND i.timestamp >= '2001-03-25' AND i.timestamp < '2001-04-05' AND i.value->>'destination' = a.value->>'destination' AND i.id <> a.id)",
		"SELECT a.id, b.id FROM flights a JOIN flights b ON b.origin = a.origin AND b.timestamp = a.timestamp AND b.id < a.id WHERE a.origin = 'ORD' AND a.timestamp >= '2001-03-31 06:00' AND a.timestamp < '2001-03-31 09:00' ORDER BY 1, 2",
		// ALL and ANY with every comparison: PostgreSQL's three values (a NULL in the set, a
		// NULL x, an empty set: ALL true, ANY false).
		"SELECT x, x > ALL (SELECT y FROM (VALUES (1), (2)) b(y)) AS gt, x >= ALL (SELECT y FROM (VALUES (1), (NULL)) b(y)) AS ge_null, x < ALL (SELECT y FROM (VALUES (1)) b(y) WHERE false) AS empty, x <> ALL (SELECT y FROM (VALUES (2), (NULL)) b(y)) AS ne, x = ALL (SELECT y FROM (VALUES (2), (2)) b(y)) AS eq, x <= ALL (SELECT y FROM (VALUES (NULL::int)) b(y)) AS only_null" + ax,
		"SELECT x, x < ANY (SELECT y FROM (VALUES (1), (2)) b(y)) AS lt, x > ANY (SELECT y FROM (VALUES (2), (NULL)) b(y)) AS gt_null, x <> ANY (SELECT y FROM (VALUES (2)) b(y)) AS ne1, x != SOME (SELECT y FROM (VALUES (2), (3)) b(y)) AS ne2, x <= ANY (SELECT y FROM (VALUES (NULL::int)) b(y)) AS only_null, x >= ANY (SELECT y FROM (VALUES (1)) b(y) WHERE false) AS empty, x = ANY (SELECT y FROM (VALUES (3)) b(y)) AS eq" + ax,
		"SELECT 1 > ALL (SELECT 2) AS a, 2 IN (SELECT 2) AS b, (SELECT 3) AS c, 1 < ANY (SELECT NULL::int) AS d, 3 = ALL (SELECT 3 UNION ALL SELECT 3) AS e",
		"SELECT x FROM (VALUES (1), (2), (3), (NULL)) a(x) WHERE x >= ALL (SELECT y FROM (VALUES (1), (2)) b(y)) OR NOT (x < ANY (SELECT y FROM (VALUES (2), (NULL)) b(y))) OR x IS NULL ORDER BY 1",
		// Over flights: the latest departures, delays beyond every BOS delay of the days, an
		// uncorrelated set with GROUP BY and UNION (a derived table).
		"SELECT id, (value->>'delay')::int AS delay" + ordF + " AND (a.value->>'delay')::int > ALL (" + bosD + ") ORDER BY 1",
		"SELECT id" + ordF + " AND a.timestamp >= ALL (SELECT timestamp FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-31 06:00' AND timestamp < '2001-04-01 12:00') ORDER BY 1",
		"SELECT o.d, o.n FROM " + od + " o WHERE o.n > ANY (SELECT max(b.n) FROM " + bd + " b GROUP BY b.d IS NULL) OR o.n <= ALL (SELECT n FROM " + bd + " b UNION SELECT 1000) ORDER BY 1",
		// Correlated: per destination, with equalities, non-equalities and in the select list.
		"SELECT o.d, o.n, o.n >= ALL (SELECT b.n FROM " + bd + " b WHERE b.d = o.d) AS ge_bos, o.m < ANY (SELECT b.m FROM " + bd + " b WHERE b.d <> o.d) AS lt_other FROM " + od + " o ORDER BY 1",
		"SELECT o.d, o.n FROM " + od + " o WHERE o.n > ALL (SELECT b.n FROM " + bd + " b WHERE b.d < o.d) AND o.m <> ALL (SELECT b.m FROM " + bd + " b WHERE b.d = o.d) ORDER BY 1",
		// Correlated subqueries with window functions (partitioned by the domain's values too)
		// and DISTINCT ON (per outer row).
		"SELECT o.d, t.d, t.n, t.r, t.c, t.s FROM " + od + " o CROSS JOIN LATERAL (SELECT b.d, b.n, rank() OVER (ORDER BY b.n DESC) AS r, count(*) OVER () AS c, sum(b.n) OVER w AS s FROM " + bd + " b WHERE b.n < o.n WINDOW w AS (ORDER BY b.n, b.d)) t ORDER BY 1, 4, 2",
		"SELECT o.d, (SELECT b.n * 100 / sum(b.n) OVER () FROM " + bd + " b WHERE b.d = o.d) AS share, (SELECT max(b.n) * 2 - sum(max(b.n)) OVER (PARTITION BY o.d IS NULL) FROM " + bd + " b WHERE b.n > o.n) AS spread FROM " + od + " o ORDER BY 1",
		"SELECT o.d, t.d, t.n FROM " + od + " o CROSS JOIN LATERAL (SELECT DISTINCT ON (b.n % 3) b.d, b.n FROM " + bd + " b WHERE b.n < o.n ORDER BY b.n % 3, b.n DESC, b.d) t ORDER BY 1, 3, 2",
		"SELECT o.d, o.n, o.n IN (SELECT DISTINCT ON (b.d IS NULL) b.n FROM " + bd + " b WHERE b.m < o.m ORDER BY b.d IS NULL, b.n DESC, b.d) AS top FROM " + od + " o ORDER BY 1",
		// Correlated UNIONs under EXISTS, IN and ALL (each arm decorrelated: OR and AND of the
		// arms' tests), correlated subqueries with WITH.
		"SELECT o.d, o.n FROM " + od + " o WHERE EXISTS (SELECT 1 FROM " + bd + " b WHERE b.d = o.d AND b.n > 3 UNION SELECT 1 FROM " + bd + " b WHERE b.n > o.n * 5) ORDER BY 1",
		"SELECT o.d, o.n IN (SELECT b.n FROM " + bd + " b WHERE b.d = o.d UNION SELECT b.n + 1 FROM " + bd + " b WHERE b.m < o.m) AS near, NOT EXISTS (SELECT 1 FROM " + bd + " b WHERE b.n = o.n UNION ALL SELECT 1 FROM (VALUES (1)) v(x) WHERE o.d IS NULL) AS lonely, o.n >= ALL (SELECT b.n FROM " + bd + " b WHERE b.d = o.d UNION SELECT 2) AS ge FROM " + od + " o ORDER BY 1",
		"SELECT o.d, (WITH t AS (SELECT d, n FROM " + bd + " x) SELECT max(t.n) FROM t WHERE t.d = o.d) AS bn, EXISTS (WITH t AS (SELECT d, m FROM " + bd + " x WHERE m > 0) SELECT 1 FROM t WHERE t.m < o.m) AS lower FROM " + od + " o ORDER BY 1",
		// In a grouped query's HAVING (uncorrelated) and over its GROUP BY column (correlated).
		"SELECT a.dest, count(*) AS n, a.dest = ANY (SELECT b.value->>'destination' FROM flights b WHERE b.origin = 'BOS' AND b.timestamp >= '2001-03-31' AND b.timestamp < '2001-04-02') AS bos, count(*) >= ALL (SELECT count(*) FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-03-31 09:00' AND timestamp < '2001-03-31 12:00' GROUP BY value->>'destination') AS most FROM (SELECT value->>'destination' AS dest" + ordF + ") a GROUP BY a.dest HAVING count(*) > ALL (SELECT count(*) FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-03-31 10:00' AND timestamp < '2001-03-31 12:00' GROUP BY value->>'destination') ORDER BY 1",
		// Superset's virtual datasets: the time filter outside `(SELECT …) AS virtual_table`
		// pins the outer read and the domain's second read of it (archived March 31, April 1
		// archiving or hot); the partition inside or outside.
		"SELECT id, timestamp FROM (SELECT id, timestamp, value FROM flights o WHERE origin = 'BOS' AND EXISTS (SELECT 1 FROM flights i WHERE i.origin = 'ORD' AND i.timestamp >= '2001-03-25' AND i.timestamp < '2001-04-05' AND i.value->>'destination' = o.value->>'destination' AND i.timestamp < o.timestamp AND i.timestamp >= o.timestamp - interval '20 minutes')) AS virtual_table WHERE timestamp >= " + ts31 + " AND timestamp < " + ts02 + " ORDER BY 1",
		"SELECT date_trunc('hour', timestamp) AS __timestamp, count(*) AS count, sum(n) AS n FROM (SELECT timestamp, (SELECT count(*) FROM flights i WHERE i.origin = 'ORD' AND i.timestamp >= '2001-03-25' AND i.timestamp < '2001-04-05' AND i.timestamp BETWEEN o.timestamp - interval '5 minutes' AND o.timestamp) AS n FROM flights o WHERE origin = 'BOS') AS virtual_table WHERE timestamp >= " + ts31 + " AND timestamp < " + ts02 + " GROUP BY date_trunc('hour', timestamp) ORDER BY 1 LIMIT 100",
		"SELECT origin, id FROM (SELECT o.origin, o.id, o.timestamp FROM flights o WHERE o.id NOT IN (SELECT i.id FROM flights i WHERE i.origin = 'ORD' AND i.timestamp >= '2001-03-25' AND i.timestamp < '2001-04-05' AND i.timestamp < o.timestamp - interval '3 days') AND NOT EXISTS (SELECT 1 FROM flights i WHERE i.origin = o.origin AND i.timestamp >= '2001-03-25' AND i.timestamp < '2001-04-05' AND i.timestamp > o.timestamp AND i.timestamp < o.timestamp + interval '2 minutes')) AS virtual_table WHERE origin = 'BOS' AND timestamp >= " + ts31 + " AND timestamp < '2001-04-01 03:00' ORDER BY 2",
	}
}

// joinAnalyticalQueries are joins in the analytical mode (no partition pin): every loaded
// airport's flights of March 31 and April 1, 2001 (an archived and an archiving or hot day).
func joinAnalyticalQueries() []string {
	const (
		day  = " timestamp >= '2001-03-31' AND timestamp < '2001-04-02'"
		dayA = " a.timestamp >= '2001-03-31' AND a.timestamp < '2001-04-02'"
		dayB = " b.timestamp >= '2001-03-31' AND b.timestamp < '2001-04-02'"
	)
	return []string{
		"SELECT a.origin, count(*) FROM flights a JOIN flights b ON a.value->>'destination' = b.origin WHERE" + dayA + " AND" + dayB + " GROUP BY 1 ORDER BY 1",
		"SELECT origin, count(*) FROM flights WHERE" + day + " AND value->>'destination' IN (SELECT origin FROM flights WHERE" + day + ") GROUP BY 1 ORDER BY 1",
		"SELECT origin, count(*) FROM flights WHERE" + day + " AND value->>'destination' NOT IN (SELECT origin FROM flights WHERE" + day + ") GROUP BY 1 ORDER BY 1",
		"SELECT f.origin, count(*) FROM flights f JOIN (SELECT origin, avg((value->>'delay')::int) AS a FROM flights WHERE" + day + " GROUP BY 1) o ON f.origin = o.origin WHERE f." + strings.TrimSpace(day) + " AND (f.value->>'delay')::int > o.a GROUP BY 1 ORDER BY 1",
		"SELECT o.origin, o.n, d.n FROM (SELECT origin, count(*) AS n FROM flights WHERE" + day + " GROUP BY 1) o FULL JOIN (SELECT value->>'destination' AS dest, count(*) AS n FROM flights WHERE" + day + " GROUP BY 1) d ON o.origin = d.dest ORDER BY 1, 2, 3",
		"SELECT a.id FROM flights a WHERE" + dayA + " AND NOT EXISTS (SELECT 1 FROM flights b WHERE" + dayB + " AND b.origin = a.value->>'destination') AND (a.value->>'delay')::int > 100 ORDER BY 1",
		// Joins of two reads of flights on their partition columns, run partition by
		// partition (scan/partjoin.go): rows with rows over the same buckets (one read feeds
		// both), a left join against an aggregate of another day, a semi join against
		// filtered rows, an anti join on two keys, a scalar subquery per partition.
		"SELECT a.origin, count(*) FROM flights a JOIN flights b ON a.origin = b.origin AND a.value->>'destination' = b.value->>'destination' WHERE" + dayA + " AND" + dayB + " GROUP BY 1 ORDER BY 1",
		"SELECT f.origin, count(*), count(o.n), min(o.n) FROM flights f LEFT JOIN (SELECT origin, count(*) AS n FROM flights WHERE timestamp >= '2001-04-01' AND timestamp < '2001-04-02' AND (value->>'delay')::int > 30 GROUP BY 1) o ON f.origin = o.origin WHERE f." + strings.TrimSpace(day) + " GROUP BY 1 ORDER BY 1",
		"SELECT origin, count(*) FROM flights WHERE" + day + " AND origin IN (SELECT origin FROM flights WHERE" + day + " AND (value->>'delay')::int > 15) GROUP BY 1 ORDER BY 1",
		"SELECT a.origin, count(*) FROM flights a WHERE" + dayA + " AND NOT EXISTS (SELECT 1 FROM flights b WHERE" + dayB + " AND b.origin = a.origin AND b.value->>'destination' = a.value->>'destination' AND b.id <> a.id) GROUP BY 1 ORDER BY 1",
		"SELECT a.origin, a.id, (SELECT max((b.value->>'delay')::int) FROM flights b WHERE" + dayB + " AND b.origin = a.origin) FROM flights a WHERE" + dayA + " AND (a.value->>'delay')::int > 60 ORDER BY 1, 2",
		// Joins probed in the probe side's fragments (scan/fragjoin.go: a routed read of rows
		// on the left, the right side hashed once): NULL keys on the left of a left join,
		// NOT IN with a NULL on the right and with NULLs on the left, an empty right side
		// under IN and NOT IN, an inner join with duplicate keys and a residual.
		"SELECT a.origin, count(*), count(o.n), sum(o.n) FROM flights a LEFT JOIN (SELECT origin, count(*) AS n FROM flights WHERE" + day + " GROUP BY 1) o ON CASE WHEN (a.value->>'delay')::int > 30 THEN a.value->>'destination' END = o.origin WHERE" + dayA + " GROUP BY 1 ORDER BY 1",
		"SELECT count(*) FROM flights WHERE" + day + " AND value->>'destination' NOT IN (SELECT CASE WHEN (value->>'delay')::int > 30 THEN origin END FROM flights WHERE" + day + ")",
		"SELECT origin, count(*) FROM flights WHERE" + day + " AND CASE WHEN (value->>'delay')::int > 30 THEN value->>'destination' END NOT IN (SELECT origin FROM flights WHERE" + day + " AND origin <> 'ORD') GROUP BY 1 ORDER BY 1",
		"SELECT count(*), count(DISTINCT origin) FROM flights WHERE" + day + " AND value->>'destination' IN (SELECT origin FROM flights WHERE" + day + " AND (value->>'delay')::int > 100000)",
		"SELECT count(*), count(DISTINCT origin) FROM flights WHERE" + day + " AND value->>'destination' NOT IN (SELECT origin FROM flights WHERE" + day + " AND (value->>'delay')::int > 100000)",
		"SELECT a.origin, count(*) FROM flights a JOIN flights b ON a.value->>'destination' = b.origin AND (a.value->>'delay')::int < (b.value->>'delay')::int WHERE" + dayA + " AND" + dayB + " GROUP BY 1 ORDER BY 1",
		// Aggregations directly above those joins, run partially in the join's fragments
		// (scan/joinagg.go): the benchmark's semi join (IN a grouped subquery with HAVING),
		// an anti join with NULL keys on both sides under several measures, NOT EXISTS, an
		// inner join against a build side with duplicate keys, a left join against an empty
		// build side (every measure over no match), the join against avg grouped and not, a
		// partition-wise semi join, a HAVING and LIMIT above the aggregate.
		"SELECT count(*) FROM flights WHERE" + day + " AND value->>'destination' IN (SELECT origin FROM flights WHERE" + day + " GROUP BY 1 HAVING count(*) > 5)",
		"SELECT count(*), sum((value->>'delay')::int), min(id), max(timestamp), count(DISTINCT value->>'destination') FROM flights WHERE" + day + " AND CASE WHEN (value->>'delay')::int > 0 THEN value->>'destination' END NOT IN (SELECT origin FROM flights WHERE" + day + " AND (value->>'delay')::int > 200)",
		"SELECT count(*), sum((a.value->>'distance')::int), count(DISTINCT a.origin) FROM flights a WHERE" + dayA + " AND NOT EXISTS (SELECT 1 FROM flights b WHERE" + dayB + " AND (b.value->>'delay')::int > 100 AND b.origin = a.value->>'destination')",
		"SELECT a.origin, count(*), sum(b.n), max(b.n), count(DISTINCT b.origin) FROM flights a JOIN (SELECT value->>'destination' AS d, origin, count(*) AS n FROM flights WHERE" + day + " GROUP BY 1, 2) b ON a.value->>'destination' = b.d WHERE" + dayA + " GROUP BY 1 ORDER BY 1",
		"SELECT count(*), count(o.n), sum(o.n), avg(o.n), min(a.id) FROM flights a LEFT JOIN (SELECT origin, count(*) AS n FROM flights WHERE" + day + " AND (value->>'delay')::int > 100000 GROUP BY 1) o ON a.value->>'destination' = o.origin WHERE" + dayA,
		"SELECT f.origin, count(*), max((f.value->>'delay')::int), round(max(o.a), 4) FROM flights f JOIN (SELECT origin, avg((value->>'delay')::int) AS a FROM flights WHERE" + day + " GROUP BY 1) o ON f.origin = o.origin WHERE f." + strings.TrimSpace(day) + " AND (f.value->>'delay')::int > o.a GROUP BY 1 ORDER BY 1",
		"SELECT count(*) FROM flights f JOIN (SELECT origin, avg((value->>'delay')::int) AS a FROM flights WHERE" + day + " GROUP BY 1) o ON f.origin = o.origin WHERE f." + strings.TrimSpace(day) + " AND (f.value->>'delay')::int > o.a",
		"SELECT count(*), count(DISTINCT origin), sum((value->>'distance')::int) FROM flights WHERE" + day + " AND origin IN (SELECT origin FROM flights WHERE" + day + " AND (value->>'delay')::int > 15)",
		"SELECT a.origin, count(*) FROM flights a WHERE" + dayA + " AND a.value->>'destination' IN (SELECT origin FROM flights WHERE" + day + ") GROUP BY 1 HAVING count(*) > 3 ORDER BY 2 DESC, 1 LIMIT 5",
	}
}

// TestJoinsAsPostgres: the join corpus answers, through flightsrv with pushdown on and off,
// exactly what PostgreSQL answers over the same rows held in a plain table (the window
// corpus's harness: same rows, same order, same values and types).
func TestJoinsAsPostgres(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	// ORD's and BOS's flights of the corpus's range, and every other loaded airport's of the
	// analytical queries' two days.
	from, to := time.Date(2001, 3, 25, 0, 0, 0, 0, time.UTC), time.Date(2001, 4, 5, 0, 0, 0, 0, time.UTC)
	dayFrom, dayTo := time.Date(2001, 3, 31, 0, 0, 0, 0, time.UTC), time.Date(2001, 4, 2, 0, 0, 0, 0, time.UTC)
	conn := pgUTC(t, ctx, e.url)
	pgFlights(t, ctx, conn, e.sample, []string{"ORD", "BOS"}, from, to)
	pgFlights(t, ctx, conn, e.sample, slices.DeleteFunc(slices.Clone(loadedAirports), func(o string) bool { return o == "ORD" || o == "BOS" }), dayFrom, dayTo)
	on, off := dial(t, e.on), dial(t, e.off)
	aon, aoff := dialAnalytical(t, e.on), dialAnalytical(t, e.off)
	queries := joinQueries()
	if len(queries) < 60 {
		t.Fatalf("the corpus has %d queries", len(queries))
	}
	compared := comparePG(t, ctx, conn, map[string]*flightsql.Client{"pushdown on": on, "pushdown off": off}, sameSQL(pgTypes, queries...)...) +
		comparePG(t, ctx, conn, map[string]*flightsql.Client{"pushdown on": on, "pushdown off": off}, nonEmptyTyped(subqueryQueries()...)...) +
		comparePG(t, ctx, conn, map[string]*flightsql.Client{"analytical, pushdown on": aon, "analytical, pushdown off": aoff}, nonEmptyTyped(joinAnalyticalQueries()...)...)
	t.Logf("%d join queries, %d subqueries and %d joins in the analytical mode, %d rows equal to PostgreSQL's", len(queries), len(subqueryQueries()), len(joinAnalyticalQueries()), compared)

	// The joins of two reads of flights on their partition columns run partition by
	// partition; over the same buckets without filters, one read feeds both sides. Joins
	// whose left input is a routed read of rows are probed in its fragments.
	aq := joinAnalyticalQueries()
	probed := "probed in the probe side's fragments"
	inFrags := "in each of the join's fragments"
	for q, wants := range map[string][]string{aq[3]: {"partition-wise", "feeds both sides", inFrags}, aq[6]: {"partition-wise", "feeds both sides"}, aq[7]: {"partition-wise", "each side reads its buckets"}, aq[8]: {"partition-wise"},
		aq[1]: {probed}, aq[11]: {probed}, aq[12]: {probed}, aq[14]: {probed}, aq[16]: {probed},
		aq[17]: {probed, inFrags}, aq[18]: {probed, inFrags}, aq[20]: {probed, inFrags}, aq[23]: {"partition-wise", inFrags}, aq[24]: {"partition-wise", inFrags}} {
		plan := strings.Join(explainLines(t, aon, "EXPLAIN "+q), "\n")
		for _, want := range wants {
			if !strings.Contains(plan, want) {
				t.Errorf("EXPLAIN of %s: no %q:\n%s", q, want, plan)
			}
		}
	}

	// EXPLAIN shows the hash join at the coordinator, without a value of the query.
	plan := strings.Join(explainLines(t, on, "EXPLAIN "+queries[0]), "\n")
	for want, has := range map[string]bool{"HashJoin inner, 1 keys": true, "'ORD'": false, "'2001": false} {
		if strings.Contains(plan, want) != has {
			t.Errorf("EXPLAIN of a join (%q %v):\n%s", want, has, plan)
		}
	}
}

// TestJoinRefusals: the subquery shapes that are not decorrelated are refused by name
// (UNIMPLEMENTED), a scalar subquery of several rows and an ungrouped outer column are
// PostgreSQL's errors, and a join whose buffered side, or a correlated subquery whose domain,
// passes --query-memory is RESOURCE_EXHAUSTED naming the limit.
func TestJoinRefusals(t *testing.T) {
	e := newEnv(t)
	cl := dial(t, e.on)
	ctx := context.Background()
	const (
		o = " FROM flights o WHERE o.origin = 'ORD' AND o.timestamp >= '2001-03-25' AND o.timestamp < '2001-04-05'"
		b = " FROM flights b WHERE b.origin = 'BOS' AND b.timestamp >= '2001-03-25' AND b.timestamp < '2001-04-05'"
	)
	for _, c := range []struct {
		sql, msg string
		code     codes.Code
	}{
		{"SELECT id, (SELECT b.id" + b + " AND b.id < o.id ORDER BY b.id DESC LIMIT (SELECT 1))" + o, "correlated subqueries with a LIMIT or OFFSET that is not an integer constant, or WITH TIES are not supported", codes.Unimplemented},
		{"SELECT o.value->>'destination', count(*), (SELECT count(*)" + b + " AND b.id = o.id)" + o + " GROUP BY 1", `subquery uses ungrouped column "o.id" from outer query`, codes.InvalidArgument},
		{"SELECT o.d, (SELECT count(*) FROM (VALUES (1)) b(n) WHERE b.n < min(o.n)) FROM (VALUES ('a', 1)) o(d, n) GROUP BY o.d", "aggregates of an outer query's columns in a subquery are not supported", codes.Unimplemented},
		{"SELECT id, (SELECT count(*)" + b + " AND b.id < o.id AND b.id NOT IN (SELECT c.id FROM flights c WHERE c.id = b.id))" + o, "correlated aggregate subqueries without GROUP BY whose WHERE holds a subquery are not supported", codes.Unimplemented},
		{"SELECT id, (SELECT max(o.id)" + b + ")" + o, "aggregates of an outer query's columns in a subquery are not supported", codes.Unimplemented},
		{"SELECT count(*), EXISTS (SELECT 1" + b + ")" + o, "EXISTS, IN and ANY subqueries in ORDER BY or GROUP BY, or in an aggregate query without GROUP BY are not supported", codes.Unimplemented},
		{"SELECT o.value->>'destination', count(*)" + o + " GROUP BY 1 HAVING count(*) > 3 OR o.value->>'destination' IN (SELECT b.value->>'destination'" + b + ")", "IN (SELECT …) in a grouped query over other than GROUP BY columns are not supported", codes.Unimplemented},
		{"SELECT o.id, count(*)" + o + " GROUP BY 1 HAVING EXISTS (SELECT 1" + b + " AND b.value = o.value)", `subquery uses ungrouped column "o.value" from outer query`, codes.InvalidArgument},
		{"SELECT id" + o + " AND o.id = ANY (SELECT DISTINCT b.id" + b + " AND b.value = o.value LIMIT 1)", "correlated subqueries with DISTINCT and LIMIT or OFFSET are not supported", codes.Unimplemented},
		{"SELECT count(*), (SELECT 1)" + o, "scalar subqueries in an aggregate query without GROUP BY are not supported", codes.Unimplemented},
		{"SELECT id, (SELECT id" + b + ")" + o, "more than one row returned by a subquery used as an expression", codes.InvalidArgument},
		{"SELECT id" + o + " AND o.id IN (SELECT b.id, b.origin" + b + ")", "subquery has too many columns", codes.InvalidArgument},
		{"SELECT o.id FROM flights o JOIN flights b ON o.id = b.id WHERE o.origin = 'ORD' AND o.timestamp >= '2001-03-25' AND o.timestamp < '2001-04-05'", "flights read as b needs origin = <value>", codes.InvalidArgument},
	} {
		_, err := run(ctx, cl, c.sql)
		if st := status.Convert(err); st.Code() != c.code || !strings.Contains(st.Message(), c.msg) {
			t.Errorf("%.120s: %v %q, want %v %q", c.sql, st.Code(), st.Message(), c.code, c.msg)
		}
	}

	// The build side is buffered under the query's ledger: ORD's half year of 8 KB rows
	// joined with a 64 MiB --query-memory is refused naming the limit (the wide column read
	// above the join, which would not compute it otherwise: scan/joinprune.go).
	small := smallServer(t, e)
	wide := "id || '" + strings.Repeat("x", 8000) + "'"
	q := "SELECT count(t.w) FROM (VALUES ('x')) v(k) RIGHT JOIN (SELECT id, " + wide + " AS w FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01') t ON t.id = v.k"
	if _, err := run(ctx, dial(t, small), q); status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "--query-memory") {
		t.Errorf("a join over more than --query-memory: %v, want RESOURCE_EXHAUSTED naming the limit", err)
	}
	// Within the default limit the same join answers.
	res := mustRun(t, cl, q)
	res.release()
	// So is a partition-wise join's (scan/partjoin.go: one read of ORD's buckets feeds both
	// sides, the right side's rows buffered for the partition).
	qp := "SELECT count(t.w) FROM flights a JOIN (SELECT origin, id, " + wide + " AS w FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01') t ON a.origin = t.origin AND a.id = t.id WHERE a.origin = 'ORD' AND a.timestamp >= '2001-01-01' AND a.timestamp < '2001-07-01'"
	if _, err := run(ctx, dial(t, small), qp); status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "--query-memory") {
		t.Errorf("a partition-wise join over more than --query-memory: %v, want RESOURCE_EXHAUSTED naming the limit", err)
	}
	if plan := strings.Join(explainLines(t, cl, "EXPLAIN "+qp), "\n"); !strings.Contains(plan, "partition-wise") {
		t.Errorf("EXPLAIN of %s: not partition-wise:\n%s", qp, plan)
	}
	// So is a join probed in its left input's fragments (scan/fragjoin.go: ORD's wide rows
	// hashed once, before BOS's rows probe them).
	qf := "SELECT count(t.w) FROM flights a JOIN (SELECT id, " + wide + " AS w FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01') t ON a.id = t.id WHERE a.origin = 'BOS' AND a.timestamp >= '2001-01-01' AND a.timestamp < '2001-07-01'"
	if _, err := run(ctx, dial(t, small), qf); status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "--query-memory") {
		t.Errorf("a join probed in its left input's fragments over more than --query-memory: %v, want RESOURCE_EXHAUSTED naming the limit", err)
	}
	if plan := strings.Join(explainLines(t, cl, "EXPLAIN "+qf), "\n"); !strings.Contains(plan, "probed in the probe side's fragments") {
		t.Errorf("EXPLAIN of %s: not probed in the fragments:\n%s", qf, plan)
	}
	// A correlated subquery's domain (the outer's distinct wide values) and its nested loop
	// are under the same limit.
	qd := "SELECT count(*) FROM (SELECT id, " + wide + " AS w FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01') t WHERE EXISTS (SELECT 1 FROM (VALUES ('0'), ('1')) v(k) WHERE v.k < t.w)"
	if _, err := run(ctx, dial(t, small), qd); status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "--query-memory") {
		t.Errorf("a correlated subquery over more than --query-memory: %v, want RESOURCE_EXHAUSTED naming the limit", err)
	}
}

// TestJoinAggregateRunsAsPostgres: an aggregation above a join probed in its left input's
// fragments runs partially in those fragments, which then run runs of consecutive buckets
// (scan/joinagg.go, groupSize): under a fan-out of 1 the three airports' six months (18
// buckets) are probed in runs of up to 4, each run's partial states combined at the
// coordinator. The answers are PostgreSQL's over the same rows: a semi join under count(*),
// a grouped anti join of NOT IN with a NULL-free set, NOT EXISTS under several measures, a
// left join against an empty build side.
func TestJoinAggregateRunsAsPostgres(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	conn := pgUTC(t, ctx, e.url)
	pgFlights(t, ctx, conn, e.sample, loadedAirports, time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2001, 7, 1, 0, 0, 0, 0, time.UTC))
	one, err := server.Start(ctx, server.Config{
		Listen: "127.0.0.1:0", Tables: []routing.TableDef{flightsTable}, Hot: e.store, Archive: e.reader, Pushdown: true, Fanout: 1,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(one.Close)
	cl := dialAnalytical(t, one)
	const (
		r  = " timestamp >= '2001-01-01' AND timestamp < '2001-07-01'"
		ra = " a.timestamp >= '2001-01-01' AND a.timestamp < '2001-07-01'"
		rb = " b.timestamp >= '2001-01-01' AND b.timestamp < '2001-07-01'"
	)
	qs := []string{
		"SELECT count(*) FROM flights WHERE" + r + " AND value->>'destination' IN (SELECT origin FROM flights WHERE" + r + " GROUP BY 1 HAVING count(*) > 100)",
		"SELECT origin, count(*), sum((value->>'delay')::int), min(id), max(timestamp) FROM flights WHERE" + r + " AND value->>'destination' NOT IN (SELECT origin FROM flights WHERE" + r + " AND origin <> 'ORD') GROUP BY 1 ORDER BY 1",
		"SELECT count(*), count(DISTINCT a.value->>'destination'), sum((a.value->>'distance')::int) FROM flights a WHERE" + ra + " AND NOT EXISTS (SELECT 1 FROM flights b WHERE" + rb + " AND b.origin = a.value->>'destination' AND (b.value->>'delay')::int > 300)",
		"SELECT count(*), count(o.n), sum(o.n) FROM flights a LEFT JOIN (SELECT origin, count(*) AS n FROM flights WHERE" + r + " AND (value->>'delay')::int > 100000 GROUP BY 1) o ON a.value->>'destination' = o.origin WHERE" + ra,
	}
	rows := comparePG(t, ctx, conn, map[string]*flightsql.Client{"analytical, fan-out 1": cl}, nonEmptyTyped(qs...)...)
	for _, q := range qs {
		plan := strings.Join(explainLines(t, cl, "EXPLAIN "+q), "\n")
		for _, want := range []string{"probed in the probe side's fragments (18)", "runs of up to 4 consecutive buckets", "in each of the join's fragments"} {
			if !strings.Contains(plan, want) {
				t.Errorf("EXPLAIN of %s: no %q:\n%s", q, want, plan)
			}
		}
	}
	t.Logf("%d joins aggregated in runs of buckets, %d rows equal to PostgreSQL's", len(qs), rows)
}
