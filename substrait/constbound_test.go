package substrait

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/substrait-io/substrait-go/v8/expr"
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

// TestExpressionBoundsRoute: a time bound written as any expression of constants, the
// statement's clock (now(), current_date, localtimestamp) and functions the executor
// evaluates — date_trunc to a unit the binder does not fold itself, a date cast and date +
// integer, date_bin, make_interval, calendar months — is evaluated once by the executor's
// kernels and routes the read as the instant PostgreSQL computes (PostgreSQL 15, SET TimeZone =
// 'UTC', with now() at the test's clock, 2026-12-06 22:22:00+00: the decade starts
// 2020-01-01, 19 years before is 2001-01-01; 2001-03-31 less a month is 2001-02-28); NOT is
// pushed through the comparisons, OR and AND under it (De Morgan).
func TestExpressionBoundsRoute(t *testing.T) {
	t.Parallel()
	cat := testCatalog(t)
	opts := BindOptions{Now: time.Date(2026, 12, 6, 22, 22, 0, 0, time.UTC)}
	const P = `SELECT count(*) FROM messages WHERE channel_id = 'general' AND `
	day := func(s string) time.Time {
		v, err := time.Parse("2006-01-02 15:04", s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, c := range []struct {
		where  string
		ranges []string // start and end of each range, "2006-01-02 15:04"
	}{
		{`timestamp >= date_trunc('decade', now()) - interval '19 years' AND timestamp < date_trunc('decade', now()) - interval '19 years' + interval '10 days'`,
			[]string{"2001-01-01 00:00", "2001-01-11 00:00"}},
		{`timestamp >= (date_trunc('year', current_date) - interval '25 years')::date AND timestamp < (date_trunc('year', current_date) - interval '25 years')::date + 5`,
			[]string{"2001-01-01 00:00", "2001-01-06 00:00"}},
		{`((timestamp >= date_trunc('year', now()) - interval '25 years' AND timestamp < date_trunc('year', now()) - interval '25 years' + interval '3 days') OR
		   (timestamp >= date_trunc('year', current_date) - interval '300 months' + interval '10 days' AND timestamp < date_trunc('year', current_date) - interval '300 months' + interval '12 days'))`,
			[]string{"2001-01-01 00:00", "2001-01-04 00:00", "2001-01-11 00:00", "2001-01-13 00:00"}},
		{`timestamp >= date_bin('6 hours', now(), timestamptz '2001-01-01 00:00+00') AND timestamp < date_bin('6 hours', now(), timestamptz '2001-01-01 00:00+00') + make_interval(hours => 6)`,
			[]string{"2026-12-06 18:00", "2026-12-07 00:00"}},
		{`timestamp >= timestamptz '2001-03-31 00:00+00' - make_interval(months => 1) AND timestamp < localtimestamp - (localtimestamp - timestamp '2001-03-31 12:00')`,
			[]string{"2001-02-28 00:00", "2001-03-31 12:00"}},
		{`timestamp >= date_trunc('week', timestamp '2001-04-04 10:00')::date AND timestamp < date_trunc('month', timestamp '2001-04-04 10:00' + interval '1 month')`,
			[]string{"2001-04-02 00:00", "2001-05-01 00:00"}},
		// De Morgan.
		{`NOT (timestamp < '2001-04-01' OR timestamp >= '2001-04-02')`, []string{"2001-04-01 00:00", "2001-04-02 00:00"}},
		{`NOT (timestamp < '2001-04-01' OR NOT (timestamp < '2001-04-02'))`, []string{"2001-04-01 00:00", "2001-04-02 00:00"}},
		{`NOT (timestamp < '2001-04-01' OR timestamp >= '2001-04-02' OR value->>'x' = 'y')`, []string{"2001-04-01 00:00", "2001-04-02 00:00"}},
		{`NOT ((timestamp < '2001-04-01' OR timestamp >= '2001-04-02') AND (timestamp < '2001-05-01' OR timestamp >= '2001-05-02'))`,
			[]string{"2001-04-01 00:00", "2001-04-02 00:00", "2001-05-01 00:00", "2001-05-02 00:00"}},
	} {
		s, err := PrepareWith(P+c.where, cat, opts)
		if err != nil {
			t.Errorf("%s: prepare: %v", c.where, err)
			continue
		}
		b, err := s.BindGeneral(opts)
		if err != nil {
			t.Errorf("%s: bind: %v", c.where, err)
			continue
		}
		routes, err := Routes(b.Plan, cat, false)
		if err != nil || len(routes) != 1 {
			t.Errorf("%s: %d routes: %v", c.where, len(routes), err)
			continue
		}
		for _, r := range routes {
			pieces := r.Pieces()
			if len(pieces)*2 != len(c.ranges) {
				t.Errorf("%s: ranges %v, want %q", c.where, pieces, c.ranges)
				continue
			}
			for i, p := range pieces {
				if !p.Start.Equal(day(c.ranges[2*i])) || !p.End.Equal(day(c.ranges[2*i+1])) {
					t.Errorf("%s: ranges %v, want %q", c.where, pieces, c.ranges)
				}
			}
		}
	}
}

// TestExpressionBoundParameters: a bound that is an expression of parameters counts as a
// bound while the statement is prepared and is folded when its values are bound.
func TestExpressionBoundParameters(t *testing.T) {
	t.Parallel()
	cat := testCatalog(t)
	s, err := Prepare(`SELECT count(*) FROM messages WHERE channel_id = $1 AND timestamp >= $2::timestamptz - $3::interval AND timestamp < $4`, cat)
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.Bind("general", "2001-04-10", "1 mon 3 days", "2001-04-11")
	if err != nil {
		t.Fatal(err)
	}
	routes, err := Routes(p, cat, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range routes {
		if want := time.Date(2001, 3, 7, 0, 0, 0, 0, time.UTC); !r.Range.Start.Equal(want) || !r.Range.End.Equal(time.Date(2001, 4, 11, 0, 0, 0, 0, time.UTC)) {
			t.Errorf("route %v, want [%v, 2001-04-11)", r.Range, want)
		}
	}
}

// TestUnboundedExpressionsRefused: what has no finite range stays refused as missing (NOT
// BETWEEN and NOT (a AND b) are unions of half-lines; a NULL bound bounds nothing), and a
// bound whose evaluation fails is refused with its data exception, PostgreSQL's 22008 (here
// past the nanosecond range, docs/sql.md).
func TestUnboundedExpressionsRefused(t *testing.T) {
	t.Parallel()
	cat := testCatalog(t)
	const P = `SELECT count(*) FROM messages WHERE channel_id = 'general' AND `
	for where, want := range map[string]string{
		`timestamp NOT BETWEEN '2001-04-01' AND '2001-04-02'`:                                      "messages needs timestamp >= <start> AND timestamp < <end>",
		`NOT (timestamp >= '2001-04-01' AND timestamp < '2001-04-02')`:                             "messages needs timestamp >= <start> AND timestamp < <end>",
		`timestamp >= now() + interval '1000 years' AND timestamp < now() + interval '1001 years'`: "timestamp out of range",
	} {
		_, err := Prepare(P+where, cat)
		if e, ok := err.(*Error); !ok || e.Code != InvalidArgument || e.Msg != want {
			t.Errorf("%s: %v, want InvalidArgument %q", where, err, want)
		}
	}
	// A bound whose value is NULL passes no row, as in PostgreSQL: an empty read.
	const nullBound = `timestamp >= NULL::timestamptz + interval '1 day' AND timestamp < '2001-01-01'`
	if s, err := Prepare(P+nullBound, cat); err != nil {
		t.Errorf("%s: %v", nullBound, err)
	} else if b, err := s.BindGeneral(BindOptions{}); err != nil || len(b.Routes) != 1 || !b.Routes[0].Empty {
		t.Errorf("%s: %+v %v, want an empty route", nullBound, b, err)
	}
}

// TestClientPlanNegatedBounds: a client plan's NOT (timestamp < X OR timestamp >= Y) is the
// range [X, Y), as the SQL binder reads it.
func TestClientPlanNegatedBounds(t *testing.T) {
	t.Parallel()
	cat := testCatalog(t)
	c := newClientPlan("messages", substraitTSType)
	cond := c.fn(t, URNBoolean, "and",
		c.fn(t, URNComparison, "equal", c.ref(c.read, 0), expr.NewPrimitiveLiteral("general", false)),
		c.fn(t, URNBoolean, "not", c.fn(t, URNBoolean, "or",
			c.fn(t, URNComparison, "lt", c.ref(c.read, 1), timestampLiteral(jan1.UnixNano())),
			c.fn(t, URNComparison, "gte", c.ref(c.read, 1), timestampLiteral(feb1.UnixNano())))))
	filter := must(c.b.Filter(c.read, cond))
	p := must(c.b.Plan(filter, []string{"channel_id", "timestamp", "id", "value"}))
	r, _, err := clientRoute(t, cat, p)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Range.Start.Equal(jan1) || !r.Range.End.Equal(feb1) {
		t.Errorf("route %v, want [%v, %v)", r.Range, jan1, feb1)
	}
}

// TestNothingReadRoutes: a read under a constant false or NULL WHERE conjunct, or in a
// SELECT whose LIMIT is 0, reads no bucket (an Empty route) whether or not it pins a
// partition and a range — the schema probes of Metabase, DBeaver and drivers; a constant
// true does not excuse a missing route.
func TestNothingReadRoutes(t *testing.T) {
	t.Parallel()
	cat := testCatalog(t)
	for _, q := range []string{
		`SELECT true AS "_" FROM messages WHERE 1 <> 1 LIMIT 0`,
		`SELECT * FROM messages LIMIT 0`,
		`SELECT * FROM messages WHERE false`,
		`SELECT count(*) FROM messages WHERE NULL`,
		`SELECT * FROM messages WHERE channel_id = 'general' AND 2 < 1`,
		`SELECT * FROM messages WHERE channel_id = 'general' AND timestamp >= '2026-01-01' AND timestamp < '2026-02-01' LIMIT 0`,
		`SELECT * FROM (SELECT * FROM messages LIMIT 0) t`,
		`SELECT id FROM messages UNION SELECT id FROM messages LIMIT 0`,
		`SELECT id FROM messages FETCH FIRST 0 ROWS ONLY`,
	} {
		s, err := Prepare(q, cat)
		if err != nil {
			t.Errorf("%s: prepare: %v", q, err)
			continue
		}
		p, err := s.Bind()
		if err != nil {
			t.Errorf("%s: bind: %v", q, err)
			continue
		}
		routes, err := Routes(p, cat, false)
		if err != nil || len(routes) == 0 {
			t.Errorf("%s: routes %v, %v", q, routes, err)
		}
		for _, r := range routes {
			if !r.Empty || len(r.Buckets()) != 0 {
				t.Errorf("%s: route %+v, want Empty", q, r)
			}
		}
	}
	for _, q := range []string{
		`SELECT * FROM messages WHERE 1 = 1`,
		`SELECT * FROM messages LIMIT 1`,
		`SELECT * FROM messages WHERE 1 / 0 = 1`,
	} {
		if _, err := Prepare(q, cat); err == nil || !strings.Contains(err.Error(), "messages needs channel_id") {
			t.Errorf("%s: %v, want the missing route named", q, err)
		}
	}
}

// TestOrOfPinnedRangesRoutes: an OR whose every disjunct pins the partition and bounds the
// time routes to the union of its pins and of its ranges (the OR stays a residual filter);
// a disjunct without a pin leaves the read without one.
func TestOrOfPinnedRangesRoutes(t *testing.T) {
	t.Parallel()
	cat := testCatalog(t)
	day := func(d int) time.Time { return time.Date(2026, 1, d, 0, 0, 0, 0, time.UTC) }
	for _, c := range []struct {
		where      string
		parts      []string
		start, end time.Time
	}{
		{`(channel_id = 'a' AND timestamp >= '2026-01-02' AND timestamp < '2026-01-03') OR (channel_id = 'b' AND timestamp >= '2026-01-05' AND timestamp < '2026-01-06')`,
			[]string{"a", "b"}, day(2), day(6)},
		{`((channel_id = 'a' OR channel_id = 'c') AND id = 'x') OR (channel_id IN ('b', 'c') AND id = 'y')`,
			[]string{"a", "b", "c"}, day(1), day(9)},
		{`channel_id <> 'z' AND ((channel_id = 'a' AND id = 'x') OR (channel_id = 'a' AND channel_id = 'b'))`,
			[]string{"a"}, day(1), day(9)},
	} {
		q := `SELECT id FROM messages WHERE (` + c.where + `)`
		if !strings.Contains(c.where, "timestamp") {
			q += ` AND timestamp >= '2026-01-01' AND timestamp < '2026-01-09'`
		}
		s, err := Prepare(q, cat)
		if err != nil {
			t.Errorf("%s: prepare: %v", c.where, err)
			continue
		}
		p, err := s.Bind()
		if err != nil {
			t.Fatal(err)
		}
		routes, err := Routes(p, cat, false)
		if err != nil {
			t.Fatalf("%s: %v", c.where, err)
		}
		for _, r := range routes {
			var got []string
			for _, p := range r.Partitions {
				got = append(got, string(p))
			}
			if !slices.Equal(got, c.parts) || !r.Range.Start.Equal(c.start) || !r.Range.End.Equal(c.end) {
				t.Errorf("%s: route %v %v, want %v [%v, %v)", c.where, got, r.Range, c.parts, c.start, c.end)
			}
		}
	}
	_, err := Prepare(`SELECT id FROM messages WHERE (channel_id = 'a' AND timestamp >= '2026-01-02' AND timestamp < '2026-01-03') OR (timestamp >= '2026-01-05' AND timestamp < '2026-01-06')`, cat)
	if err == nil || !strings.Contains(err.Error(), "messages needs channel_id = <value>") {
		t.Errorf("a disjunct without a pin: %v", err)
	}
}
