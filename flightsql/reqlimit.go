package flightsql

import (
	"cmp"
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	pb "github.com/apache/arrow-go/v18/arrow/flight/gen/flight"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
)

// MaxRequestBytes bounds one request message other than DoPut's and DoExchange's FlightData
// (a FlightDescriptor, Action, Ticket, Criteria or HandshakeRequest): 4 MiB, gRPC's own
// default receive limit. The server's receive limit (server.MaxRecvBytes, 64 MiB) is sized for
// FlightData batches; nothing else needs it (SQL text is at most 1 MiB,
// substrait.MaxSQLBytes; a Substrait plan of the largest shapes the planner takes is well
// under it). A larger request is refused RESOURCE_EXHAUSTED before protobuf decodes it: gRPC
// has then read its bytes (it checks only the server-wide limit before reading), but none of
// the three copies decoding and the Flight SQL dispatcher would make (the contiguous buffer,
// the Action body or descriptor command, the command's SQL text), which made 16 concurrent
// 60 MB CreatePreparedStatement requests peak at 1.56 GB (trial 32 F7).
const MaxRequestBytes = 4 << 20

// requestTooLarge is the status of a request message of n bytes over MaxRequestBytes.
func requestTooLarge(n int) error {
	return status.Errorf(codes.ResourceExhausted, "the request message is %d bytes, more than the limit of %d bytes for requests other than DoPut and DoExchange data (SQL text: at most 1 MiB)", n, MaxRequestBytes)
}

// oversizedDescriptor is the descriptor type the codec gives a FlightDescriptor over
// MaxRequestBytes instead of decoding it (no such type exists in Flight's enum), its Cmd the
// message's size in decimal: a unary request is decoded before any interceptor runs, and
// gRPC turns a codec's error into INTERNAL, so the codec marks the request and
// RefuseOversized answers it (without it, Flight SQL's dispatcher answers INVALID_ARGUMENT: the
// command does not parse).
const oversizedDescriptor = flight.DescriptorType(-0x4f5a)

// boundedRequest is what boundedStream (and boundedPutStream) hand gRPC to decode a streamed
// request message into: the codec decodes msg, or, over limit (0: MaxRequestBytes), records
// the message's size and decodes nothing.
type boundedRequest struct {
	msg   any
	limit int
	size  int
}

// unmarshalBounded decodes data into v with decode unless v is a request message over
// MaxRequestBytes: a *boundedRequest or a *flight.FlightDescriptor is then marked (above),
// any other message but a *flight.FlightData refused with an error.
func unmarshalBounded(data mem.BufferSlice, v any, decode func(mem.BufferSlice, any) error) error {
	n := data.Len()
	switch m := v.(type) {
	case *flight.FlightData:
	case *boundedRequest:
		if limit := cmp.Or(m.limit, MaxRequestBytes); n > limit {
			m.size = n
			return nil
		}
		return decode(data, m.msg)
	case *flight.FlightDescriptor:
		if n > MaxRequestBytes {
			m.Reset()
			m.Type, m.Cmd = oversizedDescriptor, strconv.AppendInt(nil, int64(n), 10)
			return nil
		}
	default:
		if n > MaxRequestBytes {
			return requestTooLarge(n)
		}
	}
	return decode(data, v)
}

// RefuseOversized is the unary interceptor that answers a FlightDescriptor the server codec
// (ServerOptions) marked as over MaxRequestBytes RESOURCE_EXHAUSTED, naming its size.
func RefuseOversized(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	if d, ok := req.(*flight.FlightDescriptor); ok && d.Type == oversizedDescriptor {
		n, _ := strconv.Atoi(string(d.Cmd))
		return nil, requestTooLarge(n)
	}
	return handler(ctx, req)
}

// boundStreams has a stream's request messages other than FlightData decoded through a
// boundedRequest, so that one over MaxRequestBytes is refused before it is decoded.
func boundStreams(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	return handler(srv, boundedStream{ss})
}

// boundedStream is a server stream whose RecvMsg refuses request messages over
// MaxRequestBytes (FlightData passes as it is, bounded by the server's receive limit).
type boundedStream struct{ grpc.ServerStream }

func (s boundedStream) RecvMsg(m any) error {
	switch m.(type) {
	case *flight.FlightData, *boundedRequest:
		return s.ServerStream.RecvMsg(m)
	}
	b := boundedRequest{msg: m}
	if err := s.ServerStream.RecvMsg(&b); err != nil {
		if st, ok := status.FromError(err); ok && st.Code() == codes.Internal && strings.HasPrefix(st.Message(), "cardinality violation") {
			// gRPC's INTERNAL for a call of one request that sent none or several (gRPC has
			// sent it to the client already): the client's protocol error, logged and counted
			// as a refusal, not a failure of the server (trial 33 W2).
			return status.Error(codes.InvalidArgument, "the call must carry exactly one request message")
		}
		return err
	}
	if b.size > 0 {
		return requestTooLarge(b.size)
	}
	return nil
}

// boundedPutStream is a DoPut stream whose messages are decoded only up to limit bytes
// (0: no bound but the server's receive limit); one over it ends the call with tooLarge.
type boundedPutStream struct {
	flight.FlightService_DoPutServer
	limit    int
	tooLarge error
}

func (s *boundedPutStream) Recv() (*flight.FlightData, error) {
	if s.limit == 0 {
		return s.FlightService_DoPutServer.Recv()
	}
	fd := new(flight.FlightData)
	b := boundedRequest{msg: fd, limit: s.limit}
	if err := s.RecvMsg(&b); err != nil {
		return nil, err
	}
	if b.size > 0 {
		return nil, s.tooLarge
	}
	return fd, nil
}

// boundPut bounds the messages after first of a DoPut stream by its command (first's
// descriptor): a prepared statement query's parameters are one binding of at most
// MaxBindingBytes, so a message over MaxRequestBytes (four times as much: a client's encoding
// may differ from the server's) is refused INVALID_ARGUMENT as parameters over
// MaxBindingBytes are, before it is decoded. Ingest and update parameters keep the server's
// receive limit. A descriptor whose cmd is no google.protobuf.Any is errPutNotACommand.
func boundPut(s *boundedPutStream, first *flight.FlightData) error {
	var a anypb.Any
	if err := proto.Unmarshal(first.GetFlightDescriptor().GetCmd(), &a); err != nil || a.GetTypeUrl() == "" {
		return errPutNotACommand
	}
	if a.MessageIs((*pb.CommandPreparedStatementQuery)(nil)) {
		s.limit, s.tooLarge = MaxRequestBytes, errParamsTooLarge
	}
	return nil
}

// RequestWaitStreams returns the stream interceptor that bounds how long a call waits for
// each of its request messages other than FlightData (a DoGet's ticket, an action, a
// Handshake's payload: clients send them with the call): past wait, the call ends with
// DEADLINE_EXCEEDED, so that a call opened without its request cannot keep its connection
// busy, and so open past --conn-idle-timeout, forever (trial 34 S5: connections holding such
// calls were never closed). DoPut's messages have their own bound (ServePut's idle). The
// receive goes on in a goroutine of its own until the call ends, which ends it.
func RequestWaitStreams(wait time.Duration) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		return handler(srv, waitedStream{ServerStream: ss, wait: wait})
	}
}

// waitedStream is a server stream whose RecvMsg of a request message other than FlightData
// waits at most wait.
type waitedStream struct {
	grpc.ServerStream
	wait time.Duration
}

// errRequestWait ends a call whose request message did not come in time.
func errRequestWait(wait time.Duration) error {
	return status.Errorf(codes.DeadlineExceeded, "the call's request message did not arrive within %s", wait)
}

func (s waitedStream) RecvMsg(m any) error {
	msg := m
	if b, ok := m.(*boundedRequest); ok {
		msg = b.msg // a DoPut's bounded FlightData (boundedPutStream)
	}
	if _, ok := msg.(*flight.FlightData); ok || s.wait <= 0 {
		return s.ServerStream.RecvMsg(m)
	}
	done := make(chan error, 1)
	go func() { done <- s.ServerStream.RecvMsg(m) }()
	t := time.NewTimer(s.wait)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
		return errRequestWait(s.wait)
	}
}
