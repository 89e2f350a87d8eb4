package query_test

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pqarrowparquet "github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/parquet-go/parquet-go"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
	"gocloud.dev/blob"

	"github.com/flightsrv/flightsrv/archive"
	"github.com/flightsrv/flightsrv/query"
	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/routing/sqlite"
)

// The histogram fixture: two tables in one SQLite store, "hdaily" (day buckets, 2025-03-24 to
// 2025-04-14, across a month and several ISO weeks) and "hmonthly" (month buckets, 2024-11 to
// 2025-12, across a year); partition ORD dense, SFO sparse, LAX empty. The real archiver
// archives ORD buckets (every third day, every third month) with four writers in turn: our
// Parquet envelope, JSON, a Parquet file written by arrow-go's pqarrow and a parquet-go file
// without page statistics or column-index bounds; other ORD buckets are archiving (claimed).
var (
	hDaily = routing.TableDef{Name: "hdaily", TableID: "q.hist.daily", PartitionColumn: "origin",
		Strategy: routing.CalendarDayUTC, WritableBuckets: 400}
	hMonthly = routing.TableDef{Name: "hmonthly", TableID: "q.hist.monthly", PartitionColumn: "origin",
		Strategy: routing.CalendarMonthUTC, WritableBuckets: 40}
	hClock    = func() time.Time { return time.Date(2026, 1, 10, 0, 0, 0, 0, time.UTC) }
	hDayRange = routing.TimeRange{Start: time.Date(2025, 3, 24, 0, 0, 0, 0, time.UTC), End: time.Date(2025, 4, 15, 0, 0, 0, 0, time.UTC)}
	hMonRange = routing.TimeRange{Start: time.Date(2024, 11, 1, 0, 0, 0, 0, time.UTC), End: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
)

type histFixture struct {
	store    *sqlite.Store
	bucket   *blob.Bucket
	reader   *archive.Reader
	all      map[string][]routing.Record // by table name
	archived int
}

// histogramFixture builds the fixture in a temporary directory of t.
func histogramFixture(t *testing.T) *histFixture {
	t.Helper()
	f, err := buildHistFixture(t.TempDir())
	if f != nil && f.store != nil {
		t.Cleanup(func() { _ = f.store.Close() })
	}
	if f != nil && f.bucket != nil {
		t.Cleanup(func() { _ = f.bucket.Close() })
	}
	if err != nil {
		t.Fatalf("build fixture: %v", err)
	}
	return f
}

func genHist(rng *rand.Rand, def routing.TableDef, r routing.TimeRange, pk string, n int) []routing.Record {
	span := int64(r.End.Sub(r.Start) / time.Microsecond)
	var out []routing.Record
	for i := range n {
		at := r.Start.Add(time.Duration(rng.Int64N(span)) * time.Microsecond)
		switch {
		case i%41 == 0: // a bucket's first instant
			at = routing.BucketFor(def.TableID, []byte(pk), def.Strategy, at).Start
		case i%43 == 0: // a bucket's last instant
			at = routing.BucketFor(def.TableID, []byte(pk), def.Strategy, at).End.Add(-time.Microsecond)
		case i%7 == 0 && len(out) > 0: // a tie on the timestamp
			at = out[rng.IntN(len(out))].EventTime
		}
		out = append(out, routing.Record{PartitionKey: []byte(pk), EventTime: at, SortKey: fmt.Appendf(nil, "%s-%05d", pk, i), Value: []byte("v")})
	}
	return out
}

// selective lets the archiver see only the ORD buckets chosen by pick.
type selective struct {
	*sqlite.Store
	pick func(b routing.BucketID) bool
}

func (s selective) Discover(ctx context.Context, eligibleBefore time.Time, limit int) ([]routing.ArchiveWork, error) {
	work, err := s.Store.Discover(ctx, eligibleBefore, limit)
	var out []routing.ArchiveWork
	for _, w := range work {
		if s.pick(w.Bucket) {
			out = append(out, w)
		}
	}
	return out, err
}

// envRow is the Parquet record envelope, for hand-made payloads.
type envRow struct {
	PartitionKey []byte `parquet:"partition_key"`
	EventTime    int64  `parquet:"event_time,timestamp(nanosecond)"`
	SortKey      []byte `parquet:"sort_key"`
	Value        []byte `parquet:"value"`
}

// handWriter publishes a hand-made Parquet payload and its v4 manifest, as another tool would.
type handWriter struct {
	bkt    *blob.Bucket
	encode func(recs []routing.Record) ([]byte, error)
}

func sha(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

func (w handWriter) Put(ctx context.Context, b routing.BucketID, gen int64, recs []routing.Record) (string, error) {
	payload, err := w.encode(recs)
	if err != nil {
		return "", err
	}
	m := &archive.Manifest{Version: archive.ManifestVersion, Format: archive.FormatParquet, SchemaVersion: archive.RecordSchemaVersion,
		Bucket: b, Generation: gen, PayloadKey: archive.PayloadKey("archives", b, gen, sha(payload), archive.FormatParquet),
		RecordCount: uint64(len(recs)), PayloadBytes: uint64(len(payload)), SHA256: sha(payload), ClusteringKey: []string{"event_time", "sort_key"}}
	body, err := m.MarshalJSON()
	if err != nil {
		return "", err
	}
	key := archive.ManifestKey("archives", b, gen, sha(body))
	if err := w.bkt.WriteAll(ctx, m.PayloadKey, payload, nil); err != nil {
		return "", err
	}
	return key, w.bkt.WriteAll(ctx, key, body, nil)
}

// pqarrowPayload writes the envelope with arrow-go's Parquet writer (dictionary pages, its own
// statistics, no page index, row groups of 40 rows).
func pqarrowPayload(recs []routing.Record) ([]byte, error) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "partition_key", Type: arrow.BinaryTypes.Binary},
		{Name: "event_time", Type: &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}},
		{Name: "sort_key", Type: arrow.BinaryTypes.Binary},
		{Name: "value", Type: arrow.BinaryTypes.Binary},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for _, r := range recs {
		b.Field(0).(*array.BinaryBuilder).Append(r.PartitionKey)
		b.Field(1).(*array.TimestampBuilder).Append(arrow.Timestamp(r.EventTime.UnixNano()))
		b.Field(2).(*array.BinaryBuilder).Append(r.SortKey)
		b.Field(3).(*array.BinaryBuilder).Append(r.Value)
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	var buf bytes.Buffer
	w, err := pqarrow.NewFileWriter(schema, &buf, pqarrowparquet.NewWriterProperties(pqarrowparquet.WithMaxRowGroupLength(40)), pqarrow.DefaultWriterProps())
	if err != nil {
		return nil, err
	}
	if err := w.Write(rec); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// noStatsPayload writes the envelope with parquet-go without page statistics and with
// zero-filled column-index bounds, in row groups of 7 rows.
func noStatsPayload(recs []routing.Record) ([]byte, error) {
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[envRow](&buf, parquet.MaxRowsPerRowGroup(7), parquet.PageBufferSize(256),
		parquet.DataPageStatistics(false), parquet.SkipPageBounds("event_time"))
	rows := make([]envRow, len(recs))
	for i, r := range recs {
		rows[i] = envRow{r.PartitionKey, r.EventTime.UnixNano(), r.SortKey, r.Value}
	}
	if _, err := w.Write(rows); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// rotatingWriter hands each bucket to the next of its writers.
type rotatingWriter struct {
	mu      sync.Mutex
	writers []routing.ArchiveWriter
	next    int
}

func (w *rotatingWriter) Put(ctx context.Context, b routing.BucketID, gen int64, recs []routing.Record) (string, error) {
	w.mu.Lock()
	wr := w.writers[w.next%len(w.writers)]
	w.next++
	w.mu.Unlock()
	return wr.Put(ctx, b, gen, recs)
}

func buildHistFixture(dir string) (*histFixture, error) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(dir, "hot.db")})
	if err != nil {
		return nil, err
	}
	f := &histFixture{store: st, all: map[string][]routing.Record{}}
	if err := st.Migrate(ctx); err != nil {
		return f, err
	}
	rng := rand.New(rand.NewPCG(101, 103))
	for _, c := range []struct {
		def routing.TableDef
		r   routing.TimeRange
	}{{hDaily, hDayRange}, {hMonthly, hMonRange}} {
		tbl, err := routing.NewDurableTable(c.def, st, nil, routing.Options{Clock: hClock})
		if err != nil {
			return f, err
		}
		recs := append(genHist(rng, c.def, c.r, "ORD", 2500), genHist(rng, c.def, c.r, "SFO", 60)...)
		if n, err := tbl.Append(ctx, recs); err != nil || n != len(recs) {
			return f, fmt.Errorf("append: %d of %d: %w", n, len(recs), err)
		}
		f.all[c.def.Name] = recs
	}
	bkt, err := blob.OpenBucket(ctx, "file://"+filepath.Join(dir, "archive")+"?metadata=skip&create_dir=true")
	if err != nil {
		return f, err
	}
	f.bucket = bkt
	parquetW, err := archive.NewWriter(bkt, archive.WriterOptions{Prefix: "archives", RowGroupRows: 32, PageBufferBytes: 256})
	if err != nil {
		return f, err
	}
	jsonW, err := archive.NewWriter(bkt, archive.WriterOptions{Prefix: "archives", Format: archive.FormatJSON})
	if err != nil {
		return f, err
	}
	writer := &rotatingWriter{writers: []routing.ArchiveWriter{parquetW, jsonW,
		handWriter{bkt, pqarrowPayload}, handWriter{bkt, noStatsPayload}}}
	if f.reader, err = archive.NewReader(bkt, archive.ReaderOptions{TailBytes: 4096}); err != nil {
		return f, err
	}
	archivable := func(b routing.BucketID) bool {
		if string(b.PartitionKey) != "ORD" {
			return false
		}
		if b.Strategy == routing.CalendarDayUTC {
			return b.Start.Day()%3 == 0
		}
		return int(b.Start.Month())%3 == 0
	}
	a, err := archive.NewArchiver(selective{st, archivable}, writer, st, archive.ArchiverOptions{ScanLimit: 1000, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return f, err
	}
	sum, err := a.RunOnce(ctx, hClock())
	if err != nil {
		return f, fmt.Errorf("archive: %w", err)
	}
	if sum.Published < 8 || sum.Published != sum.Cleaned {
		return f, fmt.Errorf("archiver summary %+v", sum)
	}
	f.archived = sum.Published
	// Archiving: ORD buckets of days ≡ 1 (mod 3) and months ≡ 1 (mod 3) are claimed.
	for name, recs := range f.all {
		def := hDaily
		if name == hMonthly.Name {
			def = hMonthly
		}
		seen := map[string]bool{}
		for _, r := range recs {
			b := routing.BucketFor(def.TableID, r.PartitionKey, def.Strategy, r.EventTime)
			claim := string(b.PartitionKey) == "ORD" && ((def == hDaily && b.Start.Day()%3 == 1) || (def == hMonthly && int(b.Start.Month())%3 == 1))
			if !claim || seen[b.CacheKey()] {
				continue
			}
			seen[b.CacheKey()] = true
			if s, err := st.ClaimArchive(ctx, b, time.Hour); err != nil || s == nil {
				return f, fmt.Errorf("claim: %v %v", s, err)
			}
		}
	}
	return f, nil
}

// engines returns engines with pushdown on and off over the fixture, sharing alloc.
func (f *histFixture) engines(t *testing.T, alloc memory.Allocator, cache bool) (on, off *query.Engine) {
	t.Helper()
	var tables []*routing.DurableTable
	for _, def := range []routing.TableDef{hDaily, hMonthly} {
		opts := routing.Options{Clock: hClock, Fanout: 3}
		if cache {
			opts.Cache = routing.NewRouteCache(256)
		}
		tbl, err := routing.NewDurableTable(def, f.store, f.reader, opts)
		if err != nil {
			t.Fatal(err)
		}
		tables = append(tables, tbl)
	}
	var err error
	if on, err = query.New(tables, query.Options{Pushdown: true, Alloc: alloc}); err != nil {
		t.Fatal(err)
	}
	if off, err = query.New(tables, query.Options{Pushdown: false, Alloc: alloc}); err != nil {
		t.Fatal(err)
	}
	return on, off
}

// histRow is one output row: the bin start in ns and the counts, in output order.
type histRow struct {
	bin    int64
	counts []int64
}

// runHist executes sql and returns its rows and schema; it checks that no batch is empty.
func runHist(t *testing.T, ctx context.Context, e *query.Engine, sql string) ([]histRow, *arrow.Schema, error) {
	t.Helper()
	rdr, err := e.Execute(ctx, sql, nil, nil)
	if err != nil {
		return nil, nil, err
	}
	defer rdr.Release()
	var rows []histRow
	for rdr.Next() {
		rec := rdr.RecordBatch()
		if rec.NumRows() == 0 {
			t.Fatalf("%s: empty batch", sql)
		}
		for i := range int(rec.NumRows()) {
			var r histRow
			for c := range int(rec.NumCols()) {
				switch a := rec.Column(c).(type) {
				case *array.Timestamp:
					r.bin = int64(a.Value(i))
				case *array.Int64:
					r.counts = append(r.counts, a.Value(i))
				default:
					t.Fatalf("column type %s", a.DataType())
				}
			}
			rows = append(rows, r)
		}
	}
	return rows, rdr.Schema(), rdr.Err()
}

func sameHist(a, b []histRow) bool {
	return slices.EqualFunc(a, b, func(x, y histRow) bool { return x.bin == y.bin && slices.Equal(x.counts, y.counts) })
}

// bruteHist is the expected answer written independently of the engine.
func bruteHist(recs []routing.Record, pk string, r routing.TimeRange, bin routing.Binning, desc bool, limit int, counts int) []histRow {
	var times []time.Time
	for _, x := range recs {
		if string(x.PartitionKey) == pk && r.Contains(x.EventTime) {
			times = append(times, x.EventTime)
		}
	}
	perBin := map[int64]int64{}
	for _, x := range times {
		perBin[bin.Floor(x).UnixNano()]++
	}
	var out []histRow
	for start, n := range perBin {
		row := histRow{bin: start}
		for range counts {
			row.counts = append(row.counts, n)
		}
		out = append(out, row)
	}
	slices.SortFunc(out, func(a, b histRow) int { return cmp.Compare(a.bin, b.bin) })
	if desc {
		slices.Reverse(out)
	}
	if limit >= 0 && len(out) > limit {
		out = out[:limit]
	}
	return out
}

func histSQL(table, sel, pk string, r routing.TimeRange, tail string) string {
	return fmt.Sprintf("SELECT %s FROM %s WHERE origin = '%s' AND timestamp >= TIMESTAMPTZ '%s' AND timestamp < TIMESTAMPTZ '%s' %s",
		sel, table, pk, r.Start.Format(time.RFC3339Nano), r.End.Format(time.RFC3339Nano), tail)
}

// TestHistogramPushdownMatchesScan runs histograms with pushdown on and off over hot,
// archiving and archived buckets (four archive writers) and compares both with brute force:
// month, day, hour, 15-minute and other bins across bucket boundaries, every select and
// ORDER BY spelling, DESC, LIMIT, empty ranges and partitions without data. The pushdown path
// builds no record; the scan path reads them.
func TestHistogramPushdownMatchesScan(t *testing.T) {
	t.Parallel()
	f := histogramFixture(t)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	on, off := f.engines(t, mem, true)
	ctx := context.Background()
	origin := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	bins := []routing.Binning{
		routing.TruncBinning(routing.TruncMonth), routing.TruncBinning(routing.TruncDay), routing.TruncBinning(routing.TruncHour),
		routing.StrideBinning(15*time.Minute, origin), routing.TruncBinning(routing.TruncWeek),
		routing.TruncBinning(routing.TruncQuarter), routing.TruncBinning(routing.TruncYear),
		routing.StrideBinning(7*time.Minute+500*time.Microsecond, time.Date(2025, 3, 30, 1, 2, 3, 4000, time.UTC)),
		routing.StrideBinning(36*time.Hour, time.Date(2024, 2, 29, 5, 0, 0, 0, time.UTC)),
	}
	day := func(y, m, d, h int) time.Time { return time.Date(y, time.Month(m), d, h, 0, 0, 0, time.UTC) }
	cases := []struct {
		table  string
		ranges []routing.TimeRange
	}{
		{hDaily.Name, []routing.TimeRange{hDayRange,
			{Start: day(2025, 3, 20, 0), End: day(2025, 4, 20, 0)},                             // wider than the data
			{Start: day(2025, 3, 30, 7).Add(123 * time.Microsecond), End: day(2025, 4, 2, 17)}, // across buckets and a month
			{Start: day(2025, 4, 3, 0), End: day(2025, 4, 4, 0)},                               // one archived bucket
			{Start: day(2025, 4, 1, 10), End: day(2025, 4, 1, 11)},                             // inside one bucket
			{Start: day(2025, 5, 1, 0), End: day(2025, 5, 9, 0)},                               // no data
		}},
		{hMonthly.Name, []routing.TimeRange{hMonRange,
			{Start: day(2024, 12, 15, 12), End: day(2025, 2, 10, 0)},                     // across a year
			{Start: day(2025, 6, 1, 0), End: day(2025, 7, 1, 0)},                         // one archived month
			{Start: day(2025, 3, 30, 23), End: day(2025, 4, 2, 1)},                       // archived into archiving
			{Start: day(2023, 1, 1, 0), End: day(2023, 6, 1, 0)},                         // no data
			{Start: day(2025, 9, 30, 0), End: day(2025, 10, 1, 0).Add(time.Microsecond)}, // SQL text is microseconds
		}},
	}
	shapes := []struct {
		sel, tail string
		desc      bool
		limit     int
		counts    int
	}{
		{"%s AS t, COUNT(*)", "GROUP BY 1", false, -1, 1},
		{"%s AS t, COUNT(*)", "GROUP BY t ORDER BY t DESC", true, -1, 1},
		{"COUNT(*) AS n, %s AS t", "GROUP BY t ORDER BY 2 LIMIT 5", false, 5, 1},
		{"%s, count(1), COUNT(*) AS c", "GROUP BY 1 ORDER BY 1 DESC LIMIT 3", true, 3, 2},
		{"%s AS t, COUNT(*)", "GROUP BY 1 LIMIT 0", false, 0, 1},
	}
	n := 0
	for _, c := range cases {
		for _, r := range c.ranges {
			for _, bin := range bins {
				for si, sh := range shapes {
					if (si+n)%2 == 1 && sh.limit != 0 && si > 1 {
						n++
						continue // a sample of the shapes keeps the test quick; LIMIT 0 always runs
					}
					for _, pk := range []string{"ORD", "SFO", "LAX"} {
						if pk != "ORD" && si > 1 {
							continue
						}
						n++
						sql := histSQL(c.table, fmt.Sprintf(sh.sel, bin.String()), pk, r, sh.tail)
						want := bruteHist(f.all[c.table], pk, r, bin, sh.desc, sh.limit, sh.counts)
						stats := &routing.ReadStats{}
						gotOn, schemaOn, err := runHist(t, routing.WithReadStats(ctx, stats), on, sql)
						if err != nil {
							t.Fatalf("pushdown %s: %v", sql, err)
						}
						if stats.HotRows.Load() != 0 || stats.ArchiveRows.Load() != 0 {
							t.Fatalf("pushdown %s built records: %d hot, %d archive", sql, stats.HotRows.Load(), stats.ArchiveRows.Load())
						}
						gotOff, schemaOff, err := runHist(t, ctx, off, sql)
						if err != nil {
							t.Fatalf("scan %s: %v", sql, err)
						}
						if !sameHist(gotOn, want) || !sameHist(gotOff, want) {
							t.Fatalf("%s:\npushdown %v\nscan     %v\nwant     %v", sql, gotOn, gotOff, want)
						}
						if !schemaOn.Equal(schemaOff) {
							t.Fatalf("%s: schemas %v and %v", sql, schemaOn, schemaOff)
						}
					}
				}
			}
		}
	}
	if n < 300 {
		t.Fatalf("only %d queries ran", n)
	}
}

// TestHistogramPaths checks what each path reads: pushdown sends one statement per hot
// bucket counted per bin and none per cached archived bucket; month bins over month buckets
// are answered by bucket counts; the scan path reads records. EXPLAIN names the kind.
func TestHistogramPaths(t *testing.T) {
	t.Parallel()
	f := histogramFixture(t)
	on, off := f.engines(t, memory.DefaultAllocator, true)
	ctx := context.Background()
	hourly := histSQL(hDaily.Name, "date_trunc('hour', timestamp) AS t, COUNT(*)", "ORD", hDayRange, "GROUP BY 1")
	for pass := range 2 {
		stats := &routing.ReadStats{}
		if _, _, err := runHist(t, routing.WithReadStats(ctx, stats), on, hourly); err != nil {
			t.Fatal(err)
		}
		buckets := int64(hDayRange.End.Sub(hDayRange.Start) / (24 * time.Hour))
		if s := stats.HotStatements.Load(); s > buckets || (pass == 1 && s >= buckets) || stats.HotRows.Load() != 0 {
			t.Fatalf("pass %d: %d statements, %d hot rows for %d buckets", pass, s, stats.HotRows.Load(), buckets)
		}
	}
	stats := &routing.ReadStats{}
	if _, _, err := runHist(t, routing.WithReadStats(ctx, stats), off, hourly); err != nil {
		t.Fatal(err)
	}
	if stats.HotRows.Load() == 0 || stats.ArchiveRows.Load() == 0 {
		t.Fatalf("scan path read %d hot and %d archive records", stats.HotRows.Load(), stats.ArchiveRows.Load())
	}
	rdr, err := on.Execute(ctx, "EXPLAIN "+histSQL(hMonthly.Name, "date_trunc('month', timestamp) AS t, COUNT(*)", "ORD", hMonRange, "GROUP BY 1"), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Release()
	var lines []string
	for rdr.Next() {
		col := rdr.RecordBatch().Column(0).(*array.String)
		for i := range col.Len() {
			lines = append(lines, col.Value(i))
		}
	}
	text := strings.Join(lines, "\n")
	if !strings.Contains(text, "StoreAggregate [count(*)] grouped by date_trunc('month', timestamp)") || !strings.Contains(text, "each bucket is asked ungrouped") {
		t.Fatalf("EXPLAIN:\n%s", text)
	}
	// Prepared statements announce the result schema.
	ds, _, err := on.Prepare(ctx, hourly, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, schema, err := runHist(t, ctx, on, hourly)
	if err != nil || !ds.Equal(schema) {
		t.Fatalf("prepared schema %v, result schema %v, %v", ds, schema, err)
	}
	// Invalid shapes keep their codes.
	// COUNT(id) per bin is not a pushdown shape: the general binder's plan runs in the
	// executor, and ids are never null, so it equals COUNT(*) per bin (ordered by the bin).
	countIDs, _, err := runHist(t, ctx, on, histSQL(hDaily.Name, "date_trunc('hour', timestamp) AS t, count(id)", "ORD", hDayRange, "GROUP BY 1 ORDER BY 1"))
	if err != nil {
		t.Fatalf("COUNT(id) per bin: %v", err)
	}
	counts, _, err := runHist(t, ctx, off, histSQL(hDaily.Name, "date_trunc('hour', timestamp) AS t, count(*)", "ORD", hDayRange, "GROUP BY 1 ORDER BY 1"))
	if err != nil || len(counts) == 0 || !reflect.DeepEqual(countIDs, counts) {
		t.Fatalf("COUNT(id) per bin %v, COUNT(*) per bin %v (%v)", countIDs, counts, err)
	}
	// A reversed range answers no groups, as PostgreSQL does.
	rows, _, err := runHist(t, ctx, on, histSQL(hDaily.Name, "date_trunc('hour', timestamp), count(*)", "ORD", routing.TimeRange{Start: hDayRange.End, End: hDayRange.Start}, "GROUP BY 1"))
	if err != nil || len(rows) != 0 {
		t.Fatalf("reversed range: %v, %v; want no rows", rows, err)
	}
}

// TestHistogramTelemetry: a pushed-down histogram has the "COUNT <table>" span with
// pulpitum.aggregate=count and pulpitum.group=time_bin, and the pushdown counter carries
// pulpitum.group; the scan path counts as a fallback. Nothing carries the partition value.
func TestHistogramTelemetry(t *testing.T) {
	f := histogramFixture(t)
	spans := tracetest.NewSpanRecorder()
	otel.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans)))
	reader := sdkmetric.NewManualReader()
	otel.SetMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)))
	t.Cleanup(func() {
		otel.SetTracerProvider(tracenoop.NewTracerProvider())
		otel.SetMeterProvider(metricnoop.NewMeterProvider())
	})
	on, off := f.engines(t, memory.DefaultAllocator, false)
	ctx := context.Background()
	sql := histSQL(hDaily.Name, "date_bin(INTERVAL '15 minutes', timestamp, TIMESTAMPTZ '2001-01-01T00:00:00Z') AS t, COUNT(*)", "ORD", hDayRange, "GROUP BY 1")
	for _, e := range []*query.Engine{on, off} {
		if _, _, err := runHist(t, ctx, e, sql); err != nil {
			t.Fatal(err)
		}
	}
	found := false
	for _, s := range spans.Ended() {
		if s.Name() != "COUNT hdaily" {
			continue
		}
		found = true
		attrs := map[attribute.Key]string{}
		for _, kv := range s.Attributes() {
			attrs[kv.Key] = kv.Value.Emit()
			if strings.Contains(kv.Value.Emit(), "ORD") {
				t.Fatalf("span attribute %s leaks the partition value", kv.Key)
			}
		}
		if attrs["pulpitum.aggregate"] != "count" || attrs["pulpitum.group"] != "time_bin" || attrs["pulpitum.sql.mode"] != "routed_aggregate" ||
			attrs["pulpitum.group.bin"] != "date_bin('15 minutes', timestamp, origin)" || attrs["pulpitum.query.archive_buckets"] == "0" {
			t.Fatalf("span attributes %v", attrs)
		}
	}
	if !found {
		t.Fatal("no COUNT hdaily span")
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != "flightsrv.aggregate.pushdowns" {
				continue
			}
			for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
				src, _ := dp.Attributes.Value("source")
				out, _ := dp.Attributes.Value("outcome")
				grp, _ := dp.Attributes.Value("pulpitum.group")
				got[src.AsString()+"/"+out.AsString()+"/"+grp.AsString()] += dp.Value
			}
		}
	}
	if got["mixed/success/time_bin"] != 1 || got["mixed/fallback/time_bin"] != 1 || len(got) != 2 {
		t.Fatalf("pushdown counter = %v", got)
	}
}
