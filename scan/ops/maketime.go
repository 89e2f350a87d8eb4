package ops

import (
	"errors"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// make_timestamp(year, month, mday, hour, min, sec) and make_timestamptz(…) are PostgreSQL's
// make_timestamp and make_timestamptz without a zone argument (make_timestamp_internal): the
// instant of the proleptic Gregorian date (make_date's rules: negative years BC, no year 0)
// at hour:min:sec, sec a double precision rounded to the microsecond, in nanoseconds since
// 1970-01-01 — zone-less for make_timestamp, UTC (the session's zone) for make_timestamptz.
// The five integer fields are integers, sec float64. A date naming no day is "date field
// value out of range", a time past 24:00:00 (hour outside 0–24, minute outside 0–59, sec
// negative, NaN or past 60 after rounding: PostgreSQL's float_time_overflows) "time field
// value out of range", an instant outside the nanosecond range "timestamp out of range", all
// 22008; PostgreSQL quotes the fields, which these messages leave out (they may be the rows'
// values).
func init() {
	ownFunctions["make_timestamp"] = makeTimestampKernel(false)
	ownFunctions["make_timestamptz"] = makeTimestampKernel(true)
	ownFunctions["to_timestamp_float8"] = toTimestampFloat8
}

func makeTimestampKernel(zoned bool) func(*fnNode) error {
	return func(n *fnNode) error {
		if err := argCount(n, 6, 6); err != nil {
			return err
		}
		if err := wantInt(n, 0, 1, 2, 3, 4); err != nil {
			return err
		}
		if n.types[5] == nil || n.types[5].ID() != arrow.FLOAT64 {
			return errors.New("argument 6 must be double precision")
		}
		out := &arrow.TimestampType{Unit: arrow.Nanosecond}
		if zoned {
			out.TimeZone = "UTC"
		}
		n.out = out
		n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
			secs := args[5].(*array.Float64)
			return mapRows[arrow.Timestamp](array.NewTimestampBuilder(mem, out), rows, args, func(i int) (arrow.Timestamp, bool, error) {
				ns, err := makeTimestamp(intAt(args[0], i), intAt(args[1], i), intAt(args[2], i), intAt(args[3], i), intAt(args[4], i), secs.Value(i))
				return arrow.Timestamp(ns), err == nil, err
			})
		}
		return nil
	}
}

// makeTimestamp is make_timestamp_internal's instant in nanoseconds since 1970-01-01.
func makeTimestamp(y, mo, d, h, mi int64, sec float64) (int64, error) {
	days, err := makeDate(y, mo, d)
	if err != nil {
		return 0, err
	}
	// float_time_overflows: each field in range, sec rounded to the microsecond first (rint,
	// half to even), the total at most 24:00:00.
	timeErr := &DataError{Code: "22008", Msg: "time field value out of range"}
	if h < 0 || h > 24 || mi < 0 || mi >= 60 || math.IsNaN(sec) {
		return 0, timeErr
	}
	us := math.RoundToEven(sec * 1e6)
	if us < 0 || us > 60e6 {
		return 0, timeErr
	}
	tod := (h*60+mi)*60*1_000_000 + int64(us)
	if tod > 86_400_000_000 {
		return 0, timeErr
	}
	// days is within PostgreSQL's date range (±6 million years): its microseconds fit int64.
	total := days*86_400_000_000 + tod
	if total < math.MinInt64/1000 || total > math.MaxInt64/1000 {
		return 0, errTimestampRange
	}
	return total * 1000, nil
}

// to_timestamp_float8(x) is PostgreSQL's to_timestamp(double precision)
// (float8_timestamptz): x seconds since 1970-01-01 UTC, rounded to the microsecond as
// PostgreSQL rounds (rint after moving to its 2000 epoch), as timestamp[ns, UTC]. NaN is
// "timestamp cannot be NaN", a value outside PostgreSQL's timestamp range or the nanosecond
// range "timestamp out of range" (22008); ±Infinity, PostgreSQL's ±infinity, which
// timestamp[ns] cannot hold, is refused (0A000) where a row holds one.
func toTimestampFloat8(n *fnNode) error {
	if err := argCount(n, 1, 1); err != nil {
		return err
	}
	if n.types[0] == nil || n.types[0].ID() != arrow.FLOAT64 {
		return errors.New("argument must be double precision")
	}
	out := &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}
	n.out = out
	n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
		xs := args[0].(*array.Float64)
		return mapRows[arrow.Timestamp](array.NewTimestampBuilder(mem, out), rows, args, func(i int) (arrow.Timestamp, bool, error) {
			ns, err := EpochSecondsToNanos(xs.Value(i))
			return arrow.Timestamp(ns), err == nil, err
		})
	}
	return nil
}

// PostgreSQL's timestamp range in seconds since 1970-01-01 (MIN_TIMESTAMP, END_TIMESTAMP) and
// its epoch, 2000-01-01, in the same seconds.
const (
	pgMinEpochSeconds = -210866803200.0
	pgEndEpochSeconds = 9224318016000.0
	pgEpochShift      = 946684800.0
)

// EpochSecondsToNanos is PostgreSQL's to_timestamp(double precision) (float8_timestamptz) of
// secs seconds since 1970-01-01 UTC: the instant rounded to the microsecond as PostgreSQL
// rounds (rint after moving to its 2000 epoch), in nanoseconds since 1970-01-01. NaN is
// "timestamp cannot be NaN" and a value outside PostgreSQL's timestamp range or the
// nanosecond range (1677-09-21 to 2262-04-11) "timestamp out of range", both 22008;
// ±Infinity (PostgreSQL's ±infinity, which no nanosecond timestamp holds) is refused, 0A000.
func EpochSecondsToNanos(secs float64) (int64, error) {
	switch {
	case math.IsNaN(secs):
		return 0, &DataError{Code: "22008", Msg: "timestamp cannot be NaN"}
	case math.IsInf(secs, 0):
		return 0, &DataError{Code: "0A000", Msg: "to_timestamp of infinity is not supported: flightsrv's timestamps hold no infinite value"}
	case secs < pgMinEpochSeconds || secs >= pgEndEpochSeconds:
		return 0, errTimestampRange
	}
	us := math.RoundToEven((secs - pgEpochShift) * 1e6) // microseconds from 2000-01-01
	ns := (us + pgEpochShift*1e6) * 1e3
	if ns < math.MinInt64 || ns >= math.MaxInt64 {
		return 0, errTimestampRange
	}
	// us is an integer below 2^53 in this range: the sum is exact in int64.
	return (int64(us) + int64(pgEpochShift)*1_000_000) * 1000, nil
}
