package e2e

import (
	"context"
	"io"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/routing/sqlite"
	"github.com/flightsrv/flightsrv/server"
)

// sqliteServer starts cfg on 127.0.0.1 over a new SQLite hot store holding eventsTable,
// stopped at the test's end.
func sqliteServer(t *testing.T, ctx context.Context, cfg server.Config) *server.Server {
	t.Helper()
	st, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(t.TempDir(), "hot.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	cfg.Listen, cfg.Tables, cfg.Hot = "127.0.0.1:0", []routing.TableDef{eventsTable}, st
	srv, err := server.Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return srv
}

// TestIdleConnectionsClosed: a client connection with no call in flight for
// --conn-idle-timeout is closed by the server (GOAWAY: the client's channel leaves READY), so
// that connections opened and left idle cannot hold the process's file descriptors (trial 33
// G2); the same client's next call reconnects and is answered.
func TestIdleConnectionsClosed(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv := sqliteServer(t, ctx, server.Config{ConnIdleTimeout: time.Second})
	conn, err := grpc.NewClient(srv.Addr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.Connect()
	for s := conn.GetState(); s != connectivity.Ready; s = conn.GetState() {
		if !conn.WaitForStateChange(ctx, s) {
			t.Fatalf("the connection never became ready (%s)", s)
		}
	}
	// Left idle, the server closes it; the client's channel then leaves READY.
	if !conn.WaitForStateChange(ctx, connectivity.Ready) {
		t.Fatalf("an idle connection stayed open past --conn-idle-timeout (%s)", conn.GetState())
	}
	actions, err := flight.NewFlightServiceClient(conn).ListActions(ctx, &flight.Empty{})
	for err == nil {
		_, err = actions.Recv()
	}
	if err != io.EOF {
		t.Fatalf("a call after the server closed the idle connection: %v", err)
	}
}

// TestMaxConnsCap: with --max-conns 3, three connections held open (TCP only, as a flood's)
// leave no room: a fourth client's call fails (its connection is closed as it is accepted)
// and the server goes on; once one of the three closes, a new client is answered (trial 33
// G2: connections held open reached the file descriptor limit, and the stores' files with
// them).
func TestMaxConnsCap(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv := sqliteServer(t, ctx, server.Config{MaxConns: 3, MaxConnsPerIP: -1})
	var held []net.Conn
	for range 3 {
		c, err := net.Dial("tcp", srv.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		held = append(held, c)
	}
	listActions := func() error { return listActionsFrom(ctx, t, srv.Addr(), "") }
	// The server accepts the three in turn; a client past them is closed at once.
	var err4 error
	if !waitFor(30*time.Second, func() bool { err4 = listActions(); return err4 != nil }) {
		t.Fatal("a fourth connection was served beside three held open with --max-conns 3")
	}
	if status.Code(err4) != codes.Unavailable {
		t.Fatalf("a client past --max-conns: %v, want UNAVAILABLE", err4)
	}
	held[0].Close()
	var err5 error
	if !waitFor(30*time.Second, func() bool { err5 = listActions(); return err5 == nil }) {
		t.Fatalf("a client after one of the held connections closed: %v", err5)
	}
}

// TestRequestWait: a call opened without its request message (a DoGet without its ticket, an
// action without its body) ends with DEADLINE_EXCEEDED after --request-wait instead of
// waiting, and keeping its connection from --conn-idle-timeout, forever (trial 34 S5); the
// connection then serves other calls.
func TestRequestWait(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv := sqliteServer(t, ctx, server.Config{RequestWait: 300 * time.Millisecond})
	conn, err := grpc.NewClient(srv.Addr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, method := range []string{"DoGet", "DoAction", "ListFlights"} {
		st, err := conn.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true, ClientStreams: true}, "/arrow.flight.protocol.FlightService/"+method)
		if err != nil {
			t.Fatal(err)
		}
		err = st.RecvMsg(new(flight.FlightData))
		if s := status.Convert(err); s.Code() != codes.DeadlineExceeded || !strings.Contains(s.Message(), "request message did not arrive within 300ms") {
			t.Fatalf("%s without its request: %v, want DEADLINE_EXCEEDED naming the wait", method, err)
		}
	}
	actions, err := flight.NewFlightServiceClient(conn).ListActions(ctx, &flight.Empty{})
	for err == nil {
		_, err = actions.Recv()
	}
	if err != io.EOF {
		t.Fatalf("a call on the same connection: %v", err)
	}
}

// listActionsFrom calls ListActions on a new connection to addr made from the local IP from
// ("": any) and returns the call's error (nil when it was answered).
func listActionsFrom(ctx context.Context, t *testing.T, addr, from string) error {
	t.Helper()
	opts := []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}
	if from != "" {
		opts = append(opts, grpc.WithContextDialer(func(ctx context.Context, a string) (net.Conn, error) {
			d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
			return d.DialContext(ctx, "tcp", a)
		}))
	}
	conn, err := grpc.NewClient(addr, opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	cctx, ccancel := context.WithTimeout(ctx, 10*time.Second)
	defer ccancel()
	actions, err := flight.NewFlightServiceClient(conn).ListActions(cctx, &flight.Empty{})
	for err == nil {
		_, err = actions.Recv()
	}
	if err == io.EOF {
		return nil
	}
	return err
}

// TestMaxConnsPerIP: with --max-conns-per-ip 2, two connections held open from 127.0.0.1
// leave no room for a third from that address, while a client from 127.0.0.2 is answered
// (trial 34 S4: one host's connections filled --max-conns and kept every new client out).
func TestMaxConnsPerIP(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv := sqliteServer(t, ctx, server.Config{MaxConns: 100, MaxConnsPerIP: 2})
	for range 2 {
		c, err := net.Dial("tcp", srv.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	var err error
	if !waitFor(30*time.Second, func() bool { err = listActionsFrom(ctx, t, srv.Addr(), "127.0.0.1"); return err != nil }) {
		t.Fatal("a third connection from 127.0.0.1 was served beside two held with --max-conns-per-ip 2")
	}
	if status.Code(err) != codes.Unavailable {
		t.Fatalf("a client past --max-conns-per-ip: %v, want UNAVAILABLE", err)
	}
	if err := listActionsFrom(ctx, t, srv.Addr(), "127.0.0.2"); err != nil {
		t.Fatalf("a client from another address: %v", err)
	}
}
