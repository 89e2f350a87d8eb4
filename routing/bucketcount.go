package routing

import "time"

// bucketCount returns the number of buckets of strategy s intersecting the non-empty range
// r, computed from calendar arithmetic (BucketsForRange would allocate every
// bucket of a range that may span centuries of days).
func bucketCount(s Strategy, r TimeRange) int {
	if r.Empty() || !s.Valid() {
		return 0
	}
	first, last := r.Start.UTC(), r.End.UTC().Add(-time.Nanosecond)
	switch s {
	case CalendarYearUTC:
		return last.Year() - first.Year() + 1
	case CalendarMonthUTC:
		return (last.Year()*12 + int(last.Month())) - (first.Year()*12 + int(first.Month())) + 1
	default:
		_, a, _ := s.Bounds(first)
		_, b, _ := s.Bounds(last)
		return int((b.Unix()-a.Unix())/86400) + 1 // not Sub: a Duration saturates at 292 years
	}
}

// BucketCount returns the number of buckets of strategy s that the non-empty range r
// intersects, from calendar arithmetic (no bucket is allocated); 0 for an empty range. The
// planner bounds a query's buckets (--max-buckets) and EXPLAIN counts them with it.
func BucketCount(s Strategy, r TimeRange) int { return bucketCount(s, r) }

// BucketCountIn returns the number of buckets of strategy s that the union of the ranges rs
// (sorted by Start and disjoint) intersects, a bucket two ranges share counted once, from
// calendar arithmetic as BucketCount.
func BucketCountIn(s Strategy, rs []TimeRange) int {
	n, last := 0, ""
	for _, r := range rs {
		if r.Empty() || !s.Valid() {
			continue
		}
		n += bucketCount(s, r)
		if first, _, _ := s.Bounds(r.Start.UTC()); first == last {
			n--
		}
		last, _, _ = s.Bounds(r.End.UTC().Add(-time.Nanosecond))
	}
	return n
}
