package load

import (
	"context"
	"database/sql"
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
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/jackc/pgx/v5"
	_ "modernc.org/sqlite"

	"github.com/flightsrv/flightsrv/internal/testsupport/pgtest"
	"github.com/flightsrv/flightsrv/routing"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// samplePart is one part file of the sample and, per row, its origin, month and id (read
// from the Parquet file by the test, not through the loader).
type samplePart struct {
	path    string
	origins []string
	months  []string // "2001-02"
	ids     []string
}

// splitSample writes the first parts*rows rows of testdata/flights-sample.parquet (ordered by
// date) into parts Parquet files of rows rows each in a temporary directory.
func splitSample(t *testing.T, parts, rows int) []samplePart {
	t.Helper()
	f, err := file.OpenParquetFile(filepath.Join("..", "..", "testdata", "flights-sample.parquet"), false)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fr, err := pqarrow.NewFileReader(f, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Release()
	dir := t.TempDir()
	out := make([]samplePart, parts)
	writers := make([]*pqarrow.FileWriter, parts)
	for p := range parts {
		out[p].path = filepath.Join(dir, fmt.Sprintf("part-%d.parquet", p))
		w, err := os.Create(out[p].path)
		if err != nil {
			t.Fatal(err)
		}
		if writers[p], err = pqarrow.NewFileWriter(tbl.Schema(), w, parquet.NewWriterProperties(), pqarrow.DefaultWriterProps()); err != nil {
			t.Fatal(err)
		}
	}
	tr := array.NewTableReader(tbl, 8192)
	defer tr.Release()
	g := 0 // the sample's row number of the batch's first row
	for tr.Next() && g < parts*rows {
		rec := tr.RecordBatch()
		sch := rec.Schema()
		date := rec.Column(sch.FieldIndices("date")[0]).(*array.Timestamp)
		origin := rec.Column(sch.FieldIndices("origin")[0]).(*array.String)
		id := rec.Column(sch.FieldIndices("id")[0]).(*array.String)
		for lo := 0; lo < int(rec.NumRows()) && g+lo < parts*rows; {
			p := (g + lo) / rows
			hi := min(int(rec.NumRows()), (p+1)*rows-g)
			slice := rec.NewSlice(int64(lo), int64(hi))
			err := writers[p].Write(slice)
			slice.Release()
			if err != nil {
				t.Fatal(err)
			}
			for i := lo; i < hi; i++ {
				out[p].origins = append(out[p].origins, origin.Value(i))
				out[p].months = append(out[p].months, date.Value(i).ToTime(arrow.Microsecond).Format("2006-01"))
				out[p].ids = append(out[p].ids, id.Value(i))
			}
			lo = hi
		}
		g += int(rec.NumRows())
	}
	for _, w := range writers {
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// resumeStore is a hot store for TestResumableLoad with a direct SQL handle on its records.
type resumeStore struct {
	table *routing.DurableTable
	count func() int64                                       // the table's records, counted by SQL
	del   func(origin, bucketKey string, ids []string) int64 // deletes records by SQL
}

var resumeDef = routing.TableDef{Name: "flights", TableID: "flights", PartitionColumn: "origin", Strategy: routing.CalendarMonthUTC, WritableBuckets: 12}

var resumeAsOf = time.Date(2001, 7, 31, 0, 0, 0, 0, time.UTC)

func sqliteResumeStore(t *testing.T) resumeStore {
	tbl, path := sqliteTableAt(t, resumeDef, resumeAsOf)
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return resumeStore{
		table: tbl,
		count: func() int64 {
			var n int64
			if err := db.QueryRow(`SELECT count(*) FROM pulpitum_v4_records WHERE table_id = ?`, resumeDef.TableID).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		},
		del: func(origin, bucketKey string, ids []string) int64 {
			var n int64
			for _, id := range ids {
				res, err := db.Exec(`DELETE FROM pulpitum_v4_records WHERE table_id = ? AND partition_key = ? AND bucket_key = ? AND sort_key = ?`,
					resumeDef.TableID, []byte(origin), bucketKey, []byte(id))
				if err != nil {
					t.Fatal(err)
				}
				k, _ := res.RowsAffected()
				n += k
			}
			return n
		},
	}
}

func postgresResumeStore(t *testing.T) resumeStore {
	ctx := context.Background()
	st, url := pgtest.Start(t).NewStore(t)
	tbl, err := routing.NewDurableTable(resumeDef, st, nil, routing.Options{Clock: func() time.Time { return resumeAsOf }})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(ctx) })
	return resumeStore{
		table: tbl,
		count: func() int64 {
			var n int64
			if err := conn.QueryRow(ctx, `SELECT count(*) FROM pulpitum_v4_records WHERE table_id = $1`, resumeDef.TableID).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		},
		del: func(origin, bucketKey string, ids []string) int64 {
			bs := make([][]byte, len(ids))
			for i, id := range ids {
				bs[i] = []byte(id)
			}
			tag, err := conn.Exec(ctx, `DELETE FROM pulpitum_v4_records WHERE table_id = $1 AND partition_key = $2 AND bucket_key = $3 AND sort_key = ANY($4)`,
				resumeDef.TableID, []byte(origin), bucketKey, bs)
			if err != nil {
				t.Fatal(err)
			}
			return tag.RowsAffected()
		},
	}
}

// TestResumableLoad loads four parts of the sample into SQLite and PostgreSQL, each file one
// request; loads them again (every one skipped, nothing written); then deletes some of one
// part's records in one bucket (refused as partly loaded, naming that bucket and the part's
// first row in it, nothing written) and another part's first record (the load finds a stored
// record, and the refusal names the bucket of row 0). Counts are SQL counts of the store's
// records against the parts' row counts.
func TestResumableLoad(t *testing.T) {
	const parts, rows = 4, 5000
	files := splitSample(t, parts, rows)
	m := Mapping{Partition: "origin", Time: "date", ID: "id"}
	for name, open := range map[string]func(*testing.T) resumeStore{"sqlite": sqliteResumeStore, "postgres": postgresResumeStore} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := open(t)
			for i, f := range files {
				st, out, err := Resumable(ctx, s.table, f.path, m)
				if err != nil || out != Loaded || st.Appended != rows {
					t.Fatalf("first load of part %d: %+v, outcome %d, %v", i, st, out, err)
				}
				if got := s.count(); got != int64((i+1)*rows) {
					t.Fatalf("after part %d the store holds %d records, want %d", i, got, (i+1)*rows)
				}
			}
			for i, f := range files {
				st, out, err := Resumable(ctx, s.table, f.path, m)
				if err != nil || out != Skipped || st.Appended != 0 || st.Read != rows {
					t.Fatalf("second load of part %d: %+v, outcome %d, %v", i, st, out, err)
				}
			}
			if got := s.count(); got != parts*rows {
				t.Fatalf("after loading again the store holds %d records, want %d", got, parts*rows)
			}

			// Part 1: delete all but the first of its records in its fullest bucket.
			p := files[1]
			type bk struct{ origin, month string }
			rowsOf := map[bk][]int{}
			var fullest bk
			for r := range p.ids {
				k := bk{p.origins[r], p.months[r]}
				rowsOf[k] = append(rowsOf[k], r)
				if len(rowsOf[k]) > len(rowsOf[fullest]) {
					fullest = k
				}
			}
			victims := rowsOf[fullest]
			var ids []string
			for _, r := range victims[1:] {
				ids = append(ids, p.ids[r])
			}
			key := "month:" + fullest.month
			if n := s.del(fullest.origin, key, ids); n != int64(len(ids)) {
				t.Fatalf("deleted %d of %d records", n, len(ids))
			}
			before := s.count()
			_, _, err := Resumable(ctx, s.table, p.path, m)
			want := fmt.Sprintf("bucket %s (the bucket of the file's row %d)", key, victims[0])
			if !errors.Is(err, ErrPartlyLoaded) || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), fullest.origin) {
				t.Fatalf("partly loaded part 1: %v; want ErrPartlyLoaded naming %q and no partition value", err, want)
			}
			t.Logf("refused: %v", err)
			if got := s.count(); got != before || got != parts*rows-int64(len(ids)) {
				t.Fatalf("after the refusal the store holds %d records, want %d", got, before)
			}

			// Part 2 without its first record: the load itself meets the stored ones.
			q := files[2]
			if n := s.del(q.origins[0], "month:"+q.months[0], []string{q.ids[0]}); n != 1 {
				t.Fatalf("deleted %d records", n)
			}
			before = s.count()
			_, _, err = Resumable(ctx, s.table, q.path, m)
			want = fmt.Sprintf("bucket month:%s (the bucket of the file's row 0)", q.months[0])
			if !errors.Is(err, ErrPartlyLoaded) || !errors.Is(err, routing.ErrDuplicateRecord) || !strings.Contains(err.Error(), want) {
				t.Fatalf("part 2 without its first record: %v; want ErrPartlyLoaded and ErrDuplicateRecord naming %q", err, want)
			}
			if got := s.count(); got != before {
				t.Fatalf("after the refusal the store holds %d records, want %d", got, before)
			}
			// The untouched parts are still skipped.
			for _, i := range []int{0, 3} {
				if _, out, err := Resumable(ctx, s.table, files[i].path, m); err != nil || out != Skipped {
					t.Fatalf("part %d: outcome %d, %v", i, out, err)
				}
			}
		})
	}
}
