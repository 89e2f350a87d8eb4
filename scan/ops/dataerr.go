package ops

import (
	"errors"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/types"
)

// DataError is a SQL data exception (PostgreSQL's SQLSTATE class 22) met while evaluating an
// expression on the values of a batch, or on constants while compiling: a division by zero, an
// integer overflow, text that does not parse as the type it is cast to. The query is at fault,
// not the server: the front ends answer it as INVALID_ARGUMENT with Msg.
//
// Msg is PostgreSQL's message for the condition without the offending value (PostgreSQL
// quotes it; a row value may be a partition value): "division by zero", "integer out of
// range", "invalid input syntax for type integer". Code is its SQLSTATE (22012, 22003,
// 22P02, 22007). Err is the kernel's error, whose text may quote row values: for debug logs
// only. A Msg that quotes a constant of the query itself, as PostgreSQL's does (percentile
// value 1.5 is not between 0 and 1), comes with LogMsg, the same message without it: what a
// log line may hold.
type DataError struct {
	Code   string
	Msg    string
	LogMsg string
	Err    error
}

// Error returns Msg prefixed "ops: ".
func (e *DataError) Error() string { return "ops: " + e.Msg }

// Unwrap returns the kernel's error.
func (e *DataError) Unwrap() error { return e.Err }

// SQLState returns the five-character SQLSTATE (the interface internal/querylog and the
// Flight SQL layer read).
func (e *DataError) SQLState() string { return e.Code }

// SQLSTATEs of the data exceptions (PostgreSQL, Appendix A).
const (
	sqlstateDivisionByZero      = "22012"
	sqlstateOutOfRange          = "22003"
	sqlstateInvalidText         = "22P02"
	sqlstateInvalidDatetimeText = "22007"
	sqlstateBadEncoding         = "22021"
	sqlstateNotSupported        = "0A000" // feature_not_supported: refused by name
)

// pgTypeName names an Arrow type as PostgreSQL names the type it stands for (integer, double
// precision, text, bytea, timestamp with time zone…); other types keep Arrow's name.
func pgTypeName(t arrow.DataType) string {
	switch t.ID() {
	case arrow.INT8, arrow.INT16, arrow.UINT8:
		return "smallint"
	case arrow.INT32, arrow.UINT16:
		return "integer"
	case arrow.INT64, arrow.UINT32, arrow.UINT64:
		return "bigint"
	case arrow.FLOAT16, arrow.FLOAT32:
		return "real"
	case arrow.FLOAT64:
		return "double precision"
	case arrow.DECIMAL128, arrow.DECIMAL256, arrow.DECIMAL32, arrow.DECIMAL64:
		return "numeric"
	case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW:
		return "text"
	case arrow.BINARY, arrow.LARGE_BINARY, arrow.BINARY_VIEW, arrow.FIXED_SIZE_BINARY:
		return "bytea"
	case arrow.BOOL:
		return "boolean"
	case arrow.DATE32, arrow.DATE64:
		return "date"
	case arrow.TIMESTAMP:
		if t.(*arrow.TimestampType).TimeZone != "" {
			return "timestamp with time zone"
		}
		return "timestamp without time zone"
	case arrow.INTERVAL_MONTH_DAY_NANO, arrow.DURATION:
		return "interval"
	}
	return t.String()
}

// outOfRange is PostgreSQL's overflow message for an integer or floating-point type.
func outOfRange(t arrow.DataType, err error) *DataError {
	msg := "value out of range: overflow"
	if arrow.IsInteger(t.ID()) {
		msg = pgTypeName(t) + " out of range"
	}
	return &DataError{Code: sqlstateOutOfRange, Msg: msg, Err: err}
}

// arithError classifies the error of a kernel evaluating e (arrow-go's checked arithmetic):
// a division by zero or an overflow of e's innermost integer arithmetic becomes a *DataError;
// any other error is returned unchanged.
func arithError(err error, e expr.Expression) error {
	if err == nil || !errors.Is(err, arrow.ErrInvalid) {
		return err
	}
	msg := err.Error()
	switch {
	case strings.Contains(msg, "divide by zero"):
		return &DataError{Code: sqlstateDivisionByZero, Msg: "division by zero", Err: err}
	case strings.Contains(msg, "overflow"):
		t := arrow.DataType(arrow.PrimitiveTypes.Int32)
		if at := arithType(e); at != nil {
			t = at
		}
		return outOfRange(t, err)
	}
	return err
}

// arithType returns the Arrow type of e's innermost (first in post-order) arithmetic
// function returning an integer, or nil when it has none.
func arithType(e expr.Expression) arrow.DataType {
	f, ok := e.(*expr.ScalarFunction)
	if !ok {
		return nil
	}
	for i := range f.NArgs() {
		if a, ok := f.Arg(i).(expr.Expression); ok {
			if t := arithType(a); t != nil {
				return t
			}
		}
	}
	if !strings.HasSuffix(f.ID().URN, "functions_arithmetic") {
		return nil
	}
	switch f.GetType().(type) {
	case *types.Int8Type:
		return arrow.PrimitiveTypes.Int8
	case *types.Int16Type:
		return arrow.PrimitiveTypes.Int16
	case *types.Int32Type:
		return arrow.PrimitiveTypes.Int32
	case *types.Int64Type:
		return arrow.PrimitiveTypes.Int64
	}
	return nil
}

// castError classifies the error of a cast from `from` to `to`: text that does not parse is
// invalid input syntax for the target type (22P02, 22007 for dates and timestamps), or out of
// its range (22003); a number outside the target's range is "<type> out of range" (22003); a
// date outside the nanosecond range cast to a timestamp is "timestamp out of range" (22008).
// Other errors are returned unchanged.
func castError(err error, from, to arrow.DataType) error {
	if err == nil || !(errors.Is(err, arrow.ErrInvalid) || strings.Contains(err.Error(), "invalid syntax")) {
		return err
	}
	msg := err.Error()
	if arrow.IsBaseBinary(from.ID()) || from.ID() == arrow.STRING_VIEW {
		if strings.Contains(msg, "value out of range") {
			return &DataError{Code: sqlstateOutOfRange, Msg: "value out of range for type " + pgTypeName(to), Err: err}
		}
		code, name := sqlstateInvalidText, pgTypeName(to)
		if to.ID() == arrow.TIMESTAMP || to.ID() == arrow.DATE32 || to.ID() == arrow.DATE64 {
			code = sqlstateInvalidDatetimeText
		}
		if name == "timestamp without time zone" {
			name = "timestamp" // timestamp_in's own word for its type (timestamptz_in's is in full)
		}
		return &DataError{Code: code, Msg: "invalid input syntax for type " + name, Err: err}
	}
	if strings.Contains(msg, "not in range") || strings.Contains(msg, "overflow") ||
		arrow.IsFloating(from.ID()) && arrow.IsInteger(to.ID()) && strings.Contains(msg, "truncated") {
		// A float rounded to an integer (the binder rounds it first) is truncated only when
		// outside the integer's range, or NaN or infinite: "integer out of range".
		return outOfRange(to, err)
	}
	if to.ID() == arrow.TIMESTAMP && strings.Contains(msg, "out of bounds timestamp") {
		// A date past the nanosecond range cast to a timestamp (date ± interval casts its
		// date): PostgreSQL's "timestamp out of range" for the range this engine holds.
		return errTimestampRange
	}
	return err
}
