package archive

import (
	"encoding/binary"
	"math"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go/format"

	"github.com/flightsrv/flightsrv/routing"
)

func le64(v int64) []byte { return binary.LittleEndian.AppendUint64(nil, uint64(v)) }

func ptr[T any](v T) *T { return &v }

// TestStatisticsTrustRules checks each trust rule on synthetic footers: which statistics may
// classify a row group or page, and when "inside" may answer.
func TestStatisticsTrustRules(t *testing.T) {
	t.Parallel()
	bucket := unitRange{lo: 1000, hi: 2000}
	want := unitRange{lo: 1100, hi: 1900}
	good := func() *rawStatistics {
		return &rawStatistics{MinValue: le64(1200), MaxValue: le64(1300), NullCount: ptr(int64(0))}
	}
	logicalReq := tsColumn{logical: true, required: true, unit: 1}
	cases := []struct {
		name    string
		ts      tsColumn
		orderOK bool
		stats   *rawStatistics
		trusted bool
		class   class
		n       int64
	}{
		{"exact bounds answer", logicalReq, true, good(), true, inside, 10},
		{"absent statistics", logicalReq, true, nil, false, straddle, 0},
		{"converted type only", tsColumn{required: true, unit: 1_000_000}, true, good(), false, straddle, 0},
		{"INT96", tsColumn{logical: true, int96: true, required: true, unit: 1}, true, good(), false, straddle, 0},
		{"no type-defined order", logicalReq, false, good(), false, straddle, 0},
		{"truncated min", logicalReq, true, &rawStatistics{MinValue: le64(1200)[:4], MaxValue: le64(1300)}, false, straddle, 0},
		{"deprecated fields only", logicalReq, true, &rawStatistics{}, false, straddle, 0},
		{"min flagged inexact", logicalReq, true, &rawStatistics{MinValue: le64(1200), MaxValue: le64(1300), IsMinValueExact: ptr(false)}, false, straddle, 0},
		{"max flagged exact", logicalReq, true, &rawStatistics{MinValue: le64(1200), MaxValue: le64(1300), IsMaxValueExact: ptr(true)}, true, inside, 10},
		{"reversed bounds", logicalReq, true, &rawStatistics{MinValue: le64(1300), MaxValue: le64(1200)}, false, straddle, 0},
		{"bounds outside the bucket", logicalReq, true, &rawStatistics{MinValue: le64(0), MaxValue: le64(0)}, false, straddle, 0},
		{"optional, null count absent: no inside answer", tsColumn{logical: true, unit: 1}, true, &rawStatistics{MinValue: le64(1200), MaxValue: le64(1300)}, true, straddle, 0},
		{"optional, null count known", tsColumn{logical: true, unit: 1}, true, &rawStatistics{MinValue: le64(1200), MaxValue: le64(1300), NullCount: ptr(int64(3))}, true, inside, 7},
		{"outside the range", logicalReq, true, &rawStatistics{MinValue: le64(1900), MaxValue: le64(1999)}, true, outside, 0},
		{"straddling the range", logicalReq, true, &rawStatistics{MinValue: le64(1050), MaxValue: le64(1300)}, true, straddle, 0},
	}
	for _, c := range cases {
		ts := c.ts
		ft := &footer{ts: &ts, orderOK: c.orderOK, groups: []groupInfo{{numRows: 10, tsStats: c.stats}}}
		b, ok := ft.groupBounds(0, bucket)
		if ok != c.trusted {
			t.Errorf("%s: trusted = %v, want %v", c.name, ok, c.trusted)
			continue
		}
		cls, n := straddle, int64(0)
		if ok {
			cls, n = b.classify(want, 10)
		}
		if cls != c.class || n != c.n {
			t.Errorf("%s: classify = %v, %d; want %v, %d", c.name, cls, n, c.class, c.n)
		}
	}

	// Page level: null pages hold nothing; page bounds follow the same rules.
	ci := &format.ColumnIndex{
		NullPages:  []bool{false, true, false, false},
		MinValues:  [][]byte{le64(1200), nil, le64(1300)[:4], le64(1500)},
		MaxValues:  [][]byte{le64(1250), nil, le64(1400), le64(1400)},
		NullCounts: []int64{0, 5, 0, 0},
	}
	ts := tsColumn{logical: true, unit: 1}
	ft := &footer{ts: &ts, orderOK: true, groups: []groupInfo{{numRows: 20, tsIndex: ci}}}
	for p, want := range []struct {
		ok  bool
		cls class
	}{{true, inside}, {true, outside}, {false, straddle}, {false, straddle}} {
		b, ok := ft.pageBounds(0, p, bucket)
		cls := straddle
		if ok {
			cls, _ = b.classify(unitRange{1100, 1900}, 5)
		}
		if ok != want.ok || cls != want.cls {
			t.Errorf("page %d: trusted %v class %v; want %v %v", p, ok, cls, want.ok, want.cls)
		}
	}
}

func TestUnitConversions(t *testing.T) {
	t.Parallel()
	at := time.Date(2024, 1, 1, 0, 0, 0, 1_500_000, time.UTC) // 1.5 ms after midnight
	ms := tsColumn{unit: 1_000_000}
	r := ms.unitRange(routing.TimeRange{Start: at, End: at.Add(time.Millisecond)})
	// Values are whole milliseconds: the first one not before 1.5 ms is 2 ms.
	if base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli(); r.lo != base+2 || r.hi != base+3 {
		t.Fatalf("ms range = %+v", r)
	}
	before := time.Date(1960, 1, 1, 0, 0, 0, 1, time.UTC)
	if got := ceilUnits(before, 1_000); got != before.UnixMicro()+1 {
		t.Fatalf("ceilUnits before the epoch = %d, want %d", got, before.UnixMicro()+1)
	}
	if got := ceilUnits(time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC), 1); got != math.MaxInt64 {
		t.Fatalf("ceilUnits beyond int64 nanoseconds = %d", got)
	}
	t96 := time.Date(2023, 7, 4, 13, 14, 15, 123456789, time.UTC)
	if got := int96Nanos(toInt96(t96)); got != t96.UnixNano() {
		t.Fatalf("int96Nanos = %d, want %d", got, t96.UnixNano())
	}
}
