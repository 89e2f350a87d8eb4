package flightsql

import (
	"bytes"
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Updater is implemented by engines that execute data-modifying statements: flightsrv's
// INSERT into a routed table (docs/flightsql-clients.md, writes). The Server finds it on its
// Engine with a type assertion. Implementations are safe for concurrent use.
type Updater interface {
	// IsUpdate reports whether sql is a statement ExecuteUpdate executes (a cheap parse; any
	// other statement goes the query path, whose planning refuses other DML by name).
	IsUpdate(sql string) bool
	// ExecuteUpdate executes sql at once, all or nothing, once per parameter row of params (nil
	// or empty for a statement without parameters), and returns the rows stored. It reads
	// params to its end and does not release it. Errors as for Engine.
	ExecuteUpdate(ctx context.Context, sql string, params array.RecordReader) (int64, error)
}

// isUpdate reports whether q is an update the engine executes.
func (s *Server) isUpdate(q Query) bool {
	return s.updater != nil && q.SQL != "" && s.updater.IsUpdate(q.SQL)
}

// executeUpdate plans q under the session (prepare: it refuses what the engine cannot plan,
// naming it — UPDATE, DELETE, INSERT … SELECT are UNIMPLEMENTED), refuses a query (it returns
// rows: INVALID_ARGUMENT), admits the write like a query (Config.Admit) and executes it.
func (s *Server) executeUpdate(ctx context.Context, q Query, params array.RecordReader) (int64, error) {
	if _, _, err := s.prepare(ctx, &q); err != nil {
		return 0, err
	}
	if !s.isUpdate(q) {
		return 0, status.Error(codes.InvalidArgument, "the statement is a query: execute it as a query (it returns rows), not as an update")
	}
	ctx, done, err := s.admitWrite(ctx)
	if err != nil {
		return 0, err
	}
	defer done()
	n, err := s.updater.ExecuteUpdate(withSession(ctx, q.Analytical), q.SQL, params)
	if err != nil {
		return 0, s.toStatus(err)
	}
	return n, nil
}

// DoPutCommandStatementUpdate executes a CommandStatementUpdate (JDBC executeUpdate of a
// Statement, database/sql ExecContext without arguments): an INSERT with literal values at
// once, answering the rows stored. A transaction id is UNIMPLEMENTED, as for queries.
func (s *Server) DoPutCommandStatementUpdate(ctx context.Context, cmd flightsql.StatementUpdate) (int64, error) {
	if len(cmd.GetTransactionId()) > 0 {
		return 0, errTransactions
	}
	return s.executeUpdate(ctx, Query{SQL: cmd.GetQuery()}, nil)
}

// DoPutPreparedStatementUpdate executes a prepared INSERT once per row of the DoPut stream's
// parameter batches (JDBC executeUpdate and executeBatch, ADBC executemany, database/sql
// ExecContext with arguments), all rows in one all-or-nothing request, answering the rows
// stored. A stream without rows uses the handle's remembered binding, if any.
func (s *Server) DoPutPreparedStatementUpdate(ctx context.Context, cmd flightsql.PreparedStatementUpdate, rdr flight.MessageReader) (int64, error) {
	q, err := s.resolve(cmd.GetPreparedStatementHandle())
	if err != nil {
		return 0, s.toStatus(err)
	}
	params := &boundOrStream{stream: rdr, bound: q.Params, alloc: s}
	defer params.release()
	return s.executeUpdate(ctx, q, params)
}

// updateInfo executes an INSERT reached through GetFlightInfo (a client that executes every
// statement as a query, such as ADBC's cursor.execute): at once, here, never lazily in a DoGet,
// with the handle's one bound parameter row. The FlightInfo has an empty schema and no
// endpoint: the statement returns no rows.
func (s *Server) updateInfo(ctx context.Context, q Query, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	params := &boundOrStream{bound: q.Params, alloc: s}
	defer params.release()
	if _, err := s.executeUpdate(ctx, q, params); err != nil {
		return nil, err
	}
	return &flight.FlightInfo{Schema: flight.SerializeSchema(arrow.NewSchema(nil, nil), s.alloc), FlightDescriptor: desc,
		TotalRecords: 0, TotalBytes: 0, Ordered: true}, nil
}

// boundOrStream reads the parameter rows of an update: the client's DoPut stream when it
// holds rows, else the binding sealed into (or remembered for) the handle.
type boundOrStream struct {
	stream  array.RecordReader // nil for GetFlightInfo
	bound   []byte             // IPC stream of one row, or nil
	alloc   *Server
	fromIPC *ipc.Reader
	cur     array.RecordReader
	rows    int64
}

func (b *boundOrStream) Retain()  {}
func (b *boundOrStream) Release() {}

func (b *boundOrStream) Schema() *arrow.Schema {
	if b.cur != nil {
		return b.cur.Schema()
	}
	if b.stream != nil {
		return b.stream.Schema()
	}
	return nil
}

func (b *boundOrStream) Next() bool {
	if b.cur == nil && b.stream != nil {
		b.cur = b.stream
	}
	if b.cur != nil && b.cur.Next() {
		b.rows += b.cur.RecordBatch().NumRows()
		return true
	}
	if b.cur != nil && b.cur.Err() != nil {
		return false
	}
	if b.rows > 0 || b.fromIPC != nil || len(b.bound) == 0 {
		return false
	}
	r, err := ipc.NewReader(bytes.NewReader(b.bound), ipc.WithAllocator(b.alloc.alloc))
	if err != nil {
		return false
	}
	b.fromIPC, b.cur = r, r
	return b.Next()
}

func (b *boundOrStream) RecordBatch() arrow.RecordBatch { return b.cur.RecordBatch() }
func (b *boundOrStream) Record() arrow.RecordBatch      { return b.cur.RecordBatch() }

func (b *boundOrStream) Err() error {
	if b.cur != nil {
		return b.cur.Err()
	}
	return nil
}

func (b *boundOrStream) release() {
	if b.fromIPC != nil {
		b.fromIPC.Release()
	}
}

// admitWrite admits a write request like a query (Config.Admit; without it, at once) and
// returns the context it runs under and the function giving its slot back.
func (s *Server) admitWrite(ctx context.Context) (context.Context, func(), error) {
	if s.admit == nil {
		return ctx, func() {}, nil
	}
	return s.admit(ctx)
}
