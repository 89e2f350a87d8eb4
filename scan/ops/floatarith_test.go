package ops

import (
	"errors"
	"math"
	"testing"
)

// TestFloat4Text: float4out's text, each expected value PostgreSQL 15's (SELECT x::real::text),
// digits exactly halfway to a neighbouring real excluded (205379008).
func TestFloat4Text(t *testing.T) {
	for _, c := range []struct {
		v    float32
		want string
	}{
		{0.1, "0.1"}, {1.0 / 3, "0.33333334"}, {1e6, "1e+06"}, {123456, "123456"}, {1234567, "1.234567e+06"},
		{1e-5, "1e-05"}, {0.0001, "0.0001"}, {16777217, "1.6777216e+07"}, {205379008, "2.0537901e+08"},
		{123456789, "1.2345679e+08"}, {3.4e38, "3.4e+38"}, {1e-45, "1e-45"}, {1.17549435e-38, "1.1754944e-38"},
		{float32(math.Copysign(0, -1)), "-0"}, {0, "0"}, {-0.59999996, "-0.59999996"}, {0.010000001, "0.010000001"},
		{float32(math.NaN()), "NaN"}, {float32(math.Inf(-1)), "-Infinity"}, {8589934592, "8.589935e+09"}, {9999999488, "9.999999e+09"},
	} {
		if got := float4Text(c.v); got != c.want {
			t.Errorf("float4Text(%g) = %q, PostgreSQL %q", c.v, got, c.want)
		}
	}
}

// TestFloatOp: PostgreSQL's float4/float8 operator checks (float.h's float8_mul, float8_div…):
// overflow and underflow of finite operands are 22003, a zero divisor 22012 but for a NaN
// dividend; infinities and NaN given as operands answer.
func TestFloatOp(t *testing.T) {
	inf := math.Inf(1)
	for _, c := range []struct {
		op   string
		x, y float64
		want error
	}{
		{"multiply", 1e308, 10, errFloatOverflow},
		{"add", 1e308, 1e308, errFloatOverflow},
		{"subtract", -1e308, 1e308, errFloatOverflow},
		{"multiply", 1e-308, 1e-308, errFloatUnderflow},
		{"divide", 1e-308, 1e308, errFloatUnderflow},
		{"divide", 1e308, 1e-308, errFloatOverflow},
		{"multiply", inf, 0, nil},
		{"add", inf, 1, nil},
		{"divide", 1, inf, nil},
		{"divide", math.NaN(), 0, nil},
		{"multiply", 0, 1e-308, nil},
	} {
		if _, err := floatOp(c.op, c.x, c.y); !errors.Is(err, c.want) && err != c.want {
			t.Errorf("%s(%g, %g): %v, want %v", c.op, c.x, c.y, err, c.want)
		}
	}
	if _, err := floatOp("divide", 1.0, 0); err == nil || err.(*DataError).Code != "22012" {
		t.Errorf("1 / 0: %v, want division by zero", err)
	}
	// Reals in single precision: 3e38 * 10 overflows a real (a double would hold it), and
	// 0.1 * 0.1 is the real PostgreSQL computes (0.010000001).
	if _, err := floatOp[float32]("multiply", 3e38, 10); err != errFloatOverflow {
		t.Errorf("3e38::real * 10::real: %v, want overflow", err)
	}
	if _, err := floatOp[float32]("multiply", 1e-30, 1e-30); err != errFloatUnderflow {
		t.Errorf("1e-30::real * 1e-30::real: %v, want underflow", err)
	}
	if r, _ := floatOp[float32]("multiply", 0.1, 0.1); float4Text(r) != "0.010000001" {
		t.Errorf("0.1::real * 0.1::real = %s, PostgreSQL 0.010000001", float4Text(r))
	}
}
