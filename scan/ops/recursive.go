package ops

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"

	"github.com/flightsrv/flightsrv/scan/ledger"
)

// RecursiveTerm is how RecursiveUnion opens a recursive query's recursive term.
type RecursiveTerm struct {
	// Open opens the term over one working table (its batches, of the union's schema); it is
	// called once per iteration.
	Open func(work []arrow.RecordBatch) (array.RecordReader, error)
	// Stream, when not nil, is called instead of Open, once: it opens the term over a reader
	// of every working table in turn (an iteration's batches, then the next iteration's),
	// which ends when an iteration yields no rows, or with ctx's error when the query is
	// cancelled (checked between iterations). It is only for a term that reads its input as
	// Filter, Project and Select do: one batch at a time, emitting every row it derives from
	// a batch before it asks for the next, so that when the reader is asked for a batch past
	// the end of a working table, the next working table (the rows the term derived from it)
	// is complete.
	Stream func(feed array.RecordReader) (array.RecordReader, error)
}

// RecursiveUnion evaluates a recursive query (WITH RECURSIVE, PostgreSQL's recursive union):
// it streams the non-recursive term's rows (seed), which become the working table; then, while
// the working table holds rows, the recursive term over it (term), whose rows are streamed
// and become the next working table. With distinct (UNION) a row already returned, or
// repeated, is dropped (NULLs equal, as UNION compares rows; every column of a JoinKeyType).
// The batches come in the schema given (the terms' columns are of its types).
//
// Every row the recursion keeps is claimed from mem (ledger.Claim) until the stream is
// released, as though all were held, so a recursion that does not end fails with mem's
// limit (an error wrapping ledger.ErrMemoryLimit) rather than running on; a ledger without a
// limit bounds it at fallback bytes (ledger.LimitError(fallback)). A reader that stops
// pulling (a LIMIT above) ends the recursion soon after: the terms are evaluated as their rows
// are asked for, though the rows of consecutive small batches (an iteration of a few rows
// each) are coalesced into one batch (up to MaxBatchRows/2 rows, MaxBatchBytes and
// MaxBatchTotalBytes, or as many as come in coalesceWait) so that the operators above pay
// their per-batch cost once per coalesced batch, not once per iteration. An error met while
// coalescing (the recursive term's, the memory limit, a cancellation) is returned after the
// rows before it, as the next call's: a reader that stops before it (a LIMIT) never sees it,
// as PostgreSQL, evaluating the recursion row by row, never reaches it. ctx is checked before
// every iteration.
func RecursiveUnion(ctx context.Context, seed array.RecordReader, schema *arrow.Schema, term RecursiveTerm,
	distinct bool, mem *ledger.Ledger, fallback int64) array.RecordReader {
	u := &recursion{ctx: compute.WithAllocator(ctx, mem), cur: seed, schema: schema, term: term, mem: mem, fallback: fallback}
	if distinct {
		u.seen = map[string]struct{}{}
	}
	var (
		pending []arrow.RecordBatch
		queued  arrow.RecordBatch // a batch to emit after the pending ones
		failed  error             // an error met while coalescing, returned after pending
		ended   bool
	)
	flush := func() (arrow.RecordBatch, error) {
		b, err := concatBatches(schema, pending, allocator(mem))
		releaseBatches(pending)
		pending = pending[:0]
		return b, err
	}
	pull := func() (arrow.RecordBatch, error) {
		if queued != nil {
			b := queued
			queued = nil
			return b, nil
		}
		if failed != nil || ended {
			return nil, failed
		}
		var rows, vbytes, tbytes int64
		var start time.Time
		for {
			b, err := u.produce()
			if err != nil || b == nil {
				failed, ended = err, true
				if len(pending) == 0 {
					return nil, err
				}
				return flush()
			}
			n := b.NumRows()
			if n >= MaxBatchRows/2 && len(pending) == 0 {
				return b, nil
			}
			vb, tb := varBytes(b.Columns(), 0, int(n)), batchBytes(b)
			if len(pending) > 0 && (rows+n > MaxBatchRows || vbytes+vb > MaxBatchBytes || tbytes+tb > MaxBatchTotalBytes) {
				queued = b
				return flush()
			}
			if len(pending) == 0 {
				start = time.Now()
			}
			pending = append(pending, b)
			rows, vbytes, tbytes = rows+n, vbytes+vb, tbytes+tb
			if rows >= MaxBatchRows/2 || vbytes >= MaxBatchBytes || tbytes >= MaxBatchTotalBytes || time.Since(start) >= coalesceWait {
				return flush()
			}
		}
	}
	return newStream(schema, pull, func() {
		releaseBatches(pending)
		pending = nil
		if queued != nil {
			queued.Release()
			queued = nil
		}
		u.release()
	})
}

// recursion is RecursiveUnion's state: the term being read (the seed, then the recursive
// term), the working table the recursive term reads and the next one it is filling.
type recursion struct {
	ctx      context.Context
	cur      array.RecordReader
	schema   *arrow.Schema
	term     RecursiveTerm
	mem      *ledger.Ledger
	fallback int64
	// streamed is set once term.Stream has opened the term over feed.
	streamed bool
	feed     workFeed
	// work is the working table, next the rows of the running iteration.
	work, next []arrow.RecordBatch
	seen       map[string]struct{} // UNION's rows returned, by key
	key        []byte
	claimed    int64
}

// produce returns the recursion's next batch (kept in next; the caller owns a reference to
// it), nil at the end.
func (u *recursion) produce() (arrow.RecordBatch, error) {
	for {
		if err := u.ctx.Err(); err != nil {
			return nil, err
		}
		if u.cur != nil && u.cur.Next() {
			out, err := u.keep(u.cur.RecordBatch())
			if out == nil && err == nil {
				continue
			}
			return out, err
		}
		if u.cur != nil {
			err := u.cur.Err()
			u.cur.Release()
			u.cur = nil
			if err != nil {
				return nil, err
			}
		}
		if u.streamed {
			// The term opened once ended: its feed found an iteration without rows.
			return nil, nil
		}
		releaseBatches(u.work)
		u.work, u.next = u.next, nil
		if len(u.work) == 0 {
			return nil, nil
		}
		var r array.RecordReader
		var err error
		if u.term.Stream != nil {
			u.streamed = true
			u.feed = workFeed{u: u}
			u.feed.refs.Store(1)
			r, err = u.term.Stream(&u.feed)
		} else {
			r, err = u.term.Open(u.work)
		}
		if err != nil {
			return nil, err
		}
		u.cur = r
	}
}

// keep returns the rows of b the recursion keeps (UNION drops those already returned) in
// its schema, appended to the next working table and claimed from the ledger; nil when it
// keeps none.
func (u *recursion) keep(b arrow.RecordBatch) (arrow.RecordBatch, error) {
	n := int(b.NumRows())
	var size int64
	if u.seen != nil {
		var keep []int
		for r := range n {
			u.key = u.key[:0]
			for _, c := range b.Columns() {
				if c.IsNull(r) {
					u.key = append(u.key, 0)
					continue
				}
				u.key = appendKey(append(u.key, 1), c, r, true)
			}
			if _, dup := u.seen[string(u.key)]; dup {
				continue
			}
			u.seen[string(u.key)] = struct{}{}
			size += int64(len(u.key)) + 16
			keep = append(keep, r)
		}
		if len(keep) == 0 {
			return nil, nil
		}
		t, err := takeRows(u.ctx, b, keep, n)
		if err != nil {
			return nil, err
		}
		b = t
	} else {
		b.Retain()
	}
	out := array.NewRecordBatch(u.schema, b.Columns(), b.NumRows())
	b.Release()
	size += batchBytes(out) + batchOverhead
	if err := u.mem.Claim(size); err != nil {
		out.Release()
		return nil, err
	}
	u.claimed += size
	if u.mem.Limit() <= 0 && u.fallback > 0 && u.claimed > u.fallback {
		out.Release()
		return nil, ledger.LimitError(u.fallback)
	}
	out.Retain()
	u.next = append(u.next, out)
	return out, nil
}

// release releases the term being read and the working tables, and gives back the claim.
func (u *recursion) release() {
	if u.cur != nil {
		u.cur.Release()
		u.cur = nil
	}
	releaseBatches(u.work)
	releaseBatches(u.next)
	u.work, u.next = nil, nil
	u.mem.Unclaim(u.claimed)
	u.claimed = 0
}

// workFeed is the reader RecursiveTerm.Stream's term reads: the batches of the working table,
// and past its end, those of the next one (the rows the term derived from it) made the
// working table, until one is empty. Its batches are the recursion's (released by it).
type workFeed struct {
	refs atomic.Int64
	u    *recursion
	at   int // the next batch of u.work
	cur  arrow.RecordBatch
	err  error
	done bool
}

func (f *workFeed) Schema() *arrow.Schema { return f.u.schema }

func (f *workFeed) Next() bool {
	f.cur = nil
	for !f.done {
		if f.at < len(f.u.work) {
			f.cur = f.u.work[f.at]
			f.at++
			return true
		}
		// The term has emitted every row of the working table (its contract): the next one
		// is complete.
		if err := f.u.ctx.Err(); err != nil {
			f.err, f.done = err, true
			return false
		}
		releaseBatches(f.u.work)
		f.u.work, f.u.next, f.at = f.u.next, nil, 0
		f.done = len(f.u.work) == 0
	}
	return false
}

func (f *workFeed) RecordBatch() arrow.RecordBatch { return f.cur }

// Record is RecordBatch (the deprecated name of array.RecordReader).
func (f *workFeed) Record() arrow.RecordBatch { return f.cur }

func (f *workFeed) Err() error { return f.err }

func (f *workFeed) Retain() { f.refs.Add(1) }

// Release drops a reference; the batches are the recursion's, which releases them.
func (f *workFeed) Release() {
	if f.refs.Add(-1) == 0 {
		f.cur = nil
	}
}

// coalesceWait bounds the time RecursiveUnion spends coalescing small batches before it
// emits the rows it has: a reader waiting for the first rows of a recursion of slow
// iterations gets them after about this long.
const coalesceWait = 2 * time.Millisecond

// batchOverhead is what a batch kept by a recursion is claimed for beside its buffers (its
// structures), so that a recursion of one small row an iteration that does not end meets the
// limit: after about a million iterations under the server's default 256 MiB (a few seconds
// of CPU). At 1,024 bytes it met it after 250,000, where PostgreSQL answers a 400,000-step
// recursion in a fraction of a second (trial31); the batches of an iteration are released
// after the next, so the claim bounds the recursion rather than counting what it holds.
const batchOverhead = 256

// batchBytes is the size of b's buffers.
func batchBytes(b arrow.RecordBatch) int64 {
	var n int64
	var data func(d arrow.ArrayData)
	data = func(d arrow.ArrayData) {
		for _, buf := range d.Buffers() {
			if buf != nil {
				n += int64(buf.Len())
			}
		}
		for _, c := range d.Children() {
			data(c)
		}
	}
	for _, c := range b.Columns() {
		data(c.Data())
	}
	return n
}

// releaseBatches releases every batch of bs.
func releaseBatches(bs []arrow.RecordBatch) {
	for _, b := range bs {
		b.Release()
	}
}
