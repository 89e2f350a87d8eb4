package cockroach_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flightsrv/flightsrv/internal/testsupport/pgtest"
	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/routing/cockroach"
)

// benchRows is the size of the benchmark bucket: about a busy month of one partition.
const benchRows = 150_000

// benchBucket loads one month bucket of benchRows records (one every 10 s, ids "id-00000001"
// …, 60-byte values) into a fresh database and returns the store, the bucket and the
// database's URL. The first record goes through Append (creating the metadata row); the rest
// are inserted by one INSERT … SELECT generate_series, far faster than appends. The benchmark
// targets PostgreSQL (VACUUM, CHECKPOINT).
func benchBucket(b testing.TB) (*cockroach.Store, routing.BucketID, string) {
	b.Helper()
	ctx := context.Background()
	dbURL := pgtest.Start(b).NewDatabase(b)
	s, err := cockroach.Open(ctx, cockroach.Config{URL: dbURL, MaxConns: 4})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(s.Close)
	if err := s.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	start := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	bucket := routing.BucketFor("t.bench", []byte("ORD"), routing.CalendarMonthUTC, start)
	value := []byte(`{"carrier":"UA","flight":1234,"dest":"SFO","delay":-3,"x":"0"}`)[:60]
	first := routing.Record{PartitionKey: bucket.PartitionKey, EventTime: start, SortKey: []byte("id-00000000"), Value: value}
	if err := s.Append(ctx, bucket, []routing.Record{first}); err != nil {
		b.Fatal(err)
	}
	if _, err := s.Pool().Exec(ctx, `INSERT INTO pulpitum_v4_records (table_id, partition_key, bucket_key, event_time, sort_key, value)
		SELECT $1, $2, $3, $4::TIMESTAMPTZ + (n * INTERVAL '10 seconds'), convert_to('id-' || lpad(n::TEXT, 8, '0'), 'UTF8'), $5::BYTEA
		FROM generate_series(1, $6::INT8 - 1) AS g (n)`,
		bucket.TableID, bucket.PartitionKey, bucket.Key, start, value, benchRows); err != nil {
		b.Fatal(err)
	}
	// Settle the table before measuring, so that no sub-benchmark pays for the load: vacuum
	// (visibility map and hint bits, and nothing left for autovacuum to start mid-run),
	// statistics, a checkpoint (best effort: it needs privileges), and one read of every row.
	for _, sql := range []string{"VACUUM (ANALYZE) pulpitum_v4_records", "CHECKPOINT"} {
		if _, err := s.Pool().Exec(ctx, sql); err != nil && sql != "CHECKPOINT" {
			b.Fatal(err)
		}
	}
	var n int64
	if err := s.Pool().QueryRow(ctx, `SELECT count(*) FROM (SELECT value FROM pulpitum_v4_records
		WHERE table_id = $1 AND partition_key = $2 AND bucket_key = $3) AS r`, bucket.TableID, bucket.PartitionKey, bucket.Key).Scan(&n); err != nil || n != benchRows {
		b.Fatalf("warm-up read: %d rows, %v", n, err)
	}
	return s, bucket, dbURL
}

// cpuTime is the CPU time (user and system) the test process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// serverProcesses finds the PostgreSQL server's processes when it runs on this machine: the
// children of the postmaster, found from a backend's pid through /proc. It returns 0 when
// they cannot be found (a remote server, no /proc).
func serverProcesses(b testing.TB, s *cockroach.Store) int {
	var pid int
	if err := s.Pool().QueryRow(context.Background(), "SELECT pg_backend_pid()").Scan(&pid); err != nil {
		b.Fatal(err)
	}
	stat, err := procStat(pid)
	if err != nil {
		return 0
	}
	return stat.ppid
}

type procStatFields struct {
	ppid int
	cpu  time.Duration // user and system time
}

// procStat reads /proc/<pid>/stat (Linux; clock ticks taken as 100 Hz, the usual USER_HZ).
func procStat(pid int) (procStatFields, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procStatFields{}, err
	}
	text := string(raw)
	f := strings.Fields(text[strings.LastIndexByte(text, ')')+2:])
	if len(f) < 13 {
		return procStatFields{}, fmt.Errorf("short /proc/%d/stat", pid)
	}
	ppid, _ := strconv.Atoi(f[1])
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return procStatFields{ppid: ppid, cpu: time.Duration(utime+stime) * 10 * time.Millisecond}, nil
}

// serverCPU is the CPU time used so far by the children of postmaster (its backends and
// background processes), or 0 when postmaster is 0.
func serverCPU(postmaster int) time.Duration {
	if postmaster == 0 {
		return 0
	}
	var total time.Duration
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, err := procStat(pid); err == nil && st.ppid == postmaster {
			total += st.cpu
		}
	}
	return total
}

// meter reports rows/s (wall clock), the client's CPU time per row, which unlike the wall
// clock does not depend much on what else the machine runs, and, for a local server, the
// server's CPU time per row (10 ms resolution).
type meter struct {
	rows          int64
	wall0         time.Time
	cpu0, server0 time.Duration
	postmaster    int
}

func startMeter(postmaster int) *meter {
	return &meter{wall0: time.Now(), cpu0: cpuTime(), server0: serverCPU(postmaster), postmaster: postmaster}
}

func (m *meter) report(b *testing.B) {
	if m.rows != int64(b.N)*benchRows {
		b.Fatalf("read %d rows in %d loops, want %d each", m.rows, b.N, benchRows)
	}
	b.ReportMetric(float64(m.rows)/time.Since(m.wall0).Seconds(), "rows/s")
	b.ReportMetric(float64(cpuTime()-m.cpu0)/float64(m.rows), "client-cpu-ns/row")
	if m.postmaster != 0 {
		b.ReportMetric(float64(serverCPU(m.postmaster)-m.server0)/float64(m.rows), "server-cpu-ns/row")
	}
}

// scanBucket reads the whole bucket with ScanRange, counting its rows.
func scanBucket(b *testing.B, s *cockroach.Store, bucket routing.BucketID, cols []routing.Column, alloc memory.Allocator) int64 {
	_, r, err := s.ScanRange(context.Background(), bucket, routing.BatchRequest{Range: bucket.Range(), Columns: cols, Limit: -1, Alloc: alloc})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Release()
	var n int64
	for r.Next() {
		n += r.RecordBatch().NumRows()
	}
	if err := r.Err(); err != nil {
		b.Fatal(err)
	}
	return n
}

// readWay is one way of reading the whole benchmark bucket; read returns the rows read.
type readWay struct {
	name string
	read func(b *testing.B) int64
}

// readWays returns the ways BenchmarkBucketRead compares (see there), after reading the
// bucket once with each, so that none pays for warming the server's caches or connections.
// The text way opens its own pool, closed by a cleanup on b.
func readWays(b *testing.B, s *cockroach.Store, bucket routing.BucketID, dbURL string, alloc memory.Allocator) []readWay {
	ctx := context.Background()
	cols := []routing.Column{routing.ColumnTimestamp, routing.ColumnID, routing.ColumnValue}
	u, err := url.Parse(dbURL)
	if err != nil {
		b.Fatal(err)
	}
	q := u.Query()
	q.Set("default_query_exec_mode", "exec")
	u.RawQuery = q.Encode()
	text, err := cockroach.Open(ctx, cockroach.Config{URL: u.String(), MaxConns: 4})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(text.Close)
	ways := []readWay{
		{"ScanRange", func(b *testing.B) int64 { return scanBucket(b, s, bucket, cols, alloc) }},
		{"ScanRange-text", func(b *testing.B) int64 { return scanBucket(b, text, bucket, cols, alloc) }},
		{"pgx", func(b *testing.B) int64 {
			res, err := s.Pool().Query(ctx, `SELECT event_time, sort_key, value FROM pulpitum_v4_records
WHERE table_id = $1 AND partition_key = $2 AND bucket_key = $3 AND event_time >= $4 AND event_time < $5
ORDER BY event_time, sort_key`, bucket.TableID, bucket.PartitionKey, bucket.Key, bucket.Start, bucket.End)
			if err != nil {
				b.Fatal(err)
			}
			var (
				n       int64
				et      time.Time
				sk, val []byte
			)
			for res.Next() {
				if err := res.Scan(&et, &sk, &val); err != nil {
					b.Fatal(err)
				}
				n++
			}
			if err := res.Err(); err != nil {
				b.Fatal(err)
			}
			return n
		}},
	}
	for _, w := range ways {
		if n := w.read(b); n != benchRows {
			b.Fatalf("%s warm-up read %d rows", w.name, n)
		}
	}
	return ways
}

// BenchmarkBucketRead reads one bucket of benchRows records (timestamp, id and a 60-byte
// value) several ways against the same PostgreSQL database and reports rows/s and the CPU time
// per row of the client and (for a local server) of the server:
//
//   - ScanRange: the Arrow batch port, one statement streamed into Arrow buffers from binary
//     results;
//   - ScanRange-text: the same on connections in pgx's exec mode, where results come in text
//     (what the binary format saves);
//   - pgx: the floor to beat, a plain pgx query of the same rows
//     (SELECT event_time, sort_key, value … ORDER BY event_time, sort_key) scanned into
//     time.Time and []byte values.
//
// Sub-benchmarks run one after the other, so on a busy machine they see different loads:
// BenchmarkScanRangeVsPgx interleaves the two that matter.
func BenchmarkBucketRead(b *testing.B) {
	s, bucket, dbURL := benchBucket(b)
	pm := serverProcesses(b, s)
	alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer alloc.AssertSize(b, 0)
	for _, w := range readWays(b, s, bucket, dbURL, alloc) {
		b.Run(w.name, func(b *testing.B) {
			b.ReportAllocs()
			m := startMeter(pm)
			for b.Loop() {
				m.rows += w.read(b)
			}
			m.report(b)
		})
	}
}

// BenchmarkScanRangeVsPgx reads the benchmark bucket with ScanRange and with the plain pgx
// query in turn, alternating which goes first, and reports for each its rows/s over the time
// spent in it and its client and (for a local server) server CPU time per row: a comparison
// in which both ways see the same load.
func BenchmarkScanRangeVsPgx(b *testing.B) {
	s, bucket, dbURL := benchBucket(b)
	pm := serverProcesses(b, s)
	alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer alloc.AssertSize(b, 0)
	var ways []readWay
	for _, w := range readWays(b, s, bucket, dbURL, alloc) {
		if w.name == "ScanRange" || w.name == "pgx" {
			ways = append(ways, w)
		}
	}
	type total struct {
		rows                 int64
		wall, client, server time.Duration
	}
	totals := make([]total, len(ways))
	i := 0
	for b.Loop() {
		for j := range ways {
			k := (i + j) % len(ways)
			wall0, client0, server0 := time.Now(), cpuTime(), serverCPU(pm)
			totals[k].rows += ways[k].read(b)
			totals[k].wall += time.Since(wall0)
			totals[k].client += cpuTime() - client0
			totals[k].server += serverCPU(pm) - server0
		}
		i++
	}
	for k, w := range ways {
		t := totals[k]
		b.ReportMetric(float64(t.rows)/t.wall.Seconds(), w.name+"-rows/s")
		b.ReportMetric(float64(t.client)/float64(t.rows), w.name+"-client-cpu-ns/row")
		if pm != 0 {
			b.ReportMetric(float64(t.server)/float64(t.rows), w.name+"-server-cpu-ns/row")
		}
	}
}

// BenchmarkScanRangeColumns measures ScanRange over the benchmark bucket for narrower column
// sets: timestamps only, and no column at all (the scan path of COUNT(*)).
func BenchmarkScanRangeColumns(b *testing.B) {
	s, bucket, _ := benchBucket(b)
	pm := serverProcesses(b, s)
	for _, cols := range [][]routing.Column{{routing.ColumnTimestamp}, {}} {
		b.Run(fmt.Sprint(cols), func(b *testing.B) {
			b.ReportAllocs()
			m := startMeter(pm)
			for b.Loop() {
				m.rows += scanBucket(b, s, bucket, cols, memory.DefaultAllocator)
			}
			m.report(b)
		})
	}
}
