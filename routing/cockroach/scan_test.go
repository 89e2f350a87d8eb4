package cockroach_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/jackc/pgx/v5"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/flightsrv/flightsrv/internal/testsupport/pgtest"
	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/routing/cockroach"
	"github.com/flightsrv/flightsrv/routing/storetest"
)

// gauged adds storetest.ConnGauge to a store: the pool's acquired connections.
type gauged struct{ *cockroach.Store }

var _ storetest.ConnGauge = gauged{}

func (g gauged) ConnsInUse() int { return int(g.Pool().Stat().AcquiredConns()) }

// scanAll reads a ScanRange reader to its end into one string per row (columns joined by
// "|"), releasing it.
func scanAll(t *testing.T, s *cockroach.Store, b routing.BucketID, req routing.BatchRequest) (routing.Route, []string) {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	req.Alloc = mem
	route, r, err := s.ScanRange(context.Background(), b, req)
	if err != nil {
		t.Fatal(err)
	}
	if r == nil {
		return route, nil
	}
	defer r.Release()
	var out []string
	for r.Next() {
		batch := r.RecordBatch()
		for i := range int(batch.NumRows()) {
			var cells []string
			for _, col := range batch.Columns() {
				switch a := col.(type) {
				case *array.Timestamp:
					cells = append(cells, a.Value(i).ToTime(arrow.Nanosecond).Format(time.RFC3339Nano))
				case *array.String:
					cells = append(cells, a.Value(i))
				case *array.Binary:
					cells = append(cells, fmt.Sprintf("%x", a.Value(i)))
				}
			}
			out = append(out, strings.Join(cells, "|"))
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	return route, out
}

// scanPlanFixture loads three partitions of 2,000 records each into one month and analyses
// the table, so that the planner would rather scan or sort than probe if it could.
func scanPlanFixture(t *testing.T, s *cockroach.Store) routing.BucketID {
	t.Helper()
	ctx := context.Background()
	start := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	var target routing.BucketID
	for _, pk := range []string{"p", "q", "r"} {
		b := routing.BucketFor("t", []byte(pk), routing.CalendarMonthUTC, start)
		if pk == "q" {
			target = b
		}
		recs := make([]routing.Record, 2000)
		for i := range recs {
			recs[i] = routing.Record{PartitionKey: []byte(pk), EventTime: start.Add(time.Duration(i/2) * time.Minute),
				SortKey: []byte(fmt.Sprintf("k%05d", i)), Value: []byte(strings.Repeat("v", 60))}
		}
		if err := s.Append(ctx, b, recs); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Pool().Exec(ctx, "ANALYZE"); err != nil {
		t.Fatal(err)
	}
	return target
}

// planNode is a node of EXPLAIN (FORMAT JSON).
type planNode struct {
	NodeType  string     `json:"Node Type"`
	Relation  string     `json:"Relation Name"`
	Direction string     `json:"Scan Direction"`
	Rows      int64      `json:"Actual Rows"`
	Plans     []planNode `json:"Plans"`
}

func (n planNode) walk(f func(n planNode, ancestors []planNode), ancestors []planNode) {
	f(n, ancestors)
	for _, c := range n.Plans {
		c.walk(f, append(ancestors[:len(ancestors):len(ancestors)], n))
	}
}

// TestScanStatementPlan: every variant of the scan statement (direction, limit, selected
// columns) is planned by PostgreSQL, with custom and with generic plans, as a Merge Append of
// an index scan of the records in the requested direction (under a Limit when limited) and the
// one route row: no sort above the records, no sequential or bitmap scan of them, and no
// Result node (a gating qual) between them and the merge. The statement asks for binary
// results.
func TestScanStatementPlan(t *testing.T) {
	t.Parallel()
	rec := &argRecorder{}
	s := migrated(t, cockroach.Config{Tracer: rec})
	b := scanPlanFixture(t, s)
	r := routing.TimeRange{Start: b.Start.Add(time.Hour), End: b.Start.Add(20 * time.Hour)}
	for mask := range 32 {
		desc, limited := mask&16 != 0, mask&8 != 0
		var cols []routing.Column
		for i, c := range []routing.Column{routing.ColumnTimestamp, routing.ColumnID, routing.ColumnValue} {
			if mask&(1<<i) != 0 {
				cols = append(cols, c)
			}
		}
		limit := int64(-1)
		if limited {
			limit = 100
		}
		rec.take()
		_, rows := scanAll(t, s, b, routing.BatchRequest{Range: r, Columns: cols, Desc: desc, Limit: limit})
		if want := map[bool]int{false: 2 * (1000 - 60), true: 100}[limited]; len(rows) != want {
			t.Fatalf("%v desc=%v limit %d: %d rows, want %d", cols, desc, limit, len(rows), want)
		}
		sqls, args := rec.take()
		if len(sqls) != 1 {
			t.Fatalf("ScanRange sent %d statements: %q", len(sqls), sqls)
		}
		formats, ok := args[0][0].(pgx.QueryResultFormats)
		if !ok || len(formats) != 1+len(cols) || strings.Count(fmt.Sprint(formats), "1") != len(formats) {
			t.Fatalf("ScanRange result formats = %v, want all binary", args[0][0])
		}
		for _, generic := range []bool{false, true} {
			what := fmt.Sprintf("%v desc=%v limit=%v generic=%v", cols, desc, limited, generic)
			checkScanPlan(t, what, explainJSON(t, s, sqls[0], args[0][1:], generic), desc, limited)
		}
	}
}

// explainJSON runs sql under EXPLAIN ANALYZE and returns its plan: custom (parameters bound)
// or generic (prepared with plan_cache_mode = force_generic_plan and executed with the
// parameters).
func explainJSON(t *testing.T, s *cockroach.Store, sql string, args []any, generic bool) planNode {
	t.Helper()
	ctx := context.Background()
	conn, err := s.Pool().Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	var raw string
	if !generic {
		err = conn.QueryRow(ctx, "EXPLAIN (ANALYZE, FORMAT JSON) "+sql, args...).Scan(&raw)
	} else {
		types := []string{"TEXT", "BYTEA", "TEXT", "TIMESTAMPTZ", "TIMESTAMPTZ", "TIMESTAMPTZ", "BIGINT"}[:len(args)]
		// EXECUTE takes no bind parameters: the values are written as literals.
		marks := make([]string, len(args))
		for i, a := range args {
			switch v := a.(type) {
			case string:
				marks[i] = "'" + strings.ReplaceAll(v, "'", "''") + "'"
			case []byte:
				marks[i] = fmt.Sprintf(`'\x%x'::BYTEA`, v)
			case time.Time:
				marks[i] = "'" + v.UTC().Format(time.RFC3339Nano) + "'::TIMESTAMPTZ"
			case int64:
				marks[i] = fmt.Sprint(v)
			default:
				t.Fatalf("argument %d of type %T", i, a)
			}
		}
		if _, err := conn.Exec(ctx, "SET plan_cache_mode = force_generic_plan"); err != nil {
			t.Fatal(err)
		}
		defer conn.Exec(ctx, "RESET plan_cache_mode")
		if _, err := conn.Exec(ctx, "PREPARE scan_generic ("+strings.Join(types, ", ")+") AS "+sql); err != nil {
			t.Fatal(err)
		}
		defer conn.Exec(ctx, "DEALLOCATE scan_generic")
		err = conn.QueryRow(ctx, "EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE scan_generic ("+strings.Join(marks, ", ")+")").Scan(&raw)
	}
	if err != nil {
		t.Fatal(err)
	}
	var plans []struct {
		Plan planNode `json:"Plan"`
	}
	if err := json.Unmarshal([]byte(raw), &plans); err != nil || len(plans) != 1 {
		t.Fatalf("EXPLAIN output %q: %v", raw, err)
	}
	return plans[0].Plan
}

func checkScanPlan(t *testing.T, what string, plan planNode, desc, limited bool) {
	t.Helper()
	dump, _ := json.Marshal(plan)
	var merges, scans int
	plan.walk(func(n planNode, ancestors []planNode) {
		if n.NodeType == "Merge Append" {
			merges++
		}
		if n.Relation != "pulpitum_v4_records" {
			return
		}
		if n.NodeType != "Index Scan" && n.NodeType != "Index Only Scan" {
			t.Fatalf("%s: the records are read by a %s:\n%s", what, n.NodeType, dump)
		}
		if want := map[bool]string{false: "Forward", true: "Backward"}[desc]; n.Direction != want {
			t.Fatalf("%s: records index scan %s, want %s:\n%s", what, n.Direction, want, dump)
		}
		limit := false
		for _, a := range ancestors {
			switch a.NodeType {
			case "Sort", "Incremental Sort", "Materialize", "Hash", "Aggregate", "Result":
				t.Fatalf("%s: a %s above the records:\n%s", what, a.NodeType, dump)
			case "Limit":
				limit = true
			}
		}
		if n.Rows == 0 {
			t.Fatalf("%s: the records scan returned no row:\n%s", what, dump)
		}
		if limit != limited {
			t.Fatalf("%s: limit above the records scan = %v:\n%s", what, limit, dump)
		}
		scans++
	}, nil)
	if merges != 1 || scans != 1 {
		t.Fatalf("%s: %d merge appends and %d records scans, want 1 and 1:\n%s", what, merges, scans, dump)
	}
}

// TestScanTextFormats: on connections configured for the simple protocol or the exec mode,
// where pgx ignores requested result formats and PostgreSQL answers in text, ScanRange decodes
// the text format and returns the same rows as in binary.
func TestScanTextFormats(t *testing.T) {
	t.Parallel()
	dbURL := pgtest.Start(t).NewDatabase(t)
	binary := migrated(t, cockroach.Config{URL: dbURL})
	b := scanPlanFixture(t, binary)
	ctx := context.Background()
	odd := routing.Record{PartitionKey: b.PartitionKey, EventTime: b.Start.Add(500*time.Hour + 123456*time.Microsecond),
		SortKey: []byte("ключ \\x00 'q'"), Value: []byte{0, '\\', 'x', 0xff, '\n'}}
	if err := binary.Append(ctx, b, []routing.Record{odd}); err != nil {
		t.Fatal(err)
	}
	req := routing.BatchRequest{Range: b.Range(), Columns: routing.AllColumns, Limit: -1}
	_, want := scanAll(t, binary, b, req)
	_, r, err := binary.ScanRange(ctx, b, req)
	if err != nil {
		t.Fatal(err)
	}
	if ts, bs := cockroach.ScanFormats(r); !ts || !bs {
		t.Errorf("default connection: binary timestamps %v, bytes %v; want binary", ts, bs)
	}
	r.Release()
	for _, mode := range []string{"simple_protocol", "exec"} {
		u, err := url.Parse(dbURL)
		if err != nil {
			t.Fatal(err)
		}
		q := u.Query()
		q.Set("default_query_exec_mode", mode)
		q.Set("timezone", "America/New_York") // text timestamps carry the session's offset
		u.RawQuery = q.Encode()
		s := openStore(t, cockroach.Config{URL: u.String()})
		_, r, err := s.ScanRange(ctx, b, req)
		if err != nil {
			t.Fatal(err)
		}
		if ts, bs := cockroach.ScanFormats(r); ts || bs {
			t.Errorf("%s: binary timestamps %v, bytes %v; want the text fallback", mode, ts, bs)
		}
		r.Release()
		_, got := scanAll(t, s, b, req)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("%s: %d rows differ from the binary read's %d", mode, len(got), len(want))
		}
		_, got = scanAll(t, s, b, routing.BatchRequest{Range: b.Range(), Columns: []routing.Column{routing.ColumnValue}, Desc: true, Limit: 1})
		if len(got) != 1 || got[0] != fmt.Sprintf("%x", odd.Value) {
			t.Fatalf("%s: last value = %q", mode, got)
		}
	}
}

// TestScanUnavailable: a closed pool fails ScanRange with routing.ErrUnavailable.
func TestScanUnavailable(t *testing.T) {
	t.Parallel()
	s := migrated(t, cockroach.Config{})
	s.Close()
	b := routing.BucketFor("t", []byte("p"), routing.CalendarDayUTC, time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC))
	if _, _, err := s.ScanRange(context.Background(), b, routing.BatchRequest{Range: b.Range(), Limit: -1}); !errors.Is(err, routing.ErrUnavailable) {
		t.Fatalf("ScanRange on a closed pool = %v, want ErrUnavailable", err)
	}
}

// TestScanSpan: the scan statement is traced as one client span named after it, ended when
// the reader's rows end, with the rows the statement returned (the route row included) and
// no partition or bucket value.
func TestScanSpan(t *testing.T) {
	t.Parallel()
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	s := migrated(t, cockroach.Config{TracerProvider: tp})
	b := scanPlanFixture(t, s)
	_, rows := scanAll(t, s, b, routing.BatchRequest{Range: b.Range(), Columns: []routing.Column{routing.ColumnID}, Limit: -1})
	var found bool
	for _, sp := range spans.Ended() {
		if sp.Name() != "SELECT routed durable bucket scan" {
			continue
		}
		found = true
		attrs := map[attribute.Key]attribute.Value{}
		for _, kv := range sp.Attributes() {
			attrs[kv.Key] = kv.Value
			if v := kv.Value.Emit(); strings.Contains(v, b.Key) || strings.Contains(v, "'q'") {
				t.Errorf("span attribute %s reveals a value: %q", kv.Key, v)
			}
		}
		if n := attrs["db.response.returned_rows"].AsInt64(); n != int64(len(rows))+1 {
			t.Errorf("db.response.returned_rows = %d, want %d rows and the route row", n, len(rows))
		}
		if attrs["db.collection.name"].AsString() != "pulpitum_v4_records" {
			t.Errorf("db.collection.name = %q", attrs["db.collection.name"].AsString())
		}
	}
	if !found {
		t.Fatal("no scan span")
	}
}

// TestScanEarlyReleaseConnections: a reader released with few rows left (bounded by its
// limit) drains them and its connection returns to the pool for reuse; one released with an
// unbounded remainder cancels its statement rather than reading the rest of the bucket, and
// the pool still serves the next read.
func TestScanEarlyReleaseConnections(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := migrated(t, cockroach.Config{MaxConns: 2})
	b := scanPlanFixture(t, s)
	release := func(limit int64) {
		t.Helper()
		_, r, err := s.ScanRange(ctx, b, routing.BatchRequest{Range: b.Range(), Columns: routing.AllColumns, Limit: limit})
		if err != nil {
			t.Fatal(err)
		}
		r.Release()
		// A destroyed connection leaves the pool's books asynchronously.
		deadline := time.Now().Add(5 * time.Second)
		for s.Pool().Stat().AcquiredConns() != 0 && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		if n := s.Pool().Stat().AcquiredConns(); n != 0 {
			t.Fatalf("limit %d: %d connections acquired after Release", limit, n)
		}
	}
	scanAll(t, s, b, routing.BatchRequest{Range: b.Range(), Limit: -1}) // warm one connection
	opened := s.Pool().Stat().NewConnsCount()

	release(100)
	release(1000)
	scanAll(t, s, b, routing.BatchRequest{Range: b.Range(), Limit: -1})
	if n := s.Pool().Stat().NewConnsCount(); n != opened {
		t.Fatalf("drained readers cost %d new connections", n-opened)
	}

	// An unbounded reader released early cancels its statement: the connection is discarded,
	// unless the whole result had already arrived (then it is healthy and kept): a race with
	// the server that a loaded machine decides either way, so only the return to the pool and
	// the next read are asserted.
	release(-1)
	_, rows := scanAll(t, s, b, routing.BatchRequest{Range: b.Range(), Columns: []routing.Column{routing.ColumnID}, Limit: -1})
	if len(rows) != 2000 {
		t.Fatalf("read after a discarded connection: %d rows", len(rows))
	}
}
