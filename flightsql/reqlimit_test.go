package flightsql

import (
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// recvStream is a server stream whose RecvMsg answers err.
type recvStream struct {
	grpc.ServerStream
	err error
}

func (s recvStream) RecvMsg(any) error { return s.err }

// TestBoundedStreamCallsCardinalityARefusal: gRPC's INTERNAL "cardinality violation" (a call
// of one request that sent none) is the client's error, INVALID_ARGUMENT, for the call's log
// and metrics (trial 33 W2); other errors pass as they are.
func TestBoundedStreamCallsCardinalityARefusal(t *testing.T) {
	violation := status.Error(codes.Internal, "cardinality violation: received no request message from non-client-streaming RPC")
	if err := (boundedStream{recvStream{err: violation}}).RecvMsg(new(flight.Ticket)); status.Code(err) != codes.InvalidArgument {
		t.Errorf("a call without its request: %v, want InvalidArgument", err)
	}
	other := status.Error(codes.Internal, "something else")
	if err := (boundedStream{recvStream{err: other}}).RecvMsg(new(flight.Ticket)); err != other {
		t.Errorf("another error: %v, want it unchanged", err)
	}
}

// TestRequestWaitLeavesFlightDataAlone: the request wait bounds request messages, not a
// DoPut's FlightData, bounded (a prepared statement's parameters) or not, which
// --put-idle-timeout bounds.
func TestRequestWaitLeavesFlightDataAlone(t *testing.T) {
	slow := &slowRecvStream{delay: 50 * time.Millisecond}
	w := waitedStream{ServerStream: slow, wait: 10 * time.Millisecond}
	if err := w.RecvMsg(new(flight.FlightData)); err != nil {
		t.Fatalf("FlightData: %v", err)
	}
	if err := w.RecvMsg(&boundedRequest{msg: new(flight.FlightData)}); err != nil {
		t.Fatalf("bounded FlightData: %v", err)
	}
	if err := w.RecvMsg(new(flight.Ticket)); status.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("a ticket past the wait: %v, want DEADLINE_EXCEEDED", err)
	}
}

// slowRecvStream is a server stream whose RecvMsg returns after delay.
type slowRecvStream struct {
	grpc.ServerStream
	delay time.Duration
}

func (s *slowRecvStream) RecvMsg(any) error {
	time.Sleep(s.delay)
	return nil
}
