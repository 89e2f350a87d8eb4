package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/jackc/pgx/v5"

	"github.com/flightsrv/flightsrv/internal/load"
	"github.com/flightsrv/flightsrv/internal/testsupport/pgtest"
	"github.com/flightsrv/flightsrv/internal/testsupport/testproc"
	"github.com/flightsrv/flightsrv/routing"
)

// hotQuery is one of BenchmarkAnalyticalHot's queries: its name, flightsrv's SQL and
// PostgreSQL's direct SQL over the relation R.
type hotQuery struct{ name, sql, direct string }

// hotQueries are issue 19's aggregate queries with every bucket hot, each beside the same
// aggregate PostgreSQL computes directly over the records table (R: the table's rows of
// January–June, origin the decoded partition key, doc the value as jsonb, as the issue spells
// it: convert_from(value, 'UTF8')::jsonb ->> 'delay').
var hotQueries = []hotQuery{
	{"count(*)", analyticalQueries[0].sql, "SELECT count(*) FROM R"},
	{"origin, count(*) GROUP BY 1", analyticalQueries[1].sql, "SELECT origin, count(*) FROM R GROUP BY 1"},
	{"count(*) WHERE delay > 60", analyticalQueries[2].sql, "SELECT count(*) FROM R WHERE (doc->>'delay')::int > 60"},
	{"origin, count(*), avg(delay) GROUP BY 1", analyticalQueries[3].sql, "SELECT origin, count(*), avg((doc->>'delay')::int) FROM R GROUP BY 1"},
	{"day, count(*), sum(distance) GROUP BY 1", analyticalQueries[4].sql, "SELECT date_trunc('day', event_time, 'UTC'), count(*), sum((doc->>'distance')::int) FROM R GROUP BY 1"},
	{"destination, count(*) WHERE delay > 60 GROUP BY 1", analyticalQueries[5].sql, "SELECT doc->>'destination', count(*) FROM R WHERE (doc->>'delay')::int > 60 GROUP BY 1"},
	{"origin, destination, count(*) GROUP BY 1, 2", analyticalQueries[6].sql, "SELECT origin, doc->>'destination', count(*) FROM R GROUP BY 1, 2"},
}

// BenchmarkAnalyticalHot measures issue 19's aggregate queries with every bucket hot in
// PostgreSQL: the committed 300,000-row sample (or the whole file with
// FLIGHTSRV_ANALYTICAL_FULL=1) loaded into the PostgreSQL store (month buckets, nothing
// archived), served by `flightsrv serve --analytical` with pushdown on (each hot bucket's
// filter and partial aggregate run as its statement: scan/hotagg.go) and off (every bucket's
// rows shipped), asked through arrow-go's Flight SQL client; side by side, in the same rounds,
// PostgreSQL computing the same aggregate directly over the records table (one statement,
// its default parallel workers). Every answer's size (a scalar's value, else its row count)
// must equal PostgreSQL's. It prints the medians and the ratio of pushdown on to PostgreSQL
// (issue 19's target: at most 1.2×), and the mean CPU time a query (the serving process's and
// every PostgreSQL process's, parallel workers included: postgresCPU), which load moves less
// than wall time. With FLIGHTSRV_ANALYTICAL_BASELINE naming another flightsrv binary (an
// earlier build), that binary is served too (pushdown on) and measured in the same rounds,
// beside this tree's build; FLIGHTSRV_ANALYTICAL_QUERIES selects queries by name, as for
// BenchmarkAnalytical.
func BenchmarkAnalyticalHot(b *testing.B) {
	ctx := context.Background()
	src := filepath.Join(repoRoot(), "testdata", "flights-sample.parquet")
	if os.Getenv(EnvAnalyticalFull) == "1" {
		src = flightsPath()
	}
	rounds := 3
	if s := os.Getenv(EnvAnalyticalRounds); s != "" {
		if _, err := fmt.Sscan(s, &rounds); err != nil || rounds < 1 {
			b.Fatalf("%s=%q: want a positive number", EnvAnalyticalRounds, s)
		}
	}
	queries := selectQueries(b, hotQueries, func(q hotQuery) string { return q.name })
	pg := pgtest.Start(b)
	store, url := pg.NewStore(b)
	tbl, err := routing.NewDurableTable(flightsTable, store, nil, routing.Options{Clock: func() time.Time { return asOf }})
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	stats, err := load.File(ctx, tbl, src, load.Mapping{Partition: "origin", Time: "date", Value: []string{"delay", "distance", "destination"}})
	if err != nil {
		b.Fatalf("load: %v", err)
	}
	b.Logf("loaded %d flights into PostgreSQL in %v", stats.Appended, time.Since(start).Round(time.Second))
	if err := vacuumAnalyze(ctx, store.Pool()); err != nil {
		b.Fatal(err)
	}
	var pgVersion string
	if err := store.Pool().QueryRow(ctx, "SHOW server_version").Scan(&pgVersion); err != nil {
		b.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { conn.Close(ctx) })
	rel := fmt.Sprintf(`(SELECT convert_from(partition_key, 'UTF8') AS origin, event_time, convert_from(value, 'UTF8')::jsonb AS doc
		FROM pulpitum_v4_records WHERE table_id = '%s' AND event_time >= TIMESTAMPTZ '2001-01-01 00:00:00+00' AND event_time < TIMESTAMPTZ '2001-07-01 00:00:00+00') AS R`, flightsTable.TableID)

	bins := testproc.Build(b, b.TempDir(), testproc.Flightsrv)
	serve := func(bin string, pushdown bool) (*flightsql.Client, *testproc.Process) {
		proc, addr := testproc.StartReady(b, "flightsrv serve", flightsrvReady, bin, "serve",
			"--store", url, "--analytical", fmt.Sprintf("--pushdown=%t", pushdown),
			"--table", fmt.Sprintf("name=%s,id=%s,partition=%s,strategy=month,window=%d", flightsTable.Name, flightsTable.TableID, flightsTable.PartitionColumn, flightsTable.WritableBuckets),
			"--listen", "127.0.0.1:0", "--no-auth")
		b.Cleanup(proc.Stop)
		return (&scanSuite{}).client(b, addr), proc
	}
	on, onProc := serve(bins[0], true)
	off, _ := serve(bins[0], false)
	var (
		base     *flightsql.Client
		baseProc *testproc.Process
	)
	if bin := os.Getenv(EnvAnalyticalBaseline); bin != "" {
		base, baseProc = serve(bin, true)
	}
	// CPU time of a run: the serving process's and PostgreSQL's (every backend and parallel
	// worker, exited ones included: postgresCPU), which load moves less than wall time.
	pgCPU := postgresCPU(b, pg)
	cpuOf := func(proc *testproc.Process) time.Duration {
		if proc == nil {
			return pgCPU()
		}
		return procCPU(b, proc.Pid()) + pgCPU()
	}
	type figures struct {
		on, off, pg, base     []time.Duration
		cpuOn, cpuPG, cpuBase time.Duration
	}
	figs := make([]figures, len(queries))
	for qi, q := range queries {
		f := &figs[qi]
		direct := strings.Replace(q.direct, "FROM R", "FROM "+rel, 1)
		for round := -1; round < rounds; round++ {
			c0, t0 := cpuOf(onProc), time.Now()
			nOn, err := analyticalRun(ctx, on, q.sql)
			if err != nil {
				b.Fatalf("pushdown on: %s: %v", q.name, err)
			}
			dOn, cOn := time.Since(t0), cpuOf(onProc)-c0
			t0 = time.Now()
			nOff, err := analyticalRun(ctx, off, q.sql)
			if err != nil {
				b.Fatalf("pushdown off: %s: %v", q.name, err)
			}
			dOff := time.Since(t0)
			var dBase, cBase time.Duration
			if base != nil {
				c0, t0 = cpuOf(baseProc), time.Now()
				nBase, err := analyticalRun(ctx, base, q.sql)
				if err != nil {
					b.Fatalf("baseline: %s: %v", q.name, err)
				}
				dBase, cBase = time.Since(t0), cpuOf(baseProc)-c0
				if nBase != nOn {
					b.Fatalf("%s: baseline answers %d, this build %d", q.name, nBase, nOn)
				}
			}
			c0, t0 = cpuOf(nil), time.Now()
			nPG, err := pgAnswer(ctx, conn, direct)
			if err != nil {
				b.Fatalf("PostgreSQL: %s: %v", q.name, err)
			}
			dPG, cPG := time.Since(t0), cpuOf(nil)-c0
			if nOn != nPG || nOff != nPG {
				b.Fatalf("%s: flightsrv answers %d (pushdown on) and %d (off), PostgreSQL %d", q.name, nOn, nOff, nPG)
			}
			if round >= 0 {
				f.on, f.off, f.pg = append(f.on, dOn), append(f.off, dOff), append(f.pg, dPG)
				f.cpuOn, f.cpuPG, f.cpuBase = f.cpuOn+cOn, f.cpuPG+cPG, f.cpuBase+cBase
				if base != nil {
					f.base = append(f.base, dBase)
				}
			}
		}
	}
	out := io.Writer(os.Stdout)
	fmt.Fprintf(out, "\n== issue 19's queries with every bucket hot in PostgreSQL %s (%d flights of %s, month buckets, --analytical), medians of %d rounds; CPU: means a query, flightsrv's and PostgreSQL's ==\n",
		pgVersion, stats.Appended, filepath.Base(src), rounds)
	head := fmt.Sprintf("%-50s %14s %14s %14s %10s %10s %10s", "query", "pushdown on", "pushdown off", "PostgreSQL", "on÷PG", "CPU on", "CPU PG")
	if base != nil {
		head += fmt.Sprintf(" %14s %10s %10s", "baseline on", "on÷base", "CPU base")
	}
	fmt.Fprintln(out, head)
	met := 0
	perQuery := func(d time.Duration) time.Duration { return (d / time.Duration(rounds)).Round(100 * time.Microsecond) }
	for qi, q := range queries {
		f := figs[qi]
		ratio := float64(median(f.on)) / float64(median(f.pg))
		if ratio <= 1.2 {
			met++
		}
		line := fmt.Sprintf("%-50s %14v %14v %14v %9.2f× %10v %10v", q.name, median(f.on).Round(100*time.Microsecond),
			median(f.off).Round(100*time.Microsecond), median(f.pg).Round(100*time.Microsecond), ratio, perQuery(f.cpuOn), perQuery(f.cpuPG))
		if base != nil {
			line += fmt.Sprintf(" %14v %9.2f× %10v", median(f.base).Round(100*time.Microsecond), float64(median(f.on))/float64(median(f.base)), perQuery(f.cpuBase))
		}
		fmt.Fprintln(out, line)
	}
	fmt.Fprintf(out, "target (issue 19): every bucket hot, within 1.2× of PostgreSQL computing the same aggregate directly: %d of %d met\n", met, len(queries))
}

// pgAnswer runs sql on PostgreSQL and returns its answer's size as analyticalRun does: the
// value of a one-row, one-column integer answer, else its row count.
func pgAnswer(ctx context.Context, conn *pgx.Conn, sql string) (int64, error) {
	rows, err := conn.Query(ctx, sql)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	var n, scalar int64
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			return 0, err
		}
		if n == 0 && len(vals) == 1 {
			if v, ok := vals[0].(int64); ok {
				scalar = v
			}
		}
		n++
	}
	if err := rows.Err(); err != nil {
		return 0, err
	}
	if n == 1 && len(rows.FieldDescriptions()) == 1 {
		return scalar, nil
	}
	return n, nil
}
