package pgnumfmt

import (
	"errors"
	"math"
	"strconv"
	"strings"
)

// FloatIn reads text as PostgreSQL's float8in (bits 64) and float4in (bits 32) read it (PG 15's
// float8in_internal: strtod or strtof between optional white space): a decimal or hexadecimal
// (0x…, with or without a p exponent) number, or NaN, Infinity, inf (case-insensitive, with a
// sign); the nearest value of that size. Text that is not such a number is an *Error of
// SQLSTATE 22P02 ("invalid input syntax for type double precision" or "real"); a number past
// the type's range, or one that is not zero but becomes zero, of 22003 ("value out of range
// for type …"). Messages never quote the text.
func FloatIn(s string, bits int) (float64, error) {
	typ := "double precision"
	if bits == 32 {
		typ = "real"
	}
	bad := &Error{Code: "22P02", Msg: "invalid input syntax for type " + typ}
	t := strings.TrimRight(strings.TrimLeft(s, " \t\n\r\v\f"), " \t\n\r\v\f")
	body := strings.TrimLeft(t, "+-")
	if len(t)-len(body) > 1 || body == "" || strings.ContainsAny(body, "+-_") && !exponentSign(body) {
		return 0, bad
	}
	neg := strings.HasPrefix(t, "-")
	switch strings.ToLower(body) {
	case "nan": // a sign before it reads as NaN too, as strtod reads it
		return math.NaN(), nil
	case "inf", "infinity":
		if neg {
			return math.Inf(-1), nil
		}
		return math.Inf(1), nil
	}
	hex := len(body) > 2 && body[0] == '0' && (body[1] == 'x' || body[1] == 'X')
	for _, c := range body {
		ok := c >= '0' && c <= '9' || c == '.' || c == '+' || c == '-' ||
			!hex && (c == 'e' || c == 'E') || hex && (c == 'x' || c == 'X' || c == 'p' || c == 'P' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F')
		if !ok {
			return 0, bad
		}
	}
	num := t
	if hex && !strings.ContainsAny(body, "pP") {
		num += "p0" // strtod's hexadecimal mantissa without an exponent; Go's needs one
	}
	f, err := strconv.ParseFloat(num, bits)
	if errors.Is(err, strconv.ErrRange) {
		return 0, &Error{Code: "22003", Msg: "value out of range for type " + typ}
	}
	if err != nil {
		return 0, bad
	}
	if f == 0 && nonZeroMantissa(body, hex) {
		return 0, &Error{Code: "22003", Msg: "value out of range for type " + typ}
	}
	return f, nil
}

// exponentSign reports whether the only signs in body (a number without its leading sign) are
// an exponent's (1e-5, 0x1p+3).
func exponentSign(body string) bool {
	for i := 0; i < len(body); i++ {
		if c := body[i]; (c == '+' || c == '-') && (i == 0 || !strings.ContainsRune("eEpP", rune(body[i-1]))) {
			return false
		}
	}
	return !strings.Contains(body, "_")
}

// nonZeroMantissa reports whether the mantissa of number text body has a digit other than zero
// (its value is not zero, so a zero read from it is an underflow).
func nonZeroMantissa(body string, hex bool) bool {
	if hex {
		body = body[2:]
	}
	end := strings.IndexAny(body, "eEpP")
	if hex {
		end = strings.IndexAny(body, "pP")
	}
	if end < 0 {
		end = len(body)
	}
	return strings.ContainsAny(body[:end], "123456789abcdefABCDEF")
}
