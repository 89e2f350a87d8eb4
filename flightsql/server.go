package flightsql

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/flightsrv/flightsrv/internal/auth"
	"github.com/flightsrv/flightsrv/internal/panics"
	"github.com/flightsrv/flightsrv/internal/querylog"
	"github.com/flightsrv/flightsrv/substrait"
)

// Engine plans and executes queries for the server. Implementations are safe for concurrent
// use. Errors that carry a gRPC status (status.FromError) reach the client as they are; any
// other error is logged and reported as a generic Internal error, so an Engine must put
// nothing private (partition values, paths, raw database errors) into status messages.
type Engine interface {
	// Prepare plans the query without executing it and returns its dataset schema and its
	// parameter schema (one field per placeholder, in placeholder order; empty when none).
	// Exactly one of sql and substraitPlan is set.
	Prepare(ctx context.Context, sql string, substraitPlan []byte) (dataset, params *arrow.Schema, err error)
	// Execute runs the query with the bound parameters (nil when none; otherwise one row of
	// params' schema) and returns its result stream, whose schema equals Prepare's dataset
	// schema. The caller releases the reader; releasing it early cancels the query's work.
	Execute(ctx context.Context, sql string, substraitPlan []byte, params arrow.RecordBatch) (array.RecordReader, error)
	// Tables returns the queryable tables by name with their Arrow schemas.
	Tables() map[string]*arrow.Schema
}

// ParameterTyper is implemented by engines that type the parameters of a SQL statement as a
// client's binding declares them, as PostgreSQL types them from the parameter types declared
// at Parse: Flight SQL carries the declared types as the Arrow schema of the parameters bound
// by DoPut, and a parameter the statement leaves untyped (`SELECT ?`, PostgreSQL's 42P18 when
// nothing gives a type) is typed by it too. TypeParameters returns sql with the parameters
// declared as the types of bound's fields (the SQL the engine then prepares and executes with
// that binding), sql itself when it declares nothing; its errors are planning errors (a
// parameter still untyped is 42P18, a declared type PostgreSQL has no operator for 42883).
type ParameterTyper interface {
	TypeParameters(ctx context.Context, sql string, bound *arrow.Schema) (string, error)
}

// UnknownParameterTyper is implemented by engines that can declare the parameters a SQL
// statement leaves untyped as text, PostgreSQL's type for a parameter of type unknown that
// nothing resolves (`SELECT $1` prepared without parameter types has a text parameter).
// CreatePreparedStatement answers that parameter schema to a client that binds into the
// declared types (the JDBC driver converts its values into the vectors of the answered
// schema, and binds nothing without one); the binding's own types still declare the
// parameters when it arrives (ParameterTyper).
type UnknownParameterTyper interface {
	TypeUnknownParameters(ctx context.Context, sql string) (string, error)
}

// Config configures a Server.
type Config struct {
	// Keyring signs statement handles and tickets with its active key and verifies them with
	// any of its keys (auth.Keyring, domains "handle" and "ticket"): replicas sharing the
	// keyring file serve each other's tickets. Nil means a random per-process key.
	Keyring *auth.Keyring
	// TicketTTL is how long a ticket may be fetched after GetFlightInfo (or after
	// RenewFlightEndpoint); default DefaultTicketTTL.
	TicketTTL time.Duration
	// MultiEndpoint makes row-returning queries over several buckets answer with ordered
	// endpoints, one per group of buckets, for sessions that do not choose
	// (OptionEndpoints). Off by default: one endpoint, as BI tools expect.
	MultiEndpoint bool
	// Advertise are the locations (URIs such as grpc+tcp://host:port) put into every
	// endpoint, endpoint i listing them from the i-th on (rotate): the replicas' advertised
	// addresses, never a bind address. Empty means none (clients fetch from the server they
	// asked).
	Advertise []string
	// Self is the one of Advertise that reaches this replica ("" when unknown): a single
	// endpoint lists it first and endpoint i lists from the (self+i)-th on, so that clients,
	// which fetch from the first location, stream from the replica that planned the query and
	// the load spreads with the planning (issue 20).
	Self string
	// Now is the clock of ticket expiry (nil: time.Now).
	Now func() time.Time
	// Version is reported by GetSqlInfo as FLIGHT_SQL_SERVER_VERSION.
	Version string
	// Logger is the protocol layer's logger; nil uses slog.Default(). Refused and failed calls
	// are logged once each by internal/querylog's interceptors, not here.
	Logger *slog.Logger
	// Alloc allocates Arrow memory; nil uses memory.DefaultAllocator.
	Alloc memory.Allocator
	// Analytical makes the analytical mode every session's default (OptionAnalytical "on";
	// serve --analytical); a session may still turn it off.
	Analytical bool
	// Admit, when set, admits the background run of a poll (PollFlightInfo): it waits for a
	// query slot (the server's, server/admission.go: one of the polls' share, in a queue of
	// their own, until the slot or the run's cancellation by expiry or CancelFlightInfo) and
	// returns the context the run uses (with the query's wall-time limit, whose cancellation
	// cause should be a gRPC status) and the function giving the slot back (called once), or
	// a gRPC status error (UNAVAILABLE when the server is draining). Meanwhile the poll's
	// progress is 0 and its app_metadata says "queued" (poll.go).
	Admit func(ctx context.Context) (context.Context, func(), error)
	// PollTTL is how long a poll is kept without being asked about (default DefaultPollTTL);
	// PollMemory bounds the bytes of result batches all polls keep together (default
	// DefaultPollMemory; negative: none are kept, every poll endpoint is executed when
	// fetched). See poll.go.
	PollTTL    time.Duration
	PollMemory int64
	// Peers are the URIs (grpc+tcp://host:port or grpc+tls://host:port) of the replicas a
	// CancelFlightInfo is forwarded to (peers.go); PeerTLS is the client TLS configuration
	// for grpc+tls peers (nil: the system's roots). Empty: cancels reach this process only.
	Peers   []string
	PeerTLS *tls.Config
	// Ingester, when set, carries out CommandStatementIngest (ingest.go) and makes GetSqlInfo
	// report bulk ingestion supported and the server not read-only; nil refuses ingest
	// (UNIMPLEMENTED).
	Ingester Ingester
}

// DefaultTicketTTL is Config.TicketTTL's default: one hour.
const DefaultTicketTTL = time.Hour

// DBSchemaName is the single database schema under which tables are listed; the server has
// no catalogs (catalog_name is null everywhere).
const DBSchemaName = "public"

// TableType is the table_type every routed table reports, in GetTables and GetTableTypes.
const TableType = "TABLE"

// Bounds on remembered parameter bindings of original prepared handles: their number, the
// size of one binding, and the size of them all (the oldest are forgotten first).
const (
	maxBindings      = 10000
	MaxBindingBytes  = 1 << 20
	maxBindingsBytes = 64 << 20
)

// errParamsTooLarge refuses a binding over MaxBindingBytes.
var errParamsTooLarge = status.Errorf(codes.InvalidArgument, "parameters are larger than %d bytes", MaxBindingBytes)

// Server is a Flight SQL server over an Engine. Create it with NewServer and register it with
// flight.NewServerWithMiddleware via flightsql.NewFlightServer. Safe for concurrent use.
type Server struct {
	flightsql.BaseServer
	engine    Engine
	sign      *signer
	log       *slog.Logger
	alloc     memory.Allocator
	ticketTTL time.Duration
	multi     bool
	locations []*flight.Location
	self      int // index of Config.Self among locations (0 when unknown)

	analytical bool // the sessions' default analytical mode (Config.Analytical)

	sqlInfoIDs []uint32 // the GetSqlInfo ids registered, in registration order
	running    *running // DoGet streams in flight by ticket (CancelFlightInfo)
	polls      *polls   // PollFlightInfo's background runs and their kept batches
	pollTTL    time.Duration
	admit      func(context.Context) (context.Context, func(), error)
	peers      *peers // where CancelFlightInfo is forwarded
	ingester   Ingester
	updater    Updater        // the engine's, when it executes INSERT
	typer      ParameterTyper // the engine's, when it types parameters from a binding

	mu           sync.Mutex
	bindings     map[string][]byte // original prepared handle → last bound params (IPC)
	order        []string
	bindingBytes int
}

// NewServer returns a Server answering with engine.
func NewServer(engine Engine, cfg Config) (*Server, error) {
	sign, err := newSigner(cfg.Keyring, cfg.Now)
	if err != nil {
		return nil, err
	}
	if cfg.TicketTTL <= 0 {
		cfg.TicketTTL = DefaultTicketTTL
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Alloc == nil {
		cfg.Alloc = memory.DefaultAllocator
	}
	if cfg.PollTTL <= 0 {
		cfg.PollTTL = DefaultPollTTL
	}
	switch {
	case cfg.PollMemory == 0:
		cfg.PollMemory = DefaultPollMemory
	case cfg.PollMemory < 0:
		cfg.PollMemory = 0
	}
	peers, err := newPeers(cfg.Peers, cfg.PeerTLS)
	if err != nil {
		return nil, err
	}
	s := &Server{peers: peers, engine: engine, sign: sign, log: cfg.Logger, alloc: cfg.Alloc, ticketTTL: cfg.TicketTTL, multi: cfg.MultiEndpoint,
		bindings: map[string][]byte{}, running: newRunning(), analytical: cfg.Analytical,
		polls: newPolls(cfg.PollMemory), pollTTL: cfg.PollTTL, admit: cfg.Admit, ingester: cfg.Ingester}
	for i, uri := range cfg.Advertise {
		s.locations = append(s.locations, &flight.Location{Uri: uri})
		if uri == cfg.Self {
			s.self = i
		}
	}
	s.updater, _ = engine.(Updater)
	s.typer, _ = engine.(ParameterTyper)
	s.BaseServer.Alloc = cfg.Alloc
	if s.sqlInfoIDs, err = registerSqlInfo(&s.BaseServer, cfg.Version, true, cfg.Ingester != nil); err != nil {
		return nil, err
	}
	return s, nil
}

// toStatus converts an error to a gRPC status error at the protocol boundary (Status).
func (s *Server) toStatus(err error) error { return Status(err, s.log) }

// stream executes q and returns the DoGet stream. Errors of the result reader are mapped
// to gRPC status codes before they reach the client.
func (s *Server) stream(ctx context.Context, q Query) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	rdr, err := s.execute(ctx, q)
	if err != nil {
		return nil, nil, s.toStatus(err)
	}
	ch := make(chan flight.StreamChunk)
	go flight.StreamChunksFromReader(ctx, &statusReader{RecordReader: rdr, s: s, rec: querylog.FromContext(ctx)}, ch)
	return rdr.Schema(), ch, nil
}

// execute returns the result reader of q: the batches a poll of this process keeps for q's
// endpoint (poll.go), else the engine's execution of q's fragment (or of the whole query).
// The caller releases the reader.
func (s *Server) execute(ctx context.Context, q Query) (array.RecordReader, error) {
	if q.Poll {
		if rdr := s.polls.results(q.Nonce, q.Endpoint); rdr != nil {
			return rdr, nil
		}
	}
	params, err := s.decodeParams(q.Params)
	if err != nil {
		return nil, err
	}
	if params != nil {
		defer params.Release()
	}
	ctx = withSession(ctx, q.Analytical)
	if fe, ok := s.engine.(FragmentEngine); ok && len(q.Fragment) > 0 {
		return fe.ExecuteFragment(ctx, q.SQL, q.Substrait, params, q.Fragment)
	}
	if params != nil && q.SQL != "" && !q.Declared && s.typer != nil {
		// A prepared handle fetched by DoGet without GetFlightInfo, which would have declared
		// the parameters' types from the binding (prepare).
		sql, err := s.typer.TypeParameters(ctx, q.SQL, params.Schema())
		if err != nil {
			return nil, err
		}
		q.SQL = sql
	}
	return s.engine.Execute(ctx, q.SQL, q.Substrait, params)
}

// statusReader maps its reader's error to a gRPC status and counts the rows it hands out in
// the call's query record.
type statusReader struct {
	array.RecordReader
	s   *Server
	rec *querylog.Record
	// panicked is the panic recovered from the reader's Next (internal/panics), which ends the
	// stream with INTERNAL instead of arrow-go's recovery (whose message quotes the value).
	panicked error
}

func (r *statusReader) Next() (ok bool) {
	if r.panicked != nil {
		return false
	}
	defer panics.Handle("DoGet stream", func(err error) { r.panicked, ok = err, false })
	if !r.RecordReader.Next() {
		return false
	}
	r.rec.AddRows(r.RecordReader.RecordBatch().NumRows())
	return true
}

// Release releases the underlying reader; a panic there (a reader left inconsistent by an
// earlier one) is recovered and logged, never passed to arrow-go's recovery.
func (r *statusReader) Release() {
	defer panics.Handle("DoGet stream release", func(error) {})
	r.RecordReader.Release()
}

func (r *statusReader) Err() error {
	if r.panicked != nil {
		return r.panicked
	}
	return r.s.toStatus(r.RecordReader.Err())
}

// untypedParameter reports whether err (the engine's, or its gRPC status) refuses a parameter
// whose type nothing determines: PostgreSQL's indeterminate_datatype, 42P18.
func untypedParameter(err error) bool {
	if se := (*substrait.Error)(nil); errors.As(err, &se) {
		return se.SQLState == "42P18"
	}
	if _, ok := status.FromError(err); !ok {
		return false
	}
	for _, d := range status.Convert(err).Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok && info.GetMetadata()["sqlstate"] == "42P18" {
			return true
		}
	}
	return false
}

// paramsSchema returns the schema of an IPC stream of bound parameters (decodeParams).
func (s *Server) paramsSchema(b []byte) (*arrow.Schema, error) {
	rdr, err := ipc.NewReader(bytes.NewReader(b), ipc.WithAllocator(s.alloc))
	if err != nil {
		return nil, errBadHandle
	}
	defer rdr.Release()
	return rdr.Schema(), nil
}

func (s *Server) decodeParams(b []byte) (arrow.RecordBatch, error) {
	if len(b) == 0 {
		return nil, nil
	}
	rdr, err := ipc.NewReader(bytes.NewReader(b), ipc.WithAllocator(s.alloc))
	if err != nil {
		return nil, errBadHandle
	}
	defer rdr.Release()
	if !rdr.Next() {
		return nil, errBadHandle
	}
	rec := rdr.RecordBatch()
	rec.Retain()
	return rec, nil
}

// prepare plans q under the calling session (its analytical mode, which it records in q for the
// ticket or handle, and its user). A session it cannot read (sessionOptions) is refused here,
// before anything is planned, so the callers may read the session's other options after it.
func (s *Server) prepare(ctx context.Context, q *Query) (dataset, params *arrow.Schema, err error) {
	opts, err := s.sessionOptions(ctx)
	if err != nil {
		return nil, nil, err
	}
	q.Analytical = opts[OptionAnalytical].GetStringValue() == "on"
	ctx = withSession(ctx, q.Analytical)
	if q.SQL != "" && len(q.Params) > 0 && !q.Declared && s.typer != nil {
		// The binding's Arrow schema declares the parameters' types, as the parameter types a
		// PostgreSQL client declares at Parse.
		schema, err := s.paramsSchema(q.Params)
		if err != nil {
			return nil, nil, s.toStatus(err)
		}
		sql, err := s.typer.TypeParameters(ctx, q.SQL, schema)
		if err != nil {
			return nil, nil, s.toStatus(err)
		}
		q.SQL, q.Declared = sql, true
	}
	dataset, params, err = s.engine.Prepare(ctx, q.SQL, q.Substrait)
	if err != nil {
		return nil, nil, s.toStatus(err)
	}
	q.Statement = querylog.FromContext(ctx).Statement()
	if params == nil {
		params = arrow.NewSchema(nil, nil)
	}
	return dataset, params, nil
}

// errTransactions refuses a command naming a transaction: the server has none (each write
// request is one, all or nothing). GetFlightInfo, GetSchema and PollFlightInfo of a statement
// or a Substrait plan answer it alike (trial 32 m2: GetSchema answered where GetFlightInfo
// refused).
var errTransactions = status.Error(codes.Unimplemented, "transactions are not supported")

// GetFlightInfoStatement plans a CommandStatementQuery and returns its FlightInfo.
func (s *Server) GetFlightInfoStatement(ctx context.Context, cmd flightsql.StatementQuery, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	if len(cmd.GetTransactionId()) > 0 {
		return nil, errTransactions
	}
	if q := (Query{SQL: cmd.GetQuery()}); s.isUpdate(q) {
		return s.updateInfo(ctx, q, desc)
	}
	return s.statementInfo(ctx, Query{SQL: cmd.GetQuery()}, desc)
}

// GetSchemaStatement returns the result schema of a CommandStatementQuery.
func (s *Server) GetSchemaStatement(ctx context.Context, cmd flightsql.StatementQuery, _ *flight.FlightDescriptor) (*flight.SchemaResult, error) {
	if len(cmd.GetTransactionId()) > 0 {
		return nil, errTransactions
	}
	dataset, _, err := s.prepare(ctx, &Query{SQL: cmd.GetQuery()})
	if err != nil {
		return nil, err
	}
	return &flight.SchemaResult{Schema: flight.SerializeSchema(dataset, s.alloc)}, nil
}

// GetFlightInfoSubstraitPlan plans a CommandStatementSubstraitPlan.
func (s *Server) GetFlightInfoSubstraitPlan(ctx context.Context, cmd flightsql.StatementSubstraitPlan, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	if len(cmd.GetTransactionId()) > 0 {
		return nil, errTransactions
	}
	p := cmd.GetPlan()
	if len(p.Plan) == 0 {
		return nil, status.Error(codes.InvalidArgument, "substrait plan is empty")
	}
	return s.statementInfo(ctx, Query{Substrait: p.Plan}, desc)
}

// GetSchemaSubstraitPlan returns the result schema of a Substrait plan.
func (s *Server) GetSchemaSubstraitPlan(ctx context.Context, cmd flightsql.StatementSubstraitPlan, _ *flight.FlightDescriptor) (*flight.SchemaResult, error) {
	if len(cmd.GetTransactionId()) > 0 {
		return nil, errTransactions
	}
	p := cmd.GetPlan()
	if len(p.Plan) == 0 {
		return nil, status.Error(codes.InvalidArgument, "substrait plan is empty")
	}
	dataset, _, err := s.prepare(ctx, &Query{Substrait: p.Plan})
	if err != nil {
		return nil, err
	}
	return &flight.SchemaResult{Schema: flight.SerializeSchema(dataset, s.alloc)}, nil
}

// DoGetStatement executes the statement carried by a signed ticket.
func (s *Server) DoGetStatement(ctx context.Context, cmd flightsql.StatementQueryTicket) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	q, err := s.sign.openTicket(cmd.GetStatementHandle())
	if err != nil {
		return nil, nil, s.toStatus(err)
	}
	return s.stream(ctx, q)
}

// CreatePreparedStatement plans SQL and returns a self-contained signed handle with the
// dataset and parameter schemas.
func (s *Server) CreatePreparedStatement(ctx context.Context, req flightsql.ActionCreatePreparedStatementRequest) (flightsql.ActionCreatePreparedStatementResult, error) {
	if len(req.GetTransactionId()) > 0 {
		return flightsql.ActionCreatePreparedStatementResult{}, errTransactions
	}
	return s.createPrepared(ctx, Query{SQL: req.GetQuery()})
}

// CreatePreparedSubstraitPlan prepares a Substrait plan like CreatePreparedStatement.
func (s *Server) CreatePreparedSubstraitPlan(ctx context.Context, req flightsql.ActionCreatePreparedSubstraitPlanRequest) (flightsql.ActionCreatePreparedStatementResult, error) {
	p := req.GetPlan()
	if len(p.Plan) == 0 {
		return flightsql.ActionCreatePreparedStatementResult{}, status.Error(codes.InvalidArgument, "substrait plan is empty")
	}
	return s.createPrepared(ctx, Query{Substrait: p.Plan})
}

func (s *Server) createPrepared(ctx context.Context, q Query) (flightsql.ActionCreatePreparedStatementResult, error) {
	dataset, params, err := s.prepare(ctx, &q)
	if err != nil && q.SQL != "" && s.typer != nil && untypedParameter(err) {
		// A parameter only a binding can type (ParameterTyper): the handle is valid, its
		// schemas unknown until the client binds parameters (DoPut), whose Arrow types
		// declare them; executing it unbound answers the 42P18 refusal. The parameter schema
		// answered declares those parameters text (UnknownParameterTyper), as PostgreSQL
		// types them when the client declares nothing.
		dataset, params, err = nil, s.unknownParams(ctx, q), nil
	}
	if err != nil && defersRefusals(ctx) && refusesStatement(err) {
		// ADBC's DB-API (adbc_driver_manager's Cursor.execute) takes a NotSupportedError
		// from the prepare for a driver that cannot prepare and executes the statement
		// unprepared, where its Flight SQL driver reads bound parameters as a bulk ingestion
		// without a target table ("must set IngestTargetTable"); and a cursor remembers the
		// text of a statement whose prepare failed, skipping the prepare when it is executed
		// again. So for ADBC's driver the handle is valid, its schemas unknown, and the
		// refusal is answered, with its code and SQLSTATE, where the statement is planned
		// again: the binding's DoPut or the execution's GetFlightInfo.
		dataset, params, err = nil, nil, nil
	}
	if err != nil {
		return flightsql.ActionCreatePreparedStatementResult{}, err
	}
	if q.Nonce, err = newNonce(); err != nil {
		return flightsql.ActionCreatePreparedStatementResult{}, s.toStatus(err)
	}
	h, err := s.sign.seal(q)
	if err != nil {
		return flightsql.ActionCreatePreparedStatementResult{}, s.toStatus(err)
	}
	if infersParameterTypes(ctx) {
		params = nil
	}
	params = s.declaredParams(ctx, params)
	isUpdate := s.isUpdate(q)
	return flightsql.ActionCreatePreparedStatementResult{Handle: h, DatasetSchema: dataset, ParameterSchema: params, IsUpdate: &isUpdate}, nil
}

// unknownParams returns the parameter schema of q's statement with the parameters it leaves
// untyped declared text (UnknownParameterTyper), nil when the engine cannot declare them or
// the declared statement does not plan.
func (s *Server) unknownParams(ctx context.Context, q Query) *arrow.Schema {
	ut, ok := s.engine.(UnknownParameterTyper)
	if !ok {
		return nil
	}
	ctx = withSession(ctx, q.Analytical)
	sql, err := ut.TypeUnknownParameters(ctx, q.SQL)
	if err != nil {
		return nil
	}
	_, params, err := s.engine.Prepare(ctx, sql, nil)
	if err != nil {
		return nil
	}
	// Each may be NULL, as a PostgreSQL parameter may (setNull binds into a nullable field
	// only); the engine refuses a NULL where the statement needs a value.
	fields := params.Fields()
	for i := range fields {
		fields[i].Nullable = true
	}
	md := params.Metadata()
	return arrow.NewSchema(fields, &md)
}

// defersRefusals reports whether the caller is ADBC's Flight SQL driver (its gRPC user agent
// is "ADBC Flight SQL Driver <version>", set by the driver for every connection), whose
// statements' refusals CreatePreparedStatement answers at execution instead (createPrepared).
func defersRefusals(ctx context.Context) bool {
	md, _ := metadata.FromIncomingContext(ctx)
	ua := md.Get("user-agent")
	return len(ua) == 1 && strings.HasPrefix(ua[0], "ADBC Flight SQL Driver")
}

// refusesStatement reports whether err refuses the statement itself (INVALID_ARGUMENT, NOT_FOUND,
// UNIMPLEMENTED: planning it again answers the same), not the server's state or resources.
func refusesStatement(err error) bool {
	switch status.Code(err) {
	case codes.InvalidArgument, codes.NotFound, codes.Unimplemented:
		return true
	}
	return false
}

// infersParameterTypes reports whether the caller is arrow-go's own Flight SQL client (its
// gRPC user agent is grpc-go's, "grpc-go/…"; ADBC and the others prefix their own name), which
// must get no parameter schema: arrow-go's database/sql driver builds each parameter with a
// builder of the declared type and has none for timestamps, so a declared timestamp makes
// every time.Time parameter fail; without a schema it infers the types from the Go values
// (string → utf8, int64 → int64, time.Time → time64[ns] holding UnixNano, which the engine
// reads as an instant). Every other client gets the declared schema (the JDBC driver cannot
// bind without one).
func infersParameterTypes(ctx context.Context) bool {
	md, _ := metadata.FromIncomingContext(ctx)
	ua := md.Get("user-agent")
	return len(ua) == 1 && strings.HasPrefix(ua[0], "grpc-go/")
}

// ClosePreparedStatement forgets any binding of the handle. Closing is idempotent: closing an
// unknown or already closed handle succeeds.
func (s *Server) ClosePreparedStatement(_ context.Context, req flightsql.ActionClosePreparedStatementRequest) error {
	s.mu.Lock()
	s.forget(string(req.GetPreparedStatementHandle()))
	s.mu.Unlock()
	return nil
}

// forget drops the binding of handle h; s.mu must be held.
func (s *Server) forget(h string) {
	if b, ok := s.bindings[h]; ok {
		s.bindingBytes -= len(b)
		delete(s.bindings, h)
	}
}

// resolve opens a prepared handle and, when it carries no parameters, applies the last
// binding remembered for it.
func (s *Server) resolve(h []byte) (Query, error) {
	q, err := s.sign.open(h)
	if err != nil {
		return q, err
	}
	if len(q.Params) == 0 {
		s.mu.Lock()
		q.Params = s.bindings[string(h)]
		s.mu.Unlock()
	}
	return q, nil
}

// DoPutPreparedStatementQuery binds parameters: the stream must hold exactly one row of the
// statement's parameter schema (a query runs once per binding). The updated handle returned
// carries the parameters; the original handle is remembered with them too.
func (s *Server) DoPutPreparedStatementQuery(ctx context.Context, cmd flightsql.PreparedStatementQuery, rdr flight.MessageReader, _ flight.MetadataWriter) ([]byte, error) {
	h := cmd.GetPreparedStatementHandle()
	q, err := s.sign.open(h)
	if err != nil {
		return nil, s.toStatus(err)
	}
	buf, rows, schema, err := s.copyParams(rdr)
	if err != nil {
		return nil, err
	}
	// Planned with the binding, whose types declare the parameters the statement leaves open.
	_, paramSchema, err := s.prepare(ctx, &Query{SQL: q.SQL, Substrait: q.Substrait, Params: buf.Bytes()})
	if err != nil {
		return nil, err
	}
	if buf.Len() > MaxBindingBytes {
		return nil, errParamsTooLarge
	}
	if rows != 1 {
		return nil, status.Errorf(codes.InvalidArgument, "a query binds exactly one row of parameters, got %d", rows)
	}
	if schema.NumFields() != paramSchema.NumFields() {
		return nil, status.Errorf(codes.InvalidArgument, "the statement has %d parameters, got %d", paramSchema.NumFields(), schema.NumFields())
	}
	q.Params = buf.Bytes()
	nh, err := s.sign.seal(q)
	if err != nil {
		return nil, s.toStatus(err)
	}
	s.remember(h, q.Params)
	return nh, nil
}

// errParamStream refuses a DoPut parameter stream that does not decode.
var errParamStream = status.Error(codes.InvalidArgument, "parameter stream could not be read")

// copyParams reads a client's DoPut stream of parameters and writes its non-empty batches into
// an IPC stream of their schema, returning it with the rows read. arrow-go's reader decodes
// the client's bytes; a panic of its decoding is errParamStream, as any stream it cannot read
// or whose batches the writer refuses (CheckedPutStream refuses beforehand what would make it
// allocate beyond the message).
func (s *Server) copyParams(rdr flight.MessageReader) (buf *bytes.Buffer, rows int64, schema *arrow.Schema, err error) {
	defer func() {
		if r := recover(); r != nil {
			buf, rows, schema, err = nil, 0, nil, errParamStream
		}
	}()
	schema = rdr.Schema()
	if schema == nil {
		return nil, 0, nil, errParamStream
	}
	buf = &bytes.Buffer{}
	// The writer's scratch buffers (a string or list array's offsets shifted to start at
	// zero) come from Go's allocator, not s.alloc: arrow-go's writer does not release them
	// when a batch fails or panics part-way through its encoding (FuzzParameterBatch's
	// crasher 3d830bce404445fa), and nothing of them outlives this call.
	w := ipc.NewWriter(buf, ipc.WithSchema(schema), ipc.WithAllocator(memory.DefaultAllocator))
	for rdr.Next() {
		rec := rdr.RecordBatch()
		rows += rec.NumRows()
		if rec.NumRows() > 0 {
			if err := w.Write(rec); err != nil {
				// A batch the reader decoded but the writer refuses (its buffers disagree with
				// its schema): the client's stream is at fault.
				_ = w.Close()
				return nil, 0, nil, errParamStream
			}
		}
	}
	if err := rdr.Err(); err != nil {
		_ = w.Close()
		for _, known := range []error{errParamsTooLarge, errPutIdle} {
			if errors.Is(err, known) {
				return nil, 0, nil, known
			}
		}
		return nil, 0, nil, errParamStream
	}
	if err := w.Close(); err != nil {
		return nil, 0, nil, errParamStream
	}
	return buf, rows, schema, nil
}

func (s *Server) remember(h, params []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.bindings[string(h)]; ok {
		s.forget(string(h))
	} else {
		s.order = append(s.order, string(h))
	}
	s.bindings[string(h)] = params
	s.bindingBytes += len(params)
	for (len(s.bindings) > maxBindings || s.bindingBytes > maxBindingsBytes) && len(s.order) > 0 {
		s.forget(s.order[0])
		s.order = s.order[1:]
	}
	if len(s.order) > 2*maxBindings {
		kept := s.order[:0]
		for _, k := range s.order {
			if _, ok := s.bindings[k]; ok {
				kept = append(kept, k)
			}
		}
		s.order = kept
	}
}

// GetFlightInfoPreparedStatement plans the prepared statement with its binding.
func (s *Server) GetFlightInfoPreparedStatement(ctx context.Context, cmd flightsql.PreparedStatementQuery, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	q, err := s.resolve(cmd.GetPreparedStatementHandle())
	if err != nil {
		return nil, s.toStatus(err)
	}
	if s.isUpdate(q) {
		return s.updateInfo(ctx, q, desc)
	}
	return s.statementInfo(ctx, q, desc)
}

// GetSchemaPreparedStatement returns the prepared statement's dataset schema.
func (s *Server) GetSchemaPreparedStatement(ctx context.Context, cmd flightsql.PreparedStatementQuery, _ *flight.FlightDescriptor) (*flight.SchemaResult, error) {
	q, err := s.resolve(cmd.GetPreparedStatementHandle())
	if err != nil {
		return nil, s.toStatus(err)
	}
	dataset, _, err := s.prepare(ctx, &q)
	if err != nil {
		return nil, err
	}
	return &flight.SchemaResult{Schema: flight.SerializeSchema(dataset, s.alloc)}, nil
}

// DoGetPreparedStatement executes a prepared statement handle.
func (s *Server) DoGetPreparedStatement(ctx context.Context, cmd flightsql.PreparedStatementQuery) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	q, err := s.resolve(cmd.GetPreparedStatementHandle())
	if err != nil {
		return nil, nil, s.toStatus(err)
	}
	return s.stream(ctx, q)
}

// tableNames returns the engine's table names, sorted.
func (s *Server) tableNames() ([]string, map[string]*arrow.Schema) {
	tables := s.engine.Tables()
	names := make([]string, 0, len(tables))
	for n := range tables {
		names = append(names, n)
	}
	sort.Strings(names)
	return names, tables
}

// queryNonce returns the nonce of a FlightInfo's tickets: the call's query id
// (internal/querylog, 8 bytes as 16 hex digits), so that the query's DoGet calls log and trace
// under the id of the GetFlightInfo that planned it; 12 random bytes outside a logged call.
func queryNonce(ctx context.Context) ([]byte, error) {
	if id, err := hex.DecodeString(querylog.FromContext(ctx).ID()); err == nil && len(id) > 0 {
		return id, nil
	}
	return newNonce()
}

// TicketQuery implements querylog.Tickets: for a statement ticket, its query id (the hex of
// its nonce, shared by the FlightInfo's endpoints), statement kind, trace context (the
// GetFlightInfo call's span), the GetFlightInfo's start and the endpoint's position, also when
// it has expired; for a prepared-statement ticket (a
// handle), its statement kind only (a handle is executed many times, each a query of its
// own); an empty TicketInfo for a query ticket that cannot be opened. ok is false for other
// tickets. Safe for concurrent use.
func (s *Server) TicketQuery(ticket []byte) (querylog.TicketInfo, bool) {
	q, ok, err := s.cancelQuery(ticket)
	if !ok || err != nil {
		return querylog.TicketInfo{}, ok
	}
	info := querylog.TicketInfo{Statement: q.Statement, SQL: q.SQL}
	if q.Expires != 0 { // set in statement tickets only (sealTicket)
		info.ID, info.TraceParent = hex.EncodeToString(q.Nonce), q.Trace
		info.Endpoint, info.Endpoints = q.Endpoint, q.Endpoints
		if q.Planned != 0 {
			info.Planned = time.Unix(0, q.Planned)
		}
	}
	return info, true
}

// newNonce returns 12 random bytes for a handle or ticket.
func newNonce() ([]byte, error) {
	n := make([]byte, 12)
	_, err := rand.Read(n)
	return n, err
}
