package e2e

import (
	"context"
	"fmt"
	"slices"
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

	"github.com/flightsrv/flightsrv/internal/testsupport/testproc"
)

// replica is one `flightsrv serve` process of a test, on 127.0.0.1.
type replica struct {
	addr string
	proc *testproc.Process
}

// kill stops the replica with SIGKILL by its process id and reaps it.
func (r *replica) kill() { r.proc.Kill() }

// startReplicas starts n `flightsrv serve` processes over e's PostgreSQL database and archive
// directory, sharing keyring, each advertising all n addresses, with extra flags; they are
// stopped at the end of the test. It returns once every one answers health checks SERVING;
// when one exits first (a port taken since testproc.FreePorts chose it), all start again on
// other ports, three times at most.
func startReplicas(t *testing.T, e *env, bin, keyring string, n int, extra ...string) []*replica {
	t.Helper()
	return startReplicasEach(t, e, bin, keyring, n, nil, extra...)
}

// startReplicasEach is startReplicas with flags of replica i's own, each(i), after extra
// (each may be nil).
func startReplicasEach(t *testing.T, e *env, bin, keyring string, n int, each func(i int) []string, extra ...string) []*replica {
	t.Helper()
	for attempt := 0; ; attempt++ {
		addrs := testproc.FreePorts(t, n)
		var reps []*replica
		ok := true
		for i, addr := range addrs {
			args := append([]string{"serve", "--store", e.url, "--archive", e.dir, "--no-auth", "--keyring", keyring,
				"--table", "name=flights,id=" + flightsTable.TableID + ",partition=origin,strategy=month",
				"--listen", addr, "--advertise", strings.Join(addrs, ","), "--go-memory-limit", "off"}, extra...)
			if each != nil {
				args = append(args, each(i)...)
			}
			reps = append(reps, &replica{addr: addr, proc: testproc.Start(t, "flightsrv serve", nil, bin, args...)})
		}
		for _, r := range reps {
			if !waitServing(r) {
				ok = false
			}
		}
		if ok {
			return reps
		}
		for _, r := range reps {
			r.kill()
		}
		if attempt == 2 {
			t.Fatalf("replicas did not start:\n%s", reps[0].proc.Output())
		}
	}
}

// waitServing waits up to a minute for r to answer health checks SERVING; false when the
// process has exited (a port taken) or the minute passed.
func waitServing(r *replica) bool {
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		select {
		case <-r.proc.Exited():
			return false
		default:
		}
		conn, err := grpc.NewClient(r.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			res, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
			cancel()
			conn.Close()
			if err == nil && res.GetStatus() == healthpb.HealthCheckResponse_SERVING {
				return true
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return false
}

// dialAddr connects a Flight SQL client to addr; window, when positive, fixes the HTTP/2
// flow-control windows (gRPC's window growth off), so that a stream the client stops reading
// blocks the server after one window.
func dialAddr(t *testing.T, addr string, window int32) *flightsql.Client {
	t.Helper()
	opts := []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithUserAgent("flightsrv-e2e")}
	if window > 0 {
		opts = append(opts, grpc.WithInitialWindowSize(window), grpc.WithInitialConnWindowSize(window))
	}
	cl, err := flightsql.NewClient(addr, nil, nil, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	return cl
}

// fetchEndpoint reads one endpoint of info from cl.
func fetchEndpoint(ctx context.Context, cl *flightsql.Client, info *flight.FlightInfo, ep *flight.FlightEndpoint) (*result, error) {
	return fetch(ctx, cl, &flight.FlightInfo{Schema: info.Schema, Endpoint: []*flight.FlightEndpoint{ep}})
}

// TestReplicas (issue 10): three `flightsrv serve` processes on 127.0.0.1 share one
// PostgreSQL database, one archive directory and one keyring. A multi-endpoint result of
// ORD's history (one endpoint per month bucket) read with each endpoint fetched from a
// different replica equals the single-endpoint answer and the sample; the endpoints are
// ordered, carry the advertised addresses (endpoint i from the i-th on), and only the archived ones carry an
// expiration_time; aggregates and top-k stay one endpoint. A replica killed with SIGKILL in
// the middle of an archived endpoint's stream leaves that endpoint retryable on another
// replica, with the same rows.
func TestReplicas(t *testing.T) {
	if testing.Short() {
		t.Skip("starts server processes")
	}
	e := newEnv(t)
	bin := testproc.BuildFlightsrv(t)
	reps := startReplicas(t, e, bin, testproc.WriteKeyring(t, "e2e-1"), 3, "--multi-endpoint", "--endpoint-buckets", "2")
	ctx := context.Background()
	from, to := ts("2001-01-01T00:00:00Z"), ts("2001-07-01T00:00:00Z")
	want := expected(e.sample, "ORD", from, to)
	single := rowsOf(t, mustRun(t, dial(t, e.on), ordScan), "ORD")
	if !slices.Equal(single, want) {
		t.Fatalf("single endpoint: %d rows, the sample %d", len(single), len(want))
	}
	cls := make([]*flightsql.Client, len(reps))
	var advertised []string
	for i, r := range reps {
		cls[i] = dialAddr(t, r.addr, 0)
		advertised = append(advertised, "grpc+tcp://"+r.addr)
	}

	info, err := cls[0].Execute(ctx, ordScan)
	if err != nil {
		t.Fatal(err)
	}
	// January (JSON), February and March (Parquet) are archived; April is archiving (read
	// from the hot store), May and June are hot: groups of at most two buckets that never
	// mix archived and hot ones.
	if len(info.Endpoint) != 4 || !info.Ordered {
		t.Fatalf("%d endpoints (ordered %v), want 4 (Jan–Feb, Mar, Apr–May, Jun), ordered", len(info.Endpoint), info.Ordered)
	}
	var got []row
	for i, ep := range info.Endpoint {
		var locs []string
		for _, l := range ep.Location {
			locs = append(locs, l.Uri)
		}
		// Endpoint i lists the advertised addresses from the i-th on (clients try them in
		// order, so endpoints spread over the replicas).
		if want := append(slices.Clone(advertised[i%3:]), advertised[:i%3]...); !slices.Equal(locs, want) {
			t.Fatalf("endpoint %d locations %v, want the advertised %v rotated by %d", i, locs, advertised, i)
		}
		if archived := i < 2; (ep.ExpirationTime != nil) != archived {
			t.Fatalf("endpoint %d expiration_time %v; archived endpoints only carry one", i, ep.ExpirationTime)
		}
		res, err := fetchEndpoint(ctx, cls[i%3], info, ep)
		if err != nil {
			t.Fatalf("endpoint %d from replica %d: %v\n%s", i, i%3, err, reps[i%3].proc.Output())
		}
		got = append(got, rowsOf(t, res, "ORD")...)
		res.release()
	}
	if !slices.Equal(got, want) {
		t.Fatalf("endpoints from three replicas: %d rows, want the single endpoint's %d in the same order", len(got), len(want))
	}

	// Several partitions, newest first: one endpoint per month (two partitions of at most
	// --endpoint-buckets 2 buckets), June first; the three archived months (January to
	// March, archived for ORD and SFO alike) carry an expiration time. Their rows, fetched
	// from the three replicas in turn, are the sample's ORD and SFO flights in
	// (time, id) descending order, and the single endpoint's.
	multi := "SELECT timestamp, id, value, origin FROM flights WHERE origin IN ('SFO', 'ORD')" +
		" AND timestamp >= TIMESTAMPTZ '2001-01-01T00:00:00Z' AND timestamp < TIMESTAMPTZ '2001-07-01T00:00:00Z'" +
		" ORDER BY timestamp DESC, id DESC"
	wantMulti := append(expected(e.sample, "ORD", from, to), expected(e.sample, "SFO", from, to)...)
	slices.SortFunc(wantMulti, func(a, b row) int {
		if c := b.at.Compare(a.at); c != 0 {
			return c
		}
		return strings.Compare(b.id, a.id)
	})
	withOrigins := func(res *result) []row {
		var out []row
		for _, rec := range res.recs {
			origins := rec.Column(3).(*array.String)
			one := &result{recs: []arrow.RecordBatch{rec}}
			for i, r := range rowsOf(t, one, "") {
				r.origin = origins.Value(i)
				out = append(out, r)
			}
		}
		return out
	}
	singleRes := mustRun(t, dial(t, e.on), multi)
	if got := withOrigins(singleRes); !slices.Equal(got, wantMulti) {
		t.Fatalf("ORD and SFO, one endpoint: %d rows, the sample %d", len(got), len(wantMulti))
	}
	info, err = cls[2].Execute(ctx, multi)
	if err != nil {
		t.Fatal(err)
	}
	if len(info.Endpoint) != 6 || !info.Ordered {
		t.Fatalf("ORD and SFO: %d endpoints (ordered %v), want 6 (one per month), ordered", len(info.Endpoint), info.Ordered)
	}
	got = nil
	for i, ep := range info.Endpoint {
		if archived := i >= 3; (ep.ExpirationTime != nil) != archived {
			t.Fatalf("ORD and SFO: endpoint %d expiration_time %v; the archived months' only carry one", i, ep.ExpirationTime)
		}
		res, err := fetchEndpoint(ctx, cls[(i+1)%3], info, ep)
		if err != nil {
			t.Fatalf("ORD and SFO: endpoint %d from replica %d: %v\n%s", i, (i+1)%3, err, reps[(i+1)%3].proc.Output())
		}
		got = append(got, withOrigins(res)...)
		res.release()
	}
	if !slices.Equal(got, wantMulti) {
		t.Fatalf("ORD and SFO, endpoints from three replicas: %d rows, want the sample's %d in (time, id) descending order", len(got), len(wantMulti))
	}
	info, err = cls[0].Execute(ctx, ordScan)
	if err != nil {
		t.Fatal(err)
	}

	// Aggregates and top-k answer with one endpoint.
	for _, q := range []string{countSQL("ORD", from, to), strings.Replace(ordScan, "ORDER BY timestamp, id", "ORDER BY timestamp DESC LIMIT 10", 1)} {
		info, err := cls[1].Execute(ctx, q)
		if err != nil || len(info.Endpoint) != 1 {
			t.Fatalf("%s: %v endpoints, %v", q, len(info.GetEndpoint()), err)
		}
	}
	// A tampered ticket is refused by every replica, revealing nothing.
	tkt, _ := flightsql.GetStatementQueryTicket(info.Endpoint[1].Ticket)
	h := slices.Clone(tkt.GetStatementHandle())
	h[len(h)/2] ^= 1
	forged, _ := flightsql.CreateStatementQueryTicket(h)
	if _, err := fetchEndpoint(ctx, cls[2], info, &flight.FlightEndpoint{Ticket: &flight.Ticket{Ticket: forged}}); status.Code(err) != codes.InvalidArgument ||
		strings.Contains(status.Convert(err).Message(), "ORD") {
		t.Fatalf("tampered ticket: %v", err)
	}

	// The archived endpoint of January and February (about 4,800 rows, one batch per bucket
	// of about 190 KB) read from replica 1 by a client with fixed 64 KiB windows that takes
	// one batch: the replica is blocked mid-stream when it is killed.
	archived := info.Endpoint[0]
	slow := dialAddr(t, reps[1].addr, 64<<10)
	rdr, err := slow.DoGet(ctx, archived.Ticket)
	if err != nil {
		t.Fatal(err)
	}
	if !rdr.Next() {
		t.Fatalf("no first batch: %v", rdr.Err())
	}
	partial := rdr.RecordBatch().NumRows()
	reps[1].kill()
	for rdr.Next() {
		partial += rdr.RecordBatch().NumRows()
	}
	streamErr := rdr.Err()
	rdr.Release()
	wantArchived := expected(e.sample, "ORD", from, ts("2001-03-01T00:00:00Z"))
	if streamErr == nil || partial >= int64(len(wantArchived)) {
		t.Fatalf("the killed replica's stream ended with %v after %d of %d rows", streamErr, partial, len(wantArchived))
	}
	res, err := fetchEndpoint(ctx, cls[2], info, archived)
	if err != nil {
		t.Fatalf("retry of the archived endpoint on another replica: %v", err)
	}
	defer res.release()
	if retried := rowsOf(t, res, "ORD"); !slices.Equal(retried, wantArchived) {
		t.Fatalf("retried endpoint: %d rows, want January's and February's %d", len(retried), len(wantArchived))
	}
	if s := fmt.Sprint(reps[0].proc.Output()); strings.Contains(s, "panic") {
		t.Fatalf("replica 0 logged a panic:\n%s", s)
	}
}

// TestCancelReachesEveryReplica (issue 10): three `flightsrv serve` processes sharing one
// PostgreSQL database, archive directory and keyring, each advertising (and so forwarding
// cancels to) all three. The two endpoints of ORD's scan (archived January–March, hot
// April–June) stream from replicas B and C to clients that read one batch and stop (fixed
// 64 KiB windows: the servers are blocked mid-stream); a CancelFlightInfo sent to replica A,
// which serves neither stream, ends both with CANCELLED (CancelFlightInfo) instead of their
// end, and the tickets stay refused on B and C. A poll running on B, cancelled through A, answers CANCELLED
// (or, when it had completed, its endpoints are refused).
func TestCancelReachesEveryReplica(t *testing.T) {
	if testing.Short() {
		t.Skip("starts server processes")
	}
	e := newEnv(t)
	bin := testproc.BuildFlightsrv(t)
	reps := startReplicas(t, e, bin, testproc.WriteKeyring(t, "e2e-1"), 3, "--multi-endpoint", "--endpoint-buckets", "3")
	ctx := context.Background()
	a := dialAddr(t, reps[0].addr, 0)
	info, err := a.Execute(ctx, ordScan)
	if err != nil {
		t.Fatal(err)
	}
	if len(info.Endpoint) != 2 {
		t.Fatalf("%d endpoints, want 2 (archived January–March, hot April–June)", len(info.Endpoint))
	}
	from := []time.Time{ts("2001-01-01T00:00:00Z"), ts("2001-04-01T00:00:00Z"), ts("2001-07-01T00:00:00Z")}
	type stream struct {
		cl   *flightsql.Client
		rdr  *flight.Reader
		rows int64
		want int
	}
	var streams []*stream
	for i, ep := range info.Endpoint {
		cl := dialAddr(t, reps[i+1].addr, 64<<10)
		rdr, err := cl.DoGet(ctx, ep.Ticket)
		if err != nil {
			t.Fatal(err)
		}
		if !rdr.Next() {
			t.Fatalf("endpoint %d: no first batch: %v", i, rdr.Err())
		}
		streams = append(streams, &stream{cl: cl, rdr: rdr, rows: rdr.RecordBatch().NumRows(), want: len(expected(e.sample, "ORD", from[i], from[i+1]))})
	}
	res, err := a.CancelFlightInfo(ctx, &flight.CancelFlightInfoRequest{Info: info})
	if err != nil || res.Status != flight.CancelStatusCancelled {
		t.Fatalf("cancel at replica A: %v %v", res, err)
	}
	for i, s := range streams {
		for s.rdr.Next() {
			s.rows += s.rdr.RecordBatch().NumRows()
		}
		err := s.rdr.Err()
		s.rdr.Release()
		// The stream's last batches may have been in flight already (an archived bucket is
		// one batch of about 190 KB); what shows that the cancel reached the replica is the
		// stream's end: CANCELLED by CancelFlightInfo instead of a complete stream.
		if status.Code(err) != codes.Canceled || !strings.Contains(status.Convert(err).Message(), "CancelFlightInfo") || s.rows > int64(s.want) {
			t.Fatalf("endpoint %d on replica %d: ended with %v after %d of %d rows, want CANCELLED by CancelFlightInfo\n%s", i, i+1, err, s.rows, s.want, reps[i+1].proc.Output())
		}
		if _, err := fetchEndpoint(ctx, s.cl, info, info.Endpoint[i]); status.Code(err) != codes.Canceled {
			t.Fatalf("endpoint %d fetched again on replica %d after the cancel: %v", i, i+1, err)
		}
	}

	pollThenCancel(t, dialAddr(t, reps[1].addr, 0), a)
}
