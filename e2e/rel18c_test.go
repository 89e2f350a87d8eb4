package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/server"
)

// TestTimeRangeUnionAsPostgres: a time filter that is an OR of ranges, or an IN list (= ANY)
// of instants, routes the read to the buckets the ranges cover and answers PostgreSQL's rows
// (overlapping ranges not counted twice, an outer bound intersecting them, disjuncts with
// filters of their own); EXPLAIN counts the ranges and their buckets only; a disjunct without
// both bounds is still refused.
func TestTimeRangeUnionAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	const two = "((timestamp >= '2001-01-01' AND timestamp < '2001-02-01') OR (timestamp >= '2001-06-01' AND timestamp < '2001-07-01'))"
	// Instants of BOS's flights, read from PostgreSQL, for the IN lists.
	var instants []string
	for _, r := range pgStrings(t, ctx, pg, "SELECT to_char(timestamp AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') FROM flights WHERE origin = 'BOS' ORDER BY timestamp, id OFFSET 50 LIMIT 3") {
		instants = append(instants, "'"+r[0]+"+00'")
	}
	for _, r := range pgStrings(t, ctx, pg, "SELECT to_char(timestamp AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') FROM flights WHERE origin = 'BOS' ORDER BY timestamp DESC, id OFFSET 20 LIMIT 2") {
		instants = append(instants, "'"+r[0]+"+00'")
	}
	if len(instants) != 5 {
		t.Fatalf("instants %v", instants)
	}
	in := strings.Join(instants, ", ")
	qs := []string{
		"SELECT count(*), min(timestamp)::text, max(timestamp)::text FROM flights WHERE origin = 'BOS' AND " + two,
		"SELECT date_trunc('month', timestamp)::text AS m, origin, count(*), sum((value->>'delay')::int) FROM flights WHERE origin IN ('BOS', 'ORD') AND " + two + " GROUP BY 1, 2 ORDER BY 1, 2",
		"SELECT count(*) FROM flights WHERE " + two + " AND origin = 'SFO'",
		// Overlapping and touching ranges, an outer bound cutting them, BETWEEN and = disjuncts.
		"SELECT count(*), min(timestamp)::text, max(timestamp)::text FROM flights WHERE origin = 'BOS' AND ((timestamp >= '2001-01-10' AND timestamp < '2001-03-01') OR (timestamp >= '2001-02-01' AND timestamp < '2001-04-01') " +
			"OR timestamp BETWEEN '2001-04-01' AND '2001-04-03' OR (timestamp > '2001-09-01' AND timestamp <= '2001-09-05')) AND timestamp < '2001-09-03'",
		// A disjunct with a filter of its own, and date bounds.
		"SELECT id, timestamp::text, value->>'delay' FROM flights WHERE origin = 'BOS' AND ((timestamp >= DATE '2001-03-30' AND timestamp < DATE '2001-04-01' AND (value->>'delay')::int > 20) " +
			"OR (timestamp >= '2001-11-30' AND timestamp < '2001-12-01')) ORDER BY 2, 1",
		// IN lists and = ANY of instants, alone and beside bounds.
		"SELECT id, timestamp::text FROM flights WHERE origin = 'BOS' AND timestamp IN (" + in + ") ORDER BY 2, 1",
		"SELECT id, timestamp::text FROM flights WHERE origin = 'BOS' AND timestamp = ANY(ARRAY[" + strings.ReplaceAll(in, "+00'", "+00'::timestamptz") + "]) ORDER BY 2, 1",
		"SELECT id, timestamp::text FROM flights WHERE origin = 'BOS' AND timestamp = ANY('{" + strings.ReplaceAll(in, "'", "") + "}') ORDER BY 2, 1",
		"SELECT count(*) FROM flights WHERE origin = 'BOS' AND timestamp IN (" + in + ") AND timestamp >= '2001-06-01'",
		"SELECT count(*) FROM flights WHERE origin = 'BOS' AND timestamp IN (" + in + ") AND timestamp >= '2002-06-01'",
		"SELECT count(*) FROM flights WHERE origin = 'BOS' AND timestamp IN ('2001-03-01', '2001-03-02')",
		"SELECT count(*) FROM flights WHERE origin = 'BOS' AND (timestamp = " + instants[0] + " OR timestamp = " + instants[4] + ")",
		// Two ORs intersected, and the filter outside a subquery.
		"SELECT count(*) FROM (SELECT * FROM flights WHERE origin = 'BOS') s WHERE " + two + " AND ((timestamp >= '2001-01-15' AND timestamp < '2001-01-20') OR timestamp >= '2001-06-28' AND timestamp < '2001-08-01')",
	}
	for _, cl := range clients {
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText, qs...)...)
		lines := explainLines(t, cl.c, "EXPLAIN SELECT count(*) FROM flights WHERE origin = 'BOS' AND "+two)
		if !strings.Contains(strings.Join(lines, "\n"), "the union of 2 disjoint finite ranges over 2 calendar_month_utc bucket(s)") {
			t.Errorf("EXPLAIN of an OR of two month ranges:\n%s", strings.Join(lines, "\n"))
		}
		lines = explainLines(t, cl.c, "EXPLAIN SELECT count(*) FROM flights WHERE origin = 'BOS' AND timestamp IN ("+in+")")
		if j := strings.Join(lines, "\n"); !strings.Contains(j, "the union of 5 disjoint finite ranges") || strings.Contains(j, "2001") {
			t.Errorf("EXPLAIN of an IN list of instants:\n%s", j)
		}
		refusedAs(t, ctx, cl.c, codes.InvalidArgument, map[string]string{
			"SELECT count(*) FROM flights WHERE origin = 'BOS' AND ((timestamp >= '2001-01-01' AND timestamp < '2001-02-01') OR timestamp >= '2001-06-01')":   "flights needs timestamp",
			"SELECT count(*) FROM flights WHERE origin = 'BOS' AND ((timestamp >= '2001-01-01' AND timestamp < '2001-02-01') OR (value->>'delay')::int > 10)": "flights needs timestamp",
			fmt.Sprintf("SELECT count(*) FROM flights WHERE origin = 'BOS' AND (timestamp IN (%s) OR timestamp > '2001-01-01')", in):                          "flights needs timestamp",
		})
	}
}

// TestTimeRangeUnionEndpoints: a multi-endpoint result (one endpoint per bucket) of ORD's
// flights of January, March and June, asked as an OR of ranges ordered by time, has one
// endpoint per month the ranges cover and the sample's rows of those months, in order.
func TestTimeRangeUnionEndpoints(t *testing.T) {
	e := newEnv(t)
	cl := dial(t, serverWith(t, e, func(c *server.Config) { c.Alloc, c.MultiEndpoint, c.EndpointBuckets = e.alloc, true, 1 }))
	ctx := context.Background()
	months := [][2]string{{"2001-01-01", "2001-02-01"}, {"2001-03-01", "2001-04-01"}, {"2001-06-01", "2001-07-01"}}
	var arms []string
	var want []row
	for _, m := range months {
		arms = append(arms, fmt.Sprintf("(timestamp >= TIMESTAMPTZ '%sT00:00:00Z' AND timestamp < TIMESTAMPTZ '%sT00:00:00Z')", m[0], m[1]))
		want = append(want, expected(e.sample, "ORD", ts(m[0]+"T00:00:00Z"), ts(m[1]+"T00:00:00Z"))...)
	}
	q := "SELECT timestamp, id, value FROM flights WHERE origin = 'ORD' AND (" + strings.Join(arms, " OR ") + ") ORDER BY timestamp, id"
	final := pollToEnd(t, cl, q)
	if n := len(final.GetInfo().GetEndpoint()); n != 3 {
		t.Fatalf("%d endpoints, want one per month of the ranges", n)
	}
	res, err := fetch(ctx, cl, final.GetInfo())
	if err != nil {
		t.Fatal(err)
	}
	got := rowsOf(t, res, "ORD")
	res.release()
	if len(want) == 0 || !slices.Equal(got, want) {
		t.Fatalf("polled scan: %d rows, the sample %d", len(got), len(want))
	}
}

// TestSubqueriesOverGroupingSetsAsPostgres: scalar, EXISTS and IN subqueries in the select
// list and HAVING of a query with ROLLUP, CUBE or GROUPING SETS answer PostgreSQL's rows: their
// outer references read each grouped row's grouping columns, NULL in the rows of a set that
// leaves them out (the total row of ROLLUP); a reference to a column that is no grouping
// column is PostgreSQL's 42803.
func TestSubqueriesOverGroupingSetsAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	const pins = " f.origin IN ('BOS', 'SFO') AND f.timestamp >= '2001-03-30' AND f.timestamp < '2001-04-02'"
	const pins2 = " f2.origin IN ('BOS', 'SFO', 'ORD') AND f2.timestamp >= '2001-03-31' AND f2.timestamp < '2001-04-01'"
	const v = "(VALUES ('a', 1, 10), ('a', 2, 20), ('b', 3, 30), (NULL, 4, 40), ('c', NULL, 50)) t(o, d, x)"
	const w = "(VALUES ('a', 1), ('a', 5), ('b', 2), (NULL, 7)) w(o, n)"
	qs := []string{
		"SELECT origin, count(*), (SELECT count(*) FROM flights f2 WHERE f2.origin = f.origin AND" + pins2 + ") FROM flights f WHERE" + pins + " GROUP BY ROLLUP (origin) ORDER BY 1",
		"SELECT f.origin AS o, count(*), (SELECT max(f2.id) FROM flights f2 WHERE f2.origin = f.origin AND" + pins2 + ") AS m FROM flights f WHERE" + pins + " GROUP BY CUBE (1) ORDER BY 1",
		"SELECT o, d, sum(x), (SELECT count(*) FROM " + w + " WHERE w.o = t.o), (SELECT sum(n) FROM " + w + " WHERE w.n > t.d), GROUPING(o, d) FROM " + v + " GROUP BY GROUPING SETS ((o, d), (o), ()) ORDER BY 1, 2, 6",
		"SELECT o, sum(x), EXISTS (SELECT 1 FROM " + w + " WHERE w.o = t.o), o IN (SELECT w.o FROM " + w + ") FROM " + v + " GROUP BY ROLLUP (o) ORDER BY 1",
		"SELECT o, sum(x) FROM " + v + " GROUP BY ROLLUP (o) HAVING NOT EXISTS (SELECT 1 FROM " + w + " WHERE w.o = t.o) ORDER BY 1, 2",
		"SELECT o, sum(x) FROM " + v + " GROUP BY ROLLUP (o) HAVING sum(x) > (SELECT min(n) * 5 FROM " + w + ") ORDER BY 1, 2",
		"SELECT o, d, (SELECT max(n) FROM " + w + " WHERE w.o IS NOT DISTINCT FROM t.o) + sum(x) AS s FROM " + v + " GROUP BY CUBE (o, d) ORDER BY s DESC, 1, 2 LIMIT 6",
		"SELECT DISTINCT (SELECT count(*) FROM " + w + " WHERE w.o = t.o) AS c FROM " + v + " GROUP BY ROLLUP (o) ORDER BY 1",
		"SELECT o, count(*), (SELECT count(*) FROM " + w + " WHERE w.o = t.o), (SELECT count(*) FROM " + w + " WHERE w.o IS NOT DISTINCT FROM t.o) FROM " + v + " WHERE x > 100 GROUP BY ROLLUP (o)",
	}
	for _, cl := range clients {
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText, qs...)...)
		refusedAsPostgres(t, ctx, cl.c, pg, "SELECT o, (SELECT count(*) FROM "+w+" WHERE w.n > t.d) FROM "+v+" GROUP BY ROLLUP (o)", "42803")
		refusedAsPostgres(t, ctx, cl.c, pg, "SELECT o, (SELECT count(*) FROM "+w+" WHERE w.n > d) FROM "+v+" GROUP BY ROLLUP (o)", "42803")
	}
}

// TestRecursiveAsPostgres: WITH RECURSIVE queries (UNION ALL and UNION) over constants,
// VALUES, generate_series and a routed read as the non-recursive term answer PostgreSQL's rows
// — counting, a LIMIT over a recursion without end, a graph walked through a join with its
// cycle stopped by UNION, the recursive reference in a derived table, the query read twice —
// and the shapes PostgreSQL refuses are its errors; a recursion without end is
// RESOURCE_EXHAUSTED naming --query-memory.
func TestRecursiveAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	const edges = "(VALUES ('a', 'b'), ('b', 'c'), ('c', 'a'), ('c', 'd'), ('x', 'y')) e(src, dst)"
	qs := []string{
		"WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t WHERE n < 100) SELECT count(*), sum(n), max(n) FROM t",
		"WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t) SELECT n FROM t LIMIT 5",
		"WITH RECURSIVE t(n) AS (SELECT 1 UNION SELECT n % 3 + 1 FROM t) SELECT n FROM t ORDER BY n",
		"WITH RECURSIVE t(n) AS (SELECT 'a' UNION ALL SELECT n || 'b' FROM t WHERE length(n) < 4) SELECT n, length(n) FROM t ORDER BY 2",
		"WITH RECURSIVE t(n) AS (SELECT g FROM generate_series(1, 3) g UNION ALL SELECT n * 10 FROM t WHERE n < 100) SELECT n FROM t ORDER BY n",
		"WITH RECURSIVE t(k, v) AS (VALUES (1, 'x'), (2, NULL) UNION ALL SELECT k + 2, v || k FROM t WHERE k < 7) SELECT k, v FROM t ORDER BY k",
		"WITH RECURSIVE fib(a, b) AS (SELECT 0::bigint, 1::bigint UNION ALL SELECT b, a + b FROM fib WHERE b < 1000000) SELECT a FROM fib ORDER BY a",
		"WITH RECURSIVE r(node, depth) AS (SELECT 'a', 0 UNION SELECT e.dst, 0 FROM r JOIN " + edges + " ON e.src = r.node) SELECT node FROM r ORDER BY 1",
		"WITH RECURSIVE r(node, path) AS (SELECT 'a', 'a' UNION ALL SELECT e.dst, r.path || e.dst FROM r, " + edges + " WHERE e.src = r.node AND length(r.path) < 6) SELECT node, path FROM r ORDER BY 2",
		"WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT x FROM (SELECT n + 1 AS x FROM t) s WHERE x < 4) SELECT n FROM t ORDER BY n",
		"WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t WHERE n < 4) SELECT a.n, b.n FROM t a JOIN t b ON a.n = b.n + 1 ORDER BY 1",
		"WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t WHERE n < 3), u AS (SELECT a.n FROM t a, t b) SELECT n, count(*) FROM u GROUP BY n ORDER BY n",
		"WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t WHERE n < 3) SELECT n, (SELECT count(*) FROM t t2 WHERE t2.n <= t.n) FROM t ORDER BY n",
		"WITH RECURSIVE t AS (SELECT 1 AS n UNION ALL SELECT DISTINCT n + 1 FROM t WHERE n < 3), u AS (SELECT n * 2 AS m FROM t) SELECT m FROM u ORDER BY m",
		"WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t WHERE n < 3 GROUP BY n) SELECT n FROM t ORDER BY n",
		"WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL (SELECT n + 1 FROM t WHERE n < 3 INTERSECT SELECT 2)) SELECT n FROM t ORDER BY n",
		"WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL (SELECT n + 1 FROM t WHERE n < 5 EXCEPT SELECT 3)) SELECT n FROM t ORDER BY n",
		"WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t, generate_series(1, 2) g WHERE n < 3) SELECT count(*) FROM t",
		"SELECT (WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t WHERE n < 10) SELECT sum(n) FROM t)",
		// A routed read as the non-recursive term.
		"WITH RECURSIVE t(d, n) AS (SELECT value->>'destination', 1 FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-03-31' AND timestamp < '2001-04-01' " +
			"UNION SELECT d, n + 1 FROM t WHERE n < 3) SELECT d, max(n), count(*) FROM t GROUP BY d ORDER BY d",
		"WITH RECURSIVE t(id, k) AS (SELECT id, (value->>'delay')::int FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-04-01' AND timestamp < '2001-04-02' " +
			"UNION ALL SELECT id, k / 2 FROM t WHERE k > 1) SELECT id, count(*), min(k) FROM t GROUP BY id ORDER BY id",
		// A routed read in the recursive term, read again in every iteration.
		"WITH RECURSIVE t(id, n) AS (SELECT id, 1 FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-03-31' AND timestamp < '2001-04-01' UNION ALL " +
			"SELECT t.id, t.n + 1 FROM t JOIN flights f ON f.id = t.id WHERE f.origin = 'BOS' AND f.timestamp >= '2001-03-31' AND f.timestamp < '2001-04-01' AND t.n < 3) " +
			"SELECT n, count(*) FROM t GROUP BY n ORDER BY n",
	}
	for _, cl := range clients {
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText, qs...)...)
		for q, state := range map[string]string{
			"WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT (SELECT n + 1 FROM t)) SELECT * FROM t LIMIT 3":                          "42P19",
			"WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t WHERE n < 3 AND EXISTS (SELECT 1 FROM t)) SELECT * FROM t":  "42P19",
			"WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT a.n + 1 FROM t a JOIN t b ON true) SELECT * FROM t LIMIT 3":              "42P19",
			"WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT v.x FROM (VALUES (1)) v(x) LEFT JOIN t ON true) SELECT * FROM t LIMIT 3": "42P19",
			"WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT count(*) FROM t) SELECT * FROM t LIMIT 3":                                "42P19",
			"WITH RECURSIVE t(n) AS (SELECT 1 INTERSECT SELECT n + 1 FROM t) SELECT * FROM t":                                           "42P19",
			"WITH RECURSIVE t(n) AS (SELECT n FROM t UNION ALL SELECT 1) SELECT * FROM t":                                               "42P19",
			"WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL (SELECT 5 EXCEPT SELECT n + 1 FROM t WHERE n < 3)) SELECT * FROM t":             "42P19",
			"WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL (SELECT n + 1 FROM t WHERE n < 3 INTERSECT ALL SELECT 2)) SELECT * FROM t":      "42P19",
			"WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1.5 FROM t WHERE n < 3) SELECT * FROM t":                             "42804",
			"WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n::bigint + 1 FROM t WHERE n < 3) SELECT * FROM t":                       "42804",
			"WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT count(*) FROM t), u AS (SELECT 1 FROM t, t t2) SELECT 1":                 "42P19",
		} {
			refusedAsPostgres(t, ctx, cl.c, pg, q, state)
		}
		// The same statement at once from several clients: each execution has its own working
		// tables, though a compiled plan is shared.
		conc := "WITH RECURSIVE t(id, k) AS (SELECT id, (value->>'delay')::int FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-04-01' AND timestamp < '2001-04-02' " +
			"UNION ALL SELECT id, k / 2 FROM t WHERE k > 1) SELECT count(*) FROM t"
		want := pgTextRows(t, ctx, pg, conc)
		var wg sync.WaitGroup
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 5 {
					res, err := run(ctx, cl.c, conc)
					if err != nil {
						t.Errorf("concurrent recursion: %v", err)
						return
					}
					compareText(t, conc, textColumns(res), want)
				}
			}()
		}
		wg.Wait()
		if j := strings.Join(explainLines(t, cl.c, "EXPLAIN WITH RECURSIVE t(n) AS (SELECT 1 UNION SELECT n + 1 FROM t WHERE n < 3) SELECT n FROM t"), "\n"); !strings.Contains(j, "RecursiveUnion UNION") ||
			!strings.Contains(j, "WorkTable") {
			t.Errorf("EXPLAIN of a recursive query:\n%s", j)
		}
		refusedAs(t, ctx, cl.c, codes.Unimplemented, map[string]string{
			"WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t ORDER BY 1) SELECT * FROM t LIMIT 3":                          "ORDER BY in a recursive query is not implemented",
			"WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t WHERE n < 3) SEARCH DEPTH FIRST BY n SET ord SELECT * FROM t": "SEARCH and CYCLE clauses of WITH RECURSIVE are not supported",
			"WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t WHERE n < 3) CYCLE n SET c USING p SELECT * FROM t":           "SEARCH and CYCLE clauses of WITH RECURSIVE are not supported",
		})
	}
}

// TestRecursiveMemoryLimit: a recursion that does not end is RESOURCE_EXHAUSTED naming
// --query-memory (every row it keeps is claimed from the query's ledger), and one within the
// limit answers.
func TestRecursiveMemoryLimit(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	cl := dial(t, serverWith(t, e, func(c *server.Config) { c.QueryMemory = 8 << 20 }))
	for _, q := range []string{
		"WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t) SELECT count(*) FROM t",
		"WITH RECURSIVE t(n) AS (SELECT 1 UNION SELECT n + 1 FROM t) SELECT max(n) FROM t",
	} {
		if _, err := run(ctx, cl, q); status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "--query-memory") {
			t.Errorf("%s: %v, want RESOURCE_EXHAUSTED naming the limit", q, err)
		}
	}
	res := mustRun(t, cl, "WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t WHERE n < 1000) SELECT count(*) FROM t")
	if n := scalarCount(t, res); n != 1000 {
		t.Errorf("count %d, want 1000", n)
	}
	res.release()
}

// serverWith starts a server over e's stores (flights, pushdown on) on 127.0.0.1, its
// configuration changed by set, closed when the test ends.
func serverWith(t *testing.T, e *env, set func(*server.Config)) *server.Server {
	t.Helper()
	cfg := server.Config{Listen: "127.0.0.1:0", Tables: []routing.TableDef{flightsTable}, Hot: e.store, Archive: e.reader, Pushdown: true}
	set(&cfg)
	srv, err := server.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return srv
}
