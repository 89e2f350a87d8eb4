package substrait

import (
	"math"
	"strings"
	"time"
)

// Bounds of timestamp[ns]: instants representable as int64 nanoseconds since the Unix epoch.
var (
	minNanoTime = time.Unix(0, math.MinInt64).UTC()
	maxNanoTime = time.Unix(0, math.MaxInt64).UTC()
)

// checkNanoRange returns ErrTimestampOutOfRange when t has no int64 nanosecond form.
func checkNanoRange(t time.Time) error {
	if t.Before(minNanoTime) || t.After(maxNanoTime) {
		return ErrTimestampOutOfRange
	}
	return nil
}

// ParseTimestamp parses a timestamp literal as the routed-predicate front end accepts it and
// returns the instant in UTC. The accepted forms are the ISO 8601 / PostgreSQL input forms
// clients write for instants:
//
//	2026-01-01                           midnight
//	2026-01-01T10:30  2026-01-01 10:30   minutes
//	2026-01-01T10:30:05                  seconds
//	2026-01-01T10:30:05.123456789        1 to 9 fractional digits (nanoseconds)
//
// optionally followed (after an optional space) by a zone: Z, UTC or GMT (any case), or a
// numeric offset ±HH, ±HHMM or ±HH:MM. A literal without a zone is UTC (flightsrv sessions
// run in UTC). The zone is honoured for TIMESTAMP and TIMESTAMPTZ literals alike; PostgreSQL
// would silently drop it for TIMESTAMP (without time zone), Pulpitum's DataFusion front end
// honours it, and so do we. Surrounding spaces are ignored. Special values (infinity, epoch,
// now, today…) are rejected: the routed contract needs finite bounds.
//
// It returns ErrInvalidTimestampLiteral for any other text and ErrTimestampOutOfRange for an
// instant outside timestamp[ns]. Error messages never contain the literal.
func ParseTimestamp(s string) (time.Time, error) {
	p := tsParser{s: strings.TrimSpace(s)}
	t, ok := p.parse()
	if !ok {
		return time.Time{}, ErrInvalidTimestampLiteral
	}
	if err := checkNanoRange(t); err != nil {
		return time.Time{}, err
	}
	return t, nil
}

// parseDate parses a DATE literal (YYYY-MM-DD only) as midnight UTC. A date's range is wider
// than timestamp[ns]'s: converted to a timestamp, it is clamped (a bound) or refused (a value).
func parseDate(s string) (time.Time, error) {
	p := tsParser{s: strings.TrimSpace(s)}
	y, mo, d, ok := p.date()
	if !ok || p.i != len(p.s) {
		return time.Time{}, ErrInvalidTimestampLiteral
	}
	return time.Date(y, time.Month(mo), d, 0, 0, 0, 0, time.UTC), nil
}

type tsParser struct {
	s     string
	i     int
	naive bool // ignore the zone designator (timestamp without time zone)
}

// digits reads exactly n decimal digits.
func (p *tsParser) digits(n int) (int, bool) {
	if p.i+n > len(p.s) {
		return 0, false
	}
	v := 0
	for _, c := range []byte(p.s[p.i : p.i+n]) {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	p.i += n
	return v, true
}

func (p *tsParser) peek() byte {
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

func (p *tsParser) expect(c byte) bool {
	if p.peek() == c {
		p.i++
		return true
	}
	return false
}

func (p *tsParser) date() (y, mo, d int, ok bool) {
	if y, ok = p.digits(4); !ok || !p.expect('-') {
		return 0, 0, 0, false
	}
	if mo, ok = p.digits(2); !ok || !p.expect('-') {
		return 0, 0, 0, false
	}
	if d, ok = p.digits(2); !ok {
		return 0, 0, 0, false
	}
	if mo < 1 || mo > 12 || d < 1 || d > daysIn(y, mo) {
		return 0, 0, 0, false
	}
	return y, mo, d, true
}

func daysIn(y, mo int) int {
	return time.Date(y, time.Month(mo)+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

func (p *tsParser) parse() (time.Time, bool) {
	y, mo, d, ok := p.date()
	if !ok {
		return time.Time{}, false
	}
	if p.i == len(p.s) {
		return time.Date(y, time.Month(mo), d, 0, 0, 0, 0, time.UTC), true
	}
	if c := p.peek(); c != 'T' && c != 't' && c != ' ' {
		return time.Time{}, false
	}
	p.i++
	h, ok1 := p.digits(2)
	colon := p.expect(':')
	mi, ok2 := p.digits(2)
	if !ok1 || !colon || !ok2 || h > 23 || mi > 59 {
		return time.Time{}, false
	}
	sec, nsec := 0, 0
	if p.expect(':') {
		var ok bool
		if sec, ok = p.digits(2); !ok || sec > 59 {
			return time.Time{}, false
		}
		if p.expect('.') {
			start := p.i
			for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
				p.i++
			}
			frac := p.s[start:p.i]
			if len(frac) == 0 || len(frac) > 9 {
				return time.Time{}, false
			}
			for _, c := range []byte(frac) {
				nsec = nsec*10 + int(c-'0')
			}
			for range 9 - len(frac) {
				nsec *= 10
			}
		}
	}
	offset, ok := p.zone()
	if !ok || p.i != len(p.s) {
		return time.Time{}, false
	}
	t := time.Date(y, time.Month(mo), d, h, mi, sec, nsec, time.UTC)
	if p.naive {
		return t, true
	}
	return t.Add(-time.Duration(offset) * time.Second), true
}

// zone reads an optional zone designator and returns its offset east of UTC in seconds.
func (p *tsParser) zone() (int, bool) {
	if p.peek() == ' ' {
		p.i++
		if p.i == len(p.s) {
			return 0, false
		}
	}
	rest := p.s[p.i:]
	switch {
	case rest == "":
		return 0, true
	case rest == "Z" || rest == "z" || strings.EqualFold(rest, "UTC") || strings.EqualFold(rest, "GMT"):
		p.i = len(p.s)
		return 0, true
	}
	sign := 1
	switch p.peek() {
	case '+':
	case '-':
		sign = -1
	default:
		return 0, false
	}
	p.i++
	h, ok := p.digits(2)
	if !ok || h > 15 {
		return 0, false
	}
	m := 0
	if p.i < len(p.s) {
		p.expect(':')
		if m, ok = p.digits(2); !ok || m > 59 {
			return 0, false
		}
	}
	return sign * (h*3600 + m*60), true
}
