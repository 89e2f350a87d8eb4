package ops

import (
	"errors"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// PostgreSQL's date arithmetic, strict:
//
//	date_diff(a, b)       a - b for dates (date32): the days between them, int32
//	date_add_days(d, n)   d + n days (n an integer of any width): date32; a result outside
//	                      PostgreSQL's date range (4713 BC to 5874897 AD) is "date out of
//	                      range" (22008)
func init() {
	ownFunctions["date_diff"] = dateDiffKernel
	ownFunctions["date_add_days"] = dateAddDaysKernel
}

// PostgreSQL's date range in days from 1970-01-01 (its DATETIME_MIN_JULIAN and
// DATE_END_JULIAN less the Unix epoch's Julian day 2440588).
const (
	minPGDate = -2440588
	maxPGDate = 2147483494 - 2440588 - 1
)

func wantDates(n *fnNode, idx ...int) error {
	for _, i := range idx {
		if n.args[i] == nil || n.types[i].ID() != arrow.DATE32 {
			return errors.New("arguments must be dates")
		}
	}
	return nil
}

func dateDiffKernel(n *fnNode) error {
	if err := argCount(n, 2, 2); err != nil {
		return err
	}
	if err := wantDates(n, 0, 1); err != nil {
		return err
	}
	n.out = arrow.PrimitiveTypes.Int32
	n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
		a, b := args[0].(*array.Date32), args[1].(*array.Date32)
		return mapRows[int32](array.NewInt32Builder(mem), rows, args, func(i int) (int32, bool, error) {
			d := int64(a.Value(i)) - int64(b.Value(i))
			if d != int64(int32(d)) {
				return 0, false, &DataError{Code: "22003", Msg: "integer out of range"}
			}
			return int32(d), true, nil
		})
	}
	return nil
}

func dateAddDaysKernel(n *fnNode) error {
	if err := argCount(n, 2, 2); err != nil {
		return err
	}
	if err := wantDates(n, 0); err != nil {
		return err
	}
	if err := wantInt(n, 1); err != nil {
		return err
	}
	n.out = arrow.FixedWidthTypes.Date32
	n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
		a := args[0].(*array.Date32)
		return mapRows[arrow.Date32](array.NewDate32Builder(mem), rows, args, func(i int) (arrow.Date32, bool, error) {
			d := int64(a.Value(i)) + intAt(args[1], i)
			if d < minPGDate || d > maxPGDate {
				return 0, false, &DataError{Code: "22008", Msg: "date out of range"}
			}
			return arrow.Date32(d), true, nil
		})
	}
	return nil
}

// make_date(year, month, day) is PostgreSQL's make_date: the date of a proleptic Gregorian
// year (negative years are BC: -44 is 44 BC, there is no year 0), month and day, integers.
// A field that names no day (year 0, month 13, February 30) is "date field value out of
// range" and a day outside PostgreSQL's date range "date out of range", both 22008; PostgreSQL
// quotes the fields, which this message leaves out (they may be the rows' values).
func init() { ownFunctions["make_date"] = makeDateKernel }

func makeDateKernel(n *fnNode) error {
	if err := argCount(n, 3, 3); err != nil {
		return err
	}
	if err := wantInt(n, 0, 1, 2); err != nil {
		return err
	}
	n.out = arrow.FixedWidthTypes.Date32
	n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
		return mapRows[arrow.Date32](array.NewDate32Builder(mem), rows, args, func(i int) (arrow.Date32, bool, error) {
			d, err := makeDate(intAt(args[0], i), intAt(args[1], i), intAt(args[2], i))
			return arrow.Date32(d), err == nil, err
		})
	}
	return nil
}

// makeDate is make_date's day, in days from 1970-01-01.
func makeDate(y, m, d int64) (int64, error) {
	fieldErr := &DataError{Code: "22008", Msg: "date field value out of range"}
	if y == 0 || m < 1 || m > 12 || d < 1 || d > 31 {
		return 0, fieldErr
	}
	if y < 0 {
		y++ // 1 BC is the astronomical year 0
	}
	// The Gregorian calendar repeats every 400 years: the month's length is that of a year
	// of the same remainder.
	if t := time.Date(2000+int(y-floorDiv(y, 400)*400), time.Month(m), int(d), 0, 0, 0, 0, time.UTC); t.Day() != int(d) {
		return 0, fieldErr // the day is past the month's last
	}
	if y < -6_000_000 || y > 6_000_000 {
		return 0, &DataError{Code: "22008", Msg: "date out of range"} // far past either end
	}
	days := floorDiv(time.Date(int(y), time.Month(m), int(d), 0, 0, 0, 0, time.UTC).Unix(), 86400)
	if days < minPGDate || days > maxPGDate {
		return 0, &DataError{Code: "22008", Msg: "date out of range"}
	}
	return days, nil
}
