package e2e

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// TestHandshakeWithoutAuthAnswers: a server without authentication answers each Handshake
// request at once, so a client that waits for the answer before ending its side (pyarrow's
// ClientAuthHandler) connects; the call ends when the client ends its side (trial 32 m7).
func TestHandshakeWithoutAuthAnswers(t *testing.T) {
	e := newEnv(t)
	conn, err := grpc.NewClient(e.on.Addr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	stream, err := flight.NewFlightServiceClient(conn).Handshake(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if err := stream.Send(&flight.HandshakeRequest{Payload: []byte("hello")}); err != nil {
			t.Fatal(err)
		}
		if _, err := stream.Recv(); err != nil {
			t.Fatalf("answer %d to a request of a client still sending: %v", i, err)
		}
	}
	if err := stream.CloseSend(); err != nil {
		t.Fatal(err)
	}
	if _, err := stream.Recv(); !errors.Is(err, io.EOF) {
		t.Fatalf("after the client's end: %v, want the call's end", err)
	}
}
