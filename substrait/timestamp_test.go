package substrait

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseTimestamp(t *testing.T) {
	t.Parallel()
	utc := func(y int, mo time.Month, d, h, mi, s, ns int) time.Time {
		return time.Date(y, mo, d, h, mi, s, ns, time.UTC)
	}
	tests := []struct {
		in   string
		want time.Time
	}{
		{"2026-01-01T00:00:00Z", utc(2026, 1, 1, 0, 0, 0, 0)},
		{"2026-01-01", utc(2026, 1, 1, 0, 0, 0, 0)},
		{" 2026-01-01 ", utc(2026, 1, 1, 0, 0, 0, 0)},
		{"2026-01-01 10:30", utc(2026, 1, 1, 10, 30, 0, 0)},
		{"2026-01-01t10:30:05", utc(2026, 1, 1, 10, 30, 5, 0)},
		{"2026-01-01T10:30:05.5", utc(2026, 1, 1, 10, 30, 5, 500_000_000)},
		{"2026-01-01T10:30:05.123456789Z", utc(2026, 1, 1, 10, 30, 5, 123_456_789)},
		{"2026-01-01T10:30:05+02", utc(2026, 1, 1, 8, 30, 5, 0)},
		{"2026-01-01T10:30:05+0230", utc(2026, 1, 1, 8, 0, 5, 0)},
		{"2026-01-01T10:30:05-05:00", utc(2026, 1, 1, 15, 30, 5, 0)},
		{"2026-01-01 00:00:00 +01:00", utc(2025, 12, 31, 23, 0, 0, 0)},
		{"2026-01-01 00:00:00 UTC", utc(2026, 1, 1, 0, 0, 0, 0)},
		{"2026-01-01 00:00:00gmt", utc(2026, 1, 1, 0, 0, 0, 0)},
		{"2024-02-29T23:59:59.999999999z", utc(2024, 2, 29, 23, 59, 59, 999_999_999)},
		{"1969-12-31T23:59:59Z", utc(1969, 12, 31, 23, 59, 59, 0)},
		// DateStyle ISO, MDY forms and zone names PostgreSQL 15 reads (its answers).
		{"2026-1-01", utc(2026, 1, 1, 0, 0, 0, 0)},
		{"Jan 5 2026", utc(2026, 1, 5, 0, 0, 0, 0)},
		{"April 1, 2001 10:00", utc(2001, 4, 1, 10, 0, 0, 0)},
		{"1 april 2001", utc(2001, 4, 1, 0, 0, 0, 0)},
		{"04/01/2001 10:00", utc(2001, 4, 1, 10, 0, 0, 0)},
		{"2001-04-01 10:00 America/Chicago", utc(2001, 4, 1, 15, 0, 0, 0)},
		{"2001-07-01 10:00 america/chicago", utc(2001, 7, 1, 15, 0, 0, 0)},
		{"2001-04-01 10:00 EST", utc(2001, 4, 1, 15, 0, 0, 0)},
		{"2001-04-01 10:00 EST5EDT", utc(2001, 4, 1, 14, 0, 0, 0)},
		{"2001-04-01 10:00+5", utc(2001, 4, 1, 5, 0, 0, 0)},
		{"2001-04-01 10:00:00 -3", utc(2001, 4, 1, 13, 0, 0, 0)},
		{"2001-04-01 10:00+05:30:15", utc(2001, 4, 1, 4, 29, 45, 0)},
		{"2026-01-01T10:30 Europe/Paris", utc(2026, 1, 1, 9, 30, 0, 0)},
		{"20010401", utc(2001, 4, 1, 0, 0, 0, 0)},
		{"010401", utc(2001, 4, 1, 0, 0, 0, 0)},
	}
	for _, tt := range tests {
		got, err := ParseTimestamp(tt.in)
		if err != nil || !got.Equal(tt.want) || got.Location() != time.UTC {
			t.Errorf("ParseTimestamp(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
	// Text ParseTimestamp does not read, with the SQLSTATE of its refusal: PostgreSQL 15's
	// timestamptz_in's where PostgreSQL refuses the text (22007 invalid input syntax, 22008
	// field out of range, 22009 zone displacement out of range, checked on the real server),
	// 0A000 where PostgreSQL reads it (special values, other forms) or may read it (a word
	// that could be a zone abbreviation).
	bad := []struct{ in, state string }{
		{"", "22007"}, {"soon", "22007"}, {"sekrit-time", "22007"}, {"2026-01-01 10:00:00 q", "22007"},
		{"2026-01-01 10:00 xyzabcd", "22007"}, {"2026-01-01 \u2603", "22007"},
		{"yesterday", "0A000"}, {"infinity", "0A000"}, {"-infinity", "0A000"}, {"epoch", "0A000"}, {"now", "0A000"},
		{"2026", "22007"}, {"2026-01-01 est", "0A000"}, {"2026-01-01 10:00 CET", "0A000"}, {"2026-01-01 10:00 Mars/Base", "0A000"},
		{"2026-13-01", "22008"}, {"2026-02-29", "22008"}, {"2026-01-32", "22008"}, {"0000-01-01", "22008"},
		{"2026-01-01T10:60", "22008"}, {"2026-01-01T10:30:61", "22008"}, {"2026-01-01T25:00", "22008"},
		{"2026-01-01T24:00:01", "22008"}, {"2026-01-01 23:59:60.5", "22008"}, {"2026-01-01 25:00 +16", "22008"},
		{"2026-01-01T10:30:05.", "0A000"}, {"2026-01-01T10:30:05.1234567890", "0A000"},
		{"2026-01-01T10", "0A000"},
		{"2026-01-01T10:30+16", "22009"}, {"2026-01-01T10:30+02:60", "22009"},
		{"2026-01-01T10:30Zjunk", "0A000"}, {"2026-01-01 10:30 +", "0A000"}, {"2026-01-01T10:30:05 Z Z", "0A000"},
	}
	for _, b := range bad {
		if _, err := ParseTimestamp(b.in + "x"); err == nil {
			t.Errorf("ParseTimestamp(%q) succeeded", b.in+"x")
		}
		_, err := ParseTimestamp(b.in)
		var e *Error
		if !errors.As(err, &e) || e.SQLState != b.state || b.in != "" && strings.Contains(e.Msg, b.in) && !slices.Contains(pgSpecialDatetimes, b.in) {
			t.Errorf("ParseTimestamp(%q) error = %v, want SQLSTATE %s without the text (special values are named)", b.in, err, b.state)
			continue
		}
		if want := map[string]Code{"0A000": Unimplemented}[b.state]; want != 0 && e.Code != want || want == 0 && e.Code != InvalidArgument {
			t.Errorf("ParseTimestamp(%q) code %s", b.in, e.Code)
		}
	}
	// Fractions of a second of SQL text (parseTimestampSQL, readTimestamp) as PostgreSQL 15
	// reads them (checked on the real server): any number of digits, rounded to microseconds,
	// the double's product half to even, a whole second carried into the time.
	for in, want := range map[string]time.Time{
		"2001-04-01 10:00:59.9999999":        utc(2001, 4, 1, 10, 1, 0, 0),
		"2001-04-01 10:00:00.1234565":        utc(2001, 4, 1, 10, 0, 0, 123_456_000),
		"2001-04-01 10:00:00.1234575":        utc(2001, 4, 1, 10, 0, 0, 123_458_000),
		"2001-04-01 10:00:00.0000005":        utc(2001, 4, 1, 10, 0, 0, 0),
		"2001-04-01 10:00:00.0000015":        utc(2001, 4, 1, 10, 0, 0, 2_000),
		"2001-04-01 10:00:00.0000025":        utc(2001, 4, 1, 10, 0, 0, 2_000),
		"2001-04-01 10:00:00.2500005":        utc(2001, 4, 1, 10, 0, 0, 250_000_000),
		"2001-04-01 10:00:00.9999994999":     utc(2001, 4, 1, 10, 0, 0, 999_999_000),
		"2001-04-01 10:00:00.9999995":        utc(2001, 4, 1, 10, 0, 1, 0),
		"2001-04-01 10:00:00.12345678901234": utc(2001, 4, 1, 10, 0, 0, 123_457_000),
		"2001-04-01 23:59:59.9999999":        utc(2001, 4, 2, 0, 0, 0, 0),
		"2001-04-01 10:00:60.5":              utc(2001, 4, 1, 10, 1, 0, 500_000_000),
		"2001-04-01 10:00:60.9999999":        utc(2001, 4, 1, 10, 1, 1, 0),
		"2001-04-01 24:00:00.0000004":        utc(2001, 4, 2, 0, 0, 0, 0),
		"2001-04-01 23:59:60.0000004":        utc(2001, 4, 2, 0, 0, 0, 0),
		"2001-04-01 10:00:00.":               utc(2001, 4, 1, 10, 0, 0, 0),
		"2001-04-01 10:00:00.1234567+05:30":  utc(2001, 4, 1, 4, 30, 0, 123_457_000),
	} {
		if got, err := parseTimestampSQL(in); err != nil || !got.Equal(want) {
			t.Errorf("parseTimestampSQL(%q) = %v, %v; want %v", in, got, err, want)
		}
		if got, err := readTimestamp(in, false); err != nil || !got.Equal(want) {
			t.Errorf("readTimestamp(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"2001-04-01 24:00:00.5", "2001-04-01 23:59:60.5", "2001-04-01 24:00:00.0000015"} {
		if _, err := parseTimestampSQL(in); err == nil {
			t.Errorf("parseTimestampSQL(%q) succeeded; PostgreSQL: 22008", in)
		}
	}
	// PostgreSQL reads 24:00:00 and a leap second as the next midnight and minute.
	for _, s := range []string{"2026-01-01T24:00:00", "2026-01-01 23:59:60", "2026-01-01 24:00"} {
		if got, err := ParseTimestamp(s); err != nil || !got.Equal(utc(2026, 1, 2, 0, 0, 0, 0)) {
			t.Errorf("ParseTimestamp(%q) = %v, %v; want 2026-01-02 00:00:00", s, got, err)
		}
	}
	for _, s := range []string{"1677-09-21T00:00:00Z", "2262-04-12T00:00:00Z", "9999-12-31"} {
		if _, err := ParseTimestamp(s); !errors.Is(err, ErrTimestampOutOfRange) {
			t.Errorf("ParseTimestamp(%q) error = %v, want ErrTimestampOutOfRange", s, err)
		}
	}
	// date_in: a day or an hour out of range is 22008, text without a date 22007.
	for in, state := range map[string]string{"2026-01-01 25:00": "22008", "2026-02-30": "22008", "0001478110": "22008", "200104011": "22008", "12345": "22007", "garbage": "22007", "2026-02-30x": "22007"} {
		var e *Error
		if _, err := parseDate(in); !errors.As(err, &e) || e.SQLState != state {
			t.Errorf("parseDate(%q) = %v, want SQLSTATE %s", in, err, state)
		} else if state == "22007" && e.Msg != "invalid input syntax for type date" {
			t.Errorf("parseDate(%q) message %q", in, e.Msg)
		}
	}
}
