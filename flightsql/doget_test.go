package flightsql

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"
)

// zeroCopyService is arrow-go's Flight SQL dispatcher with DoGet answered by ServeDoGet, as
// server assembles it.
type zeroCopyService struct {
	flight.FlightServer
	sql *Server
}

func (z zeroCopyService) DoGet(t *flight.Ticket, stream flight.FlightService_DoGetServer) error {
	return z.sql.ServeDoGet(t, stream, z.FlightServer.DoGet)
}

// wideEngine answers every query with batches of (n int64, s utf8, b binary): "wide" gives
// three batches, the second a slice with a non-zero offset (whose offsets the IPC writer
// rebases into a buffer of its own), the third empty; "many" gives 200 batches of 4,096 rows.
type wideEngine struct{ alloc memory.Allocator }

var wideSchema = arrow.NewSchema([]arrow.Field{
	{Name: "n", Type: arrow.PrimitiveTypes.Int64},
	{Name: "s", Type: arrow.BinaryTypes.String},
	{Name: "b", Type: arrow.BinaryTypes.Binary},
}, nil)

func (e *wideEngine) Prepare(context.Context, string, []byte) (*arrow.Schema, *arrow.Schema, error) {
	return wideSchema, nil, nil
}

func (e *wideEngine) Tables() map[string]*arrow.Schema {
	return map[string]*arrow.Schema{"w": wideSchema}
}

func (e *wideEngine) Execute(_ context.Context, sql string, _ []byte, _ arrow.RecordBatch) (array.RecordReader, error) {
	var recs []arrow.RecordBatch
	switch sql {
	case "wide":
		a, b := wideBatch(e.alloc, 0, 5), wideBatch(e.alloc, 5, 10)
		recs = []arrow.RecordBatch{a, b.NewSlice(3, 9), wideBatch(e.alloc, 0, 0)}
		b.Release()
	case "many":
		for i := range 200 {
			recs = append(recs, wideBatch(e.alloc, int64(i)*4096, 4096))
		}
	}
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	return array.NewRecordReader(wideSchema, recs)
}

// wideBatch returns rows [from, from+n) of the wide result: n, "row <n>", n%7 bytes of n.
func wideBatch(alloc memory.Allocator, from, n int64) arrow.RecordBatch {
	b := array.NewRecordBuilder(alloc, wideSchema)
	defer b.Release()
	for i := from; i < from+n; i++ {
		b.Field(0).(*array.Int64Builder).Append(i)
		b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("row %d", i))
		b.Field(2).(*array.BinaryBuilder).Append(bytes.Repeat([]byte{byte(i)}, int(i%7)))
	}
	return b.NewRecordBatch()
}

// startWide serves a wideEngine through arrow-go's DoGet (zeroCopy false) or ServeDoGet.
func startWide(t *testing.T, zeroCopy bool) (*flightsql.Client, *memory.CheckedAllocator) {
	t.Helper()
	alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
	srv, err := NewServer(&wideEngine{alloc: alloc}, Config{Alloc: alloc})
	if err != nil {
		t.Fatal(err)
	}
	var svc flight.FlightServer = flightsql.NewFlightServerWithAllocator(srv, alloc)
	var opts []grpc.ServerOption
	if zeroCopy {
		svc, opts = zeroCopyService{svc, srv}, ServerOptions()
	}
	fs := flight.NewServerWithMiddleware(nil, opts...)
	fs.RegisterFlightService(svc)
	if err := fs.Init("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	go fs.Serve()
	t.Cleanup(fs.Shutdown)
	cl, err := flightsql.NewClient(fs.Addr().String(), nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	return cl, alloc
}

// fetch runs sql and returns the batches received (retained; the caller releases them).
func fetch(t *testing.T, cl *flightsql.Client, sql string) []arrow.RecordBatch {
	t.Helper()
	ctx := context.Background()
	info, err := cl.Execute(ctx, sql)
	if err != nil {
		t.Fatal(err)
	}
	rdr, err := cl.DoGet(ctx, info.Endpoint[0].Ticket)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Release()
	var out []arrow.RecordBatch
	for rdr.Next() {
		r := rdr.RecordBatch()
		r.Retain()
		out = append(out, r)
	}
	if err := rdr.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// waitReleased fails unless alloc holds nothing within a few seconds: batches are released
// once gRPC has written them, after the client may have read them, or, for a message gRPC
// dropped when its stream was cancelled, once the garbage collector finds it (hence the GC).
func waitReleased(t *testing.T, alloc *memory.CheckedAllocator) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for alloc.CurrentAlloc() != 0 {
		if time.Now().After(deadline) {
			alloc.AssertSize(t, 0)
			return
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
}

// TestServeDoGetMatchesArrow checks that the zero-copy DoGet delivers the same batches as
// arrow-go's, sliced and empty batches included, and releases every batch.
func TestServeDoGetMatchesArrow(t *testing.T) {
	for _, sql := range []string{"wide", "many"} {
		t.Run(sql, func(t *testing.T) {
			arrowCl, arrowAlloc := startWide(t, false)
			zcCl, zcAlloc := startWide(t, true)
			want, got := fetch(t, arrowCl, sql), fetch(t, zcCl, sql)
			defer func() {
				for _, r := range append(want, got...) {
					r.Release()
				}
			}()
			if len(got) != len(want) {
				t.Fatalf("%d batches, arrow-go's DoGet gives %d", len(got), len(want))
			}
			for i := range want {
				if !array.RecordEqual(got[i], want[i]) {
					t.Fatalf("batch %d differs:\n got %v\nwant %v", i, got[i], want[i])
				}
			}
			waitReleased(t, zcAlloc)
			waitReleased(t, arrowAlloc)
		})
	}
}

// TestServeDoGetCancelled checks that a client going away mid-stream leaves nothing held.
func TestServeDoGetCancelled(t *testing.T) {
	cl, alloc := startWide(t, true)
	ctx, cancel := context.WithCancel(context.Background())
	info, err := cl.Execute(ctx, "many")
	if err != nil {
		t.Fatal(err)
	}
	rdr, err := cl.DoGet(ctx, info.Endpoint[0].Ticket)
	if err != nil {
		t.Fatal(err)
	}
	if !rdr.Next() {
		t.Fatalf("no first batch: %v", rdr.Err())
	}
	cancel()
	for rdr.Next() {
	}
	rdr.Release()
	waitReleased(t, alloc)
}

// TestEncodeFlightData checks the hand-written FlightData encoding against proto.Marshal.
func TestEncodeFlightData(t *testing.T) {
	desc := &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte("cmd")}
	descBytes, err := proto.Marshal(desc)
	if err != nil {
		t.Fatal(err)
	}
	big := bytes.Repeat([]byte{7}, 300)
	for _, c := range []struct {
		name        string
		desc        *flight.FlightDescriptor
		header, app []byte
		body        [][]byte
	}{
		{name: "empty"},
		{name: "header only", header: []byte{1, 2, 3}},
		{name: "everything", desc: desc, header: big, app: []byte("meta"), body: [][]byte{big, {0, 0, 0, 0}, []byte("tail")}},
		{name: "body", header: []byte{9}, body: [][]byte{big, big, big}},
	} {
		var d []byte
		if c.desc != nil {
			d = descBytes
		}
		n := 0
		for _, b := range c.body {
			n += len(b)
		}
		got := encodeFlightData(d, c.header, c.app, c.body, n, nil).Materialize()
		want, err := proto.Marshal(&flight.FlightData{FlightDescriptor: c.desc, DataHeader: c.header, AppMetadata: c.app, DataBody: bytes.Join(c.body, nil)})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: encoded\n%x\nproto.Marshal\n%x", c.name, got, want)
		}
	}
}

// DoPut checks the client's stream and answers a stream without messages as server's service
// does (ServePut).
func (z zeroCopyService) DoPut(stream flight.FlightService_DoPutServer) error {
	return ServePut(stream, 0, z.FlightServer.DoPut)
}
