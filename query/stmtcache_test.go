package query

import (
	"fmt"
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
	a, err := c.prepare(sql(1), cat)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := c.prepare(sql(1), cat); b != a {
		t.Fatal("the same SQL was prepared twice")
	}
	if _, err := c.prepare("SELECT nope", cat); err == nil {
		t.Fatal("bad SQL accepted")
	}
	if _, ok := c.bySQL["SELECT nope"]; ok {
		t.Fatal("a failed preparation was cached")
	}
	for i := 2; i <= 4; i++ { // sql(1) is least recently used when sql(4) arrives
		if _, err := c.prepare(sql(i), cat); err != nil {
			t.Fatal(err)
		}
	}
	if c.order.Len() != 3 {
		t.Fatalf("%d entries, bound 3", c.order.Len())
	}
	if _, ok := c.bySQL[sql(1)]; ok {
		t.Fatal("the least recently used statement was not evicted")
	}
}
