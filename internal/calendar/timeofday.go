package calendar

import (
	"math"
	"strconv"
	"strings"
)

// PostgreSQL's time without time zone: microseconds since midnight, 0 to MicrosPerDay
// (24:00:00 included), held by flightsrv as Arrow time64[us]. The binder reads constants and
// the executor reads text computed per row with TimeIn; both write text with TimeOut.

// MicrosPerDay is the microseconds of a day: 24:00:00, the largest time.
const MicrosPerDay = 86_400_000_000

// TimeError is the refusal of text as a time: Code is PostgreSQL's SQLSTATE where PostgreSQL
// refuses the text too (22007 invalid input syntax, 22008 a field out of range, 22009 a zone
// offset out of range), 0A000 for a form PostgreSQL may read that TimeIn does not. Msg never
// quotes the text (PostgreSQL's messages do: they are its prefix).
type TimeError struct {
	Code, Msg string
}

func (e *TimeError) Error() string { return e.Msg }

var (
	errTimeSyntax = &TimeError{Code: "22007", Msg: "invalid input syntax for type time"}
	errTimeRange  = &TimeError{Code: "22008", Msg: "date/time field value out of range"}
	errTimeZone   = &TimeError{Code: "22009", Msg: "time zone displacement out of range"}
	errTimeForm   = &TimeError{Code: "0A000", Msg: "this form of time input is not supported: write hh:mm[:ss[.ffffff]] (optionally am/pm and a numeric offset, which time ignores)"}
	errTimeNow    = &TimeError{Code: "0A000", Msg: `the special time value "now" is not supported: write localtime`}
)

// TimeIn reads text as PostgreSQL 15's time_in does (DecodeTimeOnly, as observed on a
// server), in the forms: hh:mm, hh:mm:ss, hh:mm:ss.f (the fraction rounded to the
// microsecond as PostgreSQL rounds it: rint of the fraction's double times 10⁶, ties to even),
// mm:ss.f, hhmm, hhmmss[.f]; any field of one or more digits; optionally before it an ISO date
// yyyy-mm-dd and white space, or a T; after it am or pm (with or without a space; 12 am is
// midnight, an hour past 12 with either is 22008) and a zone — z, zulu, utc, gmt or a numeric
// offset ±hh[:mm[:ss]] or ±hhmm[ss], its hours at most 15 (else 22009) — which time ignores;
// white space around; "allballs" (midnight). Fields out of range — minutes past 59, seconds
// past 60, a total past 24:00:00 — are 22008; text without a digit, a sign before the time,
// digits alone in another count than 4 or 6, or a word time input does not read (timeWords:
// a unit, a month or day name, a zone name such as Europe/Paris) are 22007; "now" and any
// other form (zone abbreviations, Julian days) are refused by name (0A000), not approximated.
func TimeIn(s string) (int64, error) {
	t := strings.ToLower(strings.Trim(s, " \t\n\r\v\f"))
	switch t {
	case "allballs":
		return 0, nil
	case "now":
		return 0, errTimeNow
	}
	if !strings.ContainsAny(t, "0123456789") || t != "" && (t[0] == '-' || t[0] == '+') {
		return 0, errTimeSyntax
	}
	p := timeParser{s: t}
	us, err := p.read()
	if err == errTimeForm && unknownWord(t) {
		// A word time input does not read (a unit, a month or day name, a zone name): PostgreSQL's
		// 22007, whatever else the text holds.
		return 0, errTimeSyntax
	}
	if err != nil {
		return 0, err
	}
	return us, nil
}

// timeWords are the words PostgreSQL 15's time input reads beside the time (as observed: zone
// abbreviations of its Default set, am/pm, era and the ISO markers); any other word is 22007.
var timeWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`am pm ad bc on t j allballs now z zulu ut utc gmt
		acdt acsst acst act acwst adt aedt aesst aest aft akdt akst almst almt amst amt anast anat arst art ast
		awsst awst azost azot azst azt bdst bdt bnt bort bot bra brst brt bst btt cadt cast cct cdt cest cet
		cetdst chadt chast chut ckt clst clt cot cst cxt davt ddut easst east eat edt eest eet eetdst egst egt
		est fet fjst fjt fkst fkt fnst fnt galt gamt gest get gft gilt gyt hkt hst ict idt iot irkst irkt irt
		ist jayt jst kdt kgst kgt kost krast krat kst lhdt lhst ligt lint lkt magst magt mart mawt mdt mest mesz
		met metdst mez mht mmt mpt msd msk mst must mut mvt myt ndt nft novst novt npt nst nut nzdt nzst nzt
		omsst omst pdt pet petst pett pgt pht pkst pkt pmdt pmst pont pst pwt pyst pyt ret sadt sast sct sgt
		taht tft tjt tkt tmt tot trut tvt uct ulast ulat uyst uyt uzst uzt vet vlast vlat volt vut wadt wakt
		wast wat wdt wet wetdst wft wgst wgt xjt yakst yakt yapt yekst yekt`) {
		timeWords[w] = true
	}
}

// unknownWord reports whether lower-case text t holds a run of letters that is none of
// timeWords (a word after digits counts alone: 06:59pm is 06:59 and pm).
func unknownWord(t string) bool {
	for i := 0; i < len(t); {
		if t[i] < 'a' || t[i] > 'z' {
			i++
			continue
		}
		j := i
		for j < len(t) && (t[j] >= 'a' && t[j] <= 'z' || t[j] == '/' || t[j] == '_') {
			j++
		}
		if !timeWords[t[i:j]] {
			return true
		}
		i = j
	}
	return false
}

type timeParser struct {
	s string
	i int
}

func (p *timeParser) eof() bool { return p.i >= len(p.s) }

func (p *timeParser) peek() byte {
	if p.eof() {
		return 0
	}
	return p.s[p.i]
}

// digits reads a run of digits: its text, empty when there is none.
func (p *timeParser) digits() string {
	j := p.i
	for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
		p.i++
	}
	return p.s[j:p.i]
}

func (p *timeParser) spaces() {
	for p.i < len(p.s) && strings.IndexByte(" \t\n\r\v\f", p.s[p.i]) >= 0 {
		p.i++
	}
}

// field is the value of a field's digits, ok false past 9 digits (PostgreSQL's field overflow).
func field(d string) (int64, bool) {
	if len(d) > 9 {
		return 0, false
	}
	n, err := strconv.ParseInt(d, 10, 64)
	return n, err == nil
}

// fraction reads "." and its digits (none allowed) as microseconds, as PostgreSQL's
// ParseFractionalSecond: rint(strtod(".ddd") * 1e6).
func (p *timeParser) fraction() (int64, error) {
	if p.peek() != '.' {
		return 0, nil
	}
	p.i++
	d := p.digits()
	if p.peek() == '.' {
		return 0, errTimeSyntax
	}
	if d == "" {
		return 0, nil
	}
	f, err := strconv.ParseFloat("0."+d, 64)
	if err != nil {
		return 0, errTimeSyntax
	}
	return int64(math.RoundToEven(f * 1e6)), nil
}

func (p *timeParser) read() (int64, error) {
	// An ISO date before the time, which time ignores (a valid one: PostgreSQL reads it).
	if len(p.s) > 10 && p.s[4] == '-' && p.s[7] == '-' && isSpaceByte(p.s[10]) {
		if !validISODate(p.s[:10]) {
			return 0, errTimeForm
		}
		p.i = 10
		p.spaces()
	} else if p.peek() == 't' {
		p.i++
	}
	var h, m, sec, us int64
	first := p.digits()
	if first == "" {
		return 0, errTimeForm
	}
	switch {
	case p.peek() == ':':
		p.i++
		second := p.digits()
		if second == "" {
			return 0, errTimeForm
		}
		var ok1, ok2 bool
		h, ok1 = field(first)
		m, ok2 = field(second)
		if !ok1 || !ok2 {
			return 0, errTimeRange
		}
		switch p.peek() {
		case '.':
			// mm:ss.f
			f, err := p.fraction()
			if err != nil {
				return 0, err
			}
			h, m, sec, us = 0, h, m, f
		case ':':
			p.i++
			third := p.digits()
			if third != "" {
				var ok bool
				if sec, ok = field(third); !ok {
					return 0, errTimeRange
				}
				f, err := p.fraction()
				if err != nil {
					return 0, err
				}
				us = f
			} else if p.peek() == ':' {
				return 0, errTimeForm // PostgreSQL's hh::ss
			}
		}
	case len(first) == 4 || len(first) == 6:
		h, _ = field(first[:2])
		m, _ = field(first[2:4])
		if len(first) == 6 {
			sec, _ = field(first[4:])
		}
		if len(first) == 6 {
			f, err := p.fraction()
			if err != nil {
				return 0, err
			}
			us = f
		} else if p.peek() == '.' {
			return 0, errTimeSyntax
		}
	default:
		if p.peek() == '.' || p.eof() || isSpaceByte(p.peek()) && strings.Trim(p.s[p.i:], " \t\n\r\v\f") == "" {
			return 0, errTimeSyntax
		}
		return 0, errTimeForm
	}
	// am/pm and a zone, in either order.
	ampm := byte(0)
	zone := false
	for {
		p.spaces()
		if p.eof() {
			break
		}
		rest := p.s[p.i:]
		switch {
		case ampm == 0 && (strings.HasPrefix(rest, "am") || strings.HasPrefix(rest, "pm")) && endOfWord(rest, 2):
			ampm = rest[0]
			p.i += 2
		case !zone && (rest[0] == '+' || rest[0] == '-'):
			zone = true
			if err := p.offset(); err != nil {
				return 0, err
			}
		case !zone && rest[0] == 'z' && endOfWord(rest, 1):
			zone = true
			p.i++
		case !zone && (strings.HasPrefix(rest, "utc") || strings.HasPrefix(rest, "gmt")) && endOfWord(rest, 3),
			!zone && strings.HasPrefix(rest, "zulu") && endOfWord(rest, 4):
			zone = true
			for p.i < len(p.s) && p.s[p.i] >= 'a' && p.s[p.i] <= 'z' {
				p.i++
			}
		default:
			return 0, errTimeForm
		}
	}
	switch ampm {
	case 'a':
		if h > 12 {
			return 0, errTimeRange
		}
		if h == 12 {
			h = 0
		}
	case 'p':
		if h > 12 {
			return 0, errTimeRange
		}
		if h != 12 {
			h += 12
		}
	}
	// PostgreSQL's time_overflows: each field in range (hour 24 and second 60 allowed), and
	// the total at most 24:00:00.
	if h < 0 || h > 24 || m < 0 || m > 59 || sec < 0 || sec > 60 || us < 0 || us > 1_000_000 {
		return 0, errTimeRange
	}
	total := ((h*60+m)*60+sec)*1_000_000 + us
	if total > MicrosPerDay {
		return 0, errTimeRange
	}
	return total, nil
}

// offset reads a numeric zone offset ±hh[:mm[:ss]] or ±hh[mm[ss]]: its hours past 15 are
// PostgreSQL's 22009, its minutes or seconds past 59 22008.
func (p *timeParser) offset() error {
	p.i++ // the sign
	d := p.digits()
	var h, m, s int64
	switch len(d) {
	case 1, 2:
		h, _ = field(d)
		if p.peek() == ':' {
			p.i++
			md := p.digits()
			if len(md) != 2 {
				return errTimeForm
			}
			m, _ = field(md)
			if p.peek() == ':' {
				p.i++
				sd := p.digits()
				if len(sd) != 2 {
					return errTimeForm
				}
				s, _ = field(sd)
			}
		}
	case 4:
		h, _ = field(d[:2])
		m, _ = field(d[2:])
	case 6:
		h, _ = field(d[:2])
		m, _ = field(d[2:4])
		s, _ = field(d[4:])
	default:
		return errTimeForm
	}
	if m > 59 || s > 59 {
		return errTimeRange
	}
	if h > 15 {
		return errTimeZone
	}
	return nil
}

func isSpaceByte(c byte) bool { return strings.IndexByte(" \t\n\r\v\f", c) >= 0 }

// endOfWord reports whether s has no letter at n (a word of n letters ends there).
func endOfWord(s string, n int) bool { return len(s) == n || s[n] < 'a' || s[n] > 'z' }

// validISODate reports whether s (yyyy-mm-dd) is a date of the proleptic Gregorian calendar
// from year 1.
func validISODate(s string) bool {
	y, err1 := strconv.Atoi(s[:4])
	m, err2 := strconv.Atoi(s[5:7])
	d, err3 := strconv.Atoi(s[8:10])
	if err1 != nil || err2 != nil || err3 != nil || y < 1 || m < 1 || m > 12 || d < 1 {
		return false
	}
	days := [...]int{31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}[m-1]
	if m == 2 && (y%4 == 0 && y%100 != 0 || y%400 == 0) {
		days = 29
	}
	return d <= days
}

// TimeOut writes microseconds since midnight (0 to MicrosPerDay) as PostgreSQL's time_out:
// hh:mm:ss, then the fraction's digits without trailing zeros after a point when there is one
// (06:59:00, 06:59:00.5, 24:00:00).
func TimeOut(us int64) string {
	sec := us / 1_000_000
	frac := us % 1_000_000
	b := make([]byte, 0, 15)
	two := func(n int64) {
		b = append(b, byte('0'+n/10), byte('0'+n%10))
	}
	two(sec / 3600)
	b = append(b, ':')
	two(sec / 60 % 60)
	b = append(b, ':')
	two(sec % 60)
	if frac != 0 {
		b = append(b, '.')
		d := strconv.FormatInt(frac+1_000_000, 10)[1:]
		b = append(b, strings.TrimRight(d, "0")...)
	}
	return string(b)
}

// RoundTime rounds microseconds since midnight to p fractional digits (0 to 6) as
// PostgreSQL's AdjustTimeForTypmod does for time(p): half up, so 23:59:59.5 as time(0) is
// 24:00:00. p of 6 or more keeps us.
func RoundTime(us int64, p int) int64 {
	if p >= 6 || p < 0 {
		return us
	}
	scale := int64(math.Pow10(6 - p))
	return (us + scale/2) / scale * scale
}

// TimeOfDay is the time of day, in microseconds since midnight (0 ≤ … < MicrosPerDay), of
// the nanoseconds since 1970-01-01 00:00 ns (UTC or a wall clock), the nanoseconds below a
// microsecond dropped (PostgreSQL's timestamps hold microseconds): PostgreSQL's
// timestamp_time.
func TimeOfDay(ns int64) int64 {
	us := ns / 1000
	if ns%1000 < 0 {
		us--
	}
	r := us % MicrosPerDay
	if r < 0 {
		r += MicrosPerDay
	}
	return r
}

// WrapTime is PostgreSQL's time ± interval of the interval's microseconds (its months and
// days ignored): us + d modulo a day, in 0 ≤ … < MicrosPerDay (time_pl_interval).
func WrapTime(us, d int64) int64 {
	r := (us%MicrosPerDay + d%MicrosPerDay) % MicrosPerDay
	if r < 0 {
		r += MicrosPerDay
	}
	return r
}
