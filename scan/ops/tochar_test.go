package ops_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/flightsrv/flightsrv/internal/testsupport/pgtest"
	"github.com/flightsrv/flightsrv/scan/ops"
)

// toCharTimes are instants where to_char's fields change: year and ISO-year boundaries (ISO
// week 53 and week 1 across December and January), a leap day, midnight, noon and the hours
// around them, single-digit and teen days (ordinals: 1st, 2nd, 3rd, 11th, 12th, 13th, 21st…),
// fractions of a second down to the microsecond, and the ends of timestamp[ns]'s range.
var toCharTimes = []time.Time{
	time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC),
	time.Date(2001, 7, 4, 15, 4, 5, 123456000, time.UTC),
	time.Date(2004, 2, 29, 12, 0, 0, 0, time.UTC),
	time.Date(2004, 12, 31, 23, 59, 59, 999999000, time.UTC),
	time.Date(2005, 1, 1, 11, 59, 1, 1000, time.UTC),
	time.Date(2008, 12, 29, 1, 2, 3, 500000000, time.UTC),
	time.Date(2010, 1, 3, 13, 0, 0, 0, time.UTC),
	time.Date(2011, 11, 11, 11, 11, 11, 110000000, time.UTC),
	time.Date(2012, 12, 12, 0, 12, 12, 0, time.UTC),
	time.Date(2013, 3, 13, 23, 0, 0, 0, time.UTC),
	time.Date(2021, 5, 22, 6, 7, 8, 90000, time.UTC),
	time.Date(2023, 10, 2, 10, 20, 30, 0, time.UTC),
	time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC),
	time.Date(1969, 12, 31, 18, 30, 0, 0, time.UTC),
	time.Date(1678, 1, 1, 0, 0, 0, 0, time.UTC),
	time.Date(2262, 4, 11, 0, 0, 0, 0, time.UTC),
}

// toCharFormats are templates BI tools, analysts and the reports use, every keyword in
// upper and lower case, with FM, TM, FX, TH/th and SP, quoted text and escapes.
var toCharFormats = []string{
	"YYYY-MM-DD HH24:MI:SS", "YYYY-MM-DD\"T\"HH24:MI:SS.US", "YYYY-MM-DD HH24:MI:SS.MS",
	"FMMonth", "FMMonth DD, YYYY", "Month", "MONTH", "month", "Mon", "MON", "mon", "TMMonth", "TMDay",
	"Day", "DAY", "day", "FMDay", "Dy", "DY", "dy", "HH12:MI am", "HH12:MI pm", "HH:MI AM", "HH:MI P.M.",
	"hh12:mi a.m.", "IW", "IYYY", "IYY", "IY", "I", "ID", "IDDD", "IYYY-IW-ID", "WW", "W", "TZ", "tz", "OF",
	"TZH:TZM", "CC", "cc", "J", "Q", "q", "RM", "rm", "FMRM", "Y,YYY", "YYY", "YY", "Y", "yyyy", "ddd", "dd", "d",
	"DDTH", "DDth", "FMDDth", "DDDth", "Dth", "MMth", "HH24th", "YYYYth", "IWth", "WWth", "CCth",
	"FF1 FF2 FF3 FF4 FF5 FF6", "ff3", "MS US", "FMMS FMUS", "SSSS", "SSSSS", "sssss", "FMHH24:FMMI",
	"AD", "A.D.", "bc", "b.c.", "FXYYYY", "DDSP", "YYYY \\\"quoted\\\"", "\"YYYY\" YYYY", "\"a\\\"b\" DD",
	"Q\"Q\"", "HH24:MI:SS OF", "x-y/z", "FMYYYY-FMMM-FMDD", "FMHH12 FMSS", "tmmonth", "fmday", "yyyy-mm-dd hh24:mi:ss",
	"YYYYMMDD", "YYYY_WW", "MMDDYYYY", "FM9", "FMx",
	// One prefix and one suffix a keyword: a second is text (or a keyword of its own).
	"FMTMMonth", "TMFMMonth", "FMFMDD", "DDTHSP", "DDSPTH", "DDthth", "THDD", "SPDD", "TMRM", "TMrm", "FMRM", "HH12SP",
	// Zones in lower case, OF under FM, TH on Y,YYY, suffixes on text fields.
	"tzh:tzm", "of", "FMOF", "FMof", "TZ tz", "TMTZ", "Y,YYYTH", "y,yyyth", "FMY,YYY", "RMth", "MonthTH", "AMth", "FXDD fxdd",
	"FMMS FMFF3 FMUS", "USth", "SSSSSth", "FMDDD FMIDDD", "Dy TMDy FMDy", "MON TMMON FMMON",
}

// TestToCharMatchesPostgres: to_char of every template above at every instant above equals
// PostgreSQL's own to_char (a real server, a UTC session, lc_time C).
func TestToCharMatchesPostgres(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	conn := pgSession(t, "SET TimeZone = 'UTC'; SET lc_time = 'C'")
	checked := 0
	for _, f := range toCharFormats {
		rows, err := conn.Query(ctx, "SELECT to_char(t, $2) FROM unnest($1::timestamptz[]) WITH ORDINALITY AS u(t, n) ORDER BY n", toCharTimes, f)
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				t.Fatal(err)
			}
			want = append(want, s)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		for i, at := range toCharTimes {
			checked++
			if got := ops.ToChar(at, f); got != want[i] {
				t.Errorf("to_char(%s, %q) = %q, PostgreSQL %q", at.Format(time.RFC3339Nano), f, got, want[i])
			}
		}
	}
	if checked < 1000 {
		t.Fatalf("only %d cases", checked)
	}
}

// toCharKeywords are PostgreSQL's to_char keywords for timestamps, each spelling
// (PostgreSQL's DCH_keywords; "Datetime Formatting Functions" in PostgreSQL's manual).
var toCharKeywords = []string{"A.D.", "A.M.", "AD", "AM", "B.C.", "BC", "CC", "DAY", "DDD", "DD", "DY", "Day", "Dy", "D", "FF1", "FF2", "FF3",
	"FF4", "FF5", "FF6", "FX", "HH24", "HH12", "HH", "IDDD", "ID", "IW", "IYYY", "IYY", "IY", "I", "J", "MI", "MM", "MONTH", "MON", "MS", "Month",
	"Mon", "OF", "P.M.", "PM", "Q", "RM", "SSSSS", "SSSS", "SS", "TZH", "TZM", "TZ", "US", "WW", "W", "Y,YYY", "YYYY", "YYY", "YY", "Y",
	"a.d.", "a.m.", "ad", "am", "b.c.", "bc", "cc", "day", "ddd", "dd", "dy", "d", "ff1", "ff2", "ff3", "ff4", "ff5", "ff6", "fx", "hh24", "hh12",
	"hh", "iddd", "id", "iw", "iyyy", "iyy", "iy", "i", "j", "mi", "mm", "month", "mon", "ms", "of", "p.m.", "pm", "q", "rm", "sssss", "ssss",
	"ss", "tzh", "tzm", "tz", "us", "ww", "w", "y,yyy", "yyyy", "yyy", "yy", "y"}

// TestToCharKeywordGridMatchesPostgres: every keyword with every prefix (none, FM, fm, TM,
// tm) and suffix (none, TH, th, SP), followed by a separator, at every instant above, for a
// timestamp with and without time zone, equals PostgreSQL's to_char.
func TestToCharKeywordGridMatchesPostgres(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	conn := pgSession(t, "SET TimeZone = 'UTC'; SET lc_time = 'C'")
	var formats []string
	for _, k := range toCharKeywords {
		for _, pre := range []string{"", "FM", "fm", "TM", "tm"} {
			for _, suf := range []string{"", "TH", "th", "SP"} {
				formats = append(formats, pre+k+suf+"|")
			}
		}
	}
	rows, err := conn.Query(ctx, "SELECT to_char(t, f), to_char(t::timestamp, f) FROM unnest($1::text[]) WITH ORDINALITY AS a(f, i), "+
		"unnest($2::timestamptz[]) WITH ORDINALITY AS b(t, j) ORDER BY i, j", formats, toCharTimes)
	if err != nil {
		t.Fatal(err)
	}
	type pair struct{ Zoned, Wall string }
	want, err := pgx.CollectRows(rows, pgx.RowToStructByPos[pair])
	if err != nil {
		t.Fatal(err)
	}
	if len(want) != len(formats)*len(toCharTimes) {
		t.Fatalf("%d rows from PostgreSQL, want %d", len(want), len(formats)*len(toCharTimes))
	}
	for i, f := range formats {
		for j, at := range toCharTimes {
			w := want[i*len(toCharTimes)+j]
			if got := ops.ToChar(at, f); got != w.Zoned {
				t.Errorf("to_char(%s, %q) = %q, PostgreSQL %q", at.Format(time.RFC3339Nano), f, got, w.Zoned)
			}
			if got := ops.ToCharWallclock(at, f); got != w.Wall {
				t.Errorf("to_char(%s::timestamp, %q) = %q, PostgreSQL %q", at.Format(time.RFC3339Nano), f, got, w.Wall)
			}
		}
	}
}

// TestToCharWallclockMatchesPostgres: to_char of a timestamp without time zone, every
// template above at every instant above, equals PostgreSQL's (no zone name; offset zero).
func TestToCharWallclockMatchesPostgres(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	conn := pgSession(t, "SET TimeZone = 'UTC'; SET lc_time = 'C'")
	for _, f := range toCharFormats {
		rows, err := conn.Query(ctx, "SELECT to_char(t::timestamp, $2) FROM unnest($1::timestamptz[]) WITH ORDINALITY AS u(t, n) ORDER BY n", toCharTimes, f)
		if err != nil {
			t.Fatal(err)
		}
		want, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		for i, at := range toCharTimes {
			if got := ops.ToCharWallclock(at, f); got != want[i] {
				t.Errorf("to_char(%s::timestamp, %q) = %q, PostgreSQL %q", at.Format(time.RFC3339Nano), f, got, want[i])
			}
		}
	}
}

// TestTimestampTextMatchesPostgres: a timestamptz cast to text reads as PostgreSQL's in a UTC
// session with DateStyle ISO (not RFC 3339), a zone-less timestamp without the offset, and a
// date as date_out writes it, years before 1 AD with their BC year (there is no year 0).
func TestTimestampTextMatchesPostgres(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	conn := pgSession(t, "SET TimeZone = 'UTC'; SET DateStyle = 'ISO, MDY'")
	times := append([]time.Time{
		time.Date(-43, 3, 15, 12, 0, 0, 0, time.UTC),
		time.Date(0, 12, 31, 23, 59, 59, 500000000, time.UTC),
		time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-4712, 11, 24, 0, 0, 0, 0, time.UTC),
		time.Date(-999, 1, 2, 3, 4, 5, 6000, time.UTC),
		time.Date(9, 6, 7, 0, 0, 0, 0, time.UTC),
	}, toCharTimes...)
	for _, at := range times {
		var tz, plain, date string
		if err := conn.QueryRow(ctx, "SELECT $1::timestamptz::text, $1::timestamptz::timestamp::text, $1::timestamptz::date::text", at).Scan(&tz, &plain, &date); err != nil {
			t.Fatal(err)
		}
		if got := ops.TimestampText(at); got != tz {
			t.Errorf("%s::text = %q, PostgreSQL %q", at.Format(time.RFC3339Nano), got, tz)
		}
		if got := ops.NaiveTimestampText(at); got != plain {
			t.Errorf("%s::timestamp::text = %q, PostgreSQL %q", at.Format(time.RFC3339Nano), got, plain)
		}
		if got := ops.DateText(at); got != date {
			t.Errorf("%s::date::text = %q, PostgreSQL %q", at.Format(time.RFC3339Nano), got, date)
		}
	}
}

// pgSession connects to a new database of the tests' PostgreSQL server (closed when the test
// ends) and runs set, the session's settings.
func pgSession(t *testing.T, set string) *pgx.Conn {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pgtest.Start(t).NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	if _, err := conn.Exec(ctx, set); err != nil {
		t.Fatal(err)
	}
	return conn
}
