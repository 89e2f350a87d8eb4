package pushdown_test

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/substrait-io/substrait-go/v8/plan"
	"google.golang.org/protobuf/proto"

	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/scan"
	"github.com/flightsrv/flightsrv/substrait"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

var messages = routing.TableDef{Name: "messages", TableID: "chat", PartitionColumn: "channel_id", Strategy: routing.CalendarMonthUTC, WritableBuckets: 2}

func catalog(t testing.TB) substrait.Catalog {
	t.Helper()
	cat, err := substrait.NewCatalog(messages)
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

// seedSQL is the aggregate-pushdown seed's query, verbatim.
const seedSQL = `SELECT COUNT(*)
FROM messages
WHERE channel_id = 'general'
  AND timestamp >= TIMESTAMPTZ '2026-01-01T00:00:00Z'
  AND timestamp < TIMESTAMPTZ '2027-01-01T00:00:00Z';`

const where = ` WHERE channel_id = 'general' AND timestamp >= '2026-01-01' AND timestamp < '2026-03-01'`

// planSQL plans sql (binding args) through the whole road: SQL → the general binder's
// Substrait plan → its one routed read's route (substrait.Routes). The dataset schema is the
// prepared statement's.
func planSQL(t *testing.T, sql string, args ...any) (*plan.Plan, substrait.Route, *arrow.Schema, error) {
	t.Helper()
	cat := catalog(t)
	st, err := substrait.Prepare(sql, cat)
	if err != nil {
		return nil, substrait.Route{}, nil, err
	}
	p, err := st.Bind(args...)
	if err != nil {
		return nil, substrait.Route{}, nil, err
	}
	routes, err := substrait.Routes(p, cat, false)
	if err != nil {
		return nil, substrait.Route{}, nil, err
	}
	if len(routes) != 1 {
		t.Fatalf("%q: %d routed reads, want 1", sql, len(routes))
	}
	for _, r := range routes {
		return p, r, st.DatasetSchema(), nil
	}
	panic("unreachable")
}

// noStore is a hot store EXPLAIN never calls (the executor's EXPLAIN starts nothing).
type noStore struct{ routing.HotStore }

// executor returns the executor's EXPLAIN of p bound to route, with the rewrite on or off.
func executor(t *testing.T, p *plan.Plan, route substrait.Route, pushdown bool) []string {
	t.Helper()
	tbl, err := routing.NewDurableTable(route.Table, noStore{}, nil, routing.Options{})
	if err != nil {
		t.Fatal(err)
	}
	lines, err := scan.Explain(p, scan.Options{Pushdown: pushdown, Bind: func(*plan.NamedTableReadRel) (scan.Source, error) {
		return scan.Source{Table: tbl, Partitions: route.Partitions, Range: route.Range}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	return lines
}

// TestPlanDecisions: the binding of every shape, and the executor's pushdown decision per
// routed aggregate with pushdown on (rewritten onto the stores, or why not) and off (every
// fragment reads rows), never carrying a value.
func TestPlanDecisions(t *testing.T) {
	t.Parallel()
	i64 := arrow.PrimitiveTypes.Int64 // COUNT is int64 (Substrait i64)
	ts := &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}
	str := arrow.BinaryTypes.String
	tests := []struct {
		name      string
		sql       string
		args      []any
		schema    []arrow.Field
		rewritten bool   // with pushdown on
		decided   string // a line the executor's EXPLAIN (pushdown on) must hold
	}{
		{name: "seed query", sql: seedSQL, schema: []arrow.Field{{Name: "count", Type: i64}},
			rewritten: true, decided: "StoreAggregate [count(*)]"},
		{name: "count alias and limit", sql: `SELECT count(*) AS n FROM messages` + where + ` LIMIT 1`,
			schema: []arrow.Field{{Name: "n", Type: i64}}, rewritten: true, decided: "Fetch offset 0 count 1"},
		{name: "count(1) and count(*) twice", sql: `SELECT count(1), count(*) AS c FROM messages` + where,
			schema:    []arrow.Field{{Name: "count", Type: i64}, {Name: "c", Type: i64}},
			rewritten: true, decided: "StoreAggregate [count(*), count(*)]"},
		{name: "count with $n parameters", sql: `SELECT COUNT(*) FROM messages WHERE channel_id = $1 AND timestamp >= $2 AND timestamp < $3`,
			args:   []any{"general", "2026-01-01T00:00:00Z", "2026-03-01T00:00:00Z"},
			schema: []arrow.Field{{Name: "count", Type: i64}}, rewritten: true},
		{name: "count with ? parameters, literal on the left", sql: `SELECT COUNT(*) FROM messages WHERE ?=channel_id AND ?<=timestamp AND ?>timestamp`,
			args:   []any{"general", "2026-01-01T00:00:00Z", "2026-03-01T00:00:00Z"},
			schema: []arrow.Field{{Name: "count", Type: i64}}, rewritten: true},
		{name: "max alone", sql: `SELECT max(timestamp) AS last FROM messages` + where,
			schema:    []arrow.Field{{Name: "last", Type: ts, Nullable: true}},
			rewritten: true, decided: "none once earlier ones answered"},
		{name: "min and max", sql: `SELECT min(timestamp), max(timestamp) FROM messages` + where,
			schema:    []arrow.Field{{Name: "min", Type: ts, Nullable: true}, {Name: "max", Type: ts, Nullable: true}},
			rewritten: true, decided: "StoreAggregate [min(timestamp), max(timestamp)]"},
		{name: "count and min together", sql: `SELECT count(*), min(timestamp) FROM messages` + where,
			schema:    []arrow.Field{{Name: "count", Type: i64}, {Name: "min", Type: ts, Nullable: true}},
			rewritten: true, decided: "StoreAggregate [count(*), min(timestamp)]"},
		{name: "count(column) reads rows", sql: `SELECT count(id) FROM messages` + where,
			schema:  []arrow.Field{{Name: "count", Type: i64}},
			decided: "Pushdown: not pushed down: measure count (the stores answer count(*), min(timestamp) and max(timestamp))"},
		{name: "hour bins, desc, limit parameter, count first", sql: `SELECT count(*) AS n, date_trunc('hour', timestamp) AS t FROM messages` + where + ` GROUP BY t ORDER BY t DESC LIMIT ?`,
			args: []any{24}, schema: []arrow.Field{{Name: "n", Type: i64}, {Name: "t", Type: ts}},
			rewritten: true, decided: "StoreAggregate [count(*)] grouped by date_trunc('hour', timestamp)"},
		{name: "month bins over month buckets", sql: `SELECT date_trunc('month', timestamp) AS t, COUNT(*) FROM messages` + where + ` GROUP BY 1`,
			schema:    []arrow.Field{{Name: "t", Type: ts}, {Name: "count", Type: i64}},
			rewritten: true, decided: "every calendar_month_utc bucket lies inside one bin"},
		{name: "15-minute bins", sql: `SELECT date_bin(INTERVAL '15 minutes', timestamp, TIMESTAMPTZ '2001-01-01T00:00:00Z') AS t, COUNT(*) FROM messages` + where + ` GROUP BY t ORDER BY t`,
			schema:    []arrow.Field{{Name: "t", Type: ts}, {Name: "count", Type: i64}},
			rewritten: true, decided: "grouped by date_bin('15 minutes', timestamp, origin)"},
		{name: "plain scan", sql: `SELECT * FROM messages` + where,
			schema: []arrow.Field{{Name: "channel_id", Type: str}, {Name: "timestamp", Type: ts}, {Name: "id", Type: str}, {Name: "value", Type: arrow.BinaryTypes.Binary}}},
		{name: "ordered scan with limit", sql: `SELECT id AS i, timestamp FROM messages` + where + ` ORDER BY timestamp DESC LIMIT ?`, args: []any{int32(20)},
			schema: []arrow.Field{{Name: "i", Type: str}, {Name: "timestamp", Type: ts}}, decided: "ScanBucket [timestamp, id] descending limit 20"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for _, pushdown := range []bool{true, false} {
				p, route, schema, err := planSQL(t, tt.sql, tt.args...)
				if err != nil {
					t.Fatalf("%q: %v", tt.sql, err)
				}
				if want := arrow.NewSchema(tt.schema, nil); !schema.Equal(want) {
					t.Errorf("schema\n%v\nwant\n%v", schema, want)
				}
				if len(route.Partitions) != 1 || string(route.Partitions[0]) != "general" || !route.Range.Start.Equal(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)) {
					t.Errorf("routed scan: %q %v", route.Partitions, route.Range)
				}
				lines := executor(t, p, route, pushdown)
				text := strings.Join(lines, "\n")
				if got := strings.Contains(text, "StoreAggregate"); got != (tt.rewritten && pushdown) {
					t.Errorf("pushdown %v: rewritten %v, want %v:\n%s", pushdown, got, tt.rewritten && pushdown, text)
				}
				if pushdown && tt.decided != "" && !strings.Contains(text, tt.decided) {
					t.Errorf("executor lacks %q:\n%s", tt.decided, text)
				}
				if !pushdown && tt.rewritten && !strings.Contains(text, "Pushdown: a pushdown candidate, but pushdown is disabled: every fragment reads rows") {
					t.Errorf("pushdown off: the candidate is not reported:\n%s", text)
				}
				for _, d := range lines {
					if strings.Contains(d, "general") || strings.Contains(d, "2026") || strings.Contains(d, "2001") {
						t.Errorf("decision %q carries a value", d)
					}
				}
			}
		})
	}
}

// TestPlanErrors: rejected shapes reach the caller with their code and message.
func TestPlanErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		sql  string
		args []any
		err  error
		code substrait.Code
		msg  string
	}{
		{sql: `SELECT COUNT(*) FROM messages WHERE channel_id = 'general' AND timestamp >= '2026-01-01'`, code: substrait.InvalidArgument, msg: "messages needs timestamp < <end>"},
		{sql: `SELECT COUNT(*) FROM messages WHERE timestamp >= '2026-01-01' AND timestamp < '2026-02-01'`, code: substrait.InvalidArgument,
			msg: "messages needs channel_id = <value> (several partitions: channel_id IN (…) or = ANY($1); every partition of the range: the analytical mode, session option analytical = on)"},
		{sql: `SELECT COUNT(*) FROM messages a JOIN messages b USING (id)` + where, code: substrait.InvalidArgument, msg: `column reference "channel_id" is ambiguous`},
		{sql: `SELECT COUNT(DISTINCT id) OVER (ORDER BY timestamp) FROM messages` + where, code: substrait.Unimplemented, msg: "DISTINCT is not implemented for window functions"},
	}
	for _, tt := range tests {
		_, _, _, err := planSQL(t, tt.sql, tt.args...)
		if tt.err != nil {
			if !errors.Is(err, tt.err) {
				t.Errorf("%q: got %v, want %v", tt.sql, err, tt.err)
			}
			continue
		}
		var e *substrait.Error
		if !errors.As(err, &e) || e.Code != tt.code || e.Msg != tt.msg {
			t.Errorf("%q: got %v, want %v %q", tt.sql, err, tt.code, tt.msg)
		}
	}
}

// TestPlanDoesNotModifyInput: reading the route and lowering the plan (with the pushdown
// rewrite) leave the plan as it was.
func TestPlanDoesNotModifyInput(t *testing.T) {
	t.Parallel()
	p, route, _, err := planSQL(t, `SELECT count(*) FROM messages`+where)
	if err != nil {
		t.Fatal(err)
	}
	before, _ := p.ToProto()
	executor(t, p, route, true)
	if _, err := substrait.Routes(p, catalog(t), false); err != nil {
		t.Fatal(err)
	}
	after, _ := p.ToProto()
	if !proto.Equal(before, after) {
		t.Error("planning modified the plan")
	}
}

// TestGolden prints the plan, the route and the executor's EXPLAIN with pushdown on and off
// of representative queries and compares them with testdata/plans.golden (go test -update
// rewrites it).
func TestGolden(t *testing.T) {
	t.Parallel()
	golden(t, "plans.golden", []string{
		seedSQL,
		`SELECT count(*) AS n FROM messages WHERE '2026-03-01' > timestamp AND timestamp >= '2026-01-15T12:00:00+02:00' AND 'general' = channel_id LIMIT 1`,
		`SELECT min(timestamp), max(timestamp) AS last FROM messages` + where,
		`SELECT count(id), count(*) FROM messages` + where,
		`SELECT * FROM messages` + where,
		`SELECT id, timestamp AS ts FROM messages m` + where + ` ORDER BY m.timestamp DESC, id DESC FETCH FIRST 100 ROWS ONLY`,
	})
}

// golden renders queries as TestGolden says and compares them with testdata/name.
func golden(t *testing.T, name string, queries []string) {
	t.Helper()
	var b strings.Builder
	for _, sql := range queries {
		p, route, schema, err := planSQL(t, sql)
		if err != nil {
			t.Fatalf("%q: %v", sql, err)
		}
		fmt.Fprintf(&b, "== %s\n%s", strings.Join(strings.Fields(sql), " "), substrait.Explain(p))
		fmt.Fprintf(&b, "-- route: %d partition(s), %d %s bucket(s); schema: %v\n", len(route.Partitions),
			routing.BucketCount(route.Table.Strategy, route.Range), route.Table.Strategy, schema.Fields())
		for _, pushdown := range []bool{true, false} {
			for _, l := range executor(t, p, route, pushdown) {
				fmt.Fprintf(&b, "-- pushdown %v: executor: %s\n", pushdown, l)
			}
		}
		b.WriteString("\n")
	}
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if got := b.String(); got != string(want) {
		t.Errorf("golden mismatch (go test ./pushdown -run TestGolden -update to accept):\n%s", got)
	}
}

// TestGoldenHistogram prints histogram queries as TestGolden does and compares them with
// testdata/histogram.golden (go test ./pushdown -run TestGolden -update rewrites it).
func TestGoldenHistogram(t *testing.T) {
	t.Parallel()
	golden(t, "histogram.golden", []string{
		`SELECT date_trunc('hour', timestamp) AS t, COUNT(*) FROM messages` + where + ` GROUP BY 1 ORDER BY 1`,
		`SELECT COUNT(*), date_trunc('month', timestamp) FROM messages` + where + ` GROUP BY 2 ORDER BY 2 DESC LIMIT 1`,
		`SELECT date_trunc('year', timestamp) AS y, COUNT(*) AS n FROM messages` + where + ` GROUP BY y`,
		`SELECT date_bin(INTERVAL '15 minutes', timestamp, TIMESTAMPTZ '2001-01-01T00:00:00Z') AS t, COUNT(*) FROM messages` + where + ` GROUP BY t ORDER BY t`,
		`SELECT date_trunc('week', timestamp) AS w, COUNT(*) FROM messages` + where + ` GROUP BY w ORDER BY w DESC`,
	})
}
