package substrait

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/plan"
)

// TestRoutesFound: routed predicates written outside the read — around subqueries, CTEs,
// projections that rename, grouped subqueries (over their keys), UNION arms — reach the read
// (filterPusher) and become its route, as do equality, negated and BETWEEN bounds; empty or
// contradictory routes are Empty; what must not be pushed (through LIMIT, over a computed
// column, over a measure) is not, and the read is refused as before.
func TestRoutesFound(t *testing.T) {
	t.Parallel()
	cat := testCatalog(t)
	jan1 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	feb1 := time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)
	mar1 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	month := []time.Time{jan1, feb1}
	const rng = ` timestamp >= '2026-01-01' AND timestamp < '2026-02-01'`
	type want struct {
		parts []string // nil: analytical; empty (not nil): an empty route
		r     []time.Time
	}
	qrng := func(q string) string { return strings.ReplaceAll(rng, "timestamp", q+".timestamp") }
	one := func(p string, r []time.Time) []want { return []want{{[]string{p}, r}} }
	empty := []want{{[]string{}, nil}}
	tests := []struct {
		name string
		sql  string
		want []want
		err  *Error
	}{
		{"Superset virtual dataset: time filter outside the subquery",
			`SELECT date_trunc('day', virtual_table.timestamp) AS __timestamp, count(*) AS count FROM (SELECT * FROM messages WHERE channel_id = 'general') AS virtual_table WHERE virtual_table.timestamp >= '2026-01-01' AND virtual_table.timestamp < '2026-02-01' GROUP BY date_trunc('day', virtual_table.timestamp) ORDER BY count DESC LIMIT 10000`,
			one("general", month), nil},
		{"Superset's TO_TIMESTAMP literals",
			`SELECT count(*) FROM (SELECT * FROM messages WHERE channel_id = 'general') AS virtual_table WHERE virtual_table.timestamp >= TO_TIMESTAMP('2026-01-01 00:00:00.000000', 'YYYY-MM-DD HH24:MI:SS.US') AND virtual_table.timestamp < TO_TIMESTAMP('2026-02-01 00:00:00.000000', 'YYYY-MM-DD HH24:MI:SS.US')`,
			one("general", month), nil},
		{"everything outside the subquery",
			`SELECT count(*) FROM (SELECT * FROM messages) AS v WHERE v.channel_id = 'general' AND v.` + rng[1:],
			one("general", month), nil},
		{"through renaming projections",
			`SELECT n FROM (SELECT id AS n, channel_id AS c, timestamp AS t FROM messages) s WHERE c = 'general' AND t >= '2026-01-01' AND t < '2026-02-01'`,
			one("general", month), nil},
		{"through two subqueries",
			`SELECT * FROM (SELECT * FROM (SELECT id, timestamp, channel_id FROM messages WHERE channel_id = 'general') a WHERE timestamp >= '2026-01-01') b WHERE timestamp < '2026-02-01'`,
			one("general", month), nil},
		{"CTE", `WITH m AS (SELECT * FROM messages WHERE channel_id = 'general') SELECT count(*) FROM m WHERE` + rng,
			one("general", month), nil},
		{"HAVING over a grouping key",
			`SELECT channel_id, count(*) FROM messages WHERE` + rng + ` GROUP BY channel_id HAVING channel_id = 'general'`,
			one("general", month), nil},
		{"outer filter over a grouped subquery's key",
			`SELECT * FROM (SELECT channel_id, count(*) AS n FROM messages WHERE` + rng + ` GROUP BY channel_id) g WHERE channel_id = 'general' AND n > 1`,
			one("general", month), nil},
		{"outer filter over DISTINCT",
			`SELECT * FROM (SELECT DISTINCT channel_id, timestamp FROM messages WHERE channel_id = 'general') d WHERE` + rng,
			one("general", month), nil},
		{"into every UNION ALL arm",
			`SELECT * FROM (SELECT id, timestamp FROM messages WHERE channel_id = 'a' UNION ALL SELECT id, timestamp FROM messages WHERE channel_id = 'b') u WHERE` + rng,
			[]want{{[]string{"a"}, month}, {[]string{"b"}, month}}, nil},
		{"through ORDER BY",
			`SELECT * FROM (SELECT * FROM messages WHERE channel_id = 'general' ORDER BY timestamp) s WHERE` + rng,
			one("general", month), nil},
		{"timestamp = X", `SELECT * FROM messages WHERE channel_id = 'general' AND timestamp = '2026-01-01'`,
			one("general", []time.Time{jan1, jan1.Add(time.Nanosecond)}), nil},
		{"X = timestamp outside a subquery", `SELECT * FROM (SELECT * FROM messages WHERE channel_id = 'general') s WHERE '2026-01-01' = timestamp`,
			one("general", []time.Time{jan1, jan1.Add(time.Nanosecond)}), nil},
		{"NOT (timestamp < X) and NOT (timestamp >= Y)",
			`SELECT * FROM messages WHERE channel_id = 'general' AND NOT (timestamp < '2026-01-01') AND NOT (timestamp >= '2026-02-01')`,
			one("general", month), nil},
		{"NOT (timestamp > X) and NOT (timestamp <= Y)",
			`SELECT * FROM messages WHERE channel_id = 'general' AND NOT (timestamp <= '2025-12-31 23:59:59.999999') AND NOT (timestamp > '2026-01-31 23:59:59.999999')`,
			one("general", []time.Time{jan1.Add(-time.Microsecond + time.Nanosecond), feb1.Add(-time.Microsecond + time.Nanosecond)}), nil},
		{"BETWEEN", `SELECT * FROM messages WHERE channel_id = 'general' AND timestamp BETWEEN '2026-01-01' AND '2026-02-01'`,
			one("general", []time.Time{jan1, feb1.Add(time.Nanosecond)}), nil},
		{"tightest of inner and outer bounds",
			`SELECT * FROM (SELECT * FROM messages WHERE channel_id = 'general' AND timestamp >= '2025-12-01' AND timestamp < '2026-03-01') s WHERE` + rng,
			one("general", month), nil},
		{"inner and outer pins intersected",
			`SELECT * FROM (SELECT * FROM messages WHERE channel_id IN ('a', 'general')) s WHERE channel_id IN ('general', 'z') AND` + rng,
			one("general", month), nil},
		{"inverted range", `SELECT * FROM messages WHERE channel_id = 'general' AND timestamp >= '2026-02-01' AND timestamp < '2026-01-01'`, empty, nil},
		{"zero-length range", `SELECT count(*) FROM messages WHERE channel_id = 'general' AND timestamp >= '2026-02-01' AND timestamp < '2026-02-01'`, empty, nil},
		{"contradictory pins", `SELECT count(*) FROM messages WHERE channel_id = 'general' AND channel_id = 'other' AND` + rng, empty, nil},
		{"contradiction across a subquery",
			`SELECT count(*) FROM (SELECT * FROM messages WHERE channel_id = 'general' AND timestamp >= '2026-02-01') s WHERE channel_id = 'general' AND timestamp < '2026-01-01'`, empty, nil},
		{"a wide range is not empty", `SELECT * FROM messages WHERE channel_id = 'general' AND timestamp >= '2026-01-01' AND timestamp < '2026-03-01'`,
			one("general", []time.Time{jan1, mar1}), nil},
		// joins (join.go): each side's route from the join's output, its ON condition or a
		// subquery; a self-join reads each range it names.
		{"self-join, each side's route on the output",
			`SELECT count(*) FROM messages a JOIN messages b ON a.id = b.id WHERE a.channel_id = 'general' AND b.channel_id = 'b' AND a.timestamp >= '2026-01-01' AND a.timestamp < '2026-02-01' AND b.timestamp >= '2026-02-01' AND b.timestamp < '2026-03-01'`,
			[]want{{[]string{"general"}, month}, {[]string{"b"}, []time.Time{feb1, mar1}}}, nil},
		{"comma join, one filter pinning both through equalities of their own",
			`SELECT count(*) FROM messages a, messages b WHERE a.id = b.id AND a.channel_id = 'a' AND b.channel_id = 'b' AND` + qrng("a") + ` AND` + qrng("b"),
			[]want{{[]string{"a"}, month}, {[]string{"b"}, month}}, nil},
		{"LEFT JOIN: the right read's route from ON",
			`SELECT count(*) FROM messages a LEFT JOIN messages b ON a.id = b.id AND b.channel_id = 'b' AND` + qrng("b") + ` WHERE a.channel_id = 'a' AND` + qrng("a"),
			[]want{{[]string{"a"}, month}, {[]string{"b"}, month}}, nil},
		{"Superset's time filter outside a joined virtual dataset",
			`SELECT count(*) FROM (SELECT a.timestamp, a.id FROM messages a JOIN (VALUES ('x')) v(k) ON a.id = v.k WHERE a.channel_id = 'general') t WHERE` + rng,
			one("general", month), nil},
		{"IN (SELECT …) and EXISTS: the subqueries' own routes",
			`SELECT count(*) FROM messages a WHERE a.channel_id = 'a' AND` + qrng("a") + ` AND a.id IN (SELECT id FROM messages WHERE channel_id = 'b' AND` + rng + `) AND EXISTS (SELECT 1 FROM messages c WHERE c.id = a.id AND c.channel_id = 'c' AND` + qrng("c") + `)`,
			[]want{{[]string{"a"}, month}, {[]string{"b"}, month}, {[]string{"c"}, month}}, nil},
		{"LEFT JOIN under a comparison of the right side: an inner join, routed from WHERE",
			`SELECT count(*) FROM messages a LEFT JOIN messages b ON a.id = b.id WHERE a.channel_id = 'a' AND` + qrng("a") + ` AND b.channel_id = 'b' AND` + qrng("b"),
			[]want{{[]string{"a"}, month}, {[]string{"b"}, month}}, nil},
		{"FULL JOIN under comparisons of both sides: an inner join",
			`SELECT count(*) FROM messages a FULL JOIN messages b ON a.id = b.id WHERE a.channel_id = 'a' AND` + qrng("a") + ` AND b.channel_id IN ('b', 'c') AND` + qrng("b"),
			[]want{{[]string{"a"}, month}, {[]string{"b", "c"}, month}}, nil},
		{"not into the NULL-extended side of a LEFT JOIN under IS NULL",
			`SELECT count(*) FROM messages a LEFT JOIN messages b ON a.id = b.id WHERE a.channel_id = 'a' AND` + qrng("a") + ` AND b.id IS NULL AND (b.channel_id = 'b' OR b.channel_id IS NULL)`, nil,
			errReadNeedPart("b", " and timestamp >= <start> AND timestamp < <end>")},
		{"FULL JOIN under a comparison of the right side: a right join, the left's route from ON",
			`SELECT count(*) FROM messages a FULL JOIN messages b ON a.id = b.id AND a.channel_id = 'a' AND` + qrng("a") + ` WHERE b.channel_id = 'b' AND` + qrng("b"),
			[]want{{[]string{"a"}, month}, {[]string{"b"}, month}}, nil},
		{"not into either side of a FULL JOIN",
			`SELECT count(*) FROM messages a FULL JOIN messages b ON a.id = b.id WHERE (a.channel_id = 'a' OR b.channel_id = 'b') AND (` + qrng("a")[1:] + ` OR` + qrng("b") + `)`, nil,
			errReadNeedPart("a", " and timestamp >= <start> AND timestamp < <end>")},
		// not pushed: the read is refused as before
		{"not through LIMIT", `SELECT * FROM (SELECT * FROM messages WHERE channel_id = 'general' LIMIT 5) s WHERE` + rng, nil,
			errNeed("timestamp >= <start> AND timestamp < <end>")},
		{"not over a computed column",
			`SELECT * FROM (SELECT channel_id, timestamp + INTERVAL '1 day' AS t FROM messages WHERE channel_id = 'general') s WHERE t >= '2026-01-01' AND t < '2026-02-01'`, nil,
			errNeed("timestamp >= <start> AND timestamp < <end>")},
		{"not over a measure",
			`SELECT * FROM (SELECT channel_id, max(timestamp) AS t FROM messages WHERE channel_id = 'general' GROUP BY channel_id) s WHERE t >= '2026-01-01' AND t < '2026-02-01'`, nil,
			errNeed("timestamp >= <start> AND timestamp < <end>")},
		{"a contradiction without a range is still refused",
			`SELECT * FROM messages WHERE channel_id = 'general' AND channel_id = 'other'`, nil,
			errNeed("timestamp >= <start> AND timestamp < <end>")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, err := Prepare(tt.sql, cat)
			var p *plan.Plan
			if err == nil {
				p, err = s.Bind()
			}
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("got %v, want %v", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			_, infos, err := routesOf(p, cat, BindOptions{MaxPartitions: 64}, false)
			if err != nil {
				t.Fatal(err)
			}
			if len(infos) != len(tt.want) {
				t.Fatalf("%d routes, want %d", len(infos), len(tt.want))
			}
			for i, w := range tt.want {
				got := infos[i]
				var parts []string
				for _, p := range got.Partitions {
					parts = append(parts, string(p))
				}
				if len(w.parts) == 0 {
					if !got.Empty || got.Partitions == nil || len(got.Partitions) != 0 || !got.Range.Empty() {
						t.Errorf("route %d: %+v, want an empty one", i, got)
					}
					continue
				}
				if got.Empty || !slices.Equal(parts, w.parts) || !got.Range.Start.Equal(w.r[0]) || !got.Range.End.Equal(w.r[1]) {
					t.Errorf("route %d: partitions %q range %v, want %q [%v, %v)", i, parts, got.Range, w.parts, w.r[0], w.r[1])
				}
				if got.Residual != 0 && i == 0 && tt.name == "Superset virtual dataset: time filter outside the subquery" {
					t.Errorf("route %d: %d residual conjuncts, want none", i, got.Residual)
				}
			}
			// The route sits directly above each read: nothing routed is left above it.
			checkFilterAtRead(t, p)
		})
	}
}

// checkFilterAtRead fails when a read of p has no FilterRel directly above it.
func checkFilterAtRead(t *testing.T, p *plan.Plan) {
	t.Helper()
	var walk func(rel plan.Rel, parentFilter bool)
	walk = func(rel plan.Rel, parentFilter bool) {
		if r, ok := rel.(*plan.NamedTableReadRel); ok {
			if !parentFilter && r.Filter() == nil {
				t.Errorf("a read has no filter directly above it")
			}
			return
		}
		_, isFilter := rel.(*plan.FilterRel)
		for _, in := range rel.GetInputs() {
			walk(in, isFilter)
		}
	}
	walk(p.GetRoots()[0].Input(), false)
}

// TestClientPlanFiltersPushed: a client's Substrait plan whose routed conjuncts sit above a
// SortRel, or above an AggregateRel grouping by the partition column, is routed as the SQL
// binder's is (the filters are pushed to the read), and its answer keeps the plan's shape.
func TestClientPlanFiltersPushed(t *testing.T) {
	t.Parallel()
	cat := testCatalog(t)
	nsTS := substraitTSType
	lit := func(t time.Time) expr.Literal { return timestampLiteral(t.UnixNano()) }
	pin := func(t *testing.T, c *clientPlan, r plan.Rel) expr.Expression {
		return c.fn(t, URNComparison, "equal", c.ref(r, 0), expr.NewPrimitiveLiteral("general", false))
	}
	bounds := func(t *testing.T, c *clientPlan, r plan.Rel) expr.Expression {
		return c.fn(t, URNBoolean, "and",
			c.fn(t, URNComparison, "gte", c.ref(r, 1), lit(jan1)),
			c.fn(t, URNComparison, "lt", c.ref(r, 1), lit(feb1)))
	}
	t.Run("above a sort", func(t *testing.T) {
		t.Parallel()
		c := newClientPlan("messages", nsTS)
		s := must(c.b.Sort(c.read, must(c.b.SortFields(c.read, 2))...))
		f := must(c.b.Filter(s, c.fn(t, URNBoolean, "and", pin(t, c, s), bounds(t, c, s))))
		r, names, err := clientRoute(t, cat, must(c.b.Plan(f, []string{"channel_id", "timestamp", "id", "value"})))
		if err != nil {
			t.Fatal(err)
		}
		checkClientRoute(t, r, names, []string{"channel_id", "timestamp", "id", "value"})
	})
	t.Run("pin above an aggregate grouping by the partition", func(t *testing.T) {
		t.Parallel()
		c := newClientPlan("messages", nsTS)
		in := must(c.b.Filter(c.read, bounds(t, c, c.read)))
		agg := must(c.b.AggregateExprs(in, nil, []expr.Expression{c.ref(in, 0)}))
		f := must(c.b.Filter(agg, pin(t, c, agg)))
		b, err := PrepareSubstrait(marshalPlan(t, must(c.b.Plan(f, []string{"channel_id"}))), cat, BindOptions{})
		if err != nil {
			t.Fatal(err)
		}
		r, names, err := clientRoute(t, cat, b.Plan)
		if err != nil {
			t.Fatal(err)
		}
		checkClientRoute(t, r, names, []string{"channel_id"})
		if _, ok := b.Plan.GetRoots()[0].Input().(*plan.AggregateRel); !ok {
			t.Errorf("root is %T, want the aggregate with the filter below it", b.Plan.GetRoots()[0].Input())
		}
	})
}

// TestRoutesFoundWithParameters: parameters written outside a subquery, around renaming
// projections, are routed once bound, and their prepare-time placeholders count as the route.
func TestRoutesFoundWithParameters(t *testing.T) {
	t.Parallel()
	cat := testCatalog(t)
	jan1 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	feb1 := time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)
	s, err := Prepare(`SELECT n FROM (SELECT id AS n, channel_id AS c, timestamp AS t FROM messages WHERE channel_id = $1) s WHERE t >= $2 AND t < $3`, cat)
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.Bind("general", jan1, feb1)
	if err != nil {
		t.Fatal(err)
	}
	rt := onlyRoute(t, p, cat)
	if len(rt.Partitions) != 1 || string(rt.Partitions[0]) != "general" || !rt.Range.Start.Equal(jan1) || !rt.Range.End.Equal(feb1) {
		t.Errorf("route %q %v", rt.Partitions, rt.Range)
	}
	if p, err = s.Bind("general", feb1, jan1); err != nil || !onlyRoute(t, p, cat).Empty {
		t.Errorf("inverted parameters: %v, want an empty route", err)
	}
}

// TestRoutesFoundAnalytical: in the analytical mode a time filter outside a subquery gives
// the read its range without a partition pin (every partition of the range), and an empty
// range is an Empty route, never a discovery over it.
func TestRoutesFoundAnalytical(t *testing.T) {
	t.Parallel()
	cat := testCatalog(t)
	opts := BindOptions{Analytical: true}
	for _, c := range []struct {
		sql   string
		empty bool
	}{
		{`SELECT count(*) FROM (SELECT * FROM messages) v WHERE v.timestamp >= '2026-01-01' AND v.timestamp < '2026-02-01'`, false},
		{`SELECT count(*) FROM (SELECT * FROM messages) v WHERE v.timestamp >= '2026-02-01' AND v.timestamp < '2026-01-01'`, true},
	} {
		s, err := PrepareWith(c.sql, cat, opts)
		if err != nil {
			t.Fatal(err)
		}
		b, err := s.BindGeneral(opts)
		if err != nil {
			t.Fatal(err)
		}
		routes, err := Routes(b.Plan, cat, true)
		if err != nil || len(routes) != 1 || len(b.Routes) != 1 {
			t.Fatalf("%s: routes %v, %v", c.sql, routes, err)
		}
		for _, r := range routes {
			if r.Empty != c.empty || (r.Partitions == nil) == c.empty || b.Routes[0].Analytical == c.empty {
				t.Errorf("%s: route %+v, info %+v", c.sql, r, b.Routes[0])
			}
		}
	}
}

// TestAnalyticalRefusalNamesTheTimeOnly: in the analytical mode a read needs no partition pin,
// so a read missing its end time is refused naming the end time alone, with no word of
// partitions (a trial's finding: the hint spoke of listing partitions).
func TestAnalyticalRefusalNamesTheTimeOnly(t *testing.T) {
	t.Parallel()
	cat := testCatalog(t)
	opts := BindOptions{Analytical: true}
	for sql, want := range map[string]string{
		`SELECT count(*) FROM messages WHERE timestamp >= '2026-01-01'`: "messages needs timestamp < <end>",
		`SELECT id FROM messages`: "messages needs timestamp >= <start> AND timestamp < <end>",
	} {
		s, err := PrepareWith(sql, cat, opts)
		if err == nil {
			var b *Bound
			if b, err = s.BindGeneral(opts); err == nil {
				_, err = Routes(b.Plan, cat, true)
			}
		}
		var e *Error
		if !errors.As(err, &e) || e.Code != InvalidArgument || e.Msg != want {
			t.Errorf("%s: %v, want %q", sql, err, want)
		}
	}
}
