package ops

import (
	"fmt"
	"math"
	"math/bits"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Kernels of functions_datetime's round_calendar and round_temporal with FLOOR rounding in UTC
// (how the SQL front end encodes date_trunc and date_bin, substrait/groupby.go), over
// timestamps of any unit: timestamp[ns, UTC] in our plans. arrow-go has floor_temporal, but
// with an origin fixed at the Unix epoch or the calendar, not Substrait's functions.

// calUnit is a unit or origin of round_calendar and round_temporal, ordered by length.
type calUnit int

const (
	unitMicrosecond calUnit = iota
	unitMillisecond
	unitSecond
	unitMinute
	unitHour
	unitDay
	unitWeek
	unitMonth
	unitYear
)

var unitNames = map[string]calUnit{
	"MICROSECOND": unitMicrosecond, "MILLISECOND": unitMillisecond, "SECOND": unitSecond,
	"MINUTE": unitMinute, "HOUR": unitHour, "DAY": unitDay, "WEEK": unitWeek, "MONTH": unitMonth,
	"YEAR": unitYear,
}

// originNames are round_calendar's origins: the unit, and for weeks the weekday they start on
// (0 Monday, 6 Sunday; ISO weeks start on Monday, US weeks on Sunday).
var originNames = map[string]struct {
	unit    calUnit
	weekday int64
}{
	"MILLISECOND": {unitMillisecond, 0}, "SECOND": {unitSecond, 0}, "MINUTE": {unitMinute, 0},
	"HOUR": {unitHour, 0}, "DAY": {unitDay, 0}, "MONDAY_WEEK": {unitWeek, 0}, "ISO_WEEK": {unitWeek, 0},
	"SUNDAY_WEEK": {unitWeek, 6}, "US_WEEK": {unitWeek, 6}, "MONTH": {unitMonth, 0}, "YEAR": {unitYear, 0},
}

// fixedNanos are the widths of the units that are fixed in UTC, in nanoseconds.
var fixedNanos = map[calUnit]int64{
	unitMicrosecond: 1e3, unitMillisecond: 1e6, unitSecond: 1e9, unitMinute: 60e9, unitHour: 3600e9,
	unitDay: 86400e9, unitWeek: 7 * 86400e9,
}

// nanosPerTick returns how many nanoseconds one tick of u is.
func nanosPerTick(u arrow.TimeUnit) int64 {
	switch u {
	case arrow.Second:
		return 1e9
	case arrow.Millisecond:
		return 1e6
	case arrow.Microsecond:
		return 1e3
	}
	return 1
}

// width returns the width of the fixed unit cu in ticks of u, or false when it is not a whole
// number of ticks (a unit finer than the column's precision).
func width(cu calUnit, u arrow.TimeUnit) (int64, bool) {
	n, t := fixedNanos[cu], nanosPerTick(u)
	if n < t || n%t != 0 {
		return 0, false
	}
	return n / t, true
}

// isUTC reports whether zone names UTC (the spellings substrait.TimeBinOf accepts).
func isUTC(zone string) bool {
	switch strings.ToLower(zone) {
	case "utc", "etc/utc", "gmt", "etc/gmt", "z", "zulu", "uct", "etc/uct", "universal", "etc/universal":
		return true
	}
	return false
}

// calendarFloor is round_calendar(x, FLOOR, unit, origin, multiple, 'UTC') over timestamps
// of one unit: the start of the last multiple of unit counted from the start of the last origin
// unit.
type calendarFloor struct {
	unit, origin calUnit
	weekday      int64 // first day of origin weeks, 0 Monday
	multiple     int64
	tick         arrow.TimeUnit
	perDay       int64 // ticks per day
	unitW        int64 // ticks per unit (fixed units)
	originW      int64 // ticks per origin unit (fixed origins below a day)
}

func newCalendarFloor(unit, origin string, weekday int64, multiple int64, tick arrow.TimeUnit) (*calendarFloor, error) {
	u, ok := unitNames[unit]
	if !ok {
		return nil, fmt.Errorf("ops: round_calendar unit %q is not supported", unit)
	}
	o, ok := originNames[origin]
	if !ok {
		return nil, fmt.Errorf("ops: round_calendar origin %q is not supported", origin)
	}
	switch {
	case multiple < 1:
		return nil, fmt.Errorf("ops: round_calendar multiple %d is not positive", multiple)
	case o.unit < u:
		return nil, fmt.Errorf("ops: round_calendar origin %s is shorter than its unit %s", origin, unit)
	}
	c := &calendarFloor{unit: u, origin: o.unit, weekday: o.weekday, multiple: multiple, tick: tick}
	c.perDay, _ = width(unitDay, tick)
	if u <= unitWeek {
		w, ok := width(u, tick)
		if !ok {
			return nil, fmt.Errorf("ops: round_calendar unit %s is finer than the timestamps' unit %s", unit, tick)
		}
		c.unitW = w
	}
	if o.unit < unitDay {
		c.originW, _ = width(o.unit, tick) // o.unit >= u: whole ticks
	}
	return c, nil
}

// floor returns the bin start of t, or false when it is not representable.
func (c *calendarFloor) floor(t int64) (int64, bool) {
	if c.multiple == 1 && c.unit <= unitDay {
		// One unit of a day or less: every origin starts on a whole unit (UTC), so the bin
		// is t's unit, found without the origin's start, which may be before the first
		// representable instant when t is not (date_trunc('day', '1677-09-22') with a
		// month origin).
		m := floorMod(t, c.unitW)
		if t < math.MinInt64+m {
			return 0, false
		}
		return t - m, true
	}
	// o: the start of the last origin unit, <= t.
	var o int64
	if c.origin < unitDay {
		o = t - floorMod(t, c.originW)
	} else {
		days := floorDiv(t, c.perDay)
		var od int64
		switch c.origin {
		case unitDay:
			od = days
		case unitWeek:
			od = days - floorMod(days+3-c.weekday, 7) // 1970-01-01 was a Thursday
		case unitMonth:
			y, m, _ := civilFromDays(days)
			od = daysFromCivil(y, m, 1)
		case unitYear:
			y, _, _ := civilFromDays(days)
			od = daysFromCivil(y, 1, 1)
		}
		var ok bool
		if o, ok = mulChecked(od, c.perDay); !ok {
			return 0, false
		}
	}
	switch c.unit {
	case unitYear:
		return o, true
	case unitMonth:
		if c.origin == unitMonth {
			return o, true
		}
		y, m, _ := civilFromDays(floorDiv(t, c.perDay))
		m = (m-1)/c.multiple*c.multiple + 1
		return mulChecked(daysFromCivil(y, m, 1), c.perDay)
	}
	n := (t - o) / c.unitW // t - o < one origin unit (a year at most): no overflow
	return o + n/c.multiple*c.multiple*c.unitW, true
}

// temporalFloor is round_temporal(x, FLOOR, unit, multiple, 'UTC', origin) for the fixed
// units (every unit up to WEEK in UTC): origin + floor((t - origin) / stride) * stride.
type temporalFloor struct {
	stride int64 // ticks
	orgMod int64 // origin mod stride, in [0, stride)
}

func newTemporalFloor(unit string, multiple int64, origin int64, tick arrow.TimeUnit) (*temporalFloor, error) {
	u, ok := unitNames[unit]
	if !ok {
		return nil, fmt.Errorf("ops: round_temporal unit %q is not supported", unit)
	}
	if u > unitWeek {
		return nil, fmt.Errorf("ops: round_temporal to the calendar unit %s is not supported", unit)
	}
	w, ok := width(u, tick)
	if !ok {
		return nil, fmt.Errorf("ops: round_temporal unit %s is finer than the timestamps' unit %s", unit, tick)
	}
	if multiple < 1 || multiple > math.MaxInt64/w {
		return nil, fmt.Errorf("ops: round_temporal multiple %d is out of range", multiple)
	}
	s := multiple * w
	return &temporalFloor{stride: s, orgMod: floorMod(origin, s)}, nil
}

// floor returns the bin start of t, or false when it is before the first representable
// instant. t - d, with d = (t - origin) mod stride computed from the residues, never overflows
// in between.
func (f *temporalFloor) floor(t int64) (int64, bool) {
	d := floorMod(t, f.stride) - f.orgMod
	if d < 0 {
		d += f.stride
	}
	if t < math.MinInt64+d {
		return 0, false
	}
	return t - d, true
}

// floorTimestamps applies floor to every valid value of x (a timestamp array) and returns a
// new array of x's type allocated from mem; nulls stay null.
func floorTimestamps(x *array.Timestamp, mem memory.Allocator, name string, floor func(int64) (int64, bool)) (arrow.Array, error) {
	n := x.Len()
	vals := memory.NewResizableBuffer(mem)
	vals.Resize(n * 8)
	out := arrow.Int64Traits.CastFromBytes(vals.Bytes())
	in := x.TimestampValues()
	for i := range n {
		if x.IsNull(i) {
			out[i] = 0
			continue
		}
		v, ok := floor(int64(in[i]))
		if !ok {
			vals.Release()
			// A bin starting before the unit's earliest instant (1677-09-21 for nanoseconds):
			// PostgreSQL's "timestamp out of range" (22008) for the range this engine holds.
			return nil, errTimestampRange
		}
		out[i] = v
	}
	var validity *memory.Buffer
	if x.NullN() > 0 {
		src := x.Data().Buffers()[0]
		if x.Data().Offset() == 0 {
			src.Retain()
			validity = src
		} else {
			validity = memory.NewResizableBuffer(mem)
			validity.Resize(int(bitutil.BytesForBits(int64(n))))
			bitutil.CopyBitmap(src.Bytes(), x.Data().Offset(), n, validity.Bytes(), 0)
		}
	}
	data := array.NewData(x.DataType(), n, []*memory.Buffer{validity, vals}, nil, x.NullN(), 0)
	vals.Release()
	if validity != nil {
		validity.Release()
	}
	defer data.Release()
	return array.MakeFromData(data), nil
}

// --- arithmetic ----------------------------------------------------------------------------

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func floorMod(a, b int64) int64 {
	m := a % b
	if m != 0 && ((m < 0) != (b < 0)) {
		m += b
	}
	return m
}

// mulChecked returns a*b, or false when it overflows int64.
func mulChecked(a, b int64) (int64, bool) {
	neg := (a < 0) != (b < 0)
	hi, lo := bits.Mul64(absU(a), absU(b))
	if hi != 0 {
		return 0, false
	}
	if neg {
		if lo > 1<<63 {
			return 0, false
		}
		return -int64(lo), true // lo == 1<<63 wraps to MinInt64, as it should
	}
	if lo > math.MaxInt64 {
		return 0, false
	}
	return int64(lo), true
}

func absU(a int64) uint64 {
	if a < 0 {
		return uint64(-(a + 1)) + 1
	}
	return uint64(a)
}

// daysFromCivil returns the days since 1970-01-01 of the proleptic Gregorian date y-m-d
// (Howard Hinnant's days_from_civil).
func daysFromCivil(y, m, d int64) int64 {
	if m <= 2 {
		y--
	}
	era := floorDiv(y, 400)
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

// civilFromDays is the inverse of daysFromCivil.
func civilFromDays(z int64) (y, m, d int64) {
	z += 719468
	era := floorDiv(z, 146097)
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y = yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = doy - (153*mp+2)/5 + 1
	m = mp + 3
	if m > 12 {
		m -= 12
	}
	if m <= 2 {
		y++
	}
	return y, m, d
}
