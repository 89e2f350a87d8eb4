package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/flightsrv/flightsrv/internal/querylog"
	"github.com/flightsrv/flightsrv/internal/server"
	"github.com/flightsrv/flightsrv/routing"
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

// queryLogServer starts a server over the env's stores (hot wrapped by wrap) whose log goes,
// as JSON at debug level or not, to the returned buffer.
func queryLogServer(t *testing.T, e *env, hot routing.HotStore, level slog.Level) (*server.Server, *logBuffer) {
	t.Helper()
	logs := &logBuffer{}
	srv, err := server.Start(context.Background(), server.Config{
		Listen: "127.0.0.1:0", Tables: []routing.TableDef{flightsTable}, Hot: hot, Archive: e.reader, Pushdown: true,
		Logger: slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: level})),
	})
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

// TestRefusedAndFailedQueriesAreLoggedOnce: every refused or failed query leaves exactly one
// structured line (RPC, Flight SQL command, statement kind, gRPC code, duration, rows,
// buckets per store, a query id that is also the call span's flightsrv.query.id attribute),
// answered queries leave none, and no line or span attribute holds a partition value, a
// literal, a path or the raw database error — which reaches the log at debug level only.
func TestRefusedAndFailedQueriesAreLoggedOnce(t *testing.T) {
	spans := tracetest.NewSpanRecorder()
	prev := otel.GetTracerProvider()
	otel.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans)))
	t.Cleanup(func() { otel.SetTracerProvider(prev) })

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
