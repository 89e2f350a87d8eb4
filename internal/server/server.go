// Package server assembles a running flightsrv process: routed tables over a hot store and an
// archive reader, the query engine, the Flight SQL service on a gRPC listener, and optionally
// the Prometheus /metrics endpoint. The binary and the end-to-end tests use the same assembly.
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	arrowflightsql "github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/flightsrv/flightsrv/flightsql"
	"github.com/flightsrv/flightsrv/query"
	"github.com/flightsrv/flightsrv/routing"
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
	// Fanout bounds concurrent bucket reads per query (default routing.DefaultFanout).
	Fanout int
	// MaxBuckets bounds the buckets one query may span (default query.DefaultMaxBuckets;
	// negative: no bound).
	MaxBuckets int
	// QueryMemory bounds the bytes one query may hold (default query.DefaultQueryMemory;
	// negative: no bound).
	QueryMemory int64
	// RouteCacheEntries bounds the archived-route cache (default routing.DefaultRouteCacheEntries;
	// negative disables it).
	RouteCacheEntries int
	// TicketKey signs handles and tickets (empty: a random per-process key).
	TicketKey []byte
	// MetricsListen, when set, serves Prometheus metrics of handler MetricsHandler at /metrics.
	MetricsListen  string
	MetricsHandler http.Handler
	// Version is reported by GetSqlInfo.
	Version string
	// Alloc allocates Arrow memory (default memory.DefaultAllocator).
	Alloc memory.Allocator
	// Logger defaults to slog.Default().
	Logger *slog.Logger
}

// Server is a running flightsrv instance.
type Server struct {
	flight  flight.Server
	metrics *http.Server
	Cache   *routing.RouteCache
	Engine  *query.Engine
	addr    string
	done    chan error
}

// MaxRecvBytes is the server's gRPC receive limit, raised above gRPC's 4 MiB default for
// DoPut parameter and ingest streams.
const MaxRecvBytes = 64 << 20

// Start builds the tables and engine and starts serving on cfg.Listen. It returns once the
// listener is bound.
func Start(ctx context.Context, cfg Config) (*Server, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Alloc == nil {
		cfg.Alloc = memory.DefaultAllocator
	}
	if len(cfg.Tables) == 0 {
		return nil, errors.New("server: no table configured")
	}
	entries := cfg.RouteCacheEntries
	if entries == 0 {
		entries = routing.DefaultRouteCacheEntries
	}
	cache := routing.NewRouteCache(entries)
	tables := make([]*routing.DurableTable, 0, len(cfg.Tables))
	for _, def := range cfg.Tables {
		t, err := routing.NewDurableTable(def, cfg.Hot, cfg.Archive, routing.Options{Fanout: cfg.Fanout, Cache: cache})
		if err != nil {
			return nil, fmt.Errorf("table %s: %w", def.Name, err)
		}
		tables = append(tables, t)
	}
	eng, err := query.New(tables, query.Options{Pushdown: cfg.Pushdown, Alloc: cfg.Alloc, Logger: cfg.Logger, MaxBuckets: cfg.MaxBuckets, QueryMemory: cfg.QueryMemory})
	if err != nil {
		return nil, err
	}
	fs, err := flightsql.NewServer(eng, flightsql.Config{TicketKey: cfg.TicketKey, Version: cfg.Version, Logger: cfg.Logger, Alloc: cfg.Alloc})
	if err != nil {
		return nil, err
	}
	srv := flight.NewServerWithMiddleware(nil,
		grpc.MaxRecvMsgSize(MaxRecvBytes),
		grpc.MaxHeaderListSize(1<<20),
	)
	srv.RegisterFlightService(actionGuard{arrowflightsql.NewFlightServerWithAllocator(fs, cfg.Alloc)})
	if err := srv.Init(cfg.Listen); err != nil {
		return nil, fmt.Errorf("listen on %s: %w", cfg.Listen, err)
	}
	s := &Server{flight: srv, Cache: cache, Engine: eng, addr: srv.Addr().String(), done: make(chan error, 1)}
	if cfg.MetricsListen != "" && cfg.MetricsHandler != nil {
		ln, err := net.Listen("tcp", cfg.MetricsListen)
		if err != nil {
			srv.Shutdown()
			return nil, fmt.Errorf("listen for metrics on %s: %w", cfg.MetricsListen, err)
		}
		mux := http.NewServeMux()
		mux.Handle("/metrics", cfg.MetricsHandler)
		s.metrics = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = s.metrics.Serve(ln) }()
	}
	go func() { s.done <- srv.Serve() }()
	return s, nil
}

// Addr returns the bound gRPC address host:port.
func (s *Server) Addr() string { return s.addr }

// Wait blocks until the server stops serving or ctx is done, then shuts it down.
func (s *Server) Wait(ctx context.Context) error {
	select {
	case err := <-s.done:
		return err
	case <-ctx.Done():
		s.Close()
		return nil
	}
}

// Close stops the server: in-flight calls are cancelled.
func (s *Server) Close() {
	s.flight.Shutdown()
	if s.metrics != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = s.metrics.Shutdown(ctx)
	}
}

// knownActions are the DoAction types the Flight SQL dispatcher handles.
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

// actionGuard answers UNIMPLEMENTED for action types the dispatcher does not know (arrow-go's
// dispatcher answers INVALID_ARGUMENT, and clients fall back only on UNIMPLEMENTED:
// flightsql-clients.md).
type actionGuard struct{ flight.FlightServer }

// servedActions are the actions ListActions advertises: the ones this server carries out
// (transactions and savepoints are dispatched but refused as UNIMPLEMENTED).
var servedActions = []*flight.ActionType{
	{Type: arrowflightsql.CreatePreparedStatementActionType, Description: "Creates a prepared statement (self-contained signed handle)."},
	{Type: arrowflightsql.CreatePreparedSubstraitPlanActionType, Description: "Creates a prepared statement from a Substrait plan."},
	{Type: arrowflightsql.ClosePreparedStatementActionType, Description: "Closes a prepared statement (idempotent)."},
	{Type: flight.SetSessionOptionsActionType, Description: "Sets session options (catalog, schema)."},
	{Type: flight.GetSessionOptionsActionType, Description: "Gets session options."},
	{Type: flight.CloseSessionActionType, Description: "Closes the session."},
}

// ListActions advertises only the actions the server carries out.
func (g actionGuard) ListActions(_ *flight.Empty, stream flight.FlightService_ListActionsServer) error {
	for _, a := range servedActions {
		if err := stream.Send(a); err != nil {
			return err
		}
	}
	return nil
}

func (g actionGuard) DoAction(cmd *flight.Action, stream flight.FlightService_DoActionServer) error {
	if !knownActions[cmd.GetType()] {
		return status.Error(codes.Unimplemented, "action type is not supported")
	}
	return g.FlightServer.DoAction(cmd, stream)
}
