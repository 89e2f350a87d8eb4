package e2e

import (
	"testing"

	"google.golang.org/grpc/codes"
)

// TestDateTruncCenturiesAsPostgres: date_trunc to decades, centuries and millennia (any of
// PostgreSQL's spellings) of timestamps, timestamps with time zone, dates and the flights'
// instants, in UTC and in other zones, answers PostgreSQL's text (centuries and millennia start
// on years ending in 01); extract and date_part of decade, century, millennium, isoyear, isodow
// and julian answer its values. A start before the engine's earliest instant (1677-09-21) is
// 22008; date_trunc of an interval and extract(julian) of a timestamp are refused by name.
func TestDateTruncCenturiesAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	qs := []string{
		"SELECT date_trunc('decade', timestamp '2009-06-01 12:00')::text, date_trunc('century', timestamp '2001-06-01')::text, " +
			"date_trunc('millennium', timestamp '2001-06-01')::text, date_trunc('Decades', timestamp '2000-01-01')::text, " +
			"date_trunc('c', timestamp '2100-12-31 23:59:59.999999')::text, date_trunc('century', timestamp '2101-01-01')::text, " +
			"date_trunc('decade', timestamp '1680-05-01')::text, date_trunc('dec', timestamp '1999-12-31 23:59:59.999999')::text, " +
			"date_trunc('mil', timestamp '2262-04-11')::text, date_trunc('centuries', timestamp '2200-12-31')::text",
		"SELECT date_trunc('decade', timestamptz '2009-06-01 12:00')::text, date_trunc('century', date '2101-06-01')::text, " +
			"date_trunc('millennia', date '2262-01-01')::text, date_trunc('decade', NULL::timestamp)::text",
		"SELECT date_trunc('decade', timestamptz '2010-01-01 03:00', 'Asia/Tokyo')::text, date_trunc('century', timestamptz '2001-01-01 03:00', 'America/New_York')::text, " +
			"date_trunc('millennium', timestamp '2001-01-01 03:00', 'UTC')::text, date_trunc('decade', timestamptz '2019-12-31 23:00', '+05')::text",
		"SELECT id, date_trunc('decade', timestamp)::text, date_trunc('century', timestamp, 'Pacific/Kiritimati')::text, date_trunc('millennium', timestamp::date)::text, " +
			"date_trunc('decade', timestamp + (value->>'delay')::int * interval '100 days')::text" + fn18Where + " ORDER BY id",
		"SELECT date_trunc('decade', timestamp)::text, count(*)" + fn18Where + " GROUP BY 1 ORDER BY 1",
	}
	numbers := []string{
		"SELECT extract(millennium from timestamp '2001-01-01')::text, extract(millennium from timestamp '2000-12-31 23:59:59')::text, extract(julian from date '2001-01-01')::text, " +
			"date_part('julian', timestamp '2001-01-01 06:00'), extract(isoyear from date '2005-01-01')::text, extract(isodow from date '2005-01-02')::text, " +
			"extract(decade from date '2005-01-02')::text, extract(century from date '2000-12-31')::text, extract(century from date '2001-01-01')::text",
		"SELECT date_part('julian', timestamptz '2001-01-01 13:00:00.123456'), date_part('j', date '1999-12-31'), date_part('jd', timestamp '2262-01-01 23:59:59.999999'), " +
			"date_part('mils', date '2001-01-01'), date_part('dec', date '2001-01-01'), date_part('c', date '2001-01-01'), extract(millennia from date '2000-12-31')::text, " +
			"date_part('ms', timestamp '2001-01-01 00:00:01.5'), date_part('julian', date '1677-09-22')",
		"SELECT id, extract(millennium from timestamp)::text, date_part('julian', timestamp), extract(julian from timestamp::date)::text, extract(decade from timestamp)::text, " +
			"extract(isoyear from timestamp - (value->>'delay')::int * interval '91 days')::text, extract(isodow from timestamp)::text, date_part('century', timestamp)" + fn18Where + " ORDER BY id",
	}
	for _, cl := range clients {
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText, qs...)...)
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgNumbers, numbers...)...)
		// PostgreSQL answers 1601-01-01 and 1001-01-01, before the first instant of timestamp[ns].
		for _, q := range []string{"SELECT date_trunc('century', timestamp '1700-01-01')::text", "SELECT date_trunc('millennium', date '2000-01-01')::text"} {
			refusedAs(t, ctx, cl.c, codes.InvalidArgument, map[string]string{q: "timestamp out of range"})
		}
		refusedAs(t, ctx, cl.c, codes.Unimplemented, map[string]string{
			"SELECT date_trunc('year', interval '13 months 2 days')":   "date_trunc of an interval",
			"SELECT date_trunc('decade', interval '13 years', 'UTC')":  "date_trunc of an interval",
			"SELECT extract(julian from timestamp '2001-01-01 06:00')": "extract(julian from a timestamp)",
			"SELECT extract(julian from timestamp)" + fn18Where:        "extract(julian from a timestamp)",
			"SELECT extract(jd from timestamptz '2001-01-01 06:00')":   "extract(julian from a timestamp)",
		})
	}
}

// TestNowIsStableAsPostgres: now(), current_timestamp, localtimestamp and current_date are one
// instant for the whole statement, evaluated where PostgreSQL evaluates them: an arm or operand
// PostgreSQL never evaluates (a CASE arm no row takes, one its planner drops) does not fail on
// a sum past the engine's range, as it answers; a read bounded by now() ± an interval,
// date_trunc(unit, now()) or current_date - n still routes by that instant (the counts are
// PostgreSQL's). A sum past the
// range that is evaluated is 22008 (PostgreSQL's range is larger: it answers).
func TestNowIsStableAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	qs := []string{
		"SELECT CASE WHEN false THEN now() + interval '1000 years' END, CASE WHEN 1 > 2 THEN date_trunc('millennium', now()) END, " +
			"CASE WHEN false THEN current_date + 1000000 END, CASE WHEN NULL THEN localtimestamp - interval '500 years' END",
		"SELECT id, CASE WHEN origin = 'XXX' THEN now() + interval '1000 years' END, CASE WHEN (value->>'delay')::int > 100000 THEN date_trunc('millennium', now()) END, " +
			"COALESCE(id, (now() + interval '900 years')::text)" + fn18Where + " ORDER BY id",
		"SELECT id" + fn18Where + " AND ((value->>'delay')::int > 100000 AND timestamp < now() + interval '1000 years') ORDER BY id",
		"SELECT now() = current_timestamp, transaction_timestamp() = now(), current_date = now()::date, " +
			"localtimestamp = now()::timestamp, now() - interval '1 day' < now(), current_date - 1 < current_date",
		"SELECT count(*) FROM flights WHERE origin = 'BOS' AND timestamp > now() - interval '30 years' AND timestamp < now()",
		"SELECT count(*) FROM flights WHERE origin = 'BOS' AND timestamp BETWEEN now() - interval '30 years' AND current_timestamp + interval '1 day'",
		"SELECT count(*) FROM flights WHERE origin = 'BOS' AND timestamp >= current_date - 11000 AND timestamp < current_date",
		"SELECT count(*) FROM flights WHERE origin = 'BOS' AND timestamp >= localtimestamp - interval '30 years' AND timestamp < now() AT TIME ZONE 'UTC'",
		// date_trunc of now() in UTC bounds a read too (the Grafana idiom of today's rows).
		"SELECT count(*) FROM flights WHERE origin = 'BOS' AND timestamp >= date_trunc('day', now()) AND timestamp < now()",
		"SELECT count(*) FROM flights WHERE origin = 'BOS' AND timestamp >= date_trunc('year', now()) - interval '30 years' AND timestamp < date_trunc('week', now())",
		"SELECT CASE WHEN false THEN date_trunc('day', now()) + interval '1000 years' END, date_trunc('day', localtimestamp) = date_trunc('day', now())::timestamp, " +
			"date_trunc('day', now(), 'UTC') = date_trunc('day', now())",
	}
	for _, cl := range clients {
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText, qs...)...)
		refusedAs(t, ctx, cl.c, codes.InvalidArgument, map[string]string{
			"SELECT CASE WHEN origin = 'BOS' THEN now() + interval '1000 years' END" + fn18Where: "timestamp out of range",
			"SELECT now() + interval '1000 years'":                                               "timestamp out of range",
		})
	}
}

// TestNoFloatRoundAsPostgres: round, trunc and ceil of a float with a number of places, and chr
// and overlay with a bigint, numeric or text where PostgreSQL's parameters are integer, are
// PostgreSQL's 42883 "function … does not exist" in its words (no implicit cast narrows them);
// their integer forms answer its values.
func TestNoFloatRoundAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	for _, cl := range clients {
		for _, q := range []string{
			"SELECT round(1.5::float8, 1)", "SELECT round(1.5::float8, 1::bigint)", "SELECT ceil(1.5::float8, 1)", "SELECT round(1.5::real, 1)",
			"SELECT trunc(1.5::float8, 1)", "SELECT log(2.0::float8, 8.0::float8)", "SELECT round((value->>'delay')::float8, 2)" + fn18Where,
			"SELECT chr(65::bigint)", "SELECT chr(3000000000)", "SELECT chr('65'::text)", "SELECT chr((value->>'delay')::bigint)" + fn18Where,
			"SELECT overlay('abc' placing 'x' from 2::bigint for 1::bigint)", "SELECT overlay('abc'::text placing 'x' from 2::bigint)",
			"SELECT overlay('abc' placing 'x' from 2 for 2::bigint)", "SELECT overlay(id placing origin from length(id)::bigint)" + fn18Where,
			"SELECT chr(65.0)", "SELECT overlay('abc' placing 'x' from 2.0)", "SELECT chr((value->>'delay')::numeric)" + fn18Where,
			"SELECT overlay(id placing 'x' from 1.5)" + fn18Where,
		} {
			refusedAsPostgres(t, ctx, cl.c, pg, q, "42883")
		}
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText,
			"SELECT chr(65::smallint), chr('66'), chr(NULL), chr(67), overlay('abc' placing 'x' from 2::smallint for '1'), round(1.25, 1)::text, round(2.5::float8)::text, trunc(1.55, 1)::text")...)
	}
}

// TestToDateISOWeeksAsPostgres: to_date and to_timestamp read ISO 8601 week dates (IYYY, IYY,
// IY, I, IW, ID, IDDD; a day name as the week's day), years of fewer digits (YYY, YY, Y near
// 2020) and FX (exact mode: each separator or literal of the format takes one character) as
// PostgreSQL reads them, of constants and of text computed per row; mixing Gregorian and ISO
// patterns is its 22007. to_char writes the same patterns (and WW, W, CC, Q, J) as PostgreSQL
// on the days around New Year and in leap years.
func TestToDateISOWeeksAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	qs := []string{
		"SELECT to_date('2005-W01-1', 'IYYY-\"W\"IW-ID')::text, to_timestamp('2005 52 7', 'IYYY IW ID')::text, to_date('2005 01 Monday', 'IYYY IW Day')::text, " +
			"to_date('2005 01 Sunday', 'IYYY IW Day')::text, to_date('2005 01 1 Tuesday', 'IYYY IW ID Day')::text, to_date('2012 1', 'IYYY IW')::text",
		"SELECT to_date('05 01 1', 'IY IW ID')::text, to_date('5 01 1', 'I IW ID')::text, to_date('519 01 1', 'IYY IW ID')::text, to_date('520 01 1', 'IYY IW ID')::text, " +
			"to_date('69', 'YY')::text, to_date('70', 'YY')::text, to_date('2005', 'YY')::text, to_date('99-12-31', 'YY-MM-DD')::text, to_date('5', 'Y')::text, to_date('2005 300', 'IYY IDDD')::text",
		"SELECT to_date('2005 100', 'IYYY IDDD')::text, to_date('2005 1 7', 'IYYY IW ID')::text, to_date('2005 53 7', 'IYYY IW ID')::text, to_date('2005 1 8', 'IYYY IW ID')::text, " +
			"to_date('2005 1 0', 'IYYY IW ID')::text, to_date('1 7', 'IW ID')::text, to_date('0 1 1', 'IYYY IW ID')::text, to_date('2005 366', 'IYYY IDDD')::text",
		"SELECT to_date('2004 53 5', 'IYYY IW ID')::text, to_date('2008 001', 'IYYY IDDD')::text, to_date('2008 371', 'IYYY IDDD')::text, to_date('2009 53 7', 'IYYY IW ID')::text, " +
			"to_date('2010 1 1', 'IYYY IW ID')::text, to_date('2020 53 4', 'IYYY IW ID')::text, to_date('2016 52 7', 'IYYY IW ID')::text, to_timestamp('2005 01 3 13:45', 'IYYY IW ID HH24:MI')::text",
		"SELECT to_date('2005 J 1', 'IYYY \"J\" IW')::text, to_date('2005   12', 'FXYYYY MM')::text, to_date('2005x12', 'FXYYYY MM')::text, to_date('2005 12', 'fxYYYY MM')::text, " +
			"to_date(' 2005 12', 'FXYYYY MM')::text, to_date('2005 12', 'YYYY FXMM')::text, to_date('2005-1-01', 'FXYYYY-MM-DD')::text, to_date('2005  12', 'FXYYYY-MM')::text, " +
			"to_date('2005/12/ 3', 'FXYYYY/MM/DD')::text, to_date('20051203', 'FXYYYYMMDD')::text, to_date('2005 dec  03', 'FXYYYY Mon DD')::text, to_date('x2005', 'FX\"x\"YYYY')::text",
		"SELECT id, to_date(to_char(timestamp, 'IYYY IW ID'), 'IYYY IW ID')::text, to_timestamp(to_char(timestamp, 'IY-IDDD HH24'), 'IY-IDDD HH24')::text, to_char(timestamp, 'IYYY-IW-ID IDDD')" + fn18Where + " ORDER BY id",
		"SELECT (x + g)::text, to_char(x + g, 'IYYY IYY IY I IW ID IDDD WW W CC Q J YYYY DDD D FMIW FMIDDD IWth'), to_char((x + g)::timestamp, 'IYYY-IW-ID') " +
			"FROM (VALUES (date '2004-12-26'), (date '2008-12-26'), (date '2009-12-26'), (date '2015-12-26'), (date '2020-12-26'), (date '2021-12-26'), (date '2000-02-25')) v(x), generate_series(0, 12) g ORDER BY 1",
	}
	for _, cl := range clients {
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText, qs...)...)
		for _, q := range []string{
			"SELECT to_date('2005-01', 'IYYY-MM')", "SELECT to_date('2005 01 1', 'YYYY IW ID')", "SELECT to_date('2005 300', 'YYYY IDDD')",
			"SELECT to_date('2005 1 1', 'IYYY IW D')", "SELECT to_date('2005 1 1 10', 'IYYY IW ID DD')", "SELECT to_date('2005 100', 'IYYY DDD')",
			"SELECT to_date('2005 Tuesday 2', 'IYYY Day ID')", "SELECT to_timestamp('Jan 2005 1', 'Mon IYYY IW')",
			"SELECT to_date(to_char(timestamp, 'IYYY MM'), 'IYYY MM')" + fn18Where,
		} {
			refusedAsPostgres(t, ctx, cl.c, pg, q, "22007")
		}
		refusedAsPostgres(t, ctx, cl.c, pg, "SELECT to_date('2005--12', 'FXYYYY-MM')", "22008")
	}
}
