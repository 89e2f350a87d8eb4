package query_test

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"gocloud.dev/blob"

	"github.com/flightsrv/flightsrv/archive"
	"github.com/flightsrv/flightsrv/query"
	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/routing/sqlite"
)

// BenchmarkCountStatement measures what a client pays per COUNT(*) statement on the engine:
// Prepare (GetFlightInfo) then Execute (DoGet) of the same SQL text, over one hot day bucket
// holding 100 records, pushdown on.
func BenchmarkCountStatement(b *testing.B) {
	ctx := context.Background()
	day := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	tbl := benchHotTable(b, day)
	recs := make([]routing.Record, 100)
	for i := range recs {
		recs[i] = routing.Record{PartitionKey: []byte("general"), EventTime: day.Add(time.Duration(i) * time.Minute), SortKey: []byte{byte(i)}, Value: []byte("v")}
	}
	if _, err := tbl.Append(ctx, recs); err != nil {
		b.Fatal(err)
	}
	eng, err := query.New([]*routing.DurableTable{tbl}, query.Options{Pushdown: true})
	if err != nil {
		b.Fatal(err)
	}
	const sql = "SELECT COUNT(*) FROM messages WHERE channel_id = 'general' AND timestamp >= TIMESTAMPTZ '2025-03-01T00:00:00Z' AND timestamp < TIMESTAMPTZ '2025-03-02T00:00:00Z'"
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := eng.Prepare(ctx, sql, nil); err != nil {
			b.Fatal(err)
		}
		rdr, err := eng.Execute(ctx, sql, nil, nil)
		if err != nil {
			b.Fatal(err)
		}
		rdr.Next()
		if n := rdr.RecordBatch().Column(0).ValueStr(0); n != "100" {
			b.Fatalf("count %s", n)
		}
		rdr.Release()
	}
}

// benchHotTable is an empty table "messages" of day buckets over a hot SQLite store, its clock
// at day.
func benchHotTable(b *testing.B, day time.Time) *routing.DurableTable {
	st := openHot(b, b.TempDir())
	def := routing.TableDef{Name: "messages", TableID: "m", PartitionColumn: "channel_id", Strategy: routing.CalendarDayUTC, WritableBuckets: 2}
	tbl, err := routing.NewDurableTable(def, st, nil, routing.Options{Clock: func() time.Time { return day }})
	if err != nil {
		b.Fatal(err)
	}
	return tbl
}

// BenchmarkCountArchived measures a pushed-down COUNT(*) over six archived month buckets on
// the engine, as the DoGet of a repeated statement pays it: Execute of the same SQL text
// (the statement cache holds it) with every bucket answered by its cached manifest's record
// count, pushdown on. 600 records of one partition, archived by the real archiver to
// file://.
func BenchmarkCountArchived(b *testing.B) {
	eng := archivedEngine(b)
	ctx := context.Background()
	count := func() {
		rdr, err := eng.Execute(ctx, archivedCountSQL, nil, nil)
		if err != nil {
			b.Fatal(err)
		}
		checkArchivedCount(b, rdr)
	}
	count() // routes and manifests cached
	b.ReportAllocs()
	for b.Loop() {
		count()
	}
}

// BenchmarkCountArchivedFlight measures the pushed-down COUNT(*) of BenchmarkCountArchived as
// a Flight SQL client pays it for a repeated statement: GetFlightInfo plans it
// (Engine.Fragments, one endpoint) and DoGet serves its one fragment
// (Engine.ExecuteFragment: the ticket's planning instant and pins, then Engine.Execute).
func BenchmarkCountArchivedFlight(b *testing.B) {
	eng := archivedEngine(b)
	ctx := context.Background()
	count := func() {
		frags, err := eng.Fragments(ctx, archivedCountSQL, nil, nil, false)
		if err != nil {
			b.Fatal(err)
		}
		if len(frags) != 1 {
			b.Fatalf("%d fragments", len(frags))
		}
		rdr, err := eng.ExecuteFragment(ctx, archivedCountSQL, nil, nil, frags[0].Spec)
		if err != nil {
			b.Fatal(err)
		}
		checkArchivedCount(b, rdr)
	}
	count() // statement compiled, routes and manifests cached
	b.ReportAllocs()
	for b.Loop() {
		count()
	}
}

// archivedCountSQL counts BenchmarkCountArchived's 600 records.
const archivedCountSQL = "SELECT COUNT(*) FROM flights WHERE origin = 'ORD' AND timestamp >= TIMESTAMPTZ '2001-01-01T00:00:00Z' AND timestamp < TIMESTAMPTZ '2001-07-01T00:00:00Z'"

// checkArchivedCount reads rdr's one row, archivedCountSQL's answer, and releases it.
func checkArchivedCount(b *testing.B, rdr array.RecordReader) {
	b.Helper()
	defer rdr.Release()
	if !rdr.Next() {
		b.Fatalf("no row: %v", rdr.Err())
	}
	if n := rdr.RecordBatch().Column(0).ValueStr(0); n != "600" {
		b.Fatalf("count %s, want 600", n)
	}
}

// archivedEngine returns an engine, pushdown on, over a flights table of month buckets
// whose first six months (600 records of partition ORD) the real archiver archived to
// file:// under b's temporary directory.
func archivedEngine(b *testing.B) *query.Engine {
	b.Helper()
	ctx := context.Background()
	dir := b.TempDir()
	st := openHot(b, dir)
	jan := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return jan.AddDate(0, 6, 10) }
	def := routing.TableDef{Name: "flights", TableID: "f", PartitionColumn: "origin", Strategy: routing.CalendarMonthUTC, WritableBuckets: 12}
	tbl, err := routing.NewDurableTable(def, st, nil, routing.Options{Clock: clock})
	if err != nil {
		b.Fatal(err)
	}
	recs := make([]routing.Record, 600)
	for i := range recs {
		recs[i] = routing.Record{PartitionKey: []byte("ORD"), EventTime: jan.Add(time.Duration(i) * 7 * time.Hour), SortKey: fmt.Appendf(nil, "%05d", i), Value: []byte(`{"v":1}`)}
	}
	if _, err := tbl.Append(ctx, recs); err != nil {
		b.Fatal(err)
	}
	bkt, err := blob.OpenBucket(ctx, "file://"+dir+"?metadata=skip")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = bkt.Close() })
	w, err := archive.NewWriter(bkt, archive.WriterOptions{Prefix: "archives"})
	if err != nil {
		b.Fatal(err)
	}
	rd, err := archive.NewReader(bkt, archive.ReaderOptions{})
	if err != nil {
		b.Fatal(err)
	}
	a, err := archive.NewArchiver(st, w, st, archive.ArchiverOptions{ScanLimit: 100, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	if sum, err := a.RunOnce(ctx, jan.AddDate(0, 6, 0)); err != nil || sum.Published != 6 {
		b.Fatalf("archived %+v: %v", sum, err)
	}
	tbl, err = routing.NewDurableTable(def, st, rd, routing.Options{Clock: clock, Cache: routing.NewRouteCache(64)})
	if err != nil {
		b.Fatal(err)
	}
	eng, err := query.New([]*routing.DurableTable{tbl}, query.Options{Pushdown: true})
	if err != nil {
		b.Fatal(err)
	}
	return eng
}

// openHot opens a migrated SQLite store in dir, closed when b ends.
func openHot(b *testing.B, dir string) *sqlite.Store {
	b.Helper()
	st, err := sqlite.Open(context.Background(), sqlite.Config{Path: filepath.Join(dir, "hot.db")})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = st.Close() })
	if err := st.Migrate(context.Background()); err != nil {
		b.Fatal(err)
	}
	return st
}
