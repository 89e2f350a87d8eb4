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

// isIntervalTypeName reports whether tn names interval, without fields or a precision.
func isIntervalTypeName(tn *pg.TypeName) bool {
	names := tn.GetNames()
	return len(tn.GetTypmods()) == 0 && len(tn.GetArrayBounds()) == 0 && len(names) > 0 &&
		names[len(names)-1].GetString_().GetSval() == "interval"
}

// intervalLiteral reads INTERVAL 'text', 'text'::interval or an untyped string literal
// (which PostgreSQL resolves to interval in date_bin). A field-qualified interval (INTERVAL
// '15' MINUTE, interval(3) '1.5') is read as its qualifier restricts it (qualifiedInterval),
// written as text decodeInterval reads back to the same fields; one that is an error is not
// read.
func intervalLiteral(n *pg.Node) (string, bool) {
	if tc := n.GetTypeCast(); tc != nil {
		if s, ok, err := qualifiedInterval(tc); ok {
			return s, err == nil
		}
		if !isIntervalTypeName(tc.GetTypeName()) {
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
	parse := parseTimestampSQL
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

// errBinMonths refuses a date_bin stride with months or years in PostgreSQL's words (its
// date_bin refuses them too: months have no fixed length to bin by).
var errBinMonths = &Error{Code: Unimplemented, SQLState: "0A000", Msg: "timestamps cannot be binned into intervals containing months or years"}

// errStrideNotPositive is PostgreSQL's date_bin refusal of a stride that is not positive (its
// interval rounded to microseconds: '0.0000005 seconds' too), 22008 as timestamp_bin raises it.
var errStrideNotPositive = &Error{Code: InvalidArgument, SQLState: "22008", Msg: "stride must be greater than zero"}

// errStrideTooLong refuses by name a date_bin stride of 2^63 nanoseconds (about 292 years) or
// more, which PostgreSQL answers (its timestamps are microseconds) and flightsrv's nanosecond
// bins cannot hold.
var errStrideTooLong = unimplementedAre("date_bin strides of 292 years or more (flightsrv's timestamps are nanoseconds)")

// parseStride reads date_bin's stride, a PostgreSQL interval literal: the verbose form
// ('15 minutes', '1 hour 30 minutes', '1h30m', '1.5 hours', '90', '@ 2 days', '1 day
// 02:00:00', '00:15', signed parts) or ISO 8601 ('PT15M', 'P1DT2H', 'P1W'). Days are 24
// hours, as date_bin treats them. Months and longer units are refused as PostgreSQL refuses
// them ("timestamps cannot be binned into intervals containing months or years"); so is a
// stride that is not positive or not a whole number of microseconds.
func parseStride(s string) (time.Duration, error) {
	us, months, err := readInterval(s)
	switch {
	case err != nil:
		return 0, err
	case months.Sign() != 0:
		return 0, errBinMonths
	case us.Sign() <= 0:
		return 0, errStrideNotPositive
	case !us.IsInt():
		return 0, errorf(InvalidArgument, "date_bin stride must be a whole number of microseconds")
	case us.Num().Cmp(big.NewInt(math.MaxInt64/1000)) > 0:
		return 0, errStrideTooLong
	}
	return time.Duration(us.Num().Int64()) * time.Microsecond, nil
}

// unitMonths are the month-based interval units in months (PostgreSQL keeps them apart from
// days and time: a month is a calendar month).
var unitMonths = map[string]int64{"month": 1, "quarter": 3, "year": 12, "decade": 120, "century": 1200, "millennium": 12000}

// parseInterval returns the microseconds of an interval literal's days and time (days as
// 24-hour days, as in UTC) and its months, as PostgreSQL's interval_in reads it
// (decodeInterval: a fraction of a month or year is spilled into days and time there); ok
// false where it does not read, err its error (an *Error with PostgreSQL's SQLSTATE, or a
// refusal by name).
func parseInterval(s string) (us, months *big.Rat, ok bool) {
	us, months, err := readInterval(s)
	return us, months, err == nil
}

// readInterval is parseInterval with decodeInterval's error.
func readInterval(s string) (us, months *big.Rat, err error) {
	m, d, t, err := decodeInterval(s)
	if err != nil {
		return nil, nil, err
	}
	us = new(big.Rat).SetInt(new(big.Int).Mul(big.NewInt(int64(d)), big.NewInt(usPerDay)))
	us.Add(us, new(big.Rat).SetInt64(t))
	return us, new(big.Rat).SetInt64(int64(m)), nil
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' }

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
