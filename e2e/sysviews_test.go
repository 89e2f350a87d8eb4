package e2e

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/flightsrv/flightsrv/internal/testsupport/testproc"
	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/server"
)

// column returns the values of a result's column name as text ("NULL" for nulls), row by row.
func column(t *testing.T, res *result, name string) []string {
	t.Helper()
	var out []string
	for _, rec := range res.recs {
		idx := rec.Schema().FieldIndices(name)
		if len(idx) != 1 {
			t.Fatalf("no column %s in %s", name, rec.Schema())
		}
		col := rec.Column(idx[0])
		for i := range col.Len() {
			if col.IsNull(i) {
				out = append(out, "NULL")
			} else {
				out = append(out, col.ValueStr(i))
			}
		}
	}
	return out
}

// TestQueriesVisibleAndCancelled (issue 20): a query held running (its client reads one batch
// and stops) is listed by SELECT … FROM flightsrv.queries with its id, state running, statement
// kind, the rows it sent and its time to first batch (no SQL text without --log-statements),
// its client appears in flightsrv.sessions, SELECT flightsrv.cancel_query('<id>') answers true
// and the held client's stream ends with CANCELLED; the view then lists the call as failed with
// code Canceled. An unknown id cancels nothing (false); shapes the views do not take and
// columns they do not have are refused.
func TestQueriesVisibleAndCancelled(t *testing.T) {
	e := newEnv(t)
	srv, err := server.Start(context.Background(), server.Config{
		Listen: "127.0.0.1:0", Tables: []routing.TableDef{flightsTable}, Hot: e.store, Archive: e.reader, Pushdown: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	rest := holdFirstBatch(t, srv)
	cl := dial(t, srv)

	res := mustRun(t, cl, "SELECT query_id, state, statement, rows, first_batch_seconds AS first, sql FROM flightsrv.queries"+
		" WHERE rpc = 'DoGet' AND state = 'running' AND command = 'TicketStatementQuery'")
	ids, rows, firsts := column(t, res, "query_id"), column(t, res, "rows"), column(t, res, "first")
	held := -1
	for i := range ids {
		if rows[i] != "0" { // the listing's own DoGet has sent nothing yet
			held = i
		}
	}
	if held < 0 {
		t.Fatalf("no running DoGet that sent rows among %v (rows %v)", ids, rows)
	}
	id := ids[held]
	if st := column(t, res, "statement")[held]; st != "SELECT" || firsts[held] == "NULL" || column(t, res, "sql")[held] != "NULL" {
		t.Errorf("held query listed as statement %s, first batch %s, sql %s", st, firsts[held], column(t, res, "sql")[held])
	}
	sessions := mustRun(t, cl, "SELECT client, running FROM flightsrv.sessions WHERE running <> 0")
	if n := len(column(t, sessions, "client")); n < 1 {
		t.Errorf("flightsrv.sessions lists %d clients with running queries", n)
	}

	if got := column(t, mustRun(t, cl, "SELECT flightsrv.cancel_query('0000000000000000')"), "cancel_query"); len(got) != 1 || got[0] != "false" {
		t.Errorf("cancel of an unknown id: %v, want false", got)
	}
	if got := column(t, mustRun(t, cl, "SELECT flightsrv.cancel_query('"+id+"')"), "cancel_query"); len(got) != 1 || got[0] != "true" {
		t.Fatalf("cancel_query: %v, want true", got)
	}
	if _, err := rest(); status.Code(err) != codes.Canceled {
		t.Fatalf("the cancelled query's stream ended with %v, want CANCELLED", err)
	}
	var after *result
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		after = mustRun(t, cl, "SELECT state, code FROM flightsrv.queries WHERE query_id = '"+id+"' AND rpc = 'DoGet'")
		if len(column(t, after, "state")) > 0 && column(t, after, "state")[0] != "running" || time.Now().After(deadline) {
			break
		}
	}
	if st, code := column(t, after, "state"), column(t, after, "code"); len(st) != 1 || st[0] != "failed" || code[0] != "Canceled" {
		t.Errorf("after the cancel: state %v code %v, want failed Canceled", st, code)
	}

	for sql, want := range map[string]codes.Code{
		"SELECT * FROM flightsrv.queries ORDER BY start_time":        codes.Unimplemented,
		"SELECT nope FROM flightsrv.queries":                         codes.InvalidArgument,
		"SELECT * FROM flightsrv.nothing":                            codes.NotFound,
		"SELECT flightsrv.cancel_query(1)":                           codes.Unimplemented,
		"SELECT * FROM flightsrv.queries WHERE rows > 1":             codes.Unimplemented,
		"SELECT query_id FROM flightsrv.queries, flightsrv.sessions": codes.Unimplemented,
	} {
		if _, err := run(context.Background(), cl, sql); status.Code(err) != want {
			t.Errorf("%s: %v, want %v", sql, err, want)
		}
	}
}

// TestCancelQueryIsForAdmins: with authentication, flightsrv.cancel_query is refused
// (PERMISSION_DENIED) to a user not in Admins (serve --auth-admins) and answered to one in it;
// both may read flightsrv.queries, where each call names its user, and where the SQL text
// (--log-statements) of other users' calls is shown to administrators only.
func TestCancelQueryIsForAdmins(t *testing.T) {
	e := newEnv(t)
	srv := authServer(t, e, []string{"alice", "root"}, []string{"root"}, func(c *server.Config) { c.LogStatements = true })
	cl := dial(t, srv)
	as := func(user string) context.Context {
		return metadata.AppendToOutgoingContext(context.Background(), "authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(user+":secret")))
	}
	cancel := "SELECT flightsrv.cancel_query('0123456789abcdef')"
	if _, err := run(as("alice"), cl, cancel); status.Code(err) != codes.PermissionDenied {
		t.Fatalf("alice's cancel_query: %v, want PERMISSION_DENIED", err)
	}
	res, err := run(as("root"), cl, cancel)
	if err != nil {
		t.Fatalf("root's cancel_query: %v", err)
	}
	t.Cleanup(res.release)
	res, err = run(as("alice"), cl, "SELECT user_name, statement FROM flightsrv.queries WHERE rpc = 'DoGet'")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(res.release)
	seen := map[string]bool{}
	for _, rec := range res.recs {
		u, st := rec.Column(0).(*array.String), rec.Column(1).(*array.String)
		for i := range u.Len() {
			seen[u.Value(i)+" "+st.Value(i)] = true
		}
	}
	if !seen["root SELECT CANCEL"] || !seen["alice SELECT SYSTEM"] {
		t.Errorf("calls listed by user and kind: %v", seen)
	}

	// With --log-statements, a user who is no administrator sees the SQL text of their own
	// calls only; an administrator sees every call's.
	listing := "SELECT user_name, sql FROM flightsrv.queries WHERE rpc = 'DoGet' AND statement = 'SELECT CANCEL'"
	for user, want := range map[string]string{"alice": "NULL", "root": cancel} {
		res, err := run(as(user), cl, listing)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(res.release)
		if got := column(t, res, "sql"); len(got) != 1 || got[0] != want {
			t.Errorf("%s reads root's cancel_query text as %v, want %q", user, got, want)
		}
	}
	mine := "SELECT sql FROM flightsrv.queries WHERE user_name = 'alice' AND rpc = 'DoGet' AND state = 'running'"
	res, err = run(as("alice"), cl, mine)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(res.release)
	if got := column(t, res, "sql"); len(got) != 1 || got[0] != mine {
		t.Errorf("alice reads her own running call's text as %v", got)
	}
}

// TestCancelQueryReachesThePeerThatStreams (issue 20): two `flightsrv serve` replicas sharing
// the stores and the keyring, each advertising (and so forwarding cancels to) both. A query
// id is the planning GetFlightInfo's, carried by its ticket, so a DoGet on the other replica
// runs under the same id. ORD's scan planned on A and streamed from B to a client that reads
// one batch and stops is stopped by `SELECT flightsrv.cancel_query(id)` sent to A (true; B's
// stream ends CANCELLED by cancel_query), and the same scan planned on A and streamed from A
// is stopped by the same statement sent to B. An unknown id answers false on both.
func TestCancelQueryReachesThePeerThatStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("starts server processes")
	}
	e := newEnv(t)
	reps := startReplicas(t, e, testproc.BuildFlightsrv(t), testproc.WriteKeyring(t, "e2e-1"), 2)
	ctx := context.Background()
	want := len(expected(e.sample, "ORD", ts("2001-01-01T00:00:00Z"), ts("2001-07-01T00:00:00Z")))
	for _, c := range []struct {
		name                   string
		plan, stream, cancelOn int
	}{
		{"planned on A, streamed from B, cancelled on A", 0, 1, 0},
		{"planned on A, streamed from A, cancelled on B", 0, 0, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			planner := dialAddr(t, reps[c.plan].addr, 0)
			info, err := planner.Execute(ctx, ordScan)
			if err != nil {
				t.Fatal(err)
			}
			ids := column(t, mustRun(t, planner, "SELECT query_id FROM flightsrv.queries WHERE rpc = 'GetFlightInfo' AND statement = 'SELECT' AND state = 'finished'"), "query_id")
			if len(ids) == 0 {
				t.Fatal("the planning call is not listed")
			}
			id := ids[0] // the newest first
			rdr, err := dialAddr(t, reps[c.stream].addr, 64<<10).DoGet(ctx, info.Endpoint[0].Ticket)
			if err != nil {
				t.Fatal(err)
			}
			if !rdr.Next() {
				t.Fatalf("no first batch: %v", rdr.Err())
			}
			rows := rdr.RecordBatch().NumRows()
			canceller := dialAddr(t, reps[c.cancelOn].addr, 0)
			if got := column(t, mustRun(t, canceller, "SELECT flightsrv.cancel_query('0000000000000000')"), "cancel_query"); len(got) != 1 || got[0] != "false" {
				t.Errorf("cancel of an unknown id: %v, want false", got)
			}
			if got := column(t, mustRun(t, canceller, "SELECT flightsrv.cancel_query('"+id+"')"), "cancel_query"); len(got) != 1 || got[0] != "true" {
				t.Fatalf("cancel_query(%s) on replica %d: %v, want true\n%s\n%s", id, c.cancelOn, got, reps[0].proc.Output(), reps[1].proc.Output())
			}
			for rdr.Next() {
				rows += rdr.RecordBatch().NumRows()
			}
			err = rdr.Err()
			rdr.Release()
			if status.Code(err) != codes.Canceled || !strings.Contains(status.Convert(err).Message(), "cancel_query") || rows >= int64(want) {
				t.Fatalf("the stream on replica %d ended with %v after %d of %d rows, want CANCELLED by cancel_query", c.stream, err, rows, want)
			}
		})
	}
}
