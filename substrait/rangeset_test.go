package substrait

import (
	"slices"
	"testing"
	"time"

	"github.com/flightsrv/flightsrv/routing"
)

// TestRangeSetParameters: an OR of ranges and an IN list of instants bounded by parameters
// prepare without a route and route, once bound, the union of their ranges (hull and pieces),
// an outer bound intersecting it; ranges that overlap or touch are merged.
func TestRangeSetParameters(t *testing.T) {
	t.Parallel()
	cat := testCatalog(t)
	at := func(m, d int) time.Time { return time.Date(2026, time.Month(m), d, 0, 0, 0, 0, time.UTC) }
	for _, tc := range []struct {
		sql  string
		args []any
		want []routing.TimeRange
	}{
		{`SELECT count(*) FROM messages WHERE channel_id = 'a' AND ((timestamp >= $1 AND timestamp < $2) OR (timestamp >= $3 AND timestamp < $4))`,
			[]any{at(1, 1), at(2, 1), at(6, 1), at(7, 1)}, []routing.TimeRange{{Start: at(1, 1), End: at(2, 1)}, {Start: at(6, 1), End: at(7, 1)}}},
		{`SELECT count(*) FROM messages WHERE channel_id = 'a' AND ((timestamp >= $1 AND timestamp < $2) OR (timestamp >= $3 AND timestamp < $4)) AND timestamp < '2026-06-15'`,
			[]any{at(1, 1), at(2, 1), at(1, 15), at(7, 1)}, []routing.TimeRange{{Start: at(1, 1), End: at(6, 15)}}},
		{`SELECT count(*) FROM messages WHERE channel_id = 'a' AND timestamp IN ($1, $2)`,
			[]any{at(3, 1), at(1, 1)}, []routing.TimeRange{{Start: at(1, 1), End: at(1, 1).Add(1)}, {Start: at(3, 1), End: at(3, 1).Add(1)}}},
	} {
		s, err := Prepare(tc.sql, cat)
		if err != nil {
			t.Fatalf("%s: %v", tc.sql, err)
		}
		p, err := s.Bind(tc.args...)
		if err != nil {
			t.Fatalf("%s: %v", tc.sql, err)
		}
		rt := onlyRoute(t, p, cat)
		if !slices.Equal(rt.Pieces(), tc.want) || !rt.Range.Start.Equal(tc.want[0].Start) || !rt.Range.End.Equal(tc.want[len(tc.want)-1].End) {
			t.Errorf("%s: route %v (pieces %v), want %v", tc.sql, rt.Range, rt.Pieces(), tc.want)
		}
	}
}
