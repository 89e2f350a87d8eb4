package ops

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/types"
)

// Floating-point +, -, * and / with PostgreSQL's checks (float4pl, float8mul, float8div…, their
// check_float4_val and check_float8_val): a finite result of finite operands that becomes
// infinite is "value out of range: overflow", a product or quotient of non-zero operands
// that becomes zero "value out of range: underflow" (22003), a divisor of zero "division by
// zero" (22012) unless the dividend is NaN. Infinities and NaN given as operands propagate.
//
// functions_arithmetic's add, subtract, multiply and divide of two reals (float32, computed
// in single precision as PostgreSQL's float4 operators are) or two doubles (float64) are
// evaluated here, not by arrow-go, whose kernels let an overflow become ±Inf and an underflow
// 0 silently.
func init() {
	for _, op := range []string{"add", "subtract", "multiply", "divide"} {
		ownFunctions["float_"+op] = floatArithKernel(op)
	}
}

// isFloatArith reports whether f is functions_arithmetic's add, subtract, multiply or divide
// of two reals or two doubles (which compile evaluates with floatArithKernel).
func isFloatArith(f *expr.ScalarFunction) bool {
	if f.ID().URN != urnArith {
		return false
	}
	switch f.Name() {
	case "add", "subtract", "multiply", "divide":
	default:
		return false
	}
	switch f.GetType().(type) {
	case *types.Float32Type, *types.Float64Type:
	default:
		return false
	}
	// Operands of the result's type only (the SQL binder's): a client plan mixing types is
	// left to arrow-go, which casts them.
	if f.NArgs() != 2 {
		return false
	}
	for i := range 2 {
		a, ok := f.Arg(i).(expr.Expression)
		if !ok || !a.GetType().WithNullability(types.NullabilityRequired).Equals(f.GetType().WithNullability(types.NullabilityRequired)) {
			return false
		}
	}
	return true
}

// floatArithKernel evaluates op of two floats of one type, float32 or float64.
func floatArithKernel(op string) func(*fnNode) error {
	return func(n *fnNode) error {
		if err := argCount(n, 2, 2); err != nil {
			return err
		}
		t := n.types[0]
		if t == nil || !arrow.TypeEqual(t, n.types[1]) {
			return fmt.Errorf("arguments must be floats of one type, not %v and %v", n.types[0], n.types[1])
		}
		n.out = t
		switch t.ID() {
		case arrow.FLOAT32:
			n.run = floatArith(op, func(a arrow.Array) []float32 { return a.(*array.Float32).Float32Values() })
		case arrow.FLOAT64:
			n.run = floatArith(op, func(a arrow.Array) []float64 { return a.(*array.Float64).Float64Values() })
		default:
			return fmt.Errorf("arguments must be float32 or float64, not %s", t)
		}
		return nil
	}
}

// floatArith computes op over whole columns into a buffer of mem, then checks only the rows
// whose result is zero, infinite or NaN (where PostgreSQL may raise an error) with floatOp,
// skipping NULL rows. A row is NULL where either operand is.
func floatArith[T float32 | float64](op string, values func(arrow.Array) []T) func(memory.Allocator, int, []arrow.Array) (arrow.Array, error) {
	return func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
		xs, ys := values(args[0])[:rows], values(args[1])[:rows]
		vb := newBuffer(mem, rows*int(unsafe.Sizeof(T(0))), false)
		defer vb.Release()
		out := unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(vb.Bytes()))), rows)
		switch op {
		case "add":
			for i := range out {
				out[i] = xs[i] + ys[i]
			}
		case "subtract":
			for i := range out {
				out[i] = xs[i] - ys[i]
			}
		case "multiply":
			for i := range out {
				out[i] = xs[i] * ys[i]
			}
		case "divide":
			for i := range out {
				out[i] = xs[i] / ys[i]
			}
		}
		nulls := args[0].NullN() > 0 || args[1].NullN() > 0
		for i, r := range out {
			if r != 0 && r-r == 0 { // finite and not zero: no check can fail
				continue
			}
			if nulls && (args[0].IsNull(i) || args[1].IsNull(i)) {
				continue
			}
			if _, err := floatOp(op, xs[i], ys[i]); err != nil {
				return nil, err
			}
		}
		var validity *memory.Buffer
		nullN := 0
		if nulls {
			validity = newBuffer(mem, int(bitutil.BytesForBits(int64(rows))), true)
			defer validity.Release()
			bits := validity.Bytes()
			for i := range rows {
				if args[0].IsValid(i) && args[1].IsValid(i) {
					bitutil.SetBit(bits, i)
				} else {
					nullN++
				}
			}
		}
		data := array.NewData(args[0].DataType(), rows, []*memory.Buffer{validity, vb}, nil, nullN, 0)
		defer data.Release()
		return array.MakeFromData(data), nil
	}
}

// floatOp is x op y in T's precision with PostgreSQL's checks (the file's comment).
func floatOp[T float32 | float64](op string, x, y T) (T, error) {
	inf := func(v T) bool { return math.IsInf(float64(v), 0) }
	var r T
	switch op {
	case "add":
		r = x + y
	case "subtract":
		r = x - y
	case "multiply":
		r = x * y
	case "divide":
		if y == 0 && !math.IsNaN(float64(x)) {
			return 0, &DataError{Code: sqlstateDivisionByZero, Msg: "division by zero"}
		}
		r = x / y
	}
	switch {
	case inf(r) && !inf(x) && (op == "divide" || !inf(y)):
		return 0, errFloatOverflow
	case r == 0 && x != 0 && (op == "multiply" && y != 0 || op == "divide" && !inf(y)):
		return 0, errFloatUnderflow
	}
	return r, nil
}
