package routing_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/flightsrv/flightsrv/routing"
)

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t.UTC()
}

func TestStrategyBounds(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		s          routing.Strategy
		at         string
		key        string
		start, end string
	}{
		// Years.
		{routing.CalendarYearUTC, "2024-06-15T12:00:00Z", "year:2024", "2024-01-01T00:00:00Z", "2025-01-01T00:00:00Z"},
		{routing.CalendarYearUTC, "2024-01-01T00:00:00Z", "year:2024", "2024-01-01T00:00:00Z", "2025-01-01T00:00:00Z"},
		{routing.CalendarYearUTC, "2024-12-31T23:59:59.999999999Z", "year:2024", "2024-01-01T00:00:00Z", "2025-01-01T00:00:00Z"},
		{routing.CalendarYearUTC, "0999-07-01T00:00:00Z", "year:0999", "0999-01-01T00:00:00Z", "1000-01-01T00:00:00Z"},
		// An offset time is bucketed by its UTC instant.
		{routing.CalendarYearUTC, "2025-01-01T00:30:00+01:00", "year:2024", "2024-01-01T00:00:00Z", "2025-01-01T00:00:00Z"},
		// Months, including every February kind.
		{routing.CalendarMonthUTC, "2024-02-29T23:59:59.999999999Z", "month:2024-02", "2024-02-01T00:00:00Z", "2024-03-01T00:00:00Z"},
		{routing.CalendarMonthUTC, "2023-02-28T00:00:00Z", "month:2023-02", "2023-02-01T00:00:00Z", "2023-03-01T00:00:00Z"},
		{routing.CalendarMonthUTC, "2000-02-10T00:00:00Z", "month:2000-02", "2000-02-01T00:00:00Z", "2000-03-01T00:00:00Z"},
		{routing.CalendarMonthUTC, "1900-02-10T00:00:00Z", "month:1900-02", "1900-02-01T00:00:00Z", "1900-03-01T00:00:00Z"},
		{routing.CalendarMonthUTC, "2100-02-10T00:00:00Z", "month:2100-02", "2100-02-01T00:00:00Z", "2100-03-01T00:00:00Z"},
		{routing.CalendarMonthUTC, "2024-12-31T23:59:59Z", "month:2024-12", "2024-12-01T00:00:00Z", "2025-01-01T00:00:00Z"},
		{routing.CalendarMonthUTC, "2024-01-01T00:00:00Z", "month:2024-01", "2024-01-01T00:00:00Z", "2024-02-01T00:00:00Z"},
		{routing.CalendarMonthUTC, "2024-04-30T23:59:59Z", "month:2024-04", "2024-04-01T00:00:00Z", "2024-05-01T00:00:00Z"},
		// Days, including leap days and the non-leap century years.
		{routing.CalendarDayUTC, "2024-02-29T00:00:00Z", "day:2024-02-29", "2024-02-29T00:00:00Z", "2024-03-01T00:00:00Z"},
		{routing.CalendarDayUTC, "2000-02-29T13:00:00Z", "day:2000-02-29", "2000-02-29T00:00:00Z", "2000-03-01T00:00:00Z"},
		{routing.CalendarDayUTC, "1900-02-28T13:00:00Z", "day:1900-02-28", "1900-02-28T00:00:00Z", "1900-03-01T00:00:00Z"},
		{routing.CalendarDayUTC, "2100-02-28T23:59:59.999999999Z", "day:2100-02-28", "2100-02-28T00:00:00Z", "2100-03-01T00:00:00Z"},
		{routing.CalendarDayUTC, "2023-02-28T12:00:00Z", "day:2023-02-28", "2023-02-28T00:00:00Z", "2023-03-01T00:00:00Z"},
		{routing.CalendarDayUTC, "2023-12-31T23:59:59.999999999Z", "day:2023-12-31", "2023-12-31T00:00:00Z", "2024-01-01T00:00:00Z"},
		{routing.CalendarDayUTC, "2024-03-01T00:30:00+01:00", "day:2024-02-29", "2024-02-29T00:00:00Z", "2024-03-01T00:00:00Z"},
		{routing.CalendarDayUTC, "2024-02-28T23:30:00-01:00", "day:2024-02-29", "2024-02-29T00:00:00Z", "2024-03-01T00:00:00Z"},
	} {
		t.Run(fmt.Sprintf("%s/%s", tc.s, tc.at), func(t *testing.T) {
			at, err := time.Parse(time.RFC3339Nano, tc.at)
			if err != nil {
				t.Fatal(err)
			}
			key, start, end := tc.s.Bounds(at)
			if key != tc.key || !start.Equal(utc(tc.start)) || !end.Equal(utc(tc.end)) {
				t.Fatalf("Bounds = %s [%s, %s), want %s [%s, %s)", key, start.Format(time.RFC3339), end.Format(time.RFC3339), tc.key, tc.start, tc.end)
			}
			if start.Location() != time.UTC || end.Location() != time.UTC {
				t.Fatalf("bounds not in UTC: %v %v", start.Location(), end.Location())
			}
			if !(routing.TimeRange{Start: start, End: end}).Contains(at) {
				t.Fatalf("[%v, %v) does not contain %v", start, end, at)
			}
		})
	}
}

func TestFebruaryLengths(t *testing.T) {
	t.Parallel()
	for year, days := range map[int]int{1900: 28, 2000: 29, 2023: 28, 2024: 29, 2100: 28, 2400: 29} {
		_, start, end := routing.CalendarMonthUTC.Bounds(time.Date(year, 2, 14, 0, 0, 0, 0, time.UTC))
		if got := int(end.Sub(start) / (24 * time.Hour)); got != days {
			t.Errorf("February %d has %d days, want %d", year, got, days)
		}
		feb29 := time.Date(year, 2, 29, 12, 0, 0, 0, time.UTC) // normalises to March 1 in common years
		key, _, _ := routing.CalendarDayUTC.Bounds(feb29)
		want := fmt.Sprintf("day:%04d-02-29", year)
		if days == 28 {
			want = fmt.Sprintf("day:%04d-03-01", year)
		}
		if key != want {
			t.Errorf("day of %d-02-29 12:00 = %s, want %s", year, key, want)
		}
	}
}

func TestStrategyNames(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		s           routing.Strategy
		name, short string
	}{
		{routing.CalendarYearUTC, "calendar_year_utc", "year"},
		{routing.CalendarMonthUTC, "calendar_month_utc", "month"},
		{routing.CalendarDayUTC, "calendar_day_utc", "day"},
	} {
		if tc.s.String() != tc.name || !tc.s.Valid() {
			t.Errorf("%v: String = %q, Valid = %v", tc.s, tc.s.String(), tc.s.Valid())
		}
		for _, n := range []string{tc.name, tc.short} {
			if got, err := routing.ParseStrategy(n); err != nil || got != tc.s {
				t.Errorf("ParseStrategy(%q) = %v, %v", n, got, err)
			}
		}
	}
	for _, bad := range []string{"", "week", "CALENDAR_DAY_UTC", "calendar_hour_utc"} {
		if _, err := routing.ParseStrategy(bad); err != routing.ErrUnknownStrategy {
			t.Errorf("ParseStrategy(%q) error = %v", bad, err)
		}
	}
	if routing.Strategy(0).Valid() || routing.Strategy(4).Valid() {
		t.Error("out-of-range strategies are valid")
	}
}

func keys(bs []routing.BucketID) string {
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = b.Key
	}
	return strings.Join(out, " ")
}

func TestBucketsForRange(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		s          routing.Strategy
		start, end string
		want       string
	}{
		{"empty", routing.CalendarDayUTC, "2024-02-29T10:00:00Z", "2024-02-29T10:00:00Z", ""},
		{"reversed", routing.CalendarDayUTC, "2024-03-01T00:00:00Z", "2024-02-29T00:00:00Z", ""},
		{"one nanosecond", routing.CalendarDayUTC, "2024-02-29T23:59:59.999999999Z", "2024-03-01T00:00:00Z", "day:2024-02-29"},
		{"inside one day", routing.CalendarDayUTC, "2024-02-29T01:00:00Z", "2024-02-29T02:00:00Z", "day:2024-02-29"},
		{"exactly one day", routing.CalendarDayUTC, "2024-02-29T00:00:00Z", "2024-03-01T00:00:00Z", "day:2024-02-29"},
		{"end on a boundary excludes the next day", routing.CalendarDayUTC, "2024-02-28T12:00:00Z", "2024-03-01T00:00:00Z", "day:2024-02-28 day:2024-02-29"},
		{"one nanosecond past a boundary", routing.CalendarDayUTC, "2024-02-28T12:00:00Z", "2024-03-01T00:00:00.000000001Z", "day:2024-02-28 day:2024-02-29 day:2024-03-01"},
		{"no leap day in 2100", routing.CalendarDayUTC, "2100-02-27T12:00:00Z", "2100-03-02T00:00:00Z", "day:2100-02-27 day:2100-02-28 day:2100-03-01"},
		{"leap day in 2000", routing.CalendarDayUTC, "2000-02-28T00:00:00Z", "2000-03-01T00:00:01Z", "day:2000-02-28 day:2000-02-29 day:2000-03-01"},
		{"days across a year", routing.CalendarDayUTC, "2023-12-30T23:00:00Z", "2024-01-02T00:00:00Z", "day:2023-12-30 day:2023-12-31 day:2024-01-01"},
		{"months across a year", routing.CalendarMonthUTC, "2023-11-15T00:00:00Z", "2024-02-01T00:00:00Z", "month:2023-11 month:2023-12 month:2024-01"},
		{"months over February 1900", routing.CalendarMonthUTC, "1900-01-31T00:00:00Z", "1900-03-01T00:00:00.000000001Z", "month:1900-01 month:1900-02 month:1900-03"},
		{"years", routing.CalendarYearUTC, "1999-06-01T00:00:00Z", "2001-01-01T00:00:00Z", "year:1999 year:2000"},
		{"years past a boundary", routing.CalendarYearUTC, "1999-12-31T23:59:59Z", "2001-01-01T00:00:00.5Z", "year:1999 year:2000 year:2001"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := routing.TimeRange{Start: utc(tc.start), End: utc(tc.end)}
			got := routing.BucketsForRange("tbl", []byte("pk"), tc.s, r)
			if keys(got) != tc.want {
				t.Fatalf("BucketsForRange = %q, want %q", keys(got), tc.want)
			}
			for i, b := range got {
				if b.TableID != "tbl" || string(b.PartitionKey) != "pk" || b.Strategy != tc.s {
					t.Fatalf("bucket %d = %+v", i, b)
				}
				if !b.Start.Before(r.End) || !r.Start.Before(b.End) {
					t.Fatalf("bucket %s does not intersect the range", b.Key)
				}
				if i > 0 && !got[i-1].End.Equal(b.Start) {
					t.Fatalf("buckets %s and %s are not contiguous", got[i-1].Key, b.Key)
				}
			}
			if len(got) > 0 && (got[0].Start.After(r.Start) || got[len(got)-1].End.Before(r.End)) {
				t.Fatalf("buckets [%v, %v) do not cover the range", got[0].Start, got[len(got)-1].End)
			}
		})
	}
}

func TestRecentBuckets(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		s    routing.Strategy
		now  string
		n    int
		want string
	}{
		{routing.CalendarDayUTC, "2024-03-01T12:00:00Z", 1, "day:2024-03-01"},
		{routing.CalendarDayUTC, "2024-03-01T12:00:00Z", 2, "day:2024-02-29 day:2024-03-01"},
		{routing.CalendarDayUTC, "2024-03-01T00:00:00Z", 3, "day:2024-02-28 day:2024-02-29 day:2024-03-01"},
		{routing.CalendarDayUTC, "2100-03-01T00:00:00Z", 2, "day:2100-02-28 day:2100-03-01"},
		{routing.CalendarDayUTC, "1900-03-01T08:00:00Z", 2, "day:1900-02-28 day:1900-03-01"},
		{routing.CalendarDayUTC, "2024-01-01T00:00:00Z", 2, "day:2023-12-31 day:2024-01-01"},
		{routing.CalendarMonthUTC, "2000-03-15T00:00:00Z", 3, "month:2000-01 month:2000-02 month:2000-03"},
		{routing.CalendarMonthUTC, "2024-01-31T23:59:59Z", 2, "month:2023-12 month:2024-01"},
		{routing.CalendarYearUTC, "2024-01-01T00:00:00Z", 2, "year:2023 year:2024"},
		{routing.CalendarYearUTC, "2024-12-31T23:59:59.999999999Z", 3, "year:2022 year:2023 year:2024"},
	} {
		got := routing.RecentBuckets("tbl", []byte("pk"), tc.s, utc(tc.now), tc.n)
		if keys(got) != tc.want {
			t.Errorf("RecentBuckets(%s, %s, %d) = %q, want %q", tc.s, tc.now, tc.n, keys(got), tc.want)
		}
		for i := 1; i < len(got); i++ {
			if !got[i-1].End.Equal(got[i].Start) {
				t.Errorf("RecentBuckets(%s, %s): %s and %s are not contiguous", tc.s, tc.now, got[i-1].Key, got[i].Key)
			}
		}
	}
}

func TestTimeRange(t *testing.T) {
	t.Parallel()
	a, b, c, d := utc("2024-01-01T00:00:00Z"), utc("2024-01-02T00:00:00Z"), utc("2024-01-03T00:00:00Z"), utc("2024-01-04T00:00:00Z")
	r := routing.TimeRange{Start: a, End: c}
	switch {
	case r.Empty() || !(routing.TimeRange{Start: a, End: a}).Empty() || !(routing.TimeRange{Start: b, End: a}).Empty():
		t.Error("Empty")
	case !r.Contains(a) || r.Contains(c) || !r.Contains(c.Add(-time.Nanosecond)) || r.Contains(a.Add(-time.Nanosecond)):
		t.Error("Contains is not half-open")
	case !r.Covers(routing.TimeRange{Start: a, End: b}) || !r.Covers(r) || r.Covers(routing.TimeRange{Start: b, End: d}):
		t.Error("Covers")
	case r.Intersect(routing.TimeRange{Start: b, End: d}) != (routing.TimeRange{Start: b, End: c}):
		t.Error("Intersect of overlapping ranges")
	case !r.Intersect(routing.TimeRange{Start: c, End: d}).Empty():
		t.Error("Intersect of adjacent ranges is not empty")
	}
}

func TestBucketIdentity(t *testing.T) {
	t.Parallel()
	at := utc("2024-02-29T12:00:00Z")
	m := routing.BucketFor("messages", []byte("shared"), routing.CalendarDayUTC, at)
	r := routing.BucketFor("reactions", []byte("shared"), routing.CalendarDayUTC, at)
	if m.Equal(r) || m.CacheKey() == r.CacheKey() {
		t.Fatal("buckets of two tables with the same partition and key are equal")
	}
	if !m.Equal(routing.BucketFor("messages", []byte("shared"), routing.CalendarDayUTC, at.Add(time.Hour))) {
		t.Fatal("two instants of one day give different buckets")
	}
	// Equal compares fields, not a concatenation.
	x := routing.BucketID{TableID: "a", PartitionKey: []byte("b\x00c"), Key: "k"}
	y := routing.BucketID{TableID: "a\x00b", PartitionKey: []byte("c"), Key: "k"}
	if x.Equal(y) {
		t.Fatal("Equal confuses table id and partition key")
	}
}
