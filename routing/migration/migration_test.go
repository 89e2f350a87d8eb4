package migration

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

var (
	m4 = Migration{Version: 4, Name: "first", SQL: "first", LegacyChecksums: []string{Checksum("first, as written elsewhere")}}
	m5 = Migration{Version: 5, Name: "second", SQL: "second"}
	m6 = Migration{Version: 6, Name: "third", SQL: "third"}
)

func applied(ms ...Migration) []Applied {
	out := make([]Applied, len(ms))
	for i, m := range ms {
		out[i] = Applied{Version: m.Version, Name: m.Name, Checksum: m.Checksum()}
	}
	return out
}

func versions(ms []Migration) []int64 {
	out := []int64{}
	for _, m := range ms {
		out = append(out, m.Version)
	}
	return out
}

func TestChecksumIsLowercaseHexSHA256(t *testing.T) {
	t.Parallel()
	// SHA-256("abc") from FIPS 180-2, appendix B.1.
	const want = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
	if got := Checksum("abc"); got != want {
		t.Fatalf("Checksum(abc) = %s, want %s", got, want)
	}
	if got := (Migration{SQL: "abc"}).Checksum(); got != want {
		t.Fatalf("Migration.Checksum = %s, want %s", got, want)
	}
}

func TestPlanPending(t *testing.T) {
	t.Parallel()
	known := []Migration{m4, m5, m6}
	for _, tc := range []struct {
		name    string
		applied []Applied
		want    []int64
	}{
		{"empty history plans everything", nil, []int64{4, 5, 6}},
		{"prefix applied", applied(m4), []int64{5, 6}},
		{"unordered prefix applied", applied(m5, m4), []int64{6}},
		{"all applied", applied(m4, m5, m6), []int64{}},
		{"legacy checksum accepted", []Applied{{Version: 4, Name: "first", Checksum: m4.LegacyChecksums[0]}}, []int64{5, 6}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Plan(known, tc.applied)
			if err != nil {
				t.Fatalf("Plan: %v", err)
			}
			if !reflect.DeepEqual(versions(got), tc.want) {
				t.Fatalf("pending = %v, want %v", versions(got), tc.want)
			}
		})
	}
}

func TestPlanErrors(t *testing.T) {
	t.Parallel()
	known := []Migration{m4, m5}
	drifted := applied(m4)
	drifted[0].Checksum = strings.Repeat("0", 64)
	renamed := applied(m4)
	renamed[0].Name = "other"
	for _, tc := range []struct {
		name    string
		known   []Migration
		applied []Applied
		check   func(t *testing.T, err error)
	}{
		{"historical version", known, []Applied{{Version: 3, Name: "v3", Checksum: "x"}}, func(t *testing.T, err error) {
			var e *UnsupportedHistoricalVersionError
			if !errors.As(err, &e) || e.Version != 3 || e.FirstSupported != 4 {
				t.Fatalf("got %v", err)
			}
		}},
		{"future version", known, []Applied{{Version: 6, Name: "future", Checksum: strings.Repeat("0", 64)}}, func(t *testing.T, err error) {
			var e *FutureVersionError
			if !errors.As(err, &e) || e.Version != 6 || e.LatestSupported != 5 {
				t.Fatalf("got %v", err)
			}
		}},
		{"gap", known, applied(m5), func(t *testing.T, err error) {
			var e *GapError
			if !errors.As(err, &e) || e.Missing != 4 || e.Present != 5 {
				t.Fatalf("got %v", err)
			}
		}},
		{"gap in a longer history", []Migration{m4, m5, m6}, applied(m4, m6), func(t *testing.T, err error) {
			var e *GapError
			if !errors.As(err, &e) || e.Missing != 5 || e.Present != 6 {
				t.Fatalf("got %v", err)
			}
		}},
		{"duplicate", known, append(applied(m4), applied(m4)...), func(t *testing.T, err error) {
			var e *DuplicateVersionError
			if !errors.As(err, &e) || e.Version != 4 {
				t.Fatalf("got %v", err)
			}
		}},
		{"checksum drift", known, drifted, func(t *testing.T, err error) {
			var e *ChecksumDriftError
			if !errors.As(err, &e) || e.Version != 4 || e.ActualChecksum != strings.Repeat("0", 64) || e.ExpectedChecksum != m4.Checksum() {
				t.Fatalf("got %v", err)
			}
		}},
		{"name drift", known, renamed, func(t *testing.T, err error) {
			var e *ChecksumDriftError
			if !errors.As(err, &e) || e.ActualName != "other" || e.ExpectedName != "first" {
				t.Fatalf("got %v", err)
			}
		}},
		{"legacy checksum of another version is drift", known, []Applied{{Version: 4, Name: "first", Checksum: m4.Checksum()}, {Version: 5, Name: "second", Checksum: m4.LegacyChecksums[0]}}, func(t *testing.T, err error) {
			var e *ChecksumDriftError
			if !errors.As(err, &e) || e.Version != 5 {
				t.Fatalf("got %v", err)
			}
		}},
		{"no known migrations", nil, nil, func(t *testing.T, err error) {
			if err == nil {
				t.Fatal("Plan accepted an empty migration list")
			}
		}},
		{"non-consecutive known migrations", []Migration{m4, m6}, nil, func(t *testing.T, err error) {
			if err == nil || !strings.Contains(err.Error(), "does not follow") {
				t.Fatalf("got %v", err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pending, err := Plan(tc.known, tc.applied)
			if err == nil {
				t.Fatalf("Plan = %v, want an error", versions(pending))
			}
			tc.check(t, err)
		})
	}
}

func TestErrorMessages(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		err  error
		want string
	}{
		{&PendingError{Versions: []int64{4, 5}}, "missing required migration versions 4, 5"},
		{&MissingColumnError{Table: "t", Column: "c"}, "table t is missing required column c"},
		{&PrimaryKeyMismatchError{Table: "t", Expected: []string{"a", "b"}, Actual: []string{"b", "a"}}, "primary key (b, a), expected (a, b)"},
	} {
		if !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("%T: %q does not contain %q", tc.err, tc.err.Error(), tc.want)
		}
	}
}
