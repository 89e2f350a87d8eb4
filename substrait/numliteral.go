package substrait

import (
	"fmt"
	"unicode/utf8"

	pg "github.com/pganalyze/pg_query_go/v6"
)

// checkNumericLiterals refuses the numeric literal forms PostgreSQL 16 added and PostgreSQL 15,
// the oracle, rejects: hexadecimal, octal and binary integers (0x10, 0o17, 0b101) and
// underscores between digits (1_000, 1_000.5). The parser (pg_query, PostgreSQL 17's grammar)
// reads them as numbers; PostgreSQL 15's scanner reads a number followed by identifier
// characters as one token and raises 42601 "trailing junk after numeric literal at or near
// "<token>"" (scan.l's integer_junk, decimal_junk and real_junk). The error quotes that token
// and gives its 1-based character position as other syntax errors do.
func checkNumericLiterals(sql string) error {
	if !mayHaveNewNumeric(sql) {
		return nil
	}
	res, err := pg.Scan(sql)
	if err != nil {
		return nil // the parser reports it
	}
	for _, t := range res.GetTokens() {
		if t.Token != pg.Token_ICONST && t.Token != pg.Token_FCONST {
			continue
		}
		start, end := int(t.Start), int(t.End)
		if start < 0 || end > len(sql) || start >= end {
			continue
		}
		if !newNumericForm(sql[start:end]) {
			continue
		}
		junk := pg15JunkEnd(sql, start)
		pos := utf8.RuneCountInString(sql[:start]) + 1
		return &Error{Code: InvalidArgument, SQLState: "42601",
			Msg:    fmt.Sprintf("trailing junk after numeric literal at or near %q (position %d)", sql[start:junk], pos),
			LogMsg: fmt.Sprintf("SQL syntax error at position %d", pos)}
	}
	return nil
}

// mayHaveNewNumeric is a cheap test before scanning: a digit followed by '_' or a radix letter.
func mayHaveNewNumeric(sql string) bool {
	for i := 0; i+1 < len(sql); i++ {
		if asciiDigit(sql[i]) {
			switch sql[i+1] {
			case '_', 'x', 'X', 'o', 'O', 'b', 'B':
				return true
			}
		}
	}
	return false
}

// newNumericForm reports whether a numeric token of PostgreSQL 17's scanner is a form
// PostgreSQL 15 lacks: a radix prefix or an underscore.
func newNumericForm(tok string) bool {
	if len(tok) > 1 && tok[0] == '0' {
		switch tok[1] {
		case 'x', 'X', 'o', 'O', 'b', 'B':
			return true
		}
	}
	for i := 0; i < len(tok); i++ {
		if tok[i] == '_' {
			return true
		}
	}
	return false
}

// pg15JunkEnd is the end of the token PostgreSQL 15's scanner reads at start: a number
// (digits, an optional fraction, an optional exponent) and the identifier characters after it.
func pg15JunkEnd(sql string, start int) int {
	i := start
	digits := func() {
		for i < len(sql) && asciiDigit(sql[i]) {
			i++
		}
	}
	digits()
	if i < len(sql) && sql[i] == '.' && !(i+1 < len(sql) && sql[i+1] == '.') {
		i++
		digits()
	}
	if i < len(sql) && (sql[i] == 'e' || sql[i] == 'E') {
		j := i + 1
		if j < len(sql) && (sql[j] == '+' || sql[j] == '-') {
			j++
		}
		if j < len(sql) && asciiDigit(sql[j]) {
			i = j
			digits()
		}
	}
	for i < len(sql) && (asciiDigit(sql[i]) || sql[i] == '_' || sql[i] == '$' || sql[i] >= 0x80 ||
		(sql[i]|0x20 >= 'a' && sql[i]|0x20 <= 'z')) {
		i++
	}
	return i
}

func asciiDigit(c byte) bool { return c >= '0' && c <= '9' }

// CheckSyntax returns the syntax error PostgreSQL 15 raises for sql that the parser (a newer
// grammar) accepts: numeric literals in PostgreSQL 16's forms (checkNumericLiterals). nil
// says nothing of other errors, which parsing reports. The error is an *Error (42601).
func CheckSyntax(sql string) error { return checkNumericLiterals(sql) }
