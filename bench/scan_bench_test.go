package bench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/flightsrv/flightsrv/internal/testsupport/testproc"
	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/server"
)

// States of ORD's buckets during BenchmarkScan, in the order the fixture goes through them.
const (
	stateHot     = "hot"     // all six month buckets hot in PostgreSQL
	stateMixed   = "mixed"   // January–March archived, April–June hot
	stateArchive = "archive" // all six archived

	viaProcess = "process" // flightsrv serve as a child process, arrow-go Flight SQL client
	viaInproc  = "inproc"  // server.Start in the benchmark's process, same client

	peerExample  = "sqlite-example" // arrow-go's example SQLite Flight SQL server, a child process
	peerLoopback = "loopback"       // in-process Flight SQL server streaming in-memory batches
)

// mixedCutoff is the end of the archived months in the mixed state.
var mixedCutoff = time.Date(2001, 4, 1, 0, 0, 0, 0, time.UTC)

// scanBatchRows is the batch size of the in-memory reference batches (the loopback ceiling's
// and the direct pgx reader's).
const scanBatchRows = 8192

// scanSchema is the shape of the scan's result: what flightsrv answers for
// SELECT timestamp, id, value.
var scanSchema = arrow.NewSchema([]arrow.Field{
	{Name: "timestamp", Type: &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}},
	{Name: "id", Type: arrow.BinaryTypes.String},
	{Name: "value", Type: arrow.BinaryTypes.Binary},
}, nil)

// scanSQL is the ordered scan clients send.
func scanSQL(table, partitionColumn, key string, r countRange) string {
	return fmt.Sprintf("SELECT timestamp, id, value FROM %s WHERE %s = '%s' AND timestamp >= TIMESTAMPTZ '%s' AND timestamp < TIMESTAMPTZ '%s' ORDER BY timestamp, id",
		table, partitionColumn, key, r.from.Format(time.RFC3339), r.to.Format(time.RFC3339))
}

// directPGScanSQL is the scan asked of PostgreSQL directly (no bucket_key, no route).
const directPGScanSQL = `SELECT event_time, sort_key, value FROM pulpitum_v4_records WHERE table_id = $1 AND partition_key = $2 AND event_time >= $3 AND event_time < $4 ORDER BY event_time, sort_key`

// scanSum is what a client learns while touching every row of a scan: the row count, the sum
// of the timestamps (ns) and of the id and value lengths; touch also checks that rows come in
// strictly increasing (timestamp, id) order and that nothing is null.
type scanSum struct {
	rows, ts, idBytes, valBytes int64

	lastTS int64
	lastID string
}

// touch reads every row of rec. The first column is the timestamp (an Arrow timestamp of any
// unit, or int64 nanoseconds as arrow-go's SQLite example server returns it), the second the
// id (utf8 or binary), the third the value (binary or utf8).
func (s *scanSum) touch(rec arrow.RecordBatch) error {
	if rec.NumCols() != 3 {
		return fmt.Errorf("scan batch has %d columns, want 3", rec.NumCols())
	}
	for i, c := range rec.Columns() {
		if c.NullN() > 0 {
			return fmt.Errorf("scan column %d has %d nulls", i, c.NullN())
		}
	}
	n := int(rec.NumRows())
	if n == 0 {
		return nil
	}
	var ts []int64
	switch c := rec.Column(0).(type) {
	case *array.Timestamp:
		unit := c.DataType().(*arrow.TimestampType).Unit
		mult := int64(time.Duration(1)) // nanoseconds per unit
		switch unit {
		case arrow.Second:
			mult = int64(time.Second)
		case arrow.Millisecond:
			mult = int64(time.Millisecond)
		case arrow.Microsecond:
			mult = int64(time.Microsecond)
		}
		raw := c.TimestampValues()
		if mult == 1 {
			ts = unsafe.Slice((*int64)(unsafe.Pointer(unsafe.SliceData(raw))), len(raw))
		} else {
			ts = make([]int64, n)
			for i, v := range raw {
				ts[i] = int64(v) * mult
			}
		}
	case *array.Int64:
		ts = c.Int64Values()
	default:
		return fmt.Errorf("scan timestamp column is %s", rec.Column(0).DataType())
	}
	id, err := varOf(rec.Column(1))
	if err != nil {
		return fmt.Errorf("scan id column: %w", err)
	}
	val, err := varOf(rec.Column(2))
	if err != nil {
		return fmt.Errorf("scan value column: %w", err)
	}
	// Keys are compared only between rows of equal timestamps, as bytes (what string
	// comparison does).
	last, lastID := s.lastTS, []byte(s.lastID)
	for i := range n {
		t := ts[i]
		if s.rows+int64(i) > 0 && t <= last {
			if t < last {
				return fmt.Errorf("row %d out of (timestamp, id) order", s.rows+int64(i))
			}
			prev := lastID
			if i > 0 {
				prev = id.at(i - 1)
			}
			if bytes.Compare(id.at(i), prev) <= 0 {
				return fmt.Errorf("row %d out of (timestamp, id) order", s.rows+int64(i))
			}
		}
		last = t
		s.ts += t
	}
	s.idBytes += id.size()
	s.valBytes += val.size()
	s.rows += int64(n)
	s.lastTS, s.lastID = last, string(id.at(n-1)) // the batch's memory goes with it
	return nil
}

// varCol is a utf8 or binary array's offsets and data, read without a call per value.
type varCol struct {
	offs []int32
	data []byte
}

// varOf views a utf8 or binary array (valid while the array is): its offsets (sliced to the
// array's values, not rebased) and its whole data buffer.
func varOf(a arrow.Array) (varCol, error) {
	var offs []int32
	switch c := a.(type) {
	case *array.String:
		offs = c.ValueOffsets()
	case *array.Binary:
		offs = c.ValueOffsets()
	default:
		return varCol{}, fmt.Errorf("type %s", a.DataType())
	}
	var data []byte
	if b := a.Data().Buffers()[2]; b != nil {
		data = b.Bytes()
	}
	return varCol{offs, data}, nil
}

// at returns value i.
func (v varCol) at(i int) []byte { return v.data[v.offs[i]:v.offs[i+1]] }

// size returns the bytes of all values.
func (v varCol) size() int64 { return int64(v.offs[len(v.offs)-1] - v.offs[0]) }

// scanWant is what a variant must return: the reference row count always; the timestamp sum
// and the total id and value lengths when the reference knows them.
type scanWant struct {
	rows, ts, idBytes, valBytes int64
	checkTS, checkID, checkVal  bool
}

func (w scanWant) check(got scanSum) error {
	switch {
	case got.rows != w.rows:
		return fmt.Errorf("%d rows, reference %d", got.rows, w.rows)
	case w.checkTS && got.ts != w.ts:
		return fmt.Errorf("timestamps sum to %d, reference %d", got.ts, w.ts)
	case w.checkID && got.idBytes != w.idBytes:
		return fmt.Errorf("ids total %d bytes, reference %d", got.idBytes, w.idBytes)
	case w.checkVal && got.valBytes != w.valBytes:
		return fmt.Errorf("values total %d bytes, reference %d", got.valBytes, w.valBytes)
	}
	return nil
}

// scanFunc runs one scan and returns what the client saw; inner is the store's own time when
// it is measured apart from the call (DuckDB, timed inside Python), else 0. Variants that
// cannot see the rows (DuckDB) return only the count.
type scanFunc func(ctx context.Context) (sum scanSum, inner time.Duration, err error)

// flightScan runs sql through arrow-go's Flight SQL client: GetFlightInfo, then DoGet of every
// endpoint in order, touching every row.
func flightScan(cl *flightsql.Client, sql string) scanFunc {
	return func(ctx context.Context) (scanSum, time.Duration, error) {
		var sum scanSum
		info, err := cl.Execute(ctx, sql)
		if err != nil {
			return sum, 0, err
		}
		for _, ep := range info.Endpoint {
			rdr, err := cl.DoGet(ctx, ep.Ticket)
			if err != nil {
				return sum, 0, err
			}
			for rdr.Next() {
				if err := sum.touch(rdr.RecordBatch()); err != nil {
					rdr.Release()
					return sum, 0, err
				}
			}
			err = rdr.Err()
			rdr.Release()
			if err != nil {
				return sum, 0, err
			}
		}
		return sum, 0, nil
	}
}

// pgBatches reads a partition's records of r from PostgreSQL directly over conn (one
// statement, prepared and cached by pgx) into Arrow batches of scanSchema of up to
// scanBatchRows rows, handing each to emit, which must Retain what it keeps.
func pgBatches(ctx context.Context, conn *pgx.Conn, tableID string, partition []byte, r countRange, emit func(arrow.RecordBatch) error) error {
	rows, err := conn.Query(ctx, directPGScanSQL, tableID, partition, r.from, r.to)
	if err != nil {
		return err
	}
	defer rows.Close()
	bld := array.NewRecordBuilder(memory.DefaultAllocator, scanSchema)
	defer bld.Release()
	tsB := bld.Field(0).(*array.TimestampBuilder)
	idB := bld.Field(1).(*array.StringBuilder)
	valB := bld.Field(2).(*array.BinaryBuilder)
	reserve := func() {
		tsB.Reserve(scanBatchRows)
		idB.Reserve(scanBatchRows)
		valB.Reserve(scanBatchRows)
	}
	flush := func() error {
		rec := bld.NewRecordBatch()
		defer rec.Release()
		return emit(rec)
	}
	reserve()
	var (
		at       time.Time
		key, val pgtype.DriverBytes // views of pgx's buffer, copied by the builders
		n        int
	)
	for rows.Next() {
		if err := rows.Scan(&at, &key, &val); err != nil {
			return err
		}
		tsB.UnsafeAppend(arrow.Timestamp(at.UnixNano()))
		idB.BinaryBuilder.Append(key)
		valB.Append(val)
		if n++; n == scanBatchRows {
			if err := flush(); err != nil {
				return err
			}
			n = 0
			reserve()
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if n > 0 {
		return flush()
	}
	return nil
}

// pgScan is the direct-pgx variant: pgBatches, touching every batch.
func pgScan(conn *pgx.Conn, tableID string, partition []byte, r countRange) scanFunc {
	return func(ctx context.Context) (scanSum, time.Duration, error) {
		var sum scanSum
		err := pgBatches(ctx, conn, tableID, partition, r, sum.touch)
		return sum, 0, err
	}
}

// duckScanSQL is the ordered scan asked of DuckDB directly over the archive's Parquet
// payload files.
func duckScanSQL(files []string, r countRange) string {
	list := make([]string, len(files))
	for i, f := range files {
		list[i] = sqlString(f)
	}
	return fmt.Sprintf("SELECT event_time, sort_key, value FROM read_parquet([%s]) WHERE event_time >= TIMESTAMPTZ '%s' AND event_time < TIMESTAMPTZ '%s' ORDER BY event_time, sort_key",
		strings.Join(list, ", "), r.from.Format("2006-01-02 15:04:05+00"), r.to.Format("2006-01-02 15:04:05+00"))
}

// duckScan runs sql in the DuckDB helper, fetching the result as an Arrow table; the count is
// the table's row count.
func duckScan(d *duckDB, sql string) scanFunc {
	return func(context.Context) (scanSum, time.Duration, error) {
		a, err := d.QueryArrow(sql)
		return scanSum{rows: a.Count}, time.Duration(a.NS), err
	}
}

// scanResult is one scan variant's measurement.
type scanResult struct {
	rows      int64
	n         int
	mean, p50 time.Duration
	inner     time.Duration   // DuckDB: p50 of the time measured inside Python
	mem, idle testproc.Memory // child-process variants: after the timed runs, and before the first query
	hasMem    bool
	// cpuPerRow is the server process's CPU time (user and system) over the timed runs, per
	// row returned (child-process variants): what a row costs the server whatever else runs
	// on the machine.
	cpuPerRow time.Duration
}

// latency is the p50 the summary uses: DuckDB's own time, else the client's.
func (r *scanResult) latency() time.Duration {
	if r.inner > 0 {
		return r.inner
	}
	return r.p50
}

// rowsPerSec is rows over the p50 latency.
func (r *scanResult) rowsPerSec() float64 {
	if r == nil || r.latency() <= 0 {
		return 0
	}
	return float64(r.rows) / r.latency().Seconds()
}

// scanSuite is the scan benchmark's fixture: the count fixture's ORD deployment, the
// reference rows, the child-process binaries and the results.
type scanSuite struct {
	*suite
	bins        binaries
	ref         scanWant
	refBatches  []arrow.RecordBatch // ORD's rows read directly from PostgreSQL while hot
	results     map[string]*scanResult
	exampleLoad time.Duration // loading the example server through Flight SQL
	large       largeInfo
}

// BenchmarkScan measures the ordered scan SELECT timestamp, id, value … ORDER BY timestamp, id
// at a Go Flight SQL client: ORD's whole history from hot, mixed and archived buckets, through
// flightsrv as a child process (with its peak RSS) and in process, against PostgreSQL and
// DuckDB asked directly, arrow-go's example SQLite server and a loopback Flight server
// streaming in-memory batches; then a partition of 1.5M rows. It prints a summary with the
// issue's targets. See doc.go.
func BenchmarkScan(b *testing.B) {
	sc := newScanSuite(b)
	b.Run("ORD", func(b *testing.B) {
		b.Run("state="+stateHot, func(b *testing.B) { sc.runState(b, stateHot) })
		sc.archiveBefore(b, mixedCutoff)
		b.Run("state="+stateMixed, func(b *testing.B) { sc.runState(b, stateMixed) })
		sc.archiveAll(b)
		b.Run("state="+stateArchive, func(b *testing.B) { sc.runState(b, stateArchive) })
		b.Run("peer="+peerExample, sc.runExample)
		b.Run("peer="+peerLoopback, sc.runLoopback)
	})
	b.Run("large", sc.runLarge)
	sc.printScanSummary(os.Stdout)
}

func newScanSuite(b *testing.B) *scanSuite {
	b.Helper()
	sc := &scanSuite{suite: newSuite(b), results: map[string]*scanResult{}}
	sc.bins = buildBinaries(b, b.TempDir())

	// The reference rows: ORD's records read directly from PostgreSQL while every bucket is
	// hot, as 8,192-row batches of the result's shape; their count must be the source's.
	conn := sc.pgConn(b, sc.url)
	var sum scanSum
	err := pgBatches(sc.ctx, conn, flightsTable.TableID, []byte(airport), fullRange, func(rec arrow.RecordBatch) error {
		rec.Retain()
		sc.refBatches = append(sc.refBatches, rec)
		return sum.touch(rec)
	})
	if err != nil {
		b.Fatalf("reference rows: %v", err)
	}
	b.Cleanup(func() {
		for _, r := range sc.refBatches {
			r.Release()
		}
	})
	if sum.rows != sc.total {
		b.Fatalf("PostgreSQL holds %d of %s's rows, the source %d", sum.rows, airport, sc.total)
	}
	sc.ref = scanWant{rows: sum.rows, ts: sum.ts, idBytes: sum.idBytes, valBytes: sum.valBytes, checkTS: true, checkID: true, checkVal: true}
	return sc
}

// runState runs the variants of one state of ORD's buckets.
func (sc *scanSuite) runState(b *testing.B, state string) {
	sql := scanSQL(flightsTable.Name, flightsTable.PartitionColumn, airport, fullRange)
	b.Run("via="+viaProcess, func(b *testing.B) {
		proc, addr := sc.startFlightsrv(b, sc.url, sc.dir, flightsTable)
		sc.bench(b, "ORD/"+state+"/"+viaProcess, sc.ref, flightScan(sc.client(b, addr), sql), proc)
	})
	b.Run("via="+viaInproc, func(b *testing.B) {
		srv, err := server.Start(sc.ctx, server.Config{
			Listen: "127.0.0.1:0", Tables: []routing.TableDef{flightsTable}, Hot: sc.store,
			Archive: sc.newReader(b), Pushdown: true, Logger: discardLogger,
		})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(srv.Close)
		sc.bench(b, "ORD/"+state+"/"+viaInproc, sc.ref, flightScan(sc.client(b, srv.Addr()), sql), nil)
	})
	switch state {
	case stateHot:
		b.Run("via="+viaPG, func(b *testing.B) {
			conn := sc.pgConn(b, sc.url)
			sc.bench(b, "ORD/"+state+"/"+viaPG, sc.ref, pgScan(conn, flightsTable.TableID, []byte(airport), fullRange), nil)
		})
	case stateArchive:
		b.Run("via="+viaDuck, func(b *testing.B) {
			if sc.duck == nil {
				b.Skipf("no DuckDB: %v", sc.duckErr)
			}
			sc.bench(b, "ORD/"+state+"/"+viaDuck, scanWant{rows: sc.ref.rows}, duckScan(sc.duck, duckScanSQL(sc.payloads, fullRange)), nil)
		})
	}
}

// startFlightsrv runs `flightsrv serve` over the database at url and the archive directory
// dir for table, on a free 127.0.0.1 port, as a child process (default fan-out, pushdown on,
// no authentication: loopback only).
func (sc *scanSuite) startFlightsrv(b *testing.B, url, dir string, t routing.TableDef) (*testproc.Process, string) {
	return testproc.StartReady(b, "flightsrv serve", flightsrvReady, sc.bins.flightsrv, "serve",
		"--store", url, "--archive", "file://"+dir,
		"--table", fmt.Sprintf("name=%s,id=%s,partition=%s,strategy=month,window=%d", t.Name, t.TableID, t.PartitionColumn, t.WritableBuckets),
		"--listen", "127.0.0.1:0", "--no-auth")
}

// client is an arrow-go Flight SQL client of addr, closed at cleanup.
func (sc *scanSuite) client(b *testing.B, addr string) *flightsql.Client {
	cl, err := flightsql.NewClient(addr, nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cl.Close() })
	return cl
}

// bench checks that run returns want once (untimed, also the warm-up: routes, manifests and
// footers are fetched), then times it with b.Loop, checking every iteration, and reports
// rows/s of the p50 and, for a child process, its peak RSS.
func (sc *scanSuite) bench(b *testing.B, k string, want scanWant, run scanFunc, proc *testproc.Process) *scanResult {
	ctx := sc.ctx
	res := &scanResult{rows: want.rows, hasMem: proc != nil}
	if proc != nil {
		var err error
		if res.idle, err = proc.Memory(); err != nil {
			b.Fatal(err)
		}
	}
	if got, _, err := run(ctx); err != nil {
		b.Fatalf("%s: %v", k, err)
	} else if err := want.check(got); err != nil {
		b.Fatalf("%s: %v", k, err)
	}
	b.ReportAllocs()
	lat := make([]time.Duration, 0, 64)
	var inner []time.Duration
	var cpu0 time.Duration
	if proc != nil {
		var err error
		if cpu0, err = proc.CPU(); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		t0 := time.Now()
		got, in, err := run(ctx)
		lat = append(lat, time.Since(t0))
		if err != nil {
			b.Fatalf("%s: %v", k, err)
		}
		if err := want.check(got); err != nil {
			b.Fatalf("%s: %v", k, err)
		}
		if in > 0 {
			inner = append(inner, in)
		}
	}
	res.n, res.mean, res.p50 = len(lat), mean(lat), median(lat)
	if len(inner) > 0 {
		res.inner = median(inner)
		b.ReportMetric(float64(res.inner.Nanoseconds()), "store-p50-ns/op")
	}
	b.ReportMetric(float64(res.p50.Nanoseconds()), "p50-ns/op")
	b.ReportMetric(res.rowsPerSec(), "rows/s")
	if proc != nil {
		proc.Alive(b)
		cpu1, err := proc.CPU()
		if err != nil {
			b.Fatal(err)
		}
		if rows := int64(len(lat)) * want.rows; rows > 0 {
			res.cpuPerRow = (cpu1 - cpu0) / time.Duration(rows)
			b.ReportMetric(float64(cpu1-cpu0)/float64(rows), "server-cpu-ns/row")
		}
		if res.mem, err = proc.Memory(); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(res.mem.HWM)/(1<<20), "peak-RSS-MiB")
	}
	sc.results[k] = res
	return res
}
