package scan

import (
	"testing"

	"github.com/flightsrv/flightsrv/scan/shred"
)

// TestShredPruneAdmits checks a prunable filter's decision against every column a range
// allows, over small integers: a range admits `v op lit` exactly when some v between its least
// and greatest value passes it (both ends are values of the column); a range of no value
// admits nothing, and an unknown operator everything.
func TestShredPruneAdmits(t *testing.T) {
	pass := map[string]func(v, lit int64) bool{
		"gt": func(v, l int64) bool { return v > l }, "gte": func(v, l int64) bool { return v >= l },
		"lt": func(v, l int64) bool { return v < l }, "lte": func(v, l int64) bool { return v <= l },
		"equal": func(v, l int64) bool { return v == l },
	}
	for op, f := range pass {
		for lo := int64(-3); lo <= 3; lo++ {
			for hi := lo; hi <= 3; hi++ {
				for lit := int64(-5); lit <= 5; lit++ {
					want := false
					for v := lo; v <= hi; v++ {
						want = want || f(v, lit)
					}
					p := shredPrune{op: op, lit: lit}
					if got := p.admits(shred.Range{Known: true, Min: lo, Max: hi}); got != want {
						t.Errorf("[%d, %d] %s %d: admits %v, want %v", lo, hi, op, lit, got, want)
					}
					if p.admits(shred.Range{Known: true, Empty: true}) {
						t.Errorf("%s %d: a column of no value admitted", op, lit)
					}
				}
			}
		}
		if flipped[flipped[op]] != op {
			t.Errorf("flipped twice %s: %s", op, flipped[flipped[op]])
		}
	}
	if !(shredPrune{op: "not_equal", lit: 1}).admits(shred.Range{Known: true, Min: 1, Max: 1}) {
		t.Error("an operator pruning does not know pruned")
	}
}
