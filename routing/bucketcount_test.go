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

// TestBucketCountIn: the buckets of a union of disjoint ranges, some sharing a bucket, are
// counted as BucketsForRanges lists them, each bucket once, in bound order.
func TestBucketCountIn(t *testing.T) {
	t.Parallel()
	base := time.Date(2024, 12, 30, 22, 0, 0, 0, time.UTC)
	h := func(n int) time.Time { return base.Add(time.Duration(n) * time.Hour) }
	sets := [][]TimeRange{
		{{h(0), h(1)}, {h(3), h(4)}},
		{{h(0), h(1)}, {h(30), h(31)}, {h(32), h(33)}, {h(24 * 40), h(24*40 + 1)}},
		{{h(0), h(100)}, {h(100 + 24*400), h(101 + 24*400)}},
		{{h(5), h(5)}, {h(6), h(7)}},
	}
	for _, s := range []Strategy{CalendarYearUTC, CalendarMonthUTC, CalendarDayUTC} {
		for _, rs := range sets {
			bs := BucketsForRanges("t", []byte("p"), s, rs)
			if got := BucketCountIn(s, rs); got != len(bs) {
				t.Errorf("%v %v: BucketCountIn = %d, BucketsForRanges lists %d", s, rs, got, len(bs))
			}
			for i := 1; i < len(bs); i++ {
				if !bs[i-1].End.After(bs[i-1].Start) || bs[i].Start.Before(bs[i-1].End) {
					t.Errorf("%v %v: buckets out of order: %v", s, rs, bs)
				}
			}
		}
	}
}
