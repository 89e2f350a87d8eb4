package bench

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/jackc/pgx/v5"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/flightsrv/flightsrv/internal/load"
	"github.com/flightsrv/flightsrv/internal/testsupport/pgtest"
	"github.com/flightsrv/flightsrv/internal/testsupport/testproc"
	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/routing/cockroach"
	"github.com/flightsrv/flightsrv/routing/sqlite"
)

// EnvIngestBaseline names another flightsrv binary (an earlier build, say) whose ingest into
// PostgreSQL BenchmarkIngest measures beside this tree's in the same run: the variants
// store=postgres/via=adbc-baseline, via=flightsql-baseline and via=load-baseline.
const EnvIngestBaseline = "FLIGHTSRV_INGEST_BASELINE"

// EnvIngestRows overrides how many rows of the flights file BenchmarkIngest writes (default
// 300,000; the file holds 3,000,000; `make bench-ingest-3m` writes them all).
const EnvIngestRows = "FLIGHTSRV_INGEST_ROWS"

// ingestTable is the table BenchmarkIngest writes: the flights by origin in month buckets,
// with a writable window reaching back past 2001 at today's clock (the server's application
// clock is the real one).
var ingestTable = routing.TableDef{Name: "flights", TableID: "flightsrv.bench.ingest", PartitionColumn: "origin",
	Strategy: routing.CalendarMonthUTC, WritableBuckets: 400}

// ingestResult is one variant's figures: rows written, the best wall time, the peak RSS of
// the flightsrv process (0 when the variant has none), and the CPU time flightsrv and
// PostgreSQL's processes used in the best run (0 when not measured).
type ingestResult struct {
	rows   int64
	best   time.Duration
	hwm    int64
	srvCPU time.Duration
	pgCPU  time.Duration
}

// ingestCPU is the CPU time one run cost flightsrv's process and PostgreSQL's processes.
type ingestCPU struct{ srv, pg time.Duration }

// adbcIngestAnswer is testdata/adbcingest.py's answer: the rows the server reported stored and
// the time of adbc_ingest measured in Python, or an error.
type adbcIngestAnswer struct {
	Rows  int64  `json:"rows"`
	NS    int64  `json:"ns"`
	Error string `json:"error"`
}

// BenchmarkIngest measures writes of the first rows of the flights file (EnvIngestRows) in the
// wide shape (origin, timestamp, id, delay, distance, destination; the id is the row number as
// `flightsrv load` makes it), in batches of 65,536 rows, all in one run so the rates compare:
//
//   - store=postgres/via=adbc and store=sqlite/via=adbc: ADBC's Flight SQL driver from Python
//     (testdata/adbcingest.py, `adbc_ingest` mode append: Flight SQL bulk ingest) into
//     `flightsrv serve` as a child process over a new database (PostgreSQL) or file (SQLite):
//     the write fence and all; the server's peak RSS (VmHWM) is reported. The rows
//     come from an Arrow IPC file written before timing; the time is measured in Python around
//     adbc_ingest. Skipped (with a note) without .venv's ADBC driver;
//   - store=postgres/via=flightsql and store=sqlite/via=flightsql: the same through arrow-go's
//     Flight SQL client (ExecuteIngest) in the benchmark's process;
//   - store=postgres/via=load and store=sqlite/via=load: the `flightsrv load` command as a child
//     process over a Parquet file of the same rows (written before timing), the whole command
//     timed (start-up, reading, conversion, the write path) and its peak RSS (VmHWM, read
//     while it runs) reported;
//   - store=postgres/via=copy: pgx CopyFrom of the same records (as the server builds them,
//     converted before timing) into a plain table of the same four columns without any index:
//     PostgreSQL's bulk path, the yardstick;
//   - store=postgres/via=copy-records: pgx CopyFrom of the same records straight into
//     pulpitum_v4_records (its primary key and its foreign key to the bucket metadata, whose
//     rows are inserted before timing), in the file's order, without the fence: what COPY
//     costs under Pulpitum's schema;
//   - store=postgres/via=copy-pk and via=copy-pk-sorted: pgx CopyFrom of the same records into
//     a table identical to pulpitum_v4_records but for its foreign key (CREATE TABLE … LIKE …
//     INCLUDING ALL), in the file's order and sorted into the primary key's order before
//     timing: the primary key's and the heap's cost alone, the best COPY under the schema
//     (the write path omits the foreign key's check under the fence's locks where it may).
//
// Every run is checked: the rows stored, counted in the store afterwards, must equal the rows
// sent. A summary table prints rows/s side by side with the ratios to three COPYs, and the CPU
// time per row of the flightsrv process and of PostgreSQL's processes in each best run.
func BenchmarkIngest(b *testing.B) {
	ctx := context.Background()
	n := int64(300_000)
	if s := os.Getenv(EnvIngestRows); s != "" {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil || v <= 0 {
			b.Fatalf("%s=%q is not a positive row count", EnvIngestRows, s)
		}
		n = v
	}
	schema, batches := ingestBatches(b, flightsPath(), n)
	defer func() {
		for _, rec := range batches {
			rec.Release()
		}
	}()
	dir := b.TempDir()
	ipcPath, pqPath := writeIngestFiles(b, dir, schema, batches)
	bin := testproc.BuildFlightsrv(b)
	pg := pgtest.Start(b)
	tableFlag := fmt.Sprintf("name=%s,id=%s,partition=%s,strategy=month,window=%d", ingestTable.Name, ingestTable.TableID, ingestTable.PartitionColumn, ingestTable.WritableBuckets)
	results := map[string]*ingestResult{}
	record := func(name string, rows int64, d time.Duration, hwm int64, cpu ingestCPU) {
		r := results[name]
		if r == nil || d < r.best {
			if r == nil {
				r = &ingestResult{rows: rows}
				results[name] = r
			}
			r.best, r.srvCPU, r.pgCPU = d, cpu.srv, cpu.pg
		}
		r.hwm = max(r.hwm, hwm)
	}
	report := func(b *testing.B, name string) {
		r := results[name]
		b.ReportMetric(float64(n)/r.best.Seconds(), "rows/s")
		if r.hwm > 0 {
			b.ReportMetric(float64(r.hwm)/(1<<20), "peak-RSS-MiB")
		}
	}
	viaFlightSQL := func(b *testing.B, addr string) time.Duration {
		cl, err := flightsql.NewClient(addr, nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			b.Fatal(err)
		}
		defer cl.Close()
		rdr, err := array.NewRecordReader(schema, batches)
		if err != nil {
			b.Fatal(err)
		}
		defer rdr.Release()
		start := time.Now()
		got, err := cl.ExecuteIngest(ctx, rdr, &flightsql.ExecuteIngestOpts{Table: ingestTable.Name, TableDefinitionOptions: &flightsql.TableDefinitionOptions{
			IfNotExist: flightsql.TableDefinitionOptionsTableNotExistOptionFail, IfExists: flightsql.TableDefinitionOptionsTableExistsOptionAppend}})
		d := time.Since(start)
		if err != nil || got != n {
			b.Fatalf("ingest = %d, %v; want %d", got, err, n)
		}
		return d
	}
	adbc, err := startADBCScript("ADBC ingest helper", "adbcingest.py")
	if err != nil {
		b.Logf("ADBC ingest variants skipped: %v", err)
	} else {
		defer adbc.Close()
	}
	viaADBC := func(b *testing.B, addr string) time.Duration {
		var a adbcIngestAnswer
		if err := adbc.ask(map[string]string{"uri": "grpc://" + addr, "table": ingestTable.Name, "ipc": ipcPath}, &a); err != nil || a.Error != "" || a.Rows != n {
			b.Fatalf("ADBC ingest = %d rows, %v %s; want %d", a.Rows, err, a.Error, n)
		}
		return time.Duration(a.NS)
	}
	// stores are the hot stores the Flight SQL and load variants write: each run gets a new
	// database or file (new) and counts what it stored (count).
	type hotStore struct {
		name  string
		new   func(b *testing.B) string
		count func(b *testing.B, url string) int64
	}
	stores := []hotStore{
		{"postgres", func(b *testing.B) string { _, url := pg.NewStore(b); return url }, countPostgres},
		{"sqlite", func(b *testing.B) string { return newSQLiteStore(b, bin) }, countSQLite},
	}
	// pgCPU is the CPU PostgreSQL's processes have used so far (the cluster serves this
	// benchmark alone); 0 when they cannot be found on this machine.
	pgCPU := postgresCPU(b, pg)
	// serveRun times send into `flightsrv serve --store` over a new store (started and
	// stopped untimed) and records the time and the server's peak RSS.
	serveRun := func(b *testing.B, bin string, st hotStore, key string, send func(b *testing.B, addr string) time.Duration) {
		for b.Loop() {
			b.StopTimer()
			url := st.new(b)
			proc, addr := testproc.StartReady(b, "flightsrv serve", flightsrvReady, bin, "serve", "--store", url, "--table", tableFlag, "--listen", "127.0.0.1:0", "--no-auth")
			s0, p0 := procCPU(b, proc.Pid()), pgCPU()
			b.StartTimer()
			d := send(b, addr)
			b.StopTimer()
			cpu := ingestCPU{srv: procCPU(b, proc.Pid()) - s0, pg: pgCPU() - p0}
			mem, err := proc.Memory()
			if err != nil {
				b.Fatal(err)
			}
			proc.Stop()
			if stored := st.count(b, url); stored != n {
				b.Fatalf("stored %d; want %d", stored, n)
			}
			if st.name != "postgres" {
				cpu.pg = 0
			}
			record(key, n, d, mem.HWM, cpu)
			b.StartTimer()
		}
		report(b, key)
	}
	// builds are the binaries measured: this tree's, and for PostgreSQL the baseline's
	// (EnvIngestBaseline), variant by variant side by side.
	type build struct{ suffix, bin string }
	builds := []build{{"", bin}}
	if base := os.Getenv(EnvIngestBaseline); base != "" {
		builds = append(builds, build{"-baseline", base})
	}
	for _, st := range stores {
		bs := builds
		if st.name != "postgres" {
			bs = builds[:1]
		}
		if adbc != nil {
			for _, bd := range bs {
				b.Run("store="+st.name+"/via=adbc"+bd.suffix, func(b *testing.B) { serveRun(b, bd.bin, st, st.name+"/adbc"+bd.suffix, viaADBC) })
			}
		}
		for _, bd := range bs {
			b.Run("store="+st.name+"/via=flightsql"+bd.suffix, func(b *testing.B) { serveRun(b, bd.bin, st, st.name+"/flightsql"+bd.suffix, viaFlightSQL) })
		}
		for _, bd := range bs {
			bin := bd.bin
			b.Run("store="+st.name+"/via=load"+bd.suffix, func(b *testing.B) {
				key := st.name + "/load" + bd.suffix
				for b.Loop() {
					b.StopTimer()
					url := st.new(b)
					cmd := exec.Command(bin, "load", "--store", url, "--table", tableFlag, "--file", pqPath,
						"--partition", "origin", "--time", "timestamp", "--id", "id", "--value", "delay,distance,destination")
					var out bytes.Buffer
					cmd.Stdout, cmd.Stderr = &out, &out
					p0 := pgCPU()
					b.StartTimer()
					start := time.Now()
					hwm, err := runWatchingHWM(cmd)
					d := time.Since(start)
					b.StopTimer()
					cpu := ingestCPU{pg: pgCPU() - p0}
					if cmd.ProcessState != nil {
						cpu.srv = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
					}
					if st.name != "postgres" {
						cpu.pg = 0
					}
					if err != nil {
						b.Fatalf("flightsrv load: %v\n%s", err, out.Bytes())
					}
					if stored := st.count(b, url); stored != n {
						b.Fatalf("stored %d; want %d", stored, n)
					}
					record(key, n, d, hwm, cpu)
					b.StartTimer()
				}
				report(b, key)
			})
		}
	}
	// copyRun times pgx CopyFrom of the records into a new database's table, made by prepare
	// (untimed), each record given as row(r).
	copyRun := func(name, table string, cols []string, prepare func(b *testing.B, st *cockroach.Store, recs []routing.Record), row func(r *routing.Record) []any) {
		b.Run(name, func(b *testing.B) {
			recs := ingestRecords(b, schema, batches)
			for b.Loop() {
				b.StopTimer()
				st, _ := pg.NewStore(b)
				prepare(b, st, recs)
				p0 := pgCPU()
				b.StartTimer()
				start := time.Now()
				got, err := st.Pool().CopyFrom(ctx, pgx.Identifier{table}, cols,
					pgx.CopyFromSlice(len(recs), func(i int) ([]any, error) { return row(&recs[i]), nil }))
				d := time.Since(start)
				b.StopTimer()
				cpu := ingestCPU{pg: pgCPU() - p0}
				if err != nil || got != n {
					b.Fatalf("copy = %d, %v; want %d", got, err, n)
				}
				record(table, n, d, 0, cpu)
				b.StartTimer()
			}
			report(b, table)
		})
	}
	copyRun("store=postgres/via=copy", "plain", []string{"partition_key", "event_time", "sort_key", "value"},
		func(b *testing.B, st *cockroach.Store, _ []routing.Record) {
			if _, err := st.Pool().Exec(ctx, `CREATE TABLE plain (partition_key BYTEA NOT NULL, event_time TIMESTAMPTZ NOT NULL, sort_key BYTEA NOT NULL, value BYTEA NOT NULL)`); err != nil {
				b.Fatal(err)
			}
		},
		func(r *routing.Record) []any { return []any{r.PartitionKey, r.EventTime, r.SortKey, r.Value} })
	recordRow := func(r *routing.Record) []any {
		key, _, _ := ingestTable.Strategy.Bounds(r.EventTime)
		return []any{ingestTable.TableID, r.PartitionKey, key, r.EventTime, r.SortKey, r.Value}
	}
	// The buckets' metadata rows first (the records' foreign key).
	copyRun("store=postgres/via=copy-records", "pulpitum_v4_records", recordColumnNames,
		func(b *testing.B, st *cockroach.Store, recs []routing.Record) {
			seen := map[string]bool{}
			var parts [][]byte
			var keys []string
			var starts, ends []time.Time
			for i := range recs {
				bk := routing.BucketFor(ingestTable.TableID, recs[i].PartitionKey, ingestTable.Strategy, recs[i].EventTime)
				if !seen[bk.CacheKey()] {
					seen[bk.CacheKey()] = true
					parts, keys, starts, ends = append(parts, bk.PartitionKey), append(keys, bk.Key), append(starts, bk.Start), append(ends, bk.End)
				}
			}
			if _, err := st.Pool().Exec(ctx, `INSERT INTO pulpitum_v4_bucket_metadata (table_id, partition_key, bucket_key, bucket_strategy, bucket_start, bucket_end)
SELECT $1, u.p, u.k, $2, u.s, u.e FROM unnest($3::BYTEA[], $4::TEXT[], $5::TIMESTAMPTZ[], $6::TIMESTAMPTZ[]) AS u (p, k, s, e)`,
				ingestTable.TableID, ingestTable.Strategy.String(), parts, keys, starts, ends); err != nil {
				b.Fatal(err)
			}
		},
		recordRow)
	// The same records into a table identical to pulpitum_v4_records (its columns, NOT NULLs
	// and primary key: CREATE TABLE … LIKE copies no foreign key), in the file's order and
	// sorted into the primary key's order before timing: what any writer's COPY costs under the
	// schema's primary key, without the foreign key's per-row check, which the fence's locks
	// stand for in the write path.
	pkTable := func(b *testing.B, st *cockroach.Store, _ []routing.Record) {
		if _, err := st.Pool().Exec(ctx, `CREATE TABLE records_pk (LIKE pulpitum_v4_records INCLUDING ALL)`); err != nil {
			b.Fatal(err)
		}
	}
	copyRun("store=postgres/via=copy-pk", "records_pk", recordColumnNames, pkTable, recordRow)
	copyRun("store=postgres/via=copy-pk-sorted", "records_pk_sorted", recordColumnNames,
		func(b *testing.B, st *cockroach.Store, recs []routing.Record) {
			pkTable(b, st, nil)
			if _, err := st.Pool().Exec(ctx, `ALTER TABLE records_pk RENAME TO records_pk_sorted`); err != nil {
				b.Fatal(err)
			}
			// The primary key's order: table (one), partition, bucket (sorts as its time
			// does within a partition), event time, sort key.
			slices.SortStableFunc(recs, func(a, b routing.Record) int {
				return cmp.Or(bytes.Compare(a.PartitionKey, b.PartitionKey), a.EventTime.Compare(b.EventTime), bytes.Compare(a.SortKey, b.SortKey))
			})
		}, recordRow)
	printIngestSummary(os.Stdout, n, results)
}

// recordColumnNames are the columns of pulpitum_v4_records the COPY variants fill.
var recordColumnNames = []string{"table_id", "partition_key", "bucket_key", "event_time", "sort_key", "value"}

// countPostgres counts the records stored in the PostgreSQL database at url.
func countPostgres(b *testing.B, url string) int64 {
	b.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(context.Background())
	var stored int64
	if err := conn.QueryRow(context.Background(), "SELECT count(*) FROM pulpitum_v4_records").Scan(&stored); err != nil {
		b.Fatal(err)
	}
	return stored
}

// newSQLiteStore makes a new migrated SQLite store in a temporary directory of b and returns
// its sqlite:// URL.
func newSQLiteStore(b *testing.B, bin string) string {
	b.Helper()
	url := "sqlite://" + filepath.Join(b.TempDir(), "hot.db")
	if out, err := exec.Command(bin, "migrate", "--store", url).CombinedOutput(); err != nil {
		b.Fatalf("migrate: %v\n%s", err, out)
	}
	return url
}

// countSQLite counts the records of the ingest table stored in the SQLite store at url, through
// the store's own count (every bucket of 2001 of every partition).
func countSQLite(b *testing.B, url string) int64 {
	b.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, sqlite.Config{Path: strings.TrimPrefix(url, "sqlite://")})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	parts, err := st.Partitions(ctx, ingestTable.TableID, ingestTable.Strategy, routing.TimeRange{Start: time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC), End: time.Date(2003, 1, 1, 0, 0, 0, 0, time.UTC)}, 0)
	if err != nil {
		b.Fatal(err)
	}
	var stored int64
	for _, p := range parts {
		for _, bk := range routing.BucketsForRange(ingestTable.TableID, p.Key, ingestTable.Strategy, routing.TimeRange{Start: time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC), End: time.Date(2002, 1, 1, 0, 0, 0, 0, time.UTC)}) {
			_, rdr, err := st.AggregateRange(ctx, bk, routing.AggregateRequest{Range: bk.Range(), Measures: []routing.Measure{routing.CountStar}})
			if err != nil {
				b.Fatal(err)
			}
			for rdr != nil && rdr.Next() {
				stored += rdr.RecordBatch().Column(0).(*array.Int64).Value(0)
			}
			if rdr != nil {
				rdr.Release()
			}
		}
	}
	return stored
}

// procCPU is process pid's CPU time so far.
func procCPU(b *testing.B, pid int) time.Duration {
	b.Helper()
	d, err := testproc.ReadCPU(pid)
	if err != nil {
		b.Fatal(err)
	}
	return d
}

// postgresCPU returns a function giving the CPU time the PostgreSQL cluster's backends and
// background processes (the children of its postmaster, found from a backend's parent in
// /proc, those that have exited included) have used so far, or one always giving 0 when the server is not on this machine.
// The cluster must serve the benchmark alone for the difference to be its work.
func postgresCPU(b *testing.B, pg *pgtest.Server) func() time.Duration {
	b.Helper()
	zero := func() time.Duration { return 0 }
	conn, err := pgx.Connect(context.Background(), pg.NewDatabase(b))
	if err != nil {
		b.Fatal(err)
	}
	var backend int
	err = conn.QueryRow(context.Background(), "SELECT pg_backend_pid()").Scan(&backend)
	// The backend's parent is read while it lives: once the connection is closed, it may
	// have exited (every CPU figure was then missing).
	postmaster := parentPID(backend)
	conn.Close(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	if postmaster <= 1 {
		return zero
	}
	return func() time.Duration {
		// Backends that have exited (a `flightsrv load` closes its connections as it ends)
		// count in the postmaster's reaped children's time.
		sum := reapedCPU(postmaster)
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || parentPID(pid) != postmaster {
				continue
			}
			if d, err := testproc.ReadCPU(pid); err == nil {
				sum += d
			}
		}
		return sum
	}
}

// reapedCPU is the CPU time of process pid's children that have exited and been waited for
// (cutime and cstime, fields 16 and 17 of /proc/PID/stat, in 10 ms ticks), 0 when unknown.
func reapedCPU(pid int) time.Duration {
	f := statFields(pid)
	if len(f) < 15 {
		return 0
	}
	var ticks int64
	for _, s := range f[13:15] {
		n, _ := strconv.ParseInt(s, 10, 64)
		ticks += n
	}
	return time.Duration(ticks) * 10 * time.Millisecond
}

// parentPID is process pid's parent (field 4 of /proc/PID/stat), or 0 when unknown.
func parentPID(pid int) int {
	f := statFields(pid)
	if len(f) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}

// statFields is the fields of /proc/PID/stat after the command name (field 3 first), nil when
// unreadable.
func statFields(pid int) []string {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil
	}
	return strings.Fields(string(raw[bytes.LastIndexByte(raw, ')')+1:]))
}

// runWatchingHWM runs cmd and returns its peak resident set (VmHWM, bytes) as last read from
// /proc every 20 ms while it ran. The rusage maximum of a finished child is no measure here:
// Linux counts the forked benchmark process's memory before exec into it.
func runWatchingHWM(cmd *exec.Cmd) (int64, error) {
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	done := make(chan struct{})
	var hwm int64
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			if m, err := testproc.ReadMemory(cmd.Process.Pid); err == nil {
				hwm = max(hwm, m.HWM)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	err := cmd.Wait()
	close(done)
	<-watched
	return hwm, err
}

// writeIngestFiles writes batches into dir as an Arrow IPC file (what the ADBC helper sends)
// and a Parquet file of 65,536-row row groups (what `flightsrv load` reads), both of schema,
// and returns their paths.
func writeIngestFiles(b *testing.B, dir string, schema *arrow.Schema, batches []arrow.RecordBatch) (ipcPath, pqPath string) {
	b.Helper()
	ipcPath, pqPath = filepath.Join(dir, "rows.arrow"), filepath.Join(dir, "rows.parquet")
	f, err := os.Create(ipcPath)
	if err != nil {
		b.Fatal(err)
	}
	w, err := ipc.NewFileWriter(f, ipc.WithSchema(schema))
	if err != nil {
		b.Fatal(err)
	}
	writeAll(b, w, batches)
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	pf, err := os.Create(pqPath)
	if err != nil {
		b.Fatal(err)
	}
	// Row groups of 65,536 rows, as a writer of flights would make them: pqarrow's default
	// (64Mi rows) would put the whole input in one row group, which load reads column chunk
	// by column chunk.
	pw, err := pqarrow.NewFileWriter(schema, pf, parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(65536)),
		pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		b.Fatal(err)
	}
	writeAll(b, pw, batches)
	return ipcPath, pqPath
}

// writeAll writes batches with w (an Arrow IPC or Parquet file writer) and closes it.
func writeAll(b *testing.B, w interface {
	Write(arrow.RecordBatch) error
	Close() error
}, batches []arrow.RecordBatch) {
	b.Helper()
	for _, rec := range batches {
		if err := w.Write(rec); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
}

// printIngestSummary prints the variants' rows/s side by side with their ratios to COPY into
// a plain table and to COPY into pulpitum_v4_records, and the flightsrv processes' peak RSS.
func printIngestSummary(w io.Writer, n int64, results map[string]*ingestResult) {
	rate := func(key string) float64 {
		if r := results[key]; r != nil {
			return float64(n) / r.best.Seconds()
		}
		return 0
	}
	copyRate, recordsRate, pkRate := rate("plain"), rate("pulpitum_v4_records"), rate("records_pk_sorted")
	fmt.Fprintf(w, "\nBenchmarkIngest: %s rows of the flights file, wide shape, best run of each\n", group(n))
	fmt.Fprintf(w, "%-52s %10s %12s %8s %10s %10s %16s %14s %14s\n", "variant", "time", "rows/s", "× COPY", "× COPY→v4", "× COPY→PK", "flightsrv peak RSS", "flightsrv µs/row", "PostgreSQL µs/row")
	for _, v := range []struct{ key, label string }{
		{"postgres/adbc", "ADBC adbc_ingest → PostgreSQL"},
		{"postgres/adbc-baseline", "ADBC adbc_ingest → PostgreSQL (baseline)"},
		{"postgres/flightsql", "arrow-go ExecuteIngest → PostgreSQL"},
		{"postgres/flightsql-baseline", "arrow-go ExecuteIngest → PostgreSQL (baseline)"},
		{"postgres/load", "flightsrv load → PostgreSQL"},
		{"postgres/load-baseline", "flightsrv load → PostgreSQL (baseline)"},
		{"sqlite/adbc", "ADBC adbc_ingest → SQLite"},
		{"sqlite/flightsql", "arrow-go ExecuteIngest → SQLite"},
		{"sqlite/load", "flightsrv load → SQLite"},
		{"plain", "pgx COPY → plain table (no index)"},
		{"pulpitum_v4_records", "pgx COPY → pulpitum_v4_records"},
		{"records_pk", "pgx COPY → same primary key, no foreign key"},
		{"records_pk_sorted", "pgx COPY → same primary key, no foreign key, key order"},
	} {
		r := results[v.key]
		if r == nil {
			continue
		}
		rss := "-"
		if r.hwm > 0 {
			rss = mib(r.hwm)
		}
		against := func(x, base float64) string {
			if base == 0 {
				return "-" // that COPY did not run (a sub-benchmark filter)
			}
			return times(x / base)
		}
		perRow := func(d time.Duration) string {
			if d <= 0 {
				return "-"
			}
			return strconv.FormatFloat(float64(d.Nanoseconds())/1e3/float64(n), 'f', 2, 64)
		}
		fmt.Fprintf(w, "%-52s %10s %12s %8s %10s %10s %16s %14s %14s\n", v.label, dur(r.best), group(int64(rate(v.key))),
			against(rate(v.key), copyRate), against(rate(v.key), recordsRate), against(rate(v.key), pkRate), rss, perRow(r.srvCPU), perRow(r.pgCPU))
	}
	fmt.Fprintln(w, "× COPY: against pgx COPY into a plain table of the four columns without index (the issue's yardstick);")
	fmt.Fprintln(w, "× COPY→v4: against pgx COPY into pulpitum_v4_records itself (its five-column primary key and its foreign key, no fence):")
	fmt.Fprintln(w, "what the schema (docs/pulpitum-v4.md, fixed for compatibility) costs any writer;")
	fmt.Fprintln(w, "× COPY→PK: against pgx COPY into a table identical to pulpitum_v4_records without its foreign key (whose check the fence's")
	fmt.Fprintln(w, "locks stand for), the records sorted into the primary key's order before timing: the best COPY under the schema's primary key")
	fmt.Fprintln(w, "µs/row: CPU time of the flightsrv process (serve or load) and of PostgreSQL's processes over the best run, per row (steadier than rows/s on a busy machine)")
	fmt.Fprintln(w, "targets (issue 21): ingest into PostgreSQL at least 1× COPY's rate; peak RSS under 150 MiB while ingesting 3M rows (make bench-ingest-3m)")
}

// ingestBatches reads the first n rows of the flights Parquet file into batches of the wide
// ingest shape: origin, timestamp (the file's zone-less date as UTC), id (the row number,
// zero-padded to 10 digits as `flightsrv load` makes it), delay, distance, destination.
func ingestBatches(b *testing.B, path string, n int64) (*arrow.Schema, []arrow.RecordBatch) {
	b.Helper()
	f, err := file.OpenParquetFile(path, false)
	if err != nil {
		b.Skipf("no flights file: %v", err)
	}
	defer f.Close()
	fr, err := pqarrow.NewFileReader(f, pqarrow.ArrowReadProperties{BatchSize: 65536}, memory.DefaultAllocator)
	if err != nil {
		b.Fatal(err)
	}
	rr, err := fr.GetRecordReader(context.Background(), nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer rr.Release()
	src := rr.Schema()
	col := func(name string) int { return src.FieldIndices(name)[0] }
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "origin", Type: src.Field(col("origin")).Type},
		{Name: "timestamp", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}},
		{Name: "id", Type: arrow.BinaryTypes.String},
		{Name: "delay", Type: src.Field(col("delay")).Type},
		{Name: "distance", Type: src.Field(col("distance")).Type},
		{Name: "destination", Type: src.Field(col("destination")).Type},
	}, nil)
	var out []arrow.RecordBatch
	var row int64
	for row < n && rr.Next() {
		rec := rr.RecordBatch()
		k := min(rec.NumRows(), n-row)
		rec = rec.NewSlice(0, k)
		ids := array.NewStringBuilder(memory.DefaultAllocator)
		for i := range k {
			ids.Append(fmt.Sprintf("%010d", row+i))
		}
		idArr := ids.NewArray()
		ids.Release()
		dates := rec.Column(col("date")).Data()
		ts := array.MakeFromData(array.NewData(schema.Field(1).Type, dates.Len(), dates.Buffers(), nil, dates.NullN(), dates.Offset()))
		cols := []arrow.Array{rec.Column(col("origin")), ts, idArr, rec.Column(col("delay")), rec.Column(col("distance")), rec.Column(col("destination"))}
		out = append(out, array.NewRecordBatch(schema, cols, k))
		ts.Release()
		idArr.Release()
		rec.Release()
		row += k
	}
	if row < n {
		b.Fatalf("the flights file has %d rows, %d asked (%s)", row, n, EnvIngestRows)
	}
	return schema, out
}

// ingestRecords converts the batches into records as the server does (load.Converter).
func ingestRecords(b *testing.B, schema *arrow.Schema, batches []arrow.RecordBatch) []routing.Record {
	b.Helper()
	conv, err := load.NewConverter(schema, load.Mapping{Partition: "origin", Time: "timestamp", ID: "id"})
	if err != nil {
		b.Fatal(err)
	}
	var recs []routing.Record
	var row int64
	for _, rec := range batches {
		if recs, err = conv.Append(recs, rec, 0, int(rec.NumRows()), row); err != nil {
			b.Fatal(err)
		}
		row += rec.NumRows()
	}
	return recs
}
