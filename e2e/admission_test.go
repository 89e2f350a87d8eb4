package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/flightsrv/flightsrv/internal/auth"
	"github.com/flightsrv/flightsrv/internal/testsupport/testproc"
	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/server"
)

// ordScan is an ordered scan of ORD's whole history: about 16,500 rows, far more than one
// HTTP/2 flow-control window, so a client that stops reading keeps the query running.
const ordScan = "SELECT timestamp, id, value FROM flights WHERE origin = 'ORD'" +
	" AND timestamp >= TIMESTAMPTZ '2001-01-01T00:00:00Z' AND timestamp < TIMESTAMPTZ '2001-07-01T00:00:00Z'" +
	" ORDER BY timestamp, id"

// dialSlow connects with fixed 64 KiB flow-control windows (which turns gRPC's window
// growth off): a stream its client stops reading blocks the server after one window.
func dialSlow(t *testing.T, srv *server.Server) *flightsql.Client {
	t.Helper()
	cl, err := flightsql.NewClient(srv.Addr(), nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithInitialWindowSize(64<<10), grpc.WithInitialConnWindowSize(64<<10))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	return cl
}

// startScan starts ordScan on a slow client (dialSlow) and returns its stream, released at
// the test's end.
func startScan(t *testing.T, srv *server.Server) *flight.Reader {
	t.Helper()
	cl := dialSlow(t, srv)
	info, err := cl.Execute(context.Background(), ordScan)
	if err != nil {
		t.Fatal(err)
	}
	rdr, err := cl.DoGet(context.Background(), info.Endpoint[0].Ticket)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rdr.Release)
	return rdr
}

// holdFirstBatch starts ordScan on a slow client and reads one batch of it: the query keeps
// its admission slot until rest reads the others (rest returns every row's count, the first
// batch's included, and the stream's error).
func holdFirstBatch(t *testing.T, srv *server.Server) (rest func() (int, error)) {
	t.Helper()
	rdr := startScan(t, srv)
	if !rdr.Next() {
		t.Fatalf("no first batch: %v", rdr.Err())
	}
	first := int(rdr.RecordBatch().NumRows())
	return func() (int, error) {
		n := first
		for rdr.Next() {
			n += int(rdr.RecordBatch().NumRows())
		}
		return n, rdr.Err()
	}
}

// servingStatus asks srv's gRPC health service about the Flight service over a new
// connection; an error (the listener is closed once a drain starts) reads as not serving.
func servingStatus(srv *server.Server) healthpb.HealthCheckResponse_ServingStatus {
	conn, err := grpc.NewClient(srv.Addr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return healthpb.HealthCheckResponse_UNKNOWN
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	res, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{Service: "arrow.flight.protocol.FlightService"})
	if err != nil {
		return healthpb.HealthCheckResponse_UNKNOWN
	}
	return res.GetStatus()
}

// TestAdmissionAndDrain (issue 10): with one query slot and no queue, a second query is
// refused with UNAVAILABLE naming the flag while the first runs, and metadata commands are
// not held back; health checks answer SERVING with PostgreSQL and the archive reachable. A
// drain refuses new queries at once, stops answering SERVING, and lets the running stream
// finish with every row; a drain whose deadline passes cancels the stream and still returns.
func TestAdmissionAndDrain(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	ref := mustRun(t, dial(t, e.on), ordScan)
	total := 0
	for _, n := range ref.batchRows {
		total += int(n)
	}
	start := func() *server.Server {
		srv, err := server.Start(ctx, server.Config{
			Listen: "127.0.0.1:0", Tables: []routing.TableDef{flightsTable}, Hot: e.store, Archive: e.reader,
			Pushdown: true, MaxQueries: 1, MaxQueued: -1, HealthInterval: 50 * time.Millisecond,
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(srv.Close)
		return srv
	}
	t.Run("drain lets the running query finish", func(t *testing.T) {
		srv := start()
		if st := servingStatus(srv); st != healthpb.HealthCheckResponse_SERVING {
			t.Fatalf("health %v before the drain, want SERVING", st)
		}
		rest := holdFirstBatch(t, srv)
		other := dial(t, srv)
		_, err := run(ctx, other, ordScan)
		if st, _ := status.FromError(err); st.Code() != codes.Unavailable || !strings.Contains(st.Message(), "--max-queries") {
			t.Fatalf("second query while the first runs: %v, want UNAVAILABLE naming --max-queries", err)
		}
		if _, err := other.GetTables(ctx, &flightsql.GetTablesOpts{}); err != nil {
			t.Fatalf("GetTables while the slot is taken: %v", err)
		}
		// A load balancer's health Watch, open across the drain: it must see NOT_SERVING and
		// must not hold the shutdown once the query is done.
		conn, err := grpc.NewClient(srv.Addr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		watch, err := healthpb.NewHealthClient(conn).Watch(ctx, &healthpb.HealthCheckRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if m, err := watch.Recv(); err != nil || m.GetStatus() != healthpb.HealthCheckResponse_SERVING {
			t.Fatalf("watch before the drain: %v %v", m, err)
		}
		drained := make(chan bool, 1)
		go func() { drained <- srv.Drain(time.Minute) }()
		if m, err := watch.Recv(); err != nil || m.GetStatus() != healthpb.HealthCheckResponse_NOT_SERVING {
			t.Fatalf("watch during the drain: %v %v", m, err)
		}
		// While the query runs, the server is a lame duck: it still accepts connections and
		// answers health checks and queries itself.
		if st := servingStatus(srv); st != healthpb.HealthCheckResponse_NOT_SERVING {
			t.Fatalf("health check during the drain: %v, want NOT_SERVING", st)
		}
		if _, err := run(ctx, dial(t, srv), ordScan); status.Code(err) != codes.Unavailable || !strings.Contains(err.Error(), "shutting down") {
			t.Fatalf("query during the drain: %v, want UNAVAILABLE saying the server is shutting down", err)
		}
		// Refused at GetFlightInfo already, not planned and then refused at DoGet.
		if _, err := dial(t, srv).Execute(ctx, ordScan); status.Code(err) != codes.Unavailable || !strings.Contains(err.Error(), "shutting down") {
			t.Fatalf("GetFlightInfo during the drain: %v, want UNAVAILABLE saying the server is shutting down", err)
		}
		n, err := rest()
		if err != nil || n != total {
			t.Fatalf("running query during the drain: %d rows, %v; want all %d", n, err, total)
		}
		if !<-drained {
			t.Fatal("Drain reports a call cancelled, yet the query finished (the Watch held it?)")
		}
	})

	t.Run("drain deadline cancels the running query", func(t *testing.T) {
		srv := start()
		rest := holdFirstBatch(t, srv)
		if srv.Drain(100 * time.Millisecond) {
			t.Fatal("Drain reports every query finished while one was held")
		}
		n, err := rest()
		if err == nil || n >= total {
			t.Fatalf("held query after the drain deadline: %d of %d rows, err %v; want it cut short with an error", n, total, err)
		}
		if c := status.Code(err); c != codes.Canceled && c != codes.Unavailable {
			t.Fatalf("held query ended with %v, want CANCELLED", err)
		}
	})
}

// TestHealthNeedsNoCredentials: with authentication on, health checks (load balancers and
// orchestrators probe without credentials) answer SERVING, while a query without credentials
// is UNAUTHENTICATED.
func TestHealthNeedsNoCredentials(t *testing.T) {
	e := newEnv(t)
	srv := authServer(t, e, []string{"alice"}, nil)
	if st := servingStatus(srv); st != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("health without credentials: %v, want SERVING", st)
	}
	if _, err := run(context.Background(), dial(t, srv), ordScan); status.Code(err) != codes.Unauthenticated {
		t.Fatalf("query without credentials: %v, want UNAUTHENTICATED", err)
	}
}

// authServer starts a server over e's stores authenticating users, each with the password
// "secret" (bearer tokens of a random keyring, valid an hour), with admins as Config.Admins;
// each of with changes its configuration first; it is closed at the end of the test.
func authServer(t *testing.T, e *env, users, admins []string, with ...func(*server.Config)) *server.Server {
	t.Helper()
	hash, err := auth.HashPassword("secret")
	if err != nil {
		t.Fatal(err)
	}
	hashes := map[string]string{}
	for _, u := range users {
		hashes[u] = hash
	}
	us, err := auth.NewUsers(hashes, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	ring, err := auth.RandomKeyring()
	if err != nil {
		t.Fatal(err)
	}
	cfg := server.Config{
		Listen: "127.0.0.1:0", Tables: []routing.TableDef{flightsTable}, Hot: e.store, Archive: e.reader,
		Pushdown: true, Auth: auth.NewAuthenticator(us, auth.NewTokens(ring, time.Hour, time.Now)), Admins: admins,
	}
	for _, f := range with {
		f(&cfg)
	}
	srv, err := server.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return srv
}

// TestQueryTimeout: a query stream past --query-timeout ends with DEADLINE_EXCEEDED naming the
// limit, and the next query runs.
func TestQueryTimeout(t *testing.T) {
	e := newEnv(t)
	srv, err := server.Start(context.Background(), server.Config{
		Listen: "127.0.0.1:0", Tables: []routing.TableDef{flightsTable}, Hot: e.store, Archive: e.reader,
		Pushdown: true, MaxQueries: 1, MaxQueued: -1, QueryTimeout: 200 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	rdr := startScan(t, srv)
	// Stall after the first batch (on a busy machine the limit may pass even before it).
	if rdr.Next() {
		time.Sleep(400 * time.Millisecond)
		for rdr.Next() {
		}
	}
	if st, _ := status.FromError(rdr.Err()); st.Code() != codes.DeadlineExceeded || !strings.Contains(st.Message(), "--query-timeout") {
		t.Fatalf("stream past the timeout: %v, want DEADLINE_EXCEEDED naming --query-timeout", rdr.Err())
	}
	// The slot is free again: a small query runs.
	res, err := run(context.Background(), dial(t, srv), countSQL("BOS", ts("2001-02-01T00:00:00Z"), ts("2001-02-02T00:00:00Z")))
	if err != nil {
		t.Fatalf("query after the timeout: %v", err)
	}
	res.release()
}

// TestStalledClientLosesItsSlot (found by a user trial): a client that stops reading blocks
// its stream on HTTP/2 flow control (fixed 64 KiB windows), which no context can end; past
// --stall-timeout the server closes that client's connection, the stream ends with an error
// on the client's side and its admission slot goes to the query queued behind it.
func TestStalledClientLosesItsSlot(t *testing.T) {
	e := newEnv(t)
	srv, err := server.Start(context.Background(), server.Config{
		Listen: "127.0.0.1:0", Tables: []routing.TableDef{flightsTable}, Hot: e.store, Archive: e.reader,
		Pushdown: true, MaxQueries: 1, StallTimeout: 200 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	ctx := context.Background()
	rdr := startScan(t, srv)
	if !rdr.Next() {
		t.Fatalf("no first batch: %v", rdr.Err())
	}
	// The stalled stream holds the only slot: this query waits in the queue until the
	// stalled client's connection is closed.
	res, err := run(ctx, dial(t, srv), countSQL("BOS", ts("2001-02-01T00:00:00Z"), ts("2001-03-01T00:00:00Z")))
	if err != nil {
		t.Fatalf("query queued behind a stalled client: %v", err)
	}
	want := int64(len(expected(e.sample, "BOS", ts("2001-02-01T00:00:00Z"), ts("2001-03-01T00:00:00Z"))))
	if n := scalarCount(t, res); n != want {
		t.Fatalf("count %d, want %d", n, want)
	}
	res.release()
	for rdr.Next() {
	}
	if st, _ := status.FromError(rdr.Err()); st.Code() != codes.Unavailable {
		t.Fatalf("the stalled client's stream: %v, want UNAVAILABLE (connection closed)", rdr.Err())
	}
}

// TestMaxPartitionsFlag: `flightsrv serve --max-partitions 2` bounds the partitions one read
// may list. Two partitions bound to `origin = ANY($1)` answer the sample's count; three, bound
// as a list or written as an IN list, are refused with INVALID_ARGUMENT before any bucket is
// read, in a message that names the limit and its flag and none of the listed values.
func TestMaxPartitionsFlag(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server process")
	}
	e := newEnv(t)
	rep := startReplicas(t, e, testproc.BuildFlightsrv(t), testproc.WriteKeyring(t, "e2e-1"), 1, "--max-partitions", "2")[0]
	cl := dialAddr(t, rep.addr, 0)
	ctx := context.Background()
	from, to := ts("2001-03-15T00:00:00Z"), ts("2001-04-15T00:00:00Z")
	anyCount := "SELECT COUNT(*) FROM flights WHERE origin = ANY($1) AND timestamp >= $2 AND timestamp < $3"
	bind := func(origins ...string) *array.RecordBuilder {
		return anyRangeParams(origins, from, to, arrow.Microsecond)
	}
	stmt, err := cl.Prepare(ctx, anyCount)
	if err != nil {
		t.Fatal(err)
	}
	defer stmt.Close(ctx)
	res := executeWith(t, ctx, cl, stmt, bind("ORD", "SFO"))
	want := int64(len(expected(e.sample, "ORD", from, to)) + len(expected(e.sample, "SFO", from, to)))
	if got := scalarCount(t, res); got != want || want == 0 {
		t.Fatalf("two partitions under --max-partitions 2: count %d, want %d", got, want)
	}
	res.release()

	const msg = "flights lists 3 partitions, more than this server's limit of 2 (--max-partitions): list fewer or split the query"
	refused := func(what string, err error) {
		t.Helper()
		if st := status.Convert(err); st.Code() != codes.InvalidArgument || st.Message() != msg {
			t.Errorf("%s: %v %q, want InvalidArgument %q", what, st.Code(), st.Message(), msg)
		}
	}
	params := bind("ORD", "SFO", "BOS")
	rec := params.NewRecordBatch()
	params.Release()
	stmt.SetParameters(rec)
	rec.Release()
	_, err = stmt.Execute(ctx)
	refused("= ANY($1) bound to three partitions", err)
	_, err = run(ctx, cl, "SELECT COUNT(*) FROM flights WHERE origin IN ('ORD', 'SFO', 'BOS') AND timestamp >= '2001-03-15' AND timestamp < '2001-04-15'")
	refused("IN of three partitions", err)
}
