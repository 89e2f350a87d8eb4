package substrait

import (
	"math"
	"time"

	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/types"

	"github.com/flightsrv/flightsrv/routing"
)

// TimeBinOf reports whether e, an expression over the base schema of a ReadRel of def, is a
// time bin of the timestamp column in UTC — round_calendar or round_temporal with FLOOR
// rounding, as the binder plans date_trunc and date_bin (bindfunc.go) — and returns its
// binning. Anything else, including a bin of another column or in another time zone, is not a
// time bin. The executor's pushdown rewrite uses it to recognise a store-answerable grouping
// wherever it appears in a plan.
func TimeBinOf(e expr.Expression, def routing.TableDef) (routing.Binning, bool) {
	bin, err := binOf(e)
	if err != nil {
		return routing.Binning{}, false
	}
	return bin, true
}

// binOf reads a time bin of the timestamp column (see TimeBinOf); the error says why e is
// not one.
func binOf(e expr.Expression) (routing.Binning, error) {
	f, ok := e.(*expr.ScalarFunction)
	if !ok || f.ID().URN != URNDatetime || (f.Name() != "round_calendar" && f.Name() != "round_temporal") {
		return routing.Binning{}, unimplemented("grouped AggregateRel (GROUP BY) other than by one time bucket of timestamp")
	}
	name := f.Name()
	if f.NArgs() != 6 {
		return routing.Binning{}, unimplemented(name + " without a time zone")
	}
	arg := func(i int) types.FuncArg { return f.Arg(i) }
	x, ok := arg(0).(expr.Expression)
	if !ok {
		return routing.Binning{}, invalidPlan("the first argument of %s is not an expression", name)
	}
	if !routedColumn(x, timestampField) {
		return routing.Binning{}, unimplemented(name + " of anything but the timestamp column")
	}
	enum := func(i int) string { s, _ := arg(i).(types.Enum); return string(s) }
	if enum(1) != "FLOOR" {
		return routing.Binning{}, unimplemented(name + " rounding other than FLOOR")
	}
	lit := func(i int) (expr.Literal, bool) {
		a, ok := arg(i).(expr.Expression)
		if !ok {
			return nil, false
		}
		return literalOf(a)
	}
	int64Arg := func(i int) (int64, bool) {
		l, ok := lit(i)
		if !ok {
			return 0, false
		}
		v, ok := l.(*expr.PrimitiveLiteral[int64])
		if !ok {
			return 0, false
		}
		return v.Value, true
	}
	zoneAt := 5
	if name == "round_temporal" {
		zoneAt = 4
	}
	if l, ok := lit(zoneAt); !ok {
		return routing.Binning{}, unimplemented(name + " with a time zone that is not a literal")
	} else if z, ok := stringLiteral(l); !ok || !isUTCName(z) {
		return routing.Binning{}, unimplemented(name + " in a time zone other than UTC")
	}
	if name == "round_calendar" {
		multiple, ok := int64Arg(4)
		if !ok {
			return routing.Binning{}, unimplemented("round_calendar with a multiple that is not an i64 literal")
		}
		unit, ok := calendarUnit(enum(2), enum(3), multiple)
		if !ok {
			return routing.Binning{}, unimplemented("round_calendar other than date_trunc to second, minute, hour, day, week, month, quarter or year")
		}
		return routing.TruncBinning(unit), nil
	}
	multiple, ok := int64Arg(3)
	if !ok {
		return routing.Binning{}, unimplemented("round_temporal with a multiple that is not an i64 literal")
	}
	var per time.Duration
	for _, u := range temporalUnits {
		if u.name == enum(2) {
			per = u.d
		}
	}
	if per == 0 {
		return routing.Binning{}, unimplemented("round_temporal to a calendar unit")
	}
	if multiple <= 0 || multiple > math.MaxInt64/int64(per) {
		return routing.Binning{}, errStrideNotPositive
	}
	ol, ok := lit(5)
	if !ok {
		return routing.Binning{}, unimplemented("round_temporal with an origin that is not a literal")
	}
	origin, err := timestampLiteralValue(ol)
	if err != nil {
		return routing.Binning{}, err
	}
	if origin.Nanosecond()%1000 != 0 {
		return routing.Binning{}, errorf(InvalidArgument, "date_bin origin must be a whole microsecond")
	}
	bin := routing.StrideBinning(time.Duration(multiple)*per, origin)
	if err := bin.Validate(); err != nil {
		return routing.Binning{}, errorf(InvalidArgument, "invalid round_temporal arguments")
	}
	return bin, nil
}
