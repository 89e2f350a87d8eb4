package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/apache/arrow-go/v18/arrow/memory"
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

// EnvIngestRows overrides how many rows of the flights file BenchmarkIngest writes (default
// 1,000,000; the file holds 3,000,000).
const EnvIngestRows = "FLIGHTSRV_INGEST_ROWS"

// ingestTable is the table BenchmarkIngest writes: the flights by origin in month buckets,
// with a writable window reaching back past 2001 at today's clock (the server's application
// clock is the real one).
var ingestTable = routing.TableDef{Name: "flights", TableID: "flightsrv.bench.ingest", PartitionColumn: "origin",
	Strategy: routing.CalendarMonthUTC, WritableBuckets: 400}

// ingestResult is one variant's figures: rows written, the best wall time and the server's
// peak RSS (0 when the variant runs in the benchmark's process).
type ingestResult struct {
	rows int64
	best time.Duration
	hwm  int64
}

// BenchmarkIngest measures writes of the first rows of the flights file (EnvIngestRows) in the
// wide shape (origin, timestamp, id, delay, distance, destination; the id is the row number as
// `flightsrv load` makes it), sent in batches of 65,536 rows:
//
//   - store=postgres/via=flightsql and store=sqlite/via=flightsql: arrow-go's Flight SQL
//     client (ExecuteIngest, bulk ingest) into `flightsrv serve` as a child process over a new
//     database (PostgreSQL) or file (SQLite): the write fence, staging and all; the server's
//     peak RSS (VmHWM) is reported;
//   - store=postgres/via=copy: pgx CopyFrom of the same records (as the server builds them,
//     converted before timing) into a plain table of the same four columns without any index:
//     the ceiling of PostgreSQL's bulk path;
//   - store=postgres/via=load: `flightsrv load`'s write path in process (DurableTable.Ingest of
//     the whole input in batches of load.BatchSize records: the ingest path without gRPC and
//     Arrow conversion) with the same records;
//   - store=postgres/via=copy-records: pgx CopyFrom of the same records straight into
//     pulpitum_v4_records (its primary key and its foreign key to the bucket metadata, whose
//     rows are inserted before timing), without the fence: the ceiling for Pulpitum's schema.
//
// Every run is checked: the rows stored, counted in the store afterwards, must equal the rows
// sent. A summary table prints rows/s side by side.
func BenchmarkIngest(b *testing.B) {
	ctx := context.Background()
	n := int64(1_000_000)
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
	bin := testproc.BuildFlightsrv(b)
	pg := pgtest.Start(b)
	tableFlag := fmt.Sprintf("name=%s,id=%s,partition=%s,strategy=month,window=%d", ingestTable.Name, ingestTable.TableID, ingestTable.PartitionColumn, ingestTable.WritableBuckets)
	results := map[string]*ingestResult{}
	record := func(name string, rows int64, d time.Duration, hwm int64) {
		r := results[name]
		if r == nil {
			r = &ingestResult{rows: rows, best: d}
			results[name] = r
		}
		r.best, r.hwm = min(r.best, d), max(r.hwm, hwm)
	}
	send := func(b *testing.B, addr string) time.Duration {
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
	// serveAndSend times send into `flightsrv serve --store store` (started and stopped
	// untimed) and returns the time and the server's peak RSS; the timer is stopped on return.
	serveAndSend := func(b *testing.B, store string) (time.Duration, int64) {
		proc, addr := testproc.StartReady(b, "flightsrv serve", flightsrvReady, bin, "serve", "--store", store, "--table", tableFlag, "--listen", "127.0.0.1:0", "--no-auth")
		b.StartTimer()
		d := send(b, addr)
		b.StopTimer()
		mem, err := proc.Memory()
		if err != nil {
			b.Fatal(err)
		}
		proc.Stop()
		return d, mem.HWM
	}
	b.Run("store=postgres/via=flightsql", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			st, url := pg.NewStore(b)
			d, hwm := serveAndSend(b, url)
			var stored int64
			if err := st.Pool().QueryRow(ctx, "SELECT count(*) FROM pulpitum_v4_records").Scan(&stored); err != nil || stored != n {
				b.Fatalf("stored %d, %v; want %d", stored, err, n)
			}
			record("postgres/flightsql", n, d, hwm)
			b.StartTimer()
		}
		b.ReportMetric(float64(n)/results["postgres/flightsql"].best.Seconds(), "rows/s")
		b.ReportMetric(float64(results["postgres/flightsql"].hwm)/(1<<20), "peak-RSS-MiB")
	})
	b.Run("store=sqlite/via=flightsql", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			path := filepath.Join(b.TempDir(), "hot.db")
			if out, err := exec.Command(bin, "migrate", "--store", "sqlite://"+path).CombinedOutput(); err != nil {
				b.Fatalf("migrate: %v\n%s", err, out)
			}
			d, hwm := serveAndSend(b, "sqlite://"+path)
			st, err := sqlite.Open(ctx, sqlite.Config{Path: path})
			if err != nil {
				b.Fatal(err)
			}
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
			st.Close()
			if stored != n {
				b.Fatalf("stored %d; want %d", stored, n)
			}
			record("sqlite/flightsql", n, d, hwm)
			b.StartTimer()
		}
		b.ReportMetric(float64(n)/results["sqlite/flightsql"].best.Seconds(), "rows/s")
		b.ReportMetric(float64(results["sqlite/flightsql"].hwm)/(1<<20), "peak-RSS-MiB")
	})
	// copyRun times pgx CopyFrom of the records into a new database's table, made by prepare
	// (untimed), each record given as row(r).
	copyRun := func(name, table string, cols []string, prepare func(b *testing.B, st *cockroach.Store, recs []routing.Record), row func(r *routing.Record) []any) {
		b.Run(name, func(b *testing.B) {
			recs := ingestRecords(b, schema, batches)
			for b.Loop() {
				b.StopTimer()
				st, _ := pg.NewStore(b)
				prepare(b, st, recs)
				b.StartTimer()
				start := time.Now()
				got, err := st.Pool().CopyFrom(ctx, pgx.Identifier{table}, cols,
					pgx.CopyFromSlice(len(recs), func(i int) ([]any, error) { return row(&recs[i]), nil }))
				d := time.Since(start)
				b.StopTimer()
				if err != nil || got != n {
					b.Fatalf("copy = %d, %v; want %d", got, err, n)
				}
				record(table, n, d, 0)
				b.StartTimer()
			}
			b.ReportMetric(float64(n)/results[table].best.Seconds(), "rows/s")
		})
	}
	copyRun("store=postgres/via=copy", "plain", []string{"partition_key", "event_time", "sort_key", "value"},
		func(b *testing.B, st *cockroach.Store, _ []routing.Record) {
			if _, err := st.Pool().Exec(ctx, `CREATE TABLE plain (partition_key BYTEA NOT NULL, event_time TIMESTAMPTZ NOT NULL, sort_key BYTEA NOT NULL, value BYTEA NOT NULL)`); err != nil {
				b.Fatal(err)
			}
		},
		func(r *routing.Record) []any { return []any{r.PartitionKey, r.EventTime, r.SortKey, r.Value} })
	// The buckets' metadata rows first (the records' foreign key).
	copyRun("store=postgres/via=copy-records", "pulpitum_v4_records", []string{"table_id", "partition_key", "bucket_key", "event_time", "sort_key", "value"},
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
		func(r *routing.Record) []any {
			key, _, _ := ingestTable.Strategy.Bounds(r.EventTime)
			return []any{ingestTable.TableID, r.PartitionKey, key, r.EventTime, r.SortKey, r.Value}
		})
	b.Run("store=postgres/via=load", func(b *testing.B) {
		recs := ingestRecords(b, schema, batches)
		for b.Loop() {
			b.StopTimer()
			st, _ := pg.NewStore(b)
			t, err := routing.NewDurableTable(ingestTable, st, nil, routing.Options{})
			if err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			start := time.Now()
			stored, err := t.Ingest(ctx, &recordBatches{recs: recs})
			d := time.Since(start)
			if err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			if stored != n {
				b.Fatalf("appended %d; want %d", stored, n)
			}
			record("load", n, d, 0)
			b.StartTimer()
		}
		b.ReportMetric(float64(n)/results["load"].best.Seconds(), "rows/s")
	})
	printIngestSummary(os.Stdout, n, results)
}

// printIngestSummary prints the variants' rows/s side by side with their ratio to COPY's.
func printIngestSummary(w io.Writer, n int64, results map[string]*ingestResult) {
	copyRate := 0.0
	if r := results["plain"]; r != nil {
		copyRate = float64(n) / r.best.Seconds()
	}
	fmt.Fprintf(w, "\nBenchmarkIngest: %s rows of the flights file, wide shape, best run of each\n", group(n))
	fmt.Fprintf(w, "%-38s %12s %12s %10s %14s\n", "variant", "time", "rows/s", "× COPY", "server peak RSS")
	for _, v := range []struct{ key, label string }{
		{"postgres/flightsql", "ingest → PostgreSQL (Flight SQL)"},
		{"sqlite/flightsql", "ingest → SQLite (Flight SQL)"},
		{"load", "load's path → PostgreSQL (in process)"},
		{"plain", "pgx COPY → plain table (no index)"},
		{"pulpitum_v4_records", "pgx COPY → pulpitum_v4_records"},
	} {
		r := results[v.key]
		if r == nil {
			continue
		}
		rate := float64(n) / r.best.Seconds()
		rss := "-"
		if r.hwm > 0 {
			rss = mib(r.hwm)
		}
		fmt.Fprintf(w, "%-38s %12s %12s %10s %14s\n", v.label, dur(r.best), group(int64(rate)), times(ratioF(rate, copyRate)), rss)
	}
	fmt.Fprintln(w, "× COPY is against COPY into a plain table; COPY into pulpitum_v4_records (its primary key and foreign key, no fence) is the schema's own ceiling")
	fmt.Fprintln(w, "targets (issue 21): ingest into PostgreSQL at least 1× COPY's rate; peak RSS under 150 MiB while ingesting 3M rows")
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

// recordBatches is a routing.RecordSource over recs, load.BatchSize records at a time.
type recordBatches struct {
	recs []routing.Record
	off  int
}

func (r *recordBatches) Next(context.Context) ([]routing.Record, error) {
	if r.off >= len(r.recs) {
		return nil, io.EOF
	}
	hi := min(len(r.recs), r.off+load.BatchSize)
	out := r.recs[r.off:hi]
	r.off = hi
	return out, nil
}
