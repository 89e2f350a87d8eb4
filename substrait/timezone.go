package substrait

import (
	"errors"
	"strconv"
	"strings"
	"time"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/types"

	"github.com/flightsrv/flightsrv/internal/pgzone"
)

// This file binds PostgreSQL's time zone conversions (docs/sql.md, "Time zones"):
//
//	ts AT TIME ZONE zone, timezone(zone, ts)
//	    timestamp with time zone → timestamp without time zone (the wall clock in zone), and
//	    timestamp without time zone → timestamp with time zone (the instant of that wall
//	    clock in zone), onto URNPostgres' timezone (scan/ops timezone.go) with the zone
//	    resolved here (internal/pgzone) and written as an enumeration;
//	date_trunc(unit, ts, zone)
//	    PostgreSQL's truncation in zone: timezone(zone, date_trunc(unit, timezone(zone, ts)));
//	x::timestamp, CAST(x AS timestamp), TIMESTAMP '…'
//	    timestamp without time zone (wallclockType): in the session's zone, UTC, its value is
//	    the instant a UTC clock shows it, so the conversions to and from timestamp with time
//	    zone keep the value (timezone with the zone UTC).
//
// The zone must be a constant (a text literal or an expression of constants and parameters,
// or an INTERVAL '±hh:mm[:ss]' literal, an offset east of UTC as PostgreSQL reads an interval
// zone); another expression is refused by name.

// zoneOf resolves the zone argument v of AT TIME ZONE or timezone(): a text literal, an
// interval literal, or a text expression of constants and parameters (`AT TIME ZONE
// ?::VARCHAR`, SQLAlchemy's rendering of a bound zone; 'America/Chicago'::varchar), evaluated
// when its parameters are bound — at prepare time, before they are, it is UTC, as the result's
// type does not depend on the zone. null reports a NULL zone: PostgreSQL's timezone() is
// strict, its result NULL. Any other expression (one reading a column) is refused by name.
func (bd *binder) zoneOf(v bval) (z pgzone.Zone, null bool, err error) {
	if iv, ok := v.intervalConst(); ok {
		off, ok := intervalZoneOffset(iv)
		if !ok {
			return pgzone.Zone{}, false, unimplementedAre("interval time zones other than INTERVAL '±hh:mm[:ss]'")
		}
		return pgzone.Fixed(off), false, nil
	}
	if v.null {
		return pgzone.Zone{}, true, nil
	}
	name := v.str
	if name == nil {
		refuse := unimplemented("AT TIME ZONE with a zone that is not a constant")
		if v.untyped() {
			// An untyped parameter: PostgreSQL's timezone(text, …).
			e, err := bd.coerce(v, strType(), "the time zone")
			if err != nil {
				return pgzone.Zone{}, false, err
			}
			v = typed(e)
		}
		s, stand, err := bd.constantTextOr(v, refuse)
		switch {
		case err != nil:
			return pgzone.Zone{}, false, err
		case stand != nil:
			return pgzone.Fixed(0), false, nil
		case s == nil:
			return pgzone.Zone{}, true, nil
		}
		name = s
	}
	z, err = pgzone.Lookup(*name)
	switch {
	case errors.Is(err, pgzone.ErrUnknown):
		return z, false, quoting(InvalidArgument, "22023", "time zone %q not recognized", *name)
	case err != nil:
		return z, false, &Error{Code: Unimplemented, SQLState: "0A000", Msg: err.Error()}
	}
	return z, false, nil
}

// intervalZoneOffset reads an interval zone written [+-]hh:mm[:ss] as seconds east of UTC.
func intervalZoneOffset(s string) (int64, bool) {
	s = strings.TrimSpace(s)
	sign := int64(1)
	switch {
	case strings.HasPrefix(s, "-"):
		sign, s = -1, s[1:]
	case strings.HasPrefix(s, "+"):
		s = s[1:]
	}
	parts := strings.Split(s, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return 0, false
	}
	var v [3]int64
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || len(p) > 2 || p == "" {
			return 0, false
		}
		v[i] = int64(n)
	}
	if v[1] > 59 || v[2] > 59 || v[0] > 24 {
		return 0, false
	}
	return sign * (v[0]*3600 + v[1]*60 + v[2]), true
}

// atTimeZone binds timezone(zone, ts): ts without time zone becomes timestamp with time zone
// and any other timestamp (an untyped literal and a date too, as PostgreSQL prefers
// timestamptz) timestamp without time zone.
func (bd *binder) atTimeZone(zone, ts bval) (bval, error) {
	if isTimeVal(ts) {
		// PostgreSQL's time AT TIME ZONE is a time with time zone (timetz), which flightsrv has not.
		return bval{}, unimplemented("AT TIME ZONE of a time (a time with time zone)")
	}
	z, null, err := bd.zoneOf(zone)
	if err != nil {
		return bval{}, err
	}
	var e expr.Expression
	if !ts.untyped() && isWallclock(ts.typ()) {
		e = ts.e
	} else if e, err = bd.coerce(ts, tsType(), "argument 2 of timezone"); err != nil {
		return bval{}, err
	}
	if null {
		out := wallclockType()
		if isWallclock(e.GetType()) {
			out = tsType()
		}
		return typed(expr.NewNullLiteral(out.WithNullability(nullableN))), nil
	}
	return bd.convertZone(e, z)
}

// convertZone is timezone(z, e) over a bound timestamp e of either kind. A literal e is
// folded into the literal of the result (so that a bound written '…'::timestamp AT TIME ZONE
// 'America/Chicago' routes a read), with the offsets the timezone kernel applies
// (pgzone.Zone.OffsetAt, OffsetOfWall); a result outside the nanosecond range is left to the
// kernel, which raises 22008.
func (bd *binder) convertZone(e expr.Expression, z pgzone.Zone) (bval, error) {
	out := wallclockType()
	if isWallclock(e.GetType()) {
		out = tsType()
	}
	x, stable := stableArg(e)
	if v, ok := foldZone(x, z); ok {
		var lit expr.Expression = expr.NewPrecisionTimestampTzLiteral(v, types.PrecisionNanoSeconds, nullableN)
		if isWallclock(out) {
			lit = expr.NewPrecisionTimestampLiteral(v, types.PrecisionNanoSeconds, nullableN)
		}
		if stable {
			return bd.stable(lit)
		}
		return typed(lit), nil
	}
	f, err := bd.fn(URNPostgres, "timezone", out, types.Enum(z.Spec()), e)
	return typed(f), err
}

// foldZone is timezone(z, e) of a nanosecond timestamp literal e, in nanoseconds: the wall
// clock in z of an instant, or the instant of a wall clock in z. ok is false for any other e
// and for a result outside int64 nanoseconds.
func foldZone(e expr.Expression, z pgzone.Zone) (int64, bool) {
	lit, ok := e.(*expr.ProtoLiteral)
	if !ok {
		return 0, false
	}
	ns, ok := lit.Value.(int64)
	if !ok {
		return 0, false
	}
	var prec types.TimePrecision
	switch t := lit.GetType().(type) {
	case *types.PrecisionTimestampType:
		prec = t.Precision
	case *types.PrecisionTimestampTzType:
		prec = t.Precision
	default:
		return 0, false
	}
	if prec != types.PrecisionNanoSeconds {
		return 0, false
	}
	sec := ns / int64(time.Second)
	if ns%int64(time.Second) < 0 {
		sec-- // the floor: the second holding the instant
	}
	off := -z.OffsetOfWall(sec)
	if !isWallclock(lit.GetType()) {
		off = z.OffsetAt(sec)
	}
	d := off * int64(time.Second) // |off| is under a day: no overflow
	r := ns + d
	if (d > 0 && r < ns) || (d < 0 && r > ns) {
		return 0, false
	}
	return r, true
}

// isWallclock reports whether t is timestamp without time zone.
func isWallclock(t types.Type) bool {
	switch t.(type) {
	case *types.PrecisionTimestampType, *types.TimestampType:
		return true
	}
	return false
}

// retypeTimestamp converts between the two timestamp types in the session's zone, UTC: a
// literal keeps its value under the other type; any other expression is timezone('UTC', e).
func (bd *binder) retypeTimestamp(e expr.Expression, t types.Type) (expr.Expression, error) {
	x, stable := stableArg(e)
	if lit, ok := x.(*expr.ProtoLiteral); ok {
		if ns, ok := lit.Value.(int64); ok {
			var out expr.Expression = expr.NewPrecisionTimestampTzLiteral(ns, types.PrecisionNanoSeconds, nullableN)
			if isWallclock(t) {
				out = expr.NewPrecisionTimestampLiteral(ns, types.PrecisionNanoSeconds, nullableN)
			}
			if stable {
				v, err := bd.stable(out)
				return v.e, err
			}
			return out, nil
		}
	}
	if _, null := e.(*expr.NullLiteral); null {
		stand := expr.NewNullLiteral(t.WithNullability(nullableN))
		if num, ph := bd.ps.placeholders[e]; ph {
			// A parameter's stand-in at prepare time stays one (routes find it).
			bd.ps.placeholders[stand] = num
		}
		return stand, nil
	}
	v, err := bd.convertZone(e, pgzone.Fixed(0))
	return v.e, err
}

// truncFunc builds a date_trunc of a timestamp expression (its result has the argument's
// type).
type truncFunc func(ts expr.Expression) (expr.Expression, error)

// foldStableTrunc is date_trunc in UTC by floor of a timestamp constant or of now() (stable_value
// of a timestamp literal): the truncated instant, stable_value of it for now(), so that
// timestamp >= date_trunc('day', now()) and timestamp >= date_trunc('month', timestamptz '…')
// bound a read as their operands do (Metabase writes such bounds). ok is false for any other ts
// and for a start outside the nanosecond range.
func (bd *binder) foldStableTrunc(ts expr.Expression, floor func(time.Time) time.Time) (bval, bool, error) {
	x, stable := stableArg(ts)
	lit, ok := x.(*expr.ProtoLiteral)
	if !ok || floor == nil {
		return bval{}, false, nil
	}
	ns, ok := lit.Value.(int64)
	if !ok {
		return bval{}, false, nil
	}
	t := floor(time.Unix(0, ns).UTC())
	if checkNanoRange(t) != nil {
		return bval{}, false, nil
	}
	var out expr.Expression = tsLiteral(t)
	if isWallclock(lit.GetType()) {
		out = expr.NewPrecisionTimestampLiteral(t.UnixNano(), types.PrecisionNanoSeconds, nullableN)
	}
	if !stable {
		return typed(out), true, nil
	}
	v, err := bd.stable(out)
	return v, true, err
}

// truncIn binds date_trunc(unit, src[, zone]) by trunc (of now() in UTC by floor, where not
// nil: foldStableTrunc). Without a zone (zone "") it truncates
// src, keeping a timestamp without time zone; in UTC, src as a timestamp with time zone. In
// another zone PostgreSQL truncates the wall clock of src in zone and returns the instant of the
// truncated wall clock there (timestamptz_trunc_zone), which is timezone(zone,
// date_trunc(unit, timezone(zone, src))) for days and longer units (days true); to hours and
// finer it keeps the offset src had (its timestamptz_trunc_internal resolves the offset again
// only from days up), which is the timezone kernel's three-argument form with src as the
// reference instant.
// Its result in a zone is a timestamp with time zone; the executor's store pushdown does not
// see it as a time bin (a bin in another zone is not one of the stores' UTC bins).
func (bd *binder) truncIn(trunc truncFunc, floor func(time.Time) time.Time, days bool, src *pg.Node, zone string, sc *scope) (bval, error) {
	z := pgzone.Fixed(0)
	if zone != "" {
		var err error
		if z, _, err = bd.zoneOf(bval{str: &zone}); err != nil {
			return bval{}, err
		}
	}
	v, err := bd.bindExpr(src, sc)
	if err != nil {
		return bval{}, err
	}
	if isIntervalVal(v) || isTimeVal(v) {
		// PostgreSQL's date_trunc(text, interval), which a time reaches by its implicit cast.
		return bval{}, unimplemented("date_trunc of an interval (or of a time, which PostgreSQL truncates as an interval)")
	}
	ts := v.e
	if zone != "" || v.untyped() || !isWallclock(v.typ()) {
		// A timestamp without time zone keeps its type (PostgreSQL's date_trunc(text,
		// timestamp) returns one); with a zone it is a timestamp with time zone.
		if ts, err = bd.coerce(v, tsType(), "argument 2 of date_trunc"); err != nil {
			return bval{}, err
		}
	}
	if zone == "" || isUTCName(zone) {
		if v, ok, err := bd.foldStableTrunc(ts, floor); ok || err != nil {
			return v, err
		}
		t, err := trunc(ts)
		return typed(t), err
	}
	wall, err := bd.convertZone(ts, z)
	if err != nil {
		return bval{}, err
	}
	t, err := trunc(wall.e)
	if err != nil {
		return bval{}, err
	}
	if days {
		return bd.convertZone(t, z)
	}
	f, err := bd.fn(URNPostgres, "timezone", tsType(), types.Enum(z.Spec()), t, ts)
	return typed(f), err
}

// dateArith binds PostgreSQL's date - date (the days between, integer) and date ± integer
// (a date) onto URNPostgres' date_diff and date_add_days (scan/ops datearith.go); an untyped
// literal beside a date is read as a date (date - '2001-01-01') or, beside an integer, as an
// integer (timestamp - timestamp, an interval, is intervalBinary's). ok is false for other
// operands.
func (bd *binder) dateArith(op string, l, r bval) (bval, bool, error) {
	fam := func(v bval) family {
		if v.untyped() {
			return famOther
		}
		return familyOf(v.typ())
	}
	lf, rf := fam(l), fam(r)
	switch {
	case op == "-" && (lf == famDate && (rf == famDate || r.str != nil) || l.str != nil && rf == famDate):
		a, err := bd.coerce(l, dateType(), "the left operand of date - date")
		if err != nil {
			return bval{}, true, err
		}
		b, err := bd.coerce(r, dateType(), "the right operand of date - date")
		if err != nil {
			return bval{}, true, err
		}
		f, err := bd.fn(URNPostgres, "date_diff", i32Type(), a, b)
		return typed(f), true, err
	case lf == famDate && (rf == famInt || r.untyped() && r.str != nil), op == "+" && rf == famDate && lf == famInt:
		d, n := l, r
		if rf == famDate {
			d, n = r, l
		}
		if !n.untyped() && numRank(n.typ()) > numRank(i32Type()) {
			return bval{}, true, errorf(InvalidArgument, "operator does not exist: date %s %s", op, typeName(n.typ()))
		}
		de, err := bd.coerce(d, dateType(), "")
		if err != nil {
			return bval{}, true, err
		}
		ne, err := bd.coerce(n, i32Type(), "the integer of date "+op+" integer")
		if err != nil {
			return bval{}, true, err
		}
		if op == "-" {
			if ne, err = bd.fn(URNArithmetic, "subtract", i32Type(), expr.NewPrimitiveLiteral(int32(0), false), ne); err != nil {
				return bval{}, true, err
			}
		}
		x, stable := stableArg(de)
		if v, ok := foldDateAdd(x, ne); ok {
			if stable {
				v, err := bd.stable(v)
				return v, true, err
			}
			return typed(v), true, nil
		}
		f, err := bd.fn(URNPostgres, "date_add_days", dateType(), de, ne)
		return typed(f), true, err
	}
	return bval{}, false, nil
}

// foldDateAdd is date_add_days(d, n) of a date literal d and an integer constant n (0 - n for
// date - n): the date literal of the result, so that a bound DATE '…' - 1 routes a read. ok is
// false for other operands and for a result outside the years 1 to 9999, left to the kernel
// (which raises PostgreSQL's 22008 "date out of range" outside its range).
func foldDateAdd(d, n expr.Expression) (expr.Expression, bool) {
	dl, ok := d.(*expr.PrimitiveLiteral[types.Date])
	if !ok {
		return nil, false
	}
	var k int64
	if f, ok := n.(*expr.ScalarFunction); ok && f.Name() == "subtract" && f.NArgs() == 2 {
		// 0 - n, date - n's negation
		a, aok := f.Arg(0).(expr.Expression)
		m, mok := f.Arg(1).(expr.Expression)
		if !aok || !mok {
			return nil, false
		}
		if z, ok := IntLiteral(a); !ok || z != 0 {
			return nil, false
		}
		if k, ok = IntLiteral(m); !ok {
			return nil, false
		}
		k = -k
	} else if k, ok = IntLiteral(n); !ok {
		return nil, false
	}
	const first, last = -719162, 2932896 // 0001-01-01 and 9999-12-31, days from 1970-01-01
	r := int64(dl.Value) + k
	if r < first || r > last {
		return nil, false
	}
	return expr.NewPrimitiveLiteral(types.Date(r), true), true
}
