package routing

import (
	"errors"
	"fmt"
	"time"
)

// Strategy is a table's bucket strategy: how event times map to buckets. All strategies
// are UTC calendar intervals, half-open [start, end) (docs/pulpitum-v4.md §2). The strategy
// of a table id is immutable.
type Strategy uint8

const (
	// CalendarYearUTC buckets by UTC calendar year; keys look like "year:2001".
	CalendarYearUTC Strategy = iota + 1
	// CalendarMonthUTC buckets by UTC calendar month; keys look like "month:2001-02".
	CalendarMonthUTC
	// CalendarDayUTC buckets by UTC calendar day; keys look like "day:2001-02-28".
	CalendarDayUTC
)

// ErrUnknownStrategy is returned by ParseStrategy for a name that is not one of the three
// persisted strategy names.
var ErrUnknownStrategy = errors.New("routing: unknown bucket strategy")

// String returns the persisted snake_case name (the bucket_strategy column and the manifest's
// bucket.strategy field): calendar_year_utc, calendar_month_utc or calendar_day_utc.
func (s Strategy) String() string {
	switch s {
	case CalendarYearUTC:
		return "calendar_year_utc"
	case CalendarMonthUTC:
		return "calendar_month_utc"
	case CalendarDayUTC:
		return "calendar_day_utc"
	}
	return fmt.Sprintf("strategy(%d)", uint8(s))
}

// ParseStrategy accepts a persisted name (calendar_month_utc) or a short one (month).
func ParseStrategy(name string) (Strategy, error) {
	switch name {
	case "calendar_year_utc", "year":
		return CalendarYearUTC, nil
	case "calendar_month_utc", "month":
		return CalendarMonthUTC, nil
	case "calendar_day_utc", "day":
		return CalendarDayUTC, nil
	}
	return 0, ErrUnknownStrategy
}

// Valid reports whether s is one of the three strategies.
func (s Strategy) Valid() bool { return s >= CalendarYearUTC && s <= CalendarDayUTC }

// Bounds returns the bucket key and the UTC half-open bounds of the bucket containing t.
// Keys are zero padded ("month:2001-02"); callers must order buckets by bounds, never by key.
func (s Strategy) Bounds(t time.Time) (key string, start, end time.Time) {
	t = t.UTC()
	switch s {
	case CalendarYearUTC:
		start = time.Date(t.Year(), time.January, 1, 0, 0, 0, 0, time.UTC)
		return fmt.Sprintf("year:%04d", t.Year()), start, start.AddDate(1, 0, 0)
	case CalendarMonthUTC:
		start = time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
		return fmt.Sprintf("month:%04d-%02d", t.Year(), int(t.Month())), start, start.AddDate(0, 1, 0)
	case CalendarDayUTC:
		start = time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
		return fmt.Sprintf("day:%04d-%02d-%02d", t.Year(), int(t.Month()), t.Day()), start, start.AddDate(0, 0, 1)
	}
	panic("routing: invalid bucket strategy " + s.String())
}

// TimeRange is a half-open UTC interval [Start, End). A zero-length or reversed range is empty.
type TimeRange struct {
	Start, End time.Time
}

// Empty reports whether the range holds no instant (Start >= End).
func (r TimeRange) Empty() bool { return !r.Start.Before(r.End) }

// Contains reports whether t lies in [Start, End).
func (r TimeRange) Contains(t time.Time) bool { return !t.Before(r.Start) && t.Before(r.End) }

// Covers reports whether r contains every instant of o.
func (r TimeRange) Covers(o TimeRange) bool { return !o.Start.Before(r.Start) && !o.End.After(r.End) }

// Intersect returns the common part of r and o (possibly empty).
func (r TimeRange) Intersect(o TimeRange) TimeRange {
	out := r
	if o.Start.After(out.Start) {
		out.Start = o.Start
	}
	if o.End.Before(out.End) {
		out.End = o.End
	}
	return out
}

// BucketID names one physical bucket: the primary key (table_id, partition_key, bucket_key)
// of pulpitum_v4_bucket_metadata plus its strategy and persisted UTC bounds.
// PartitionKey is owned by the BucketID and must not be modified after construction.
type BucketID struct {
	TableID      string
	PartitionKey []byte
	Strategy     Strategy
	Key          string
	Start, End   time.Time
}

// Range returns the bucket's half-open interval.
func (b BucketID) Range() TimeRange { return TimeRange{b.Start, b.End} }

// Equal reports whether two bucket ids are identical field for field (the manifest check of
// docs/pulpitum-v4.md §1.5, step 3).
func (b BucketID) Equal(o BucketID) bool {
	return b.TableID == o.TableID && string(b.PartitionKey) == string(o.PartitionKey) &&
		b.Strategy == o.Strategy && b.Key == o.Key && b.Start.Equal(o.Start) && b.End.Equal(o.End)
}

// CacheKey returns a string identifying the bucket, for map keys. It contains the partition
// value and must never be logged or used as a metric label.
func (b BucketID) CacheKey() string {
	return b.TableID + "\x00" + string(b.PartitionKey) + "\x00" + b.Key
}

// AppendCacheKey appends CacheKey's bytes to dst: a lookup m[string(b.AppendCacheKey(buf[:0]))]
// into a stack buffer allocates nothing (the route cache's lookups, one or more per bucket a
// query reads).
func (b BucketID) AppendCacheKey(dst []byte) []byte {
	dst = append(dst, b.TableID...)
	dst = append(dst, 0)
	dst = append(dst, b.PartitionKey...)
	dst = append(dst, 0)
	return append(dst, b.Key...)
}

// BucketFor returns the bucket of table tableID and partition pk that holds t.
func BucketFor(tableID string, pk []byte, s Strategy, t time.Time) BucketID {
	key, start, end := s.Bounds(t)
	return BucketID{TableID: tableID, PartitionKey: pk, Strategy: s, Key: key, Start: start, End: end}
}

// BucketsForRanges returns the buckets intersecting any of the ranges rs (sorted by Start
// and disjoint), ordered by their bounds, a bucket two ranges share once.
func BucketsForRanges(tableID string, pk []byte, s Strategy, rs []TimeRange) []BucketID {
	var out []BucketID
	for _, r := range rs {
		for _, b := range BucketsForRange(tableID, pk, s, r) {
			if n := len(out); n > 0 && out[n-1].Key == b.Key {
				continue
			}
			out = append(out, b)
		}
	}
	return out
}

// BucketsForRange returns the buckets intersecting r, ordered by their bounds (oldest first):
// nothing when r is empty; otherwise the bucket containing r.Start, then each following bucket
// while its start is before r.End (docs/pulpitum-v4.md §2).
func BucketsForRange(tableID string, pk []byte, s Strategy, r TimeRange) []BucketID {
	if r.Empty() {
		return nil
	}
	var out []BucketID
	b := BucketFor(tableID, pk, s, r.Start)
	for b.Start.Before(r.End) {
		out = append(out, b)
		b = BucketFor(tableID, pk, s, b.End)
	}
	return out
}

// RecentBuckets returns the n buckets ending with the one containing now, oldest first: the
// table's writable window (docs/pulpitum-v4.md §2). n must be at least 1.
func RecentBuckets(tableID string, pk []byte, s Strategy, now time.Time, n int) []BucketID {
	out := make([]BucketID, n)
	b := BucketFor(tableID, pk, s, now)
	for i := n - 1; i >= 0; i-- {
		out[i] = b
		if i > 0 {
			b = BucketFor(tableID, pk, s, b.Start.Add(-time.Nanosecond))
		}
	}
	return out
}

// Validate rejects a bucket id that cannot name a persisted bucket: a blank table id or key,
// an empty partition key, an unknown strategy, or bounds and key that are not the strategy's
// for its start. Errors wrap ErrInvalidRecord and carry no values.
func (b BucketID) Validate() error {
	if b.TableID == "" || len(b.PartitionKey) == 0 || !b.Strategy.Valid() {
		return fmt.Errorf("%w: invalid bucket id", ErrInvalidRecord)
	}
	key, start, end := b.Strategy.Bounds(b.Start)
	if key != b.Key || !start.Equal(b.Start) || !end.Equal(b.End) {
		return fmt.Errorf("%w: bucket id does not match its strategy's bounds", ErrInvalidRecord)
	}
	return nil
}
