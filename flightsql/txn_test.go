package flightsql

import (
	"context"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	pb "github.com/apache/arrow-go/v18/arrow/flight/gen/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
)

// TestTransactionIDRefusedAlike: a statement or Substrait plan naming a transaction is refused
// UNIMPLEMENTED by GetFlightInfo, GetSchema and PollFlightInfo alike (trial 32 m2: GetSchema
// answered the schema where GetFlightInfo refused).
func TestTransactionIDRefusedAlike(t *testing.T) {
	srv := fuzzServer(t, memory.DefaultAllocator)
	defer srv.Close()
	svc := zeroCopyService{flightsql.NewFlightServerWithAllocator(srv, memory.DefaultAllocator), srv}
	ctx, cancel := context.WithTimeout(grpc.NewContextWithServerTransportStream(context.Background(), headerSink{}), 10*time.Second)
	defer cancel()
	for _, m := range []proto.Message{
		&pb.CommandStatementQuery{Query: "SELECT 1", TransactionId: []byte("t1")},
		&pb.CommandStatementSubstraitPlan{Plan: &pb.SubstraitPlan{Plan: []byte{1}}, TransactionId: []byte("t1")},
	} {
		a, err := anypb.New(m)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := proto.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		desc := &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: raw}
		_, errInfo := svc.GetFlightInfo(ctx, desc)
		_, errSchema := svc.GetSchema(ctx, desc)
		_, errPoll := svc.PollFlightInfo(ctx, desc)
		for what, err := range map[string]error{"GetFlightInfo": errInfo, "GetSchema": errSchema, "PollFlightInfo": errPoll} {
			if st, _ := status.FromError(err); st.Code() != codes.Unimplemented || st.Message() != "transactions are not supported" {
				t.Errorf("%T: %s = %v, want UNIMPLEMENTED naming transactions", m, what, err)
			}
		}
	}
}
