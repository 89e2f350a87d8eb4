// Package pgzone resolves time zones as PostgreSQL's AT TIME ZONE and timezone(zone, ts)
// name them, and converts between instants and wall-clock times in them with PostgreSQL's
// rules for daylight-saving gaps and overlaps. The SQL binder (substrait) resolves a zone once
// at planning time and writes its Spec into the plan; the executor (scan/ops) reads the Spec
// back with ParseSpec. See docs/architecture.md ("Time zones").
//
// Zones come from Go's time zone database: the system's (as PostgreSQL's Debian build uses
// the system's) and, where the machine has none, the copy embedded in the binary by
// time/tzdata, so that a zone never fails to resolve for want of files.
//
// A Zone is immutable and safe for concurrent use.
package pgzone

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // the IANA database, for machines without /usr/share/zoneinfo
	"unicode"
)

// Zone is a time zone: a fixed offset east of UTC or an IANA zone with its rules.
type Zone struct {
	loc   *time.Location // nil for a fixed offset
	fixed int64          // seconds east of UTC, for a fixed offset
}

// ErrUnknown is a name PostgreSQL would not recognise either (its message: time zone "…" not
// recognized, SQLSTATE 22023).
var ErrUnknown = errors.New("time zone not recognized")

// ErrUnsupported is a name PostgreSQL may read as a time zone abbreviation of its
// timezone_abbreviations set (CET, IST…) or a form this package does not read: it is refused
// rather than read otherwise than PostgreSQL reads it.
var ErrUnsupported = errors.New("time zone abbreviations other than UTC, GMT, Z, EST, EDT, CST, CDT, MST, MDT, PST and PDT are not supported; name the zone (America/New_York) or a POSIX offset (UTC+5)")

// abbreviations are the zone abbreviations of PostgreSQL's default timezone_abbreviations
// ("Default" set) that this package reads, with their fixed offsets east of UTC in seconds.
// PostgreSQL looks a name up among abbreviations before zone names, so any other name without
// a region part ('CET', which is fixed +01 as an abbreviation but has summer time as a zone)
// is refused (ErrUnsupported).
var abbreviations = map[string]int64{
	"utc": 0, "gmt": 0, "z": 0, "ut": 0, "zulu": 0,
	"est": -5 * 3600, "edt": -4 * 3600, "cst": -6 * 3600, "cdt": -5 * 3600,
	"mst": -7 * 3600, "mdt": -6 * 3600, "pst": -8 * 3600, "pdt": -7 * 3600,
}

// regionless are the IANA zones without a region part that PostgreSQL reads as zone names
// (none is an abbreviation of its Default timezone_abbreviations set): the North American
// POSIX-style zones with United States daylight-saving rules, keyed by lower case.
var regionless = map[string]string{
	"est5edt": "EST5EDT", "cst6cdt": "CST6CDT", "mst7mdt": "MST7MDT", "pst8pdt": "PST8PDT",
}

// Lookup resolves name as PostgreSQL's AT TIME ZONE does in this package's subset: one of the
// abbreviations above (case-insensitive), an IANA zone name with a region part
// (America/New_York; case-insensitive as PostgreSQL's lookup is, for names whose canonical
// spelling capitalises each word), one of the regionless zones EST5EDT, CST6CDT, MST7MDT and
// PST8PDT, or a POSIX TZ offset without a daylight-saving part ([name][±]h[h][:mm[:ss]], the
// name any run of letters: 'UTC+5', 'EST5', '+5', '5'), whose sign is POSIX's: hours WEST of
// Greenwich ('+05' and 'UTC+5' are five hours behind UTC, as in PostgreSQL). Errors:
// ErrUnknown, ErrUnsupported.
func Lookup(name string) (Zone, error) {
	s := strings.TrimSpace(name)
	if s == "" {
		return Zone{}, ErrUnknown
	}
	low := strings.ToLower(s)
	if off, ok := abbreviations[low]; ok {
		return Fixed(off), nil
	}
	if off, ok, err := posixOffset(low); ok || err != nil {
		if err != nil {
			return Zone{}, err
		}
		return Fixed(off), nil
	}
	if name, ok := regionless[low]; ok {
		if loc, err := time.LoadLocation(name); err == nil {
			return Zone{loc: loc}, nil
		}
		return Zone{}, ErrUnknown
	}
	if !strings.Contains(s, "/") {
		return Zone{}, ErrUnsupported
	}
	for _, cand := range []string{s, titled(s)} {
		if strings.Contains(cand, "..") || strings.HasPrefix(cand, "/") {
			return Zone{}, ErrUnknown
		}
		if loc, err := time.LoadLocation(cand); err == nil {
			return Zone{loc: loc}, nil
		}
	}
	return Zone{}, ErrUnknown
}

// titled capitalises each word of an IANA name (america/new_york → America/New_York).
func titled(s string) string {
	b := []rune(strings.ToLower(s))
	up := true
	for i, r := range b {
		if up {
			b[i] = unicode.ToUpper(r)
		}
		up = r == '/' || r == '_' || r == '-'
	}
	return string(b)
}

// posixOffset reads a POSIX TZ string without a daylight-saving part, [name][±]h[h][:mm[:ss]]
// with name a run of ASCII letters (lower case), as seconds EAST of UTC (the POSIX sign
// inverted). ok is false when s is not of that shape.
func posixOffset(s string) (int64, bool, error) {
	s = strings.TrimLeft(s, "abcdefghijklmnopqrstuvwxyz")
	if s == "" {
		return 0, false, nil
	}
	sign := int64(1)
	switch s[0] {
	case '-':
		sign, s = -1, s[1:]
	case '+':
		s = s[1:]
	}
	parts := strings.Split(s, ":")
	if len(parts) > 3 {
		return 0, false, nil
	}
	var v [3]int64
	for i, p := range parts {
		if p == "" || len(p) > 2 {
			return 0, false, nil
		}
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return 0, false, nil
		}
		v[i] = int64(n)
	}
	if v[0] > 24 || v[1] > 59 || v[2] > 59 {
		return 0, true, ErrUnsupported
	}
	return -sign * (v[0]*3600 + v[1]*60 + v[2]), true, nil
}

// Fixed is the zone offset seconds east of UTC.
func Fixed(offset int64) Zone { return Zone{fixed: offset} }

// Spec is z written for ParseSpec: "fixed:<seconds east>" or "iana:<zone name>".
func (z Zone) Spec() string {
	if z.loc == nil {
		return "fixed:" + strconv.FormatInt(z.fixed, 10)
	}
	return "iana:" + z.loc.String()
}

// ParseSpec reads a Spec back. An error means the spec was not written by Spec (a client's
// plan), or names a zone this machine's database and the embedded one both lack.
func ParseSpec(spec string) (Zone, error) {
	kind, v, ok := strings.Cut(spec, ":")
	switch {
	case ok && kind == "fixed":
		off, err := strconv.ParseInt(v, 10, 64)
		if err != nil || off < -7*86400 || off > 7*86400 {
			return Zone{}, fmt.Errorf("pgzone: invalid fixed offset in zone spec")
		}
		return Fixed(off), nil
	case ok && kind == "iana" && (strings.Contains(v, "/") || isRegionless(v)) && !strings.Contains(v, ".."):
		loc, err := time.LoadLocation(v)
		if err != nil {
			return Zone{}, ErrUnknown
		}
		return Zone{loc: loc}, nil
	}
	return Zone{}, fmt.Errorf("pgzone: invalid zone spec")
}

// isRegionless reports whether v is one of the zone names without a region (regionless) as
// tzdata spells it; "" is none (time.LoadLocation would read it as UTC).
func isRegionless(v string) bool {
	r, ok := regionless[strings.ToLower(v)]
	return ok && r == v
}

// OffsetAt returns the zone's offset east of UTC, in seconds, at the instant sec (Unix
// seconds).
func (z Zone) OffsetAt(sec int64) int64 {
	if z.loc == nil {
		return z.fixed
	}
	_, off := time.Unix(sec, 0).In(z.loc).Zone()
	return int64(off)
}

// OffsetOfWall returns the offset east of UTC, in seconds, that the wall-clock time wall
// (seconds since 1970-01-01 00:00 on the zone's clock) has: the instant is wall minus it.
// A wall time that does not exist (a spring-forward gap) takes the offset before the
// transition, and one that exists twice (a fall-back overlap) the offset after it: PostgreSQL's
// rule (DetermineTimeZoneOffset in its datetime.c, which looks for the transition following
// the instant one day before wall, assuming no zone has two transitions within 48 hours).
func (z Zone) OffsetOfWall(wall int64) int64 {
	if z.loc == nil {
		return z.fixed
	}
	prev := time.Unix(wall-86400, 0).In(z.loc)
	_, before := prev.Zone()
	_, end := prev.ZoneBounds()
	if end.IsZero() {
		return int64(before)
	}
	boundary := end.Unix()
	_, after := end.In(z.loc).Zone()
	beforeT, afterT := wall-int64(before), wall-int64(after)
	switch {
	case beforeT < boundary && afterT < boundary:
		return int64(before)
	case beforeT > boundary && afterT >= boundary:
		return int64(after)
	case beforeT > afterT:
		return int64(before)
	}
	return int64(after)
}
