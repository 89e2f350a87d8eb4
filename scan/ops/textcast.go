package ops

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flightsrv/flightsrv/internal/pgnumfmt"
)

// Casts of text computed per row to integers, booleans, dates and timestamps, read by
// PostgreSQL's input functions as the binder reads a constant of the type: one reader per
// type for constants and rows alike. arrow-go's cast kernels read text otherwise (its integer
// cast guesses the base from a prefix: '0612' was octal 394, '0x1A' 26, '1_000' 1000; it has
// no cast of text to date32; its boolean cast knows only true/false/1/0; its timestamp cast
// refused a zone-less timestamptz and an offset written in a timestamp). The kernels run on
// the calling goroutine, one pass over the rows, and fail on the first text that does not
// read with the reader's SQLSTATE and a message that does not quote the text.

// DateTimeInput are the readers of date and timestamp text (the binder's: package substrait
// reads constants with them; ops may not import it, so the engine registers them with
// SetDateTimeInput before running a plan). Date returns days since 1970-01-01; Timestamp
// nanoseconds since the Unix epoch, naive for timestamp without time zone (a zone written in
// the text read and ignored, as PostgreSQL's timestamp_in ignores it), else the instant (text
// without a zone in the session's zone, UTC). Their errors are returned as they are: a
// *DataError carries PostgreSQL's SQLSTATE (22007, 22008, 0A000).
// Interval reads interval text (interval_in, run by interval_in(text) below) into months,
// days and nanoseconds.
type DateTimeInput struct {
	Date      func(s string) (int32, error)
	Timestamp func(s string, naive bool) (int64, error)
	Interval  func(s string) (arrow.MonthDayNanoInterval, error)
	// ToDate and ToTimestamp are to_date(s, format) (days since 1970-01-01) and
	// to_timestamp(s, format) (nanoseconds since the Unix epoch, UTC).
	ToDate      func(s, format string) (int32, error)
	ToTimestamp func(s, format string) (int64, error)
}

func init() {
	ownFunctions["interval_in"] = intervalIn
	ownFunctions["to_date_text"] = toDateText(true)
	ownFunctions["to_timestamp_text"] = toDateText(false)
}

// toDateText is to_date_text(format, x) (date32) or to_timestamp_text(format, x)
// (timestamp[ns, UTC]): text x read per row by the format (the enum argument) with the
// registered readers (DateTimeInput.ToDate, ToTimestamp), NULL where x is; the first text the
// format does not read fails with the reader's error.
func toDateText(date bool) func(*fnNode) error {
	return func(n *fnNode) error {
		if err := argCount(n, 2, 2); err != nil {
			return err
		}
		if n.args[0] != nil || n.types[1] == nil || n.types[1].ID() != arrow.STRING && n.types[1].ID() != arrow.LARGE_STRING {
			return errors.New("arguments must be a format and text")
		}
		format := n.enums[0]
		tsType := &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}
		if date {
			n.out = arrow.FixedWidthTypes.Date32
		} else {
			n.out = tsType
		}
		n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
			in := dateTimeInput.Load()
			if in == nil || in.ToDate == nil || in.ToTimestamp == nil {
				return nil, errors.New("ops: to_date/to_timestamp: no input registered (SetDateTimeInput)")
			}
			tx, ok := asTexts(args[1])
			if !ok {
				return nil, fmt.Errorf("ops: to_date of %s", args[1].DataType())
			}
			if date {
				return mapRows[arrow.Date32](array.NewDate32Builder(mem), rows, args[1:], func(i int) (arrow.Date32, bool, error) {
					v, err := in.ToDate(string(tx.ValueBytes(i)), format)
					return arrow.Date32(v), err == nil, err
				})
			}
			return mapRows[arrow.Timestamp](array.NewTimestampBuilder(mem, tsType), rows, args[1:], func(i int) (arrow.Timestamp, bool, error) {
				v, err := in.ToTimestamp(string(tx.ValueBytes(i)), format)
				return arrow.Timestamp(v), err == nil, err
			})
		}
		return nil
	}
}

// intervalIn is interval_in(x): text x (utf8 or large_utf8) read per row by the registered
// interval reader (DateTimeInput.Interval, the reader of interval constants), NULL where x
// is; the first text it does not read fails with the reader's error.
func intervalIn(n *fnNode) error {
	if err := argCount(n, 1, 1); err != nil {
		return err
	}
	if n.types[0] == nil || n.types[0].ID() != arrow.STRING && n.types[0].ID() != arrow.LARGE_STRING {
		return errors.New("argument must be text")
	}
	n.out = mdnType
	n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
		in := dateTimeInput.Load()
		if in == nil || in.Interval == nil {
			return nil, errors.New("ops: interval_in: no interval input registered (SetDateTimeInput)")
		}
		tx, ok := asTexts(args[0])
		if !ok {
			return nil, fmt.Errorf("ops: interval_in of %s", args[0].DataType())
		}
		return mdnRows(mem, rows, args, func(i int) (arrow.MonthDayNanoInterval, bool, error) {
			v, err := in.Interval(string(tx.ValueBytes(i)))
			return v, err == nil, err
		})
	}
	return nil
}

var dateTimeInput atomic.Pointer[DateTimeInput]

// SetDateTimeInput registers the readers of date, timestamp and interval text; safe for
// concurrent use.
func SetDateTimeInput(in DateTimeInput) { dateTimeInput.Store(&in) }

// textCastTarget reports whether a cast of text to `to` runs textCast.
func textCastTarget(to arrow.DataType) bool {
	switch to.ID() {
	case arrow.INT16, arrow.INT32, arrow.INT64, arrow.FLOAT32, arrow.FLOAT64, arrow.BOOL, arrow.DATE32:
		return true
	case arrow.TIMESTAMP:
		return to.(*arrow.TimestampType).Unit == arrow.Nanosecond
	}
	return false
}

// textCast casts text d (utf8, large_utf8, binary or large_binary) to int16, int32, int64
// (int2in, int4in, int8in), float32 or float64 (float4in, float8in: pgnumfmt.FloatIn, white
// space around the number, NaN and Infinity, hexadecimal), bool (boolin), date32 (date_in) or
// timestamp[ns] (timestamp_in without a zone, timestamptz_in with one).
func textCast(ctx context.Context, d compute.Datum, to arrow.DataType) (compute.Datum, error) {
	return castEach(ctx, d, func(a arrow.Array) (arrow.Array, error) {
		tx, ok := asTexts(a)
		if !ok {
			return nil, fmt.Errorf("ops: cast of %s to %s", a.DataType(), to)
		}
		mem := compute.GetAllocator(ctx)
		args := []arrow.Array{a}
		text := func(i int) string { return unsafeString(tx.ValueBytes(i)) }
		switch to.ID() {
		case arrow.INT16:
			return textNumbers(mem, a, tx, to, func(s string) (int16, error) {
				v, err := pgnumfmt.IntIn(s, 16)
				return int16(v), err
			})
		case arrow.INT32:
			return textNumbers(mem, a, tx, to, func(s string) (int32, error) {
				v, err := pgnumfmt.IntIn(s, 32)
				return int32(v), err
			})
		case arrow.INT64:
			return textNumbers(mem, a, tx, to, func(s string) (int64, error) { return pgnumfmt.IntIn(s, 64) })
		case arrow.FLOAT32:
			return textNumbers(mem, a, tx, to, func(s string) (float32, error) {
				v, err := pgnumfmt.FloatIn(s, 32)
				return float32(v), err
			})
		case arrow.FLOAT64:
			return textNumbers(mem, a, tx, to, func(s string) (float64, error) { return pgnumfmt.FloatIn(s, 64) })
		case arrow.BOOL:
			return mapRows[bool](array.NewBooleanBuilder(mem), a.Len(), args, func(i int) (bool, bool, error) {
				v, err := pgnumfmt.BoolIn(text(i))
				return v, true, inputError(err)
			})
		}
		in := dateTimeInput.Load()
		if in == nil {
			return nil, fmt.Errorf("ops: cast of text to %s: no date/time input registered (SetDateTimeInput)", to)
		}
		if to.ID() == arrow.DATE32 {
			return mapRows[arrow.Date32](array.NewDate32Builder(mem), a.Len(), args, func(i int) (arrow.Date32, bool, error) {
				v, err := in.Date(string(tx.ValueBytes(i)))
				return arrow.Date32(v), true, err
			})
		}
		tt := to.(*arrow.TimestampType)
		naive := tt.TimeZone == ""
		return mapRows[arrow.Timestamp](array.NewTimestampBuilder(mem, tt), a.Len(), args, func(i int) (arrow.Timestamp, bool, error) {
			v, err := in.Timestamp(string(tx.ValueBytes(i)), naive)
			return arrow.Timestamp(v), true, err
		})
	})
}

// textNumbers reads the rows of text array a (tx) with parse (a *pgnumfmt.Error for text it
// does not read) into an array of type to, straight into its buffers from mem: its NULLs are
// a's (the validity bitmap copied), no builder call per row.
func textNumbers[T int16 | int32 | int64 | float32 | float64](mem memory.Allocator, a arrow.Array, tx texts, to arrow.DataType, parse func(string) (T, error)) (arrow.Array, error) {
	n := a.Len()
	var zero T
	vals := memory.NewResizableBuffer(mem)
	defer vals.Release()
	vals.Resize(n * int(unsafe.Sizeof(zero)))
	out := unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(vals.Bytes()))), n)
	str, _ := a.(*array.String)
	nulls := a.NullN()
	for i := range n {
		if nulls > 0 && a.IsNull(i) {
			out[i] = 0
			continue
		}
		var s string
		if str != nil {
			s = str.Value(i)
		} else {
			s = unsafeString(tx.ValueBytes(i))
		}
		v, err := parse(s)
		if err != nil {
			return nil, inputError(err)
		}
		out[i] = v
	}
	var valid *memory.Buffer
	if nulls > 0 {
		valid = memory.NewResizableBuffer(mem)
		defer valid.Release()
		valid.Resize(int(bitutil.BytesForBits(int64(n))))
		bitutil.CopyBitmap(a.NullBitmapBytes(), a.Data().Offset(), n, valid.Bytes(), 0)
	}
	data := array.NewData(to, n, []*memory.Buffer{valid, vals}, nil, nulls, 0)
	defer data.Release()
	return array.MakeFromData(data), nil
}

// inputError turns a *pgnumfmt.Error of an input function into a *DataError of its SQLSTATE.
func inputError(err error) error {
	var e *pgnumfmt.Error
	if errors.As(err, &e) {
		return &DataError{Code: e.Code, Msg: e.Msg}
	}
	return err
}
