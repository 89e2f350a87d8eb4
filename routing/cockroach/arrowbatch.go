package cockroach

import (
	"fmt"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flightsrv/flightsrv/routing"
)

// This file is shared verbatim (but for the package clause) with routing/sqlite/arrowbatch.go:
// the two adapters may not import each other, and routing is not theirs to extend. Keep the
// copies identical.

// errInvalidUTF8 is the value-free failure of a read whose stored sort key or partition key is
// not valid UTF-8 (the id and partition columns are Arrow utf8).
func errInvalidUTF8(what string) error {
	return fmt.Errorf("%w: scan bucket range: stored %s is not valid UTF-8", routing.ErrOperationFailed, what)
}

// scanColumns is a validated routing.BatchRequest.Columns: which stored columns a scan
// selects.
type scanColumns struct {
	cols                []routing.Column
	part, ts, id, value bool
}

func newScanColumns(cols []routing.Column) (scanColumns, error) {
	sc := scanColumns{cols: cols}
	for _, c := range cols {
		var seen *bool
		switch c {
		case routing.ColumnPartition:
			seen = &sc.part
		case routing.ColumnTimestamp:
			seen = &sc.ts
		case routing.ColumnID:
			seen = &sc.id
		case routing.ColumnValue:
			seen = &sc.value
		default:
			return scanColumns{}, fmt.Errorf("%w: scan bucket range: unknown column %d", routing.ErrOperationFailed, uint8(c))
		}
		if *seen {
			return scanColumns{}, fmt.Errorf("%w: scan bucket range: column %s requested twice", routing.ErrOperationFailed, c)
		}
		*seen = true
	}
	return sc, nil
}

// firstBatchRows is the row capacity a read without a limit starts with; it doubles up to
// routing.MaxBatchRows, and later batches start at the size of the one before.
const firstBatchRows = 1024

// batchBuilder assembles the Arrow record batches of one bucket scan row by row, writing
// straight into Arrow buffers allocated from one allocator (no builders, no validity bitmaps:
// stored values are never null), under routing.MaxBatchRows and routing.MaxBatchBytes (the
// selected variable-width columns: partition, id and value bytes). The partition column is the
// bucket's partition key repeated, written when a batch is cut. A batchBuilder is used by one
// goroutine; Release frees what it holds.
type batchBuilder struct {
	schema    *arrow.Schema
	sc        scanColumns
	alloc     memory.Allocator
	pk        []byte
	pkOK      bool  // pk is valid UTF-8
	remaining int64 // rows the read's limit still allows, -1 without a limit

	n, bytes int // rows and selected variable-width bytes of the batch being built
	rows     int // row capacity of the buffers (0: none allocated)
	lastRows int // rows of the previous batch
	ts       *memory.Buffer
	tsv      []arrow.Timestamp
	id, val  varColumn
}

// varColumn is a utf8 or binary column being built: offsets and data.
type varColumn struct {
	offsets, data *memory.Buffer
	offs          []int32 // the offsets buffer, rows+1 entries
	buf           []byte  // the data buffer's whole allocation
	len           int     // data bytes used
	last          int     // data bytes of the previous batch
}

func newBatchBuilder(schema *arrow.Schema, sc scanColumns, alloc memory.Allocator, pk []byte, limit int64) *batchBuilder {
	return &batchBuilder{schema: schema, sc: sc, alloc: alloc, pk: pk, pkOK: utf8.Valid(pk), remaining: limit}
}

// rowBytes is what a row with the given sort key and value adds to the batch's byte count.
func (bb *batchBuilder) rowBytes(idLen, valueLen int) int {
	n := 0
	if bb.sc.part {
		n += len(bb.pk)
	}
	if bb.sc.id {
		n += idLen
	}
	if bb.sc.value {
		n += valueLen
	}
	return n
}

// full reports whether a row adding rowBytes bytes must start the next batch.
func (bb *batchBuilder) full(rowBytes int) bool {
	return bb.n >= routing.MaxBatchRows || (bb.n > 0 && bb.bytes+rowBytes > routing.MaxBatchBytes)
}

// append adds one row: its event time in nanoseconds since the Unix epoch, its sort key and
// value (ignored unless selected; copied). It fails, value-free, when a selected key is not
// valid UTF-8.
func (bb *batchBuilder) append(nanos int64, sortKey, value []byte, rowBytes int) error {
	if bb.sc.part && !bb.pkOK {
		return errInvalidUTF8("partition key")
	}
	if bb.sc.id && !utf8.Valid(sortKey) {
		return errInvalidUTF8("sort key")
	}
	if bb.n == bb.rows {
		bb.growRows()
	}
	if bb.ts != nil {
		bb.tsv[bb.n] = arrow.Timestamp(nanos)
	}
	if bb.id.offsets != nil {
		bb.id.add(bb.n, sortKey)
	}
	if bb.val.offsets != nil {
		bb.val.add(bb.n, value)
	}
	bb.n++
	bb.bytes += rowBytes
	if bb.remaining > 0 {
		bb.remaining--
	}
	return nil
}

// growRows allocates the row-indexed buffers of a new batch, sized like the previous batch
// (firstBatchRows for the first) but never beyond the limit, or doubles them.
func (bb *batchBuilder) growRows() {
	rows := bb.rows * 2
	if bb.rows == 0 {
		rows = bb.lastRows
		if rows == 0 {
			rows = firstBatchRows
		}
		if bb.remaining >= 0 && int64(rows) > bb.remaining {
			rows = int(max(bb.remaining, 1))
		}
	}
	rows = min(rows, routing.MaxBatchRows)
	if bb.sc.ts {
		if bb.ts == nil {
			bb.ts = memory.NewResizableBuffer(bb.alloc)
		}
		bb.ts.Reserve(rows * arrow.TimestampSizeBytes)
		bb.tsv = arrow.TimestampTraits.CastFromBytes(bb.ts.Buf())
	}
	if bb.sc.id {
		bb.id.reserve(bb.alloc, rows)
	}
	if bb.sc.value {
		bb.val.reserve(bb.alloc, rows)
	}
	bb.rows = rows
}

// reserve makes room for rows offsets (and, for a new batch, the previous batch's bytes).
func (c *varColumn) reserve(alloc memory.Allocator, rows int) {
	if c.offsets == nil {
		c.offsets, c.data = memory.NewResizableBuffer(alloc), memory.NewResizableBuffer(alloc)
		c.data.Reserve(max(c.last, 4096))
		c.buf = c.data.Buf()
		c.offsets.Reserve((rows + 1) * arrow.Int32SizeBytes)
		c.offs = arrow.Int32Traits.CastFromBytes(c.offsets.Buf())
		c.offs[0] = 0 // allocators need not zero memory
		return
	}
	c.offsets.Reserve((rows + 1) * arrow.Int32SizeBytes)
	c.offs = arrow.Int32Traits.CastFromBytes(c.offsets.Buf())
}

// add appends v as row i.
func (c *varColumn) add(i int, v []byte) {
	end := c.len + len(v)
	if end > len(c.buf) {
		c.data.Reserve(max(2*len(c.buf), end))
		c.buf = c.data.Buf()
	}
	copy(c.buf[c.len:end], v)
	c.len = end
	c.offs[i+1] = int32(end)
}

// array turns the column's n rows into an array of type dt and starts afresh.
func (c *varColumn) array(dt arrow.DataType, n int) arrow.Array {
	c.offsets.ResizeNoShrink((n + 1) * arrow.Int32SizeBytes)
	c.data.ResizeNoShrink(c.len)
	a := makeArray(dt, n, c.offsets, c.data)
	c.offsets.Release()
	c.data.Release()
	c.last = c.len
	*c = varColumn{last: c.last}
	return a
}

func makeArray(dt arrow.DataType, n int, bufs ...*memory.Buffer) arrow.Array {
	data := array.NewData(dt, n, append([]*memory.Buffer{nil}, bufs...), nil, 0, 0)
	defer data.Release()
	return array.MakeFromData(data)
}

// flush cuts the rows appended since the last flush into a batch (owned by the caller), or
// returns nil when there are none.
func (bb *batchBuilder) flush() arrow.RecordBatch {
	if bb.n == 0 {
		return nil
	}
	cols := make([]arrow.Array, 0, len(bb.sc.cols))
	defer func() {
		for _, a := range cols {
			a.Release()
		}
	}()
	for _, c := range bb.sc.cols {
		switch c {
		case routing.ColumnPartition:
			cols = append(cols, bb.partitionColumn())
		case routing.ColumnTimestamp:
			bb.ts.ResizeNoShrink(bb.n * arrow.TimestampSizeBytes)
			cols = append(cols, makeArray(routing.TimestampType, bb.n, bb.ts))
			bb.ts.Release()
			bb.ts, bb.tsv = nil, nil
		case routing.ColumnID:
			cols = append(cols, bb.id.array(arrow.BinaryTypes.String, bb.n))
		case routing.ColumnValue:
			cols = append(cols, bb.val.array(arrow.BinaryTypes.Binary, bb.n))
		}
	}
	rec := array.NewRecordBatch(bb.schema, cols, int64(bb.n))
	bb.lastRows, bb.n, bb.bytes, bb.rows = bb.n, 0, 0, 0
	return rec
}

// partitionColumn is the bucket's partition key repeated over the batch's rows.
func (bb *batchBuilder) partitionColumn() arrow.Array {
	offsets, data := memory.NewResizableBuffer(bb.alloc), memory.NewResizableBuffer(bb.alloc)
	defer offsets.Release()
	defer data.Release()
	offsets.Resize((bb.n + 1) * arrow.Int32SizeBytes)
	data.Resize(bb.n * len(bb.pk))
	offs, buf := arrow.Int32Traits.CastFromBytes(offsets.Bytes()), data.Bytes()
	offs[0] = 0
	for i := range bb.n {
		copy(buf[i*len(bb.pk):], bb.pk)
		offs[i+1] = int32((i + 1) * len(bb.pk))
	}
	return makeArray(arrow.BinaryTypes.String, bb.n, offsets, data)
}

// Release frees the buffers of rows not yet flushed.
func (bb *batchBuilder) Release() {
	if bb.ts != nil {
		bb.ts.Release()
		bb.ts, bb.tsv = nil, nil
	}
	for _, c := range []*varColumn{&bb.id, &bb.val} {
		if c.offsets != nil {
			c.offsets.Release()
			c.data.Release()
			*c = varColumn{}
		}
	}
	bb.n, bb.bytes, bb.rows = 0, 0, 0
}
