package ops

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flightsrv/flightsrv/internal/calendar"
)

// PostgreSQL's time without time zone: Arrow time64[us], microseconds since midnight (0 to
// 24:00:00), read and written by internal/calendar's TimeIn and TimeOut, as the binder
// (package substrait, timetype.go) reads and writes constants. The kernels of URNPostgres:
//
//	time_in(x)                 text x read as time_in reads it; TimeIn's errors
//	time_text(t)               TimeOut of t (time_out)
//	time_round(p, t)           t rounded to p (an enumeration "0"…"5") fractional digits, half
//	                           up (AdjustTimeForTypmod: time(p))
//	timestamp_time(ts)         the time of day of a timestamp, with or without time zone (in
//	                           the session's zone, UTC): timestamp_time, timestamptz_time
//	interval_time(iv)          the interval's time modulo a day, its months and days ignored
//	time_interval(t)           t as an interval of its time (PostgreSQL's implicit cast)
//	time_pl_interval(t, iv)    t + iv's time modulo a day (time_pl_interval), months and days ignored
//	time_mi_interval(t, iv)    t - iv's time modulo a day (time_mi_interval)
//	time_mi_time(a, b)         a - b as an interval of time (time_mi_time)
//	date_pl_time(d, t)         the timestamp without time zone d + t (datetime_timestamp);
//	                           22008 "timestamp out of range" outside timestamp[ns]
//	date_mi_time(d, t)         d - t likewise (date_mi_interval of t as an interval)

// timeType is the Arrow type of PostgreSQL's time.
var timeType = &arrow.Time64Type{Unit: arrow.Microsecond}

func init() {
	ownFunctions["time_in"] = timeIn
	ownFunctions["time_text"] = timeText
	ownFunctions["time_round"] = timeRound
	ownFunctions["timestamp_time"] = timestampTime
	ownFunctions["interval_time"] = intervalTime
	ownFunctions["time_interval"] = timeInterval
	ownFunctions["time_pl_interval"] = timeIntervalArith(1)
	ownFunctions["time_mi_interval"] = timeIntervalArith(-1)
	ownFunctions["time_mi_time"] = timeMiTime
	ownFunctions["date_pl_time"] = dateTimeArith(1)
	ownFunctions["date_mi_time"] = dateTimeArith(-1)
}

// wantTime checks that the arguments at idx are time64[us].
func wantTime(n *fnNode, idx ...int) error {
	for _, i := range idx {
		if n.args[i] == nil || !arrow.TypeEqual(n.types[i], timeType) {
			return errors.New("arguments must be time64[us]")
		}
	}
	return nil
}

// timeError is calendar.TimeError as the executor's DataError.
func timeError(err error) error {
	var te *calendar.TimeError
	if errors.As(err, &te) {
		return &DataError{Code: te.Code, Msg: te.Msg}
	}
	return err
}

func timeRows(mem memory.Allocator, rows int, args []arrow.Array, f func(i int) (int64, error)) (arrow.Array, error) {
	return mapRows[arrow.Time64](array.NewTime64Builder(mem, timeType), rows, args, func(i int) (arrow.Time64, bool, error) {
		v, err := f(i)
		return arrow.Time64(v), err == nil, err
	})
}

func timeIn(n *fnNode) error {
	if err := argCount(n, 1, 1); err != nil {
		return err
	}
	if n.types[0] == nil || n.types[0].ID() != arrow.STRING && n.types[0].ID() != arrow.LARGE_STRING {
		return errors.New("argument must be text")
	}
	n.out = timeType
	n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
		tx, ok := asTexts(args[0])
		if !ok {
			return nil, fmt.Errorf("ops: time_in of %s", args[0].DataType())
		}
		return timeRows(mem, rows, args, func(i int) (int64, error) {
			v, err := calendar.TimeIn(string(tx.ValueBytes(i)))
			return v, timeError(err)
		})
	}
	return nil
}

func timeRound(n *fnNode) error {
	if err := argCount(n, 2, 2); err != nil {
		return err
	}
	p, err := strconv.Atoi(n.enums[0])
	if n.args[0] != nil || err != nil || p < 0 || p > 6 {
		return errors.New("arguments must be a precision 0 to 6 and a time")
	}
	if err := wantTime(n, 1); err != nil {
		return err
	}
	n.out = timeType
	n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
		a := args[1].(*array.Time64)
		return timeRows(mem, rows, args[1:], func(i int) (int64, error) {
			return calendar.RoundTime(int64(a.Value(i)), p), nil
		})
	}
	return nil
}

// unaryKernel is a function of one argument of Arrow array type A, checked by check: f of
// each row's value, built by newB into an array of type out.
func unaryKernel[A arrow.Array, T any](check func(*fnNode) error, out arrow.DataType, newB func(memory.Allocator) appender[T], f func(a A, i int) T) func(*fnNode) error {
	return func(n *fnNode) error {
		if err := argCount(n, 1, 1); err != nil {
			return err
		}
		if err := check(n); err != nil {
			return err
		}
		n.out = out
		n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
			a, ok := args[0].(A)
			if !ok {
				return nil, fmt.Errorf("ops: %s of %s", n.name, args[0].DataType())
			}
			return mapRows[T](newB(mem), rows, args, func(i int) (T, bool, error) { return f(a, i), true, nil })
		}
		return nil
	}
}

func newTimeBuilder(mem memory.Allocator) appender[arrow.Time64] {
	return array.NewTime64Builder(mem, timeType)
}

var (
	timeText = unaryKernel(func(n *fnNode) error { return wantTime(n, 0) }, arrow.BinaryTypes.String,
		func(mem memory.Allocator) appender[string] { return array.NewStringBuilder(mem) },
		func(a *array.Time64, i int) string { return calendar.TimeOut(int64(a.Value(i))) })
	timeInterval = unaryKernel(func(n *fnNode) error { return wantTime(n, 0) }, mdnType,
		func(mem memory.Allocator) appender[arrow.MonthDayNanoInterval] {
			return array.NewMonthDayNanoIntervalBuilder(mem)
		},
		func(a *array.Time64, i int) arrow.MonthDayNanoInterval {
			return arrow.MonthDayNanoInterval{Nanoseconds: int64(a.Value(i)) * nsPerUs}
		})
	timestampTime = unaryKernel(wantTimestampNs, timeType, newTimeBuilder,
		func(a *array.Timestamp, i int) arrow.Time64 {
			return arrow.Time64(calendar.TimeOfDay(int64(a.Value(i))))
		})
	intervalTime = unaryKernel(func(n *fnNode) error { return wantInterval(n, 0) }, timeType, newTimeBuilder,
		func(a *array.MonthDayNanoInterval, i int) arrow.Time64 {
			return arrow.Time64(calendar.WrapTime(0, a.Value(i).Nanoseconds/nsPerUs))
		})
)

// wantTimestampNs checks that n's argument is a timestamp[ns], with or without a zone.
func wantTimestampNs(n *fnNode) error {
	if ts, ok := n.types[0].(*arrow.TimestampType); n.args[0] == nil || !ok || ts.Unit != arrow.Nanosecond {
		return errors.New("argument must be timestamp[ns]")
	}
	return nil
}

// timeIntervalArith is time_pl_interval (sign 1) or time_mi_interval (-1).
func timeIntervalArith(sign int64) func(*fnNode) error {
	return func(n *fnNode) error {
		if err := argCount(n, 2, 2); err != nil {
			return err
		}
		if err := wantTime(n, 0); err != nil {
			return err
		}
		if err := wantInterval(n, 1); err != nil {
			return err
		}
		n.out = timeType
		n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
			t, iv := args[0].(*array.Time64), args[1].(*array.MonthDayNanoInterval)
			return timeRows(mem, rows, args, func(i int) (int64, error) {
				d := iv.Value(i).Nanoseconds / nsPerUs % calendar.MicrosPerDay
				return calendar.WrapTime(int64(t.Value(i)), sign*d), nil
			})
		}
		return nil
	}
}

func timeMiTime(n *fnNode) error {
	if err := argCount(n, 2, 2); err != nil {
		return err
	}
	if err := wantTime(n, 0, 1); err != nil {
		return err
	}
	n.out = mdnType
	n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
		a, b := args[0].(*array.Time64), args[1].(*array.Time64)
		return mdnRows(mem, rows, args, func(i int) (arrow.MonthDayNanoInterval, bool, error) {
			return arrow.MonthDayNanoInterval{Nanoseconds: (int64(a.Value(i)) - int64(b.Value(i))) * nsPerUs}, true, nil
		})
	}
	return nil
}

// wallclockNs is the Arrow type of a timestamp without time zone.
var wallclockNs = &arrow.TimestampType{Unit: arrow.Nanosecond}

// dateTimeArith is date_pl_time (sign 1) or date_mi_time (-1).
func dateTimeArith(sign int64) func(*fnNode) error {
	return func(n *fnNode) error {
		if err := argCount(n, 2, 2); err != nil {
			return err
		}
		if n.args[0] == nil || n.types[0].ID() != arrow.DATE32 {
			return errors.New("arguments must be a date and a time")
		}
		if err := wantTime(n, 1); err != nil {
			return err
		}
		n.out = wallclockNs
		n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
			d, t := args[0].(*array.Date32), args[1].(*array.Time64)
			return mapRows[arrow.Timestamp](array.NewTimestampBuilder(mem, wallclockNs), rows, args, func(i int) (arrow.Timestamp, bool, error) {
				// Microseconds: a date of int32 days and a time stay far inside int64.
				us := int64(d.Value(i))*calendar.MicrosPerDay + sign*int64(t.Value(i))
				const limit = (1<<63 - 1) / nsPerUs
				if us > limit || us < -limit {
					return 0, false, &DataError{Code: "22008", Msg: "timestamp out of range"}
				}
				return arrow.Timestamp(us * nsPerUs), true, nil
			})
		}
		return nil
	}
}
