package substrait

import (
	"context"
	"errors"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/substrait-io/substrait-go/v8/expr"

	"github.com/flightsrv/flightsrv/scan/ops"
)

// The tests evaluate bounds written as expressions of constants with the executor's kernels,
// registered as the query package registers them (query/textin.go, which these tests cannot
// import).
func init() {
	SetConstantEvaluator(func(ctx context.Context, e expr.Expression, reg expr.ExtensionRegistry) (arrow.Array, error) {
		a, err := ops.EvalConstant(ctx, e, reg, nil)
		var de *ops.DataError
		if errors.As(err, &de) {
			return nil, &Error{Code: InvalidArgument, SQLState: de.Code, Msg: de.Msg, LogMsg: de.LogMsg}
		}
		return a, err
	})
}
