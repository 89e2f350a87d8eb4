package substrait_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/substrait-io/substrait-go/v8/plan"

	"github.com/flightsrv/flightsrv/scan"
	"github.com/flightsrv/flightsrv/substrait"
)

// TestDecorrelatedPlans: the plans of correlated subqueries of every shape (join.go,
// domain.go). Each routed read, the domain's second read of the outer table included, is
// pinned to its partition and range; the executor's joins are those the decorrelation means
// (hash keys for the equalities, null-safe for the domain's, residual conjuncts for the
// rest, a nested loop where no equality is left).
func TestDecorrelatedPlans(t *testing.T) {
	env := newFuzzEnv(t)
	const (
		a = " FROM messages a WHERE a.channel_id = 'g' AND a.timestamp >= '2026-01-01' AND a.timestamp < '2026-01-02'"
		b = " FROM messages b WHERE b.channel_id = 'h' AND b.timestamp >= '2026-01-01' AND b.timestamp < '2026-02-01'"
	)
	for _, c := range []struct {
		sql   string
		reads int
		want  []string
	}{
		// A correlated NOT IN: an anti join on the correlation, NOT IN's condition the residual.
		{"SELECT id" + a + " AND a.id NOT IN (SELECT b.id" + b + " AND b.value = a.value)", 2,
			[]string{"HashJoin anti, 1 keys, 1 residual conjuncts"}},
		// NOT IN under OR: three marks (a match, a NULL value, any row).
		{"SELECT id" + a + " AND (a.id = 'x' OR a.id NOT IN (SELECT b.id" + b + "))", 4,
			[]string{"HashJoin single, 1 keys", "NestedLoopJoin single"}},
		// A non-equality: the domain of a.timestamp, joined to b without a key (a nested loop
		// under the condition's filter), the outer rows matched to it null-safe.
		{"SELECT id" + a + " AND EXISTS (SELECT 1" + b + " AND b.timestamp < a.timestamp)", 3,
			[]string{"NestedLoopJoin inner", "HashJoin semi, 1 keys, null-safe keys"}},
		// An equality and a non-equality: hashed on the equality, the rest residual.
		{"SELECT id, (SELECT count(*)" + b + " AND b.id = a.id AND b.timestamp < a.timestamp) AS n" + a, 3,
			[]string{"HashJoin left, 1 keys, 1 residual conjuncts", "HashJoin single, 2 keys, null-safe keys"}},
		// Superset's virtual dataset: the time filter outside the derived table pins the outer
		// read and the domain's copy of it (the routed conjuncts that reach the one reach the
		// other), the partition inside.
		{"SELECT id FROM (SELECT a.id, a.timestamp FROM messages a WHERE a.channel_id = 'g' AND EXISTS (SELECT 1" + b + " AND b.timestamp < a.timestamp)) AS virtual_table WHERE timestamp >= '2026-01-01' AND timestamp < '2026-01-02'", 3,
			[]string{"NestedLoopJoin inner", "HashJoin semi, 1 keys, null-safe keys"}},
		// The partition outside too, and a scalar subquery of the domain under NOT IN's marks.
		{"SELECT id, n FROM (SELECT a.id, a.channel_id, a.timestamp, (SELECT count(*)" + b + " AND b.timestamp < a.timestamp) AS n FROM messages a WHERE a.id = 'x' OR a.id NOT IN (SELECT b.id" + b + " AND b.value <> a.value)) AS v WHERE channel_id = 'g' AND timestamp >= '2026-01-01' AND timestamp < '2026-01-02'", 15,
			[]string{"HashJoin single, 2 keys, null-safe keys", "NestedLoopJoin left, 1 residual conjuncts"}},
		// The inner read pinned by its correlation with the outer partition (i.origin =
		// o.origin): through the semi join's key, and through the domain's column.
		{"SELECT id" + a + " AND EXISTS (SELECT 1 FROM messages b WHERE b.channel_id = a.channel_id AND b.timestamp >= '2026-01-01' AND b.timestamp < '2026-02-01' AND b.id = a.id)", 2,
			[]string{"HashJoin semi, 2 keys"}},
		{"SELECT id FROM (SELECT a.id, a.timestamp FROM messages a WHERE a.channel_id = 'g' AND EXISTS (SELECT 1 FROM messages b WHERE b.channel_id = a.channel_id AND b.timestamp >= '2026-01-01' AND b.timestamp < '2026-02-01' AND b.timestamp < a.timestamp)) AS v WHERE timestamp >= '2026-01-01' AND timestamp < '2026-01-02'", 3,
			[]string{"HashJoin semi, 2 keys, null-safe keys"}},
		{"SELECT count(*) FROM messages a JOIN messages b ON b.channel_id = a.channel_id AND b.id = a.id WHERE a.channel_id = 'g' AND a.timestamp >= '2026-01-01' AND a.timestamp < '2026-01-02' AND b.timestamp >= '2026-01-01' AND b.timestamp < '2026-01-02'", 2,
			[]string{"HashJoin inner, 2 keys"}},
		// ALL over an uncorrelated subquery: two scalar subqueries of one aggregate each (the
		// greatest value, whether one is NULL), one row each, not a nested loop over the rows.
		{"SELECT id" + a + " AND a.timestamp > ALL (SELECT b.timestamp" + b + ")", 3,
			[]string{"Final aggregate 0 grouping keys, measures [max]", "Final aggregate 0 grouping keys, measures [bool_or]"}},
		// LIMIT per row and LATERAL.
		{"SELECT a.id, t.id FROM messages a CROSS JOIN LATERAL (SELECT b.id" + b + " AND b.timestamp > a.timestamp ORDER BY b.timestamp LIMIT 2) t WHERE a.channel_id = 'g' AND a.timestamp >= '2026-01-01' AND a.timestamp < '2026-01-02'", 3,
			[]string{"HashJoin inner, 1 keys, null-safe keys"}},
		// A scalar subquery that may answer several rows, read in a CASE branch: grouped by its
		// key (its value, its row count for the more-than-one-row error) before the single join.
		{"SELECT CASE WHEN a.id = 'x' THEN (SELECT b.id" + b + " AND b.value = a.value) END" + a, 2,
			[]string{"HashJoin single, 1 keys", "aggregate 1 grouping keys, measures [min, count(*)]"}},
		// A derived table whose target may fail, joined: deferred to the joined rows, the join
		// still hashed on its key.
		{"SELECT a.id, s.v FROM messages a JOIN (SELECT b.id AS k, b.id::int AS v" + b + ") s ON s.k = a.id WHERE a.channel_id = 'g' AND a.timestamp >= '2026-01-01' AND a.timestamp < '2026-01-02'", 2,
			[]string{"HashJoin inner, 1 keys"}},
	} {
		opts := substrait.BindOptions{Now: time.Date(2026, 1, 15, 0, 0, 0, 0, time.UTC)}
		st, err := substrait.PrepareWith(c.sql, env.cat, opts)
		if err != nil {
			t.Fatalf("%s: %v", c.sql, err)
		}
		bd, err := st.BindGeneral(opts)
		if err != nil {
			t.Fatalf("%s: %v", c.sql, err)
		}
		routes, err := substrait.Routes(bd.Plan, env.cat, false)
		if err != nil {
			t.Fatalf("%s: routes: %v", c.sql, err)
		}
		if len(routes) != c.reads {
			t.Errorf("%s: %d routed reads, want %d", c.sql, len(routes), c.reads)
		}
		for _, rt := range routes {
			if len(rt.Partitions) != 1 || rt.Range.Start.IsZero() || rt.Range.End.IsZero() {
				t.Errorf("%s: a read routed %+v, want one partition and a range", c.sql, rt)
			}
		}
		pr, err := scan.Prepare(bd.Plan, scan.Options{Pushdown: true, Bind: func(r *plan.NamedTableReadRel) (scan.Source, error) {
			rt, ok := routes[r]
			if !ok {
				return scan.Source{}, errors.New("a read of the plan has no route")
			}
			return scan.Source{Table: env.tables[rt.Table.Name], Partitions: rt.Partitions, Range: rt.Range}, nil
		}})
		if err != nil {
			t.Fatalf("%s: lower: %v", c.sql, err)
		}
		explain := strings.Join(pr.Explain(), "\n")
		for _, w := range c.want {
			if !strings.Contains(explain, w) {
				t.Errorf("%s: EXPLAIN lacks %q:\n%s", c.sql, w, explain)
			}
		}
	}
}
