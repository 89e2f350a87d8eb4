package ops

import "math"

// cbrt is PostgreSQL 15's cbrt(double precision) (dcbrt), which answers the C library's
// cbrt: on the GNU C library (Debian's and most Linux builds' PostgreSQL) its
// double-precision cbrt, computed here step by step in the same double precision
// operations (a polynomial guess u of the cube root of the mantissa xm in [0.5, 1), one
// Halley step u·(u³ + 2·xm)/(2·u³ + xm), times 2^(e mod 3 / 3), scaled by 2^(e/3)) so that
// every result is the same double, last bit included (Go's math.Cbrt differs from it in the
// last bit for about half of all values). Each float64 conversion keeps a product or sum
// rounded on its own, as C compiles it without contraction into fused multiply-adds.
// cbrt(±0), ±Infinity and NaN are themselves; cbrt neither overflows nor underflows.
func cbrt(x float64) float64 {
	if x == 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return x + x
	}
	xm, xe := math.Frexp(math.Abs(x))
	p := float64(0.784932344976639262 - float64(0.145263899385486377*xm))
	p = float64(-1.83469277483613086 + float64(p*xm))
	p = float64(2.44693122563534430 + float64(p*xm))
	p = float64(-2.11499494167371287 + float64(p*xm))
	p = float64(1.50819193781584896 + float64(p*xm))
	u := float64(0.354895765043919860 + float64(p*xm))
	t2 := float64(float64(u*u) * u)
	ym := float64(float64(float64(u*float64(t2+float64(2.0*xm)))/float64(float64(2.0*t2)+xm)) * cbrtFactor[2+xe%3])
	if x < 0 {
		ym = -ym
	}
	return math.Ldexp(ym, xe/3)
}

// cbrtFactor is 2^(n/3) for n = -2..2, each the double C's constant expressions round to:
// 1/2^(2/3) and 1/2^(1/3) are quotients of doubles (a Go constant quotient would be exact
// before its one rounding).
var cbrtFactor = func() [5]float64 {
	cbrt2, sqrCbrt2 := 1.2599210498948731648, 1.5874010519681994748
	return [5]float64{1.0 / sqrCbrt2, 1.0 / cbrt2, 1.0, cbrt2, sqrCbrt2}
}()
