package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"gocloud.dev/blob"
	_ "gocloud.dev/blob/fileblob"

	"github.com/flightsrv/flightsrv/archive"
	"github.com/flightsrv/flightsrv/internal/load"
	"github.com/flightsrv/flightsrv/internal/testsupport/pgtest"
	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/routing/cockroach"
	"github.com/flightsrv/flightsrv/scan/ledger"
	"github.com/flightsrv/flightsrv/server"
)

// TestMain makes the engine's recycling allocator poison what it recycles (a batch used after
// its last Release then carries garbage to the clients, which the tests' comparisons catch),
// and runs the tests against a throwaway PostgreSQL cluster.
func TestMain(m *testing.M) {
	ledger.DefaultPool.Poison = true
	pgtest.Main(m)
}

// flightsTable is the routed table of the tests: the demo's definition.
var flightsTable = routing.TableDef{
	Name: "flights", TableID: "flightsrv.e2e.flights", PartitionColumn: "origin",
	Strategy: routing.CalendarMonthUTC, WritableBuckets: 12,
}

// loadedAirports are the partitions loaded into PostgreSQL (a subset of the sample keeps the
// test fast): a hub, a mid-size and a small airport.
var loadedAirports = []string{"ORD", "SFO", "BOS"}

// row is one flight of the sample, read independently of flightsrv's loader.
type row struct {
	origin   string
	at       time.Time
	id       string
	delay    int64
	distance int64
	dest     string
}

// value is the JSON the loader must have stored for f.
func (f row) value() string {
	return fmt.Sprintf(`{"delay":%d,"distance":%d,"destination":%q}`, f.delay, f.distance, f.dest)
}

func samplePath(t testing.TB) string {
	_, self, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(self), "..", "testdata", "flights-sample.parquet")
}

// readSample reads every row of the sample with arrow-go's Parquet reader, sorted by
// (origin, time, id).
func readSample(t testing.TB) []row {
	t.Helper()
	f, err := file.OpenParquetFile(samplePath(t), false)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fr, err := pqarrow.NewFileReader(f, pqarrow.ArrowReadProperties{BatchSize: 1 << 16}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Release()
	tr := array.NewTableReader(tbl, 1<<16)
	defer tr.Release()
	col := func(name string) int { return tbl.Schema().FieldIndices(name)[0] }
	var out []row
	for tr.Next() {
		rec := tr.RecordBatch()
		dates := rec.Column(col("date")).(*array.Timestamp)
		unit := dates.DataType().(*arrow.TimestampType).Unit
		delay := rec.Column(col("delay")).(*array.Int64)
		dist := rec.Column(col("distance")).(*array.Int64)
		orig := rec.Column(col("origin"))
		dest := rec.Column(col("destination"))
		ids := rec.Column(col("id"))
		for i := range int(rec.NumRows()) {
			out = append(out, row{
				origin: orig.ValueStr(i), at: dates.Value(i).ToTime(unit).UTC(), id: ids.ValueStr(i),
				delay: delay.Value(i), distance: dist.Value(i), dest: dest.ValueStr(i),
			})
		}
	}
	slices.SortFunc(out, func(a, b row) int {
		if c := strings.Compare(a.origin, b.origin); c != 0 {
			return c
		}
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return strings.Compare(a.id, b.id)
	})
	return out
}

// expected returns the sample's flights of origin in [from, to), in (time, id) order.
func expected(all []row, origin string, from, to time.Time) []row {
	var out []row
	for _, f := range all {
		if f.origin == origin && !f.at.Before(from) && f.at.Before(to) {
			out = append(out, f)
		}
	}
	return out
}

// onlyAirports forwards the records of some partitions to the table.
type onlyAirports struct {
	t    *routing.DurableTable
	keep map[string]bool
}

func (o onlyAirports) Append(ctx context.Context, recs []routing.Record) (int, error) {
	var kept []routing.Record
	for _, r := range recs {
		if o.keep[string(r.PartitionKey)] {
			kept = append(kept, r)
		}
	}
	if len(kept) == 0 {
		return 0, nil
	}
	return o.t.Append(ctx, kept)
}

// env is one loaded deployment: PostgreSQL hot store, archive directory, and two servers on
// the same data, with pushdown on and off.
type env struct {
	url      string // the PostgreSQL database
	store    *cockroach.Store
	bucket   *blob.Bucket
	dir      string // the archive directory
	reader   *archive.Reader
	on, off  *server.Server
	alloc    *memory.CheckedAllocator
	sample   []row
	archived time.Time // buckets ending at or before this are archived
}

var (
	asOf        = time.Date(2001, 7, 31, 0, 0, 0, 0, time.UTC)
	jsonCutoff  = time.Date(2001, 2, 1, 0, 0, 0, 0, time.UTC) // January archived as JSON
	cutoff      = time.Date(2001, 4, 1, 0, 0, 0, 0, time.UTC) // February and March as Parquet
	archivingAt = time.Date(2001, 4, 1, 0, 0, 0, 0, time.UTC) // ORD's April bucket is left archiving
)

func newEnv(t *testing.T) *env {
	t.Helper()
	ctx := context.Background()
	st, url := pgtest.Start(t).NewStore(t)
	table, err := routing.NewDurableTable(flightsTable, st, nil, routing.Options{Clock: func() time.Time { return asOf }})
	if err != nil {
		t.Fatal(err)
	}
	keep := map[string]bool{}
	for _, a := range loadedAirports {
		keep[a] = true
	}
	stats, err := load.File(ctx, onlyAirports{table, keep}, samplePath(t),
		load.Mapping{Partition: "origin", Time: "date", ID: "id", Value: []string{"delay", "distance", "destination"}})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{url: url, store: st, sample: readSample(t), archived: cutoff, alloc: memory.NewCheckedAllocator(memory.NewGoAllocator())}
	var want int64
	for _, f := range e.sample {
		if keep[f.origin] {
			want++
		}
	}
	if stats.Appended != want {
		t.Fatalf("loaded %d records, the sample has %d for %v", stats.Appended, want, loadedAirports)
	}

	dir := t.TempDir()
	e.dir = dir
	e.bucket, err = blob.OpenBucket(ctx, "file://"+filepath.ToSlash(dir))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.bucket.Close() })
	for _, step := range []struct {
		format archive.Format
		before time.Time
	}{{archive.FormatJSON, jsonCutoff}, {archive.FormatParquet, cutoff}} {
		w, err := archive.NewWriter(e.bucket, archive.WriterOptions{Prefix: "archives", Format: step.format, RowGroupRows: 256})
		if err != nil {
			t.Fatal(err)
		}
		a, err := archive.NewArchiver(st, w, st, archive.ArchiverOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.RunOnce(ctx, step.before); err != nil {
			t.Fatal(err)
		}
	}
	// Leave one bucket in the archiving state: reads of it still go to the hot store.
	april := routing.BucketFor(flightsTable.TableID, []byte("ORD"), flightsTable.Strategy, archivingAt)
	if s, err := st.ClaimArchive(ctx, april, time.Hour); err != nil || s == nil {
		t.Fatalf("claim ORD April: %v %v", s, err)
	}
	e.reader, err = archive.NewReader(e.bucket, archive.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, pushdown := range []bool{true, false} {
		srv, err := server.Start(ctx, server.Config{
			Listen: "127.0.0.1:0", Tables: []routing.TableDef{flightsTable}, Hot: st, Archive: e.reader,
			Pushdown: pushdown, Alloc: e.alloc,
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(srv.Close)
		if pushdown {
			e.on = srv
		} else {
			e.off = srv
		}
	}
	return e
}
