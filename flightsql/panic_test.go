package flightsql

import (
	"context"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/flightsrv/flightsrv/internal/querylog"
)

// panickyReader yields one batch, then panics with a value holding "secret" (standing for a
// row's value) in Next; its Release counts.
type panickyReader struct {
	array.RecordReader
	calls, released int
}

func (r *panickyReader) Next() bool {
	r.calls++
	if r.calls > 1 {
		panic("secret value ORD")
	}
	return r.RecordReader.Next()
}

func (r *panickyReader) Release() { r.released++; r.RecordReader.Release() }

// TestStreamPanicIsInternal: a panic while a DoGet stream reads its result (an operator, a
// decoder) ends that stream with a value-free INTERNAL through arrow-go's StreamChunksFromReader
// (whose own recovery would quote the value as UNKNOWN), after the batches already read, and
// the reader is released.
func TestStreamPanicIsInternal(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{{Name: "n", Type: arrow.PrimitiveTypes.Int64}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	b.Field(0).(*array.Int64Builder).AppendValues([]int64{1, 2, 3}, nil)
	rec := b.NewRecordBatch()
	b.Release()
	inner, err := array.NewRecordReader(schema, []arrow.RecordBatch{rec})
	if err != nil {
		t.Fatal(err)
	}
	rec.Release()
	pr := &panickyReader{RecordReader: inner}
	ch := make(chan flight.StreamChunk)
	go flight.StreamChunksFromReader(context.Background(), &statusReader{RecordReader: pr, s: &Server{}, rec: &querylog.Record{}}, ch)
	var rows int64
	var last error
	for c := range ch {
		if c.Data != nil {
			rows += c.Data.NumRows()
			c.Data.Release()
		}
		if c.Err != nil {
			last = c.Err
		}
	}
	if rows != 3 {
		t.Errorf("%d rows before the panic, want 3", rows)
	}
	if status.Code(last) != codes.Internal || strings.Contains(last.Error(), "secret") {
		t.Errorf("stream ended with %v, want a value-free INTERNAL", last)
	}
	if pr.released != 1 {
		t.Errorf("reader released %d times, want 1", pr.released)
	}
}
