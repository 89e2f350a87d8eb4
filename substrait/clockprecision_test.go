package substrait

import (
	"testing"
	"time"
)

// TestStatementClockPrecision: CURRENT_TIMESTAMP(p) and LOCALTIMESTAMP(p) round the
// statement's instant as PostgreSQL's AdjustTimestampForTypmod rounds a timestamp(p): half a
// unit rounds away from 2000-01-01 (the values are PostgreSQL 15's casts of the same instants
// to timestamp(p)); no precision, and precisions past 6, keep the microseconds.
func TestStatementClockPrecision(t *testing.T) {
	t.Parallel()
	at := func(s string) time.Time {
		v, err := time.Parse("2006-01-02 15:04:05.999999", s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, c := range []struct {
		in     string
		typmod int32
		want   string
	}{
		{"2026-12-07 05:50:51.72651", 3, "2026-12-07 05:50:51.727"},
		{"2026-12-07 05:50:51.5", 0, "2026-12-07 05:50:52"},
		{"2026-12-07 05:50:51.499999", 0, "2026-12-07 05:50:51"},
		{"2026-12-07 05:50:51.999999", 5, "2026-12-07 05:50:52"},
		{"2026-12-07 05:50:51.123456", -1, "2026-12-07 05:50:51.123456"},
		{"2026-12-07 05:50:51.123456", 6, "2026-12-07 05:50:51.123456"},
		{"2026-12-07 05:50:51.123456", 9, "2026-12-07 05:50:51.123456"},
		{"2000-01-01 00:00:00.5", 0, "2000-01-01 00:00:01"},
		{"1999-12-31 23:59:59.5", 0, "1999-12-31 23:59:59"},
		{"1999-12-31 23:59:59.45", 1, "1999-12-31 23:59:59.4"},
		{"1960-01-01 00:00:00.25", 1, "1960-01-01 00:00:00.2"},
	} {
		got := time.Unix(0, statementClockAt(at(c.in), c.typmod)).UTC().Format("2006-01-02 15:04:05.999999")
		if got != c.want {
			t.Errorf("%s (%d): %s, want %s", c.in, c.typmod, got, c.want)
		}
	}
}
