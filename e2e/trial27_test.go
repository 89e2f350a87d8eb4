package e2e

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
)

// TestUnknownBesideIntervalAsPostgres: an untyped literal beside an interval is read as an
// interval, as PostgreSQL resolves the operator (trial27: '2001-04-01' + interval '1 day' was
// read as a timestamp and answered, and a bound written so routed a read, where PostgreSQL
// raises 22007).
func TestUnknownBesideIntervalAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	for _, cl := range clients {
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText,
			`SELECT ('1 hour' + interval '1 day')::text, (interval '1 day' - '2 hours')::text, ('1 mon' - interval '1 day')::text, (timestamp '2001-01-31' + interval '1 month')::text`,
			"SELECT count(*)"+json18Where+" AND timestamp < timestamp '2001-04-01' + interval '1 day'")...)
		for _, q := range []string{
			`SELECT '2001-04-01' + interval '1 day'`,
			`SELECT interval '1 day' + '2001-04-01'`,
			`SELECT '2001-04-01 12:00' - interval '1 hour'`,
			"SELECT count(*)" + json18Where + " AND timestamp < '2001-04-01' + interval '1 day'",
		} {
			refusedWithState(t, ctx, cl.c, pg, q, "22007")
		}
	}
}

// TestTrial27ErrorsAsPostgres: errors trial27 found without PostgreSQL's SQLSTATE.
func TestTrial27ErrorsAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	for _, cl := range clients {
		for q, state := range map[string]string{
			`SELECT justify_hours('1 day'::text)`:    "42883",
			`SELECT justify_days(1)`:                 "42883",
			`SELECT justify_interval(now())`:         "42883",
			`SELECT justify_hours('25 hours')::text`: "",
		} {
			if state == "" {
				comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText, q)...)
				continue
			}
			refusedWithState(t, ctx, cl.c, pg, q, state)
		}
	}
}

// TestDomainOfJSONAsPostgres: a correlated subquery decorrelated over its domain whose outer
// reference is the json value column (trial27: 42883 "could not identify an equality operator
// for type json" for a LATERAL subquery correlated on f.value->>'destination', and a set-
// returning function of the outer row's value): the domain groups the outer values bytewise,
// as each outer row's own value.
func TestDomainOfJSONAsPostgres(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	pg := pgUTC(t, ctx, e.url)
	pgFlights(t, ctx, pg, e.sample, loadedAirports, time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2002, 1, 1, 0, 0, 0, 0, time.UTC))
	const sfo = " g.origin = 'SFO' AND g.timestamp >= '2001-03-31 12:00' AND g.timestamp < '2001-04-01 18:00'"
	for _, cl := range jsonDeclaredClients(t, ctx, e) {
		comparePG(t, ctx, pg, one(cl), sameSQL(pgText,
			"SELECT count(*)"+json18Where+" AND EXISTS (SELECT 1 FROM jsonb_object_keys(value::jsonb) k WHERE k = 'delay')",
			"SELECT id, (SELECT count(*) FROM json_object_keys(value) k WHERE k LIKE 'd%')"+json18Where+" ORDER BY timestamp, id LIMIT 5",
			"SELECT f.id, s.n FROM flights f JOIN LATERAL (SELECT count(*) n FROM flights g WHERE"+sfo+" AND g.value->>'destination' = f.value->>'destination' AND g.timestamp > f.timestamp) s ON true"+
				" WHERE f.origin = 'ORD' AND f.timestamp >= '2001-03-31 12:00' AND f.timestamp < '2001-04-01 18:00' ORDER BY f.timestamp, f.id LIMIT 8",
		)...)
	}
}

// TestNonAdvancingSeries: a timestamp generate_series whose step stops advancing repeats its
// value, as PostgreSQL's does, until a LIMIT stops it (trial27: the constant series stopped
// silently at the repeated value). PostgreSQL cannot be asked: its function scan materialises
// the series before the LIMIT and never ends (it filled the disk with its temporary file), so
// the rows are its semantics computed by hand: the months are added, the day clamped to the
// month's end, then the days (timestamp_pl_interval).
func TestNonAdvancingSeries(t *testing.T) {
	e := newEnv(t)
	cl := dial(t, e.on)
	for q, want := range map[string][]string{
		`SELECT x::text FROM generate_series(timestamp '2001-01-01', timestamp '2001-01-01 01:00', interval '-1 mon 31 days') x LIMIT 4`: {
			"2001-01-01 00:00:00", "2001-01-01 00:00:00", "2001-01-01 00:00:00", "2001-01-01 00:00:00"},
		`SELECT x::text FROM generate_series(timestamp '2001-01-29', timestamp '2001-03-01', interval '1 mon -29 days') x LIMIT 4`: {
			"2001-01-29 00:00:00", "2001-01-30 00:00:00", "2001-01-30 00:00:00", "2001-01-30 00:00:00"},
		`SELECT x::text FROM generate_series(timestamptz '2001-01-31 00:00+00', timestamptz '2001-03-01 00:00+00', interval '1 mon -29 days') x LIMIT 3`: {
			"2001-01-31 00:00:00+00", "2001-01-30 00:00:00+00", "2001-01-30 00:00:00+00"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		res, err := run(ctx, cl, q)
		cancel()
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		var got []string
		for _, rec := range res.recs {
			col := rec.Column(0).(*array.String)
			for i := range col.Len() {
				got = append(got, col.Value(i))
			}
		}
		res.release()
		if !slices.Equal(got, want) {
			t.Errorf("%s: %q, want %q", q, got, want)
		}
	}
}
