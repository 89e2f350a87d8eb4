package e2e

import "testing"

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
