package ops

import (
	"errors"
	"testing"
)

// TestMakeDateDays: makeDate's days from 1970-01-01 are PostgreSQL 15's (make_date(y, m, d) -
// DATE '1970-01-01' over the same fields, BC years and leap years of the proleptic calendar
// among them), and the fields PostgreSQL refuses are its 22008.
func TestMakeDateDays(t *testing.T) {
	for _, c := range []struct{ y, m, d, days int64 }{
		{-44, 3, 15, -735160}, {2000, 2, 29, 11016}, {5874897, 12, 31, 2145042905}, {-4713, 11, 24, -2440222},
		{-1, 12, 31, -719163}, {1, 1, 1, -719162},
	} {
		got, err := makeDate(c.y, c.m, c.d)
		if err != nil || got != c.days {
			t.Errorf("make_date(%d, %d, %d) = %d, %v; PostgreSQL %d", c.y, c.m, c.d, got, err, c.days)
		}
	}
	for _, c := range [][3]int64{{-5, 2, 29}, {-1, 2, 29}, {-4713, 11, 23}} {
		if _, err := makeDate(c[0], c[1], c[2]); err != nil {
			t.Errorf("make_date%v: %v; PostgreSQL answers", c, err)
		}
	}
	for _, c := range []struct {
		f   [3]int64
		msg string
	}{
		{[3]int64{2013, 2, 30}, "date field value out of range"}, {[3]int64{0, 2, 3}, "date field value out of range"},
		{[3]int64{2013, 13, 1}, "date field value out of range"}, {[3]int64{2001, 2, 29}, "date field value out of range"},
		{[3]int64{-4714, 11, 23}, "date out of range"}, {[3]int64{5874898, 1, 1}, "date out of range"},
		{[3]int64{1 << 40, 1, 1}, "date out of range"},
	} {
		_, err := makeDate(c.f[0], c.f[1], c.f[2])
		var de *DataError
		if !errors.As(err, &de) || de.Code != "22008" || de.Msg != c.msg {
			t.Errorf("make_date%v: %v, want 22008 %q", c.f, err, c.msg)
		}
	}
}

// TestTranslateText: translate's characters are PostgreSQL 15's answers to the same calls.
func TestTranslateText(t *testing.T) {
	for _, c := range [][4]string{
		{"héllo wörld", "öléo", "OL", "hLL wOrLd"}, {"aaa", "a", "", ""}, {"abc", "", "x", "abc"}, {"abcabc", "abb", "x", "xcxc"},
	} {
		if got, _ := translateText(nil, c[0], c[1], c[2]); got != c[3] {
			t.Errorf("translate(%q, %q, %q) = %q, PostgreSQL %q", c[0], c[1], c[2], got, c[3])
		}
	}
}

// TestWidthBucket: widthBucket's buckets are PostgreSQL 15's answers to the same calls (its
// rounding at the last bucket's edge, downward buckets, an overflowing width).
func TestWidthBucket(t *testing.T) {
	for _, c := range []struct {
		op, lo, hi  float64
		count, want int32
	}{
		{5, 0, 10, 5, 3}, {0.3, 0, 0.3, 3, 4}, {0.30000000000000004, 0, 0.3, 3, 4}, {0.9999999999999999, 0, 1, 2147483646, 2147483646}, {2.9999999999999996, 0, 3, 3, 3}, {-5, 10, -10, 7, 6},
		{5, 0, 10, 2147483646, 1073741824}, {0, -1e308, 1e308, 10, -2147483648}, {-1, 0, 10, 5, 0},
	} {
		got, err := widthBucket(c.op, c.lo, c.hi, c.count)
		if err != nil || got != c.want {
			t.Errorf("width_bucket(%v, %v, %v, %d) = %d, %v; PostgreSQL %d", c.op, c.lo, c.hi, c.count, got, err, c.want)
		}
	}
}
