package ops

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// More of PostgreSQL's string functions (PostgreSQL 15, "String Functions and Operators"):
//
//	md5(s)                       the MD5 digest of s's bytes (text or bytea) as 32 lower-case
//	                             hexadecimal digits; strict
//	translate(s, from, to)       each character of s found in from replaced by the character
//	                             at the same position of to (the first occurrence in from
//	                             counts), or removed when to is shorter; strict
func init() {
	ownFunctions["md5"] = stringMap(md5Hex)
	ownFunctions["translate"] = text3Kernel(translateText)
}

// md5Hex is the MD5 digest of s's bytes as lower-case hexadecimal digits.
func md5Hex(s string) string {
	sum := md5.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

// translateText is PostgreSQL's translate of s: characters of from become to's at the same
// position, or are removed past to's end. Its result is at most four times s (a character
// of one byte becoming one of four): bounded by its argument, it claims nothing of its own.
func translateText(_ *valueClaims, s, from, to string) (string, error) {
	if from == "" {
		return s, nil
	}
	f, t := []rune(from), []rune(to)
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		k := -1
		for j, c := range f {
			if c == r {
				k = j
				break
			}
		}
		switch {
		case k < 0:
			b.WriteRune(r)
		case k < len(t):
			b.WriteRune(t[k])
		}
	}
	return b.String(), nil
}

// json_typeof(doc) is PostgreSQL's json_typeof: the kind of the document's top-level value as
// text (object, array, string, number, boolean, null); strict. The document is validated as
// PostgreSQL's json input validates it (jsonScanner; a document that is not JSON is 22P02);
// a \u0000 escape, which json keeps, does not stop it.
func init() { ownFunctions["json_typeof"] = jsonTypeofKernel }

var jsonKindNames = [...]string{jNull: "null", jString: "string", jStringEsc: "string", jNumber: "number",
	jTrue: "boolean", jFalse: "boolean", jObject: "object", jArray: "array"}

func jsonTypeofKernel(n *fnNode) error {
	if err := textArgs(n, 1, 1, 0); err != nil {
		return err
	}
	n.out = arrow.BinaryTypes.String
	n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
		d, _ := asTexts(args[0])
		var s jsonScanner
		return mapStrings(mem, rows, args, func(i int) (string, bool, error) {
			doc := d.ValueBytes(i)
			kind, st := s.scanDoc(doc, nil, nil)
			if st == docNulEscape {
				kind = firstJSONKind(doc)
			} else if err := st.err(); err != nil {
				return "", false, err
			}
			return jsonKindNames[kind], true, nil
		})
	}
	return nil
}

// jsonb_scalar(doc, type) is the text of jsonb document doc's top-level scalar for a cast of
// it to type (PostgreSQL 15's jsonb_int2/int4/int8/float4/float8/numeric/bool, "JSON
// Types"): type is the target's name as PostgreSQL prints it; boolean takes a boolean ('true',
// 'false'), every other target a number (its text as jsonb_out writes it, which the binder
// then casts on, as PostgreSQL converts the jsonb's numeric). Any other kind of value is
// 22023 "cannot cast jsonb string to type integer" (null, string, numeric, boolean, array,
// object), as cannotCastJsonbValue words it; strict.
func init() { ownFunctions["jsonb_scalar"] = jsonbScalarKernel }

var jsonbKindNames = [...]string{jNull: "null", jString: "string", jStringEsc: "string", jNumber: "numeric",
	jTrue: "boolean", jFalse: "boolean", jObject: "object", jArray: "array"}

func jsonbScalarKernel(n *fnNode) error {
	if err := textArgs(n, 2, 2, 0, 1); err != nil {
		return err
	}
	n.out = arrow.BinaryTypes.String
	n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
		d, _ := asTexts(args[0])
		t, _ := asTexts(args[1])
		return mapStrings(mem, rows, args, func(i int) (string, bool, error) {
			doc := bytes.TrimSpace(d.ValueBytes(i))
			target := string(t.ValueBytes(i))
			kind := firstJSONKind(doc)
			want := jNumber
			if target == "boolean" {
				want = jTrue
				if kind == jFalse {
					kind = jTrue
				}
			}
			if kind != want {
				return "", false, &DataError{Code: "22023", Msg: "cannot cast jsonb " + jsonbKindNames[kind] + " to type " + target}
			}
			return string(doc), true, nil
		})
	}
	return nil
}

// firstJSONKind is the kind of a valid document's value read from its first byte.
func firstJSONKind(doc []byte) jsonKind {
	for _, c := range doc {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		case '{':
			return jObject
		case '[':
			return jArray
		case '"':
			return jString
		case 't':
			return jTrue
		case 'f':
			return jFalse
		case 'n':
			return jNull
		}
		return jNumber
	}
	return jNull
}

// PostgreSQL 15's chr, quote_ident, quote_literal and overlay ("String Functions and
// Operators"):
//
//	chr(n)                       the character of code point n (UTF-8); 0 is "null character
//	                             not permitted" (54000), below 0 "character number must be
//	                             positive" (22023), past U+10FFFF or a surrogate 54000; strict
//	quote_ident(s)               s as an identifier: unchanged when it is lower-case letters,
//	                             digits and underscores not starting with a digit and not a
//	                             keyword other than an unreserved one, else in double quotes
//	                             with " doubled (quote_identifier); strict
//	quote_literal(s)             s in single quotes, ' and \ doubled, an E prefix when s has a
//	                             backslash (quote_literal_cstr); strict (quote_nullable's
//	                             NULL is the binder's)
//	overlay(s, t, from[, for])   s with its characters from..from+for-1 (for: t's length
//	                             when absent) replaced by t: substring(s, 1, from-1) || t ||
//	                             substring(s, from+for); from below 1 is "negative substring
//	                             length not allowed" (22011), from+for past integer's range
//	                             "integer out of range" (22003); strict
func init() {
	ownFunctions["chr"] = chrKernel
	ownFunctions["quote_ident"] = stringMap(quoteIdent)
	ownFunctions["quote_literal"] = stringMap(quoteLiteral)
	ownFunctions["overlay"] = overlayKernel
	ownFunctions["format"] = formatKernel
}

func chrKernel(n *fnNode) error {
	if err := argCount(n, 1, 1); err != nil {
		return err
	}
	if err := wantInt(n, 0); err != nil {
		return err
	}
	n.out = arrow.BinaryTypes.String
	n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
		return mapStrings(mem, rows, args, func(i int) (string, bool, error) {
			s, err := chr(intAt(args[0], i))
			return s, err == nil, err
		})
	}
	return nil
}

// chr is PostgreSQL's chr in a UTF-8 database.
func chr(c int64) (string, error) {
	switch {
	case c == 0:
		return "", &DataError{Code: "54000", Msg: "null character not permitted"}
	case c < 0:
		return "", &DataError{Code: "22023", Msg: "character number must be positive"}
	case c > utf8.MaxRune:
		return "", &DataError{Code: "54000", Msg: "requested character too large for encoding: " + strconv.FormatInt(c, 10)}
	case c >= 0xD800 && c <= 0xDFFF:
		return "", &DataError{Code: "54000", Msg: "requested character not valid for encoding: " + strconv.FormatInt(c, 10)}
	}
	return string(rune(c)), nil
}

// notUnreservedKeywords are PostgreSQL 15's keywords that quote_ident quotes: the reserved,
// column-name and type-or-function-name ones (pg_get_keywords() where catcode <> 'U').
var notUnreservedKeywords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(
		"all analyse analyze and any array as asc asymmetric authorization between bigint binary " +
			"bit boolean both case cast char character check coalesce collate collation column " +
			"concurrently constraint create cross current_catalog current_date current_role " +
			"current_schema current_time current_timestamp current_user dec decimal default deferrable " +
			"desc distinct do else end except exists extract false fetch float for foreign freeze from " +
			"full grant greatest group grouping having ilike in initially inner inout int integer " +
			"intersect interval into is isnull join lateral leading least left like limit localtime " +
			"localtimestamp national natural nchar none normalize not notnull null nullif numeric " +
			"offset on only or order out outer overlaps overlay placing position precision primary real " +
			"references returning right row select session_user setof similar smallint some substring " +
			"symmetric table tablesample then time timestamp to trailing treat trim true union unique " +
			"user using values varchar variadic verbose when where window with xmlattributes xmlconcat " +
			"xmlelement xmlexists xmlforest xmlnamespaces xmlparse xmlpi xmlroot xmlserialize xmltable") {
		m[w] = true
	}
	return m
}()

// quoteIdent is PostgreSQL's quote_identifier.
func quoteIdent(s string) string {
	safe := s != "" && (s[0] >= 'a' && s[0] <= 'z' || s[0] == '_')
	for i := 0; safe && i < len(s); i++ {
		c := s[i]
		safe = c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_'
	}
	if safe && !notUnreservedKeywords[s] {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// quoteLiteral is PostgreSQL's quote_literal_cstr.
func quoteLiteral(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 3)
	if strings.Contains(s, `\`) {
		b.WriteByte('E')
	}
	b.WriteByte('\'')
	for i := 0; i < len(s); i++ {
		if s[i] == '\'' || s[i] == '\\' {
			b.WriteByte(s[i])
		}
		b.WriteByte(s[i])
	}
	b.WriteByte('\'')
	return b.String()
}

func overlayKernel(n *fnNode) error {
	if err := textArgs(n, 3, 4, 0, 1); err != nil {
		return err
	}
	for i := 2; i < len(n.args); i++ {
		if err := wantInt(n, i); err != nil {
			return err
		}
	}
	n.out = arrow.BinaryTypes.String
	n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
		s, _ := asTexts(args[0])
		t, _ := asTexts(args[1])
		return mapStrings(mem, rows, args, func(i int) (string, bool, error) {
			str, sub := string(s.ValueBytes(i)), string(t.ValueBytes(i))
			cnt := int64(utf8.RuneCountInString(sub))
			if len(args) == 4 {
				cnt = intAt(args[3], i)
			}
			out, err := overlay(str, sub, intAt(args[2], i), cnt)
			return out, err == nil, err
		})
	}
	return nil
}

// overlay is PostgreSQL's text_overlay: s's characters from..from+cnt-1 replaced by t.
func overlay(s, t string, from, cnt int64) (string, error) {
	end := from + cnt
	if end < -1<<31 || end > 1<<31-1 {
		return "", &DataError{Code: "22003", Msg: "integer out of range"}
	}
	if from < 1 {
		return "", &DataError{Code: "22011", Msg: "negative substring length not allowed"}
	}
	r := []rune(s)
	head := r[:min(from-1, int64(len(r)))]
	tail := r[min(max(end, 1)-1, int64(len(r))):]
	return string(head) + t + string(tail), nil
}

// formatKernel is PostgreSQL's format(fmt, arg…) of the arguments' texts (the binder writes
// each with its type's output function): NULL when fmt is NULL, else fmt with each
// %[n$][-][width]{s,I,L} replaced by the argument's text, quote_ident or quote_literal (a
// NULL argument is the empty text for s, NULL for L, and 22004 for I) padded with spaces to width
// characters (on the left, or on the right with -), and %% by %. Not strict. Errors, 22023 as
// PostgreSQL's: too few arguments, an unrecognized or unterminated specifier, a position of
// 0; a width taken from an argument (*) is 0A000.
func formatKernel(n *fnNode) error {
	if err := variadicText(n); err != nil {
		return err
	}
	n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
		ts := textsOf(args)
		b := array.NewStringBuilder(mem)
		defer b.Release()
		claims := newValueClaims(mem)
		defer claims.release()
		vals := make([]*string, len(args)-1)
		for i := range rows {
			if ts[0].IsNull(i) {
				b.AppendNull()
				continue
			}
			for k := range vals {
				vals[k] = nil
				if !ts[k+1].IsNull(i) {
					v := string(ts[k+1].ValueBytes(i))
					vals[k] = &v
				}
			}
			out, err := formatText(claims, string(ts[0].ValueBytes(i)), vals)
			if err != nil {
				return nil, err
			}
			b.Append(out)
		}
		return b.NewArray(), nil
	}
	return nil
}

func formatError(msg string) error { return &DataError{Code: "22023", Msg: msg} }

// formatText is PostgreSQL's text_format of f with the arguments' texts (nil for NULL), the
// value claimed from claims as it grows (widths and an argument's repeated references make it
// far larger than f and the arguments): 54000 past 1 GiB, the ledger's refusal past the
// query's limit.
func formatText(claims *valueClaims, f string, vals []*string) (string, error) {
	b := textBuilder{c: claims}
	next := 0
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			if err := b.WriteByte(f[i]); err != nil {
				return "", err
			}
			continue
		}
		i++
		if i >= len(f) {
			return "", formatError("unterminated format() type specifier")
		}
		if f[i] == '%' {
			if err := b.WriteByte('%'); err != nil {
				return "", err
			}
			continue
		}
		// [n$][-][width]type
		num := func() (int64, bool) {
			j, v := i, int64(0)
			for j < len(f) && f[j] >= '0' && f[j] <= '9' {
				v = v*10 + int64(f[j]-'0')
				if v > 1<<31-1 {
					return -1, true
				}
				j++
			}
			if j == i {
				return 0, false
			}
			i = j
			return v, true
		}
		arg := -1
		minus := false
		width := int64(0)
		if v, ok := num(); ok {
			if v < 0 {
				return "", formatError("number is out of range")
			}
			if i < len(f) && f[i] == '$' {
				if v == 0 {
					return "", formatError("format specifies argument 0, but arguments are numbered from 1")
				}
				arg = int(v - 1)
				i++
			} else {
				width = v
			}
		}
		if width == 0 {
			for i < len(f) && f[i] == '-' {
				minus = true
				i++
			}
			if i < len(f) && f[i] == '*' {
				return "", &DataError{Code: "0A000", Msg: "format() widths taken from an argument (*) are not supported"}
			}
			if v, ok := num(); ok {
				if v < 0 {
					return "", formatError("number is out of range")
				}
				width = v
			}
		}
		if i >= len(f) {
			return "", formatError("unterminated format() type specifier")
		}
		c := f[i]
		if c != 's' && c != 'I' && c != 'L' {
			r, _ := utf8.DecodeRuneInString(f[i:])
			return "", formatError("unrecognized format() type specifier \"" + string(r) + "\"")
		}
		if arg < 0 {
			arg = next
		}
		if arg >= len(vals) {
			return "", formatError("too few arguments for format()")
		}
		next = arg + 1
		v := vals[arg]
		var text string
		switch {
		case c == 's' && v != nil:
			text = *v
		case c == 'I' && v == nil:
			return "", &DataError{Code: "22004", Msg: "null values cannot be formatted as an SQL identifier"}
		case c == 'I':
			text = quoteIdent(*v)
		case c == 'L' && v == nil:
			text = "NULL"
		case c == 'L':
			text = quoteLiteral(*v)
		}
		pad := max(width-int64(utf8.RuneCountInString(text)), 0)
		if pad > maxTextBytes {
			return "", errTooLarge
		}
		if err := b.need(int(pad) + len(text)); err != nil {
			return "", err
		}
		if !minus {
			b.spaces(int(pad))
		}
		b.b.WriteString(text)
		if minus {
			b.spaces(int(pad))
		}
	}
	return b.done()
}
