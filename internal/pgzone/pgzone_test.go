package pgzone

import (
	"errors"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/flightsrv/flightsrv/internal/fuzzcount"
)

// TestOffsetOfWall: PostgreSQL's resolution of a wall-clock time in America/New_York: a time
// in the spring-forward gap takes the offset before it (EST), one in the fall-back overlap the
// offset after it (EST); others their only offset. The expected instants are PostgreSQL 15's
// answers to TIMESTAMP '…' AT TIME ZONE 'America/New_York' (e2e's TestTimeZonesAsPostgres
// checks them against a running server).
func TestOffsetOfWall(t *testing.T) {
	z, err := Lookup("america/new_york")
	if err != nil {
		t.Fatal(err)
	}
	for wall, want := range map[string]string{
		"2018-03-11T02:30:00Z": "2018-03-11T07:30:00Z", // gap: EST
		"2018-11-04T01:30:00Z": "2018-11-04T06:30:00Z", // overlap: EST (after)
		"2018-07-01T12:00:00Z": "2018-07-01T16:00:00Z", // EDT
		"2018-01-01T00:00:00Z": "2018-01-01T05:00:00Z", // EST
	} {
		w, _ := time.Parse(time.RFC3339, wall)
		got := time.Unix(w.Unix()-z.OffsetOfWall(w.Unix()), 0).UTC().Format(time.RFC3339)
		if got != want {
			t.Errorf("%s: %s, want %s", wall, got, want)
		}
	}
}

// TestLookup: the forms read, their offsets, and the refusals.
func TestLookup(t *testing.T) {
	for name, east := range map[string]int64{"UTC": 0, "z": 0, "+05": -5 * 3600, "UTC+5": -5 * 3600, "gmt-2": 2 * 3600, "-03:30": 3*3600 + 1800, "PST": -8 * 3600,
		// POSIX TZ offsets PostgreSQL 15 reads (AT TIME ZONE 'ABC-5:30' is 5:30 east).
		"5": -5 * 3600, "EST5": -5 * 3600, "ab5": -5 * 3600, "ABC-5:30": 5*3600 + 1800, "ABC5:30:15": -(5*3600 + 30*60 + 15),
		// Regionless IANA zones, in January (standard time).
		"EST5EDT": -5 * 3600, "pst8pdt": -8 * 3600, "CST6CDT": -6 * 3600, "MST7MDT": -7 * 3600} {
		z, err := Lookup(name)
		if err != nil || z.OffsetAt(0) != east {
			t.Errorf("%s: %v %v, want %d", name, z.OffsetAt(0), err, east)
		}
	}
	for name, want := range map[string]error{"CET": ErrUnsupported, "Japan": ErrUnsupported, "Mars/Base": ErrUnknown, "": ErrUnknown, "../etc/passwd": ErrUnknown, "+99": ErrUnsupported, "ABC5X": ErrUnsupported, "EST5EDT4,M3.2.0,M11.1.0": ErrUnsupported} {
		if _, err := Lookup(name); !errors.Is(err, want) {
			t.Errorf("%q: %v, want %v", name, err, want)
		}
	}
}

// FuzzZoneLookup runs arbitrary zone names (a client's text) and specs (a client plan's
// enumeration) through Lookup and ParseSpec: no panic; a zone resolved writes a Spec that
// reads back to the same offsets; the conversions of an instant and back agree outside
// transitions.
func FuzzZoneLookup(f *testing.F) {
	for _, s := range []string{"America/New_York", "utc", "+05", "UTC-3:30", "iana:Europe/Paris", "fixed:3600", "EST", "Etc/GMT+5", "EST5EDT", "iana:PST8PDT", "abc-5:30", "fixed:x", "iana:../x"} {
		f.Add(s, int64(984182400))
	}
	f.Fuzz(func(t *testing.T, name string, sec int64) {
		fuzzcount.Add()
		if !utf8.ValidString(name) {
			return
		}
		sec %= 1 << 40
		for _, parse := range []func(string) (Zone, error){Lookup, ParseSpec} {
			z, err := parse(name)
			if err != nil {
				continue
			}
			back, err := ParseSpec(z.Spec())
			if err != nil {
				t.Fatalf("%q: spec %q does not read back: %v", name, z.Spec(), err)
			}
			if back.OffsetAt(sec) != z.OffsetAt(sec) {
				t.Fatalf("%q: offsets differ through its spec", name)
			}
			wall := sec + z.OffsetAt(sec)
			if off := z.OffsetOfWall(wall); off != z.OffsetAt(sec) && z.OffsetAt(wall-off) != off {
				t.Fatalf("%q: wall %d resolves to offset %d, which the instant does not have", name, wall, off)
			}
		}
	})
}
