package substrait

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/flightsrv/flightsrv/internal/fuzzcount"
)

// TestToTimestamp: to_timestamp of constants folds to PostgreSQL's answers. The expected
// instants and errors are PostgreSQL 15's (psql, SET timezone = 'UTC'), not this code's.
func TestToTimestamp(t *testing.T) {
	t.Parallel()
	d := func(s string) time.Time {
		v, err := time.Parse("2006-01-02 15:04:05.999999999", s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	texts := []struct {
		s, f string
		want time.Time
	}{
		{"2001-03-01 00:00:00.000000", "YYYY-MM-DD HH24:MI:SS.US", d("2001-03-01 00:00:00")},
		{"2001-03-01 13:14:15.5", "YYYY-MM-DD HH24:MI:SS.US", d("2001-03-01 13:14:15.5")},
		{"2001-03-01 13:14:15.123", "YYYY-MM-DD HH24:MI:SS.MS", d("2001-03-01 13:14:15.123")},
		{"2001-03-01 13:14:15.12", "YYYY-MM-DD HH24:MI:SS.MS", d("2001-03-01 13:14:15.12")},
		{"20010301", "YYYYMMDD", d("2001-03-01 00:00:00")},
		{"2001/3/1", "YYYY/MM/DD", d("2001-03-01 00:00:00")},
		{"  2001-03-01", "YYYY-MM-DD", d("2001-03-01 00:00:00")},
		{"2001-03-01T10:00:00", `YYYY-MM-DD"T"HH24:MI:SS`, d("2001-03-01 10:00:00")},
		{"2001-03-01", "yyyy-mm-dd", d("2001-03-01 00:00:00")},
		{"2001-03", "YYYY-MM", d("2001-03-01 00:00:00")},
		{"2001 03 01", "YYYY-MM-DD", d("2001-03-01 00:00:00")},
		{"2001-03-01 00:00:00 garbage", "YYYY-MM-DD HH24:MI:SS", d("2001-03-01 00:00:00")},
		{"2001-04-01 10:00 PM", "YYYY-MM-DD HH12:MI AM", d("2001-04-01 22:00:00")},
		{"2001-04-01 12:00 a.m.", "YYYY-MM-DD HH:MI P.M.", d("2001-04-01 00:00:00")},
		{"2001-04-01 12:30", "YYYY-MM-DD HH12:MI", d("2001-04-01 00:30:00")},
		{"2001-04-01 1000pm", "YYYY-MM-DD HH12MIpm", d("2001-04-01 22:00:00")},
		{"01-APRIL-2001", "DD-Month-YYYY", d("2001-04-01 00:00:00")},
		{"AprApr2001", "MonMonYYYY", d("2001-04-01 00:00:00")},
		{"Mon 01 Apr 2001", "Dy DD Mon YYYY", d("2001-04-01 00:00:00")},
		{"2001-091", "YYYY-DDD", d("2001-04-01 00:00:00")},
		{"2000-366", "YYYY-DDD", d("2000-12-31 00:00:00")},
		{"2001-02-091", "YYYY-MM-DDD", d("2001-02-01 00:00:00")},
		{"2451996 10:00", "J HH24:MI", d("2001-03-27 10:00:00")},
		{"2451996 05", "J MM", d("2001-05-27 00:00:00")},
		{"2001-4-1", "FMYYYY-FMMM-FMDD", d("2001-04-01 00:00:00")},
		{"1st April 2001", "DDth Month YYYY", d("2001-04-01 00:00:00")},
		{"2001 01st04", "YYYY DDthMM", d("2001-04-01 00:00:00")},
		{"2001-04-01 1pm", "YYYY-MM-DD HH12pm", d("2001-04-01 13:00:00")},
	}
	for _, tt := range texts {
		got, err := parseToTimestamp(tt.s, tt.f)
		if err != nil || !got.Equal(tt.want) {
			t.Errorf("to_timestamp(%q, %q) = %v, %v; want %v", tt.s, tt.f, got, err, tt.want)
		}
	}
	epochs := []struct {
		secs float64
		want time.Time
	}{
		{0, d("1970-01-01 00:00:00")},
		{978307200, d("2001-01-01 00:00:00")},
		{978307200.5, d("2001-01-01 00:00:00.5")},
		{-1.5, d("1969-12-31 23:59:58.5")},
		{1e-7, d("1970-01-01 00:00:00")},
		{0.0000005, d("1970-01-01 00:00:00")},
		{1.0000005, d("1970-01-01 00:00:01")},
	}
	for _, tt := range epochs {
		got, err := epochToTimestamp(tt.secs)
		if err != nil || !got.Equal(tt.want) {
			t.Errorf("to_timestamp(%v) = %v, %v; want %v", tt.secs, got, err, tt.want)
		}
	}
	errs := []struct {
		s, f     string
		code     Code
		sqlstate string
	}{
		{"2001-13-01", "YYYY-MM-DD", InvalidArgument, "22008"},
		{"2001-02-30", "YYYY-MM-DD", InvalidArgument, "22008"},
		{"2001-03-01 24:00:00", "YYYY-MM-DD HH24:MI:SS", InvalidArgument, "22008"},
		{"2001-03-01 10:00:00.1234567", "YYYY-MM-DD HH24:MI:SS.US", InvalidArgument, "22008"},
		{"abc", "YYYY", InvalidArgument, "22007"},
		{"2001-091", "YYYY-IDDD", InvalidArgument, "22007"}, // Gregorian and ISO patterns mixed
		{"2001-01", "IYYY-WW", Unimplemented, "0A000"},
		{"-32045", "J", Unimplemented, "0A000"},
		{"091", "DDD", InvalidArgument, "22007"},
		{"2001-366", "YYYY-DDD", InvalidArgument, "22008"},
		{"2001-04-01 13", "YYYY-MM-DD HH12", InvalidArgument, "22007"},
		{"2001-04-01 pm", "YYYY-MM-DD pm", InvalidArgument, "22007"},
		{"Sept 2001", "Month YYYY", InvalidArgument, "22007"},
		{"2001-04-01 10 a.m.", "YYYY-MM-DD HH AM", InvalidArgument, "22007"},
		{"Apr 05 2001", "Mon MM YYYY", InvalidArgument, "22007"},
		{"2001-03-01", "TMYYYY-MM-DD", Unimplemented, "0A000"},
		{"2001 1st", "YYYY DDSP", Unimplemented, "0A000"},
		{"2001-03-01 +00", "YYYY-MM-DD TZH", Unimplemented, "0A000"},
	}
	for _, tt := range errs {
		_, err := parseToTimestamp(tt.s, tt.f)
		var e *Error
		if !errors.As(err, &e) || e.Code != tt.code || e.SQLState != tt.sqlstate {
			t.Errorf("to_timestamp(%q, %q): error %v, want %v %s", tt.s, tt.f, err, tt.code, tt.sqlstate)
			continue
		}
		if e.Code == InvalidArgument && strings.Contains(e.Msg, tt.s) {
			t.Errorf("to_timestamp(%q, %q): error %q quotes the value", tt.s, tt.f, e.Msg)
		}
	}
	if _, err := epochToTimestamp(nanF()); err == nil {
		t.Error("to_timestamp(NaN) answered")
	}
	// Through SQL: a route bound, and a refusal of what is not a constant.
	cat := testCatalog(t)
	if _, err := Prepare(`SELECT * FROM messages WHERE channel_id = 'g' AND timestamp >= to_timestamp(1767225600) AND timestamp < TO_TIMESTAMP('2026-02-01', 'YYYY-MM-DD')`, cat); err != nil {
		t.Errorf("to_timestamp bounds: %v", err)
	}
	if _, err := Prepare(`SELECT to_timestamp('2001', id) FROM messages WHERE channel_id = 'g' AND timestamp >= '2026-01-01' AND timestamp < '2026-02-01'`, cat); !errors.Is(err, unimplemented("to_timestamp(text, text) with a format that is not a text constant")) {
		t.Errorf("to_timestamp with a column's format: %v", err)
	}
}

func nanF() float64 { return math.NaN() }

// FuzzToDate: to_date's reading of text by a format (parseToDate, toTimestampFields) never
// panics, fails only with an *Error carrying a SQLSTATE, and answers the date of the instant
// to_timestamp reads from the same text where both answer.
func FuzzToDate(f *testing.F) {
	for _, c := range [][2]string{{"2001-04-01", "YYYY-MM-DD"}, {"20010401", "YYYYMMDD"}, {"", "YYYY"}, {"-5-01-01", "YYYY-MM-DD"},
		{"2001-02-30", "YYYY-MM-DD"}, {"5874898-01-01", "YYYY-MM-DD"}, {"2001-04-01 10:61", "YYYY-MM-DD HH24:MI"}, {"abc", "YYYY"},
		{"2001-04-01T10:00", `YYYY-MM-DD"T"HH24:MI`}, {"1 PM", "HH12 AM"},
		{"2001-04-01 12:00 a.m.", "YYYY-MM-DD HH:MI P.M."}, {"01-APRIL-2001", "DD-Month-YYYY"}, {"Sun 01 apr 2001", "Dy DD Mon YYYY"},
		{"Sunday 2001 12pm", "Day YYYY HH12pm"}, {"Apr 05 2001", "Mon MM YYYY"},
		{"2001-091", "YYYY-DDD"}, {"2451996", "J"}, {"-32044", "J"}, {"2145042906", "J"}, {"2001-02-091", "YYYY-MM-DDD"},
		{"1st April 2001", "DDth Month YYYY"}, {"2001401", "YYYYFMMMDD"}, {"2001FMM04", `YYYY"FMM"MM`}, {"2001-04-01 1pm", "YYYY-MM-DD HH12pm"},
		{"2,001-04-01", "Y,YYY-MM-DD"}, {" 2, -1-04-01", "Y,YYY-MM-DD"}, {"9999999999,001", "Y,YYY"}, {"2001-00-00", "YYYY-MM-DD"},
		{"2005-W01-1", `IYYY-"W"IW-ID`}, {"2005 52 7", "IYYY IW ID"}, {"05 53 Sunday", "IY IW Day"}, {"2008 371", "IYYY IDDD"},
		{"2005-01", "IYYY-MM"}, {"519 1 8", "IYY IW ID"}, {"-5 1 0", "I IW ID"}, {"99-12-31", "YY-MM-DD"}, {"5 3", "Y D"},
		{"2005--12", "FXYYYY-MM"}, {" 2005 x12", `FXYYYY"x"MM`}, {"-9999999 99 9", "IYYY IW ID"}, {"2005 Tuesday 2", "IYYY Day ID"}} {
		f.Add(c[0], c[1])
	}
	f.Fuzz(func(t *testing.T, s, format string) {
		fuzzcount.Add()
		days, err := parseToDate(s, format)
		checkState(t, s, err)
		ts, terr := toTimestampFields(s, format)
		switch {
		case err == nil && terr != nil:
			t.Fatalf("to_date(%q, %q) = %d; to_timestamp's fields: %v", s, format, days, terr)
		case err == nil:
			y, m, d := ts.Date()
			if want := time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix() / 86400; int64(days) != want {
				t.Fatalf("to_date(%q, %q) = %d, want %d", s, format, days, want)
			}
		}
	})
}
