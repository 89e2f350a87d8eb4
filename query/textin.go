package query

import (
	"context"
	"errors"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/substrait-io/substrait-go/v8/expr"

	"github.com/flightsrv/flightsrv/scan/ops"
	"github.com/flightsrv/flightsrv/substrait"
)

// The executor reads rows of text cast to date and timestamp with the binder's readers of
// constants (ops may not import substrait), and interval text (interval_in) with the reader
// of interval constants: one reader per type for constants and rows.
func init() {
	ops.SetDateTimeInput(ops.DateTimeInput{
		Date: func(s string) (int32, error) {
			v, err := substrait.DateIn(s)
			return v, dataError(err)
		},
		Timestamp: func(s string, naive bool) (int64, error) {
			v, err := substrait.TimestampIn(s, naive)
			return v, dataError(err)
		},
		ToDate: func(s, format string) (int32, error) {
			v, err := substrait.ToDate(s, format)
			return v, dataError(err)
		},
		ToTimestamp: func(s, format string) (int64, error) {
			v, err := substrait.ToTimestamp(s, format)
			return v, dataError(err)
		},
		Interval: func(s string) (arrow.MonthDayNanoInterval, error) {
			m, d, ns, err := substrait.IntervalIn(s)
			return arrow.MonthDayNanoInterval{Months: m, Days: d, Nanoseconds: ns}, dataError(err)
		},
	})
}

// The binder evaluates the time bounds written as expressions of constants with the
// executor's kernels (substrait may not import scan/ops), its data exceptions as its own
// errors of the same SQLSTATE.
func init() {
	substrait.SetConstantEvaluator(func(ctx context.Context, e expr.Expression, reg expr.ExtensionRegistry) (arrow.Array, error) {
		a, err := ops.EvalConstant(ctx, e, reg, nil)
		var de *ops.DataError
		if errors.As(err, &de) {
			return nil, &substrait.Error{Code: substrait.InvalidArgument, SQLState: de.Code, Msg: de.Msg, LogMsg: de.LogMsg}
		}
		return a, err
	})
}

// dataError turns a reader's *substrait.Error into the executor's *ops.DataError of the same
// SQLSTATE and message.
func dataError(err error) error {
	var e *substrait.Error
	if err == nil || !errors.As(err, &e) {
		return err
	}
	return &ops.DataError{Code: e.SQLState, Msg: e.Msg}
}
