package ops

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/extensions"
	"github.com/substrait-io/substrait-go/v8/types"
)

// Signed integer addition, subtraction, division, remainder, gcd and lcm with PostgreSQL's checks
// (int2pl, int4mi, int8div, int4mod… raise "smallint/integer/bigint out of range", SQLSTATE
// 22003, and "division by zero", 22012).
//
// functions_arithmetic's add, subtract, divide and modulus of two signed integers of one
// width are evaluated here, not by arrow-go: v18.8.0's add_checked and subtract_checked test
// the carry out of the sign bit as for unsigned integers, so a negative overflow of add
// (-32768 + -1) and a positive one of subtract (0 - (-32768), 2147483647 - (-1), unary minus
// of the smallest value) wrapped around silently; its divide_checked answers the smallest
// value divided by -1 with itself, where int2div, int4div and int8div raise out of range.
// The remainder of the smallest value by -1 is 0, as int4mod and int8mod answer it (Go's %
// would overflow there).
func init() {
	for _, op := range []string{"add", "subtract", "divide", "modulus", "gcd", "lcm"} {
		ownFunctions["int_"+op] = intArithKernel(op)
	}
}

// isSignedIntArith reports whether f is functions_arithmetic's add, subtract, divide or
// modulus returning a signed integer (which compile evaluates with intArithKernel).
func isSignedIntArith(f *expr.ScalarFunction) bool {
	if f.ID().URN != urnArith {
		return false
	}
	switch f.Name() {
	case "add", "subtract", "divide", "modulus":
	default:
		return false
	}
	switch f.GetType().(type) {
	case *types.Int8Type, *types.Int16Type, *types.Int32Type, *types.Int64Type:
		return true
	}
	return false
}

// intArithKernel adds, subtracts, divides (truncating toward zero) or takes the remainder
// (with the dividend's sign) of two signed integers of the same width (op is "add",
// "subtract", "divide" or "modulus"); a result outside the width is PostgreSQL's
// out-of-range error for the type, a zero divisor its division by zero.
func intArithKernel(op string) func(*fnNode) error {
	return func(n *fnNode) error {
		if err := argCount(n, 2, 2); err != nil {
			return err
		}
		t := n.types[0]
		if t == nil || !arrow.TypeEqual(t, n.types[1]) {
			return fmt.Errorf("arguments must be integers of one type, not %v and %v", n.types[0], n.types[1])
		}
		n.out = t
		switch t.ID() {
		case arrow.INT8:
			n.run = intArith[int8](op, t, func(m memory.Allocator) intBuilder[int8] { return array.NewInt8Builder(m) })
		case arrow.INT16:
			n.run = intArith[int16](op, t, func(m memory.Allocator) intBuilder[int16] { return array.NewInt16Builder(m) })
		case arrow.INT32:
			n.run = intArith[int32](op, t, func(m memory.Allocator) intBuilder[int32] { return array.NewInt32Builder(m) })
		case arrow.INT64:
			n.run = intArith[int64](op, t, func(m memory.Allocator) intBuilder[int64] { return array.NewInt64Builder(m) })
		default:
			return fmt.Errorf("arguments must be signed integers, not %s", t)
		}
		return nil
	}
}

// intGCD is PostgreSQL's int4gcd_internal and int8gcd_internal: the greatest common divisor
// of x and y, never negative (gcd(0, 0) is 0); the smallest value beside 0 or itself has a
// divisor the type cannot hold, its out-of-range error.
func intGCD[T signed](t arrow.DataType, x, y T) (T, error) {
	// The larger absolute value first, compared in negative space, as PostgreSQL does.
	nx, ny := x, y
	if nx > 0 {
		nx = -nx
	}
	if ny > 0 {
		ny = -ny
	}
	if nx > ny {
		x, y = y, x
	}
	if x < 0 && -x < 0 { // the smallest value
		if y == 0 || y == x {
			return 0, outOfRange(t, nil)
		}
		if y == -1 {
			return 1, nil
		}
	}
	for y != 0 {
		x, y = y, x%y
	}
	if x < 0 {
		x = -x
	}
	return x, nil
}

// urnArith is Substrait's functions_arithmetic.
const urnArith = extensions.SubstraitDefaultURNPrefix + "functions_arithmetic"

type signed interface {
	~int8 | ~int16 | ~int32 | ~int64
}

// intBuilder is the part of arrow-go's integer builders intArith uses.
type intBuilder[T signed] interface {
	appender[T]
	AppendValues(v []T, valid []bool)
}

func intArith[T signed](name string, t arrow.DataType, newB func(memory.Allocator) intBuilder[T]) func(memory.Allocator, int, []arrow.Array) (arrow.Array, error) {
	op := intOps[name] // an integer, not a string compared per row
	return func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
		a := args[0].(arrow.TypedArray[T])
		b := args[1].(arrow.TypedArray[T])
		return mapRows[T](newB(mem), rows, args, func(i int) (T, bool, error) {
			r, err := intOp(op, t, a.Value(i), b.Value(i))
			return r, err == nil, err
		})
	}
}

// errIntDivZero is int4div's and int4mod's error for a zero divisor.
var errIntDivZero = &DataError{Code: sqlstateDivisionByZero, Msg: "division by zero"}

// intOpCode is one of intArithKernel's operations.
type intOpCode uint8

const (
	intAdd intOpCode = iota
	intSubtract
	intDivide
	intModulus
	intGcd
	intLcm
)

var intOps = map[string]intOpCode{"add": intAdd, "subtract": intSubtract, "divide": intDivide, "modulus": intModulus, "gcd": intGcd, "lcm": intLcm}

// intOp is x op y for intArith, t the Arrow type whose out-of-range error it raises.
func intOp[T signed](op intOpCode, t arrow.DataType, x, y T) (T, error) {
	var r T
	var over bool
	switch op {
	case intSubtract:
		r = x - y
		// Overflow when the operands' signs differ and the result's differs from x's.
		over = (x^y) < 0 && (x^r) < 0
	case intAdd:
		r = x + y
		// Overflow when the operands' signs agree and the result's differs.
		over = (x^y) >= 0 && (x^r) < 0
	case intGcd:
		return intGCD(t, x, y)
	case intLcm:
		if x == 0 || y == 0 {
			return 0, nil
		}
		g, err := intGCD(t, x, y)
		if err != nil {
			return 0, err
		}
		q := x / g
		r = q * y
		// Overflow when the product does not divide back, or is the smallest value (whose
		// absolute value the type cannot hold).
		over = r/y != q || (r < 0 && -r < 0)
		if r < 0 {
			r = -r
		}
	case intDivide, intModulus:
		switch {
		case y == 0:
			return 0, errIntDivZero
		case y == -1:
			// x / -1 is -x, which overflows for the smallest value only (-x == x there);
			// x % -1 is 0 (Go's would overflow for the smallest value).
			if op == intModulus {
				return 0, nil
			}
			r = -x
			over = x < 0 && r < 0
		case op == intDivide:
			r = x / y
		default:
			r = x % y
		}
	}
	if over {
		return 0, outOfRange(t, nil)
	}
	return r, nil
}
