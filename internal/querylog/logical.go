package querylog

import (
	"context"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
)

// This file measures a query as one logical query (issue 20): from the start of the
// GetFlightInfo call that planned it to the first batch of its first DoGet (time to first
// batch) and to the last byte of its last DoGet (latency), across the calls a client makes.
// A ticket carries its GetFlightInfo's start (TicketInfo.Planned) and its endpoint's position,
// so the DoGets can measure from it on any replica; the replica that streams the last of a
// query's endpoints records the query once (logicalQueries).

// Start returns when the call started (the time its interceptor drew its record), the zero
// time on a nil *Record: a GetFlightInfo's start is sealed into its tickets as the logical
// query's start.
func (r *Record) Start() time.Time {
	if r == nil {
		return time.Time{}
	}
	return r.start
}

// origin returns when the call's logical query started: the GetFlightInfo's start its ticket
// carries, or the call's own start (a call that is a whole query, or a ticket without one).
func (r *Record) origin() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.planned.IsZero() {
		return r.planned
	}
	return r.start
}

// logicalIdle is how long a multi-endpoint query waits, after its last DoGet here ended, for
// its other endpoints before this replica records what it streamed of it: the endpoints a
// client fetched from another replica are recorded there (each replica records its share).
const logicalIdle = 5 * time.Minute

// maxLogical bounds the multi-endpoint queries waiting for their other endpoints; beyond it
// the least recently active is recorded as it stands.
const maxLogical = 4096

// logicalQueries gathers the DoGets of multi-endpoint queries by query id until every
// endpoint of a query ended here (or it waited logicalIdle). Safe for concurrent use.
type logicalQueries struct {
	mu    sync.Mutex
	byID  map[string]*logicalQuery
	swept time.Time
}

// logicalQuery is what the ended DoGets of one query said so far.
type logicalQuery struct {
	statement string
	planned   time.Time
	endpoints int
	done      map[int]bool
	first     time.Duration // the earliest first batch since planned; 0: none yet
	code      codes.Code    // the first code other than OK, else OK
	last      time.Time     // when the latest DoGet ended
}

// LogicalQuery is one logical query as the metrics record it: its statement kind, its code
// (the first not OK among its calls, else OK), its latency from the GetFlightInfo's start to
// the end of its last DoGet, and its time to first batch (HasFirst false when it sent none).
type LogicalQuery struct {
	Statement string
	Code      codes.Code
	Latency   time.Duration
	First     time.Duration
	HasFirst  bool
}

// endCall takes one ended query call and returns the logical queries it completes: a call
// that is a whole query (endpoints ≤ 1) completes its own; the DoGet of one endpoint of
// several completes its query when every endpoint ended here; queries waiting longer than
// logicalIdle come out as they stand.
func (g *logicalQueries) endCall(id, statement string, planned time.Time, endpoint, endpoints int, code codes.Code, first time.Duration, hasFirst bool, now time.Time) []LogicalQuery {
	var out []LogicalQuery
	if endpoints <= 1 {
		out = append(out, LogicalQuery{Statement: statement, Code: code, Latency: max(0, now.Sub(planned)), First: first, HasFirst: hasFirst})
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if endpoints > 1 {
		out = append(out, g.endEndpoint(id, statement, planned, endpoint, endpoints, code, first, hasFirst, now)...)
	}
	if len(g.byID) > 0 && (now.Sub(g.swept) > time.Minute || len(g.byID) > maxLogical) {
		g.swept = now
		var oldest string
		for k, w := range g.byID {
			if now.Sub(w.last) > logicalIdle {
				delete(g.byID, k)
				out = append(out, w.logical())
			} else if oldest == "" || w.last.Before(g.byID[oldest].last) {
				oldest = k
			}
		}
		if len(g.byID) > maxLogical {
			out = append(out, g.byID[oldest].logical())
			delete(g.byID, oldest)
		}
	}
	return out
}

// endEndpoint adds the end of one endpoint's DoGet to its query (g.mu held) and returns the
// query when that was its last endpoint.
func (g *logicalQueries) endEndpoint(id, statement string, planned time.Time, endpoint, endpoints int, code codes.Code, first time.Duration, hasFirst bool, now time.Time) []LogicalQuery {
	if g.byID == nil {
		g.byID = map[string]*logicalQuery{}
	}
	q := g.byID[id]
	if q == nil {
		q = &logicalQuery{statement: statement, planned: planned, endpoints: endpoints, done: map[int]bool{}, code: codes.OK}
		g.byID[id] = q
	}
	q.done[endpoint] = true
	q.last = now
	if code != codes.OK && q.code == codes.OK {
		q.code = code
	}
	if hasFirst && (q.first == 0 || first < q.first) {
		q.first = first
	}
	if len(q.done) < q.endpoints {
		return nil
	}
	delete(g.byID, id)
	return []LogicalQuery{q.logical()}
}

func (q *logicalQuery) logical() LogicalQuery {
	return LogicalQuery{Statement: q.statement, Code: q.code, Latency: max(0, q.last.Sub(q.planned)), First: q.first, HasFirst: q.first > 0}
}

// endLogical records what the call that ended completes of its logical query (logical.go):
// a planning call's refusal (its query never streams), a DoGet of a query ticket, a whole
// query's DoGet of a prepared statement, or the DoPut of an INSERT or an ingest.
func (l *callLogger) endLogical(ctx context.Context, rec *Record, rpc, statement string, code codes.Code, now time.Time) {
	if statement == "" || l.metrics == nil {
		return
	}
	switch rpc {
	case "GetFlightInfo", "PollFlightInfo", "GetSchema":
		if code == codes.OK {
			return // its DoGets end the query
		}
	case "DoGet":
	case "DoPut":
		if statement != "INSERT" && statement != StatementIngest {
			return // a prepared query's parameter binding: its DoGet is the query
		}
	default:
		return
	}
	first, hasFirst := rec.FirstBatch()
	rec.mu.Lock()
	planned, endpoint, endpoints, id := rec.planned, rec.endpoint, rec.endpoints, rec.id
	rec.mu.Unlock()
	if planned.IsZero() {
		planned = rec.start
	}
	for _, q := range l.logical.endCall(id, statement, planned, endpoint, endpoints, code, first, hasFirst, now) {
		l.metrics.query(ctx, q)
	}
}
