package ops

import (
	"bytes"
	"strings"
	"unicode/utf8"
)

// likePattern is a compiled LIKE pattern (escape character \), matched as PostgreSQL 15's
// MatchText (like_match.c) matches in a UTF-8 database: % any run of characters, _ one
// character, \ makes the next character literal, anything else compares byte for byte. A
// pattern of literal runs and % only (the common '%infix%', 'prefix%', '%suffix') is matched
// by its runs (simple): the first a prefix, the last a suffix, the others found in order
// by bytes.Index, leftmost first — the same answer, since such a pattern matches exactly when
// its runs occur in that order without overlapping. A compiled pattern is read-only.
type likePattern struct {
	p      []byte   // the pattern (lower-cased for ILIKE)
	runs   [][]byte // simple: the literal runs between the %s (len(runs) >= 1)
	simple bool
}

// errLikeEscape is PostgreSQL's error for a pattern ending in its escape character (22025).
var errLikeEscape = &DataError{Code: "22025", Msg: "LIKE pattern must not end with escape character"}

// compileLike compiles pattern p; fold (ILIKE) lower-cases it first, as PostgreSQL's
// Generic_Text_IC_like does in a multibyte encoding (the text is lower-cased per row). It
// never fails: a pattern ending in an unescaped \ is errLikeEscape only for the rows whose
// matching reaches that \, as in PostgreSQL ('abc' LIKE 'x\' is false, 'abc' LIKE 'a%\'
// the error).
func compileLike(p []byte, fold bool) *likePattern {
	if fold {
		p = []byte(strings.ToLower(string(p)))
	} else {
		p = bytes.Clone(p)
	}
	simple := true
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			simple = false
			i++
		case '_':
			simple = false
		}
	}
	lp := &likePattern{p: p, simple: simple}
	if simple {
		lp.runs = bytes.Split(p, []byte{'%'})
	}
	return lp
}

// match reports whether t matches the pattern (t valid UTF-8); its only error is
// errLikeEscape.
func (lp *likePattern) match(t []byte) (bool, error) {
	if !lp.simple {
		switch matchText(t, lp.p) {
		case likeTrue:
			return true, nil
		case likeEscapeAtEnd:
			return false, errLikeEscape
		}
		return false, nil
	}
	runs := lp.runs
	if len(runs) == 1 {
		return bytes.Equal(t, runs[0]), nil
	}
	first, last := runs[0], runs[len(runs)-1]
	if !bytes.HasPrefix(t, first) {
		return false, nil
	}
	t = t[len(first):]
	if !bytes.HasSuffix(t, last) {
		return false, nil
	}
	t = t[:len(t)-len(last)]
	for _, r := range runs[1 : len(runs)-1] {
		i := bytes.Index(t, r)
		if i < 0 {
			return false, nil
		}
		t = t[i+len(r):]
	}
	return true, nil
}

// MatchText's three answers, and its error: LIKE_ABORT stops the search for a place where a %
// may end (no later place can match either), which keeps a pattern of many %s from taking
// exponential time; likeEscapeAtEnd is its "LIKE pattern must not end with escape character",
// raised where the matching reaches a \ that ends the pattern.
const (
	likeFalse = iota
	likeTrue
	likeAbort
	likeEscapeAtEnd
)

// matchText is PostgreSQL's MatchText of text t against pattern p.
func matchText(t, p []byte) int {
	if len(p) == 1 && p[0] == '%' {
		return likeTrue
	}
	for len(t) > 0 && len(p) > 0 {
		switch p[0] {
		case '\\':
			p = p[1:]
			if len(p) == 0 {
				return likeEscapeAtEnd
			}
			if p[0] != t[0] {
				return likeFalse
			}
		case '%':
			p = p[1:]
			for len(p) > 0 {
				if p[0] == '%' {
					p = p[1:]
				} else if p[0] == '_' {
					if len(t) == 0 {
						return likeAbort
					}
					t = t[charLen(t):]
					p = p[1:]
				} else {
					break
				}
			}
			if len(p) == 0 {
				return likeTrue
			}
			first := p[0]
			if first == '\\' {
				if len(p) < 2 {
					return likeEscapeAtEnd
				}
				first = p[1]
			}
			for len(t) > 0 {
				if t[0] == first {
					if m := matchText(t, p); m != likeFalse {
						return m
					}
				}
				t = t[charLen(t):]
			}
			return likeAbort
		case '_':
			t = t[charLen(t):]
			p = p[1:]
			continue
		default:
			if p[0] != t[0] {
				return likeFalse
			}
		}
		t, p = t[1:], p[1:]
	}
	if len(t) > 0 {
		return likeFalse
	}
	for len(p) > 0 && p[0] == '%' {
		p = p[1:]
	}
	if len(p) == 0 {
		return likeTrue
	}
	return likeAbort
}

// charLen is the byte length of the UTF-8 character t starts with (t non-empty), at most len(t).
func charLen(t []byte) int {
	n := 1
	switch c := t[0]; {
	case c < 0xC0:
	case c < 0xE0:
		n = 2
	case c < 0xF0:
		n = 3
	default:
		n = 4
	}
	return min(n, len(t))
}

// lowerInto is PostgreSQL's lower of t (strings.ToLower, the lower kernel's), into buf when t
// is ASCII (no allocation), a new slice otherwise.
func lowerInto(buf, t []byte) []byte {
	for _, c := range t {
		if c >= utf8.RuneSelf {
			return []byte(strings.ToLower(string(t)))
		}
	}
	buf = buf[:0]
	for _, c := range t {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf = append(buf, c)
	}
	return buf
}
