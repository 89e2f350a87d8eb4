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
			r := math.Exp(x)
			switch {
			case math.IsInf(r, 0) && !math.IsInf(x, 0):
				return 0, errFloatOverflow
			case r == 0 && !math.IsInf(x, -1):
				return 0, errFloatUnderflow
			}
			return r, nil
		},
		"cbrt":  func(x float64) (float64, error) { return cbrt(x), nil },
		"ln":    logOf(math.Log),
		"log10": logOf(math.Log10),
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
		return mapFloats(mem, rows, args, func(i int) (float64, error) {
			x, y := xs.Value(i), ys.Value(i)
			switch {
			case x == 0 && y < 0:
				return 0, &DataError{Code: "2201F", Msg: "zero raised to a negative power is undefined"}
			case x < 0 && y != math.Trunc(y) && !math.IsInf(y, 0):
				return 0, &DataError{Code: "2201F", Msg: "a negative number raised to a non-integer power yields a complex result"}
			}
			r := math.Pow(x, y)
			switch {
			case math.IsInf(r, 0) && !math.IsInf(x, 0) && !math.IsInf(y, 0):
				return 0, errFloatOverflow
			case r == 0 && x != 0 && !math.IsInf(x, 0) && !math.IsInf(y, 0):
				return 0, errFloatUnderflow
			}
			return r, nil
		})
	}
	return nil
}

func mapFloats(mem memory.Allocator, n int, args []arrow.Array, f func(i int) (float64, error)) (arrow.Array, error) {
	return mapRows[float64](array.NewFloat64Builder(mem), n, args, func(i int) (float64, bool, error) {
		v, err := f(i)
		return v, err == nil, err
	})
}
