package ops

import (
	"errors"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/flightsrv/flightsrv/internal/fuzzcount"
)

// likeReference is the LIKE matcher flightsrv had before like.go: the pattern translated
// into an anchored regular expression (% .*, _ one character, \ quoting the next), ILIKE
// with both sides lower-cased by strings.ToLower (PostgreSQL's lower in a multibyte encoding).
// trailing reports a pattern ending in an unescaped \, which never matches: PostgreSQL
// answers false or raises 22025 depending on whether its matching reaches that \.
func likeReference(s, p string, fold bool) (match, trailing bool) {
	if fold {
		s, p = strings.ToLower(s), strings.ToLower(p)
	}
	var b strings.Builder
	b.WriteString("(?s)^")
	for i := 0; i < len(p); {
		r, size := utf8.DecodeRuneInString(p[i:])
		i += size
		switch r {
		case '%':
			b.WriteString(".*")
		case '_':
			b.WriteString(".")
		case '\\':
			if i >= len(p) {
				return false, true
			}
			r2, s2 := utf8.DecodeRuneInString(p[i:])
			i += s2
			b.WriteString(regexp.QuoteMeta(string(r2)))
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	b.WriteString("$")
	return regexp.MustCompile(b.String()).MatchString(s), false
}

// likeOf is s LIKE p (fold: ILIKE) through like.go.
func likeOf(s, p string, fold bool) (bool, error) {
	in := []byte(s)
	if fold {
		in = lowerInto(nil, in)
	}
	return compileLike([]byte(p), fold).match(in)
}

// checkLike compares like.go's LIKE and ILIKE of s and p with likeReference.
func checkLike(t *testing.T, s, p string) {
	t.Helper()
	for _, fold := range []bool{false, true} {
		want, trailing := likeReference(s, p, fold)
		got, err := likeOf(s, p, fold)
		if trailing {
			if got || (err != nil && !errors.Is(err, errLikeEscape)) {
				t.Fatalf("%q LIKE %q (fold %v) = %v, %v; want false or 22025", s, p, fold, got, err)
			}
			continue
		}
		if err != nil || got != want {
			t.Fatalf("%q LIKE %q (fold %v) = %v, %v; reference %v", s, p, fold, got, err, want)
		}
	}
}

// TestLikeMatchesReference: like.go's matcher answers as the regular-expression translation
// (which answers as PostgreSQL's MatchText for valid UTF-8 text) on hand-picked cases —
// overlapping runs, escapes of %, _ and \, multibyte characters under _, ILIKE of non-ASCII
// text (PostgreSQL: 'İ' ILIKE 'i') — and on random patterns over a small alphabet.
func TestLikeMatchesReference(t *testing.T) {
	for _, c := range [][2]string{
		{"abc", "abc"}, {"abc", "a%"}, {"abc", "%c"}, {"abc", "%b%"}, {"abc", "%"}, {"", "%"}, {"", ""},
		{"", "_"}, {"a", "_"}, {"é", "_"}, {"éa", "_a"}, {"aa", "%a%a%"}, {"aba", "%ab%ba%"}, {"abab", "%ab%ab"},
		{"abc", "a%%c"}, {"ab", "a%b%"}, {"aXb", "a\\Xb"}, {"a%b", "a\\%b"}, {"aXb", "a\\%b"}, {"a_b", "a\\_b"},
		{"a\\b", "a\\\\b"}, {"abc", "abc\\"}, {"x", "\\"}, {"İ", "i"}, {"ǅx", "ǆ%"}, {"ÀB", "àb"},
		{`{"delay":-3,"destination":"HNL"}`, `%"destination":"HNL"%`}, {"flight-125", "%5"}, {"flight-125", "flight-_2%"},
		{"aaa", "a%aa"}, {"aa", "a%aa"}, {"abcabc", "%abc"}, {"ab", "%_b"}, {"b", "%_b"}, {"xy", "_%_"}, {"x", "_%_"},
	} {
		checkLike(t, c[0], c[1])
	}
	// A trailing escape is an error only where the matching reaches it (PostgreSQL 15).
	for _, c := range []struct {
		s, p string
		err  bool
	}{{"abc", "x\\", false}, {"abc", "a%\\", true}, {"abc", "abc\\", false}, {"a", "_\\", false}, {"", "\\", false}, {"ab", "a\\", true}} {
		got, err := likeOf(c.s, c.p, false)
		if got || (err != nil) != c.err || (err != nil && !errors.Is(err, errLikeEscape)) {
			t.Errorf("%q LIKE %q = %v, %v; PostgreSQL's error: %v", c.s, c.p, got, err, c.err)
		}
	}
	rng := rand.New(rand.NewPCG(7, 22))
	alpha := []string{"a", "b", "é", "%", "_", "\\", "A"}
	gen := func(n int, pat bool) string {
		var b strings.Builder
		for range rng.IntN(n) {
			k := rng.IntN(len(alpha))
			if !pat && k >= 3 && k <= 5 {
				k = rng.IntN(3)
			}
			b.WriteString(alpha[k])
		}
		return b.String()
	}
	for range 200000 {
		checkLike(t, gen(9, false), gen(7, true))
	}
}

// FuzzLike feeds LIKE and ILIKE patterns and texts (valid UTF-8, as text columns hold) to
// like.go's matcher: every answer and error is the regular-expression reference's.
func FuzzLike(f *testing.F) {
	for _, c := range [][2]string{{"abc", "a%c"}, {"aé_", "%\\_"}, {"x", "\\"}, {"İx", "i_"}, {"aaa", "%a%a%a%a"}} {
		f.Add(c[0], c[1])
	}
	f.Fuzz(func(t *testing.T, s, p string) {
		fuzzcount.Add()
		if !utf8.ValidString(s) || !utf8.ValidString(p) || len(p) > 64 || len(s) > 256 {
			return
		}
		checkLike(t, s, p)
	})
}
