package e2e

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"google.golang.org/grpc/codes"
)

// TestLocalTimestampAsPostgres: LOCALTIMESTAMP is a timestamp without time zone (the
// statement's instant as a UTC wall clock): its text has no offset, its zone conversions go
// PostgreSQL's way, it equals now()::timestamp in the same statement; CURRENT_TIMESTAMP(p) and
// LOCALTIMESTAMP(p) round the instant to p fractional digits (half up: CURRENT_TIMESTAMP(0) is
// date_trunc('second', now() + 0.5 s)), one value per statement. The instant differs between
// the two servers' runs, so the queries compare what does not depend on it: types through
// text, lengths, equalities within one statement, zone differences. LOCALTIME is that
// instant's time of day; CURRENT_TIME (time with time zone) is refused by name.
func TestLocalTimestampAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	qs := []string{
		"SELECT localtimestamp::text NOT LIKE '%+%', localtimestamp::text = now()::timestamp::text, localtimestamp = now()::timestamp, " +
			"(localtimestamp + interval '1 day')::text = (now() + interval '1 day')::timestamp::text, date_trunc('day', localtimestamp)::text = current_date::text || ' 00:00:00', " +
			"greatest(localtimestamp, timestamp '2001-01-01')::text = localtimestamp::text, (CASE WHEN true THEN localtimestamp ELSE timestamp '2001-01-01' END)::text = now()::timestamp::text",
		"SELECT ((localtimestamp AT TIME ZONE 'America/New_York') - now())::text, (timezone('Asia/Tokyo', localtimestamp) - now())::text, " +
			"to_char(localtimestamp AT TIME ZONE 'Asia/Tokyo', 'HH24') = to_char(now() AT TIME ZONE 'Asia/Tokyo', 'HH24'), localtimestamp AT TIME ZONE 'UTC' = now()",
		"SELECT length(current_timestamp(0)::text), length(localtimestamp(0)::text), date_trunc('second', current_timestamp(0)) = current_timestamp(0), " +
			"date_trunc('second', localtimestamp(0)) = localtimestamp(0), current_timestamp(0) = date_trunc('second', now() + interval '0.5 s'), " +
			"localtimestamp(0) = date_trunc('second', localtimestamp + interval '0.5 s'), localtimestamp(0)::text = to_char(localtimestamp(0), 'YYYY-MM-DD HH24:MI:SS'), " +
			"current_timestamp(0)::text = to_char(current_timestamp(0), 'YYYY-MM-DD HH24:MI:SS') || '+00'",
		"SELECT to_char(current_timestamp(3), 'US') LIKE '%000', current_timestamp(3) - now() > interval '-500 microseconds', current_timestamp(3) - now() <= interval '500 microseconds', " +
			"to_char(localtimestamp(2), 'US') LIKE '%0000', localtimestamp(2) - localtimestamp <= interval '5 ms', localtimestamp(2) - localtimestamp > interval '-5 ms', current_timestamp(6) = now(), localtimestamp(6) = localtimestamp, " +
			"current_timestamp(2) = current_timestamp(2), localtimestamp(1) = current_timestamp(1)::timestamp, current_timestamp(4) BETWEEN now() - interval '50 microseconds' AND now() + interval '50 microseconds'",
		"SELECT id, localtimestamp = now()::timestamp, localtimestamp::text NOT LIKE '%+%', length(localtimestamp(0)::text), date_trunc('second', current_timestamp(0)) = current_timestamp(0)" + fn18Where + " ORDER BY id",
		"SELECT count(*) FROM flights WHERE origin = 'BOS' AND timestamp >= localtimestamp(0) - interval '30 years' AND timestamp < localtimestamp(2)",
		// LOCALTIME: the same instant's time of day (time18).
		"SELECT localtime = now()::time, localtime::text = localtimestamp::time::text, current_date + localtime = localtimestamp, localtime = localtimestamp::time, length(localtime(0)::text)",
	}
	for _, cl := range clients {
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText, qs...)...)
		// The columns' types: timestamp without time zone is Arrow's timestamp with no zone.
		res := mustRun(t, cl.c, "SELECT localtimestamp, localtimestamp(0), current_timestamp(0)")
		for i, zone := range []string{"", "", "UTC"} {
			if ts, ok := res.infoSchema.Field(i).Type.(*arrow.TimestampType); !ok || ts.TimeZone != zone {
				t.Errorf("column %d: %s, want a timestamp with zone %q", i, res.infoSchema.Field(i).Type, zone)
			}
		}
		refusedAs(t, ctx, cl.c, codes.Unimplemented, map[string]string{
			"SELECT current_time":                              "current_time (time with time zone) is not supported",
			"SELECT (current_date + current_time) IS NOT NULL": "current_time (time with time zone) is not supported",
		})
	}
}

// TestNameCastAsPostgres: a cast to name keeps NAMEDATALEN - 1 = 63 bytes, cut at a character
// boundary (PostgreSQL's namein), of constants and of text computed per row.
func TestNameCastAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	qs := []string{
		"SELECT repeat('a', 70)::name = repeat('a', 63), length(repeat('a', 70)::name::text), length(repeat('é', 40)::name::text), octet_length(repeat('é', 40)::name::text), " +
			"length(('a' || repeat('é', 40))::name::text), 'abc'::name::text, ''::name::text, NULL::name IS NULL, repeat('b', 63)::name::text = repeat('b', 63), CAST(repeat('€', 30) AS name)::text",
		"SELECT id, repeat(id, 7)::name::text, length((repeat('é', 3) || repeat(id, 7))::name::text)" + fn18Where + " ORDER BY id",
	}
	for _, cl := range clients {
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText, qs...)...)
	}
}

// TestNonIntegerConstantKeysAsPostgres: a constant other than an integer (text, a decimal, a
// boolean, NULL) in GROUP BY, ORDER BY or DISTINCT ON is PostgreSQL's 42601 "non-integer
// constant in …" (an integer is a position of the select list); a cast constant is an
// expression there and answers, as a window's ORDER BY 'x' does.
func TestNonIntegerConstantKeysAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	for _, cl := range clients {
		for _, q := range []string{
			"SELECT 'x' AS c, count(*)" + fn18Where + " GROUP BY 'x'",
			"SELECT count(*)" + fn18Where + " GROUP BY 1.5",
			"SELECT count(*)" + fn18Where + " GROUP BY ROLLUP (true)",
			"SELECT count(*)" + fn18Where + " ORDER BY 'x'",
			"SELECT id" + fn18Where + " ORDER BY NULL",
			"SELECT DISTINCT ON ('x') id" + fn18Where,
			"SELECT 1 UNION SELECT 2 ORDER BY 'x'",
		} {
			refusedAsPostgres(t, ctx, cl.c, pg, q, "42601")
			if _, err := run(ctx, cl.c, q); sqlstateOf(err) != "42601" {
				t.Errorf("%s: SQLSTATE %q, want 42601", q, sqlstateOf(err))
			}
		}
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText,
			"SELECT 'x'::text AS c, count(*)"+fn18Where+" GROUP BY 'x'::text",
			"SELECT id, row_number() OVER (ORDER BY 'x') > 0"+fn18Where+" ORDER BY id",
			"SELECT id"+fn18Where+" ORDER BY 'x'::text, 1")...)
	}
}
