package ops

import (
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/cockroachdb/apd/v3"
)

// TestNumericBulk: the whole-array paths of numbulk.go answer every row as the row-by-row
// fast paths do (fastIntNumeric, fastCmp), NULL where an argument is, over sliced arrays too;
// an array with a row those leave to the general path (a precision overflow, a comparison
// past 38 digits) is not decided.
func TestNumericBulk(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	r := rand.New(rand.NewPCG(19, 2))
	const n = 300
	ib := array.NewInt32Builder(mem)
	db := array.NewDecimal128Builder(mem, &arrow.Decimal128Type{Precision: 38, Scale: 16})
	for i := range n {
		if i%7 == 3 {
			ib.AppendNull()
		} else {
			ib.Append(int32(r.IntN(2000) - 1000))
		}
		if i%11 == 5 {
			db.AppendNull()
		} else {
			db.Append(decimal128.FromI64(r.Int64N(2000) - 1000).Mul(decimal128.GetScaleMultiplier(16)).Add(decimal128.FromI64(r.Int64N(1e16))))
		}
	}
	ints, decs := ib.NewArray(), db.NewDecimal128Array()
	ib.Release()
	db.Release()
	defer ints.Release()
	defer decs.Release()
	for _, window := range [][2]int64{{0, n}, {13, 250}} {
		iv := array.NewSlice(ints, window[0], window[1])
		dv := array.NewSlice(decs, window[0], window[1]).(*array.Decimal128)
		for _, rd := range []rounding{{mode: apd.RoundHalfUp}, {mode: apd.RoundHalfUp, places: 2, prec: 10, s: 2}} {
			out, ok := castIntsNumeric(mem, iv, rd)
			if !ok {
				t.Fatalf("%+v: not decided", rd)
			}
			got := out.(*array.Decimal128)
			for i := range iv.Len() {
				want, _, _ := fastIntNumeric(intAt(iv, i), rd)
				if got.IsNull(i) != iv.IsNull(i) || !iv.IsNull(i) && got.Value(i) != want {
					t.Fatalf("%+v row %d: %v (null %t), want %v (null %t)", rd, i, got.Value(i), got.IsNull(i), want, iv.IsNull(i))
				}
			}
			if !arrow.TypeEqual(out.DataType(), numericOut(rd.s)) {
				t.Errorf("%+v: %s", rd, out.DataType())
			}
			casted := got
			cmp, ok := cmpDecimals(mem, casted, dv, rd.s, 16, func(c int) bool { return c > 0 })
			if !ok {
				t.Fatalf("%+v: comparison not decided", rd)
			}
			gb := cmp.(*array.Boolean)
			nulls := 0
			for i := range iv.Len() {
				null := casted.IsNull(i) || dv.IsNull(i)
				if null {
					nulls++
				}
				c, _ := fastCmp(casted.Value(i), dv.Value(i), rd.s, 16)
				if gb.IsNull(i) != null || !null && gb.Value(i) != (c > 0) {
					t.Fatalf("%+v row %d: %v (null %t), want %v (null %t)", rd, i, gb.Value(i), gb.IsNull(i), c > 0, null)
				}
			}
			if gb.NullN() != nulls {
				t.Errorf("%+v: %d NULLs, want %d", rd, gb.NullN(), nulls)
			}
			cmp.Release()
			out.Release()
		}
		iv.Release()
		dv.Release()
	}
	// numeric(3,0) cannot hold 1000: the general path raises its overflow.
	if out, ok := castIntsNumeric(mem, ints, rounding{mode: apd.RoundHalfUp, prec: 3}); ok {
		out.Release()
		t.Error("an overflow decided")
	}
	big := array.NewDecimal128Builder(mem, &arrow.Decimal128Type{Precision: 38, Scale: 0})
	big.Append(decimal128.GetScaleMultiplier(37))
	wide := big.NewDecimal128Array()
	big.Release()
	defer wide.Release()
	one := array.NewSlice(decs, 0, 1).(*array.Decimal128)
	defer one.Release()
	if out, ok := cmpDecimals(mem, wide, one, 0, 16, func(c int) bool { return c > 0 }); ok {
		out.Release()
		t.Error("a comparison past 38 digits decided")
	}
}
