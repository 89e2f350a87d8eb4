package pushdown

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/substrait-io/substrait-go/v8/expr"
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

var (
	on  = Options{Pushdown: true}
	off = Options{}
)

// planSQL plans sql (binding args) through the whole road: SQL → Substrait → pushdown.
func planSQL(t *testing.T, sql string, opts Options, args ...any) (*plan.Plan, *Physical, error) {
	t.Helper()
	cat := catalog(t)
	st, err := substrait.Prepare(sql, cat)
	if err != nil {
		return nil, nil, err
	}
	p, err := st.Bind(args...)
	if err != nil {
		return nil, nil, err
	}
	ph, err := Plan(p, cat, opts)
	if err == nil && !ph.Schema.Equal(st.DatasetSchema()) {
		t.Errorf("%q: physical schema %v differs from the prepared dataset schema %v", sql, ph.Schema, st.DatasetSchema())
	}
	return p, ph, err
}

// noStore is a hot store EXPLAIN never calls (the executor's EXPLAIN starts nothing).
type noStore struct{ routing.HotStore }

// executor returns the executor's EXPLAIN of p bound as ph says, with the rewrite on or off.
func executor(t *testing.T, p *plan.Plan, ph *Physical, pushdown bool) []string {
	t.Helper()
	tbl, err := routing.NewDurableTable(ph.Table, noStore{}, nil, routing.Options{})
	if err != nil {
		t.Fatal(err)
	}
	lines, err := scan.Explain(p, scan.Options{Pushdown: pushdown, Bind: func(*plan.NamedTableReadRel) (scan.Source, error) {
		return scan.Source{Table: tbl, Partitions: [][]byte{ph.Partition}, Range: ph.Range}, nil
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
		agg       []substrait.AggFunc
		schema    []arrow.Field
		rewritten bool   // with pushdown on
		decided   string // a line the executor's EXPLAIN (pushdown on) must hold
	}{
		{name: "seed query", sql: seedSQL, agg: []substrait.AggFunc{substrait.CountStar}, schema: []arrow.Field{{Name: "count", Type: i64}},
			rewritten: true, decided: "StoreAggregate [count(*)]"},
		{name: "count alias and limit", sql: `SELECT count(*) AS n FROM messages` + where + ` LIMIT 1`,
			agg: []substrait.AggFunc{substrait.CountStar}, schema: []arrow.Field{{Name: "n", Type: i64}}, rewritten: true, decided: "Fetch offset 0 count 1"},
		{name: "count(1) and count(*) twice", sql: `SELECT count(1), count(*) AS c FROM messages` + where,
			agg: []substrait.AggFunc{substrait.CountStar, substrait.CountStar}, schema: []arrow.Field{{Name: "count", Type: i64}, {Name: "c", Type: i64}},
			rewritten: true, decided: "StoreAggregate [count(*), count(*)]"},
		{name: "count with $n parameters", sql: `SELECT COUNT(*) FROM messages WHERE channel_id = $1 AND timestamp >= $2 AND timestamp < $3`,
			args: []any{"general", "2026-01-01T00:00:00Z", "2026-03-01T00:00:00Z"},
			agg:  []substrait.AggFunc{substrait.CountStar}, schema: []arrow.Field{{Name: "count", Type: i64}}, rewritten: true},
		{name: "count with ? parameters, literal on the left", sql: `SELECT COUNT(*) FROM messages WHERE ?=channel_id AND ?<=timestamp AND ?>timestamp`,
			args: []any{"general", "2026-01-01T00:00:00Z", "2026-03-01T00:00:00Z"},
			agg:  []substrait.AggFunc{substrait.CountStar}, schema: []arrow.Field{{Name: "count", Type: i64}}, rewritten: true},
		{name: "max alone", sql: `SELECT max(timestamp) AS last FROM messages` + where,
			agg: []substrait.AggFunc{substrait.Max}, schema: []arrow.Field{{Name: "last", Type: ts, Nullable: true}},
			rewritten: true, decided: "none once earlier ones answered"},
		{name: "min and max", sql: `SELECT min(timestamp), max(timestamp) FROM messages` + where,
			agg: []substrait.AggFunc{substrait.Min, substrait.Max}, schema: []arrow.Field{{Name: "min", Type: ts, Nullable: true}, {Name: "max", Type: ts, Nullable: true}},
			rewritten: true, decided: "StoreAggregate [min(timestamp), max(timestamp)]"},
		{name: "count and min together", sql: `SELECT count(*), min(timestamp) FROM messages` + where,
			agg: []substrait.AggFunc{substrait.CountStar, substrait.Min}, schema: []arrow.Field{{Name: "count", Type: i64}, {Name: "min", Type: ts, Nullable: true}},
			rewritten: true, decided: "StoreAggregate [count(*), min(timestamp)]"},
		{name: "count(column) reads rows", sql: `SELECT count(id) FROM messages` + where,
			agg: []substrait.AggFunc{substrait.Count}, schema: []arrow.Field{{Name: "count", Type: i64}},
			decided: "Pushdown: not pushed down: measure count (the stores answer count(*), min(timestamp) and max(timestamp))"},
		{name: "hour bins, desc, limit parameter, count first", sql: `SELECT count(*) AS n, date_trunc('hour', timestamp) AS t FROM messages` + where + ` GROUP BY t ORDER BY t DESC LIMIT ?`,
			args: []any{24}, agg: []substrait.AggFunc{substrait.CountStar}, schema: []arrow.Field{{Name: "n", Type: i64}, {Name: "t", Type: ts}},
			rewritten: true, decided: "StoreAggregate [count(*)] grouped by date_trunc('hour', timestamp)"},
		{name: "month bins over month buckets", sql: `SELECT date_trunc('month', timestamp) AS t, COUNT(*) FROM messages` + where + ` GROUP BY 1`,
			agg: []substrait.AggFunc{substrait.CountStar}, schema: []arrow.Field{{Name: "t", Type: ts}, {Name: "count", Type: i64}},
			rewritten: true, decided: "every calendar_month_utc bucket lies inside one bin"},
		{name: "15-minute bins", sql: `SELECT date_bin(INTERVAL '15 minutes', timestamp, TIMESTAMPTZ '2001-01-01T00:00:00Z') AS t, COUNT(*) FROM messages` + where + ` GROUP BY t ORDER BY t`,
			agg: []substrait.AggFunc{substrait.CountStar}, schema: []arrow.Field{{Name: "t", Type: ts}, {Name: "count", Type: i64}},
			rewritten: true, decided: "grouped by date_bin('15 minutes', timestamp, origin)"},
		{name: "plain scan", sql: `SELECT * FROM messages` + where,
			schema: []arrow.Field{{Name: "channel_id", Type: str}, {Name: "timestamp", Type: ts}, {Name: "id", Type: str}, {Name: "value", Type: arrow.BinaryTypes.Binary}}},
		{name: "ordered scan with limit", sql: `SELECT id AS i, timestamp FROM messages` + where + ` ORDER BY timestamp DESC LIMIT ?`, args: []any{int32(20)},
			schema: []arrow.Field{{Name: "i", Type: str}, {Name: "timestamp", Type: ts}}, decided: "ScanBucket [timestamp, id] descending limit 20"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for _, opts := range []Options{on, off} {
				p, ph, err := planSQL(t, tt.sql, opts, tt.args...)
				if err != nil {
					t.Fatalf("%q: %v", tt.sql, err)
				}
				var funcs []substrait.AggFunc
				if ph.Aggregate != nil {
					for _, m := range ph.Aggregate.Measures {
						funcs = append(funcs, m.Func)
					}
				}
				if !slices.Equal(funcs, tt.agg) {
					t.Errorf("aggregate %v, want %v", funcs, tt.agg)
				}
				if want := arrow.NewSchema(tt.schema, nil); !ph.Schema.Equal(want) {
					t.Errorf("schema\n%v\nwant\n%v", ph.Schema, want)
				}
				if string(ph.Partition) != "general" || !ph.Range.Start.Equal(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)) {
					t.Errorf("routed scan: %q %v", ph.Partition, ph.Range)
				}
				lines := executor(t, p, ph, opts.Pushdown)
				text := strings.Join(lines, "\n")
				if got := strings.Contains(text, "StoreAggregate"); got != (tt.rewritten && opts.Pushdown) {
					t.Errorf("pushdown %v: rewritten %v, want %v:\n%s", opts.Pushdown, got, tt.rewritten && opts.Pushdown, text)
				}
				if opts.Pushdown && tt.decided != "" && !strings.Contains(text, tt.decided) {
					t.Errorf("executor lacks %q:\n%s", tt.decided, text)
				}
				if !opts.Pushdown && tt.rewritten && !strings.Contains(text, "Pushdown: a pushdown candidate, but pushdown is disabled: every fragment reads rows") {
					t.Errorf("pushdown off: the candidate is not reported:\n%s", text)
				}
				for _, d := range append(slices.Clone(ph.Decisions), lines...) {
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
		{sql: `SELECT COUNT(*) FROM messages WHERE channel_id = ? AND channel_id = ? AND timestamp >= '2026-01-01' AND timestamp < '2026-02-01'`,
			args: []any{"a", "b"}, err: substrait.ErrConflictingShardEquality},
		{sql: `SELECT COUNT(*) FROM messages WHERE channel_id = $1 AND timestamp >= $2 AND timestamp < $2`,
			args: []any{"a", "2026-01-01"}, err: substrait.ErrInvalidTimestampRange},
		// General plans (anything outside the canonical shapes) are not the pushdown planner's:
		// the engine runs them in the executor.
		{sql: `SELECT COUNT(DISTINCT id) FROM messages` + where, code: substrait.Unimplemented, msg: "COUNT(DISTINCT …) is not supported"},
		{sql: `SELECT id, COUNT(*) FROM messages` + where + ` GROUP BY 1`, code: substrait.Unimplemented, msg: "grouped AggregateRel (GROUP BY) other than by one time bucket of timestamp is not supported"},
		{sql: `SELECT COUNT(*) FROM messages a JOIN messages b USING (id)` + where, code: substrait.Unimplemented, msg: "JOIN is not supported"},
		{sql: `SELECT COUNT(*) OVER () FROM messages` + where, code: substrait.Unimplemented, msg: "window functions are not supported"},
	}
	for _, tt := range tests {
		_, _, err := planSQL(t, tt.sql, on, tt.args...)
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

// TestPlanDoesNotModifyInput: Plan reads the plan and leaves it as it was.
func TestPlanDoesNotModifyInput(t *testing.T) {
	t.Parallel()
	cat := catalog(t)
	p, err := substrait.FromSQL(`SELECT id FROM messages`+where+` ORDER BY timestamp DESC LIMIT 3`, cat)
	if err != nil {
		t.Fatal(err)
	}
	before, _ := p.ToProto()
	if _, err := Plan(p, cat, on); err != nil {
		t.Fatal(err)
	}
	after, _ := p.ToProto()
	if !proto.Equal(before, after) {
		t.Error("Plan modified its input")
	}
}

// TestUnknownRelationIsAnError: relation kinds outside the supported set are errors, not scans.
func TestUnknownRelationIsAnError(t *testing.T) {
	t.Parallel()
	cat := catalog(t)
	b := plan.NewBuilderDefault()
	vt, err := b.VirtualTable([]string{"a"}, expr.StructLiteralValue{expr.NewPrimitiveLiteral(int64(1), false)})
	if err != nil {
		t.Fatal(err)
	}
	p, err := b.Plan(vt, []string{"a"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Plan(p, cat, on)
	if code, ok := substrait.CodeOf(err); !ok || code != substrait.Unimplemented {
		t.Fatalf("got %v, want Unimplemented", err)
	}
	if _, err := Plan(nil, cat, on); !errors.Is(err, substrait.ErrInvalidPlan) {
		t.Fatalf("nil plan: %v", err)
	}
}

func TestPlanQueryMatchesPlan(t *testing.T) {
	t.Parallel()
	cat := catalog(t)
	st, err := substrait.Prepare(`SELECT count(*) FROM messages WHERE channel_id = ? AND timestamp >= ? AND timestamp < ?`, cat)
	if err != nil {
		t.Fatal(err)
	}
	args := []any{"general", "2026-01-01T00:00:00Z", "2026-03-01T00:00:00Z"}
	q, err := st.Query(args...)
	if err != nil {
		t.Fatal(err)
	}
	p, err := st.Bind(args...)
	if err != nil {
		t.Fatal(err)
	}
	a := PlanQuery(q, on)
	b, err := Plan(p, cat, on)
	if err != nil {
		t.Fatal(err)
	}
	if !a.Schema.Equal(b.Schema) {
		t.Errorf("schemas differ: %v vs %v", a.Schema, b.Schema)
	}
	a.Schema, b.Schema = nil, nil
	if !reflect.DeepEqual(a, b) {
		t.Errorf("PlanQuery %+v\nPlan %+v", a, b)
	}
}

func TestBucketCount(t *testing.T) {
	t.Parallel()
	base := time.Date(2024, 12, 30, 22, 0, 0, 0, time.UTC)
	for _, s := range []routing.Strategy{routing.CalendarYearUTC, routing.CalendarMonthUTC, routing.CalendarDayUTC} {
		for _, start := range []time.Duration{0, time.Nanosecond, 2 * time.Hour, 49 * time.Hour} {
			for _, length := range []time.Duration{time.Nanosecond, time.Hour, 2 * time.Hour, 26 * time.Hour, 40 * 24 * time.Hour, 800 * 24 * time.Hour} {
				r := routing.TimeRange{Start: base.Add(start), End: base.Add(start + length)}
				want := len(routing.BucketsForRange("t", []byte("p"), s, r))
				if got := bucketCount(s, r); got != want {
					t.Errorf("%v %v: bucketCount = %d, want %d", s, r, got, want)
				}
			}
		}
	}
	if got := bucketCount(routing.CalendarDayUTC, routing.TimeRange{Start: base, End: base}); got != 0 {
		t.Errorf("empty range: %d", got)
	}
}

// TestGolden prints the plan, the binding and the executor's EXPLAIN with pushdown on and off
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
	cat := catalog(t)
	var b strings.Builder
	for _, sql := range queries {
		p, err := substrait.FromSQL(sql, cat)
		if err != nil {
			t.Fatalf("%q: %v", sql, err)
		}
		fmt.Fprintf(&b, "== %s\n%s", strings.Join(strings.Fields(sql), " "), substrait.Explain(p))
		for _, opts := range []Options{on, off} {
			ph, err := Plan(p, cat, opts)
			if err != nil {
				t.Fatalf("%q: %v", sql, err)
			}
			fmt.Fprintf(&b, "-- pushdown %v: buckets: %d, schema: %v\n", opts.Pushdown, ph.Buckets, ph.Schema.Fields())
			for _, d := range ph.Decisions {
				fmt.Fprintf(&b, "-- decision: %s\n", d)
			}
			for _, l := range executor(t, p, ph, opts.Pushdown) {
				fmt.Fprintf(&b, "-- executor: %s\n", l)
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
