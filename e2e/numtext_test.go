package e2e

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
)

// numTextRows are texts of numbers with different display scales (numeric_in keeps each one's:
// '1.50' shows 1.50, '2' shows 2, '1e3' 1000, '1.2e-3' 0.0012), NULLs, and a key to group by.
const numTextRows = "(VALUES (1, '1.50'), (1, '2'), (1, ' 1e3 '), (2, '1.2e-3'), (2, '-0.125'), (2, NULL), (3, '3.000'), (3, '1.0000000000000000000000'), (4, NULL), (5, '-7'))"

// TestTextToNumericAsPostgres: text and double precision cast to numeric without a scale, per
// row — a VALUES column, x::text::numeric, (value->>'k')::numeric of a routed table's JSON —
// keep each value's display scale as PostgreSQL's numeric_in (float8_numeric) keeps it: their
// text, + - * and comparisons, round, sum and avg (the largest display scale of a group's
// values; numeric_div of it by the count), ORDER BY and GROUP BY answer PostgreSQL's text over
// the same rows. A value decimal128 cannot hold exactly at 16 digits after the point or 22
// before it is refused by name, never rounded; text that is no number is PostgreSQL's 22P02;
// the text of min, max or a GROUP BY key of such values, whose display scale PostgreSQL takes
// from whichever equal value it meets last, is refused by name.
func TestTextToNumericAsPostgres(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	pair, cl, pg := ordRows(t, ctx, e, "numtext_rows")
	comparePG(t, ctx, pg, one(cl), sameSQL(pgText,
		"SELECT k, x::numeric::text, (x::numeric * 2)::text, (x::numeric + 1.0)::text, (x::numeric - x::numeric)::text, (-x::numeric)::text, abs(x::numeric)::text FROM "+numTextRows+" v(k, x) ORDER BY k, x",
		"SELECT k, (x::numeric * x::numeric)::text, (x::numeric > 1.5)::text, (x::numeric = 2.0)::text, round(x::numeric, 1)::text, round(x::numeric)::text, trunc(x::numeric, 2)::text FROM "+numTextRows+" v(k, x) ORDER BY k, x",
		"SELECT k, sum(x::numeric)::text, avg(x::numeric)::text, (sum(x::numeric) + 1)::text, count(x::numeric)::text, (min(x::numeric) = -0.125)::text FROM "+numTextRows+" v(k, x) GROUP BY k ORDER BY k",
		"SELECT sum(x::numeric)::text, avg(x::numeric)::text, round(max(x::numeric), 2)::text, round(min(x::numeric), 3)::text FROM "+numTextRows+" v(k, x)",
		"SELECT x::numeric::text FROM "+numTextRows+" v(k, x) WHERE x::numeric BETWEEN -1 AND 2 ORDER BY x::numeric, k",
		"SELECT round(x::numeric, 2)::text, count(*)::text FROM "+numTextRows+" v(k, x) GROUP BY round(x::numeric, 2) ORDER BY 1",
		"SELECT count(DISTINCT x::numeric)::text FROM (VALUES ('1.5'), ('1.50'), ('2'), ('2.0'), (NULL)) v(x)",
		"SELECT x::float8::numeric::text, (x::float8::numeric * 3)::text, (x::float8 / 3)::numeric::text FROM (VALUES ('1.5'), ('0.1'), ('2'), ('-1e5'), (NULL)) v(x) ORDER BY 1",
		"SELECT (CASE WHEN x::numeric > 1 THEN x::numeric ELSE 0.5 END)::text, coalesce(x::numeric, 0.00)::text FROM "+numTextRows+" v(k, x) ORDER BY k, x",
		"SELECT x::numeric::text FROM (VALUES ('1234567890123456789012'), ('0.1234567890123456'), ('-0.0000000000000001'), ('1.10000000000000000000000000000000000000000')) v(x)",
		"SELECT '1.50'::numeric::text, ('1.50'::numeric + '2'::numeric)::text, '1e-3'::numeric::text, ' 7 '::text::numeric::text",
	)...)
	comparePG(t, ctx, pg, one(cl), pairedSQL(pair,
		"SELECT ID, DELAY::text::numeric::text, (DELAY::text || '.50')::numeric::text, ((DELAY::text || '.5')::numeric + DELAY::text::numeric)::text FROMROWS ORDER BY TS, ID",
		"SELECT DEST, sum((DELAY::text || CASE WHEN DELAY % 3 = 0 THEN '.25' WHEN DELAY % 3 = 1 THEN '.1' ELSE '' END)::numeric)::text, "+
			"avg((DELAY::text || CASE WHEN DELAY % 2 = 0 THEN '.0' ELSE '' END)::numeric)::text FROMROWS GROUP BY DEST ORDER BY DEST",
		"SELECT DEST, count(*)::text FROMROWS AND DELAY::text::numeric > 10.5 GROUP BY DEST ORDER BY DEST",
	)...)
	// (value->>'delay')::numeric itself, read in the JSON extraction.
	where := " FROM flights WHERE origin = 'ORD' AND " + trialRange
	comparePG(t, ctx, pg, one(cl), pairCases(pgText, [][2]string{
		{"SELECT id, (value->>'delay')::numeric::text, ((value->>'delay')::numeric / 4)::text" + where + " ORDER BY timestamp, id",
			"SELECT id, delay::text::numeric::text, (delay::text::numeric / 4)::text FROM numtext_rows ORDER BY ts, id"},
		{"SELECT id, ((value->>'delay')::numeric + 1)::text, (value->>'delay')::float8::numeric::text, ((value->>'delay')::float8 / 8)::numeric::text" + where + " ORDER BY timestamp, id",
			"SELECT id, (delay::text::numeric + 1)::text, delay::float8::numeric::text, (delay::float8 / 8)::numeric::text FROM numtext_rows ORDER BY ts, id"},
		{"SELECT sum((value->>'delay')::numeric)::text, avg((value->>'delay')::numeric)::text, max((value->>'delay')::numeric)::int::text" + where,
			"SELECT sum(delay::text::numeric)::text, avg(delay::text::numeric)::text, max(delay::text::numeric)::int::text FROM numtext_rows"},
	})...)

	for _, q := range []string{
		"SELECT x::numeric FROM (VALUES ('1.5'), ('abc'), (NULL)) v(x)",
		"SELECT x::numeric::text FROM (VALUES ('1.5'), ('1_000')) v(x)",
		"SELECT x::numeric FROM (VALUES (''), ('2')) v(x)",
	} {
		refusedAsPostgres(t, ctx, cl, pg, q, "22P02")
	}
	refusedAs(t, ctx, cl, codes.Unimplemented, map[string]string{
		// Past decimal128 at 16 digits after the point: refused by name, never rounded.
		"SELECT x::numeric FROM (VALUES ('0.12345678901234567'), ('1')) v(x)":                     "needs more than 16 digits after the point",
		"SELECT x::numeric::text FROM (VALUES ('12345678901234567890123'), ('1')) v(x)":           "or 22 before it",
		"SELECT x::numeric * x::numeric FROM (VALUES ('0.123456789'), ('1')) v(x)":                "a product of numerics whose display scales vary by row",
		"SELECT x::numeric FROM (VALUES ('NaN'), ('1')) v(x)":                                     "numeric NaN is not supported",
		"SELECT max(x::numeric)::text FROM (VALUES ('2'), ('2.0')) v(x)":                          "the text of max of a numeric whose display scale varies by row",
		"SELECT min(x::numeric)::text FROM (VALUES ('2'), ('2.0')) v(x)":                          "the text of min of a numeric whose display scale varies by row",
		"SELECT x::numeric::text, count(*) FROM (VALUES ('2'), ('2.0')) v(x) GROUP BY x::numeric": "GROUP BY key",
	})
}

// toDateInputs are to_date's and to_timestamp's texts and formats: PostgreSQL's patterns,
// separators and spaces, years 0 and below (BC), a missing year (PostgreSQL's 1 BC), fields out of
// range (22008), text the format does not read (22007), and patterns flightsrv refuses by name.
var toDateInputs = [][2]string{
	{"2001-04-01", "YYYY-MM-DD"}, {"1500-01-01", "YYYY-MM-DD"}, {"20010401", "YYYYMMDD"}, {"2001 04 01", "YYYY-MM-DD"},
	{" 2001-04-01", "YYYY-MM-DD"}, {"2001-04-01x", "YYYY-MM-DD"}, {"2001-4-1", "YYYY-MM-DD"}, {"2001-04", "YYYY-MM-DD"},
	{"2001", "YYYY"}, {"", "YYYY"}, {"04-01", "MM-DD"}, {"0000-01-01", "YYYY-MM-DD"}, {"-5-01-01", "YYYY-MM-DD"},
	{"2001-04-01 10", "YYYY-MM-DD HH24"}, {"2001-04-01 10:05:07.123", "YYYY-MM-DD HH24:MI:SS.MS"}, {"2001-04-01T10:05", `YYYY-MM-DD"T"HH24:MI`},
	{"2001-02-30", "YYYY-MM-DD"}, {"2001-13-01", "YYYY-MM-DD"}, {"2001-04-01 25:00", "YYYY-MM-DD HH24:MI"}, {"2001-04-01 10:61", "YYYY-MM-DD HH24:MI"},
	{"2001-04-01 23:59:60", "YYYY-MM-DD HH24:MI:SS"}, {"5874898-01-01", "YYYY-MM-DD"}, {"5874897-12-31", "YYYY-MM-DD"}, {"-4713-11-24", "YYYY-MM-DD"},
	{"-4713-11-23", "YYYY-MM-DD"}, {"99999999999-01-01", "YYYY-MM-DD"}, {"2001-04-0", "YYYY-MM-DDD"},
	// PostgreSQL's other patterns: answered as PostgreSQL answers or refused by name.
	{"2001-04-01 10:00 PM", "YYYY-MM-DD HH12:MI AM"}, {"2,001-04-01", "Y,YYY-MM-DD"}, {"2451996", "J"}, {"2001-091", "YYYY-DDD"},
	{"2001-13-7", "IYYY-IW-ID"}, {"2001-04-01 10:00 +05:30", "YYYY-MM-DD HH24:MI TZH:TZM"}, {"2001  04 01", "FXYYYY MM DD"},
	{"01-Apr-2001", "DD-Mon-YYYY"}, {"1st April 2001", "DDth Month YYYY"},
	// The 12-hour clock and meridiem indicators, month and day names (read in any case; a day's
	// name is read and ignored).
	{"2001-04-01 12:00 am", "YYYY-MM-DD HH:MI PM"}, {"2001-04-01 12:00 a.m.", "YYYY-MM-DD HH:MI P.M."}, {"2001-04-01 10:00 A.m.", "YYYY-MM-DD HH:MI a.m."},
	{"2001-04-01 10:00 pm", "YYYY-MM-DD HH24:MI PM"}, {"2001-04-01 10", "YYYY-MM-DD HH12"}, {"2001-04-01 12:30", "YYYY-MM-DD HH12:MI"},
	{"2001-04-01 12:30 PM", "YYYY-MM-DD HH12:MI AM"}, {"2001-04-01 10pm", "YYYY-MM-DD HH12pm"}, {"2001-04-01 1000pm", "YYYY-MM-DD HH12MIpm"},
	{"01-apr-2001", "DD-Mon-YYYY"}, {"01-APRIL-2001", "DD-Month-YYYY"}, {"April   2001", "Month YYYY"}, {"Apr 04 2001", "Mon MM YYYY"},
	{"Sun 01 Apr 2001", "Dy DD Mon YYYY"}, {"Mon 01 Apr 2001", "Dy DD Mon YYYY"}, {"Sunday 01 Apr 2001", "Day DD Mon YYYY"},
	{"AprApr2001", "MonMonYYYY"}, {"sep 2001", "mon YYYY"}, {"DECEMBER 31 2001 11:59:59 P.M.", "MONTH DD YYYY HH:MI:SS A.M."},
	// A day of the year (DDD) and a Julian day (J), zero meaning unset; MM and DD override J's.
	{"2000-366", "YYYY-DDD"}, {"2001-366", "YYYY-DDD"}, {"2001-000", "YYYY-DDD"}, {"2001-1000", "YYYY-DDD"}, {"2001--5", "YYYY-DDD"},
	{"2001-091-05", "YYYY-DDD-MM"}, {"2001-091-05-03", "YYYY-DDD-MM-DD"}, {"2001-091-01-01", "YYYY-DDD-MM-DD"}, {"2001-01-091", "YYYY-MM-DDD"},
	{"2001-02-091", "YYYY-MM-DDD"}, {"091-2001", "DDD-YYYY"}, {"2451996 10:00", "J HH24:MI"}, {"2451996 1999", "J YYYY"}, {"1999 2451996", "YYYY J"},
	{"2451996 05", "J MM"}, {"2451996 05 091", "J DD DDD"}, {"0", "J"}, {"-1", "J"}, {"-32044", "J"}, {"2000000000", "J"}, {"2147483646", "J"},
	{"2145042906", "J"}, {"2145042905", "J"}, {"4000000000", "J"}, {"2440588", "J"},
	// FM reads a number to its end; TH or th skips two characters after it; a number before a
	// word pattern or a separator is read to its end, before a numeric pattern or a literal
	// digit by its width.
	{"1st April 2001", "DDth Month YYYY"}, {"1xy April 2001", "DDth Month YYYY"}, {"2001 01st04", "YYYY DDthMM"},
	{"2001 1st", "YYYY DDTH"}, {"20010401", "FMYYYYMMDD"}, {"2001401", "YYYYFMMMDD"}, {"200141", "YYYYFMMMFMDD"}, {"2001-4-1", "FMYYYY-FMMM-FMDD"},
	{"April 2001", "FMMonth YYYY"}, {"2001-04-01 10:00:00.5", "YYYY-MM-DD HH24:MI:SS.FMMS"}, {"2001FMM04", `YYYY"FMM"MM`}, {"2001-04-01 1PM", "YYYY-MM-DD FMHH12PM"},
	{"2001-04-01 1pm", "YYYY-MM-DD HH12pm"}, {"2001-04-01 11pm", "YYYY-MM-DD HH12pm"}, {"2001-04-01 1a.m.", "YYYY-MM-DD HHa.m."}, {"20010401", "YYYY0MMDD"},
	{"200104015", "YYYYMM0DD"}, {"2001-4-01", "YYYY-FM-MM-DD"}, {"2001-04-01", "YYYY-MM-DDFM"}, {"2001-04-01 12", "YYYY-MM-DD HH12th"},
	// A zero month or day is not set (1).
	{"2001-00-01", "YYYY-MM-DD"}, {"2001-04-00", "YYYY-MM-DD"}, {"2001-0-4", "YYYY-MM-DD"}, {"2451996 00 00", "J MM DD"},
	// Y,YYY: sscanf's "%d,%03d".
	{"2,1-04-01", "Y,YYY-MM-DD"}, {" 2, 1-04-01", "Y,YYY-MM-DD"}, {"2,+01-04-01", "Y,YYY-MM-DD"}, {"-2,001-04-01", "Y,YYY-MM-DD"},
	{"2,0010-04-01", "Y,YYY-MM-DD"}, {"+2,001-04-01", "Y,YYY-MM-DD"}, {"2,-01-04-01", "Y,YYY-MM-DD"}, {"2,-1-04-01", "Y,YYY-MM-DD"},
	{"12,001-04-01", "Y,YYY-MM-DD"}, {"2,001 2001", "Y,YYY YYYY"}, {"2,001st 04", "Y,YYYth MM"},
}

// toDateBadInputs are texts PostgreSQL's to_timestamp refuses with 22007 and a message that
// quotes the text or adds a hint (flightsrv's names the field only): a word not in the
// pattern's list, a 12-hour clock's hour out of 1 to 12, a field set twice differently.
var toDateBadInputs = [][3]string{
	{"Apr 2001", "Month YYYY", "invalid value for \"Month\""}, {"Apx 2001", "Mon YYYY", "invalid value for \"Mon\""},
	{"Sept 2001", "Month YYYY", "invalid value for \"Month\""}, {"04-2001", "Mon-YYYY", "invalid value for \"Mon\""},
	{"2001-04-01 12:00 am", "YYYY-MM-DD HH:MI P.M.", "invalid value for \"P.M.\""}, {"2001-04-01 10:00 a.m.", "YYYY-MM-DD HH:MI AM", "invalid value for \"AM\""},
	{"2001-04-01 12:00 xm", "YYYY-MM-DD HH:MI PM", "invalid value for \"PM\""}, {"Sux 01 Apr 2001", "Dy DD Mon YYYY", "invalid value for \"Dy\""},
	{"2001-04-01 13:00 PM", "YYYY-MM-DD HH12:MI AM", `hour "13" is invalid for the 12-hour clock`}, {"2001-04-01 0", "YYYY-MM-DD HH12", `hour "0" is invalid for the 12-hour clock`},
	{"2001-04-01 pm", "YYYY-MM-DD pm", `hour "0" is invalid for the 12-hour clock`}, {"2001-04-01 22:00 PM", "YYYY-MM-DD HH24:MI AM", `hour "22" is invalid for the 12-hour clock`},
	{"Apr 05 2001", "Mon MM YYYY", `conflicting values for "MM" field`}, {"01 Apr 2001 mar", "DD Mon YYYY mon", `conflicting values for "mon" field`},
	{"2001-04-01 10:00 PM 11", "YYYY-MM-DD HH:MI AM HH", `conflicting values for "HH" field`}, {"2001-04-01 10:00 PM AM", "YYYY-MM-DD HH:MI AM AM", `conflicting values for "AM" field`},
	{"091", "DDD", "cannot calculate day of year without year information"}, {"0000-091", "YYYY-DDD", "cannot calculate day of year without year information"},
	{"-1-091", "YYYY-DDD", "cannot calculate day of year without year information"}, {"1 April 2001", "DDth Month YYYY", `invalid value for "Month"`},
	{"2 ,001-04-01", "Y,YYY-MM-DD", `invalid input string for "Y,YYY"`}, {"2001-04-01", "Y,YYY-MM-DD", `invalid input string for "Y,YYY"`},
	{"2,x-04-01", "Y,YYY-MM-DD", `invalid input string for "Y,YYY"`}, {"2,001 2002", "Y,YYY YYYY", `conflicting values for "YYYY" field`},
}

// TestToDateAsPostgres: to_date(text, text) and to_timestamp(text, text) of constants answer
// PostgreSQL's dates and instants (their text) or its SQLSTATE and message (an instant outside
// timestamp[ns], which PostgreSQL holds, is 22008 "timestamp out of range", never clamped); a
// pattern flightsrv does not read is refused by name (UNIMPLEMENTED), never guessed.
func TestToDateAsPostgres(t *testing.T) {
	e := newEnv(t)
	cl := dial(t, e.on)
	ctx := context.Background()
	pg := pgUTC(t, ctx, e.url)
	// Instants PostgreSQL holds and timestamp[ns] does not: 22008, as an explicit cast's.
	outside := map[string]bool{"1500-01-01": true, "": true, "04-01": true, "0000-01-01": true, "-5-01-01": true, "-4713-11-24": true, "-4713-11-23": true,
		"0": true, "2000000000": true, "-2,001-04-01": true, "12,001-04-01": true, "2145042906": true, "2145042905": true}
	for _, in := range toDateInputs {
		castAsPostgres(t, ctx, cl, pg, "SELECT to_date("+sqlQuote(in[0])+", "+sqlQuote(in[1])+")::text")
		q := "SELECT to_timestamp(" + sqlQuote(in[0]) + ", " + sqlQuote(in[1]) + ")::text"
		if outside[in[0]] {
			refusedAs(t, ctx, cl, codes.InvalidArgument, map[string]string{q: "timestamp out of range"})
			continue
		}
		castAsPostgres(t, ctx, cl, pg, q)
	}
	// Text the format does not read: PostgreSQL's 22007, whose message quotes the text
	// (invalid value "abc" for "YYYY"); flightsrv's names the field only.
	for _, in := range [][2]string{{"abc", "YYYY-MM-DD"}, {"2001-0a-01", "YYYY-MM-DD"}} {
		for _, f := range []string{"to_date", "to_timestamp"} {
			q := "SELECT " + f + "(" + sqlQuote(in[0]) + ", " + sqlQuote(in[1]) + ")::text"
			if _, err := pgTextRowsErr(ctx, pg, q); err == nil || !strings.Contains(err.Error(), "22007") {
				t.Errorf("PostgreSQL %s: %v, want 22007", q, err)
			}
			refusedAs(t, ctx, cl, codes.InvalidArgument, map[string]string{q: "invalid value for "})
		}
	}
	for _, in := range toDateBadInputs {
		for _, f := range []string{"to_date", "to_timestamp"} {
			q := "SELECT " + f + "(" + sqlQuote(in[0]) + ", " + sqlQuote(in[1]) + ")::text"
			if _, err := pgTextRowsErr(ctx, pg, q); err == nil || !strings.Contains(err.Error(), "22007") {
				t.Errorf("PostgreSQL %s: %v, want 22007", q, err)
			}
			refusedAs(t, ctx, cl, codes.InvalidArgument, map[string]string{q: in[2]})
		}
	}
	// Text computed per row: the same reader, row by row.
	var rows []string
	for _, in := range toDateInputs {
		if in[1] == "YYYY-MM-DD" && !outside[in[0]] {
			rows = append(rows, "("+sqlQuote(in[0])+")")
		}
	}
	for _, x := range rows {
		castAsPostgres(t, ctx, cl, pg, "SELECT to_date(x, 'YYYY-MM-DD')::text, to_timestamp(x, 'YYYY-MM-DD')::text FROM (VALUES "+x+", (NULL)) v(x)")
	}
	castAsPostgres(t, ctx, cl, pg, "SELECT to_date(x || '-01', 'YYYY-MM-DD')::text, to_timestamp(x || ' 10:05', 'YYYYMMDD HH24:MI')::text FROM (VALUES ('2001-04'), ('1999-12'), (NULL)) v(x) ORDER BY 1")
	castAsPostgres(t, ctx, cl, pg, "SELECT to_date(x, 'YYYY-MM-DD HH12')::text FROM (VALUES ('2001-04-01 10')) v(x)")
	castAsPostgres(t, ctx, cl, pg, "SELECT to_timestamp(x, 'DD Mon YYYY HH12:MI AM')::text FROM (VALUES ('01 Apr 2001 12:05 AM'), ('31 dec 1999 11:59 pm'), (NULL)) v(x) ORDER BY 1")
	comparePG(t, ctx, pg, one(cl), sameSQL(pgText,
		"SELECT (to_date('2001-04-01', 'YYYY-MM-DD') + 1)::text, (to_date('2001-04-01', 'YYYY-MM-DD') - to_date('2001-01-01', 'YYYY-MM-DD'))::text, (to_date(NULL, 'YYYY') IS NULL)::text",
	)...)
}

// textIntervalInputs are interval texts PostgreSQL's interval_in reads (the verbose form with
// units, clock fields, "ago", "@"; ISO 8601's designators; the SQL standard's year-month and
// day-time forms) or refuses (22007, duplicate fields among them).
var textIntervalInputs = []string{
	"1 day 02:00", "1 mon -2 days", "@ 1 hour ago", "1 year 2 mons", "90 minutes", "1.5 weeks", "1.5 mons", "1 week 2 days 3 hours",
	"-1 day +02:03", "+1 day -1:00", "1 day 2", "1 hour 30", "10", "1.5", "1:2", "1 mon 1.5", "1 day ago", "@1 day",
	"P1D", "P1Y2M3DT4H5M6S", "P1.5Y", "P0.5M", "P1.5D", "PT1.5H", "P1W", "P1Y-2M", "PT-1H30M", "P1DT", "PT", "P1.5W", "PT1M1.5S",
	"P0001-02-03T04:05:06", "3 4:05:06", "5 1:00", "2 years 3 4:00", "1-2", "-1-2", "1-2 3",
	"P", "p1d", " P1D ", "P1D2H", "P1Y2", "1 2", "1:00 5", "ago", "1 day 1 day", "1 2 3", "1 hour 1:00", "abc", "", "100000000 years",
	"1 quarter", "1 ago", "1 day ago 2 hours", "ago 1 day", "P2", "P1T2H", "1:2.5", "2147483648 days", "2147483647 days 1 day", "1 2 hours",
	"1 day -1", "1.", "-.5", "- 5", "100:00", "1:60", "1:59:60", "1:59:61", "99999999 hours", "3000000 hours", "1,5 days", "1 h 30 m", "1h30m",
	"1 ms 1.5 s", "+1-2", "1 mil", "1 c", ".5 days", "0.0000005 s", "0.0000015 s", "1:00:00.0000005", "1 day.5", "1-2-3", "1/2", "P1e2D",
	"PT36H", "P-1D", "P1.5Y2M", "-1.5 days", "1.5 hours ago", "2147483647 months 1 year", "1 decade 1.5 centuries", "1 week 1 d", "1 day 1 hour 1:00",
}

// TestTextToIntervalAsPostgres: text computed per row cast to interval (interval_in, the reader
// of interval constants) answers PostgreSQL's intervals (their text) or its error, a constant's
// and a row's alike; a form flightsrv does not read is refused by name. time with time zone
// and uuid, which flightsrv has no type for, stay refused by name.
func TestTextToIntervalAsPostgres(t *testing.T) {
	e := newEnv(t)
	cl := dial(t, e.on)
	ctx := context.Background()
	pg := pgUTC(t, ctx, e.url)
	for _, x := range textIntervalInputs {
		castAsPostgres(t, ctx, cl, pg, "SELECT x::interval::text FROM (VALUES ("+sqlQuote(x)+"), (NULL)) v(x)")
		castAsPostgres(t, ctx, cl, pg, "SELECT "+sqlQuote(x)+"::interval::text")
	}
	comparePG(t, ctx, pg, one(cl), sameSQL(pgText,
		"SELECT (x::interval + interval '1 hour')::text, (x::interval * 2)::text, (x::interval < interval '1 day')::text FROM (VALUES ('1 day 02:00'), ('90 minutes'), ('1 mon -2 days'), (NULL)) v(x) ORDER BY 1",
		"SELECT (timestamp '2001-04-01 00:00' + (n || ' hours')::interval)::text FROM generate_series(1, 3) n ORDER BY 1",
	)...)
	refusedAs(t, ctx, cl, codes.Unimplemented, map[string]string{
		"SELECT x::timetz FROM (VALUES ('10:00')) v(x)":                              "timetz",
		"SELECT x::uuid FROM (VALUES ('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11')) v(x)": "uuid",
		"SELECT '10:00'::timetz":                                                     "timetz",
		"SELECT 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid":                        "uuid",
	})
}

// sqlQuote is s as an SQL string constant.
func sqlQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
