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

// Signed integer addition and subtraction with PostgreSQL's overflow check (int2pl, int4mi,
// int8pl… raise "smallint/integer/bigint out of range", SQLSTATE 22003).
//
// functions_arithmetic's add and subtract of two signed integers of one width are evaluated
// here, not by arrow-go: v18.8.0's add_checked and subtract_checked test the carry out of
// the sign bit as for unsigned integers, so a negative overflow of add (-32768 + -1) and a
// positive one of subtract (0 - (-32768), 2147483647 - (-1), unary minus of the smallest
// value) wrapped around silently.
func init() {
	ownFunctions["int_add"] = intArithKernel(false)
	ownFunctions["int_subtract"] = intArithKernel(true)
}

// isSignedAddSub reports whether f is functions_arithmetic's add or subtract returning a
// signed integer (which compile evaluates with intArithKernel).
func isSignedAddSub(f *expr.ScalarFunction) bool {
	if f.ID().URN != urnArith || (f.Name() != "add" && f.Name() != "subtract") {
		return false
	}
	switch f.GetType().(type) {
	case *types.Int8Type, *types.Int16Type, *types.Int32Type, *types.Int64Type:
		return true
	}
	return false
}

// intArithKernel adds (or subtracts) two signed integers of the same width; a result outside
// the width is PostgreSQL's out-of-range error for the type.
func intArithKernel(sub bool) func(*fnNode) error {
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
			n.run = intArith[int8](sub, t, func(m memory.Allocator) intBuilder[int8] { return array.NewInt8Builder(m) })
		case arrow.INT16:
			n.run = intArith[int16](sub, t, func(m memory.Allocator) intBuilder[int16] { return array.NewInt16Builder(m) })
		case arrow.INT32:
			n.run = intArith[int32](sub, t, func(m memory.Allocator) intBuilder[int32] { return array.NewInt32Builder(m) })
		case arrow.INT64:
			n.run = intArith[int64](sub, t, func(m memory.Allocator) intBuilder[int64] { return array.NewInt64Builder(m) })
		default:
			return fmt.Errorf("arguments must be signed integers, not %s", t)
		}
		return nil
	}
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

func intArith[T signed](sub bool, t arrow.DataType, newB func(memory.Allocator) intBuilder[T]) func(memory.Allocator, int, []arrow.Array) (arrow.Array, error) {
	return func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
		a := args[0].(arrow.TypedArray[T])
		b := args[1].(arrow.TypedArray[T])
		return mapRows[T](newB(mem), rows, args, func(i int) (T, bool, error) {
			x, y := a.Value(i), b.Value(i)
			var r T
			var over bool
			if sub {
				r = x - y
				// Overflow when the operands' signs differ and the result's differs from x's.
				over = (x^y) < 0 && (x^r) < 0
			} else {
				r = x + y
				// Overflow when the operands' signs agree and the result's differs.
				over = (x^y) >= 0 && (x^r) < 0
			}
			if over {
				return 0, false, outOfRange(t, nil)
			}
			return r, true, nil
		})
	}
}
