package substrait

import (
	"fmt"
	"math"
	"math/big"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/types"
)

// RANGE frames with an offset (RANGE BETWEEN x PRECEDING AND y FOLLOWING), as PostgreSQL
// runs them: the frame of a row holds the rows whose single ORDER BY key lies within the
// offset of the row's key (scan/ops winrange.go). The offset is a constant (or a parameter
// bound at execution), non-negative, in the key's units as Substrait's bound carries it:
//   - an integer key: an integer offset;
//   - a real or double precision key (a real measured as a double): a whole-number offset,
//     numeric or quoted ('5'); a fractional or infinite one is refused by name, a NaN or
//     negative one is PostgreSQL's 22013;
//   - a timestamp key: an interval constant without months or years (days are 24 hours, as
//     in the UTC session), converted to the timestamp's unit.
// Other keys (date, numeric, text…) are refused by name.

// rangeOffsetFrame sets wf's RANGE bounds when one is an offset (f: PostgreSQL's frame
// options).
func (bd *binder) rangeOffsetFrame(wf *expr.WindowFunction, spec windowSpec) error {
	f := spec.frame
	if len(wf.Sorts) != 1 {
		return &Error{Code: InvalidArgument, SQLState: "42P20", Msg: "RANGE with offset PRECEDING/FOLLOWING requires exactly one ORDER BY column"}
	}
	key := wf.Sorts[0].Expr.GetType()
	switch key.(type) {
	case *types.Int8Type, *types.Int16Type:
		// The executor measures offsets over integer and bigint keys: a smallint key is
		// ordered as the integer it widens to.
		key = i32Type().WithNullability(key.GetNullability())
		wf.Sorts[0].Expr = &expr.Cast{Type: key, Input: wf.Sorts[0].Expr, FailureBehavior: types.BehaviorThrowException}
	case *types.Float32Type:
		// A real key is measured in double precision, as PostgreSQL's in_range_float4_float8
		// does; widening keeps its order (the executor measures offsets over doubles only).
		key = fp64Type().WithNullability(key.GetNullability())
		wf.Sorts[0].Expr = &expr.Cast{Type: key, Input: wf.Sorts[0].Expr, FailureBehavior: types.BehaviorThrowException}
	}
	var err error
	if wf.LowerBound, err = bd.rangeBound(f, frameStartUnbPrec, frameStartCurrent, frameStartOffPrec, key, spec.start, "starting"); err != nil {
		return err
	}
	wf.UpperBound, err = bd.rangeBound(f, frameEndUnbFoll, frameEndCurrent, frameEndOffPrec, key, spec.end, "ending")
	return err
}

// fixedBound is a frame bound that is no offset: unbounded or the current row (ok false for
// an offset, which must hold no window function or aggregate).
func fixedBound(f, unb, cur int32, off *pg.Node) (expr.Bound, bool, error) {
	switch {
	case f&unb != 0:
		return expr.Unbounded{}, true, nil
	case f&cur != 0:
		return expr.CurrentRow{}, true, nil
	}
	if containsWindow(off) || containsAggregate(off) {
		return nil, false, errWindowHere()
	}
	return nil, false, nil
}

// rangeBound reads one bound of a RANGE frame whose ORDER BY key has type key.
func (bd *binder) rangeBound(f, unb, cur, prec int32, key types.Type, off *pg.Node, which string) (expr.Bound, error) {
	if b, ok, err := fixedBound(f, unb, cur, off); ok || err != nil {
		return b, err
	}
	var n int64
	switch familyOf(key) {
	case famInt, famFloat:
		v, err := bd.bindExpr(off, &scope{})
		if err != nil {
			return nil, err
		}
		if v.null {
			return nil, errNullOffset(which)
		}
		if v.untyped() && familyOf(key) == famFloat {
			// A quoted offset over a double precision key reads as double precision
			// ('Infinity'), as PostgreSQL resolves in_range_float8_float8's argument.
			e, err := bd.coerce(v, fp64Type(), "frame offset")
			if err != nil {
				return nil, err
			}
			if lit, ok := e.(*expr.PrimitiveLiteral[float64]); ok {
				f := lit.Value
				switch {
				case math.IsNaN(f) || f < 0:
					return nil, &Error{Code: InvalidArgument, SQLState: "22013", Msg: "invalid preceding or following size in window function"}
				case f == math.Trunc(f) && f < 1<<63:
					n = int64(f)
				default:
					return nil, unimplementedAre("RANGE offsets over double precision other than whole-number constants")
				}
				break
			}
			return nil, unimplementedAre("RANGE offsets over double precision other than whole-number constants")
		}
		if !v.untyped() && familyOf(v.typ()) != famInt {
			if familyOf(key) == famFloat && (familyOf(v.typ()) == famNumeric || familyOf(v.typ()) == famFloat) {
				if d, _, ok := numLiteralValue(v.e); ok {
					if i, err := d.Int64(); err == nil {
						n = i
						break
					}
				}
				return nil, unimplementedAre("RANGE offsets over double precision other than whole-number constants")
			}
			return nil, &Error{Code: Unimplemented, SQLState: "0A000", Msg: fmt.Sprintf("RANGE with offset PRECEDING/FOLLOWING is not supported for column type %s and offset type %s", typeName(key), typeName(v.typ()))}
		}
		e, err := bd.coerce(v, i64Type(), "frame offset")
		if err == nil {
			e, err = bd.offsetCasts(e)
		}
		if err != nil {
			return nil, err
		}
		lit, ok := e.(*expr.PrimitiveLiteral[int64])
		if !ok {
			if _, isParam := bd.ps.placeholders[e]; isParam && bd.ps.vals == nil {
				bd.ps.nullOffset(e, which)
				break // prepare time: any value
			}
			if _, null := e.(*expr.NullLiteral); null {
				// A parameter bound to NULL.
				return nil, errNullOffset(which)
			}
			return nil, unimplementedAre("frame offsets other than constants")
		}
		n = lit.Value
	case famTimestamp:
		text, ok := intervalLiteral(off)
		if fc := off.GetFuncCall(); !ok && fc != nil && funcName(fc) == "make_interval" {
			// make_interval(days => 3) of constants, as ibis writes the offset.
			v, err := bd.makeInterval(fc)
			if err != nil {
				return nil, err
			}
			text, ok = v.intervalConst()
		}
		if !ok {
			if c := off.GetAConst(); c != nil && c.GetIsnull() {
				return nil, errNullOffset(which)
			}
			return nil, unimplementedAre("RANGE offsets over timestamps other than interval constants")
		}
		us, months, err := readInterval(text)
		switch {
		case err != nil:
			return nil, err
		case months.Sign() != 0:
			return nil, unimplementedAre("RANGE offsets of intervals with months or years")
		case !us.IsInt():
			return nil, unimplementedAre("RANGE offsets of intervals with fractions of a microsecond")
		}
		unit := timestampUnitsPerMicro(key)
		if unit == 0 {
			return nil, unimplementedAre("RANGE offsets over timestamps of this precision")
		}
		v := new(big.Int).Mul(us.Num(), big.NewInt(unit))
		if v.Sign() < 0 {
			return nil, &Error{Code: InvalidArgument, SQLState: "22013", Msg: "invalid preceding or following size in window function"}
		}
		if !v.IsInt64() {
			v.SetInt64(math.MaxInt64) // past every timestamp: the whole side
		}
		n = v.Int64()
	default:
		return nil, &Error{Code: Unimplemented, SQLState: "0A000", Msg: fmt.Sprintf("RANGE with offset PRECEDING/FOLLOWING is not supported for column type %s", typeName(key))}
	}
	if n < 0 {
		return nil, &Error{Code: InvalidArgument, SQLState: "22013", Msg: "invalid preceding or following size in window function"}
	}
	if f&prec != 0 {
		return expr.PrecedingBound(n), nil
	}
	return expr.FollowingBound(n), nil
}

// timestampUnitsPerMicro is how many of a timestamp type's units make a microsecond (1 for
// microseconds, 1000 for nanoseconds); 0 for a coarser precision.
func timestampUnitsPerMicro(t types.Type) int64 {
	var p types.TimePrecision
	switch v := t.(type) {
	case *types.PrecisionTimestampTzType:
		p = v.Precision
	case *types.PrecisionTimestampType:
		p = v.Precision
	case *types.TimestampTzType, *types.TimestampType:
		return 1
	default:
		return 0
	}
	switch p {
	case types.PrecisionMicroSeconds:
		return 1
	case types.PrecisionNanoSeconds:
		return 1000
	}
	return 0
}
