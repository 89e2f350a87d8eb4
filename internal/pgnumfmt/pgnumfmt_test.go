package pgnumfmt

import (
	"math"
	"strings"
	"testing"

	"github.com/cockroachdb/apd/v3"

	"github.com/flightsrv/flightsrv/internal/fuzzcount"
)

// FuzzParse: any template parses or is refused with a *Error, and a parsed one formats any
// value of every type without panicking; a template with digit positions and no FM, RN,
// EEEE or pattern ending the output early writes at least one character per position.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"999.99", "FM999.99", "0000", "9,999.00", "FM9.9", "99G999D99", "$999", "9.", "S999", "\"x\"9", "fm0.00%",
		"999PR", "SG9.99", "9.99EEEE", "FMRN", "rn", "99TH", "9V99", "L999MI", "PL99.9", "\"a\\\"b\"9", "\\\"9", "B9C9SP", "FM0.0S"} {
		f.Add(s, "-1234.5678")
	}
	f.Fuzz(func(t *testing.T, tmpl, value string) {
		fuzzcount.Add()
		tt, err := Parse(tmpl)
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("Parse(%q): %T %v", tmpl, err, err)
			}
			return
		}
		d, _, err := apd.NewFromString(value)
		if err != nil || d.Form != apd.Finite || d.NumDigits() > 60 || d.Exponent < -60 || d.Exponent > 60 {
			return
		}
		out, err := tt.Numeric(d)
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("to_char(%s, %q): %T %v", value, tmpl, err, err)
			}
			return
		}
		fv, _ := d.Float64()
		for _, fn := range []func() (string, error){
			func() (string, error) { return tt.Float8(fv) },
			func() (string, error) { return tt.Float4(float32(fv)) },
			func() (string, error) { return tt.Int8(int64(math.Max(math.Min(fv, 1e18), -1e18))) },
			func() (string, error) { return tt.Int4(int32(math.Max(math.Min(fv, 1e9), -1e9))) },
		} {
			if _, err := fn(); err != nil {
				if _, ok := err.(*Error); !ok {
					t.Fatalf("to_char(%s, %q): %T %v", value, tmpl, err, err)
				}
			}
		}
		short := tt.d.is(fFill) || tt.d.is(fRoman) || tt.d.is(fEEEE) || tt.d.is(fMinus|fPlus) || tt.d.is(fDecimal) ||
			strings.ContainsAny(tmpl, "\x00")
		if !short && len(out) < tt.d.pre {
			t.Fatalf("to_char(%s, %q) = %q: shorter than its %d digit positions", value, tmpl, out, tt.d.pre)
		}
	})
}

// FuzzFloatIn: FloatIn never panics, fails only with a *Error of 22P02 or 22003, and reads a
// real (bits 32) as a value a real holds, the same as Go reads the same digits.
func FuzzFloatIn(f *testing.F) {
	for _, s := range []string{"1.5", " -2e3 ", "NaN", "-Infinity", "inf", "0x1p4", "0x10", "1e40", "1e-50", "1_000", "", "1e", "0.1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fuzzcount.Add()
		for _, bits := range []int{32, 64} {
			v, err := FloatIn(s, bits)
			if err != nil {
				if e, ok := err.(*Error); !ok || e.Code != "22P02" && e.Code != "22003" {
					t.Fatalf("FloatIn(%q, %d): %T %v", s, bits, err, err)
				}
				continue
			}
			if bits == 32 && !math.IsNaN(v) && float64(float32(v)) != v {
				t.Fatalf("FloatIn(%q, 32) = %v, not a real", s, v)
			}
		}
	})
}
