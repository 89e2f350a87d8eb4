package ops

import (
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/cockroachdb/apd/v3"
)

// weightAndFirst is PostgreSQL's numeric weight (of base-10000 digits) and first base-10000
// digit of the nonzero value coeff·10^exp, from its decimal digits: the digits are grouped by
// fours from the point, the integer part's leftmost group holding weight ≥ 0.
func weightAndFirst(coeff *big.Int, exp int32) (int64, int64) {
	digits := coeff.String()
	// Pad so that the point falls on a group boundary, both sides.
	intLen := len(digits) + int(exp) // digits before the point (may be <= 0)
	lead := 0
	if intLen > 0 {
		lead = (4 - intLen%4) % 4
	}
	var b strings.Builder
	b.WriteString(strings.Repeat("0", lead))
	if intLen <= 0 {
		b.WriteString(strings.Repeat("0", -intLen))
	}
	b.WriteString(digits)
	if exp > 0 {
		b.WriteString(strings.Repeat("0", int(exp)))
	}
	all := b.String()
	groupsBefore := (lead + intLen) / 4 // groups of the integer part
	if intLen <= 0 {
		groupsBefore = 0
	}
	for g := 0; g*4 < len(all); g++ {
		grp := all[g*4 : min(len(all), g*4+4)]
		grp += strings.Repeat("0", 4-len(grp))
		if v := new(big.Int); strings.Trim(grp, "0") != "" {
			v.SetString(grp, 10)
			return int64(groupsBefore - 1 - g), v.Int64()
		}
	}
	return 0, 0
}

// TestDivScaleWeights checks select_div_scale's weights and first digits of divScale (its
// uint64 path and apd's) against the decimal digits grouped by fours.
func TestDivScaleWeights(t *testing.T) {
	rng := rand.New(rand.NewPCG(18, 19))
	for range 20000 {
		c := new(big.Int)
		for range 1 + rng.IntN(38) {
			c.Mul(c, big.NewInt(10)).Add(c, big.NewInt(int64(rng.IntN(10))))
		}
		if c.Sign() == 0 {
			c.SetInt64(1 + rng.Int64N(9))
		}
		exp := int32(rng.IntN(50) - 40)
		d := apd.NewWithBigInt(new(apd.BigInt).SetMathBigInt(c), exp)
		one := apd.New(1, 0)
		w, f := weightAndFirst(c, exp)
		// divScale(d, 1) = max(16 − 4·(w − 0 − [f ≤ 1]), 0) with display scales 0.
		qw := w
		if f <= 1 {
			qw--
		}
		want := int32(min(max(16-qw*4, 0), 1000))
		if got := divScale(d, one, 0, 0); got != want {
			t.Fatalf("divScale(%s, 1) = %d, want %d (weight %d, first digit %d)", d, got, want, w, f)
		}
	}
}
