package ops_test

import (
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/flightsrv/flightsrv/scan/ops"
)

func mdn(months, days int32, us int64) arrow.MonthDayNanoInterval {
	return arrow.MonthDayNanoInterval{Months: months, Days: days, Nanoseconds: us * 1000}
}

// TestFormatInterval: interval_out's text under IntervalStyle postgres, as PostgreSQL 15
// writes it (SELECT interval '-1 year -2 mons +3 days -04:05:06' answers "-1 years -2 mons
// +3 days -04:05:06": every value but 1 takes the plural), and the forms the golden corpus
// compares.
func TestFormatInterval(t *testing.T) {
	for _, c := range []struct {
		in   arrow.MonthDayNanoInterval
		want string
	}{
		{mdn(14, 3, (4*3600+5*60+6)*1_000_000), "1 year 2 mons 3 days 04:05:06"},
		{mdn(-14, 3, -(4*3600+5*60+6)*1_000_000), "-1 years -2 mons +3 days -04:05:06"},
		{mdn(0, 0, 0), "00:00:00"},
		{mdn(0, 0, -1_000_000), "-00:00:01"},
		{mdn(3, 2, 0), "3 mons 2 days"},
		{mdn(0, 0, 500_000), "00:00:00.5"},
		{mdn(0, -1, 2*3600*1_000_000), "-1 days +02:00:00"},
		{mdn(0, 1, 1), "1 day 00:00:00.000001"},
		{mdn(0, 0, 100*3600*1_000_000), "100:00:00"},
		{mdn(12, 0, 0), "1 year"},
	} {
		if got := ops.FormatInterval(c.in); got != c.want {
			t.Errorf("%+v: %q, want %q", c.in, got, c.want)
		}
	}
}

// TestAge: PostgreSQL 15's age('2001-04-10', timestamp '1957-06-13') (43 years 9 mons 27 days) and the day borrowed from the earlier instant's month.
func TestAge(t *testing.T) {
	d := func(y int, m time.Month, day, h, min int) time.Time {
		return time.Date(y, m, day, h, min, 0, 0, time.UTC)
	}
	for _, c := range []struct {
		a, b time.Time
		want string
	}{
		{d(2001, 4, 10, 0, 0), d(1957, 6, 13, 0, 0), "43 years 9 mons 27 days"},
		{d(2001, 3, 1, 0, 0), d(2001, 1, 31, 12, 30), "1 mon 11:30:00"},
		{d(2001, 1, 31, 12, 30), d(2001, 3, 1, 0, 0), "-1 mons -11:30:00"},
		{d(2001, 1, 1, 0, 0), d(2001, 1, 1, 0, 0), "00:00:00"},
	} {
		if got := ops.FormatInterval(ops.Age(c.a, c.b)); got != c.want {
			t.Errorf("age(%s, %s) = %q, want %q", c.a, c.b, got, c.want)
		}
	}
}

// TestCompareIntervals: months as 30 days and days as 24 hours (PostgreSQL's interval_cmp:
// interval '1 mon' < interval '29 days 25:00' is true there).
func TestCompareIntervals(t *testing.T) {
	for _, c := range []struct {
		a, b arrow.MonthDayNanoInterval
		want int
	}{
		{mdn(1, 0, 0), mdn(0, 30, 0), 0},
		{mdn(0, 1, 0), mdn(0, 0, 24*3600*1_000_000), 0},
		{mdn(1, 0, 0), mdn(0, 29, 25*3600*1_000_000), -1},
		{mdn(0, -1, 0), mdn(0, 0, -24*3600*1_000_000-1), 1},
		{mdn(12, 0, 0), mdn(0, 360, 0), 0},
	} {
		if got := ops.CompareIntervals(c.a, c.b); got != c.want {
			t.Errorf("%+v vs %+v: %d, want %d", c.a, c.b, got, c.want)
		}
	}
}
