package substrait

import (
	"strings"
	"testing"
)

// TestUnsupportedAggregateNamed: an aggregate the executor does not run is refused by name
// (UNIMPLEMENTED, SQLSTATE 0A000), alone, next to GROUP BY or another aggregate, inside an
// expression or with WITHIN GROUP — never as a column missing from GROUP BY.
func TestUnsupportedAggregateNamed(t *testing.T) {
	t.Parallel()
	cat := testCatalog(t)
	for _, c := range []struct{ sql, name string }{
		{"SELECT range_agg(length(id)) FROM messages" + routedWhere, "range_agg"},
		{"SELECT channel_id, range_intersect_agg(length(id)) FROM messages" + routedWhere + " GROUP BY channel_id", "range_intersect_agg"},
		{"SELECT count(*), jsonb_object_agg(id, id) FROM messages" + routedWhere, "jsonb_object_agg"},
		{"SELECT 1 + json_object_agg(id, id) FROM messages" + routedWhere, "json_object_agg"},
		{"SELECT rank(1) WITHIN GROUP (ORDER BY length(id)) FROM messages" + routedWhere, "rank"},
		{"SELECT channel_id FROM messages" + routedWhere + " GROUP BY channel_id HAVING range_agg(length(id)) IS NOT NULL", "range_agg"},
	} {
		_, err := Prepare(c.sql, cat)
		e, ok := err.(*Error)
		if !ok || e.Code != Unimplemented || e.SQLState != "0A000" || !strings.Contains(e.Msg, "aggregate function "+c.name+" is not supported") {
			t.Errorf("%s: %v, want the aggregate refused by name", c.sql, err)
		}
	}
	// The variance family over integers is numeric; DISTINCT of it is refused by name.
	for _, sql := range []string{"SELECT stddev(length(id)) FROM messages" + routedWhere, "SELECT channel_id, var_pop(length(id) * 1.5) FROM messages" + routedWhere + " GROUP BY 1"} {
		if _, err := Prepare(sql, cat); err != nil {
			t.Errorf("%s: %v", sql, err)
		}
	}
	for _, sql := range []string{"SELECT stddev(DISTINCT length(id)) FROM messages" + routedWhere, "SELECT variance(CASE WHEN id > 'a' THEN 1.5 ELSE 2 END) FROM messages" + routedWhere} {
		_, err := Prepare(sql, cat)
		if e, ok := err.(*Error); !ok || e.Code != Unimplemented || e.SQLState != "0A000" {
			t.Errorf("%s: %v, want refused by name", sql, err)
		}
	}
	// The variance family over a window: of text, PostgreSQL's 42883 in the query's words.
	if _, err := Prepare("SELECT stddev(id) OVER () FROM messages"+routedWhere, cat); err == nil || !strings.Contains(err.Error(), "function stddev(text) does not exist") {
		t.Errorf("stddev(text) OVER (): %v", err)
	}
	// Over a window, the aggregates that run only grouped are refused by name.
	for _, sql := range []string{"SELECT json_agg(id) OVER () FROM messages" + routedWhere, "SELECT mode() WITHIN GROUP (ORDER BY id) OVER () FROM messages" + routedWhere} {
		_, err := Prepare(sql, cat)
		if e, ok := err.(*Error); !ok || e.Code != Unimplemented || !strings.Contains(e.Msg, "as a window function is not supported") {
			t.Errorf("%s: %v, want the window aggregate refused by name", sql, err)
		}
	}
}
