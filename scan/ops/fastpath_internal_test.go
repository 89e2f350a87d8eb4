package ops

import (
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/flightsrv/flightsrv/internal/fuzzcount"
	"github.com/flightsrv/flightsrv/internal/pgnumfmt"
)

// FuzzShortInt checks shortInt, the fused casts' fast path for ->> text read as int4 or int8,
// against pgnumfmt.IntIn (int4in's and int8in's rules): whatever it reads, IntIn reads as the
// same value without error for both widths, and it reads every optional '-' and one to nine
// digits.
func FuzzShortInt(f *testing.F) {
	for _, s := range []string{"0", "-0", "7", "-3", "599", "999999999", "-999999999", "1000000000",
		"-2147483648", "2147483647", "+5", " 5", "5 ", "", "-", "--1", "1e3", "1.0", "0x1", "00012", "١"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fuzzcount.Add()
		v, ok := shortInt([]byte(s))
		digits := s
		if len(digits) > 0 && digits[0] == '-' {
			digits = digits[1:]
		}
		plain := len(digits) >= 1 && len(digits) <= 9
		for _, c := range []byte(digits) {
			plain = plain && c >= '0' && c <= '9'
		}
		if ok != plain {
			t.Fatalf("shortInt(%q) ok = %t, want %t", s, ok, plain)
		}
		if !ok {
			return
		}
		for _, bits := range []int{32, 64} {
			w, err := pgnumfmt.IntIn(s, bits)
			if err != nil || w != v {
				t.Fatalf("shortInt(%q) = %d; IntIn(%d) = %d, %v", s, v, bits, w, err)
			}
		}
	})
}

// TestBelow19 checks below19 against decimal128's FitsInPrecision(19) around 0, ±10^19, ±2^63,
// ±2^64 and over random values.
func TestBelow19(t *testing.T) {
	e19 := decimal128.GetScaleMultiplier(19)
	var xs []decimal128.Num
	for _, c := range []decimal128.Num{decimal128.FromI64(0), e19, e19.Negate(), decimal128.FromU64(1 << 63), decimal128.FromU64(1 << 63).Negate(),
		decimal128.New(1, 0), decimal128.New(1, 0).Negate(), decimal128.MaxDecimal128, decimal128.MaxDecimal128.Negate()} {
		for d := int64(-3); d <= 3; d++ {
			xs = append(xs, c.Add(decimal128.FromI64(d)))
		}
	}
	rng := rand.New(rand.NewPCG(10, 19))
	for range 100000 {
		xs = append(xs, decimal128.New(rng.Int64N(5)-2, rng.Uint64()))
	}
	for _, x := range xs {
		if got, want := below19(x), x.FitsInPrecision(19); got != want {
			t.Fatalf("below19(%v) = %t, want %t", x, got, want)
		}
	}
}
