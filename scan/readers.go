package scan

import (
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// EmptyReader returns a reader of schema that yields no batch.
func EmptyReader(schema *arrow.Schema) array.RecordReader {
	r, _ := array.NewRecordReader(schema, nil)
	return r
}

// ErrReader returns a reader of schema whose first Next fails with err.
func ErrReader(schema *arrow.Schema, err error) array.RecordReader {
	return &errReader{schema: schema, err: err, refs: 1}
}

type errReader struct {
	schema *arrow.Schema
	err    error
	refs   int64
}

func (r *errReader) Schema() *arrow.Schema          { return r.schema }
func (r *errReader) Next() bool                     { return false }
func (r *errReader) Record() arrow.RecordBatch      { return nil }
func (r *errReader) RecordBatch() arrow.RecordBatch { return nil }
func (r *errReader) Err() error                     { return r.err }
func (r *errReader) Retain()                        { atomic.AddInt64(&r.refs, 1) }
func (r *errReader) Release()                       { atomic.AddInt64(&r.refs, -1) }

// ScalarUint64 returns a reader of one batch holding one row: value v in a non-null uint64
// column named name. Aggregate operators (pushed down or not) answer through it.
func ScalarUint64(alloc memory.Allocator, name string, v uint64) array.RecordReader {
	schema := arrow.NewSchema([]arrow.Field{{Name: name, Type: arrow.PrimitiveTypes.Uint64}}, nil)
	b := array.NewUint64Builder(alloc)
	defer b.Release()
	b.Append(v)
	col := b.NewArray()
	defer col.Release()
	rec := array.NewRecordBatch(schema, []arrow.Array{col}, 1)
	defer rec.Release()
	r, _ := array.NewRecordReader(schema, []arrow.RecordBatch{rec})
	return r
}
