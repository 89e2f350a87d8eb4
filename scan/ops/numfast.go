package ops

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// The numeric kernels' fast paths (numeric.go): the common values done in 128-bit integer
// arithmetic on decimal128's unscaled value, without apd or math/big. Each fast function
// answers ok false for whatever it cannot decide exactly (an exponent, digits to round, a
// value near decimal128's range, non-ASCII spaces), and the caller then takes the general
// path (numeric_in's syntax, apd's arithmetic), which also writes every error. A fast answer
// is always the general path's answer: FuzzNumericFast compares the two.

// isPGSpace is numeric_in's isspace: space, \t, \n, \v, \f, \r.
func isPGSpace(c byte) bool { return c == ' ' || (c >= '\t' && c <= '\r') }

// fastTextNumeric reads text b as numeric_cast(mode, places, prec) reads it (numeric.go's
// parseNumeric then rounding.apply) when b is ASCII spaces, a sign, at most 19 digits with
// at most places after an optional point, and spaces, and places is 0 to 18: no rounding is
// then needed, whatever the mode. err is errNumericOverflow when the value has prec or more
// digits (numeric(p,s)'s overflow); ok false leaves the reading to the general path. b is a
// string or bytes, so that a string array's values are read in place, without a copy a row.
func fastTextNumeric[T string | []byte](b T, rd rounding) (v decimal128.Num, ok bool, err error) {
	if rd.places < 0 || rd.places > 18 {
		return v, false, nil
	}
	i, n := 0, len(b)
	for i < n && isPGSpace(b[i]) {
		i++
	}
	for n > i && isPGSpace(b[n-1]) {
		n--
	}
	neg := false
	if i < n && (b[i] == '+' || b[i] == '-') {
		neg = b[i] == '-'
		i++
	}
	var u uint64
	digits, frac, point := 0, 0, false
	for ; i < n; i++ {
		c := b[i]
		switch {
		case c >= '0' && c <= '9':
			if digits == 19 {
				return v, false, nil
			}
			u = u*10 + uint64(c-'0')
			digits++
			if point {
				frac++
			}
		case c == '.' && !point:
			point = true
		default:
			return v, false, nil // an exponent, a letter, a second point: the general path decides
		}
	}
	if digits == 0 || int32(frac) > rd.places {
		return v, false, nil
	}
	v = decimal128.FromU64(u).Mul(decimal128.GetScaleMultiplier(int(rd.places) - frac))
	if neg {
		v = v.Negate()
	}
	return v, true, checkPrecision(v, rd)
}

// fastIntNumeric is numeric_cast(mode, places, prec) of the integer x for places 0 to 18.
func fastIntNumeric(x int64, rd rounding) (v decimal128.Num, ok bool, err error) {
	if rd.places < 0 || rd.places > 18 {
		return v, false, nil
	}
	v = decimal128.FromI64(x).Mul(decimal128.GetScaleMultiplier(int(rd.places)))
	return v, true, checkPrecision(v, rd)
}

// checkPrecision is rounding.apply's overflow test of an unscaled value v of scale rd.places
// (places >= 0, so rd.s = places): prec - s integer digits or more is |v| >= 10^prec.
func checkPrecision(v decimal128.Num, rd rounding) error {
	if rd.prec > 0 && !v.FitsInPrecision(rd.prec) {
		return errNumericOverflow
	}
	return nil
}

// rescaleFast returns v (of scale s) at scale to >= s, ok false unless the result is below
// 10^38 in magnitude.
func rescaleFast(v decimal128.Num, s, to int32) (decimal128.Num, bool) {
	k := to - s
	if k < 0 || k >= numericDigits || !v.FitsInPrecision(numericDigits-k) {
		return v, false
	}
	return v.Mul(decimal128.GetScaleMultiplier(int(k))), true
}

// fastArith is numeric_arith's op ("add", "subtract", "multiply") of x (scale sa) and y (scale
// sb) at the result scale s, ok false unless both operands and the result are exactly within
// 38 digits without overflowing 128 bits on the way.
// Any other op (modulus) is ok false: the caller's exact path answers it.
func fastArith(op string, x, y decimal128.Num, sa, sb, s int32) (decimal128.Num, bool) {
	switch op {
	case "add", "subtract", "multiply":
	default:
		return x, false
	}
	if op == "multiply" {
		// Both below 10^19: the product is below 10^38.
		if !x.FitsInPrecision(19) || !y.FitsInPrecision(19) {
			return x, false
		}
		return x.Mul(y), true
	}
	xs, ok1 := rescaleFast(x, sa, s)
	ys, ok2 := rescaleFast(y, sb, s)
	// Both below 10^37: the sum is below 2*10^37, far inside 128 bits and 38 digits.
	if !ok1 || !ok2 || !xs.FitsInPrecision(37) || !ys.FitsInPrecision(37) {
		return x, false
	}
	if op == "subtract" {
		return xs.Sub(ys), true
	}
	return xs.Add(ys), true
}

// fastArithArray is numeric_arith's op of arrays a (scale sa) and b (scale sb) at result
// scale s when neither has a NULL and fastArith decides every row: the values written straight
// into one buffer from mem, without the per-row null test and builder of mapRows. nil when a
// row needs the general path (which then computes the whole batch, so that its errors are
// the kernel's).
func fastArithArray(mem memory.Allocator, op string, a, b *array.Decimal128, sa, sb, s int32) arrow.Array {
	if a.NullN() > 0 || b.NullN() > 0 || a.Len() != b.Len() {
		return nil
	}
	xs, ys := a.Values(), b.Values()
	buf := memory.NewResizableBuffer(mem)
	defer buf.Release()
	buf.Resize(len(xs) * arrow.Decimal128SizeBytes)
	out := arrow.Decimal128Traits.CastFromBytes(buf.Bytes())
	if op == "multiply" {
		// fastArith's multiply without its call and FitsInPrecision's Abs per operand: both
		// below 10^19 in magnitude (below19), the product below 10^38.
		for i, x := range xs {
			y := ys[i]
			if !below19(x) || !below19(y) {
				return nil
			}
			out[i] = x.Mul(y)
		}
		data := array.NewData(numericOut(s), len(xs), []*memory.Buffer{nil, buf}, nil, 0, 0)
		defer data.Release()
		return array.MakeFromData(data)
	}
	for i, x := range xs {
		v, ok := fastArith(op, x, ys[i], sa, sb, s)
		if !ok {
			return nil
		}
		out[i] = v
	}
	data := array.NewData(numericOut(s), len(xs), []*memory.Buffer{nil, buf}, nil, 0, 0)
	defer data.Release()
	return array.MakeFromData(data)
}

// below19 reports whether |x| < 10^19 (x.FitsInPrecision(19)) from its two words: x in
// [0, 2^64) with a low word below 10^19, or x in [-2^64, 0) with a low word above 2^64 - 10^19.
func below19(x decimal128.Num) bool {
	const e19 = 10_000_000_000_000_000_000
	switch x.HighBits() {
	case 0:
		return x.LowBits() < e19
	case -1:
		return x.LowBits() > 1<<64-e19
	}
	return false
}

// fastCmp compares x (scale sa) and y (scale sb): -1, 0 or 1, ok false when bringing them to
// one scale would leave 38 digits.
func fastCmp(x, y decimal128.Num, sa, sb int32) (int, bool) {
	s := max(sa, sb)
	xs, ok1 := rescaleFast(x, sa, s)
	ys, ok2 := rescaleFast(y, sb, s)
	if !ok1 || !ok2 {
		return 0, false
	}
	return xs.Cmp(ys), true
}
