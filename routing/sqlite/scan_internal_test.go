package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestScanPlanFollowsPrimaryKey: SQLite runs every variant of the scan statement as a merge of
// the compound's two arms whose records arm searches the records' primary key over the range,
// in order, with no temporary B-tree (the only sort is the route arm's single row) and no scan
// of the table; the outer SELECT is a co-routine over the merge, so rows stream.
func TestScanPlanFollowsPrimaryKey(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, err := Open(ctx, Config{Path: filepath.Join(t.TempDir(), "hot.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	for mask := range 16 {
		desc, ts, id, value := mask&8 != 0, mask&4 != 0, mask&2 != 0, mask&1 != 0
		what := fmt.Sprintf("desc=%v ts=%v id=%v value=%v", desc, ts, id, value)
		rows, err := s.r.QueryContext(ctx, "EXPLAIN QUERY PLAN "+sqlScan[b2i(desc)][b2i(ts)][b2i(id)][b2i(value)],
			"t", []byte("p"), "month:2024-05", int64(0), int64(1), int64(-1), int64(10))
		if err != nil {
			t.Fatal(err)
		}
		type node struct {
			parent int
			detail string
		}
		nodes := map[int]node{}
		var order []int
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			nodes[id] = node{parent, detail}
			order = append(order, id)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
		var lines []string
		for _, id := range order {
			lines = append(lines, nodes[id].detail)
		}
		plan := strings.Join(lines, "\n")
		// under reports whether node id lies below a node whose detail is want.
		under := func(id int, want string) bool {
			for p := nodes[id].parent; p != 0; p = nodes[p].parent {
				if nodes[p].detail == want {
					return true
				}
			}
			return false
		}
		var merge, search int
		for _, id := range order {
			d := nodes[id].detail
			switch {
			case d == "MERGE (UNION ALL)":
				merge++
			case strings.Contains(d, "TEMP B-TREE") && !under(id, "LEFT"):
				t.Fatalf("%s: a temporary B-tree outside the route arm:\n%s", what, plan)
			case strings.Contains(d, "SCAN rec"):
				t.Fatalf("%s: the plan scans the records:\n%s", what, plan)
			case strings.HasPrefix(d, "SEARCH rec USING PRIMARY KEY") && strings.Contains(d, "event_time>? AND event_time<?"):
				if !under(id, "RIGHT") {
					t.Fatalf("%s: the records search is not the merge's right arm:\n%s", what, plan)
				}
				search++
			}
		}
		if merge != 1 || search != 1 {
			t.Fatalf("%s: %d merges and %d records searches, want 1 and 1:\n%s", what, merge, search, plan)
		}
	}
}
