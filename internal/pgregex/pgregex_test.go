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
		`(a)\1`: true, `a(?=b)`: true, `a(?!b)`: true, `(?<=a)b`: true, `\bx`: true, `\m.`: true, `\M`: true, `a*\M`: true,
		`[[.a.]]`: true, `[[=a=]]`: true, `\x41`: true, `\p{L}`: true, `[[:word:]]`: true, `(?b)a`: true, `(?e)a`: true, `x[[:<:]]`: true,
		`[[:<:]]a?`: true, `[^a]\M`: true, `[!-a]\M`: true,
		`a(`: false, `[a`: false, `a{256}`: false, `\`: false, `(?z)a`: false, `(?i`: false, `a(?i)b`: false, `(?)a`: false, `***a`: false,
		`***:***:a`: false, `(?P<n>x)`: false, `a\y*`: false, `a[[:<:]b]`: false, `(?#x`: false,
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

// TestOptionsAsPostgres: directors, embedded options, flags, comments and word boundaries
// match as PostgreSQL 15 answered them (psql; e2e's TestRegexOptionsAsPostgres compares more).
func TestOptionsAsPostgres(t *testing.T) {
	for _, c := range []struct {
		p, flags, s string
		want        bool
	}{
		{`(?i)abc`, "", "ABC", true}, {`(?x)a b`, "", "a b", false}, {`(?x)a b`, "", "ab", true}, {`***:ab`, "", "ab", true},
		{`***=a.b`, "", "a.b", true}, {`***=a.b`, "", "axb", false}, {`***=a.b`, "i", "A.B", true}, {`(?x)a +b`, "", "aab", true},
		{"(?x)a#comment\nb", "", "ab", true}, {`(?x)a\ b`, "", "a b", true}, {`(?x)a[ ]b`, "", "a b", true}, {`(?x)a{ 1}b`, "", "ab", true},
		{`***:(?i)AB`, "", "ab", true}, {`(?q)a.b`, "", "ab", false}, {`(?iq)A.B`, "", "a.b", true}, {`(?xq)a b`, "", "ab", false},
		{`(?qx)a b`, "", "a b", true}, {`a(?#comment)b`, "", "ab", true}, {`(?c)ab`, "i", "AB", false}, {`(?t)ab`, "", "ab", true},
		{"(?n)a.b", "", "a\nb", false}, {"(?n)a[^x]b", "", "a\nb", false}, {"(?n)^b", "", "a\nb", true}, {"(?p)^b", "", "a\nb", false},
		{"(?p)a.b", "", "a\nb", false}, {"(?w)^b", "", "a\nb", true}, {"(?w)a.b", "", "a\nb", true}, {"(?m)^b", "", "a\nb", true},
		{"(?s)^b", "", "a\nb", false}, {"(?n)a$", "", "a\nb", true}, {"(?n)a\\Z", "", "a\nb", false}, {"(?n)a\\Db", "", "a\nb", true},
		{"(?n)a\\Wb", "", "a\nb", true}, {"(?n)a[^[:alpha:]]b", "", "a\nb", false}, {"(?n)a[^]x]b", "", "a]b", false}, {"(?n)a[^]x]b", "", "ayb", true},
		{"a.b", "n", "a\nb", false}, {"^b", "w", "a\nb", true}, {"a b", "x", "ab", true}, {"a.b", "q", "a.b", true}, {"B", "ci", "abc", true},
		{"B", "ic", "abc", false}, {"***:", "", "a", true}, {"***=", "", "a", true},
		{`[[:<:]]bar`, "", "foo bar", true}, {`[[:<:]]bar`, "", "foobar", false}, {`foo[[:>:]]`, "", "foo bar", true}, {`foo[[:>:]]`, "", "foobar", false},
		{`\mbar\M`, "", "foo bar", true}, {`\mbar`, "", "foo_bar", false}, {`\ybar`, "", "foobar", false}, {`o\Yb`, "", "foobar", true},
		{`a\Y `, "", "a b", false}, {`[[:<:]]ab`, "i", "Ab", true}, {`\m[a-z]+\M`, "", "-- xy --", true}, {`\m\d{2}\M`, "", "a 123", false},
	} {
		o, err := ParseFlags(c.flags, nil)
		if err != nil {
			t.Fatalf("%q: %v", c.flags, err)
		}
		re, err := Compile(c.p, o)
		if err != nil {
			t.Errorf("%q (flags %q): %v", c.p, c.flags, err)
			continue
		}
		if got, _ := re.Match([]byte(c.s)); got != c.want {
			t.Errorf("%q (flags %q) over %q: %v, PostgreSQL %v (as %s)", c.p, c.flags, c.s, got, c.want, re.Regexp)
		}
	}
	var global bool
	if _, err := ParseFlags("gig", &global); err != nil || !global {
		t.Errorf("flags gig: %v, global %v", err, global)
	}
	for flags, want := range map[string]string{"z": `invalid regular expression option: "z"`, "G": `invalid regular expression option: "G"`,
		"g": `invalid regular expression option: "g"`, "bz": `invalid regular expression option: "z"`} {
		var fe *FlagError
		if _, err := ParseFlags(flags, nil); !errors.As(err, &fe) || err.Error() != want {
			t.Errorf("flags %q: %v, want %s", flags, err, want)
		}
	}
	var ue *UnsupportedError
	if _, err := ParseFlags("ie", nil); !errors.As(err, &ue) {
		t.Errorf("flags ie: %v, want a refusal by name", err)
	}
}

// FuzzRegexCompile runs arbitrary patterns and flags (a client's text) and subjects through
// ParseFlags, Compile and the match: no panic; flags are read or refused (FlagError, by name)
// and written back by Options.Flags as read; a pattern is compiled, refused by name or a
// syntax error; an ASCIIOnly pattern refuses exactly the non-ASCII subjects.
func FuzzRegexCompile(f *testing.F) {
	for _, p := range []string{`^a.*b$`, `[[:alpha:]]+`, `(a|ab)(c|bcd)`, `\d{2,3}`, `[]a]`, `(?:x)`, `\w`, `a\1`,
		`***:(?ix)a b # c`, `***=a.b`, `(?n)[^]x]`, `[[:<:]]a[[:>:]]`, `\m\w+\M`, `\ya\Y`, `a(?#c)b`, `(?q)(?i)`} {
		f.Add(p, "abc 123 é", "i")
	}
	f.Fuzz(func(t *testing.T, p, s, flags string) {
		fuzzcount.Add()
		if !utf8.ValidString(p) || !utf8.ValidString(s) {
			return
		}
		o, err := ParseFlags(flags, nil)
		if err != nil {
			var fe *FlagError
			var ue *UnsupportedError
			if !errors.As(err, &fe) && !errors.As(err, &ue) {
				t.Fatalf("flags %q: unexpected error %v", flags, err)
			}
			return
		}
		if back, err := ParseFlags(o.Flags(), nil); err != nil || back != o {
			t.Fatalf("flags %q: written back as %q, read as %+v (%v), want %+v", flags, o.Flags(), back, err, o)
		}
		re, err := Compile(p, o)
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
