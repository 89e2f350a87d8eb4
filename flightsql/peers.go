package flightsql

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/flightsrv/flightsrv/internal/panics"
)

// Cancellation across replicas. A FlightInfo's endpoints may be fetched from several replicas
// (multi-endpoint results, clients retrying elsewhere) and its poll runs on the replica that
// got it, while CancelFlightInfo reaches one replica. Replicas share no state but the stores
// and the keyring (docs/architecture.md decision 9: no home-made cluster protocol), so the
// receiving replica forwards the client's request, unchanged, to every peer (Config.Peers,
// the --peers flag, by default the --advertise addresses) as the standard Flight action
// CancelFlightInfo, marked with the forwardedHeader metadata so that peers do not forward it
// again, and carrying the caller's authorization header (peers sharing the keyring accept its
// bearer token; Basic credentials verify alike). Each peer verifies the tickets with the
// shared keyring and cancels what runs there. The alternative — a cancel record in the shared
// hot store that every stream reads between batches — would add a table to Pulpitum's schema,
// a statement per batch or a polling loop per replica, and a delay; forwarding costs one call
// per peer per cancel and nothing otherwise. A peer that is down or slow is logged and
// skipped after peerCancelTimeout: a replica that cannot be reached cannot be serving the
// query's streams to anyone either, and its tickets stay cancellable by a later
// CancelFlightInfo. A client forging the header only keeps its own cancel from spreading.

// forwardedHeader marks a CancelFlightInfo forwarded by a peer.
const forwardedHeader = "flightsrv-cancel-forwarded"

// peerCancelTimeout bounds how long a forwarded cancel waits for its peers.
const peerCancelTimeout = 5 * time.Second

// isForwarded reports whether the call is a cancel forwarded by a peer.
func isForwarded(ctx context.Context) bool {
	md, _ := metadata.FromIncomingContext(ctx)
	return len(md.Get(forwardedHeader)) > 0
}

// peers are the replicas a cancel is forwarded to, with a client connection to each, made on
// first use and kept until close. Safe for concurrent use; a nil *peers forwards nothing.
type peers struct {
	targets []peerTarget
	tls     *tls.Config

	mu    sync.Mutex
	conns map[string]*grpc.ClientConn
}

type peerTarget struct {
	uri, addr string
	tls       bool
}

// newPeers validates the peers' URIs (grpc+tcp://host:port, grpc://host:port or
// grpc+tls://host:port); tlsConf is the client configuration for grpc+tls peers (nil: the
// system's roots, no client certificate).
func newPeers(uris []string, tlsConf *tls.Config) (*peers, error) {
	p := &peers{tls: tlsConf, conns: map[string]*grpc.ClientConn{}}
	for _, uri := range uris {
		u, err := url.Parse(uri)
		if err != nil {
			return nil, fmt.Errorf("peer %q: %w", uri, err)
		}
		if _, _, err := net.SplitHostPort(u.Host); err != nil || u.Hostname() == "" {
			return nil, fmt.Errorf("peer %q: want scheme://host:port", uri)
		}
		t := peerTarget{uri: uri, addr: u.Host}
		switch u.Scheme {
		case "grpc", "grpc+tcp":
		case "grpc+tls":
			t.tls = true
		default:
			return nil, fmt.Errorf("peer %q: the scheme must be grpc+tcp or grpc+tls", uri)
		}
		p.targets = append(p.targets, t)
	}
	return p, nil
}

func (p *peers) conn(t peerTarget) (*grpc.ClientConn, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if cc := p.conns[t.uri]; cc != nil {
		return cc, nil
	}
	creds := insecure.NewCredentials()
	if t.tls {
		conf := &tls.Config{MinVersion: tls.VersionTLS12}
		if p.tls != nil {
			conf = p.tls.Clone()
		}
		creds = credentials.NewTLS(conf)
	}
	cc, err := grpc.NewClient(t.addr, grpc.WithTransportCredentials(creds), grpc.WithUserAgent("flightsrv-peer"))
	if err != nil {
		return nil, err
	}
	p.conns[t.uri] = cc
	return cc, nil
}

// forwardCancel sends req to every peer as a forwarded CancelFlightInfo action with the
// caller's authorization, in parallel, and returns once each has answered or
// peerCancelTimeout has passed. Failures are logged with the peer's URI and the status code.
func (p *peers) forwardCancel(ctx context.Context, req *flight.CancelFlightInfoRequest, log *slog.Logger) {
	if p == nil || len(p.targets) == 0 {
		return
	}
	body, err := proto.Marshal(req)
	if err != nil {
		log.Warn("forwarding a cancel to the peers failed", "error_class", fmt.Sprintf("%T", err))
		return
	}
	md := metadata.Pairs(forwardedHeader, "1")
	if in, ok := metadata.FromIncomingContext(ctx); ok {
		md.Append("authorization", in.Get("authorization")...)
	}
	fctx, cancel := context.WithTimeout(metadata.NewOutgoingContext(context.WithoutCancel(ctx), md), peerCancelTimeout)
	defer cancel()
	var wg sync.WaitGroup
	for _, t := range p.targets {
		wg.Go(func() {
			defer panics.Handle("peer cancel", func(error) {})
			if err := p.cancelOn(fctx, t, body); err != nil {
				log.Warn("forwarding a cancel to a peer failed", "peer", t.uri, "code", status.Code(err).String())
			}
		})
	}
	wg.Wait()
}

func (p *peers) cancelOn(ctx context.Context, t peerTarget, body []byte) error {
	cc, err := p.conn(t)
	if err != nil {
		return err
	}
	stream, err := flight.NewFlightServiceClient(cc).DoAction(ctx, &flight.Action{Type: flight.CancelFlightInfoActionType, Body: body})
	if err != nil {
		return err
	}
	for {
		if _, err := stream.Recv(); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// close closes the peers' connections.
func (p *peers) close() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for uri, cc := range p.conns {
		cc.Close()
		delete(p.conns, uri)
	}
}

// ForwardCancelQuery asks every peer to cancel query id (`SELECT flightsrv.cancel_query(id)`,
// docs/sql.md, "Queries visible from SQL"): a query planned on one replica streams its DoGets
// from whichever replica a client chose, under the query id its ticket carries, so a cancel
// sent to any replica must reach the one running it. Each peer gets the same statement over
// Flight SQL (GetFlightInfo and the DoGet of its one endpoint, on the peer's connection),
// marked with forwardedHeader so that it does not forward again, with the caller's
// authorization (the peer checks that the caller is an administrator, as this replica did).
// It returns whether any peer answered true (it stopped something). A peer that fails or
// does not answer within peerCancelTimeout is logged with its URI and status code and
// counted as having stopped nothing. For a call a peer forwarded it does nothing (false).
// Safe for concurrent use.
func (s *Server) ForwardCancelQuery(ctx context.Context, id string) bool {
	p := s.peers
	if p == nil || len(p.targets) == 0 || isForwarded(ctx) {
		return false
	}
	md := metadata.Pairs(forwardedHeader, "1")
	if in, ok := metadata.FromIncomingContext(ctx); ok {
		md.Append("authorization", in.Get("authorization")...)
	}
	fctx, cancel := context.WithTimeout(metadata.NewOutgoingContext(context.WithoutCancel(ctx), md), peerCancelTimeout)
	defer cancel()
	sql := "SELECT flightsrv.cancel_query('" + strings.ReplaceAll(id, "'", "''") + "')"
	var stopped atomic.Bool
	var wg sync.WaitGroup
	for _, t := range p.targets {
		wg.Go(func() {
			defer panics.Handle("peer cancel", func(error) {})
			ok, err := p.cancelQueryOn(fctx, t, sql)
			if err != nil {
				s.log.Warn("forwarding cancel_query to a peer failed", "peer", t.uri, "code", status.Code(err).String())
				return
			}
			if ok {
				stopped.Store(true)
			}
		})
	}
	wg.Wait()
	return stopped.Load()
}

// cancelQueryOn runs the cancel statement sql on peer t and returns its answer.
func (p *peers) cancelQueryOn(ctx context.Context, t peerTarget, sql string) (bool, error) {
	cc, err := p.conn(t)
	if err != nil {
		return false, err
	}
	cl := &flightsql.Client{Client: flight.NewClientFromConn(cc, nil)}
	info, err := cl.Execute(ctx, sql)
	if err != nil {
		return false, err
	}
	stopped := false
	for _, ep := range info.GetEndpoint() {
		rdr, err := cl.DoGet(ctx, ep.GetTicket())
		if err != nil {
			return stopped, err
		}
		for rdr.Next() {
			rec := rdr.RecordBatch()
			if rec.NumCols() == 1 {
				if col, ok := rec.Column(0).(*array.Boolean); ok {
					for i := range col.Len() {
						stopped = stopped || (col.IsValid(i) && col.Value(i))
					}
				}
			}
		}
		err = rdr.Err()
		rdr.Release()
		if err != nil {
			return stopped, err
		}
	}
	return stopped, nil
}
