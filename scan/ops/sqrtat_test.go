package ops_test

import (
	"errors"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/flightsrv/flightsrv/scan/ops"
)

// sqrtAtReference is the square root of x·10^-s rounded half away from zero to ds digits,
// as an unscaled integer k of scale ds: math/big's float square root at 2,000 bits, moved by
// ones until (k−½)² ≤ x·10^(2·ds−s) < (k+½)² holds in exact rationals (a root exactly
// halfway, √0.2025 = 0.45 at one digit, rounds up).
func sqrtAtReference(x *big.Int, s, ds int32) *big.Int {
	const prec = 2000
	pow := func(k int32) *big.Int { return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(k)), nil) }
	v := new(big.Float).SetPrec(prec).SetInt(x)
	v.Quo(v, new(big.Float).SetPrec(prec).SetInt(pow(s)))
	r := new(big.Float).SetPrec(prec).Sqrt(v)
	r.Mul(r, new(big.Float).SetPrec(prec).SetInt(pow(ds)))
	k, _ := r.Int(nil)
	// X = x·10^(2·ds−s) as a rational; compare with (k ± ½)² = (2k ± 1)²/4.
	X := new(big.Rat).SetFrac(new(big.Int).Mul(x, pow(2*ds)), pow(s))
	sq := func(k *big.Int, d int64) *big.Rat {
		t := new(big.Int).Add(new(big.Int).Lsh(k, 1), big.NewInt(d))
		return new(big.Rat).SetFrac(t.Mul(t, t), big.NewInt(4))
	}
	for k.Sign() > 0 && sq(k, -1).Cmp(X) > 0 {
		k.Sub(k, big.NewInt(1))
	}
	for sq(k, 1).Cmp(X) <= 0 {
		k.Add(k, big.NewInt(1))
	}
	return k
}

// TestSqrtAt checks numeric_sqrt_at's root of random values of 1 to 38 digits at scales 0 to
// 30, rounded to display scales around the value's scale, against math/big's, and values
// whose results PostgreSQL 15 prints (sqrt of numerics, stddev_samp of integers).
func TestSqrtAt(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 6))
	lim := new(big.Int).Exp(big.NewInt(10), big.NewInt(38), nil)
	for i := range 20000 {
		digits := 1 + rng.IntN(38)
		x := new(big.Int)
		for range digits {
			x.Mul(x, big.NewInt(10)).Add(x, big.NewInt(int64(rng.IntN(10))))
		}
		if i%10 == 0 { // perfect squares (of halves too: 0.2025 = 0.45²) and their neighbours
			r := new(big.Int).Sqrt(x)
			x.Mul(r, r).Add(x, big.NewInt(int64(rng.IntN(3)-1)))
			if i%20 == 0 && digits < 36 {
				x.Mul(x, big.NewInt(25))
			}
			if x.Sign() < 0 {
				x.SetInt64(0)
			}
		}
		s := []int32{0, 2, 4, 20, 30}[rng.IntN(5)]
		ds := max(0, int(s)-22+rng.IntN(26))
		got, err := ops.SqrtAt(decimal128.FromBigInt(x), s, int32(ds))
		want := sqrtAtReference(x, s, int32(ds))
		// want at scale s, or its digits past s.
		var atS *big.Int
		if int32(ds) >= s {
			q, m := new(big.Int).QuoRem(want, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(int32(ds)-s)), nil), new(big.Int))
			if m.Sign() == 0 {
				atS = q
			}
		} else {
			atS = new(big.Int).Mul(want, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(s-int32(ds))), nil))
		}
		if atS == nil || atS.Cmp(lim) >= 0 {
			if !errors.Is(err, ops.ErrSqrtScale) {
				t.Fatalf("SqrtAt(%s, s=%d, ds=%d) = %s, %v; want ErrSqrtScale (root %s at scale %d)", x, s, ds, got.BigInt(), err, want, ds)
			}
			continue
		}
		if err != nil || got.BigInt().Cmp(atS) != 0 {
			t.Fatalf("SqrtAt(%s, s=%d, ds=%d) = %s, %v; want %s", x, s, ds, got.BigInt(), err, atS)
		}
	}
	for _, c := range []struct {
		x      int64
		s, ds  int32
		want   int64 // at scale s
		reason string
	}{
		// SELECT sqrt(2::numeric) → 1.414213562373095 (rscale 15).
		{2, 0, 15, 0, "sqrt(2) needs digits past scale 0"},
		{200_000_000_000_000_000, 17, 15, 141421356237309500, "sqrt(2.00000000000000000) at 15 digits"},
		// SELECT stddev_samp(x) FROM (VALUES (1), (2), (4)) v(x) → 1.5275252316519467
		// (variance 2.3333333333333333, display scale 16).
		{23333333333333333, 16, 16, 15275252316519467, "stddev_samp of 1, 2, 4"},
		// A root exactly halfway before rounding is impossible; one just below .5: √0.2025 = 0.45.
		{2025, 4, 1, 5000, "0.45 rounds half away from zero to 0.5"},
	} {
		got, err := ops.SqrtAt(decimal128.FromI64(c.x), c.s, c.ds)
		if c.want == 0 {
			if !errors.Is(err, ops.ErrSqrtScale) {
				t.Errorf("%s: %s, %v; want ErrSqrtScale", c.reason, got.BigInt(), err)
			}
			continue
		}
		if err != nil || got != decimal128.FromI64(c.want) {
			t.Errorf("%s: %s, %v; want %d", c.reason, got.BigInt(), err, c.want)
		}
	}
	if _, err := ops.SqrtAt(decimal128.FromI64(-1), 0, 0); err == nil {
		t.Errorf("SqrtAt(-1): no error")
	}
}
