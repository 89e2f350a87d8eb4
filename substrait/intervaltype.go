package substrait

import (
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/extensions"
	"github.com/substrait-io/substrait-go/v8/types"
)

// PostgreSQL's interval as a value: Substrait's interval_compound (microsecond precision),
// which the executor holds as Arrow's month_day_nano_interval (months, days, nanoseconds),
// with the functions of URNPostgres scan/ops interval.go evaluates and documents. An INTERVAL
// '…' constant stays an untyped value (bval.intervalConst) where the binder folds it
// (timestamp ± constant, date_bin's stride); anywhere else it becomes make_interval of its
// three fields, as PostgreSQL's interval_in reads them.

// intervalType is the interval type of expressions.
func intervalType() types.Type {
	return types.NewIntervalCompoundType().WithPrecision(types.PrecisionMicroSeconds).WithNullability(nullableN)
}

// isIntervalType reports whether t is an interval.
func isIntervalType(t types.Type) bool {
	switch t.(type) {
	case types.IntervalCompoundType, *types.IntervalCompoundType:
		return true
	}
	return false
}

// isIntervalVal reports whether v is an interval: a typed one or an INTERVAL constant.
func isIntervalVal(v bval) bool {
	if _, ok := v.intervalConst(); ok {
		return true
	}
	return v.e != nil && isIntervalType(v.typ())
}

// intervalConstant is the value of an INTERVAL constant (tagged, its text after
// intervalTag): kept as the constant the binder folds (bval.intervalConst) and, when its text
// reads as an interval value, typed as that value, so that CASE, COALESCE, VALUES and UNION
// take it as an interval.
func (bd *binder) intervalConstant(tagged string) bval {
	v := bval{str: &tagged}
	if e, err := bd.intervalValue(v, ""); err == nil {
		v.e = e
	}
	return v
}

// intervalValue returns v as an interval expression: a typed interval as it is, an INTERVAL
// constant as make_interval of its fields, NULL as a null interval.
func (bd *binder) intervalValue(v bval, what string) (expr.Expression, error) {
	if isTimeVal(v) {
		// PostgreSQL's implicit time → interval cast (sum(time), time * 2, to_char(time, …)).
		v, err := bd.timeAsInterval(v)
		return v.e, err
	}
	if v.e != nil {
		if !isIntervalType(v.typ()) {
			return nil, errorf(InvalidArgument, "%s must be interval, not %s", what, typeName(v.typ()))
		}
		return v.e, nil
	}
	if v.null {
		return bd.fn(URNPostgres, "make_interval", intervalType(), expr.NewNullLiteral(i32Type()), expr.NewNullLiteral(i32Type()), expr.NewNullLiteral(i64Type()))
	}
	s, ok := v.intervalConst()
	if !ok && v.str != nil {
		s, ok = *v.str, true // an untyped literal read as an interval
	}
	if !ok && v.param > 0 {
		return bd.intervalParam(v.param, what)
	}
	if !ok {
		return nil, unimplemented("interval parameters")
	}
	months, days, us, err := parseIntervalFields(s)
	if err != nil {
		return nil, err
	}
	return bd.fn(URNPostgres, "make_interval", intervalType(), expr.NewPrimitiveLiteral(months, false),
		expr.NewPrimitiveLiteral(days, false), expr.NewPrimitiveLiteral(us*1000, false))
}

// intervalParam is parameter p as an interval (`? + interval '3 hours'`, `?::interval`): its
// value text read by PostgreSQL's interval_in (parseIntervalFields; JDBC's setString on the
// utf8 the parameter is declared as), or a bound month_day_nano interval (ADBC's), whose
// nanoseconds must be whole microseconds, PostgreSQL's resolution; at prepare time a zero
// interval of the same type stands in.
func (bd *binder) intervalParam(p int, what string) (expr.Expression, error) {
	if bd.boundNull(p) {
		if prev, ok := bd.ps.types[p]; ok && !isIntervalType(prev) {
			return nil, errorf(InvalidArgument, "parameter $%d is used both as %s and as interval", p, typeName(prev))
		}
		bd.ps.types[p] = intervalType()
		return bd.fn(URNPostgres, "make_interval", intervalType(), expr.NewNullLiteral(i32Type()), expr.NewNullLiteral(i32Type()), expr.NewNullLiteral(i64Type()))
	}
	months, days, ns, err := bd.intervalParamFields(p)
	if err != nil {
		return nil, err
	}
	return bd.fn(URNPostgres, "make_interval", intervalType(), expr.NewPrimitiveLiteral(months, false),
		expr.NewPrimitiveLiteral(days, false), expr.NewPrimitiveLiteral(ns, false))
}

// intervalParamFields types parameter p interval and returns its value's months, days and
// nanoseconds (intervalParam); all zero at prepare time.
func (bd *binder) intervalParamFields(p int) (months, days int32, ns int64, err error) {
	if prev, ok := bd.ps.types[p]; ok && !isIntervalType(prev) {
		return 0, 0, 0, errorf(InvalidArgument, "parameter $%d is used both as %s and as interval", p, typeName(prev))
	}
	bd.ps.types[p] = intervalType()
	switch {
	case bd.ps.vals == nil:
		return 0, 0, 0, nil
	case p > len(bd.ps.vals):
		return 0, 0, 0, errorf(InvalidArgument, "parameter $%d has no value", p)
	case bd.ps.vals[p-1] == nil:
		return 0, 0, 0, nullParam(p)
	}
	switch x := bd.ps.vals[p-1].(type) {
	case string:
		m, d, us, err := parseIntervalFields(x)
		if err != nil {
			return 0, 0, 0, paramError(p, err)
		}
		return m, d, us * 1000, nil
	case arrow.MonthDayNanoInterval:
		if x.Nanoseconds%1000 != 0 {
			return 0, 0, 0, errorf(InvalidArgument, "parameter $%d: an interval finer than a microsecond (PostgreSQL's resolution) is not accepted", p)
		}
		return x.Months, x.Days, x.Nanoseconds, nil
	default:
		return 0, 0, 0, errorf(InvalidArgument, "parameter $%d must be interval, got %s", p, valueTypeName(x))
	}
}

// strideParam is date_bin's stride given as parameter p (`date_bin(?::interval, …)`): its
// days (of 24 hours, as in UTC) and time, with date_bin's refusals of a stride with months
// (errBinMonths) or not positive; at prepare time an hour stands in.
func (bd *binder) strideParam(p int) (time.Duration, error) {
	months, days, ns, err := bd.intervalParamFields(p)
	switch {
	case err != nil:
		return 0, err
	case bd.ps.vals == nil:
		return time.Hour, nil
	case months != 0:
		return 0, errBinMonths
	}
	// Days are 24 hours (date_bin's), the sum exact.
	d := new(big.Int).Mul(big.NewInt(int64(days)), big.NewInt(int64(24*time.Hour)))
	switch d.Add(d, big.NewInt(ns)); {
	case d.Sign() <= 0:
		return 0, errStrideNotPositive
	case !d.IsInt64():
		return 0, errStrideTooLong
	}
	return time.Duration(d.Int64()), nil
}

// parseIntervalFields reads an interval literal as PostgreSQL's interval_in keeps it: its
// months, days and microseconds (decodeInterval, intervalin.go). Errors are *Error with
// PostgreSQL's SQLSTATE (22007, 22015, 22008) or refusals by name (0A000).
func parseIntervalFields(s string) (months, days int32, us int64, err error) {
	return decodeInterval(s)
}

// maxIntervalMicros bounds an interval's time: the executor holds it in int64 nanoseconds.
const maxIntervalMicros = (1<<63 - 1) / 1000

// intervalCmpNames are interval_cmp's enumeration values by SQL comparison operator.
var intervalCmpNames = map[string]string{"=": "eq", "<>": "ne", "!=": "ne", "<": "lt", "<=": "le", ">": "gt", ">=": "ge"}

// intervalBinary binds the operators with an interval result or operand: timestamp -
// timestamp (or date), date - timestamp, interval ± interval, timestamp ± interval (an
// interval that is not a constant: timestampArith folds constants), interval * number, number
// * interval, interval / number, and comparisons of intervals. ok is false when neither
// operand is an interval (and the operator is not timestamp - timestamp or date).
func (bd *binder) intervalBinary(op string, l, r bval) (bval, bool, error) {
	li, ri := isIntervalVal(l), isIntervalVal(r)
	fam := func(v bval) family {
		if v.untyped() {
			return famOther
		}
		return familyOf(v.typ())
	}
	lf, rf := fam(l), fam(r)
	if op == "-" && (lf == famTimestamp && (rf == famTimestamp || rf == famDate) || lf == famDate && rf == famTimestamp) {
		// timestamp - date and date - timestamp are timestamp - timestamp in PostgreSQL, the
		// date made a timestamp of the other's type (midnight: UTC in the session's zone).
		// The date is given to timestamp_diff as it is (scan/ops reads its midnight, UTC), so
		// that a date no nanosecond instant holds (timestamp - date '1600-01-01') answers.
		a, b := l.e, r.e
		var err error
		if lf != famDate && rf != famDate {
			t := l.typ()
			if a, err = bd.coerce(l, t, "the left operand of timestamp - timestamp"); err != nil {
				return bval{}, true, err
			}
			if b, err = bd.coerce(r, t, "the right operand of timestamp - timestamp"); err != nil {
				return bval{}, true, err
			}
		}
		f, err := bd.fn(URNPostgres, "timestamp_diff", intervalType(), a, b)
		return typed(f), true, err
	}
	if !li && !ri {
		return bval{}, false, nil
	}
	ls, lc := l.intervalConst()
	rs, rc := r.intervalConst()
	if (op == "+" || op == "-") && (lc && rf == famTimestamp && !fractionalMonths(ls) ||
		rc && lf == famTimestamp && !fractionalMonths(rs)) {
		// timestamp ± an interval constant: timestampArith folds it (a routed bound may be
		// one), but for a fractional number of months, which it does not read.
		return bval{}, false, nil
	}
	if _, cmp := comparisons[op]; cmp {
		if !(li || l.untyped()) || !(ri || r.untyped()) {
			return bval{}, true, errorf(InvalidArgument, "operator does not exist: %s %s %s", opTypeName(l), op, opTypeName(r))
		}
		a, err := bd.intervalValue(l, "the left operand of "+op)
		if err != nil {
			return bval{}, true, err
		}
		b, err := bd.intervalValue(r, "the right operand of "+op)
		if err != nil {
			return bval{}, true, err
		}
		f, err := bd.fn(URNPostgres, "interval_cmp", booleanType(), types.Enum(intervalCmpNames[op]), a, b)
		return typed(f), true, err
	}
	switch {
	case (op == "+" || op == "-") && (li && (ri || r.untyped()) || ri && l.untyped()):
		// An untyped literal or parameter takes the interval's type (PostgreSQL's operator
		// resolution for one unknown operand: `$1 + interval '1 day'` is interval + interval,
		// and '2001-04-01' + interval '1 day' is 22007, the text not being an interval).
		a, err := bd.intervalValue(l, "the left operand of interval "+op+" interval")
		if err != nil {
			return bval{}, true, err
		}
		b, err := bd.intervalValue(r, "the right operand of interval "+op+" interval")
		if err != nil {
			return bval{}, true, err
		}
		name := map[string]string{"+": "interval_add", "-": "interval_sub"}[op]
		f, err := bd.fn(URNPostgres, name, intervalType(), a, b)
		return typed(f), true, err
	case (op == "+" || op == "-") && lf == famTimestamp && ri, op == "+" && li && rf == famTimestamp:
		ts, iv := l, r
		if li {
			ts, iv = r, l
		}
		b, err := bd.intervalValue(iv, "the interval of timestamp "+op+" interval")
		if err != nil {
			return bval{}, true, err
		}
		if op == "-" {
			if b, err = bd.fn(URNPostgres, "interval_neg", intervalType(), b); err != nil {
				return bval{}, true, err
			}
		}
		f, err := bd.fn(URNPostgres, "timestamp_add_interval", ts.typ().WithNullability(nullableN), ts.e, b)
		return typed(f), true, err
	case op == "*" && li && isNumberVal(r), op == "*" && ri && isNumberVal(l), op == "/" && li && isNumberVal(r):
		iv, n := l, r
		if ri && !li {
			iv, n = r, l
		}
		a, err := bd.intervalValue(iv, "the interval of interval "+op+" number")
		if err != nil {
			return bval{}, true, err
		}
		x, err := bd.coerce(n, fp64Type(), "the factor of an interval")
		if err != nil {
			return bval{}, true, err
		}
		name := map[string]string{"*": "interval_mul", "/": "interval_div"}[op]
		f, err := bd.fn(URNPostgres, name, intervalType(), a, x)
		return typed(f), true, err
	}
	return bval{}, true, errorf(InvalidArgument, "operator does not exist: %s %s %s", opTypeName(l), op, opTypeName(r))
}

// fractionalMonths reports whether interval text s holds a fractional number of months
// ('1.5 months': 1 mon 15 days as an interval value).
func fractionalMonths(s string) bool {
	_, months, ok := parseInterval(s)
	return ok && !months.IsInt()
}

// isNumberVal reports whether v is a number or an untyped literal (read as one).
func isNumberVal(v bval) bool {
	if v.untyped() {
		_, iv := v.intervalConst()
		return !iv
	}
	return isNumber(familyOf(v.typ()))
}

// opTypeName names an operand's type for "operator does not exist".
func opTypeName(v bval) string {
	if isIntervalVal(v) {
		return "interval"
	}
	if v.untyped() {
		return "unknown"
	}
	return typeName(v.typ())
}

// intervalNeg binds unary minus of an interval.
func (bd *binder) intervalNeg(v bval) (bval, error) {
	a, err := bd.intervalValue(v, "the operand of unary -")
	if err != nil {
		return bval{}, err
	}
	f, err := bd.fn(URNPostgres, "interval_neg", intervalType(), a)
	return typed(f), err
}

// castInterval binds an interval's casts: to text (PostgreSQL's interval_out) and to
// interval; ok is false when e is not an interval.
func (bd *binder) castInterval(e expr.Expression, t types.Type) (bval, bool, error) {
	if !isIntervalType(e.GetType()) {
		return bval{}, false, nil
	}
	switch {
	case isIntervalType(t):
		return typed(e), true, nil
	case familyOf(t) == famString:
		f, err := bd.fn(URNPostgres, "interval_text", strType(), e)
		return typed(f), true, err
	}
	return bval{}, true, errorf(InvalidArgument, "cannot cast type interval to %s", typeName(t))
}

// intervalPartScales are the fields extract takes of an interval besides epoch (PostgreSQL's
// interval_part_common, by lookupUnit's canonical name) with the scale of its numeric answer;
// scan/ops interval.go computes them as interval_part_<field>.
var intervalPartScales = map[string]int32{
	"microseconds": 0, "milliseconds": 3, "second": 6, "minute": 0, "hour": 0, "day": 0, "month": 0,
	"quarter": 0, "year": 0, "decade": 0, "century": 0, "millennium": 0,
}

// intervalPart binds extract(field from interval) (numeric, as PostgreSQL answers it) and
// date_part(field, interval) (double precision): epoch, and the fields of intervalPartScales.
// Other fields (dow, doy, week, julian, timezone…), which PostgreSQL refuses, are refused by name.
func (bd *binder) intervalPart(name, field string, v bval) (bval, error) {
	fn, scale := "interval_epoch", int32(6)
	if field != "EPOCH" {
		unit, _ := lookupUnit(field)
		s, ok := intervalPartScales[unit]
		if !ok {
			return bval{}, unimplemented(name + " of " + strings.ToLower(field) + " from an interval")
		}
		fn, scale = "interval_part_"+unit, s
	}
	a, err := bd.intervalValue(v, "argument 2 of "+name)
	if err != nil {
		return bval{}, err
	}
	f, err := bd.fn(URNPostgres, fn, &types.DecimalType{Precision: 38, Scale: scale, Nullability: nullableN}, a)
	if err != nil || name == "extract" {
		return typed(f), err
	}
	return bd.cast(f, fp64Type())
}

// refuseIntervalKeys refuses intervals as keys (DISTINCT, INTERSECT and EXCEPT, grouping
// sets…) by name: PostgreSQL groups intervals that compare equal ('1 mon' and '30 days') as
// one, which only the aggregation of a plain GROUP BY does here (scan/aggregate's
// intervalSpanKey).
func refuseIntervalKeys(keys []expr.Expression, what string) error {
	for _, k := range keys {
		if isIntervalType(k.GetType()) {
			return unimplemented(what + " of an interval")
		}
	}
	return nil
}

// age binds age(a, b), PostgreSQL's symbolic difference of two timestamps in the session's
// zone (UTC): years, months and days counted on the calendar (timestamp_age; scan/ops
// interval.go). age(a) is age(current_date, a), whose answer depends on the day the query runs:
// it is refused by name.
func (bd *binder) age(args []bval) (bval, error) {
	if len(args) == 1 {
		return bval{}, refused(Unimplemented, "0A000", "age with one argument is not supported: its answer depends on the day the query runs (age(date_trunc('day', now()), t) is the same)")
	}
	if len(args) != 2 {
		return bval{}, errorf(InvalidArgument, "function age with %d arguments does not exist", len(args))
	}
	a, err := bd.dateOrTimestamp(args[0], "argument 1 of age")
	if err != nil {
		return bval{}, err
	}
	b, err := bd.dateOrTimestamp(args[1], "argument 2 of age")
	if err != nil {
		return bval{}, err
	}
	f, err := bd.fn(URNPostgres, "timestamp_age", intervalType(), a, b)
	return typed(f), err
}

// dateOrTimestamp is v as the argument of a function of a timestamp with time zone that
// scan/ops also computes on a date (to_char, date_part, age, timestamp_diff): a date is given
// as it is, so that one outside timestamp[ns] (to_char(date '1500-01-01', …), a sentinel
// date '0001-01-01') answers as PostgreSQL's date → timestamptz would, midnight UTC; any other
// value is coerced to timestamp with time zone.
func (bd *binder) dateOrTimestamp(v bval, what string) (expr.Expression, error) {
	if !v.untyped() && familyOf(v.typ()) == famDate {
		return v.e, nil
	}
	return bd.coerce(v, tsType(), what)
}

// justify binds justify_hours, justify_days and justify_interval (scan/ops interval.go).
func (bd *binder) justify(name string, v bval) (bval, error) {
	if !v.untyped() && !isIntervalVal(v) && !isTimeVal(v) {
		// PostgreSQL has justify_*(interval) alone (a time is one by its implicit cast): 42883
		// for another type.
		return bval{}, errorf(InvalidArgument, "function %s(%s) does not exist", name, opTypeName(v))
	}
	a, err := bd.intervalValue(v, "argument 1 of "+name)
	if err != nil {
		return bval{}, err
	}
	f, err := bd.fn(URNPostgres, name, intervalType(), a)
	return typed(f), err
}

// intervalSum binds sum(interval) and avg(interval) as PostgreSQL computes them: the months,
// the days and the time summed apart (interval_pl, each an exact total: sum(bigint) of the
// field), and avg the sum divided by the count of values (interval_div by a float8). Each field
// is a measure of its own (interval_months, interval_days, interval_nanos), put back together
// by make_interval over the aggregate's output.
func (bd *binder) intervalSum(avg bool, arg, filter expr.Expression, ac *aggCtx) (bval, error) {
	measure := func(f *expr.AggregateFunction, out types.Type) expr.Expression {
		return ac.measure(bd.b.Measure(f, filter), out)
	}
	var fields [3]expr.Expression
	for i, name := range []string{"interval_months", "interval_days", "interval_nanos"} {
		x, err := bd.fn(URNPostgres, name, i64Type(), arg)
		if err != nil {
			return bval{}, err
		}
		f, err := expr.NewAggregateFunc(bd.reg, extensions.ID{URN: URNPostgres, Name: "sum"}, nil, types.AggInvocationAll, types.AggPhaseInitialToResult, nil, x)
		if err != nil {
			return bval{}, fmt.Errorf("bind sum: %w", err)
		}
		// The exact total, numeric: make_interval checks that it fits (past the field's
		// range 22008 "interval out of range", as PostgreSQL's interval_pl raises it).
		fields[i] = measure(f, numType(0))
	}
	sum, err := bd.fn(URNPostgres, "make_interval", intervalType(), fields[0], fields[1], fields[2])
	if err != nil || !avg {
		return typed(sum), err
	}
	text, err := bd.fn(URNPostgres, "interval_text", strType(), arg)
	if err != nil {
		return bval{}, err
	}
	cf, err := expr.NewAggregateFunc(bd.reg, extensions.ID{URN: URNAggregate, Name: "count:any"}, nil, types.AggInvocationAll, types.AggPhaseInitialToResult, nil, text)
	if err != nil {
		return bval{}, fmt.Errorf("bind avg: %w", err)
	}
	return bd.intervalOverCount(sum, measure(cf, &types.Int64Type{Nullability: types.NullabilityRequired}))
}

// intervalOverCount is avg(interval)'s final step: the sum divided by the count of values
// (interval_div by the count as a float8), NULL where the count is 0 (interval_div by 0 would
// be an error).
func (bd *binder) intervalOverCount(sum, count expr.Expression) (bval, error) {
	n, err := bd.cast(count, fp64Type())
	if err != nil {
		return bval{}, err
	}
	zero, err := bd.fn(URNComparison, "equal", booleanType(), n.e, expr.NewPrimitiveLiteral(0.0, false))
	if err != nil {
		return bval{}, err
	}
	nz, err := bd.ifThen([]expr.IfThenPair{{If: zero, Then: expr.NewNullLiteral(fp64Type())}}, n.e)
	if err != nil {
		return bval{}, err
	}
	f, err := bd.fn(URNPostgres, "interval_div", intervalType(), sum, nz)
	return typed(f), err
}
