package substrait

import (
	"testing"
	"time"
)

// TestConstantBoundsRoute: a timestamp bound written as a constant expression — AT TIME ZONE
// of constants, a timestamp plus or minus an interval — is folded and routes as the instant
// PostgreSQL computes for it (America/Chicago is UTC−5 on 2001-04-01 after its spring-forward
// at 02:00 local time, UTC−6 before).
func TestConstantBoundsRoute(t *testing.T) {
	t.Parallel()
	cat := testCatalog(t)
	const P = `SELECT count(*) FROM messages WHERE channel_id = 'general' AND `
	utc := func(s string) time.Time {
		v, err := time.Parse("2006-01-02 15:04:05", s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, c := range []struct {
		where      string
		start, end time.Time
	}{
		{`timestamp >= ('2001-04-01 00:00:00'::timestamp AT TIME ZONE 'America/Chicago') AND timestamp < ('2001-04-02 00:00:00'::timestamp AT TIME ZONE 'America/Chicago')`,
			utc("2001-04-01 06:00:00"), utc("2001-04-02 05:00:00")},
		{`timestamp >= timezone('UTC', TIMESTAMP '2001-04-01 00:00:00') AND timestamp < TIMESTAMPTZ '2001-04-01 12:00:00+00' AT TIME ZONE 'UTC'`,
			utc("2001-04-01 00:00:00"), utc("2001-04-01 12:00:00")},
		{`timestamp >= TIMESTAMPTZ '2001-04-01 00:00:00+00' - INTERVAL '1 day' AND timestamp < '2001-04-01'::timestamptz + INTERVAL '2 hours'`,
			utc("2001-03-31 00:00:00"), utc("2001-04-01 02:00:00")},
		{`timestamp >= DATE '2001-04-01' - 1 AND timestamp < DATE '2001-04-01' + INTERVAL '1 month'`,
			utc("2001-03-31 00:00:00"), utc("2001-05-01 00:00:00")},
	} {
		s, err := Prepare(P+c.where, cat)
		if err != nil {
			t.Errorf("%s: prepare: %v", c.where, err)
			continue
		}
		p, err := s.Bind()
		if err != nil {
			t.Errorf("%s: bind: %v", c.where, err)
			continue
		}
		routes, err := Routes(p, cat, false)
		if err != nil {
			t.Errorf("%s: routes: %v", c.where, err)
			continue
		}
		for _, r := range routes {
			if !r.Range.Start.Equal(c.start) || !r.Range.End.Equal(c.end) {
				t.Errorf("%s: route %v, want [%v, %v)", c.where, r.Range, c.start, c.end)
			}
		}
	}
}

// TestNotConstantBoundNamed: a timestamp compared with an expression over the rows is no
// bound, and the refusal says so beside what is missing.
func TestNotConstantBoundNamed(t *testing.T) {
	t.Parallel()
	cat := testCatalog(t)
	_, err := Prepare(`SELECT count(*) FROM messages WHERE channel_id = 'general' AND timestamp >= id::timestamptz AND timestamp < '2026-02-01'`, cat)
	want := "messages needs timestamp >= <start>; a time bound is a constant, a constant expression or a parameter, not an expression over the rows"
	if e, ok := err.(*Error); !ok || e.Code != InvalidArgument || e.Msg != want {
		t.Errorf("got %v, want InvalidArgument %q", err, want)
	}
}
