package substrait

import (
	"slices"
	"testing"
	"time"
)

// TestRoutesStopAtWindows: a routed conjunct written outside a subquery or CTE that computes
// window functions or DISTINCT ON reaches the read — as the binder's route (EXPLAIN's) and as
// the route the executor reads from the plan (Routes) alike — only when its column partitions
// every window (DISTINCT ON's keys are its window's partitions); any other time bound or
// partition pin stays above the windows, and the read keeps the subquery's own route.
func TestRoutesStopAtWindows(t *testing.T) {
	t.Parallel()
	cat := testCatalog(t)
	const r = ` FROM messages WHERE channel_id IN ('a', 'b', 'c') AND timestamp >= '2026-01-01' AND timestamp < '2026-02-01'`
	mid := time.Date(2026, 1, 15, 0, 0, 0, 0, time.UTC)
	all, month := []string{"a", "b", "c"}, [2]time.Time{jan1, feb1}
	type route struct {
		parts []string
		rng   [2]time.Time
	}
	own := []route{{all, month}}
	tests := []struct {
		name, sql string
		want      []route
	}{
		{"pin outside a CTE's row_number over every row",
			`WITH ranked AS (SELECT channel_id, id, row_number() OVER (ORDER BY id) rn` + r + `) SELECT * FROM ranked WHERE channel_id = 'b' ORDER BY rn LIMIT 3`, own},
		{"time bound outside count(*) OVER ()",
			`SELECT * FROM (SELECT id, timestamp, count(*) OVER () n` + r + `) s WHERE timestamp >= '2026-01-15'`, own},
		{"pin outside a window partitioned by another column",
			`SELECT * FROM (SELECT channel_id, id, count(*) OVER (PARTITION BY value->>'k') c` + r + `) s WHERE channel_id = 'a'`, own},
		{"time bound outside a window partitioned by the day (not the timestamp itself)",
			`SELECT * FROM (SELECT channel_id, timestamp, row_number() OVER (PARTITION BY channel_id, date_trunc('day', timestamp) ORDER BY id) rn` + r + `) s WHERE timestamp >= '2026-01-15' AND rn = 1`, own},
		{"pin outside two windows, one partitioned by it",
			`SELECT * FROM (SELECT channel_id, count(*) OVER (PARTITION BY channel_id) n, percent_rank() OVER (ORDER BY id) pr` + r + `) s WHERE channel_id = 'c'`, own},
		{"time bound outside DISTINCT ON another key",
			`SELECT * FROM (SELECT DISTINCT ON (value->>'k') value->>'k' AS k, timestamp, id` + r + ` ORDER BY value->>'k', timestamp, id) s WHERE timestamp >= '2026-01-15'`, own},
		{"pin outside a window over a grouped result",
			`SELECT * FROM (SELECT channel_id, id, count(*) n, sum(count(*)) OVER (PARTITION BY id) t` + r + ` GROUP BY 1, 2) s WHERE channel_id = 'a'`, own},
		{"a CTE with a window read twice under different pins",
			`WITH w AS (SELECT channel_id, id, count(*) OVER () n` + r + `) SELECT a.n, b.n FROM (SELECT * FROM w WHERE channel_id = 'a' ORDER BY id LIMIT 1) a CROSS JOIN (SELECT * FROM w WHERE channel_id = 'b' ORDER BY id LIMIT 1) b`,
			[]route{{all, month}, {all, month}}},
		{"a CTE of a CTE with a window",
			`WITH x AS (SELECT channel_id, id, percent_rank() OVER (ORDER BY id) pr` + r + `), y AS (SELECT * FROM x WHERE channel_id = 'c') SELECT count(*), max(pr) FROM y`, own},
		// The rule's other side: a filter on a column partitioning every window selects whole
		// partitions, and narrows the read.
		{"pin on the column partitioning the window",
			`SELECT * FROM (SELECT channel_id, id, row_number() OVER (PARTITION BY channel_id ORDER BY id) rn` + r + `) s WHERE channel_id = 'b' AND rn <= 3`,
			[]route{{[]string{"b"}, month}}},
		{"pin on DISTINCT ON's key",
			`SELECT * FROM (SELECT DISTINCT ON (channel_id) channel_id, id` + r + ` ORDER BY channel_id, timestamp DESC) s WHERE channel_id = 'a'`,
			[]route{{[]string{"a"}, month}}},
		{"time bound and pin on the columns partitioning every window",
			`SELECT * FROM (SELECT channel_id, timestamp, id, count(*) OVER (PARTITION BY channel_id, timestamp) n, max(id) OVER (PARTITION BY timestamp, channel_id) m` + r + `) s WHERE channel_id = 'c' AND timestamp >= '2026-01-15'`,
			[]route{{[]string{"c"}, [2]time.Time{mid, feb1}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, err := Prepare(tt.sql, cat)
			if err != nil {
				t.Fatal(err)
			}
			b, err := s.BindGeneral(BindOptions{MaxPartitions: 64})
			if err != nil {
				t.Fatal(err)
			}
			_, read, err := routesOf(b.Plan, cat, BindOptions{MaxPartitions: 64}, false)
			if err != nil {
				t.Fatal(err)
			}
			for what, infos := range map[string][]RouteInfo{"bound (EXPLAIN's)": b.Routes, "read from the plan (Routes)": read} {
				if len(infos) != len(tt.want) {
					t.Fatalf("%s: %d routes, want %d", what, len(infos), len(tt.want))
				}
				for i, in := range infos {
					var parts []string
					for _, p := range in.Partitions {
						parts = append(parts, string(p))
					}
					slices.Sort(parts)
					w := tt.want[i]
					if !slices.Equal(parts, w.parts) || !in.Range.Start.Equal(w.rng[0]) || !in.Range.End.Equal(w.rng[1]) {
						t.Errorf("%s route %d: %v %v–%v, want %v %v–%v", what, i, parts, in.Range.Start, in.Range.End, w.parts, w.rng[0], w.rng[1])
					}
				}
			}
		})
	}
}
