package substrait

import (
	"errors"
	"strconv"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/types"

	"github.com/flightsrv/flightsrv/internal/calendar"
)

// PostgreSQL's time without time zone: Substrait's precision_time<6>, Arrow time64[us],
// microseconds since midnight from 00:00:00 to 24:00:00 (docs/sql.md, "Times of day"). Text is
// read and written by internal/calendar (TimeIn, TimeOut) for constants here and for rows in
// scan/ops (timeofday.go's kernels), so that both agree. What PostgreSQL answers through its
// implicit time → interval cast (time * 2, sum(time), to_char(time, …), date_trunc('hour',
// time), timestamp + time, extract) is bound on time_interval of the value; a common type of
// time and interval (COALESCE, CASE, UNION) is PostgreSQL's 42804, as time and interval are of
// different categories.

// timeType is the type of PostgreSQL's time.
func timeType() types.Type {
	return &types.PrecisionTimeType{Precision: types.PrecisionMicroSeconds, Nullability: nullableN}
}

// isTimeVal reports whether v is a typed time value.
func isTimeVal(v bval) bool { return v.e != nil && familyOf(v.typ()) == famTime }

// timeLiteral is microseconds since midnight as a time constant.
func timeLiteral(us int64) expr.Expression {
	return expr.NewPrecisionTimeLiteral(us, types.PrecisionMicroSeconds, nullableN)
}

// timeIn reads a time constant (calendar.TimeIn) as PostgreSQL's time_in, its refusals as the
// binder's errors.
func timeIn(s string) (int64, error) {
	us, err := calendar.TimeIn(s)
	var te *calendar.TimeError
	if errors.As(err, &te) {
		code := InvalidArgument
		if te.Code == "0A000" {
			code = Unimplemented
		}
		return 0, &Error{Code: code, SQLState: te.Code, Msg: te.Msg}
	}
	return us, err
}

// timePrecision reads the type modifier of time(p) in a cast (tn's single integer, 0 to 6;
// past 6 PostgreSQL warns and uses 6): ok is false for a type name that is not time with a
// modifier.
func timePrecision(tn *pg.TypeName) (p int, ok bool, err error) {
	if tn == nil || len(tn.GetTypmods()) == 0 || len(tn.GetArrayBounds()) > 0 {
		return 0, false, nil
	}
	names := tn.GetNames()
	if len(names) == 2 && names[0].GetString_().GetSval() == "pg_catalog" {
		names = names[1:]
	}
	if len(names) != 1 || names[0].GetString_().GetSval() != "time" {
		return 0, false, nil
	}
	mods := tn.GetTypmods()
	c := mods[0].GetAConst()
	if len(mods) != 1 || c == nil || c.GetIval() == nil {
		return 0, true, errorf(InvalidArgument, "invalid type modifier")
	}
	n := c.GetIval().GetIval()
	if n < 0 {
		return 0, true, refused(InvalidArgument, "22023", "TIME(%d) precision must not be negative", n)
	}
	return int(min(n, 6)), true, nil
}

// timeTypeCast binds a cast to time(p) (tc's type time with a modifier): the cast to time,
// then its value rounded to p digits as PostgreSQL's AdjustTimeForTypmod does (half up: a
// constant folded, a row's value by time_round). ok is false for another cast.
func (bd *binder) timeTypeCast(tc *pg.TypeCast, sc *scope) (bval, bool, error) {
	p, ok, err := timePrecision(tc.GetTypeName())
	if !ok || err != nil {
		return bval{}, ok, err
	}
	v, err := bd.bindExpr(tc.GetArg(), sc)
	if err != nil {
		return bval{}, true, err
	}
	v, err = bd.padded(v)
	if err != nil {
		return bval{}, true, err
	}
	t, err := bd.toTime(v)
	if err != nil {
		return bval{}, true, err
	}
	r, err := bd.roundTime(t, p)
	return r, true, err
}

// roundTime is time v rounded to p fractional digits (time(p)).
func (bd *binder) roundTime(v bval, p int) (bval, error) {
	if p >= 6 {
		return v, nil
	}
	if lit, ok := v.e.(*expr.ProtoLiteral); ok {
		if us, ok := lit.Value.(int64); ok {
			return typed(timeLiteral(calendar.RoundTime(us, p))), nil
		}
	}
	f, err := bd.fn(URNPostgres, "time_round", timeType(), types.Enum(strconv.Itoa(p)), v.e)
	return typed(f), err
}

// toTime is v cast to time: an untyped constant or parameter read as time, text by time_in, a
// timestamp (with or without time zone, in the session's zone, UTC) its time of day, an
// interval its time modulo a day (months and days ignored), as PostgreSQL casts them; other
// types are 42846.
func (bd *binder) toTime(v bval) (bval, error) {
	if isIntervalVal(v) {
		iv, err := bd.intervalValue(v, "")
		if err != nil {
			return bval{}, err
		}
		f, err := bd.fn(URNPostgres, "interval_time", timeType(), iv)
		return typed(f), err
	}
	if v.untyped() {
		e, err := bd.coerce(v, timeType(), "")
		return typed(e), err
	}
	e, err := bd.castTime(v.e, timeType())
	return e, err
}

// castTime binds the casts to and from time of e to t: time to text (time_out's text), to
// interval and to time; text, timestamps and intervals to time. Other types are PostgreSQL's
// 42846 "cannot cast type …".
func (bd *binder) castTime(e expr.Expression, t types.Type) (bval, error) {
	have := e.GetType()
	hf, tf := familyOf(have), familyOf(t)
	switch {
	case hf == famTime && tf == famTime:
		return typed(e), nil
	case hf == famTime && tf == famString:
		if lit, ok := e.(*expr.ProtoLiteral); ok {
			if us, ok := lit.Value.(int64); ok {
				return typed(expr.NewPrimitiveLiteral(calendar.TimeOut(us), true)), nil
			}
		}
		f, err := bd.fn(URNPostgres, "time_text", strType(), e)
		if err != nil {
			return bval{}, err
		}
		if _, plain := t.(*types.StringType); plain {
			return typed(f), nil
		}
		return bd.cast(f, t)
	case hf == famTime && isIntervalType(t):
		f, err := bd.fn(URNPostgres, "time_interval", intervalType(), e)
		return typed(f), err
	case tf == famTime && hf == famString:
		if lit, ok := e.(*expr.PrimitiveLiteral[string]); ok {
			us, err := timeIn(lit.Value)
			if err != nil {
				return bval{}, err
			}
			return typed(timeLiteral(us)), nil
		}
		f, err := bd.fn(URNPostgres, "time_in", timeType(), e)
		return typed(f), err
	case tf == famTime && hf == famTimestamp:
		f, err := bd.fn(URNPostgres, "timestamp_time", timeType(), e)
		return typed(f), err
	case tf == famTime && isIntervalType(have):
		f, err := bd.fn(URNPostgres, "interval_time", timeType(), e)
		return typed(f), err
	}
	return bval{}, errorf(InvalidArgument, "cannot cast type %s to %s", typeName(have), typeName(t))
}

// timeAsInterval is time v as an interval (PostgreSQL's implicit cast), other values as they are.
func (bd *binder) timeAsInterval(v bval) (bval, error) {
	if !isTimeVal(v) {
		return v, nil
	}
	f, err := bd.fn(URNPostgres, "time_interval", intervalType(), v.e)
	return typed(f), err
}

// timeBinary binds the operators with a time operand as PostgreSQL resolves them:
// time ± interval and interval + time are a time (wrapping around midnight), time - time an
// interval, date + time and time + date a timestamp without time zone, date - time too; an
// untyped constant is an interval after +, a time after - (time - '06:00' is an interval);
// time + time is 42725 (not unique). A time beside an interval in a comparison, a timestamp or
// interval beside it in + or -, and a number beside it in * or / read it as an interval (the
// implicit cast). Any other operator with a time operand is 42883. ok is false when neither
// operand is a time, or for a comparison of times (compare binds it).
func (bd *binder) timeBinary(op string, l, r bval) (bval, bool, error) {
	lt, rt := isTimeVal(l), isTimeVal(r)
	if !lt && !rt {
		return bval{}, false, nil
	}
	fam := func(v bval) family {
		if v.untyped() {
			return famOther
		}
		return familyOf(v.typ())
	}
	lf, rf := fam(l), fam(r)
	viaInterval := func() (bval, bool, error) {
		li, err := bd.timeAsInterval(l)
		if err != nil {
			return bval{}, true, err
		}
		ri, err := bd.timeAsInterval(r)
		if err != nil {
			return bval{}, true, err
		}
		v, err := bd.binary(op, li, ri)
		return v, true, err
	}
	// call binds URNPostgres' name of a and b, given as ca and cb give them.
	type conv func(bval) (expr.Expression, error)
	call := func(name string, out types.Type, a, b bval, ca, cb conv) (bval, bool, error) {
		x, err := ca(a)
		if err != nil {
			return bval{}, true, err
		}
		y, err := cb(b)
		if err != nil {
			return bval{}, true, err
		}
		f, err := bd.fn(URNPostgres, name, out, x, y)
		return typed(f), true, err
	}
	asIs := func(v bval) (expr.Expression, error) { return v.e, nil }
	asTime := func(v bval) (expr.Expression, error) { return bd.coerce(v, timeType(), "") }
	asInterval := func(v bval) (expr.Expression, error) { return bd.intervalValue(v, "") }
	noOp := func() (bval, bool, error) {
		return bval{}, true, errorf(InvalidArgument, "operator does not exist: %s %s %s", opTypeName(l), op, opTypeName(r))
	}
	if _, cmp := comparisons[op]; cmp {
		if lt && isIntervalVal(r) || rt && isIntervalVal(l) {
			return viaInterval()
		}
		return bval{}, false, nil
	}
	untypedConst := func(v bval) bool { return v.untyped() && !isIntervalVal(v) }
	switch op {
	case "+":
		switch {
		case lt && rt:
			return bval{}, true, refused(InvalidArgument, "42725", "operator is not unique: time without time zone + time without time zone")
		case lt && (isIntervalVal(r) || untypedConst(r)):
			return call("time_pl_interval", timeType(), l, r, asIs, asInterval)
		case rt && (isIntervalVal(l) || untypedConst(l)):
			// interval + time, and unknown + time, whose constant PostgreSQL reads as an interval.
			return call("time_pl_interval", timeType(), r, l, asIs, asInterval)
		case lt && rf == famDate:
			return call("date_pl_time", wallclockType(), r, l, asIs, asIs)
		case rt && lf == famDate:
			return call("date_pl_time", wallclockType(), l, r, asIs, asIs)
		case lt && rf == famTimestamp, rt && lf == famTimestamp:
			return viaInterval()
		}
	case "-":
		switch {
		case lt && (rt || untypedConst(r)), rt && untypedConst(l):
			return call("time_mi_time", intervalType(), l, r, asTime, asTime)
		case lt && isIntervalVal(r):
			return call("time_mi_interval", timeType(), l, r, asIs, asInterval)
		case rt && lf == famDate:
			return call("date_mi_time", wallclockType(), l, r, asIs, asIs)
		case rt && (lf == famTimestamp || isIntervalVal(l)):
			return viaInterval()
		}
	case "*":
		if lt && isNumber(rf) || rt && isNumber(lf) {
			return viaInterval()
		}
	case "/":
		if lt && isNumber(rf) {
			return viaInterval()
		}
	}
	return noOp()
}

// timeExtract binds extract(field FROM t) and date_part(field, t) of a time as PostgreSQL's
// time_part: hour, minute, second, millisecond, microsecond and epoch, those of the time as an
// interval (numeric for extract, double precision for date_part); the other fields PostgreSQL
// knows are its 0A000 "not supported for type time without time zone", a name it does not
// know its 22023.
func (bd *binder) timeExtract(name, field, unit string, v bval) (bval, error) {
	switch field {
	case "HOUR", "MINUTE", "SECOND", "MILLISECOND", "MICROSECOND", "EPOCH":
		iv, err := bd.timeAsInterval(v)
		if err != nil {
			return bval{}, err
		}
		return bd.intervalPart(name, field, iv)
	}
	if datePartFields[field] || pgDatePartFields[field] {
		return bval{}, quoting(Unimplemented, "0A000", "unit %q not supported for type time without time zone", strings.ToLower(unit))
	}
	return bval{}, quoting(InvalidArgument, "22023", "unit %q not recognized for type time without time zone", strings.ToLower(unit))
}

// localTime is PostgreSQL's LOCALTIME and LOCALTIME(p): the statement's clock as the time of
// day in the session's zone (UTC), rounded to p digits as time(p) rounds (GetSQLLocalTime).
func (bd *binder) localTime(typmod int32) (bval, error) {
	us := calendar.TimeOfDay(bd.clock().UnixMicro() * 1000)
	if typmod >= 0 {
		us = calendar.RoundTime(us, int(typmod))
	}
	return bd.stable(timeLiteral(us))
}

// timeOfDayParam is a bound parameter value that is a time of day (time32, time64[us]), in
// microseconds since midnight (general.go's arrowValue).
type timeOfDayParam int64
