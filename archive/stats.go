package archive

import (
	"encoding/binary"
	"math"
	"time"

	"github.com/flightsrv/flightsrv/routing"
)

// Statistics trust rules (docs/architecture "Pushdown", seed "Aggregate pushdown proposal"):
// event_time statistics answer a count — or let a row group or page be skipped — only when
//
//   - the column carries a TIMESTAMP logical type (unit and UTC flag come from it; a legacy
//     converted type or INT96 is decoded, never answered from statistics),
//   - the file declares TYPE_DEFINED_ORDER for the column (signed order for INT64),
//   - min_value and max_value are both present and exactly 8 bytes (the deprecated min/max
//     fields are ignored), not flagged inexact (is_min/max_value_exact = false means
//     truncated), and min <= max (reversed bounds are corrupt),
//   - for "inside" answers, the null count is known: the column is required, or null_count is
//     present (an absent null count is unknown, never zero),
//   - the bounds lie inside the bucket: every record of an archive belongs to its bucket, so
//     bounds outside it are wrong (parquet-go, for one, writes zero-filled column-index bounds
//     when page bounds are switched off).
//
// Anything else classifies the group or page as straddling, which means: decode it.

// class is a statistics classification against a range.
type class uint8

const (
	straddle class = iota // decode to know
	inside                // every non-null value is in the range
	outside               // no value is in the range
)

// bounds are trusted min/max of a chunk or page in column units; nulls is -1 when unknown.
type bounds struct {
	min, max int64
	nulls    int64
}

// classify compares b with the unit range r. It returns the class and, for inside, the number
// of values in the range (rows minus nulls).
func (b bounds) classify(r unitRange, rows int64) (class, int64) {
	switch {
	case b.max < r.lo || b.min >= r.hi:
		return outside, 0
	case b.min >= r.lo && b.max < r.hi && b.nulls >= 0 && b.nulls <= rows:
		return inside, rows - b.nulls
	}
	return straddle, 0
}

// statsUsable reports whether the event_time column's statistics may be used at all.
func (ft *footer) statsUsable() bool {
	return ft.ts != nil && ft.ts.logical && !ft.ts.int96 && ft.orderOK
}

// groupBounds returns the trusted chunk statistics of event_time in row group g; bucket is the
// bucket's range in column units.
func (ft *footer) groupBounds(g int, bucket unitRange) (bounds, bool) {
	if !ft.statsUsable() {
		return bounds{}, false
	}
	st := ft.groups[g].tsStats
	if st == nil || len(st.MinValue) != 8 || len(st.MaxValue) != 8 ||
		(st.IsMinValueExact != nil && !*st.IsMinValueExact) || (st.IsMaxValueExact != nil && !*st.IsMaxValueExact) {
		return bounds{}, false
	}
	b := bounds{
		min:   int64(binary.LittleEndian.Uint64(st.MinValue)),
		max:   int64(binary.LittleEndian.Uint64(st.MaxValue)),
		nulls: -1,
	}
	if b.min > b.max || !bucket.holds(b) {
		return bounds{}, false
	}
	switch {
	case ft.ts.required:
		b.nulls = 0
	case st.NullCount != nil:
		b.nulls = *st.NullCount
	}
	return b, true
}

// pageBounds returns the trusted column-index bounds of event_time's page p in row group g
// (bucket as for groupBounds); an all-null page is reported as bounds outside every range.
func (ft *footer) pageBounds(g, p int, bucket unitRange) (bounds, bool) {
	if !ft.statsUsable() {
		return bounds{}, false
	}
	ci := ft.groups[g].tsIndex
	if ci == nil {
		return bounds{}, false
	}
	if ci.NullPages[p] {
		return bounds{min: math.MaxInt64, max: math.MinInt64}, true
	}
	lo, hi := ci.MinValues[p], ci.MaxValues[p]
	if len(lo) != 8 || len(hi) != 8 {
		return bounds{}, false
	}
	b := bounds{min: int64(binary.LittleEndian.Uint64(lo)), max: int64(binary.LittleEndian.Uint64(hi)), nulls: -1}
	if b.min > b.max || !bucket.holds(b) {
		return bounds{}, false
	}
	switch {
	case ft.ts.required:
		b.nulls = 0
	case len(ci.NullCounts) > p:
		b.nulls = ci.NullCounts[p]
	}
	return b, true
}

// unitRange is a half-open range [lo, hi) of stored event-time values.
type unitRange struct{ lo, hi int64 }

// holds reports whether the bounds lie inside the range.
func (u unitRange) holds(b bounds) bool { return b.min >= u.lo && b.max < u.hi }

// unitRange converts an instant range to the column's stored units: a stored value v is an
// instant of r exactly when lo <= v < hi. Values are read as UTC instants whatever the
// column's isAdjustedToUTC flag (a local timestamp is taken as UTC wall-clock time).
func (ts *tsColumn) unitRange(r routing.TimeRange) unitRange {
	return unitRange{ceilUnits(r.Start, ts.unit), ceilUnits(r.End, ts.unit)}
}

// ceilUnits returns the smallest v such that v units (of unit nanoseconds) since the epoch is
// not before t, saturating at the int64 limits.
func ceilUnits(t time.Time, unit int64) int64 {
	per := int64(time.Second) / unit
	s, ns := t.Unix(), int64(t.Nanosecond())
	if s > math.MaxInt64/per-1 {
		return math.MaxInt64
	}
	if s < math.MinInt64/per+1 {
		return math.MinInt64
	}
	return s*per + (ns+unit-1)/unit
}

// int96Nanos converts a legacy INT96 timestamp (nanoseconds of the day, then the Julian day,
// little endian) to nanoseconds since the epoch, saturating.
func int96Nanos(v [3]uint32) int64 {
	nanosOfDay := int64(v[0]) | int64(v[1])<<32
	days := int64(v[2]) - 2440588 // Julian day of 1970-01-01
	const day = int64(24 * time.Hour)
	if days > math.MaxInt64/day-1 {
		return math.MaxInt64
	}
	if days < math.MinInt64/day+1 {
		return math.MinInt64
	}
	return days*day + nanosOfDay
}
