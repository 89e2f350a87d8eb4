package ops

import (
	"context"

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
// pulling (a LIMIT above) ends the recursion there: terms are evaluated as their rows are
// asked for, as PostgreSQL's.
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
	pull := func() (arrow.RecordBatch, error) {
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
	return newStream(schema, pull, func() {
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
