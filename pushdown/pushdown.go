package pushdown

import (
	"time"

	"github.com/flightsrv/flightsrv/routing"
)

// bucketCount returns the number of buckets of strategy s intersecting the non-empty range
// r, computed from calendar arithmetic (routing.BucketsForRange would allocate every
// bucket of a range that may span centuries of days).
func bucketCount(s routing.Strategy, r routing.TimeRange) int {
	if r.Empty() || !s.Valid() {
		return 0
	}
	first, last := r.Start.UTC(), r.End.UTC().Add(-time.Nanosecond)
	switch s {
	case routing.CalendarYearUTC:
		return last.Year() - first.Year() + 1
	case routing.CalendarMonthUTC:
		return (last.Year()*12 + int(last.Month())) - (first.Year()*12 + int(first.Month())) + 1
	default:
		_, a, _ := s.Bounds(first)
		_, b, _ := s.Bounds(last)
		return int((b.Unix()-a.Unix())/86400) + 1 // not Sub: a Duration saturates at 292 years
	}
}

// BucketCount returns the number of buckets of strategy s that the non-empty range r
// intersects, from calendar arithmetic (no bucket is allocated); 0 for an empty range.
func BucketCount(s routing.Strategy, r routing.TimeRange) int { return bucketCount(s, r) }
