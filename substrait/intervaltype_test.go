package substrait_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/flightsrv/flightsrv/internal/fuzzcount"
	"github.com/flightsrv/flightsrv/substrait"
)

// intervalFuzzSQL seeds FuzzSQL with the interval, smallint, date ± interval and real forms.
var intervalFuzzSQL = []string{
	`SELECT 0x1F, 1_000.5 WHERE 1 > 1_000`,
	`SELECT INTERVAL '1' DAY, INTERVAL '1:30' MINUTE TO SECOND, INTERVAL '1-2' YEAR TO MONTH, interval(2) '1.2345', date_bin(INTERVAL '15' MINUTE, timestamp, '2001-01-01') FROM messages WHERE channel_id = 'general' AND timestamp >= 'April 1, 2026' AND timestamp < '2026-05-01 10:00 America/Chicago'`,
	`SELECT INTERVAL '1 day 02:03:04'::text, INTERVAL '1.5 months' * 2.5, -INTERVAL '1 hour', INTERVAL '1 mon' = INTERVAL '30 days'`,
	`SELECT timestamp - TIMESTAMPTZ '2026-01-01 00:00:00+00' AS d, age(timestamp, TIMESTAMPTZ '2025-02-28 00:00:00+00') FROM messages WHERE channel_id = 'general' AND timestamp >= '2026-01-01' AND timestamp < '2026-02-01' ORDER BY d`,
	`SELECT extract(epoch from max(timestamp) - min(timestamp)), justify_interval(INTERVAL '40 days 25:00') FROM messages WHERE channel_id = 'general' AND timestamp >= '2026-01-01' AND timestamp < '2026-02-01'`,
	`SELECT 32767::smallint + 1::smallint, '-7'::int2 * 2::int2, -(3::smallint)`,
	// date ± interval (a timestamp without time zone) and real (float4).
	`SELECT DATE '2001-01-31' + INTERVAL '1 month', INTERVAL '1 day' + timestamp::date, timestamp::date - INTERVAL '1 mon 2 hours' FROM messages WHERE channel_id = 'general' AND timestamp >= '2026-01-01' AND timestamp < '2026-02-01'`,
	`SELECT 0.1::real::text, length(id)::real / 3::real, -(length(id)::real), avg(length(id)::real) OVER (), '1e40'::real, true::real FROM messages WHERE channel_id = 'general' AND timestamp >= '2026-01-01' AND timestamp < '2026-02-01'`,
}

// FuzzIntervalFields: interval_in's reading of interval text (intervaltype.go) never
// panics, fails only with a planning error, keeps the time within the executor's range, and
// reads "… ago" as the negation of "…".
func FuzzIntervalFields(f *testing.F) {
	for _, s := range []string{"1 day 02:03:04", "-1 second", "3 months 2 days", "0.5 seconds", "1.5 years", "1.5 months",
		"1 day ago", "@ 2 weeks 1.25 days", "-1 days +02:00:00", "1 year -1 mon", "100:00:00", "1e3 days", "P1D", "",
		"2 mons 3 days 04:05:06.123456789", "9999999999 hours", "1.0000001 millennium", "+1:2:3.5", "1 quarter",
		"3 4:05:06", "1-2", "-1-2 3", "1 2 hours", "1 day 1 day", "P1Y2M3DT4H5M6S", "P1.5W", "PT-1H30M", "P0001-02-03", "1:2.5", "1:60",
		"2147483647 days 1 day", "0.0000015 s", "- 5", "1.", "ago 1 day", "-2147483648 days", "-2147483648 mons ago"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fuzzcount.Add()
		m, d, us, err := substrait.ParseIntervalFieldsForTest(s)
		if err != nil {
			var e *substrait.Error
			if !errors.As(err, &e) {
				t.Fatalf("%q: %v is no planning error", s, err)
			}
			return
		}
		if us > substrait.MaxIntervalMicros || us < -substrait.MaxIntervalMicros {
			t.Fatalf("%q: %d µs is out of the executor's range", s, us)
		}
		if strings.Contains(strings.ToLower(s), "ago") {
			return
		}
		nm, nd, nus, err := substrait.ParseIntervalFieldsForTest(s + " ago")
		if err == nil && (nm != -m || nd != -d || nus != -us) {
			t.Fatalf("%q ago: %d %d %d, want the negation of %d %d %d", s, nm, nd, nus, m, d, us)
		}
	})
}

// TestIntervalFields: interval_in's fields of literals whose PostgreSQL reading is known
// (SELECT '…'::interval in PostgreSQL 15 answers the commented value; the golden corpus
// compares the same readings end to end).
func TestIntervalFields(t *testing.T) {
	for _, c := range []struct {
		in      string
		m, d    int32
		us      int64
		comment string
	}{
		{"1 day 02:03:04", 0, 1, 7384_000_000, "1 day 02:03:04"},
		{"-2147483648 days", 0, -2147483648, 0, "-2147483648 days (strtoint reads the sign)"},
		{"-02147483648 mons", -2147483648, 0, 0, "-178956970 years -8 mons"},
		{"-2147483648.5 days", 0, -2147483648, -43_200_000_000, "-2147483648 days -12:00:00"},
		{"1.5 years", 18, 0, 0, "1 year 6 mons"},
		{"1.1 years", 13, 0, 0, "1 year 1 mon"},
		{"1.5 months", 1, 15, 0, "1 mon 15 days"},
		{"1.25 days", 0, 1, 21600_000_000, "1 day 06:00:00"},
		{"2 weeks 1.25 days", 0, 15, 21600_000_000, "15 days 06:00:00"},
		{"-1 day 2 hours", 0, -1, 7200_000_000, "-1 days +02:00:00"},
		{"1 day ago", 0, -1, 0, "-1 days"},
		{"0.5 seconds", 0, 0, 500_000, "00:00:00.5"},
		{"3 4:05:06", 0, 3, 14706_000_000, "3 days 04:05:06"},
		{"1-2", 14, 0, 0, "1 year 2 mons"},
		{"-1-2", -14, 0, 0, "-1 years -2 mons"},
		{"1 2 hours", 0, 1, 7200_000_000, "1 day 02:00:00"},
		{"1 day -1", 0, 1, -1_000_000, "1 day -00:00:01"},
		{"1:2.5", 0, 0, 62_500_000, "00:01:02.5"},
		{"1:59:60", 0, 0, 7200_000_000, "02:00:00"},
		{"0.0000015 s", 0, 0, 1, "00:00:00.000001"},
		{"P1.5W", 0, 10, 43200_000_000, "10 days 12:00:00"},
		{"P1Y-2M", 10, 0, 0, "10 mons"},
		{"PT-1H30M", 0, 0, -1800_000_000, "-00:30:00"},
		{"1 day ago 2 hours", 0, -1, -7200_000_000, "-1 days -02:00:00"},
	} {
		m, d, us, err := substrait.ParseIntervalFieldsForTest(c.in)
		if err != nil || m != c.m || d != c.d || us != c.us {
			t.Errorf("%q: %d %d %d %v, want %d %d %d (%s)", c.in, m, d, us, err, c.m, c.d, c.us, c.comment)
		}
	}
}

// TestIntervalFieldErrors: text PostgreSQL 15's interval_in refuses is refused with its
// SQLSTATE (SELECT '…'::interval in PostgreSQL 15).
func TestIntervalFieldErrors(t *testing.T) {
	for in, state := range map[string]string{"1 2": "22007", "1:00 5": "22007", "1 day 1 day": "22007", "1 hour 1:00": "22007", "ago": "22007",
		"1 quarter": "22007", "1 ago": "22007", "p1d": "22007", " P1D ": "22007", "P1D2H": "22007", "P1Y2": "22007", "P": "22007", "-.5": "22007",
		"1:60": "22015", "2147483648 days": "22015", "2147483647 days 1 day": "22015", "-2147483648 days ago": "22015", "-2147483649 days": "22015", "P0001-02-03T04:05:06": "0A000"} {
		_, _, _, err := substrait.ParseIntervalFieldsForTest(in)
		var e *substrait.Error
		if !errors.As(err, &e) || e.SQLState != state {
			t.Errorf("%q: %v, want SQLSTATE %s", in, err, state)
		}
	}
}
