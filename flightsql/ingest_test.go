package flightsql

import (
	"context"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	pb "github.com/apache/arrow-go/v18/arrow/flight/gen/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
)

// countingIngester stores nothing and counts the calls and the rows it read.
type countingIngester struct {
	mu          sync.Mutex
	calls, rows int64
}

func (c *countingIngester) Ingest(_ context.Context, _ string, rows array.RecordReader) (int64, error) {
	var n int64
	for rows.Next() {
		n += rows.RecordBatch().NumRows()
	}
	c.mu.Lock()
	c.calls++
	c.rows += n
	c.mu.Unlock()
	return n, rows.Err()
}

// TestEmptyIngest: an ingest of a reader without batches answers record_count 0 and no error,
// both from arrow-go's ExecuteIngest, which sends no message at all (answered by ServePut
// without reaching the Ingester), and from a client that sends the schema and the IPC
// end-of-stream marker (the Ingester reads no row). One row still counts 1.
func TestEmptyIngest(t *testing.T) {
	ing := &countingIngester{}
	alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
	addr, _ := serveAt(t, &fakeEngine{alloc: alloc}, Config{Alloc: alloc, Ingester: ing})
	cl := dialFake(t, addr, grpc.WithUserAgent("flightsrv-test"))
	ctx := context.Background()
	opts := &flightsql.ExecuteIngestOpts{Table: "messages", TableDefinitionOptions: &flightsql.TableDefinitionOptions{
		IfNotExist: flightsql.TableDefinitionOptionsTableNotExistOptionFail, IfExists: flightsql.TableDefinitionOptionsTableExistsOptionAppend}}

	empty, err := array.NewRecordReader(nSchema, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer empty.Release()
	if n, err := cl.ExecuteIngest(ctx, empty, opts); n != 0 || err != nil {
		t.Fatalf("ExecuteIngest of no batches = %d, %v; want 0, nil", n, err)
	}
	if ing.calls != 0 {
		t.Fatalf("the Ingester was called %d times for a stream without messages", ing.calls)
	}

	// Schema and end-of-stream marker, no batch.
	anyCmd, err := anypb.New((*pb.CommandStatementIngest)(opts))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := proto.Marshal(anyCmd)
	if err != nil {
		t.Fatal(err)
	}
	stream, err := cl.Client.DoPut(ctx)
	if err != nil {
		t.Fatal(err)
	}
	w := flight.NewRecordWriter(stream, ipc.WithSchema(nSchema))
	w.SetFlightDescriptor(&flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: raw})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := stream.CloseSend(); err != nil {
		t.Fatal(err)
	}
	res, err := stream.Recv()
	if err != nil {
		t.Fatal(err)
	}
	var upd pb.DoPutUpdateResult
	if err := proto.Unmarshal(res.GetAppMetadata(), &upd); err != nil || upd.RecordCount != 0 {
		t.Fatalf("schema-only ingest: record_count %d (%v), want 0", upd.RecordCount, err)
	}
	if ing.calls != 1 || ing.rows != 0 {
		t.Fatalf("schema-only ingest: %d calls, %d rows; want 1, 0", ing.calls, ing.rows)
	}

	b := array.NewInt64Builder(alloc)
	b.Append(7)
	col := b.NewArray()
	b.Release()
	rec := array.NewRecordBatch(nSchema, []arrow.Array{col}, 1)
	col.Release()
	defer rec.Release()
	one, err := array.NewRecordReader(nSchema, []arrow.RecordBatch{rec})
	if err != nil {
		t.Fatal(err)
	}
	defer one.Release()
	if n, err := cl.ExecuteIngest(ctx, one, opts); n != 1 || err != nil {
		t.Fatalf("ExecuteIngest of one row = %d, %v; want 1, nil", n, err)
	}
}
