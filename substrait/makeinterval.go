package substrait

import (
	"fmt"
	"math"
	"strings"

	"github.com/cockroachdb/apd/v3"
	pg "github.com/pganalyze/pg_query_go/v6"
)

// makeIntervalParams are make_interval's parameters in order (PostgreSQL 15: years, months,
// weeks, days, hours, mins integer, secs double precision, each defaulting to 0).
var makeIntervalParams = []string{"years", "months", "weeks", "days", "hours", "mins", "secs"}

// makeInterval binds make_interval(years, months, weeks, days, hours, mins, secs), positional
// or named (make_interval(days => 3), as ibis writes RANGE frames' offsets), of constants, as
// the INTERVAL constant PostgreSQL's make_interval computes: months = years*12 + months and
// days = weeks*7 + days in int4 arithmetic that wraps as PostgreSQL 15's does, the time
// hours, minutes and rint(secs * 10^6) microseconds; NULL when an argument is NULL. The
// result folds where INTERVAL '…' does (timestamp ± interval, RANGE frame offsets). Arguments
// that are not constants are refused by name; a fraction where an integer is due is
// PostgreSQL's 42883.
func (bd *binder) makeInterval(fc *pg.FuncCall) (bval, error) {
	var vals [7]*apd.Decimal
	null := false
	pos := 0
	for _, a := range fc.GetArgs() {
		i := pos
		if na := a.GetNamedArgExpr(); na != nil {
			i = -1
			for k, p := range makeIntervalParams {
				if p == na.GetName() {
					i = k
				}
			}
			if i < 0 {
				return bval{}, refused(InvalidArgument, "42883", "function make_interval does not exist with an argument named other than years, months, weeks, days, hours, mins or secs")
			}
			a = na.GetArg()
		} else {
			pos++
		}
		if i >= len(vals) {
			return bval{}, refused(InvalidArgument, "42883", "function make_interval(%s) does not exist", constTypes(fc.GetArgs()))
		}
		if vals[i] != nil {
			return bval{}, refused(InvalidArgument, "42601", "argument name %q used more than once", makeIntervalParams[i])
		}
		d, isNull, ok := numericConstant(a)
		if !ok {
			return bval{}, unimplemented("make_interval of arguments other than numeric constants")
		}
		null = null || isNull
		if d == nil {
			d = apd.New(0, 0)
		}
		if i < 6 && (d.Exponent < 0 || d.Form != apd.Finite) {
			return bval{}, refused(InvalidArgument, "42883", "function make_interval(%s => numeric) does not exist", makeIntervalParams[i])
		}
		vals[i] = d
	}
	if null {
		e, err := bd.intervalValue(bval{null: true}, "")
		return typed(e), err
	}
	ints := [6]int64{}
	for i := range 6 {
		if vals[i] == nil {
			continue
		}
		n, err := vals[i].Int64()
		if err != nil || n < math.MinInt32 || n > math.MaxInt32 {
			return bval{}, refused(InvalidArgument, "22003", "integer out of range")
		}
		ints[i] = n
	}
	secs := 0.0
	if vals[6] != nil {
		f, err := vals[6].Float64()
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return bval{}, refused(InvalidArgument, "22008", "interval out of range")
		}
		secs = f
	}
	months := int32(ints[0])*12 + int32(ints[1])
	days := int32(ints[2])*7 + int32(ints[3])
	us := math.RoundToEven(secs * 1e6)
	if us >= math.MaxInt64 || us < math.MinInt64 {
		return bval{}, refused(InvalidArgument, "22008", "interval out of range")
	}
	t := ints[4]*3600_000_000 + ints[5]*60_000_000 + int64(us)
	// The time as interval_in's hh:mm:ss.ffffff (its "n microseconds" field is an int4).
	sign, abs := "", uint64(t)
	if t < 0 {
		sign, abs = "-", uint64(-t) // -MinInt64 wraps to its own magnitude as a uint64
	}
	text := fmt.Sprintf("%d mons %d days %s%d:%02d:%02d.%06d", months, days, sign,
		abs/3600_000_000, abs/60_000_000%60, abs/1_000_000%60, abs%1_000_000)
	return bd.intervalConstant(intervalTag + text), nil
}

// numericConstant reads n as a numeric constant: an integer or decimal literal, optionally
// negated, or NULL (isNull, d nil). ok is false for anything else.
func numericConstant(n *pg.Node) (d *apd.Decimal, isNull, ok bool) {
	if ae := n.GetAExpr(); ae != nil && ae.GetLexpr() == nil && len(ae.GetName()) == 1 && ae.GetName()[0].GetString_().GetSval() == "-" {
		d, isNull, ok := numericConstant(ae.GetRexpr())
		if ok && d != nil {
			d.Neg(d)
		}
		return d, isNull, ok
	}
	c := n.GetAConst()
	switch {
	case c == nil:
		return nil, false, false
	case c.GetIsnull():
		return nil, true, true
	case c.GetIval() != nil:
		return apd.New(int64(c.GetIval().GetIval()), 0), false, true
	case c.GetFval() != nil:
		d, _, err := apd.NewFromString(c.GetFval().GetFval())
		return d, false, err == nil
	}
	return nil, false, false
}

// constTypes names the types of constant arguments as PostgreSQL's "function … does not
// exist" lists them (integer, numeric, unknown for NULL; name => type for a named one).
func constTypes(args []*pg.Node) string {
	var b strings.Builder
	for i, a := range args {
		if i > 0 {
			b.WriteString(", ")
		}
		if na := a.GetNamedArgExpr(); na != nil {
			b.WriteString(na.GetName() + " => ")
			a = na.GetArg()
		}
		d, isNull, ok := numericConstant(a)
		switch {
		case !ok:
			b.WriteString("unknown")
		case isNull:
			b.WriteString("unknown")
		case d.Exponent < 0:
			b.WriteString("numeric")
		default:
			b.WriteString("integer")
		}
	}
	return b.String()
}
