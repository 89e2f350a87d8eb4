package flightsql

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/flightsrv/flightsrv/internal/auth"
)

// Query is what a statement or prepared-statement handle carries: exactly one of SQL text or a
// serialized Substrait plan, and optionally the bound parameters as an Arrow IPC stream of one
// row. A ticket carries the same and, in addition, its endpoint's fragment of the query and
// an expiry.
type Query struct {
	SQL       string `json:"sql,omitempty"`
	Substrait []byte `json:"substrait,omitempty"`
	Params    []byte `json:"params,omitempty"`
	// Nonce makes every prepared-statement handle unique, so that bindings remembered for
	// one client's handle are never seen by another client preparing the same SQL. In a
	// ticket it is the query id that every endpoint of one FlightInfo shares: cancellation and
	// progress are per query id, and it is the query_id of the GetFlightInfo call's log
	// lines and span (internal/querylog), which its DoGet calls take over.
	Nonce []byte `json:"nonce,omitempty"`
	// Compression is the IPC compression of the result stream (OptionCompression), taken
	// from the session at GetFlightInfo; empty means none.
	Compression string `json:"compression,omitempty"`
	// Analytical is the session's analytical mode (OptionAnalytical) at GetFlightInfo or
	// CreatePreparedStatement: a query without a partition pin was planned under it, so its
	// DoGet runs under it on any replica.
	Analytical bool `json:"analytical,omitempty"`
	// Statement is the statement kind the engine recorded when it planned the query
	// (internal/querylog: SELECT, EXPLAIN, SUBSTRAIT), a fixed word: the log line of a DoGet
	// refused before it runs names it (Server.TicketQuery).
	Statement string `json:"stmt,omitempty"`
	// Declared is set when SQL declares the types of Params' fields (ParameterTyper): it was
	// rewritten from the client's statement when planned with this binding, so executing it
	// with the binding declares nothing again.
	Declared bool `json:"decl,omitempty"`

	// The fields below are set in tickets only.

	// Fragment is the engine's description of the endpoint's share of the query (its bucket
	// group and the archived generations it is pinned to: FragmentEngine), opaque here; empty
	// means the whole query, unpinned.
	Fragment []byte `json:"fragment,omitempty"`
	// Endpoint is the endpoint's position in the FlightInfo (0-based) and Endpoints their
	// number.
	Endpoint  int `json:"ep,omitempty"`
	Endpoints int `json:"eps,omitempty"`
	// Buckets is the number of buckets the endpoint reads (0: unknown), for progress.
	Buckets int `json:"buckets,omitempty"`
	// Immutable is set when the endpoint reads archived buckets only: it may be fetched
	// again for the same rows until it expires, and renewed (RenewFlightEndpoint).
	Immutable bool `json:"immutable,omitempty"`
	// Trace is the W3C traceparent of the GetFlightInfo call that issued the ticket
	// (internal/querylog Record.TraceParent; "" when none): the span of the ticket's DoGet,
	// on any replica, is its child, so one query is one trace.
	Trace string `json:"tp,omitempty"`
	// Planned is when the GetFlightInfo call that issued the ticket started (Unix ns UTC, as
	// the planning replica's clock read it; 0 when none): every DoGet of the query, on any
	// replica, measures the query's time to first batch and latency from it
	// (internal/querylog TicketInfo.Planned).
	Planned int64 `json:"t0,omitempty"`
	// Expires is the ticket's (or poll descriptor's) expiry, Unix seconds UTC.
	Expires int64 `json:"exp,omitempty"`
	// Poll is set in the tickets of a poll's endpoints: the replica that ran the poll serves
	// them from the batches it keeps (poll.go); any other executes the fragment.
	Poll bool `json:"poll,omitempty"`
	// Split is set in a poll descriptor when the session asked for several endpoints
	// (OptionEndpoints), so that a replica restarting the poll plans it alike.
	Split bool `json:"split,omitempty"`
}

// Signed payloads: a version byte, the length of the key id and the key id, the JSON body,
// and the HMAC-SHA256 of everything before it under the keyring's subkey for the payload's
// domain (auth.Keyring.Sign). Handles and tickets are signed in different domains, so that
// one never passes for the other.
const (
	handleVersion = 2
	domainHandle  = "handle"
	domainTicket  = "ticket"
	domainPoll    = "poll"
	sigSize       = 32
)

// errBadHandle is returned for a handle or ticket that is malformed, of another version,
// signed by a key the keyring does not hold, or tampered with. The cause is not told apart.
var errBadHandle = errors.New("flightsql: invalid or foreign statement handle (malformed, tampered with, or signed with another keyring: replicas must share --keyring)")

// errForeignKey is the errBadHandle of a well-formed handle or ticket signed by a key id this
// server's keyring does not hold: a replica without the shared keyring, or a key removed
// from it. It says so (errors.Is matches errBadHandle), naming no key.
var errForeignKey = fmt.Errorf("%w: its key is not in this server's keyring (every replica must be given the same --keyring file; a key removed from it stops verifying)", errBadHandle)

// ticketExpiredError is the error of a ticket past its expiry: FAILED_PRECONDITION, naming
// the expiry only.
func ticketExpiredError(at time.Time) error {
	return status.Errorf(codes.FailedPrecondition, "the ticket expired at %s; renew its endpoint (RenewFlightEndpoint) before it expires, or run the query again",
		at.UTC().Format(time.RFC3339))
}

// signer seals and opens handles and tickets with a keyring: the active key signs, every key
// of the keyring verifies (replicas sharing the keyring file serve each other's tickets, and a
// rotated-out key keeps verifying until removed). Safe for concurrent use.
type signer struct {
	ring *auth.Keyring
	now  func() time.Time
}

// newSigner returns a signer over ring; a nil ring gets a random key (handles and tickets
// then verify on this process only).
func newSigner(ring *auth.Keyring, now func() time.Time) (*signer, error) {
	if ring == nil {
		var err error
		if ring, err = auth.RandomKeyring(); err != nil {
			return nil, fmt.Errorf("generate ticket key: %w", err)
		}
	}
	if now == nil {
		now = time.Now
	}
	return &signer{ring: ring, now: now}, nil
}

func (s *signer) sealDomain(domain string, q Query) ([]byte, error) {
	body, err := json.Marshal(q)
	if err != nil {
		return nil, err
	}
	kid := s.ring.ActiveID()
	out := make([]byte, 0, 2+len(kid)+len(body)+sigSize)
	out = append(out, handleVersion, byte(len(kid)))
	out = append(out, kid...)
	out = append(out, body...)
	_, sig := s.ring.Sign(domain, out)
	return append(out, sig...), nil
}

func (s *signer) openDomain(domain string, h []byte) (Query, error) {
	var q Query
	return s.openInto(domain, h, &q, &q)
}

// openHeader is openDomain without decoding the ticket's fragment (its bucket group and
// pins: most of a ticket's bytes, 1,374 pins in bench's BenchmarkGroupedCount), for callers
// that read the query's identity only: the call logger's TicketQuery and CancelFlightInfo,
// which open every DoGet's ticket once before ServeDoGet opens it whole. The returned Query's
// Fragment is nil.
func (s *signer) openHeader(domain string, h []byte) (Query, error) {
	var q Query
	header := struct {
		*Query
		Fragment skipped `json:"fragment,omitempty"` // shadows Query.Fragment
	}{Query: &q}
	return s.openInto(domain, h, &q, &header)
}

// skipped is a JSON value left undecoded: json still finds its end, without copying it.
type skipped struct{}

// UnmarshalJSON implements json.Unmarshaler by ignoring the value.
func (*skipped) UnmarshalJSON([]byte) error { return nil }

// openInto verifies h in domain and decodes its body into dst, which fills q.
func (s *signer) openInto(domain string, h []byte, q *Query, dst any) (Query, error) {
	if len(h) < 2+sigSize || h[0] != handleVersion || len(h) < 2+int(h[1])+sigSize {
		return Query{}, errBadHandle
	}
	msg, sig := h[:len(h)-sigSize], h[len(h)-sigSize:]
	kid := string(msg[2 : 2+int(msg[1])])
	if err := s.ring.Verify(domain, kid, msg, sig); err != nil {
		if errors.Is(err, auth.ErrUnknownKey) {
			return Query{}, errForeignKey
		}
		return Query{}, errBadHandle
	}
	if err := json.Unmarshal(msg[2+int(msg[1]):], dst); err != nil {
		return Query{}, errBadHandle
	}
	if (q.SQL == "") == (len(q.Substrait) == 0) {
		return Query{}, errBadHandle
	}
	return *q, nil
}

// seal signs a prepared-statement handle (it does not expire: a client keeps it for as long
// as it keeps the statement).
func (s *signer) seal(q Query) ([]byte, error) { return s.sealDomain(domainHandle, q) }

// open verifies a prepared-statement handle; errors are errBadHandle.
func (s *signer) open(h []byte) (Query, error) { return s.openDomain(domainHandle, h) }

// sealTicket signs a ticket; q.Expires must be set.
func (s *signer) sealTicket(q Query) ([]byte, error) { return s.sealDomain(domainTicket, q) }

// openTicket verifies a ticket and its expiry (with auth.ClockSkew of leeway for replicas
// whose clocks differ): errBadHandle, or the FAILED_PRECONDITION of ticketExpiredError.
func (s *signer) openTicket(h []byte) (Query, error) {
	q, err := s.openDomain(domainTicket, h)
	if err != nil {
		return q, err
	}
	if exp := time.Unix(q.Expires, 0); q.Expires == 0 || s.now().After(exp.Add(auth.ClockSkew)) {
		return q, ticketExpiredError(exp)
	}
	return q, nil
}
