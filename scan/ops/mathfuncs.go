package ops

import (
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// PostgreSQL's mathematical functions over double precision (PostgreSQL 15, "Mathematical
// Functions and Operators": the float8 overloads, which integer arguments resolve to), strict,
// with PostgreSQL's errors:
//
//	ceil, floor, trunc, sign     float8 → float8
//	sqrt                          SQLSTATE 2201F below zero
//	cbrt                          the GNU C library's cube root (cbrt.go)
//	exp                           22003 on overflow and on underflow to zero
//	ln, log (base 10)             2201E at zero and below
//	power(x, y)                   2201F for 0 to a negative power and a negative number to a
//	                              non-integer power; 22003 on overflow or underflow
//
// exp, ln, log and power answer the GNU C library's exp, log, log10 and pow to the last bit
// (libmexp.go, libmlog.go, libmpow.go), as PostgreSQL does on Debian and most Linux builds.
//
//	mod(a, b)                     bigint; 22012 when b is zero
//
// The binder sends numeric (decimal literal) arguments nowhere near these: PostgreSQL computes
// those in numeric, which the executor does not have yet.
func init() {
	for name, f := range map[string]func(float64) (float64, error){
		"ceil":  func(x float64) (float64, error) { return math.Ceil(x), nil },
		"floor": func(x float64) (float64, error) { return math.Floor(x), nil },
		"trunc": func(x float64) (float64, error) { return math.Trunc(x), nil },
		"sign": func(x float64) (float64, error) {
			switch {
			case x > 0:
				return 1, nil
			case x < 0:
				return -1, nil
			}
			return 0, nil
		},
		"sqrt": func(x float64) (float64, error) {
			if x < 0 {
				return 0, &DataError{Code: "2201F", Msg: "cannot take square root of a negative number"}
			}
			return math.Sqrt(x), nil
		},
		"exp": func(x float64) (float64, error) {
			r := glibcExp(x)
			switch {
			case math.IsInf(r, 0) && !math.IsInf(x, 0):
				return 0, errFloatOverflow
			case r == 0 && !math.IsInf(x, -1):
				return 0, errFloatUnderflow
			}
			return r, nil
		},
		"cbrt":  func(x float64) (float64, error) { return cbrt(x), nil },
		"ln":    logOf(glibcLog),
		"log10": logOf(glibcLog10),
	} {
		ownFunctions[name] = float1Kernel(f)
	}
	ownFunctions["power"] = powerKernel
}

var (
	errFloatOverflow  = &DataError{Code: "22003", Msg: "value out of range: overflow"}
	errFloatUnderflow = &DataError{Code: "22003", Msg: "value out of range: underflow"}
)

func logOf(f func(float64) float64) func(float64) (float64, error) {
	return func(x float64) (float64, error) {
		switch {
		case x == 0:
			return 0, &DataError{Code: "2201E", Msg: "cannot take logarithm of zero"}
		case x < 0:
			return 0, &DataError{Code: "2201E", Msg: "cannot take logarithm of a negative number"}
		}
		return f(x), nil
	}
}

// float1Kernel is a strict float8 → float8 function.
func float1Kernel(f func(float64) (float64, error)) func(*fnNode) error {
	return func(n *fnNode) error {
		if err := argCount(n, 1, 1); err != nil {
			return err
		}
		if n.types[0].ID() != arrow.FLOAT64 {
			return errArgFloat
		}
		n.out = arrow.PrimitiveTypes.Float64
		n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
			x := args[0].(*array.Float64)
			return mapFloats(mem, rows, args, func(i int) (float64, error) { return f(x.Value(i)) })
		}
		return nil
	}
}

var errArgFloat = &DataError{Code: "42883", Msg: "argument must be double precision"}

func powerKernel(n *fnNode) error {
	if err := argCount(n, 2, 2); err != nil {
		return err
	}
	if n.types[0].ID() != arrow.FLOAT64 || n.types[1].ID() != arrow.FLOAT64 {
		return errArgFloat
	}
	n.out = arrow.PrimitiveTypes.Float64
	n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
		xs, ys := args[0].(*array.Float64), args[1].(*array.Float64)
		return mapFloats(mem, rows, args, func(i int) (float64, error) { return pgPow(xs.Value(i), ys.Value(i)) })
	}
	return nil
}

// pgPow is PostgreSQL 15's dpow: NaN^0 = 1 and 1^NaN = 1, other NaN arguments NaN; 2201F for
// zero to a negative power and a negative number to a non-integer power; infinite arguments
// by C99's rules; otherwise the C library's pow (glibcPow), 22003 when that overflows or
// underflows to zero.
func pgPow(x, y float64) (float64, error) {
	switch {
	case math.IsNaN(x):
		if math.IsNaN(y) || y != 0 {
			return math.NaN(), nil
		}
		return 1, nil
	case math.IsNaN(y):
		if x != 1 {
			return math.NaN(), nil
		}
		return 1, nil
	case x == 0 && y < 0:
		return 0, &DataError{Code: "2201F", Msg: "zero raised to a negative power is undefined"}
	case x < 0 && math.Floor(y) != y:
		return 0, &DataError{Code: "2201F", Msg: "a negative number raised to a non-integer power yields a complex result"}
	}
	r := glibcPow(x, y)
	if math.IsInf(x, 0) || math.IsInf(y, 0) {
		return r, nil // C99's values, which dpow spells out itself: no error
	}
	switch {
	case math.IsInf(r, 0):
		return 0, errFloatOverflow
	case r == 0 && x != 0:
		return 0, errFloatUnderflow
	}
	return r, nil
}

func mapFloats(mem memory.Allocator, n int, args []arrow.Array, f func(i int) (float64, error)) (arrow.Array, error) {
	return mapRows[float64](array.NewFloat64Builder(mem), n, args, func(i int) (float64, bool, error) {
		v, err := f(i)
		return v, err == nil, err
	})
}
