package main

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/flightsrv/flightsrv/internal/testsupport/pgtest"
	"github.com/flightsrv/flightsrv/routing"
)

// TestServeUsesTheAdaptersPorts: the server serve starts over PostgreSQL asks the hot store's
// row-aggregate port (routing.RowAggregator) — a JSON-filtered count over six hot buckets of
// three partitions is answered by the store, reading no row — and answers what the records
// hold. openStore's wrapper used to hide the port (and the pool behind
// --query-connections' default cap), so every bucket read its rows.
func TestServeUsesTheAdaptersPorts(t *testing.T) {
	ctx := context.Background()
	st, dbURL := openMigratedPG(t)
	def := routing.TableDef{Name: "flights", TableID: "flightsrv.test.ports", PartitionColumn: "origin",
		Strategy: routing.CalendarMonthUTC, WritableBuckets: 12, JSONValues: true}
	clock := func() time.Time { return time.Date(2001, 3, 1, 0, 0, 0, 0, time.UTC) }
	tbl, err := routing.NewDurableTable(def, st, nil, routing.Options{Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	var recs []routing.Record
	want := 0
	for _, origin := range []string{"AAA", "BBB", "CCC"} {
		for month := 1; month <= 2; month++ {
			for i := range 5 {
				delay := 20*i + month + len(recs)%7
				if delay > 60 {
					want++
				}
				recs = append(recs, routing.Record{PartitionKey: []byte(origin),
					EventTime: time.Date(2001, time.Month(month), 3+i, 12, 0, 0, 0, time.UTC),
					SortKey:   []byte(fmt.Sprintf("%s-%d-%d", origin, month, i)),
					Value:     []byte(fmt.Sprintf(`{"delay": %d}`, delay))})
			}
		}
	}
	if n, err := tbl.Append(ctx, recs); err != nil || n != len(recs) {
		t.Fatalf("append: %d of %d, %v", n, len(recs), err)
	}

	cfg := serveConfig{listen: "127.0.0.1:0", tables: tableFlags{def}, pushdown: true, fanout: 4,
		sec: securityConfig{noAuth: true}, store: dbURL, archive: t.TempDir()}
	cl := serveForTest(t, &cfg, st)
	q := "SELECT count(*) FROM flights WHERE origin IN ('AAA', 'BBB', 'CCC') AND timestamp >= '2001-01-01T00:00:00Z' AND timestamp < '2001-03-01T00:00:00Z' AND (value->>'delay')::int > 60"
	if n, err := queryCount(ctx, cl, q); err != nil || n != int64(want) {
		t.Fatalf("count %d (%v), want %d", n, err, want)
	}
	plan := explainText(ctx, t, cl, "EXPLAIN ANALYZE "+q)
	m := regexp.MustCompile(`answered by a store (\d+), fallen back to rows (\d+)`).FindStringSubmatch(plan)
	r := regexp.MustCompile(`reads: \d+ hot statement\(s\), (\d+) hot row\(s\)`).FindStringSubmatch(plan)
	if m == nil || r == nil {
		t.Fatalf("no buckets or reads line in\n%s", plan)
	}
	if answered, _ := strconv.Atoi(m[1]); answered != 6 || m[2] != "0" || r[1] != "0" {
		t.Fatalf("%s buckets answered by the store, %s fell back, %s hot rows read; want all six answered by row-aggregate statements, no row read:\n%s", m[1], m[2], r[1], plan)
	}
}

// explainText runs an EXPLAIN statement and returns its lines.
func explainText(ctx context.Context, t *testing.T, cl *flightsql.Client, q string) string {
	t.Helper()
	info, err := cl.Execute(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	rdr, err := cl.DoGet(ctx, info.Endpoint[0].Ticket)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Release()
	var b strings.Builder
	for rdr.Next() {
		rec := rdr.RecordBatch()
		for i := range int(rec.NumRows()) {
			b.WriteString(rec.Column(0).ValueStr(i) + "\n")
		}
	}
	if err := rdr.Err(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// openMigratedPG opens, through openStore, a fresh database on the test PostgreSQL server
// (pgtest) with the Pulpitum v4 schema; closed at t's cleanup. It returns the store and the
// database's URL.
func openMigratedPG(t *testing.T) (*openedStore, string) {
	t.Helper()
	ctx := context.Background()
	dbURL := pgtest.Start(t).NewDatabase(t)
	st, err := openStore(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	return st, dbURL
}

// serveForTest starts serve's server (startServer) with cfg over st and returns a plaintext
// Flight SQL client of it; both are stopped at t's cleanup.
func serveForTest(t *testing.T, cfg *serveConfig, st *openedStore) *flightsql.Client {
	t.Helper()
	ctx := context.Background()
	srv, tel, err := startServer(ctx, cfg, st)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tel.Shutdown(ctx) })
	t.Cleanup(srv.Close)
	cl, err := flightsql.NewClient(srv.Addr(), nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	return cl
}
