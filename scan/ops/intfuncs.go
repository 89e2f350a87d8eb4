package ops

import (
	"errors"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// PostgreSQL's functions of bigint arguments computed here, strict:
//
//	int_div_numeric(a, b)  div(a, b) of integers (numeric_div_trunc of a::numeric and
//	                       b::numeric): the quotient truncated toward zero, exactly, as
//	                       decimal128(38, 0) (numeric at display scale 0); div(-2^63, -1) is
//	                       2^63; a zero divisor is "division by zero" (22012)
//	to_hex(a)              to_hex(integer) and to_hex(bigint): lowercase hexadecimal digits of
//	                       the value's two's complement at its width, without leading zeros
//	                       (to_hex(-1) is ffffffff of an int32, ffffffffffffffff of an int64)
func init() {
	ownFunctions["int_div_numeric"] = intDivNumericKernel
	ownFunctions["to_hex"] = toHexKernel
}

func intDivNumericKernel(n *fnNode) error {
	if err := argCount(n, 2, 2); err != nil {
		return err
	}
	for _, t := range n.types {
		if t == nil || t.ID() != arrow.INT64 {
			return errors.New("int_div_numeric takes two bigint arguments")
		}
	}
	out := &arrow.Decimal128Type{Precision: 38, Scale: 0}
	n.out = out
	n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
		a, b := args[0].(*array.Int64), args[1].(*array.Int64)
		return mapRows[decimal128.Num](array.NewDecimal128Builder(mem, out), rows, args, func(i int) (decimal128.Num, bool, error) {
			x, y := a.Value(i), b.Value(i)
			if y == 0 {
				return decimal128.Num{}, false, errIntDivZero
			}
			if y == -1 {
				return decimal128.FromI64(x).Negate(), true, nil // -(-2^63) needs 128 bits
			}
			return decimal128.FromI64(x / y), true, nil
		})
	}
	return nil
}

func toHexKernel(n *fnNode) error {
	if err := argCount(n, 1, 1); err != nil {
		return err
	}
	n.out = arrow.BinaryTypes.String
	switch t := n.types[0]; {
	case t != nil && t.ID() == arrow.INT32:
		n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
			a := args[0].(*array.Int32)
			return mapStrings(mem, rows, args, func(i int) (string, bool, error) {
				return strconv.FormatUint(uint64(uint32(a.Value(i))), 16), true, nil
			})
		}
	case t != nil && t.ID() == arrow.INT64:
		n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
			a := args[0].(*array.Int64)
			return mapStrings(mem, rows, args, func(i int) (string, bool, error) {
				return strconv.FormatUint(uint64(a.Value(i)), 16), true, nil
			})
		}
	default:
		return errors.New("to_hex takes an integer or a bigint")
	}
	return nil
}
