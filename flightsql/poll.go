package flightsql

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/flightsrv/flightsrv/internal/auth"
	"github.com/flightsrv/flightsrv/internal/panics"
	"github.com/flightsrv/flightsrv/internal/querylog"
)

// This file is PollFlightInfo (Flight RPC; the Flight SQL server interface's
// PollFlightInfoStatement, PollFlightInfoSubstraitPlan and PollFlightInfoPreparedStatement)
// for long queries. The first PollFlightInfo plans the query as GetFlightInfo does (its
// fragments, one per endpoint) and runs it in the background on this process, one fragment
// after another, under admission control (Config.Admit: it waits for a query slot — the
// server's poll share of them, in a queue of its own — and runs under the query timeout) and the engine's per-query ledger; the result batches of
// each completed fragment are kept in memory and its endpoint is appended to the PollInfo's
// FlightInfo. Each answer carries the progress (the query's buckets read of its total, at most
// 0.99 until the last batch is kept, then 1.0), the rows and buckets so far in the FlightInfo's
// app_metadata (JSON: pollMetadata), a retry descriptor (signed with the keyring, domain
// "poll", carrying the query and the poll id) while the query runs, and the poll's expiration
// time. A poll nobody asks about for Config.PollTTL is abandoned: its run is cancelled and its
// batches dropped.
//
// The endpoints' tickets are ordinary statement tickets of the fragment marked Poll: the
// process that ran the poll serves them from the batches it keeps (no second read), any other
// replica — or this one once the poll expired — executes the fragment as for GetFlightInfo's
// tickets (pinned to the same archived generations, hot buckets read again). A retry
// descriptor that reaches a replica which does not know the poll (a load balancer sending the
// call elsewhere, a restart) starts the query again there under the same poll id, so its
// progress starts over. Kept batches are bounded by Config.PollMemory for all polls together:
// a fragment whose batches would pass it is not kept, and it and the fragments after it are
// listed at once as endpoints executed when fetched (the poll then completes early and its
// row count is unknown). CancelFlightInfo of a PollInfo's FlightInfo (even one without an
// endpoint yet: its flight_descriptor is the retry descriptor) cancels the run and drops the
// batches; the next poll answers CANCELLED.

// Defaults of Config.PollTTL and Config.PollMemory.
const (
	DefaultPollTTL    = 5 * time.Minute
	DefaultPollMemory = 256 << 20
)

// maxPolls bounds the polls one process keeps (running, finished or failed, until each
// expires); beyond it PollFlightInfo answers UNAVAILABLE.
const maxPolls = 10000

// pollMetadata is the JSON of a poll FlightInfo's app_metadata: how far the query is.
type pollMetadata struct {
	// BucketsDone of Buckets (the query's buckets) have been read so far.
	BucketsDone int `json:"buckets_done"`
	Buckets     int `json:"buckets"`
	// Rows is the number of result rows produced so far.
	Rows int64 `json:"rows"`
	// EndpointsDone of Endpoints are listed in the FlightInfo.
	EndpointsDone int `json:"endpoints_done"`
	Endpoints     int `json:"endpoints"`
	// Queued is true while the run waits for its query slot (Config.Admit: polls wait in a
	// queue of their own), false once it got one or ended.
	Queued bool `json:"queued"`
}

// polls is the registry of this process's polls by id, with the budget of the batches they
// keep. Safe for concurrent use.
type polls struct {
	budget int64 // bytes

	mu     sync.Mutex
	byID   map[string]*poll
	used   int64
	closed bool           // Server.Close: no poll starts any more
	runs   sync.WaitGroup // background runs; Add under mu while not closed
}

func newPolls(budget int64) *polls { return &polls{budget: budget, byID: map[string]*poll{}} }

// reserve takes n bytes of the budget, reporting whether they were available.
func (r *polls) reserve(n int64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.used+n > r.budget {
		return false
	}
	r.used += n
	return true
}

func (r *polls) unreserve(n int64) {
	r.mu.Lock()
	r.used -= n
	r.mu.Unlock()
}

func (r *polls) get(id []byte) *poll {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.byID[string(id)]
}

// results returns a reader over the batches kept for endpoint i of poll id, or nil when this
// process keeps none.
func (r *polls) results(id []byte, i int) array.RecordReader {
	p := r.get(id)
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if i < 0 || i >= len(p.results) || p.results[i] == nil {
		return nil
	}
	rdr, err := array.NewRecordReader(p.schema, p.results[i])
	if err != nil {
		return nil
	}
	return rdr
}

// poll is one query run in the background for PollFlightInfo.
type poll struct {
	q      Query // the query; Nonce is the poll id (the query id of its tickets)
	schema *arrow.Schema
	frags  []Fragment
	total  int // buckets of all fragments
	cancel context.CancelCauseFunc
	timer  *time.Timer

	mu          sync.Mutex
	endpoints   []*flight.FlightEndpoint
	results     [][]arrow.RecordBatch // per listed endpoint; nil when not kept
	bytes       int64                 // of the kept batches
	rows        int64
	rowsKnown   bool
	doneBuckets int
	running     *querylog.Record // the running fragment's record (its buckets read)
	runBuckets  int              // the running fragment's buckets
	progress    float64          // the last reported
	finished    bool
	admitted    bool  // the run got its query slot, or ended waiting
	closed      bool  // expired or cancelled: nothing is kept any more
	err         error // a gRPC status
	expires     time.Time
}

// PollFlightInfoStatement starts a CommandStatementQuery in the background and returns its
// first PollInfo.
func (s *Server) PollFlightInfoStatement(ctx context.Context, cmd flightsql.StatementQuery, _ *flight.FlightDescriptor) (*flight.PollInfo, error) {
	if len(cmd.GetTransactionId()) > 0 {
		return nil, errTransactions
	}
	return s.startPoll(ctx, Query{SQL: cmd.GetQuery()})
}

// PollFlightInfoSubstraitPlan starts a CommandStatementSubstraitPlan in the background.
func (s *Server) PollFlightInfoSubstraitPlan(ctx context.Context, cmd flightsql.StatementSubstraitPlan, _ *flight.FlightDescriptor) (*flight.PollInfo, error) {
	if len(cmd.GetTransactionId()) > 0 {
		return nil, errTransactions
	}
	p := cmd.GetPlan()
	if len(p.Plan) == 0 {
		return nil, status.Error(codes.InvalidArgument, "substrait plan is empty")
	}
	return s.startPoll(ctx, Query{Substrait: p.Plan})
}

// PollFlightInfoPreparedStatement starts a prepared statement (with its binding) in the
// background.
func (s *Server) PollFlightInfoPreparedStatement(ctx context.Context, cmd flightsql.PreparedStatementQuery, _ *flight.FlightDescriptor) (*flight.PollInfo, error) {
	q, err := s.resolve(cmd.GetPreparedStatementHandle())
	if err != nil {
		return nil, s.toStatus(err)
	}
	return s.startPoll(ctx, q)
}

// PollFlightInfo answers a retry descriptor of an earlier PollInfo: the poll's current
// PollInfo, or, on a replica that does not know the poll, the first PollInfo of the query
// started again under the same id. A descriptor past its expiry is FAILED_PRECONDITION; one
// that is not a retry descriptor of this keyring INVALID_ARGUMENT.
func (s *Server) PollFlightInfo(ctx context.Context, desc *flight.FlightDescriptor) (*flight.PollInfo, error) {
	q, err := s.openPollDescriptor(desc.GetCmd())
	if err != nil {
		return nil, err
	}
	if exp := time.Unix(q.Expires, 0); s.sign.now().After(exp.Add(auth.ClockSkew)) {
		return nil, status.Errorf(codes.FailedPrecondition, "the poll expired at %s; run the query again", exp.UTC().Format(time.RFC3339))
	}
	p := s.polls.get(q.Nonce)
	if p == nil {
		if p, err = s.newPoll(ctx, q); err != nil {
			return nil, err
		}
	}
	return s.pollInfo(p)
}

// openPollDescriptor opens a retry descriptor's command; errors are INVALID_ARGUMENT.
func (s *Server) openPollDescriptor(cmd []byte) (Query, error) {
	q, err := s.sign.openDomain(domainPoll, cmd)
	if err != nil || len(q.Nonce) == 0 {
		return q, status.Error(codes.InvalidArgument, "the descriptor is no retry descriptor of this server's polls")
	}
	return q, nil
}

// startPoll starts q under a new poll id.
func (s *Server) startPoll(ctx context.Context, q Query) (*flight.PollInfo, error) {
	// The poll id is the call's query id (its log line's), as a FlightInfo's query id is.
	var err error
	if q.Nonce, err = queryNonce(ctx); err != nil {
		return nil, s.toStatus(err)
	}
	q.Split = s.split(ctx)
	p, err := s.newPoll(ctx, q)
	if err != nil {
		return nil, err
	}
	return s.pollInfo(p)
}

// newPoll plans q under the calling session, registers its poll (q.Nonce) and starts its
// run in the background. When another call registered the same id meanwhile, that poll is
// returned.
func (s *Server) newPoll(ctx context.Context, q Query) (*poll, error) {
	schema, frags, err := s.plan(ctx, &q, q.Split)
	if err != nil {
		return nil, err
	}
	p := &poll{q: q, schema: schema, frags: frags, rowsKnown: true, expires: s.sign.now().Add(s.pollTTL)}
	for _, f := range frags {
		p.total += f.Buckets
	}
	s.polls.mu.Lock()
	if old := s.polls.byID[string(q.Nonce)]; old != nil {
		s.polls.mu.Unlock()
		return old, nil
	}
	if s.polls.closed {
		s.polls.mu.Unlock()
		return nil, status.Error(codes.Unavailable, "the server is shutting down; run the query again")
	}
	if len(s.polls.byID) >= maxPolls {
		s.polls.mu.Unlock()
		return nil, status.Errorf(codes.Unavailable, "too many polls kept (%d); retry later", maxPolls)
	}
	// The run outlives this call: it keeps the call's values (the user, the session) but
	// not its cancellation, and is registered under the poll id for CancelFlightInfo.
	rctx, done, err := s.running.start(context.WithoutCancel(ctx), q.Nonce)
	if err != nil {
		s.polls.mu.Unlock()
		return nil, err
	}
	rctx, p.cancel = context.WithCancelCause(rctx)
	s.polls.byID[string(q.Nonce)] = p
	// Set under p.mu, which expirePoll takes first: it never sees the timer unset.
	p.mu.Lock()
	p.timer = time.AfterFunc(s.pollTTL, func() { s.expirePoll(p) })
	p.mu.Unlock()
	s.polls.runs.Add(1)
	s.polls.mu.Unlock()
	go s.runPoll(rctx, p, done)
	return p, nil
}

// errPollExpired is the cancellation cause of an abandoned poll's run.
var errPollExpired = status.Error(codes.FailedPrecondition, "the poll expired; run the query again")

// expirePoll drops a poll nobody asked about for PollTTL (unless it was asked meanwhile).
func (s *Server) expirePoll(p *poll) {
	p.mu.Lock()
	if now := s.sign.now(); now.Before(p.expires) {
		p.timer.Reset(p.expires.Sub(now) + time.Second)
		p.mu.Unlock()
		return
	}
	p.mu.Unlock()
	s.polls.mu.Lock()
	if s.polls.byID[string(p.q.Nonce)] == p {
		delete(s.polls.byID, string(p.q.Nonce))
	}
	s.polls.mu.Unlock()
	s.closePoll(p, errPollExpired)
}

// closePoll cancels p's run with cause, releases the batches it keeps and records err as its
// outcome unless it had one.
func (s *Server) closePoll(p *poll, cause error) {
	p.cancel(cause)
	p.mu.Lock()
	defer p.mu.Unlock()
	s.dropResults(p)
	p.closed = true
	if p.err == nil && !p.finished {
		p.err = cause
	}
}

// dropResults releases p's kept batches and gives their bytes back; p.mu must be held.
func (s *Server) dropResults(p *poll) {
	for _, bs := range p.results {
		for _, b := range bs {
			b.Release()
		}
	}
	for i := range p.results {
		p.results[i] = nil
	}
	s.polls.unreserve(p.bytes)
	p.bytes = 0
}

// cancelPoll cancels the poll of query id on this process, if any: its run stops, its batches
// are dropped, and its next PollInfo is CANCELLED.
func (s *Server) cancelPoll(id []byte) {
	if p := s.polls.get(id); p != nil {
		s.closePoll(p, errCancelledTicket)
	}
}

// Close cancels every poll's run, waits for the runs to end, drops the batches they keep and
// closes the connections to the peers. The server starts no poll afterwards (UNAVAILABLE).
func (s *Server) Close() {
	defer s.peers.close()
	defer s.polls.runs.Wait()
	s.polls.mu.Lock()
	s.polls.closed = true
	all := make([]*poll, 0, len(s.polls.byID))
	for id, p := range s.polls.byID {
		all = append(all, p)
		delete(s.polls.byID, id)
	}
	s.polls.mu.Unlock()
	for _, p := range all {
		p.mu.Lock()
		p.timer.Stop()
		p.mu.Unlock()
		s.closePoll(p, status.Error(codes.Unavailable, "the server is shutting down; run the query again"))
	}
}

// runPoll runs p's fragments in order and keeps their batches; done unregisters the run.
func (s *Server) runPoll(ctx context.Context, p *poll, done func()) {
	defer s.polls.runs.Done()
	defer done()
	defer panics.Handle("poll", func(err error) { s.failPoll(p, ctx, err) })
	if s.admit != nil {
		actx, release, err := s.admit(ctx)
		p.mu.Lock()
		p.admitted = true
		p.mu.Unlock()
		if err != nil {
			s.failPoll(p, ctx, err)
			return
		}
		defer release()
		ctx = actx
	}
	for i, f := range p.frags {
		t := fragmentQuery(p.q, f, i, len(p.frags))
		rec := &querylog.Record{}
		p.mu.Lock()
		p.running, p.runBuckets = rec, f.Buckets
		p.mu.Unlock()
		rdr, err := s.execute(querylog.NewContext(ctx, rec), t)
		if err != nil {
			s.failPoll(p, ctx, err)
			return
		}
		var (
			kept []arrow.RecordBatch
			size int64
			keep = true
		)
		for rdr.Next() {
			b := rdr.RecordBatch()
			p.mu.Lock()
			p.rows += b.NumRows()
			p.mu.Unlock()
			n := batchBytes(b)
			if !s.polls.reserve(n) {
				keep = false
				break
			}
			b.Retain()
			kept, size = append(kept, b), size+n
		}
		err = rdr.Err()
		rdr.Release()
		if !keep || err != nil {
			for _, b := range kept {
				b.Release()
			}
			s.polls.unreserve(size)
		}
		if err != nil && keep {
			s.failPoll(p, ctx, err)
			return
		}
		if !s.listEndpoints(p, i, kept, size, keep) || !keep {
			return
		}
	}
	p.mu.Lock()
	p.finished, p.running = true, nil
	p.mu.Unlock()
}

// listEndpoints appends endpoint i of p, whose batches kept (size bytes) are served by this
// process, or, when keep is false, endpoints i… at once, executed when fetched (p then
// finishes). It reports false when p was closed meanwhile (kept is released then).
func (s *Server) listEndpoints(p *poll, i int, kept []arrow.RecordBatch, size int64, keep bool) bool {
	expires := s.sign.now().Add(s.ticketTTL).Truncate(time.Second)
	last := i
	if !keep {
		last = len(p.frags) - 1
	}
	var eps []*flight.FlightEndpoint
	for j := i; j <= last; j++ {
		t := fragmentQuery(p.q, p.frags[j], j, len(p.frags))
		t.Poll = keep
		ep, err := s.endpoint(t, expires)
		if err != nil {
			s.failPoll(p, context.Background(), err)
			return false
		}
		eps = append(eps, ep)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		for _, b := range kept {
			b.Release()
		}
		s.polls.unreserve(size)
		return false
	}
	p.endpoints = append(p.endpoints, eps...)
	if keep {
		p.results = append(p.results, kept)
		p.bytes += size
		p.doneBuckets += p.frags[i].Buckets
	} else {
		for range eps {
			p.results = append(p.results, nil)
		}
		p.rowsKnown = false
		p.finished, p.doneBuckets = true, p.total
	}
	p.running = nil
	return true
}

// failPoll records the error of p's run as the poll's outcome (a gRPC status: of the run's
// cancellation cause when it has one, such as CancelFlightInfo's or the query timeout's) and
// drops its batches.
func (s *Server) failPoll(p *poll, ctx context.Context, err error) {
	if cause := context.Cause(ctx); cause != nil && cause != ctx.Err() {
		err = cause // the run's own cause (CancelFlightInfo's, the query timeout's)
	}
	err = s.toStatus(err)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err == nil {
		p.err = err
	}
	p.running = nil
	s.dropResults(p)
}

// pollInfo returns p's current PollInfo and extends its expiry, or its run's error.
func (s *Server) pollInfo(p *poll) (*flight.PollInfo, error) {
	now := s.sign.now()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != nil {
		return nil, p.err
	}
	p.expires = now.Add(s.pollTTL)
	retry := p.q
	retry.Expires = p.expires.Unix()
	cmd, err := s.sign.sealDomain(domainPoll, retry)
	if err != nil {
		return nil, s.toStatus(err)
	}
	desc := &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: cmd}
	done := p.doneBuckets
	if p.running != nil {
		hot, archive := p.running.Buckets()
		done += min(hot+archive, p.runBuckets)
	}
	progress := 1.0
	switch {
	case p.finished:
	case p.total > 0:
		progress = min(float64(done)/float64(p.total), 0.99)
	default:
		progress = min(float64(len(p.endpoints))/float64(len(p.frags)), 0.99)
	}
	progress = max(progress, p.progress)
	p.progress = progress
	meta, err := json.Marshal(pollMetadata{BucketsDone: done, Buckets: p.total, Rows: p.rows, EndpointsDone: len(p.endpoints), Endpoints: len(p.frags), Queued: s.admit != nil && !p.admitted})
	if err != nil {
		return nil, s.toStatus(err)
	}
	info := &flight.FlightInfo{
		Schema:           flight.SerializeSchema(p.schema, s.alloc),
		FlightDescriptor: desc,
		Endpoint:         slices.Clone(p.endpoints),
		TotalRecords:     -1,
		TotalBytes:       -1,
		Ordered:          true,
		AppMetadata:      meta,
	}
	pi := &flight.PollInfo{Info: info, Progress: &progress, ExpirationTime: timestamppb.New(p.expires)}
	if p.finished {
		if p.rowsKnown {
			info.TotalRecords = p.rows
		}
	} else {
		pi.FlightDescriptor = desc
	}
	return pi, nil
}

// pollID returns the poll id of a FlightInfo's descriptor when it is a retry descriptor of
// this keyring (CancelFlightInfo of a poll without endpoints yet).
func (s *Server) pollID(desc *flight.FlightDescriptor) ([]byte, bool) {
	if desc.GetType() != flight.DescriptorCMD {
		return nil, false
	}
	q, err := s.openPollDescriptor(desc.GetCmd())
	if err != nil {
		return nil, false
	}
	return q.Nonce, true
}

// batchBytes returns the bytes of b's buffers (children and dictionaries included); shared
// buffers count once per reference.
func batchBytes(b arrow.RecordBatch) int64 {
	var n int64
	var add func(d arrow.ArrayData)
	add = func(d arrow.ArrayData) {
		if d == nil {
			return
		}
		for _, buf := range d.Buffers() {
			if buf != nil {
				n += int64(buf.Len())
			}
		}
		for _, c := range d.Children() {
			add(c)
		}
		if dict, ok := d.Dictionary().(*array.Data); ok && dict != nil {
			add(dict)
		}
	}
	for _, c := range b.Columns() {
		add(c.Data())
	}
	return n
}
