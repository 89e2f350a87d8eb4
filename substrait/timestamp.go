package substrait

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/flightsrv/flightsrv/internal/pgzone"
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

// errTimestampRange is PostgreSQL's 22008 "timestamp out of range", for a value (not a
// bound) outside timestamp[ns] that PostgreSQL's wider range holds.
func errTimestampRange() error {
	return &Error{Code: InvalidArgument, SQLState: "22008", Msg: "timestamp out of range"}
}

// ParseTimestamp parses a timestamp literal of a Substrait plan (a string its producer casts
// to, or compares with, a timestamp[ns]) and returns the instant in UTC; SQL text is read by
// parseTimestampSQL and readTimestamp, which round a fraction to microseconds as PostgreSQL
// does. The accepted forms are the ISO 8601 / PostgreSQL input forms
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
// Other text is refused as PostgreSQL's timestamptz_in refuses it where PostgreSQL refuses it
// too (datetimeTextError): a field out of its range (month 13, day 45, hour 25) is 22008, a
// zone offset beyond ±15:59 is 22009, text no date/time input reads is 22007; a special value
// or another input form PostgreSQL reads is Unimplemented (0A000) naming the accepted forms.
// An instant outside timestamp[ns] is ErrTimestampOutOfRange. Error messages never contain
// the literal.
func ParseTimestamp(s string) (time.Time, error) {
	return parseInstant(s, true)
}

// parseTimestampSQL is ParseTimestamp for text of a SQL statement (an INSERT's value, a
// date_bin origin): a fraction of a second of any length, rounded to microseconds as
// PostgreSQL's timestamptz_in rounds it (fractionMicros).
func parseTimestampSQL(s string) (time.Time, error) {
	return parseInstant(s, false)
}

func parseInstant(s string, nanos bool) (time.Time, error) {
	p := tsParser{s: strings.TrimSpace(s), nanos: nanos}
	t, ok := p.parse()
	if !ok {
		return time.Time{}, p.err(typeTimestamptz)
	}
	if err := checkNanoRange(t); err != nil {
		return time.Time{}, err
	}
	return t, nil
}

// parseDate parses a DATE literal (tsParser.date's forms, optionally followed by a time and
// a zone, which are read and ignored as PostgreSQL's date_in ignores them) as midnight UTC. A date's range is wider
// than timestamp[ns]'s: converted to a timestamp, it is clamped (a bound) or refused (a value).
func parseDate(s string) (time.Time, error) {
	// date_in reads a timestamp and keeps its date: a time and a zone are read and ignored.
	p := tsParser{s: strings.TrimSpace(s), naive: true}
	if _, ok := p.parse(); !ok {
		return time.Time{}, p.err(typeDate)
	}
	return time.Date(p.y, time.Month(p.mo), p.d, 0, 0, 0, 0, time.UTC), nil
}

type tsParser struct {
	s     string
	i     int
	naive bool // ignore the zone designator (timestamp without time zone)
	// nanos keeps a fraction of a second to the nanosecond as written (1 to 9 digits): the
	// reading of a Substrait plan's string, cast to timestamp[ns] by its producer's rules
	// (ParseTimestamp); SQL text rounds it to microseconds as PostgreSQL does (fractionMicros).
	nanos bool
	// overflow: the text has the parser's form but a field is out of its range (PostgreSQL's
	// DTERR_FIELD_OVERFLOW); zoneOverflow: the zone offset is beyond ±15:59
	// (DTERR_TZDISP_OVERFLOW). As in PostgreSQL's DecodeDateTime, an hour, minute or second
	// out of range is found as the time is read, a month or day (badDate, set by date) only
	// once the whole text has been read.
	overflow, zoneOverflow, badDate bool
	y, mo, d                        int // the date read (date)
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

// date reads the date PostgreSQL's DecodeDateTime reads under DateStyle ISO, MDY (the
// server's default): YYYY-M[M]-D[D], M[M]/D[D]/YYYY, Month D[D][,] YYYY and D[D] Month YYYY
// (a month's name or its abbreviation, any case).
func (p *tsParser) date() (y, mo, d int, ok bool) {
	switch n := p.digitRun(); {
	case n >= 6 && n <= 12 && p.i+n == len(p.s):
		// A run of digits alone is PostgreSQL's DecodeNumberField: the last two are the
		// day, the two before the month, the rest the year (two digits: 1970-2069).
		v := p.s[p.i : p.i+n]
		p.i += n
		d, mo = atoiDigits(v[n-2:]), atoiDigits(v[n-4:n-2])
		y = atoiDigits(v[:n-4])
		if n == 6 {
			if y < 70 {
				y += 2000
			} else {
				y += 1900
			}
		}
	case n == 0 && isASCIILetter(p.peek()):
		if mo, ok = p.monthName(); !ok || !p.expect(' ') {
			return 0, 0, 0, false
		}
		if d, ok = p.upTo2(); !ok {
			return 0, 0, 0, false
		}
		p.expect(',')
		if !p.expect(' ') {
			return 0, 0, 0, false
		}
		if y, ok = p.digits(4); !ok {
			return 0, 0, 0, false
		}
	case n == 4:
		y, _ = p.digits(4)
		if !p.expect('-') {
			return 0, 0, 0, false
		}
		if mo, ok = p.upTo2(); !ok || !p.expect('-') {
			return 0, 0, 0, false
		}
		if d, ok = p.upTo2(); !ok {
			return 0, 0, 0, false
		}
	case n == 1 || n == 2:
		first, _ := p.upTo2()
		switch {
		case p.expect('/'):
			mo = first
			if d, ok = p.upTo2(); !ok || !p.expect('/') {
				return 0, 0, 0, false
			}
		case p.expect(' '):
			d = first
			if mo, ok = p.monthName(); !ok || !p.expect(' ') {
				return 0, 0, 0, false
			}
		default:
			return 0, 0, 0, false
		}
		if y, ok = p.digits(4); !ok {
			return 0, 0, 0, false
		}
	default:
		return 0, 0, 0, false
	}
	// PostgreSQL's ISO year 0000 is out of range too (there is no year 0).
	p.badDate = y == 0 || mo < 1 || mo > 12 || d < 1 || d > daysIn(y, mo)
	p.y, p.mo, p.d = y, mo, d
	return y, mo, d, true
}

// atoiDigits is the value of a run of at most 12 decimal digits.
func atoiDigits(s string) int {
	v := 0
	for i := 0; i < len(s); i++ {
		v = v*10 + int(s[i]-'0')
	}
	return v
}

// digitRun is the number of decimal digits at the parser's position.
func (p *tsParser) digitRun() int {
	n := 0
	for p.i+n < len(p.s) && p.s[p.i+n] >= '0' && p.s[p.i+n] <= '9' {
		n++
	}
	return n
}

// upTo2 reads one or two decimal digits.
func (p *tsParser) upTo2() (int, bool) {
	switch p.digitRun() {
	case 1:
		return p.digits(1)
	case 2:
		return p.digits(2)
	}
	return 0, false
}

func isASCIILetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

// monthNames are the month names and abbreviations PostgreSQL's date/time input reads.
var monthNames = map[string]int{
	"january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6, "july": 7, "august": 8,
	"september": 9, "october": 10, "november": 11, "december": 12, "jan": 1, "feb": 2, "mar": 3, "apr": 4,
	"jun": 6, "jul": 7, "aug": 8, "sep": 9, "sept": 9, "oct": 10, "nov": 11, "dec": 12,
}

// monthName reads a month's name.
func (p *tsParser) monthName() (int, bool) {
	j := p.i
	for j < len(p.s) && isASCIILetter(p.s[j]) {
		j++
	}
	mo, ok := monthNames[strings.ToLower(p.s[p.i:j])]
	if ok {
		p.i = j
	}
	return mo, ok
}

// fractionMicros is the fraction of a second written as the decimal digits frac (any number,
// none for "10:00:00.") in microseconds, rounded as PostgreSQL's ParseFractionalSecond rounds
// it: rint(strtod(".digits") * 1000000), the double's product rounded half to even
// ('.0000005' is 0, '.0000015' 2, '.9999995' a whole second, carried by time.Date).
func fractionMicros(frac string) int64 {
	if frac == "" {
		return 0
	}
	f, err := strconv.ParseFloat("0."+frac, 64)
	if err != nil { // digits only: ParseFloat reads any number of them
		return 0
	}
	return int64(math.RoundToEven(f * 1e6))
}

// fractionNanos is the fraction of a second written as 1 to 9 decimal digits frac in
// nanoseconds, exactly; other lengths do not read.
func fractionNanos(frac string) (int64, bool) {
	if len(frac) == 0 || len(frac) > 9 {
		return 0, false
	}
	var n int64
	for _, c := range []byte(frac) {
		n = n*10 + int64(c-'0')
	}
	for range 9 - len(frac) {
		n *= 10
	}
	return n, true
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
		p.overflow = p.badDate
		return time.Date(y, time.Month(mo), d, 0, 0, 0, 0, time.UTC), !p.overflow
	}
	if c := p.peek(); c != 'T' && c != 't' && c != ' ' {
		return time.Time{}, false
	}
	p.i++
	h, ok1 := p.digits(2)
	colon := p.expect(':')
	mi, ok2 := p.digits(2)
	if !ok1 || !colon || !ok2 {
		return time.Time{}, false
	}
	sec, nsec := 0, int64(0)
	if p.expect(':') {
		var ok bool
		if sec, ok = p.digits(2); !ok {
			return time.Time{}, false
		}
		if p.expect('.') {
			start := p.i
			for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
				p.i++
			}
			frac := p.s[start:p.i]
			if !p.nanos {
				nsec = fractionMicros(frac) * 1000
			} else if nsec, ok = fractionNanos(frac); !ok {
				return time.Time{}, false
			}
		}
	}
	// PostgreSQL's DecodeTime and time_overflows: a leap second :60 and 24:00:00 are the next
	// minute and the next midnight; an hour beyond 24, a minute beyond 59, a second beyond 60
	// or a time of day past 24:00:00 (23:59:60.5, 24:00:00.5) is out of range, whatever
	// follows. A fraction is checked once rounded to microseconds (24:00:00.0000004 is
	// midnight).
	if h > 24 || mi > 59 || sec > 60 || ((int64(h)*60+int64(mi))*60+int64(sec))*1e9+nsec > 86400*1e9 {
		p.overflow = true
		return time.Time{}, false
	}
	offset, named, ok := p.zone()
	if !ok || p.i != len(p.s) {
		return time.Time{}, false
	}
	if named != nil {
		wall := time.Date(y, time.Month(mo), d, h, mi, sec, 0, time.UTC).Unix()
		offset = int(named.OffsetOfWall(wall))
	}
	if p.badDate {
		p.overflow = true
		return time.Time{}, false
	}
	t := time.Date(y, time.Month(mo), d, h, mi, sec, int(nsec), time.UTC)
	if p.naive {
		return t, true
	}
	return t.Add(-time.Duration(offset) * time.Second), true
}

// zone reads an optional zone designator: Z, UTC, GMT, a numeric offset ±H[H][[:]MM[:SS]]
// (east of UTC, ISO 8601's sign), or a zone name PostgreSQL reads (an abbreviation such as EST,
// an IANA name such as America/Chicago, any case: pgzone.Lookup). It returns a fixed offset
// east of UTC in seconds, or the named zone whose offset depends on the wall-clock time.
func (p *tsParser) zone() (int, *pgzone.Zone, bool) {
	if p.peek() == ' ' {
		p.i++
		if p.i == len(p.s) {
			return 0, nil, false
		}
	}
	rest := p.s[p.i:]
	switch {
	case rest == "":
		return 0, nil, true
	case rest == "Z" || rest == "z" || strings.EqualFold(rest, "UTC") || strings.EqualFold(rest, "GMT"):
		p.i = len(p.s)
		return 0, nil, true
	case isASCIILetter(rest[0]):
		// A zone name: letters, '/', '_' and '-' (no offset: 'UTC+5' is not one zone here),
		// or one of the regionless zones (EST5EDT).
		if strings.ContainsAny(rest, "+:0123456789 ") && !regionlessZone(rest) {
			return 0, nil, false
		}
		z, err := pgzone.Lookup(rest)
		if err != nil {
			return 0, nil, false
		}
		p.i = len(p.s)
		return 0, &z, true
	}
	sign := 1
	switch p.peek() {
	case '+':
	case '-':
		sign = -1
	default:
		return 0, nil, false
	}
	p.i++
	var h int
	var ok bool
	switch n := p.digitRun(); n {
	case 1, 2:
		h, _ = p.digits(n)
	case 4: // ±HHMM
		h, _ = p.digits(2)
	default:
		return 0, nil, false
	}
	if h > 15 {
		p.zoneOverflow = true
		return 0, nil, false
	}
	m, sec := 0, 0
	if p.i < len(p.s) {
		p.expect(':')
		if m, ok = p.digits(2); !ok {
			return 0, nil, false
		}
		if m > 59 {
			p.zoneOverflow = true
			return 0, nil, false
		}
		if p.expect(':') {
			if sec, ok = p.digits(2); !ok {
				return 0, nil, false
			}
			if sec > 59 {
				p.zoneOverflow = true
				return 0, nil, false
			}
		}
	}
	return sign * (h*3600 + m*60 + sec), nil, true
}

// regionlessZone reports whether s names one of the IANA zones without a region part whose
// name holds digits (EST5EDT, CST6CDT, MST7MDT, PST8PDT).
func regionlessZone(s string) bool {
	switch strings.ToLower(s) {
	case "est5edt", "cst6cdt", "mst7mdt", "pst8pdt":
		return true
	}
	return false
}

// The PostgreSQL names of the types date/time text is read as, in input-syntax errors.
const (
	typeDate        = "date"
	typeTimestamp   = "timestamp"
	typeTimestamptz = "timestamp with time zone"
)

// pgSpecialDatetimes are PostgreSQL's special date/time input values (lower case), which it
// reads and flightsrv refuses (the routed contract needs finite, fixed bounds).
var pgSpecialDatetimes = []string{"infinity", "+infinity", "-infinity", "epoch", "now", "today", "tomorrow", "yesterday", "allballs"}

// pgDatetimeWords are the words PostgreSQL's date/time input reads beside numbers (month and
// day names and their abbreviations, AM/PM, AD/BC, ISO markers, UTC's names), lower case.
var pgDatetimeWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`january february march april may june july august september october november december
		jan feb mar apr jun jul aug sep sept oct nov dec sunday monday tuesday wednesday thursday friday saturday
		sun mon tue tues wed wednes thu thur thurs fri sat am pm ad bc t z zulu utc gmt ut on at`) {
		pgDatetimeWords[w] = true
	}
}

// err is the refusal of p's text as a value of type typ (typeDate, typeTimestamp,
// typeTimestamptz) once p failed to read it, with PostgreSQL's condition where PostgreSQL
// refuses the text too (date_in, timestamp_in and timestamptz_in report DecodeDateTime's
// errors): datetime_field_overflow (22008) "date/time field value out of range" for a field
// beyond its range in the parser's form, invalid_time_zone_displacement_value (22009) "time
// zone displacement out of range", invalid_datetime_format (22007) "invalid input syntax for
// type <typ>" for text no date/time input reads — without a digit and not a special value, a
// byte outside PostgreSQL's date/time lexer (ASCII letters, digits, spaces, punctuation), or a
// word that is no month, day, era or marker and too long or short to be a zone abbreviation.
// A special value (now, today, infinity…) and any other form PostgreSQL may read (month
// names, other field orders, zone names) are Unimplemented (0A000): not approximated. The
// messages never quote the text (PostgreSQL's do).
func (p *tsParser) err(typ string) *Error {
	switch {
	case p.overflow:
		return errFieldRange
	case p.zoneOverflow:
		return &Error{Code: InvalidArgument, SQLState: "22009", Msg: "time zone displacement out of range"}
	}
	syntax := errDatetimeFormat("invalid input syntax for type " + typ)
	text := strings.ToLower(p.s)
	for _, sp := range pgSpecialDatetimes {
		if text == sp {
			return refused(Unimplemented, "0A000", "the special %s value %q is not supported: write a date or time", typ, sp)
		}
	}
	digits := false
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case c >= '0' && c <= '9':
			digits = true
		case c >= 'a' && c <= 'z', isSpace(c):
		case c > 0x20 && c < 0x7F: // punctuation: a separator to PostgreSQL's lexer
		default:
			return syntax
		}
	}
	if !digits || len(text) < 6 && strings.Trim(text, "0123456789") == "" {
		// Digits alone too few for a date (DecodeNumberField reads six or more).
		return syntax
	}
	for i := 0; i < len(text); {
		if text[i] < 'a' || text[i] > 'z' {
			i++
			continue
		}
		j := i
		for j < len(text) && text[j] >= 'a' && text[j] <= 'z' {
			j++
		}
		w := text[i:j]
		if rest := strings.TrimLeft(text[j:], " \t"); w == "j" && rest != "" && rest[0] >= '0' && rest[0] <= '9' {
			// DecodeDateTime's DTK_JULIAN: J2451911 is the Julian day 2451911, 2001-01-01.
			return refused(Unimplemented, "0A000", "Julian day input (J followed by the day's number) of type %s is not supported: write YYYY-MM-DD", typ)
		}
		// A word PostgreSQL does not know as a month, day, era or marker could still be a
		// zone abbreviation (2 to 6 letters) or part of a zone name (which holds a '/');
		// anything else is no date/time input.
		if !pgDatetimeWords[w] && !strings.Contains(text, "/") && (len(w) < 2 || len(w) > 6) {
			return syntax
		}
		i = j
	}
	return refused(Unimplemented, "0A000",
		"this %s input form is not supported: write YYYY-MM-DD, optionally followed by HH:MM[:SS[.fraction]] and a zone (Z, UTC, GMT, ±HH[:MM])", typ)
}

// paramError is err, the refusal of the value of parameter $pos, prefixed with the position
// and with its code and SQLSTATE kept.
func paramError(pos int, err error) error {
	var e *Error
	if !errors.As(err, &e) {
		return err
	}
	return &Error{Code: e.Code, SQLState: e.SQLState, Msg: fmt.Sprintf("parameter $%d: %s", pos, e.Msg)}
}
