package query

import (
	"context"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc/status"

	"github.com/flightsrv/flightsrv/internal/fuzzcount"
	"github.com/flightsrv/flightsrv/internal/querylog"
)

// systemCalls are query calls as the registry lists them: one running, two ended, two users.
func systemCalls() []querylog.QueryInfo {
	at := time.Date(2026, 12, 5, 1, 0, 0, 0, time.UTC)
	return []querylog.QueryInfo{
		{ID: "00000000000000aa", User: "alice", Client: "127.0.0.1:5000", RPC: "DoGet", Command: "TicketStatementQuery", Statement: "SELECT",
			State: querylog.StateRunning, Start: at, Rows: 8192, Bytes: 1 << 20, FirstBatch: time.Millisecond, FirstBatchSet: true, HotBuckets: 2},
		{ID: "00000000000000bb", User: "bob", Client: "127.0.0.1:5001", RPC: "GetFlightInfo", Command: "CommandStatementQuery", Statement: "SELECT COUNT",
			State: querylog.StateFinished, Start: at.Add(time.Second), End: at.Add(2 * time.Second), Code: "OK", SQL: "SELECT 1"},
		{ID: "00000000000000bb", User: "bob", Client: "127.0.0.1:5001", RPC: "DoGet", Command: "TicketStatementQuery", Statement: "SELECT COUNT",
			State: querylog.StateFailed, Start: at.Add(3 * time.Second), End: at.Add(4 * time.Second), Code: "Canceled", ArchiveBuckets: 3},
	}
}

// TestSystemStatements: the views' projections, aliases, filters (=, <> on text and integer
// columns, NULL passing none) and limits select the rows and columns computed here by hand;
// flightsrv.sessions groups calls by client and user.
func TestSystemStatements(t *testing.T) {
	e := &Engine{opts: Options{System: System{Queries: querylog.NewRegistry()}}}
	calls := systemCalls()
	for _, c := range []struct {
		sql  string
		rows int
		cols []string
	}{
		{"SELECT * FROM flightsrv.queries", 3, nil},
		{"SELECT query_id AS id, state FROM flightsrv.queries WHERE user_name = 'bob'", 2, []string{"id", "state"}},
		{"SELECT query_id FROM flightsrv.queries WHERE user_name = 'bob' AND rpc <> 'DoGet'", 1, []string{"query_id"}},
		{"SELECT query_id FROM flightsrv.queries WHERE hot_buckets = 2", 1, nil},
		{"SELECT query_id FROM flightsrv.queries WHERE code = 'OK'", 1, nil},
		{"SELECT query_id FROM flightsrv.queries WHERE code <> 'OK'", 1, nil}, // NULL passes neither
		{"SELECT query_id FROM flightsrv.queries LIMIT 2", 2, nil},
		{"select * from FLIGHTSRV.sessions where running = 1", 1, nil},
		{"SELECT user_name, queries FROM flightsrv.sessions WHERE user_name = 'bob' AND queries = 1", 1, nil},
	} {
		st, ok, err := e.parseSystem(c.sql)
		if !ok || err != nil {
			t.Fatalf("%s: system %v, %v", c.sql, ok, err)
		}
		rows := st.rows(calls)
		if len(rows) != c.rows {
			t.Errorf("%s: %d rows, want %d", c.sql, len(rows), c.rows)
		}
		schema := st.schema()
		for i, name := range c.cols {
			if schema.Field(i).Name != name {
				t.Errorf("%s: column %d is %s, want %s", c.sql, i, schema.Field(i).Name, name)
			}
		}
		rec, err := buildRows(memory.DefaultAllocator, schema, rows)
		if err != nil {
			t.Fatalf("%s: %v", c.sql, err)
		}
		rec.Release()
	}
	for _, sql := range []string{"SELECT 1", "SELECT * FROM flights WHERE origin = 'flightsrv'", "not sql at all flightsrv"} {
		if _, ok, _ := e.parseSystem(sql); ok {
			t.Errorf("%s: read as a system statement", sql)
		}
	}
}

// FuzzSystemStatement runs arbitrary SQL text (a client's) through the system statements'
// reader: no panic; a refusal is a gRPC status; a statement read has as many output columns as
// its schema and builds its batch over sample calls, a cancel names its id.
func FuzzSystemStatement(f *testing.F) {
	for _, s := range []string{
		"SELECT * FROM flightsrv.queries", "SELECT query_id AS q FROM flightsrv.queries WHERE state = 'running' AND rows <> 0 LIMIT 3",
		"SELECT flightsrv.cancel_query('00000000000000aa')", "SELECT * FROM flightsrv.sessions ORDER BY 1", "SELECT flightsrv.nope()",
		"SELECT * FROM flightsrv.queries a JOIN flightsrv.sessions b ON true", "SELECT * FROM flightsrv.queries WHERE NULL = state",
	} {
		f.Add(s)
	}
	e := &Engine{opts: Options{System: System{Queries: querylog.NewRegistry(), Admin: func(context.Context) bool { return true }}}}
	calls := systemCalls()
	f.Fuzz(func(t *testing.T, sql string) {
		fuzzcount.Add()
		st, ok, err := e.parseSystem(sql)
		if !ok {
			return
		}
		if err != nil {
			if _, isStatus := status.FromError(err); !isStatus {
				t.Fatalf("%q: refusal %v is no gRPC status", sql, err)
			}
			return
		}
		if st.view == "" {
			return
		}
		schema := st.schema()
		rows := st.rows(calls)
		for _, r := range rows {
			if len(r) != schema.NumFields() {
				t.Fatalf("%q: a row of %d values for %d columns", sql, len(r), schema.NumFields())
			}
		}
		rec, err := buildRows(memory.DefaultAllocator, schema, rows)
		if err != nil {
			t.Fatalf("%q: %v", sql, err)
		}
		rec.Release()
	})
}
