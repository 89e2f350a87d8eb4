package scan_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/scan"
)

// TestFanoutBounded: the number of concurrent bucket reads never exceeds the table's
// Fanout, and a many-bucket scan does overlap reads when Fanout > 1. Every bucket is read
// exactly once (each holds fewer than PageRows records), and the rows are still in order.
func TestFanoutBounded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := fixtures(t)[0]
	r := span(0, days(numDays))
	nBuckets := int64(numDays)
	for _, fanout := range []int{1, 2, 4} {
		t.Run(fmt.Sprintf("fanout=%d", fanout), func(t *testing.T) {
			t.Parallel()
			for _, desc := range []bool{false, true} {
				p := &probe{HotStore: f.store, delay: 3 * time.Millisecond}
				tbl := f.table(t, p, fanout, false)
				got, _, err := runScan(t, ctx, makeSpec(tbl, pGeneral, r, allColumns, desc, -1))
				if err != nil {
					t.Fatal(err)
				}
				sameRows(t, "rows", got, rowsOf(expected(pGeneral, r, desc, -1), allColumns))
				if calls := p.calls.Load(); calls != nBuckets {
					t.Fatalf("%d ScanRange calls for %d buckets", calls, nBuckets)
				}
				checkConcurrency(t, p, fanout)

				p = &probe{HotStore: f.store, delay: 3 * time.Millisecond}
				tbl = f.table(t, p, fanout, false)
				if _, err := summarize(ctx, &scanSpec{Table: tbl, Partition: []byte(pGeneral), Range: r, Desc: desc}); err != nil {
					t.Fatal(err)
				}
				checkConcurrency(t, p, fanout)
			}
		})
	}
}

func checkConcurrency(t *testing.T, p *probe, fanout int) {
	t.Helper()
	m := p.max.Load()
	switch {
	case m > int64(fanout):
		t.Fatalf("%d concurrent ScanRange calls with Fanout %d", m, fanout)
	case fanout > 1 && m < 2:
		t.Fatalf("reads never overlapped with Fanout %d (max %d)", fanout, m)
	case p.cur.Load() != 0:
		t.Fatalf("%d reads still running after the scan ended", p.cur.Load())
	}
}

// TestEarlyStopBoundsReads: with a LIMIT satisfied by the first bucket, the scan stops
// reading once the consumer is done. Bound proved here: the launcher takes one of Fanout
// slots before starting a bucket and a slot is freed only when the consumer takes a bucket's
// result; the consumer takes exactly one (the first), so at most Fanout+1 buckets are ever
// started, and with LIMIT 3 each bucket read is one ScanRange call (a page of 3 records; a
// full page makes the next page size 0). Hence ScanRange calls ≤ 1 + Fanout, out of 60
// buckets, and none after Release.
func TestEarlyStopBoundsReads(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := fixtures(t)[0]
	r := span(0, days(numDays))
	const fanout = 4
	for _, desc := range []bool{false, true} {
		for _, release := range []bool{false, true} {
			t.Run(fmt.Sprintf("desc=%v/releaseEarly=%v", desc, release), func(t *testing.T) {
				t.Parallel()
				p := &probe{HotStore: f.store, delay: 10 * time.Millisecond}
				tbl := f.table(t, p, fanout, false)
				mem := memory.NewCheckedAllocator(testPool)
				spec := makeSpec(tbl, pGeneral, r, allColumns, desc, 3)
				rdr, err := openScan(ctx, spec, mem)
				if err != nil {
					t.Fatal(err)
				}
				if !rdr.Next() {
					t.Fatalf("no batch: %v", rdr.Err())
				}
				rec := rdr.RecordBatch()
				want := expected(pGeneral, r, desc, 3)
				if rec.NumRows() != 3 {
					t.Fatalf("first batch has %d rows, want 3", rec.NumRows())
				}
				for i, w := range want {
					if got := rec.Column(2).(*array.String).Value(i); got != string(w.SortKey) {
						t.Fatalf("row %d id %q, want %q", i, got, w.SortKey)
					}
				}
				if !release {
					rows, _, err := drain(t, rdr)
					if err != nil || len(rows) != 0 {
						t.Fatalf("%d rows after the LIMIT was reached, err %v", len(rows), err)
					}
				}
				// With release set, the stream is left unfinished: Release must stop the reads.
				rdr.Release()
				calls := p.calls.Load()
				t.Logf("%d ScanRange calls for 60 buckets (bound %d)", calls, 1+fanout)
				if calls > 1+fanout {
					t.Fatalf("%d ScanRange calls for LIMIT 3 with Fanout %d, want ≤ %d", calls, fanout, 1+fanout)
				}
				if p.cur.Load() != 0 {
					t.Fatal("reads still running after Release")
				}
				time.Sleep(30 * time.Millisecond)
				if p.calls.Load() != calls {
					t.Fatal("ScanRange called after Release")
				}
				if n := mem.CurrentAlloc(); n != 0 {
					t.Fatalf("%d bytes leaked", n)
				}
			})
		}
	}
}

// TestBucketErrorStopsScan: a failing bucket ends the stream with its error after the rows
// of the buckets before it (in scan order), stops the other reads, and fails Summarize.
func TestBucketErrorStopsScan(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := fixtures(t)[1] // mixed: the failing bucket (day 21, even) is hot
	failDay := day0.AddDate(0, 0, 21)
	injected := fmt.Errorf("%w: injected", routing.ErrUnavailable)
	fail := func(b routing.BucketID) error {
		if b.Start.Equal(failDay) {
			return injected
		}
		return nil
	}
	r := span(0, days(numDays))
	for _, desc := range []bool{false, true} {
		p := &probe{HotStore: f.store, delay: time.Millisecond, fail: fail}
		tbl := f.table(t, p, 4, false)
		got, _, err := runScan(t, ctx, makeSpec(tbl, pGeneral, r, allColumns, desc, -1))
		if !errors.Is(err, routing.ErrUnavailable) {
			t.Fatalf("desc=%v: err %v, want the injected ErrUnavailable", desc, err)
		}
		before := span(0, days(21))
		if desc {
			before = span(days(22), days(numDays))
		}
		sameRows(t, "rows before the failing bucket", got, rowsOf(expected(pGeneral, before, desc, -1), allColumns))
		if p.cur.Load() != 0 {
			t.Fatal("reads still running after Release")
		}
		if _, err := summarize(ctx, &scanSpec{Table: tbl, Partition: []byte(pGeneral), Range: r}); !errors.Is(err, routing.ErrUnavailable) {
			t.Fatalf("Summarize: err %v, want ErrUnavailable", err)
		}
	}
}

// TestCancelMidScan cancels the context in the middle of a slow many-bucket scan: the reader
// stops with context.Canceled, no bucket read is left running, no buffer is left allocated,
// and every goroutine the scan started ends. It is not parallel, so that the goroutine count
// is not disturbed by other tests.
func TestCancelMidScan(t *testing.T) {
	f := fixtures(t)[0]
	r := span(0, days(numDays))
	// Warm up the connection pool so that its goroutines exist before the baseline.
	if _, _, err := runScan(t, context.Background(), makeSpec(f.table(t, nil, 4, false), pGeneral, r, allColumns, false, -1)); err != nil {
		t.Fatal(err)
	}
	baseline := settledGoroutines()

	for _, desc := range []bool{false, true} {
		p := &probe{HotStore: f.store, delay: 10 * time.Millisecond}
		tbl := f.table(t, p, 4, false)
		mem := memory.NewCheckedAllocator(testPool)
		ctx, cancel := context.WithCancel(context.Background())
		rdr, err := openScan(ctx, makeSpec(tbl, pGeneral, r, allColumns, desc, -1), mem)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			if !rdr.Next() {
				t.Fatalf("batch %d missing: %v", i, rdr.Err())
			}
		}
		cancel()
		rows, batches, err := drain(t, rdr)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err %v after cancel, want context.Canceled", err)
		}
		if len(rows) >= 100 || len(batches) > 4+1 {
			t.Fatalf("%d more rows in %d batches after cancel", len(rows), len(batches))
		}
		rdr.Release()
		if p.cur.Load() != 0 {
			t.Fatal("reads still running after Release")
		}
		if n := mem.CurrentAlloc(); n != 0 {
			t.Fatalf("%d bytes leaked", n)
		}
		// Every fragment's reservation ended with it, and the ledger holds nothing.
		if l := rdr.(*scan.Result).Ledger(); l.Outstanding() != 0 || l.Bytes() != 0 {
			t.Fatalf("%d fragment reservations and %d bytes left in the query's ledger", l.Outstanding(), l.Bytes())
		}
		if calls := p.calls.Load(); calls >= int64(numDays) {
			t.Fatalf("%d ScanRange calls: cancellation did not stop the fan-out", calls)
		}
	}
	// A context cancelled before the scan, and a deadline.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	tbl := f.table(t, nil, 4, false)
	if _, _, err := runScan(t, ctx, makeSpec(tbl, pGeneral, r, allColumns, false, -1)); !errors.Is(err, context.Canceled) {
		t.Fatalf("pre-cancelled: err %v", err)
	}
	if _, err := summarize(ctx, &scanSpec{Table: tbl, Partition: []byte(pGeneral), Range: r}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Summarize pre-cancelled: err %v", err)
	}
	p := &probe{HotStore: f.store, delay: 20 * time.Millisecond}
	dctx, dcancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer dcancel()
	if _, _, err := runScan(t, dctx, makeSpec(f.table(t, p, 1, false), pGeneral, r, allColumns, false, -1)); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("deadline: err %v", err)
	}

	waitGoroutines(t, baseline, "the cancelled scans")
}

// settledGoroutines returns the goroutine count once it stops changing.
func settledGoroutines() int {
	n := runtime.NumGoroutine()
	for range 50 {
		time.Sleep(10 * time.Millisecond)
		m := runtime.NumGoroutine()
		if m == n {
			return n
		}
		n = m
	}
	return n
}

// TestLimitStartsNeededBuckets: a LIMIT over bucket order starts its first fragment alone and
// starts another only while the rows of the earlier ones fall short (seed 002: stop starting
// buckets once earlier ones prove the page full). When the first bucket holds the page, one
// bucket read is made of the 60; otherwise at most the buckets needed plus the look-ahead
// opened once the first came back short.
func TestLimitStartsNeededBuckets(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := fixtures(t)[0]
	r := span(0, days(numDays))
	const fanout = 4
	inFirst := len(expected(pGeneral, span(0, days(1)), false, -1))
	if inFirst < 2 {
		t.Fatalf("the first day holds %d records; the test needs at least 2", inFirst)
	}
	for _, tc := range []struct {
		limit   int64
		maxRead int64
	}{
		{1, 1},
		{int64(inFirst), 1},
		{int64(inFirst) + 1, 0}, // computed below
		{40, 0},
	} {
		// Buckets needed: walk the data's buckets until the limit is met.
		needed, rows := int64(0), int64(0)
		for day := 0; day < numDays && rows < tc.limit; day++ {
			needed++
			rows += int64(len(expected(pGeneral, span(days(day), days(day+1)), false, -1)))
		}
		bound := tc.maxRead
		if bound == 0 {
			bound = needed + fanout - 1
		}
		p := &probe{HotStore: f.store}
		tbl := f.table(t, p, fanout, false)
		got, _, err := runScan(t, ctx, makeSpec(tbl, pGeneral, r, []string{"id"}, false, tc.limit))
		if err != nil {
			t.Fatal(err)
		}
		sameRows(t, "rows", got, rowsOf(expected(pGeneral, r, false, tc.limit), []string{"id"}))
		if calls := p.calls.Load(); calls < needed || calls > bound {
			t.Fatalf("LIMIT %d: %d bucket reads, want between %d (needed) and %d", tc.limit, calls, needed, bound)
		}
	}
}

// TestGroupedFragments: a partial aggregate (or a local top-k) over many buckets runs runs of
// consecutive buckets in one fragment each (60 day buckets: 15 a fragment at fan-out 1, 7 at 2, 3 at 4).
// string_agg without ORDER BY concatenates its rows in the order the fragments read them,
// so its answer over the all-hot and the mixed fixture equals the brute-force ids in
// (timestamp, id) order only if every bucket of every run was read once, whole and in unit
// order; a bucket failing inside a run fails the query, with no read left running and no
// byte left allocated.
func TestGroupedFragments(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := span(0, days(numDays))
	recs := expected(pGeneral, r, false, -1)
	ids := make([]string, 0, len(recs))
	for _, rec := range recs {
		if string(rec.SortKey) > "m" {
			ids = append(ids, string(rec.SortKey))
		}
	}
	if len(ids) < 100 || len(ids) == len(recs) {
		t.Fatalf("the filter keeps %d of %d rows", len(ids), len(recs))
	}
	const sql = "SELECT count(*), string_agg(id, ',')" + routedWhere + " AND id > 'm'"
	run := func(tbl *routing.DurableTable) (int64, string, error) {
		mem := memory.NewCheckedAllocator(testPool)
		defer func() {
			if n := mem.CurrentAlloc(); n != 0 {
				t.Errorf("%d bytes still allocated after Release", n)
			}
		}()
		res, err := execute(ctx, &scanSpec{Table: tbl, Partition: []byte(pGeneral), Range: r}, sql, mem)
		if err != nil {
			return 0, "", err
		}
		defer res.Release()
		var n int64
		var s string
		for res.Next() {
			b := res.RecordBatch()
			n = b.Column(0).(*array.Int64).Value(0)
			s = strings.Clone(b.Column(1).(*array.String).Value(0))
		}
		return n, s, res.Err()
	}
	for _, f := range fixtures(t) {
		for _, fanout := range []int{1, 2, 4} {
			p := &probe{HotStore: f.store}
			n, s, err := run(f.table(t, p, fanout, false))
			if err != nil {
				t.Fatalf("%s, fan-out %d: %v", f.name, fanout, err)
			}
			if n != int64(len(ids)) || s != strings.Join(ids, ",") {
				t.Fatalf("%s, fan-out %d: count %d, string_agg %.80q…, want %d and %.80q…", f.name, fanout, n, s, len(ids), strings.Join(ids, ","))
			}
			if f.name == "hot" && p.calls.Load() != int64(numDays) {
				t.Fatalf("%s, fan-out %d: %d bucket reads of %d buckets", f.name, fanout, p.calls.Load(), numDays)
			}
			// A local top-k runs runs of buckets too.
			res, err := execute(ctx, &scanSpec{Table: f.table(t, nil, fanout, false), Partition: []byte(pGeneral), Range: r},
				"SELECT id"+routedWhere+" AND id > 'm' ORDER BY id DESC LIMIT 7", testPool)
			if err != nil {
				t.Fatal(err)
			}
			var top []string
			for res.Next() {
				for i := range int(res.RecordBatch().NumRows()) {
					top = append(top, strings.Clone(res.RecordBatch().Column(0).(*array.String).Value(i)))
				}
			}
			err = res.Err()
			res.Release()
			want := slices.Sorted(slices.Values(ids))
			slices.Reverse(want)
			if err != nil || !slices.Equal(top, want[:7]) {
				t.Fatalf("%s, fan-out %d: top 7 ids %q (%v), want %q", f.name, fanout, top, err, want[:7])
			}
		}
	}
	failDay := day0.AddDate(0, 0, 21) // hot in both fixtures; inside the second run of 15
	p := &probe{HotStore: fixtures(t)[1].store, fail: func(b routing.BucketID) error {
		if b.Start.Equal(failDay) {
			return fmt.Errorf("%w: injected", routing.ErrUnavailable)
		}
		return nil
	}}
	if _, _, err := run(fixtures(t)[1].table(t, p, 1, false)); !errors.Is(err, routing.ErrUnavailable) {
		t.Fatalf("a failing bucket in a run: err %v, want the injected ErrUnavailable", err)
	}
	if p.cur.Load() != 0 {
		t.Fatal("reads still running after Release")
	}
}

// TestGroupedWindow: a grouped read (a partial aggregate over runs of buckets) keeps starting
// fragments while the one at the head is slow, at most the fan-out of them running at once
// and at most 4× the fan-out started ahead of the one consumed: with the first bucket's read
// held, the later fragments read more buckets than the head and fan-out − 1 followers of at
// most 16 buckets could (the bound of a window of the fan-out alone), then stop; once the
// head is let go, the answer is the brute-force count.
func TestGroupedWindow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := span(0, days(numDays))
	want := int64(len(expected(pGeneral, r, false, -1)))
	{
		const fanout = 2 // runs of 7 buckets at first (groupSize)
		gate := make(chan struct{})
		p := &probe{HotStore: fixtures(t)[0].store, fail: func(b routing.BucketID) error {
			if b.Start.Equal(day0) {
				<-gate
			}
			return nil
		}}
		tbl := fixtures(t)[0].table(t, p, fanout, false)
		type answer struct {
			n   int64
			err error
		}
		done := make(chan answer, 1)
		go func() {
			res, err := execute(ctx, &scanSpec{Table: tbl, Partition: []byte(pGeneral), Range: r}, "SELECT count(*)"+routedWhere, testPool)
			if err != nil {
				done <- answer{err: err}
				return
			}
			defer res.Release()
			var n int64
			for res.Next() {
				n = res.RecordBatch().Column(0).(*array.Int64).Value(0)
			}
			done <- answer{n, res.Err()}
		}()
		// Wait (up to 10 s on a loaded machine) until the reads pass what a window of the
		// fan-out alone allows, then until they stop: the window is full behind the held head.
		fanoutOnly := int64(1 + (fanout-1)*16)
		for deadline := time.Now().Add(10 * time.Second); p.calls.Load() <= fanoutOnly && time.Now().Before(deadline); {
			time.Sleep(5 * time.Millisecond)
		}
		var calls int64
		for last, still := int64(-1), 0; still < 20; time.Sleep(10 * time.Millisecond) {
			if calls = p.calls.Load(); calls == last {
				still++
			} else {
				last, still = calls, 0
			}
		}
		if calls <= fanoutOnly || calls >= int64(numDays) {
			close(gate)
			t.Fatalf("fan-out %d: %d bucket reads while the head's first bucket was held, want more than %d and fewer than %d", fanout, calls, fanoutOnly, numDays)
		}
		close(gate)
		a := <-done
		if a.err != nil || a.n != want {
			t.Fatalf("fan-out %d: count %d (%v), want %d", fanout, a.n, a.err, want)
		}
		// The followers' reads may all have run before the head's goroutine reached its first
		// bucket (a loaded machine), so overlapping reads are not asked for, only the bound.
		if m := p.max.Load(); m > fanout || p.cur.Load() != 0 {
			t.Fatalf("fan-out %d: %d concurrent bucket reads, %d still running after the query", fanout, m, p.cur.Load())
		}
		if p.calls.Load() != int64(numDays) {
			t.Fatalf("fan-out %d: %d bucket reads of %d buckets", fanout, p.calls.Load(), numDays)
		}
	}
}
