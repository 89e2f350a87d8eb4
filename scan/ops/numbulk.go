package ops

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Whole-array fast paths of numeric_cast of integers and of numeric comparisons (issue 19):
// the fast functions of numfast.go applied in one loop over the arrays' values, writing the
// output's buffers directly, instead of a closure and a builder's append a row (mapRows),
// which cost more than the arithmetic: the join against avg, whose residual compares every
// flight's delay cast to numeric with its origin's average, spent about a tenth of its CPU
// there. Each answers ok false when any row of the array is not the fast path's to decide
// (numfast.go), and the caller then runs its row-by-row kernel over the whole array, which
// answers those rows exactly and raises their errors.

// validityOf returns the validity, at offset 0, of n rows of arrays as (a row valid where
// every one is valid; nil when none has a NULL) and the number of NULL rows: the output's
// validity of a function NULL where an argument is.
func validityOf(mem memory.Allocator, n int, as ...arrow.Array) (*memory.Buffer, int) {
	var buf *memory.Buffer
	for _, a := range as {
		if a.NullN() == 0 {
			continue
		}
		if buf == nil {
			buf = memory.NewResizableBuffer(mem)
			buf.Resize(int(bitutil.BytesForBits(int64(n))))
			bitutil.SetBitsTo(buf.Bytes(), 0, int64(n), true)
		}
		bits := buf.Bytes()
		for i := range n {
			if a.IsNull(i) {
				bitutil.ClearBit(bits, i)
			}
		}
	}
	if buf == nil {
		return nil, 0
	}
	return buf, n - bitutil.CountSetBits(buf.Bytes(), 0, n)
}

// castIntsNumeric is numeric_cast(rd) of every row of the integer array v, ok false when v is
// not an integer array or some valid row is not fastIntNumeric's to answer without an error.
func castIntsNumeric(mem memory.Allocator, v arrow.Array, rd rounding) (arrow.Array, bool) {
	if !isInt(v.DataType()) || rd.places < 0 || rd.places > 18 {
		return nil, false
	}
	n := v.Len()
	vals := memory.NewResizableBuffer(mem)
	vals.Resize(n * arrow.Decimal128SizeBytes)
	out := arrow.Decimal128Traits.CastFromBytes(vals.Bytes())
	mul := decimal128.GetScaleMultiplier(int(rd.places))
	nulls := v.NullN() > 0
	for i := range n {
		if nulls && v.IsNull(i) {
			out[i] = decimal128.Num{}
			continue
		}
		x := decimal128.FromI64(intAt(v, i))
		if rd.places > 0 {
			x = x.Mul(mul)
		}
		if checkPrecision(x, rd) != nil {
			vals.Release()
			return nil, false
		}
		out[i] = x
	}
	valid, nullN := validityOf(mem, n, v)
	data := array.NewData(numericOut(rd.s), n, []*memory.Buffer{valid, vals}, nil, nullN, 0)
	vals.Release()
	if valid != nil {
		valid.Release()
	}
	defer data.Release()
	return array.MakeFromData(data), true
}

// cmpDecimals is numeric_cmp of every row of a (scale sa) and b (scale sb) by test, ok false
// when some row with both values is not fastCmp's to decide.
func cmpDecimals(mem memory.Allocator, a, b *array.Decimal128, sa, sb int32, test func(int) bool) (arrow.Array, bool) {
	n := a.Len()
	valid, nullN := validityOf(mem, n, a, b)
	vals := memory.NewResizableBuffer(mem)
	vals.Resize(int(bitutil.BytesForBits(int64(n))))
	bits := vals.Bytes()
	clear(bits)
	var vb []byte
	if valid != nil {
		vb = valid.Bytes()
	}
	av, bv := a.Values(), b.Values()
	for i := range n {
		if vb != nil && !bitutil.BitIsSet(vb, i) {
			continue
		}
		c, ok := fastCmp(av[i], bv[i], sa, sb)
		if !ok {
			vals.Release()
			if valid != nil {
				valid.Release()
			}
			return nil, false
		}
		if test(c) {
			bitutil.SetBit(bits, i)
		}
	}
	data := array.NewData(arrow.FixedWidthTypes.Boolean, n, []*memory.Buffer{valid, vals}, nil, nullN, 0)
	vals.Release()
	if valid != nil {
		valid.Release()
	}
	defer data.Release()
	return array.NewBooleanData(data), true
}
