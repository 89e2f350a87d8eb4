package sqlite

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestMinMaxPlanProbesPrimaryKey: SQLite answers the MIN/MAX statement's two extremes by
// searching the records' primary key (ORDER BY … LIMIT 1 satisfied by the index, so no
// temporary B-tree for sorting), never by scanning the table.
func TestMinMaxPlanProbesPrimaryKey(t *testing.T) {
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
	rows, err := s.r.QueryContext(ctx, "EXPLAIN QUERY PLAN "+sqlMinMax, "t", []byte("p"), "month:2024-05", int64(0), int64(1))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var lines []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	plan := strings.Join(lines, "\n")
	searches := 0
	for _, l := range lines {
		if strings.Contains(l, "TEMP B-TREE") || (strings.Contains(l, "SCAN") && strings.Contains(l, "rec")) {
			t.Fatalf("plan scans or sorts the records (%s):\n%s", l, plan)
		}
		if strings.Contains(l, "SEARCH rec USING PRIMARY KEY") && strings.Contains(l, "event_time>? AND event_time<?") {
			searches++
		}
	}
	if searches != 2 {
		t.Fatalf("plan has %d primary-key range searches of the records, want 2:\n%s", searches, plan)
	}
}
