package query_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
	"gocloud.dev/blob"
	_ "gocloud.dev/blob/fileblob"

	"github.com/flightsrv/flightsrv/archive"
	"github.com/flightsrv/flightsrv/query"
	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/routing/sqlite"
)

// The MIN/MAX fixture: table "messages", month buckets, partition "general" with records in
// eight months of 2025 (January's first and December's last instant included, ties on the
// timestamp) and none in March, June, September and October; partition "other" has records
// only where "general" has none. February is archived to Parquet (hot rows deleted), April
// to JSON and August to Parquet (hot rows kept), July is archiving, the rest is hot.
var (
	mmDef = routing.TableDef{Name: "messages", TableID: "q.minmax", PartitionColumn: "channel_id",
		Strategy: routing.CalendarMonthUTC, WritableBuckets: 24}
	mmClock = func() time.Time { return time.Date(2026, 1, 10, 0, 0, 0, 0, time.UTC) }
	mmYear  = routing.TimeRange{Start: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), End: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
)

type mmFixture struct {
	store  *sqlite.Store
	bucket *blob.Bucket
	reader *archive.Reader
	probe  *probeStore
	all    []routing.Record // every partition
}

// of returns the records of partition pk.
func (f *mmFixture) of(pk string) []routing.Record {
	var out []routing.Record
	for _, r := range f.all {
		if string(r.PartitionKey) == pk {
			out = append(out, r)
		}
	}
	return out
}

// probeStore is a HotStore double delegating to the real store and counting the calls the
// aggregate paths make.
type probeStore struct {
	routing.HotStore
	minMax, reads, counts atomic.Int64
}

// AggregateRange counts MIN/MAX probes (no count asked) and counts apart.
func (p *probeStore) AggregateRange(ctx context.Context, b routing.BucketID, req routing.AggregateRequest) (routing.Route, array.RecordReader, error) {
	if req.Asks(routing.MeasureCount) {
		p.counts.Add(1)
	} else {
		p.minMax.Add(1)
	}
	return p.HotStore.AggregateRange(ctx, b, req)
}

func (p *probeStore) ScanRange(ctx context.Context, b routing.BucketID, req routing.BatchRequest) (routing.Route, routing.BatchReader, error) {
	p.reads.Add(1)
	return p.HotStore.ScanRange(ctx, b, req)
}

func (p *probeStore) reset() { p.minMax.Store(0); p.reads.Store(0); p.counts.Store(0) }

// minMaxFixture builds the fixture in a temporary directory of t.
func minMaxFixture(t *testing.T) *mmFixture {
	t.Helper()
	f, err := buildMinMaxFixture(t.TempDir())
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

func mmMonth(pk string, m int) routing.BucketID {
	return routing.BucketFor(mmDef.TableID, []byte(pk), mmDef.Strategy, time.Date(2025, time.Month(m), 2, 0, 0, 0, 0, time.UTC))
}

func buildMinMaxFixture(dir string) (f *mmFixture, err error) {
	ctx := context.Background()
	f = &mmFixture{}
	st, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(dir, "hot.db")})
	if err != nil {
		return f, err
	}
	f.store, f.probe = st, &probeStore{HotStore: st}
	if err := st.Migrate(ctx); err != nil {
		return f, err
	}
	w, err := routing.NewDurableTable(mmDef, st, nil, routing.Options{Clock: mmClock})
	if err != nil {
		return f, err
	}
	rng := rand.New(rand.NewPCG(3, 14))
	var all []routing.Record
	seq := 0
	gen := func(pk string, m, n int) {
		b := mmMonth(pk, m)
		span := int64(b.End.Sub(b.Start) / time.Microsecond)
		first := len(all)
		for i := range n {
			t0 := b.Start.Add(time.Duration(rng.Int64N(span)) * time.Microsecond)
			switch {
			case i == 0 && m == 1:
				t0 = b.Start
			case i == 0 && m == 12:
				t0 = b.End.Add(-time.Microsecond)
			case i == 1:
				t0 = b.Start // on the bucket's lower bound
			case i > 1 && rng.IntN(5) == 0:
				t0 = all[first+rng.IntN(i)].EventTime // a tie
			}
			seq++
			all = append(all, routing.Record{PartitionKey: []byte(pk), EventTime: t0, SortKey: fmt.Appendf(nil, "id-%05d", seq), Value: []byte("v")})
		}
	}
	for _, m := range []int{1, 2, 4, 5, 7, 8, 11, 12} {
		gen("general", m, 15+rng.IntN(30))
	}
	for _, m := range []int{3, 6, 9} {
		gen("other", m, 6)
	}
	f.all = all
	if n, err := w.Append(ctx, all); err != nil || n != len(all) {
		return f, fmt.Errorf("append %d of %d: %w", n, len(all), err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "archive"), 0o755); err != nil {
		return f, err
	}
	bkt, err := blob.OpenBucket(ctx, "file://"+filepath.Join(dir, "archive")+"?metadata=skip")
	if err != nil {
		return f, err
	}
	f.bucket = bkt
	if f.reader, err = archive.NewReader(bkt, archive.ReaderOptions{TailBytes: 2048}); err != nil {
		return f, err
	}
	for _, step := range []struct {
		m         int
		format    archive.Format
		deleteHot bool
	}{{2, archive.FormatParquet, true}, {4, archive.FormatJSON, false}, {8, archive.FormatParquet, false}} {
		aw, err := archive.NewWriter(bkt, archive.WriterOptions{Prefix: "archives", Format: step.format, RowGroupRows: 8, PageBufferBytes: 256})
		if err != nil {
			return f, err
		}
		b := mmMonth("general", step.m)
		sess, err := st.ClaimArchive(ctx, b, time.Hour)
		if err != nil || sess == nil {
			return f, fmt.Errorf("claim month %d: %v", step.m, err)
		}
		snap, err := st.Snapshot(ctx, sess)
		if err != nil {
			return f, err
		}
		key, err := aw.Put(ctx, b, sess.Generation, snap)
		if err != nil {
			return f, err
		}
		if err := st.PublishArchive(ctx, sess, key); err != nil {
			return f, err
		}
		if step.deleteHot {
			if err := st.DeleteHotBucket(ctx, sess); err != nil {
				return f, err
			}
		}
	}
	if sess, err := st.ClaimArchive(ctx, mmMonth("general", 7), time.Hour); err != nil || sess == nil {
		return f, fmt.Errorf("claim July: %v", err)
	}
	return f, nil
}

// engines returns an engine with pushdown and one without over the same table, and the
// checked allocator both use.
func (f *mmFixture) engines(t *testing.T, fanout int, cache bool) (on, off *query.Engine, alloc *memory.CheckedAllocator) {
	t.Helper()
	opts := routing.Options{Fanout: fanout, Clock: mmClock}
	if cache {
		opts.Cache = routing.NewRouteCache(64)
	}
	tbl, err := routing.NewDurableTable(mmDef, f.probe, f.reader, opts)
	if err != nil {
		t.Fatal(err)
	}
	alloc = memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { alloc.AssertSize(t, 0) })
	if on, err = query.New([]*routing.DurableTable{tbl}, query.Options{Pushdown: true, Alloc: alloc}); err != nil {
		t.Fatal(err)
	}
	if off, err = query.New([]*routing.DurableTable{tbl}, query.Options{Pushdown: false, Alloc: alloc}); err != nil {
		t.Fatal(err)
	}
	return on, off, alloc
}

func lit(t time.Time) string { return "TIMESTAMPTZ '" + t.UTC().Format(time.RFC3339Nano) + "'" }

func mmSQL(sel, pk string, r routing.TimeRange, tail string) string {
	return fmt.Sprintf("SELECT %s FROM messages WHERE channel_id = '%s' AND timestamp >= %s AND timestamp < %s%s", sel, pk, lit(r.Start), lit(r.End), tail)
}

// result runs a statement and returns its schema and rows; timestamps are int64 nanoseconds,
// NULL is nil.
func result(t *testing.T, ctx context.Context, e *query.Engine, sql string) (*arrow.Schema, [][]any) {
	t.Helper()
	rdr, err := e.Execute(ctx, sql, nil, nil)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	defer rdr.Release()
	var rows [][]any
	for rdr.Next() {
		rec := rdr.RecordBatch()
		for i := range int(rec.NumRows()) {
			row := make([]any, rec.NumCols())
			for c := range int(rec.NumCols()) {
				col := rec.Column(c)
				switch {
				case col.IsNull(i):
				case col.DataType().ID() == arrow.TIMESTAMP:
					row[c] = int64(col.(*array.Timestamp).Value(i))
				case col.DataType().ID() == arrow.INT64:
					row[c] = col.(*array.Int64).Value(i)
				case col.DataType().ID() == arrow.STRING:
					row[c] = col.(*array.String).Value(i)
				default:
					t.Fatalf("%s: unexpected column type %s", sql, col.DataType())
				}
			}
			rows = append(rows, row)
		}
	}
	if err := rdr.Err(); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return rdr.Schema(), rows
}

// bruteMinMax is the reference answer: least and greatest event time of recs in r.
func bruteMinMax(recs []routing.Record, r routing.TimeRange) (lo, hi any) {
	for _, x := range recs {
		if !r.Contains(x.EventTime) {
			continue
		}
		ns := x.EventTime.UnixNano()
		if lo == nil || ns < lo.(int64) {
			lo = ns
		}
		if hi == nil || ns > hi.(int64) {
			hi = ns
		}
	}
	return lo, hi
}

// TestMinMaxPushdownEqualsScan runs MIN/MAX(timestamp) queries with pushdown on and off
// over hot, archiving and archived (Parquet and JSON) buckets, across bucket boundaries, in
// empty months (NULL) and outside the data, and checks that both engines give the same
// schema and rows as brute force; EXPLAIN shows which path each took.
func TestMinMaxPushdownEqualsScan(t *testing.T) {
	t.Parallel()
	f := minMaxFixture(t)
	general := f.of("general")
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(9, 26))
	ranges := []routing.TimeRange{
		mmYear,
		{Start: time.Date(2024, 6, 1, 0, 0, 0, 0, time.UTC), End: time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)},
		{Start: time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC), End: time.Date(2025, 4, 1, 0, 0, 0, 0, time.UTC)},   // empty month
		{Start: time.Date(2025, 9, 1, 0, 0, 0, 0, time.UTC), End: time.Date(2025, 11, 1, 0, 0, 0, 0, time.UTC)},  // two empty months
		{Start: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC), End: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)},   // before the data
		{Start: time.Date(2025, 1, 15, 0, 0, 0, 0, time.UTC), End: time.Date(2025, 9, 15, 0, 0, 0, 0, time.UTC)}, // every tier
		{Start: time.Date(2025, 2, 1, 0, 0, 0, 0, time.UTC), End: time.Date(2025, 2, 1, 0, 0, 0, 1000, time.UTC)},
		{Start: time.Date(2025, 12, 31, 23, 59, 59, 999999000, time.UTC), End: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)},
	}
	for range 40 {
		a := mmYear.Start.Add(time.Duration(rng.Int64N(int64(mmYear.End.Sub(mmYear.Start))))).Truncate(time.Microsecond)
		e := a.Add(time.Duration(rng.Int64N(int64(100 * 24 * time.Hour)))).Truncate(time.Microsecond)
		if rng.IntN(3) == 0 {
			a = general[rng.IntN(len(general))].EventTime
		}
		if rng.IntN(3) == 0 {
			e = general[rng.IntN(len(general))].EventTime.Add(time.Duration(rng.IntN(2)) * time.Microsecond)
		}
		if !a.Before(e) {
			a, e = e, a.Add(time.Microsecond)
		}
		ranges = append(ranges, routing.TimeRange{Start: a, End: e})
	}
	for _, fanout := range []int{1, 4} {
		on, off, _ := f.engines(t, fanout, fanout == 4)
		for _, r := range ranges {
			lo, hi := bruteMinMax(general, r)
			for _, q := range []struct {
				sel, tail string
				want      []any
			}{
				{"min(timestamp), max(timestamp) AS last", "", []any{lo, hi}},
				{"min(timestamp)", "", []any{lo}},
				{"max(timestamp) AS latest", "", []any{hi}},
				{"max(timestamp), min(timestamp), max(timestamp) AS again", " LIMIT 1", []any{hi, lo, hi}},
			} {
				sql := mmSQL(q.sel, "general", r, q.tail)
				sOn, rowsOn := result(t, ctx, on, sql)
				sOff, rowsOff := result(t, ctx, off, sql)
				if !sOn.Equal(sOff) {
					t.Fatalf("%s: schema with pushdown %s, without %s", sql, sOn, sOff)
				}
				if len(rowsOn) != 1 || len(rowsOff) != 1 || !slices.Equal(rowsOn[0], q.want) || !slices.Equal(rowsOff[0], q.want) {
					t.Fatalf("%s:\n pushdown %v\n scan     %v\n want     %v", sql, rowsOn, rowsOff, q.want)
				}
				for _, fld := range sOn.Fields() {
					if !fld.Nullable || !arrow.TypeEqual(fld.Type, &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}) {
						t.Fatalf("%s: field %s", sql, fld)
					}
				}
			}
		}
		// The bounds in the other operand order, LIMIT 0, a partition without records.
		swapped := fmt.Sprintf("SELECT min(timestamp), max(timestamp) FROM messages WHERE %s > timestamp AND 'general' = channel_id AND %s <= timestamp",
			lit(mmYear.End), lit(mmYear.Start))
		lo, hi := bruteMinMax(general, mmYear)
		oLo, oHi := bruteMinMax(f.of("other"), mmYear)
		for _, c := range []struct {
			sql  string
			want [][]any
		}{
			{swapped, [][]any{{lo, hi}}},
			{mmSQL("min(timestamp)", "general", mmYear, " LIMIT 0"), nil},
			{mmSQL("min(timestamp), max(timestamp)", "nobody", mmYear, ""), [][]any{{nil, nil}}},
			{mmSQL("min(timestamp), max(timestamp)", "other", mmYear, ""), [][]any{{oLo, oHi}}},
		} {
			_, rowsOn := result(t, ctx, on, c.sql)
			_, rowsOff := result(t, ctx, off, c.sql)
			if fmt.Sprint(rowsOn) != fmt.Sprint(rowsOff) {
				t.Fatalf("%s: pushdown %v, scan %v", c.sql, rowsOn, rowsOff)
			}
			if fmt.Sprint(rowsOn) != fmt.Sprint(c.want) {
				t.Fatalf("%s: %v, want %v", c.sql, rowsOn, c.want)
			}
		}
		// COUNT(*) mixed with MIN/MAX is rewritten too (one partial state per bucket) and
		// agrees with pushdown off.
		mixed := mmSQL("count(*), min(timestamp)", "general", mmYear, "")
		_, rowsOn := result(t, ctx, on, mixed)
		_, rowsOff := result(t, ctx, off, mixed)
		if fmt.Sprint(rowsOn) != fmt.Sprint(rowsOff) {
			t.Fatalf("%s: pushdown %v, scan %v", mixed, rowsOn, rowsOff)
		}
		for _, c := range []struct {
			e    *query.Engine
			sql  string
			kind string
		}{
			{on, mmSQL("min(timestamp)", "general", mmYear, ""), "StoreAggregate [min(timestamp)]"},
			{off, mmSQL("min(timestamp)", "general", mmYear, ""), "Pushdown: a pushdown candidate, but pushdown is disabled: every fragment reads rows"},
			{on, mixed, "StoreAggregate [count(*), min(timestamp)]"},
		} {
			_, rows := result(t, ctx, c.e, "EXPLAIN "+c.sql)
			if !strings.Contains(fmt.Sprint(rows), c.kind) {
				t.Fatalf("EXPLAIN %s:\n%v\nwant %q", c.sql, rows, c.kind)
			}
		}
	}
}

// TestMinMaxEarlyStop proves the early stop through the engine: MIN over a year of month
// buckets whose first month has data asks one bucket with one statement (the scan path reads
// all twelve); MAX over a range ending in the archived August asks that bucket only; no
// record is read by either.
func TestMinMaxEarlyStop(t *testing.T) {
	f := minMaxFixture(t)
	on, off, _ := f.engines(t, 4, false)
	for _, c := range []struct {
		name                string
		sql                 string
		minMax, statements  int64
		archiveBytesAllowed bool
	}{
		{"MIN over the year", mmSQL("min(timestamp)", "general", mmYear, ""), 1, 1, false},
		{"MAX over the year", mmSQL("max(timestamp)", "general", mmYear, ""), 1, 1, false},
		{"MIN and MAX over the year", mmSQL("min(timestamp), max(timestamp)", "general", mmYear, ""), 2, 2, false},
		{"MAX ending in archived August", mmSQL("max(timestamp)", "general",
			routing.TimeRange{Start: mmYear.Start, End: time.Date(2025, 9, 1, 0, 0, 0, 0, time.UTC)}, ""), 1, 1, true},
	} {
		f.probe.reset()
		stats := &routing.ReadStats{}
		result(t, routing.WithReadStats(context.Background(), stats), on, c.sql)
		if f.probe.minMax.Load() != c.minMax || f.probe.reads.Load() != 0 || f.probe.counts.Load() != 0 ||
			stats.HotStatements.Load() != c.statements || stats.HotRows.Load() != 0 || stats.ArchiveRows.Load() != 0 {
			t.Fatalf("%s: %d bucket probes, %d reads, %d counts, %d statements, %d hot rows, %d archive rows; want %d probes and %d statements",
				c.name, f.probe.minMax.Load(), f.probe.reads.Load(), f.probe.counts.Load(), stats.HotStatements.Load(),
				stats.HotRows.Load(), stats.ArchiveRows.Load(), c.minMax, c.statements)
		}
		if !c.archiveBytesAllowed && stats.BytesRead.Load() != 0 {
			t.Fatalf("%s: read %d archive bytes", c.name, stats.BytesRead.Load())
		}
	}
	// The scan path, for contrast, reads every bucket of the year.
	f.probe.reset()
	result(t, context.Background(), off, mmSQL("min(timestamp)", "general", mmYear, ""))
	if n := f.probe.reads.Load(); n != 12 {
		t.Fatalf("scan path made %d bucket reads, want 12", n)
	}
}

// TestMinMaxTelemetry checks the span and metrics of a pushed-down MIN/MAX: spans "MIN
// messages", "MAX messages" and "MINMAX messages" with pulpitum.aggregate and the probe
// counts, and the pushdown counter labelled by source and outcome.
func TestMinMaxTelemetry(t *testing.T) {
	f := minMaxFixture(t)
	spans := tracetest.NewSpanRecorder()
	otel.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans)))
	reader := sdkmetric.NewManualReader()
	otel.SetMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)))
	t.Cleanup(func() {
		otel.SetTracerProvider(tracenoop.NewTracerProvider())
		otel.SetMeterProvider(metricnoop.NewMeterProvider())
	})
	on, _, _ := f.engines(t, 4, false)
	ctx := context.Background()
	result(t, ctx, on, mmSQL("min(timestamp)", "general", mmYear, ""))
	result(t, ctx, on, mmSQL("max(timestamp)", "general", routing.TimeRange{Start: mmYear.Start, End: time.Date(2025, 9, 1, 0, 0, 0, 0, time.UTC)}, ""))
	result(t, ctx, on, mmSQL("min(timestamp), max(timestamp)", "general", mmYear, ""))

	want := map[string]struct {
		agg    string
		probed int64
	}{"MIN messages": {"min", 1}, "MAX messages": {"max", 1}, "MINMAX messages": {"minmax", 2}}
	seen := map[string]bool{}
	for _, s := range spans.Ended() {
		w, ok := want[s.Name()]
		if !ok {
			continue
		}
		seen[s.Name()] = true
		attrs := map[attribute.Key]attribute.Value{}
		for _, kv := range s.Attributes() {
			attrs[kv.Key] = kv.Value
		}
		if attrs["pulpitum.aggregate"].AsString() != w.agg || attrs["pulpitum.sql.mode"].AsString() != "routed_aggregate" ||
			attrs["pulpitum.query.buckets_probed"].AsInt64() != w.probed || attrs["db.collection.name"].AsString() != "messages" {
			t.Fatalf("span %s attributes %v", s.Name(), s.Attributes())
		}
		for _, kv := range s.Attributes() {
			if strings.Contains(kv.Value.Emit(), "general") {
				t.Fatalf("span %s leaks the partition value in %s", s.Name(), kv.Key)
			}
		}
	}
	if len(seen) != len(want) {
		t.Fatalf("spans seen %v, want %v", seen, want)
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
				got[src.AsString()+"/"+out.AsString()] += dp.Value
			}
		}
	}
	// MIN: January (hot); MAX: August (archive); both: January and December (hot).
	if got["hot/success"] != 2 || got["archive/success"] != 1 || len(got) != 2 {
		t.Fatalf("pushdown counter = %v", got)
	}
}
