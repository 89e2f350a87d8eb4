package load

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/flightsrv/flightsrv/internal/tablecheck"
	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/routing/sqlite"
)

type collect struct{ recs []routing.Record }

func (c *collect) Append(_ context.Context, recs []routing.Record) (int, error) {
	c.recs = append(c.recs, recs...)
	return len(recs), nil
}

func writeFile(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCSV(t *testing.T) {
	p := writeFile(t, "f.csv", "when,airport,delay,note\n"+
		"2001-01-01 05:57:00,ORD,-1,\"a, b\"\n"+
		"2001-02-03T04:05:06.789+02:00,SFO,3,x\n")
	var c collect
	st, err := File(context.Background(), &c, p, Mapping{Partition: "airport", Time: "when"})
	if err != nil {
		t.Fatal(err)
	}
	if st.Read != 2 || st.Appended != 2 || len(c.recs) != 2 {
		t.Fatalf("stats %+v, %d records", st, len(c.recs))
	}
	r0, r1 := c.recs[0], c.recs[1]
	if string(r0.PartitionKey) != "ORD" || !r0.EventTime.Equal(time.Date(2001, 1, 1, 5, 57, 0, 0, time.UTC)) || string(r0.SortKey) != "0000000000" {
		t.Fatalf("record 0: %s %s %s", r0.PartitionKey, r0.EventTime, r0.SortKey)
	}
	if got := string(r0.Value); got != `{"delay":"-1","note":"a, b"}` {
		t.Fatalf("value 0: %s", got)
	}
	if !r1.EventTime.Equal(time.Date(2001, 2, 3, 2, 5, 6, 789000000, time.UTC)) || string(r1.SortKey) != "0000000001" {
		t.Fatalf("record 1: %s %s", r1.EventTime, r1.SortKey)
	}
}

func TestParquetSample(t *testing.T) {
	var c collect
	st, err := File(context.Background(), &c, filepath.Join("..", "..", "testdata", "flights-sample.parquet"),
		Mapping{Partition: "origin", Time: "date", ID: "id", Value: []string{"delay", "distance", "destination"}})
	if err != nil {
		t.Fatal(err)
	}
	if st.Appended != 300000 {
		t.Fatalf("appended %d", st.Appended)
	}
	// The sample's first row is the source file's row 0: a zone-less wall-clock time read as UTC.
	r := c.recs[0]
	if string(r.SortKey) != "0000000000" || r.EventTime.Location() != time.UTC || !strings.HasPrefix(string(r.Value), `{"delay":`) {
		t.Fatalf("first record %s %s %s", r.SortKey, r.EventTime, r.Value)
	}
}

func TestMappingErrors(t *testing.T) {
	p := writeFile(t, "f.csv", "when,airport\n2001-01-01,ORD\n")
	ctx := context.Background()
	for name, m := range map[string]Mapping{
		"missing partition column": {Partition: "nope", Time: "when"},
		"missing time column":      {Partition: "airport", Time: "nope"},
		"missing id column":        {Partition: "airport", Time: "when", ID: "nope"},
		"missing value column":     {Partition: "airport", Time: "when", Value: []string{"nope"}},
		"no partition":             {Time: "when"},
	} {
		if _, err := File(ctx, &collect{}, p, m); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := File(ctx, &collect{}, writeFile(t, "f.txt", "x"), Mapping{Partition: "a", Time: "b"}); err == nil {
		t.Error("unsupported extension accepted")
	}
	bad := writeFile(t, "bad.csv", "when,airport\nyesterday,ORD\n")
	if _, err := File(ctx, &collect{}, bad, Mapping{Partition: "airport", Time: "when"}); err == nil || strings.Contains(err.Error(), "ORD") {
		t.Errorf("bad time: %v", err)
	}
}

// TestBadRowWritesNothing: with a real durable table as the appender (the file is one
// all-or-nothing request), a record outside the writable window in the last row stores
// nothing of the file, and the error names the row.
func TestBadRowWritesNothing(t *testing.T) {
	ctx := context.Background()
	tbl := sqliteTable(t, routing.TableDef{Name: "t", TableID: "t", PartitionColumn: "p", Strategy: routing.CalendarMonthUTC, WritableBuckets: 3},
		time.Date(2001, 3, 15, 0, 0, 0, 0, time.UTC))
	var body strings.Builder
	body.WriteString("when,airport\n")
	for i := range BatchSize + 10 { // two batches: the bad row is in the second
		fmt.Fprintf(&body, "2001-02-%02d 10:00:%02d,ORD\n", 1+i%28, i%60)
	}
	body.WriteString("1990-01-01 00:00:00,ORD\n")
	p := writeFile(t, "f.csv", body.String())
	_, err := File(ctx, tbl, p, Mapping{Partition: "airport", Time: "when"})
	if !errors.Is(err, routing.ErrOutsideWriteWindow) || !strings.Contains(err.Error(), "nothing was written") || !strings.Contains(err.Error(), fmt.Sprintf("record %d", BatchSize+10)) {
		t.Fatalf("error %v", err)
	}
	all := routing.TimeRange{Start: time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC), End: time.Date(2002, 1, 1, 0, 0, 0, 0, time.UTC)}
	if recs, err := tbl.QueryPage(ctx, routing.Query{PartitionKey: []byte("ORD"), Range: all, Limit: 1}); err != nil || len(recs.Records) != 0 {
		t.Fatalf("%d records written (%v)", len(recs.Records), err)
	}
	// The corrected file loads completely.
	good := writeFile(t, "g.csv", strings.TrimSuffix(body.String(), "1990-01-01 00:00:00,ORD\n"))
	stats, err := File(ctx, tbl, good, Mapping{Partition: "airport", Time: "when"})
	if err != nil || stats.Appended != BatchSize+10 {
		t.Fatalf("corrected load: %+v %v", stats, err)
	}
}

// writeBinaryParquet writes a Parquet file whose partition and id columns are BYTE_ARRAY
// without a UTF8 annotation (Arrow binary), as tools that do not annotate strings write them.
func writeBinaryParquet(t *testing.T, parts, ids [][]byte, times []time.Time) string {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "p", Type: arrow.BinaryTypes.Binary},
		{Name: "rid", Type: arrow.BinaryTypes.Binary},
		{Name: "at", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}},
		{Name: "price", Type: arrow.PrimitiveTypes.Int64},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for i := range parts {
		b.Field(0).(*array.BinaryBuilder).Append(parts[i])
		b.Field(1).(*array.BinaryBuilder).Append(ids[i])
		b.Field(2).(*array.TimestampBuilder).Append(arrow.Timestamp(times[i].UnixMicro()))
		b.Field(3).(*array.Int64Builder).Append(int64(100 + i))
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	path := filepath.Join(t.TempDir(), "binary.parquet")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := pqarrow.NewFileWriter(schema, f, parquet.NewWriterProperties(), pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestBinaryPartitionAndID: binary partition and id columns are stored as their UTF-8 bytes
// (not the base64 text Arrow renders them as), so the partition is found by its text; invalid
// UTF-8 is refused with the row and column named and nothing written.
func TestBinaryPartitionAndID(t *testing.T) {
	ctx := context.Background()
	day := time.Date(2024, 5, 6, 9, 30, 0, 0, time.UTC)
	tbl := sqliteTable(t, routing.TableDef{Name: "quotes", TableID: "quotes", PartitionColumn: "p", Strategy: routing.CalendarDayUTC, WritableBuckets: 3}, day)
	parts := [][]byte{[]byte("MSFT"), []byte("AAPL"), []byte("MSFT"), []byte("Zürich")}
	ids := [][]byte{[]byte("q1"), []byte("q2"), []byte("q3"), []byte("q4")}
	times := []time.Time{day, day.Add(time.Second), day.Add(2 * time.Second), day.Add(3 * time.Second)}
	var progress []Stats
	stats, err := File(ctx, tbl, writeBinaryParquet(t, parts, ids, times),
		Mapping{Partition: "p", Time: "at", ID: "rid", Progress: func(s Stats) { progress = append(progress, s) }})
	if err != nil || stats.Appended != 4 {
		t.Fatalf("load = %+v, %v", stats, err)
	}
	if len(progress) != 1 || progress[0].Read != 4 {
		t.Fatalf("progress calls = %+v", progress)
	}
	r := routing.TimeRange{Start: day.Add(-time.Hour), End: day.Add(time.Hour)}
	for pk, want := range map[string]uint64{"MSFT": 2, "AAPL": 1, "Zürich": 1, "TVNGVA==": 0} {
		n, _, _, err := tablecheck.Count(ctx, tbl, []byte(pk), r)
		if err != nil || n != want {
			t.Fatalf("count of %q = %d, %v; want %d", pk, n, err, want)
		}
	}
	page, err := tbl.QueryPage(ctx, routing.Query{PartitionKey: []byte("MSFT"), Range: r, Limit: 10})
	if err != nil || len(page.Records) != 2 || string(page.Records[0].SortKey) != "q1" || string(page.Records[1].SortKey) != "q3" ||
		string(page.Records[1].Value) != `{"price":102}` {
		t.Fatalf("MSFT records = %+v, %v", page.Records, err)
	}

	// Invalid UTF-8 in the id of the third row: refused, nothing written.
	bad := writeBinaryParquet(t, [][]byte{[]byte("IBM"), []byte("IBM"), []byte("IBM")},
		[][]byte{[]byte("a"), []byte("b"), {0xff, 0xfe}}, times[:3])
	_, err = File(ctx, tbl, bad, Mapping{Partition: "p", Time: "at", ID: "rid"})
	if !errors.Is(err, ErrInvalidUTF8) || !strings.Contains(err.Error(), `row 2: id column "rid"`) || !strings.Contains(err.Error(), "nothing was written") {
		t.Fatalf("invalid UTF-8 id: %v", err)
	}
	if n, _, _, err := tablecheck.Count(ctx, tbl, []byte("IBM"), r); err != nil || n != 0 {
		t.Fatalf("IBM count = %d, %v", n, err)
	}
}

// sqliteTable returns def as a durable table over a new migrated SQLite store whose
// application clock stands at now; the store is closed when the test ends.
func sqliteTable(t *testing.T, def routing.TableDef, now time.Time) *routing.DurableTable {
	t.Helper()
	tbl, _ := sqliteTableAt(t, def, now)
	return tbl
}

// sqliteTableAt is sqliteTable, also returning the database file's path.
func sqliteTableAt(t *testing.T, def routing.TableDef, now time.Time) (*routing.DurableTable, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "hot.db")
	st, err := sqlite.Open(context.Background(), sqlite.Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	if err := st.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	tbl, err := routing.NewDurableTable(def, st, nil, routing.Options{Clock: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	return tbl, path
}
