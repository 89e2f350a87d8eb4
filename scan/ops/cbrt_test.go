package ops

import (
	"math"
	"strconv"
	"testing"
)

// TestCbrtAsPostgres: cbrt answers PostgreSQL 15's cbrt (Debian 12's GNU C library) to the
// last bit, where Go's math.Cbrt differs: values read from PostgreSQL 15.18 (SELECT
// cbrt(x)::text), among them exact cubes the C library misses by one unit in the last place.
func TestCbrtAsPostgres(t *testing.T) {
	for x, want := range map[float64]string{
		27: "3.0000000000000004", -1998: "-12.595009361425225", -1: "-1", 0.37: "0.7179054352068318", 1e-07: "0.004641588833612778",
		1e308: "4.64158883361278e+102", 5e-324: "1.7031839360032601e-108", 123456789012345: "49793.38592347714",
	} {
		if got := strconv.FormatFloat(cbrt(x), 'g', -1, 64); got != want {
			t.Errorf("cbrt(%v) = %s, PostgreSQL %s", x, got, want)
		}
	}
	for _, x := range []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1)} {
		if got := cbrt(x); got != x || math.Signbit(got) != math.Signbit(x) {
			t.Errorf("cbrt(%v) = %v", x, got)
		}
	}
	if !math.IsNaN(cbrt(math.NaN())) {
		t.Error("cbrt(NaN) is not NaN")
	}
}
