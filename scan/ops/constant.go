package ops

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/substrait-io/substrait-go/v8/expr"

	"github.com/flightsrv/flightsrv/scan/ledger"
)

// EvalConstant evaluates e, a scalar expression that reads no column, on one row of no
// columns, resolving functions through ext as Compile does: the value a table-less SELECT of
// e answers (a one-row array, owned by the caller). A data exception of e (22008 timestamp
// out of range, 22012 division by zero) is a *DataError; an expression Compile refuses fails
// with its error. The evaluation allocates from mem, the query's ledger, and is refused past
// its limit (a *ledger.LimitExceededError); a nil mem is a ledger of its own bounded by
// ConstantMemory (the binder's constants: time bounds, constant conjuncts, json_in of a
// literal).
func EvalConstant(ctx context.Context, e expr.Expression, ext expr.ExtensionRegistry, mem *ledger.Ledger) (arrow.Array, error) {
	empty := arrow.NewSchema(nil, nil)
	x, err := Compile(e, empty, ext)
	if err != nil {
		return nil, err
	}
	in := array.NewRecordBatch(empty, nil, 1)
	defer in.Release()
	if mem == nil {
		mem = constantLedger()
	}
	return x.Eval(ctx, in, mem)
}
