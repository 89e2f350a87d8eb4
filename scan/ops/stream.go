package ops

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flightsrv/flightsrv/internal/panics"
	"github.com/flightsrv/flightsrv/scan/ledger"
)

// MaxBatchRows is the most rows a batch emitted by an operator of this package holds.
const MaxBatchRows = 8192

// MaxBatchBytes is the most bytes of values of top-level string and binary columns a batch
// emitted by an operator of this package holds, unless one row alone holds more (it is then
// emitted alone). It keeps each Flight message well under gRPC's 4 MiB default.
const MaxBatchBytes = 2 << 20

// stream is the reader every operator returns: pull produces the next batch (owned by the
// stream, possibly empty or oversized: the stream drops empty batches and slices big ones) or
// nil at the end; done releases the operator's inputs and state and is called exactly once, at
// the end, on the first error or on the last Release. Not safe for concurrent use, except
// Retain and Release.
type stream struct {
	refs   atomic.Int64
	schema *arrow.Schema
	pull   func() (arrow.RecordBatch, error)
	done   func()

	cur arrow.RecordBatch
	// big is a batch pulled beyond the batch limits, emitted as zero-copy slices from row at,
	// one per Next: the slices of a wide batch cost ColumnOverhead per column each, so they
	// are made as they are read, never all at once.
	big      arrow.RecordBatch
	at       int
	err      error
	finished bool
}

func newStream(schema *arrow.Schema, pull func() (arrow.RecordBatch, error), done func()) *stream {
	s := &stream{schema: schema, pull: pull, done: done}
	s.refs.Store(1)
	return s
}

// Schema returns the schema of the batches.
func (s *stream) Schema() *arrow.Schema { return s.schema }

// RecordBatch returns the current batch, valid until the next call of Next or Release; the
// caller retains it to keep it longer.
func (s *stream) RecordBatch() arrow.RecordBatch { return s.cur }

// Record is RecordBatch (the deprecated name of array.RecordReader).
func (s *stream) Record() arrow.RecordBatch { return s.cur }

// Err returns the error that ended the stream, nil after a clean end.
func (s *stream) Err() error { return s.err }

// Retain adds a reference.
func (s *stream) Retain() { s.refs.Add(1) }

// Release drops a reference; the last one releases the current batch, the operator's inputs and
// its state.
func (s *stream) Release() {
	if s.refs.Add(-1) != 0 {
		return
	}
	if s.cur != nil {
		s.cur.Release()
		s.cur = nil
	}
	if s.big != nil {
		s.big.Release()
		s.big = nil
	}
	s.finish()
}

// Next advances to the next non-empty batch.
func (s *stream) Next() bool {
	if s.cur != nil {
		s.cur.Release()
		s.cur = nil
	}
	for {
		if s.big != nil {
			n := int(s.big.NumRows())
			end := cutAt(s.big.Columns(), s.at, n)
			s.cur = s.big.NewSlice(int64(s.at), int64(end))
			if s.at = end; end == n {
				s.big.Release()
				s.big = nil
			}
			return true
		}
		if s.finished {
			return false
		}
		b, err := s.safePull()
		switch {
		case err != nil:
			if b != nil {
				b.Release()
			}
			s.err = err
			s.finish()
			return false
		case b == nil:
			s.finish()
			return false
		case b.NumRows() == 0:
			b.Release()
			continue
		}
		if fitsBatch(b) {
			s.cur = b
			return true
		}
		s.big, s.at = b, 0
	}
}

// safePull calls pull, turning a panic (an arrow-go kernel meeting data it does not expect)
// into an error.
func (s *stream) safePull() (b arrow.RecordBatch, err error) {
	defer func() {
		if p := recover(); p != nil {
			b, err = nil, panics.FromValue("operator", p)
		}
	}()
	return s.pull()
}

func (s *stream) finish() {
	s.finished = true
	if d := s.done; d != nil {
		s.done = nil
		d()
	}
}

// errStream returns a reader of schema (an empty schema when nil) whose first Next fails with
// err, after releasing inputs.
func errStream(schema *arrow.Schema, err error, inputs ...array.RecordReader) array.RecordReader {
	if schema == nil {
		schema = arrow.NewSchema(nil, nil)
	}
	releaseAll(inputs)
	return newStream(schema, func() (arrow.RecordBatch, error) { return nil, err }, nil)
}

// emptyStream returns a reader of schema that yields no batch, after releasing inputs.
func emptyStream(schema *arrow.Schema, inputs ...array.RecordReader) array.RecordReader {
	releaseAll(inputs)
	return newStream(schema, func() (arrow.RecordBatch, error) { return nil, nil }, nil)
}

func releaseAll(rs []array.RecordReader) {
	for _, r := range rs {
		if r != nil {
			r.Release()
		}
	}
}

// owned wraps a reader so that it is released once, by whichever of its users finishes first.
type owned struct{ r array.RecordReader }

func (o *owned) release() {
	if o.r != nil {
		o.r.Release()
		o.r = nil
	}
}

// next returns the input's next batch with rows, retained (the caller releases it), after
// checking ctx; nil at the end of the input, which it then releases, or with the input's
// error or ctx's.
func (o *owned) next(ctx context.Context) (arrow.RecordBatch, error) {
	for {
		if o.r == nil || !o.r.Next() {
			if o.r == nil {
				return nil, nil
			}
			err := o.r.Err()
			o.release()
			return nil, err
		}
		if err := ctxErr(ctx); err != nil {
			return nil, err
		}
		if b := o.r.RecordBatch(); b.NumRows() > 0 {
			b.Retain()
			return b, nil
		}
	}
}

// allocator returns the allocator of mem (memory.DefaultAllocator when nil).
func allocator(mem *ledger.Ledger) memory.Allocator {
	if mem == nil {
		return memory.DefaultAllocator
	}
	return mem
}

// computeCtx returns ctx carrying mem's allocator for arrow-go's compute functions.
func computeCtx(ctx context.Context, mem *ledger.Ledger) context.Context {
	return compute.WithAllocator(ctx, allocator(mem))
}

// ctxErr returns ctx's error prefixed for this package.
func ctxErr(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("ops: %w", err)
	}
	return nil
}

// sameTypes reports whether a and b have the same number of fields of equal types.
func sameTypes(a, b *arrow.Schema) bool {
	if a.NumFields() != b.NumFields() {
		return false
	}
	for i := range a.NumFields() {
		if !arrow.TypeEqual(a.Field(i).Type, b.Field(i).Type) {
			return false
		}
	}
	return true
}

// --- batch sizes -------------------------------------------------------------------------

// varBytes returns the bytes of string and binary values of rows [i, j) of the top-level
// variable-width columns of cols.
func varBytes(cols []arrow.Array, i, j int) int64 {
	var n int64
	for _, c := range cols {
		n += colVarBytes(c, i, j)
	}
	return n
}

func colVarBytes(c arrow.Array, i, j int) int64 {
	if i >= j {
		return 0
	}
	switch a := c.(type) {
	case *array.String:
		o := a.ValueOffsets()
		return int64(o[j] - o[i])
	case *array.Binary:
		o := a.ValueOffsets()
		return int64(o[j] - o[i])
	case *array.LargeString:
		o := a.ValueOffsets()
		return o[j] - o[i]
	case *array.LargeBinary:
		o := a.ValueOffsets()
		return o[j] - o[i]
	case *array.StringView:
		var n int64
		for k := i; k < j; k++ {
			n += int64(a.ValueLen(k))
		}
		return n
	case *array.BinaryView:
		var n int64
		for k := i; k < j; k++ {
			n += int64(a.ValueLen(k))
		}
		return n
	}
	return 0
}

// hasVarCols reports whether any column is a top-level string or binary column.
func hasVarCols(cols []arrow.Array) bool {
	for _, c := range cols {
		if isVar(c.DataType()) {
			return true
		}
	}
	return false
}

// fitsBatch reports whether b is within the batch limits: at most MaxBatchRows rows,
// MaxBatchBytes bytes of string and binary values and MaxBatchTotalBytes bytes in all
// (batchSizes; one pass over the columns' offsets).
func fitsBatch(b arrow.RecordBatch) bool {
	n := int(b.NumRows())
	if n > MaxBatchRows {
		return false
	}
	vars, total := batchSizes(b.Columns(), 0, n)
	return vars <= MaxBatchBytes && total <= MaxBatchTotalBytes
}

// cutAt returns the end of the largest piece of rows from start within the batch limits (at
// least one row, at most MaxBatchRows, at most MaxBatchBytes of variable-width values and
// MaxBatchTotalBytes in all unless one row holds more).
func cutAt(cols []arrow.Array, start, n int) int {
	fits := func(end int) bool {
		vars, total := batchSizes(cols, start, end)
		return vars <= MaxBatchBytes && total <= MaxBatchTotalBytes
	}
	end := min(n, start+MaxBatchRows)
	if fits(end) {
		return end
	}
	lo, hi := start+1, end // the first row may exceed the limits: one row at least
	for lo < hi {
		mid := lo + (hi-lo+1)/2
		if fits(mid) {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}
