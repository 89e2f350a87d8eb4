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
// next(n) FROM t WHERE n < stop): a reader of next(n) for each row of the working table below
// stop; opening it over a working table holding failAt fails with errTerm.
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

func (r *recursion) step(work []arrow.RecordBatch) (array.RecordReader, error) {
	r.opened++
	var out []int64
	for _, b := range work {
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
	}
	if len(out) == 0 {
		return newSource(r.t, recSchema, nil), nil
	}
	b := int64Batch(r.mem, out...)
	defer b.Release()
	return newSource(r.t, recSchema, []arrow.RecordBatch{b}), nil
}

func (r *recursion) run(ctx context.Context, mem *ledger.Ledger, distinct bool) array.RecordReader {
	seed := int64Batch(mem, 1)
	defer seed.Release()
	return ops.RecursiveUnion(ctx, newSource(r.t, recSchema, []arrow.RecordBatch{seed}), recSchema, r.step, distinct, mem, 1<<30)
}

// TestRecursiveUnionCoalesces: a recursion of one row an iteration returns its rows in
// order (UNION ALL) in batches of many iterations; UNION drops the rows already returned and
// ends when an iteration adds none.
func TestRecursiveUnionCoalesces(t *testing.T) {
	ctx := context.Background()
	mem := newMem(t, 0)
	r := &recursion{t: t, mem: mem, next: func(n int64) int64 { return n + 1 }, stop: 10000, failAt: -1}
	bs, err := drain(t, r.run(ctx, mem, false))
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
	if len(bs) > 10000/4 {
		t.Errorf("%d batches for 10000 iterations of a row: not coalesced", len(bs))
	}
	d := &recursion{t: t, mem: mem, next: func(n int64) int64 { return n%3 + 1 }, stop: 100, failAt: -1}
	bs2, err := drain(t, d.run(ctx, mem, true))
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
func TestRecursiveUnionDeferredError(t *testing.T) {
	ctx := context.Background()
	mem := newMem(t, 0)
	r := &recursion{t: t, mem: mem, next: func(n int64) int64 { return n + 1 }, stop: 1 << 40, failAt: 5000}
	bs, err := drain(t, r.run(ctx, mem, false))
	defer releaseBatches(bs)
	if !errors.Is(err, errTerm) {
		t.Fatalf("error %v, want the term's", err)
	}
	if got := ints(t, bs, 0); len(got) != 5000 || *got[4999] != 5000 {
		t.Fatalf("%d rows before the error, want 5000", len(got))
	}
	// The first batch holds the rows before the failing iteration; the error waits.
	r = &recursion{t: t, mem: mem, next: func(n int64) int64 { return n + 1 }, stop: 1 << 40, failAt: 3}
	rd := r.run(ctx, mem, false)
	defer rd.Release()
	if !rd.Next() || rd.Err() != nil || rd.RecordBatch().NumRows() != 3 {
		t.Fatalf("first batch: %v", rd.Err())
	}
	if rd.Next() || !errors.Is(rd.Err(), errTerm) {
		t.Fatalf("after the rows: %v, want the term's error", rd.Err())
	}
}

// TestRecursiveUnionCancel: a cancellation ends a recursion without end before its next
// iteration; the memory limit ends one with ledger.ErrMemoryLimit.
func TestRecursiveUnionCancel(t *testing.T) {
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
	bs, err := drain(t, r.run(ctx, mem, false))
	releaseBatches(bs)
	if !errors.Is(err, context.Canceled) || after > 0 {
		t.Fatalf("%v after %d more iterations, want a prompt cancellation", err, after)
	}
	limited := newMem(t, 1<<20)
	r = &recursion{t: t, mem: limited, next: func(n int64) int64 { return n + 1 }, stop: 1 << 40, failAt: -1}
	bs, err = drain(t, r.run(context.Background(), limited, false))
	releaseBatches(bs)
	if !errors.Is(err, ledger.ErrMemoryLimit) {
		t.Fatalf("%v, want the memory limit", err)
	}
}
