package substrait

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/types"
)

// This file folds a time bound written as an expression of constants into the instant a read
// is routed by. The binder folds the common spellings itself while it binds (a literal, now(),
// timestamp ± interval, date ± integer, date_trunc to a UTC unit, AT TIME ZONE of a literal);
// any other expression that reads no column — date_trunc('decade', now()) - interval '19
// years', (date_trunc('year', current_date) - interval '25 years')::date + 5, date_bin,
// make_interval, casts between date and the timestamp types — is evaluated here once, by the
// executor's own kernels (scan/ops.EvalConstant, registered by the query package: the code a
// SELECT of it runs), so the bound is the value the executor and PostgreSQL compute for it
// (calendar months, the clamped day of month, the session zone UTC). now(), current_date, current_timestamp and localtimestamp are the
// statement's one clock value (BindOptions.Now, stable_value), so the bound is the instant the
// rows would be compared with. A bound holding a parameter is folded when the parameters are
// bound (Statement.Bind binds the statement again with their values as constants); before, it
// counts as a parameter bound.

// constantBound evaluates val, an expression over no column and no parameter, as a literal
// of its value (a nanosecond timestamp of either kind, or a date) for timestampLiteralValue.
// ok is false for an expression that reads a column, holds a parameter or a function whose
// value is not the statement's (the deferred functions), that the executor cannot evaluate,
// whose value is NULL (a NULL bound bounds nothing, as a NULL literal does) or not a
// timestamp or a date, and when no evaluator is registered (SetConstantEvaluator) or bd has
// no extension registry to resolve functions by (ImpliedByRoute's). A data exception of the
// evaluation (22008 timestamp out of range) is kept in bd.boundErr: the read's refusal, should
// the bound be missing for it, is that error, which PostgreSQL raises evaluating the same
// expression.
func (bd *binder) constantBound(val expr.Expression) (expr.Literal, bool) {
	a, ok := bd.evalConstant(val)
	if !ok {
		return nil, false
	}
	defer a.Release()
	if a.Len() != 1 || a.IsNull(0) {
		return nil, false
	}
	switch v := a.(type) {
	case *array.Timestamp:
		t := v.DataType().(*arrow.TimestampType)
		prec, ok := map[arrow.TimeUnit]types.TimePrecision{arrow.Second: types.PrecisionSeconds,
			arrow.Millisecond: types.PrecisionMilliSeconds, arrow.Microsecond: types.PrecisionMicroSeconds,
			arrow.Nanosecond: types.PrecisionNanoSeconds}[t.Unit]
		if !ok {
			return nil, false
		}
		if t.TimeZone == "" {
			return expr.NewPrecisionTimestampLiteral(int64(v.Value(0)), prec, nullableN), true
		}
		return expr.NewPrecisionTimestampTzLiteral(int64(v.Value(0)), prec, nullableN), true
	case *array.Date32:
		return expr.NewPrimitiveLiteral(types.Date(v.Value(0)), false), true
	}
	return nil, false
}

// evalConstant evaluates val, an expression over no column, no parameter and no deferred
// function, with the registered evaluator: a one-row array the caller releases, ok false
// when val is no such expression, no evaluator is registered or bd has no extension registry.
// A data exception of the evaluation is kept in bd.boundErr (constantBound).
func (bd *binder) evalConstant(val expr.Expression) (arrow.Array, bool) {
	a, ok, err := bd.evalConstantErr(val)
	if err != nil {
		var e *Error
		if bd.boundErr == nil && errors.As(err, &e) {
			bd.boundErr = e
		}
		return nil, false
	}
	return a, ok
}

// evalConstantErr is evalConstant returning the evaluation's error instead of keeping it:
// ok false and a nil error when val is not such an expression or nothing can evaluate it.
func (bd *binder) evalConstantErr(val expr.Expression) (a arrow.Array, ok bool, err error) {
	eval := constantEvaluator.Load()
	if eval == nil || bd.reg.Set == nil || !isConstant(val) || bd.holdsParameter(val) || holdsDeferred(val) {
		return nil, false, nil
	}
	if a, err = (*eval)(context.Background(), val, bd.reg); err != nil {
		return nil, false, err
	}
	return a, true, nil
}

// constantlyFalse reports whether c, a conjunct of a read's WHERE, is a constant whose value
// is false or NULL (WHERE false, WHERE 1 <> 1, Metabase's and DBeaver's schema probes): the
// read passes no row, so it reads no bucket whatever its route (route), as PostgreSQL's
// planner folds such a qualification into a one-time filter that stops the scan before it
// starts. An expression that cannot be evaluated, or raises, is not.
func (bd *binder) constantlyFalse(c expr.Expression) bool {
	switch l := c.(type) {
	case *expr.NullLiteral:
		return true
	case *expr.PrimitiveLiteral[bool]:
		return !l.Value
	}
	saved := bd.boundErr
	a, ok := bd.evalConstant(c)
	bd.boundErr = saved
	if !ok {
		return false
	}
	defer a.Release()
	if a.Len() != 1 {
		return false
	}
	if a.IsNull(0) {
		return true
	}
	b, ok := a.(*array.Boolean)
	return ok && !b.Value(0)
}

// ConstantEvaluator evaluates e, a scalar expression that reads no column, on one row with
// the executor's kernels (the value a table-less SELECT of e answers), resolving its functions
// through reg: a one-row array the caller releases. A data exception of e is an *Error with
// its SQLSTATE; any other error means e cannot be evaluated. It is safe for concurrent use.
type ConstantEvaluator func(ctx context.Context, e expr.Expression, reg expr.ExtensionRegistry) (arrow.Array, error)

var constantEvaluator atomic.Pointer[ConstantEvaluator]

// SetConstantEvaluator registers the evaluator of time bounds written as expressions of
// constants (the query package registers scan/ops', which this package may not import);
// without one only the spellings the binder folds itself bound a read. Safe for concurrent
// use.
func SetConstantEvaluator(f ConstantEvaluator) { constantEvaluator.Store(&f) }

// holdsParameter reports whether e is, or holds, a parameter not bound yet (prepare time: its
// stand-in, bd.ps.placeholders).
func (bd *binder) holdsParameter(e expr.Expression) bool {
	if bd.ps == nil || len(bd.ps.placeholders) == 0 {
		return false
	}
	found := false
	var visit expr.VisitFunc
	visit = func(x expr.Expression) expr.Expression {
		if _, ph := bd.ps.placeholders[x]; ph {
			found = true
			return x
		}
		return x.Visit(visit)
	}
	visit(e)
	return found
}

// isParamBound reports whether val, compared with the timestamp column, is a bound that
// depends on a parameter not bound yet: the parameter itself, or an expression of constants
// and parameters ($1::timestamptz - $2::interval), folded when the parameters are bound.
func (bd *binder) isParamBound(val expr.Expression) bool {
	if _, ph := bd.ps.placeholders[val]; ph {
		return true
	}
	return isConstant(val) && bd.holdsParameter(val)
}

// holdsDeferred reports whether e holds one of the deferred functions (scan/ops deferred.go),
// whose values are those of the rows a join pairs, not constants.
func holdsDeferred(e expr.Expression) bool {
	found := false
	var visit expr.VisitFunc
	visit = func(x expr.Expression) expr.Expression {
		if f, ok := x.(*expr.ScalarFunction); ok && f.ID().URN == URNPostgres {
			switch f.Name() {
			case "deferred_value", "deferred_error", "raise_deferred", "raise_deferred_here", "subquery_rows_error":
				found = true
				return x
			}
		}
		return x.Visit(visit)
	}
	visit(e)
	return found
}
