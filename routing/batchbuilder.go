package routing

import (
	"fmt"
	"sync/atomic"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// The Arrow batch builder both hot-store adapters (HotBatchScanner) stream their rows into.

// InvalidUTF8Error is the value-free failure of a read whose stored sort key or partition key is
// not valid UTF-8 (the id and partition columns are Arrow utf8).
func InvalidUTF8Error(what string) error {
	return fmt.Errorf("%w: scan bucket range: stored %s is not valid UTF-8", ErrOperationFailed, what)
}

// ColumnSet is a validated BatchRequest.Columns: Cols in output order, and which stored
// columns a scan selects.
type ColumnSet struct {
	Cols                            []Column
	Partition, Timestamp, ID, Value bool
}

// NewColumnSet validates cols (known columns, none twice); errors wrap ErrOperationFailed.
func NewColumnSet(cols []Column) (ColumnSet, error) {
	sc := ColumnSet{Cols: cols}
	for _, c := range cols {
		var seen *bool
		switch c {
		case ColumnPartition:
			seen = &sc.Partition
		case ColumnTimestamp:
			seen = &sc.Timestamp
		case ColumnID:
			seen = &sc.ID
		case ColumnValue:
			seen = &sc.Value
		default:
			return ColumnSet{}, fmt.Errorf("%w: scan bucket range: unknown column %d", ErrOperationFailed, uint8(c))
		}
		if *seen {
			return ColumnSet{}, fmt.Errorf("%w: scan bucket range: column %s requested twice", ErrOperationFailed, c)
		}
		*seen = true
	}
	return sc, nil
}

// Microseconds since the Unix epoch that fit Arrow's timestamp[ns] (int64 nanoseconds): the
// stored event times a batch read can return.
const (
	MinNanoMicros = -9_223_372_036_854_775
	MaxNanoMicros = 9_223_372_036_854_775
)

// Prepare checks a batch read of bucket b (a valid bucket id, a valid column list) and
// returns its column set and allocator (memory.DefaultAllocator when req.Alloc is nil).
// Errors wrap ErrInvalidRecord or ErrOperationFailed, value-free.
func (req BatchRequest) Prepare(b BucketID) (ColumnSet, memory.Allocator, error) {
	if err := b.Validate(); err != nil {
		return ColumnSet{}, nil, err
	}
	sc, err := NewColumnSet(req.Columns)
	if err != nil {
		return ColumnSet{}, nil, err
	}
	if req.Alloc == nil {
		return sc, memory.DefaultAllocator, nil
	}
	return sc, req.Alloc, nil
}

// firstBatchRows is the row capacity a read without a limit starts with; it doubles up to
// MaxBatchRows, and later batches start at the size of the one before.
const firstBatchRows = 1024

// BatchBuilder assembles the Arrow record batches of one bucket scan row by row, writing
// straight into Arrow buffers allocated from one allocator (no builders, no validity bitmaps:
// stored values are never null), under MaxBatchRows and MaxBatchBytes (the selected
// variable-width columns: partition, id and value bytes). Callers check Full(RowBytes(…))
// before each Append and cut a batch with Flush. The partition column is the
// bucket's partition key repeated, written when a batch is cut. A BatchBuilder is used by one
// goroutine; Release frees what it holds.
type BatchBuilder struct {
	schema    *arrow.Schema
	sc        ColumnSet
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

// NewBatchBuilder returns a builder of batches of schema (the columns of sc) from alloc for a
// bucket of partition key pk, emitting at most limit rows (< 0: no limit).
func NewBatchBuilder(schema *arrow.Schema, sc ColumnSet, alloc memory.Allocator, pk []byte, limit int64) *BatchBuilder {
	return &BatchBuilder{schema: schema, sc: sc, alloc: alloc, pk: pk, pkOK: utf8.Valid(pk), remaining: limit}
}

// RowBytes is what a row with the given sort key and value adds to the batch's byte count.
func (bb *BatchBuilder) RowBytes(idLen, valueLen int) int {
	n := 0
	if bb.sc.Partition {
		n += len(bb.pk)
	}
	if bb.sc.ID {
		n += idLen
	}
	if bb.sc.Value {
		n += valueLen
	}
	return n
}

// Full reports whether a row adding rowBytes bytes must start the next batch.
func (bb *BatchBuilder) Full(rowBytes int) bool {
	return bb.n >= MaxBatchRows || (bb.n > 0 && bb.bytes+rowBytes > MaxBatchBytes)
}

// Append adds one row: its event time in nanoseconds since the Unix epoch, its sort key and
// value (ignored unless selected; copied). It fails, value-free, when a selected key is not
// valid UTF-8.
func (bb *BatchBuilder) Append(nanos int64, sortKey, value []byte, rowBytes int) error {
	if bb.sc.Partition && !bb.pkOK {
		return InvalidUTF8Error("partition key")
	}
	if bb.sc.ID && !utf8.Valid(sortKey) {
		return InvalidUTF8Error("sort key")
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
func (bb *BatchBuilder) growRows() {
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
	rows = min(rows, MaxBatchRows)
	if bb.sc.Timestamp {
		if bb.ts == nil {
			bb.ts = memory.NewResizableBuffer(bb.alloc)
		}
		bb.ts.Reserve(rows * arrow.TimestampSizeBytes)
		bb.tsv = arrow.TimestampTraits.CastFromBytes(bb.ts.Buf())
	}
	if bb.sc.ID {
		bb.id.reserve(bb.alloc, rows)
	}
	if bb.sc.Value {
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

// Flush cuts the rows appended since the last flush into a batch (owned by the caller), or
// returns nil when there are none.
func (bb *BatchBuilder) Flush() arrow.RecordBatch {
	if bb.n == 0 {
		return nil
	}
	cols := make([]arrow.Array, 0, len(bb.sc.Cols))
	defer func() {
		for _, a := range cols {
			a.Release()
		}
	}()
	for _, c := range bb.sc.Cols {
		switch c {
		case ColumnPartition:
			cols = append(cols, bb.partitionColumn())
		case ColumnTimestamp:
			bb.ts.ResizeNoShrink(bb.n * arrow.TimestampSizeBytes)
			cols = append(cols, makeArray(TimestampType, bb.n, bb.ts))
			bb.ts.Release()
			bb.ts, bb.tsv = nil, nil
		case ColumnID:
			cols = append(cols, bb.id.array(arrow.BinaryTypes.String, bb.n))
		case ColumnValue:
			cols = append(cols, bb.val.array(arrow.BinaryTypes.Binary, bb.n))
		}
	}
	rec := array.NewRecordBatch(bb.schema, cols, int64(bb.n))
	bb.lastRows, bb.n, bb.bytes, bb.rows = bb.n, 0, 0, 0
	return rec
}

// partitionColumn is the bucket's partition key repeated over the batch's rows.
func (bb *BatchBuilder) partitionColumn() arrow.Array {
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
func (bb *BatchBuilder) Release() {
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

// Columns returns the columns the builder writes.
func (bb *BatchBuilder) Columns() ColumnSet { return bb.sc }

// ScanReaderState is the record-reader half both hot-store ScanRange readers share: the
// batch handed out last (Cur, valid until the next Next or Release), the first error that
// ended the read, the reference count and the builder the rows go into (BB). An adapter's
// reader embeds it, calls Init, and implements Next: DropCurrent first, then rows into BB,
// Cur = BB.Flush(), or Fail. Not safe for concurrent use, except Retain and Release.
type ScanReaderState struct {
	Cur   arrow.RecordBatch
	Error error
	BB    *BatchBuilder

	schema *arrow.Schema
	refs   atomic.Int64
	stop   func()
}

// Init sets the batch schema and the builder (for a bucket of partition key pk, at most
// limit rows, < 0: no limit) and stop, which ends the statement and returns its connection
// (idempotent); the reader starts with one reference.
func (r *ScanReaderState) Init(cols ColumnSet, alloc memory.Allocator, pk []byte, limit int64, stop func()) {
	r.schema = TableDef{PartitionColumn: ColumnPartition.String()}.BatchSchema(cols.Cols)
	r.BB = NewBatchBuilder(r.schema, cols, alloc, pk, limit)
	r.stop = stop
	r.refs.Store(1)
}

// Schema implements array.RecordReader.
func (r *ScanReaderState) Schema() *arrow.Schema { return r.schema }

// Ordered implements BatchReader: hot stores return rows in the requested order.
func (r *ScanReaderState) Ordered() bool { return true }

// RecordBatch returns the current batch, valid until the next call to Next or Release.
func (r *ScanReaderState) RecordBatch() arrow.RecordBatch { return r.Cur }

// Record returns the current batch.
//
// Deprecated: use RecordBatch.
func (r *ScanReaderState) Record() arrow.RecordBatch { return r.Cur }

// Err returns the error that ended the read, if any.
func (r *ScanReaderState) Err() error { return r.Error }

// Retain adds a reference.
func (r *ScanReaderState) Retain() { r.refs.Add(1) }

// Release drops a reference; the last one stops the read, returns the connection and frees
// the current batch and the batch being built.
func (r *ScanReaderState) Release() {
	if r.refs.Add(-1) != 0 {
		return
	}
	r.DropCurrent()
	r.stop()
	if r.BB != nil {
		r.BB.Release()
	}
}

// DropCurrent releases the batch handed out last.
func (r *ScanReaderState) DropCurrent() {
	if r.Cur != nil {
		r.Cur.Release()
		r.Cur = nil
	}
}

// Fail ends the read with err (the first error wins): the statement and connection are
// released, the rows not yet returned are dropped. It returns false, for Next to return.
func (r *ScanReaderState) Fail(err error) bool {
	if r.Error == nil {
		r.Error = err
	}
	r.stop()
	if r.BB != nil {
		r.BB.Release()
	}
	return false
}
