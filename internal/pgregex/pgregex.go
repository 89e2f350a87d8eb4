// Package pgregex compiles PostgreSQL regular expressions (its "advanced" flavour, ARE, as the
// ~ operators and regexp_replace read them; docs/sql.md, "Regular expressions") into Go's RE2
// regexp where the two agree, and refuses by name what RE2 reads otherwise or cannot do
// (backreferences, lookaround, PostgreSQL's own escapes), so that a pattern never matches
// differently from PostgreSQL in a C-locale database (character classes such as \w and
// [[:alpha:]] are ASCII, as in flightsrv's bytewise "C" collation).
//
// What a character class (\w, \s, [[:alpha:]]…) or case-insensitive matching makes of
// non-ASCII text depends on the database's locale (LC_CTYPE: C, C.UTF-8, en_US.UTF-8…), where
// RE2's is fixed: such a pattern is exact over ASCII text only, and Regexp.ASCIIOnly says so
// (the executor refuses a non-ASCII subject then, rather than answer for one locale).
//
// The translation: "." and bracket expressions match a newline (PostgreSQL's default, RE2's
// flag s); case-insensitive matching is RE2's flag i; a pattern whose quantifiers are all
// greedy matches leftmost-longest (PostgreSQL's rule for a greedy RE), and one with a
// non-greedy quantifier is refused for functions that return the match (regexp_replace),
// where PostgreSQL's whole-RE greediness rules differ from RE2's, and accepted for the
// operators, which only ask whether a match exists.
//
// Compiled patterns are immutable and safe for concurrent use.
package pgregex

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// UnsupportedError names a construct of a pattern this package refuses.
type UnsupportedError struct{ Construct string }

func (e *UnsupportedError) Error() string {
	return "regular expressions with " + e.Construct + " are not supported"
}

// ErrSyntax is a pattern neither PostgreSQL nor RE2 reads (PostgreSQL: invalid regular
// expression, SQLSTATE 2201B).
var ErrSyntax = errors.New("invalid regular expression")

// Options are how a pattern is matched.
type Options struct {
	// IgnoreCase is ~* (and regexp_replace's flag i).
	IgnoreCase bool
	// Extent says the match's extent is used (regexp_replace), not only its existence:
	// non-greedy quantifiers are then refused (see the package comment).
	Extent bool
}

// Regexp is a compiled pattern. ASCIIOnly: its answer is PostgreSQL's for ASCII subjects
// only (see the package comment). LooksBehind: it asserts on the text before a position
// (context.go), so a search must see the whole subject.
type Regexp struct {
	*regexp.Regexp
	ASCIIOnly   bool
	LooksBehind bool
}

// ErrLocale is the refusal of a non-ASCII subject of an ASCIIOnly pattern.
var ErrLocale = &UnsupportedError{"character classes (\\w, \\s, [[:alpha:]]…) or case-insensitive matching over non-ASCII text (their meaning depends on the database's locale)"}

// localeClasses are the constructs whose meaning over non-ASCII text depends on the locale.
var localeClasses = []string{`\w`, `\W`, `\s`, `\S`, "[:alpha:]", "[:alnum:]", "[:upper:]", "[:lower:]", "[:space:]", "[:punct:]",
	"[:graph:]", "[:print:]", "[:cntrl:]", "[:blank:]"}

// Compile translates pattern. Errors: *UnsupportedError, or ErrSyntax.
func Compile(pattern string, o Options) (*Regexp, error) {
	if err := check(pattern, o); err != nil {
		return nil, err
	}
	if o.IgnoreCase && !isASCII(pattern) {
		return nil, &UnsupportedError{"case-insensitive matching of non-ASCII characters"}
	}
	ascii := o.IgnoreCase
	for _, c := range localeClasses {
		ascii = ascii || strings.Contains(pattern, c)
	}
	flags := "(?s"
	if o.IgnoreCase {
		flags += "i"
	}
	re, err := regexp.Compile(flags + ")(?:" + pattern + ")")
	if err != nil {
		return nil, ErrSyntax
	}
	re.Longest()
	return &Regexp{Regexp: re, ASCIIOnly: ascii, LooksBehind: looksBehindPattern(re.String())}, nil
}

// isASCII reports whether s is ASCII.
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// Match reports whether b holds a match: ErrLocale when the pattern is ASCIIOnly and b is not
// ASCII.
func (re *Regexp) Match(b []byte) (bool, error) {
	if re.ASCIIOnly && !isASCII(string(b)) {
		return false, ErrLocale
	}
	return re.Regexp.Match(b), nil
}

// CheckSubject is ErrLocale when the pattern is ASCIIOnly and s is not ASCII.
func (re *Regexp) CheckSubject(s string) error {
	if re.ASCIIOnly && !isASCII(s) {
		return ErrLocale
	}
	return nil
}

// check refuses the constructs RE2 reads otherwise than PostgreSQL or does not have.
func check(p string, o Options) error {
	if strings.HasPrefix(p, "***") {
		return &UnsupportedError{"a director prefix (***: or ***=)"}
	}
	inBracket := false
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '\\':
			if i+1 >= len(p) {
				return ErrSyntax
			}
			e := p[i+1]
			i++
			switch {
			case strings.IndexByte("dDsSwW", e) >= 0:
				if inBracket && strings.IndexByte("DSW", e) >= 0 {
					return ErrSyntax // PostgreSQL: invalid escape inside a bracket expression
				}
			case strings.IndexByte("tnrf", e) >= 0:
			case e >= '1' && e <= '9':
				return &UnsupportedError{"backreferences (\\1 … \\9)"}
			case e < 0x80 && (e >= 'a' && e <= 'z' || e >= 'A' && e <= 'Z' || e >= '0' && e <= '9'):
				return &UnsupportedError{fmt.Sprintf("the escape \\%c", e)}
			}
		case inBracket:
			if c == ']' && !bracketStart(p, i) {
				inBracket = false
			} else if c == '[' && i+1 < len(p) && (p[i+1] == '.' || p[i+1] == '=') {
				return &UnsupportedError{"collating elements and equivalence classes ([[. .]], [[= =]])"}
			} else if c == '[' && strings.HasPrefix(p[i:], "[:word:]") {
				return &UnsupportedError{"the class [:word:]"}
			} else if c == '[' && i+1 < len(p) && p[i+1] == ':' {
				end := strings.Index(p[i:], ":]")
				if end < 0 {
					return ErrSyntax
				}
				i += end + 1
			}
		case c == '[':
			inBracket = true
			// A ']' first (after an optional '^') is a literal member.
		case c == '(' && i+1 < len(p) && p[i+1] == '?':
			if i+2 < len(p) && p[i+2] == ':' {
				continue
			}
			return &UnsupportedError{"lookaround and (? constructs other than (?:"}
		case c == '{':
			// PostgreSQL refuses counts above 255 (RE_DUP_MAX); RE2 allows 1000.
			j := i + 1
			n := 0
			for j < len(p) && (p[j] >= '0' && p[j] <= '9' || p[j] == ',') {
				if p[j] == ',' {
					n = 0
				} else {
					n = n*10 + int(p[j]-'0')
					if n > 255 {
						return ErrSyntax
					}
				}
				j++
			}
		case o.Extent && (c == '*' || c == '+' || c == '?' || c == '}') && i+1 < len(p) && p[i+1] == '?':
			return &UnsupportedError{"non-greedy quantifiers in regexp_replace"}
		}
	}
	if inBracket {
		return ErrSyntax
	}
	return nil
}

// bracketStart reports whether the ']' at i is the first member of its bracket expression
// (then a literal): right after '[' or '[^'.
func bracketStart(p string, i int) bool {
	j := i - 1
	if j >= 0 && p[j] == '^' {
		j--
	}
	return j >= 0 && p[j] == '[' && (j == 0 || p[j-1] != '\\')
}

// HasAlternation reports whether pattern has a top-level or nested '|' outside bracket
// expressions (its subexpressions' extents may then differ between PostgreSQL and RE2).
func HasAlternation(pattern string) bool {
	in := false
	for i := 0; i < len(pattern); i++ {
		switch c := pattern[i]; {
		case c == '\\':
			i++
		case in:
			if c == ']' && !bracketStart(pattern, i) {
				in = false
			}
		case c == '[':
			in = true
		case c == '|':
			return true
		}
	}
	return false
}
