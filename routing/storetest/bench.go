package storetest

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/flightsrv/flightsrv/routing"
)

// BenchIngestRows is how many records BenchIngest writes per request.
const BenchIngestRows = 200_000

// BenchIngest measures one write request of BenchIngestRows records through
// DurableTable.Ingest into a new store from open (called untimed for every iteration): the
// records are in time order with 300 partitions interleaved (as a file sorted by time, like
// the flights file), 2,000 records a day over 100 days of month buckets, 60-byte values, in
// batches of 8,192 (the chunks Flight SQL bulk ingest hands on). It reports rows/s (wall) and
// cpu-µs/row: this process's user and system CPU per record (rusage), which for an in-process
// store (SQLite) is the whole write and for a server store is the client side only; when open also returns serverCPU (the CPU the store's
// server has used so far, e.g. PostgreSQL's backend of a one-connection pool), the server's
// per record too (server-cpu-µs/row). CPU figures hold up on a busy machine where wall times
// do not. Every request must store all of its records.
func BenchIngest(b *testing.B, open func(b *testing.B) (store routing.HotStore, serverCPU func() time.Duration)) {
	ctx := context.Background()
	def := routing.TableDef{Name: "bench", TableID: "t.bench.ingest", PartitionColumn: "p", Strategy: routing.CalendarMonthUTC, WritableBuckets: 12}
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	now := start.AddDate(0, 4, 0)
	value := []byte(`{"carrier":"UA","flight":1234,"dest":"SFO","delay":-3,"x":"0"}`)[:60]
	parts := make([][]byte, 300)
	for i := range parts {
		parts[i] = fmt.Appendf(nil, "P%03d", i)
	}
	recs := make([]routing.Record, BenchIngestRows)
	for i := range recs {
		recs[i] = routing.Record{PartitionKey: parts[(i*7919)%len(parts)], EventTime: start.Add(time.Duration(i) * 43200 * time.Millisecond),
			SortKey: fmt.Appendf(nil, "%010d", i), Value: value}
	}
	var wall, cpu, server time.Duration
	for b.Loop() {
		b.StopTimer()
		store, serverCPU := open(b)
		table, err := routing.NewDurableTable(def, store, nil, routing.Options{Clock: func() time.Time { return now }})
		if err != nil {
			b.Fatal(err)
		}
		var s0 time.Duration
		if serverCPU != nil {
			s0 = serverCPU()
		}
		c0 := processCPU()
		t0 := time.Now()
		b.StartTimer()
		n, err := table.Ingest(ctx, &sliceSource{batches: batchesOf(recs, 8192)})
		b.StopTimer()
		wall += time.Since(t0)
		cpu += processCPU() - c0
		if serverCPU != nil {
			server += serverCPU() - s0
		}
		if err != nil || n != int64(len(recs)) {
			b.Fatalf("Ingest = %d, %v; want %d", n, err, len(recs))
		}
		b.StartTimer()
	}
	rows := float64(b.N) * float64(len(recs))
	b.ReportMetric(rows/wall.Seconds(), "rows/s")
	b.ReportMetric(float64(cpu.Microseconds())/rows, "cpu-µs/row")
	if server > 0 {
		b.ReportMetric(float64(server.Microseconds())/rows, "server-cpu-µs/row")
	}
}

// processCPU is the user and system CPU this process has used so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
