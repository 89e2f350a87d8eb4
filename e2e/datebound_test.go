package e2e

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestDateBounds: a date compared with the timestamp column (DATE '…', '…'::date, CAST(… AS
// date), on either side of <, >=, BETWEEN) is converted to timestamp with time zone at
// midnight UTC, as PostgreSQL does in a UTC session, and serves as the routed bound: each
// query counts what PostgreSQL counts over the same rows (the sample's ORD and BOS flights in
// a temporary table) and what the same bounds written as timestamptz count, with pushdown on
// and off.
func TestDateBounds(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	conn := pgUTC(t, ctx, e.url)
	if _, err := conn.Exec(ctx, `CREATE TEMPORARY TABLE flights (origin text NOT NULL, "timestamp" timestamptz NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	var rows [][]any
	for _, f := range e.sample {
		if f.origin == "ORD" || f.origin == "BOS" {
			rows = append(rows, []any{f.origin, f.at})
		}
	}
	if n, err := conn.CopyFrom(ctx, pgx.Identifier{"flights"}, []string{"origin", "timestamp"}, pgx.CopyFromRows(rows)); err != nil || n != int64(len(rows)) {
		t.Fatalf("copy %d of %d rows: %v", n, len(rows), err)
	}
	pgCount := func(where string) int64 {
		t.Helper()
		var n int64
		if err := conn.QueryRow(ctx, "SELECT count(*) FROM flights WHERE "+where).Scan(&n); err != nil {
			t.Fatalf("PostgreSQL, %s: %v", where, err)
		}
		return n
	}
	on, off := dial(t, e.on), dial(t, e.off)
	for _, c := range []struct{ date, tstz string }{
		// Archived (JSON, Parquet), archiving and hot buckets.
		{`timestamp >= DATE '2001-01-15' AND timestamp < DATE '2001-05-20'`,
			`timestamp >= TIMESTAMPTZ '2001-01-15T00:00:00Z' AND timestamp < TIMESTAMPTZ '2001-05-20T00:00:00Z'`},
		{`timestamp >= '2001-03-01'::date AND timestamp < '2001-04-15'::date`,
			`timestamp >= '2001-03-01T00:00:00Z' AND timestamp < '2001-04-15T00:00:00Z'`},
		{`timestamp >= CAST('2001-02-10' AS date) AND timestamp < CAST('2001-06-01' AS date)`,
			`timestamp >= '2001-02-10T00:00:00Z' AND timestamp < '2001-06-01T00:00:00Z'`},
		{`DATE '2001-04-02' <= timestamp AND DATE '2001-04-09' > timestamp`,
			`'2001-04-02T00:00:00Z' <= timestamp AND '2001-04-09T00:00:00Z' > timestamp`},
		{`timestamp > DATE '2001-03-31' AND timestamp <= DATE '2001-04-30'`,
			`timestamp > '2001-03-31T00:00:00Z' AND timestamp <= '2001-04-30T00:00:00Z'`},
		{`timestamp BETWEEN DATE '2001-01-01' AND DATE '2001-03-31'`,
			`timestamp BETWEEN '2001-01-01T00:00:00Z' AND '2001-03-31T00:00:00Z'`},
		// A date expression over the column (not a bound): cast at run time, midnight UTC.
		{`timestamp >= DATE '2001-03-01' AND timestamp < DATE '2001-05-01' AND timestamp < (timestamp + INTERVAL '12 hours')::date`,
			`timestamp >= '2001-03-01T00:00:00Z' AND timestamp < '2001-05-01T00:00:00Z' AND timestamp < (timestamp + INTERVAL '12 hours')::date`},
	} {
		for _, origin := range []string{"ORD", "BOS"} {
			pin := "origin = '" + origin + "' AND "
			want := pgCount(pin + c.date)
			if ts := pgCount(pin + c.tstz); ts != want || want == 0 {
				t.Fatalf("PostgreSQL counts %d with dates, %d with timestamps: %s", want, ts, c.date)
			}
			for _, cl := range []struct {
				name string
				q    string
			}{{"date", c.date}, {"timestamptz", c.tstz}} {
				got := scalarCount(t, mustRun(t, on, "SELECT count(*) FROM flights WHERE "+pin+cl.q))
				gotOff := scalarCount(t, mustRun(t, off, "SELECT count(*) FROM flights WHERE "+pin+cl.q))
				if got != want || gotOff != want {
					t.Errorf("%s, %s bounds: %d (pushdown on), %d (off); PostgreSQL %d: %s", origin, cl.name, got, gotOff, want, cl.q)
				}
			}
		}
	}
}

// pgUTC connects to the test's PostgreSQL in a UTC session (the session zone flightsrv's SQL
// assumes), for tests that take expected values from PostgreSQL itself. The connection is
// closed when the test ends.
func pgUTC(t *testing.T, ctx context.Context, url string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	if _, err := conn.Exec(ctx, "SET TimeZone = 'UTC'"); err != nil {
		t.Fatal(err)
	}
	return conn
}
