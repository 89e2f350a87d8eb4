package e2e

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestTrial26ErrorsAsPostgres: what issue 18's trial26 found refused or answered with the
// wrong error is answered, or refused with PostgreSQL 15's SQLSTATE and message, over the
// same rows: the regionless IANA zones (EST5EDT…) and POSIX TZ offsets as zone names,
// interval field qualifiers, DateStyle ISO, MDY date/time text and zone names in it,
// substring and position of bytea, * over two columns named alike; PostgreSQL 16's numeric
// literals (42601), text functions of other types (42883), date + unknown (42725), FROM items
// named twice (42712), window functions without OVER (42809), digits alone as a date (22008).
func TestTrial26ErrorsAsPostgres(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	pg := pgUTC(t, ctx, e.url)
	from, to := time.Date(2001, 3, 25, 0, 0, 0, 0, time.UTC), time.Date(2001, 4, 5, 0, 0, 0, 0, time.UTC)
	pgFlights(t, ctx, pg, e.sample, []string{"ORD"}, from, to)
	on, off := dial(t, e.on), dial(t, e.off)
	both := map[string]*flightsql.Client{"pushdown on": on, "pushdown off": off}
	const ord = " FROM flights o WHERE o.origin = 'ORD' AND o.timestamp >= '2001-03-31' AND o.timestamp < '2001-04-02'"
	n := comparePG(t, ctx, pg, both, nonEmptyTyped(
		"SELECT timestamptz '2001-07-01 10:00+00' AT TIME ZONE 'EST5EDT' AS a, timestamptz '2001-01-01 10:00+00' AT TIME ZONE 'pst8pdt' AS b, "+
			"timezone('CST6CDT', timestamptz '2001-07-01 10:00+00') AS c, timestamp '2001-07-01 10:00' AT TIME ZONE 'MST7MDT' AS d, "+
			"timestamptz '2001-07-01 10:00+00' AT TIME ZONE 'ABC-5:30' AS e, timestamptz '2001-07-01 10:00+00' AT TIME ZONE 'EST5' AS f, "+
			"timestamptz '2001-07-01 10:00+00' AT TIME ZONE '5' AS g",
		"SELECT o.id, o.timestamp AT TIME ZONE 'EST5EDT' AS a, date_trunc('day', o.timestamp, 'PST8PDT') AS b"+ord+" ORDER BY o.id",
		// SQL-standard interval qualifiers and interval(p).
		"SELECT interval '1' day a, interval '2' hour b, INTERVAL '1-2' YEAR TO MONTH c, interval '1:30' hour to minute d, "+
			"interval '1 day 2 hours 3 minutes' hour e, interval '1 day 2:03:04.5678' minute to second f, interval '1:30' minute to second g, "+
			"interval '1.5' day h, interval '3 years 5 months' year i, interval '-1 day -2:03:04' day to hour j, interval '1.23456' second(2) k, "+
			"'1.5 seconds'::interval(0) l, cast('1 2' as interval day to hour) m, interval '7' month n, interval '-1.5' minute o, "+
			"interval '1:2:3.456789' hour to second(3) p, CAST(NULL AS interval day) q, interval '2' year r, interval(3) '1.23456' s, interval '1:60' minute to second u",
		"SELECT * FROM (SELECT 1, 2) t(a, a)",
		// substring and position of bytea.
		`SELECT substring('\x0102030405'::bytea from 2 for 2)::text a, position('\x02'::bytea in '\x010203'::bytea) b, substring('\x0102030405'::bytea from 4)::text c, `+
			`substr('\x0102'::bytea, -1, 3)::text d, position('\x'::bytea in '\x01'::bytea) e, position('\x09'::bytea in '\x01'::bytea) f, substring('\x0102'::bytea from 5 for 1)::text g, md5('\x0102'::bytea) h`,
		"SELECT o.id, substring(('x' || o.id)::bytea from 2 for 3)::text AS a, position('1'::bytea in o.id::bytea) AS b"+ord+" ORDER BY o.id",
		// DateStyle ISO, MDY date/time input forms and zone names in timestamptz text.
		"SELECT '2001-4-1'::date a, '04/01/2001'::date b, '2001-04-01 10:00'::date c, 'April 1, 2001'::date d, 'Apr 1 2001'::date e, "+
			"'2001-04-01 10:00+05'::date f, '2001-04-01T10:00'::date g, '1 April 2001'::date h, '4/1/2001 10:00'::date i, DATE '20010401' j, '010401'::date k",
		"SELECT '2001-04-01 10:00 America/Chicago'::timestamptz a, '2001-04-01 10:00 EST'::timestamptz b, '2001-04-01 10:00+5'::timestamptz c, "+
			"'2001-04-01 10:00 EST5EDT'::timestamptz d, '2001-07-01 10:00 America/Chicago'::timestamptz e, '2001-04-01 10:00:00 -3'::timestamptz f, "+
			"'2001-04-01 10:00 est'::timestamptz g, '2001-04-01 10:00 america/chicago'::timestamp h, '2001-4-1 10:00'::timestamp i, '04/01/2001 10:00'::timestamptz j, "+
			"'2001-04-01 10:00+05:30:15'::timestamptz k",
		"SELECT count(*) FROM flights o WHERE o.origin = 'ORD' AND o.timestamp >= 'March 31, 2001' AND o.timestamp < '2001-04-01 19:00 America/Chicago'",
		"SELECT o.id, ('04/01/2001 ' || to_char(o.timestamp, 'HH24:MI') || ' America/Chicago')::timestamptz AS a"+ord+" ORDER BY o.id",
		"SELECT t.* FROM (SELECT 1, 2, 3) t(a, a), (SELECT 4) f, LATERAL (SELECT 5 FROM (SELECT 6) f) g",
		"SELECT o.id, o.timestamp + interval '1' day AS a, o.timestamp - interval '90' minute AS b, date_bin(interval '15' minute, o.timestamp, '2001-01-01') AS c"+ord+" ORDER BY o.id",
	)...)
	t.Logf("%d rows equal to PostgreSQL's", n)

	// PostgreSQL 16's numeric literals are PostgreSQL 15's syntax errors (the message is
	// PostgreSQL's, then the position).
	for _, q := range []string{"SELECT 0x10", "SELECT 1_000", "SELECT 0b101", "SELECT 0o17", "SELECT 1_000.5",
		"SELECT count(*)" + ord + " AND (o.value->>'distance')::int > 1_000"} {
		syntaxErrorAsPostgres(t, ctx, on, pg, q)
	}
	allRefusedWithState(t, ctx, on, pg, "22015", "SELECT interval '90:30' minute to second")
	// No type casts to text implicitly (42883); a window function needs OVER (42809).
	allRefusedWithState(t, ctx, on, pg, "42883", "SELECT length(1)", "SELECT to_char(now(), 1)", "SELECT upper(o.id::int)"+ord, "SELECT replace(1, 'a', 'b')",
		"SELECT trim(1)", "SELECT trim(leading 'a' from 1)", "SELECT substring(1 from 2)", "SELECT md5(1)", "SELECT overlay(1 placing 'a' from 1)",
		"SELECT position(1 in 'a')", "SELECT starts_with(1, 'a')", "SELECT lpad(1, 3, 'x')", "SELECT format(1)")
	allRefusedWithState(t, ctx, on, pg, "42809", "SELECT lag(o.id)"+ord, "SELECT row_number()"+ord, "SELECT ntile(2)")
	allRefusedWithState(t, ctx, on, pg, "42725", "SELECT date '2001-04-01' + '1 day'", "SELECT '2001-04-01'::date + '1'", "SELECT '1' + date '2001-04-01'",
		"SELECT o.timestamp::date + NULL"+ord)
	allRefusedWithState(t, ctx, on, pg, "42712", "SELECT 1 FROM flights f, flights f", "SELECT 1 FROM (SELECT 1) f JOIN (SELECT 2) f ON true",
		"SELECT 1 FROM (SELECT 1) f JOIN (SELECT 2) g ON true, (SELECT 3) g")
	allRefusedWithState(t, ctx, on, pg, "42702", "SELECT a FROM (SELECT 1, 1) t(a, a)")
	// Digits alone as a date: PostgreSQL's DecodeNumberField, per row too.
	allRefusedWithState(t, ctx, on, pg, "22008", "SELECT lpad(o.id::text, 10, '0')::date"+ord, "SELECT '0001478110'::date")
	allRefusedWithState(t, ctx, on, pg, "22007", "SELECT '12345'::date")
	// A type modifier flightsrv does not implement is refused naming the type.
	refusedAs(t, ctx, on, codes.Unimplemented, map[string]string{
		"SELECT ('x' || 'ff')::bit(64)::bigint": "cast to bit(64) is not supported",
	})
}

// syntaxErrorAsPostgres: q is PostgreSQL's syntax error (42601) and flightsrv's, whose message
// is PostgreSQL's followed by the position.
func syntaxErrorAsPostgres(t *testing.T, ctx context.Context, cl *flightsql.Client, pg *pgx.Conn, q string) {
	t.Helper()
	var pgErr *pgconn.PgError
	if _, err := pgTextRowsErr(ctx, pg, q); !errors.As(err, &pgErr) || pgErr.Code != "42601" {
		t.Fatalf("PostgreSQL %s: %v, want 42601", q, err)
	}
	want := fmt.Sprintf("%s (position %d)", pgErr.Message, pgErr.Position)
	if _, err := run(ctx, cl, q); status.Code(err) != codes.InvalidArgument || sqlstateOf(err) != "42601" || status.Convert(err).Message() != want {
		t.Errorf("%s: %v (SQLSTATE %q), want INVALID_ARGUMENT 42601 %q", q, err, sqlstateOf(err), want)
	}
}
