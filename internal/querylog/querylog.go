// Package querylog gives every Flight RPC a query record and a server span, and leaves one
// structured log line for each call that is refused or fails: the operator's view of the
// queries clients did not get answered (issue 9, "every refused or failed query leaves one
// structured log line").
//
// The gRPC interceptors of ServerOptions wrap every call of the Flight service
// (arrow.flight.protocol.FlightService): they draw a query id, start the call's span (named
// after the gRPC method, with the query id as attribute flightsrv.query.id), put a *Record in
// the call's context for the layers below to fill in (the Flight SQL command is read from the
// call's first message here; the statement kind, the buckets read per store and the rows sent
// come from the engine and the Flight SQL layer through FromContext), and, when the call ends
// with any status but OK, write one log line with the logger's handler (key=value text or
// JSON, as the process configured it).
//
// A query has one id across its calls: a ticket carries the id of the GetFlightInfo call that
// issued it (the server's Tickets reads it back, with the statement kind sealed beside it), so
// the log lines and spans of a query's DoGet calls name the same query_id as its
// GetFlightInfo, and a DoGet refused before it runs (while the server drains) still names its
// statement kind. One refused query leaves one line even when the client sends it twice: ADBC's
// DB-API prepares every statement first and, when CreatePreparedStatement answers
// UNIMPLEMENTED (a construct the server does not support), takes it for a driver without
// prepared statements and executes the same statement again with GetFlightInfo, which is
// refused with the same code; that second refusal gets the first one's query_id and is logged
// at debug level as "query refused again".
//
// What a line holds (stable keys): query_id, trace_id (when the span is sampled), rpc,
// command, statement, code (the gRPC code's name), duration, rows, hot_buckets,
// archive_buckets, bytes_read, objects_read, hot_statements (Reads), message (the status message the client got, which the engine and the
// Flight SQL layer keep free of partition values, literals, paths and keys by contract; or,
// for a refusal whose message quotes the client's own text, such as an unknown column's name,
// the value-free form it carries: Refusal), sqlstate for a refusal that carries one, and
// for an internal failure error_class (the Go type of the innermost error) and sqlstate (when
// a database error is in the chain). It never holds SQL text, a partition value, a literal, a
// parameter value, an object path or key, or a raw database error: the reference logs
// planning details at debug level only (docs/pulpitum-v4.md §5.4, "Error privacy"), and so
// does this package — the raw error of an internal failure goes to a separate debug-level line
// with the same query_id.
//
// Spans join their callers' traces (trace.go): a call's span is the child of the W3C trace
// context in its metadata (traceparent), and a DoGet's of the GetFlightInfo span its ticket
// names (TicketInfo; the ticket is read before the span starts), so one query is one trace
// across its calls and replicas.
//
// This package imports gRPC, OpenTelemetry, arrow-go's Flight protocol types and
// internal/panics only.
package querylog

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	arrowflightsql "github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	pb "github.com/apache/arrow-go/v18/arrow/flight/gen/flight"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	otelcodes "go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/flightsrv/flightsrv/internal/panics"
)

// FlightService is the full name of the gRPC service whose calls get records, spans and log
// lines.
const FlightService = "arrow.flight.protocol.FlightService"

// Span attribute keys of the call span, besides rpc.system, rpc.service, rpc.method and
// rpc.grpc.status_code. The bucket counts use the names the reference proposes for them
// (docs/pulpitum-v4.md §6.1, "Proposed by Pulpitum, implemented by flightsrv"), and are always
// set with the query id and the rows; the counts of what the call read (flightsrv.read.*) and
// sent (bytes_sent) only when not zero (a GetFlightInfo reads and sends no rows: 10 fewer
// attributes to record and export).
const (
	AttrQueryID        = attribute.Key("flightsrv.query.id")
	AttrCommand        = attribute.Key("flightsrv.query.command")
	AttrStatement      = attribute.Key("flightsrv.query.statement")
	AttrRows           = attribute.Key("pulpitum.query.rows_returned")
	AttrHotBuckets     = attribute.Key("pulpitum.query.hot_buckets")
	AttrArchiveBuckets = attribute.Key("pulpitum.query.archive_buckets")
	// What the query read from the stores (Reads).
	AttrBytesRead     = attribute.Key("flightsrv.read.bytes")
	AttrObjectReads   = attribute.Key("flightsrv.read.objects")
	AttrHotStatements = attribute.Key("flightsrv.read.hot_statements")
	AttrHotRows       = attribute.Key("flightsrv.read.hot_rows")
	AttrArchiveRows   = attribute.Key("flightsrv.read.archive_rows")
	// Parquet row groups and pages read and pruned by statistics (Reads).
	AttrRowGroups       = attribute.Key("flightsrv.read.row_groups")
	AttrRowGroupsPruned = attribute.Key("flightsrv.read.row_groups_pruned")
	AttrPages           = attribute.Key("flightsrv.read.pages")
	AttrPagesPruned     = attribute.Key("flightsrv.read.pages_pruned")
	// What the call sent: Flight data bytes, and the seconds from the call's start to its
	// first record batch written.
	AttrBytesSent  = attribute.Key("flightsrv.query.bytes_sent")
	AttrFirstBatch = attribute.Key("flightsrv.query.first_batch")
)

// callSpanAttrs is the most attributes a call span carries (end).
const callSpanAttrs = 21

// Record is what one Flight call learns about its query while it runs. The interceptors
// create it; the layers below fill it in through FromContext. Every method is safe for
// concurrent use and does nothing on a nil *Record (a call outside the interceptors).
type Record struct {
	start      time.Time
	rows       atomic.Int64
	bytes      atomic.Int64 // Flight data bytes sent
	firstBatch atomic.Int64 // ns from start to the first batch written; 0: none yet
	queued     atomic.Int64 // ns waited for admission
	span       trace.Span

	mu        sync.Mutex
	id        string
	command   string
	statement string
	buckets   func() (hot, archive int)
	reads     func() Reads
	// stmt identifies the statement text or plan of a CreatePreparedStatement,
	// CreatePreparedSubstraitPlan or statement GetFlightInfo call, with the client's address
	// (a SHA-256, kept in memory only): the pairing of ADBC's execution after a refused
	// prepare (refusals).
	stmt    [sha256.Size]byte
	hasStmt bool
	user    string
	client  string // the peer's address
	// sql is the statement's SQL text, kept only when the server logs statements
	// (Config.Statements).
	sql string
	// ticketTrace is the traceparent a DoGet's ticket carries ("" if none): the span of the
	// GetFlightInfo call that planned the query, which parents the DoGet's span.
	ticketTrace string
	// planned is the start of the GetFlightInfo call that planned a DoGet's query (its
	// ticket's TicketInfo.Planned; zero if none), and endpoint and endpoints the ticket's
	// position among the query's endpoints (logical.go).
	planned             time.Time
	endpoint, endpoints int
}

type recordKey struct{}

// NewContext returns ctx carrying r.
func NewContext(ctx context.Context, r *Record) context.Context {
	return context.WithValue(ctx, recordKey{}, r)
}

// FromContext returns the call's record, or nil outside a Flight call.
func FromContext(ctx context.Context) *Record {
	r, _ := ctx.Value(recordKey{}).(*Record)
	return r
}

// ID returns the query id: 16 lowercase hex digits, drawn at random when the call starts, or
// the id a DoGet's ticket carries (the GetFlightInfo call's that issued it); "" on a nil
// *Record.
func (r *Record) ID() string {
	if r == nil {
		return ""
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.id
}

// adoptID makes id the call's query id (its span takes it when the call ends).
func (r *Record) adoptID(id string) {
	r.mu.Lock()
	r.id = id
	r.mu.Unlock()
}

// Statement returns the statement kind recorded so far ("" if none, or on a nil *Record).
func (r *Record) Statement() string {
	if r == nil {
		return ""
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.statement
}

// SetStatement records the statement kind (SELECT, EXPLAIN, SUBSTRAIT, or the pushed-down
// aggregate's operation such as SELECT COUNT): a fixed word, never SQL text.
func (r *Record) SetStatement(kind string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	r.statement = kind
	r.mu.Unlock()
}

// setCommand records the Flight SQL command (CommandStatementQuery, TicketStatementQuery, an
// action type…).
func (r *Record) setCommand(cmd string) {
	r.mu.Lock()
	if r.command == "" {
		r.command = cmd
	}
	r.mu.Unlock()
}

// AddRows adds n rows sent to the client.
func (r *Record) AddRows(n int64) {
	if r != nil {
		r.rows.Add(n)
	}
}

// SetBuckets registers how to count the buckets the query read from each store (hot store
// and archive); f is called once, when the call ends, and must be safe to call then.
func (r *Record) SetBuckets(f func() (hot, archive int)) {
	if r == nil {
		return
	}
	r.mu.Lock()
	r.buckets = f
	r.mu.Unlock()
}

// Reads is what a query read from the stores (routing.ReadStats, as the engine counts it):
// bytes and objects fetched from object storage, statements sent to the hot store, and the
// records read from each tier (0 for a bucket a store answered without rows).
type Reads struct {
	BytesRead, ObjectReads, HotStatements, HotRows, ArchiveRows int64
	// Parquet row groups and pages planned for decoding and pruned by statistics.
	RowGroupsRead, RowGroupsPruned, PagesRead, PagesPruned int64
}

// SetReads registers how to read what the query read from the stores; f is called once, when
// the call ends, and must be safe to call then.
func (r *Record) SetReads(f func() Reads) {
	if r == nil {
		return
	}
	r.mu.Lock()
	r.reads = f
	r.mu.Unlock()
}

// readCounts returns what the query read (zero before the engine registered its count).
func (r *Record) readCounts() Reads {
	r.mu.Lock()
	f := r.reads
	r.mu.Unlock()
	if f == nil {
		return Reads{}
	}
	return f()
}

// Buckets returns how many buckets the query read so far from the hot store and from the
// archive (0, 0 before the engine registered its count with SetBuckets). PollFlightInfo reads
// it for a running query's progress.
func (r *Record) Buckets() (hot, archive int) {
	if r == nil {
		return 0, 0
	}
	r.mu.Lock()
	f := r.buckets
	r.mu.Unlock()
	if f == nil {
		return 0, 0
	}
	return f()
}

// snapshot returns the fields filled in by the layers below.
func (r *Record) snapshot() (id, command, statement string, hot, archive int) {
	r.mu.Lock()
	id, command, statement, f := r.id, r.command, r.statement, r.buckets
	r.mu.Unlock()
	if f != nil {
		hot, archive = f()
	}
	return id, command, statement, hot, archive
}

// newRecord draws a query id.
func newRecord() *Record {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return &Record{id: hex.EncodeToString(b[:]), start: time.Now()}
}

// Tickets reads what a DoGet ticket says about its query, for the call's record: the server
// that seals tickets implements it (flightsql.Server). Implementations must be safe for
// concurrent use and must not block.
type Tickets interface {
	// TicketQuery returns what is sealed into a query's ticket (any field may be "": a ticket
	// without it, or one that cannot be opened); ok is false for a ticket that is no query's
	// (a metadata command's).
	TicketQuery(ticket []byte) (q TicketInfo, ok bool)
}

// TicketInfo is what a query's ticket says about its query: the query id and statement kind
// of the GetFlightInfo call that issued it, and that call's W3C trace context (its
// traceparent header value: Record.TraceParent), under which the DoGet's span starts, so that
// every DoGet of one query, on any replica, is part of the query's one trace.
type TicketInfo struct {
	ID, Statement, TraceParent string
	// Planned is the start of the GetFlightInfo call that planned the query (Record.Start,
	// as the planning replica's clock read it; zero when the ticket carries none), and
	// Endpoint and Endpoints the ticket's position among the query's endpoints (0-based) and
	// their number: a DoGet measures its query's time to first batch and latency from
	// Planned, and the DoGet of the last endpoint ends the logical query (logical.go).
	Planned             time.Time
	Endpoint, Endpoints int
	// SQL is the ticket's SQL text ("" for a Substrait plan): kept only when the server logs
	// statements (Config.Statements).
	SQL string
}

// StatementUnknown is the statement kind of a query ticket that names none (it cannot be
// opened, or predates the field).
const StatementUnknown = "UNKNOWN"

// StatementIngest is the statement kind of a bulk ingest (CommandStatementIngest), which has
// no SQL text.
const StatementIngest = "INGEST"

// Config configures the interceptors of ServerOptions.
type Config struct {
	// Logger receives the call's log lines (nil: slog.Default()).
	Logger *slog.Logger
	// Tickets (nil: none) reads the query id, statement kind, trace context and SQL text of
	// DoGet tickets.
	Tickets Tickets
	// Statements puts the SQL text of queries into their finished and failed log lines and
	// into the Registry (serve --log-statements). SQL holds literal values (partition values,
	// parameters), so it is off by default, and the text is never a metric label or a span
	// attribute.
	Statements bool
	// Registry, when set, lists the running and recent query calls (flightsrv.queries) and
	// cancels them.
	Registry *Registry
}

// ServerOptions returns the unary and stream interceptors that give each call of the Flight
// service its record, span and metrics (metrics.go, from the global meter provider as it is
// now), log the calls that end with a status other than OK, and each DoGet of a query that
// ends with OK as "query finished" at info level. Spans come from the global tracer provider
// at call time. Put them first among the server's interceptors, so that refusals of later
// interceptors (authentication, admission) are logged too. Calls of other services (gRPC
// health checking) pass through untouched.
func ServerOptions(cfg Config) []grpc.ServerOption {
	l := &callLogger{log: cfg.Logger, tickets: cfg.Tickets, statements: cfg.Statements, registry: cfg.Registry,
		refusals: refusals{byStmt: map[[sha256.Size]byte]refusal{}}, metrics: newCallMetrics()}
	return []grpc.ServerOption{grpc.ChainUnaryInterceptor(l.unary), grpc.ChainStreamInterceptor(l.stream)}
}

type callLogger struct {
	log        *slog.Logger
	tickets    Tickets
	statements bool
	registry   *Registry // nil: none
	refusals   refusals
	metrics    *callMetrics // nil: none (metrics.go)
	logical    logicalQueries
}

// Pairing of a refused prepare with the same client's execution of the same statement
// (ADBC's DB-API fallback, see the package doc): the execution must follow within
// followUpWindow; at most maxRefusals refusals are remembered (the oldest are forgotten).
const (
	followUpWindow = 30 * time.Second
	maxRefusals    = 1024
)

// refusals remembers, per statement and client (Record.stmt), the query id of a
// CreatePreparedStatement or CreatePreparedSubstraitPlan refused as UNIMPLEMENTED, for the
// GetFlightInfo that ADBC sends next. Safe for concurrent use.
type refusals struct {
	mu     sync.Mutex
	byStmt map[[sha256.Size]byte]refusal
}

type refusal struct {
	id string
	at time.Time
}

// put remembers a refused prepare's query id.
func (f *refusals) put(stmt [sha256.Size]byte, id string, now time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for k, r := range f.byStmt {
		if now.Sub(r.at) > followUpWindow {
			delete(f.byStmt, k)
		}
	}
	for len(f.byStmt) >= maxRefusals {
		var oldest [sha256.Size]byte
		first := true
		for k, r := range f.byStmt {
			if first || r.at.Before(f.byStmt[oldest].at) {
				oldest, first = k, false
			}
		}
		delete(f.byStmt, oldest)
	}
	f.byStmt[stmt] = refusal{id: id, at: now}
}

// take returns, and forgets, the query id of a refused prepare of the same statement by the
// same client within followUpWindow.
func (f *refusals) take(stmt [sha256.Size]byte, now time.Time) (string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r, ok := f.byStmt[stmt]
	if !ok {
		return "", false
	}
	delete(f.byStmt, stmt)
	return r.id, now.Sub(r.at) <= followUpWindow
}

func (l *callLogger) logger() *slog.Logger {
	if l.log != nil {
		return l.log
	}
	return slog.Default()
}

// peerAddr returns the address of the call's client ("" when unknown).
func peerAddr(ctx context.Context) string {
	if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
		return p.Addr.String()
	}
	return ""
}

// flightMethod returns the method name of a call of the Flight service (DoGet…); ok is false
// for other services' calls.
func flightMethod(method string) (rpc string, ok bool) {
	svc, rpc, ok := strings.Cut(strings.TrimPrefix(method, "/"), "/")
	return rpc, ok && svc == FlightService
}

// begin starts the span of a call of method rpc with record rec and returns the context
// carrying both. The span's parent is the W3C trace context the call carries (traceParent):
// the client's traceparent metadata, or, for a DoGet, the GetFlightInfo span its ticket names.
func (l *callLogger) begin(ctx context.Context, rpc string, rec *Record) (context.Context, trace.Span) {
	parent, links := traceParent(ctx, rec.ticketTrace)
	// Its attributes are set when it ends, in one call (end).
	ctx, span := otel.Tracer("github.com/flightsrv/flightsrv/internal/querylog").Start(trace.ContextWithRemoteSpanContext(ctx, parent), FlightService+"/"+rpc,
		trace.WithSpanKind(trace.SpanKindServer), trace.WithLinks(links...))
	rec.mu.Lock()
	rec.span = span
	rec.mu.Unlock()
	return NewContext(ctx, rec), span
}

func (l *callLogger) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	rpc, ok := flightMethod(info.FullMethod)
	if !ok {
		return handler(ctx, req)
	}
	rec := newRecord()
	rec.client = peerAddr(ctx)
	ctx, span := l.begin(ctx, rpc, rec)
	l.observe(ctx, rec, req)
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	l.registry.start(rec, rpc, cancel)
	resp, err := handler(ctx, req)
	err = cancelledBy(ctx, err)
	l.end(ctx, rec, span, info.FullMethod, err)
	return resp, err
}

// cancelledBy returns errCancelQuery for a call that failed after Registry.Cancel cancelled
// it, else err.
func cancelledBy(ctx context.Context, err error) error {
	if err != nil && context.Cause(ctx) == errCancelQuery {
		return errCancelQuery
	}
	return err
}

func (l *callLogger) stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	rpc, ok := flightMethod(info.FullMethod)
	if !ok {
		return handler(srv, ss)
	}
	rec := newRecord()
	rec.client = peerAddr(ss.Context())
	rs := &recordStream{ServerStream: ss, rec: rec, l: l}
	if rpc == "DoGet" {
		// The ticket is read before the span starts: the trace context it carries is the
		// span's parent (one trace per query across its DoGets and replicas). The handler's
		// RecvMsg gets it (or the error of reading it) from rs.
		t := new(flight.Ticket)
		rs.first, rs.firstErr, rs.seen = t, ss.RecvMsg(t), true
		if rs.firstErr == nil {
			rs.firstErr = l.observeAhead(ss.Context(), rec, t)
		}
	}
	ctx, span := l.begin(ss.Context(), rpc, rec)
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	l.registry.start(rec, rpc, cancel)
	rs.ctx = ctx
	err := cancelledBy(ctx, handler(srv, rs))
	l.end(ctx, rec, span, info.FullMethod, err)
	return err
}

// observeAhead is observe of a message read ahead, before the server's recovering
// interceptors run: a panic there (internal/panics: logged and counted) is returned as the
// call's INTERNAL error, which the handler's first RecvMsg gets.
func (l *callLogger) observeAhead(ctx context.Context, rec *Record, msg any) (err error) {
	defer panics.Recover("DoGet ticket", &err)
	l.observe(ctx, rec, msg)
	return nil
}

// recordStream carries the call's context and reads the command from the first message
// (or hands on the first message read ahead: first, firstErr).
type recordStream struct {
	grpc.ServerStream
	ctx      context.Context
	rec      *Record
	l        *callLogger
	seen     bool
	first    proto.Message // read ahead, given to the first RecvMsg (nil: none or given)
	firstErr error
}

func (s *recordStream) Context() context.Context { return s.ctx }

func (s *recordStream) RecvMsg(m any) error {
	if s.first != nil || s.firstErr != nil {
		first, err := s.first, s.firstErr
		s.first, s.firstErr = nil, nil
		if err != nil {
			return err
		}
		pm, ok := m.(proto.Message)
		if !ok {
			return status.Error(codes.Internal, "unexpected message type")
		}
		proto.Reset(pm)
		proto.Merge(pm, first)
		return nil
	}
	err := s.ServerStream.RecvMsg(m)
	if err == nil && !s.seen {
		s.seen = true
		s.l.observe(s.ctx, s.rec, m)
	}
	return err
}

// observe records what a call's request message says: the Flight SQL command (the type of
// the Any in a descriptor's cmd or a ticket, its last name, e.g. CommandStatementQuery, or an
// action's type); for a query's ticket, the query id and statement kind it carries (through
// l.tickets); for a statement's GetFlightInfo or prepare, the statement's identity with the
// client's address (Record.stmt).
func (l *callLogger) observe(ctx context.Context, r *Record, msg any) {
	var b []byte
	switch m := msg.(type) {
	case *flight.FlightDescriptor:
		b = m.GetCmd()
	case *flight.Ticket:
		b = m.GetTicket()
		if l.tickets != nil {
			if q, ok := l.tickets.TicketQuery(b); ok {
				if q.ID != "" {
					r.adoptID(q.ID)
				}
				stmt := q.Statement
				if stmt == "" {
					stmt = StatementUnknown
				}
				r.SetStatement(stmt)
				r.mu.Lock()
				r.ticketTrace = q.TraceParent
				r.planned, r.endpoint, r.endpoints = q.Planned, q.Endpoint, q.Endpoints
				if l.statements {
					r.sql = q.SQL
				}
				r.mu.Unlock()
			}
		}
	case *flight.FlightData:
		b = m.GetFlightDescriptor().GetCmd()
	case *flight.Action:
		if KnownAction(m.GetType()) {
			r.setCommand(m.GetType())
		} else {
			// The client's text, which may hold anything (SQL, a password, NUL bytes, 10 KB):
			// a fixed word and its length only.
			r.setCommand(fmt.Sprintf("UnknownAction(%d bytes)", len(m.GetType())))
		}
		b = m.GetBody()
	}
	var a anypb.Any
	if len(b) == 0 || proto.Unmarshal(b, &a) != nil || a.GetTypeUrl() == "" {
		return
	}
	name := string(a.MessageName().Name())
	if name == "" || len(name) > 64 {
		return
	}
	if _, ok := msg.(*flight.Action); !ok {
		r.setCommand(name)
	}
	if kind, text, ok := statementOf(&a); ok {
		h := sha256.New()
		if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
			h.Write([]byte(p.Addr.String()))
		}
		h.Write([]byte{0})
		h.Write([]byte(kind))
		h.Write([]byte{0})
		h.Write(text)
		r.mu.Lock()
		h.Sum(r.stmt[:0])
		r.hasStmt = true
		if l.statements && kind == "sql" {
			r.sql = string(text)
		}
		r.mu.Unlock()
	}
}

// statementOf returns the kind ("sql" or "substrait") and the text or plan bytes of a
// statement's GetFlightInfo command, an update's DoPut command or a prepare action; ok is
// false for any other message.
func statementOf(a *anypb.Any) (kind string, text []byte, ok bool) {
	switch {
	case a.MessageIs((*pb.CommandStatementQuery)(nil)):
		var c pb.CommandStatementQuery
		if a.UnmarshalTo(&c) == nil {
			return "sql", []byte(c.GetQuery()), true
		}
	case a.MessageIs((*pb.CommandStatementUpdate)(nil)):
		var c pb.CommandStatementUpdate
		if a.UnmarshalTo(&c) == nil {
			return "sql", []byte(c.GetQuery()), true
		}
	case a.MessageIs((*pb.ActionCreatePreparedStatementRequest)(nil)):
		var c pb.ActionCreatePreparedStatementRequest
		if a.UnmarshalTo(&c) == nil {
			return "sql", []byte(c.GetQuery()), true
		}
	case a.MessageIs((*pb.CommandStatementSubstraitPlan)(nil)):
		var c pb.CommandStatementSubstraitPlan
		if a.UnmarshalTo(&c) == nil {
			return "substrait", c.GetPlan().GetPlan(), true
		}
	case a.MessageIs((*pb.ActionCreatePreparedSubstraitPlanRequest)(nil)):
		var c pb.ActionCreatePreparedSubstraitPlanRequest
		if a.UnmarshalTo(&c) == nil {
			return "substrait", c.GetPlan().GetPlan(), true
		}
	}
	return "", nil, false
}

// followUp pairs a refused statement call with ADBC's DB-API fallback (package doc): a
// prepare refused as UNIMPLEMENTED is remembered; a statement's GetFlightInfo by the same
// client, refused as UNIMPLEMENTED within followUpWindow, takes the prepare's query id and
// reports again = true (its line goes to debug level).
func (l *callLogger) followUp(rec *Record, command string, code codes.Code) (again bool) {
	rec.mu.Lock()
	stmt, ok := rec.stmt, rec.hasStmt
	rec.mu.Unlock()
	if !ok || code != codes.Unimplemented {
		return false
	}
	now := time.Now()
	switch command {
	case "CreatePreparedStatement", "CreatePreparedSubstraitPlan":
		l.refusals.put(stmt, rec.ID(), now)
	case "CommandStatementQuery", "CommandStatementSubstraitPlan":
		if id, ok := l.refusals.take(stmt, now); ok {
			rec.adoptID(id)
			return true
		}
	}
	return false
}

// end finishes a call: the span's closing attributes and status, and the log line when err
// is not nil.
func (l *callLogger) end(ctx context.Context, rec *Record, span trace.Span, method string, err error) {
	st := status.Convert(err)
	if err != nil {
		// Context errors that reached here unconverted are what gRPC will send.
		switch {
		case errors.Is(err, context.Canceled):
			st = status.New(codes.Canceled, "query was cancelled")
		case errors.Is(err, context.DeadlineExceeded):
			st = status.New(codes.DeadlineExceeded, "query deadline exceeded")
		case st.Code() == codes.Unavailable && st.Message() == grpcConnClosing:
			// The call's connection ended under it (a client killed or gone, or its connection
			// closed by the server: a stalled reader, a drain): nobody waits for the answer, and
			// gRPC cancels the call's context with its connection (trial 32 m6: logged as a
			// server failure).
			st = status.New(codes.Canceled, "the call's connection closed")
		}
	}
	again := false
	if err != nil {
		_, command, _, _, _ := rec.snapshot()
		again = l.followUp(rec, command, st.Code())
	}
	id, command, statement, hot, archive := rec.snapshot()
	rows := rec.rows.Load()
	reads := rec.readCounts()
	_, rpcName, _ := strings.Cut(strings.TrimPrefix(method, "/"), "/")
	now := time.Now()
	duration := now.Sub(rec.start)
	firstBatch, hasFirst := rec.FirstBatch()
	l.metrics.record(ctx, rpcName, command, statement, st.Code().String(), duration, rows, rec.bytes.Load(), hot, archive, reads)
	l.endLogical(ctx, rec, rpcName, statement, st.Code(), now)
	if span.IsRecording() {
		// Every attribute in one call: the span's attribute list is allocated once, at its
		// size (it was allocated three times when the method's were set at the start, the
		// query id a DoGet adopts from its ticket next, and the rest here).
		attrs := append(make([]attribute.KeyValue, 0, callSpanAttrs), attribute.String("rpc.system", "grpc"),
			attribute.String("rpc.service", FlightService), attribute.String("rpc.method", rpcName), AttrQueryID.String(id),
			attribute.Int("rpc.grpc.status_code", int(st.Code())), AttrRows.Int64(rows),
			AttrHotBuckets.Int(hot), AttrArchiveBuckets.Int(archive))
		for _, c := range [...]struct {
			k attribute.Key
			n int64
		}{{AttrBytesRead, reads.BytesRead}, {AttrObjectReads, reads.ObjectReads}, {AttrHotStatements, reads.HotStatements},
			{AttrHotRows, reads.HotRows}, {AttrArchiveRows, reads.ArchiveRows}, {AttrRowGroups, reads.RowGroupsRead},
			{AttrRowGroupsPruned, reads.RowGroupsPruned}, {AttrPages, reads.PagesRead}, {AttrPagesPruned, reads.PagesPruned},
			{AttrBytesSent, rec.bytes.Load()}} {
			if c.n != 0 {
				attrs = append(attrs, c.k.Int64(c.n))
			}
		}
		if command != "" {
			attrs = append(attrs, AttrCommand.String(command))
		}
		if statement != "" {
			attrs = append(attrs, AttrStatement.String(statement))
		}
		if hasFirst {
			attrs = append(attrs, AttrFirstBatch.Float64(firstBatch.Seconds()))
		}
		span.SetAttributes(attrs...)
	}
	if err != nil {
		span.SetStatus(otelcodes.Error, st.Code().String())
	}
	span.End()
	l.registry.end(rec, st.Code(), now)
	if err == nil && !(rpcName == "DoGet" && statement != "" || rpcName == "DoPut" && (statement == "INSERT" || statement == StatementIngest)) {
		return
	}
	attrs := []slog.Attr{
		slog.String("query_id", id),
		slog.String("rpc", rpcName),
		slog.String("command", command),
		slog.String("statement", statement),
		slog.String("user", rec.User()),
		slog.String("code", st.Code().String()),
		slog.Duration("duration", duration),
		slog.Int64("rows", rows),
		slog.Int64("bytes", rec.bytes.Load()),
	}
	if hasFirst {
		attrs = append(attrs, slog.Duration("first_batch", firstBatch))
	}
	if q := time.Duration(rec.queued.Load()); q > 0 {
		attrs = append(attrs, slog.Duration("queued", q))
	}
	attrs = append(attrs,
		slog.Int("hot_buckets", hot),
		slog.Int("archive_buckets", archive),
		slog.Int64("bytes_read", reads.BytesRead),
		slog.Int64("objects_read", reads.ObjectReads),
		slog.Int64("hot_statements", reads.HotStatements))
	if err != nil {
		attrs = append(attrs, slog.String("message", logMessage(st)))
	}
	if sc := span.SpanContext(); sc.HasTraceID() {
		attrs = append(attrs, slog.String("trace_id", sc.TraceID().String()))
	}
	rec.mu.Lock()
	if rec.sql != "" {
		attrs = append(attrs, slog.String("sql", rec.sql))
	}
	rec.mu.Unlock()
	if err == nil {
		// One line per finished query execution (issue 20): a multi-endpoint query leaves
		// one per endpoint's DoGet, each with the query's id.
		l.logger().LogAttrs(ctx, slog.LevelInfo, "query finished", attrs...)
		return
	}
	level, msg := classify(st.Code())
	if again {
		level, msg = slog.LevelDebug, "query refused again"
	}
	var ie *InternalError
	if errors.As(err, &ie) {
		attrs = append(attrs, slog.String("error_class", errorClass(ie.Cause)))
		if code := sqlState(ie.Cause); code != "" {
			attrs = append(attrs, slog.String("sqlstate", code))
		}
	} else if code := refusalDetail(st, detailSQLState); code != "" {
		attrs = append(attrs, slog.String("sqlstate", code))
	}
	log := l.logger()
	log.LogAttrs(ctx, level, msg, attrs...)
	if ie != nil {
		log.LogAttrs(ctx, slog.LevelDebug, "query error detail", slog.String("query_id", id), slog.String("err", ie.Cause.Error()))
	}
}

// grpcConnClosing is gRPC's message (UNAVAILABLE) for a send or receive on a connection that
// is closing.
const grpcConnClosing = "transport is closing"

// classify returns the level and message of a call's log line: "query failed" (error) when the
// server could not answer, "query refused" (warning) when it would not, "query cancelled"
// (info) when the client or a deadline ended it.
func classify(c codes.Code) (slog.Level, string) {
	switch c {
	case codes.Canceled:
		return slog.LevelInfo, "query cancelled"
	case codes.Internal, codes.Unknown, codes.DataLoss:
		return slog.LevelError, "query failed"
	case codes.Unavailable, codes.DeadlineExceeded, codes.Aborted:
		return slog.LevelWarn, "query failed"
	}
	return slog.LevelWarn, "query refused"
}

// InternalError is the error a Flight handler returns for a failure the client must not see
// the details of: gRPC sends Status (an INTERNAL status with a fixed message), and the
// interceptors log the class of Cause (never its text, except at debug level).
type InternalError struct {
	Status *status.Status
	Cause  error
}

// Error returns the status's message (the cause stays private).
func (e *InternalError) Error() string { return e.Status.Err().Error() }

// GRPCStatus is what gRPC sends.
func (e *InternalError) GRPCStatus() *status.Status { return e.Status }

// Unwrap returns the cause.
func (e *InternalError) Unwrap() error { return e.Cause }

// errorClass names the Go type of the innermost error of err's chain (through Unwrap, and the
// first error of a join): a classification that holds no value of the error's text.
// ErrorClass returns the Go type of err's innermost wrapped error (the first of a joined
// list), what a log line may say of an error whose text can hold keys, paths or values.
func ErrorClass(err error) string { return errorClass(err) }

func errorClass(err error) string {
	for {
		var next error
		switch u := err.(type) {
		case interface{ Unwrap() error }:
			next = u.Unwrap()
		case interface{ Unwrap() []error }:
			if errs := u.Unwrap(); len(errs) > 0 {
				next = errs[0]
			}
		}
		if next == nil {
			return fmt.Sprintf("%T", err)
		}
		err = next
	}
}

// Refusal returns a status error for a query refused with code and msg, the message the
// client gets, which may hold the client's own text (an unknown column's name, the token of
// a syntax error). logMsg is what the call's log line says instead ("" when msg holds none of
// the client's text), and sqlstate the PostgreSQL SQLSTATE of the condition ("" when none):
// both travel in the status as an errdetails.ErrorInfo (domain "flightsrv", reason
// QUERY_REFUSED, metadata log_message and sqlstate), which the client may read too.
func Refusal(code codes.Code, msg, logMsg, sqlstate string) error {
	st := status.New(code, msg)
	if logMsg == "" && sqlstate == "" {
		return st.Err()
	}
	md := map[string]string{}
	if logMsg != "" {
		md[detailLogMessage] = logMsg
	}
	if sqlstate != "" {
		md[detailSQLState] = sqlstate
	}
	if withInfo, err := st.WithDetails(&errdetails.ErrorInfo{Reason: "QUERY_REFUSED", Domain: detailDomain, Metadata: md}); err == nil {
		st = withInfo
	} else if logMsg != "" {
		st = status.New(code, logMsg) // cannot happen (ErrorInfo marshals); never log msg
	}
	return st.Err()
}

// The ErrorInfo of Refusal.
const (
	detailDomain     = "flightsrv"
	detailLogMessage = "log_message"
	detailSQLState   = "sqlstate"
)

// refusalDetail returns the metadata key of st's Refusal ErrorInfo, or "".
func refusalDetail(st *status.Status, key string) string {
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok && info.GetDomain() == detailDomain {
			return info.GetMetadata()[key]
		}
	}
	return ""
}

// logMessage is the message a call's log line holds: the Refusal's log message when it has
// one, else the status message the client got.
func logMessage(st *status.Status) string {
	if m := refusalDetail(st, detailLogMessage); m != "" {
		return m
	}
	return st.Message()
}

// sqlState returns the SQLSTATE of the first database error in err's chain (pgconn.PgError
// and others with a SQLState method), or "".
func sqlState(err error) string {
	var se interface{ SQLState() string }
	if errors.As(err, &se) {
		return se.SQLState()
	}
	return ""
}

// knownActions are the action types of Flight and Flight SQL the server serves.
var knownActions = map[string]bool{
	flight.CancelFlightInfoActionType:                    true,
	flight.RenewFlightEndpointActionType:                 true,
	flight.SetSessionOptionsActionType:                   true,
	flight.GetSessionOptionsActionType:                   true,
	flight.CloseSessionActionType:                        true,
	arrowflightsql.BeginSavepointActionType:              true,
	arrowflightsql.BeginTransactionActionType:            true,
	arrowflightsql.CancelQueryActionType:                 true,
	arrowflightsql.CreatePreparedStatementActionType:     true,
	arrowflightsql.CreatePreparedSubstraitPlanActionType: true,
	arrowflightsql.ClosePreparedStatementActionType:      true,
	arrowflightsql.EndTransactionActionType:              true,
	arrowflightsql.EndSavepointActionType:                true,
}

// KnownAction reports whether name is an action type of Flight or Flight SQL that the server
// serves; the query record and log line name any other only as a fixed word and its length.
func KnownAction(name string) bool { return knownActions[name] }
