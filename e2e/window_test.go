package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/server"
)

// windowFrom is the rows of the window corpus: ORD's and BOS's flights from March 25 (archived
// Parquet buckets) to April 5, 2001 (ORD's April bucket archiving, BOS's hot).
const windowFrom = " FROM flights WHERE origin IN ('ORD', 'BOS') AND timestamp >= '2001-03-25' AND timestamp < '2001-04-05'"

// windowQueries is the corpus: every window function, every frame form, partitions, ties
// (many flights share a minute), NULLs in keys and values, windows over grouped results,
// filters on window results in subqueries and CTEs, windows with LIMIT. Each query orders
// every row it returns, so that answers compare row by row.
func windowQueries() []string {
	const (
		d     = "(value->>'delay')::int"
		nd    = "NULLIF((value->>'delay')::int, 0)" // NULL for the flights on time
		dist  = "(value->>'distance')::int"
		dest  = "(value->>'destination')"
		nk    = "CASE WHEN (value->>'distance')::int > 700 THEN value->>'destination' END" // a key with NULLs
		w     = windowFrom
		po    = "PARTITION BY origin ORDER BY timestamp, id"
		order = " ORDER BY origin, timestamp, id"
		one   = " FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-25' AND timestamp < '2001-04-05'"
	)
	day := "date_trunc('day', timestamp)"
	return []string{
		// Ranking.
		"SELECT id, row_number() OVER (ORDER BY timestamp, id) AS rn" + w + " ORDER BY rn",
		"SELECT origin, id, row_number() OVER (" + po + ")" + w + order,
		"SELECT origin, id, rank() OVER (PARTITION BY origin ORDER BY " + d + " DESC)" + w + " ORDER BY origin, 3, id",
		"SELECT id, dense_rank() OVER (ORDER BY " + dest + ")" + w + " ORDER BY 2, id",
		"SELECT origin, id, percent_rank() OVER (PARTITION BY origin ORDER BY " + dist + ")" + w + order,
		"SELECT origin, id, cume_dist() OVER (PARTITION BY origin ORDER BY " + dist + ")" + w + order,
		"SELECT origin, id, ntile(4) OVER (" + po + ")" + w + order,
		"SELECT id, ntile(7) OVER (ORDER BY id)" + w + " ORDER BY id",
		"SELECT id, ntile(100000) OVER (PARTITION BY origin ORDER BY id)" + w + " ORDER BY origin, id",
		"SELECT id, rank() OVER (ORDER BY timestamp), dense_rank() OVER (ORDER BY timestamp)" + w + " ORDER BY timestamp, id",
		// Other rows' values.
		"SELECT origin, id, lag(" + d + ") OVER (" + po + ")" + w + order,
		"SELECT origin, id, lead(" + d + ", 2) OVER (" + po + ")" + w + order,
		"SELECT origin, id, lag(" + d + ", 3, -1) OVER (" + po + ")" + w + order,
		"SELECT id, lead(id, 1, 'none') OVER (ORDER BY timestamp, id)" + w + " ORDER BY timestamp, id",
		"SELECT origin, id, lag(" + nd + ") OVER (" + po + "), lead(" + nd + ", -1) OVER (" + po + ")" + w + order,
		"SELECT origin, id, lag(timestamp, 5) OVER (" + po + ")" + w + order,
		"SELECT origin, id, first_value(id) OVER (" + po + ")" + w + order,
		"SELECT origin, id, last_value(id) OVER (" + po + ")" + w + order,
		"SELECT origin, id, last_value(id) OVER (" + po + " ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)" + w + order,
		"SELECT origin, id, nth_value(id, 3) OVER (" + po + " ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)" + w + order,
		"SELECT id, nth_value(" + d + ", 2) OVER (ORDER BY timestamp, id)" + w + " ORDER BY timestamp, id",
		"SELECT origin, id, first_value(" + nd + ") OVER (" + po + " ROWS BETWEEN 2 PRECEDING AND 2 FOLLOWING), last_value(" + nd + ") OVER (" + po + " ROWS BETWEEN 2 PRECEDING AND 2 FOLLOWING)" + w + order,
		// Aggregates over frames.
		"SELECT id, count(*) OVER ()" + w + " ORDER BY id",
		"SELECT origin, id, count(" + nd + ") OVER (PARTITION BY origin)" + w + order,
		"SELECT origin, id, sum(" + d + ") OVER (PARTITION BY origin ORDER BY timestamp)" + w + order,
		"SELECT origin, id, sum(" + d + ") OVER (" + po + " ROWS BETWEEN 2 PRECEDING AND 2 FOLLOWING)" + w + order,
		"SELECT origin, id, avg(" + d + ") OVER (" + po + " ROWS 5 PRECEDING)" + w + order,
		"SELECT id, min(" + d + ") OVER (ORDER BY timestamp, id ROWS BETWEEN 3 PRECEDING AND 1 PRECEDING)" + w + " ORDER BY timestamp, id",
		"SELECT origin, id, max(" + dest + ") OVER (PARTITION BY origin ORDER BY timestamp RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)" + w + order,
		"SELECT origin, id, max(timestamp) OVER (" + po + " ROWS BETWEEN 1 FOLLOWING AND 3 FOLLOWING)" + w + order,
		"SELECT origin, id, sum(" + dist + ") OVER (" + po + " ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING)" + w + order,
		"SELECT origin, id, sum(" + d + "::float8) OVER (" + po + " ROWS BETWEEN 10 PRECEDING AND CURRENT ROW)" + w + order,
		"SELECT origin, id, avg(" + nd + ") OVER (PARTITION BY origin)" + w + order,
		// The variance family of doubles: PostgreSQL's float8_accum over each frame.
		"SELECT origin, id, stddev(" + d + "::float8) OVER (" + po + " ROWS BETWEEN 3 PRECEDING AND CURRENT ROW), var_pop(" + nd + "::float8) OVER (PARTITION BY origin), " +
			"variance(" + dist + "::float8) OVER (ORDER BY timestamp, id), stddev_pop(" + d + "::float8) FILTER (WHERE " + d + " > 0) OVER (" + po + " ROWS BETWEEN 1 FOLLOWING AND 4 FOLLOWING), " +
			"var_samp(" + nd + "::float8) OVER (PARTITION BY origin ORDER BY timestamp RANGE BETWEEN '2 hours' PRECEDING AND CURRENT ROW)" + w + order,
		// bool_and, every and bool_or over frames, NULLs among the values and frames without one.
		"SELECT origin, id, bool_and(" + d + " > 0) OVER (" + po + " ROWS BETWEEN 2 PRECEDING AND 2 FOLLOWING), bool_or(" + nd + " > 20) OVER (PARTITION BY origin ORDER BY timestamp), " +
			"every(" + nd + " < 30) FILTER (WHERE " + dist + " > 500) OVER (" + po + " ROWS 3 PRECEDING), bool_or(" + nd + " > 0) OVER (" + po + " ROWS BETWEEN 1 FOLLOWING AND 1 FOLLOWING)" + w + order,
		"SELECT origin, id, count(*) OVER (PARTITION BY origin ORDER BY timestamp RANGE BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING)" + w + order,
		"SELECT origin, id, min(" + nd + ") OVER (PARTITION BY origin ORDER BY timestamp RANGE CURRENT ROW), max(" + nd + ") OVER (PARTITION BY origin ORDER BY timestamp RANGE BETWEEN CURRENT ROW AND CURRENT ROW)" + w + order,
		"SELECT origin, id, count(*) OVER (" + po + " ROWS BETWEEN 0 PRECEDING AND 0 FOLLOWING), count(*) OVER (" + po + " ROWS BETWEEN 5 FOLLOWING AND 2 FOLLOWING), sum(" + d + ") OVER (" + po + " ROWS BETWEEN 5 FOLLOWING AND 2 FOLLOWING)" + w + order,
		"SELECT origin, id, count(*) FILTER (WHERE " + d + " > 10) OVER (" + po + " ROWS 10 PRECEDING), sum(" + dist + ") FILTER (WHERE " + dest + " < 'M') OVER (PARTITION BY origin)" + w + order,
		// RANGE frames with an offset: over timestamps by intervals, over integers (with
		// NULL keys first and last, descending) and over whole-number doubles.
		"SELECT origin, id, count(*) OVER (PARTITION BY origin ORDER BY timestamp RANGE BETWEEN INTERVAL '1 hour' PRECEDING AND CURRENT ROW)" + w + order,
		"SELECT origin, id, sum(" + d + ") OVER (PARTITION BY origin ORDER BY timestamp RANGE BETWEEN '30 minutes' PRECEDING AND '15 minutes' FOLLOWING), " +
			"avg(" + d + ") OVER (PARTITION BY origin ORDER BY timestamp DESC RANGE BETWEEN '1 day 2 hours' PRECEDING AND '1 hour' PRECEDING)" + w + order,
		"SELECT origin, id, min(" + d + ") OVER (PARTITION BY origin ORDER BY timestamp RANGE BETWEEN '2 hours' FOLLOWING AND UNBOUNDED FOLLOWING), " +
			"first_value(id) OVER (PARTITION BY origin ORDER BY timestamp RANGE '10 minutes' PRECEDING), last_value(id) OVER (PARTITION BY origin ORDER BY timestamp, id RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)" + w + order,
		"SELECT id, count(*) OVER (ORDER BY " + nd + " RANGE BETWEEN 5 PRECEDING AND 5 FOLLOWING), sum(" + dist + ") OVER (ORDER BY " + nd + " NULLS FIRST RANGE BETWEEN 10 PRECEDING AND 2 PRECEDING)" + w + " ORDER BY id",
		"SELECT id, max(id) OVER (ORDER BY " + nd + " DESC RANGE BETWEEN 3 PRECEDING AND CURRENT ROW), count(*) OVER (ORDER BY " + dist + " DESC NULLS LAST RANGE BETWEEN 100 FOLLOWING AND 300 FOLLOWING)" + w + " ORDER BY id",
		"SELECT id, count(*) OVER (ORDER BY " + dist + "::float8 RANGE BETWEEN 50 PRECEDING AND 50 FOLLOWING), sum(" + d + ") OVER (PARTITION BY origin ORDER BY " + d + "::bigint RANGE BETWEEN 9223372036854775807 PRECEDING AND 0 FOLLOWING)" + w + " ORDER BY id",
		// NULLs in keys and values, NULLS FIRST/LAST.
		"SELECT id, count(*) OVER (PARTITION BY " + nk + ")" + w + " ORDER BY id",
		"SELECT id, rank() OVER (PARTITION BY " + nk + " ORDER BY " + nd + " NULLS FIRST)" + w + " ORDER BY id",
		"SELECT id, row_number() OVER (ORDER BY " + nd + " DESC NULLS LAST, id)" + w + " ORDER BY 2",
		"SELECT id, dense_rank() OVER (ORDER BY " + nd + " ASC NULLS FIRST), rank() OVER (ORDER BY " + nd + " DESC)" + w + " ORDER BY id",
		"SELECT id, sum(" + nd + ") OVER (PARTITION BY " + nk + " ORDER BY " + nd + " NULLS FIRST)" + w + " ORDER BY id",
		// Named windows.
		"SELECT origin, id, row_number() OVER w, lag(id) OVER w, sum(" + d + ") OVER (w ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING)" + w + " WINDOW w AS (" + po + ")" + order,
		"SELECT origin, id, rank() OVER (p ORDER BY " + d + "), count(*) OVER p" + w + " WINDOW p AS (PARTITION BY origin)" + order,
		// Windows over grouped results: what BI tools send for a percentage of the total and a top N.
		"SELECT " + dest + " AS dest, count(*), sum(count(*)) OVER (), rank() OVER (ORDER BY count(*) DESC)" + w + " GROUP BY 1 ORDER BY 4, 1",
		"SELECT origin, count(*)::float8 * 100 / sum(count(*)) OVER () AS pct" + w + " GROUP BY origin ORDER BY 1",
		"SELECT origin, " + day + " AS day, count(*), sum(count(*)) OVER (PARTITION BY origin ORDER BY " + day + ") AS running" + w + " GROUP BY 1, 2 ORDER BY 1, 2",
		"SELECT " + dest + ", max(" + d + "), dense_rank() OVER (ORDER BY max(" + d + ") DESC)" + w + " GROUP BY 1 HAVING count(*) > 3 ORDER BY 3, 1",
		// Filters on window results, CTEs, LIMIT.
		"SELECT * FROM (SELECT origin, id, " + d + " AS delay, row_number() OVER (PARTITION BY origin ORDER BY " + d + " DESC, id) AS rn" + w + ") t WHERE rn <= 3 ORDER BY origin, rn",
		"WITH r AS (SELECT origin, " + day + " AS d, count(*) AS n" + w + " GROUP BY 1, 2) SELECT origin, d, n, sum(n) OVER (PARTITION BY origin ORDER BY d) AS running FROM r ORDER BY 1, 2",
		"WITH r AS (SELECT origin, " + day + " AS d, count(*) AS n" + w + " GROUP BY 1, 2) SELECT * FROM (SELECT origin, d, n, rank() OVER (PARTITION BY origin ORDER BY n DESC) AS rk FROM r) t WHERE rk <= 3 ORDER BY origin, rk, d",
		"SELECT * FROM (SELECT origin, id, lag(" + d + ") OVER (" + po + ") AS prev" + w + ") t WHERE origin = 'BOS' AND prev > 30 ORDER BY id",
		"SELECT id, row_number() OVER (ORDER BY timestamp DESC, id)" + w + " ORDER BY 2 LIMIT 10",
		"SELECT id, sum(" + d + ") OVER (ORDER BY timestamp, id)" + w + " ORDER BY timestamp DESC, id LIMIT 7 OFFSET 3",
		"SELECT id" + w + " ORDER BY row_number() OVER (ORDER BY timestamp DESC, id) LIMIT 5",
		"SELECT DISTINCT origin, count(*) OVER (PARTITION BY origin)" + w + " ORDER BY 1",
		"SELECT origin, id, " + d + " - lag(" + d + ") OVER (" + po + ") AS change, 2 * row_number() OVER (" + po + ") + 1" + w + order,
		"SELECT origin, id, row_number() OVER (ORDER BY id), rank() OVER (PARTITION BY origin ORDER BY " + d + "), avg(" + d + ") OVER (PARTITION BY origin ORDER BY timestamp DESC NULLS FIRST)" + w + order,
		"SELECT count(*), max(rn) FROM (SELECT row_number() OVER (PARTITION BY origin ORDER BY timestamp) AS rn" + w + ") t",
		// One partition ordered by (timestamp, id): the window keeps the read's order.
		"SELECT id, sum(" + d + ") OVER (ORDER BY timestamp, id), row_number() OVER (ORDER BY timestamp, id), first_value(id) OVER (ORDER BY timestamp, id ROWS BETWEEN 3 PRECEDING AND 3 FOLLOWING)" + one + " ORDER BY timestamp, id",
		"SELECT id, rank() OVER (PARTITION BY origin ORDER BY timestamp), count(*) OVER (PARTITION BY origin ORDER BY timestamp)" + one + " ORDER BY timestamp, id",
	}
}

// TestWindowFunctionsAsPostgres: the corpus of window queries answers, through flightsrv with
// pushdown on and off, exactly what PostgreSQL answers over the same rows held in a plain
// table: the same rows in the same order, each value equal (doubles to a relative 1e-9, as
// sums of doubles may add peers in another order), and every column of PostgreSQL's type,
// but where flightsrv's aggregates are documented to differ (a sum of bigints is bigint where
// PostgreSQL answers numeric; avg of integers is numeric, as in PostgreSQL).
func TestWindowFunctionsAsPostgres(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	conn := pgUTC(t, ctx, e.url)
	pgFlights(t, ctx, conn, e.sample, []string{"ORD", "BOS"}, time.Date(2001, 3, 25, 0, 0, 0, 0, time.UTC), time.Date(2001, 4, 5, 0, 0, 0, 0, time.UTC))
	on, off := dial(t, e.on), dial(t, e.off)
	queries := windowQueries()
	if len(queries) < 40 {
		t.Fatalf("the corpus has %d queries", len(queries))
	}
	compared := comparePG(t, ctx, conn, map[string]*flightsql.Client{"pushdown on": on, "pushdown off": off}, nonEmptyTyped(queries...)...)
	t.Logf("%d window queries, %d rows equal to PostgreSQL's", len(queries), compared)

	// EXPLAIN shows the window operator at the coordinator, without a value of the query.
	plan := strings.Join(explainLines(t, on, "EXPLAIN "+queries[12]), "\n")
	for want, has := range map[string]bool{"Window 1 partition keys, 2 order keys, functions [lag]": true, "'ORD'": false, "'2001": false, "-1": false, "no sort": false} {
		if strings.Contains(plan, want) != has {
			t.Errorf("EXPLAIN of a window (%q %v):\n%s", want, has, plan)
		}
	}
	// Over one partition in (timestamp, id) order, the window sorts nothing.
	plan = strings.Join(explainLines(t, on, "EXPLAIN "+queries[len(queries)-2]), "\n")
	if !strings.Contains(plan, "Window 0 partition keys, 2 order keys, functions [sum row_number first_value], in the read's order (no sort)") {
		t.Errorf("EXPLAIN of a window in the read's order:\n%s", plan)
	}
}

// TestWindowRefusals: what the window functions do not run is refused by name
// (UNIMPLEMENTED), and what PostgreSQL refuses is refused in its words and SQLSTATE class
// (INVALID_ARGUMENT); a window over more rows than --query-memory allows is
// RESOURCE_EXHAUSTED naming the limit.
func TestWindowRefusals(t *testing.T) {
	e := newEnv(t)
	cl := dial(t, e.on)
	ctx := context.Background()
	const w = windowFrom
	for _, c := range []struct {
		sql, msg string
		code     codes.Code
	}{
		{"SELECT count(*) OVER (ORDER BY timestamp RANGE BETWEEN '1 month' PRECEDING AND CURRENT ROW)" + w, "RANGE offsets of intervals with months or years are not supported", codes.Unimplemented},
		{"SELECT count(*) OVER (ORDER BY timestamp, id RANGE BETWEEN '1 day' PRECEDING AND CURRENT ROW)" + w, "RANGE with offset PRECEDING/FOLLOWING requires exactly one ORDER BY column", codes.InvalidArgument},
		{"SELECT count(*) OVER (ORDER BY id RANGE BETWEEN 1 PRECEDING AND CURRENT ROW)" + w, "RANGE with offset PRECEDING/FOLLOWING is not supported for column type text", codes.Unimplemented},
		{"SELECT count(*) OVER (ORDER BY (value->>'delay')::float8 RANGE BETWEEN 1.5 PRECEDING AND CURRENT ROW)" + w, "RANGE offsets over double precision other than whole-number constants are not supported", codes.Unimplemented},
		{"SELECT count(*) OVER (ORDER BY (value->>'delay')::int RANGE BETWEEN -1 PRECEDING AND CURRENT ROW)" + w, "invalid preceding or following size in window function", codes.InvalidArgument},
		{"SELECT count(*) OVER (ORDER BY timestamp RANGE BETWEEN '-1 hour' PRECEDING AND CURRENT ROW)" + w, "invalid preceding or following size in window function", codes.InvalidArgument},
		{"SELECT count(DISTINCT id) OVER ()" + w, "DISTINCT is not implemented for window functions", codes.Unimplemented},
		{"SELECT json_agg(id) OVER ()" + w, "aggregate function json_agg as a window function is not supported", codes.Unimplemented},
		{"SELECT lower(id) OVER ()" + w, "window function lower is not supported", codes.Unimplemented},
		{"SELECT every(" + "(value->>'delay')::int" + ") OVER ()" + w, "function every(integer) does not exist", codes.InvalidArgument},
		{"SELECT id" + w + " AND row_number() OVER () > 1", "window functions are not allowed here", codes.InvalidArgument},
		{"SELECT origin, count(*)" + w + " GROUP BY origin HAVING rank() OVER (ORDER BY count(*)) = 1", "window functions are not allowed here", codes.InvalidArgument},
		{"SELECT sum(row_number() OVER ())" + w, "aggregate function calls cannot contain window function calls", codes.InvalidArgument},
		{"SELECT sum(row_number() OVER ()) OVER ()" + w, "window function calls cannot be nested", codes.InvalidArgument},
		{"SELECT row_number() OVER v" + w, `window "v" does not exist`, codes.InvalidArgument},
		{"SELECT count(*) OVER (ORDER BY timestamp ROWS BETWEEN -1 PRECEDING AND CURRENT ROW)" + w, "frame starting offset must not be negative", codes.InvalidArgument},
		{"SELECT count(*) OVER (w ORDER BY id)" + w + " WINDOW w AS (ORDER BY timestamp)", `cannot override ORDER BY clause of window "w"`, codes.InvalidArgument},
		{"SELECT ntile(0) OVER ()" + w, "argument of ntile must be greater than zero", codes.InvalidArgument},
		{"SELECT nth_value(id, 0) OVER ()" + w, "argument of nth_value must be greater than zero", codes.InvalidArgument},
		{"SELECT row_number() OVER ()", "", codes.OK},
	} {
		res, err := run(ctx, cl, c.sql)
		if c.code == codes.OK {
			if err != nil {
				t.Errorf("%s: %v", c.sql, err)
			} else {
				res.release()
			}
			continue
		}
		if st := status.Convert(err); st.Code() != c.code || !strings.Contains(st.Message(), c.msg) {
			t.Errorf("%.100s: %v %q, want %v %q", c.sql, st.Code(), st.Message(), c.code, c.msg)
		}
	}

	// A window buffers its input under the query's ledger: over ORD's half year of 8 KB rows with a 64 MiB
	// --query-memory it is refused naming the limit, where the same rows stream without it.
	small, err := server.Start(ctx, server.Config{
		Listen: "127.0.0.1:0", Tables: []routing.TableDef{flightsTable}, Hot: e.store, Archive: e.reader, Pushdown: true, QueryMemory: 64 << 20,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(small.Close)
	wide := "id || '" + strings.Repeat("x", 8000) + "'" // 8 KB a row, priced before it is built
	rowsQ := "SELECT id, " + wide + " FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01'"
	streamed, err := run(ctx, dial(t, small), rowsQ)
	if err != nil {
		t.Fatalf("the rows without a window under 64 MiB: %v", err)
	}
	streamed.release()
	q := "SELECT id, w, row_number() OVER (ORDER BY timestamp DESC) FROM (SELECT id, timestamp, " + wide + " AS w FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01') t"
	if _, err := run(ctx, dial(t, small), q); status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "--query-memory") {
		t.Errorf("a window over more than --query-memory: %v, want RESOURCE_EXHAUSTED naming the limit", err)
	}
	// Within the limit the same window answers every row.
	res := mustRun(t, cl, q)
	var n int64
	for _, rec := range res.recs {
		n += rec.NumRows()
	}
	if want := int64(len(expected(e.sample, "ORD", time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2001, 7, 1, 0, 0, 0, 0, time.UTC)))); n != want {
		t.Errorf("%d rows, want %d", n, want)
	}
}

// smallServer starts a server over e's stores whose --query-memory is 64 MiB: the ORD
// half year of 8 KB rows streams through it, but no operator can buffer it.
func smallServer(t *testing.T, e *env) *server.Server {
	t.Helper()
	small, err := server.Start(context.Background(), server.Config{
		Listen: "127.0.0.1:0", Tables: []routing.TableDef{flightsTable}, Hot: e.store, Archive: e.reader, Pushdown: true, QueryMemory: 64 << 20,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(small.Close)
	return small
}
