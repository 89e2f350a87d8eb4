package substrait

import (
	"errors"
	"testing"
	"time"
)

func TestParseTimestamp(t *testing.T) {
	t.Parallel()
	utc := func(y int, mo time.Month, d, h, mi, s, ns int) time.Time {
		return time.Date(y, mo, d, h, mi, s, ns, time.UTC)
	}
	tests := []struct {
		in   string
		want time.Time
	}{
		{"2026-01-01T00:00:00Z", utc(2026, 1, 1, 0, 0, 0, 0)},
		{"2026-01-01", utc(2026, 1, 1, 0, 0, 0, 0)},
		{" 2026-01-01 ", utc(2026, 1, 1, 0, 0, 0, 0)},
		{"2026-01-01 10:30", utc(2026, 1, 1, 10, 30, 0, 0)},
		{"2026-01-01t10:30:05", utc(2026, 1, 1, 10, 30, 5, 0)},
		{"2026-01-01T10:30:05.5", utc(2026, 1, 1, 10, 30, 5, 500_000_000)},
		{"2026-01-01T10:30:05.123456789Z", utc(2026, 1, 1, 10, 30, 5, 123_456_789)},
		{"2026-01-01T10:30:05+02", utc(2026, 1, 1, 8, 30, 5, 0)},
		{"2026-01-01T10:30:05+0230", utc(2026, 1, 1, 8, 0, 5, 0)},
		{"2026-01-01T10:30:05-05:00", utc(2026, 1, 1, 15, 30, 5, 0)},
		{"2026-01-01 00:00:00 +01:00", utc(2025, 12, 31, 23, 0, 0, 0)},
		{"2026-01-01 00:00:00 UTC", utc(2026, 1, 1, 0, 0, 0, 0)},
		{"2026-01-01 00:00:00gmt", utc(2026, 1, 1, 0, 0, 0, 0)},
		{"2024-02-29T23:59:59.999999999z", utc(2024, 2, 29, 23, 59, 59, 999_999_999)},
		{"1969-12-31T23:59:59Z", utc(1969, 12, 31, 23, 59, 59, 0)},
	}
	for _, tt := range tests {
		got, err := ParseTimestamp(tt.in)
		if err != nil || !got.Equal(tt.want) || got.Location() != time.UTC {
			t.Errorf("ParseTimestamp(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
	bad := []string{"", "yesterday", "infinity", "-infinity", "epoch", "now", "2026", "2026-1-01",
		"2026-13-01", "2026-02-29", "2026-01-32", "2026-01-01T24:00:00", "2026-01-01T10:60",
		"2026-01-01T10:30:61", "2026-01-01T10:30:05.", "2026-01-01T10:30:05.1234567890",
		"2026-01-01T10", "2026-01-01T10:30 Europe/Paris", "2026-01-01T10:30+16", "2026-01-01T10:30+02:60",
		"2026-01-01T10:30Zjunk", "2026-01-01 10:30 +", "2026-01-01T10:30:05 Z Z"}
	for _, s := range bad {
		if _, err := ParseTimestamp(s + "x"); err == nil {
			t.Errorf("ParseTimestamp(%q) succeeded", s+"x")
		}
		if _, err := ParseTimestamp(s); !errors.Is(err, ErrInvalidTimestampLiteral) {
			t.Errorf("ParseTimestamp(%q) error = %v, want ErrInvalidTimestampLiteral", s, err)
		}
	}
	for _, s := range []string{"1677-09-21T00:00:00Z", "2262-04-12T00:00:00Z", "9999-12-31"} {
		if _, err := ParseTimestamp(s); !errors.Is(err, ErrTimestampOutOfRange) {
			t.Errorf("ParseTimestamp(%q) error = %v, want ErrTimestampOutOfRange", s, err)
		}
	}
	if _, err := parseDate("2026-01-01T00:00:00Z"); !errors.Is(err, ErrInvalidTimestampLiteral) {
		t.Errorf("parseDate with a time: %v", err)
	}
}
