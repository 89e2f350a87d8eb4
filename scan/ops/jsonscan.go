package ops

import (
	"encoding/binary"
	"math/bits"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// The JSON scanner of the JSON functions (json_get, json_get_text, json_path,
// json_path_text): one pass over a document validates all of it, as PostgreSQL's json
// type parses all of a document before -> or ->> answers, and notes where the members a query
// asks for sit at its top level; a path deeper than one member is then walked from the
// member's bytes. No Go value is built: a value is a span of the document's bytes and a kind,
// and strings are unescaped only when their text is asked for (unescape).
//
// Validation is RFC 8259's grammar (whitespace is space, tab, line feed and carriage return;
// no leading zeros, no trailing commas, nothing after the value) and PostgreSQL's json rules
// on \u escapes: a high surrogate must be followed by a low one and a low one must follow a
// high one ("invalid input syntax for type json", 22P02), and \u0000 anywhere in the
// document is "unsupported Unicode escape sequence" (22P05), since PostgreSQL's -> and ->>
// de-escape every string of the document they parse. A document whose bytes are not UTF-8 is
// "invalid byte sequence" (22021) whatever else is wrong with it, as PostgreSQL converts
// bytes to text before it parses them. Each was compared with PostgreSQL 15
// (scan/ops/jsonfields_test.go, TestJSONFieldsAsPostgres) and the choice of a hand-written scanner over gjson, fastjson,
// simdjson-go and sonic was measured (BenchmarkJSONScanners, docs/architecture.md).

// jsonKind is the kind of a JSON value found in a document (jAbsent: none).
type jsonKind uint8

const (
	jAbsent    jsonKind = iota
	jNull               // null
	jString             // a string without escapes: its text is the bytes between the quotes
	jStringEsc          // a string with escapes: its text is unescape's
	jNumber             // a number, whose text is as written
	jTrue               // true
	jFalse              // false
	jObject             // an object, whose text is as written (inner whitespace kept)
	jArray              // an array, likewise
)

// jsonSpan is a value of a document: its bytes doc[start:end] (a string's include its quotes)
// and its kind. The zero span is an absent value.
type jsonSpan struct {
	start, end int
	kind       jsonKind
}

// docStatus is what scanning a document found.
type docStatus uint8

const (
	docOK          docStatus = iota
	docNull                  // the document is SQL NULL
	docBadEncoding           // its bytes are not UTF-8 (errNotUTF8)
	docInvalid               // not JSON (errInvalidJSON)
	docNulEscape             // \u0000 in a string (errJSONNulEscape)
)

// errJSONNulEscape is PostgreSQL's error for \u0000 in a json document that -> or ->> read
// (untranslatable_character, 22P05): text cannot hold the character.
var errJSONNulEscape = &DataError{Code: "22P05", Msg: "unsupported Unicode escape sequence"}

// err returns the query's error of a document with status s, nil for docOK and docNull.
func (s docStatus) err() error {
	switch s {
	case docBadEncoding:
		return errNotUTF8
	case docInvalid:
		return errInvalidJSON
	case docNulEscape:
		return errJSONNulEscape
	}
	return nil
}

// jsonScanner validates one document. stack holds the containers open around the current
// position ('{' or '['), kept between documents to reuse its memory.
type jsonScanner struct {
	doc      []byte
	i        int
	stack    []byte
	nonASCII bool      // a byte >= 0x80 was met (the document may not be UTF-8)
	fail     docStatus // why the scan stopped (docInvalid or docNulEscape)
	// lax checks a \u escape's four hexadecimal digits only, as PostgreSQL's json_in, which
	// validates without de-escaping (its \u0000 and unpaired surrogates are json values;
	// -> and ->>, which de-escape, refuse them).
	lax bool
}

// scanDoc validates doc and returns its top-level value's kind; when that is an object, out[k]
// is set to the value of its member keys[k] (the last of duplicate members, as PostgreSQL's
// json keeps it), jAbsent where there is none. out must have len(keys) entries.
func (s *jsonScanner) scanDoc(doc []byte, keys []string, out []jsonSpan) (jsonKind, docStatus) {
	s.doc = doc
	return s.scanSet(keys, out)
}

// scanSet is scanDoc of the document already in s.doc. A caller scanning many documents
// with a scanner in a local variable stores each in s.doc itself, a store to its own stack
// the compiler emits no write barrier for; scanDoc's store through its pointer takes one,
// which while a collection runs records the document at every row.
func (s *jsonScanner) scanSet(keys []string, out []jsonSpan) (jsonKind, docStatus) {
	doc := s.doc
	clear(out)
	s.i, s.stack, s.nonASCII, s.fail = 0, s.stack[:0], false, docInvalid
	top, ok := s.top(keys, out)
	if ok {
		s.ws()
		ok = s.i == len(doc)
	}
	switch {
	case (!ok || s.nonASCII) && !utf8.Valid(doc):
		return jAbsent, docBadEncoding
	case !ok:
		return jAbsent, s.fail
	}
	return top, docOK
}

// docSpan is the span of a validated document's value (of kind): the document without the
// JSON whitespace around it, which walk and forEach expect a container's span to exclude.
func docSpan(doc []byte, kind jsonKind) jsonSpan {
	start, end := 0, len(doc)
	for start < end && isJSONSpace(doc[start]) {
		start++
	}
	for end > start && isJSONSpace(doc[end-1]) {
		end--
	}
	return jsonSpan{start: start, end: end, kind: kind}
}

func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// top scans the document's value, noting the members keys of a top-level object.
//
// A top-level member's key, its value when that is a string or an integer, and the
// punctuation between them are read here with the position in a local when they take their
// plain forms (no whitespace around the colon, a string of at most sixteen bytes without
// escapes, control characters or non-ASCII bytes, an integer without fraction, exponent or
// leading zero): the flights payloads are such members throughout, and the calls of member,
// value, str and number and the loads and stores of s.i they do took about a third of a
// document's scan. Anything else is read by those calls, which decide validity as before.
func (s *jsonScanner) top(keys []string, out []jsonSpan) (jsonKind, bool) {
	s.ws()
	d := s.doc
	if s.i >= len(d) {
		return jAbsent, false
	}
	if d[s.i] != '{' || len(keys) == 0 {
		return s.value()
	}
	s.i++
	s.ws()
	if s.i < len(d) && d[s.i] == '}' {
		s.i++
		return jObject, true
	}
	for {
		ks := s.i
		kind := jString
		i := plainEnd(d, ks)
		if i < 0 {
			var ok bool
			if kind, ok = s.member(); !ok {
				return jAbsent, false
			}
			i = s.i
		}
		key := d[ks+1 : i-1]
		if i < len(d) && d[i] == ':' {
			i++
		} else {
			s.i = i
			s.ws()
			if i = s.i; i >= len(d) || d[i] != ':' {
				return jAbsent, false
			}
			i++
		}
		vs := i
		var vk jsonKind
		if i < len(d) && d[i] == '"' {
			vk, i = jString, plainEnd(d, i)
		} else {
			vk, i = jNumber, plainInt(d, i)
		}
		if i < 0 {
			s.i = vs
			s.ws()
			vs = s.i
			var ok bool
			if vk, ok = s.value(); !ok {
				return jAbsent, false
			}
		} else {
			s.i = i
		}
		for k, want := range keys {
			// A key without escapes is compared here (keyEquals is not inlined: a call per
			// member and wanted key was 4% of a cold query's CPU).
			if kind == jStringEsc && keyEquals(key, true, want) || kind != jStringEsc && string(key) == want {
				out[k] = jsonSpan{start: vs, end: s.i, kind: vk}
			}
		}
		if i = s.i; i < len(d) && d[i] == ',' && i+1 < len(d) && d[i+1] == '"' {
			s.i = i + 1
			continue
		}
		s.ws()
		if s.i >= len(d) {
			return jAbsent, false
		}
		switch d[s.i] {
		case ',':
			s.i++
			s.ws()
		case '}':
			s.i++
			return jObject, true
		default:
			return jAbsent, false
		}
	}
}

// plainEnd returns the index after the closing quote of the string whose opening quote is
// d[i] when its text is at most sixteen bytes, none of which str must look at (strSpecial);
// -1 otherwise (not a string, or one for str to read).
func plainEnd(d []byte, i int) int {
	if i >= len(d) || d[i] != '"' {
		return -1
	}
	j := i + 1
	for range 2 {
		if j+8 > len(d) {
			break
		}
		if m := specialBytes(binary.LittleEndian.Uint64(d[j : j+8])); m != 0 {
			j += bits.TrailingZeros64(m) >> 3
			if d[j] == '"' {
				return j + 1
			}
			return -1
		}
		j += 8
	}
	for end := min(len(d), i+18); j < end; j++ {
		if c := d[j]; strSpecial[c] {
			if c == '"' {
				return j + 1
			}
			return -1
		}
	}
	return -1
}

// plainInt returns the index after the integer at d[i] when it is -?[1-9][0-9]* and not
// followed by a fraction or an exponent; -1 otherwise (not a number, or one for number to
// read). What follows it is the caller's to check, as after number.
func plainInt(d []byte, i int) int {
	if i < len(d) && d[i] == '-' {
		i++
	}
	if i >= len(d) || d[i] < '1' || d[i] > '9' {
		return -1
	}
	for i++; i < len(d) && d[i] >= '0' && d[i] <= '9'; i++ {
	}
	if i < len(d) && (d[i] == '.' || d[i] == 'e' || d[i] == 'E') {
		return -1
	}
	return i
}

// keyEquals reports whether a member's key, the bytes between its quotes (escaped: with
// escapes), is want.
func keyEquals(raw []byte, escaped bool, want string) bool {
	if !escaped {
		return string(raw) == want
	}
	var buf [64]byte
	text, _ := unescape(buf[:0], raw)
	return string(text) == want
}

// member scans a member's key (a string) at s.i.
func (s *jsonScanner) member() (jsonKind, bool) {
	if s.i >= len(s.doc) || s.doc[s.i] != '"' {
		return jAbsent, false
	}
	return s.str()
}

func (s *jsonScanner) ws() {
	for s.i < len(s.doc) {
		switch s.doc[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// value scans the value at s.i (whitespace skipped before it) and returns its kind.
func (s *jsonScanner) value() (jsonKind, bool) {
	if s.i >= len(s.doc) {
		return jAbsent, false
	}
	switch c := s.doc[s.i]; c {
	case '{', '[':
		kind := jObject
		if c == '[' {
			kind = jArray
		}
		return kind, s.container()
	case '"':
		return s.str()
	case 't':
		return jTrue, s.word("true")
	case 'f':
		return jFalse, s.word("false")
	case 'n':
		return jNull, s.word("null")
	}
	return jNumber, s.number()
}

func (s *jsonScanner) word(w string) bool {
	if len(s.doc)-s.i < len(w) || string(s.doc[s.i:s.i+len(w)]) != w {
		return false
	}
	s.i += len(w)
	return true
}

// number scans a number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *jsonScanner) number() bool {
	d := s.doc
	i := s.i
	if i < len(d) && d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && d[i] >= '1' && d[i] <= '9':
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	default:
		return false
	}
	if i < len(d) && d[i] == '.' {
		i++
		if i >= len(d) || d[i] < '0' || d[i] > '9' {
			return false
		}
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if i >= len(d) || d[i] < '0' || d[i] > '9' {
			return false
		}
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	}
	// A number ends at a delimiter; the caller checks which one is allowed.
	s.i = i
	return true
}

// str scans the string at s.i (its opening quote): jString, or jStringEsc when it holds
// escapes.
func (s *jsonScanner) str() (jsonKind, bool) {
	d := s.doc
	kind := jString
	for i := s.i + 1; i < len(d); i++ {
		// Eight bytes at a time up to the first byte str must look at (strSpecial).
		for i+8 <= len(d) {
			m := specialBytes(binary.LittleEndian.Uint64(d[i : i+8]))
			if m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				break
			}
			i += 8
		}
		if i >= len(d) {
			break
		}
		c := d[i]
		if !strSpecial[c] {
			continue
		}
		switch {
		case c == '"':
			s.i = i + 1
			return kind, true
		case c < 0x20:
			return jAbsent, false
		case c >= 0x80:
			s.nonASCII = true
		default: // '\\'
			kind = jStringEsc
			i++
			if i >= len(d) {
				return jAbsent, false
			}
			switch d[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				r, ok := hex4(d, i+1)
				if !ok {
					return jAbsent, false
				}
				i += 4
				switch {
				case s.lax:
					// json_in: the escape's four digits are all it checks.
				case r == 0:
					s.fail = docNulEscape
					return jAbsent, false
				case utf16.IsSurrogate(r) && r < 0xDC00:
					// A high surrogate: a low one must follow.
					if i+6 >= len(d) || d[i+1] != '\\' || d[i+2] != 'u' {
						return jAbsent, false
					}
					lo, ok := hex4(d, i+3)
					if !ok || lo < 0xDC00 || lo > 0xDFFF {
						return jAbsent, false
					}
					i += 6
				case utf16.IsSurrogate(r):
					return jAbsent, false // a low surrogate without a high one
				}
			default:
				return jAbsent, false
			}
		}
	}
	return jAbsent, false
}

// strSpecial marks the bytes str must look at: the closing quote, a backslash, control
// characters and bytes of multi-byte UTF-8 sequences.
var strSpecial = func() (t [256]bool) {
	for c := range 256 {
		t[c] = c == '"' || c == '\\' || c < 0x20 || c >= 0x80
	}
	return t
}()

// specialBytes marks, in the high bit of each byte of w (eight bytes of a document, the
// first in the lowest byte), the bytes strSpecial marks: '"', '\\', control characters and
// bytes >= 0x80. Bytes above the first marked one may be marked wrongly (a borrow carried up
// from it), never the bytes below it: its lowest set bit is exactly the first special byte.
func specialBytes(w uint64) uint64 {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	zero := func(x uint64) uint64 { return (x - lo) & ^x & hi } // bytes of x that are 0
	return zero(w^(lo*'"')) | zero(w^(lo*'\\')) | ((w-lo*0x20)|w)&hi
}

// hex4 reads the four hexadecimal digits at d[i:].
func hex4(d []byte, i int) (rune, bool) {
	if i+4 > len(d) {
		return 0, false
	}
	var r rune
	for _, c := range d[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// container scans the object or array at s.i (its opening byte) and everything in it,
// without recursion (a deeply nested document cannot exhaust the goroutine's stack).
func (s *jsonScanner) container() bool {
	d := s.doc
	base := len(s.stack)
	for {
		// At the start of a value.
		if s.i >= len(d) {
			return false
		}
		closed := false
		switch c := d[s.i]; c {
		case '{', '[':
			s.i++
			s.ws()
			end := byte('}')
			if c == '[' {
				end = ']'
			}
			if s.i < len(d) && d[s.i] == end {
				s.i++
				closed = true
				break
			}
			s.stack = append(s.stack, c)
			if c == '{' && !s.key() {
				return false
			}
			continue
		default:
			if _, ok := s.value(); !ok {
				return false
			}
			closed = true
		}
		// After a value: close containers until one continues.
		for closed {
			if len(s.stack) == base {
				return true
			}
			s.ws()
			if s.i >= len(d) {
				return false
			}
			open := s.stack[len(s.stack)-1]
			switch c := d[s.i]; {
			case c == ',':
				s.i++
				s.ws()
				if open == '{' && !s.key() {
					return false
				}
				closed = false
			case (open == '{' && c == '}') || (open == '[' && c == ']'):
				s.i++
				s.stack = s.stack[:len(s.stack)-1]
			default:
				return false
			}
		}
	}
}

// key scans a member's key and its colon, leaving s.i at the value.
func (s *jsonScanner) key() bool {
	if _, ok := s.member(); !ok {
		return false
	}
	s.ws()
	if s.i >= len(s.doc) || s.doc[s.i] != ':' {
		return false
	}
	s.i++
	s.ws()
	return true
}

// unescape appends the text of a string's escaped bytes raw (between its quotes, already
// validated by str: no \u0000, surrogates paired) to dst.
func unescape(dst, raw []byte) ([]byte, bool) {
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c != '\\' {
			dst = append(dst, c)
			continue
		}
		i++
		if i >= len(raw) {
			return dst, false
		}
		switch raw[i] {
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r, ok := hex4(raw, i+1)
			if !ok {
				return dst, false
			}
			i += 4
			if utf16.IsSurrogate(r) {
				lo, ok := hex4(raw, i+3)
				if !ok {
					return dst, false
				}
				r = utf16.DecodeRune(r, lo)
				i += 6
			}
			dst = utf8.AppendRune(dst, r)
		default:
			dst = append(dst, raw[i])
		}
	}
	return dst, true
}

// --- walking a validated value ------------------------------------------------------------------

// jsonStep is one step of a path: a member's key, or an element's index (negative: from the
// end) when idx is set.
type jsonStep struct {
	key   string
	index int64
	idx   bool
}

// walk returns the value at step from the validated value v of doc: a member of an object;
// an element of an array, by an index step or, in a path (#>, #>>), by a key that is an
// integer in text form, as PostgreSQL indexes arrays. Absent (jAbsent) when there is none.
func walk(doc []byte, v jsonSpan, st jsonStep, path bool) jsonSpan {
	switch v.kind {
	case jObject:
		if st.idx {
			return jsonSpan{}
		}
		var found jsonSpan
		forEach(doc, v, func(key []byte, escaped bool, val jsonSpan) {
			if keyEquals(key, escaped, st.key) {
				found = val
			}
		})
		return found
	case jArray:
		idx := st.index
		if !st.idx {
			if !path {
				return jsonSpan{}
			}
			n, err := strconv.ParseInt(st.key, 10, 64)
			if err != nil {
				return jsonSpan{}
			}
			idx = n
		}
		if idx < 0 {
			var count int64
			forEach(doc, v, func([]byte, bool, jsonSpan) { count++ })
			idx += count
			if idx < 0 {
				return jsonSpan{}
			}
		}
		var found jsonSpan
		var at int64
		forEach(doc, v, func(_ []byte, _ bool, val jsonSpan) {
			if at == idx {
				found = val
			}
			at++
		})
		return found
	}
	return jsonSpan{}
}

// forEach calls f with every member (key bytes between the quotes, whether they hold
// escapes, value) of the validated object v, or every element (nil key) of the validated
// array v, in order.
func forEach(doc []byte, v jsonSpan, f func(key []byte, escaped bool, val jsonSpan)) {
	for c := newMemberCursor(doc, v); !c.done; {
		key, escaped, val, ok := c.next()
		if !ok {
			return
		}
		f(key, escaped, val)
	}
}
