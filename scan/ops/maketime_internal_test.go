package ops

import (
	"errors"
	"math"
	"testing"
	"time"
)

// TestMakeTimestamp: make_timestamp's instants, computed independently with time.Date, and
// its 22008s where PostgreSQL raises them (float_time_overflows, ValidateDate, the range).
func TestMakeTimestamp(t *testing.T) {
	at := func(y, mo, d, h, mi, s, ns int) int64 {
		return time.Date(y, time.Month(mo), d, h, mi, s, ns, time.UTC).UnixNano()
	}
	for _, c := range []struct {
		y, mo, d, h, mi int64
		sec             float64
		want            int64
		err             string
	}{
		{2001, 2, 3, 4, 5, 6.5, at(2001, 2, 3, 4, 5, 6, 500000000), ""},
		{2001, 2, 3, 24, 0, 0, at(2001, 2, 4, 0, 0, 0, 0), ""},
		{2001, 2, 3, 23, 59, 60, at(2001, 2, 4, 0, 0, 0, 0), ""},
		{2001, 2, 3, 4, 5, 59.9999996, at(2001, 2, 3, 4, 6, 0, 0), ""}, // rounds up to 60
		{2001, 2, 3, 4, 5, 60.0000004, at(2001, 2, 3, 4, 6, 0, 0), ""}, // rounds down to 60
		{2001, 2, 3, 4, 5, -0.0000001, at(2001, 2, 3, 4, 5, 0, 0), ""},
		{2000, 2, 29, 0, 0, 0, at(2000, 2, 29, 0, 0, 0, 0), ""},
		{1677, 9, 22, 0, 0, 0, at(1677, 9, 22, 0, 0, 0, 0), ""},
		{2001, 2, 29, 0, 0, 0, 0, "date field value out of range"},
		{0, 1, 1, 0, 0, 0, 0, "date field value out of range"},
		{2001, 13, 1, 0, 0, 0, 0, "date field value out of range"},
		{2001, 2, 3, 24, 0, 0.5, 0, "time field value out of range"},
		{2001, 2, 3, 23, 60, 0, 0, "time field value out of range"},
		{2001, 2, 3, -1, 0, 0, 0, "time field value out of range"},
		{2001, 2, 3, 4, 5, -0.1, 0, "time field value out of range"},
		{2001, 2, 3, 4, 5, 60.000001, 0, "time field value out of range"},
		{2001, 2, 3, 4, 5, math.NaN(), 0, "time field value out of range"},
		{2001, 2, 3, 4, 5, math.Inf(1), 0, "time field value out of range"},
		{2300, 1, 1, 0, 0, 0, 0, "timestamp out of range"},
		{-44, 3, 15, 0, 0, 0, 0, "timestamp out of range"},
	} {
		got, err := makeTimestamp(c.y, c.mo, c.d, c.h, c.mi, c.sec)
		var de *DataError
		switch {
		case c.err != "":
			if !errors.As(err, &de) || de.Code != "22008" || de.Msg != c.err {
				t.Errorf("make_timestamp(%d, %d, %d, %d, %d, %v): %v, want 22008 %s", c.y, c.mo, c.d, c.h, c.mi, c.sec, err, c.err)
			}
		case err != nil || got != c.want:
			t.Errorf("make_timestamp(%d, %d, %d, %d, %d, %v) = %d, %v, want %d", c.y, c.mo, c.d, c.h, c.mi, c.sec, got, err, c.want)
		}
	}
}

// TestEpochSecondsToNanos: to_timestamp(double precision)'s rounding to the microsecond and
// its errors.
func TestEpochSecondsToNanos(t *testing.T) {
	for secs, want := range map[float64]int64{0: 0, 1.5: 1_500_000_000, -1.5: -1_500_000_000, 986083200: 986083200_000_000_000, 0.0000015: 2000, 1e-7: 0} {
		if got, err := EpochSecondsToNanos(secs); err != nil || got != want {
			t.Errorf("to_timestamp(%v) = %d, %v, want %d", secs, got, err, want)
		}
	}
	for secs, code := range map[float64]string{math.NaN(): "22008", 1e10: "22008", 1e300: "22008", -1e12: "22008", math.Inf(1): "0A000", math.Inf(-1): "0A000"} {
		var de *DataError
		if _, err := EpochSecondsToNanos(secs); !errors.As(err, &de) || de.Code != code {
			t.Errorf("to_timestamp(%v): %v, want %s", secs, err, code)
		}
	}
}
