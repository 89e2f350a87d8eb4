package flightsql

import (
	"context"
	"crypto/sha256"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
)

// Bounds of the remembered cancellations: a ticket cancelled before (or while) its DoGet runs
// is refused for cancelledTTL, and at most maxCancelled tickets are remembered.
const (
	cancelledTTL = 10 * time.Minute
	maxCancelled = 10000
)

// errCancelledTicket is the status of a DoGet whose ticket was cancelled (CancelFlightInfo).
var errCancelledTicket = status.Error(codes.Canceled, "query was cancelled (CancelFlightInfo)")

// running is the registry of the DoGet streams in flight by query id (the id every endpoint
// ticket of one FlightInfo shares), for CancelFlightInfo: cancelling a query cancels the
// context of every stream serving one of its endpoints, which stops the query's work (the
// engine's readers stop when their context is done), and refuses later DoGets of its
// tickets for a while. Safe for concurrent use.
type running struct {
	now func() time.Time

	mu        sync.Mutex
	streams   map[[sha256.Size]byte]map[*runningStream]struct{}
	cancelled map[[sha256.Size]byte]time.Time // ticket → when it was cancelled
}

type runningStream struct{ cancel context.CancelCauseFunc }

func newRunning() *running {
	return &running{now: time.Now, streams: map[[sha256.Size]byte]map[*runningStream]struct{}{}, cancelled: map[[sha256.Size]byte]time.Time{}}
}

// start registers a stream serving query id and returns its context (cancelled by cancel or
// when ctx ends) and the function that unregisters it. It returns errCancelledTicket when the
// query was cancelled already.
func (r *running) start(ctx context.Context, id []byte) (context.Context, func(), error) {
	key := sha256.Sum256(id)
	ctx, cancel := context.WithCancelCause(ctx)
	rs := &runningStream{cancel: cancel}
	r.mu.Lock()
	if at, ok := r.cancelled[key]; ok && r.now().Sub(at) < cancelledTTL {
		r.mu.Unlock()
		cancel(nil)
		return nil, nil, errCancelledTicket
	}
	set := r.streams[key]
	if set == nil {
		set = map[*runningStream]struct{}{}
		r.streams[key] = set
	}
	set[rs] = struct{}{}
	r.mu.Unlock()
	return ctx, func() {
		r.mu.Lock()
		delete(set, rs)
		if len(set) == 0 && r.streams[key] != nil && len(r.streams[key]) == 0 {
			delete(r.streams, key)
		}
		r.mu.Unlock()
		cancel(nil)
	}, nil
}

// cancel cancels every stream serving query id and remembers the query as cancelled. It
// reports whether a stream was running.
func (r *running) cancel(id []byte) bool {
	key := sha256.Sum256(id)
	now := r.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.cancelled) >= maxCancelled {
		for k, at := range r.cancelled {
			if now.Sub(at) >= cancelledTTL || len(r.cancelled) >= maxCancelled {
				delete(r.cancelled, k)
			}
		}
	}
	r.cancelled[key] = now
	set := r.streams[key]
	for rs := range set {
		rs.cancel(errCancelledTicket)
	}
	return len(set) > 0
}

// CancelFlightInfo cancels the query of a FlightInfo this server issued, on every replica:
// the DoGet streams serving its endpoints' tickets stop (their clients see CANCELLED) and
// release their work, a ticket not fetched yet is refused with CANCELLED when it is, and a
// poll of the query (PollFlightInfo; its FlightInfo may have no endpoint yet, its descriptor
// names the poll) stops and answers CANCELLED. The receiving replica cancels what runs on
// this process and forwards the request to its peers (Config.Peers, forwardCancel), which do
// the same without forwarding further; it answers once they have answered or
// peerCancelTimeout has passed. Every ticket must be one of this keyring's (signed): a
// foreign FlightInfo is INVALID_ARGUMENT. The answer is CANCEL_STATUS_CANCELLED, or
// NOT_CANCELLABLE for the FlightInfo of a metadata command (answered at once).
func (s *Server) CancelFlightInfo(ctx context.Context, req *flight.CancelFlightInfoRequest) (flight.CancelFlightInfoResult, error) {
	eps := req.GetInfo().GetEndpoint()
	var ids [][]byte
	if id, ok := s.pollID(req.GetInfo().GetFlightDescriptor()); ok {
		ids = append(ids, id)
	} else if len(eps) == 0 {
		return flight.CancelFlightInfoResult{Status: flight.CancelStatusUnspecified}, status.Error(codes.InvalidArgument, "the FlightInfo to cancel has no endpoint")
	}
	for _, ep := range eps {
		q, ok, err := s.cancelQuery(ep.GetTicket().GetTicket())
		if err == nil && !ok {
			// A metadata command's ticket is the command itself: answered at once, nothing
			// to cancel. Anything else is no ticket of this server.
			var a anypb.Any
			if proto.Unmarshal(ep.GetTicket().GetTicket(), &a) != nil || !strings.HasPrefix(a.GetTypeUrl(), "type.googleapis.com/arrow.flight.protocol.sql.") {
				err = errBadHandle
			} else {
				return flight.CancelFlightInfoResult{Status: flight.CancelStatusNotCancellable}, nil
			}
		}
		if err != nil {
			return flight.CancelFlightInfoResult{Status: flight.CancelStatusUnspecified}, s.toStatus(err)
		}
		ids = append(ids, q.Nonce)
	}
	for _, id := range ids {
		s.running.cancel(id)
		s.cancelPoll(id)
	}
	if !isForwarded(ctx) {
		s.peers.forwardCancel(ctx, req, s.log)
	}
	return flight.CancelFlightInfoResult{Status: flight.CancelStatusCancelled}, nil
}
