// Package pgbytea reads and writes bytea text as PostgreSQL 15 does: byteain's two input
// formats and byteaout's hex output (PostgreSQL's default bytea_output), and decode's hex,
// base64 and escape formats (Decode). The SQL binder (substrait) reads constants with it, the
// executor (scan/ops) a text column cast to bytea or decoded.
package pgbytea

import (
	"encoding/hex"
	"fmt"
	"strings"
)

// Error is an input error: PostgreSQL's SQLSTATE and message. Messages never quote the input
// (PostgreSQL's hexadecimal digit message quotes the bad character after a colon; Error's
// message is the part before it).
type Error struct {
	Code string // SQLSTATE
	Msg  string
}

func (e *Error) Error() string { return e.Msg }

var (
	// errSyntax is byteain's error for a backslash that starts no escape (escape format).
	errSyntax = &Error{Code: "22P02", Msg: "invalid input syntax for type bytea"}
	// errDigit is hex_decode's error for a character that is not a hexadecimal digit.
	errDigit = &Error{Code: "22023", Msg: "invalid hexadecimal digit"}
	// errOdd is hex_decode's error for a last digit without its pair.
	errOdd = &Error{Code: "22023", Msg: "invalid hexadecimal data: odd number of digits"}
)

// In reads s as PostgreSQL 15's byteain does (with its hex_decode):
//   - hex format: `\x` followed by pairs of hexadecimal digits (either case), with spaces,
//     tabs, newlines and carriage returns allowed before each pair (not inside one); another
//     character is 22023 "invalid hexadecimal digit", a lone last digit 22023 "invalid
//     hexadecimal data: odd number of digits";
//   - otherwise the escape format: `\\` is one backslash, `\ooo` (three octal digits, the first
//     0 to 3) one byte, any other byte itself; any other backslash is 22P02 "invalid input
//     syntax for type bytea".
//
// The error is an *Error. In is safe for concurrent use.
func In(s string) ([]byte, error) {
	if strings.HasPrefix(s, `\x`) {
		return hexIn(s[2:])
	}
	return escapeIn(s)
}

// escapeIn reads s in byteain's escape format (esc_decode).
func escapeIn(s string) ([]byte, error) {
	n := 0
	for i := 0; i < len(s); n++ {
		switch {
		case s[i] != '\\':
			i++
		case isOctal(s, i+1):
			i += 4
		case i+1 < len(s) && s[i+1] == '\\':
			i += 2
		default:
			return nil, errSyntax
		}
	}
	out := make([]byte, 0, n)
	for i := 0; i < len(s); {
		switch {
		case s[i] != '\\':
			out = append(out, s[i])
			i++
		case s[i+1] == '\\':
			out = append(out, '\\')
			i += 2
		default:
			out = append(out, (s[i+1]-'0')<<6|(s[i+2]-'0')<<3|(s[i+3]-'0'))
			i += 4
		}
	}
	return out, nil
}

// isOctal reports whether s[i:i+3] is an escape's three octal digits, the first 0 to 3.
func isOctal(s string, i int) bool {
	return i+2 < len(s) && s[i] >= '0' && s[i] <= '3' && s[i+1] >= '0' && s[i+1] <= '7' && s[i+2] >= '0' && s[i+2] <= '7'
}

func hexIn(s string) ([]byte, error) {
	out := make([]byte, 0, len(s)/2)
	for i := 0; i < len(s); {
		switch s[i] {
		case ' ', '\n', '\t', '\r':
			i++
			continue
		}
		hi, ok := hexDigit(s[i])
		if !ok {
			return nil, errDigit
		}
		if i+1 >= len(s) {
			return nil, errOdd
		}
		lo, ok := hexDigit(s[i+1])
		if !ok {
			return nil, errDigit
		}
		out = append(out, hi<<4|lo)
		i += 2
	}
	return out, nil
}

func hexDigit(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// Out is byteaout's hex format: `\x` and two lower-case hexadecimal digits a byte.
func Out(b []byte) string {
	return `\x` + hex.EncodeToString(b)
}

// Decode is PostgreSQL 15's decode(s, format) (binary_decode): format, in any letter case,
// is "hex" (hex_decode: pairs of hexadecimal digits, white space between pairs; In's errors),
// "base64" (pg_base64_decode, below) or "escape" (esc_decode: In's escape format, also for a
// text starting with \x, whose backslash starts no escape: 22P02); another format is 22023
// `unrecognized encoding: "format"` (the format quoted, as PostgreSQL does: it is the
// query's, not the data's).
//
// base64 reads RFC 4648's alphabet as PostgreSQL does: spaces, tabs, newlines and carriage
// returns are skipped anywhere; "=" ends the value after two or three characters of a
// four-character group (elsewhere 22023 "unexpected "=" while decoding base64 sequence") and
// each later group then yields as many bytes as the first padded one did; another character
// is 22023 "invalid symbol found while decoding base64 sequence" (PostgreSQL's message quotes
// the symbol after "invalid symbol"; this one does not); characters that end inside a group
// are 22023 "invalid base64 end sequence".
//
// The error is an *Error. Decode is safe for concurrent use.
func Decode(s, format string) ([]byte, error) {
	switch strings.ToLower(format) {
	case "hex":
		return hexIn(s)
	case "base64":
		return base64In(s)
	case "escape":
		return escapeIn(s)
	}
	return nil, &Error{Code: "22023", Msg: fmt.Sprintf("unrecognized encoding: %q", format)}
}

var (
	errBase64Symbol = &Error{Code: "22023", Msg: "invalid symbol found while decoding base64 sequence"}
	errBase64Pad    = &Error{Code: "22023", Msg: `unexpected "=" while decoding base64 sequence`}
	errBase64End    = &Error{Code: "22023", Msg: "invalid base64 end sequence"}
)

// base64In is pg_base64_decode: see Decode.
func base64In(s string) ([]byte, error) {
	out := make([]byte, 0, len(s)*3/4)
	var buf uint32
	pos, end := 0, 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		var b uint32
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			continue
		case c == '=':
			if end == 0 {
				switch pos {
				case 2:
					end = 1
				case 3:
					end = 2
				default:
					return nil, errBase64Pad
				}
			}
		default:
			v, ok := base64Value(c)
			if !ok {
				return nil, errBase64Symbol
			}
			b = v
		}
		buf = buf<<6 | b
		pos++
		if pos == 4 {
			out = append(out, byte(buf>>16))
			if end == 0 || end > 1 {
				out = append(out, byte(buf>>8))
			}
			if end == 0 || end > 2 {
				out = append(out, byte(buf))
			}
			buf, pos = 0, 0
		}
	}
	if pos != 0 {
		return nil, errBase64End
	}
	return out, nil
}

// base64Value is the value of an RFC 4648 base64 character.
func base64Value(c byte) (uint32, bool) {
	switch {
	case c >= 'A' && c <= 'Z':
		return uint32(c - 'A'), true
	case c >= 'a' && c <= 'z':
		return uint32(c-'a') + 26, true
	case c >= '0' && c <= '9':
		return uint32(c-'0') + 52, true
	case c == '+':
		return 62, true
	case c == '/':
		return 63, true
	}
	return 0, false
}
