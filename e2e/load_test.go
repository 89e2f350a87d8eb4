package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/jackc/pgx/v5"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/flightsrv/flightsrv/internal/testsupport/testproc"
	"github.com/flightsrv/flightsrv/routing"
)

// loadDuration is how long TestLoad's clients run: FLIGHTSRV_LOAD_DURATION (a Go duration;
// `make load` runs 60s), 3 seconds by default.
func loadDuration(t *testing.T) time.Duration {
	t.Helper()
	v := os.Getenv("FLIGHTSRV_LOAD_DURATION")
	if v == "" {
		return 3 * time.Second
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		t.Fatalf("FLIGHTSRV_LOAD_DURATION=%q: want a positive Go duration", v)
	}
	return d
}

// loadClients is TestLoad's number of concurrent clients.
const loadClients = 64

// requestTimeout bounds one request of TestLoad: a request that takes longer hangs.
const requestTimeout = 60 * time.Second

// TestLoad (issue 10): 64 concurrent clients for FLIGHTSRV_LOAD_DURATION (`make load`: 60 s)
// against one `flightsrv serve` process with a small query limit (--max-queries 4,
// --max-queued 8, --queue-wait 1s), each looping over ORD's ordered scan (all rows fetched
// and counted), COUNT(*), a poll to completion and GetTables. Every request either succeeds
// with the right answer or is refused with UNAVAILABLE; none takes longer than
// requestTimeout. Every UNAVAILABLE is admission control's and names the limit it hit
// (isAdmissionRefusal), and is counted per request kind: a poll refused so (its background
// run waits in the polls' own queue and is not refused, but the DoGet of its endpoint is
// admitted as any query stream) counts as a refused poll, not as a failed or ordinary request. Meanwhile appends to another partition keep succeeding. The server's peak
// RSS (VmHWM) stays under 512 MiB and is reported; afterwards its goroutines (from its
// /debug/pprof endpoint) and its PostgreSQL connections in use (pg_stat_activity, by its
// application_name) return to their baseline.
func TestLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server process")
	}
	duration := loadDuration(t)
	e := newEnv(t)
	bin := testproc.BuildFlightsrv(t)
	debug := testproc.FreePorts(t, 1)[0]
	le := *e
	le.url = withAppName(t, e.url, "flightsrv_load")
	rep := startReplicas(t, &le, bin, testproc.WriteKeyring(t, "e2e-1"), 1, "--max-queries", "4", "--max-queued", "8", "--queue-wait", "1s",
		"--go-memory-limit", "auto", "--debug-listen", debug)[0]
	ctx := context.Background()
	from, to := ts("2001-01-01T00:00:00Z"), ts("2001-07-01T00:00:00Z")
	wantRows := int64(len(expected(e.sample, "ORD", from, to)))
	count := countSQL("ORD", from, to)

	// Warm up (pools, caches), then the baselines.
	warm, err := flightsql.NewClient(rep.addr, nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	if res, err := run(ctx, warm, ordScan); err != nil {
		t.Fatal(err)
	} else {
		res.release()
	}
	warm.Close()
	baseGoroutines := settled(func() int { return serverGoroutines(t, debug) })
	baseActive := activeConns(t, e.url, "flightsrv_load")

	var (
		ok, refused [4]atomic.Int64 // refused: UNAVAILABLE from admission control
		failures    = make(chan error, loadClients)
		appends     atomic.Int64
		stop        = make(chan struct{})
		wg          sync.WaitGroup // the appender
	)
	kinds := []string{"scan", "count", "poll", "tables"}
	appendTable, err := routing.NewDurableTable(flightsTable, e.store, nil, routing.Options{Clock: func() time.Time { return asOf }})
	if err != nil {
		t.Fatal(err)
	}
	var appendErr atomic.Value
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			actx, cancel := context.WithTimeout(ctx, 10*time.Second)
			err := appendCap(actx, appendTable, fmt.Sprintf("load%06d-", i), 20)
			cancel()
			if err != nil {
				appendErr.Store(err)
				return
			}
			appends.Add(1)
			time.Sleep(50 * time.Millisecond)
		}
	}()
	clients := make([]*flightsql.Client, loadClients)
	for c := range clients {
		if clients[c], err = flightsql.NewClient(rep.addr, nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials())); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(duration)
	var clientsDone sync.WaitGroup
	for c, cl := range clients {
		clientsDone.Add(1)
		go func() {
			defer clientsDone.Done()
			for i := c; time.Now().Before(deadline); i++ {
				k := i % len(kinds)
				rctx, cancel := context.WithTimeout(ctx, requestTimeout)
				start := time.Now()
				err := loadRequest(rctx, cl, kinds[k], count, wantRows)
				cancel()
				switch {
				case err == nil:
					ok[k].Add(1)
				case isAdmissionRefusal(err):
					refused[k].Add(1)
					time.Sleep(20 * time.Millisecond)
				default:
					failures <- fmt.Errorf("client %d, %s after %s: %w", c, kinds[k], time.Since(start).Round(time.Millisecond), err)
					return
				}
			}
		}()
	}
	clientsDone.Wait() // each finishes the request it is in (bounded by requestTimeout)
	close(stop)
	wg.Wait()
	t.Logf("load ended %s after its deadline", time.Since(deadline).Round(time.Millisecond))
	for _, cl := range clients {
		cl.Close()
	}
	close(failures)
	for err := range failures {
		t.Error(err)
	}
	if err, _ := appendErr.Load().(error); err != nil {
		t.Fatalf("an append failed during the load: %v", err)
	}
	var total int64
	for k, kind := range kinds {
		t.Logf("%-6s %6d ok, %6d refused by admission control (UNAVAILABLE naming the limit)", kind, ok[k].Load(), refused[k].Load())
		total += ok[k].Load()
	}
	if total == 0 || ok[3].Load() == 0 {
		t.Fatalf("no request succeeded (metadata commands are never held back)")
	}
	if appends.Load() == 0 {
		t.Fatal("no append ran during the load")
	}
	mem, err := rep.proc.Memory()
	if err != nil {
		t.Fatal(err)
	}
	peak := mem.HWM
	t.Logf("%d clients for %s: server peak RSS %.1f MiB; %d appends of 20 records succeeded meanwhile", loadClients, duration, float64(peak)/(1<<20), appends.Load())
	if peak > 512<<20 {
		t.Errorf("server peak RSS %.1f MiB, want under 512 MiB", float64(peak)/(1<<20))
	}
	if !waitFor(15*time.Second, func() bool { return serverGoroutines(t, debug) <= baseGoroutines }) {
		t.Errorf("server goroutines %d after the load, baseline %d:\n%s", serverGoroutines(t, debug), baseGoroutines, goroutineProfile(t, debug))
	}
	if !waitFor(15*time.Second, func() bool { return activeConns(t, e.url, "flightsrv_load") <= baseActive }) {
		t.Errorf("server's PostgreSQL connections in use %d after the load, baseline %d", activeConns(t, e.url, "flightsrv_load"), baseActive)
	}
}

// isAdmissionRefusal reports whether err is admission control's UNAVAILABLE, which names the
// limit it hit: the running and queued bounds (--max-queries, --max-queued) or the queue wait
// (--queue-wait, --max-queries). Both name --max-queries.
func isAdmissionRefusal(err error) bool {
	st := status.Convert(err)
	return st.Code() == codes.Unavailable && strings.Contains(st.Message(), "--max-queries") &&
		(strings.Contains(st.Message(), "--max-queued") || strings.Contains(st.Message(), "--queue-wait"))
}

// loadRequest runs one request of TestLoad's kind and checks its answer.
func loadRequest(ctx context.Context, cl *flightsql.Client, kind, count string, wantRows int64) error {
	switch kind {
	case "scan":
		res, err := run(ctx, cl, ordScan)
		if err != nil {
			return err
		}
		defer res.release()
		var n int64
		for _, r := range res.batchRows {
			n += r
		}
		if n != wantRows {
			return fmt.Errorf("scan: %d rows, want %d", n, wantRows)
		}
	case "count":
		res, err := run(ctx, cl, count)
		if err != nil {
			return err
		}
		defer res.release()
		if len(res.recs) != 1 || res.recs[0].NumRows() != 1 {
			return fmt.Errorf("count: batches %v", res.batchRows)
		}
		if n := res.recs[0].Column(0).(*array.Int64).Value(0); n != wantRows {
			return fmt.Errorf("count: %d, want %d", n, wantRows)
		}
	case "poll":
		pi, err := cl.ExecutePoll(ctx, count, nil)
		for err == nil && pi.GetFlightDescriptor() != nil {
			time.Sleep(10 * time.Millisecond)
			pi, err = cl.ExecutePoll(ctx, count, pi.GetFlightDescriptor())
		}
		if err != nil {
			return err
		}
		res, err := fetch(ctx, cl, pi.GetInfo())
		if err != nil {
			return err
		}
		defer res.release()
		if len(res.recs) != 1 || res.recs[0].Column(0).(*array.Int64).Value(0) != wantRows {
			return fmt.Errorf("poll: batches %v", res.batchRows)
		}
	case "tables":
		info, err := cl.GetTables(ctx, &flightsql.GetTablesOpts{})
		if err != nil {
			return err
		}
		res, err := fetch(ctx, cl, info)
		if err != nil {
			return err
		}
		res.release()
	}
	return nil
}

// withAppName returns the PostgreSQL URL u with application_name set to name.
func withAppName(t *testing.T, u, name string) string {
	t.Helper()
	p, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	q := p.Query()
	q.Set("application_name", name)
	p.RawQuery = q.Encode()
	return p.String()
}

// activeConns counts the PostgreSQL connections of application name that are not idle.
func activeConns(t *testing.T, dbURL, name string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1 AND state <> 'idle'", name).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// serverGoroutines reads from a server's goroutine profile (debug=1: groups of identical
// stacks, each headed "N @ …") the number of goroutines running flightsrv's own code: RPC
// handlers, fragments, bucket reads, the server's loops. Goroutines of pgx alone (a pooled
// connection's background reader, which a loaded run once kept past the wait) or of gRPC's
// transport belong to no query and are left out; the server's connections to PostgreSQL are
// checked on their own (activeConns).
func serverGoroutines(t *testing.T, debugAddr string) int {
	t.Helper()
	profile := goroutineProfile(t, debugAddr)
	if !strings.HasPrefix(profile, "goroutine profile: total") {
		t.Fatalf("goroutine profile header %q", strings.SplitN(profile, "\n", 2)[0])
	}
	_, groups, _ := strings.Cut(profile, "\n")
	total := 0
	for _, group := range strings.Split(groups, "\n\n") {
		head, _, _ := strings.Cut(strings.TrimPrefix(group, "\n"), " @ ")
		n, err := strconv.Atoi(strings.TrimSpace(head))
		if err != nil {
			continue // trailing text
		}
		if strings.Contains(group, "github.com/flightsrv/flightsrv/") || strings.Contains(group, "\tmain.") {
			total += n
		}
	}
	return total
}

// profileClient asks a server's debug endpoint without keeping its connection (a kept
// connection would be a goroutine of the server's).
var profileClient = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}

// goroutineProfile returns a server's goroutine profile (debug=1: stacks grouped, counted).
func goroutineProfile(t *testing.T, debugAddr string) string {
	t.Helper()
	res, err := profileClient.Get("http://" + debugAddr + "/debug/pprof/goroutine?debug=1")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
