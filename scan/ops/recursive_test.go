package ops_test

import (
	"context"
	"errors"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flightsrv/flightsrv/scan/ledger"
	"github.com/flightsrv/flightsrv/scan/ops"
)

var recSchema = arrow.NewSchema([]arrow.Field{{Name: "n", Type: arrow.PrimitiveTypes.Int64}}, nil)

// int64Batch is a batch of recSchema holding vs.
func int64Batch(mem memory.Allocator, vs ...int64) arrow.RecordBatch {
	b := array.NewInt64Builder(mem)
	defer b.Release()
	b.AppendValues(vs, nil)
	a := b.NewArray()
	defer a.Release()
	return array.NewRecordBatch(recSchema, []arrow.Array{a}, int64(len(vs)))
}

// recursion is the recursive term of WITH RECURSIVE t(n) AS (SELECT 1 UNION [ALL] SELECT
// next(n) FROM t WHERE n < stop): next(n) for each row of the working table below stop; a
// working table holding failAt fails with errTerm. opened counts the term's iterations (the
// working table batches it read when streamed).
type recursion struct {
	t      testing.TB
	mem    memory.Allocator
	next   func(int64) int64
	stop   int64
	failAt int64
	opened int
	after  func(n int64) // called with each working table row
}

var errTerm = errors.New("ops: the recursive term failed")

// derive returns the rows the term derives from b (nil for none), or errTerm.
func (r *recursion) derive(b arrow.RecordBatch) (arrow.RecordBatch, error) {
	var out []int64
	for _, n := range b.Column(0).(*array.Int64).Int64Values() {
		if n == r.failAt {
			return nil, errTerm
		}
		if r.after != nil {
			r.after(n)
		}
		if n < r.stop {
			out = append(out, r.next(n))
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	return int64Batch(r.mem, out...), nil
}

// open is RecursiveTerm.Open: the term over one working table.
func (r *recursion) open(work []arrow.RecordBatch) (array.RecordReader, error) {
	r.opened++
	var bs []arrow.RecordBatch
	defer func() { releaseBatches(bs) }()
	for _, b := range work {
		d, err := r.derive(b)
		if err != nil {
			return nil, err
		}
		if d != nil {
			bs = append(bs, d)
		}
	}
	return newSource(r.t, recSchema, bs), nil
}

// termReader is RecursiveTerm.Stream's term: derive of each batch of its input, read one at
// a time.
type termReader struct {
	refs int
	r    *recursion
	in   array.RecordReader
	cur  arrow.RecordBatch
	err  error
}

func (t *termReader) Schema() *arrow.Schema { return recSchema }
func (t *termReader) Next() bool {
	if t.cur != nil {
		t.cur.Release()
		t.cur = nil
	}
	for t.err == nil && t.in.Next() {
		t.r.opened++
		d, err := t.r.derive(t.in.RecordBatch())
		if err != nil {
			t.err = err
			return false
		}
		if d != nil {
			t.cur = d
			return true
		}
	}
	if t.err == nil {
		t.err = t.in.Err()
	}
	return false
}
func (t *termReader) RecordBatch() arrow.RecordBatch { return t.cur }
func (t *termReader) Record() arrow.RecordBatch      { return t.cur }
func (t *termReader) Err() error                     { return t.err }
func (t *termReader) Retain()                        { t.refs++ }
func (t *termReader) Release() {
	if t.refs--; t.refs == 0 {
		if t.cur != nil {
			t.cur.Release()
		}
		t.in.Release()
	}
}

func (r *recursion) run(ctx context.Context, mem *ledger.Ledger, distinct, streamed bool) array.RecordReader {
	seed := int64Batch(mem, 1)
	defer seed.Release()
	term := ops.RecursiveTerm{Open: r.open}
	if streamed {
		term.Stream = func(feed array.RecordReader) (array.RecordReader, error) {
			return &termReader{refs: 1, r: r, in: feed}, nil
		}
	}
	return ops.RecursiveUnion(ctx, newSource(r.t, recSchema, []arrow.RecordBatch{seed}), recSchema, term, distinct, mem, 1<<30)
}

// forms runs test with the recursive term opened per iteration and opened once (streamed).
func forms(t *testing.T, test func(t *testing.T, streamed bool)) {
	for _, streamed := range []bool{false, true} {
		t.Run(map[bool]string{false: "per iteration", true: "streamed"}[streamed], func(t *testing.T) { test(t, streamed) })
	}
}

// TestRecursiveUnionCoalesces: a recursion of one row an iteration returns its rows in
// order (UNION ALL) in batches of many iterations; UNION drops the rows already returned and
// ends when an iteration adds none.
func TestRecursiveUnionCoalesces(t *testing.T) { forms(t, testCoalesces) }

func testCoalesces(t *testing.T, streamed bool) {
	ctx := context.Background()
	mem := newMem(t, 0)
	r := &recursion{t: t, mem: mem, next: func(n int64) int64 { return n + 1 }, stop: 10000, failAt: -1}
	bs, err := drain(t, r.run(ctx, mem, false, streamed))
	defer releaseBatches(bs)
	if err != nil {
		t.Fatal(err)
	}
	got := ints(t, bs, 0)
	if len(got) != 10000 {
		t.Fatalf("%d rows, want 10000", len(got))
	}
	for i, v := range got {
		if *v != int64(i+1) {
			t.Fatalf("row %d is %d", i, *v)
		}
	}
	if len(bs) > 10000/2 {
		t.Errorf("%d batches for 10000 iterations of a row: not coalesced", len(bs))
	}
	d := &recursion{t: t, mem: mem, next: func(n int64) int64 { return n%3 + 1 }, stop: 100, failAt: -1}
	bs2, err := drain(t, d.run(ctx, mem, true, streamed))
	defer releaseBatches(bs2)
	if err != nil {
		t.Fatal(err)
	}
	if got := ints(t, bs2, 0); len(got) != 3 || *got[0] != 1 || *got[1] != 2 || *got[2] != 3 || d.opened != 3 {
		t.Errorf("UNION: %d rows, %d iterations, want 1, 2, 3 in 3", len(got), d.opened)
	}
}

// TestRecursiveUnionDeferredError: the recursive term's error comes after every row before
// it, and a reader that stops before those rows end (a LIMIT) never sees it.
func TestRecursiveUnionDeferredError(t *testing.T) { forms(t, testDeferredError) }

func testDeferredError(t *testing.T, streamed bool) {
	ctx := context.Background()
	mem := newMem(t, 0)
	r := &recursion{t: t, mem: mem, next: func(n int64) int64 { return n + 1 }, stop: 1 << 40, failAt: 5000}
	bs, err := drain(t, r.run(ctx, mem, false, streamed))
	defer releaseBatches(bs)
	if !errors.Is(err, errTerm) {
		t.Fatalf("error %v, want the term's", err)
	}
	if got := ints(t, bs, 0); len(got) != 5000 || *got[4999] != 5000 {
		t.Fatalf("%d rows before the error, want 5000", len(got))
	}
	// A reader that stops after the rows before the failing iteration (a LIMIT 3) sees no
	// error; one that reads on, the term's.
	r = &recursion{t: t, mem: mem, next: func(n int64) int64 { return n + 1 }, stop: 1 << 40, failAt: 3}
	rd := r.run(ctx, mem, false, streamed)
	defer rd.Release()
	var rows int64
	for rows < 3 && rd.Next() {
		rows += rd.RecordBatch().NumRows()
	}
	if rows != 3 || rd.Err() != nil {
		t.Fatalf("%d rows, %v; want 3 without an error", rows, rd.Err())
	}
	if rd.Next() || !errors.Is(rd.Err(), errTerm) {
		t.Fatalf("after the rows: %v, want the term's error", rd.Err())
	}
}

// TestRecursiveUnionCancel: a cancellation ends a recursion without end before its next
// iteration; the memory limit ends one with ledger.ErrMemoryLimit.
func TestRecursiveUnionCancel(t *testing.T) { forms(t, testCancel) }

func testCancel(t *testing.T, streamed bool) {
	mem := newMem(t, 0)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var after int
	r := &recursion{t: t, mem: mem, next: func(n int64) int64 { return n + 1 }, stop: 1 << 40, failAt: -1}
	r.after = func(n int64) {
		if n == 100 {
			cancel()
		}
		if n > 100 {
			after++
		}
	}
	bs, err := drain(t, r.run(ctx, mem, false, streamed))
	releaseBatches(bs)
	if !errors.Is(err, context.Canceled) || after > 0 {
		t.Fatalf("%v after %d more iterations, want a prompt cancellation", err, after)
	}
	limited := newMem(t, 1<<20)
	r = &recursion{t: t, mem: limited, next: func(n int64) int64 { return n + 1 }, stop: 1 << 40, failAt: -1}
	bs, err = drain(t, r.run(context.Background(), limited, false, streamed))
	releaseBatches(bs)
	if !errors.Is(err, ledger.ErrMemoryLimit) {
		t.Fatalf("%v, want the memory limit", err)
	}
}
