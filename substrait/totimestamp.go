package substrait

import (
	"errors"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/types"
)

// bindToTimestamp binds PostgreSQL's to_timestamp over constants, folded to a timestamp
// literal (so that it bounds a route as any timestamp literal does):
//
//   - to_timestamp(text, text): the text read by the format as PostgreSQL's to_timestamp reads
//     it (PostgreSQL's DCH_from_char, outside FX mode) for the patterns BI tools write —
//     YYYY, MM, DD, HH24, MI, SS, MS, US, the 12-hour clock (HH12, HH) with a meridiem
//     indicator (AM, PM, A.M., P.M.), month names (Mon, Month), day names (Dy, Day: read and
//     ignored, but in an ISO week), DDD (day of the year), J (Julian day), Y,YYY, YYY, YY
//     and Y (adjust_partial_year_to_2020), D (read and ignored), ISO 8601 week dates (IYYY,
//     IYY, IY, I, IW, ID, IDDD: isoweekdate2date; mixed with Gregorian patterns 22007
//     "invalid combination of date conventions"), FX (exact mode), all in either case, the
//     FM prefix and TH suffix, separators and spaces, "quoted" text; Superset writes
//     TO_TIMESTAMP('2001-03-01 00:00:00.000000', 'YYYY-MM-DD HH24:MI:SS.US'). Any other
//     PostgreSQL pattern (WW, W, CC, Q, RM, TZ, FF1, the TM and SP modifiers…) is
//     Unimplemented naming the pattern; a value the format cannot read, or a
//     field out of its range, is InvalidArgument with PostgreSQL's SQLSTATE (22007, 22008),
//     quoting neither.
//   - to_timestamp(double precision): seconds since 1970-01-01 UTC, rounded to the
//     microsecond as PostgreSQL rounds (rint after moving to its 2000 epoch); NaN and values
//     outside PostgreSQL's timestamp range or timestamp[ns]'s (1677-09-21 to 2262-04-11) are
//     InvalidArgument (22008), ±Infinity (PostgreSQL's ±infinity) Unimplemented (0A000).
//
// to_timestamp(double precision) of a value that is not a constant is computed per row
// (toTimestampPerRow); to_timestamp(text, text) of a format that is not a constant is
// Unimplemented.
func (bd *binder) bindToTimestamp(args []bval) (bval, error) {
	switch len(args) {
	case 1:
		var secs float64
		switch {
		case args[0].null:
			return typed(expr.NewNullLiteral(tsType().WithNullability(nullableN))), nil
		case args[0].str != nil:
			f, err := strconv.ParseFloat(strings.TrimSpace(*args[0].str), 64)
			if err != nil {
				return bval{}, &Error{Code: InvalidArgument, SQLState: "22P02", Msg: "invalid input syntax for type double precision"}
			}
			secs = f
		default:
			switch l := args[0].e.(type) {
			case *expr.PrimitiveLiteral[int32]:
				secs = float64(l.Value)
			case *expr.PrimitiveLiteral[int64]:
				secs = float64(l.Value)
			case *expr.PrimitiveLiteral[float64]:
				secs = l.Value
			case *expr.ProtoLiteral:
				d, _, ok := numLiteralValue(l)
				if !ok {
					return bd.toTimestampPerRow(args[0])
				}
				f, err := strconv.ParseFloat(d.Text('f'), 64)
				if err != nil {
					return bd.toTimestampPerRow(args[0])
				}
				secs = f
			default:
				return bd.toTimestampPerRow(args[0])
			}
		}
		t, err := epochToTimestamp(secs)
		if err != nil {
			return bval{}, err
		}
		return typed(tsLiteral(t)), nil
	case 2:
		if args[0].null || args[1].null {
			return typed(expr.NewNullLiteral(tsType().WithNullability(nullableN))), nil
		}
		s, ok1 := constText(args[0])
		f, ok2 := constText(args[1])
		if !ok1 && ok2 {
			return bd.toDatePerRow("to_timestamp", tsType(), args[0], f)
		}
		if !ok1 || !ok2 {
			return bval{}, unimplemented("to_timestamp(text, text) with a format that is not a text constant")
		}
		t, err := parseToTimestamp(s, f)
		if err != nil {
			return bval{}, err
		}
		return typed(tsLiteral(t)), nil
	}
	return bval{}, errorf(InvalidArgument, "to_timestamp takes 1 to 2 arguments")
}

// toTimestampPerRow binds to_timestamp(x) of a number x that is not a constant (a column, an
// expression, a parameter) as PostgreSQL's to_timestamp(double precision): integers and
// numerics cast to double precision as PostgreSQL casts them implicitly, then
// float8_timestamptz per row (scan/ops to_timestamp_float8, epochToTimestamp's rules); any
// other type is PostgreSQL's 42883.
func (bd *binder) toTimestampPerRow(x bval) (bval, error) {
	if !x.untyped() {
		if f := familyOf(x.typ()); (f != famInt && f != famFloat && f != famNumeric) || isIntervalType(x.typ()) || x.json || x.jsonb {
			return bval{}, errorf(InvalidArgument, "function to_timestamp(%s) does not exist", jsonTypeName(x))
		}
	}
	e, err := bd.coerce(x, fp64Type(), "argument of to_timestamp")
	if err != nil {
		return bval{}, err
	}
	f, err := bd.fn(URNPostgres, "to_timestamp_float8", tsType(), e)
	return typed(f), err
}

// toDatePerRow binds name(x, format) (to_date or to_timestamp, of type out) of text x computed
// per row: the format is read here (a pattern not read is refused by name before any row),
// each row by the executor with ToDate or ToTimestamp.
func (bd *binder) toDatePerRow(name string, out types.Type, x bval, format string) (bval, error) {
	if x.e == nil || x.param > 0 || familyOf(x.typ()) != famString {
		return bval{}, unimplemented(name + "(text, text) of a value that is not text")
	}
	if _, err := parseDCHFormat(format); err != nil {
		return bval{}, err
	}
	f, err := bd.fn(URNPostgres, name+"_text", out.WithNullability(nullableN), types.Enum(format), x.e)
	return typed(f), err
}

// bindToDate binds PostgreSQL's to_date(text, text) over constants, folded to a date
// literal: the text read by the format as to_timestamp(text, text) reads it (parseToDate: the
// same patterns, errors and refusals by name). Arguments that are not text constants are
// Unimplemented.
func (bd *binder) bindToDate(args []bval) (bval, error) {
	if args[0].null || args[1].null {
		return typed(expr.NewNullLiteral(dateType().WithNullability(nullableN))), nil
	}
	s, ok1 := constText(args[0])
	f, ok2 := constText(args[1])
	if !ok1 && ok2 {
		return bd.toDatePerRow("to_date", dateType(), args[0], f)
	}
	if !ok1 || !ok2 {
		return bval{}, unimplemented("to_date(text, text) with a format that is not a text constant")
	}
	days, err := parseToDate(s, f)
	if err != nil {
		return bval{}, err
	}
	return typed(expr.NewPrimitiveLiteral(types.Date(days), false)), nil
}

// PostgreSQL's timestamp range (timestamp.h): [4714-11-24 00:00 BC, 294277-01-01 00:00) in
// seconds from the Unix epoch, as to_timestamp(double precision) checks it.
const (
	pgMinEpochSeconds = -210866803200.0
	pgEndEpochSeconds = 9224318016000.0
	pgEpochShift      = 946684800.0 // 2000-01-01 in Unix seconds
)

// epochToTimestamp is PostgreSQL's to_timestamp(double precision) (float8_timestamptz).
func epochToTimestamp(secs float64) (time.Time, error) {
	switch {
	case math.IsNaN(secs):
		return time.Time{}, &Error{Code: InvalidArgument, SQLState: "22008", Msg: "timestamp cannot be NaN"}
	case math.IsInf(secs, 0):
		// PostgreSQL answers infinity or -infinity, which timestamp[ns] has no form for.
		return time.Time{}, refused(Unimplemented, "0A000", "to_timestamp of infinity is not supported: flightsrv's timestamps hold no infinite value")
	case secs < pgMinEpochSeconds || secs >= pgEndEpochSeconds:
		return time.Time{}, &Error{Code: InvalidArgument, SQLState: "22008", Msg: "timestamp out of range"}
	}
	us := math.RoundToEven((secs - pgEpochShift) * 1e6) // microseconds from 2000-01-01
	ns := (us + pgEpochShift*1e6) * 1e3
	if ns < float64(minNanoTime.UnixNano()) || ns >= float64(maxNanoTime.UnixNano()) {
		// An instant PostgreSQL holds and timestamp[ns] does not (to_timestamp(1e10) is
		// 2286-11-20): 22008, never clamped to the range.
		return time.Time{}, errTimestampRange()
	}
	// us is an integer below 2^53 in this range: the sum is exact in int64.
	return time.Unix(0, (int64(us)+int64(pgEpochShift)*1_000_000)*1000).UTC(), nil
}

// dchKeywords are the patterns of PostgreSQL's to_char/to_timestamp (its
// DCH_keywords), longest first where one is the prefix of another, as its index search
// matches them. supportedDCH are those to_timestamp reads here.
var dchKeywords = func() []string {
	ks := []string{
		"A.D.", "A.M.", "AD", "AM", "B.C.", "BC", "CC", "DAY", "DDD", "DD", "DY", "Day", "Dy", "D",
		"FF1", "FF2", "FF3", "FF4", "FF5", "FF6", "FX", "HH24", "HH12", "HH", "IDDD", "ID", "IW",
		"IYYY", "IYY", "IY", "I", "J", "MI", "MM", "MONTH", "MON", "MS", "Month", "Mon", "OF",
		"P.M.", "PM", "Q", "RM", "SSSSS", "SSSS", "SS", "TZH", "TZM", "TZ", "US", "WW", "W",
		"Y,YYY", "YYYY", "YYY", "YY", "Y",
		"a.d.", "a.m.", "ad", "am", "b.c.", "bc", "cc", "day", "ddd", "dd", "dy", "d",
		"ff1", "ff2", "ff3", "ff4", "ff5", "ff6", "fx", "hh24", "hh12", "hh", "iddd", "id", "iw",
		"iyyy", "iyy", "iy", "i", "j", "mi", "mm", "month", "mon", "ms", "p.m.", "pm", "q", "rm",
		"sssss", "ssss", "ss", "tz", "us", "ww", "w", "y,yyy", "yyyy", "yyy", "yy", "y",
	}
	sort.SliceStable(ks, func(i, j int) bool { return len(ks[i]) > len(ks[j]) })
	return ks
}()

// supportedDCH are the numeric patterns to_timestamp reads here, with their fixed widths.
var supportedDCH = map[string]int{"YYYY": 4, "MM": 2, "DD": 2, "HH24": 2, "HH12": 2, "HH": 2, "MI": 2, "SS": 2, "MS": 3, "US": 6, "DDD": 3, "J": 1, "Y,YYY": 5,
	"YYY": 3, "YY": 2, "Y": 1, "D": 1, "IYYY": 4, "IYY": 3, "IY": 2, "I": 1, "IW": 2, "ID": 1, "IDDD": 3}

// dchMode is the date convention a pattern belongs to (PostgreSQL's DCH_keywords date_mode):
// 'G' Gregorian, 'I' ISO 8601 week dates; the others belong to neither. One format mixing
// them is 22007 "invalid combination of date conventions" (from_char_set_mode).
var dchMode = map[string]byte{
	"DDD": 'G', "DD": 'G', "D": 'G', "MM": 'G', "MONTH": 'G', "MON": 'G', "Y,YYY": 'G', "YYYY": 'G', "YYY": 'G', "YY": 'G', "Y": 'G',
	"IDDD": 'I', "ID": 'I', "IW": 'I', "IYYY": 'I', "IYY": 'I', "IY": 'I', "I": 'I',
}

// partialYears are the patterns of fewer than four year digits, whose value read from fewer
// than four characters PostgreSQL's adjust_partial_year_to_2020 places near 2020.
var partialYears = map[string]bool{"YYY": true, "YY": true, "Y": true, "IYY": true, "IY": true, "I": true}

// adjustPartialYear is PostgreSQL's adjust_partial_year_to_2020: 0-69 are 2000-2069, 70-99
// 1970-1999, 100-519 2100-2519, 520-999 1520-1999.
func adjustPartialYear(y int64) int64 {
	switch {
	case y < 70:
		return y + 2000
	case y < 100:
		return y + 1900
	case y < 520:
		return y + 2000
	case y < 1000:
		return y + 1000
	}
	return y
}

// dchNames are the patterns to_timestamp reads as a word (PostgreSQL's from_char_seq_search
// over its ampm_strings, ampm_strings_long, months, months_full, days_short and days lists),
// matched whole and in any case; a word's index in its list is its value.
var dchNames = map[string][]string{
	"AM": {"am", "pm"}, "PM": {"am", "pm"}, "A.M.": {"a.m.", "p.m."}, "P.M.": {"a.m.", "p.m."},
	"MON":   {"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"},
	"MONTH": {"january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"},
	"DY":    {"sun", "mon", "tue", "wed", "thu", "fri", "sat"},
	"DAY":   {"sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"},
}

// dchField is the field of PostgreSQL's TmFromChar a pattern sets, where two patterns set the
// same one (a second, different value is 22007 "conflicting values").
var dchField = map[string]string{
	"HH24": "HH", "HH12": "HH", "HH": "HH", "AM": "PM", "PM": "PM", "A.M.": "PM", "P.M.": "PM",
	"MON": "MM", "MONTH": "MM", "MM": "MM", "DY": "D", "DAY": "D", "ID": "D", "Y,YYY": "YYYY",
	"YYY": "YYYY", "YY": "YYYY", "Y": "YYYY", "IYYY": "YYYY", "IYY": "YYYY", "IY": "YYYY", "I": "YYYY", "IDDD": "DDD",
}

type dchNode struct {
	kind byte   // 'k' pattern, 's' separator or space, 'c' other character
	key  string // the pattern, upper case
	name string // the pattern as the format spells it, as PostgreSQL's messages name it
	fm   bool   // FM prefix: a number is read to its end, not by the pattern's width
	th   bool   // TH or th suffix: two characters after the number are skipped
	// digit marks a literal character that is an ASCII digit (PostgreSQL's is_next_separator
	// reads the number before it by the pattern's width).
	digit bool
}

// parseDCHFormat splits a to_timestamp format into PostgreSQL's nodes (parse_format).
func parseDCHFormat(f string) ([]dchNode, error) {
	var out []dchNode
	for i := 0; i < len(f); {
		// One prefix per node, as parse_format reads it: FM (fill mode) marks the pattern that
		// follows; before anything else it is dropped.
		fm := strings.HasPrefix(f[i:], "FM") || strings.HasPrefix(f[i:], "fm")
		if fm {
			i += 2
			if i >= len(f) {
				break
			}
		}
		if f[i] == '"' {
			// Quoted text: each character is a literal the input skips.
			i++
			for i < len(f) && f[i] != '"' {
				if f[i] == '\\' && i+1 < len(f) {
					i++
				}
				out = append(out, dchNode{kind: 'c', digit: f[i] >= '0' && f[i] <= '9'})
				i++
			}
			i++
			continue
		}
		for _, pre := range []string{"TM", "tm"} {
			if !fm && strings.HasPrefix(f[i:], pre) {
				return nil, unimplemented("the to_timestamp modifier " + strings.ToUpper(pre))
			}
		}
		matched := ""
		for _, k := range dchKeywords {
			if strings.HasPrefix(f[i:], k) {
				matched = k
				break
			}
		}
		if matched != "" {
			key := strings.ToUpper(matched)
			_, num := supportedDCH[key]
			if _, word := dchNames[key]; !num && !word && key != "FX" {
				return nil, unimplemented("the to_timestamp pattern " + matched)
			}
			i += len(matched)
			th := strings.HasPrefix(f[i:], "TH") || strings.HasPrefix(f[i:], "th")
			if th {
				i += 2
			} else if strings.HasPrefix(f[i:], "SP") {
				return nil, unimplemented("the to_timestamp modifier SP")
			}
			out = append(out, dchNode{kind: 'k', key: key, name: matched, fm: fm, th: th})
			continue
		}
		if f[i] == '\\' && i+1 < len(f) && f[i+1] == '"' {
			i++
		}
		switch c := f[i]; {
		case isDCHSeparator(c) || c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			out = append(out, dchNode{kind: 's'})
			i++
		default:
			out = append(out, dchNode{kind: 'c', digit: c >= '0' && c <= '9'})
			// One character, multi-byte ones whole.
			_, size := utf8.DecodeRuneInString(f[i:])
			i += size
		}
	}
	return out, nil
}

// readYCommaYYY reads Y,YYY at s[pos:] as PostgreSQL does (sscanf "%d,%03d": spaces, a sign and
// digits, a comma, then spaces and up to three characters of a sign and digits): the thousands
// times 1000 plus the rest, and where the text after it starts.
func readYCommaYYY(s string, pos int) (int64, int, error) {
	errYYYY := errDatetimeFormat(`invalid input string for "Y,YYY"`)
	p := pos
	for p < len(s) && isSpace(s[p]) {
		p++
	}
	start := p
	if p < len(s) && (s[p] == '+' || s[p] == '-') {
		p++
	}
	digits := p
	for p < len(s) && s[p] >= '0' && s[p] <= '9' {
		p++
	}
	if p == digits || p >= len(s) || s[p] != ',' {
		return 0, 0, errYYYY
	}
	if p-digits > 9 {
		// sscanf's %d past int's range is undefined behaviour in C: not read here.
		return 0, 0, unimplemented("to_timestamp's Y,YYY with more than nine digits before the comma")
	}
	millennia, _ := strconv.ParseInt(s[start:p], 10, 64)
	p++
	for p < len(s) && isSpace(s[p]) {
		p++
	}
	start = p
	if p < len(s) && (s[p] == '+' || s[p] == '-') {
		p++
	}
	digits = p
	for p < len(s) && p-start < 3 && s[p] >= '0' && s[p] <= '9' {
		p++
	}
	if p == digits {
		return 0, 0, errYYYY
	}
	years, _ := strconv.ParseInt(s[start:p], 10, 64)
	return millennia*1000 + years, p, nil
}

// isDCHSeparator is PostgreSQL's is_separator_char: printable ASCII but letters and digits.
func isDCHSeparator(c byte) bool {
	return c > 0x20 && c < 0x7F && !(c >= 'A' && c <= 'Z') && !(c >= 'a' && c <= 'z') && !(c >= '0' && c <= '9')
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

// errDatetimeFormat is PostgreSQL's invalid_datetime_format (22007); it never quotes the text.
func errDatetimeFormat(msg string) *Error {
	return &Error{Code: InvalidArgument, SQLState: "22007", Msg: msg}
}

// errFieldRange is PostgreSQL's datetime_field_overflow (22008).
var errFieldRange = &Error{Code: InvalidArgument, SQLState: "22008", Msg: "date/time field value out of range"}

// parseToTimestamp is PostgreSQL's to_timestamp(text, text) for the supported patterns, in
// a UTC session (see bindToTimestamp). An instant outside timestamp[ns] (1677-09-21 to
// 2262-04-11) is 22008 "timestamp out of range", as an explicit cast's is, never clamped:
// PostgreSQL answers those within its own range (to_timestamp('1500-01-01', 'YYYY-MM-DD')).
func parseToTimestamp(s, format string) (time.Time, error) {
	t, err := toTimestampFields(s, format)
	if err != nil {
		return time.Time{}, err
	}
	if t.Before(minNanoTime) || t.After(maxNanoTime) {
		return time.Time{}, &Error{Code: InvalidArgument, SQLState: "22008", Msg: "timestamp out of range"}
	}
	return t, nil
}

// julianDayOfUnixEpoch is the Julian day (PostgreSQL's J, days from 4714-11-24 BC) of 1970-01-01.
const julianDayOfUnixEpoch = 2440588

// pgMinDate and pgEndDate bound PostgreSQL's date (IS_VALID_DATE: Julian day 0, 4714-11-24 BC,
// to 5874898-01-01 exclusive), as days from 1970-01-01.
const (
	pgMinDate = -julianDayOfUnixEpoch
	pgEndDate = 2145042906
)

// parseToDate is PostgreSQL's to_date(text, text) for the patterns to_timestamp reads here
// (toTimestampFields; a time of day in the text is read, checked and dropped): days since
// 1970-01-01. A date outside PostgreSQL's range is 22008 "date out of range".
func parseToDate(s, format string) (int32, error) {
	t, err := toTimestampFields(s, format)
	if err != nil {
		return 0, err
	}
	y, m, d := t.Date()
	days := time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix() / 86400
	if days < pgMinDate || days >= pgEndDate {
		return 0, &Error{Code: InvalidArgument, SQLState: "22008", Msg: "date out of range"}
	}
	return int32(days), nil
}

// julianDate is PostgreSQL's j2date: the proleptic Gregorian date of Julian day j. Below
// -32044 its arithmetic wraps around and answers an unrelated date: refused by name.
func julianDate(j int64) (year, month, day int, err error) {
	if j < -32044 {
		return 0, 0, 0, unimplemented("to_timestamp of a Julian day before -32044")
	}
	y, m, d := time.Unix((j-julianDayOfUnixEpoch)*86400, 0).UTC().Date()
	return y, int(m), d, nil
}

// isoWeekJulian is PostgreSQL's isoweek2j: the Julian day of the Monday of ISO week week of
// ISO year year (week 1 holds January 4th).
func isoWeekJulian(year int, week int64) int64 {
	day4 := time.Date(year, 1, 4, 0, 0, 0, 0, time.UTC).Unix()/86400 + julianDayOfUnixEpoch
	day0 := (day4 - 1 + 1) % 7 // j2day(day4 - 1): 0 Sunday
	if day0 < 0 {
		day0 += 7
	}
	return (week-1)*7 + day4 - day0
}

// toTimestampFields reads s by format as PostgreSQL's do_to_timestamp does, in a UTC session,
// without clamping: a year not in the text is PostgreSQL's year 0 (1 BC), as is an explicit 0.
func toTimestampFields(s, format string) (time.Time, error) {
	nodes, err := parseDCHFormat(format)
	if err != nil {
		return time.Time{}, err
	}
	vals := map[string]int{}
	seen := map[string]bool{}
	extraSkip := 0
	pos := 0
	clock12 := false
	var mode byte // the date convention of the patterns read: 'G', 'I' or 0 (dchMode)
	fx := false   // FX: exact format mode from here on
	for ni := 0; ni < len(nodes) && pos < len(s); ni++ {
		n := nodes[ni]
		// Spaces at the start of the string and before fields are skipped outside FX mode.
		if !fx && n.key != "FX" && (n.kind == 'k' || ni == 0) {
			for pos < len(s) && isSpace(s[pos]) {
				pos++
				extraSkip++
			}
		}
		if fx && n.kind != 'k' {
			// In FX mode a separator, a space or a literal character of the format takes
			// one character of the text, whatever it is.
			_, size := utf8.DecodeRuneInString(s[pos:])
			pos += size
			continue
		}
		switch n.kind {
		case 's':
			extraSkip--
			if pos < len(s) && (isSpace(s[pos]) || isDCHSeparator(s[pos])) {
				pos++
				extraSkip++
			}
			continue
		case 'c':
			if extraSkip > 0 {
				extraSkip--
			} else {
				_, size := utf8.DecodeRuneInString(s[pos:])
				pos += size
			}
			continue
		}
		if n.key == "FX" {
			fx = true
			continue
		}
		if m := dchMode[n.key]; m != 0 {
			if mode != 0 && mode != m {
				return time.Time{}, errDatetimeFormat("invalid combination of date conventions")
			}
			mode = m
		}
		width := supportedDCH[n.key]
		for pos < len(s) && isSpace(s[pos]) {
			pos++
		}
		start := pos
		var v int64
		// PostgreSQL's is_next_separator: a number is read to its end (strtol) unless the next
		// node is a numeric pattern or a literal digit and neither FM nor TH marks this one.
		nextSep := n.fm || n.th || ni+1 >= len(nodes) || nodes[ni+1].kind == 's' ||
			(nodes[ni+1].kind == 'c' && !nodes[ni+1].digit)
		if next := ni + 1; next < len(nodes) && nodes[next].kind == 'k' {
			_, num := supportedDCH[nodes[next].key]
			nextSep = nextSep || !num
		}
		words, isWord := dchNames[n.key]
		if n.key == "Y,YYY" {
			y, end, err := readYCommaYYY(s, pos)
			if err != nil {
				return time.Time{}, err
			}
			v, pos = y, end
		} else if isWord {
			v = -1
			for i, w := range words {
				if len(s)-pos >= len(w) && strings.EqualFold(s[pos:pos+len(w)], w) {
					v, pos = int64(i), pos+len(w)
					break
				}
			}
			if v < 0 {
				return time.Time{}, errDatetimeFormat("invalid value for \"" + n.name + "\": the given value did not match any of the allowed values for this field")
			}
		} else if nextSep {
			// strtol: an optional sign, then as many digits as there are.
			end := pos
			if end < len(s) && (s[end] == '+' || s[end] == '-') {
				end++
			}
			for end < len(s) && s[end] >= '0' && s[end] <= '9' {
				end++
			}
			num, err := strconv.ParseInt(s[pos:end], 10, 64)
			if errors.Is(err, strconv.ErrRange) {
				return time.Time{}, &Error{Code: InvalidArgument, SQLState: "22008", Msg: "value for \"" + n.name + "\" in source string is out of range"}
			}
			if err != nil {
				return time.Time{}, errDatetimeFormat("invalid value for \"" + n.name + "\": value must be an integer")
			}
			v, pos = num, end
		} else {
			if len(s)-pos < width {
				return time.Time{}, errDatetimeFormat("source string too short for \"" + n.name + "\" formatting field")
			}
			end := pos
			if s[end] == '+' || s[end] == '-' {
				end++
			}
			for end < pos+width && s[end] >= '0' && s[end] <= '9' {
				end++
			}
			num, err := strconv.ParseInt(s[pos:end], 10, 64)
			if err != nil {
				return time.Time{}, errDatetimeFormat("invalid value for \"" + n.name + "\": value must be an integer")
			}
			if end-pos < width {
				return time.Time{}, errDatetimeFormat("invalid value for \"" + n.name + "\": field requires more characters")
			}
			v, pos = num, end
		}
		if v < math.MinInt32 || v > math.MaxInt32 {
			return time.Time{}, &Error{Code: InvalidArgument, SQLState: "22008", Msg: "value for \"" + n.name + "\" in source string is out of range"}
		}
		used := pos - start
		if n.th && !isWord {
			// SKIP_THth: the ordinal suffix's two characters, whatever they are.
			for k := 0; k < 2 && pos < len(s); k++ {
				_, size := utf8.DecodeRuneInString(s[pos:])
				pos += size
			}
		}
		switch n.key {
		case "MS":
			switch used {
			case 1:
				v *= 100
			case 2:
				v *= 10
			}
		case "US":
			for k := used; k < 6; k++ {
				v *= 10
			}
		case "MON", "MONTH":
			v++ // January is month 1.
		case "HH12", "HH", "AM", "PM", "A.M.", "P.M.":
			clock12 = true
		}
		field := n.key
		if f, ok := dchField[n.key]; ok {
			field = f
		}
		conflict := seen[field] && vals[field] != int(v)
		if field == "D" {
			// The day of the week: PostgreSQL's from_char_set_int compares with the value
			// stored, which day names and ID store plus one (Sunday 1; ID's Sunday 7 wraps to 1).
			conflict = vals["D"] != 0 && vals["D"] != int(v)
		}
		if conflict {
			return time.Time{}, errDatetimeFormat("conflicting values for \"" + n.name + "\" field in formatting string")
		}
		seen[field] = true
		vals[field] = int(v)
		switch {
		case n.key == "DY" || n.key == "DAY":
			vals["D"]++
		case n.key == "ID":
			if vals["D"]++; vals["D"] > 7 {
				vals["D"] = 1
			}
		case partialYears[n.key] && used < 4:
			vals["YYYY"] = int(adjustPartialYear(v))
		}
	}
	year, month, day := 0, 1, 1
	if seen["YYYY"] {
		year = vals["YYYY"]
	}
	// do_to_timestamp's "if (tmfc.mm)", "if (tmfc.dd)": a zero month or day is not set.
	if vals["MM"] != 0 {
		month = vals["MM"]
	}
	if vals["DD"] != 0 {
		day = vals["DD"]
	}
	hour, minute, sec := vals["HH"], vals["MI"], vals["SS"]
	frac := vals["MS"]*1000 + vals["US"]
	if clock12 {
		// do_to_timestamp's 12-hour clock (HH, HH12 or a meridiem indicator in the format):
		// hours 1 to 12, 12 AM is midnight, PM adds 12.
		if hour < 1 || hour > 12 {
			return time.Time{}, errDatetimeFormat("hour \"" + strconv.Itoa(hour) + "\" is invalid for the 12-hour clock")
		}
		switch {
		case vals["PM"] == 1 && hour < 12:
			hour += 12
		case vals["PM"] == 0 && hour == 12:
			hour = 0
		}
	}
	if year < 0 {
		year++ // PostgreSQL reads a negative year as BC: -1 is 1 BC, year 0.
	}
	// do_to_timestamp's order: a Julian day (J, zero meaning unset) sets the date, DD and MM
	// then override its day and month, and a day of the year (DDD, zero meaning unset) fills
	// the month and the day where they are still 1.
	if j := vals["J"]; j != 0 {
		var err error
		if year, month, day, err = julianDate(int64(j)); err != nil {
			return time.Time{}, err
		}
		if vals["DD"] != 0 {
			day = vals["DD"]
		}
		if vals["MM"] != 0 {
			month = vals["MM"]
		}
	}
	if ww := vals["IW"]; ww != 0 {
		// An ISO week (IW: the ISO mode) sets the date: its Monday, or its day ID or a day
		// name gives (PostgreSQL's isoweek2date and isoweekdate2date, Sunday 1 there).
		j := isoWeekJulian(year, int64(ww))
		if d := int64(vals["D"]); d > 1 {
			j += d - 2
		} else if d == 1 {
			j += 6
		}
		var err error
		if year, month, day, err = julianDate(j); err != nil {
			return time.Time{}, err
		}
	}
	if ddd := vals["DDD"]; ddd != 0 && (month <= 1 || day <= 1) {
		if year == 0 {
			return time.Time{}, errDatetimeFormat("cannot calculate day of year without year information")
		}
		if mode == 'I' {
			// IDDD: the day of the ISO year, from the day before its first Monday.
			var err error
			if year, month, day, err = julianDate(isoWeekJulian(year, 1) - 1 + int64(ddd)); err != nil {
				return time.Time{}, err
			}
		} else {
			before := func(m int) int { // days of the year before month m (1 to 13)
				n := 0
				for k := 1; k < m; k++ {
					n += daysIn(year, k)
				}
				return n
			}
			i := 1
			for ; i <= 12 && ddd > before(i+1); i++ {
			}
			if month <= 1 {
				month = i
			}
			if day <= 1 {
				day = ddd - before(i)
			}
		}
	}
	// do_to_timestamp's range checks: ValidateDate's, then seconds below 60.
	if month < 1 || month > 12 || day < 1 || day > daysIn(year, month) || hour < 0 || hour > 23 ||
		minute < 0 || minute > 59 || sec < 0 || sec > 59 || frac < 0 || frac >= 1_000_000 {
		return time.Time{}, errFieldRange
	}
	return time.Date(year, time.Month(month), day, hour, minute, sec, frac*1000, time.UTC), nil
}
