package substrait

import (
	"math"
	"math/big"
	"strings"
	"time"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/flightsrv/flightsrv/routing"
)

// Interval, time-unit and time-bin argument parsing shared by the binder's date_trunc,
// date_bin, extract and interval literals: PostgreSQL's unit names and interval syntax.

// textLiteral reads a string literal, optionally cast to a text type.
func textLiteral(n *pg.Node) (string, bool) {
	if tc := n.GetTypeCast(); tc != nil {
		if typeFamily(tc.GetTypeName()) != "text" {
			return "", false
		}
		n = tc.GetArg()
	}
	c := n.GetAConst()
	if c == nil || c.GetIsnull() || c.GetSval() == nil {
		return "", false
	}
	return c.GetSval().GetSval(), true
}

// intervalLiteral reads INTERVAL 'text', 'text'::interval or an untyped string literal
// (which PostgreSQL resolves to interval in date_bin). Field-qualified intervals (INTERVAL
// '15' MINUTE) are not read.
func intervalLiteral(n *pg.Node) (string, bool) {
	if tc := n.GetTypeCast(); tc != nil {
		tn := tc.GetTypeName()
		names := tn.GetNames()
		if len(tn.GetTypmods()) > 0 || len(tn.GetArrayBounds()) > 0 || len(names) == 0 ||
			names[len(names)-1].GetString_().GetSval() != "interval" {
			return "", false
		}
		n = tc.GetArg()
	}
	c := n.GetAConst()
	if c == nil || c.GetIsnull() || c.GetSval() == nil {
		return "", false
	}
	return c.GetSval().GetSval(), true
}

// originLiteral reads date_bin's origin: a timestamp literal (untyped, TIMESTAMPTZ,
// TIMESTAMP or DATE), a whole microsecond as PostgreSQL stores it.
func originLiteral(n *pg.Node) (time.Time, error) {
	fam := ""
	if tc := n.GetTypeCast(); tc != nil {
		fam = typeFamily(tc.GetTypeName())
		if fam != "timestamptz" && fam != "date" {
			return time.Time{}, unimplemented("date_bin with an origin that is not a timestamp literal")
		}
		n = tc.GetArg()
	}
	c := n.GetAConst()
	if c == nil || c.GetIsnull() || c.GetSval() == nil {
		return time.Time{}, unimplemented("date_bin with an origin that is not a timestamp literal")
	}
	parse := ParseTimestamp
	if fam == "date" {
		parse = parseDate
	}
	t, err := parse(c.GetSval().GetSval())
	if err != nil {
		return time.Time{}, err
	}
	if t.Nanosecond()%1000 != 0 {
		return time.Time{}, errorf(InvalidArgument, "date_bin origin must be a whole microsecond")
	}
	return t, nil
}

// isUTCName reports whether a time zone name denotes UTC.
func isUTCName(s string) bool {
	switch strings.ToLower(s) {
	case "utc", "etc/utc", "gmt", "etc/gmt", "z", "zulu", "uct", "etc/uct", "universal", "etc/universal":
		return true
	}
	return false
}

// pgUnits are PostgreSQL's unit spellings (datetime.c deltatktbl, matched on their first
// ten characters as DecodeUnits does), by canonical unit.
var pgUnits = map[string]string{
	"us": "microseconds", "usec": "microseconds", "usecs": "microseconds", "usecond": "microseconds",
	"useconds": "microseconds", "microsecon": "microseconds",
	"ms": "milliseconds", "msec": "milliseconds", "msecs": "milliseconds", "msecond": "milliseconds",
	"mseconds": "milliseconds", "millisecon": "milliseconds",
	"s": "second", "sec": "second", "secs": "second", "second": "second", "seconds": "second",
	"m": "minute", "min": "minute", "mins": "minute", "minute": "minute", "minutes": "minute",
	"h": "hour", "hr": "hour", "hrs": "hour", "hour": "hour", "hours": "hour",
	"d": "day", "day": "day", "days": "day",
	"w": "week", "week": "week", "weeks": "week",
	"mon": "month", "mons": "month", "month": "month", "months": "month",
	"qtr": "quarter", "quarter": "quarter",
	"y": "year", "yr": "year", "yrs": "year", "year": "year", "years": "year",
	"dec": "decade", "decs": "decade", "decade": "decade", "decades": "decade",
	"c": "century", "cent": "century", "century": "century", "centuries": "century",
	"mil": "millennium", "mils": "millennium", "millennium": "millennium", "millennia": "millennium",
}

// lookupUnit returns the canonical unit of a PostgreSQL unit spelling (case-insensitive).
func lookupUnit(s string) (string, bool) {
	s = strings.ToLower(s)
	if len(s) > 10 {
		s = s[:10]
	}
	u, ok := pgUnits[s]
	return u, ok
}

// parseTruncUnit reads date_trunc's unit. Units PostgreSQL knows but flightsrv does not bin
// by are Unimplemented; unknown text is InvalidArgument (PostgreSQL's "unit not recognized").
func parseTruncUnit(s string) (routing.TruncUnit, error) {
	u, ok := lookupUnit(s)
	if !ok {
		return 0, errorf(InvalidArgument, "date_trunc unit is not recognized")
	}
	switch u {
	case "second":
		return routing.TruncSecond, nil
	case "minute":
		return routing.TruncMinute, nil
	case "hour":
		return routing.TruncHour, nil
	case "day":
		return routing.TruncDay, nil
	case "week":
		return routing.TruncWeek, nil
	case "month":
		return routing.TruncMonth, nil
	case "quarter":
		return routing.TruncQuarter, nil
	case "year":
		return routing.TruncYear, nil
	}
	return 0, unimplemented("date_trunc to " + u)
}

// Microseconds per fixed unit of interval input; month-or-longer units are months.
var unitMicros = map[string]int64{
	"microseconds": 1, "milliseconds": 1000, "second": 1_000_000, "minute": 60_000_000,
	"hour": 3_600_000_000, "day": 86_400_000_000, "week": 604_800_000_000,
}

var errInvalidInterval = &Error{Code: InvalidArgument, Msg: "invalid interval literal"}

// errBinMonths refuses a date_bin stride with months or years in PostgreSQL's words (its
// date_bin refuses them too: months have no fixed length to bin by).
var errBinMonths = &Error{Code: Unimplemented, Msg: "date_bin: timestamps cannot be binned into intervals containing months or years"}

// parseStride reads date_bin's stride, a PostgreSQL interval literal: the verbose form
// ('15 minutes', '1 hour 30 minutes', '1h30m', '1.5 hours', '90', '@ 2 days', '1 day
// 02:00:00', '00:15', signed parts) or ISO 8601 ('PT15M', 'P1DT2H', 'P1W'). Days are 24
// hours, as date_bin treats them. Months and longer units are refused as PostgreSQL refuses
// them ("timestamps cannot be binned into intervals containing months or years"); so is a
// stride that is not positive or not a whole number of microseconds.
func parseStride(s string) (time.Duration, error) {
	us, months, ok := parseInterval(s)
	switch {
	case !ok:
		return 0, errInvalidInterval
	case months.Sign() != 0:
		return 0, errBinMonths
	case us.Sign() <= 0:
		return 0, errorf(InvalidArgument, "date_bin stride must be greater than zero")
	case !us.IsInt():
		return 0, errorf(InvalidArgument, "date_bin stride must be a whole number of microseconds")
	case us.Num().Cmp(big.NewInt(math.MaxInt64/1000)) > 0:
		return 0, errorf(InvalidArgument, "date_bin stride is out of range")
	}
	return time.Duration(us.Num().Int64()) * time.Microsecond, nil
}

// unitMonths are the month-based interval units in months (PostgreSQL keeps them apart from
// days and time: a month is a calendar month).
var unitMonths = map[string]int64{"month": 1, "quarter": 3, "year": 12, "decade": 120, "century": 1200, "millennium": 12000}

// parseInterval returns the microseconds of an interval literal's fixed units (weeks and days
// as 24-hour days, as in UTC) and its months (the month-or-longer units, possibly fractional;
// zero when none).
func parseInterval(s string) (us, months *big.Rat, ok bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	if strings.HasPrefix(s, "p") {
		return parseISOInterval(s[1:])
	}
	total, months := new(big.Rat), new(big.Rat)
	ago, ok := scanInterval(s, func(r *big.Rat, unit string) {
		if per, fixed := unitMicros[unit]; fixed {
			total.Add(total, r.Mul(r, big.NewRat(per, 1)))
		} else {
			months.Add(months, r.Mul(r, big.NewRat(unitMonths[unit], 1)))
		}
	}, func(v *big.Rat) { total.Add(total, v) })
	if !ok {
		return nil, nil, false
	}
	if ago {
		total.Neg(total)
		months.Neg(months)
	}
	return total, months, true
}

// scanInterval reads the verbose form of an interval literal (s in lower case, trimmed):
// [@] then parts "number [unit]" (a bare number is seconds; unit a PostgreSQL spelling,
// reported canonical) or "[+-]hh:mm[:ss[.frac]]" (reported to clock in microseconds), separated
// by spaces, tabs or commas, optionally ending in "ago". ok is false when s does not read or
// holds no part.
func scanInterval(s string, part func(r *big.Rat, unit string), clock func(v *big.Rat)) (ago, ok bool) {
	p := 0
	skip := func() {
		for p < len(s) && (s[p] == ' ' || s[p] == '\t' || s[p] == ',') {
			p++
		}
	}
	skip()
	if p < len(s) && s[p] == '@' {
		p++
	}
	parts := 0
	for skip(); p < len(s); skip() {
		if ago {
			return false, false // "ago" ends the literal
		}
		if isLetter(s[p]) {
			if w := word(s, p); w != "ago" || parts == 0 {
				return false, false
			}
			p += 3
			ago = true
			continue
		}
		num, n := number(s, p)
		if n == 0 {
			return false, false
		}
		p += n
		if p < len(s) && s[p] == ':' {
			// [+-]hh:mm[:ss[.frac]]: the number read is the hours.
			v, n, ok := timeField(s, p-len(num), num)
			if !ok {
				return false, false
			}
			clock(v)
			p += n - len(num)
			parts++
			continue
		}
		r, okNum := new(big.Rat).SetString(num)
		if !okNum {
			return false, false
		}
		skip()
		unit := "second" // a bare number is seconds
		if p < len(s) && isLetter(s[p]) {
			if w := word(s, p); w != "ago" {
				u, known := lookupUnit(w)
				if !known {
					return false, false
				}
				unit = u
				p += len(w)
			}
		}
		parts++
		part(r, unit)
	}
	return ago, parts > 0
}

// parseISOInterval reads the ISO 8601 form after its "P": [nY][nM][nW][nD][T[nH][nM][nS]].
func parseISOInterval(s string) (us, months *big.Rat, ok bool) {
	total, months := new(big.Rat), new(big.Rat)
	inTime, parts := false, 0
	for p := 0; p < len(s); {
		if s[p] == 't' {
			if inTime {
				return nil, nil, false
			}
			inTime = true
			p++
			continue
		}
		num, n := number(s, p)
		if n == 0 || p+n >= len(s) {
			return nil, nil, false
		}
		p += n
		r, ok := new(big.Rat).SetString(num)
		if !ok {
			return nil, nil, false
		}
		var per int64
		switch d := s[p]; {
		case !inTime && d == 'y':
			months.Add(months, new(big.Rat).Mul(r, big.NewRat(12, 1)))
		case !inTime && d == 'm':
			months.Add(months, r)
		case !inTime && d == 'w':
			per = unitMicros["week"]
		case !inTime && d == 'd':
			per = unitMicros["day"]
		case inTime && d == 'h':
			per = unitMicros["hour"]
		case inTime && d == 'm':
			per = unitMicros["minute"]
		case inTime && d == 's':
			per = unitMicros["second"]
		default:
			return nil, nil, false
		}
		p++
		parts++
		total.Add(total, r.Mul(r, big.NewRat(per, 1)))
	}
	return total, months, parts > 0
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' }

func word(s string, p int) string {
	e := p
	for e < len(s) && isLetter(s[e]) {
		e++
	}
	return s[p:e]
}

// number reads [+-]digits[.digits] (or [+-].digits) at p and returns it and its length.
func number(s string, p int) (string, int) {
	e := p
	if e < len(s) && (s[e] == '+' || s[e] == '-') {
		e++
	}
	digits := 0
	for e < len(s) && s[e] >= '0' && s[e] <= '9' {
		e++
		digits++
	}
	if e < len(s) && s[e] == '.' {
		e++
		for e < len(s) && s[e] >= '0' && s[e] <= '9' {
			e++
			digits++
		}
	}
	if digits == 0 {
		return "", 0
	}
	return s[p:e], e - p
}

// timeField reads [+-]hh:mm[:ss[.frac]] starting at p (hours already read as hours) and
// returns its signed value in microseconds and its length.
func timeField(s string, p int, hours string) (*big.Rat, int, bool) {
	neg := strings.HasPrefix(hours, "-")
	h := strings.TrimLeft(hours, "+-")
	if strings.Contains(h, ".") {
		return nil, 0, false
	}
	e := p + len(hours)
	fields := []string{h}
	for len(fields) < 3 && e < len(s) && s[e] == ':' {
		e++
		st := e
		for e < len(s) && (s[e] >= '0' && s[e] <= '9' || (len(fields) == 2 && s[e] == '.')) {
			e++
		}
		if e == st {
			return nil, 0, false
		}
		fields = append(fields, s[st:e])
	}
	if len(fields) < 2 || strings.Contains(fields[1], ".") {
		return nil, 0, false
	}
	v := new(big.Rat)
	for i, f := range fields {
		r, ok := new(big.Rat).SetString(f)
		if !ok {
			return nil, 0, false
		}
		per := []int64{unitMicros["hour"], unitMicros["minute"], unitMicros["second"]}[i]
		v.Add(v, r.Mul(r, big.NewRat(per, 1)))
	}
	if neg {
		v.Neg(v)
	}
	return v, e - p, true
}

// round_calendar units and origins of date_trunc's units (see the comment at the top).
var calendarArgs = map[routing.TruncUnit]struct {
	unit, origin string
	multiple     int64
}{
	routing.TruncSecond:  {"SECOND", "MINUTE", 1},
	routing.TruncMinute:  {"MINUTE", "HOUR", 1},
	routing.TruncHour:    {"HOUR", "DAY", 1},
	routing.TruncDay:     {"DAY", "MONTH", 1},
	routing.TruncWeek:    {"WEEK", "MONDAY_WEEK", 1},
	routing.TruncMonth:   {"MONTH", "YEAR", 1},
	routing.TruncQuarter: {"MONTH", "YEAR", 3},
	routing.TruncYear:    {"YEAR", "YEAR", 1},
}

// temporalUnits are round_temporal's fixed units (UTC), largest first.
var temporalUnits = []struct {
	name string
	d    time.Duration
}{
	{"WEEK", 7 * 24 * time.Hour}, {"DAY", 24 * time.Hour}, {"HOUR", time.Hour}, {"MINUTE", time.Minute},
	{"SECOND", time.Second}, {"MILLISECOND", time.Millisecond}, {"MICROSECOND", time.Microsecond},
}

// calendarRank orders round_calendar's units and origins by length; weeks sit between days
// and months (their bounds are day bounds, but months do not start on a week bound).
var calendarRank = map[string]int{
	"SECOND": 1, "MINUTE": 2, "HOUR": 3, "DAY": 4, "WEEK": 5, "MONDAY_WEEK": 5, "ISO_WEEK": 5,
	"MONTH": 6, "YEAR": 7,
}

// calendarUnit maps a round_calendar (unit, origin, multiple) to the date_trunc unit it
// computes: multiple 1 of a unit from an origin unit at least as long whose bounds are bounds
// of the unit (weeks only from Monday-based week origins), or 3 months from the year.
func calendarUnit(unit, origin string, multiple int64) (routing.TruncUnit, bool) {
	if unit == "MONTH" && origin == "YEAR" && multiple == 3 {
		return routing.TruncQuarter, true
	}
	ru, ro := calendarRank[unit], calendarRank[origin]
	if multiple != 1 || ru == 0 || ro == 0 || ro < ru || unit == "MONDAY_WEEK" || unit == "ISO_WEEK" {
		return 0, false
	}
	if unit == "WEEK" && origin != "MONDAY_WEEK" && origin != "ISO_WEEK" {
		return 0, false
	}
	return map[string]routing.TruncUnit{
		"SECOND": routing.TruncSecond, "MINUTE": routing.TruncMinute, "HOUR": routing.TruncHour,
		"DAY": routing.TruncDay, "WEEK": routing.TruncWeek, "MONTH": routing.TruncMonth, "YEAR": routing.TruncYear,
	}[unit], true
}

// typeFamily classifies a cast target: "text" (text, varchar, CockroachDB's string),
// "timestamptz" (timestamptz, timestamp), "date", "int" (int2, int4, int8) or "" (anything
// else, including types with modifiers such as varchar(3) or timestamptz(3), whose casts
// change the value, and arrays).
func typeFamily(tn *pg.TypeName) string {
	if tn == nil || len(tn.GetTypmods()) > 0 || len(tn.GetArrayBounds()) > 0 || tn.GetSetof() || tn.GetPctType() {
		return ""
	}
	names := tn.GetNames()
	if len(names) == 2 && names[0].GetString_().GetSval() == "pg_catalog" {
		names = names[1:]
	}
	if len(names) != 1 {
		return ""
	}
	switch names[0].GetString_().GetSval() {
	case "text", "varchar", "string":
		return "text"
	case "timestamptz", "timestamp":
		return "timestamptz"
	case "date":
		return "date"
	case "int2", "int4", "int8", "int", "integer", "bigint", "smallint":
		return "int"
	}
	return ""
}
