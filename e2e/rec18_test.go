package e2e

import (
	"context"
	"testing"
)

// TestRecursiveIterationsAsPostgres (issue 18): recursive queries of thousands of iterations
// of a few rows each — counters, a date spine, a recursion whose UNION ends it by dropping
// every row of an iteration, two rows an iteration, rows read in the recursion's order — answer
// PostgreSQL's rows, through the recursive term opened once over its working tables (filters
// and projections of it) and through a term opened per iteration (a join); an error of the
// recursive term after many iterations is PostgreSQL's, and a LIMIT that stops before the
// failing iteration returns PostgreSQL's rows without it.
func TestRecursiveIterationsAsPostgres(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	pg := pgUTC(t, ctx, e.url)
	cl := dial(t, e.on)
	qs := []string{
		"WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t WHERE n < 10000) SELECT count(*), sum(n), min(n), max(n) FROM t",
		"WITH RECURSIVE t(n) AS (SELECT 1 UNION SELECT n % 5000 + 1 FROM t) SELECT count(*), sum(n), max(n) FROM t",
		"WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t WHERE n < 10000) SELECT n FROM t OFFSET 9990",
		"WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t WHERE n < 10000) SELECT n FROM t WHERE n % 1000 = 7",
		"WITH RECURSIVE d(day) AS (SELECT date '2001-01-01' UNION ALL SELECT day + 1 FROM d WHERE day < date '2027-12-31') " +
			"SELECT count(*), min(day)::text, max(day)::text, count(DISTINCT extract(dow FROM day)) FROM d",
		"WITH RECURSIVE d(day) AS (SELECT date '2001-01-01' UNION ALL SELECT day + 1 FROM d WHERE day < date '2001-03-31') SELECT day::text FROM d",
		"WITH RECURSIVE t(k, n) AS (VALUES (1, 1), (2, 1) UNION ALL SELECT k, n + 1 FROM t WHERE n < 5000) SELECT k, count(*), sum(n) FROM t GROUP BY k ORDER BY k",
		"WITH RECURSIVE t(n, s) AS (SELECT 1, 'a'::text UNION ALL SELECT n + 1, s || 'b' FROM t WHERE n < 300) SELECT n, length(s), right(s, 3) FROM t WHERE n % 37 = 1",
		"WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n * 2 FROM t) SELECT n FROM t LIMIT 31",
		"WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT 10 / (5 - n) FROM t) SELECT n FROM t LIMIT 4",
		"SELECT n FROM (WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t) SELECT n FROM t LIMIT 20000) s OFFSET 19995",
		// A term of a join, opened per iteration: a binary tree of 4,000 nodes.
		"WITH RECURSIVE r(node, depth) AS (SELECT 1, 0 UNION ALL SELECT g.x, r.depth + 1 FROM r JOIN generate_series(2, 4000) g(x) ON g.x / 2 = r.node) " +
			"SELECT count(*), max(depth), sum(node) FROM r",
	}
	comparePG(t, ctx, pg, one(cl), sameSQL(pgText, qs...)...)
	for q, state := range map[string]string{
		"WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n * 2 FROM t) SELECT n FROM t LIMIT 32":                                             "22003",
		"WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n * 2 FROM t) SELECT count(*) FROM t":                                               "22003",
		"WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT 10 / (5 - n) FROM t) SELECT n FROM t":                                               "22012",
		"WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t WHERE n < 10000 AND 10 / (n - 6000) IS NOT NULL) SELECT max(n) FROM t": "22012",
	} {
		refusedAsPostgres(t, ctx, cl, pg, q, state)
	}
}
