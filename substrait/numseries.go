package substrait

import (
	"github.com/cockroachdb/apd/v3"
	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/types"
)

// numericSeries computes generate_series(start, stop[, step]) of numeric constants (an
// argument numeric, the others integers or untyped literals read as numeric), as PostgreSQL's
// generate_series_step_numeric: start, then each value the previous plus step (1 when not
// given) while it has not passed stop, exactly. Each value's display scale is PostgreSQL's:
// start's for the first, the larger of start's and step's for the others (numeric addition
// keeps the larger), so the column is numeric at that scale; a series whose step has more
// digits after the point than its start and that yields more than one value (its first value
// would show fewer digits than the others) is refused by name, as are arguments that are not
// constants and series of more than MaxSeriesRows values. A zero step is 22023 "step size
// cannot equal zero"; a NULL argument yields no row.
func (bd *binder) numericSeries(args []bval) ([]expr.Expression, types.Type, error) {
	vals := make([]*apd.Decimal, 3)
	scales := make([]int32, 3)
	vals[2] = apd.New(1, 0)
	null := false
	for i, a := range args {
		if a.null {
			null = true
			continue
		}
		var e expr.Expression
		switch {
		case a.str != nil && a.param == 0:
			// An untyped constant beside a numeric is numeric, read by numeric_in.
			d, s, err := parseNumericText(*a.str)
			if err != nil {
				return nil, nil, err
			}
			vals[i], scales[i] = d, s
			continue
		case a.untyped():
			return nil, nil, unimplemented("generate_series of numerics that are not constants")
		case familyOf(a.typ()) == famNumeric:
			e = a.e
		case familyOf(a.typ()) == famInt:
			var err error
			if e, err = bd.coerce(a, numType(0), "argument of generate_series"); err != nil {
				return nil, nil, err
			}
		default:
			return nil, nil, errorf(InvalidArgument, "function generate_series(%s) does not exist", argTypeNames(args))
		}
		if d, s, ok := numLiteralValue(e); ok {
			vals[i], scales[i] = d, s
			continue
		}
		// An integer constant cast to numeric without a type modifier (5::numeric): the
		// binder's numeric_cast(ROUND, 0, 0, 5), the integer's value at scale 0.
		if f, ok := e.(*expr.ScalarFunction); ok && f.Name() == "numeric_cast" && f.NArgs() == 4 {
			places, _ := f.Arg(1).(types.Enum)
			prec, _ := f.Arg(2).(types.Enum)
			if x, ok := f.Arg(3).(expr.Expression); ok && places == "0" && prec == "0" && familyOf(x.GetType()) == famInt {
				e = x
			}
		}
		for c, ok := e.(*expr.Cast); ok; c, ok = e.(*expr.Cast) {
			e = c.Input
		}
		switch l := e.(type) {
		case *expr.PrimitiveLiteral[int64]:
			vals[i] = apd.New(l.Value, 0)
		case *expr.PrimitiveLiteral[int32]:
			vals[i] = apd.New(int64(l.Value), 0)
		case *expr.PrimitiveLiteral[int16]:
			vals[i] = apd.New(int64(l.Value), 0)
		default:
			return nil, nil, unimplemented("generate_series of numerics that are not constants")
		}
	}
	start, stop, step := vals[0], vals[1], vals[2]
	scale := max(scales[0], scales[2])
	if null {
		return nil, numType(scale), nil
	}
	if step.IsZero() {
		return nil, nil, &Error{Code: InvalidArgument, SQLState: "22023", Msg: "step size cannot equal zero"}
	}
	ctx := apd.BaseContext.WithPrecision(100)
	var cur apd.Decimal
	cur.Set(start)
	var rows []expr.Expression
	for step.Sign() > 0 && cur.Cmp(stop) <= 0 || step.Sign() < 0 && cur.Cmp(stop) >= 0 {
		if len(rows) == MaxSeriesRows {
			return nil, nil, errSeriesRows("generate_series of numerics")
		}
		if len(rows) == 1 && scales[0] < scales[2] {
			return nil, nil, unimplemented("generate_series of numerics whose step has more digits after the point than its start (the first value shows fewer)")
		}
		lit, err := numLiteral(&cur, scale, 0, apd.RoundHalfUp)
		if err != nil {
			return nil, nil, err
		}
		rows = append(rows, lit)
		if _, err := ctx.Add(&cur, &cur, step); err != nil {
			return nil, nil, err
		}
	}
	if len(rows) == 1 {
		// One value: start's, at its own display scale.
		lit, err := numLiteral(start, scales[0], 0, apd.RoundHalfUp)
		if err != nil {
			return nil, nil, err
		}
		return []expr.Expression{lit}, numType(scales[0]), nil
	}
	return rows, numType(scale), nil
}
