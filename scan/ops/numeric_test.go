package ops_test

import (
	"errors"
	"math/big"
	"strings"
	"testing"

	"github.com/flightsrv/flightsrv/internal/fuzzcount"
	"github.com/flightsrv/flightsrv/scan/ops"
)

// TestParseNumeric: text read as PostgreSQL's numeric_in reads it (PostgreSQL 15's answers
// for each input, value and display scale).
func TestParseNumeric(t *testing.T) {
	for in, want := range map[string]string{
		"1.50": "1.50", "  -3.5e1 ": "-35", "1e2": "100", ".5": "0.5", "5.": "5", "+0.010": "0.010",
		"-0.0": "0.0", "1.5E-3": "0.0015", "0": "0", "00012.30": "12.30",
	} {
		d, s, err := ops.ParseNumeric(in)
		if err != nil {
			t.Errorf("%q: %v", in, err)
			continue
		}
		if got := ops.NumericText(d, s); got != want {
			t.Errorf("%q: %s, PostgreSQL %s", in, got, want)
		}
	}
	for in, code := range map[string]string{
		"abc": "22P02", "": "22P02", "1.2.3": "22P02", "--1": "22P02", "1e": "22P02", "1 2": "22P02",
		"NaN": "0A000", "-Infinity": "0A000", " inf ": "0A000", "+NaN": "22P02", "--inf": "22P02", "0x1A": "22P02", ".": "22P02", "e5": "22P02",
	} {
		_, _, err := ops.ParseNumeric(in)
		var de *ops.DataError
		if !errors.As(err, &de) || de.Code != code {
			t.Errorf("%q: %v, want SQLSTATE %s", in, err, code)
		}
	}
}

// FuzzNumericText: any text either reads as a number equal to math/big's reading of it, whose
// text form reads back to the same value and scale, or fails with a data error (22P02 or
// 22003, or 0A000 for NaN and infinities) that quotes none of it; it never panics.
func FuzzNumericText(f *testing.F) {
	for _, s := range []string{"1.50", " -3.5e1 ", ".5", "5.", "1e400", "-0.0", "NaN", "1_000", "١٢", "1e-99999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fuzzcount.Add()
		d, scale, err := ops.ParseNumeric(s)
		if err != nil {
			var de *ops.DataError
			if !errors.As(err, &de) || (de.Code != "22P02" && de.Code != "22003" && de.Code != "0A000") {
				t.Fatalf("%q: %v", s, err)
			}
			if len(strings.TrimSpace(s)) > 3 && strings.Contains(de.Msg, strings.TrimSpace(s)) {
				t.Fatalf("%q: the message quotes the input", s)
			}
			return
		}
		if scale > 2000 || d.Exponent < -2000 {
			return // beyond what NumericText writes in reasonable space
		}
		text := ops.NumericText(d, scale)
		r, ok := new(big.Rat).SetString(strings.TrimSpace(s))
		back, ok2 := new(big.Rat).SetString(text)
		if !ok || !ok2 || r.Cmp(back) != 0 {
			t.Fatalf("%q reads as %s (math/big: %v)", s, text, r)
		}
		d2, scale2, err := ops.ParseNumeric(text)
		if err != nil || scale2 != scale || d2.Cmp(d) != 0 {
			t.Fatalf("%q: %s reads back as %v scale %d (%v)", s, text, d2, scale2, err)
		}
	})
}
