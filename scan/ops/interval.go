package ops

import (
	"context"
	"errors"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute/exprs"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/substrait-io/substrait-go/v8/types"

	"github.com/flightsrv/flightsrv/internal/calendar"
)

// PostgreSQL's interval, as Arrow's month_day_nano_interval: months, days and the time in
// nanoseconds (always a whole number of microseconds, PostgreSQL's precision; the time part
// holds ±292 years, where PostgreSQL's holds ±292,000: a result beyond is "interval out of
// range", 22008). The functions of URNPostgres over it, strict (NULL in, NULL out):
//
//	make_interval(months, days, nanos)  an interval from its three fields (int32, int32, int64;
//	                                    integers, or numerics of scale 0 that must fit)
//	timestamp_diff(a, b)                a - b for two timestamps of one type, or a date (its
//	                                    midnight UTC) beside a timestamp or a date: the
//	                                    microseconds between them as days of 24 hours and the
//	                                    rest (timestamp_mi), exact past ±292 years
//	timestamp_add_interval(t, iv)       t + iv: the months on the calendar (the day of month
//	                                    clamped to the month's last), then the days as 24 hours
//	                                    and the time (UTC, the session's zone)
//	interval_add(a, b), interval_sub(a, b), interval_neg(a)
//	                                    field by field; an int32 or int64 overflow is "interval
//	                                    out of range"
//	interval_mul(iv, x), interval_div(iv, x)
//	                                    by a float8, PostgreSQL's interval_mul/interval_div: the
//	                                    fractions of months cascade into days (30 a month) and
//	                                    those of days into time (24 hours a day), the time
//	                                    rounded to the microsecond half to even; / 0 is
//	                                    "division by zero" (22012)
//	interval_cmp(op, a, b)              a op b (op "lt", "le", "gt", "ge", "eq", "ne"), comparing
//	                                    as PostgreSQL's interval_cmp: months as 30 days and days as
//	                                    24 hours (so '1 mon' = '30 days' = '720 hours')
//	interval_text(iv)                   the text PostgreSQL's interval_out writes under
//	                                    IntervalStyle postgres ('1 year 2 mons 3 days 04:05:06.5',
//	                                    '-00:00:01', '-1 days +02:00:00', '00:00:00')
//	interval_epoch(iv)                  extract(epoch from iv): numeric(38,6) seconds, a year
//	                                    365.25 days, a month 30 days, a day 86,400 seconds
//	interval_part_<field>(iv)           extract(field from iv), PostgreSQL's interval_part_common
//	                                    over interval2itm (C's truncating division): microsecond,
//	                                    millisecond, second (the seconds of the minute in
//	                                    microseconds at scale 0, 3, 6), minute, hour (of the time;
//	                                    hours past 24 stay), day (the days), month (months % 12),
//	                                    quarter (month / 3 + 1), year (months / 12), decade,
//	                                    century, millennium (year / 10, 100, 1000): numeric(38, s)
func init() {
	ownFunctions["make_interval"] = makeInterval
	ownFunctions["timestamp_diff"] = timestampPairKernel(timestampMinus)
	ownFunctions["timestamp_add_interval"] = timestampAddInterval
	ownFunctions["interval_add"] = intervalArith(func(a, b arrow.MonthDayNanoInterval) (arrow.MonthDayNanoInterval, bool) {
		return addMDN(a, b, 1)
	})
	ownFunctions["interval_sub"] = intervalArith(func(a, b arrow.MonthDayNanoInterval) (arrow.MonthDayNanoInterval, bool) {
		return addMDN(a, b, -1)
	})
	ownFunctions["interval_neg"] = intervalMapKernel(func(x arrow.MonthDayNanoInterval) (arrow.MonthDayNanoInterval, bool) {
		return addMDN(arrow.MonthDayNanoInterval{}, x, -1)
	})
	ownFunctions["interval_mul"] = intervalScale(false)
	ownFunctions["interval_div"] = intervalScale(true)
	ownFunctions["interval_cmp"] = intervalCmp
	ownFunctions["interval_text"] = intervalText
	ownFunctions["interval_epoch"] = intervalEpoch
	for field, p := range intervalParts {
		ownFunctions["interval_part_"+field] = intervalDecimal(p.scale, p.of)
	}
}

// intervalPart is one field of extract(field from interval): its value as an unscaled integer
// at scale decimals.
type intervalPart struct {
	scale int32
	of    func(arrow.MonthDayNanoInterval) int64
}

// intervalParts are the fields extract takes of an interval, by PostgreSQL's lower-case name
// (interval_part_common; the others are its "unit not supported for type interval").
var intervalParts = func() map[string]intervalPart {
	secUs := func(x arrow.MonthDayNanoInterval) int64 { return x.Nanoseconds / nsPerUs % 60_000_000 }
	years := func(x arrow.MonthDayNanoInterval) int64 { return int64(x.Months / 12) }
	return map[string]intervalPart{
		"microseconds": {0, secUs},
		"milliseconds": {3, secUs},
		"second":       {6, secUs},
		"minute":       {0, func(x arrow.MonthDayNanoInterval) int64 { return x.Nanoseconds / nsPerUs / 60_000_000 % 60 }},
		"hour":         {0, func(x arrow.MonthDayNanoInterval) int64 { return x.Nanoseconds / nsPerUs / 3_600_000_000 }},
		"day":          {0, func(x arrow.MonthDayNanoInterval) int64 { return int64(x.Days) }},
		"month":        {0, func(x arrow.MonthDayNanoInterval) int64 { return int64(x.Months % 12) }},
		"quarter":      {0, func(x arrow.MonthDayNanoInterval) int64 { return int64(x.Months%12/3 + 1) }},
		"year":         {0, years},
		"decade":       {0, func(x arrow.MonthDayNanoInterval) int64 { return years(x) / 10 }},
		"century":      {0, func(x arrow.MonthDayNanoInterval) int64 { return years(x) / 100 }},
		"millennium":   {0, func(x arrow.MonthDayNanoInterval) int64 { return years(x) / 1000 }},
	}
}()

// intervalDecimal is a kernel of an interval's field f as numeric(38, scale), f's integer
// being the unscaled value.
func intervalDecimal(scale int32, f func(arrow.MonthDayNanoInterval) int64) func(*fnNode) error {
	t := &arrow.Decimal128Type{Precision: 38, Scale: scale}
	return intervalUnary[decimal128.Num](t,
		func(m memory.Allocator) appender[decimal128.Num] { return array.NewDecimal128Builder(m, t) },
		func(x arrow.MonthDayNanoInterval) (decimal128.Num, error) { return decimal128.FromI64(f(x)), nil })
}

var mdnType = arrow.FixedWidthTypes.MonthDayNanoInterval

const (
	nsPerUs  = int64(time.Microsecond)
	usPerDay = int64(86_400_000_000)
	nsPerDay = usPerDay * nsPerUs
)

// errIntervalRange is PostgreSQL's "interval out of range" (22008).
func errIntervalRange() error { return &DataError{Code: "22008", Msg: "interval out of range"} }

func wantInterval(n *fnNode, idx ...int) error {
	for _, i := range idx {
		if n.args[i] == nil || n.types[i].ID() != arrow.INTERVAL_MONTH_DAY_NANO {
			return errors.New("arguments must be intervals")
		}
	}
	return nil
}

// oneInterval checks that n's only argument is an interval.
func oneInterval(n *fnNode) error {
	if err := argCount(n, 1, 1); err != nil {
		return err
	}
	return wantInterval(n, 0)
}

func mdnRows(mem memory.Allocator, rows int, args []arrow.Array, f func(i int) (arrow.MonthDayNanoInterval, bool, error)) (arrow.Array, error) {
	return mapRows[arrow.MonthDayNanoInterval](array.NewMonthDayNanoIntervalBuilder(mem), rows, args, f)
}

func makeInterval(n *fnNode) error {
	if err := argCount(n, 3, 3); err != nil {
		return err
	}
	for i := range 3 {
		if d, ok := n.types[i].(*arrow.Decimal128Type); !ok || d.Scale != 0 {
			if err := wantInt(n, i); err != nil {
				return errors.New("arguments must be integers or numerics of scale 0")
			}
		}
	}
	n.out = mdnType
	n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
		return mdnRows(mem, rows, args, func(i int) (arrow.MonthDayNanoInterval, bool, error) {
			var f [3]int64
			for k := range f {
				d, ok := args[k].(*array.Decimal128)
				if !ok {
					f[k] = intAt(args[k], i)
					continue
				}
				// A numeric field (sum(interval)'s exact totals): past int64 it is
				// PostgreSQL's "interval out of range", as the fields past int32 are.
				v := d.Value(i)
				hi, lo := v.HighBits(), v.LowBits()
				if !(hi == 0 && lo <= math.MaxInt64 || hi == -1 && lo > math.MaxInt64) {
					return arrow.MonthDayNanoInterval{}, false, errIntervalRange()
				}
				f[k] = int64(lo)
			}
			m, d, ns := f[0], f[1], f[2]
			if m != int64(int32(m)) || d != int64(int32(d)) {
				return arrow.MonthDayNanoInterval{}, false, errIntervalRange()
			}
			return arrow.MonthDayNanoInterval{Months: int32(m), Days: int32(d), Nanoseconds: ns}, true, nil
		})
	}
	return nil
}

// timestampPairKernel sets n up as a function of two timestamps of one type, or dates (read
// by instantsAt: midnight UTC, any date PostgreSQL's timestamp holds) beside a timestamp or a
// date, answering an interval: f(a, b) of each row's instants rounded to the microsecond.
func timestampPairKernel(f func(a, b time.Time) (arrow.MonthDayNanoInterval, error)) func(*fnNode) error {
	return func(n *fnNode) error {
		if err := argCount(n, 2, 2); err != nil {
			return err
		}
		for i := range 2 {
			if n.args[i] == nil || n.types[i].ID() != arrow.TIMESTAMP && n.types[i].ID() != arrow.DATE32 {
				return errors.New("arguments must be timestamps or dates")
			}
		}
		if n.types[0].ID() == arrow.TIMESTAMP && n.types[1].ID() == arrow.TIMESTAMP && !arrow.TypeEqual(n.types[0], n.types[1]) {
			return errors.New("arguments must be timestamps of one type")
		}
		n.out = mdnType
		n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
			at, err := instantsAt(args[0])
			if err != nil {
				return nil, err
			}
			bt, err := instantsAt(args[1])
			if err != nil {
				return nil, err
			}
			return mdnRows(mem, rows, args, func(i int) (arrow.MonthDayNanoInterval, bool, error) {
				a, err := at(i)
				if err != nil {
					return arrow.MonthDayNanoInterval{}, false, err
				}
				b, err := bt(i)
				if err != nil {
					return arrow.MonthDayNanoInterval{}, false, err
				}
				v, err := f(a.Round(time.Microsecond), b.Round(time.Microsecond))
				return v, err == nil, err
			})
		}
		return nil
	}
}

// timestampMinus is PostgreSQL's timestamp_mi: the microseconds between a and b (its
// precision: its timestamps hold no more), then interval_justify_hours: whole days of 24
// hours, the rest as time, both with the difference's sign. The difference is exact for any
// two instants of PostgreSQL's range (a date's midnight included), where time.Duration's
// ±292 years would saturate (timestamp '2001-01-01' - timestamp '1700-01-01' is 109938 days);
// one past int64 microseconds (±292,277 years, which PostgreSQL's timestamp_mi lets wrap) is
// 22008 "interval out of range".
func timestampMinus(a, b time.Time) (arrow.MonthDayNanoInterval, error) {
	secs := a.Unix() - b.Unix()
	frac := int64(a.Nanosecond()-b.Nanosecond()) / nsPerUs
	if secs > (math.MaxInt64-1_000_000)/1_000_000 || secs < (math.MinInt64+1_000_000)/1_000_000 {
		return arrow.MonthDayNanoInterval{}, errIntervalRange()
	}
	us := secs*1_000_000 + frac
	days := us / usPerDay
	return arrow.MonthDayNanoInterval{Days: int32(days), Nanoseconds: (us - days*usPerDay) * nsPerUs}, nil
}

// addDaysNanos is t + days (of 24 hours, UTC) + ns as int64 nanoseconds, ok false when the
// sum is outside their range. Only the sum must be in range, as in PostgreSQL, whose range
// holds any step between: timestamp '2001-01-01' - interval '110000 days' is 1699-11-...,
// although 110000 days are more nanoseconds than an int64 holds.
func addDaysNanos(t time.Time, days, ns int64) (int64, bool) {
	if t.Before(minNanos) || t.After(maxNanos) || days > math.MaxInt32 || days < math.MinInt32 {
		return 0, false
	}
	secs := t.Unix() + days*86400 + ns/1_000_000_000
	frac := int64(t.Nanosecond()) + ns%1_000_000_000
	r := time.Unix(secs, frac).UTC()
	if r.Before(minNanos) || r.After(maxNanos) {
		return 0, false
	}
	return r.UnixNano(), true
}

func timestampAddInterval(n *fnNode) error {
	if err := argCount(n, 2, 2); err != nil {
		return err
	}
	if n.args[0] == nil || n.types[0].ID() != arrow.TIMESTAMP {
		return errors.New("argument 1 must be a timestamp")
	}
	if err := wantInterval(n, 1); err != nil {
		return err
	}
	n.out = n.types[0]
	unit := n.types[0].(*arrow.TimestampType).Unit
	n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
		at, err := timesAt(args[0])
		if err != nil {
			return nil, err
		}
		iv := args[1].(*array.MonthDayNanoInterval)
		b := array.NewTimestampBuilder(mem, n.out.(*arrow.TimestampType))
		return mapRows[arrow.Timestamp](b, rows, args, func(i int) (arrow.Timestamp, bool, error) {
			t, ok := addInterval(at(i), iv.Value(i))
			if !ok {
				return 0, false, &DataError{Code: "22008", Msg: "timestamp out of range"}
			}
			v, err := arrow.TimestampFromTime(t, unit)
			return v, err == nil, err
		})
	}
	return nil
}

// addInterval is t + x as timestamp_add_interval computes it (UTC), false when the result is
// outside int64 nanoseconds.
func addInterval(t time.Time, x arrow.MonthDayNanoInterval) (time.Time, bool) {
	ns, ok := addDaysNanos(calendar.AddMonths(t, int64(x.Months)), int64(x.Days), x.Nanoseconds)
	return time.Unix(0, ns).UTC(), ok
}

// addMDN returns a + sign*b field by field, false on an overflow.
func addMDN(a, b arrow.MonthDayNanoInterval, sign int64) (arrow.MonthDayNanoInterval, bool) {
	m := int64(a.Months) + sign*int64(b.Months)
	d := int64(a.Days) + sign*int64(b.Days)
	y := b.Nanoseconds
	if sign < 0 {
		if y == math.MinInt64 {
			return arrow.MonthDayNanoInterval{}, false
		}
		y = -y
	}
	ns := a.Nanoseconds + y
	if (a.Nanoseconds^y) >= 0 && (a.Nanoseconds^ns) < 0 || m != int64(int32(m)) || d != int64(int32(d)) {
		return arrow.MonthDayNanoInterval{}, false
	}
	return arrow.MonthDayNanoInterval{Months: int32(m), Days: int32(d), Nanoseconds: ns}, true
}

func intervalArith(f func(a, b arrow.MonthDayNanoInterval) (arrow.MonthDayNanoInterval, bool)) func(*fnNode) error {
	return func(n *fnNode) error {
		if err := argCount(n, 2, 2); err != nil {
			return err
		}
		if err := wantInterval(n, 0, 1); err != nil {
			return err
		}
		n.out = mdnType
		n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
			a, b := args[0].(*array.MonthDayNanoInterval), args[1].(*array.MonthDayNanoInterval)
			return mdnRows(mem, rows, args, func(i int) (arrow.MonthDayNanoInterval, bool, error) {
				r, ok := f(a.Value(i), b.Value(i))
				if !ok {
					return r, false, errIntervalRange()
				}
				return r, true, nil
			})
		}
		return nil
	}
}

// tsRound is PostgreSQL's TSROUND: x rounded to the microsecond's precision (1e-6).
func tsRound(x float64) float64 { return math.RoundToEven(x*1e6) / 1e6 }

// fitsInt32 is PostgreSQL's FLOAT8_FITS_IN_INT32.
func fitsInt32(x float64) bool { return x >= math.MinInt32 && x < -float64(math.MinInt32) }

// scaleInterval is PostgreSQL's interval_mul (div false) and interval_div (div true) of
// src/backend/utils/adt/timestamp.c, over microseconds.
func scaleInterval(iv arrow.MonthDayNanoInterval, x float64, div bool) (arrow.MonthDayNanoInterval, error) {
	op := func(v float64) float64 {
		if div {
			return v / x
		}
		return v * x
	}
	if div && x == 0 {
		return arrow.MonthDayNanoInterval{}, &DataError{Code: sqlstateDivisionByZero, Msg: "division by zero"}
	}
	m := op(float64(iv.Months))
	if math.IsNaN(m) || !fitsInt32(m) {
		return arrow.MonthDayNanoInterval{}, errIntervalRange()
	}
	d := op(float64(iv.Days))
	if math.IsNaN(d) || !fitsInt32(d) {
		return arrow.MonthDayNanoInterval{}, errIntervalRange()
	}
	month, day := int32(m), int32(d)
	monthRemainderDays := tsRound((op(float64(iv.Months)) - float64(month)) * 30)
	secRemainder := tsRound((op(float64(iv.Days)) - float64(day) + monthRemainderDays - float64(int32(monthRemainderDays))) * 86400)
	dayAcc := int64(day)
	if math.Abs(secRemainder) >= 86400 {
		whole := int64(secRemainder / 86400)
		dayAcc += whole
		secRemainder -= float64(whole * 86400)
	}
	dayAcc += int64(int32(monthRemainderDays))
	if dayAcc != int64(int32(dayAcc)) {
		return arrow.MonthDayNanoInterval{}, errIntervalRange()
	}
	us := math.RoundToEven(op(float64(iv.Nanoseconds/nsPerUs)) + secRemainder*1e6)
	if math.IsNaN(us) || math.Abs(us) >= float64(math.MaxInt64/nsPerUs) {
		return arrow.MonthDayNanoInterval{}, errIntervalRange()
	}
	return arrow.MonthDayNanoInterval{Months: month, Days: int32(dayAcc), Nanoseconds: int64(us) * nsPerUs}, nil
}

// LerpInterval is PostgreSQL's interval_lerp (percentile_cont of intervals): lo + (hi - lo) *
// pct by interval_mi, interval_mul and interval_pl, each raising "interval out of range"
// (22008, a *DataError) where a field overflows.
func LerpInterval(lo, hi arrow.MonthDayNanoInterval, pct float64) (arrow.MonthDayNanoInterval, error) {
	diff, ok := addMDN(hi, lo, -1)
	if !ok {
		return arrow.MonthDayNanoInterval{}, errIntervalRange()
	}
	mul, err := scaleInterval(diff, pct, false)
	if err != nil {
		return arrow.MonthDayNanoInterval{}, err
	}
	r, ok := addMDN(mul, lo, 1)
	if !ok {
		return arrow.MonthDayNanoInterval{}, errIntervalRange()
	}
	return r, nil
}

func intervalScale(div bool) func(*fnNode) error {
	return func(n *fnNode) error {
		if err := argCount(n, 2, 2); err != nil {
			return err
		}
		if err := wantInterval(n, 0); err != nil {
			return err
		}
		if n.args[1] == nil || n.types[1].ID() != arrow.FLOAT64 {
			return errors.New("argument 2 must be a float8")
		}
		n.out = mdnType
		n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
			a, x := args[0].(*array.MonthDayNanoInterval), args[1].(*array.Float64)
			return mdnRows(mem, rows, args, func(i int) (arrow.MonthDayNanoInterval, bool, error) {
				r, err := scaleInterval(a.Value(i), x.Value(i), div)
				return r, err == nil, err
			})
		}
		return nil
	}
}

// intervalKey is PostgreSQL's interval_cmp_value as (days, nanoseconds within the day): months
// as 30 days, days as 24 hours, the time carried into days, the rest in [0, 1 day).
func intervalKey(x arrow.MonthDayNanoInterval) (int64, int64) {
	days := int64(x.Months)*30 + int64(x.Days) + x.Nanoseconds/nsPerDay
	rest := x.Nanoseconds % nsPerDay
	if rest < 0 {
		rest += nsPerDay
		days--
	}
	return days, rest
}

// CompareIntervals orders two intervals as PostgreSQL's interval_cmp: -1, 0 or 1.
func CompareIntervals(a, b arrow.MonthDayNanoInterval) int {
	ad, ar := intervalKey(a)
	bd, br := intervalKey(b)
	switch {
	case ad < bd || ad == bd && ar < br:
		return -1
	case ad == bd && ar == br:
		return 0
	}
	return 1
}

func intervalCmp(n *fnNode) error {
	if err := argCount(n, 3, 3); err != nil {
		return err
	}
	if err := wantInterval(n, 1, 2); err != nil {
		return err
	}
	test, ok := map[string]func(int) bool{
		"lt": func(c int) bool { return c < 0 }, "le": func(c int) bool { return c <= 0 },
		"gt": func(c int) bool { return c > 0 }, "ge": func(c int) bool { return c >= 0 },
		"eq": func(c int) bool { return c == 0 }, "ne": func(c int) bool { return c != 0 },
	}[n.enums[0]]
	if !ok {
		return errors.New("unknown comparison " + n.enums[0])
	}
	n.out = arrow.FixedWidthTypes.Boolean
	n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
		a, b := args[1].(*array.MonthDayNanoInterval), args[2].(*array.MonthDayNanoInterval)
		return mapRows[bool](array.NewBooleanBuilder(mem), rows, args, func(i int) (bool, bool, error) {
			return test(CompareIntervals(a.Value(i), b.Value(i))), true, nil
		})
	}
	return nil
}

// FormatInterval writes an interval as PostgreSQL's interval_out under IntervalStyle postgres
// (EncodeInterval's INTSTYLE_POSTGRES): years, "mons" and days, each field's sign its own and
// a "+" before a positive field that follows a negative one, then [-+]hh:mm:ss[.ffffff] (the
// fraction without trailing zeros) when the time is not zero or nothing else was written.
func FormatInterval(x arrow.MonthDayNanoInterval) string {
	var b strings.Builder
	isZero, isBefore := true, false
	part := func(v int64, unit string) {
		if v == 0 {
			return
		}
		if !isZero {
			b.WriteByte(' ')
		}
		if isBefore && v > 0 {
			b.WriteByte('+')
		}
		b.WriteString(strconv.FormatInt(v, 10))
		b.WriteByte(' ')
		b.WriteString(unit)
		if v != 1 {
			b.WriteByte('s')
		}
		isBefore, isZero = v < 0, false
	}
	part(int64(x.Months/12), "year")
	part(int64(x.Months%12), "mon")
	part(int64(x.Days), "day")
	us := x.Nanoseconds / nsPerUs
	if isZero || us != 0 {
		if !isZero {
			b.WriteByte(' ')
		}
		if us < 0 {
			b.WriteByte('-')
		} else if isBefore {
			b.WriteByte('+')
		}
		abs := uint64(us)
		if us < 0 {
			abs = uint64(-us)
		}
		h, rest := abs/3_600_000_000, abs%3_600_000_000
		two := func(v uint64) {
			if v < 10 {
				b.WriteByte('0')
			}
			b.WriteString(strconv.FormatUint(v, 10))
		}
		two(h)
		b.WriteByte(':')
		two(rest / 60_000_000)
		b.WriteByte(':')
		rest %= 60_000_000
		two(rest / 1_000_000)
		if f := rest % 1_000_000; f != 0 {
			frac := strconv.FormatUint(f+1_000_000, 10)[1:]
			b.WriteByte('.')
			b.WriteString(strings.TrimRight(frac, "0"))
		}
	}
	return b.String()
}

// epochType is extract(epoch from interval)'s type: PostgreSQL's numeric with 6 decimals.
var epochType = &arrow.Decimal128Type{Precision: 38, Scale: 6}

// isInterval reports whether t is Substrait's interval_compound, which arrow-go's compute/exprs
// does not map: expressions reading one run through this package's nodes (Expr's doc).
func isInterval(t types.Type) bool {
	switch t.(type) {
	case *types.IntervalCompoundType, types.IntervalCompoundType:
		return true
	}
	return false
}

// arrowTypeOf is exprs.FromSubstraitType with PostgreSQL's interval: Substrait's
// interval_compound (which arrow-go v18.8.0 does not map) is month_day_nano_interval, a list of
// them (percentile_cont(ARRAY[…]) of intervals) a list of month_day_nano_interval.
func arrowTypeOf(t types.Type, ext exprs.ExtensionIDSet) (arrow.DataType, bool, error) {
	if isInterval(t) {
		return mdnType, t.GetNullability() != types.NullabilityRequired, nil
	}
	if l, ok := t.(*types.ListType); ok && isInterval(l.Type) {
		return arrow.ListOf(mdnType), t.GetNullability() != types.NullabilityRequired, nil
	}
	return exprs.FromSubstraitType(t, ext)
}

func init() {
	ownFunctions["interval_months"] = intervalField(func(x arrow.MonthDayNanoInterval) int64 { return int64(x.Months) })
	ownFunctions["interval_days"] = intervalField(func(x arrow.MonthDayNanoInterval) int64 { return int64(x.Days) })
	ownFunctions["interval_nanos"] = intervalField(func(x arrow.MonthDayNanoInterval) int64 { return x.Nanoseconds })
	ownFunctions["timestamp_age"] = timestampPairKernel(func(a, b time.Time) (arrow.MonthDayNanoInterval, error) {
		return Age(a, b), nil
	})
	ownFunctions["justify_hours"] = intervalMapKernel(justifyHours)
	ownFunctions["justify_days"] = intervalMapKernel(justifyDays)
	ownFunctions["justify_interval"] = intervalMapKernel(justifyInterval)
}

// Age is PostgreSQL's timestamptz_age in UTC (the session's zone): a - b field by field (years,
// months, days, hours, minutes, seconds, microseconds), computed from the later instant, the
// negative fields borrowing from the next larger one (a day borrowed from a month counts the
// days of the earlier instant's month), the sign restored at the end.
func Age(a, b time.Time) arrow.MonthDayNanoInterval {
	a, b = a.UTC(), b.UTC()
	y1, m1, d1 := a.Date()
	y2, m2, d2 := b.Date()
	h1, mi1, s1 := a.Clock()
	h2, mi2, s2 := b.Clock()
	f := int64(a.Nanosecond()/1000 - b.Nanosecond()/1000)
	sec, min, hour := int64(s1-s2), int64(mi1-mi2), int64(h1-h2)
	mday, mon, year := int64(d1-d2), int64(m1)-int64(m2), int64(y1-y2)
	neg := a.Before(b)
	flip := func() {
		f, sec, min, hour, mday, mon, year = -f, -sec, -min, -hour, -mday, -mon, -year
	}
	if neg {
		flip()
	}
	// borrow carries a negative lo into hi, n of lo to one of hi.
	borrow := func(lo, hi *int64, n int64) {
		for *lo < 0 {
			*lo += n
			*hi--
		}
	}
	borrow(&f, &sec, 1_000_000)
	borrow(&sec, &min, 60)
	borrow(&min, &hour, 60)
	borrow(&hour, &mday, 24)
	for mday < 0 {
		y, m := y2, m2
		if neg {
			y, m = y1, m1
		}
		mday += int64(daysIn(y, m))
		mon--
	}
	for mon < 0 {
		mon += 12
		year--
	}
	if neg {
		flip()
	}
	return arrow.MonthDayNanoInterval{Months: int32(year*12 + mon), Days: int32(mday),
		Nanoseconds: (((hour*60+min)*60+sec)*1_000_000 + f) * nsPerUs}
}

// daysIn returns the number of days of month m of year y.
func daysIn(y int, m time.Month) int {
	return time.Date(y, m+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// justifyHours is PostgreSQL's justify_hours: whole 24 hours of the time into days, the time
// then given the days' sign.
func justifyHours(x arrow.MonthDayNanoInterval) (arrow.MonthDayNanoInterval, bool) {
	d, t := dayBorrow(int64(x.Days)+x.Nanoseconds/nsPerDay, x.Nanoseconds%nsPerDay)
	x.Nanoseconds = t
	return x, setDays(&x, d)
}

// dayBorrow gives the time t (ns) the sign of the days d, as justify_hours and
// justify_interval do: a day moved from d into t, or from t into d, when their signs differ.
func dayBorrow(d, t int64) (int64, int64) {
	switch {
	case d > 0 && t < 0:
		return d - 1, t + nsPerDay
	case d < 0 && t > 0:
		return d + 1, t - nsPerDay
	}
	return d, t
}

// justifyDays is PostgreSQL's justify_days: whole 30 days into months, the days then given the
// months' sign.
func justifyDays(x arrow.MonthDayNanoInterval) (arrow.MonthDayNanoInterval, bool) {
	m := int64(x.Months) + int64(x.Days)/30
	d := int64(x.Days) % 30
	switch {
	case m > 0 && d < 0:
		d += 30
		m--
	case m < 0 && d > 0:
		d -= 30
		m++
	}
	x.Days = int32(d)
	return x, setMonths(&x, m)
}

// justifyInterval is PostgreSQL's justify_interval: justify_hours and justify_days together,
// every field given the sign of the whole.
func justifyInterval(x arrow.MonthDayNanoInterval) (arrow.MonthDayNanoInterval, bool) {
	d := int64(x.Days) + x.Nanoseconds/nsPerDay
	t := x.Nanoseconds % nsPerDay
	m := int64(x.Months) + d/30
	d %= 30
	switch {
	case m > 0 && (d < 0 || d == 0 && t < 0):
		d += 30
		m--
	case m < 0 && (d > 0 || d == 0 && t > 0):
		d -= 30
		m++
	}
	d, t = dayBorrow(d, t)
	x.Nanoseconds = t
	return x, setDays(&x, d) && setMonths(&x, m)
}

func setDays(x *arrow.MonthDayNanoInterval, d int64) bool {
	x.Days = int32(d)
	return d == int64(int32(d))
}

func setMonths(x *arrow.MonthDayNanoInterval, m int64) bool {
	x.Months = int32(m)
	return m == int64(int32(m))
}

// decView is the type month_day_nano_interval arrays are viewed as for arrow-go v18.8.0's take
// (which refuses 16-byte values of other types: "invalid values byte width for take"): the
// same 16 bytes a value, copied bitwise.
var decView = &arrow.Decimal128Type{Precision: 38, Scale: 0}

// mdnView returns a (retained) with its data typed as dt when a is a month_day_nano_interval
// array or dt's view of one; other arrays are returned retained as they are.
func mdnView(a arrow.Array, dt arrow.DataType) arrow.Array {
	id := a.DataType().ID()
	if id != arrow.INTERVAL_MONTH_DAY_NANO && !(id == arrow.DECIMAL128 && dt.ID() == arrow.INTERVAL_MONTH_DAY_NANO) {
		a.Retain()
		return a
	}
	d := a.Data()
	nd := array.NewData(dt, d.Len(), d.Buffers(), nil, d.NullN(), d.Offset())
	defer nd.Release()
	return array.MakeFromData(nd)
}

// takeArray is compute.TakeArray on the calling goroutine (takeOpts), month_day_nano_interval
// included (mdnView).
func takeArray(ctx context.Context, values, indices arrow.Array) (arrow.Array, error) {
	if values.DataType().ID() != arrow.INTERVAL_MONTH_DAY_NANO {
		return takeOpts(ctx, values, indices, nil)
	}
	v := mdnView(values, decView)
	defer v.Release()
	out, err := takeOpts(ctx, v, indices, nil)
	if err != nil {
		return nil, err
	}
	defer out.Release()
	return mdnView(out, mdnType), nil
}

// filterRecordBatch is compute.FilterRecordBatch dropping the rows whose mask is null, on the
// calling goroutine (filterDropNulls), month_day_nano_interval columns included (filtered as
// their decimal128 views, mdnView: arrow-go v18.8.0's take refuses them).
func filterRecordBatch(ctx context.Context, b arrow.RecordBatch, mask arrow.Array) (arrow.RecordBatch, error) {
	var views []int
	for i, f := range b.Schema().Fields() {
		if f.Type.ID() == arrow.INTERVAL_MONTH_DAY_NANO {
			views = append(views, i)
		}
	}
	if len(views) == 0 {
		return filterDropNulls(ctx, b, mask)
	}
	in := viewBatch(b, views, decView)
	defer in.Release()
	out, err := filterDropNulls(ctx, in, mask)
	if err != nil {
		return nil, err
	}
	defer out.Release()
	return viewBatch(out, views, mdnType, b.Schema()), nil
}

// viewBatch returns b with the columns at idx viewed as dt (mdnView), under schema (b's with
// those fields retyped when nil).
func viewBatch(b arrow.RecordBatch, idx []int, dt arrow.DataType, schema ...*arrow.Schema) arrow.RecordBatch {
	cols := make([]arrow.Array, b.NumCols())
	fields := append([]arrow.Field(nil), b.Schema().Fields()...)
	for i := range cols {
		cols[i] = b.Column(i)
		cols[i].Retain()
	}
	for _, i := range idx {
		v := mdnView(cols[i], dt)
		cols[i].Release()
		cols[i] = v
		fields[i].Type = dt
	}
	sc := arrow.NewSchema(fields, nil)
	if len(schema) > 0 {
		sc = schema[0]
	}
	out := array.NewRecordBatch(sc, cols, b.NumRows())
	releaseArrays(cols)
	return out
}

// intervalUnary sets n up as a function of one interval answering out: f of each row's
// value, built with newB.
func intervalUnary[T any](out arrow.DataType, newB func(memory.Allocator) appender[T], f func(arrow.MonthDayNanoInterval) (T, error)) func(*fnNode) error {
	return func(n *fnNode) error {
		if err := oneInterval(n); err != nil {
			return err
		}
		n.out = out
		n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
			a := args[0].(*array.MonthDayNanoInterval)
			return mapRows[T](newB(mem), rows, args, func(i int) (T, bool, error) {
				v, err := f(a.Value(i))
				return v, err == nil, err
			})
		}
		return nil
	}
}

// intervalMapKernel is an interval function of one interval; f's false is "interval out of
// range".
func intervalMapKernel(f func(arrow.MonthDayNanoInterval) (arrow.MonthDayNanoInterval, bool)) func(*fnNode) error {
	return intervalUnary[arrow.MonthDayNanoInterval](mdnType,
		func(m memory.Allocator) appender[arrow.MonthDayNanoInterval] {
			return array.NewMonthDayNanoIntervalBuilder(m)
		},
		func(x arrow.MonthDayNanoInterval) (arrow.MonthDayNanoInterval, error) {
			r, ok := f(x)
			if !ok {
				return r, errIntervalRange()
			}
			return r, nil
		})
}

// intervalField is one field of an interval as bigint (interval_months, interval_days,
// interval_nanos: what sum and avg of intervals add up field by field).
func intervalField(f func(arrow.MonthDayNanoInterval) int64) func(*fnNode) error {
	return intervalUnary[int64](arrow.PrimitiveTypes.Int64,
		func(m memory.Allocator) appender[int64] { return array.NewInt64Builder(m) },
		func(x arrow.MonthDayNanoInterval) (int64, error) { return f(x), nil })
}

// intervalText is interval_text: FormatInterval of each value.
var intervalText = intervalUnary[string](arrow.BinaryTypes.String,
	func(m memory.Allocator) appender[string] { return array.NewStringBuilder(m) },
	func(x arrow.MonthDayNanoInterval) (string, error) { return FormatInterval(x), nil })

// intervalEpoch is interval_epoch, interval_part's EPOCH: a year 365.25 days, the other months
// 30 days (in quarter days, to stay in integers), a day 86,400 seconds; then the time; in
// microseconds at scale 6.
var intervalEpoch = intervalUnary[decimal128.Num](epochType,
	func(m memory.Allocator) appender[decimal128.Num] { return array.NewDecimal128Builder(m, epochType) },
	func(x arrow.MonthDayNanoInterval) (decimal128.Num, error) {
		secs := (int64(4*365.25)*int64(x.Months/12) + 4*30*int64(x.Months%12) + 4*int64(x.Days)) * (86400 / 4)
		return decimal128.FromI64(secs).Mul(decimal128.FromI64(1_000_000)).Add(decimal128.FromI64(x.Nanoseconds / nsPerUs)), nil
	})
