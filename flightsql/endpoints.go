package flightsql

import (
	"context"
	"slices"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/flightsrv/flightsrv/internal/querylog"
)

// Fragment is one endpoint's share of a query, as the engine plans it: Spec is the engine's
// own description (its bucket group and the archived generations it is pinned to), sealed
// into the endpoint's ticket and handed back to FragmentEngine.ExecuteFragment by whichever
// replica serves the ticket; Immutable is set when the fragment reads archived buckets only
// (its rows cannot change until the archive does); Buckets is how many buckets it reads.
type Fragment struct {
	Spec      []byte
	Immutable bool
	Buckets   int
}

// FragmentEngine is the optional capability of an Engine that splits queries into
// fragments, one per endpoint (docs/architecture.md decision 9). Implementations are safe for
// concurrent use.
type FragmentEngine interface {
	// Fragments plans the query (as Execute would, with the same parameters) and returns
	// its fragments in result order: one when split is false, or when the query is not a
	// plain scan whose rows the buckets partition (aggregates, limits, sorts other than the
	// time order stay one fragment); otherwise one per group of buckets, whose results
	// concatenated in order are the query's result. Errors are Execute's.
	Fragments(ctx context.Context, sql string, substraitPlan []byte, params arrow.RecordBatch, split bool) ([]Fragment, error)
	// ExecuteFragment runs one fragment of the query (spec from Fragments) and returns its
	// result stream, whose schema equals Prepare's dataset schema. A fragment pinned to an
	// archived generation that has since been replaced fails with FAILED_PRECONDITION.
	ExecuteFragment(ctx context.Context, sql string, substraitPlan []byte, params arrow.RecordBatch, spec []byte) (array.RecordReader, error)
}

// OptionEndpoints is the session option choosing how a row-returning query's results are
// served: EndpointsSingle (one endpoint, what BI tools expect) or EndpointsMultiple (ordered
// endpoints, one per group of buckets, each fetchable from any replica). Its default is the
// server's (Config.MultiEndpoint, the --multi-endpoint flag).
const OptionEndpoints = "endpoints"

// Values of OptionEndpoints.
const (
	EndpointsSingle   = "single"
	EndpointsMultiple = "multiple"
)

// split reports whether the calling session asks for several endpoints.
func (s *Server) split(ctx context.Context) bool {
	return s.sessionString(ctx, OptionEndpoints) == EndpointsMultiple
}

// statementInfo plans q and returns its FlightInfo: one endpoint per fragment of the query,
// in result order (ordered = true), each with a ticket sealing q, the fragment, the session's
// IPC compression and an expiry. The endpoints of fragments that read archived buckets only
// carry the expiry as expiration_time (they may be fetched again, and renewed); the others
// carry none. Locations are the advertised addresses (Config.Advertise), or none.
func (s *Server) statementInfo(ctx context.Context, q Query, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	dataset, frags, err := s.plan(ctx, &q, s.split(ctx))
	if err != nil {
		return nil, err
	}
	// Every FlightInfo gets a query id of its own (the call's), shared by its endpoints, so
	// that CancelFlightInfo of one never cancels another execution of the same statement.
	if q.Nonce, err = queryNonce(ctx); err != nil {
		return nil, s.toStatus(err)
	}
	rec := querylog.FromContext(ctx)
	q.Trace = rec.TraceParent()
	if t := rec.Start(); !t.IsZero() {
		q.Planned = t.UnixNano()
	}
	info := &flight.FlightInfo{
		Schema:           flight.SerializeSchema(dataset, s.alloc),
		FlightDescriptor: desc,
		TotalRecords:     -1,
		TotalBytes:       -1,
		Ordered:          true,
	}
	expires := s.sign.now().Add(s.ticketTTL).Truncate(time.Second)
	for i, f := range frags {
		ep, err := s.endpoint(fragmentQuery(q, f, i, len(frags)), expires)
		if err != nil {
			return nil, s.toStatus(err)
		}
		info.Endpoint = append(info.Endpoint, ep)
	}
	return info, nil
}

// plan prepares q under the calling session (recording in q its analytical mode and IPC
// compression) and returns its dataset schema and its fragments in result order (one per
// endpoint; several only when split and the engine splits the query). Errors are gRPC
// statuses.
func (s *Server) plan(ctx context.Context, q *Query, split bool) (*arrow.Schema, []Fragment, error) {
	dataset, _, err := s.prepare(ctx, q)
	if err != nil {
		return nil, nil, err
	}
	if c := s.sessionString(ctx, OptionCompression); c != CompressionNone {
		q.Compression = c
	}
	frags := []Fragment{{}}
	if fe, ok := s.engine.(FragmentEngine); ok {
		params, err := s.decodeParams(q.Params)
		if err != nil {
			return nil, nil, s.toStatus(err)
		}
		frags, err = fe.Fragments(withSession(ctx, q.Analytical), q.SQL, q.Substrait, params, split)
		if params != nil {
			params.Release()
		}
		if err != nil {
			return nil, nil, s.toStatus(err)
		}
	}
	return dataset, frags, nil
}

// fragmentQuery returns q restricted to fragment f, endpoint i of n.
func fragmentQuery(q Query, f Fragment, i, n int) Query {
	q.Fragment, q.Immutable, q.Buckets = f.Spec, f.Immutable, f.Buckets
	q.Endpoint, q.Endpoints = i, n
	return q
}

// rotate returns locs starting at its i-th element (modulo its length), wrapping around: the
// locations of endpoint i. Clients try an endpoint's locations in order (ADBC's Flight SQL
// driver, arrow-go's), so the endpoints of one result spread over the replicas.
func rotate(locs []*flight.Location, i int) []*flight.Location {
	if len(locs) < 2 {
		return locs
	}
	i %= len(locs)
	return append(slices.Clone(locs[i:]), locs[:i]...)
}

// endpoint seals q as a ticket expiring at expires and returns its endpoint.
func (s *Server) endpoint(q Query, expires time.Time) (*flight.FlightEndpoint, error) {
	q.Expires = expires.Unix()
	h, err := s.sign.sealTicket(q)
	if err != nil {
		return nil, err
	}
	tkt, err := flightsql.CreateStatementQueryTicket(h)
	if err != nil {
		return nil, err
	}
	ep := &flight.FlightEndpoint{Ticket: &flight.Ticket{Ticket: tkt}, Location: rotate(s.locations, s.self+q.Endpoint)}
	if q.Immutable {
		ep.ExpirationTime = timestamppb.New(expires)
	}
	return ep, nil
}

// RenewFlightEndpoint extends the expiry of an endpoint whose rows cannot change (one that
// reads archived buckets only, so it carries expiration_time): the answer is the same
// endpoint with a new ticket expiring Config.TicketTTL from now. The ticket must be one of
// this keyring's and not yet expired (FAILED_PRECONDITION otherwise, as for an endpoint
// without expiration_time: its hot buckets are read at serving time and a retry may see
// other rows); a foreign or tampered ticket is INVALID_ARGUMENT.
func (s *Server) RenewFlightEndpoint(_ context.Context, req *flight.RenewFlightEndpointRequest) (*flight.FlightEndpoint, error) {
	q, ok, err := s.ticketQuery(req.GetEndpoint().GetTicket().GetTicket())
	if err == nil && !ok {
		err = errBadHandle
	}
	if err != nil {
		return nil, s.toStatus(err)
	}
	if !q.Immutable {
		return nil, status.Error(codes.FailedPrecondition, "only endpoints with an expiration_time (archived buckets only) can be renewed; run the query again")
	}
	ep, err := s.endpoint(q, s.sign.now().Add(s.ticketTTL).Truncate(time.Second))
	if err != nil {
		return nil, s.toStatus(err)
	}
	ep.AppMetadata = req.GetEndpoint().GetAppMetadata()
	return ep, nil
}

// flightInfo returns the FlightInfo of one endpoint carrying ticket (the metadata commands'),
// with the advertised locations.
func (s *Server) flightInfo(desc *flight.FlightDescriptor, schema *arrow.Schema, ticket []byte) *flight.FlightInfo {
	return &flight.FlightInfo{
		Schema:           flight.SerializeSchema(schema, s.alloc),
		FlightDescriptor: desc,
		Endpoint:         []*flight.FlightEndpoint{{Ticket: &flight.Ticket{Ticket: ticket}, Location: s.locations}},
		TotalRecords:     -1,
		TotalBytes:       -1,
		Ordered:          true,
	}
}
