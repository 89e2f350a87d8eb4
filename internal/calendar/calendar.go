// Package calendar holds PostgreSQL's calendar arithmetic in UTC that both the SQL binder
// (package substrait, folding constants) and the executor's kernels (package scan/ops,
// evaluating columns) apply, so that a constant and a column compute alike. It imports only
// the standard library.
package calendar

import "time"

// AddMonths adds n calendar months to t (UTC) as PostgreSQL's timestamp + interval does with
// an interval's months: the day of month is clamped to the last day of the target month
// (January 31 + 1 month is February 28, or 29 in a leap year); the time of day is kept. n
// beyond ±12,000,000 (a million years) saturates: the result is outside any timestamp range
// its callers accept anyway.
func AddMonths(t time.Time, n int64) time.Time {
	const limit = 12_000_000
	if n > limit {
		n = limit
	} else if n < -limit {
		n = -limit
	}
	t = t.UTC()
	total := int64(t.Year())*12 + int64(t.Month()-1) + n
	y, m := int(total/12), time.Month(total%12+1)
	if total%12 < 0 {
		y, m = int((total-11)/12), time.Month((total%12+12)%12+1)
	}
	last := time.Date(y, m+1, 0, 0, 0, 0, 0, time.UTC).Day()
	d := min(t.Day(), last)
	return time.Date(y, m, d, t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC)
}

// ExtractScale is the scale of PostgreSQL 15's numeric answer to extract(field FROM x) of a
// timestamp (with or without time zone) or, dateArg, a date (timestamp_part_common and
// extract_date): 6 for epoch and second, 3 for millisecond, 0 for the other fields and for the
// epoch of a date. field is the upper-case name (EPOCH, SECOND, HOUR…).
func ExtractScale(field string, dateArg bool) int32 {
	switch field {
	case "EPOCH":
		if dateArg {
			return 0
		}
		return 6
	case "SECOND":
		return 6
	case "MILLISECOND":
		return 3
	}
	return 0
}
