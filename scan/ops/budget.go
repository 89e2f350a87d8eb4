package ops

import (
	"github.com/apache/arrow-go/v18/arrow"
)

// MaxBatchTotalBytes is the most bytes a batch emitted by an operator of this package holds in
// all the buffers of its columns (fixed-width values, string and binary values and their
// offsets, validity bitmaps; a buffer two columns share counted for each), unless one row
// alone holds more: what the batch's Flight message carries, each column's buffers copied into
// its body. It is above what a store's batch of MaxBatchBytes of values and a few fixed-width
// columns holds (routing's 8,192 rows: 2 MiB of values and 200 KiB of offsets and timestamps),
// so that such batches pass uncut, and under gRPC's 4 MiB default message size.
const MaxBatchTotalBytes = 3 << 20

// ColumnOverhead is an estimate of the bytes of Go heap one column of one batch costs besides
// its buffers: the array and its ArrayData, the slices of its buffers, the batch's and the
// slices' column lists, the IPC writer's field node and buffer entries when it is sent.
// Measured by TestColumnOverhead (a 2,000-column batch of strings, sliced as the stream slices
// and written by arrow-go's IPC writer as Flight writes it): 984 bytes, most of them the
// writer's garbage, which the process holds until the collector runs. A batch of c columns
// costs about c × ColumnOverhead bytes outside the query's allocator, whatever its rows: a
// projection of 50,000 columns costs 51 MB per batch before its first value.
const ColumnOverhead = 1024

// colBytes returns the bytes of rows [i, j) of c's buffers (see MaxBatchTotalBytes): the
// values of a fixed-width type (a bit per boolean), the values and offsets of a string or
// binary type, a validity bit per row when c has nulls; for other types (nested, dictionary)
// c's whole size in proportion to the rows.
func colBytes(c arrow.Array, i, j int) int64 {
	if i >= j {
		return 0
	}
	r := int64(j - i)
	var n int64
	if c.NullN() > 0 {
		n = (r + 7) / 8
	}
	switch t := c.DataType().(type) {
	case arrow.FixedWidthDataType:
		return n + (r*int64(t.BitWidth())+7)/8
	case *arrow.StringType, *arrow.BinaryType:
		return n + 4*r + colVarBytes(c, i, j)
	case *arrow.LargeStringType, *arrow.LargeBinaryType:
		return n + 8*r + colVarBytes(c, i, j)
	case *arrow.StringViewType, *arrow.BinaryViewType:
		return n + 16*r + colVarBytes(c, i, j)
	}
	if l := int64(c.Len()); l > 0 {
		return int64(c.Data().SizeInBytes()) * r / l
	}
	return 0
}

// batchSizes returns the bytes of rows [i, j) of cols: of string and binary values (as
// varBytes) and of all buffers (as colBytes).
func batchSizes(cols []arrow.Array, i, j int) (vars, total int64) {
	for _, c := range cols {
		total += colBytes(c, i, j)
		vars += colVarBytes(c, i, j)
	}
	return vars, total
}

// typeRowBytes returns the bytes one row of type t takes at least: its width for a
// fixed-width type, its offset for a string or binary type (the values are the data's),
// 16 bytes for a view or another type.
func typeRowBytes(t arrow.DataType) int64 {
	switch t := t.(type) {
	case arrow.FixedWidthDataType:
		return max(int64(t.BitWidth())/8, 1)
	case *arrow.StringType, *arrow.BinaryType:
		return 4
	case *arrow.LargeStringType, *arrow.LargeBinaryType:
		return 8
	}
	return 16
}

// RowBytes returns an estimate, made before any input is seen, of the bytes one row of e's
// output takes that e allocates: 0 for a bare column reference (its output is the input
// column); else the output type's least bytes per value (typeRowBytes) plus, for a string or binary output, the bytes
// of the string and binary literals e holds — a constant string column costs its literal per
// row. The bytes e copies from its input columns come on top (EstimateBytes counts them).
func (e *Expr) RowBytes() int64 {
	if e.bare >= 0 {
		return 0
	}
	if e.varOut {
		return typeRowBytes(e.typ) + e.litBytes
	}
	return typeRowBytes(e.typ)
}

// EstimateBytes returns an estimate of the bytes Eval allocates for rows [i, j) of a batch
// whose columns are cols (the schema e was compiled for): 0 for a bare column reference;
// for a fixed-width output its values and validity; for a string or binary output its offsets
// and validity, its literals' bytes per row (RowBytes), the string and binary bytes of the
// rows of the input columns it reads and 24 bytes per row of each fixed-width input it reads
// (a number or a timestamp printed as text). Functions that grow their input beyond that
// (replace of a short string by a long one) allocate more; the ledger's Check after the batch
// still bounds them.
func (e *Expr) EstimateBytes(cols []arrow.Array, i, j int) int64 {
	if e.bare >= 0 || i >= j {
		return 0
	}
	r := int64(j - i)
	n := (r+7)/8 + r*e.RowBytes()
	if !e.varOut {
		return n
	}
	for _, c := range e.refList {
		if c >= len(cols) {
			continue
		}
		if v := colVarBytes(cols[c], i, j); v > 0 || isVar(cols[c].DataType()) {
			n += v
		} else {
			n += 24 * r
		}
	}
	return n
}

// outputBytes returns the bytes rows [i, j) of e's output take in a batch: for a bare column
// reference the input column's (shared, but copied again into each Flight message), else
// EstimateBytes.
func (e *Expr) outputBytes(cols []arrow.Array, i, j int) int64 {
	if e.bare >= 0 {
		return colBytes(cols[e.bare], i, j)
	}
	return e.EstimateBytes(cols, i, j)
}

// copiedBytes returns the bytes evaluating exprs copies of rows [i, j) of their input columns
// when they are a slice (see unsliced): those of every column their kernels read, each once
// (Project's expressions share the copies: evalAll).
func copiedBytes(exprs []*Expr, cols []arrow.Array, i, j int) int64 {
	var n int64
	seen := map[int]bool{}
	for _, e := range exprs {
		if e.bare >= 0 {
			continue
		}
		for _, c := range e.refList {
			if c < len(cols) && !seen[c] {
				seen[c] = true
				n += colBytes(cols[c], i, j)
			}
		}
	}
	return n
}

// isVar reports whether t is a string or binary type.
func isVar(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.STRING, arrow.BINARY, arrow.LARGE_STRING, arrow.LARGE_BINARY, arrow.STRING_VIEW, arrow.BINARY_VIEW:
		return true
	}
	return false
}

// projectCut returns the end of the next piece of rows [at, n) of a batch whose columns are
// cols that Project evaluates at once — at least one row, at most MaxBatchRows, and, unless
// one row alone needs more, an output of at most MaxBatchTotalBytes (exprs' outputBytes) — and
// the bytes evaluating it allocates (exprs' EstimateBytes, plus the copies of the input columns
// they read when the piece is a slice of the batch), which Project claims from the ledger
// before evaluating. A piece that is the whole batch is priced with one pass over the columns;
// a cut costs a bisection. maxRows > 0 caps the piece's rows further (Project's rowCap).
func projectCut(exprs []*Expr, cols []arrow.Array, at, n, maxRows int) (end int, claim int64) {
	out := func(j int) int64 {
		var s int64
		for _, e := range exprs {
			s += e.outputBytes(cols, at, j)
		}
		return s
	}
	end = min(n, at+MaxBatchRows)
	if maxRows > 0 {
		end = min(end, at+maxRows)
	}
	if out(end) > MaxBatchTotalBytes {
		lo, hi := at+1, end // out(at+1) may exceed the budget: one row at least
		for lo < hi {
			mid := lo + (hi-lo+1)/2
			if out(mid) <= MaxBatchTotalBytes {
				lo = mid
			} else {
				hi = mid - 1
			}
		}
		end = lo
	}
	sliced := at > 0 || end < n || anySliced(cols)
	var copied int64
	for _, e := range exprs {
		claim += e.EstimateBytes(cols, at, end)
	}
	if sliced {
		copied = copiedBytes(exprs, cols, at, end)
	}
	return end, claim + copied
}

// anySliced reports whether a column does not start at offset 0 of its buffers.
func anySliced(cols []arrow.Array) bool {
	for _, c := range cols {
		if c.Data().Offset() != 0 {
			return true
		}
	}
	return false
}
