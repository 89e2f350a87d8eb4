package substrait

import (
	"testing"
	"time"
)

// TestDateBoundsRoute: a date compared with the timestamp column is converted implicitly to
// timestamp with time zone at midnight UTC, as PostgreSQL does in a UTC session, in every
// spelling (DATE '…', '…'::date, CAST('…' AS date), a date parameter) and either operand order
// or BETWEEN; the bounds are the read's route, equal to the route of the same midnight
// instants written as timestamps.
func TestDateBoundsRoute(t *testing.T) {
	t.Parallel()
	cat := testCatalog(t)
	const P = `SELECT count(*) FROM messages WHERE channel_id = 'general' AND `
	routeOf := func(sql string, args ...any) Route {
		t.Helper()
		s, err := Prepare(sql, cat)
		if err != nil {
			t.Fatalf("%s: prepare: %v", sql, err)
		}
		p, err := s.Bind(args...)
		if err != nil {
			t.Fatalf("%s: bind: %v", sql, err)
		}
		routes, err := Routes(p, cat, false)
		if err != nil {
			t.Fatalf("%s: routes: %v", sql, err)
		}
		if len(routes) != 1 {
			t.Fatalf("%s: %d routes", sql, len(routes))
		}
		for _, r := range routes {
			return r
		}
		return Route{}
	}
	want := routeOf(P + `timestamp >= TIMESTAMPTZ '2026-01-01T00:00:00Z' AND timestamp < TIMESTAMPTZ '2026-02-01T00:00:00Z'`)
	if !want.Range.Start.Equal(jan1) || !want.Range.End.Equal(feb1) {
		t.Fatalf("timestamptz route %v", want.Range)
	}
	for _, where := range []string{
		`timestamp >= DATE '2026-01-01' AND timestamp < DATE '2026-02-01'`,
		`timestamp >= '2026-01-01'::date AND timestamp < '2026-02-01'::date`,
		`timestamp >= CAST('2026-01-01' AS date) AND timestamp < CAST('2026-02-01' AS date)`,
		`DATE '2026-01-01' <= timestamp AND DATE '2026-02-01' > timestamp`,
		`timestamp >= DATE '2026-01-01' AND timestamp < TIMESTAMPTZ '2026-02-01T00:00:00Z'`,
	} {
		got := routeOf(P + where)
		if !got.Range.Start.Equal(want.Range.Start) || !got.Range.End.Equal(want.Range.End) || len(got.Partitions) != 1 {
			t.Errorf("%s: route %v %q, want %v", where, got.Range, got.Partitions, want.Range)
		}
	}
	// BETWEEN includes its upper date's midnight: the route ends one nanosecond after it.
	got := routeOf(P + `timestamp BETWEEN DATE '2026-01-01' AND DATE '2026-02-01'`)
	if !got.Range.Start.Equal(jan1) || !got.Range.End.Equal(feb1.Add(time.Nanosecond)) {
		t.Errorf("BETWEEN dates: route %v", got.Range)
	}
	// Date parameters: declared date, bound as a date (time.Time at midnight) or its text.
	s, err := Prepare(P+`timestamp >= $1::date AND timestamp < CAST($2 AS date)`, cat)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if f := s.ParameterSchema().Field(i); f.Type.ID() != paramArrowType(dateType()).ID() {
			t.Errorf("parameter %d declared %s, want date32", i+1, f.Type)
		}
	}
	got = routeOf(P+`timestamp >= $1::date AND timestamp < CAST($2 AS date)`, jan1, "2026-02-01")
	if !got.Range.Start.Equal(jan1) || !got.Range.End.Equal(feb1) {
		t.Errorf("date parameters: route %v", got.Range)
	}
	// A date beyond the nanosecond range is clamped, as a timestamp bound is.
	got = routeOf(P + `timestamp >= DATE '2026-01-01' AND timestamp < DATE '9999-12-31'`)
	if !got.Range.End.Equal(maxNanoTime) {
		t.Errorf("far date: route end %v, want the end of timestamp[ns]", got.Range.End)
	}
}
