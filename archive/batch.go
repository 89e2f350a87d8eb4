package archive

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/flightsrv/flightsrv/routing"
)

var _ routing.ArchiveBatchReader = (*Reader)(nil)

// ErrKeyNotUTF8 is the error of a ReadBatches whose output holds a stored partition key or
// sort key that is not valid UTF-8 (the partition and id columns are Arrow utf8), as the hot
// stores' batch scans fail. It matches routing.ErrOperationFailed and names no value.
var ErrKeyNotUTF8 error = &storeError{msg: "archive: stored partition or sort key is not valid UTF-8", is: routing.ErrOperationFailed}

// batchSchemaDef names the fields of ReadBatches' batches: the Reader does not know the
// table, so the partition field is called "partition"; callers rename fields to their table's
// names (the types are the table's).
var batchSchemaDef = routing.TableDef{PartitionColumn: routing.ColumnPartition.String()}

// batchSchemas holds the schema of every column list ReadBatches was asked for (at most the 65
// ordered selections of the four columns), keyed by batchSchemaKey: a query reads every
// bucket with the same columns, and a schema built per bucket was about 1 MB of heap a query
// over bench's BenchmarkAnalytical fixture (1,338 buckets). An arrow.Schema is immutable, so
// readers share it.
var batchSchemas sync.Map // uint32 → *arrow.Schema

// batchSchemaKey encodes cols as one number (4 bits a column, a leading 1), ok false for a list
// that cannot be one of the columns' selections (longer than routing's four columns or holding
// an unknown column; such a request fails later, with its schema built as before).
func batchSchemaKey(cols []routing.Column) (uint32, bool) {
	if len(cols) > 4 {
		return 0, false
	}
	k := uint32(1)
	for _, c := range cols {
		if c > routing.ColumnValue {
			return 0, false
		}
		k = k<<4 | uint32(c)
	}
	return k, true
}

// batchSchema returns batchSchemaDef.BatchSchema(cols), shared between reads of the same
// columns.
func batchSchema(cols []routing.Column) *arrow.Schema {
	k, ok := batchSchemaKey(cols)
	if !ok {
		return batchSchemaDef.BatchSchema(cols)
	}
	if s, ok := batchSchemas.Load(k); ok {
		return s.(*arrow.Schema)
	}
	s, _ := batchSchemas.LoadOrStore(k, batchSchemaDef.BatchSchema(cols))
	return s.(*arrow.Schema)
}

// ReadBatches validates the manifest against b exactly as Read does (key digest, fields,
// bucket; errors are returned before any payload byte is read) and returns a reader of the
// archived records of b inside req.Range (clipped to the bucket) as Arrow record batches: the
// routing.ArchiveBatchReader port.
//
// Batches have the schema routing.TableDef{PartitionColumn: "partition"}.BatchSchema(
// req.Columns): the requested columns in request order, the partition column named
// "partition" (callers rename it); partition and id are utf8, timestamp is timestamp[ns, UTC]
// (any stored unit — milliseconds, microseconds, nanoseconds, either UTC flag, INT96 — is
// converted to nanoseconds as the aggregates read it: local timestamps are UTC wall-clock
// instants), value is binary. No column is ever null. The partition column is built as a
// constant: every record of a bucket has the bucket's partition key. Every batch is non-empty
// and holds at most routing.MaxBatchRows rows and, unless it holds a single row, at most
// routing.MaxBatchBytes bytes of the selected variable-width columns. Buffers come from
// req.Alloc (memory.DefaultAllocator when nil). req.Limit < 0 means no limit, 0 returns an
// empty reader.
//
// Parquet payloads are read row group by row group as the consumer calls Next, never whole: row
// groups and pages are classified with the trusted event_time statistics exactly as for Read
// and the aggregates (stats.go), those outside the range are skipped, and only the requested
// columns' pages of the remaining spans are fetched (coalesced ranged reads; the next row
// group's are fetched in the background while the current one is decoded). Page values are
// copied from the decoded pages (decompressed and decoded by the reader itself for chunks with
// an offset index and no dictionary, by parquet-go otherwise) straight into Arrow buffers; rows
// of straddling pages are filtered by event_time. The reader holds the decoded span being
// emitted (at most ReaderOptions.BatchSpanRows rows when the columns have offset indexes, a row
// group otherwise), one decompressed page and the fetched bytes of the current and next row
// groups. Files written by other tools are read whenever the aggregates can count them: without
// partition column the reader needs only event_time; the id and value columns need top-level
// BYTE_ARRAY sort_key and value columns (ErrPayloadSchema otherwise, when requested). A null in
// a decoded partition_key, sort_key or value is ErrPayloadSchema (the envelope has no nulls); a
// row whose event_time is null lies in no range and is skipped, as the aggregates skip it.
//
// Validation of decoded rows: every decoded event time must lie in the bucket
// (ErrRecordOutsideBucket); when the partition column is requested and the file has a
// partition_key column, every decoded partition key must be the bucket's
// (ErrRecordOutsideBucket). Keys in the output must be valid UTF-8 (ErrKeyNotUTF8). The
// payload digest is checked only when the payload arrives whole with the footer
// (ReaderOptions.TailBytes) — see the package documentation's trade-off; VerifyFully reads and
// verifies the whole payload as Read does.
//
// Order: Ordered reports true when the file is known to hold its records in (event_time,
// sort_key) order, decided before the first batch from metadata: the payload is the record
// envelope v2 (whose contract, and both writers, sort it), or it has a sort_key column, every
// non-empty row group declares sorting_columns starting with event_time then sort_key, both
// ascending, and the row groups' trusted event_time bounds are strictly ascending. Such a file
// is streamed in file order (reversed for req.Desc) and every decoded row is checked against
// its predecessor — by event_time always, and by sort_key among equal event times when the id
// column is read — failing the read with ErrRecordsUnsorted on the first violation. Any other
// file is streamed without order checks in file order (reverse file order when req.Desc is
// set) and Ordered reports false: the consumer sorts, and must not read a limit as "the first
// rows" (req.Limit then cuts the stream in file order). JSON payloads, and every payload under
// VerifyFully, are read whole, fully verified (order included) and emitted batch by batch;
// they are ordered.
//
// The returned reader keeps ctx for its reads: cancelling it stops the read, and Next then
// reports false with Err() the context's error. Rows emitted are added to
// routing.StatsFrom(ctx).ArchiveRows and object reads counted as for Read; a
// pulpitum.archive.read span (operation read_batches, pulpitum.query.limit when req has a
// limit, no key or partition value) lasts until the reader ends or is released. The caller
// must Release the reader.
func (r *Reader) ReadBatches(ctx context.Context, manifestKey string, b routing.BucketID, req routing.BatchRequest) (_ routing.BatchReader, err error) {
	var limit []attribute.KeyValue // a read without a limit (-1) leaves the attribute out
	if req.Limit >= 0 {
		limit = []attribute.KeyValue{attribute.Int64("pulpitum.query.limit", req.Limit)}
	}
	ctx, span, c := r.startSpan(ctx, "read_batches", limit...)
	ctx, cancel := context.WithCancel(ctx)
	defer func() {
		if err != nil {
			cancel()
			endSpan(span, c, -1, err)
		}
	}()
	cols, err := newColumnSet(req.Columns)
	if err != nil {
		return nil, err
	}
	schema := batchSchema(req.Columns)
	m, err := r.manifest(ctx, manifestKey, b, c)
	if err != nil {
		return nil, err
	}
	c.setAttrs(attribute.String("pulpitum.archive.format", m.Format.String()))
	req.Range = req.Range.Intersect(b.Range())
	if req.Alloc == nil {
		req.Alloc = memory.DefaultAllocator
	}
	br := &batchReader{ctx: ctx, cancel: cancel, span: span, io: c, schema: schema, stats: routing.StatsFrom(ctx)}
	br.refs.Store(1)
	if req.Limit == 0 || req.Range.Empty() {
		br.ordered = true
		br.end(nil)
		return br, nil
	}
	if cols.part >= 0 && !utf8.Valid(b.PartitionKey) {
		return nil, ErrKeyNotUTF8
	}
	if req.ManifestRows && !r.opts.VerifyFully && cols.ts < 0 && cols.id < 0 && cols.val < 0 && req.Limit < 0 && req.Range.Covers(b.Range()) {
		// The rows of the whole bucket, counted by the manifest (routing.BatchRequest.ManifestRows).
		br.ordered = true
		br.src = &countSource{cols: cols, schema: schema, alloc: req.Alloc, pk: b.PartitionKey, left: int64(m.RecordCount)}
		return br, nil
	}
	if r.opts.VerifyFully || m.Format == FormatJSON {
		recs, err := r.fullRange(ctx, m, b, c, req.Range)
		if err != nil {
			return nil, err
		}
		if req.Limit >= 0 && int64(len(recs)) > req.Limit {
			if req.Desc {
				recs = recs[int64(len(recs))-req.Limit:]
			} else {
				recs = recs[:req.Limit]
			}
		}
		br.ordered = true
		br.src = &recordSource{recs: recs, cols: cols, schema: schema, alloc: req.Alloc, pk: b.PartitionKey, desc: req.Desc, hi: len(recs)}
		return br, nil
	}
	ft, rr, err := r.parquetFooter(ctx, m, c)
	if err != nil {
		return nil, err
	}
	src, err := newParquetSource(ctx, r, ft, rr, b, req, cols, schema, c)
	if err != nil {
		return nil, err
	}
	br.ordered = src.sorted
	br.src = src
	return br, nil
}

// columnSet locates the requested columns in the output: each field is the column's position
// in the batch, -1 when it is not requested.
type columnSet struct {
	cols                   []routing.Column
	part, ts, id, val, num int
}

func newColumnSet(cols []routing.Column) (columnSet, error) {
	s := columnSet{cols: cols, part: -1, ts: -1, id: -1, val: -1, num: len(cols)}
	for i, c := range cols {
		var p *int
		switch c {
		case routing.ColumnPartition:
			p = &s.part
		case routing.ColumnTimestamp:
			p = &s.ts
		case routing.ColumnID:
			p = &s.id
		case routing.ColumnValue:
			p = &s.val
		default:
			return s, fmt.Errorf("archive: read batches: unknown column %d", uint8(c))
		}
		if *p >= 0 {
			return s, fmt.Errorf("archive: read batches: column %s requested twice", c)
		}
		*p = i
	}
	return s, nil
}

// batchSource produces the batches of one read.
type batchSource interface {
	// next returns the next non-empty batch, owned by the caller, or nil at the end.
	next() (arrow.RecordBatch, error)
	// close releases everything the source holds; the reader's context is cancelled before.
	close()
}

// batchReader is the routing.BatchReader returned by ReadBatches: reference counting, the
// current batch, the end of the span and statistics around a batchSource. Not safe for
// concurrent use, as the port says.
type batchReader struct {
	refs    atomic.Int64
	schema  *arrow.Schema
	ordered bool
	// ctx is the request's context, kept because a streaming reader's reads happen in Next;
	// cancel ends the reader's own reads (background fetches) when it ends.
	ctx    context.Context
	cancel context.CancelFunc
	src    batchSource
	cur    arrow.RecordBatch
	err    error
	done   bool
	rows   int64
	stats  *routing.ReadStats
	span   trace.Span
	io     *ioCounter
}

var _ routing.BatchReader = (*batchReader)(nil)

// Retain adds a reference.
func (br *batchReader) Retain() { br.refs.Add(1) }

// Release drops a reference; the last one stops the read, releases the current batch and
// everything the reader holds.
func (br *batchReader) Release() {
	if br.refs.Add(-1) != 0 {
		return
	}
	if br.cur != nil {
		br.cur.Release()
		br.cur = nil
	}
	br.end(nil)
}

// Schema returns the batches' schema.
func (br *batchReader) Schema() *arrow.Schema { return br.schema }

// Ordered reports whether the batches come in (event_time, sort_key) order (descending for a
// descending request); see ReadBatches.
func (br *batchReader) Ordered() bool { return br.ordered }

// Next advances to the next batch, releasing the previous one. It returns false at the end or
// on an error (see Err).
func (br *batchReader) Next() bool {
	if br.cur != nil {
		br.cur.Release()
		br.cur = nil
	}
	if br.done {
		return false
	}
	if err := br.ctx.Err(); err != nil {
		br.end(err)
		return false
	}
	rec, err := br.src.next()
	if err == nil && br.ctx.Err() != nil {
		err = br.ctx.Err()
	}
	if err != nil || rec == nil {
		if rec != nil {
			rec.Release()
		}
		br.end(err)
		return false
	}
	br.cur = rec
	n := rec.NumRows()
	br.rows += n
	if br.stats != nil {
		br.stats.ArchiveRows.Add(n)
	}
	return true
}

// RecordBatch returns the current batch, valid until the next call to Next or Release.
func (br *batchReader) RecordBatch() arrow.RecordBatch { return br.cur }

// Record returns the current batch.
//
// Deprecated: Use RecordBatch.
func (br *batchReader) Record() arrow.RecordBatch { return br.cur }

// Err returns the error that ended the read, if any.
func (br *batchReader) Err() error { return br.err }

// end finishes the read once: it records err, stops background work, releases the source and
// ends the span.
func (br *batchReader) end(err error) {
	if br.done {
		return
	}
	br.done = true
	br.err = err
	br.cancel()
	if br.src != nil {
		br.src.close()
	}
	endSpan(br.span, br.io, int(br.rows), err)
}

// recordSource emits validated, sorted records (JSON payloads, VerifyFully) as batches,
// already cut to the limit: ascending from lo, or descending from hi.
type recordSource struct {
	recs   []routing.Record
	cols   columnSet
	schema *arrow.Schema
	alloc  memory.Allocator
	pk     []byte
	desc   bool
	lo, hi int // records not yet emitted
}

// countSource yields left rows of at most the partition column (a constant), in batches of
// at most routing.MaxBatchRows.
type countSource struct {
	cols   columnSet
	schema *arrow.Schema
	alloc  memory.Allocator
	pk     []byte
	left   int64
}

func (s *countSource) next() (arrow.RecordBatch, error) {
	if s.left <= 0 {
		return nil, nil
	}
	n := int(min(s.left, routing.MaxBatchRows))
	s.left -= int64(n)
	cols := make([]arrow.Array, s.cols.num)
	if s.cols.part >= 0 {
		cols[s.cols.part] = constantString(s.alloc, s.pk, n)
		defer cols[s.cols.part].Release()
	}
	return array.NewRecordBatch(s.schema, cols, int64(n)), nil
}

func (s *countSource) close() {}

func (s *recordSource) next() (arrow.RecordBatch, error) {
	if s.lo >= s.hi {
		return nil, nil
	}
	// Take records while they fit the batch limits.
	size, n := 0, 0
	for n < s.hi-s.lo && n < routing.MaxBatchRows {
		i := s.lo + n
		if s.desc {
			i = s.hi - 1 - n
		}
		rs := s.rowBytes(&s.recs[i])
		if n > 0 && size+rs > routing.MaxBatchBytes {
			break
		}
		size += rs
		n++
	}
	idx := func(k int) *routing.Record {
		if s.desc {
			return &s.recs[s.hi-1-k]
		}
		return &s.recs[s.lo+k]
	}
	cols := make([]arrow.Array, s.cols.num)
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	if s.cols.part >= 0 {
		cols[s.cols.part] = constantString(s.alloc, s.pk, n)
	}
	if s.cols.ts >= 0 {
		ts := make([]int64, n)
		for k := range ts {
			ts[k] = idx(k).EventTime.UnixNano()
		}
		cols[s.cols.ts] = newTimestamps(s.alloc, ts)
	}
	for _, f := range []struct {
		pos  int
		dt   arrow.DataType
		get  func(*routing.Record) []byte
		utf8 bool
	}{
		{s.cols.id, arrow.BinaryTypes.String, func(r *routing.Record) []byte { return r.SortKey }, true},
		{s.cols.val, arrow.BinaryTypes.Binary, func(r *routing.Record) []byte { return r.Value }, false},
	} {
		if f.pos < 0 {
			continue
		}
		c := newVarColumn(s.alloc, n, 0)
		for k := 0; k < n; k++ {
			v := f.get(idx(k))
			if f.utf8 && !utf8.Valid(v) {
				c.release()
				return nil, ErrKeyNotUTF8
			}
			c.append(v)
		}
		cols[f.pos] = c.finish(f.dt)
	}
	if s.desc {
		s.hi -= n
	} else {
		s.lo += n
	}
	return array.NewRecordBatch(s.schema, cols, int64(n)), nil
}

// rowBytes is a record's share of the batch byte limit: its selected variable-width values.
func (s *recordSource) rowBytes(r *routing.Record) int {
	n := 0
	if s.cols.part >= 0 {
		n += len(s.pk)
	}
	if s.cols.id >= 0 {
		n += len(r.SortKey)
	}
	if s.cols.val >= 0 {
		n += len(r.Value)
	}
	return n
}

func (s *recordSource) close() { s.recs = nil }
