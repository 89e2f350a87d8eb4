package e2e

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	pb "github.com/apache/arrow-go/v18/arrow/flight/gen/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/flightsrv/flightsrv/flightsql"
)

// TestOversizedRequestsRefused: every request message but DoPut's data over
// flightsql.MaxRequestBytes (a statement's descriptor for GetFlightInfo, GetSchema and
// PollFlightInfo, a CreatePreparedStatement action, a ticket, a Handshake payload, ListFlights
// criteria) is refused RESOURCE_EXHAUSTED naming the limit, before it is decoded (trial 32 F7:
// 16 concurrent 60 MB requests cost 1.56 GB in copies before their refusal); a statement under
// the limit but over the SQL text's 1 MiB is still refused by name; a prepared statement
// query's parameters over the limit are refused as those over MaxBindingBytes are; an ingest batch of several
// times the limit is stored whole, and the server answers queries afterwards.
func TestOversizedRequestsRefused(t *testing.T) {
	srv := eventsServer(t, "postgres")
	fc := rawFlightClient(t, srv.Addr())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	statement := func(n int) *flight.FlightDescriptor {
		cmd, err := anypb.New(&pb.CommandStatementQuery{Query: "SELECT 1 -- " + strings.Repeat("x", n)})
		if err != nil {
			t.Fatal(err)
		}
		b, err := proto.Marshal(cmd)
		if err != nil {
			t.Fatal(err)
		}
		return &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: b}
	}
	big := flightsql.MaxRequestBytes + 1<<20
	const limit = "limit of 4194304 bytes"
	_, err := fc.GetFlightInfo(ctx, statement(big))
	wantCode(t, "GetFlightInfo", err, codes.ResourceExhausted, limit)
	_, err = fc.GetSchema(ctx, statement(big))
	wantCode(t, "GetSchema", err, codes.ResourceExhausted, limit)
	_, err = fc.PollFlightInfo(ctx, statement(big))
	wantCode(t, "PollFlightInfo", err, codes.ResourceExhausted, limit)
	_, err = fc.GetFlightInfo(ctx, statement(2<<20))
	wantCode(t, "GetFlightInfo of 2 MiB", err, codes.InvalidArgument, "longer than 1 MiB")

	streamErr := func(recv func() error) error {
		for {
			if err := recv(); err != nil {
				return err
			}
		}
	}
	body, err := anypb.New(&pb.ActionCreatePreparedStatementRequest{Query: "SELECT 1 -- " + strings.Repeat("x", big)})
	if err != nil {
		t.Fatal(err)
	}
	bodyBytes, err := proto.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	act, err := fc.DoAction(ctx, &flight.Action{Type: "CreatePreparedStatement", Body: bodyBytes})
	if err == nil {
		err = streamErr(func() error { _, err := act.Recv(); return err })
	}
	wantCode(t, "DoAction", err, codes.ResourceExhausted, limit)

	get, err := fc.DoGet(ctx, &flight.Ticket{Ticket: make([]byte, big)})
	if err == nil {
		err = streamErr(func() error { _, err := get.Recv(); return err })
	}
	wantCode(t, "DoGet", err, codes.ResourceExhausted, limit)

	list, err := fc.ListFlights(ctx, &flight.Criteria{Expression: make([]byte, big)})
	if err == nil {
		err = streamErr(func() error { _, err := list.Recv(); return err })
	}
	wantCode(t, "ListFlights", err, codes.ResourceExhausted, limit)

	hs, err := fc.Handshake(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := hs.Send(&flight.HandshakeRequest{Payload: make([]byte, big)}); err != nil {
		t.Fatal(err)
	}
	_, err = hs.Recv()
	wantCode(t, "Handshake", err, codes.ResourceExhausted, limit)

	// A prepared statement query's parameters: one message over the limit is refused before it
	// is decoded, one under it but over MaxBindingBytes after, alike.
	cl := dial(t, srv)
	stmt, err := cl.Prepare(ctx, "SELECT length($1::text)")
	if err != nil {
		t.Fatal(err)
	}
	defer stmt.Close(ctx)
	for _, n := range []int{big, 2 << 20} {
		b := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema([]arrow.Field{{Name: "p", Type: arrow.BinaryTypes.String}}, nil))
		b.Field(0).(*array.StringBuilder).Append(strings.Repeat("y", n))
		rec := b.NewRecordBatch()
		b.Release()
		stmt.SetParameters(rec)
		rec.Release()
		_, err = stmt.Execute(ctx)
		wantCode(t, fmt.Sprintf("a parameter of %d bytes", n), err, codes.InvalidArgument, "parameters are larger than 1048576 bytes")
	}

	// DoPut's data is bounded by the server's receive limit only: one batch of about three
	// times MaxRequestBytes is stored whole.
	now := time.Now().UTC()
	evs := makeEvents(rand.New(rand.NewPCG(7, 7)), 3000, "big", now)
	long := strings.Repeat("ü", 2000) // 4,000 bytes
	for i := range evs {
		evs[i].note = &long
	}
	n, err := ingest(ctx, cl, wideSchema, eventBatches(evs, len(evs), false, -1), nil)
	if err != nil || n != int64(len(evs)) {
		t.Fatalf("ingest of one %d-row batch of ~12 MB = %d, %v", len(evs), n, err)
	}
	sameEvents(t, "after the big batch", readEvents(t, cl, now), evs)
}

// TestMalformedActionBodyRefused: an action whose body is not its message (an empty body for
// CreatePreparedStatement, whose body is an Any) is INVALID_ARGUMENT naming the message, never
// protobuf's own wording (trial 32 m3); the same action well formed is answered.
func TestMalformedActionBodyRefused(t *testing.T) {
	fc := rawFlightClient(t, eventsServer(t, "sqlite").Addr())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	action := func(body []byte) error {
		st, err := fc.DoAction(ctx, &flight.Action{Type: "CreatePreparedStatement", Body: body})
		for err == nil {
			_, err = st.Recv()
		}
		if err == io.EOF {
			return nil
		}
		return err
	}
	wantCode(t, "an empty body", action(nil), codes.InvalidArgument, "must hold a google.protobuf.Any of an arrow.flight.protocol.sql.ActionCreatePreparedStatementRequest")
	body, err := anypb.New(&pb.ActionCreatePreparedStatementRequest{Query: "SELECT 1"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := proto.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	if err := action(b); err != nil {
		t.Fatalf("a well-formed CreatePreparedStatement: %v", err)
	}
}

// rawFlightClient is a plain Flight client of the server at addr, closed at the test's end.
func rawFlightClient(t *testing.T, addr string) flight.FlightServiceClient {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return flight.NewFlightServiceClient(conn)
}

// TestDoPutWithoutDescriptorRefused: a DoPut whose first message carries no FlightDescriptor
// (so no command) is INVALID_ARGUMENT, not a recovered panic answered INTERNAL (trial 33 G3).
func TestDoPutWithoutDescriptorRefused(t *testing.T) {
	fc := rawFlightClient(t, eventsServer(t, "sqlite").Addr())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	put, err := fc.DoPut(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := put.Send(&flight.FlightData{}); err != nil {
		t.Fatal(err)
	}
	_ = put.CloseSend()
	for err == nil {
		_, err = put.Recv()
	}
	wantCode(t, "an empty first message", err, codes.InvalidArgument, "must carry the FlightDescriptor")

	// A descriptor whose cmd is no Any, and a first message that is no IPC message: refused
	// in our words, not nested in arrow-go's "failed to read input stream: rpc error: …"
	// (trial 33 W3).
	for _, c := range []struct {
		what, want string
		first      *flight.FlightData
	}{
		{"an empty command", "must hold a Flight SQL command", &flight.FlightData{FlightDescriptor: &flight.FlightDescriptor{Type: flight.DescriptorCMD}}},
		{"a malformed IPC message", "malformed Arrow IPC message", &flight.FlightData{DataHeader: []byte{1, 2, 3}}},
	} {
		put, err := fc.DoPut(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := put.Send(c.first); err != nil {
			t.Fatal(err)
		}
		_ = put.CloseSend()
		for err == nil {
			_, err = put.Recv()
		}
		wantCode(t, c.what, err, codes.InvalidArgument, c.want)
		if strings.Contains(status.Convert(err).Message(), "rpc error") {
			t.Errorf("%s: a nested status: %v", c.what, err)
		}
	}
}
