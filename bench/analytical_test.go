package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"gocloud.dev/blob"

	"github.com/flightsrv/flightsrv/internal/load"
	"github.com/flightsrv/flightsrv/internal/testsupport/testproc"
)

// Environment of BenchmarkAnalytical.
const (
	// EnvAnalyticalFull set to 1 runs it over the whole flights file (FLIGHTSRV_FLIGHTS_PARQUET,
	// 3M rows) instead of the committed 300,000-row sample.
	EnvAnalyticalFull = "FLIGHTSRV_ANALYTICAL_FULL"
	// EnvAnalyticalBaseline names another flightsrv binary (an earlier build) measured side by
	// side with this tree's (here and in BenchmarkAnalyticalHot).
	EnvAnalyticalBaseline = "FLIGHTSRV_ANALYTICAL_BASELINE"
	// EnvAnalyticalRounds sets the rounds (default 3, after one untimed).
	EnvAnalyticalRounds = "FLIGHTSRV_ANALYTICAL_ROUNDS"
	// EnvAnalyticalQueries, a regular expression, runs only the queries whose names (the
	// table's first column) it matches.
	EnvAnalyticalQueries = "FLIGHTSRV_ANALYTICAL_QUERIES"
)

// analyticalRange is January–June 2001, every partition (the analytical mode).
const analyticalRange = `timestamp >= TIMESTAMPTZ '2001-01-01T00:00:00Z' AND timestamp < TIMESTAMPTZ '2001-07-01T00:00:00Z'`

// analyticalQuery is one query of issue 19's table in three spellings: flightsrv's SQL, DuckDB's
// over the archive's payload files (the same JSON-in-Parquet: P is the payload relation, with
// origin decoded from the payload's key and doc the value as text) and DuckDB's over the
// source Parquet's native columns (S; "" when the query has no such form).
type analyticalQuery struct {
	name, sql, payload, native string
}

var analyticalQueries = []analyticalQuery{
	{"count(*)",
		"SELECT count(*) FROM flights WHERE " + analyticalRange,
		"SELECT count(*) FROM P",
		"SELECT count(*) FROM S"},
	{"origin, count(*) GROUP BY 1",
		"SELECT origin, count(*) FROM flights WHERE " + analyticalRange + " GROUP BY 1",
		"SELECT origin, count(*) FROM P GROUP BY 1",
		"SELECT origin, count(*) FROM S GROUP BY 1"},
	{"count(*) WHERE delay > 60",
		"SELECT count(*) FROM flights WHERE " + analyticalRange + " AND (value->>'delay')::int > 60",
		"SELECT count(*) FROM P WHERE (doc->>'delay')::int > 60",
		"SELECT count(*) FROM S WHERE delay > 60"},
	{"origin, count(*), avg(delay) GROUP BY 1",
		"SELECT origin, count(*), avg((value->>'delay')::int) FROM flights WHERE " + analyticalRange + " GROUP BY 1",
		"SELECT origin, count(*), avg((doc->>'delay')::int) FROM P GROUP BY 1",
		"SELECT origin, count(*), avg(delay) FROM S GROUP BY 1"},
	{"day, count(*), sum(distance) GROUP BY 1",
		"SELECT date_trunc('day', timestamp), count(*), sum((value->>'distance')::int) FROM flights WHERE " + analyticalRange + " GROUP BY 1",
		"SELECT date_trunc('day', event_time), count(*), sum((doc->>'distance')::int) FROM P GROUP BY 1",
		"SELECT date_trunc('day', date), count(*), sum(distance) FROM S GROUP BY 1"},
	{"destination, count(*) WHERE delay > 60 GROUP BY 1",
		"SELECT value->>'destination', count(*) FROM flights WHERE " + analyticalRange + " AND (value->>'delay')::int > 60 GROUP BY 1",
		"SELECT doc->>'destination', count(*) FROM P WHERE (doc->>'delay')::int > 60 GROUP BY 1",
		"SELECT destination, count(*) FROM S WHERE delay > 60 GROUP BY 1"},
	{"origin, destination, count(*) GROUP BY 1, 2",
		"SELECT origin, value->>'destination', count(*) FROM flights WHERE " + analyticalRange + " GROUP BY 1, 2",
		"SELECT origin, doc->>'destination', count(*) FROM P GROUP BY 1, 2",
		"SELECT origin, destination, count(*) FROM S GROUP BY 1, 2"},
	{"top 10 by delay",
		"SELECT origin, timestamp, (value->>'delay')::int FROM flights WHERE " + analyticalRange + " ORDER BY 3 DESC NULLS LAST LIMIT 10",
		"SELECT origin, event_time, (doc->>'delay')::int FROM P ORDER BY 3 DESC NULLS LAST LIMIT 10",
		""},
	{"count(DISTINCT destination)",
		"SELECT count(DISTINCT value->>'destination') FROM flights WHERE " + analyticalRange,
		"SELECT count(DISTINCT doc->>'destination') FROM P",
		"SELECT count(DISTINCT destination) FROM S"},
	// numeric (issue 18): each origin's distances scaled by an exact decimal factor and summed
	// in numeric (decimal128 per row, the exact 128-bit total), rounded to cents.
	{"origin, round(sum(distance::numeric(10,0) * 1.0375), 2) GROUP BY 1",
		"SELECT origin, round(sum((value->>'distance')::numeric(10,0) * 1.0375), 2) FROM flights WHERE " + analyticalRange + " GROUP BY 1",
		"SELECT origin, round(sum((doc->>'distance')::DECIMAL(10,0) * 1.0375), 2) FROM P GROUP BY 1",
		"SELECT origin, round(sum(distance::DECIMAL(10,0) * 1.0375), 2) FROM S GROUP BY 1"},
	// Joins (issue 18): every flight against its origin's average delay (a hash join whose
	// build side is one row per origin), the flights to an airport that is also a busy
	// origin (IN (SELECT …) as a semi join), and origins joined to destinations.
	{"join: delay > origin's avg",
		"SELECT count(*) FROM flights f JOIN (SELECT origin, avg((value->>'delay')::int) AS a FROM flights WHERE " + analyticalRange + " GROUP BY 1) o ON f.origin = o.origin WHERE f." + analyticalRange + " AND (f.value->>'delay')::int > o.a",
		"SELECT count(*) FROM P f JOIN (SELECT origin, avg((doc->>'delay')::int) AS a FROM P GROUP BY 1) o ON f.origin = o.origin WHERE (f.doc->>'delay')::int > o.a",
		"SELECT count(*) FROM S f JOIN (SELECT origin, avg(delay) AS a FROM S GROUP BY 1) o ON f.origin = o.origin WHERE f.delay > o.a"},
	{"semi join: IN (SELECT busy origins)",
		"SELECT count(*) FROM flights WHERE " + analyticalRange + " AND value->>'destination' IN (SELECT origin FROM flights WHERE " + analyticalRange + " GROUP BY 1 HAVING count(*) > 1000)",
		"SELECT count(*) FROM P WHERE doc->>'destination' IN (SELECT origin FROM P GROUP BY 1 HAVING count(*) > 1000)",
		"SELECT count(*) FROM S WHERE destination IN (SELECT origin FROM S GROUP BY 1 HAVING count(*) > 1000)"},
	{"join: origins to destinations",
		"SELECT count(*) FROM (SELECT origin, count(*) AS n FROM flights WHERE " + analyticalRange + " GROUP BY 1) a JOIN (SELECT value->>'destination' AS d, count(*) AS m FROM flights WHERE " + analyticalRange + " GROUP BY 1) b ON a.origin = b.d WHERE a.n > b.m",
		"SELECT count(*) FROM (SELECT origin, count(*) AS n FROM P GROUP BY 1) a JOIN (SELECT doc->>'destination' AS d, count(*) AS m FROM P GROUP BY 1) b ON a.origin = b.d WHERE a.n > b.m",
		"SELECT count(*) FROM (SELECT origin, count(*) AS n FROM S GROUP BY 1) a JOIN (SELECT destination AS d, count(*) AS m FROM S GROUP BY 1) b ON a.origin = b.d WHERE a.n > b.m"},
}

// BenchmarkAnalytical measures issue 19's queries over every partition of January–June:
// the flights (the committed 300,000-row sample, or the whole 3M-row file with
// FLIGHTSRV_ANALYTICAL_FULL=1) loaded into the SQLite store with values
// {"delay","distance","destination"}, every bucket of January–June archived to Parquet on
// file://, served by `flightsrv serve --analytical` as a child process and asked through
// arrow-go's Flight SQL client; side by side, in the same rounds, DuckDB (the Python helper,
// its default threads) over the same archive payload files (read_parquet of every payload,
// origin decoded from the payload's key, the value decoded to text and read with ->>: the
// same parsing work) and over the source Parquet's native columns. With
// FLIGHTSRV_ANALYTICAL_BASELINE=BINARY a second flightsrv (an earlier build) serves the same
// store and archive in the same rounds, cold and with its own shredded-column cache warm
// (bwarm÷native beside this build's warm÷native). The same build also serves with a shredded-column
// cache (--shred-cache in a fresh directory): the untimed first round fills it, the timed
// rounds read it warm; its medians are compared with DuckDB over the native columns (issue
// 19's target: within 3×). Every answer's row count (a scalar's value) must
// equal DuckDB's over the payloads. It prints the medians, the ratios to DuckDB over the same
// payloads (the target: at most 1×) and the servers' peak RSS (VmHWM).
func BenchmarkAnalytical(b *testing.B) {
	ctx := context.Background()
	src := filepath.Join(repoRoot(), "testdata", "flights-sample.parquet")
	if os.Getenv(EnvAnalyticalFull) == "1" {
		src = flightsPath()
	}
	if _, err := os.Stat(src); err != nil {
		b.Fatalf("flights file: %v", err)
	}
	rounds := 3
	if s := os.Getenv(EnvAnalyticalRounds); s != "" {
		if _, err := fmt.Sscan(s, &rounds); err != nil || rounds < 1 {
			b.Fatalf("%s=%q: want a positive number", EnvAnalyticalRounds, s)
		}
	}
	queries := selectQueries(b, analyticalQueries, func(q analyticalQuery) string { return q.name })
	duck, err := startDuckDB()
	if err != nil {
		b.Skipf("no DuckDB: %v", err)
	}
	b.Cleanup(duck.Close)
	dir := b.TempDir()
	if d := os.Getenv("FLIGHTSRV_ANALYTICAL_DIR"); d != "" {
		dir = d // a profiling aid: the fixture of an earlier run is reused
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
	}
	dbPath := filepath.Join(dir, "hot.db")
	_, statErr := os.Stat(dbPath)
	reuse := statErr == nil
	store, tbl := sqliteFlights(ctx, b, dbPath)
	start := time.Now()
	var stats load.Stats
	if !reuse {
		var err error
		if stats, err = load.File(ctx, tbl, src, load.Mapping{Partition: "origin", Time: "date", Value: []string{"delay", "distance", "destination"}}); err != nil {
			b.Fatalf("load: %v", err)
		}
	}
	b.Logf("loaded %d flights into SQLite in %v", stats.Appended, time.Since(start).Round(time.Second))
	archDir := filepath.Join(dir, "archive")
	bucket, err := blob.OpenBucket(ctx, "file://"+filepath.ToSlash(archDir)+"?create_dir=true")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { bucket.Close() })
	archived := archiveAll(ctx, b, store, bucket)
	payloadGlob := sqlString(filepath.Join(archDir, "archives", "**", "records-*.parquet"))
	// P: the payloads' rows of January–June, origin decoded from the hex key segment after
	// the table's.
	pRel := fmt.Sprintf(`(SELECT event_time, decode(unhex(regexp_extract(filename, '/archives/[0-9a-f]+/([0-9a-f]+)/', 1))) AS origin, decode(value) AS doc
		FROM read_parquet(%s, filename = true) WHERE event_time >= TIMESTAMPTZ '2001-01-01 00:00:00+00' AND event_time < TIMESTAMPTZ '2001-07-01 00:00:00+00')`, payloadGlob)
	sRel := fmt.Sprintf(`(SELECT * FROM read_parquet(%s) WHERE date >= TIMESTAMPTZ '2001-01-01 00:00:00+00' AND date < TIMESTAMPTZ '2001-07-01 00:00:00+00')`, sqlString(src))

	bins := testproc.Build(b, b.TempDir(), testproc.Flightsrv)
	bins[0] = installed(b, bins[0])
	type server struct {
		name string
		proc *testproc.Process
		cl   *flightsql.Client
	}
	serve := func(name, bin string, extra ...string) server {
		args := append([]string{"serve",
			"--store", "sqlite://" + dbPath, "--archive", "file://" + archDir, "--analytical",
			"--table", fmt.Sprintf("name=%s,id=%s,partition=%s,strategy=month,window=%d", flightsTable.Name, flightsTable.TableID, flightsTable.PartitionColumn, flightsTable.WritableBuckets),
			"--listen", "127.0.0.1:0", "--no-auth"}, extra...)
		proc, addr := testproc.StartReady(b, "flightsrv serve", flightsrvReady, bin, args...)
		b.Cleanup(proc.Stop)
		return server{name: name, proc: proc, cl: (&scanSuite{}).client(b, addr)}
	}
	// The same build with a shredded-column cache: the untimed first round fills it (cold),
	// the timed rounds read it (warm).
	servers := []server{serve("flightsrv", bins[0]), serve("shred warm", bins[0], "--shred-cache", filepath.Join(b.TempDir(), "shred"))}
	const shredAt = 1
	if base := os.Getenv(EnvAnalyticalBaseline); base != "" {
		servers = append(servers, serve("baseline", base), serve("base warm", base, "--shred-cache", filepath.Join(b.TempDir(), "shred-base")))
	}
	type figures struct {
		lat                [][]time.Duration // per server
		cpu                [][]time.Duration // per server: its process's CPU time during the query
		payload, native    []time.Duration
		answer, duckAnswer int64
	}
	figs := make([]figures, len(queries))
	for qi, q := range queries {
		f := &figs[qi]
		f.lat = make([][]time.Duration, len(servers))
		f.cpu = make([][]time.Duration, len(servers))
		for round := -1; round < rounds; round++ {
			for si, s := range servers {
				c0, err := s.proc.CPU()
				if err != nil {
					b.Fatal(err)
				}
				t0 := time.Now()
				n, err := analyticalRun(ctx, s.cl, q.sql)
				if err != nil {
					b.Fatalf("%s: %s: %v", s.name, q.name, err)
				}
				if round >= 0 {
					f.lat[si] = append(f.lat[si], time.Since(t0))
					c1, err := s.proc.CPU()
					if err != nil {
						b.Fatal(err)
					}
					f.cpu[si] = append(f.cpu[si], c1-c0)
				}
				f.answer = n
			}
			d, err := duckAnalytical(duck, strings.ReplaceAll(q.payload, "FROM P", "FROM "+pRel))
			if err != nil {
				b.Fatalf("duckdb payloads: %s: %v", q.name, err)
			}
			f.duckAnswer = d.Count
			if f.answer != d.Count {
				b.Fatalf("%s: flightsrv answers %d, DuckDB over the payloads %d", q.name, f.answer, d.Count)
			}
			if round >= 0 {
				f.payload = append(f.payload, time.Duration(d.NS))
			}
			if q.native != "" {
				d, err := duckAnalytical(duck, strings.ReplaceAll(q.native, "FROM S", "FROM "+sRel))
				if err != nil {
					b.Fatalf("duckdb native: %s: %v", q.name, err)
				}
				if round >= 0 {
					f.native = append(f.native, time.Duration(d.NS))
				}
			}
		}
	}
	var rss []string
	for _, s := range servers {
		m, err := s.proc.Memory()
		if err != nil {
			b.Fatal(err)
		}
		rss = append(rss, fmt.Sprintf("%s %.0f MiB (at the end: %.0f MiB anonymous, %.0f MiB file pages)", s.name, float64(m.HWM)/(1<<20), float64(m.Anon)/(1<<20), float64(m.File)/(1<<20)))
	}
	out := io.Writer(os.Stdout)
	flights := "the flights" // count(*)'s answer, when FLIGHTSRV_ANALYTICAL_QUERIES keeps it
	for qi, q := range queries {
		if q.name == "count(*)" {
			flights = fmt.Sprintf("%d flights", figs[qi].answer)
		}
	}
	fmt.Fprintf(out, "\n== issue 19's queries over every partition of January–June (%s of %s, %d buckets archived, --analytical), medians of %d rounds; DuckDB %s, %s threads ==\n",
		flights, filepath.Base(src), archived, rounds, duck.version, duck.threads)
	fmt.Fprintf(out, "%-46s", "query")
	for _, s := range servers {
		fmt.Fprintf(out, " %12s", s.name)
	}
	fmt.Fprintf(out, " %14s %14s %10s %12s", "DuckDB payload", "DuckDB native", "÷payload", "warm÷native")
	if len(servers) > 2 {
		fmt.Fprintf(out, " %10s %12s", "base÷pay", "bwarm÷native")
	}
	fmt.Fprintln(out)
	met, warmMet, warmAsked := 0, 0, 0
	for qi, q := range queries {
		f := figs[qi]
		fmt.Fprintf(out, "%-46s", q.name)
		for si := range servers {
			fmt.Fprintf(out, " %12v", median(f.lat[si]).Round(100*time.Microsecond))
		}
		native := "—"
		if len(f.native) > 0 {
			native = median(f.native).Round(100 * time.Microsecond).String()
		}
		ratio := float64(median(f.lat[0])) / float64(median(f.payload))
		if ratio <= 1 {
			met++
		}
		fmt.Fprintf(out, " %14v %14s %9.2f×", median(f.payload).Round(100*time.Microsecond), native, ratio)
		warm := "—"
		if len(f.native) > 0 {
			r := float64(median(f.lat[shredAt])) / float64(median(f.native))
			warm = fmt.Sprintf("%.2f×", r)
			warmAsked++
			if r <= 3 {
				warmMet++
			}
		}
		fmt.Fprintf(out, " %12s", warm)
		if len(servers) > 2 {
			bwarm := "—"
			if len(f.native) > 0 {
				bwarm = fmt.Sprintf("%.2f×", float64(median(f.lat[3]))/float64(median(f.native)))
			}
			fmt.Fprintf(out, " %9.2f× %12s", float64(median(f.lat[2]))/float64(median(f.payload)), bwarm)
		}
		fmt.Fprintln(out)
	}
	// Server CPU: the process's CPU time during each query (testproc.ReadCPU), its median, and
	// the cores that median kept busy over the median wall time.
	fmt.Fprintf(out, "server CPU per query, median (cores busy: CPU ÷ wall)\n%-46s", "query")
	for _, s := range servers {
		fmt.Fprintf(out, " %20s", s.name)
	}
	fmt.Fprintln(out)
	for qi, q := range queries {
		f := figs[qi]
		fmt.Fprintf(out, "%-46s", q.name)
		for si := range servers {
			c := median(f.cpu[si])
			fmt.Fprintf(out, " %12v (%.2f)", c.Round(time.Millisecond), float64(c)/float64(median(f.lat[si])))
		}
		fmt.Fprintln(out)
	}
	fmt.Fprintf(out, "targets (issue 19): every query no slower than DuckDB over the same payloads: %d of %d met; with the shredded-column cache warm, within 3× DuckDB over the native columns: %d of %d met; peak RSS: %s (target < 100 MiB)\n",
		met, len(queries), warmMet, warmAsked, strings.Join(rss, ", "))
}

// installed copies the executable bin into a new directory of tb, as an installation does
// (install, cp, a package or an image layer write the file), in 32 KiB writes, and returns the
// copy's path. The peak RSS measured depends on it: Linux 6.18 keeps a file in page-cache
// folios as large as the writes that filled them and maps a folio whole into a process that
// touches any page of it. Go's linker writes its output through a shared mapping (2 MiB
// folios, mapped as huge pages: FilePmdMapped 48–57 MiB of an idle `serve`); an idle `serve`
// measured 64–68 MiB of file pages from the linker's file, 65 MiB from a copy in 1 MiB
// writes, 37–38 MiB from a copy in 32 KiB or 4 KiB writes or by cp (bench/doc.go).
func installed(tb testing.TB, bin string) string {
	tb.Helper()
	src, err := os.Open(bin)
	if err != nil {
		tb.Fatal(err)
	}
	defer src.Close()
	dst := filepath.Join(tb.TempDir(), filepath.Base(bin))
	f, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o755)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := io.Copy(struct{ io.Writer }{f}, src); err != nil { // plain writes, no copy_file_range
		f.Close()
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
	return dst
}

// analyticalRun runs sql and returns its answer's size: the value of a one-row, one-column
// integer answer, else its row count.
func analyticalRun(ctx context.Context, cl *flightsql.Client, sql string) (int64, error) {
	info, err := cl.Execute(ctx, sql)
	if err != nil {
		return 0, err
	}
	var rows, scalar int64
	cols := 0
	for _, ep := range info.Endpoint {
		rdr, err := cl.DoGet(ctx, ep.Ticket)
		if err != nil {
			return 0, err
		}
		for rdr.Next() {
			rec := rdr.RecordBatch()
			cols = int(rec.NumCols())
			if rows == 0 && rec.NumRows() > 0 && cols == 1 {
				fmt.Sscan(rec.Column(0).ValueStr(0), &scalar)
			}
			rows += rec.NumRows()
		}
		err = rdr.Err()
		rdr.Release()
		if err != nil {
			return 0, err
		}
	}
	if rows == 1 && cols == 1 {
		return scalar, nil
	}
	return rows, nil
}

// duckAnalytical runs sql in the DuckDB helper: a one-column query answers its first value,
// any other its row count (fetched as Arrow).
func duckAnalytical(d *duckDB, sql string) (duckAnswer, error) {
	if strings.HasPrefix(sql, "SELECT count(") && (!strings.Contains(sql, "GROUP BY") || strings.Contains(sql, "JOIN") || strings.Contains(sql, "IN (SELECT")) {
		return d.Query(sql)
	}
	return d.QueryArrow(sql)
}

// selectQueries returns the queries of all whose names (name) match EnvAnalyticalQueries, a
// regular expression (all of them when it is unset); a bad expression or one matching nothing
// fails b.
func selectQueries[Q any](b *testing.B, all []Q, name func(Q) string) []Q {
	b.Helper()
	s := os.Getenv(EnvAnalyticalQueries)
	if s == "" {
		return all
	}
	re, err := regexp.Compile(s)
	if err != nil {
		b.Fatalf("%s: %v", EnvAnalyticalQueries, err)
	}
	out := slices.DeleteFunc(slices.Clone(all), func(q Q) bool { return !re.MatchString(name(q)) })
	if len(out) == 0 {
		b.Fatalf("%s=%q matches no query", EnvAnalyticalQueries, s)
	}
	return out
}
