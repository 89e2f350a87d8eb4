package ops

import (
	"context"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/scalar"

	"github.com/flightsrv/flightsrv/internal/pgnumfmt"
)

// to_char(timestamptz, text) and to_char(timestamp, text) with PostgreSQL's template patterns
// (PostgreSQL 15, "Data Type Formatting Functions", Table 9.26 and 9.27), in a UTC session and
// the C locale: every pattern PostgreSQL knows gives PostgreSQL's text, checked against a real
// server (TestToCharMatchesPostgres, TestToCharKeywordGridMatchesPostgres).
//
// A format is read left to right, as PostgreSQL's parse_format reads it. At each position at
// most one prefix is taken (FM: fill mode, no padding; TM: translation mode, names unpadded,
// the C locale's names being the English ones), then the longest keyword that starts there (a
// prefix before none is dropped; FX is a keyword writing nothing), then at most one suffix
// (TH/th: an ordinal suffix on a number; SP: read and ignored, as PostgreSQL does): FMTMMonth
// is "T" then MM then "onth". Text in double quotes is copied without the quotes (a backslash
// inside them copies the next character); outside quotes a backslash before a double quote
// copies the quote; any other character is copied.

// tcKey is one keyword of the to_char template.
type tcKey struct {
	name string
	// num formats a numeric field: its value and its zero-padded width (FM drops the padding;
	// fixed fields keep it whatever FM says).
	num func(t time.Time) (v int, width int)
	// fixed is set for fractional fields (MS, US, FF1…FF6): always zero-padded.
	fixed bool
	// text formats a text field; pad is its blank-padded width (0: none), which TM (a
	// localized name, unpadded) drops unless padAlways (RM: PostgreSQL pads it with TM too).
	text      func(t time.Time) string
	pad       int
	padAlways bool
	// fmText, when set, formats the text field under FM (OF: the hour without its zero).
	fmText func(t time.Time) string
	// ordinal: TH and th apply to the text field (Y,YYY, a number with a comma).
	ordinal bool
	// zone: the field is the zone's name (TZ, tz), which a timestamp without time zone has
	// not: PostgreSQL writes nothing.
	zone bool
}

// tcKeys are the keywords, longest first among those sharing a prefix (the first match at a
// position wins).
var tcKeys = func() []tcKey {
	year := func(t time.Time) int { return t.Year() }
	isoYear := func(t time.Time) int { y, _ := t.ISOWeek(); return y }
	h12 := func(t time.Time) (int, int) {
		h := t.Hour() % 12
		if h == 0 {
			h = 12
		}
		return h, 2
	}
	frac := func(digits int) func(t time.Time) (int, int) {
		div := 1
		for range 9 - digits {
			div *= 10
		}
		return func(t time.Time) (int, int) { return t.Nanosecond() / div, digits }
	}
	meridian := func(am, pm string) func(t time.Time) string {
		return func(t time.Time) string {
			if t.Hour() >= 12 {
				return pm
			}
			return am
		}
	}
	era := func(ad, bc string) func(t time.Time) string {
		return func(t time.Time) string {
			if t.Year() > 0 {
				return ad
			}
			return bc
		}
	}
	month := func(t time.Time) string { return t.Month().String() }
	day := func(t time.Time) string { return t.Weekday().String() }
	upper := func(f func(time.Time) string) func(time.Time) string {
		return func(t time.Time) string { return strings.ToUpper(f(t)) }
	}
	lower := func(f func(time.Time) string) func(time.Time) string {
		return func(t time.Time) string { return strings.ToLower(f(t)) }
	}
	first3 := func(f func(time.Time) string) func(time.Time) string {
		return func(t time.Time) string { return f(t)[:3] }
	}
	roman := []string{"I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X", "XI", "XII"}
	rm := func(t time.Time) string { return roman[t.Month()-1] }
	numeric := []tcKey{
		{name: "CC", num: func(t time.Time) (int, int) { return (t.Year()-1)/100 + 1, 2 }},
		{name: "DDD", num: func(t time.Time) (int, int) { return t.YearDay(), 3 }},
		{name: "DD", num: func(t time.Time) (int, int) { return t.Day(), 2 }},
		{name: "D", num: func(t time.Time) (int, int) { return int(t.Weekday()) + 1, 0 }},
		{name: "FF1", num: frac(1), fixed: true}, {name: "FF2", num: frac(2), fixed: true},
		{name: "FF3", num: frac(3), fixed: true}, {name: "FF4", num: frac(4), fixed: true},
		{name: "FF5", num: frac(5), fixed: true}, {name: "FF6", num: frac(6), fixed: true},
		{name: "HH24", num: func(t time.Time) (int, int) { return t.Hour(), 2 }},
		{name: "HH12", num: h12},
		{name: "HH", num: h12},
		{name: "IDDD", num: func(t time.Time) (int, int) {
			_, w := t.ISOWeek()
			return (w-1)*7 + isoWeekday(t), 3
		}},
		{name: "ID", num: func(t time.Time) (int, int) { return isoWeekday(t), 0 }},
		{name: "IW", num: func(t time.Time) (int, int) { _, w := t.ISOWeek(); return w, 2 }},
		{name: "IYYY", num: func(t time.Time) (int, int) { return isoYear(t), 4 }},
		{name: "IYY", num: func(t time.Time) (int, int) { return isoYear(t) % 1000, 3 }},
		{name: "IY", num: func(t time.Time) (int, int) { return isoYear(t) % 100, 2 }},
		{name: "I", num: func(t time.Time) (int, int) { return isoYear(t) % 10, 0 }},
		{name: "J", num: func(t time.Time) (int, int) { return int(t.Unix()/86400) + 2440588 + floorAdj(t), 0 }},
		{name: "MI", num: func(t time.Time) (int, int) { return t.Minute(), 2 }},
		{name: "MM", num: func(t time.Time) (int, int) { return int(t.Month()), 2 }},
		{name: "MS", num: frac(3), fixed: true},
		{name: "Q", num: func(t time.Time) (int, int) { return (int(t.Month())-1)/3 + 1, 0 }},
		{name: "SSSSS", num: func(t time.Time) (int, int) { return t.Hour()*3600 + t.Minute()*60 + t.Second(), 0 }},
		{name: "SSSS", num: func(t time.Time) (int, int) { return t.Hour()*3600 + t.Minute()*60 + t.Second(), 0 }},
		{name: "SS", num: func(t time.Time) (int, int) { return t.Second(), 2 }},
		{name: "US", num: frac(6), fixed: true},
		{name: "WW", num: func(t time.Time) (int, int) { return (t.YearDay()-1)/7 + 1, 2 }},
		{name: "W", num: func(t time.Time) (int, int) { return (t.Day()-1)/7 + 1, 0 }},
		{name: "YYYY", num: func(t time.Time) (int, int) { return year(t), 4 }},
		{name: "YYY", num: func(t time.Time) (int, int) { return year(t) % 1000, 3 }},
		{name: "YY", num: func(t time.Time) (int, int) { return year(t) % 100, 2 }},
		{name: "Y", num: func(t time.Time) (int, int) { return year(t) % 10, 0 }},
	}
	var keys []tcKey
	for _, k := range numeric {
		keys = append(keys, k)
		l := k
		l.name = strings.ToLower(k.name)
		keys = append(keys, l)
	}
	yyyy := func(t time.Time) string { return strconv.Itoa(t.Year()/1000) + "," + pad3(t.Year()%1000) }
	of := func(width int) func(time.Time) string {
		return func(time.Time) string { return "+" + fmt.Sprintf("%0*d", width, 0) }
	}
	keys = append(keys,
		tcKey{name: "Y,YYY", text: yyyy, ordinal: true}, tcKey{name: "y,yyy", text: yyyy, ordinal: true},
		tcKey{name: "A.D.", text: era("A.D.", "B.C.")}, tcKey{name: "a.d.", text: era("a.d.", "b.c.")},
		tcKey{name: "B.C.", text: era("A.D.", "B.C.")}, tcKey{name: "b.c.", text: era("a.d.", "b.c.")},
		tcKey{name: "AD", text: era("AD", "BC")}, tcKey{name: "ad", text: era("ad", "bc")},
		tcKey{name: "BC", text: era("AD", "BC")}, tcKey{name: "bc", text: era("ad", "bc")},
		tcKey{name: "A.M.", text: meridian("A.M.", "P.M.")}, tcKey{name: "a.m.", text: meridian("a.m.", "p.m.")},
		tcKey{name: "P.M.", text: meridian("A.M.", "P.M.")}, tcKey{name: "p.m.", text: meridian("a.m.", "p.m.")},
		tcKey{name: "AM", text: meridian("AM", "PM")}, tcKey{name: "am", text: meridian("am", "pm")},
		tcKey{name: "PM", text: meridian("AM", "PM")}, tcKey{name: "pm", text: meridian("am", "pm")},
		tcKey{name: "MONTH", text: upper(month), pad: 9}, tcKey{name: "Month", text: month, pad: 9},
		tcKey{name: "month", text: lower(month), pad: 9},
		tcKey{name: "MON", text: upper(first3(month))}, tcKey{name: "Mon", text: first3(month)},
		tcKey{name: "mon", text: lower(first3(month))},
		tcKey{name: "DAY", text: upper(day), pad: 9}, tcKey{name: "Day", text: day, pad: 9},
		tcKey{name: "day", text: lower(day), pad: 9},
		tcKey{name: "DY", text: upper(first3(day))}, tcKey{name: "Dy", text: first3(day)},
		tcKey{name: "dy", text: lower(first3(day))},
		tcKey{name: "RM", text: rm, pad: 4, padAlways: true}, tcKey{name: "rm", text: lower(rm), pad: 4, padAlways: true},
		// The session is UTC: timestamptz is shown in UTC, a timestamp without time zone at
		// offset zero and without a zone name.
		tcKey{name: "TZH", text: func(time.Time) string { return "+00" }},
		tcKey{name: "tzh", text: func(time.Time) string { return "+00" }},
		tcKey{name: "TZM", text: func(time.Time) string { return "00" }},
		tcKey{name: "tzm", text: func(time.Time) string { return "00" }},
		tcKey{name: "TZ", text: func(time.Time) string { return "UTC" }, zone: true},
		tcKey{name: "tz", text: func(time.Time) string { return "utc" }, zone: true},
		tcKey{name: "OF", text: of(2), fmText: of(0)},
		tcKey{name: "of", text: of(2), fmText: of(0)},
		tcKey{name: "FX", text: func(time.Time) string { return "" }},
		tcKey{name: "fx", text: func(time.Time) string { return "" }},
	)
	// Longest first: a keyword that is a prefix of another must come after it.
	sortByLengthDesc(keys)
	return keys
}()

// floorAdj corrects t.Unix()/86400 (which truncates towards zero) for instants before 1970.
func floorAdj(t time.Time) int {
	if t.Unix() < 0 && t.Unix()%86400 != 0 {
		return -1
	}
	return 0
}

func isoWeekday(t time.Time) int {
	if t.Weekday() == time.Sunday {
		return 7
	}
	return int(t.Weekday())
}

func pad3(v int) string {
	s := strconv.Itoa(v)
	for len(s) < 3 {
		s = "0" + s
	}
	return s
}

func sortByLengthDesc(keys []tcKey) {
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && len(keys[j].name) > len(keys[j-1].name); j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
}

// ToChar formats t (shown in UTC) with PostgreSQL's to_char template patterns, as PostgreSQL
// 15 does for a timestamp with time zone in a UTC session (see the comment at the top of this
// file).
func ToChar(t time.Time, format string) string { return toChar(t.UTC(), format, true) }

// ToCharWallclock is to_char of a timestamp without time zone whose wall-clock time is t's in
// UTC: as ToChar, but TZ and tz write nothing (OF, TZH and TZM write offset zero), as
// PostgreSQL's timestamp_to_char.
func ToCharWallclock(t time.Time, format string) string { return toChar(t.UTC(), format, false) }

// tcNode is one element of a to_char template: copied text, or a keyword with its prefix
// (fm, tm) and suffix (th, thUpper; SP read and dropped).
type tcNode struct {
	text                string
	key                 *tcKey
	fm, tm, th, thUpper bool
}

// walkToChar is PostgreSQL's parse_format for timestamps: at each position at most one
// prefix (FM, fm, TM, tm), then the first keyword that starts there (a prefix before none is
// dropped), then at most one suffix (TH, th, SP); quoted text and escapes as the comment at
// the top of this file says. It calls emit for each element in order.
func walkToChar(format string, emit func(n tcNode)) {
	for i := 0; i < len(format); {
		var n tcNode
		switch {
		case strings.HasPrefix(format[i:], "FM"), strings.HasPrefix(format[i:], "fm"):
			n.fm = true
			i += 2
		case strings.HasPrefix(format[i:], "TM"), strings.HasPrefix(format[i:], "tm"):
			n.tm = true
			i += 2
		}
		if i >= len(format) {
			break
		}
		for k := range tcKeys {
			if strings.HasPrefix(format[i:], tcKeys[k].name) {
				n.key = &tcKeys[k]
				break
			}
		}
		if n.key == nil {
			var b strings.Builder
			switch c := format[i]; {
			case c == '"':
				i++
				for i < len(format) && format[i] != '"' {
					if format[i] == '\\' && i+1 < len(format) {
						i++
					}
					b.WriteByte(format[i])
					i++
				}
				i++ // the closing quote
			case c == '\\' && i+1 < len(format) && format[i+1] == '"':
				b.WriteByte('"')
				i += 2
			default:
				b.WriteByte(c)
				i++
			}
			emit(tcNode{text: b.String()})
			continue
		}
		i += len(n.key.name)
		switch {
		case strings.HasPrefix(format[i:], "TH"):
			n.th, n.thUpper = true, true
			i += 2
		case strings.HasPrefix(format[i:], "th"):
			n.th = true
			i += 2
		case strings.HasPrefix(format[i:], "SP"):
			i += 2
		}
		emit(n)
	}
}

// toChar is DCH_to_char of an instant: zoned false for a timestamp without time zone.
func toChar(t time.Time, format string, zoned bool) string {
	var b strings.Builder
	walkToChar(format, func(n tcNode) {
		key := n.key
		if key == nil {
			b.WriteString(n.text)
			return
		}
		if key.num != nil {
			v, width := key.num(t)
			s := strconv.Itoa(v)
			if !n.fm || key.fixed {
				for len(s) < width {
					s = "0" + s
				}
			}
			if n.th {
				s += pgnumfmt.Ordinal(s, n.thUpper)
			}
			b.WriteString(s)
			return
		}
		if key.zone && !zoned {
			return
		}
		s := key.text(t)
		if n.fm && key.fmText != nil {
			s = key.fmText(t)
		}
		if key.pad > 0 && !n.fm && (!n.tm || key.padAlways) {
			for len(s) < key.pad {
				s += " "
			}
		}
		if n.th && key.ordinal {
			s += pgnumfmt.Ordinal(s, n.thUpper)
		}
		b.WriteString(s)
	})
	return b.String()
}

// TimestampText renders t as PostgreSQL renders a timestamptz as text in a UTC session with
// DateStyle ISO: "2001-04-01 06:59:00+00", its fraction of a second without trailing zeros
// ("…06:59:00.5+00"), a year before 1 AD as PostgreSQL's timestamptz_out writes it (no year 0:
// astronomical year -43 is "0044-03-15 12:00:00+00 BC"). Nanoseconds beyond the microsecond,
// which PostgreSQL does not hold, are shown as further digits.
func TimestampText(t time.Time) string { return timestampTextOf(t, true) }

// NaiveTimestampText renders t as PostgreSQL's timestamp_out writes a timestamp without time
// zone with DateStyle ISO: TimestampText's form without the "+00" ("0044-03-15 12:00:00 BC").
func NaiveTimestampText(t time.Time) string { return timestampTextOf(t, false) }

func timestampTextOf(t time.Time, zoned bool) string {
	t = t.UTC()
	b := make([]byte, 0, 36)
	b = appendISODate(b, t)
	b = t.AppendFormat(b, " 15:04:05")
	if ns := t.Nanosecond(); ns != 0 {
		frac := strconv.Itoa(ns + 1e9)[1:]
		b = append(b, '.')
		b = append(b, strings.TrimRight(frac, "0")...)
	}
	if zoned {
		b = append(b, "+00"...)
	}
	if t.Year() <= 0 {
		b = append(b, " BC"...)
	}
	return string(b)
}

// DateText renders t's date as PostgreSQL's date_out writes it with DateStyle ISO:
// "2001-04-01", a year before 1 AD with its BC year (there is no year 0: astronomical year -43
// is "0044-03-15 BC").
func DateText(t time.Time) string {
	b := appendISODate(make([]byte, 0, 16), t)
	if t.Year() <= 0 {
		b = append(b, " BC"...)
	}
	return string(b)
}

// appendISODate appends t's "YYYY-MM-DD", the year at least four digits and, before 1 AD,
// the BC year 1 - t.Year() (the caller appends " BC").
func appendISODate(b []byte, t time.Time) []byte {
	y := t.Year()
	if y <= 0 {
		y = 1 - y
	}
	ys := strconv.Itoa(y)
	for i := len(ys); i < 4; i++ {
		b = append(b, '0')
	}
	b = append(b, ys...)
	return t.AppendFormat(b, "-01-02")
}

// timestampText casts a timestamp datum to text as PostgreSQL does (TimestampText; a
// zone-less timestamp NaiveTimestampText), into the query's allocator.
func timestampText(ctx context.Context, d compute.Datum) (compute.Datum, error) {
	return textOf(ctx, d, func(a arrow.Array) func(i int) string {
		ts := a.(*array.Timestamp)
		typ := ts.DataType().(*arrow.TimestampType)
		return func(i int) string { return timestampTextOf(ts.Value(i).ToTime(typ.Unit), typ.TimeZone != "") }
	})
}

// dateText casts a date datum (date32 or date64) to text as PostgreSQL's date_out (DateText).
func dateText(ctx context.Context, d compute.Datum) (compute.Datum, error) {
	return textOf(ctx, d, func(a arrow.Array) func(i int) string {
		switch v := a.(type) {
		case *array.Date32:
			return func(i int) string { return DateText(v.Value(i).ToTime()) }
		default:
			v64 := a.(*array.Date64)
			return func(i int) string { return DateText(v64.Value(i).ToTime()) }
		}
	})
}

// floatText is a cast of double precision to text as PostgreSQL's float8out writes it (with
// extra_float_digits 1, its default): the shortest decimal that reads back, and Infinity,
// -Infinity and NaN spelled out (arrow-go's cast writes +Inf and -Inf).
func floatText(ctx context.Context, d compute.Datum) (compute.Datum, error) {
	return textOf(ctx, d, func(a arrow.Array) func(i int) string {
		f := a.(*array.Float64)
		return func(i int) string { return float8Text(f.Value(i)) }
	})
}

// float4Texts is a cast of real to text as PostgreSQL's float4out writes it (float4Text).
func float4Texts(ctx context.Context, d compute.Datum) (compute.Datum, error) {
	return textOf(ctx, d, func(a arrow.Array) func(i int) string {
		f := a.(*array.Float32)
		return func(i int) string { return float4Text(f.Value(i)) }
	})
}

// float8ToFloat4 is PostgreSQL's cast of double precision to real (float8_to_float4): the
// nearest real; a finite value past real's range is "value out of range: overflow" and a
// non-zero value that rounds to zero "value out of range: underflow" (22003); infinities and
// NaN stay themselves.
func float8ToFloat4(ctx context.Context, d compute.Datum) (compute.Datum, error) {
	return castEach(ctx, d, func(a arrow.Array) (arrow.Array, error) {
		f := a.(*array.Float64)
		return mapRows[float32](array.NewFloat32Builder(compute.GetAllocator(ctx)), a.Len(), []arrow.Array{a}, func(i int) (float32, bool, error) {
			x := f.Value(i)
			r := float32(x)
			switch {
			case math.IsInf(float64(r), 0) && !math.IsInf(x, 0):
				return 0, false, errFloatOverflow
			case r == 0 && x != 0:
				return 0, false, errFloatUnderflow
			}
			return r, true, nil
		})
	})
}

// float4Text is float4out's text of v: the shortest digits that read back as v (0.1::real is
// 0.1, (1/3.0)::real 0.33333334), in exponential form when the decimal exponent is below -4 or
// at least FLT_DIG (6), else positional. PostgreSQL's shortest-digits search (its copy of Ryu)
// excludes the bounds of v's rounding interval: digits exactly halfway to a neighbouring real,
// which read back as v by rounding half to even and which Go's search accepts when v's
// mantissa is even, are not v's (205379008 is 2.0537901e+08, not 2.05379e+08).
func float4Text(v float32) string {
	f := float64(v)
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return float8Text(f)
	}
	e := strconv.FormatFloat(f, 'e', -1, 32)
	if onFloat4Bound(e, v) {
		mant := strings.TrimPrefix(e[:strings.IndexByte(e, 'e')], "-")
		for p := len(strings.Replace(mant, ".", "", 1)) + 1; p <= 9; p++ {
			c := strconv.FormatFloat(f, 'e', p-1, 32)
			if r, err := strconv.ParseFloat(c, 32); err == nil && float32(r) == v && !onFloat4Bound(c, v) {
				e = c
				break
			}
		}
	}
	return pgFloatForm(e, 6)
}

// onFloat4Bound reports whether decimal text s is exactly halfway between real v and a
// neighbouring real (a bound of v's rounding interval).
func onFloat4Bound(s string, v float32) bool {
	x, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return false
	}
	for _, n := range []float32{math.Nextafter32(v, float32(math.Inf(1))), math.Nextafter32(v, float32(math.Inf(-1)))} {
		mid := (float64(v) + float64(n)) / 2 // exact: a real has 24 bits, a double 53
		if math.IsInf(float64(n), 0) || math.Abs(x-mid) > 1e-12*math.Abs(mid) {
			continue
		}
		d, ok := new(big.Rat).SetString(s)
		if ok && d.Cmp(new(big.Rat).SetFloat64(mid)) == 0 {
			return true
		}
	}
	return false
}

// pgFloatForm writes e, a number in Go's exponential form ("-1.5e+07"), as float4out and
// float8out write it: unchanged when its exponent is below -4 or at least digits, else the
// same digits positionally ("-15000000" for digits 15, "0.00015" from "1.5e-04").
func pgFloatForm(e string, digits int) string {
	at := strings.IndexByte(e, 'e')
	exp, err := strconv.Atoi(e[at+1:])
	if err != nil || exp < -4 || exp >= digits {
		return e
	}
	sign, mant := "", e[:at]
	if strings.HasPrefix(mant, "-") {
		sign, mant = "-", mant[1:]
	}
	ds := strings.Replace(mant, ".", "", 1)
	switch {
	case exp < 0:
		return sign + "0." + strings.Repeat("0", -exp-1) + ds
	case len(ds) <= exp+1:
		return sign + ds + strings.Repeat("0", exp+1-len(ds))
	}
	return sign + ds[:exp+1] + "." + ds[exp+1:]
}

// float8Text is float8out's text of v (floatText): the shortest digits that read back, in
// exponential form (at least two exponent digits) when the decimal exponent is below -4 or
// at least 15 (DBL_DIG), else positional (1234567, not Go's 1.234567e+06). As float4Text's,
// the search excludes digits exactly halfway to a neighbouring double, which Go's accepts when
// v's mantissa is even: 1e23 is 9.999999999999999e+22, as PostgreSQL writes it.
func float8Text(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "Infinity"
	case math.IsInf(v, -1):
		return "-Infinity"
	case math.IsNaN(v):
		return "NaN"
	}
	e := strconv.FormatFloat(v, 'e', -1, 64)
	if math.Float64bits(v)&1 == 0 && onFloat8Bound(e, v) {
		mant := strings.TrimPrefix(e[:strings.IndexByte(e, 'e')], "-")
		for p := len(strings.Replace(mant, ".", "", 1)) + 1; p <= 17; p++ {
			c := strconv.FormatFloat(v, 'e', p-1, 64)
			if r, err := strconv.ParseFloat(c, 64); err == nil && r == v && !onFloat8Bound(c, v) {
				e = c
				break
			}
		}
	}
	return pgFloatForm(e, 15)
}

// onFloat8Bound reports whether decimal text s is exactly halfway between double v and a
// neighbouring double (a bound of v's rounding interval), compared exactly.
func onFloat8Bound(s string, v float64) bool {
	d, ok := new(big.Rat).SetString(s)
	if !ok || v == 0 {
		return false
	}
	for _, n := range []float64{math.Nextafter(v, math.Inf(1)), math.Nextafter(v, math.Inf(-1))} {
		if math.IsInf(n, 0) {
			continue
		}
		mid := new(big.Rat).Add(new(big.Rat).SetFloat64(v), new(big.Rat).SetFloat64(n))
		if d.Cmp(mid.Quo(mid, big.NewRat(2, 1))) == 0 {
			return true
		}
	}
	return false
}

// textOf casts an array or scalar datum to text, each non-null value written by the function
// spell returns for its array; the result is built with ctx's allocator (the caller releases
// it).
func textOf(ctx context.Context, d compute.Datum, spell func(arrow.Array) func(i int) string) (compute.Datum, error) {
	return castEach(ctx, d, func(a arrow.Array) (arrow.Array, error) {
		text := spell(a)
		return mapStrings(compute.GetAllocator(ctx), a.Len(), []arrow.Array{a}, func(i int) (string, bool, error) {
			return text(i), true, nil
		})
	})
}

// castEach is a cast of an array or scalar datum by build, which maps the values of an array
// (a scalar is read as an array of one value and answered as a scalar again); the result is
// built with ctx's allocator (the caller releases it).
func castEach(ctx context.Context, d compute.Datum, build func(arrow.Array) (arrow.Array, error)) (compute.Datum, error) {
	var a arrow.Array
	switch v := d.(type) {
	case *compute.ArrayDatum:
		a = v.MakeArray()
	case *compute.ScalarDatum:
		arr, err := scalar.MakeArrayFromScalar(v.Value, 1, compute.GetAllocator(ctx))
		if err != nil {
			return nil, err
		}
		a = arr
	default:
		return nil, fmt.Errorf("ops: cast of %T", d)
	}
	defer a.Release()
	out, err := build(a)
	if err != nil {
		return nil, err
	}
	defer out.Release()
	if _, ok := d.(*compute.ScalarDatum); ok {
		sc, err := scalar.GetScalar(out, 0)
		if err != nil {
			return nil, err
		}
		return compute.NewDatum(sc), nil
	}
	return compute.NewDatum(out), nil
}
