package flightsql

import (
	"testing"

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
