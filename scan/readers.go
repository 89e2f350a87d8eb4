package scan

import (
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
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
