package ops

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flightsrv/flightsrv/internal/pgnumfmt"
)

// to_char(interval, text): PostgreSQL's interval_to_char, the timestamp template (tochar.go)
// over the interval's fields as interval2itm splits them (years and months of its months,
// its days, hours past 24 and minutes, seconds and microseconds of its time, each with the
// interval's sign), in DCH_to_char's interval mode: a field tied to a calendar date (names of
// months and days, D, ID, eras, zones) is PostgreSQL's error, numbers may be negative, and
// the fields of dates (J, IW, IYYY, DDD…) are computed from the years, months and days as
// PostgreSQL's date functions compute them. Checked against PostgreSQL by
// TestToCharIntervalMatchesPostgres.

func init() {
	ownFunctions["to_char_interval"] = toCharIntervalKernel
}

// ErrIntervalFormat is PostgreSQL's error for a template field an interval has not.
var ErrIntervalFormat = &DataError{Code: "22007", Msg: "invalid format specification for an interval value"}

// itm is PostgreSQL's struct pg_itm of an interval (interval2itm), with tm_yday as
// interval_to_char sets it.
type itm struct {
	year, mon, mday int
	hour            int64
	min, sec, usec  int
	yday            int
}

func intervalFields(v arrow.MonthDayNanoInterval) itm {
	t := v.Nanoseconds / 1000 // PostgreSQL holds microseconds
	f := itm{year: int(v.Months) / 12, mon: int(v.Months) % 12, mday: int(v.Days)}
	f.hour = t / 3_600_000_000
	t -= f.hour * 3_600_000_000
	f.min = int(t / 60_000_000)
	t -= int64(f.min) * 60_000_000
	f.sec = int(t / 1_000_000)
	f.usec = int(t - int64(f.sec)*1_000_000)
	f.yday = (f.year*12+f.mon)*30 + f.mday
	return f
}

// ToCharInterval formats v as PostgreSQL's to_char(interval, format) does, or returns
// ErrIntervalFormat for a field an interval has not.
func ToCharInterval(v arrow.MonthDayNanoInterval, format string) (string, error) {
	f := intervalFields(v)
	var b strings.Builder
	var bad bool
	walkToChar(format, func(n tcNode) {
		if n.key == nil {
			b.WriteString(n.text)
			return
		}
		// num writes v zero-padded to width digits, one more when neg (PostgreSQL widens
		// the field by the sign of the value it tests, not always the one it writes), none
		// under FM.
		num := func(v int64, width int, neg bool) {
			if n.fm {
				width = 0
			} else if neg {
				width++
			}
			s := fmt.Sprintf("%0*d", width, v)
			if n.th {
				s += pgnumfmt.Ordinal(s, n.thUpper)
			}
			b.WriteString(s)
		}
		// fixed writes a field FM does not shorten.
		fixed := func(s string) {
			if n.th {
				s += pgnumfmt.Ordinal(s, n.thUpper)
			}
			b.WriteString(s)
		}
		name := n.key.name
		switch strings.ToUpper(name) {
		case "A.M.", "P.M.", "AM", "PM":
			pm := f.hour%24 >= 12
			s := map[bool]string{false: "AM", true: "PM"}[pm]
			if strings.Contains(name, ".") {
				s = s[:1] + "." + s[1:] + "."
			}
			if name[0] >= 'a' {
				s = strings.ToLower(s)
			}
			b.WriteString(s)
		case "HH", "HH12":
			h := f.hour % 12
			if h == 0 {
				h = 12
			}
			num(h, 2, f.hour < 0)
		case "HH24":
			num(f.hour, 2, f.hour < 0)
		case "MI":
			num(int64(f.min), 2, f.min < 0)
		case "SS":
			num(int64(f.sec), 2, f.sec < 0)
		case "FF1":
			fixed(fmt.Sprintf("%01d", f.usec/100000))
		case "FF2":
			fixed(fmt.Sprintf("%02d", f.usec/10000))
		case "FF3", "MS":
			fixed(fmt.Sprintf("%03d", f.usec/1000))
		case "FF4":
			fixed(fmt.Sprintf("%04d", f.usec/100))
		case "FF5":
			fixed(fmt.Sprintf("%05d", f.usec/10))
		case "FF6", "US":
			fixed(fmt.Sprintf("%06d", f.usec))
		case "SSSS", "SSSSS":
			fixed(strconv.FormatInt(f.hour*3600+int64(f.min*60+f.sec), 10))
		case "MM":
			num(int64(f.mon), 2, f.mon < 0)
		case "DDD":
			num(int64(f.yday), 3, false)
		case "IDDD":
			num(int64(date2isoyearday(f.year, f.mon, f.mday)), 3, false)
		case "DD":
			num(int64(f.mday), 2, false)
		case "WW":
			num(int64((f.yday-1)/7+1), 2, false)
		case "IW":
			num(int64(date2isoweek(f.year, f.mon, f.mday)), 2, false)
		case "Q":
			if f.mon != 0 {
				fixed(strconv.Itoa((f.mon-1)/3 + 1))
			}
		case "CC":
			c := f.year / 100
			if c <= 99 && c >= -99 {
				num(int64(c), 2, c < 0)
			} else {
				fixed(strconv.Itoa(c))
			}
		case "Y,YYY":
			i := f.year / 1000
			fixed(fmt.Sprintf("%d,%03d", i, f.year-i*1000))
		case "YYYY":
			num(int64(f.year), 4, f.year < 0)
		case "IYYY":
			num(int64(date2isoyear(f.year, f.mon, f.mday)), 4, f.year < 0)
		case "YYY":
			num(int64(f.year%1000), 3, f.year < 0)
		case "IYY":
			num(int64(date2isoyear(f.year, f.mon, f.mday)%1000), 3, f.year < 0)
		case "YY":
			num(int64(f.year%100), 2, f.year < 0)
		case "IY":
			num(int64(date2isoyear(f.year, f.mon, f.mday)%100), 2, f.year < 0)
		case "Y":
			fixed(strconv.Itoa(f.year % 10))
		case "I":
			fixed(strconv.Itoa(date2isoyear(f.year, f.mon, f.mday) % 10))
		case "W":
			fixed(strconv.Itoa((f.mday-1)/7 + 1))
		case "J":
			fixed(strconv.Itoa(date2j(f.year, f.mon, f.mday)))
		case "RM":
			if f.mon == 0 && f.year == 0 {
				return
			}
			var k int // into XII … I
			switch {
			case f.mon == 0 && f.year >= 0:
				k = 0
			case f.mon == 0:
				k = 11
			case f.mon < 0:
				k = -(f.mon + 1)
			default:
				k = 12 - f.mon
			}
			s := []string{"XII", "XI", "X", "IX", "VIII", "VII", "VI", "V", "IV", "III", "II", "I"}[k]
			if name == "rm" {
				s = strings.ToLower(s)
			}
			if !n.fm {
				s = fmt.Sprintf("%-4s", s)
			}
			b.WriteString(s)
		case "FX":
		default: // names of months and days, D, ID, eras, zones
			bad = true
		}
	})
	if bad {
		return "", ErrIntervalFormat
	}
	return b.String(), nil
}

// date2j is PostgreSQL's date2j: the Julian day of a proleptic Gregorian date, for any
// fields (an interval's too), in C's integer arithmetic.
func date2j(year, month, day int) int {
	if month > 2 {
		month++
		year += 4800
	} else {
		month += 13
		year += 4799
	}
	century := year / 100
	j := year*365 - 32167
	j += year/4 - century + century/4
	return j + 7834*month/256 + day
}

// j2day is PostgreSQL's j2day: the weekday (0 Sunday) of Julian day j.
func j2day(j int) int {
	j = (j + 1) % 7
	if j < 0 {
		j += 7
	}
	return j
}

// date2isoweek, date2isoyear and date2isoyearday are PostgreSQL's: the ISO week, ISO year and
// day of the ISO year of the date (year, mon, mday).
func date2isoweek(year, mon, mday int) int {
	dayn := date2j(year, mon, mday)
	day4 := date2j(year, 1, 4)
	day0 := j2day(day4 - 1)
	if dayn < day4-day0 {
		day4 = date2j(year-1, 1, 4)
		day0 = j2day(day4 - 1)
	}
	week := (dayn-(day4-day0))/7 + 1
	if week >= 52 {
		day4 = date2j(year+1, 1, 4)
		day0 = j2day(day4 - 1)
		if dayn >= day4-day0 {
			week = (dayn-(day4-day0))/7 + 1
		}
	}
	return week
}

func date2isoyear(year, mon, mday int) int {
	dayn := date2j(year, mon, mday)
	day4 := date2j(year, 1, 4)
	day0 := j2day(day4 - 1)
	if dayn < day4-day0 {
		day4 = date2j(year-1, 1, 4)
		day0 = j2day(day4 - 1)
		year--
	}
	if (dayn-(day4-day0))/7+1 >= 52 {
		day4 = date2j(year+1, 1, 4)
		day0 = j2day(day4 - 1)
		if dayn >= day4-day0 {
			year++
		}
	}
	return year
}

func date2isoyearday(year, mon, mday int) int {
	iy := date2isoyear(year, mon, mday)
	day4 := date2j(iy, 1, 4)
	return date2j(year, mon, mday) - (day4 - j2day(day4-1)) + 1
}

// toCharIntervalKernel is to_char_interval(interval, template).
func toCharIntervalKernel(n *fnNode) error {
	if err := argCount(n, 2, 2); err != nil {
		return err
	}
	if n.types[0].ID() != arrow.INTERVAL_MONTH_DAY_NANO {
		return errors.New("argument 1 must be an interval")
	}
	if err := wantText(n, 1); err != nil {
		return err
	}
	n.out = arrow.BinaryTypes.String
	n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
		iv, ok := args[0].(*array.MonthDayNanoInterval)
		if !ok {
			return nil, fmt.Errorf("argument 1 is %s, not an interval", args[0].DataType())
		}
		f, _ := asTexts(args[1])
		return mapStrings(mem, rows, args, func(i int) (string, bool, error) {
			s, err := ToCharInterval(iv.Value(i), string(f.ValueBytes(i)))
			return s, err == nil, err
		})
	}
	return nil
}
