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
	on     = Options{Pushdown: true}
	off    = Options{}
	minmax = Options{Pushdown: true, MinMax: true}
)

// planSQL plans sql (binding args) through the whole road: SQL → Substrait → pushdown.
func planSQL(t *testing.T, sql string, opts Options, args ...any) (*Physical, error) {
	t.Helper()
	cat := catalog(t)
	st, err := substrait.Prepare(sql, cat)
	if err != nil {
		return nil, err
	}
	p, err := st.Bind(args...)
	if err != nil {
		return nil, err
	}
	ph, err := Plan(p, cat, opts)
	if err == nil && !ph.Schema.Equal(st.DatasetSchema()) {
		t.Errorf("%q: physical schema %v differs from the prepared dataset schema %v", sql, ph.Schema, st.DatasetSchema())
	}
	return ph, err
}

func TestPlanDecisions(t *testing.T) {
	t.Parallel()
	i64 := arrow.PrimitiveTypes.Int64 // COUNT is int64 (Substrait i64)
	ts := &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}
	str := arrow.BinaryTypes.String
	tests := []struct {
		name    string
		sql     string
		args    []any
		opts    Options
		kind    Kind
		cols    []string
		ordered bool
		desc    bool
		limit   int64
		agg     []substrait.AggFunc
		schema  []arrow.Field
		decided string // a decision that must be present
	}{
		{name: "seed query, pushdown on", sql: seedSQL, opts: on, kind: KindCount, limit: -1,
			agg: []substrait.AggFunc{substrait.CountStar}, schema: []arrow.Field{{Name: "count", Type: i64}},
			decided: "COUNT(*) over one routed scan with only the routed predicate: pushed down to the durable-table count (no record is read)"},
		{name: "seed query, pushdown off", sql: seedSQL, opts: off, kind: KindScan, limit: -1,
			agg: []substrait.AggFunc{substrait.CountStar}, schema: []arrow.Field{{Name: "count", Type: i64}},
			decided: "COUNT(*) is a pushdown candidate but pushdown is disabled: counted on the scan path"},
		{name: "count alias and limit", sql: `SELECT count(*) AS n FROM messages` + where + ` LIMIT 1`, opts: on, kind: KindCount, limit: 1,
			agg: []substrait.AggFunc{substrait.CountStar}, schema: []arrow.Field{{Name: "n", Type: i64}},
			decided: "limit 1 applied to the aggregate result"},
		{name: "count(1) and count(*) twice", sql: `SELECT count(1), count(*) AS c FROM messages` + where, opts: on, kind: KindCount, limit: -1,
			agg: []substrait.AggFunc{substrait.CountStar, substrait.CountStar}, schema: []arrow.Field{{Name: "count", Type: i64}, {Name: "c", Type: i64}}},
		{name: "count with $n parameters", sql: `SELECT COUNT(*) FROM messages WHERE channel_id = $1 AND timestamp >= $2 AND timestamp < $3`,
			args: []any{"general", "2026-01-01T00:00:00Z", "2026-03-01T00:00:00Z"}, opts: on, kind: KindCount, limit: -1,
			agg: []substrait.AggFunc{substrait.CountStar}, schema: []arrow.Field{{Name: "count", Type: i64}}},
		{name: "count with ? parameters, literal on the left", sql: `SELECT COUNT(*) FROM messages WHERE ?=channel_id AND ?<=timestamp AND ?>timestamp`,
			args: []any{"general", "2026-01-01T00:00:00Z", "2026-03-01T00:00:00Z"}, opts: on, kind: KindCount, limit: -1,
			agg: []substrait.AggFunc{substrait.CountStar}, schema: []arrow.Field{{Name: "count", Type: i64}}},
		{name: "min/max, executor without min/max", sql: `SELECT min(timestamp), max(timestamp) FROM messages` + where, opts: on, kind: KindScan,
			cols: []string{"timestamp"}, limit: -1, agg: []substrait.AggFunc{substrait.Min, substrait.Max},
			schema:  []arrow.Field{{Name: "min", Type: ts, Nullable: true}, {Name: "max", Type: ts, Nullable: true}},
			decided: "MIN/MAX(timestamp) is a pushdown candidate but the executor has no MIN/MAX pushdown yet: aggregated on the scan path"},
		{name: "min/max pushed down", sql: `SELECT max(timestamp) AS last FROM messages` + where, opts: minmax, kind: KindMinMax,
			cols: []string{"timestamp"}, limit: -1, agg: []substrait.AggFunc{substrait.Max},
			schema: []arrow.Field{{Name: "last", Type: ts, Nullable: true}}},
		{name: "min/max, pushdown off", sql: `SELECT min(timestamp) FROM messages` + where, opts: Options{MinMax: true}, kind: KindScan,
			cols: []string{"timestamp"}, limit: -1, agg: []substrait.AggFunc{substrait.Min},
			schema:  []arrow.Field{{Name: "min", Type: ts, Nullable: true}},
			decided: "MIN/MAX(timestamp) is a pushdown candidate but pushdown is disabled: aggregated on the scan path"},
		{name: "count(column) stays on the scan path", sql: `SELECT count(id) FROM messages` + where, opts: minmax, kind: KindScan,
			cols: []string{"id"}, limit: -1, agg: []substrait.AggFunc{substrait.Count}, schema: []arrow.Field{{Name: "count", Type: i64}}},
		{name: "mixed aggregates stay on the scan path", sql: `SELECT count(*), min(timestamp) FROM messages` + where, opts: minmax, kind: KindScan,
			cols: []string{"timestamp"}, limit: -1, agg: []substrait.AggFunc{substrait.CountStar, substrait.Min},
			schema: []arrow.Field{{Name: "count", Type: i64}, {Name: "min", Type: ts, Nullable: true}}},
		{name: "plain scan", sql: `SELECT * FROM messages` + where, opts: on, kind: KindScan,
			cols: []string{"channel_id", "timestamp", "id", "value"}, limit: -1,
			schema: []arrow.Field{{Name: "channel_id", Type: str}, {Name: "timestamp", Type: ts}, {Name: "id", Type: str}, {Name: "value", Type: arrow.BinaryTypes.Binary}}},
		{name: "ordered scan with limit", sql: `SELECT id AS i, timestamp FROM messages` + where + ` ORDER BY timestamp DESC LIMIT ?`, args: []any{int32(20)},
			opts: on, kind: KindScan, cols: []string{"id", "timestamp"}, ordered: true, desc: true, limit: 20,
			schema:  []arrow.Field{{Name: "i", Type: str}, {Name: "timestamp", Type: ts}},
			decided: "scan path: read columns [id, timestamp], order timestamp DESC, id DESC, limit 20"},
		{name: "ascending order", sql: `SELECT value FROM messages` + where + ` ORDER BY timestamp, id`, opts: on, kind: KindScan,
			cols: []string{"value"}, ordered: true, limit: -1, schema: []arrow.Field{{Name: "value", Type: arrow.BinaryTypes.Binary}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ph, err := planSQL(t, tt.sql, tt.opts, tt.args...)
			if err != nil {
				t.Fatalf("%q: %v", tt.sql, err)
			}
			if ph.Kind != tt.kind || !slices.Equal(ph.Columns, tt.cols) || ph.Ordered != tt.ordered || ph.Desc != tt.desc || ph.Limit != tt.limit {
				t.Errorf("got kind=%v cols=%v ordered=%v desc=%v limit=%d; want %v %v %v %v %d",
					ph.Kind, ph.Columns, ph.Ordered, ph.Desc, ph.Limit, tt.kind, tt.cols, tt.ordered, tt.desc, tt.limit)
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
			if tt.decided != "" && !slices.Contains(ph.Decisions, tt.decided) {
				t.Errorf("decisions %q lack %q", ph.Decisions, tt.decided)
			}
			for _, d := range ph.Decisions {
				if strings.Contains(d, "general") || strings.Contains(d, "2026") {
					t.Errorf("decision %q carries a value", d)
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
		{sql: `SELECT COUNT(*) FROM messages WHERE channel_id = 'general' AND timestamp > '2026-01-01' AND timestamp < '2026-02-01'`, err: substrait.ErrUnsupportedPredicate},
		{sql: `SELECT COUNT(*) FROM messages WHERE channel_id = 'general' AND timestamp >= '2026-01-01'`, err: substrait.ErrMissingTimestampEnd},
		{sql: `SELECT COUNT(*) FROM messages WHERE timestamp >= '2026-01-01' AND timestamp < '2026-02-01'`, err: substrait.ErrMissingShardEquality},
		{sql: `SELECT COUNT(*) FROM messages WHERE channel_id = ? AND channel_id = ? AND timestamp >= '2026-01-01' AND timestamp < '2026-02-01'`,
			args: []any{"a", "b"}, err: substrait.ErrConflictingShardEquality},
		{sql: `SELECT COUNT(*) FROM messages WHERE channel_id = $1 AND timestamp >= $2 AND timestamp < $2`,
			args: []any{"a", "2026-01-01"}, err: substrait.ErrInvalidTimestampRange},
		{sql: `SELECT COUNT(DISTINCT id) FROM messages` + where, code: substrait.Unimplemented, msg: "COUNT(DISTINCT …) is not supported"},
		{sql: `SELECT id, COUNT(*) FROM messages` + where + ` GROUP BY 1`, code: substrait.Unimplemented, msg: "GROUP BY id is not supported"},
		{sql: `SELECT COUNT(*) FROM messages a JOIN messages b USING (id)` + where, code: substrait.Unimplemented, msg: "JOIN is not supported"},
		{sql: `SELECT COUNT(*) OVER () FROM messages` + where, code: substrait.Unimplemented, msg: "window functions are not supported"},
	}
	for _, tt := range tests {
		_, err := planSQL(t, tt.sql, on, tt.args...)
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

// TestGolden prints EXPLAIN and the pushdown decisions of representative queries and
// compares them with testdata/plans.golden (go test -update rewrites it).
func TestGolden(t *testing.T) {
	t.Parallel()
	cat := catalog(t)
	queries := []struct {
		sql  string
		opts Options
	}{
		{seedSQL, on},
		{seedSQL, off},
		{`SELECT count(*) AS n FROM messages WHERE '2026-03-01' > timestamp AND timestamp >= '2026-01-15T12:00:00+02:00' AND 'general' = channel_id LIMIT 1`, on},
		{`SELECT min(timestamp), max(timestamp) AS last FROM messages` + where, on},
		{`SELECT min(timestamp), max(timestamp) AS last FROM messages` + where, minmax},
		{`SELECT count(id), count(*) FROM messages` + where, on},
		{`SELECT * FROM messages` + where, on},
		{`SELECT id, timestamp AS ts FROM messages m` + where + ` ORDER BY m.timestamp DESC, id DESC FETCH FIRST 100 ROWS ONLY`, on},
	}
	var b strings.Builder
	for _, q := range queries {
		p, err := substrait.FromSQL(q.sql, cat)
		if err != nil {
			t.Fatalf("%q: %v", q.sql, err)
		}
		ph, err := Plan(p, cat, q.opts)
		if err != nil {
			t.Fatalf("%q: %v", q.sql, err)
		}
		fmt.Fprintf(&b, "== %s\n-- options: %+v\n%s-- kind: %v, buckets: %d, columns: %v, limit: %d, schema: %v\n",
			strings.Join(strings.Fields(q.sql), " "), q.opts, substrait.Explain(p), ph.Kind, ph.Buckets, ph.Columns, ph.Limit, ph.Schema.Fields())
		for _, d := range ph.Decisions {
			fmt.Fprintf(&b, "-- decision: %s\n", d)
		}
		b.WriteString("\n")
	}
	path := filepath.Join("testdata", "plans.golden")
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
