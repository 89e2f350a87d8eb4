package ops

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flightsrv/flightsrv/internal/pgregex"
)

// PostgreSQL's regular expressions (internal/pgregex translates and refuses patterns), strict:
//
//	regex_match(s, pattern)            s ~ pattern (boolean); enumeration "i" first for ~*
//	regexp_replace(s, pattern, repl)   the first match replaced (every match with flag g);
//	                                   repl's \1 … \9 are the subexpressions, \& the match,
//	                                   \\ a backslash, any other \ kept; flags an
//	                                   enumeration first: PostgreSQL's letters
//	                                   (pgregex.ParseFlags) and g
//	regexp_match_elem(s, pattern)      (regexp_match(s, pattern))[k]: the k-th captured
//	                                   substring (the whole match when the pattern captures
//	                                   none), NULL without a match, for a subexpression that
//	                                   took no part, or k outside the array; enumerations
//	                                   flags (without g) and k (1-based) first
//	regexp_count(s, pattern)           the number of non-overlapping matches (the binder
//	                                   refuses patterns that can match the empty string,
//	                                   whose count PostgreSQL's search advances otherwise
//	                                   than RE2's); flags "" first
//	regexp_substr(s, pattern)          the first match's text, NULL without one; flags ""
//	                                   first
//	substring_regex(s, pattern)        substring(s FROM pattern) (PostgreSQL's
//	                                   textregexsubstr): the first match's first
//	                                   parenthesised subexpression when the pattern has
//	                                   one (NULL when it took no part), else the whole
//	                                   match; NULL without a match; flags "" first
//
// A pattern that pgregex refuses or cannot read is the row's error: PostgreSQL's invalid
// regular expression (2201B), or 0A000 naming the construct.
func init() {
	ownFunctions["regex_match"] = regexMatchKernel
	ownFunctions["regexp_replace"] = regexpReplaceKernel
	ownFunctions["regexp_match_elem"] = regexpMatchElemKernel
	ownFunctions["regexp_count"] = regexpCountKernel
	ownFunctions["regexp_substr"] = regexpSubstrKernel
	ownFunctions["substring_regex"] = substringRegexKernel
}

// patternCache compiles each distinct pattern of one expression once (at most 64 kept).
type patternCache struct {
	opts pgregex.Options
	mu   sync.Mutex // the compiled expression, and this cache, serve every fragment at once
	res  map[string]*pgregex.Regexp
}

func (c *patternCache) get(p string) (*pgregex.Regexp, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if re, ok := c.res[p]; ok {
		return re, nil
	}
	re, err := pgregex.Compile(p, c.opts)
	if err != nil {
		return nil, regexError(err)
	}
	if c.res == nil || len(c.res) >= 64 {
		c.res = map[string]*pgregex.Regexp{}
	}
	c.res[p] = re
	return re, nil
}

// regexError is pgregex's error as the row's: 0A000 naming the construct, or 2201B.
func regexError(err error) error {
	var ue *pgregex.UnsupportedError
	if errors.As(err, &ue) {
		return &DataError{Code: "0A000", Msg: ue.Error()}
	}
	return &DataError{Code: "2201B", Msg: "invalid regular expression"}
}

// regexFlags reads the flags enumeration first in n (PostgreSQL's flags letters, pgregex's
// ParseFlags, and g): the options, and whether g is among them.
func regexFlags(n *fnNode) (pgregex.Options, bool, error) {
	if len(n.args) == 0 || n.args[0] != nil {
		return pgregex.Options{}, false, errors.New("takes a flags enumeration first")
	}
	var global bool
	o, err := pgregex.ParseFlags(n.enums[0], &global)
	if err != nil {
		return o, false, fmt.Errorf("flags %q: %w", n.enums[0], err)
	}
	return o, global, nil
}

func regexMatchKernel(n *fnNode) error {
	if err := argCount(n, 3, 3); err != nil {
		return err
	}
	opts, global, err := regexFlags(n)
	if err != nil || global {
		return errors.New("regex_match takes flags without g first")
	}
	if err := wantText(n, 1, 2); err != nil {
		return err
	}
	n.out = arrow.FixedWidthTypes.Boolean
	cache := &patternCache{opts: opts}
	n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
		s, _ := asTexts(args[1])
		p, _ := asTexts(args[2])
		return mapRows[bool](array.NewBooleanBuilder(mem), rows, args, func(i int) (bool, bool, error) {
			re, err := cache.get(string(p.ValueBytes(i)))
			if err != nil {
				return false, false, err
			}
			ok, err := re.Match(s.ValueBytes(i))
			if err != nil {
				return false, false, regexError(err)
			}
			return ok, true, nil
		})
	}
	return nil
}

func regexpReplaceKernel(n *fnNode) error {
	if err := argCount(n, 4, 4); err != nil {
		return err
	}
	opts, global, err := regexFlags(n)
	if err != nil {
		return err
	}
	if err := wantText(n, 1, 2, 3); err != nil {
		return err
	}
	n.out = arrow.BinaryTypes.String
	opts.Extent = true
	cache := &patternCache{opts: opts}
	n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
		s, _ := asTexts(args[1])
		p, _ := asTexts(args[2])
		r, _ := asTexts(args[3])
		c := newValueClaims(mem)
		defer c.release()
		return mapStrings(mem, rows, args, func(i int) (string, bool, error) {
			re, err := cache.get(string(p.ValueBytes(i)))
			if err != nil {
				return "", false, err
			}
			src := string(s.ValueBytes(i))
			if err := re.CheckSubject(src); err != nil {
				return "", false, regexError(err)
			}
			if global && re.LooksBehind {
				out, err := replaceAllInContext(c, re.Regexp, src, string(r.ValueBytes(i)))
				return out, err == nil, err
			}
			out, err := replaceRegexp(c, re.Regexp, src, string(r.ValueBytes(i)), global)
			return out, err == nil, err
		})
	}
	return nil
}

func regexpMatchElemKernel(n *fnNode) error {
	if err := argCount(n, 4, 4); err != nil {
		return err
	}
	opts, global, err := regexFlags(n)
	if err != nil || global {
		return errors.New("regexp_match_elem takes flags without g first")
	}
	opts.Extent = true
	if n.args[1] != nil {
		return errors.New("regexp_match_elem takes the element's position second")
	}
	k, err := strconv.Atoi(n.enums[1])
	if err != nil {
		return errors.New("regexp_match_elem's position is not an integer")
	}
	if err := wantText(n, 2, 3); err != nil {
		return err
	}
	n.out = arrow.BinaryTypes.String
	cache := &patternCache{opts: opts}
	n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
		s, _ := asTexts(args[2])
		p, _ := asTexts(args[3])
		return mapStrings(mem, rows, args, func(i int) (string, bool, error) {
			re, err := cache.get(string(p.ValueBytes(i)))
			if err != nil {
				return "", false, err
			}
			src := s.ValueBytes(i)
			if err := re.CheckSubject(string(src)); err != nil {
				return "", false, regexError(err)
			}
			m := re.FindSubmatchIndex(src)
			groups := re.NumSubexp()
			switch {
			case m == nil, k < 1, groups == 0 && k != 1, groups > 0 && k > groups:
				return "", false, nil
			case groups == 0:
				return string(src[m[0]:m[1]]), true, nil
			case m[2*k] < 0:
				return "", false, nil
			}
			return string(src[m[2*k]:m[2*k+1]]), true, nil
		})
	}
	return nil
}

// replaceRegexp is PostgreSQL's regexp_replace of src: the first (or, global, every
// non-overlapping) match replaced by repl with its escapes expanded. An empty match advances
// one character, as PostgreSQL's search does.
func replaceRegexp(c *valueClaims, re *regexp.Regexp, src, repl string, global bool) (string, error) {
	b := textBuilder{c: c}
	last := 0
	for pos := 0; pos <= len(src); {
		m := re.FindStringSubmatchIndex(src[pos:])
		if m == nil {
			break
		}
		for k := range m {
			if m[k] >= 0 {
				m[k] += pos
			}
		}
		if err := b.WriteString(src[last:m[0]]); err != nil {
			return "", err
		}
		if err := expandReplacement(&b, src, repl, m); err != nil {
			return "", err
		}
		last = m[1]
		if !global {
			break
		}
		if m[1] > m[0] {
			pos = m[1]
		} else if m[1] < len(src) {
			_, w := utf8.DecodeRuneInString(src[m[1]:])
			pos = m[1] + w
		} else {
			break
		}
	}
	if err := b.WriteString(src[last:]); err != nil {
		return "", err
	}
	return b.done()
}

// replaceAllInContext is regexp_replace's flag g for a pattern that looks behind a position
// (pgregex.Regexp.LooksBehind): every non-overlapping match, searched in the whole subject so that ^,
// \A and word boundaries see the text before each position, as PostgreSQL's search does
// (replaceRegexp's search of the rest would read ^ again after each match). Go's search skips
// an empty match right after a match where PostgreSQL's takes it; the binder refuses such
// patterns when they can match the empty string (substrait/regex.go).
func replaceAllInContext(c *valueClaims, re *regexp.Regexp, src, repl string) (string, error) {
	b := textBuilder{c: c}
	last := 0
	for _, m := range re.FindAllStringSubmatchIndex(src, -1) {
		if err := b.WriteString(src[last:m[0]]); err != nil {
			return "", err
		}
		if err := expandReplacement(&b, src, repl, m); err != nil {
			return "", err
		}
		last = m[1]
	}
	if err := b.WriteString(src[last:]); err != nil {
		return "", err
	}
	return b.done()
}

// expandReplacement writes repl with \1 … \9, \& and \\ expanded for match m of src; its
// error is b's (errTooLarge past 1 GiB, the ledger's refusal of its growth).
func expandReplacement(b *textBuilder, src, repl string, m []int) error {
	var err error
	for i := 0; i < len(repl) && err == nil; i++ {
		c := repl[i]
		if c != '\\' || i+1 >= len(repl) {
			err = b.WriteByte(c)
			continue
		}
		e := repl[i+1]
		switch {
		case e >= '1' && e <= '9':
			k := int(e - '0')
			if 2*k+1 < len(m) && m[2*k] >= 0 {
				err = b.WriteString(src[m[2*k]:m[2*k+1]])
			}
			i++
		case e == '&':
			err = b.WriteString(src[m[0]:m[1]])
			i++
		case e == '\\':
			err = b.WriteByte('\\')
			i++
		default:
			err = b.WriteByte('\\')
		}
	}
	return err
}

// regexpSearchKernel sets n up for a function of (flags, s, pattern) with the pattern's
// extent used, out its result type and f its value of the compiled pattern and the subject.
func regexpSearchKernel(n *fnNode, out arrow.DataType, f func(re *pgregex.Regexp, src string) (any, bool)) error {
	if err := argCount(n, 3, 3); err != nil {
		return err
	}
	opts, global, err := regexFlags(n)
	if err != nil || global {
		return errors.New("takes flags without g first")
	}
	opts.Extent = true
	if err := wantText(n, 1, 2); err != nil {
		return err
	}
	n.out = out
	cache := &patternCache{opts: opts}
	n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
		s, _ := asTexts(args[1])
		p, _ := asTexts(args[2])
		value := func(i int) (any, bool, error) {
			re, err := cache.get(string(p.ValueBytes(i)))
			if err != nil {
				return nil, false, err
			}
			src := string(s.ValueBytes(i))
			if err := re.CheckSubject(src); err != nil {
				return nil, false, regexError(err)
			}
			v, ok := f(re, src)
			return v, ok, nil
		}
		if out.ID() == arrow.STRING {
			return mapStrings(mem, rows, args, func(i int) (string, bool, error) {
				v, ok, err := value(i)
				if !ok || err != nil {
					return "", ok, err
				}
				return v.(string), true, nil
			})
		}
		return mapRows[int32](array.NewInt32Builder(mem), rows, args, func(i int) (int32, bool, error) {
			v, ok, err := value(i)
			if !ok || err != nil {
				return 0, ok, err
			}
			return v.(int32), true, nil
		})
	}
	return nil
}

func regexpCountKernel(n *fnNode) error {
	return regexpSearchKernel(n, arrow.PrimitiveTypes.Int32, func(re *pgregex.Regexp, src string) (any, bool) {
		return int32(len(re.FindAllStringIndex(src, -1))), true
	})
}

func regexpSubstrKernel(n *fnNode) error {
	return regexpSearchKernel(n, arrow.BinaryTypes.String, func(re *pgregex.Regexp, src string) (any, bool) {
		m := re.FindStringIndex(src)
		if m == nil {
			return "", false
		}
		return src[m[0]:m[1]], true
	})
}

func substringRegexKernel(n *fnNode) error {
	return regexpSearchKernel(n, arrow.BinaryTypes.String, func(re *pgregex.Regexp, src string) (any, bool) {
		m := re.FindStringSubmatchIndex(src)
		switch {
		case m == nil:
			return "", false
		case re.NumSubexp() == 0:
			return src[m[0]:m[1]], true
		case m[2] < 0:
			return "", false
		}
		return src[m[2]:m[3]], true
	})
}
