package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/flightsrv/flightsrv/internal/load"
	"github.com/flightsrv/flightsrv/routing"
)

// EnvFlights names the environment variable that may point at the flights Parquet file; the
// default is ../shared/data/flights-3m.parquet relative to the repository root.
const EnvFlights = "FLIGHTSRV_FLIGHTS_PARQUET"

// airport is the partition benchmarked: the busiest origin of the file.
const airport = "ORD"

// flightsTable is the routed table of the benchmarks: the demo's definition under its own id,
// month buckets and a writable window of 12 months.
var flightsTable = routing.TableDef{
	Name: "flights", TableID: "flightsrv.bench.flights", PartitionColumn: "origin",
	Strategy: routing.CalendarMonthUTC, WritableBuckets: 12,
}

// asOf is the application clock of the load (`flightsrv load --as-of 2001-07-31T00:00:00Z`):
// every month of 2001 up to July is inside the writable window.
var asOf = time.Date(2001, 7, 31, 0, 0, 0, 0, time.UTC)

// countRange is one benchmarked time range.
type countRange struct {
	name     string
	from, to time.Time
}

func (r countRange) String() string {
	return fmt.Sprintf("[%s, %s)", r.from.Format("2006-01-02"), r.to.Format("2006-01-02"))
}

var (
	// fullRange is ORD's whole history: the file spans 2001-01-01 to 2001-07-01 00:00, and
	// ORD's flights fall in the six month buckets January–June.
	fullRange = countRange{"full", time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2001, 7, 1, 0, 0, 0, 0, time.UTC)}
	// partialRange straddles two bucket boundaries: part of February, March and April whole,
	// part of May. Archived February and May are answered by row-group and page statistics
	// and by decoding only straddling event_time pages.
	partialRange = countRange{"partial", time.Date(2001, 2, 10, 0, 0, 0, 0, time.UTC), time.Date(2001, 5, 20, 0, 0, 0, 0, time.UTC)}
	benchRanges  = []countRange{fullRange, partialRange}
)

// countSQL is the query clients send: the seed's shape.
func countSQL(r countRange) string {
	return fmt.Sprintf("SELECT COUNT(*) FROM flights WHERE origin = '%s' AND timestamp >= TIMESTAMPTZ '%s' AND timestamp < TIMESTAMPTZ '%s'",
		airport, r.from.Format(time.RFC3339), r.to.Format(time.RFC3339))
}

// directPGSQL is the count asked of PostgreSQL directly (no bucket_key, no route).
const directPGSQL = `SELECT count(*) FROM pulpitum_v4_records WHERE table_id = $1 AND partition_key = $2 AND event_time >= $3 AND event_time < $4`

func repoRoot() string {
	_, self, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(self), "..")
}

func flightsPath() string {
	if p := os.Getenv(EnvFlights); p != "" {
		return p
	}
	return filepath.Join(repoRoot(), "..", "shared", "data", "flights-3m.parquet")
}

// onlyPartition forwards the records of one partition to the table: the load reads the whole
// file through the real loader, and only ORD's rows are appended.
type onlyPartition struct {
	t    *routing.DurableTable
	keep string
}

func (o onlyPartition) Append(ctx context.Context, recs []routing.Record) (int, error) {
	kept := make([]routing.Record, 0, len(recs)/16)
	for _, r := range recs {
		if string(r.PartitionKey) == o.keep {
			kept = append(kept, r)
		}
	}
	if len(kept) == 0 {
		return 0, nil
	}
	return o.t.Append(ctx, kept)
}

// loadORD loads the airport's flights from path into store through load.File and the durable
// append path (write fence included).
func loadORD(ctx context.Context, store routing.HotStore, path string) (load.Stats, error) {
	t, err := routing.NewDurableTable(flightsTable, store, nil, routing.Options{Clock: func() time.Time { return asOf }})
	if err != nil {
		return load.Stats{}, err
	}
	return load.File(ctx, onlyPartition{t, airport}, path, load.Mapping{
		Partition: "origin", Time: "date", Value: []string{"delay", "distance", "destination"},
	})
}

// arrowReference counts the airport's flights per range straight from the source file with
// arrow-go's Parquet reader (only the origin and date columns), independently of the loader's
// record building: the zone-less date is read as a UTC wall-clock time, as the loader
// documents. It also returns the airport's total.
func arrowReference(ctx context.Context, path string, ranges []countRange) (map[string]int64, int64, error) {
	f, err := file.OpenParquetFile(path, false)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	fr, err := pqarrow.NewFileReader(f, pqarrow.ArrowReadProperties{BatchSize: 1 << 16}, memory.DefaultAllocator)
	if err != nil {
		return nil, 0, err
	}
	sc := f.MetaData().Schema
	oi, di := sc.ColumnIndexByName("origin"), sc.ColumnIndexByName("date")
	if oi < 0 || di < 0 {
		return nil, 0, fmt.Errorf("%s has no origin or date column", path)
	}
	rr, err := fr.GetRecordReader(ctx, []int{oi, di}, nil)
	if err != nil {
		return nil, 0, err
	}
	defer rr.Release()
	out := map[string]int64{}
	var total int64
	for rr.Next() {
		rec := rr.RecordBatch()
		var origin arrow.Array
		var dates *array.Timestamp
		for i, fld := range rec.Schema().Fields() {
			switch fld.Name {
			case "origin":
				origin = rec.Column(i)
			case "date":
				dates, _ = rec.Column(i).(*array.Timestamp)
			}
		}
		if origin == nil || dates == nil {
			return nil, 0, fmt.Errorf("%s: unexpected column types", path)
		}
		unit := dates.DataType().(*arrow.TimestampType).Unit
		for i := range int(rec.NumRows()) {
			if origin.IsNull(i) || dates.IsNull(i) || origin.ValueStr(i) != airport {
				continue
			}
			total++
			at := dates.Value(i).ToTime(unit).UTC()
			for _, r := range ranges {
				if !at.Before(r.from) && at.Before(r.to) {
					out[r.name]++
				}
			}
		}
	}
	if err := rr.Err(); err != nil && !errors.Is(err, io.EOF) {
		return nil, 0, err
	}
	return out, total, nil
}

// duckReference counts the airport's flights in r straight from the source file with DuckDB
// (the zone-less date compared with zone-less bounds: the UTC wall-clock reading).
func duckReference(d *duckDB, path string, r countRange) (int64, error) {
	a, err := d.Query(fmt.Sprintf(`SELECT count(*) FROM read_parquet(%s) WHERE origin = '%s' AND "date" >= TIMESTAMP '%s' AND "date" < TIMESTAMP '%s'`,
		sqlString(path), airport, r.from.Format("2006-01-02 15:04:05"), r.to.Format("2006-01-02 15:04:05")))
	return a.Count, err
}

// duckPayloadSQL is the count asked of DuckDB directly over the archive's Parquet payload
// files: the envelope's event_time is TIMESTAMP(NANOS, isAdjustedToUTC=true), compared with
// UTC bounds.
func duckPayloadSQL(files []string, r countRange) string {
	list := make([]string, len(files))
	for i, f := range files {
		list[i] = sqlString(f)
	}
	return fmt.Sprintf("SELECT count(*) FROM read_parquet([%s]) WHERE event_time >= TIMESTAMPTZ '%s' AND event_time < TIMESTAMPTZ '%s'",
		strings.Join(list, ", "), r.from.Format("2006-01-02 15:04:05+00"), r.to.Format("2006-01-02 15:04:05+00"))
}

// sqlString quotes s as an SQL string literal.
func sqlString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// discardLogger keeps the archiver's and server's informational lines out of the benchmark
// output.
var discardLogger = slog.New(slog.DiscardHandler)
