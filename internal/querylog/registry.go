package querylog

import (
	"context"
	"sort"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// This file keeps what the operator sees of the queries a replica runs (issue 20): the time to
// a query's first batch and its bytes sent (the finished-query log line and the
// flightsrv.query.first_batch histogram), and the Registry of running and recent queries that
// `SELECT … FROM flightsrv.queries` lists and flightsrv.cancel_query cancels.

// SetUser records the authenticated user of the call ("" without authentication); the
// server's interceptor after authentication sets it.
func (r *Record) SetUser(user string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	r.user = user
	r.mu.Unlock()
}

// User returns the call's user ("" when none, or on a nil *Record).
func (r *Record) User() string {
	if r == nil {
		return ""
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.user
}

// MarkFirstBatch records that the call's first record batch was written to the client, now
// (later calls do nothing): the query's time to first batch, from the start of its logical
// query (a DoGet's: the GetFlightInfo that planned it, its ticket's TicketInfo.Planned, which
// another replica's clock may have read: a skew below a nanosecond's worth is clamped; other
// calls: their own start).
func (r *Record) MarkFirstBatch() {
	if r != nil && r.firstBatch.Load() == 0 {
		r.firstBatch.CompareAndSwap(0, max(1, int64(time.Since(r.origin()))))
	}
}

// FirstBatch returns the time from the start of the call's logical query (MarkFirstBatch) to
// the call's first record batch written, and whether one was.
func (r *Record) FirstBatch() (time.Duration, bool) {
	if r == nil {
		return 0, false
	}
	d := r.firstBatch.Load()
	return time.Duration(d), d > 0
}

// AddBytes adds n bytes of Flight data messages sent to the client (IPC header and body).
func (r *Record) AddBytes(n int64) {
	if r != nil {
		r.bytes.Add(n)
	}
}

// SetQueued records how long the call waited for an admission slot before it ran.
func (r *Record) SetQueued(d time.Duration) {
	if r != nil {
		r.queued.Store(int64(d))
	}
}

// errCancelQuery is the status a query cancelled by Registry.Cancel ends with.
var errCancelQuery = status.Error(codes.Canceled, "query was cancelled (flightsrv.cancel_query)")

// Query states in QueryInfo.State.
const (
	StateRunning  = "running"
	StateFinished = "finished"
	StateFailed   = "failed"
)

// QueryInfo is one call of a query as flightsrv.queries lists it: the query id (shared by a
// query's GetFlightInfo and DoGet calls), the user ("" without authentication), the client's
// address (host:port as this process sees it), the gRPC
// method (GetFlightInfo plans, DoGet executes), the Flight SQL command and statement kind
// (fixed words), the state (StateRunning, StateFinished or StateFailed), the start (UTC), the
// admission wait, the time to the first batch (FirstBatchSet false before one), the end (zero
// while running), the rows and bytes sent, the buckets read per tier, the gRPC code's name
// ("" while running) and the SQL text (only when the server logs statements: --log-statements).
type QueryInfo struct {
	ID, User, Client, RPC, Command, Statement, State, Code, SQL string
	Start, End                                                  time.Time
	Queued, FirstBatch                                          time.Duration
	FirstBatchSet                                               bool
	Rows, Bytes                                                 int64
	HotBuckets, ArchiveBuckets                                  int
}

// info returns the record's QueryInfo; code and end are set once the call ended.
func (r *Record) info(rpc string) QueryInfo {
	id, command, statement, hot, archive := r.snapshot()
	fb, ok := r.FirstBatch()
	r.mu.Lock()
	q := QueryInfo{ID: id, User: r.user, Client: r.client, RPC: rpc, Command: command, Statement: statement, SQL: r.sql,
		Start: r.start.UTC(), Queued: time.Duration(r.queued.Load()), FirstBatch: fb, FirstBatchSet: ok,
		Rows: r.rows.Load(), Bytes: r.bytes.Load(), HotBuckets: hot, ArchiveBuckets: archive, State: StateRunning}
	r.mu.Unlock()
	return q
}

// RecentQueries is how many ended query calls a Registry keeps.
const RecentQueries = 256

// Registry lists the query calls of this process: those running, and the last RecentQueries
// that ended. A call is a query's when the engine or its ticket named a statement kind
// (Record.SetStatement): planning (GetFlightInfo, GetSchema, CreatePreparedStatement) and
// execution (DoGet) calls, each listed under the query's id. Safe for concurrent use; the
// zero value is not usable, NewRegistry makes one.
type Registry struct {
	mu      sync.Mutex
	running map[*Record]runningCall
	recent  []QueryInfo // ring, oldest first once full
	next    int
}

type runningCall struct {
	rpc    string
	cancel context.CancelCauseFunc
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{running: map[*Record]runningCall{}}
}

// start registers a running call.
func (g *Registry) start(r *Record, rpc string, cancel context.CancelCauseFunc) {
	if g == nil {
		return
	}
	g.mu.Lock()
	g.running[r] = runningCall{rpc: rpc, cancel: cancel}
	g.mu.Unlock()
}

// end moves a call to the recent ones (when it was a query's) with its code.
func (g *Registry) end(r *Record, code codes.Code, at time.Time) {
	if g == nil {
		return
	}
	g.mu.Lock()
	call, ok := g.running[r]
	delete(g.running, r)
	g.mu.Unlock()
	if !ok || r.Statement() == "" {
		return
	}
	q := r.info(call.rpc)
	q.End, q.Code, q.State = at.UTC(), code.String(), StateFinished
	if code != codes.OK {
		q.State = StateFailed
	}
	g.mu.Lock()
	if len(g.recent) < RecentQueries {
		g.recent = append(g.recent, q)
	} else {
		g.recent[g.next] = q
		g.next = (g.next + 1) % RecentQueries
	}
	g.mu.Unlock()
}

// Queries returns the running query calls (oldest first) and then the recent ones (newest
// first).
func (g *Registry) Queries() []QueryInfo {
	g.mu.Lock()
	running := make(map[*Record]string, len(g.running))
	for r, c := range g.running {
		running[r] = c.rpc
	}
	recent := make([]QueryInfo, 0, len(g.recent))
	for i := range g.recent {
		recent = append(recent, g.recent[(g.next+len(g.recent)-1-i)%len(g.recent)])
	}
	g.mu.Unlock()
	var out []QueryInfo
	for r, rpc := range running {
		if r.Statement() != "" {
			out = append(out, r.info(rpc))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Start.Before(out[j].Start) })
	return append(out, recent...)
}

// Cancel cancels every running call of query id on this process (its DoGet streams end with
// CANCELLED, its work stops) and returns how many it cancelled.
func (g *Registry) Cancel(id string) int {
	g.mu.Lock()
	var cancels []context.CancelCauseFunc
	for r, c := range g.running {
		if r.ID() == id && r.Statement() != "" {
			cancels = append(cancels, c.cancel)
		}
	}
	g.mu.Unlock()
	for _, c := range cancels {
		c(errCancelQuery)
	}
	return len(cancels)
}
