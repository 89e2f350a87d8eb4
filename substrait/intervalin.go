package substrait

import (
	"math"
	"strconv"
	"strings"
)

// PostgreSQL's interval_in: ParseDateTime's fields and DecodeInterval's reading of them, then
// DecodeISO8601Interval's designator form where the first does not read.

// intervalToken is one of ParseDateTime's fields of interval text.
type intervalToken struct {
	kind byte   // 'n' number (signed, optional fraction, or years-months y-m), 't' time hh:mm[:ss[.f]] (signed), 'u' unit word
	text string // the field as written (lower case)
}

// Unit masks of DecodeInterval (DTK_M): a unit given twice is invalid.
const (
	imYear = 1 << iota
	imMonth
	imDay
	imWeek
	imHour
	imMinute
	imSecond
	imMilli
	imMicro
	imDecade
	imCentury
	imMillennium
	imQuarter
	imAllSecs = imSecond | imMilli | imMicro
	imTime    = imHour | imMinute | imAllSecs
)

// errIntervalSyntax is interval_in's 22007 (quoting no text).
var errIntervalSyntax = &Error{Code: InvalidArgument, SQLState: "22007", Msg: "invalid input syntax for type interval"}

// errIntervalField is interval_in's 22015: a field past int32, or days past int32.
var errIntervalField = &Error{Code: InvalidArgument, SQLState: "22015", Msg: "interval field value out of range"}

// tokenizeInterval splits s (lower case) into ParseDateTime's fields: runs of digits with an
// embedded '.', '-' or ':' (and a leading sign), runs of letters; other punctuation ('@', ',')
// and white space delimit. ok false where ParseDateTime or DecodeInterval's reading of a
// field fails (a letter run followed by '-', '/' or '.', a sign followed by neither a digit
// nor a letter, "1.", "1/2", three-part dates).
func tokenizeInterval(s string) ([]intervalToken, bool) {
	var out []intervalToken
	isDigit := func(c byte) bool { return c >= '0' && c <= '9' }
	for p := 0; p < len(s); {
		c := s[p]
		switch {
		case isSpace(c):
			p++
		case isDigit(c) || c == '.' || c == '+' || c == '-':
			start := p
			signed := c == '+' || c == '-'
			if signed {
				p++
				for p < len(s) && isSpace(s[p]) {
					p++
				}
				if p >= len(s) || !isDigit(s[p]) {
					return nil, false // a sign before a letter is a special value ("-infinity"): not an interval in PostgreSQL 15
				}
			}
			body := p
			for p < len(s) && (isDigit(s[p]) || s[p] == '.' || s[p] == ':' || s[p] == '-' || s[p] == '/') {
				if s[p] == '-' && p == body {
					break
				}
				p++
			}
			text := s[start:p]
			if signed {
				text = s[start:start+1] + s[body:p] // spaces after the sign dropped
			}
			if p < len(s) && isLetter(s[p]) && strings.ContainsAny(s[body:p], "-/") {
				return nil, false // a date with a month name
			}
			kind := byte('n')
			if strings.Contains(text, ":") {
				kind = 't'
			}
			out = append(out, intervalToken{kind: kind, text: text})
		case isLetter(c):
			start := p
			for p < len(s) && isLetter(s[p]) {
				p++
			}
			if p < len(s) && (s[p] == '-' || s[p] == '/' || s[p] == '.') {
				return nil, false
			}
			out = append(out, intervalToken{kind: 'u', text: s[start:p]})
		case c < 0x80 && c > 0x20 && c != 0x7f:
			p++ // punctuation delimits
		default:
			return nil, false
		}
	}
	return out, true
}

// intervalAcc accumulates an interval as DecodeInterval's pg_itm_in does: years, months and
// days in int32 (a field past it is 22015), microseconds in int64, fractions in double
// precision as PostgreSQL computes them (AdjustFractYears, AdjustFractDays,
// AdjustFractMicroseconds: 0.0000015 seconds is 1 microsecond there, as here).
type intervalAcc struct {
	years, months, days int64
	usec                int64
	overflow            bool
}

func (a *intervalAcc) addInt32(f *int64, v int64) {
	*f += v
	if *f != int64(int32(*f)) || v != int64(int32(v)) {
		a.overflow = true
	}
}

func (a *intervalAcc) addUsec(v int64) {
	s := a.usec + v
	if (v > 0 && s < a.usec) || (v < 0 && s > a.usec) {
		a.overflow = true
	}
	a.usec = s
}

// fractMicros is AdjustFractMicroseconds.
func (a *intervalAcc) fractMicros(frac float64, scale int64) {
	if frac == 0 {
		return
	}
	frac *= float64(scale)
	us := int64(frac)
	frac -= float64(us)
	a.addUsec(us + int64(math.RoundToEven(frac)))
}

// fractDays is AdjustFractDays.
func (a *intervalAcc) fractDays(frac float64, scale int64) {
	if frac == 0 {
		return
	}
	frac *= float64(scale)
	extra := int64(frac)
	a.addInt32(&a.days, extra)
	a.fractMicros(frac-float64(extra), usPerDay)
}

// add is DecodeInterval's (and DecodeISO8601Interval's) step for val and its fraction fval
// of a canonical unit.
func (a *intervalAcc) add(val int64, fval float64, unit string) {
	switch unit {
	case "microseconds", "milliseconds", "second", "minute", "hour":
		per := unitMicros[unit]
		if val != 0 && (val > math.MaxInt64/per || val < math.MinInt64/per) {
			a.overflow = true
			return
		}
		a.addUsec(val * per)
		a.fractMicros(fval, per)
	case "day":
		a.addInt32(&a.days, val)
		a.fractMicros(fval, usPerDay)
	case "week":
		a.addInt32(&a.days, val*7)
		a.fractDays(fval, 7)
	case "month":
		a.addInt32(&a.months, val)
		a.fractDays(fval, 30)
	default: // year, decade, century, millennium
		k := unitMonths[unit] / 12
		a.addInt32(&a.years, val*k)
		if fval != 0 {
			a.addInt32(&a.months, int64(math.RoundToEven(fval*float64(k)*12)))
		}
	}
}

// usPerDay is a day in microseconds.
const usPerDay = 86_400_000_000

// unitMask is DecodeInterval's DTK_M of a canonical unit (a second with a fraction takes the
// milli- and microseconds too).
func unitMask(unit string, fraction bool) int {
	switch unit {
	case "year":
		return imYear
	case "month":
		return imMonth
	case "quarter":
		return imQuarter
	case "week":
		return imWeek
	case "day":
		return imDay
	case "hour":
		return imHour
	case "minute":
		return imMinute
	case "second":
		if fraction {
			return imAllSecs
		}
		return imSecond
	case "milliseconds":
		return imMilli
	case "microseconds":
		return imMicro
	case "decade":
		return imDecade
	case "century":
		return imCentury
	}
	return imMillennium
}

// decodeInterval reads interval text as PostgreSQL 15's interval_in does (IntervalStyle
// postgres): the verbose and SQL-standard forms by DecodeInterval, fields read from right to
// left so that a unit applies to the number before it, a number without a unit is seconds
// unless a time field or an hour follows it (days then), "y-m" is years and months, a time
// field is hh:mm[:ss[.frac]] (mm:ss.frac with one colon), "ago" negates, each unit at most
// once; else the ISO 8601 designator form P[nY][nM][nW][nD][T[nH][nM][nS]] (case as written,
// no spaces). ISO 8601's alternative form (P0001-02-03T04:05:06) is refused by name.
func decodeInterval(s string) (months, days int32, us int64, err error) {
	return decodeIntervalRange(s, intervalFullRange)
}

// decodeIntervalRange is decodeInterval under the field qualifier rng (an interval typmod's
// range, intervalFullRange for none), which DecodeInterval reads a number without a unit by
// (intervalRangeUnit) and a two-field time under MINUTE TO SECOND as mm:ss; the qualifier's
// truncation of the result is adjustIntervalForTypmod's.
func decodeIntervalRange(s string, rng int) (months, days int32, us int64, err error) {
	var acc intervalAcc
	ok, err := decodeVerbose(strings.ToLower(s), &acc, rng)
	if err != nil {
		return 0, 0, 0, err
	}
	if !ok {
		acc = intervalAcc{}
		if err := decodeISOInterval(s, &acc); err != nil {
			return 0, 0, 0, err
		}
	}
	if acc.overflow {
		return 0, 0, 0, errIntervalField
	}
	total := acc.years*12 + acc.months
	switch {
	case total != int64(int32(total)):
		return 0, 0, 0, &Error{Code: InvalidArgument, SQLState: "22008", Msg: "interval out of range"}
	case acc.usec > maxIntervalMicros || acc.usec < -maxIntervalMicros:
		return 0, 0, 0, refused(Unimplemented, "0A000", "an interval whose time part is more than 106751 days is not supported (flightsrv holds it in nanoseconds)")
	}
	return int32(total), int32(acc.days), acc.usec, nil
}

// decodeVerbose is DecodeInterval over s's fields into acc: ok false where PostgreSQL's is
// DTERR_BAD_FORMAT (the ISO form is tried next), err 22015 where it is DTERR_FIELD_OVERFLOW.
func decodeVerbose(s string, acc *intervalAcc, rng int) (bool, error) {
	toks, ok := tokenizeInterval(s)
	if !ok || len(toks) == 0 {
		return false, nil
	}
	const ignore = ""
	typ := ignore // the unit of the next number read (DecodeInterval's type)
	fmask := 0
	unitPending := false // a unit word read, its number not yet
	ago := false
	for i := len(toks) - 1; i >= 0; i-- {
		tk := toks[i]
		tmask := 0
		switch tk.kind {
		case 't':
			us, ok, err := intervalTimeRange(tk.text, rng)
			if err != nil || !ok {
				return false, err
			}
			if acc.addUsec(us); acc.overflow {
				return false, errIntervalField
			}
			tmask, typ, unitPending = imTime, "day", false
		case 'n':
			if typ == ignore {
				typ = intervalRangeUnit(rng)
			}
			if typ == "ago" {
				return false, nil
			}
			val, fval, ym, ok, err := intervalNumber(tk.text)
			if err != nil || !ok {
				return false, err
			}
			if ym {
				acc.add(val, 0, "month")
				tmask, typ = imMonth|imYear, "month"
			} else {
				acc.add(val, fval, typ)
				tmask = unitMask(typ, fval != 0)
				if typ == "hour" {
					typ = "day" // DecodeInterval: "set for next field"
				}
			}
			unitPending = false
			if acc.overflow {
				return false, errIntervalField // DTERR_FIELD_OVERFLOW, before the duplicate test
			}
		case 'u':
			if unitPending {
				return false, nil
			}
			if tk.text == "ago" {
				ago, typ = true, "ago"
				continue
			}
			u, known := lookupUnit(tk.text)
			if !known || u == "quarter" {
				return false, nil
			}
			typ, unitPending = u, true
		}
		if tmask&fmask != 0 {
			return false, nil
		}
		fmask |= tmask
	}
	if fmask == 0 || unitPending {
		return false, nil
	}
	if ago {
		// PostgreSQL negates each field in its type: int32's least value (-2147483648 days
		// ago) overflows, 22015.
		if acc.usec == math.MinInt64 {
			acc.overflow = true
		}
		acc.years, acc.months, acc.days, acc.usec = -acc.years, -acc.months, -acc.days, -acc.usec
		for _, f := range []int64{acc.years, acc.months, acc.days} {
			if f != int64(int32(f)) {
				acc.overflow = true
			}
		}
	}
	return true, nil
}

// intervalNumber reads a number field as DecodeInterval does: [+-]digits[.[digits]] or
// [+-].digits (val, and fval the fraction with the field's sign), or [+-]y-m (ym: val in
// months, the sign applying to both). ok false for anything else; a whole part past int32
// (strtoint) is 22015.
func intervalNumber(t string) (val int64, fval float64, ym, ok bool, err error) {
	neg := strings.HasPrefix(t, "-")
	body := strings.TrimLeft(t, "+-")
	if len(body) < len(t)-1 {
		return 0, 0, false, false, nil
	}
	if y, m, isYM := strings.Cut(body, "-"); isYM {
		yv, ok1, of1 := int32Digits(y)
		mv, ok2, of2 := int32Digits(m)
		if of1 || of2 {
			return 0, 0, false, false, errIntervalField
		}
		if !ok1 || !ok2 {
			return 0, 0, false, false, nil
		}
		total := yv*12 + mv
		if neg {
			total = -total
		}
		if total != int64(int32(total)) {
			return 0, 0, false, false, errIntervalField
		}
		return total, 0, true, true, nil
	}
	whole, frac, hasFrac := strings.Cut(body, ".")
	if whole == "" && (frac == "" || neg || len(t) > len(body)) || strings.ContainsAny(frac, ".-/:") {
		return 0, 0, false, false, nil
	}
	if whole != "" {
		v, ok, of := int32Digits(whole)
		if of && neg && strings.TrimLeft(whole, "0") == "2147483648" {
			// strtoint reads the sign with the digits: -2147483648 is int32's least value.
			v, ok, of = -math.MinInt32, true, false
		}
		if of {
			return 0, 0, false, false, errIntervalField
		}
		if !ok {
			return 0, 0, false, false, nil
		}
		val = v
	}
	if hasFrac && frac != "" {
		for i := 0; i < len(frac); i++ {
			if frac[i] < '0' || frac[i] > '9' {
				return 0, 0, false, false, nil
			}
		}
		fval, _ = strconv.ParseFloat("0."+frac, 64)
	}
	if neg {
		val, fval = -val, -fval
	}
	return val, fval, false, true, nil
}

// int32Digits reads a run of decimal digits (ok), overflow when past int32 (strtoint's ERANGE).
func int32Digits(s string) (v int64, ok, overflow bool) {
	if s == "" {
		return 0, false, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false, false
		}
		if v = v*10 + int64(s[i]-'0'); v > math.MaxInt32 {
			return 0, false, true
		}
	}
	return v, true, false
}

// intervalTime reads a time field, [+-]hh:mm[:ss[.frac]] or [+-]mm:ss.frac (DecodeTime as
// DecodeTimeForInterval reads it), as microseconds: ok false where it does not read, 22015
// for minutes past 59, seconds past 60 or a field past int32.
func intervalTime(t string) (int64, bool, error) {
	neg := strings.HasPrefix(t, "-")
	body := strings.TrimLeft(t, "+-")
	if len(body) < len(t)-1 {
		return 0, false, nil
	}
	parts := strings.Split(body, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return 0, false, nil
	}
	last, frac, hasFrac := strings.Cut(parts[len(parts)-1], ".")
	fields := append(parts[:len(parts)-1:len(parts)-1], last)
	vals := make([]int64, len(fields))
	for i, f := range fields {
		v, ok, of := int32Digits(f)
		if of {
			return 0, false, errIntervalField
		}
		if !ok {
			return 0, false, nil
		}
		vals[i] = v
	}
	var fsec int64
	if hasFrac {
		if frac == "" {
			return 0, false, nil
		}
		for i := 0; i < len(frac); i++ {
			if frac[i] < '0' || frac[i] > '9' {
				return 0, false, nil
			}
		}
		f, _ := strconv.ParseFloat("0."+frac, 64)
		fsec = int64(math.RoundToEven(f * 1e6))
	}
	var h, m, sec int64
	switch {
	case len(vals) == 3:
		h, m, sec = vals[0], vals[1], vals[2]
	case hasFrac: // mm:ss.frac
		m, sec = vals[0], vals[1]
	default:
		h, m = vals[0], vals[1]
	}
	if m > 59 || sec > 60 || fsec > 1_000_000 {
		return 0, false, errIntervalField
	}
	us := ((h*60+m)*60+sec)*1_000_000 + fsec
	if neg {
		us = -us
	}
	return us, true, nil
}

// decodeISOInterval is DecodeISO8601Interval's designator form of s (as written: an upper-case
// P first, upper-case designators, no spaces) into acc. Its alternative form (a number not
// followed by a designator, where PostgreSQL would read one) is refused by name; anything
// else that does not read is 22007, a number past ±1e15 22015.
func decodeISOInterval(s string, acc *intervalAcc) error {
	if len(s) < 2 || s[0] != 'P' {
		return errIntervalSyntax
	}
	inTime, haveField := false, false
	for p := 1; p < len(s); {
		if s[p] == 'T' {
			inTime, haveField = true, false
			p++
			continue
		}
		start := p
		if s[p] != '-' && s[p] != '.' && (s[p] < '0' || s[p] > '9') {
			return errIntervalSyntax
		}
		if s[p] == '-' {
			p++
		}
		for p < len(s) && (s[p] >= '0' && s[p] <= '9' || s[p] == '.') {
			p++
		}
		num := s[start:p]
		v, err := strconv.ParseFloat(num, 64)
		if err != nil || strings.Count(num, ".") > 1 {
			return errIntervalSyntax
		}
		if p < len(s) && (s[p] == 'E' || s[p] == 'e') {
			return refused(Unimplemented, "0A000", "interval values in ISO 8601 with an exponent are not supported")
		}
		if v < -1e15 || v > 1e15 {
			return errIntervalField
		}
		ipart := int64(math.Trunc(v))
		fpart := v - float64(ipart)
		unit := ""
		if p < len(s) {
			switch d := s[p]; {
			case !inTime && d == 'Y':
				unit = "year"
			case !inTime && d == 'M':
				unit = "month"
			case !inTime && d == 'W':
				unit = "week"
			case !inTime && d == 'D':
				unit = "day"
			case inTime && d == 'H':
				unit = "hour"
			case inTime && d == 'M':
				unit = "minute"
			case inTime && d == 'S':
				unit = "second"
			}
		}
		if unit == "" {
			if p >= len(s) || s[p] == '-' || s[p] == ':' || !inTime && s[p] == 'T' {
				if haveField {
					return errIntervalSyntax
				}
				return refused(Unimplemented, "0A000", "interval values in ISO 8601's alternative format (P0001-02-03T04:05:06) are not supported: write P1Y2M3DT4H5M6S")
			}
			return errIntervalSyntax
		}
		p++
		haveField = true
		if acc.add(ipart, fpart, unit); acc.overflow {
			return errIntervalField
		}
	}
	return nil
}
