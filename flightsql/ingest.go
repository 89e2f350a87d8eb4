package flightsql

import (
	"context"
	"errors"
	"io"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	pb "github.com/apache/arrow-go/v18/arrow/flight/gen/flight"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/flightsrv/flightsrv/internal/querylog"
)

// Ingester writes a client's rows into a served routed table: the write path behind
// CommandStatementIngest (docs/flightsql-clients.md, bulk ingest). Implementations are safe for
// concurrent use.
type Ingester interface {
	// Ingest writes every row of rows into the table named table (as the client spelled it;
	// tables match case-insensitively) in one all-or-nothing request and returns the rows
	// stored: all of them, or 0 and an error with nothing stored. rows is the client's stream
	// (its schema is the rows' shape); Ingest reads it to its end or to the first error and
	// does not release it. Errors carrying a gRPC status reach the client as they are (they
	// must name no value, path or raw database error); any other error becomes INTERNAL.
	Ingest(ctx context.Context, table string, rows array.RecordReader) (int64, error)
}

// errDefinedByServer refuses the ingest modes that would define a table: routed tables exist
// only as the server's --table definitions, never created or replaced by a client.
var errDefinedByServer = status.Error(codes.InvalidArgument,
	"routed tables are defined by the server's --table option: ingest can only append to a served table (ADBC modes append and create_append)")

// DoPutCommandStatementIngest answers CommandStatementIngest (ADBC adbc_ingest, arrow-go
// ExecuteIngest): the rows of the DoPut stream are appended to a served table through the
// Ingester, all or nothing, admitted like a query (Config.Admit). table_definition_options:
// if_exists APPEND (or unspecified) with if_not_exist FAIL, CREATE or unspecified — the ADBC
// modes append and create_append — are accepted; if_exists FAIL or REPLACE (the modes create
// and replace) are INVALID_ARGUMENT (errDefinedByServer), as is CREATE of a table the server
// does not serve. A temporary table, a transaction id, a catalog, a schema other than
// DBSchemaName and any key of options are INVALID_ARGUMENT naming the option; a table the
// server does not serve is NOT_FOUND. Without an Ingester the command is UNIMPLEMENTED. The
// record count is the rows stored (0 on any error; arrow-go's dispatcher sends it as the
// one PutResult before the error).
func (s *Server) DoPutCommandStatementIngest(ctx context.Context, cmd flightsql.StatementIngest, rdr flight.MessageReader) (int64, error) {
	querylog.FromContext(ctx).SetStatement(querylog.StatementIngest)
	if s.ingester == nil {
		return 0, status.Error(codes.Unimplemented, "bulk ingestion is not supported by this server")
	}
	if err := checkIngest(cmd); err != nil {
		return 0, err
	}
	name := cmd.GetTable()
	if _, ok := s.engine.Tables()[strings.ToLower(name)]; !ok {
		if o := cmd.GetTableDefinitionOptions(); o != nil && o.IfNotExist == flightsql.TableDefinitionOptionsTableNotExistOptionCreate {
			return 0, errDefinedByServer
		}
		return 0, status.Error(codes.NotFound, "the table is not served (routed tables are defined by the server's --table option)")
	}
	ctx, done, err := s.admitWrite(ctx)
	if err != nil {
		return 0, err
	}
	defer done()
	n, err := s.ingester.Ingest(ctx, name, rdr)
	if err != nil {
		return 0, s.toStatus(err)
	}
	return n, nil
}

// checkIngest refuses the options of an ingest command the server does not carry out.
func checkIngest(cmd flightsql.StatementIngest) error {
	if o := cmd.GetTableDefinitionOptions(); o != nil {
		switch o.IfExists {
		case flightsql.TableDefinitionOptionsTableExistsOptionUnspecified, flightsql.TableDefinitionOptionsTableExistsOptionAppend:
		default: // FAIL (ADBC mode create) and REPLACE (mode replace)
			return errDefinedByServer
		}
	}
	if cmd.GetTemporary() {
		return status.Error(codes.InvalidArgument, "option temporary is not supported: routed tables are not temporary")
	}
	if len(cmd.GetTransactionId()) > 0 {
		return status.Error(codes.InvalidArgument, "option transaction_id is not supported: the server has no transactions (each ingest request is one, all or nothing)")
	}
	if cmd.GetCatalog() != "" {
		return status.Error(codes.InvalidArgument, "option catalog is not supported: the server has one unnamed catalog")
	}
	if sc := cmd.GetSchema(); sc != "" && !strings.EqualFold(sc, DBSchemaName) {
		return status.Errorf(codes.InvalidArgument, "option schema must be %s or empty", DBSchemaName)
	}
	for k := range cmd.GetOptions() {
		if len(k) > 64 {
			k = k[:64] + "…"
		}
		return status.Errorf(codes.InvalidArgument, "ingest option %q is not supported", k)
	}
	return nil
}

// ServePut runs a DoPut call: next (arrow-go's dispatcher) over the client's stream, checked
// (CheckedPutStream), except for a stream that ends before its first message. That stream
// carries no command and no rows — arrow-go's ExecuteIngest (v18.8, the one ADBC's Flight SQL
// driver 1.13 builds on) sends nothing at all for a reader without batches, its IPC writer
// writing the schema only when the first batch is written — and the dispatcher would refuse
// it (INVALID_ARGUMENT "failed to read input stream: EOF", flight.NewRecordReader finding no
// first message). ServePut answers it as the empty request it is: nothing is stored and the
// one PutResult carries a DoPutUpdateResult of record_count 0 (its encoding, like that of an
// empty DoPutPreparedStatementResult, is zero bytes), which is what an empty ingest or an
// update with no parameter rows answers. With idle > 0, a wait of more than idle for the
// client's next message ends the call with DEADLINE_EXCEEDED (errPutIdle): the write it
// feeds fails and stores nothing, releasing its transaction. A first message without a
// FlightDescriptor is INVALID_ARGUMENT. A prepared statement query's
// parameter messages are bounded before they are decoded (boundPut).
func ServePut(stream flight.FlightService_DoPutServer, idle time.Duration, next func(flight.FlightService_DoPutServer) error) error {
	bounded := &boundedPutStream{FlightService_DoPutServer: stream}
	checked := CheckedPutStream(bounded)
	if idle > 0 {
		checked = &idlePutStream{FlightService_DoPutServer: checked, idle: idle}
	}
	first, err := checked.Recv()
	if errors.Is(err, io.EOF) {
		return stream.Send(&flight.PutResult{AppMetadata: emptyUpdateResult})
	}
	if err != nil {
		// Our own refusal of the first message (a malformed IPC message, one over its size,
		// the idle bound) or the call's end, as it is: arrow-go's dispatcher would nest it in
		// "failed to read input stream: rpc error: …" (trial 33 W3).
		return err
	}
	if first.GetFlightDescriptor() == nil {
		// arrow-go's dispatcher reads the command from it (trial 33 G3: a panic).
		return errPutWithoutDescriptor
	}
	if err := boundPut(bounded, first); err != nil {
		return err
	}
	return next(&peekedPutStream{FlightService_DoPutServer: checked, first: first})
}

// errPutWithoutDescriptor refuses a DoPut whose first message carries no FlightDescriptor,
// which names the command (Flight's DoPut contract).
var errPutWithoutDescriptor = status.Error(codes.InvalidArgument, "the first message of a DoPut must carry the FlightDescriptor of its command")

// errPutNotACommand refuses a DoPut whose FlightDescriptor's cmd is not a google.protobuf.Any
// naming a message type (Flight SQL's commands are; arrow-go's own wording was "could not
// unmarshal google.protobuf.Any: proto: invalid empty type URL"). An Any of a type the server
// does not know stays UNIMPLEMENTED (the dispatcher's).
var errPutNotACommand = status.Error(codes.InvalidArgument, "the FlightDescriptor of a DoPut must hold a Flight SQL command (a google.protobuf.Any naming its type)")

// emptyUpdateResult is the encoding of DoPutUpdateResult{record_count: 0}.
var emptyUpdateResult = func() []byte {
	b, err := proto.Marshal(&pb.DoPutUpdateResult{RecordCount: 0})
	if err != nil {
		panic(err)
	}
	return b
}()

// peekedPutStream hands out the message (or error) ServePut read first, then the rest of the
// stream.
type peekedPutStream struct {
	flight.FlightService_DoPutServer
	first  *flight.FlightData
	err    error
	peeked bool
}

func (s *peekedPutStream) Recv() (*flight.FlightData, error) {
	if !s.peeked {
		s.peeked = true
		fd, err := s.first, s.err
		s.first, s.err = nil, nil
		return fd, err
	}
	return s.FlightService_DoPutServer.Recv()
}

// errPutIdle ends a DoPut whose client sent nothing for longer than its idle bound.
var errPutIdle = status.Error(codes.DeadlineExceeded, "the client sent nothing for too long (the server's --put-idle-timeout): the write stored nothing")

// idlePutStream is a DoPut stream whose Recv waits at most idle for the client's message.
// The underlying Recv runs in its own goroutine; one that outlives its wait ends when the
// call returns (gRPC cancels the stream), and the stream answers errPutIdle from then on.
// Like the stream it wraps, it is read by one goroutine at a time.
type idlePutStream struct {
	flight.FlightService_DoPutServer
	idle    time.Duration
	expired bool
}

type putRecv struct {
	fd  *flight.FlightData
	err error
}

func (s *idlePutStream) Recv() (*flight.FlightData, error) {
	if s.expired {
		return nil, errPutIdle
	}
	ch := make(chan putRecv, 1)
	go func() {
		fd, err := s.FlightService_DoPutServer.Recv()
		ch <- putRecv{fd, err}
	}()
	t := time.NewTimer(s.idle)
	defer t.Stop()
	select {
	case r := <-ch:
		return r.fd, r.err
	case <-t.C:
		s.expired = true
		return nil, errPutIdle
	}
}
