package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/jackc/pgx/v5"

	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/routing/cockroach"
	"github.com/flightsrv/flightsrv/server"
)

// render returns every row of a result as text, in order, for comparisons.
func render(res *result) []string {
	var out []string
	for _, rec := range res.recs {
		for i := range int(rec.NumRows()) {
			cells := make([]string, rec.NumCols())
			for c := range cells {
				cells[c] = rec.Column(c).ValueStr(i)
			}
			out = append(out, strings.Join(cells, "|"))
		}
	}
	return out
}

// harnessRanges returns time ranges over the sample's history: every bucket boundary (month
// starts) as an edge, ranges inside one bucket, ranges crossing the archived/archiving/hot
// cut-overs, and random ranges with second precision.
func harnessRanges(rng *rand.Rand) [][2]time.Time {
	edges := []time.Time{ts("2000-12-31T23:59:59Z")}
	for m := 1; m <= 8; m++ {
		edges = append(edges, time.Date(2001, time.Month(m), 1, 0, 0, 0, 0, time.UTC))
	}
	var out [][2]time.Time
	for i := range edges {
		for j := i + 1; j < len(edges); j++ {
			out = append(out, [2]time.Time{edges[i], edges[j]})
		}
	}
	lo, hi := ts("2001-01-01T00:00:00Z").Unix(), ts("2001-07-02T00:00:00Z").Unix()
	for range 12 {
		a, b := lo+rng.Int64N(hi-lo), lo+rng.Int64N(hi-lo)
		if a == b {
			continue
		}
		if a > b {
			a, b = b, a
		}
		out = append(out, [2]time.Time{time.Unix(a, 0).UTC(), time.Unix(b, 0).UTC()})
	}
	// Microsecond edges around a cut-over.
	out = append(out, [2]time.Time{ts("2001-03-31T23:59:59Z").Add(999999 * time.Microsecond), ts("2001-04-01T00:00:00Z").Add(time.Microsecond)})
	return out
}

// TestPushdownEqualsScanPath is the correctness harness of the aggregate-pushdown seed: every
// query runs on the server with pushdown on and on the one with pushdown off, over hot,
// archiving and archived (JSON and Parquet) buckets and across bucket boundaries; the answers
// must be identical, and counts must equal the reference computed from the sample file.
func TestPushdownEqualsScanPath(t *testing.T) {
	e := newEnv(t)
	on, off := dial(t, e.on), dial(t, e.off)
	rng := rand.New(rand.NewPCG(1, 2))
	ctx := context.Background()
	queries := 0
	for _, origin := range append(slices.Clone(loadedAirports), "NOPE") {
		for ri, r := range harnessRanges(rng) {
			where := fmt.Sprintf("origin = '%s' AND timestamp >= TIMESTAMPTZ '%s' AND timestamp < TIMESTAMPTZ '%s'",
				origin, r[0].Format(time.RFC3339Nano), r[1].Format(time.RFC3339Nano))
			want := expected(e.sample, origin, r[0], r[1])
			for _, sel := range []string{"COUNT(*)", "MIN(timestamp), MAX(timestamp)", "MIN(timestamp)", "MAX(timestamp)", "COUNT(*) AS n, COUNT(id)",
				"date_trunc('day', timestamp) AS d, COUNT(*) | GROUP BY 1 ORDER BY 1",
				"date_trunc('month', timestamp) AS m, COUNT(*) | GROUP BY m",
				"COUNT(*), date_bin(INTERVAL '6 hours', timestamp, TIMESTAMPTZ '2001-01-01T03:00:00Z') AS b | GROUP BY b ORDER BY b DESC LIMIT 7",
			} {
				sel, tail, grouped := strings.Cut(sel, " | ")
				if grouped && ri%3 != 0 {
					continue // grouped queries on a third of the ranges keep the test fast
				}
				q := "SELECT " + sel + " FROM flights WHERE " + where + " " + tail
				a, b := mustRun(t, on, q), mustRun(t, off, q)
				ra, rb := render(a), render(b)
				queries++
				if !slices.Equal(ra, rb) {
					t.Fatalf("%s:\npushdown %v\nscan     %v", q, ra, rb)
				}
				if strings.HasPrefix(sel, "COUNT") && tail == "" {
					if got := a.recs[0].Column(0).(*array.Int64).Value(0); got != int64(len(want)) {
						t.Fatalf("%s: %d, reference %d", q, got, len(want))
					}
				}
			}
		}
	}
	// Counts of every partition (the analytical mode): on PostgreSQL one summed statement for
	// the hot and archiving buckets (routing/cockroach/rowagg.go, "Summed counts"), the
	// archived ones read from their archives.
	aon, aoff := dialAnalytical(t, e.on), dialAnalytical(t, e.off)
	for _, r := range harnessRanges(rng) {
		q := fmt.Sprintf("SELECT COUNT(*) FROM flights WHERE timestamp >= TIMESTAMPTZ '%s' AND timestamp < TIMESTAMPTZ '%s'",
			r[0].Format(time.RFC3339Nano), r[1].Format(time.RFC3339Nano))
		var want int
		for _, origin := range loadedAirports {
			want += len(expected(e.sample, origin, r[0], r[1]))
		}
		a, b := mustRun(t, aon, q), mustRun(t, aoff, q)
		queries++
		if ra, rb := render(a), render(b); !slices.Equal(ra, rb) {
			t.Fatalf("%s:\npushdown %v\nscan     %v", q, ra, rb)
		}
		if got := a.recs[0].Column(0).(*array.Int64).Value(0); got != int64(want) {
			t.Fatalf("%s: %d, reference %d", q, got, want)
		}
	}
	t.Logf("%d queries compared", queries)
	_ = ctx
}

// statementLog records the SQL text of every statement a store sends.
type statementLog struct {
	mu  sync.Mutex
	sql []string
}

func (l *statementLog) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	l.mu.Lock()
	l.sql = append(l.sql, d.SQL)
	l.mu.Unlock()
	return ctx
}

func (l *statementLog) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (l *statementLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.sql
	l.sql = nil
	return out
}

// tracedServer starts a server with pushdown over e's stores whose hot store records every
// statement it sends in the returned log; both are closed when the test ends.
func tracedServer(t *testing.T, e *env) (*server.Server, *statementLog) {
	t.Helper()
	ctx := context.Background()
	log := &statementLog{}
	st, err := cockroach.Open(ctx, cockroach.Config{URL: e.url, Tracer: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	srv, err := server.Start(ctx, server.Config{Listen: "127.0.0.1:0", Tables: []routing.TableDef{flightsTable}, Hot: st, Archive: e.reader, Pushdown: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return srv, log
}

var (
	countCall  = regexp.MustCompile(`(?i)\bcount\(`)
	readsValue = regexp.MustCompile(`(?i)\b(value|sort_key)\b`)
)

// TestHotCountSendsOneCountPerBucket observes the statements a hot-only COUNT(*) of one
// partition sends: one count statement per bucket, and none that reads value (seed test plan,
// item 2). Reads of several partitions batch their hot buckets instead (scan/hotagg.go).
func TestHotCountSendsOneCountPerBucket(t *testing.T) {
	e := newEnv(t)
	srv, log := tracedServer(t, e)
	cl := dial(t, srv)
	log.take()
	// SFO's April–July buckets are hot: four buckets.
	from, to := ts("2001-04-01T00:00:00Z"), ts("2001-08-01T00:00:00Z")
	got := scalarCount(t, mustRun(t, cl, countSQL("SFO", from, to)))
	if want := int64(len(expected(e.sample, "SFO", from, to))); got != want {
		t.Fatalf("count %d, want %d", got, want)
	}
	stmts := log.take()
	if len(stmts) != 4 {
		t.Fatalf("%d statements for 4 hot buckets:\n%s", len(stmts), strings.Join(stmts, "\n---\n"))
	}
	for _, s := range stmts {
		if !countCall.MatchString(s) || readsValue.MatchString(s) {
			t.Fatalf("statement is not a key-only count:\n%s", s)
		}
	}
	// The scan path, for contrast, reads value.
	mustRun(t, cl, "SELECT value FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-04-01T00:00:00Z' AND timestamp < '2001-04-02T00:00:00Z'")
	if stmts := log.take(); len(stmts) == 0 || !readsValue.MatchString(stmts[0]) {
		t.Fatalf("record read statements: %v", stmts)
	}
}
