package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/scan/shred"
	"github.com/flightsrv/flightsrv/server"
)

// shredWhere is the reads of the shredded-column cache tests: the three loaded airports over
// January (archived as JSON), February–March (Parquet), April (archiving, hot for ORD) to June
// (hot).
const shredWhere = `origin IN ('ORD', 'SFO', 'BOS') AND timestamp >= TIMESTAMPTZ '2001-01-01T00:00:00Z' AND timestamp < TIMESTAMPTZ '2001-07-01T00:00:00Z'`

// shredQueries are issue 19's shapes over JSON fields, each in flightsrv's SQL and in
// PostgreSQL's over the sample's rows (pgSample's table s, value as json text); every one has
// a deterministic row order.
var shredQueries = [][2]string{
	{"SELECT count(*) FROM flights WHERE " + shredWhere + " AND (value->>'delay')::int > 60",
		"SELECT count(*) FROM s WHERE (value::json->>'delay')::int > 60"},
	{"SELECT origin, value->>'destination', count(*), sum((value->>'distance')::int) FROM flights WHERE " + shredWhere + " GROUP BY 1, 2 ORDER BY 1, 2",
		"SELECT origin, value::json->>'destination', count(*), sum((value::json->>'distance')::int) FROM s GROUP BY 1, 2 ORDER BY 1, 2"},
	{"SELECT origin, min((value->>'delay')::int), max((value->>'delay')::bigint), count(value->>'destination') FROM flights WHERE " + shredWhere + " GROUP BY 1 ORDER BY 1",
		"SELECT origin, min((value::json->>'delay')::int), max((value::json->>'delay')::bigint), count(value::json->>'destination') FROM s GROUP BY 1 ORDER BY 1"},
	{"SELECT id, (value->>'delay')::int FROM flights WHERE " + shredWhere + " ORDER BY 2 DESC, 1 LIMIT 10",
		"SELECT id, (value::json->>'delay')::int FROM s ORDER BY 2 DESC, id COLLATE \"C\" LIMIT 10"},
	{"SELECT id, value->>'destination' FROM flights WHERE " + shredWhere + " AND value->>'destination' IN ('LAX', 'JFK') AND (value->>'distance')::float8 > 1000 ORDER BY 1",
		"SELECT id, value::json->>'destination' FROM s WHERE value::json->>'destination' IN ('LAX', 'JFK') AND (value::json->>'distance')::float8 > 1000 ORDER BY id COLLATE \"C\""},
	{"SELECT id FROM flights WHERE " + shredWhere + " AND (value->>'delay')::int > 300 ORDER BY id",
		"SELECT id FROM s WHERE (value::json->>'delay')::int > 300 ORDER BY id COLLATE \"C\""},
	{"SELECT count(DISTINCT value->>'destination'), sum((value->>'delay')::int) FILTER (WHERE value->>'destination' = 'ORD') FROM flights WHERE " + shredWhere,
		"SELECT count(DISTINCT value::json->>'destination'), sum((value::json->>'delay')::int) FILTER (WHERE value::json->>'destination' = 'ORD') FROM s"},
	// The event times read beside JSON fields: a warm read takes them from the cache too.
	{"SELECT date_trunc('day', timestamp)::text, count(*), sum((value->>'distance')::int) FROM flights WHERE " + shredWhere + " GROUP BY 1 ORDER BY 1",
		"SELECT date_trunc('day', at)::text, count(*), sum((value::json->>'distance')::int) FROM s GROUP BY 1 ORDER BY 1"},
	{"SELECT origin, timestamp::text, (value->>'delay')::int FROM flights WHERE " + shredWhere + " ORDER BY 3 DESC NULLS LAST, 2, 1 LIMIT 10",
		"SELECT origin, at::text, (value::json->>'delay')::int FROM s ORDER BY 3 DESC NULLS LAST, 2, 1 LIMIT 10"},
	// Filters a bucket's cached range can prove false (pruning): the sample's greatest delays
	// of the archived January–March buckets are 268, 367, 242 (BOS), 279, 333, 328 (ORD), 349,
	// 360, 359 (SFO), the least from -61 to -40, so that each of these prunes some buckets and
	// not others (the constant on either side, equality, int8, and a filter after the pruning
	// one).
	{"SELECT origin, count(*), max((value->>'delay')::int) FROM flights WHERE " + shredWhere + " AND 340 <= (value->>'delay')::int GROUP BY 1 ORDER BY 1",
		"SELECT origin, count(*), max((value::json->>'delay')::int) FROM s WHERE 340 <= (value::json->>'delay')::int GROUP BY 1 ORDER BY 1"},
	{"SELECT count(*), min((value->>'delay')::int) FROM flights WHERE " + shredWhere + " AND (value->>'delay')::int < -55",
		"SELECT count(*), min((value::json->>'delay')::int) FROM s WHERE (value::json->>'delay')::int < -55"},
	{"SELECT count(*), sum((value->>'distance')::int) FROM flights WHERE " + shredWhere + " AND (value->>'delay')::int = 367",
		"SELECT count(*), sum((value::json->>'distance')::int) FROM s WHERE (value::json->>'delay')::int = 367"},
	{"SELECT origin, count(*) FROM flights WHERE " + shredWhere + " AND (value->>'delay')::bigint >= 300 AND value->>'destination' <> 'ZZZ' GROUP BY 1 ORDER BY 1",
		"SELECT origin, count(*) FROM s WHERE (value::json->>'delay')::bigint >= 300 AND value::json->>'destination' <> 'ZZZ' GROUP BY 1 ORDER BY 1"},
	// Joins (BenchmarkAnalytical's): the probe side's JSON fields, a residual's and a semi
	// join's key, are computed by its fragments (scan/joinprune.go), so a warm read takes them
	// from the cache.
	{"SELECT f.origin, count(*) FROM flights f JOIN (SELECT origin, avg((value->>'delay')::int) AS a FROM flights WHERE " + shredWhere + " GROUP BY 1) o ON f.origin = o.origin WHERE " + shredWhereF + " AND (f.value->>'delay')::int > o.a GROUP BY 1 ORDER BY 1",
		"SELECT f.origin, count(*) FROM s f JOIN (SELECT origin, avg((value::json->>'delay')::int) AS a FROM s GROUP BY 1) o ON f.origin = o.origin WHERE (f.value::json->>'delay')::int > o.a GROUP BY 1 ORDER BY 1"},
	{"SELECT origin, count(*) FROM flights WHERE " + shredWhere + " AND value->>'destination' IN (SELECT origin FROM flights WHERE " + shredWhere + " GROUP BY 1 HAVING count(*) > 1000) GROUP BY 1 ORDER BY 1",
		"SELECT origin, count(*) FROM s WHERE value::json->>'destination' IN (SELECT origin FROM s GROUP BY 1 HAVING count(*) > 1000) GROUP BY 1 ORDER BY 1"},
	// BenchmarkAnalytical's numeric query: the cast to numeric(10,0) is read in the extraction
	// into decimal128, a column the cache holds.
	{"SELECT origin, round(sum((value->>'distance')::numeric(10,0) * 1.0375), 2)::text FROM flights WHERE " + shredWhere + " GROUP BY 1 ORDER BY 1",
		"SELECT origin, round(sum((value::json->>'distance')::numeric(10,0) * 1.0375), 2)::text FROM s GROUP BY 1 ORDER BY 1"},
}

// shredNumeric is the index in shredQueries of the query summing a JSON field cast to numeric.
const shredNumeric = 15

// shredWhereF is shredWhere over the columns of the relation f.
const shredWhereF = `f.origin IN ('ORD', 'SFO', 'BOS') AND f.timestamp >= TIMESTAMPTZ '2001-01-01T00:00:00Z' AND f.timestamp < TIMESTAMPTZ '2001-07-01T00:00:00Z'`

// shredJoin is the index in shredQueries of the join against each origin's average delay.
const shredJoin = 13

// shredPruning is the index in shredQueries of a query whose warm run prunes buckets.
const shredPruning = 9

// pgSample loads the sample's flights of the loaded airports in January–June into
// PostgreSQL's temporary table s (origin, id, value as JSON text, at the event time),
// independently of flightsrv; the session's time zone is UTC, as flightsrv's.
func pgSample(t *testing.T, ctx context.Context, e *env) *pgx.Conn {
	t.Helper()
	pg, err := pgx.Connect(ctx, e.url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pg.Close(context.Background()) })
	var origins, ids, values []string
	var ats []time.Time
	for _, a := range loadedAirports {
		for _, f := range expected(e.sample, a, ts("2001-01-01T00:00:00Z"), ts("2001-07-01T00:00:00Z")) {
			origins, ids, values = append(origins, f.origin), append(ids, f.id), append(values, f.value())
			ats = append(ats, f.at)
		}
	}
	if _, err := pg.Exec(ctx, "SET TIME ZONE 'UTC'"); err != nil {
		t.Fatal(err)
	}
	if _, err := pg.Exec(ctx, "CREATE TEMP TABLE s AS SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::timestamptz[]) AS r(origin, id, value, at)", origins, ids, values, ats); err != nil {
		t.Fatal(err)
	}
	return pg
}

// startShredServer starts a server like env's pushdown-off one, with a shredded-column cache
// over dir of size bytes.
func startShredServer(t *testing.T, e *env, dir string, size int64) (*server.Server, *shred.Cache) {
	t.Helper()
	c, err := shred.Open(dir, size)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.Start(context.Background(), server.Config{
		Listen: "127.0.0.1:0", Tables: []routing.TableDef{flightsTable}, Hot: e.store, Archive: e.reader,
		Pushdown: true, Alloc: e.alloc, ShredCache: c,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return srv, c
}

// answers runs every shred query and returns their rows as text.
func answers(t *testing.T, srv *server.Server) [][][]string {
	t.Helper()
	cl := dial(t, srv)
	out := make([][][]string, len(shredQueries))
	for i, q := range shredQueries {
		out[i] = textColumns(mustRun(t, cl, q[0]))
	}
	return out
}

func sameAnswers(t *testing.T, phase string, got, want [][][]string) {
	t.Helper()
	for i := range want {
		if !slices.EqualFunc(got[i], want[i], slices.Equal) {
			t.Errorf("%s: %s\n got %v\nwant %v", phase, shredQueries[i][0], got[i], want[i])
		}
	}
}

// TestShredCacheAnswers (issue 19): the JSON-field queries answer the same with the
// shredded-column cache disabled (the reference, itself equal to PostgreSQL over the sample's
// rows), cold, warm, warm after a restart (a new cache over the same directory, no route
// cached: ranges read from the entries' headers), damaged (one byte changed in every entry:
// each is dropped, the read parses and rewrites it; a bucket whose header still checks may be
// pruned by it) and full (a bound too small for most entries). The warm runs read from the
// cache (its hits grow, EXPLAIN ANALYZE counts them) and prune buckets by the cached ranges.
func TestShredCacheAnswers(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	pg := pgSample(t, ctx, e)
	want := answers(t, e.off)
	for i, q := range shredQueries {
		if len(want[i]) == 0 {
			t.Fatalf("%s: no rows", q[0])
		}
		compareText(t, q[0], want[i], pgTextRows(t, ctx, pg, q[1]))
	}

	dir := t.TempDir()
	srv, cache := startShredServer(t, e, dir, 64<<20)
	sameAnswers(t, "cold", answers(t, srv), want)
	cold := cache.Stats()
	if cold.Writes == 0 || cold.Entries == 0 {
		t.Fatalf("cold run: %+v", cold)
	}
	sameAnswers(t, "warm", answers(t, srv), want)
	warm := cache.Stats()
	if warm.Hits == 0 || warm.Writes != cold.Writes || warm.Damaged != 0 {
		t.Fatalf("warm run wrote or missed: cold %+v, warm %+v", cold, warm)
	}
	plan := strings.Join(planText(t, mustRun(t, dial(t, srv), "EXPLAIN ANALYZE "+shredQueries[1][0])), "\n")
	if !strings.Contains(plan, "shredded-column cache") || !regexpShredHits.MatchString(plan) {
		t.Errorf("EXPLAIN ANALYZE shows no shredded-column cache hit:\n%s", plan)
	}
	// The event times come from the cache too: the warm read of the day bins fetches nothing
	// from the payloads.
	plan = strings.Join(planText(t, mustRun(t, dial(t, srv), "EXPLAIN ANALYZE "+shredQueries[7][0])), "\n")
	if !strings.Contains(plan, "column timestamp:timestamp") || !regexpShredHits.MatchString(plan) {
		t.Errorf("EXPLAIN ANALYZE of the day bins shows no cached event times:\n%s", plan)
	}

	// The join's probe side reads the partition and value columns alone, computes the delay
	// and its residual piece (errors deferred to the pairs: scan/joinprune.go deferredPiece)
	// in its fragments, and reads the delay warm from the cache; the join gathers the one
	// column read above it (f.origin) of its eight (four of f, the two pushed expressions,
	// two of o).
	plan = strings.Join(planText(t, mustRun(t, dial(t, srv), "EXPLAIN ANALYZE "+shredQueries[shredJoin][0])), "\n")
	if !strings.Contains(plan, "2 expressions computed by its inputs' fragments, 7 of 8 output columns not gathered") || !strings.Contains(plan, "ScanBucket [partition, value]; whole archived buckets read") ||
		strings.Contains(plan, "ScanBucket [partition, timestamp, id, value]") || !regexpShredHits.MatchString(plan) {
		t.Errorf("EXPLAIN ANALYZE of a join shows no pruned, pushed, cached probe side:\n%s", plan)
	}

	// The numeric field is read warm from the cache (decimal128).
	plan = strings.Join(planText(t, mustRun(t, dial(t, srv), "EXPLAIN ANALYZE "+shredQueries[shredNumeric][0])), "\n")
	if !strings.Contains(plan, "numeric(half_up,0,10)") || !regexpShredHits.MatchString(plan) {
		t.Errorf("EXPLAIN ANALYZE of the numeric sum shows no cached numeric field:\n%s", plan)
	}

	// Pruned by the cached ranges: the buckets whose delays all fall below 340 are not read.
	plan = strings.Join(planText(t, mustRun(t, dial(t, srv), "EXPLAIN ANALYZE "+shredQueries[shredPruning][0])), "\n")
	if !strings.Contains(plan, "skipped unread when the cached range") || !regexpShredPruned.MatchString(plan) {
		t.Errorf("EXPLAIN ANALYZE of a filter on delay shows no pruned bucket:\n%s", plan)
	}

	// A new process over the same directory: the routes are not cached yet.
	srv2, cache2 := startShredServer(t, e, dir, 64<<20)
	sameAnswers(t, "restarted", answers(t, srv2), want)
	if s := cache2.Stats(); s.Hits == 0 || s.Writes != 0 {
		t.Fatalf("restarted: %+v", s)
	}

	// Damaged: one byte of every bucket's file changed.
	files, err := filepath.Glob(filepath.Join(dir, "*.bucket"))
	if err != nil || len(files) == 0 {
		t.Fatalf("entries %v %v", files, err)
	}
	for i, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		b[(i*7919)%len(b)] ^= 0x10
		if err := os.WriteFile(f, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	srv3, cache3 := startShredServer(t, e, dir, 64<<20)
	sameAnswers(t, "damaged", answers(t, srv3), want)
	if s := cache3.Stats(); s.Damaged == 0 || s.Writes == 0 {
		t.Fatalf("damaged entries not dropped and rebuilt: %+v", s)
	}
	sameAnswers(t, "rebuilt", answers(t, srv3), want)
	if s := cache3.Stats(); s.Damaged != int64(len(files)) && s.Damaged == 0 {
		t.Fatalf("rebuilt: %+v", s)
	}

	// Full: a bound of a third of what the warm cache holds (warm.Bytes, about 840 KB in 9
	// buckets' files): a bucket's file keeps fewer columns than the queries read (at most an
	// eighth of the bound), least recently used buckets leave.
	bound := warm.Bytes / 3
	srv4, cache4 := startShredServer(t, e, t.TempDir(), bound)
	for range 2 {
		sameAnswers(t, "full", answers(t, srv4), want)
	}
	if s := cache4.Stats(); s.Bytes > bound || s.Evicted == 0 || s.Writes == 0 {
		t.Fatalf("full, bound %d: %+v", bound, s)
	}
}

var (
	regexpShredHits   = regexp.MustCompile(`shred cache hits=[1-9][0-9]* misses=`)
	regexpShredPruned = regexp.MustCompile(`shred cache hits=[1-9][0-9]* misses=[0-9]+ pruned=[1-9]`)
)

// TestShredCacheConcurrent runs the JSON-field queries from several clients at once over one
// cold cache (writes of the same entries racing) and then warm, each answer equal to the
// server's without cache; run under -race by make test's race pass.
func TestShredCacheConcurrent(t *testing.T) {
	e := newEnv(t)
	want := answers(t, e.off)
	srv, cache := startShredServer(t, e, t.TempDir(), 64<<20)
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for g := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cl := dial(t, srv)
			for round := range 2 {
				for i := range shredQueries {
					q := shredQueries[(i+g)%len(shredQueries)][0]
					res, err := run(context.Background(), cl, q)
					if err != nil {
						errs <- fmt.Sprintf("%s: %v", q, err)
						return
					}
					got := textColumns(res)
					res.release()
					if !slices.EqualFunc(got, want[(i+g)%len(shredQueries)], slices.Equal) {
						errs <- fmt.Sprintf("round %d: %s: %v", round, q, got)
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if s := cache.Stats(); s.Hits == 0 || s.Damaged != 0 {
		t.Fatalf("stats %+v", s)
	}
}
