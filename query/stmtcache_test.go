package query

import (
	"fmt"
	"strings"
	"testing"

	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/substrait"
)

func TestStatementCache(t *testing.T) {
	cat, err := substrait.NewCatalog(routing.TableDef{Name: "messages", TableID: "m", PartitionColumn: "channel_id", Strategy: routing.CalendarDayUTC, WritableBuckets: 2})
	if err != nil {
		t.Fatal(err)
	}
	sql := func(i int) string {
		return fmt.Sprintf("SELECT id FROM messages WHERE channel_id = 'c' AND timestamp >= '2025-01-01T00:00:00Z' AND timestamp < '2025-01-02T00:00:00Z' LIMIT %d", i)
	}
	c := newStmtCache(3)
	a, err := c.prepare(sql(1), cat, substrait.BindOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := c.prepare(sql(1), cat, substrait.BindOptions{}); b != a {
		t.Fatal("the same SQL was prepared twice")
	}
	if _, err := c.prepare("SELECT nope", cat, substrait.BindOptions{}); err == nil {
		t.Fatal("bad SQL accepted")
	}
	if _, ok := c.bySQL["SELECT nope"]; ok {
		t.Fatal("a failed preparation was cached")
	}
	for i := 2; i <= 4; i++ { // sql(1) is least recently used when sql(4) arrives
		if _, err := c.prepare(sql(i), cat, substrait.BindOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if c.order.Len() != 3 {
		t.Fatalf("%d entries, bound 3", c.order.Len())
	}
	if _, ok := c.bySQL[sql(1)]; ok {
		t.Fatal("the least recently used statement was not evicted")
	}
	// The analytical mode is part of the key: a statement without a partition pin is refused
	// outside it and prepared once inside it.
	unpinned := "SELECT count(*) FROM messages WHERE timestamp >= '2025-01-01T00:00:00Z' AND timestamp < '2025-01-02T00:00:00Z'"
	if _, err := c.prepare(unpinned, cat, substrait.BindOptions{}); err == nil {
		t.Fatal("a read without a partition pin was prepared outside the analytical mode")
	}
	a, err = c.prepare(unpinned, cat, substrait.BindOptions{Analytical: true})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := c.prepare(unpinned, cat, substrait.BindOptions{Analytical: true}); b != a {
		t.Fatal("the same analytical SQL was prepared twice")
	}
	if _, err := c.prepare(unpinned, cat, substrait.BindOptions{}); err == nil {
		t.Fatal("the analytical statement was served to a session outside the analytical mode")
	}
}

// TestStatementCacheBytes: the cache keeps at most maxBytes of statement text (here three
// statements of 133 bytes: 399), evicting the least recently used, and never keeps a statement
// of bigStatement bytes or more (a select list of 5,000 columns, 20,121 bytes), which is
// prepared again on every call.
func TestStatementCacheBytes(t *testing.T) {
	cat, err := substrait.NewCatalog(routing.TableDef{Name: "messages", TableID: "m", PartitionColumn: "channel_id", Strategy: routing.CalendarDayUTC, WritableBuckets: 2})
	if err != nil {
		t.Fatal(err)
	}
	where := " FROM messages WHERE channel_id = 'c' AND timestamp >= '2025-01-01T00:00:00Z' AND timestamp < '2025-01-02T00:00:00Z'"
	sql := func(i int) string { return fmt.Sprintf("SELECT id%s LIMIT %d", where, i) }
	if len(sql(1)) != 133 {
		t.Fatalf("statement of %d bytes, the test counts 133", len(sql(1)))
	}
	c := newStmtCache(100)
	c.maxBytes = 3 * 133
	for i := 1; i <= 4; i++ {
		if _, err := c.prepare(sql(i), cat, substrait.BindOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if c.order.Len() != 3 || c.bytes != 399 {
		t.Fatalf("%d entries of %d bytes, want 3 of 399", c.order.Len(), c.bytes)
	}
	if _, ok := c.bySQL[sql(1)]; ok {
		t.Fatal("the least recently used statement was kept past the bytes bound")
	}
	// Past 16 KiB of text (a comment: a select list that long passes substrait's column limit).
	big := "SELECT id /*" + strings.Repeat("x", 20000) + "*/" + where
	if len(big) < 20000 {
		t.Fatalf("big statement of %d bytes, the test needs more than 16 KiB", len(big))
	}
	a, err := c.prepare(big, cat, substrait.BindOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := c.prepare(big, cat, substrait.BindOptions{}); b == a || c.order.Len() != 3 {
		t.Fatalf("a statement of %d bytes was kept (%d entries)", len(big), c.order.Len())
	}
}
