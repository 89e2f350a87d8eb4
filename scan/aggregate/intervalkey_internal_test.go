package aggregate

import (
	"math/big"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

// TestIntervalSpanKey: the key is interval_cmp_value's span (months of 30 days, days of 24
// hours) exactly, computed here with math/big, so intervals PostgreSQL calls equal share it.
func TestIntervalSpanKey(t *testing.T) {
	span := func(v arrow.MonthDayNanoInterval) *big.Int {
		d := new(big.Int).Mul(big.NewInt(int64(v.Months)), big.NewInt(30))
		d.Add(d, big.NewInt(int64(v.Days)))
		d.Mul(d, big.NewInt(86_400_000_000_000))
		return d.Add(d, big.NewInt(v.Nanoseconds))
	}
	key := func(v arrow.MonthDayNanoInterval) *big.Int {
		lo, hi := intervalSpanKey(v)
		k := new(big.Int).Lsh(big.NewInt(int64(hi)), 64)
		return k.Add(k, new(big.Int).SetUint64(lo))
	}
	const maxI32, minI32 = 1<<31 - 1, -1 << 31
	for _, v := range []arrow.MonthDayNanoInterval{
		{}, {Months: 1}, {Days: 30}, {Nanoseconds: 720 * 3600e9}, {Months: -1, Days: 30}, {Days: -1, Nanoseconds: 86400e9},
		{Months: maxI32, Days: maxI32, Nanoseconds: 1<<63 - 1}, {Months: minI32, Days: minI32, Nanoseconds: -1 << 63},
		{Months: 3, Days: -200, Nanoseconds: -5}, {Months: -7, Days: 12, Nanoseconds: 123456789000},
	} {
		if got, want := key(v), span(v); got.Cmp(want) != 0 {
			t.Errorf("%+v: key %s, span %s", v, got, want)
		}
	}
	if a, b := key(arrow.MonthDayNanoInterval{Months: 1}), key(arrow.MonthDayNanoInterval{Days: 30}); a.Cmp(b) != 0 {
		t.Errorf("1 mon and 30 days differ: %s, %s", a, b)
	}
}
