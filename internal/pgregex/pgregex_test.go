package pgregex

import (
	"errors"
	"testing"
	"unicode/utf8"

	"github.com/flightsrv/flightsrv/internal/fuzzcount"
)

// TestRefusals: the constructs RE2 reads otherwise than PostgreSQL, or lacks, are refused by
// name; invalid patterns are ErrSyntax. (e2e's TestRegularExpressionsAsPostgres checks the
// accepted ones against PostgreSQL.)
func TestRefusals(t *testing.T) {
	for p, unsupported := range map[string]bool{
		`(a)\1`: true, `a(?=b)`: true, `a(?!b)`: true, `(?<=a)b`: true, `\bx`: true, `\mx`: true, `\y`: true, `[[.a.]]`: true,
		`[[=a=]]`: true, `***=a`: true, `\x41`: true, `\p{L}`: true, `(?i)a`: true, `[[:word:]]`: true,
		`a(`: false, `[a`: false, `a{256}`: false, `\`: false,
	} {
		_, err := Compile(p, Options{})
		var ue *UnsupportedError
		if unsupported && !errors.As(err, &ue) || !unsupported && !errors.Is(err, ErrSyntax) {
			t.Errorf("%q: %v", p, err)
		}
	}
	if _, err := Compile(`a+?`, Options{Extent: true}); err == nil {
		t.Errorf("a non-greedy quantifier in regexp_replace was accepted")
	}
	re, err := Compile(`a|ab`, Options{})
	if err != nil || re.FindString("abc") != "ab" {
		t.Errorf("a|ab over abc: %v, want the longest match ab", err)
	}
}

// FuzzRegexCompile runs arbitrary patterns (a client's text) and subjects through Compile and
// the match: no panic; a pattern is compiled, refused by name or a syntax error; an ASCIIOnly
// pattern refuses exactly the non-ASCII subjects.
func FuzzRegexCompile(f *testing.F) {
	for _, p := range []string{`^a.*b$`, `[[:alpha:]]+`, `(a|ab)(c|bcd)`, `\d{2,3}`, `[]a]`, `(?:x)`, `\w`, `a\1`} {
		f.Add(p, "abc 123 é", false)
	}
	f.Fuzz(func(t *testing.T, p, s string, icase bool) {
		fuzzcount.Add()
		if !utf8.ValidString(p) || !utf8.ValidString(s) {
			return
		}
		re, err := Compile(p, Options{IgnoreCase: icase})
		if err != nil {
			var ue *UnsupportedError
			if !errors.As(err, &ue) && !errors.Is(err, ErrSyntax) {
				t.Fatalf("%q: unexpected error %v", p, err)
			}
			return
		}
		_, err = re.Match([]byte(s))
		if (err != nil) != (re.ASCIIOnly && !isASCII(s)) {
			t.Fatalf("%q over %q: %v (ASCIIOnly %v)", p, s, err, re.ASCIIOnly)
		}
	})
}
