package flightsql

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"runtime"
	"strings"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	pb "github.com/apache/arrow-go/v18/arrow/flight/gen/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/encoding"
	grpcproto "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/flightsrv/flightsrv/internal/querylog"
)

// This file streams query results to DoGet without copying them. arrow-go's Flight SQL
// DoGet writes each IPC message through flight.NewRecordWriter, which copies the message body
// into a per-stream bytes.Buffer, and gRPC's proto codec then copies the whole FlightData
// again into a pooled buffer (1 MiB and larger pools, kept alive by sync.Pool across a GC):
// two copies of every batch, several MiB of a scan's live heap. Here the FlightData wire bytes
// are a small header (protobuf tags, the IPC metadata) followed by the batch's own buffers,
// handed to gRPC as a mem.BufferSlice that the server codec passes through; the batch is
// retained until gRPC has written the message and frees the slice.

// ServerOptions returns the gRPC server options ServeDoGet and the request bound need: the
// codec that passes pre-encoded FlightData through (every other message is marshalled by
// gRPC's proto codec) and marks request messages over MaxRequestBytes instead of decoding
// them, and the stream interceptor that refuses those of streams RESOURCE_EXHAUSTED. Give
// them before any stream interceptor that reads messages (which then reads them bounded,
// and sees the refusal as the call's error), and RefuseOversized after the unary
// interceptors that should see unary refusals.
func ServerOptions() []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.ForceServerCodecV2(codec{proto: encoding.GetCodecV2(grpcproto.Name)}),
		grpc.ChainStreamInterceptor(boundStreams),
	}
}

// codec is gRPC's proto codec, except that an *encodedFlightData is sent as it is and request
// messages are bounded (unmarshalBounded).
type codec struct{ proto encoding.CodecV2 }

func (c codec) Marshal(v any) (mem.BufferSlice, error) {
	if m, ok := v.(*encodedFlightData); ok {
		out := m.data
		m.data = nil // gRPC owns it now and frees it once written
		return out, nil
	}
	return c.proto.Marshal(v)
}

func (c codec) Unmarshal(data mem.BufferSlice, v any) error {
	return unmarshalBounded(data, v, c.proto.Unmarshal)
}

func (c codec) Name() string { return c.proto.Name() }

// encodedFlightData is one FlightData message in wire form.
type encodedFlightData struct{ data mem.BufferSlice }

// MessageBytes returns the size in bytes of a DoGet stream's message m as the server sends it
// (a FlightData's header, body and metadata, or ServeDoGet's pre-encoded messages), 0 for any
// other message. Read it before SendMsg: the codec takes an encoded message's bytes.
func MessageBytes(m any) int {
	switch d := m.(type) {
	case *flight.FlightData:
		return len(d.DataHeader) + len(d.DataBody) + len(d.AppMetadata)
	case *encodedFlightData:
		return d.data.Len()
	}
	return 0
}

// ServeDoGet answers DoGet: statement and prepared-statement tickets are executed and their
// results streamed without copies (the gRPC server must use ServerOptions), with the IPC
// compression sealed into the ticket; every other ticket (the metadata commands) goes to next,
// arrow-go's Flight SQL dispatcher. While it runs, the stream is registered under its ticket
// for CancelFlightInfo.
func (s *Server) ServeDoGet(t *flight.Ticket, stream flight.FlightService_DoGetServer, next func(*flight.Ticket, flight.FlightService_DoGetServer) error) error {
	q, ok, err := s.ticketQuery(t.GetTicket())
	if !ok {
		return next(t, stream) // metadata commands; the dispatcher reports malformed tickets
	}
	if err != nil {
		return s.toStatus(err)
	}
	ctx, done, err := s.running.start(stream.Context(), q.Nonce)
	if err != nil {
		return err
	}
	defer done()
	schema, chunks, err := s.stream(ctx, q)
	if err != nil {
		return err
	}
	err = WriteStream(contextStream{stream, ctx}, schema, chunks, q.Compression)
	if cause := context.Cause(ctx); cause == errCancelledTicket {
		return cause
	}
	return err
}

// ticketQuery opens a statement ticket (signed, unexpired) or a prepared-statement ticket (a
// handle). ok is false for any other ticket (a metadata command, or bytes that are no Flight
// SQL command at all).
func (s *Server) ticketQuery(ticket []byte) (q Query, ok bool, err error) {
	return s.openAnyTicket(ticket, s.sign.openTicket)
}

// cancelQuery opens a ticket as ticketQuery does, but accepts an expired statement ticket
// (its query may still be cancelled) and leaves its fragment undecoded (signer.openHeader).
func (s *Server) cancelQuery(ticket []byte) (q Query, ok bool, err error) {
	return s.openAnyTicket(ticket, func(h []byte) (Query, error) { return s.sign.openHeader(domainTicket, h) })
}

func (s *Server) openAnyTicket(ticket []byte, openStatement func([]byte) (Query, error)) (q Query, ok bool, err error) {
	var a anypb.Any
	if proto.Unmarshal(ticket, &a) != nil {
		return q, false, nil
	}
	switch {
	case a.MessageIs((*pb.TicketStatementQuery)(nil)):
		var cmd pb.TicketStatementQuery
		if a.UnmarshalTo(&cmd) != nil {
			return q, true, errBadHandle
		}
		q, err = openStatement(cmd.GetStatementHandle())
		return q, true, err
	case a.MessageIs((*pb.CommandPreparedStatementQuery)(nil)):
		var cmd pb.CommandPreparedStatementQuery
		if a.UnmarshalTo(&cmd) != nil {
			return q, true, errBadHandle
		}
		q, err = s.resolve(cmd.GetPreparedStatementHandle())
		return q, true, err
	}
	return q, false, nil
}

// contextStream is a DoGet stream whose context is the query's (cancellable) one.
type contextStream struct {
	flight.FlightService_DoGetServer
	ctx context.Context
}

func (c contextStream) Context() context.Context { return c.ctx }

// IsQueryTicket reports whether t is a statement or prepared-statement ticket: a query that
// ServeDoGet executes (admission control counts these), rather than a metadata command's.
func IsQueryTicket(t *flight.Ticket) bool {
	var a anypb.Any
	if proto.Unmarshal(t.GetTicket(), &a) != nil {
		return false
	}
	return a.MessageIs((*pb.TicketStatementQuery)(nil)) || a.MessageIs((*pb.CommandPreparedStatementQuery)(nil))
}

// IsMetadataCommand reports whether d is a Flight SQL command other than a query
// (CommandStatementQuery, CommandStatementSubstraitPlan, CommandPreparedStatementQuery): a
// metadata command, answered at once.
func IsMetadataCommand(d *flight.FlightDescriptor) bool {
	var a anypb.Any
	if d.GetType() != flight.DescriptorCMD || proto.Unmarshal(d.GetCmd(), &a) != nil {
		return false
	}
	if !strings.HasPrefix(a.GetTypeUrl(), "type.googleapis.com/arrow.flight.protocol.sql.Command") {
		return false
	}
	return !a.MessageIs((*pb.CommandStatementQuery)(nil)) && !a.MessageIs((*pb.CommandStatementSubstraitPlan)(nil)) && !a.MessageIs((*pb.CommandPreparedStatementQuery)(nil))
}

// WriteStream writes the Arrow IPC stream of schema and chunks to a DoGet stream, as
// arrow-go's Flight SQL DoGet does (schema message first, one message per batch, a chunk's
// error ends the stream with that error), without copying batches: each chunk's batch is
// retained until gRPC has written it. WriteStream owns the chunks: it releases every batch it
// receives, and drains the channel when it returns early. stream's gRPC server must use
// ServerOptions' codec. compression is the IPC body codec: CompressionZstd, CompressionLZ4,
// or "" / CompressionNone for none (the buffers are then sent as they are).
func WriteStream(stream grpc.ServerStream, schema *arrow.Schema, chunks <-chan flight.StreamChunk, compression string) error {
	defer func() {
		for c := range chunks {
			if c.Data != nil {
				c.Data.Release()
			}
		}
	}()
	pw := &payloadSender{stream: stream}
	// Buffers the IPC writer makes itself (offsets rebased to zero for sliced arrays,
	// re-aligned bitmaps) are released as soon as a payload is handed over, while gRPC may
	// still hold them: they come from the Go allocator, whose memory only the garbage
	// collector reclaims.
	opts := []ipc.Option{ipc.WithSchema(schema), ipc.WithAllocator(writerAlloc)}
	switch compression {
	case CompressionZstd:
		opts = append(opts, ipc.WithZstd())
	case CompressionLZ4:
		opts = append(opts, ipc.WithLZ4())
	}
	w := ipc.NewWriterWithPayloadWriter(pw, opts...)
	ctx := stream.Context()
	pw.rec = querylog.FromContext(ctx)
	first := true
	for {
		if err := ctx.Err(); err != nil {
			// Checked first: when a batch is ready too, select would pick either.
			_ = w.Close()
			return err
		}
		select {
		case <-ctx.Done():
			_ = w.Close()
			return ctx.Err()
		case c, ok := <-chunks:
			if !ok {
				return w.Close()
			}
			if c.Err != nil {
				if c.Data != nil {
					c.Data.Release()
				}
				_ = w.Close()
				return c.Err
			}
			pw.desc, pw.appMetadata, pw.batch = c.Desc, c.AppMetadata, c.Data
			err := w.Write(c.Data)
			pw.desc, pw.appMetadata, pw.batch = nil, nil, nil
			c.Data.Release()
			if err != nil {
				_ = w.Close()
				return err
			}
			if first {
				first = false
				pw.rec.MarkFirstBatch()
			}
		}
	}
}

// writerAlloc allocates the IPC writer's own buffers; see WriteStream.
var writerAlloc = memory.NewGoAllocator()

// payloadSender is the ipc.PayloadWriter of WriteStream: it sends each IPC payload as one
// FlightData message. desc and appMetadata go into the next message only (as arrow-go's
// flight.Writer does); batch is the batch being written, retained per message; rec is the
// call's query record (nil outside a logged call), which counts the bytes sent.
type payloadSender struct {
	stream      grpc.ServerStream
	desc        *flight.FlightDescriptor
	appMetadata []byte
	batch       arrow.RecordBatch
	rec         *querylog.Record
}

func (p *payloadSender) Start() error { return nil }
func (p *payloadSender) Close() error { return nil }

func (p *payloadSender) WritePayload(payload ipc.Payload) error {
	meta := payload.Meta()
	var header []byte
	if meta != nil {
		header = meta.Bytes()
		defer meta.Release()
	}
	var body bodyPieces
	if err := payload.SerializeBody(&body); err != nil {
		return err
	}
	var desc []byte
	if p.desc != nil {
		b, err := proto.Marshal(p.desc)
		if err != nil {
			return fmt.Errorf("marshal flight descriptor: %w", err)
		}
		desc = b
		p.desc = nil
	}
	msg := &encodedFlightData{data: encodeFlightData(desc, header, p.appMetadata, body.pieces, body.n, p.batch)}
	size := msg.data.Len()
	if size > maxMessageBytes {
		msg.data.Free()
		rows := int64(0)
		if p.batch != nil {
			rows = p.batch.NumRows()
		}
		return errMessageTooLarge(size, rows)
	}
	if err := p.stream.SendMsg(msg); err != nil {
		msg.data.Free() // not handed to gRPC when it failed before marshalling
		return err
	}
	p.rec.AddBytes(int64(size))
	return nil
}

// maxMessageBytes is the largest FlightData message WritePayload sends: gRPC's own limit on a
// message (a length is an int32; grpc-go servers' default MaxSendMsgSize, which the server
// keeps). A variable for tests.
//
// What a client receives is its own setting, which the server never learns: grpc-go's
// default receive limit is 4 MiB (arrow-go's Flight SQL client keeps it), ADBC's Flight SQL
// driver sets 16 MiB (its option adbc.flight.sql.client_option.with_max_msg_size raises it).
// The executor's operators keep their batches to ops.MaxBatchBytes (2 MiB) of string and
// binary values, one row at least, so the messages of a result of many rows fit the smallest
// of them (TestLargeResultsReachClients: 10,000 rows of 10 KB to a 4 MiB client); a single row larger than a client's limit (SELECT repeat('x', 100000000), which
// PostgreSQL answers) is still sent, and a client that accepts it gets it, as from
// PostgreSQL; any other gets its own library's RESOURCE_EXHAUSTED naming the message's size
// and its limit (grpc-go: "received message larger than max (100000169 vs. 4194304)"; ADBC
// reports that code as its INTERNAL status). Refusing such rows at the server would answer
// no client better: ADBC maps every RESOURCE_EXHAUSTED to INTERNAL alike.
var maxMessageBytes = math.MaxInt32

// errMessageTooLarge is the refusal of a result message past maxMessageBytes: PostgreSQL's
// program_limit_exceeded (54000), RESOURCE_EXHAUSTED, naming the message's size, its rows and
// the limit (and no value).
func errMessageTooLarge(size int, rows int64) error {
	msg := fmt.Sprintf("a result message of %d bytes (%d rows) is larger than the %d bytes a gRPC message can carry; select fewer or narrower rows (program_limit_exceeded)", size, rows, maxMessageBytes)
	return querylog.Refusal(codes.ResourceExhausted, msg, msg, "54000")
}

// bodyPieces collects the slices Payload.SerializeBody writes (the batch's buffers and
// padding) without copying them.
type bodyPieces struct {
	pieces [][]byte
	n      int
}

func (b *bodyPieces) Write(p []byte) (int, error) {
	if len(p) > 0 {
		b.pieces = append(b.pieces, p)
		b.n += len(p)
	}
	return len(p), nil
}

// FlightData field numbers (Flight.proto).
const (
	fieldFlightDescriptor = 1
	fieldDataHeader       = 2
	fieldAppMetadata      = 3
	fieldDataBody         = 1000
)

// encodeFlightData returns the protobuf encoding of FlightData{FlightDescriptor: desc (already
// marshalled), DataHeader: header, AppMetadata: appMetadata, DataBody: the concatenation of
// body (n bytes)}, byte for byte what proto.Marshal produces, as a header slice followed by
// the body's own slices. When rec is not nil it is retained until the returned slice is
// freed (the last buffer's release releases it).
func encodeFlightData(desc, header, appMetadata []byte, body [][]byte, n int, rec arrow.RecordBatch) mem.BufferSlice {
	size := len(desc) + len(header) + len(appMetadata) + 4*binary.MaxVarintLen64
	head := make([]byte, 0, size)
	head = appendBytesField(head, fieldFlightDescriptor, desc)
	head = appendBytesField(head, fieldDataHeader, header)
	head = appendBytesField(head, fieldAppMetadata, appMetadata)
	if n > 0 {
		head = binary.AppendUvarint(head, fieldDataBody<<3|2)
		head = binary.AppendUvarint(head, uint64(n))
	}
	out := make(mem.BufferSlice, 0, len(body)+2)
	out = append(out, mem.SliceBuffer(head))
	for _, b := range body {
		out = append(out, mem.SliceBuffer(b))
	}
	if rec != nil && n > 0 {
		rec.Retain()
		// An empty buffer, freed after every byte before it has been written, whose pool
		// releases the batch. Nothing is ever written to it, so all share one backing array.
		// gRPC (v1.84, loopyWriter.preprocessData) drops without freeing a message queued
		// just after its stream was cleaned up (a cancelled client), so a cleanup on the
		// buffer's slice header releases the batch when the garbage collector finds the
		// message dropped; releaseOnPut releases it once either way.
		tail := new([]byte)
		*tail = releaseTail
		pool := &releaseOnPut{rec: rec}
		runtime.AddCleanup(tail, (*releaseOnPut).release, pool)
		out = append(out, mem.NewBuffer(tail, pool))
	}
	return out
}

// appendBytesField appends a length-delimited protobuf field, omitted when empty (proto3).
func appendBytesField(b []byte, field int, v []byte) []byte {
	if len(v) == 0 {
		return b
	}
	b = binary.AppendUvarint(b, uint64(field)<<3|2)
	b = binary.AppendUvarint(b, uint64(len(v)))
	return append(b, v...)
}

// releaseTail is the empty tail buffer of encodeFlightData. Its capacity keeps mem.NewBuffer
// from treating it as too small to pool (it would then return a buffer that never calls the
// pool).
var releaseTail = func() []byte {
	n := 1
	for mem.IsBelowBufferPoolingThreshold(n) {
		n *= 2
	}
	return make([]byte, 0, n)
}()

// releaseOnPut is the mem.BufferPool of encodeFlightData's tail buffer: gRPC puts the buffer
// back once it has written the message (or dropped it), which releases the batch; so does
// the tail's cleanup if gRPC lost the message. The batch is released once.
type releaseOnPut struct {
	rec  arrow.RecordBatch
	done atomic.Bool
}

func (r *releaseOnPut) Get(int) *[]byte { panic("flightsql: releaseOnPut is not a pool to get from") }
func (r *releaseOnPut) Put(*[]byte)     { r.release() }

func (r *releaseOnPut) release() {
	if r.done.CompareAndSwap(false, true) {
		r.rec.Release()
	}
}
