package querylog

import (
	"errors"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/flight"
	pb "github.com/apache/arrow-go/v18/arrow/flight/gen/flight"
	"github.com/jackc/pgx/v5/pgconn"
	"google.golang.org/grpc/codes"
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
		r.observe(msg)
		if got, _, _, _ := r.snapshot(); got != want {
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
