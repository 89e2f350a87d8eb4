package ops

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// PostgreSQL's string functions BI tools and analysts write (PostgreSQL 15, "String Functions
// and Operators"), on characters (UTF-8 code points), strict (NULL in, NULL out):
//
//	left(s, n), right(s, n)       the first / last n characters; a negative n drops |n| from
//	                              the other end
//	split_part(s, delim, n)       the n-th field (1-based; negative counts from the end; 0 is
//	                              SQLSTATE 22023); an empty delimiter makes s the only field
//	strpos(s, sub)                the 1-based position of sub's first occurrence, 0 if none
//	                              (POSITION(sub IN s) binds to it)
//	lpad(s, n[, fill]), rpad(…)   s padded to n characters with fill (default a space) on the
//	                              left / right, or truncated to its first n; an empty fill
//	                              only truncates
//	initcap(s)                    each word's first letter upper case, the others lower case;
//	                              words are runs of letters and digits
//	reverse(s)                    the characters in reverse order
//	repeat(s, n)                  s n times ('' for n < 1)
//	name_in(s)                    s::name: s cut to NAMEDATALEN - 1 = 63 bytes at a character
//	                              boundary, as PostgreSQL's namein (pg_mbcliplen)
//
// A result past 1 GiB (repeat, lpad, rpad) is PostgreSQL's "requested length too large"
// (54000), refused before it is built; a smaller one is claimed from the query's ledger
// before it is built (valuemem.go).
func init() {
	for name, f := range map[string]func(*fnNode) error{
		"left":       textIntKernel(leftChars, false),
		"right":      textIntKernel(rightChars, false),
		"repeat":     textIntKernel(repeatText, true),
		"split_part": splitPart,
		"strpos":     strpos,
		"lpad":       padKernel(true),
		"rpad":       padKernel(false),
		"initcap":    stringMap(initcap),
		"reverse":    stringMap(reverseChars),
		"name_in":    stringMap(nameIn),
	} {
		ownFunctions[name] = f
	}
}

// maxTextBytes is PostgreSQL's limit on one text value (1 GiB).
const maxTextBytes = 1 << 30

var errTooLarge = &DataError{Code: "54000", Msg: "requested length too large"}

// textIntKernel is a function of (text, integer) → text; f claims from c the value it builds
// when its size is not bounded by s's; sized says f claims before building anything, so the
// batch's values are claimed together first (valueClaims.presize).
func textIntKernel(f func(c *valueClaims, s string, n int64) (string, error), sized bool) func(*fnNode) error {
	return func(n *fnNode) error {
		if err := textArgs(n, 2, 2, 0); err != nil {
			return err
		}
		if err := wantInt(n, 1); err != nil {
			return err
		}
		n.out = arrow.BinaryTypes.String
		n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
			s, _ := asTexts(args[0])
			c := newValueClaims(mem)
			defer c.release()
			row := func(i int) (string, bool, error) {
				out, err := f(c, string(s.ValueBytes(i)), intAt(args[1], i))
				return out, err == nil, err
			}
			if sized {
				if err := c.presize(rows, args, func(i int) error { _, _, err := row(i); return err }); err != nil {
					return nil, err
				}
			}
			return mapStrings(mem, rows, args, row)
		}
		return nil
	}
}

// nameMaxBytes is PostgreSQL's NAMEDATALEN - 1: the bytes a name holds.
const nameMaxBytes = 63

// nameIn is s cut to its longest prefix of whole characters within nameMaxBytes bytes.
func nameIn(s string) string {
	if len(s) <= nameMaxBytes {
		return s
	}
	n := nameMaxBytes
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func leftChars(_ *valueClaims, s string, n int64) (string, error) {
	r := []rune(s)
	if n < 0 {
		n = max(int64(len(r))+n, 0)
	}
	return string(r[:min(n, int64(len(r)))]), nil
}

func rightChars(_ *valueClaims, s string, n int64) (string, error) {
	r := []rune(s)
	if n < 0 {
		n = max(int64(len(r))+n, 0)
	}
	return string(r[int64(len(r))-min(n, int64(len(r))):]), nil
}

func repeatText(c *valueClaims, s string, n int64) (string, error) {
	if n < 1 || s == "" {
		return "", nil
	}
	if n > maxTextBytes/int64(len(s)) {
		return "", errTooLarge
	}
	if err := c.value(n * int64(len(s))); err != nil {
		return "", err
	}
	return strings.Repeat(s, int(n)), nil
}

func splitPart(n *fnNode) error {
	if err := textArgs(n, 3, 3, 0, 1); err != nil {
		return err
	}
	if err := wantInt(n, 2); err != nil {
		return err
	}
	n.out = arrow.BinaryTypes.String
	n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
		s, _ := asTexts(args[0])
		d, _ := asTexts(args[1])
		return mapStrings(mem, rows, args, func(i int) (string, bool, error) {
			field := intAt(args[2], i)
			if field == 0 {
				return "", false, &DataError{Code: "22023", Msg: "field position must not be zero"}
			}
			str, delim := string(s.ValueBytes(i)), string(d.ValueBytes(i))
			parts := []string{str}
			if delim != "" {
				parts = strings.Split(str, delim)
			}
			if str == "" {
				return "", true, nil
			}
			if field < 0 {
				field += int64(len(parts)) + 1
			}
			if field < 1 || field > int64(len(parts)) {
				return "", true, nil
			}
			return parts[field-1], true, nil
		})
	}
	return nil
}

func strpos(n *fnNode) error {
	if err := textArgs(n, 2, 2, 0, 1); err != nil {
		return err
	}
	n.out = arrow.PrimitiveTypes.Int32
	n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
		s, _ := asTexts(args[0])
		sub, _ := asTexts(args[1])
		return mapInt32s(mem, rows, args, func(i int) int32 {
			str := string(s.ValueBytes(i))
			at := strings.Index(str, string(sub.ValueBytes(i)))
			if at < 0 {
				return 0
			}
			return int32(utf8.RuneCountInString(str[:at]) + 1)
		}), nil
	}
	return nil
}

func padKernel(left bool) func(*fnNode) error {
	return func(n *fnNode) error {
		if err := textArgs(n, 2, 3, 0); err != nil {
			return err
		}
		if err := wantInt(n, 1); err != nil {
			return err
		}
		if len(n.args) == 3 {
			if err := wantText(n, 2); err != nil {
				return err
			}
		}
		n.out = arrow.BinaryTypes.String
		n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
			s, _ := asTexts(args[0])
			var fills texts
			if len(args) == 3 {
				fills, _ = asTexts(args[2])
			}
			c := newValueClaims(mem)
			defer c.release()
			row := func(i int) (string, bool, error) {
				width := intAt(args[1], i)
				fill := " "
				if fills != nil {
					fill = string(fills.ValueBytes(i))
				}
				if width <= 0 {
					return "", true, nil
				}
				if width > maxTextBytes/4 {
					return "", false, errTooLarge
				}
				str := string(s.ValueBytes(i))
				chars := int64(utf8.RuneCountInString(str))
				if chars >= width || fill == "" {
					return truncateChars(str, min(chars, width)), true, nil
				}
				out, err := padText(c, str, fill, width-chars, left)
				return out, err == nil, err
			}
			if err := c.presize(rows, args, func(i int) error { _, _, err := row(i); return err }); err != nil {
				return nil, err
			}
			return mapStrings(mem, rows, args, row)
		}
		return nil
	}
}

// truncateChars returns the first n characters of s (n at most s's).
func truncateChars(s string, n int64) string {
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}

// padText returns s with k characters of fill (repeated, the last repetition cut to what
// remains) before it (left) or after it, the value claimed from c before it is built.
func padText(c *valueClaims, s, fill string, k int64, left bool) (string, error) {
	fillChars := int64(utf8.RuneCountInString(fill))
	rest := truncateChars(fill, k%fillChars)
	size := int64(len(s)) + k/fillChars*int64(len(fill)) + int64(len(rest))
	if err := c.value(size); err != nil {
		return "", err
	}
	var b strings.Builder
	b.Grow(int(size))
	if !left {
		b.WriteString(s)
	}
	for range k / fillChars {
		b.WriteString(fill)
	}
	b.WriteString(rest)
	if left {
		b.WriteString(s)
	}
	return b.String(), nil
}

func initcap(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	inWord := false
	for _, c := range s {
		if unicode.IsLetter(c) || unicode.IsDigit(c) {
			if inWord {
				b.WriteRune(unicode.ToLower(c))
			} else {
				b.WriteRune(unicode.ToUpper(c))
			}
			inWord = true
			continue
		}
		inWord = false
		b.WriteRune(c)
	}
	return b.String()
}

func reverseChars(s string) string {
	r := []rune(s)
	for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
		r[i], r[j] = r[j], r[i]
	}
	return string(r)
}

func mapInt32s(mem memory.Allocator, n int, args []arrow.Array, f func(i int) int32) arrow.Array {
	a, _ := mapRows[int32](array.NewInt32Builder(mem), n, args, func(i int) (int32, bool, error) { return f(i), true, nil })
	return a
}
