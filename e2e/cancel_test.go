package e2e

import (
	"bytes"
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/flightsrv/flightsrv/server"
)

// TestCancelledScanReturnsResources: a client that cancels an ordered scan in the middle of
// its stream stops every fragment on the server: the hot store's pooled connections, the
// server's allocator bytes and the goroutine count come back to their baseline (issue 6:
// "a cancelled query stops every fragment"). The scan spans archived (JSON and Parquet),
// archiving and hot buckets of ORD, read four at a time with pushdown on and off.
func TestCancelledScanReturnsResources(t *testing.T) {
	e := newEnv(t)
	query := "SELECT timestamp, id, value FROM flights WHERE origin = 'ORD'" +
		" AND timestamp >= TIMESTAMPTZ '2001-01-01T00:00:00Z' AND timestamp < TIMESTAMPTZ '2001-07-01T00:00:00Z'" +
		" ORDER BY timestamp, id"
	for name, srv := range map[string]*server.Server{"pushdown=on": e.on, "pushdown=off": e.off} {
		// Fixed flow-control windows: the rows the client has not read cannot all be buffered
		// on its side already when it cancels (with gRPC's window growth they could be, on a
		// busy machine, and the cancel would come too late to cut anything).
		cl := dialSlow(t, srv)
		// Warm up: a whole run, so that pools and caches exist before the baseline.
		res, err := run(context.Background(), cl, query)
		if err != nil {
			t.Fatal(err)
		}
		total := 0
		for _, n := range res.batchRows {
			total += int(n)
		}
		res.release()
		baseline := settled(ownGoroutines)
		for _, after := range []int{1, 3} {
			ctx, cancel := context.WithCancel(context.Background())
			info, err := cl.Execute(ctx, query)
			if err != nil {
				t.Fatal(err)
			}
			rdr, err := cl.DoGet(ctx, info.Endpoint[0].Ticket)
			if err != nil {
				t.Fatal(err)
			}
			got := 0
			for i := 0; i < after && rdr.Next(); i++ {
				got += int(rdr.RecordBatch().NumRows())
			}
			cancel()
			for rdr.Next() {
				got += int(rdr.RecordBatch().NumRows())
			}
			rdr.Release()
			if got >= total {
				t.Fatalf("%s: cancelled after %d batches, still received all %d rows", name, after, total)
			}
			released := func() bool {
				return e.store.Pool().Stat().AcquiredConns() == 0 && e.alloc.CurrentAlloc() == 0 && ownGoroutines() <= baseline
			}
			ok := waitFor(5*time.Second, released)
			held := e.alloc.CurrentAlloc()
			if !ok && held > 0 {
				// gRPC (v1.84, loopyWriter.preprocessData) drops without freeing a message
				// queued just after the cancel cleaned its stream up; the batch it holds is
				// released by the cleanup flightsql's encodeFlightData attaches, when the
				// garbage collector finds the message unreachable (CI under load: 229,504
				// bytes 5 s after the cancel, no goroutine or connection left). That is
				// released, not leaked: what is still held after collections is.
				for range 5 {
					runtime.GC()
					if ok = waitFor(200*time.Millisecond, released); ok {
						t.Logf("%s: %d bytes a dropped message held were released by a garbage collection", name, held)
						break
					}
				}
			}
			if !ok {
				t.Fatalf("%s: after cancelling and collecting: %d pooled connections acquired, %d bytes allocated (%d before the collections), %d goroutines (baseline %d)",
					name, e.store.Pool().Stat().AcquiredConns(), e.alloc.CurrentAlloc(), held, ownGoroutines(), baseline)
			}
		}
	}
}

// ownGoroutines counts the goroutines running flightsrv's own code outside this test
// package: RPC handlers, fragments, bucket reads and their pipelines. gRPC's transport
// goroutines and pgx's pool maintenance come and go with the machine's load (a full run under
// load once kept one more than the baseline for 5 s) and belong to no query, so they are left
// out; a fragment or handler left running still counts, since its stack holds our frames.
func ownGoroutines() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	count := 0
	for _, g := range bytes.Split(buf, []byte("\n\n")) {
		if bytes.Contains(g, []byte("github.com/flightsrv/flightsrv/")) && !bytes.Contains(g, []byte("github.com/flightsrv/flightsrv/e2e.")) {
			count++
		}
	}
	return count
}

// settled returns f's value once it stops changing.
func settled(f func() int) int {
	n := f()
	for range 50 {
		time.Sleep(20 * time.Millisecond)
		if m := f(); m == n {
			return n
		} else {
			n = m
		}
	}
	return n
}

// waitFor polls cond until it holds or d passes.
func waitFor(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if cond() {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return cond()
}
