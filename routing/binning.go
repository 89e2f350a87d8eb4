package routing

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"
)

// TruncUnit is a unit of PostgreSQL's date_trunc on UTC instants.
type TruncUnit uint8

const (
	// TruncSecond .. TruncYear are date_trunc('second') .. date_trunc('year'). Weeks are ISO
	// weeks (starting on Monday), quarters start in January, April, July and October.
	TruncSecond TruncUnit = iota + 1
	TruncMinute
	TruncHour
	TruncDay
	TruncWeek
	TruncMonth
	TruncQuarter
	TruncYear
)

// String returns the unit as date_trunc spells it: "second" … "year".
func (u TruncUnit) String() string {
	switch u {
	case TruncSecond:
		return "second"
	case TruncMinute:
		return "minute"
	case TruncHour:
		return "hour"
	case TruncDay:
		return "day"
	case TruncWeek:
		return "week"
	case TruncMonth:
		return "month"
	case TruncQuarter:
		return "quarter"
	case TruncYear:
		return "year"
	}
	return fmt.Sprintf("unit(%d)", uint8(u))
}

// Valid reports whether u is one of the eight units.
func (u TruncUnit) Valid() bool { return u >= TruncSecond && u <= TruncYear }

// Fixed-width units in microseconds, and the Monday that anchors ISO weeks.
const (
	usSecond = int64(time.Second / time.Microsecond)
	usMinute = 60 * usSecond
	usHour   = 60 * usMinute
	usDay    = 24 * usHour
	usWeek   = 7 * usDay
	// usMonday is 1970-01-05T00:00:00Z, a Monday, in µs since the epoch.
	usMonday = 4 * usDay
)

// ErrInvalidBinning is returned for a Binning that names no bin shape (see Binning.Validate).
var ErrInvalidBinning = errors.New("routing: invalid time binning")

// ErrBinOutOfRange is returned when a bin start is outside the nanosecond range of
// timestamp[ns] (1677-09-21 to 2262-04-11 UTC), which the result column cannot hold.
var ErrBinOutOfRange = errors.New("routing: time bin start is outside the nanosecond range")

// Binning maps UTC instants to time bins: PostgreSQL's date_trunc(Unit, t) when Unit is set,
// date_bin(Stride, t, Origin) otherwise. Every bin is a half-open interval [start, next); an
// instant belongs to exactly one bin; bins are ordered by their start. The zero value is
// invalid. A Binning is a plain value, safe to copy and share.
type Binning struct {
	// Unit selects date_trunc; zero for date_bin.
	Unit TruncUnit
	// Stride is date_bin's positive, fixed bin width in whole microseconds (PostgreSQL forbids
	// months and years: they have no fixed width).
	Stride time.Duration
	// Origin is date_bin's origin, a whole microsecond: bins start at Origin + k·Stride.
	Origin time.Time
}

// TruncBinning returns date_trunc(u, t).
func TruncBinning(u TruncUnit) Binning { return Binning{Unit: u} }

// StrideBinning returns date_bin(stride, t, origin).
func StrideBinning(stride time.Duration, origin time.Time) Binning {
	return Binning{Stride: stride, Origin: origin.UTC()}
}

// Validate checks that exactly one shape is set: a valid unit without stride and origin, or a
// positive whole-microsecond stride with a whole-microsecond origin (any instant of the
// nanosecond range). It returns ErrInvalidBinning otherwise.
func (b Binning) Validate() error {
	switch {
	case b.Unit != 0 && (b.Stride != 0 || !b.Origin.IsZero()):
		return fmt.Errorf("%w: date_trunc unit together with a date_bin stride or origin", ErrInvalidBinning)
	case b.Unit != 0 && !b.Unit.Valid():
		return fmt.Errorf("%w: unknown date_trunc unit", ErrInvalidBinning)
	case b.Unit != 0:
		return nil
	case b.Stride <= 0 || b.Stride%time.Microsecond != 0:
		return fmt.Errorf("%w: date_bin stride must be a positive whole number of microseconds", ErrInvalidBinning)
	case b.Origin.Nanosecond()%1000 != 0 || b.Origin.Before(minNano) || b.Origin.After(maxNano):
		return fmt.Errorf("%w: date_bin origin must be a whole microsecond of the nanosecond range", ErrInvalidBinning)
	}
	return nil
}

var (
	minNano = time.Unix(0, math.MinInt64).UTC()
	maxNano = time.Unix(0, math.MaxInt64).UTC()
)

// FixedWidth returns the width of every bin and the start of one bin, both in microseconds
// since the epoch, when all bins have the same width: date_trunc to second, minute, hour, day
// or week (UTC has no daylight saving and, as in PostgreSQL and Go, no leap seconds) and
// date_bin. Month, quarter and year bins have calendar widths: ok is false.
func (b Binning) FixedWidth() (width, origin int64, ok bool) {
	switch b.Unit {
	case 0:
		return int64(b.Stride / time.Microsecond), b.Origin.UnixMicro(), b.Stride > 0
	case TruncSecond:
		return usSecond, 0, true
	case TruncMinute:
		return usMinute, 0, true
	case TruncHour:
		return usHour, 0, true
	case TruncDay:
		return usDay, 0, true
	case TruncWeek:
		return usWeek, usMonday, true
	}
	return 0, 0, false
}

// Floor returns the start of the bin holding t, in UTC. Instants finer than a microsecond
// belong to the bin of their microsecond (bin bounds are whole microseconds).
func (b Binning) Floor(t time.Time) time.Time {
	if width, origin, ok := b.FixedWidth(); ok {
		return time.UnixMicro(floorMicros(t.UnixMicro(), width, origin)).UTC()
	}
	t = t.UTC()
	switch b.Unit {
	case TruncMonth:
		return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
	case TruncQuarter:
		return time.Date(t.Year(), (t.Month()-1)/3*3+1, 1, 0, 0, 0, 0, time.UTC)
	case TruncYear:
		return time.Date(t.Year(), time.January, 1, 0, 0, 0, 0, time.UTC)
	}
	panic("routing: Floor of an invalid Binning")
}

// floorMicros returns origin + ⌊(us − origin) / width⌋·width: the start of the fixed-width bin
// holding us, rounding toward −∞ before the origin as PostgreSQL's date_bin does. Inputs are
// microseconds of the nanosecond range and a width below 2^63 ns, so nothing overflows.
func floorMicros(us, width, origin int64) int64 {
	d := us - origin
	q := d / width
	if d%width < 0 {
		q--
	}
	return origin + q*width
}

// Next returns the end of the bin starting at start: the start of the following bin.
func (b Binning) Next(start time.Time) time.Time {
	if width, _, ok := b.FixedWidth(); ok {
		return start.Add(time.Duration(width) * time.Microsecond)
	}
	switch b.Unit {
	case TruncMonth:
		return start.AddDate(0, 1, 0)
	case TruncQuarter:
		return start.AddDate(0, 3, 0)
	}
	return start.AddDate(1, 0, 0)
}

// Contains reports whether every instant of the non-empty range r lies in one bin.
func (b Binning) Contains(r TimeRange) bool {
	return !r.Empty() && b.Floor(r.Start).Equal(b.Floor(r.End.Add(-time.Nanosecond)))
}

// String returns the binning as SQL over the timestamp column, for plans and decisions; it
// holds no partition value and no query bound (a date_bin origin is part of the shape).
func (b Binning) String() string {
	if b.Unit != 0 {
		return "date_trunc('" + b.Unit.String() + "', timestamp)"
	}
	return "date_bin(INTERVAL '" + FormatStride(b.Stride) + "', timestamp, TIMESTAMPTZ '" +
		b.Origin.UTC().Format(time.RFC3339Nano) + "')"
}

// Shape describes the binning for plans, decisions and logs without a date_bin origin:
// date_trunc('hour', timestamp), date_bin('15 minutes', timestamp, origin).
func (b Binning) Shape() string {
	if b.Unit != 0 {
		return "date_trunc('" + b.Unit.String() + "', timestamp)"
	}
	return "date_bin('" + FormatStride(b.Stride) + "', timestamp, origin)"
}

// FormatStride prints a stride as a PostgreSQL interval in the largest unit that divides it
// exactly: "15 minutes", "36 hours", "90 seconds", "1500 microseconds".
func FormatStride(d time.Duration) string {
	units := []struct {
		d    time.Duration
		name string
	}{{24 * time.Hour, "day"}, {time.Hour, "hour"}, {time.Minute, "minute"}, {time.Second, "second"},
		{time.Millisecond, "millisecond"}, {time.Microsecond, "microsecond"}}
	for _, u := range units {
		if d%u.d == 0 {
			n := int64(d / u.d)
			s := strconv.FormatInt(n, 10) + " " + u.name
			if n != 1 {
				s += "s"
			}
			return s
		}
	}
	return d.String()
}

// StrategyInsideBins reports whether every bucket of strategy s lies inside one bin, so that
// AggregateBucket asks every fully covered bucket ungrouped (a hot count or the manifest's
// record count): date_trunc to the strategy's unit or coarser (a day bucket also
// lies in one ISO week), or a date_bin whose stride is a whole number of days and whose
// origin is a UTC midnight for day buckets.
func StrategyInsideBins(s Strategy, bin Binning) bool {
	switch s {
	case CalendarDayUTC:
		if bin.Unit == 0 {
			width, origin, _ := bin.FixedWidth()
			return width > 0 && width%usDay == 0 && origin%usDay == 0
		}
		return bin.Unit >= TruncDay && bin.Unit <= TruncYear
	case CalendarMonthUTC:
		return bin.Unit == TruncMonth || bin.Unit == TruncQuarter || bin.Unit == TruncYear
	case CalendarYearUTC:
		return bin.Unit == TruncYear
	}
	return false
}
