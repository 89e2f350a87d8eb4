package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	arrowflightsql "github.com/apache/arrow-go/v18/arrow/flight/flightsql"

	"go.opentelemetry.io/otel"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/flightsrv/flightsrv/internal/querylog"
	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/server"
)

// logBuffer collects a server's log output; safe for concurrent writes.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// lines returns the JSON log lines written so far with the given message.
func (b *logBuffer) lines(t *testing.T, msgs ...string) []map[string]any {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(b.buf.Bytes()))
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("log line %q is not JSON: %v", sc.Text(), err)
		}
		for _, msg := range msgs {
			if m["msg"] == msg {
				out = append(out, m)
			}
		}
	}
	return out
}

func (b *logBuffer) reset() {
	b.mu.Lock()
	b.buf.Reset()
	b.mu.Unlock()
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// secretStore is a hot store whose batch scans fail with an error holding what a raw database
// error may hold: the partition value, a file path, SQL text.
type secretStore struct{ routing.HotStore }

var errSecret = errors.New(`pq: could not read file "/var/lib/postgresql/base/16384/2619": partition_key = 'ORD' in SELECT * FROM pulpitum_v4_records`)

func (s secretStore) ScanRange(context.Context, routing.BucketID, routing.BatchRequest) (routing.Route, routing.BatchReader, error) {
	return routing.Route{}, nil, fmt.Errorf("scan: %w", errSecret)
}

// queryLogServer starts a server over hot and the env's archive whose log goes, as JSON at
// level, to the returned buffer; each of with changes its configuration first.
func queryLogServer(t *testing.T, e *env, hot routing.HotStore, level slog.Level, with ...func(*server.Config)) (*server.Server, *logBuffer) {
	t.Helper()
	logs := &logBuffer{}
	cfg := server.Config{
		Listen: "127.0.0.1:0", Tables: []routing.TableDef{flightsTable}, Hot: hot, Archive: e.reader, Pushdown: true,
		Logger: slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: level})),
	}
	for _, f := range with {
		f(&cfg)
	}
	srv, err := server.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return srv, logs
}

// assertPrivate fails when a log line or span attribute holds the partition value, the path
// or the SQL of errSecret, or the query's literals.
func assertPrivate(t *testing.T, what, s string) {
	t.Helper()
	for _, bad := range []string{"ORD", "/var/lib", "pulpitum_v4_records", "16384/2619", "2001-03-15", "pq:"} {
		if strings.Contains(s, bad) {
			t.Errorf("%s holds %q: %s", what, bad, s)
		}
	}
}

// recordMetrics makes the global meter provider one read by the returned reader until the
// test ends (servers built after it make their instruments from it).
func recordMetrics(t *testing.T) *sdkmetric.ManualReader {
	reader := sdkmetric.NewManualReader()
	prev := otel.GetMeterProvider()
	otel.SetMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)))
	t.Cleanup(func() { otel.SetMeterProvider(prev) })
	return reader
}

// recordSpans makes the global tracer provider record every span until the test ends.
func recordSpans(t *testing.T) *tracetest.SpanRecorder {
	t.Helper()
	spans := tracetest.NewSpanRecorder()
	prev := otel.GetTracerProvider()
	otel.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans)))
	t.Cleanup(func() { otel.SetTracerProvider(prev) })
	return spans
}

// callSpans returns the names of the ended spans whose flightsrv.query.id is id, in order.
func callSpans(spans *tracetest.SpanRecorder, id any) []string {
	var out []string
	for _, s := range spans.Ended() {
		for _, kv := range s.Attributes() {
			if kv.Key == querylog.AttrQueryID && kv.Value.AsString() == id {
				out = append(out, strings.TrimPrefix(s.Name(), querylog.FlightService+"/"))
			}
		}
	}
	return out
}

// TestRefusedAndFailedQueriesAreLoggedOnce: every refused or failed query leaves exactly one
// structured line (RPC, Flight SQL command, statement kind, gRPC code, duration, rows,
// buckets per store, a query id that is also the call span's flightsrv.query.id attribute),
// answered queries leave none, and no line or span attribute holds a partition value, a
// literal, a path or the raw database error — which reaches the log at debug level only.
func TestRefusedAndFailedQueriesAreLoggedOnce(t *testing.T) {
	spans := recordSpans(t)

	e := newEnv(t)
	ctx := context.Background()
	from, to := ts("2001-03-15T00:00:00Z"), ts("2001-04-15T00:00:00Z")
	queryMsgs := []string{"query refused", "query failed", "query cancelled"}

	srv, logs := queryLogServer(t, e, e.store, slog.LevelInfo)
	cl := dial(t, srv)

	// Answered: no line.
	if got, want := scalarCount(t, mustRun(t, cl, countSQL("ORD", from, to))), int64(len(expected(e.sample, "ORD", from, to))); got != want {
		t.Fatalf("count %d, want %d", got, want)
	}
	if lines := logs.lines(t, queryMsgs...); len(lines) != 0 {
		t.Fatalf("an answered query was logged: %v", lines)
	}

	// Refused while planning (no partition equality): INVALID_ARGUMENT at GetFlightInfo.
	refused := fmt.Sprintf("SELECT COUNT(*) FROM flights WHERE timestamp >= TIMESTAMPTZ '%s' AND timestamp < TIMESTAMPTZ '%s'",
		from.Format("2006-01-02T15:04:05Z"), to.Format("2006-01-02T15:04:05Z"))
	if _, err := cl.Execute(ctx, refused); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("refused query: %v", err)
	}
	// Refused as a prepared statement over a table that does not exist: NOT_FOUND at DoAction.
	if _, err := cl.Prepare(ctx, "SELECT * FROM nowhere WHERE origin = 'ORD'"); status.Code(err) != codes.NotFound {
		t.Fatalf("prepare: %v", err)
	}
	lines := logs.lines(t, queryMsgs...)
	if len(lines) != 2 {
		t.Fatalf("want 2 lines, got %d:\n%s", len(lines), logs)
	}
	want := []map[string]any{
		{"level": "WARN", "msg": "query refused", "rpc": "GetFlightInfo", "command": "CommandStatementQuery", "statement": "SELECT",
			"code": "InvalidArgument", "rows": 0.0, "hot_buckets": 0.0, "archive_buckets": 0.0,
			"message": "flights needs origin = <value> (several partitions: origin IN (…) or = ANY($1); every partition of the range: the analytical mode, session option analytical = on)"},
		{"level": "WARN", "msg": "query refused", "rpc": "DoAction", "command": "CreatePreparedStatement", "statement": "SELECT",
			"code": "NotFound", "rows": 0.0, "hot_buckets": 0.0, "archive_buckets": 0.0},
	}
	for i, w := range want {
		for k, v := range w {
			if lines[i][k] != v {
				t.Errorf("line %d: %s = %v, want %v", i, k, lines[i][k], v)
			}
		}
		if d, ok := lines[i]["duration"].(float64); !ok || d <= 0 {
			t.Errorf("line %d: duration %v", i, lines[i]["duration"])
		}
	}
	assertPrivate(t, "log", logs.String())

	// Failed while streaming (the hot store's raw error): INTERNAL at DoGet, one line with the
	// error's class, the raw text only at debug level.
	for _, level := range []slog.Level{slog.LevelInfo, slog.LevelDebug} {
		srv, logs := queryLogServer(t, e, secretStore{e.store}, level)
		cl := dial(t, srv)
		_, err := run(ctx, cl, fmt.Sprintf("SELECT timestamp, id FROM flights WHERE origin = 'ORD' AND timestamp >= TIMESTAMPTZ '%s' AND timestamp < TIMESTAMPTZ '%s'",
			ts("2001-05-01T00:00:00Z").Format("2006-01-02T15:04:05Z"), ts("2001-06-01T00:00:00Z").Format("2006-01-02T15:04:05Z")))
		if st := status.Convert(err); st.Code() != codes.Internal || st.Message() != "query could not be executed" {
			t.Fatalf("failed query: %v", err)
		}
		lines := logs.lines(t, queryMsgs...)
		if len(lines) != 1 {
			t.Fatalf("want 1 line, got %d:\n%s", len(lines), logs)
		}
		l := lines[0]
		for k, v := range map[string]any{"level": "ERROR", "msg": "query failed", "rpc": "DoGet", "command": "TicketStatementQuery",
			"statement": "SELECT", "code": "Internal", "rows": 0.0, "error_class": "*errors.errorString", "message": "query could not be executed"} {
			if l[k] != v {
				t.Errorf("failed line: %s = %v, want %v", k, l[k], v)
			}
		}
		// The span of the DoGet call carries the line's query id.
		var call sdktrace.ReadOnlySpan
		for _, s := range spans.Ended() {
			for _, kv := range s.Attributes() {
				if kv.Key == querylog.AttrQueryID && kv.Value.AsString() == l["query_id"] {
					call = s
				}
			}
		}
		if call == nil || call.Name() != "arrow.flight.protocol.FlightService/DoGet" {
			t.Fatalf("no DoGet span with query id %v", l["query_id"])
		}
		if l["trace_id"] != call.SpanContext().TraceID().String() {
			t.Errorf("trace_id %v, span's %s", l["trace_id"], call.SpanContext().TraceID())
		}
		if level == slog.LevelInfo {
			assertPrivate(t, "log", logs.String())
			if n := len(logs.lines(t, "query error detail")); n != 0 {
				t.Errorf("%d detail lines at info level", n)
			}
			continue
		}
		detail := logs.lines(t, "query error detail")
		if len(detail) != 1 || detail[0]["query_id"] != l["query_id"] || !strings.Contains(detail[0]["err"].(string), errSecret.Error()) {
			t.Errorf("debug detail lines: %v", detail)
		}
	}
	for _, s := range spans.Ended() {
		for _, kv := range s.Attributes() {
			if v := kv.Value.Emit(); partitionWord.MatchString(v) || strings.Contains(v, "/var/lib") {
				t.Errorf("span %q attribute %s = %q", s.Name(), kv.Key, v)
			}
		}
	}
}

// refusedSQL is refused as UNIMPLEMENTED when it is planned (prepared or executed): a
// recursive WITH with a SEARCH clause.
const refusedSQL = "WITH RECURSIVE r(id) AS (SELECT a.id FROM flights a WHERE a.origin = 'ORD'" +
	" AND a.timestamp >= TIMESTAMPTZ '2001-01-01T00:00:00Z' AND a.timestamp < TIMESTAMPTZ '2001-02-01T00:00:00Z' UNION ALL SELECT id FROM r) SEARCH DEPTH FIRST BY id SET o SELECT id FROM r"

// TestOneLinePerRefusedQueryFromADBC (found by a user trial): ADBC's DB-API prepares every
// statement and, when CreatePreparedStatement answers UNIMPLEMENTED, executes it again with
// GetFlightInfo, which is refused alike; the two calls of that one query leave one line at
// info level (the prepare's), and the second is a debug line "query refused again" under the
// same query id, which is also the second call's span attribute. A client that executes the
// statement again, or another client preparing it, is another query with a line of its own.
func TestOneLinePerRefusedQueryFromADBC(t *testing.T) {
	spans := recordSpans(t)
	e := newEnv(t)
	ctx := context.Background()
	srv, logs := queryLogServer(t, e, e.store, slog.LevelDebug)
	queryMsgs := []string{"query refused", "query failed", "query cancelled"}

	// The calls ADBC 1.13's cursor.execute makes (adbc_driver_manager/dbapi.py,
	// _prepare_execute: prepare, and on NotSupportedError go on to execute).
	adbc := dial(t, srv)
	if _, err := adbc.Prepare(ctx, refusedSQL); status.Code(err) != codes.Unimplemented {
		t.Fatalf("prepare: %v, want UNIMPLEMENTED", err)
	}
	if _, err := adbc.Execute(ctx, refusedSQL); status.Code(err) != codes.Unimplemented {
		t.Fatalf("execute after the refused prepare: %v, want UNIMPLEMENTED", err)
	}
	lines := logs.lines(t, queryMsgs...)
	if len(lines) != 1 {
		t.Fatalf("want 1 line for the query, got %d:\n%s", len(lines), logs)
	}
	for k, v := range map[string]any{"level": "WARN", "msg": "query refused", "rpc": "DoAction", "command": "CreatePreparedStatement",
		"statement": "WITH", "code": "Unimplemented", "message": "SEARCH and CYCLE clauses of WITH RECURSIVE are not supported"} {
		if lines[0][k] != v {
			t.Errorf("line: %s = %v, want %v", k, lines[0][k], v)
		}
	}
	again := logs.lines(t, "query refused again")
	if len(again) != 1 || again[0]["level"] != "DEBUG" || again[0]["rpc"] != "GetFlightInfo" || again[0]["command"] != "CommandStatementQuery" ||
		again[0]["query_id"] != lines[0]["query_id"] {
		t.Fatalf("the follow-up's debug line: %v, want GetFlightInfo under query id %v", again, lines[0]["query_id"])
	}
	if got := callSpans(spans, lines[0]["query_id"]); !slices.Equal(got, []string{"DoAction", "GetFlightInfo"}) {
		t.Errorf("spans of query %v: %v, want the prepare's and the execution's", lines[0]["query_id"], got)
	}

	// The same client executing the statement once more (no prepare before it), and another
	// client (another connection) preparing it: two more queries, two more lines.
	if _, err := adbc.Execute(ctx, refusedSQL); status.Code(err) != codes.Unimplemented {
		t.Fatalf("execute again: %v", err)
	}
	if _, err := dial(t, srv).Prepare(ctx, refusedSQL); status.Code(err) != codes.Unimplemented {
		t.Fatalf("prepare on another connection: %v", err)
	}
	lines = logs.lines(t, queryMsgs...)
	if len(lines) != 3 || lines[1]["rpc"] != "GetFlightInfo" || lines[2]["rpc"] != "DoAction" {
		t.Fatalf("want the first line and one line per later query (GetFlightInfo, DoAction), got %d:\n%s", len(lines), logs)
	}
	ids := map[any]bool{}
	for _, l := range lines {
		ids[l["query_id"]] = true
	}
	if len(ids) != 3 {
		t.Errorf("three queries, query ids %v", ids)
	}
	if n := len(logs.lines(t, "query refused again")); n != 1 {
		t.Errorf("%d follow-up lines, want still 1", n)
	}
	assertPrivate(t, "log", logs.String())
}

// TestQueryKeepsItsIDAcrossCalls (found by a user trial): a query's DoGet calls log and trace
// under the query id of the GetFlightInfo that planned it (the ticket carries it), and a DoGet
// refused before it runs — while the server drains — names the statement kind sealed into its
// ticket; a query ticket the server cannot open is statement UNKNOWN.
func TestQueryKeepsItsIDAcrossCalls(t *testing.T) {
	spans := recordSpans(t)
	e := newEnv(t)
	ctx := context.Background()
	srv, logs := queryLogServer(t, e, e.store, slog.LevelInfo, func(c *server.Config) {
		c.MaxQueries, c.MaxQueued, c.QueueWait = 1, 1, time.Hour
	})
	from, to := ts("2001-02-01T00:00:00Z"), ts("2001-06-01T00:00:00Z")

	// An answered query: its GetFlightInfo span and its DoGet span carry one id.
	cl := dial(t, srv)
	info, err := cl.Execute(ctx, countSQL("BOS", from, to))
	if err != nil {
		t.Fatal(err)
	}
	res, err := fetch(ctx, cl, info)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := scalarCount(t, res), int64(len(expected(e.sample, "BOS", from, to))); got != want {
		t.Fatalf("count %d, want %d", got, want)
	}
	res.release()
	var id string
	for _, s := range spans.Ended() {
		for _, kv := range s.Attributes() {
			if kv.Key == querylog.AttrQueryID && strings.HasSuffix(s.Name(), "/GetFlightInfo") {
				id = kv.Value.AsString()
			}
		}
	}
	if got := callSpans(spans, id); id == "" || !slices.Equal(got, []string{"GetFlightInfo", "DoGet"}) {
		t.Fatalf("spans of query %q: %v, want its GetFlightInfo and its DoGet", id, got)
	}

	// A ticket that is a statement ticket but cannot be opened: one line, statement UNKNOWN.
	forged, err := arrowflightsql.CreateStatementQueryTicket([]byte("not a sealed ticket"))
	if err != nil {
		t.Fatal(err)
	}
	rdr, err := cl.DoGet(ctx, &flight.Ticket{Ticket: forged})
	if err == nil {
		for rdr.Next() {
		}
		err = rdr.Err()
		rdr.Release()
	}
	if status.Code(err) != codes.InvalidArgument {
		t.Fatalf("forged ticket: %v, want INVALID_ARGUMENT", err)
	}
	lines := logs.lines(t, "query refused")
	if len(lines) != 1 || lines[0]["rpc"] != "DoGet" || lines[0]["statement"] != querylog.StatementUnknown {
		t.Fatalf("forged ticket's line: %v, want one DoGet line with statement %s", lines, querylog.StatementUnknown)
	}
	logs.reset()

	// Refused during the drain: the only slot is held by a scan, the query's DoGet waits in
	// the queue (or arrives once the drain began) and is refused as the server shuts down.
	rest := holdFirstBatch(t, srv)
	info, err = cl.Execute(ctx, countSQL("SFO", from, to))
	if err != nil {
		t.Fatal(err)
	}
	refused := make(chan error, 1)
	go func() {
		_, err := fetch(ctx, cl, info)
		refused <- err
	}()
	drained := make(chan bool, 1)
	go func() { drained <- srv.Drain(time.Minute) }()
	if err := <-refused; status.Code(err) != codes.Unavailable || !strings.Contains(err.Error(), "shutting down") {
		t.Fatalf("DoGet during the drain: %v, want UNAVAILABLE (shutting down)", err)
	}
	if n, err := rest(); err != nil {
		t.Fatalf("the held scan after %d rows: %v", n, err)
	}
	<-drained
	lines = logs.lines(t, "query refused", "query failed", "query cancelled")
	if len(lines) != 1 {
		t.Fatalf("want 1 line, got %d:\n%s", len(lines), logs)
	}
	l := lines[0]
	for k, v := range map[string]any{"msg": "query failed", "rpc": "DoGet", "command": "TicketStatementQuery", "statement": "SELECT",
		"code": "Unavailable", "message": "the server is shutting down; retry on another replica"} {
		if l[k] != v {
			t.Errorf("drain refusal line: %s = %v, want %v", k, l[k], v)
		}
	}
	if got := callSpans(spans, l["query_id"]); !slices.Equal(got, []string{"GetFlightInfo", "DoGet"}) {
		t.Errorf("spans of the refused query %v: %v, want its GetFlightInfo and its DoGet", l["query_id"], got)
	}
	assertPrivate(t, "log", logs.String())
}

// TestUnknownActionNotLogged: an unknown DoAction type is the client's text (here SQL, a
// password and a NUL byte): the refusal's log line names it as a fixed word with its length,
// never its text.
func TestUnknownActionNotLogged(t *testing.T) {
	e := newEnv(t)
	srv, logs := queryLogServer(t, e, e.store, slog.LevelDebug)
	cl := dial(t, srv)
	name := "password=hunter2; SELECT * FROM flights WHERE origin = 'ORD'\x00" + strings.Repeat("x", 10_000)
	do, err := cl.Client.DoAction(context.Background(), &flight.Action{Type: name})
	if err == nil {
		_, err = do.Recv()
	}
	if status.Code(err) != codes.Unimplemented {
		t.Fatalf("unknown action: %v", err)
	}
	out := logs.String()
	if !strings.Contains(out, fmt.Sprintf("UnknownAction(%d bytes)", len(name))) {
		t.Errorf("the log does not name the unknown action by its length:\n%.2000s", out)
	}
	for _, bad := range []string{"hunter2", "SELECT", "xxxxxxxx"} {
		if strings.Contains(out, bad) {
			t.Errorf("the log holds %q", bad)
		}
	}
	assertPrivate(t, "log", out)
}

// TestFinishedQueryLeavesOneLine (issue 20): a query answered in full leaves one info line
// "query finished" (its DoGet: query id, user, statement kind, code OK, the rows the client
// received, the bytes sent, the duration and the time to its first batch from the query's
// GetFlightInfo, both within the client's time for the query), without the SQL text or its values; with LogStatements (serve
// --log-statements) the line holds the SQL text. The time to first batch is a histogram
// (flightsrv.query.first_batch) with the duration's bounds.
func TestFinishedQueryLeavesOneLine(t *testing.T) {
	reader := recordMetrics(t)
	e := newEnv(t)
	sql := "SELECT timestamp, id, value FROM flights WHERE origin = 'ORD' AND timestamp >= TIMESTAMPTZ '2001-03-01T00:00:00Z' AND timestamp < TIMESTAMPTZ '2001-05-01T00:00:00Z'"
	want := len(expected(e.sample, "ORD", ts("2001-03-01T00:00:00Z"), ts("2001-05-01T00:00:00Z")))
	for _, statements := range []bool{false, true} {
		srv, logs := queryLogServer(t, e, e.store, slog.LevelInfo, func(c *server.Config) { c.LogStatements = statements })
		cl := dial(t, srv)
		t0 := time.Now()
		res := mustRun(t, cl, sql)
		wall := time.Since(t0).Seconds()
		rows := len(rowsOf(t, res, "ORD"))
		if rows != want {
			t.Fatalf("%d rows, the sample has %d", rows, want)
		}
		lines := logs.lines(t, "query finished")
		if len(lines) != 1 {
			t.Fatalf("statements %v: %d finished lines, want 1:\n%s", statements, len(lines), logs)
		}
		l := lines[0]
		for k, v := range map[string]any{"level": "INFO", "rpc": "DoGet", "command": "TicketStatementQuery", "statement": "SELECT",
			"code": "OK", "rows": float64(rows), "user": "", "hot_buckets": 1.0, "archive_buckets": 1.0} {
			if l[k] != v {
				t.Errorf("statements %v: %s = %v, want %v", statements, k, l[k], v)
			}
		}
		duration, _ := l["duration"].(float64)
		first, _ := l["first_batch"].(float64)
		// The first batch is timed from the GetFlightInfo's start, the line's duration is the
		// DoGet's: both within the client's time for the two calls.
		if sent, _ := l["bytes"].(float64); sent < float64(rows*8) || first <= 0 || first/1e9 > wall || duration/1e9 > wall {
			t.Errorf("bytes %v for %d rows, first batch %v and duration %v (ns), the client's wall %vs", l["bytes"], rows, l["first_batch"], l["duration"], wall)
		}
		if id, _ := l["query_id"].(string); len(id) != 16 {
			t.Errorf("query_id %v", l["query_id"])
		}
		if statements {
			if l["sql"] != sql {
				t.Errorf("sql %v, want the statement's text", l["sql"])
			}
		} else {
			assertPrivate(t, "log", logs.String())
		}
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	var count uint64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != "flightsrv.query.first_batch" {
				continue
			}
			for _, dp := range m.Data.(metricdata.Histogram[float64]).DataPoints {
				if st, _ := dp.Attributes.Value("statement"); st.AsString() == "SELECT" {
					count += dp.Count
					if !slices.Equal(dp.Bounds, querylog.DurationBuckets) {
						t.Errorf("first batch bounds %v", dp.Bounds)
					}
				}
			}
		}
	}
	if count != 2 {
		t.Errorf("%d first batches of SELECT queries measured, want 2", count)
	}
}

// TestWritesAndSystemViewsNameTheirStatement (a trial's finding): the log lines of bulk
// ingest, INSERT and system statements name their statement kind — a finished ingest and a
// refused one INGEST, a finished INSERT "INSERT" (with its text under --log-statements only),
// a system view refused for its shape "SELECT SYSTEM" — instead of an empty statement field.
func TestWritesAndSystemViewsNameTheirStatement(t *testing.T) {
	e := newEnv(t)
	for _, statements := range []bool{false, true} {
		srv, logs := queryLogServer(t, e, e.store, slog.LevelInfo, func(c *server.Config) {
			c.Tables = append(c.Tables, eventsTable)
			c.LogStatements = statements
		})
		cl := dial(t, srv)
		ctx := context.Background()
		now := time.Now().UTC()
		rng := rand.New(rand.NewPCG(7, uint64(now.UnixNano())))
		prefix := fmt.Sprintf("log%v", statements)
		evs := makeEvents(rng, 20, prefix, now)
		if n, err := ingest(ctx, cl, wideSchema, eventBatches(evs, 8, false, -1), nil); err != nil || n != 20 {
			t.Fatalf("ingest = %d, %v", n, err)
		}
		if _, err := ingest(ctx, cl, wideSchema, eventBatches(evs, 8, false, -1), nil); status.Code(err) != codes.AlreadyExists {
			t.Fatalf("ingest again: %v", err)
		}
		ins := literalInsert(makeEvents(rng, 2, prefix+"i", now))
		if n, err := cl.ExecuteUpdate(ctx, ins); err != nil || n != 2 {
			t.Fatalf("INSERT = %d, %v", n, err)
		}
		if _, err := run(ctx, cl, "SELECT query_id FROM flightsrv.queries ORDER BY query_id"); status.Code(err) != codes.Unimplemented {
			t.Fatalf("system view of another shape: %v", err)
		}
		// A call's line is written once its handler returned, which may be just after the
		// client read its answer: look again for up to five seconds.
		var lines []map[string]any
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			lines = append(logs.lines(t, "query finished"), logs.lines(t, "query refused")...)
			if len(lines) >= 4 || time.Now().After(deadline) {
				break
			}
		}
		var kinds []string
		for _, l := range lines {
			kinds = append(kinds, fmt.Sprintf("%v %v %v", l["rpc"], l["statement"], l["code"]))
			if l["statement"] == "INSERT" {
				if sql, _ := l["sql"].(string); statements != (sql == ins) {
					t.Errorf("statements %v: INSERT line's sql %q", statements, sql)
				}
			}
		}
		slices.Sort(kinds)
		want := []string{"DoPut INGEST AlreadyExists", "DoPut INGEST OK", "DoPut INSERT OK", "GetFlightInfo SELECT SYSTEM Unimplemented"}
		if !slices.Equal(kinds, want) {
			t.Errorf("statements %v: lines %q, want %q", statements, kinds, want)
		}
	}
}
