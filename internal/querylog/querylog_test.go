package querylog

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	pb "github.com/apache/arrow-go/v18/arrow/flight/gen/flight"
	"github.com/jackc/pgx/v5/pgconn"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
)

func TestErrorClassAndSQLState(t *testing.T) {
	pgErr := &pgconn.PgError{Code: "40001", Message: "restart transaction: partition_key = 'ORD'"}
	for _, c := range []struct {
		err          error
		class, state string
	}{
		{fmt.Errorf("read: %w", fmt.Errorf("bucket: %w", pgErr)), "*pgconn.PgError", "40001"},
		{errors.Join(fmt.Errorf("a: %w", errors.ErrUnsupported), errors.New("b")), "*errors.errorString", ""},
		{errors.New("plain"), "*errors.errorString", ""},
	} {
		if got := errorClass(c.err); got != c.class {
			t.Errorf("errorClass(%v) = %s, want %s", c.err, got, c.class)
		}
		if got := sqlState(c.err); got != c.state {
			t.Errorf("sqlState(%v) = %q, want %q", c.err, got, c.state)
		}
	}
}

func TestObserveCommand(t *testing.T) {
	cmd, err := anypb.New(&pb.CommandStatementQuery{Query: "SELECT 'ORD'"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := proto.Marshal(cmd)
	if err != nil {
		t.Fatal(err)
	}
	for msg, want := range map[any]string{
		&flight.FlightDescriptor{Cmd: b}:                                       "CommandStatementQuery",
		&flight.Ticket{Ticket: b}:                                              "CommandStatementQuery",
		&flight.FlightData{FlightDescriptor: &flight.FlightDescriptor{Cmd: b}}: "CommandStatementQuery",
		&flight.Action{Type: "CreatePreparedStatement", Body: b}:               "CreatePreparedStatement",
		&flight.Ticket{Ticket: []byte("not a protobuf Any")}:                   "",
		&flight.Empty{}: "",
	} {
		r := newRecord()
		(&callLogger{}).observe(context.Background(), r, msg)
		if _, got, _, _, _ := r.snapshot(); got != want {
			t.Errorf("observe(%T) = %q, want %q", msg, got, want)
		}
	}
}

func TestClassify(t *testing.T) {
	for c, want := range map[codes.Code]string{
		codes.InvalidArgument: "WARN query refused", codes.ResourceExhausted: "WARN query refused", codes.Unauthenticated: "WARN query refused",
		codes.Internal: "ERROR query failed", codes.DataLoss: "ERROR query failed", codes.Unavailable: "WARN query failed",
		codes.Canceled: "INFO query cancelled",
	} {
		level, msg := classify(c)
		if got := level.String() + " " + msg; got != want {
			t.Errorf("classify(%s) = %s, want %s", c, got, want)
		}
	}
	var nilRec *Record // every method is a no-op on nil
	nilRec.SetStatement("SELECT")
	nilRec.AddRows(1)
	nilRec.SetBuckets(func() (int, int) { return 1, 1 })
}

// TestRefusalsPairOnceWithinTheWindow: a remembered prepare refusal is taken once, only
// within followUpWindow, and at most maxRefusals are kept (the oldest go first).
func TestRefusalsPairOnceWithinTheWindow(t *testing.T) {
	f := refusals{byStmt: map[[32]byte]refusal{}}
	now := time.Unix(1_000_000, 0)
	key := func(i int) (k [32]byte) { k[0], k[1] = byte(i), byte(i>>8); return k }
	f.put(key(1), "a", now)
	if id, ok := f.take(key(1), now.Add(time.Second)); !ok || id != "a" {
		t.Fatalf("take = %q %v, want a", id, ok)
	}
	if _, ok := f.take(key(1), now.Add(time.Second)); ok {
		t.Fatal("a refusal was taken twice")
	}
	f.put(key(2), "b", now)
	if _, ok := f.take(key(2), now.Add(followUpWindow+time.Second)); ok {
		t.Fatal("a refusal older than the window was taken")
	}
	for i := 0; i < maxRefusals+10; i++ {
		f.put(key(i), fmt.Sprint(i), now.Add(time.Duration(i)*time.Millisecond))
	}
	if len(f.byStmt) != maxRefusals {
		t.Fatalf("%d refusals kept, want %d", len(f.byStmt), maxRefusals)
	}
	if _, ok := f.take(key(0), now.Add(time.Second)); ok {
		t.Fatal("the oldest refusal was kept")
	}
	if id, ok := f.take(key(maxRefusals+9), now.Add(time.Second)); !ok || id != fmt.Sprint(maxRefusals+9) {
		t.Fatalf("the newest refusal: %q %v", id, ok)
	}
}

// fakeTickets reads every ticket as the query "q1" of kind SELECT, except "meta" (no query).
type fakeTickets struct{}

func (fakeTickets) TicketQuery(b []byte) (TicketInfo, bool) {
	switch string(b) {
	case "meta":
		return TicketInfo{}, false
	case "sealed":
		return TicketInfo{ID: "q1", Statement: "SELECT"}, true
	}
	return TicketInfo{}, true
}

// TestTicketGivesTheQueryIDAndStatement: a DoGet's record takes the query id and the
// statement kind from its ticket; a query ticket naming none is UNKNOWN; other tickets leave
// the record alone.
func TestTicketGivesTheQueryIDAndStatement(t *testing.T) {
	l := &callLogger{tickets: fakeTickets{}}
	for ticket, want := range map[string][2]string{"sealed": {"q1", "SELECT"}, "forged": {"", StatementUnknown}, "meta": {"", ""}} {
		r := newRecord()
		drawn := r.ID()
		l.observe(context.Background(), r, &flight.Ticket{Ticket: []byte(ticket)})
		wantID := want[0]
		if wantID == "" {
			wantID = drawn
		}
		if r.ID() != wantID || r.Statement() != want[1] {
			t.Errorf("ticket %s: id %q statement %q, want %q %q", ticket, r.ID(), r.Statement(), wantID, want[1])
		}
	}
}

// TestConnectionClosedIsCancelled: a call that ends because its connection closed (gRPC's
// UNAVAILABLE "transport is closing", a killed client) is logged as cancelled, at info, not as
// a failure of the server (trial 32 m6); another UNAVAILABLE (a refusal) stays a failure.
func TestConnectionClosedIsCancelled(t *testing.T) {
	for msg, want := range map[string][2]string{
		grpcConnClosing:                       {"INFO", "query cancelled"},
		"waited 30s for one of 8 query slots": {"WARN", "query failed"},
	} {
		var buf bytes.Buffer
		l := &callLogger{log: slog.New(slog.NewJSONHandler(&buf, nil)), refusals: refusals{byStmt: map[[32]byte]refusal{}}}
		_, err := l.unary(context.Background(), &flight.FlightDescriptor{}, &grpc.UnaryServerInfo{FullMethod: "/" + FlightService + "/GetFlightInfo"},
			func(context.Context, any) (any, error) { return nil, status.Error(codes.Unavailable, msg) })
		if status.Code(err) != codes.Unavailable {
			t.Fatalf("%s: the call's error became %v", msg, err)
		}
		var line struct{ Level, Msg, Code string }
		if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
			t.Fatalf("%s: log %q: %v", msg, buf.String(), err)
		}
		if line.Level != want[0] || line.Msg != want[1] {
			t.Errorf("%s: logged %s %q code %s, want %s %q", msg, line.Level, line.Msg, line.Code, want[0], want[1])
		}
	}
}
