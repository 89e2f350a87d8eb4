package substrait

import (
	"fmt"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
)

// Interval field qualifiers (PostgreSQL's interval typmod): the range is a mask of
// INTERVAL_MASK(field) bits (PostgreSQL's datetime field numbers), the precision the fractional
// digits of the seconds kept.
const (
	ivMonth  = 1 << 1
	ivYear   = 1 << 2
	ivDay    = 1 << 3
	ivHour   = 1 << 10
	ivMinute = 1 << 11
	ivSecond = 1 << 12
	// intervalFullRange is INTERVAL_FULL_RANGE: no field qualifier.
	intervalFullRange = 0x7FFF
	// intervalFullPrecision is INTERVAL_FULL_PRECISION: no precision given.
	intervalFullPrecision = 0xFFFF
)

// intervalRanges are the qualifiers the grammar writes (YEAR, YEAR TO MONTH, DAY TO SECOND…),
// with PostgreSQL's spelling of them (intervaltypmodout).
var intervalRanges = map[int]string{
	ivYear: "year", ivMonth: "month", ivDay: "day", ivHour: "hour", ivMinute: "minute", ivSecond: "second",
	ivYear | ivMonth: "year to month", ivDay | ivHour: "day to hour", ivDay | ivHour | ivMinute: "day to minute",
	ivDay | ivHour | ivMinute | ivSecond: "day to second", ivHour | ivMinute: "hour to minute",
	ivHour | ivMinute | ivSecond: "hour to second", ivMinute | ivSecond: "minute to second",
	intervalFullRange: "",
}

// intervalRangeUnit is the unit DecodeInterval gives a number written without one under the
// qualifier rng: the qualifier's last field (INTERVAL '1' DAY is a day), seconds without one.
func intervalRangeUnit(rng int) string {
	switch rng {
	case ivYear:
		return "year"
	case ivMonth, ivYear | ivMonth:
		return "month"
	case ivDay:
		return "day"
	case ivHour, ivDay | ivHour:
		return "hour"
	case ivMinute, ivHour | ivMinute, ivDay | ivHour | ivMinute:
		return "minute"
	}
	return "second"
}

// intervalTimeRange is intervalTime under the qualifier rng: PostgreSQL's DecodeTime reads a
// time field of two numbers without a fraction as minutes and seconds (not hours and
// minutes) under MINUTE TO SECOND, its minutes at most 59 and its seconds at most 60.
func intervalTimeRange(t string, rng int) (int64, bool, error) {
	if rng != ivMinute|ivSecond || strings.Count(t, ":") != 1 || strings.Contains(t, ".") {
		return intervalTime(t)
	}
	neg := strings.HasPrefix(t, "-")
	body := strings.TrimLeft(t, "+-")
	if len(body) < len(t)-1 {
		return 0, false, nil
	}
	ms, ss, _ := strings.Cut(body, ":")
	m, ok1, of1 := int32Digits(ms)
	sec, ok2, of2 := int32Digits(ss)
	switch {
	case of1 || of2:
		return 0, false, errIntervalField
	case !ok1 || !ok2:
		return 0, false, nil
	case m > 59 || sec > 60:
		return 0, false, errIntervalField
	}
	us := (m*60 + sec) * 1_000_000
	if neg {
		us = -us
	}
	return us, true, nil
}

// adjustIntervalForTypmod is PostgreSQL's AdjustIntervalForTypmod: the fields below the
// qualifier's last one are dropped (truncated toward zero; the larger units stay, as
// INTERVAL '1 day 2 hours' HOUR keeps its day), then the seconds are rounded to prec
// fractional digits (half away from zero).
func adjustIntervalForTypmod(months, days int32, us int64, rng, prec int) (int32, int32, int64) {
	const hour, minute = 3_600_000_000, 60_000_000
	switch rng {
	case ivYear:
		months, days, us = months/12*12, 0, 0
	case ivMonth, ivYear | ivMonth:
		days, us = 0, 0
	case ivDay:
		us = 0
	case ivHour, ivDay | ivHour:
		us = us / hour * hour
	case ivMinute, ivDay | ivHour | ivMinute, ivHour | ivMinute:
		us = us / minute * minute
	}
	return months, days, roundMicros(us, prec) // intervalFullPrecision keeps every digit
}

// roundMicros is us (microseconds) rounded to prec fractional digits of a second, half away
// from zero, as PostgreSQL's AdjustIntervalForTypmod and AdjustTimestampForTypmod round (the
// latter's microseconds counted from 2000-01-01); a prec outside 0 to 5 keeps us.
func roundMicros(us int64, prec int) int64 {
	if prec < 0 || prec >= 6 {
		return us
	}
	scale := int64(1)
	for range 6 - prec {
		scale *= 10
	}
	if us >= 0 {
		return (us + scale/2) / scale * scale
	}
	return -((-us + scale/2) / scale * scale)
}

// intervalQualifier reads the type modifiers of a cast to interval: a range mask (the
// grammar's field qualifier, INTERVAL_FULL_RANGE for interval(p)) and an optional precision,
// as intervaltypmodin checks them (22023; a precision above 6 is 6, as PostgreSQL's warning
// says).
func intervalQualifier(mods []*pg.Node) (rng, prec int, err error) {
	rng, prec = intervalFullRange, intervalFullPrecision
	vals := make([]int, len(mods))
	for i, m := range mods {
		c := m.GetAConst()
		if c == nil || c.GetIval() == nil {
			return 0, 0, errorf(InvalidArgument, "type modifiers must be simple constants or identifiers")
		}
		vals[i] = int(c.GetIval().GetIval())
	}
	switch len(vals) {
	case 1:
		rng = vals[0]
	case 2:
		rng, prec = vals[0], vals[1]
	default:
		return 0, 0, refused(InvalidArgument, "22023", "invalid INTERVAL type modifier")
	}
	if _, ok := intervalRanges[rng]; !ok {
		return 0, 0, refused(InvalidArgument, "22023", "invalid INTERVAL type modifier")
	}
	if prec != intervalFullPrecision {
		if prec < 0 {
			return 0, 0, refused(InvalidArgument, "22023", "INTERVAL(%d) precision must not be negative", prec)
		}
		prec = min(prec, 6)
	}
	return rng, prec, nil
}

// intervalTypeCast binds a cast to interval with a field qualifier or a precision (INTERVAL
// '1' DAY, INTERVAL '1:30' HOUR TO MINUTE, CAST('1-2' AS interval YEAR TO MONTH),
// '1.2345'::interval(2)) as PostgreSQL's interval_in reads its text under the typmod
// (decodeIntervalRange) and AdjustIntervalForTypmod restricts the result. Only a text
// constant (or NULL) is read: another value cast to a qualified interval is refused by name.
// ok is false for other casts.
func (bd *binder) intervalTypeCast(tc *pg.TypeCast) (bval, bool, error) {
	s, ok, err := qualifiedInterval(tc)
	switch {
	case !ok:
		return bval{}, false, nil
	case err == errNullQualifiedInterval:
		e, err := bd.intervalValue(bval{null: true}, "")
		return typed(e), true, err
	case err != nil:
		return bval{}, true, err
	}
	return bd.intervalConstant(intervalTag + s), true, nil
}

// errNullQualifiedInterval is qualifiedInterval's answer for NULL cast to a qualified interval.
var errNullQualifiedInterval = errorf(InvalidArgument, "NULL interval")

// qualifiedInterval reads a cast of a text constant to interval with a field qualifier or a
// precision (intervalTypeCast) and writes the interval's fields as intervalFieldsText. ok is
// false for another cast; NULL is errNullQualifiedInterval, another argument is refused by
// name.
func qualifiedInterval(tc *pg.TypeCast) (string, bool, error) {
	tn := tc.GetTypeName()
	if tn == nil || len(tn.GetTypmods()) == 0 || len(tn.GetArrayBounds()) > 0 || tn.GetSetof() || tn.GetPctType() {
		return "", false, nil
	}
	names := tn.GetNames()
	if len(names) == 2 && names[0].GetString_().GetSval() == "pg_catalog" {
		names = names[1:]
	}
	if len(names) != 1 || names[0].GetString_().GetSval() != "interval" {
		return "", false, nil
	}
	rng, prec, err := intervalQualifier(tn.GetTypmods())
	if err != nil {
		return "", true, err
	}
	c := tc.GetArg().GetAConst()
	if c != nil && c.GetIsnull() {
		return "", true, errNullQualifiedInterval
	}
	if c == nil || c.GetSval() == nil {
		return "", true, unimplementedAre("casts to interval with a field qualifier or precision of values other than text constants")
	}
	months, days, us, err := decodeIntervalRange(c.GetSval().GetSval(), rng)
	if err != nil {
		return "", true, err
	}
	months, days, us = adjustIntervalForTypmod(months, days, us, rng, prec)
	return intervalFieldsText(months, days, us), true, nil
}

// intervalFieldsText writes an interval's fields as text decodeInterval reads back to the
// same fields: "<months> mons <days> days [-]h:mm:ss.ffffff".
func intervalFieldsText(months, days int32, us int64) string {
	sign := ""
	if us < 0 {
		sign, us = "-", -us
	}
	return fmt.Sprintf("%d mons %d days %s%d:%02d:%02d.%06d", months, days, sign,
		us/3_600_000_000, us/60_000_000%60, us/1_000_000%60, us%1_000_000)
}

// typmodNames are PostgreSQL's names of types with a modifier as format_type writes them:
// the modifier goes after the first part ("timestamp(3) with time zone").
var typmodNames = map[string][2]string{
	"bit": {"bit", ""}, "varbit": {"bit varying", ""}, "timestamptz": {"timestamp", " with time zone"},
	"timestamp": {"timestamp", " without time zone"}, "timetz": {"time", " with time zone"},
	"time": {"time", " without time zone"}, "numeric": {"numeric", ""}, "interval": {"interval", ""},
	"varchar": {"character varying", ""}, "bpchar": {"character", ""},
}

// typmodCastRefusal refuses a cast to a type with a modifier flightsrv does not implement,
// naming the type as PostgreSQL writes it ("cast to bit(64) is not supported"); a type or
// modifier it cannot name so is "casts with a type modifier".
func typmodCastRefusal(tn *pg.TypeName) *Error {
	names := tn.GetNames()
	if len(names) == 2 && names[0].GetString_().GetSval() == "pg_catalog" {
		names = names[1:]
	}
	parts, ok := typmodNames[names[len(names)-1].GetString_().GetSval()]
	if len(names) != 1 || !ok {
		return unimplementedAre("casts with a type modifier")
	}
	mods := make([]string, len(tn.GetTypmods()))
	for i, m := range tn.GetTypmods() {
		c := m.GetAConst()
		if c == nil || c.GetIval() == nil {
			return unimplementedAre("casts with a type modifier")
		}
		mods[i] = fmt.Sprint(c.GetIval().GetIval())
	}
	return unimplemented("cast to " + parts[0] + "(" + strings.Join(mods, ",") + ")" + parts[1])
}
