package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/flightsrv/flightsrv/internal/testsupport/pgtest"
	"github.com/flightsrv/flightsrv/internal/testsupport/testproc"
	"github.com/flightsrv/flightsrv/routing"
)

// TestHealthFollowsPostgres (issue 20): a `flightsrv serve` process over a PostgreSQL cluster
// of this test's own (pgtest.StartOwn: the suite's shared server is never stopped), probing
// every 300 ms (--health-interval). PostgreSQL stopped by its pid: grpc.health.v1 answers
// NOT_SERVING within one probe interval and the probe's timeout, the log names the hot store
// as the failing dependency, and a query of a hot bucket fails UNAVAILABLE; PostgreSQL started
// again on the same port and data: SERVING again, and the same query answers the same rows.
// hotRows are the records appendHot writes: ORD flights of July 2001, a hot bucket.
const hotRows = 5

// hotQuery reads appendHot's records.
const hotQuery = "SELECT timestamp, id, value FROM flights WHERE origin = 'ORD'" +
	" AND timestamp >= TIMESTAMPTZ '2001-07-01T00:00:00Z' AND timestamp < TIMESTAMPTZ '2001-08-01T00:00:00Z'"

// appendHot appends hotRows records of ORD in July 2001 to flightsTable in st through the write
// fence: a small hot store for tests that need no archive.
func appendHot(t *testing.T, st routing.HotStore) {
	t.Helper()
	table, err := routing.NewDurableTable(flightsTable, st, nil, routing.Options{Clock: func() time.Time { return asOf }})
	if err != nil {
		t.Fatal(err)
	}
	var recs []routing.Record
	for i := range hotRows {
		recs = append(recs, routing.Record{PartitionKey: []byte("ORD"), EventTime: ts("2001-07-10T00:00:00Z").Add(time.Duration(i) * time.Hour),
			SortKey: []byte(fmt.Sprintf("h%d", i)), Value: []byte(`{"delay":0,"distance":1,"destination":"SFO"}`)})
	}
	if n, err := table.Append(context.Background(), recs); err != nil || n != hotRows {
		t.Fatalf("append: %d %v", n, err)
	}
}

// startServe starts one flightsrv process with args(addr) on a free 127.0.0.1 address and
// returns it once health checks answer SERVING; when it exits first (the port taken since
// testproc.FreePorts chose it), it starts again on another port, three times at most.
func startServe(t *testing.T, bin string, args func(addr string) []string) *replica {
	t.Helper()
	for attempt := 0; ; attempt++ {
		addr := testproc.FreePorts(t, 1)[0]
		rep := &replica{addr: addr, proc: testproc.Start(t, "flightsrv serve", nil, bin, args(addr)...)}
		if waitServing(rep) {
			return rep
		}
		if attempt == 2 {
			t.Fatalf("serve did not start:\n%s", rep.proc.Output())
		}
		rep.kill()
	}
}

// hotRowsNow runs hotQuery through cl (GetFlightInfo, then DoGet) with ctx's metadata and
// returns the rows it answered.
func hotRowsNow(ctx context.Context, cl *flightsql.Client) (int64, error) {
	qctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	res, err := run(qctx, cl, hotQuery)
	if res != nil {
		defer res.release()
	}
	if err != nil {
		return 0, err
	}
	var n int64
	for _, b := range res.batchRows {
		n += b
	}
	return n, nil
}

func TestHealthFollowsPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("starts server processes")
	}
	ctx := context.Background()
	pg := pgtest.StartOwn(t)
	st, dbURL := pg.NewStore(t)
	appendHot(t, st)
	st.Close() // the server's pool is the only one left when PostgreSQL stops

	const interval = 300 * time.Millisecond
	bin := testproc.BuildFlightsrv(t)
	rep := startServe(t, bin, func(addr string) []string {
		return []string{"serve", "--store", dbURL, "--archive", t.TempDir(), "--no-auth",
			"--table", "name=flights,id=" + flightsTable.TableID + ",partition=origin,strategy=month",
			"--listen", addr, "--go-memory-limit", "off", "--health-interval", interval.String()}
	})
	conn, err := grpc.NewClient(rep.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	hc := healthpb.NewHealthClient(conn)
	health := func() healthpb.HealthCheckResponse_ServingStatus {
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		res, err := hc.Check(cctx, &healthpb.HealthCheckRequest{Service: "arrow.flight.protocol.FlightService"})
		if err != nil {
			t.Fatalf("health check: %v", err)
		}
		return res.GetStatus()
	}
	// waitHealth polls until health answers want, failing after within.
	waitHealth := func(want healthpb.HealthCheckResponse_ServingStatus, within time.Duration) time.Duration {
		t.Helper()
		start := time.Now()
		for {
			got := health()
			if got == want {
				return time.Since(start)
			}
			if time.Since(start) > within {
				t.Fatalf("health %s %v after the change, want %s\n%s", got, time.Since(start), want, rep.proc.Output())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	cl := dialAddr(t, rep.addr, 0)
	rowsNow := func() (int64, error) { return hotRowsNow(ctx, cl) }
	if n, err := rowsNow(); err != nil || n != hotRows {
		t.Fatalf("before the stop: %d rows, %v; want %d", n, err, hotRows)
	}
	if got := health(); got != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("health %s before the stop", got)
	}

	pg.Halt(t)
	// One interval until the next probe, then the probe itself (a refused connection fails at
	// once; the probe's own bound is two seconds, server/health.go).
	took := waitHealth(healthpb.HealthCheckResponse_NOT_SERVING, interval+2*time.Second+500*time.Millisecond)
	t.Logf("NOT_SERVING %v after PostgreSQL stopped (probe interval %v)", took, interval)
	// The log line follows the status it reports: wait for it a moment (it was read once before
	// the server had written it, on a loaded machine).
	named := func(out string) bool {
		return strings.Contains(out, `health: store unreachable`) && strings.Contains(out, `store="hot store"`)
	}
	for deadline := time.Now().Add(3 * time.Second); !named(rep.proc.Output()) && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
	}
	if out := rep.proc.Output(); !named(out) {
		t.Fatalf("the log does not name the hot store as unreachable:\n%s", out)
	}
	_, err = rowsNow()
	if status.Code(err) != codes.Unavailable {
		t.Fatalf("a hot query while PostgreSQL is down: %v, want UNAVAILABLE", err)
	}
	if got := health(); got != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Fatalf("health %s while PostgreSQL is down", got)
	}

	pg.Resume(t)
	took = waitHealth(healthpb.HealthCheckResponse_SERVING, interval+2*time.Second+500*time.Millisecond)
	t.Logf("SERVING %v after PostgreSQL accepted connections again", took)
	if out := rep.proc.Output(); !strings.Contains(out, "health: stores reachable") {
		t.Fatalf("no log line of the stores reachable again:\n%s", out)
	}
	if n, err := rowsNow(); err != nil || n != hotRows {
		t.Fatalf("after the restart: %d rows, %v; want %d\n%s", n, err, hotRows, rep.proc.Output())
	}
}
