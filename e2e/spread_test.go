package e2e

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"google.golang.org/grpc/metadata"

	"github.com/flightsrv/flightsrv/internal/testsupport/testproc"
)

// doGetsServed scrapes a replica's Prometheus endpoint and returns the DoGet calls it answered
// with OK and the rows its DoGets sent (flightsrv.rpc.calls and flightsrv.query.rows,
// internal/querylog/metrics.go).
func doGetsServed(t *testing.T, metricsAddr string) (calls, rows int64) {
	t.Helper()
	fams := scrape(t, metricsAddr)
	return int64(sum(fams, "flightsrv_rpc_calls_total", "rpc", "DoGet", "code", "OK")), int64(sum(fams, "flightsrv_query_rows_total", "rpc", "DoGet"))
}

// TestStreamingSpreadsOverReplicas (issue 20): three `flightsrv serve` replicas advertising
// each other. A single-endpoint result planned on replica i lists replica i first, and fetched
// as ADBC, JDBC and arrow-go do (from the first location) it is streamed by replica i: its
// metrics count the DoGet and the rows, the other two's do not move. A multi-endpoint result
// (call header flightsrv.endpoints=multiple) planned on replica i lists endpoint j from
// replica i+j on, so its four endpoints are streamed by the three replicas in turn; every
// answer equals the sample's rows.
func TestStreamingSpreadsOverReplicas(t *testing.T) {
	if testing.Short() {
		t.Skip("starts server processes")
	}
	e := newEnv(t)
	bin := testproc.BuildFlightsrv(t)
	metricsAddrs := testproc.FreePorts(t, 3)
	reps := startReplicasEach(t, e, bin, testproc.WriteKeyring(t, "e2e-1"), 3,
		func(i int) []string { return []string{"--metrics-listen", metricsAddrs[i]} }, "--endpoint-buckets", "2")
	ctx := context.Background()
	want := expected(e.sample, "ORD", ts("2001-01-01T00:00:00Z"), ts("2001-07-01T00:00:00Z"))
	byLocation := map[string]int{}
	cls := make([]*flightsql.Client, len(reps))
	for i, r := range reps {
		byLocation["grpc+tcp://"+r.addr] = i
		cls[i] = dialAddr(t, r.addr, 0)
	}
	served := func() (calls, rows [3]int64) {
		for i, m := range metricsAddrs {
			calls[i], rows[i] = doGetsServed(t, m)
		}
		return
	}

	for _, multiple := range []bool{false, true} {
		for planner := range reps {
			qctx := ctx
			if multiple {
				qctx = metadata.AppendToOutgoingContext(ctx, "flightsrv.endpoints", "multiple")
			}
			info, err := cls[planner].Execute(qctx, ordScan)
			if err != nil {
				t.Fatal(err)
			}
			if n := len(info.Endpoint); (n == 1) == multiple || (multiple && n != 4) {
				t.Fatalf("planned on replica %d (multiple %v): %d endpoints", planner, multiple, n)
			}
			beforeCalls, beforeRows := served()
			var wantCalls, wantRows [3]int64
			var got []row
			for j, ep := range info.Endpoint {
				if len(ep.Location) != 3 {
					t.Fatalf("endpoint %d lists %d locations, want the 3 advertised", j, len(ep.Location))
				}
				first, ok := byLocation[ep.Location[0].Uri]
				if !ok {
					t.Fatalf("endpoint %d's first location %q is not an advertised address", j, ep.Location[0].Uri)
				}
				// The planning replica first; endpoint j of several from the planner's j-th
				// successor on.
				if first != (planner+j)%3 {
					t.Fatalf("planned on replica %d: endpoint %d lists replica %d first, want %d", planner, j, first, (planner+j)%3)
				}
				res, err := fetchEndpoint(ctx, cls[first], info, ep)
				if err != nil {
					t.Fatalf("endpoint %d from replica %d: %v\n%s", j, first, err, reps[first].proc.Output())
				}
				part := rowsOf(t, res, "ORD")
				res.release()
				got = append(got, part...)
				wantCalls[first]++
				wantRows[first] += int64(len(part))
			}
			if !slices.Equal(got, want) {
				t.Fatalf("planned on replica %d (multiple %v): %d rows, the sample %d", planner, multiple, len(got), len(want))
			}
			// A call is counted once its handler has returned, which may be just after the
			// client read the stream's end: look again for up to five seconds.
			for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
				afterCalls, afterRows := served()
				var diff string
				for k := range reps {
					if c, r := afterCalls[k]-beforeCalls[k], afterRows[k]-beforeRows[k]; c != wantCalls[k] || r != wantRows[k] {
						diff = fmt.Sprintf("replica %d served %d DoGets and %d rows, want %d and %d", k, c, r, wantCalls[k], wantRows[k])
						break
					}
				}
				if diff == "" {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("planned on replica %d (multiple %v): %s", planner, multiple, diff)
				}
			}
			t.Logf("planned on replica %d (multiple %v): DoGets served per replica %v, rows %v", planner, multiple,
				fmt.Sprint(wantCalls), fmt.Sprint(wantRows))
		}
	}
}
