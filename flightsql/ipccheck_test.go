package flightsql

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	pb "github.com/apache/arrow-go/v18/arrow/flight/gen/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
)

// TestCheckIPCMessage checks that the messages arrow-go writes pass checkIPCMessage (plain
// and compressed, nested and with metadata), and that it refuses what would make arrow-go's
// reader allocate beyond the message: FuzzParameterBatch's crasher (a schema message of 650
// bytes declaring a field vector of billions of entries: the process died of a fatal
// out-of-memory error), a compressed buffer declaring a huge uncompressed size, a buffer past
// the body, and a header cut short.
func TestCheckIPCMessage(t *testing.T) {
	md := arrow.NewMetadata([]string{"k"}, []string{"v"})
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "s", Type: arrow.BinaryTypes.String, Metadata: md},
		{Name: "l", Type: arrow.ListOf(arrow.PrimitiveTypes.Int64)},
		{Name: "st", Type: arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32})},
	}, &md)
	bld := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer bld.Release()
	bld.Field(0).(*array.StringBuilder).Append("general")
	lb := bld.Field(1).(*array.ListBuilder)
	lb.Append(true)
	lb.ValueBuilder().(*array.Int64Builder).AppendValues(make([]int64, 100), nil)
	sb := bld.Field(2).(*array.StructBuilder)
	sb.Append(true)
	sb.FieldBuilder(0).(*array.Int32Builder).Append(1)
	rec := bld.NewRecordBatch()
	defer rec.Release()
	stream := func(opts ...ipc.Option) []byte {
		var buf bytes.Buffer
		w := ipc.NewWriter(&buf, append(opts, ipc.WithSchema(schema))...)
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	for name, raw := range map[string][]byte{"plain": stream(), "zstd": stream(ipc.WithZstd())} {
		msgs, ok := SplitIPCStream(raw, nil)
		if !ok || len(msgs) != 2 {
			t.Fatalf("%s: %d messages", name, len(msgs))
		}
		for i, m := range msgs {
			if err := checkIPCMessage(m.DataHeader, m.DataBody); err != nil {
				t.Fatalf("%s: message %d refused: %v", name, i, err)
			}
		}
		batch := msgs[1]
		// A header cut short anywhere is refused, never a panic.
		for n := 1; n < len(batch.DataHeader); n++ {
			_ = checkIPCMessage(batch.DataHeader[:n], batch.DataBody)
		}
		if err := checkIPCMessage(batch.DataHeader, batch.DataBody[:len(batch.DataBody)/2]); !errors.Is(err, errIPCMessage) {
			t.Fatalf("%s: a body cut in half passes: %v", name, err)
		}
		if name == "zstd" {
			body := bytes.Clone(batch.DataBody)
			// The first non-empty buffer: its first 8 bytes are its uncompressed length.
			for off := 0; off+8 <= len(body); off += 8 {
				if n := int64(binary.LittleEndian.Uint64(body[off:])); n > 0 && n < 1<<20 {
					binary.LittleEndian.PutUint64(body[off:], 1<<40)
					break
				}
			}
			if err := checkIPCMessage(batch.DataHeader, body); !errors.Is(err, errIPCMessage) {
				t.Fatalf("a compressed buffer declaring 1 TiB passes: %v", err)
			}
		}
	}
	data, err := os.ReadFile(filepath.Join("testdata", "fuzz", "FuzzParameterBatch", "schema-claims-huge-field-count"))
	if err != nil {
		t.Fatal(err)
	}
	line := strings.Split(string(data), "\n")[1] // []byte("…"), Go's corpus encoding
	raw, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(line, "[]byte("), ")"))
	if err != nil {
		t.Fatal(err)
	}
	msgs, ok := SplitIPCStream([]byte(raw), nil)
	if !ok {
		t.Fatal("the crasher does not frame")
	}
	if err := checkIPCMessage(msgs[0].DataHeader, msgs[0].DataBody); !errors.Is(err, errIPCMessage) {
		t.Fatalf("the crasher's schema message passes: %v", err)
	}
}

// TestDoPutCrashersOverGRPC sends FuzzParameterBatch's crashers (testdata/fuzz) as the DoPut
// of a prepared statement's parameters to a served Server, through arrow-go's client: each is
// refused with INVALID_ARGUMENT, and the connection and a second one then run a query and a
// well-formed binding as before.
func TestDoPutCrashersOverGRPC(t *testing.T) {
	addr, _ := serveFake(t, nil)
	cl := dialFake(t, addr, grpc.WithUserAgent("flightsrv-test"))
	ctx := context.Background()
	prep, err := cl.Prepare(ctx, "with param")
	if err != nil {
		t.Fatal(err)
	}
	defer prep.Close(ctx)
	anyCmd, err := anypb.New(&pb.CommandPreparedStatementQuery{PreparedStatementHandle: prep.Handle()})
	if err != nil {
		t.Fatal(err)
	}
	cmd, err := proto.Marshal(anyCmd)
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join("testdata", "fuzz", "FuzzParameterBatch", "*"))
	if err != nil || len(files) < 2 {
		t.Fatalf("crashers: %v %v", files, err)
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		line := strings.Split(string(data), "\n")[1]
		raw, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(line, "[]byte("), ")"))
		if err != nil {
			t.Fatal(err)
		}
		msgs, ok := SplitIPCStream([]byte(raw), &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: cmd})
		if !ok {
			t.Fatalf("%s does not frame", file)
		}
		stream, err := cl.Client.DoPut(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs {
			if err := stream.Send(m); err != nil {
				break // the server ended the call
			}
		}
		_ = stream.CloseSend()
		_, err = stream.Recv()
		if status.Code(err) != codes.InvalidArgument {
			t.Fatalf("%s: DoPut answered %v, want INVALID_ARGUMENT", filepath.Base(file), err)
		}
	}
	for i, c := range []*flightsql.Client{cl, dialFake(t, addr)} {
		info, err := c.Execute(ctx, "select")
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		if n := rows(t, c, info); n != 3 {
			t.Fatalf("connection %d: %d rows, want 3", i, n)
		}
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, pSchema)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).Append(5)
	rec := b.NewRecordBatch()
	defer rec.Release()
	prep.SetParameters(rec)
	info, err := prep.Execute(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n := rows(t, cl, info); n != 5 {
		t.Fatalf("a well-formed binding after the crashers: %d rows, want 5", n)
	}
}

// TestCheckIPCMessageFieldCount: a schema of 65,535 fields (PostgreSQL's most parameters, one
// column each as ADBC binds them) passes checkIPCMessage; one more is refused as too many
// parameters (54000), not as a malformed message.
func TestCheckIPCMessageFieldCount(t *testing.T) {
	for _, n := range []int{65535, 65536} {
		fields := make([]arrow.Field, n)
		for i := range fields {
			fields[i] = arrow.Field{Name: "p" + strconv.Itoa(i), Type: arrow.PrimitiveTypes.Int64}
		}
		var buf bytes.Buffer
		w := ipc.NewWriter(&buf, ipc.WithSchema(arrow.NewSchema(fields, nil)))
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		msgs, ok := SplitIPCStream(buf.Bytes(), nil)
		if !ok || len(msgs) == 0 {
			t.Fatalf("%d fields: %d messages", n, len(msgs))
		}
		err := checkIPCMessage(msgs[0].DataHeader, msgs[0].DataBody)
		if n == 65535 && err != nil {
			t.Errorf("%d fields: %v", n, err)
		}
		if n > 65535 && !errors.Is(err, errTooManyFields) {
			t.Errorf("%d fields: %v, want errTooManyFields", n, err)
		}
	}
}
