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

// TestFloorQuotientsMatchExact: floor, ceil and trunc of numeric quotients by the int64 path
// (floorQuotients) equal the exact path's (NumericQuotient rounded half away from zero at
// select_div_scale's scale, then rounded by the mode) for decimal128 dividends of scales 0 to
// 6 and integer or decimal divisors, among them quotients a unit of the last place away from
// an integer, large ones among them, where PostgreSQL's first rounding reaches it, and values past int64.
func TestFloorQuotientsMatchExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(18, 24))
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	for round := range 300 {
		sa, sb := rng.Int32N(7), rng.Int32N(3)
		intDivisor := rng.IntN(2) == 0
		if intDivisor {
			sb = 0
		}
		const n = 200
		ab := array.NewDecimal128Builder(mem, &arrow.Decimal128Type{Precision: 38, Scale: sa})
		var bArr arrow.Array
		bb := array.NewDecimal128Builder(mem, &arrow.Decimal128Type{Precision: 38, Scale: sb})
		ib := array.NewInt64Builder(mem)
		for i := range n {
			y := rng.Int64N(2_000_001) - 1_000_000
			if i%17 == 0 {
				y = 0
			}
			var x decimal128.Num
			switch rng.IntN(5) {
			case 4: // a large quotient a unit from an integer: select_div_scale keeps few digits
				if sa >= sb && y != 0 {
					k := rng.Int64N(2_000_000_000_000) - 1_000_000_000_000
					y = (rng.Int64N(1000) + 10_000) * (1 - 2*rng.Int64N(2))
					x = decimal128.FromI64(k*y*int64(pow10u64[sa-sb]) + rng.Int64N(3) - 1)
					break
				}
				x = decimal128.FromI64(rng.Int64N(1000))
			case 0: // near a multiple of y (at the common scale)
				k := rng.Int64N(2_000_000) - 1_000_000
				s := max(sa, sb)
				A := k*y*int64(pow10u64[s-sb]) + rng.Int64N(5) - 2
				x = decimal128.FromI64(A / int64(pow10u64[s-sa]))
			case 1: // past int64
				x = decimal128.FromI64(rng.Int64()).Mul(decimal128.FromI64(1 << 20))
			default:
				x = decimal128.FromI64(rng.Int64N(1<<50) - 1<<49)
			}
			if i%23 == 0 {
				ab.AppendNull()
			} else {
				ab.Append(x)
			}
			ib.Append(y)
			bb.Append(decimal128.FromI64(y))
		}
		a := ab.NewArray()
		if intDivisor {
			bArr = ib.NewArray()
		} else {
			bArr = bb.NewArray()
		}
		ab.Release()
		bb.Release()
		ib.Release()
		for _, mode := range []apd.Rounder{apd.RoundFloor, apd.RoundCeiling, apd.RoundDown} {
			rd := rounding{mode: mode, places: 0, s: 0}
			x, y, err := quotientReaders(a, bArr, nil)
			if err != nil {
				t.Fatal(err)
			}
			exact := quotientRow(x, y, rd.apply)
			for i := range n {
				if a.IsNull(i) {
					continue
				}
				one := []arrow.Array{array.NewSlice(a, int64(i), int64(i+1)), array.NewSlice(bArr, int64(i), int64(i+1))}
				got, ok, gerr := floorQuotients(mem, rd, 1, one, one[0], one[1], func(int) (*apd.Decimal, error) { return exact(i) })
				want, werr := exact(i)
				switch {
				case !ok:
					t.Fatalf("round %d: floorQuotients declined decimal(%d) / %T", round, sa, bArr)
				case (gerr != nil) != (werr != nil):
					t.Fatalf("round %d row %d: error %v, exact %v", round, i, gerr, werr)
				case gerr == nil:
					w, _ := toNum(want, 0)
					if g := got.(*array.Decimal128).Value(0); g != w {
						t.Fatalf("round %d row %d mode %v: %s / %v (scales %d, %d) = %s, exact %s", round, i, mode, a.(*array.Decimal128).Value(i).ToString(sa), bArr.ValueStr(i), sa, sb, g.ToString(0), w.ToString(0))
					}
				}
				if got != nil {
					got.Release()
				}
				for _, o := range one {
					o.Release()
				}
			}
		}
		a.Release()
		bArr.Release()
	}
}
