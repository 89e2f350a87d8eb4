package ops

import (
	"math"
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/cockroachdb/apd/v3"
)

// floorQuotients is numeric_div(FLOOR|CEIL|TRUNC, 0, prec, a, b) — floor(a / b), ceil, trunc
// to a whole number, as Grafana's floor(extract(epoch from ts) / 300) * 300 computes per row —
// over int64 arithmetic where it answers what the exact path (NumericQuotient, then the
// rounding) answers: a and b read as integers at their common scale (A, B), the quotient's
// floor fl and remainder rem exactly; PostgreSQL first rounds A/B half away from zero to
// select_div_scale's scale rs, at least max(sa, sb), which moves it by at most h = 10^-rs / 2,
// so its floor is fl unless the next integer lies within h above A/B (its ceiling, within h
// below), which 2·gap·10^max(sa,sb) > |B| rules out. A row it cannot decide so (a value past
// int64, a divisor of zero, that margin) takes the exact path. ok is false when the operands'
// types or the rounding are not this shape (the caller's general path runs).
func floorQuotients(mem memory.Allocator, rd rounding, rows int, args []arrow.Array, a, b arrow.Array, slow func(i int) (*apd.Decimal, error)) (arrow.Array, bool, error) {
	if rd.places != 0 || (rd.mode != apd.RoundFloor && rd.mode != apd.RoundCeiling && rd.mode != apd.RoundDown) {
		return nil, false, nil
	}
	da, ok := a.(*array.Decimal128)
	if !ok {
		return nil, false, nil
	}
	sa := da.DataType().(*arrow.Decimal128Type).Scale
	sb := int32(0)
	var bAt func(i int) (int64, bool)
	switch v := b.(type) {
	case *array.Decimal128:
		sb = v.DataType().(*arrow.Decimal128Type).Scale
		bAt = func(i int) (int64, bool) { return num64(v.Value(i)) }
	default:
		if !isInt(b.DataType()) {
			return nil, false, nil
		}
		bAt = func(i int) (int64, bool) { return intAt(b, i), true }
	}
	s := max(sa, sb)
	if sa < 0 || sb < 0 || s > 18 {
		return nil, false, nil
	}
	ma, mb := pow10u64[s-sa], pow10u64[s-sb]
	margin := pow10u64[s]
	out := array.NewDecimal128Builder(mem, numericOut(0).(*arrow.Decimal128Type))
	arr, err := mapRows[decimal128.Num](out, rows, args, func(i int) (decimal128.Num, bool, error) {
		if x, ok := num64(da.Value(i)); ok {
			if y, ok := bAt(i); ok && y != 0 {
				if q, ok := floorDiv64(x, y, ma, mb, margin, rd.mode); ok {
					v := decimal128.FromI64(q)
					if rd.prec > 0 && !v.FitsInPrecision(rd.prec) {
						return decimal128.Num{}, false, errNumericOverflow
					}
					return v, true, nil
				}
			}
		}
		d, err := slow(i)
		if err != nil {
			return decimal128.Num{}, false, err
		}
		v, err := toNum(d, 0)
		return v, err == nil, err
	})
	return arr, true, err
}

// num64 is v as an int64, ok false past its range.
func num64(v decimal128.Num) (int64, bool) {
	hi, lo := v.HighBits(), v.LowBits()
	if (hi == 0 && lo <= math.MaxInt64) || (hi == -1 && lo > math.MaxInt64) {
		return int64(lo), true
	}
	return 0, false
}

// floorDiv64 is floorQuotients' row: A = x·ma, B = y·mb (both checked against overflow), and
// the quotient rounded by mode (floor, ceiling, toward zero) when the margin decides it; ma
// and mb are powers of ten up to 10^18.
func floorDiv64(x, y int64, ma, mb, margin uint64, mode apd.Rounder) (int64, bool) {
	A, okA := mulChecked(x, int64(ma))
	B, okB := mulChecked(y, int64(mb))
	if !okA || !okB || B == 0 || (A == math.MinInt64 && B == -1) {
		return 0, false
	}
	if B < 0 {
		if A == math.MinInt64 || B == math.MinInt64 {
			return 0, false
		}
		A, B = -A, -B
	}
	fl, rem := A/B, A%B
	if rem < 0 {
		fl, rem = fl-1, rem+B
	}
	if rem == 0 {
		return fl, true
	}
	up := mode == apd.RoundCeiling || (mode == apd.RoundDown && fl < 0)
	gap := uint64(B - rem) // to the integer above, for floor
	if up {
		gap = uint64(rem) // to the integer below, for ceiling
	}
	hi, lo := bits.Mul64(2*gap, margin)
	if hi == 0 && lo <= uint64(B) {
		return 0, false // PostgreSQL's rounding of the quotient may reach that integer
	}
	if up {
		return fl + 1, true
	}
	return fl, true
}
