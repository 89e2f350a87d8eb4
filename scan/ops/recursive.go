package ops

import (
	"context"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"

	"github.com/flightsrv/flightsrv/scan/ledger"
)

// RecursiveUnion evaluates a recursive query (WITH RECURSIVE, PostgreSQL's recursive union):
// it streams the non-recursive term's rows (seed), which become the working table; then, while
// the working table holds rows, step(working table) — the recursive term over it — whose rows
// are streamed and become the next working table. With distinct (UNION) a row already
// returned, or repeated, is dropped (NULLs equal, as UNION compares rows; every column of a
// JoinKeyType). The batches come in the schema given (the terms' columns are of its types).
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
func RecursiveUnion(ctx context.Context, seed array.RecordReader, schema *arrow.Schema, step func([]arrow.RecordBatch) (array.RecordReader, error),
	distinct bool, mem *ledger.Ledger, fallback int64) array.RecordReader {
	cur := seed
	var work, next []arrow.RecordBatch
	var seen map[string]struct{}
	if distinct {
		seen = map[string]struct{}{}
	}
	var claimed int64
	var key []byte
	ctx = compute.WithAllocator(ctx, mem)
	releaseBatches := func(bs []arrow.RecordBatch) {
		for _, b := range bs {
			b.Release()
		}
	}
	// produce returns the recursion's next batch (kept in next, the stream owns a reference
	// to it), nil at the end.
	produce := func() (arrow.RecordBatch, error) {
		for {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			if cur != nil && cur.Next() {
				b := cur.RecordBatch()
				n := int(b.NumRows())
				var size int64
				if distinct {
					var keep []int
					for r := range n {
						key = key[:0]
						for _, c := range b.Columns() {
							if c.IsNull(r) {
								key = append(key, 0)
								continue
							}
							key = appendKey(append(key, 1), c, r, true)
						}
						if _, dup := seen[string(key)]; dup {
							continue
						}
						seen[string(key)] = struct{}{}
						size += int64(len(key)) + 16
						keep = append(keep, r)
					}
					if len(keep) == 0 {
						continue
					}
					t, err := takeRows(ctx, b, keep, n)
					if err != nil {
						return nil, err
					}
					b = t
				} else {
					b.Retain()
				}
				out := array.NewRecordBatch(schema, b.Columns(), b.NumRows())
				b.Release()
				size += batchBytes(out) + batchOverhead
				if err := mem.Claim(size); err != nil {
					out.Release()
					return nil, err
				}
				claimed += size
				if mem.Limit() <= 0 && fallback > 0 && claimed > fallback {
					out.Release()
					return nil, ledger.LimitError(fallback)
				}
				out.Retain()
				next = append(next, out)
				return out, nil
			}
			if cur != nil {
				err := cur.Err()
				cur.Release()
				cur = nil
				if err != nil {
					return nil, err
				}
			}
			releaseBatches(work)
			work, next = next, nil
			if len(work) == 0 {
				return nil, nil
			}
			r, err := step(work)
			if err != nil {
				return nil, err
			}
			cur = r
		}
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
			b, err := produce()
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
		if cur != nil {
			cur.Release()
			cur = nil
		}
		releaseBatches(work)
		releaseBatches(next)
		work, next = nil, nil
		mem.Unclaim(claimed)
		claimed = 0
	})
}

// coalesceWait bounds the time RecursiveUnion spends coalescing small batches before it
// emits the rows it has: a reader waiting for the first rows of a recursion of slow
// iterations gets them after about this long.
const coalesceWait = 2 * time.Millisecond

// batchOverhead is what a batch kept by a recursion costs beside its buffers (its structures),
// counted so that a recursion of one small row an iteration meets the limit soon.
const batchOverhead = 1024

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
