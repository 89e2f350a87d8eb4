package aggregate

import (
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// TestDecSumAddOverflow: decSumAcc.add's total and its 22003 agree with the full check of
// every total (|total| < 10^38, no wrap of the 128-bit addition) for totals and addends drawn
// near 0, near ±10^38, near ±2^125–2^127 and anywhere in int128, v as well past 10^38.
func TestDecSumAddOverflow(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 38))
	around := []decimal128.Num{decimal128.New(0, 0), maxDecimal, maxDecimal.Negate(),
		decimal128.New(1<<61, 0), decimal128.New(-(1 << 61), 0), decimal128.New(1<<62, 0), decimal128.New(-(1 << 62), 0),
		decimal128.MaxDecimal128, decimal128.MaxDecimal128.Negate(), decimal128.New(-(1 << 63), 0)}
	draw := func(bounded bool) decimal128.Num {
		var n decimal128.Num
		switch rng.IntN(3) {
		case 0:
			n = decimal128.FromI64(rng.Int64N(2001) - 1000)
		case 1:
			n = around[rng.IntN(len(around))].Add(decimal128.FromI64(rng.Int64N(2001) - 1000))
		default:
			n = decimal128.New(int64(rng.Uint64()), rng.Uint64())
		}
		if bounded && n.Abs().Cmp(maxDecimal) >= 0 {
			return decimal128.FromI64(rng.Int64N(7))
		}
		return n
	}
	for range 200000 {
		sum, v := draw(true), draw(false)
		want := sum.Add(v)
		wantErr := want.Abs().Cmp(maxDecimal) >= 0 || want.Sign() != 0 && sum.Sign() == v.Sign() && want.Sign() != v.Sign()
		a := &decSumAcc{sum: []decimal128.Num{sum}, n: []int64{1}}
		err := a.add(0, v)
		if (err != nil) != wantErr || err == nil && a.sum[0] != want {
			t.Fatalf("%v + %v: total %v, error %v; want %v, error %t", sum, v, a.sum[0], err, want, wantErr)
		}
	}
}
