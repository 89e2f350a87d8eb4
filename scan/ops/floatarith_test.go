package ops

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
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

// TestFloatOp: PostgreSQL's float4/float8 operator checks (float8_mul, float8_div…):
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

// TestFloatArithNulls: a NULL operand gives a NULL row and no check (the divisor under a
// NULL, zero in its buffer, is no division by zero); a valid row is checked; the output's
// buffers are returned to the allocator.
func TestFloatArithNulls(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	xb, yb := array.NewFloat64Builder(mem), array.NewFloat64Builder(mem)
	xb.AppendValues([]float64{6, 1, 5}, []bool{true, true, false})
	yb.AppendValues([]float64{3, 0, 0}, []bool{true, false, true})
	x, y := xb.NewArray(), yb.NewArray()
	defer x.Release()
	defer y.Release()
	run := floatArith("divide", func(a arrow.Array) []float64 { return a.(*array.Float64).Float64Values() })
	out, err := run(mem, 3, []arrow.Array{x, y})
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(out); got != "[2 (null) (null)]" {
		t.Errorf("divide = %s, want [2 (null) (null)]", got)
	}
	out.Release()
	yb.AppendValues([]float64{3, 0}, nil)
	y2 := yb.NewArray()
	defer y2.Release()
	x2 := array.NewSlice(x, 0, 2)
	defer x2.Release()
	if _, err := run(mem, 2, []arrow.Array{x2, y2}); err == nil || err.(*DataError).Code != "22012" {
		t.Errorf("1 / 0: %v, want division by zero", err)
	}
}

// BenchmarkFloatArith: double precision multiply over 1M rows, the checked kernel (floatArith)
// beside arrow-go's unchecked multiply it replaces for SQL's float arithmetic.
func BenchmarkFloatArith(b *testing.B) {
	const n = 1_000_000
	mem := memory.NewGoAllocator()
	bld := array.NewFloat64Builder(mem)
	for i := range n {
		bld.Append(float64(i) * 0.37)
	}
	x := bld.NewArray()
	defer x.Release()
	b.Run("own", func(b *testing.B) {
		run := floatArith("multiply", func(a arrow.Array) []float64 { return a.(*array.Float64).Float64Values() })
		for b.Loop() {
			out, err := run(mem, n, []arrow.Array{x, x})
			if err != nil {
				b.Fatal(err)
			}
			out.Release()
		}
	})
	b.Run("arrow", func(b *testing.B) {
		for b.Loop() {
			out, err := compute.Multiply(context.Background(), compute.ArithmeticOptions{}, compute.NewDatum(x), compute.NewDatum(x))
			if err != nil {
				b.Fatal(err)
			}
			out.Release()
		}
	})
}

// TestFloat8TextTies: digits exactly halfway to a neighbouring double are not v's, as in
// PostgreSQL's float8out (values from a user trial, PostgreSQL 15's text beside each).
func TestFloat8TextTies(t *testing.T) {
	for s, want := range map[string]string{
		"1e23":                  "9.999999999999999e+22",
		"8.41e21":               "8.409999999999999e+21",
		"11623396.694e12":       "1.1623396694000001e+19",
		"3.570533188559288e+17": "3.5705331885592883e+17",
		"0.1":                   "0.1",
		"1e22":                  "1e+22",
		"123456.5":              "123456.5",
		"-1e23":                 "-9.999999999999999e+22",
	} {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatal(err)
		}
		if got := float8Text(v); got != want {
			t.Errorf("float8Text(%s) = %s, want %s", s, got, want)
		}
	}
}
