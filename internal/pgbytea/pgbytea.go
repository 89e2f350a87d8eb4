// Package pgbytea reads and writes bytea text as PostgreSQL 15 does: byteain's two input
// formats and byteaout's hex output (PostgreSQL's default bytea_output). The SQL binder
// (substrait) reads constants with it, the executor (scan/ops) a text column cast to bytea.
package pgbytea

import (
	"encoding/hex"
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
