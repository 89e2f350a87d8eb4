package pgnumfmt

import (
	"testing"

	"github.com/cockroachdb/apd/v3"
)

// FuzzParse: any template parses or is refused, and a parsed one formats any value without
// panicking, every digit position filled (the output holds at least as many runes as the
// template has digit positions unless FM drops them).
func FuzzParse(f *testing.F) {
	for _, s := range []string{"999.99", "FM999.99", "0000", "9,999.00", "FM9.9", "99G999D99", "$999", "9.", "S999", "\"x\"9", "fm0.00%"} {
		f.Add(s, "-1234.5678")
	}
	f.Fuzz(func(t *testing.T, tmpl, value string) {
		tt, err := Parse(tmpl)
		if err != nil {
			return
		}
		d, _, err := apd.NewFromString(value)
		if err != nil || d.Form != apd.Finite || d.NumDigits() > 60 || d.Exponent < -60 || d.Exponent > 60 {
			return
		}
		out := tt.Format(d)
		if !tt.fill && len(out) < tt.pre+tt.post {
			t.Fatalf("to_char(%s, %q) = %q: shorter than its %d digit positions", value, tmpl, out, tt.pre+tt.post)
		}
	})
}
