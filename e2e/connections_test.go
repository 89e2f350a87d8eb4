package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/routing/cockroach"
	"github.com/flightsrv/flightsrv/server"
)

// capScan reads partition CAP's June: 30,000 records of about 1 KB, some fifteen hot batches
// (routing.MaxBatchBytes each), more than the stream's pipeline buffers, so a reader stays
// open — holding its connection — while its client does not read.
const capScan = "SELECT timestamp, id, value FROM flights WHERE origin = 'CAP'" +
	" AND timestamp >= TIMESTAMPTZ '2001-06-01T00:00:00Z' AND timestamp < TIMESTAMPTZ '2001-07-01T00:00:00Z' ORDER BY timestamp, id"

// capValue is the value of CAP's records: about 1 KB of JSON.
var capValue = []byte(`{"delay":1,"distance":2,"destination":"X","note":"` + strings.Repeat("x", 1000) + `"}`)

// appendCap appends n records of partition CAP in June 2001 (ids prefixed with prefix).
func appendCap(ctx context.Context, table *routing.DurableTable, prefix string, n int) error {
	recs := make([]routing.Record, n)
	start := time.Date(2001, 6, 1, 0, 0, 0, 0, time.UTC)
	for i := range recs {
		recs[i] = routing.Record{PartitionKey: []byte("CAP"), EventTime: start.Add(time.Duration(i) * time.Minute / 2),
			SortKey: []byte(fmt.Sprintf("%s%08d", prefix, i)), Value: capValue}
	}
	_, err := table.Append(ctx, recs)
	return err
}

// TestQueryConnectionsCap (issue 10): a server and an appender share one pgx pool of three
// PostgreSQL connections; the server's queries may use two (--query-connections 2). Two
// clients that read one batch of a large hot scan and stop hold both; a third query waits
// --query-connection-wait and is refused with UNAVAILABLE naming the flag, while appends
// through the same pool keep succeeding; once the clients go away the connections come back
// and the query runs.
func TestQueryConnectionsCap(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	st, err := cockroach.Open(ctx, cockroach.Config{URL: e.url, MaxConns: 3, AcquireTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	table, err := routing.NewDurableTable(flightsTable, st, nil, routing.Options{Clock: func() time.Time { return asOf }})
	if err != nil {
		t.Fatal(err)
	}
	if err := appendCap(ctx, table, "cap-", 30000); err != nil {
		t.Fatal(err)
	}
	srv, err := server.Start(ctx, server.Config{
		Listen: "127.0.0.1:0", Tables: []routing.TableDef{flightsTable}, Hot: st, Archive: e.reader,
		Pushdown: true, Alloc: e.alloc, Fanout: 1, QueryConnections: 2, QueryConnectionWait: 300 * time.Millisecond,
		StallTimeout: -1,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	if srv.HotReads == nil || srv.HotReads.Limit() != 2 {
		t.Fatalf("query reads capped at %v, want 2", srv.HotReads)
	}
	var cancels []context.CancelFunc
	for i := range 2 {
		cctx, cancel := context.WithCancel(ctx)
		cancels = append(cancels, cancel)
		cl := dialSlow(t, srv)
		info, err := cl.Execute(cctx, capScan)
		if err != nil {
			t.Fatal(err)
		}
		rdr, err := cl.DoGet(cctx, info.Endpoint[0].Ticket)
		if err != nil {
			t.Fatal(err)
		}
		defer rdr.Release()
		if !rdr.Next() {
			t.Fatalf("client %d: no first batch: %v", i, rdr.Err())
		}
	}
	if !waitFor(10*time.Second, func() bool { return srv.HotReads.InUse() == 2 }) {
		t.Fatalf("%d query connections in use, want the cap's 2", srv.HotReads.InUse())
	}
	cl := dial(t, srv)
	if _, err := run(ctx, cl, capScan); status.Code(err) != codes.Unavailable || !strings.Contains(status.Convert(err).Message(), "--query-connections") {
		t.Fatalf("a query beyond the cap: %v", err)
	}
	for i := range 5 {
		if err := appendCap(ctx, table, fmt.Sprintf("more%d-", i), 10); err != nil {
			t.Fatalf("append %d while queries hold their connections: %v", i, err)
		}
	}
	if n := st.Pool().Stat().AcquiredConns(); n > 2 {
		t.Fatalf("%d pooled connections acquired while the two queries wait, want at most the cap's 2", n)
	}
	for _, cancel := range cancels {
		cancel()
	}
	if !waitFor(10*time.Second, func() bool { return srv.HotReads.InUse() == 0 && st.Pool().Stat().AcquiredConns() == 0 }) {
		t.Fatalf("after the clients left: %d query connections in use, %d acquired", srv.HotReads.InUse(), st.Pool().Stat().AcquiredConns())
	}
	res := mustRun(t, cl, strings.Replace(strings.Replace(capScan, "SELECT timestamp, id, value", "SELECT COUNT(*)", 1), " ORDER BY timestamp, id", "", 1))
	if n := scalarCount(t, res); n != 30050 {
		t.Fatalf("count after the appends %d, want 30050", n)
	}
}
