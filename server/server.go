// Package server assembles a running flightsrv process: routed tables over a hot store and an
// archive reader, the query engine, the Flight SQL service on a gRPC listener, and optionally
// the Prometheus /metrics endpoint, the Go profiling endpoint and the process's soft memory
// limit. The binary and the end-to-end tests use the same assembly.
package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	arrowflightsql "github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/jackc/pgx/v5/pgxpool"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/flightsrv/flightsrv/flightsql"
	"github.com/flightsrv/flightsrv/internal/auth"
	"github.com/flightsrv/flightsrv/internal/panics"
	"github.com/flightsrv/flightsrv/internal/querylog"
	"github.com/flightsrv/flightsrv/internal/ratelog"
	"github.com/flightsrv/flightsrv/internal/setting"
	"github.com/flightsrv/flightsrv/query"
	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/scan/shred"
)

// Config configures a server. Hot and Archive are owned by the caller.
type Config struct {
	// Listen is the gRPC listen address host:port (port 0 picks a free one).
	Listen string
	// Tables are the routed tables served.
	Tables []routing.TableDef
	// Hot is the hot store all tables share.
	Hot routing.HotStore
	// Archive reads published archives; nil when nothing is archived.
	Archive routing.ArchiveReader
	// Pushdown enables aggregate pushdown.
	Pushdown bool
	// ShredCache, when set, is the shredded-column cache of archived JSON fields
	// (scan/shred; --shred-cache): nil, the default, reads every field from its documents.
	ShredCache *shred.Cache
	// Fanout bounds concurrent bucket reads per query (default routing.DefaultFanout).
	Fanout int
	// MaxBuckets bounds the buckets one query may span (default query.DefaultMaxBuckets;
	// negative: no bound).
	MaxBuckets int
	// MaxPartitions bounds the partitions one routed read may list (IN, = ANY; default
	// substrait.DefaultMaxPartitions).
	MaxPartitions int
	// Analytical makes the analytical mode (reads without a partition pin) every session's
	// default (flightsql.OptionAnalytical); AnalyticalMaxPartitions bounds the partitions one
	// such read may discover (default query.DefaultAnalyticalMaxPartitions; negative: no bound).
	Analytical              bool
	AnalyticalMaxPartitions int
	// QueryMemory bounds the bytes one query may hold (default query.DefaultQueryMemory;
	// negative: no bound).
	QueryMemory int64
	// TotalQueryMemory bounds the bytes all queries may hold together (query.Options.TotalQueryMemory;
	// default query.DefaultTotalMemory; negative: no bound).
	TotalQueryMemory int64
	// QueryMaxRows bounds the rows one query's fragments may produce (query.Options.QueryMaxRows;
	// default query.DefaultMaxRows; negative: no bound).
	QueryMaxRows int64
	// QueryCPU bounds the CPU time one query's fragments and coordinator may use in all
	// (query.Options.QueryCPU; default query.DefaultQueryCPU; negative: no bound).
	QueryCPU time.Duration
	// RouteCacheEntries bounds the archived-route cache (default routing.DefaultRouteCacheEntries;
	// negative disables it).
	RouteCacheEntries int
	// DamageMemory is how long reads of an archived bucket found missing or damaged answer
	// DATA_LOSS at once before the archive is read again (routing.Options.DamageMemory; 0:
	// routing.DamageMemory).
	DamageMemory time.Duration
	// Keyring signs statement handles and tickets (and, when Auth is set, its bearer tokens
	// should come from the same keyring file): replicas sharing it serve each other's tickets.
	// Nil means a random per-process key.
	Keyring *auth.Keyring
	// TicketTTL is how long a ticket may be fetched (default flightsql.DefaultTicketTTL).
	TicketTTL time.Duration
	// MultiEndpoint answers row-returning queries over several buckets with ordered
	// endpoints, one per group of at most EndpointBuckets buckets (at most MaxEndpoints
	// endpoints; defaults query.DefaultEndpointBuckets and query.DefaultMaxEndpoints), for
	// sessions that do not choose (flightsql.OptionEndpoints).
	MultiEndpoint   bool
	EndpointBuckets int
	MaxEndpoints    int
	// Advertise are the location URIs put into every endpoint (grpc+tcp://host:port or
	// grpc+tls://host:port of the replicas); empty means none.
	Advertise []string
	// Peers are the URIs of the replicas CancelFlightInfo is forwarded to (flightsql
	// Config.Peers; serve defaults them to Advertise), PeerTLS the client TLS configuration
	// for grpc+tls peers.
	Peers   []string
	PeerTLS *tls.Config
	// QueryConnections caps the hot-store connections the query path uses together
	// (routing.CappedHotStore), so that the rest of the pool stays free for appends and the
	// archiver: 0 means the pool's size minus DefaultConnectionReserve for a store with a pgx
	// pool (CockroachDB, PostgreSQL), no cap for others; negative means no cap. A read waits
	// at most QueryConnectionWait for a connection (default DefaultQueryConnectionWait), then
	// the query fails with UNAVAILABLE naming the flag.
	QueryConnections    int
	QueryConnectionWait time.Duration
	// PollTTL and PollMemory bound PollFlightInfo's polls: how long one is kept without being
	// asked about, and the bytes of result batches all keep (flightsql.Config; defaults
	// flightsql.DefaultPollTTL and DefaultPollMemory). A poll's run is admitted like a query
	// stream and runs under QueryTimeout.
	PollTTL    time.Duration
	PollMemory int64
	// Auth authenticates every call and answers Handshake with a bearer token; nil serves
	// without authentication (every caller is let in).
	Auth *auth.Authenticator
	// TLS, when set, serves gRPC over TLS with this configuration (with ClientAuth set to
	// tls.RequireAndVerifyClientCert for mutual TLS); plaintext connections are refused.
	// Nil serves plaintext.
	TLS *tls.Config
	// MetricsListen, when set, serves Prometheus metrics of handler MetricsHandler at /metrics.
	MetricsListen  string
	MetricsHandler http.Handler
	// DebugListen, when set, serves Go's runtime profiles (net/http/pprof) at /debug/pprof/ on
	// its own listener. Profiles reveal internals (goroutine stacks, SQL in flight): bind it to
	// loopback.
	DebugListen string
	// GoMemoryLimit, when positive, sets the Go runtime's soft memory limit
	// (debug.SetMemoryLimit) to GoMemoryLimit bytes plus GoMemoryLimitPerStream bytes for every
	// DoGet stream in flight beyond the first (in all at most the queries' total memory,
	// TotalQueryMemory), until Close restores the previous limit; it also
	// bounds the free lists of the engine's recycling allocator (Alloc when it is a
	// *ledger.Pool, else ledger.DefaultPool) to two fifths of the limit (memlimit.go). Zero
	// leaves the runtime's limit (GOMEMLIMIT, or none) and the pool alone, as a server embedded
	// in another process should.
	GoMemoryLimit          int64
	GoMemoryLimitPerStream int64
	// MaxQueries bounds the queries executing at once (DoGet of query tickets; default
	// DefaultMaxQueries); up to MaxQueued more wait at most QueueWait for a slot (defaults
	// DefaultMaxQueued, DefaultQueueWait; a negative MaxQueued means none wait). Every
	// numeric and duration setting here follows internal/setting's convention (0: the
	// default; negative: off, as each says), applied by withDefaults. Beyond that,
	// and while draining, queries are refused with UNAVAILABLE (admission.go).
	MaxQueries int
	MaxQueued  int
	QueueWait  time.Duration
	// MaxPollQueries bounds the slots of MaxQueries that polls' background runs
	// (PollFlightInfo) hold at once (default PollShare(MaxQueries); clamped to MaxQueries;
	// cannot be off): the others are left to query streams, so polls started and abandoned
	// cannot starve them. Polls beyond it wait in a queue of their own, without MaxQueued's
	// bound or QueueWait's refusal, until their slot, their expiry (PollTTL) or their cancel
	// (admission.go's admitPoll).
	MaxPollQueries int
	// QueryTimeout bounds the wall time of one query's stream, from admission to its last
	// batch (default DefaultQueryTimeout; negative: no bound). A query past it ends with
	// DEADLINE_EXCEEDED naming the limit.
	QueryTimeout time.Duration
	// StallTimeout bounds how long one message of a DoGet stream may wait to be sent: a
	// client that stops reading blocks the send on HTTP/2 flow control, holding its query's
	// admission slot, buckets and connections; past StallTimeout its connection is closed,
	// which ends the stream (default DefaultStallTimeout; negative: no bound).
	StallTimeout time.Duration
	// ContendedStallTimeout is how long a DoGet stream's client may go without reading it
	// (its sends waiting 90% of the time, under 256 KiB/s: admission.go's slowLocked) while
	// that client (its authenticated user, else its connection) holds more than its share of
	// the MaxQueries slots and another client waits for one, or while a waiting client runs
	// nothing: past it the stream's connection is closed, which frees its slots for the others
	// (default DefaultContendedStallTimeout; negative: only StallTimeout applies; trial 33 G1:
	// one connection that never read held every slot until StallTimeout).
	ContendedStallTimeout time.Duration
	// RequestWait bounds how long a call waits for its request message (a DoGet's ticket,
	// an action, a Handshake's payload; DoPut has PutIdleTimeout): past it the call ends with
	// DEADLINE_EXCEEDED (flightsql.RequestWaitStreams; default DefaultRequestWait; negative:
	// no bound; trial 34 S5: calls opened without their request kept their connections open
	// past ConnIdleTimeout).
	RequestWait time.Duration
	// MaxConns bounds the client connections open at once: one accepted beyond them is closed
	// at once, so that connections opened and held cannot take the file descriptors the
	// stores need (default DefaultMaxConns(), from RLIMIT_NOFILE; negative: no bound; trial 33
	// G2: 20,000 idle connections reached the limit and the archive's reads failed).
	MaxConns int
	// MaxConnsPerIP bounds the client connections open at once from one IP address (default
	// a quarter of MaxConns, at least 1; negative: no bound), so that one host cannot take
	// every place of MaxConns (trial 34 S4). Behind a proxy every client is the proxy's
	// address: set it to MaxConns or off there.
	MaxConnsPerIP int
	// MaxConnStreams bounds the calls in flight on one client connection (HTTP/2
	// SETTINGS_MAX_CONCURRENT_STREAMS; clients queue the calls beyond it; default
	// DefaultMaxConnStreams; negative: gRPC's, unbounded).
	MaxConnStreams int
	// PutIdleTimeout bounds how long a DoPut stream (an ingest, an update's or a prepared
	// statement's parameters) may wait for the client's next message: a write holds its
	// transaction and the locks of its buckets while it reads (on SQLite every other write
	// waits), so a client that goes quiet mid-stream is ended with DEADLINE_EXCEEDED and
	// nothing it sent is stored (default DefaultPutIdleTimeout; negative: no bound; trial 32
	// F10: an idle DoPut blocked other writes until the query timeout, an hour).
	PutIdleTimeout time.Duration
	// ConnIdleTimeout closes a client connection (HTTP/2 GOAWAY) once no call has been in
	// flight on it for that long, so that connections opened and left idle cannot hold the
	// process's file descriptors (default DefaultConnIdleTimeout; negative: no bound; trial
	// 33 G2: 20,000 idle connections exhausted them). Clients reconnect at their next call.
	ConnIdleTimeout time.Duration
	// DrainTimeout is how long Wait lets running queries finish when its context ends
	// (SIGTERM) before cancelling them (default DefaultDrainTimeout; negative: cancel them at
	// once; see Drain).
	DrainTimeout time.Duration
	// HealthInterval is how often the stores are probed for gRPC health checking (default
	// DefaultHealthInterval; health.go).
	HealthInterval time.Duration
	// Admins are the users who may cancel any query with SELECT flightsrv.cancel_query('<id>')
	// (serve --auth-admins); without authentication (Auth nil) every caller may, as the local
	// operator.
	Admins []string
	// LogStatements puts the SQL text of queries into their log lines and into
	// flightsrv.queries (querylog.Config.Statements; serve --log-statements). Off: the
	// statement kind only.
	LogStatements bool
	// Version is reported by GetSqlInfo.
	Version string
	// Alloc allocates Arrow memory (default memory.DefaultAllocator).
	Alloc memory.Allocator
	// Logger defaults to slog.Default().
	Logger *slog.Logger
}

// DefaultConnectionReserve is how many of a pgx pool's connections the query path leaves to
// appends and the archiver by default (Config.QueryConnections), and
// DefaultQueryConnectionWait how long a query read waits for one of the others (the pgx
// store's own acquire timeout).
const (
	DefaultConnectionReserve   = 4
	DefaultQueryConnectionWait = 5 * time.Second
)

// DefaultQueryTimeout is Config.QueryTimeout's default.
const DefaultQueryTimeout = time.Hour

// DefaultStallTimeout is Config.StallTimeout's default.
const DefaultStallTimeout = 2 * time.Minute

// DefaultRequestWait is Config.RequestWait's default.
const DefaultRequestWait = 30 * time.Second

// DefaultContendedStallTimeout is Config.ContendedStallTimeout's default.
const DefaultContendedStallTimeout = 5 * time.Second

// DefaultMaxConnStreams is Config.MaxConnStreams's default: more than the slots and places
// of the default admission queue together, so that one connection can still fill them.
const DefaultMaxConnStreams = 256

// DefaultPutIdleTimeout is Config.PutIdleTimeout's default.
const DefaultPutIdleTimeout = time.Minute

// DefaultConnIdleTimeout is Config.ConnIdleTimeout's default.
const DefaultConnIdleTimeout = 5 * time.Minute

// DefaultDrainTimeout is Config.DrainTimeout's default.
const DefaultDrainTimeout = 30 * time.Second

// Server is a running flightsrv instance.
type Server struct {
	flight flight.Server
	http   []*http.Server // metrics and debug endpoints
	mem    *memoryLimit
	adm    *admission
	health *healthReporter
	ln     *trackingListener
	// stop cancels every call's context (the end of a drain, or Close); endWatches cancels
	// those of health Watch streams (the end of a drain's first phase).
	stop         context.CancelFunc
	endWatches   context.CancelFunc
	sql          *flightsql.Server
	logger       *slog.Logger
	drainTimeout time.Duration
	Cache        *routing.RouteCache
	Engine       *query.Engine
	// HotReads is the capped hot store of the query path (nil without a cap).
	HotReads  *routing.CappedHotStore
	addr      string
	done      chan error
	closeOnce sync.Once
}

// fragmentEngine is the query engine as a flightsql.FragmentEngine.
type fragmentEngine struct{ *query.Engine }

func (e fragmentEngine) Fragments(ctx context.Context, sql string, substraitPlan []byte, params arrow.RecordBatch, split bool) ([]flightsql.Fragment, error) {
	fs, err := e.Engine.Fragments(ctx, sql, substraitPlan, params, split)
	out := make([]flightsql.Fragment, len(fs))
	for i, f := range fs {
		out[i] = flightsql.Fragment(f)
	}
	return out, err
}

var _ flightsql.FragmentEngine = fragmentEngine{}

// MaxRecvBytes is the server's gRPC receive limit, raised above gRPC's 4 MiB default for
// DoPut parameter and ingest streams; every other request message is refused over
// flightsql.MaxRequestBytes (4 MiB) before it is decoded.
const MaxRecvBytes = 64 << 20

// withDefaults applies the settings convention (internal/setting: 0 is the default, a
// negative value is off) to every setting in one place; below it, 0 means off.
func (c *Config) withDefaults() {
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Alloc == nil {
		c.Alloc = memory.DefaultAllocator
	}
	c.RouteCacheEntries = setting.Bound(c.RouteCacheEntries, routing.DefaultRouteCacheEntries)
	c.MaxQueries = setting.Required(c.MaxQueries, DefaultMaxQueries)
	c.MaxQueued = setting.Bound(c.MaxQueued, DefaultMaxQueued)
	c.QueueWait = setting.Required(c.QueueWait, DefaultQueueWait)
	c.MaxPollQueries = min(setting.Required(c.MaxPollQueries, PollShare(c.MaxQueries)), c.MaxQueries)
	c.DrainTimeout = setting.Bound(c.DrainTimeout, DefaultDrainTimeout)
	c.HealthInterval = setting.Required(c.HealthInterval, DefaultHealthInterval)
	c.QueryTimeout = setting.Bound(c.QueryTimeout, DefaultQueryTimeout)
	c.StallTimeout = setting.Bound(c.StallTimeout, DefaultStallTimeout)
	c.ContendedStallTimeout = setting.Bound(c.ContendedStallTimeout, DefaultContendedStallTimeout)
	c.MaxConnStreams = setting.Bound(c.MaxConnStreams, DefaultMaxConnStreams)
	c.RequestWait = setting.Bound(c.RequestWait, DefaultRequestWait)
	if c.MaxConns == 0 {
		c.MaxConns = DefaultMaxConns()
	}
	c.MaxConns = max(c.MaxConns, 0)
	if c.MaxConnsPerIP == 0 && c.MaxConns > 0 {
		c.MaxConnsPerIP = max(1, c.MaxConns/4)
	}
	c.MaxConnsPerIP = max(c.MaxConnsPerIP, 0)
	c.PutIdleTimeout = setting.Bound(c.PutIdleTimeout, DefaultPutIdleTimeout)
	c.ConnIdleTimeout = setting.Bound(c.ConnIdleTimeout, DefaultConnIdleTimeout)
	c.QueryConnectionWait = setting.Required(c.QueryConnectionWait, DefaultQueryConnectionWait)
}

// Start builds the tables and engine and starts serving on cfg.Listen. It returns once the
// listener is bound.
func Start(ctx context.Context, cfg Config) (*Server, error) {
	cfg.withDefaults()
	if len(cfg.Tables) == 0 {
		return nil, errors.New("server: no table configured")
	}
	cache := routing.NewRouteCache(cfg.RouteCacheEntries)
	hot, capped := capQueryReads(cfg.Hot, cfg.QueryConnections, cfg.QueryConnectionWait)
	tables := make([]*routing.DurableTable, 0, len(cfg.Tables))
	for _, def := range cfg.Tables {
		t, err := routing.NewDurableTable(def, hot, cfg.Archive, routing.Options{Fanout: cfg.Fanout, Cache: cache, Logger: cfg.Logger, DamageMemory: cfg.DamageMemory})
		if err != nil {
			return nil, fmt.Errorf("table %s: %w", def.Name, err)
		}
		tables = append(tables, t)
	}
	queries := querylog.NewRegistry()
	// cancel_query reaches the peers through the Flight SQL server, made after the engine.
	var fsRef atomic.Pointer[flightsql.Server]
	forward := func(ctx context.Context, id string) bool {
		if f := fsRef.Load(); f != nil {
			return f.ForwardCancelQuery(ctx, id)
		}
		return false
	}
	eng, err := query.New(tables, query.Options{System: query.System{Queries: queries, Admin: isAdmin(cfg.Auth, cfg.Admins), Forward: forward}, Pushdown: cfg.Pushdown, Shred: cfg.ShredCache, Alloc: cfg.Alloc, MaxBuckets: cfg.MaxBuckets, MaxPartitions: cfg.MaxPartitions, AnalyticalMaxPartitions: cfg.AnalyticalMaxPartitions, QueryMemory: cfg.QueryMemory,
		TotalQueryMemory: cfg.TotalQueryMemory, EndpointBuckets: cfg.EndpointBuckets, MaxEndpoints: cfg.MaxEndpoints, QueryMaxRows: cfg.QueryMaxRows, QueryCPU: cfg.QueryCPU})
	if err != nil {
		return nil, err
	}
	adm := newAdmission(cfg.MaxQueries, cfg.MaxQueued, cfg.MaxPollQueries, cfg.QueueWait)
	adm.yield = max(cfg.ContendedStallTimeout, 0)
	mem := newMemoryLimit(cfg.GoMemoryLimit, cfg.GoMemoryLimitPerStream, setting.Bound(cfg.TotalQueryMemory, query.DefaultTotalMemory), enginePool(cfg.Alloc))
	fs, err := flightsql.NewServer(fragmentEngine{eng}, flightsql.Config{Keyring: cfg.Keyring, TicketTTL: cfg.TicketTTL, MultiEndpoint: cfg.MultiEndpoint, Advertise: cfg.Advertise, Self: selfLocation(cfg.Listen, cfg.Advertise),
		Version: cfg.Version, Logger: cfg.Logger, Alloc: cfg.Alloc, Analytical: cfg.Analytical,
		Admit: admitPoll(adm, mem, cfg.QueryTimeout), PollTTL: cfg.PollTTL, PollMemory: cfg.PollMemory, Peers: cfg.Peers, PeerTLS: cfg.PeerTLS,
		Ingester: newIngester(tables, ingestMemory(cfg.QueryMemory))})
	if err != nil {
		return nil, err
	}
	fsRef.Store(fs)
	hr := newHealthReporter(storeProbes(cfg.Hot, cfg.Archive), cfg.HealthInterval, cfg.Logger)
	stopCtx, stop := context.WithCancel(context.Background())
	watchCtx, endWatches := context.WithCancel(stopCtx)
	// flightsql.ServerOptions first: the stream interceptors after it read requests bounded.
	opts := append([]grpc.ServerOption{
		grpc.MaxRecvMsgSize(MaxRecvBytes),
		grpc.MaxHeaderListSize(1 << 20),
	}, flightsql.ServerOptions()...)
	opts = append(opts, grpc.ChainStreamInterceptor(flightsql.RequestWaitStreams(cfg.RequestWait)))
	if cfg.MaxConnStreams > 0 {
		opts = append(opts, grpc.MaxConcurrentStreams(uint32(cfg.MaxConnStreams)))
	}
	if cfg.ConnIdleTimeout > 0 {
		opts = append(opts, grpc.KeepaliveParams(keepalive.ServerParameters{MaxConnectionIdle: cfg.ConnIdleTimeout}))
	}
	if cfg.TLS != nil {
		opts = append(opts, grpc.Creds(loggedTLS{TransportCredentials: credentials.NewTLS(cfg.TLS), log: ratelog.New(cfg.Logger, 10, 20)}))
	}
	// First, so that the refusals of the interceptors after it are logged too.
	opts = append(opts, querylog.ServerOptions(querylog.Config{Logger: cfg.Logger, Tickets: fs, Statements: cfg.LogStatements, Registry: queries})...)
	// Refuses unary requests over flightsql.MaxRequestBytes, logged.
	opts = append(opts, grpc.ChainUnaryInterceptor(flightsql.RefuseOversized))
	opts = append(opts, recovering()...)
	opts = append(opts, stoppable(stopCtx, watchCtx)...)
	if cfg.Auth != nil {
		opts = append(opts, grpc.ChainUnaryInterceptor(healthUnauthenticated(cfg.Auth.UnaryInterceptor)), grpc.ChainStreamInterceptor(healthUnauthenticatedStream(cfg.Auth.StreamInterceptor)))
		opts = append(opts, recordUser()...)
	}
	srv := flight.NewServerWithMiddleware(nil, opts...)
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		fs.Close()
		endWatches()
		stop()
		mem.restore()
		return nil, fmt.Errorf("listen on %s: %w", cfg.Listen, err)
	}
	tl := newTrackingListener(ln, cfg.MaxConns, cfg.MaxConnsPerIP, ratelog.New(cfg.Logger, 1, 5))
	srv.RegisterFlightService(service{FlightServer: arrowflightsql.NewFlightServerWithAllocator(fs, cfg.Alloc), sql: fs, mem: mem, auth: cfg.Auth, adm: adm,
		queryTimeout: cfg.QueryTimeout, stallTimeout: cfg.StallTimeout, putIdle: cfg.PutIdleTimeout, ln: tl, log: cfg.Logger})
	srv.RegisterService(&healthpb.Health_ServiceDesc, hr.hs)
	srv.InitListener(tl)
	s := &Server{HotReads: capped, sql: fs, flight: srv, ln: tl, mem: mem, adm: adm, health: hr, stop: stop, endWatches: endWatches, logger: cfg.Logger, drainTimeout: cfg.DrainTimeout, Cache: cache, Engine: eng, addr: srv.Addr().String(), done: make(chan error, 1)}
	hr.start()
	if cfg.MetricsListen != "" && cfg.MetricsHandler != nil {
		mux := http.NewServeMux()
		mux.Handle("/metrics", cfg.MetricsHandler)
		if err := s.serveHTTP("metrics", cfg.MetricsListen, mux); err != nil {
			s.Close()
			return nil, err
		}
	}
	if cfg.DebugListen != "" {
		if err := s.serveHTTP("debug", cfg.DebugListen, debugMux()); err != nil {
			s.Close()
			return nil, err
		}
	}
	go func() { s.done <- srv.Serve() }()
	return s, nil
}

// Addr returns the bound gRPC address host:port.
func (s *Server) Addr() string { return s.addr }

// Wait blocks until the server stops serving or ctx is done (the binary's SIGTERM or
// SIGINT), then drains it for at most Config.DrainTimeout (see Drain) and closes it.
func (s *Server) Wait(ctx context.Context) error {
	select {
	case err := <-s.done:
		return err
	case <-ctx.Done():
		s.Drain(s.drainTimeout)
		s.Close()
		return nil
	}
}

// Drain shuts the server down gracefully, in two phases. First, as a lame duck: gRPC health
// checks answer NOT_SERVING, queued and new queries are refused with UNAVAILABLE saying the
// server is shutting down (clients retry on another replica), and running queries go on;
// the listener stays open so that clients and load balancers get those answers rather than a
// refused connection. Once no query runs, or when timeout has passed, health Watch streams
// end, the listener closes and the server stops gracefully (every call ends and its
// connection flushes what it wrote). What still runs at timeout is cancelled and its
// connection cut. Drain returns when every call has ended, and reports whether everything
// finished within timeout. The server is not usable afterwards; call Close to release the
// rest. Progress is logged.
func (s *Server) Drain(timeout time.Duration) bool {
	t := time.NewTimer(timeout)
	defer t.Stop()
	s.health.drain()
	idle := s.adm.drain()
	running, _ := s.adm.inFlight()
	s.logger.Info("draining: refusing new queries", "running", running, "timeout", timeout)
	expired := false
	select {
	case <-idle:
	case <-t.C:
		expired = true
	}
	s.endWatches()
	stopped := make(chan struct{})
	go func() {
		s.flight.Shutdown() // GracefulStop
		close(stopped)
	}()
	if !expired {
		select {
		case <-stopped:
			s.logger.Info("drained: every query finished")
			return true
		case <-t.C:
		}
	}
	running, _ = s.adm.inFlight()
	s.logger.Warn("drain timeout passed: cancelling what still runs", "running", running)
	s.hardStop()
	<-stopped
	return false
}

// hardStop cancels every call and cuts every connection, which ends calls blocked sending to
// clients that stopped reading.
func (s *Server) hardStop() {
	s.stop()
	s.sql.Close() // polls' background runs
	s.ln.closeConns()
}

// Close stops the server at once: running query streams are cancelled, the listener and the
// metrics and debug endpoints are closed, health checking stops and the runtime's memory limit
// is restored. Safe to call more than once, and after Drain.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		s.hardStop()
		s.flight.Shutdown()
		s.health.close()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		for _, h := range s.http {
			_ = h.Shutdown(ctx)
		}
		s.mem.restore()
	})
}

// serveHTTP serves handler on its own listener at addr until Close.
func (s *Server) serveHTTP(what, addr string, handler http.Handler) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen for %s on %s: %w", what, addr, err)
	}
	h := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	s.http = append(s.http, h)
	go func() { _ = h.Serve(ln) }()
	// The address actually bound: a port of 0 is chosen by the kernel.
	s.logger.Info("serving "+what, "addr", ln.Addr().String())
	return nil
}

// debugMux serves net/http/pprof's handlers under /debug/pprof/ (not on
// http.DefaultServeMux, where importing net/http/pprof registers them).
func debugMux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}

// knownActions are the DoAction types the Flight SQL dispatcher handles.

// service is arrow-go's Flight SQL dispatcher with these changes: DoAction answers
// UNIMPLEMENTED for action types the dispatcher does not know (arrow-go's dispatcher answers
// INVALID_ARGUMENT, and clients fall back only on UNIMPLEMENTED: docs/flightsql-clients.md),
// ListActions advertises only the actions carried out, and DoGet streams query results
// without copying them (flightsql.Server.ServeDoGet), counts the streams in flight for the
// memory limit, and admits query streams through admission control.
type service struct {
	flight.FlightServer
	sql  *flightsql.Server
	mem  *memoryLimit        // nil when the server leaves the runtime's limit alone
	auth *auth.Authenticator // nil without authentication
	adm  *admission
	// queryTimeout bounds a query stream's wall time (0: none).
	queryTimeout time.Duration
	// stallTimeout bounds how long one DoGet message may wait to be sent (0: none); ln
	// closes the connection of a stream past it.
	stallTimeout time.Duration
	// putIdle bounds the wait for a DoPut stream's next message (0: none).
	putIdle time.Duration
	ln      *trackingListener
	log     *slog.Logger
}

// Handshake answers Flight's Handshake: with authentication, a bearer token for the call's
// Basic (or Bearer) credentials (auth.Authenticator.Handshake); without, an empty answer to
// each request, so that clients which always shake hands connect, those that wait for the
// answer before they end their side (pyarrow's ClientAuthHandler) too (trial 32 m7: they
// waited until their deadline).
func (g service) Handshake(stream flight.FlightService_HandshakeServer) error {
	if g.auth != nil {
		return g.auth.Handshake(stream)
	}
	for {
		if _, err := stream.Recv(); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if err := stream.Send(&flight.HandshakeResponse{}); err != nil {
			return err
		}
	}
}

// servedActions are the actions ListActions advertises: the ones this server carries out
// (transactions and savepoints are dispatched but refused as UNIMPLEMENTED).
var servedActions = []*flight.ActionType{
	{Type: arrowflightsql.CreatePreparedStatementActionType, Description: "Creates a prepared statement (self-contained signed handle)."},
	{Type: arrowflightsql.CreatePreparedSubstraitPlanActionType, Description: "Creates a prepared statement from a Substrait plan."},
	{Type: arrowflightsql.ClosePreparedStatementActionType, Description: "Closes a prepared statement (idempotent)."},
	{Type: flight.CancelFlightInfoActionType, Description: "Cancels a query on every replica: its DoGet streams and its poll stop and its tickets are refused."},
	{Type: flight.SetSessionOptionsActionType, Description: "Sets session options (catalog, schema, ipc_compression)."},
	{Type: flight.GetSessionOptionsActionType, Description: "Gets session options."},
	{Type: flight.CloseSessionActionType, Description: "Closes the session."},
}

// ListActions advertises only the actions the server carries out.
func (g service) ListActions(_ *flight.Empty, stream flight.FlightService_ListActionsServer) error {
	for _, a := range servedActions {
		if err := stream.Send(a); err != nil {
			return err
		}
	}
	return nil
}

func (g service) DoAction(cmd *flight.Action, stream flight.FlightService_DoActionServer) error {
	if !querylog.KnownAction(cmd.GetType()) {
		return status.Error(codes.Unimplemented, "action type is not supported")
	}
	if err := flightsql.CheckActionBody(cmd); err != nil {
		return err
	}
	return g.FlightServer.DoAction(cmd, stream)
}

// DoGet streams statement results without copies; metadata commands go to the dispatcher.
// Query tickets first wait for an admission slot, and run under the query timeout, which is
// checked between batches. A client that stops reading blocks the stream's sends on HTTP/2
// flow control, which only the connection's end releases: a send waiting longer than the
// stall timeout closes the stream's connection (stallStream), which ends the stream and
// frees its slot; so does admission when the client holds more than its share of the slots
// while others wait and the send has waited Config.ContendedStallTimeout (admission.go).
// Every stream ends when the server's stop context is cancelled (stoppable).
func (g service) DoGet(t *flight.Ticket, stream flight.FlightService_DoGetServer) error {
	watched := &stallStream{FlightService_DoGetServer: stream, timeout: g.stallTimeout, stall: g.closeStalled}
	stream = watched
	if flightsql.IsQueryTicket(t) {
		waited := time.Now()
		ctx := stream.Context()
		slot, err := g.adm.admitStream(ctx, func() {
			g.closeConn(ctx, "closed the connection of a client that stopped reading while it held more than its share of the query slots and others waited", "contended_stall_timeout", g.adm.yield)
		})
		querylog.FromContext(ctx).SetQueued(time.Since(waited))
		if err != nil {
			return err
		}
		defer slot.release()
		watched.slot = slot
		if g.queryTimeout > 0 {
			ctx, cancel := context.WithTimeoutCause(ctx, g.queryTimeout, errQueryTimeout)
			defer cancel()
			stream = doGetStream{stream, ctx}
		}
	}
	g.mem.begin()
	defer g.mem.end()
	err := g.sql.ServeDoGet(t, stream, g.FlightServer.DoGet)
	if err != nil && errors.Is(context.Cause(stream.Context()), errQueryTimeout) {
		return flightsql.Status(&flightsql.QueryTimeoutError{Limit: g.queryTimeout}, nil)
	}
	return unknownCommand(err)
}

// closeStalled closes the connection of a stream whose send waited past the stall timeout.
func (g service) closeStalled(ctx context.Context) {
	g.closeConn(ctx, "closed the connection of a stream whose client stopped reading", "stall_timeout", g.stallTimeout)
}

// closeConn closes the connection of ctx's call and logs msg with the bound that expired.
func (g service) closeConn(ctx context.Context, msg, bound string, limit time.Duration) {
	p, ok := peer.FromContext(ctx)
	if !ok || p.Addr == nil {
		return
	}
	if g.ln.closeRemote(p.Addr.String()) {
		g.log.Warn(msg, bound, limit)
	}
}

// stallStream is a DoGet stream whose sends are watched: one that has not returned after
// timeout (0: none) calls stall with the stream's context (once per stuck send), and each
// marks the query's admission slot (nil: none) as sending while it waits.
type stallStream struct {
	flight.FlightService_DoGetServer
	timeout time.Duration
	stall   func(context.Context)
	slot    *grant
}

func (s *stallStream) SendMsg(m any) error {
	if s.timeout > 0 {
		t := time.AfterFunc(s.timeout, func() { s.stall(s.Context()) })
		defer t.Stop()
	}
	s.slot.sending(true)
	// Query results go as pre-encoded messages (trial 35: counted as 0 bytes, every reader
	// slower than the server looked like one that does not read).
	defer s.slot.sendingBytes(false, flightsql.MessageBytes(m))
	return s.FlightService_DoGetServer.SendMsg(m)
}

func (s *stallStream) Send(d *flight.FlightData) error { return s.SendMsg(d) }

// errQueryTimeout is the cancellation cause of a query stream past Config.QueryTimeout.
var errQueryTimeout = errors.New("query timeout")

// doGetStream is a DoGet stream with the query's own context.
type doGetStream struct {
	flight.FlightService_DoGetServer
	ctx context.Context
}

func (s doGetStream) Context() context.Context { return s.ctx }

// GetFlightInfo is the dispatcher's, with unknown command types UNIMPLEMENTED. A draining
// server refuses it at once (UNAVAILABLE, the shutdown's message) instead of planning a query
// whose DoGet it would refuse: the client retries on another replica.
func (g service) GetFlightInfo(ctx context.Context, d *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	if g.adm != nil && g.adm.isDraining() {
		return nil, refuse(ctx, flightsql.ErrShuttingDown)
	}
	info, err := g.FlightServer.GetFlightInfo(ctx, d)
	return info, unknownCommand(err)
}

// PollFlightInfo runs queries (statements, Substrait plans, prepared statements) and answers
// their retry descriptors through the dispatcher (flightsql.Server's poll.go); any other
// Flight SQL command is answered at once, as a complete PollInfo around its GetFlightInfo.
// Unknown command types are UNIMPLEMENTED.
func (g service) PollFlightInfo(ctx context.Context, d *flight.FlightDescriptor) (*flight.PollInfo, error) {
	if flightsql.IsMetadataCommand(d) {
		info, err := g.GetFlightInfo(ctx, d)
		if err != nil {
			return nil, err
		}
		done := 1.0
		return &flight.PollInfo{Info: info, Progress: &done}, nil
	}
	info, err := g.FlightServer.PollFlightInfo(ctx, d)
	return info, unknownCommand(err)
}

// pgxPooled is a hot store over a pgx pool (routing/cockroach).
type pgxPooled interface{ Pool() *pgxpool.Pool }

// capQueryReads returns the hot store the query path uses: hot capped at n connections
// (Config.QueryConnections' rules), waiting at most wait for one (> 0, Config.withDefaults'); capped is
// nil without a cap.
func capQueryReads(hot routing.HotStore, n int, wait time.Duration) (routing.HotStore, *routing.CappedHotStore) {
	if n == 0 {
		p, ok := hot.(pgxPooled)
		if !ok {
			return hot, nil
		}
		n = max(1, int(p.Pool().Config().MaxConns)-DefaultConnectionReserve)
	}
	if n < 0 {
		return hot, nil
	}
	c := routing.NewCappedHotStore(hot, n, wait)
	return c, c
}

// admitPoll returns the admission of polls' background runs (flightsql.Config.Admit): a
// query slot of the polls' share, waited for in the polls' own queue (admission.admitPoll),
// counted as a stream for the memory limit, under the query timeout (0: none).
func admitPoll(adm *admission, mem *memoryLimit, timeout time.Duration) func(context.Context) (context.Context, func(), error) {
	return func(ctx context.Context) (context.Context, func(), error) {
		release, err := adm.admitPoll(ctx)
		if err != nil {
			return nil, nil, err
		}
		mem.begin()
		cancel := context.CancelFunc(func() {})
		if timeout > 0 {
			ctx, cancel = context.WithTimeoutCause(ctx, timeout, &flightsql.QueryTimeoutError{Limit: timeout})
		}
		return ctx, func() {
			cancel()
			mem.end()
			release()
		}, nil
	}
}

// GetSchema is the dispatcher's, with unknown command types UNIMPLEMENTED.
func (g service) GetSchema(ctx context.Context, d *flight.FlightDescriptor) (*flight.SchemaResult, error) {
	res, err := g.FlightServer.GetSchema(ctx, d)
	return res, unknownCommand(err)
}

// DoPut is the dispatcher's, with unknown command types UNIMPLEMENTED, over the client's
// stream with every message checked before arrow-go's IPC reader decodes it and awaited at
// most putIdle (Config.PutIdleTimeout); a stream without
// any message (an empty ingest of arrow-go's and ADBC's clients) stores nothing and answers
// record_count 0 (flightsql.ServePut).
func (g service) DoPut(stream flight.FlightService_DoPutServer) error {
	return flightsql.ServePut(stream, g.putIdle, func(s flight.FlightService_DoPutServer) error {
		return unknownCommand(g.FlightServer.DoPut(s))
	})
}

// unknownCommand turns the dispatcher's refusal of a command type it does not know (arrow-go
// v18.8 answers INVALID_ARGUMENT "requested command is invalid" for a known message that is
// no command, "… Any …: proto: not found" for a type URL outside the registry, "the defined
// request is invalid" in DoPut) into UNIMPLEMENTED, the code clients fall back on (docs/flightsql-clients.md). Malformed
// commands of known types stay INVALID_ARGUMENT.
func unknownCommand(err error) error {
	st, ok := status.FromError(err)
	if !ok || st.Code() != codes.InvalidArgument {
		return err
	}
	msg := st.Message()
	// An Any whose type URL is outside the protobuf registry fails to unmarshal with
	// "proto: not found" (protoregistry.NotFound); malformed bytes fail otherwise.
	unknownAny := strings.HasSuffix(msg, protoregistry.NotFound.Error()) &&
		(strings.HasPrefix(msg, "could not unmarshal Any to a command type") || strings.HasPrefix(msg, "could not unmarshal google.protobuf.Any") ||
			strings.HasPrefix(msg, "unable to unmarshal proto.Any"))
	if unknownAny || strings.HasPrefix(msg, "requested command is invalid") || msg == "the defined request is invalid" {
		return status.Error(codes.Unimplemented, "command type is not supported")
	}
	return err
}

// stoppable returns the interceptors that end every call when stop is cancelled (the end of a
// drain, or Close), and health checks' Watch streams already when watches is (stop cancels
// watches too): each call's context is also cancelled by them, so that DoGet streams, DoPut
// uploads and Watch streams a client keeps open cannot hold a graceful stop forever.
func stoppable(stop, watches context.Context) []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
			ctx, cancel := context.WithCancel(ctx)
			defer cancel()
			defer context.AfterFunc(stop, cancel)()
			return handler(ctx, req)
		}),
		grpc.ChainStreamInterceptor(func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
			end := stop
			if strings.HasPrefix(info.FullMethod, healthMethodPrefix) {
				end = watches
			}
			ctx, cancel := context.WithCancel(ss.Context())
			defer cancel()
			defer context.AfterFunc(end, cancel)()
			return handler(srv, stoppableStream{ss, ctx})
		}),
	}
}

// isAdmin returns the administrator check of query.System: every caller without
// authentication (a server without it is the local operator's), else the users of admins.
func isAdmin(authn *auth.Authenticator, admins []string) func(context.Context) bool {
	if authn == nil {
		return func(context.Context) bool { return true }
	}
	set := map[string]bool{}
	for _, a := range admins {
		set[a] = true
	}
	return func(ctx context.Context) bool {
		u := auth.UserFrom(ctx)
		return u != "" && set[u]
	}
}

// recordUser returns the interceptors that record the authenticated user (auth.UserFrom) in
// the call's query record (its log lines, flightsrv.queries). Put them after authentication.
func recordUser() []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
			querylog.FromContext(ctx).SetUser(auth.UserFrom(ctx))
			return handler(ctx, req)
		}),
		grpc.ChainStreamInterceptor(func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
			querylog.FromContext(ss.Context()).SetUser(auth.UserFrom(ss.Context()))
			return handler(srv, ss)
		}),
	}
}

// stoppableStream is a server stream whose context is also cancelled by the server's stop.
type stoppableStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s stoppableStream) Context() context.Context { return s.ctx }

// recovering returns the interceptors that keep a panic of a call inside that call
// (internal/panics): the handler's panic, or a later interceptor's, becomes INTERNAL for
// that call only, logged with its stack and counted, while the process and every other
// session go on. Put them right after the query log's interceptors, so that the call's log
// line and span record the INTERNAL answer.
func recovering() []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (resp any, err error) {
			defer panics.Recover(rpcName(info.FullMethod), &err)
			return handler(ctx, req)
		}),
		grpc.ChainStreamInterceptor(func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) (err error) {
			defer panics.Recover(rpcName(info.FullMethod), &err)
			return handler(srv, ss)
		}),
	}
}

// rpcName is the method name of a gRPC full method name ("/pkg.Service/Method" → "Method"):
// a fixed word, never client data.
func rpcName(fullMethod string) string {
	if i := strings.LastIndexByte(fullMethod, '/'); i >= 0 {
		return fullMethod[i+1:]
	}
	return fullMethod
}

// selfLocation returns the advertised location (grpc+tcp:// or grpc+tls:// host:port) that
// reaches the replica listening on listen: the one whose host:port is listen, else, when
// listen's host is a wildcard (all interfaces), the only one with listen's port; "" when none
// or several match.
func selfLocation(listen string, advertise []string) string {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return ""
	}
	var byPort []string
	for _, uri := range advertise {
		_, hp, ok := strings.Cut(uri, "://")
		if !ok {
			hp = uri
		}
		if hp == listen {
			return uri
		}
		if _, p, err := net.SplitHostPort(hp); err == nil && p == port {
			byPort = append(byPort, uri)
		}
	}
	if ip := net.ParseIP(host); (host == "" || (ip != nil && ip.IsUnspecified())) && len(byPort) == 1 {
		return byPort[0]
	}
	return ""
}

// loggedTLS logs the TLS handshakes it refuses (a plaintext client, a missing or untrusted
// client certificate), rate-limited, with the client's address and the handshake's error
// (which names the cause, never a secret): otherwise gRPC drops them without a word and
// clients print only "broken pipe" or TSI_DATA_CORRUPTED (issue 20).
type loggedTLS struct {
	credentials.TransportCredentials
	log *ratelog.Limiter
}

func (c loggedTLS) ServerHandshake(conn net.Conn) (net.Conn, credentials.AuthInfo, error) {
	out, info, err := c.TransportCredentials.ServerHandshake(conn)
	if err != nil {
		c.log.Warn("TLS handshake refused", "peer", conn.RemoteAddr().String(), "reason", err.Error())
	}
	return out, info, err
}

func (c loggedTLS) Clone() credentials.TransportCredentials {
	return loggedTLS{TransportCredentials: c.TransportCredentials.Clone(), log: c.log}
}
