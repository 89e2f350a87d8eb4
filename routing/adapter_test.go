package routing

import (
	"testing"
	"time"
)

func TestMicroBounds(t *testing.T) {
	t.Parallel()
	at := func(ns int) time.Time { return time.Date(2024, 1, 1, 0, 0, 0, ns, time.UTC) }
	r := TimeRange{Start: at(1500), End: at(9000)}
	start, end, cur := MicroBounds(r, nil, false)
	if !start.Equal(at(2000)) || !end.Equal(at(9000)) || cur != nil {
		t.Fatalf("bounds = %v %v %v", start, end, cur)
	}
	start, _, cur = MicroBounds(r, &Cursor{EventTime: at(4001), SortKey: []byte("k")}, false)
	if !start.Equal(at(5000)) || cur != nil {
		t.Fatalf("ascending sub-µs cursor: start %v cursor %v", start, cur)
	}
	_, end, cur = MicroBounds(r, &Cursor{EventTime: at(4999), SortKey: []byte("k")}, true)
	if !end.Equal(at(5000)) || cur != nil {
		t.Fatalf("descending sub-µs cursor: end %v cursor %v", end, cur)
	}
	_, _, cur = MicroBounds(r, &Cursor{EventTime: at(4000).In(time.FixedZone("x", 3600))}, true)
	if cur == nil || cur.SortKey == nil || cur.EventTime.Location() != time.UTC || !cur.EventTime.Equal(at(4000)) {
		t.Fatalf("aligned cursor = %+v", cur)
	}
}

func TestRouteFromRow(t *testing.T) {
	t.Parallel()
	if r, err := RouteFromRow("archived", "m.json", true, true, 3); err != nil || r.State != StateArchived || r.ManifestKey != "m.json" || !r.HotDeleted || r.Generation != 3 {
		t.Fatalf("archived: %+v %v", r, err)
	}
	if r, err := RouteFromRow("hot", "", false, false, 0); err != nil || r.State != StateHot {
		t.Fatalf("hot: %+v %v", r, err)
	}
	for _, c := range []struct {
		state, key string
		has        bool
	}{{"archived", "", false}, {"archived", "", true}, {"hot", "k", true}, {"archiving", "", true}, {"frozen", "", false}} {
		if _, err := RouteFromRow(c.state, c.key, c.has, false, 0); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
}
