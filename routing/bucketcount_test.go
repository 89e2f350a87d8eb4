package routing

import (
	"testing"
	"time"
)

func TestBucketCount(t *testing.T) {
	t.Parallel()
	base := time.Date(2024, 12, 30, 22, 0, 0, 0, time.UTC)
	for _, s := range []Strategy{CalendarYearUTC, CalendarMonthUTC, CalendarDayUTC} {
		for _, start := range []time.Duration{0, time.Nanosecond, 2 * time.Hour, 49 * time.Hour} {
			for _, length := range []time.Duration{time.Nanosecond, time.Hour, 2 * time.Hour, 26 * time.Hour, 40 * 24 * time.Hour, 800 * 24 * time.Hour} {
				r := TimeRange{Start: base.Add(start), End: base.Add(start + length)}
				want := len(BucketsForRange("t", []byte("p"), s, r))
				if got := BucketCount(s, r); got != want {
					t.Errorf("%v %v: bucketCount = %d, want %d", s, r, got, want)
				}
			}
		}
	}
	if got := BucketCount(CalendarDayUTC, TimeRange{Start: base, End: base}); got != 0 {
		t.Errorf("empty range: %d", got)
	}
}
