package pgnumfmt

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/flightsrv/flightsrv/internal/fuzzcount"
)

// TestIntIn: PostgreSQL 15's int2in/int4in/int8in answers (checked on a PostgreSQL 15 server
// by e2e's TestTextCastsAsPostgres): decimal only, leading zeros decimal, white space around,
// 22003 found as the digits are read.
func TestIntIn(t *testing.T) {
	for _, c := range []struct {
		s    string
		bits int
		want int64
		code string
	}{
		{"0000000510", 32, 510, ""}, {"0612", 32, 612, ""}, {"-010", 32, -10, ""}, {"08", 32, 8, ""}, {" 12 ", 32, 12, ""},
		{"\t+7\n", 16, 7, ""}, {"-0", 64, 0, ""}, {"32767", 16, 32767, ""}, {"-32768", 16, -32768, ""}, {"32768", 16, 0, "22003"},
		{"-2147483648", 32, -2147483648, ""}, {"2147483648", 32, 0, "22003"}, {"-9223372036854775808", 64, -9223372036854775808, ""},
		{"9223372036854775808", 64, 0, "22003"}, {"99999999999x", 32, 0, "22003"}, {"0x1A", 32, 0, "22P02"}, {"0b101", 32, 0, "22P02"},
		{"0o17", 32, 0, "22P02"}, {"1_000", 32, 0, "22P02"}, {"1.0", 32, 0, "22P02"}, {"", 32, 0, "22P02"}, {" ", 32, 0, "22P02"},
		{"-", 32, 0, "22P02"}, {"+-1", 32, 0, "22P02"}, {"1 2", 32, 0, "22P02"}, {"١٢", 32, 0, "22P02"}, {"1e2", 64, 0, "22P02"},
	} {
		v, err := IntIn(c.s, c.bits)
		var e *Error
		if c.code != "" {
			if !errors.As(err, &e) || e.Code != c.code {
				t.Errorf("IntIn(%q, %d) = %d, %v; want %s", c.s, c.bits, v, err, c.code)
			}
			continue
		}
		if err != nil || v != c.want {
			t.Errorf("IntIn(%q, %d) = %d, %v; want %d", c.s, c.bits, v, err, c.want)
		}
	}
}

// TestBoolIn: boolin's prefixes, cases and white space.
func TestBoolIn(t *testing.T) {
	for s, want := range map[string]bool{"t": true, "TRUE": true, "tRuE": true, " true ": true, "tr": true, "y": true, "yes": true, "ye": true,
		"on": true, "ON": true, "1": true, "f": false, "fal": false, "FALSE": false, "n": false, "no": false, "of": false, "off": false, " N ": false, "0": false} {
		if v, err := BoolIn(s); err != nil || v != want {
			t.Errorf("BoolIn(%q) = %v, %v; want %v", s, v, err, want)
		}
	}
	for _, s := range []string{"", " ", "o", "truex", "yess", "01", "10", "offf", "onn", "2", "t rue"} {
		if _, err := BoolIn(s); err == nil || err.(*Error).Code != "22P02" {
			t.Errorf("BoolIn(%q): %v, want 22P02", s, err)
		}
	}
}

// FuzzIntIn: IntIn agrees with a reference read of the same text (C white space trimmed, a
// sign and decimal digits, strconv.ParseInt base 10), 22003 for digits past the range even
// when other text follows them (PostgreSQL reads the digits first), 22P02 otherwise; BoolIn
// never panics and fails only with 22P02.
func FuzzIntIn(f *testing.F) {
	for _, s := range []string{"12", "0612", " -010 ", "0x1A", "1_000", "+7", "2147483648", "99999999999x", "", "-", "１２"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fuzzcount.Add()
		for _, bits := range []int{16, 32, 64} {
			got, err := IntIn(s, bits)
			want, code := refIntIn(s, bits)
			var e *Error
			switch {
			case code == "" && (err != nil || got != want):
				t.Fatalf("IntIn(%q, %d) = %d, %v; want %d", s, bits, got, err, want)
			case code != "" && (!errors.As(err, &e) || e.Code != code):
				t.Fatalf("IntIn(%q, %d) = %d, %v; want %s", s, bits, got, err, code)
			}
		}
		if _, err := BoolIn(s); err != nil && err.(*Error).Code != "22P02" {
			t.Fatalf("BoolIn(%q): %v", s, err)
		}
	})
}

// refIntIn is pg_strtoint's reading of s, by strconv.
func refIntIn(s string, bits int) (int64, string) {
	const space = " \t\n\v\f\r"
	t := strings.TrimLeft(s, space)
	body := strings.TrimPrefix(strings.TrimPrefix(t, "+"), "-")
	if len(t)-len(body) > 1 {
		return 0, "22P02"
	}
	n := 0
	for n < len(body) && body[n] >= '0' && body[n] <= '9' {
		n++
	}
	if n == 0 {
		return 0, "22P02"
	}
	v, err := strconv.ParseInt(t[:len(t)-len(body)+n], 10, bits)
	if err != nil {
		return 0, "22003"
	}
	if strings.TrimLeft(body[n:], space) != "" {
		return 0, "22P02"
	}
	return v, ""
}
