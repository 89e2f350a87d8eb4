package ops

import (
	"errors"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// width_bucket(operand, low, high, count) is PostgreSQL 15's width_bucket_float8 (double
// precision operand and bounds, an integer count; strict): the bucket, 1 to count, of count
// equal-width buckets between low and high (high below low numbers them downwards) that
// holds operand, 0 below the first and count + 1 past the last. A count below 1, NaN
// arguments and infinite bounds are 2201G (invalid_argument_for_width_bucket_function) in
// PostgreSQL's words, count + 1 past int4's range 22003. The bucket is PostgreSQL 15's
// expression, count × (operand − low) / (high − low) + 1 in double precision, each step
// rounded, truncated to int4 as its C conversion does on x86-64 (a value outside int4's range
// or NaN, when high − low overflows, is -2147483648, as PostgreSQL 15 answers).
func init() { ownFunctions["width_bucket"] = widthBucketKernel }

func widthBucketKernel(n *fnNode) error {
	if err := argCount(n, 4, 4); err != nil {
		return err
	}
	for i := range 3 {
		if n.types[i] == nil || n.types[i].ID() != arrow.FLOAT64 {
			return errors.New("takes double precision operand and bounds")
		}
	}
	if n.types[3] == nil || n.types[3].ID() != arrow.INT32 {
		return errors.New("takes an integer count")
	}
	n.out = arrow.PrimitiveTypes.Int32
	n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
		op, lo, hi := args[0].(*array.Float64), args[1].(*array.Float64), args[2].(*array.Float64)
		count := args[3].(*array.Int32)
		return mapRows[int32](array.NewInt32Builder(mem), rows, args, func(i int) (int32, bool, error) {
			v, err := widthBucket(op.Value(i), lo.Value(i), hi.Value(i), count.Value(i))
			return v, err == nil, err
		})
	}
	return nil
}

func widthBucket(operand, b1, b2 float64, count int32) (int32, error) {
	bad := func(msg string) error { return &DataError{Code: "2201G", Msg: msg} }
	switch {
	case count <= 0:
		return 0, bad("count must be greater than zero")
	case math.IsNaN(operand) || math.IsNaN(b1) || math.IsNaN(b2):
		return 0, bad("operand, lower bound, and upper bound cannot be NaN")
	case math.IsInf(b1, 0) || math.IsInf(b2, 0):
		return 0, bad("lower and upper bounds must be finite")
	case b1 == b2:
		return 0, bad("lower bound cannot equal upper bound")
	}
	past := func() (int32, error) {
		if count == math.MaxInt32 {
			return 0, &DataError{Code: "22003", Msg: "integer out of range"}
		}
		return count + 1, nil
	}
	var num, den float64
	if b1 < b2 {
		switch {
		case operand < b1:
			return 0, nil
		case operand >= b2:
			return past()
		}
		num, den = float64(float64(count)*(operand-b1)), b2-b1
	} else {
		switch {
		case operand > b1:
			return 0, nil
		case operand <= b2:
			return past()
		}
		num, den = float64(float64(count)*(b1-operand)), b1-b2
	}
	r := float64(num/den) + 1
	if math.IsNaN(r) || r >= 1<<31 || r < -(1<<31) {
		return math.MinInt32, nil // x86-64's cvttsd2si of a value int4 cannot hold
	}
	return int32(r), nil
}
