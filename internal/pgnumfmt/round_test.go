package pgnumfmt

import (
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/cockroachdb/apd/v3"
)

// TestQuantizeDirected: Quantize's floor, ceiling, truncation, half-up and away-from-zero
// roundings of random decimals (most with more places than kept, many below 10^(exp-1), the
// values apd's own Quantize rounds to zero whatever the rounder) equal the rounding computed
// on exact rationals with math/big.
func TestQuantizeDirected(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 18))
	rounders := []apd.Rounder{apd.RoundFloor, apd.RoundCeiling, apd.RoundDown, apd.RoundHalfUp, apd.RoundUp}
	for _, s := range []string{"-0.05", "0.05", "-0.0001", "0.001", "-0.15", "0", "-0", "1234.5", "-1e-30"} {
		d, _, err := apd.NewFromString(s)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rounders {
			checkQuantize(t, d, 0, r)
		}
	}
	for range 20000 {
		d := apd.New(rng.Int64N(2_000_001)-1_000_000, -rng.Int32N(12))
		exp := rng.Int32N(9) - 4
		for _, r := range rounders {
			checkQuantize(t, d, exp, r)
		}
	}
}

func checkQuantize(t *testing.T, d *apd.Decimal, exp int32, r apd.Rounder) {
	t.Helper()
	ctx := apd.BaseContext.WithPrecision(100)
	ctx.Rounding = r
	var q apd.Decimal
	if err := Quantize(ctx, &q, d, exp); err != nil {
		t.Fatalf("Quantize(%s, %d, %s): %v", d, exp, r, err)
	}
	if q.Exponent != exp {
		t.Fatalf("Quantize(%s, %d, %s) = %s: exponent %d", d, exp, r, q.String(), q.Exponent)
	}
	// want: d / 10^exp as an exact rational, rounded to an integer by r.
	x := ratOf(d)
	x.Quo(x, ratOf(apd.New(1, exp)))
	fl := new(big.Int).Div(x.Num(), x.Denom()) // Euclidean: the floor, the denominator being positive
	exact := x.IsInt()
	var want *big.Int
	switch r {
	case apd.RoundFloor:
		want = fl
	case apd.RoundCeiling:
		want = ceilOf(fl, exact)
	case apd.RoundDown:
		want = fl
		if x.Sign() < 0 {
			want = ceilOf(fl, exact)
		}
	case apd.RoundUp:
		want = ceilOf(fl, exact)
		if x.Sign() < 0 {
			want = fl
		}
	case apd.RoundHalfUp:
		h := new(big.Rat).Abs(x)
		h.Add(h, big.NewRat(1, 2))
		want = new(big.Int).Div(h.Num(), h.Denom())
		if x.Sign() < 0 {
			want.Neg(want)
		}
	}
	got := ratOf(&q)
	got.Quo(got, ratOf(apd.New(1, exp)))
	if !got.IsInt() || got.Num().Cmp(want) != 0 {
		t.Fatalf("Quantize(%s, %d, %s) = %s, want %s units of 1e%d", d, exp, r, q.String(), want, exp)
	}
}

func ceilOf(fl *big.Int, exact bool) *big.Int {
	if exact {
		return fl
	}
	return new(big.Int).Add(fl, big.NewInt(1))
}

func ratOf(d *apd.Decimal) *big.Rat {
	x, ok := new(big.Rat).SetString(d.Text('f'))
	if !ok {
		panic(d.String())
	}
	return x
}
