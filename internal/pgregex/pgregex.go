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
// The translation: PostgreSQL's options (a function's flags, ParseFlags; the director ***: or
// ***= and embedded options (?letters) at the start of the pattern) become RE2's flags s
// ("." and bracket expressions match a newline, PostgreSQL's default), m (newline-sensitive
// anchors) and i, a bracket expression with ^ excludes the newline in the newline-sensitive
// modes, the expanded syntax (x) loses its white space and comments, a literal pattern (q,
// ***=) is quoted; PostgreSQL's word boundaries become RE2's \b and \B where RE2 can express
// them (Compile, translation.translate); a pattern whose quantifiers are all
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
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// UnsupportedError names a construct of a pattern this package refuses.
type UnsupportedError struct{ Construct string }

func (e *UnsupportedError) Error() string {
	return "regular expressions with " + e.Construct + " are not supported"
}

// ErrSyntax is a pattern neither PostgreSQL nor RE2 reads (PostgreSQL: invalid regular
// expression, SQLSTATE 2201B).
var ErrSyntax = errors.New("invalid regular expression")

// Options are how a pattern is matched: PostgreSQL's flags (its "ARE Embedded-Option
// Letters", given as a function's flags argument, ParseFlags, or at the start of the pattern,
// Compile), and Extent.
type Options struct {
	// IgnoreCase is ~* and flag i (c turns it off).
	IgnoreCase bool
	// Extent says the match's extent is used (regexp_replace), not only its existence:
	// non-greedy quantifiers are then refused (see the package comment).
	Extent bool
	// NewlineStop: "." and bracket expressions with ^ never match a newline (flags n, m, p).
	NewlineStop bool
	// NewlineAnchor: ^ and $ also match after and before a newline (flags n, m, w).
	NewlineAnchor bool
	// Expanded is the expanded syntax (flag x; t turns it off): white space outside bracket
	// expressions and comments from # to the end of a line are ignored.
	Expanded bool
	// Literal: the pattern is a literal string (flag q, or the director ***=).
	Literal bool
}

// set applies one option letter of PostgreSQL's table "ARE Embedded-Option Letters" (regex
// docs): false for a letter outside it. b and e (basic and extended REs) are refused by name.
func (o *Options) set(c byte) (bool, error) {
	switch c {
	case 'b', 'e':
		return true, &UnsupportedError{"the options b and e (basic and extended syntax)"}
	case 'c':
		o.IgnoreCase = false
	case 'i':
		o.IgnoreCase = true
	case 'm', 'n':
		o.NewlineStop, o.NewlineAnchor = true, true
	case 'p':
		o.NewlineStop, o.NewlineAnchor = true, false
	case 'w':
		o.NewlineStop, o.NewlineAnchor = false, true
	case 's':
		o.NewlineStop, o.NewlineAnchor = false, false
	case 'q':
		o.Literal = true
	case 't':
		o.Expanded = false
	case 'x':
		o.Expanded = true
	default:
		return false, nil
	}
	return true, nil
}

// FlagError is a letter of a function's flags argument that PostgreSQL does not know
// (PostgreSQL's parse_re_flags: SQLSTATE 22023).
type FlagError struct{ Flag string }

func (e *FlagError) Error() string {
	return fmt.Sprintf("invalid regular expression option: %q", e.Flag)
}

// ParseFlags reads the flags argument of regexp_replace, regexp_match and the other regexp_
// functions, as PostgreSQL's parse_re_flags does: the option letters of Options.set, later
// letters overriding earlier ones, and g (global) when the function takes it. Errors:
// *FlagError for a letter PostgreSQL does not know (g included when global is nil), then
// *UnsupportedError for b and e.
func ParseFlags(flags string, global *bool) (Options, error) {
	var o Options
	var unsupported error
	for _, r := range flags {
		if r == 'g' && global != nil {
			*global = true
			continue
		}
		ok := false
		if r < 0x80 {
			var err error
			ok, err = o.set(byte(r))
			if unsupported == nil {
				unsupported = err
			}
		}
		if !ok {
			return o, &FlagError{string(r)}
		}
	}
	return o, unsupported
}

// Flags writes o's letters as ParseFlags reads them back (IgnoreCase, the newline mode,
// Expanded, Literal; Extent is not a flag).
func (o Options) Flags() string {
	var b strings.Builder
	if o.IgnoreCase {
		b.WriteByte('i')
	}
	switch {
	case o.NewlineStop && o.NewlineAnchor:
		b.WriteByte('n')
	case o.NewlineStop:
		b.WriteByte('p')
	case o.NewlineAnchor:
		b.WriteByte('w')
	}
	if o.Expanded {
		b.WriteByte('x')
	}
	if o.Literal {
		b.WriteByte('q')
	}
	return b.String()
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
var ErrLocale = &UnsupportedError{"character classes (\\w, \\s, [[:alpha:]]…), word boundaries or case-insensitive matching over non-ASCII text (their meaning depends on the database's locale)"}

// localeClasses are the constructs whose meaning over non-ASCII text depends on the locale.
var localeClasses = []string{`\w`, `\W`, `\s`, `\S`, "[:alpha:]", "[:alnum:]", "[:upper:]", "[:lower:]", "[:space:]", "[:punct:]",
	"[:graph:]", "[:print:]", "[:cntrl:]", "[:blank:]"}

// Compile translates pattern, read with o as PostgreSQL's regcomp reads it: a director
// (***: an ARE, ***= a literal string) and embedded options ((?letters), Options.set) at the
// start, then the ARE. Errors: *UnsupportedError, or ErrSyntax.
func Compile(pattern string, o Options) (*Regexp, error) {
	p, o, err := prefix(pattern, o)
	if err != nil {
		return nil, err
	}
	if o.IgnoreCase && !isASCII(p) {
		return nil, &UnsupportedError{"case-insensitive matching of non-ASCII characters"}
	}
	var t translation
	if o.Literal {
		t.out.WriteString(regexp.QuoteMeta(p))
	} else {
		if o.Expanded {
			if p, err = unexpand(p); err != nil {
				return nil, err
			}
		}
		if err := t.translate(p, o); err != nil {
			return nil, err
		}
	}
	ascii := o.IgnoreCase || t.boundary
	for _, c := range localeClasses {
		ascii = ascii || !o.Literal && strings.Contains(p, c)
	}
	flags := "(?"
	if !o.NewlineStop {
		flags += "s"
	}
	if o.NewlineAnchor {
		flags += "m"
	}
	if o.IgnoreCase {
		flags += "i"
	}
	if flags == "(?" {
		flags = "(?:"
	} else {
		flags += ":"
	}
	re, err := regexp.Compile(flags + t.out.String() + ")")
	if err != nil {
		return nil, ErrSyntax
	}
	re.Longest()
	return &Regexp{Regexp: re, ASCIIOnly: ascii, LooksBehind: looksBehindPattern(re.String())}, nil
}

// prefix reads the director and the embedded options at the start of pattern, returning the
// rest and the options it sets.
func prefix(p string, o Options) (string, Options, error) {
	if rest, ok := strings.CutPrefix(p, "***="); ok {
		o.Literal = true
		return rest, o, nil
	}
	if o.Literal {
		return p, o, nil
	}
	p = strings.TrimPrefix(p, "***:")
	if strings.HasPrefix(p, "***") {
		return "", o, ErrSyntax // PostgreSQL: quantifier operand invalid
	}
	if len(p) < 3 || p[0] != '(' || p[1] != '?' || !isAlpha(p[2]) {
		return p, o, nil
	}
	i := 2
	for ; i < len(p) && isAlpha(p[i]); i++ {
		ok, err := o.set(p[i])
		if !ok {
			return "", o, ErrSyntax // PostgreSQL: invalid embedded option
		}
		if err != nil {
			return "", o, err
		}
	}
	if i >= len(p) || p[i] != ')' {
		return "", o, ErrSyntax
	}
	return p[i+1:], o, nil
}

func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// isWord reports an ASCII word character (alphanumeric or _), as PostgreSQL's word boundaries
// and \w read them in the "C" locale.
func isWord(c byte) bool { return isAlpha(c) || c >= '0' && c <= '9' || c == '_' }

// unexpand removes the expanded syntax's white space and comments (# to the end of the line)
// outside bracket expressions; an escaped white space or # stays (as a literal). PostgreSQL
// reads "(" then "?" where white space parts them: a quantifier without an operand
// (ErrSyntax). Non-ASCII white space (locale-dependent there) is refused by name.
func unexpand(p string) (string, error) {
	var b strings.Builder
	in := false
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '\\':
			b.WriteByte(c)
			if i+1 < len(p) {
				i++
				b.WriteByte(p[i])
			}
			continue
		case in:
			if c == ']' && !bracketStart(p, i) {
				in = false
			}
		case c == '[':
			in = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v' || c == '#':
			j := i
			for j < len(p) && (p[j] == ' ' || p[j] == '\t' || p[j] == '\n' || p[j] == '\r' || p[j] == '\f' || p[j] == '\v' || p[j] == '#') {
				if p[j] == '#' {
					for j < len(p) && p[j] != '\n' {
						j++
					}
					continue
				}
				j++
			}
			if i > 0 && p[i-1] == '(' && j < len(p) && p[j] == '?' && (i < 2 || p[i-2] != '\\') {
				return "", ErrSyntax
			}
			i = j - 1
			continue
		case c >= 0x80:
			r, _ := utf8.DecodeRuneInString(p[i:])
			if unicode.IsSpace(r) {
				return "", &UnsupportedError{"non-ASCII white space in the expanded syntax (x)"}
			}
		}
		b.WriteByte(c)
	}
	return b.String(), nil
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

// translation is an ARE rewritten into RE2's syntax: out, and whether it has a word boundary.
type translation struct {
	out      strings.Builder
	boundary bool
}

// translate checks an ARE (without its prefix) and writes RE2's equivalent: PostgreSQL's word
// boundaries become RE2's \b and \B (\y, \Y; \m and [[:<:]], the start of a word, where the
// next atom can only match a word character; \M and [[:>:]], the end of a word, where the
// atom before can only end with one), \A and \Z RE2's \A and \z, comments (?#…) are dropped,
// and a bracket expression with ^ excludes the newline in the newline-sensitive modes. It
// refuses the constructs RE2 reads otherwise than PostgreSQL or does not have.
func (t *translation) translate(p string, o Options) error {
	prevWord := false // the last atom can only end with a word character
	for i := 0; i < len(p); i++ {
		if strings.HasPrefix(p[i:], "[[:<:]]") || strings.HasPrefix(p[i:], "[[:>:]]") {
			// The whole bracket expression is the boundary (PostgreSQL's \m and \M).
			e := byte('m')
			if p[i+3] == '>' {
				e = 'M'
			}
			if err := t.wordBoundary(p, e, i+7, prevWord); err != nil {
				return err
			}
			i += 6
			prevWord = false
			continue
		}
		c := p[i]
		switch {
		case c == '\\':
			if i+1 >= len(p) {
				return ErrSyntax
			}
			e := p[i+1]
			i++
			word := false
			switch {
			case e == 'w' || e == 'd':
				word = true
			case strings.IndexByte("DsSWtnrf", e) >= 0:
			case e == 'y' || e == 'Y' || e == 'm' || e == 'M':
				if err := t.wordBoundary(p, e, i+1, prevWord); err != nil {
					return err
				}
				prevWord = false
				continue
			case e == 'A':
			case e == 'Z':
				t.out.WriteString(`\z`)
				prevWord = false
				continue
			case e >= '1' && e <= '9':
				return &UnsupportedError{"backreferences (\\1 … \\9)"}
			case e < 0x80 && (isAlpha(e) || e >= '0' && e <= '9'):
				return &UnsupportedError{fmt.Sprintf("the escape \\%c", e)}
			default:
				word = e == '_'
			}
			t.out.WriteByte('\\')
			t.out.WriteByte(e)
			prevWord = word
		case c == '[':
			end, word, err := bracket(p, i)
			if err != nil {
				return err
			}
			if o.NewlineStop && p[i+1] == '^' {
				// Not a newline either; a ']' first stays a member.
				rest := p[i+2 : end+1]
				if strings.HasPrefix(rest, "]") {
					rest = `\]` + rest[1:]
				}
				t.out.WriteString(`[^\n`)
				t.out.WriteString(rest)
			} else {
				t.out.WriteString(p[i : end+1])
			}
			i = end
			prevWord = word
		case c == '(' && i+1 < len(p) && p[i+1] == '?':
			switch {
			case i+2 < len(p) && p[i+2] == ':':
				t.out.WriteString("(?:")
				i += 2
			case i+2 < len(p) && p[i+2] == '#':
				end := strings.IndexByte(p[i:], ')')
				if end < 0 {
					return ErrSyntax
				}
				i += end
				continue // a comment: the atom before stays the last
			case i+2 < len(p) && (p[i+2] == '=' || p[i+2] == '!' || p[i+2] == '<'):
				return &UnsupportedError{"lookaround ((?=, (?!, (?<=, (?<!)"}
			default:
				return ErrSyntax // PostgreSQL: quantifier operand invalid
			}
			prevWord = false
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
			if j < len(p) && p[j] == '}' {
				// A bound: the atom may be absent when its least count is 0.
				if p[i+1] == '0' || p[i+1] == ',' {
					prevWord = false
				}
				t.out.WriteString(p[i : j+1])
				i = j
				continue
			}
			t.out.WriteByte(c)
		case c == '*' || c == '?':
			if o.Extent && i+1 < len(p) && p[i+1] == '?' {
				return &UnsupportedError{"non-greedy quantifiers where the match itself is used (regexp_replace, regexp_match, substring, SIMILAR TO)"}
			}
			prevWord = false
			t.out.WriteByte(c)
		case c == '+' || c == '}':
			if o.Extent && i+1 < len(p) && p[i+1] == '?' {
				return &UnsupportedError{"non-greedy quantifiers where the match itself is used (regexp_replace, regexp_match, substring, SIMILAR TO)"}
			}
			t.out.WriteByte(c)
		default:
			prevWord = isWord(c)
			t.out.WriteByte(c)
		}
	}
	return nil
}

// wordBoundary writes RE2's equivalent of PostgreSQL's word boundary \e (y, Y, m or M) whose
// next atom starts at next in p; prevWord says the atom before can only end with a word
// character.
func (t *translation) wordBoundary(p string, e byte, next int, prevWord bool) error {
	if next < len(p) && strings.IndexByte("*+?{", p[next]) >= 0 {
		return ErrSyntax // PostgreSQL: quantifier operand invalid
	}
	switch {
	case e == 'm' && !wordAtom(p, next):
		return &UnsupportedError{"a start of word (\\m, [[:<:]]) before other than a word character"}
	case e == 'M' && !prevWord:
		return &UnsupportedError{"an end of word (\\M, [[:>:]]) after other than a word character"}
	}
	t.boundary = true
	if e == 'Y' {
		t.out.WriteString(`\B`)
	} else {
		t.out.WriteString(`\b`)
	}
	return nil
}

// wordAtom reports whether the atom at i of p can only match a word character, and is not
// optional (no *, ? or {0… after it): a word character, \w or \d, or a bracket expression of
// word characters.
func wordAtom(p string, i int) bool {
	if i >= len(p) {
		return false
	}
	end := i + 1
	switch c := p[i]; {
	case c == '\\':
		if i+1 >= len(p) || p[i+1] != 'w' && p[i+1] != 'd' {
			return false
		}
		end = i + 2
	case c == '[':
		e, word, err := bracket(p, i)
		if err != nil || !word {
			return false
		}
		end = e + 1
	case !isWord(c):
		return false
	}
	return end >= len(p) || p[end] != '*' && p[end] != '?' && !strings.HasPrefix(p[end:], "{0")
}

// wordClasses are the character classes of word characters only.
var wordClasses = []string{"alpha", "alnum", "digit", "upper", "lower", "xdigit"}

// bracket checks the bracket expression starting at p[i] ('['), returning the index of its
// closing ']' and whether it matches word characters only (not negated; its members word
// characters, ranges within a-z, A-Z or 0-9, \w, \d and classes of letters and digits).
func bracket(p string, i int) (end int, word bool, err error) {
	j := i + 1
	word = true
	if j < len(p) && p[j] == '^' {
		word = false
		j++
	}
	if j < len(p) && p[j] == ']' {
		word = false
		j++
	}
	for ; j < len(p); j++ {
		c := p[j]
		switch {
		case c == ']':
			return j, word, nil
		case c == '\\':
			if j+1 >= len(p) {
				return 0, false, ErrSyntax
			}
			e := p[j+1]
			j++
			switch {
			case e == 'd' || e == 'w':
			case e == 's' || strings.IndexByte("tnrf", e) >= 0:
				word = false
			case e == 'D' || e == 'S' || e == 'W':
				return 0, false, ErrSyntax // PostgreSQL: invalid escape inside a bracket expression
			case e >= '1' && e <= '9':
				return 0, false, &UnsupportedError{"backreferences (\\1 … \\9)"}
			case e < 0x80 && (isAlpha(e) || e >= '0' && e <= '9'):
				return 0, false, &UnsupportedError{fmt.Sprintf("the escape \\%c", e)}
			default:
				word = word && e == '_'
			}
		case c == '[' && j+1 < len(p) && (p[j+1] == '.' || p[j+1] == '='):
			return 0, false, &UnsupportedError{"collating elements and equivalence classes ([[. .]], [[= =]])"}
		case c == '[' && strings.HasPrefix(p[j:], "[:word:]"):
			return 0, false, &UnsupportedError{"the class [:word:]"}
		case c == '[' && j+1 < len(p) && p[j+1] == ':':
			e := strings.Index(p[j:], ":]")
			if e < 0 {
				return 0, false, ErrSyntax
			}
			word = word && slices.Contains(wordClasses, p[j+2:j+e])
			j += e + 1
		case c == '-' && j+1 < len(p) && p[j+1] != ']':
			lo, hi := p[j-1], p[j+1]
			word = word && (lo >= 'a' && hi <= 'z' || lo >= 'A' && hi <= 'Z' || lo >= '0' && hi <= '9')
		default:
			word = word && isWord(c)
		}
	}
	return 0, false, ErrSyntax
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
