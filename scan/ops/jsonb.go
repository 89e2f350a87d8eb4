package ops

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// PostgreSQL's jsonb (PostgreSQL 15, "JSON Types"), carried as the text jsonb_out writes of
// the value, so that the JSON operators, ::text, GROUP BY and DISTINCT read it as they read a
// json document:
//
//	jsonb_in(doc)    text or json to jsonb: the document validated as json input validates it
//	                 (22P02; a \u0000 escape is 22P05, which jsonb cannot hold), then written
//	                 as jsonb_out writes it: an object's keys in jsonb's order (shorter
//	                 first, then bytewise), a duplicate key's last value kept, numbers as
//	                 numeric_out writes them (1e2 is 100, 2.50 stays 2.50, -0 is 0), strings
//	                 with jsonb's escapes, ", " between elements and ": " after a key; strict
//	jsonb_key(doc)   the key jsonb equality compares: the canonical text with each number's
//	                 trailing fractional zeros removed (1.0 = 1, as numeric equality);
//	                 strict
//	jsonb_scalar_array(doc)
//	                 a jsonb document whose top level is a scalar as the one-element array
//	                 jsonb stores it as, others unchanged: PostgreSQL's jsonb -> n and ->> n
//	                 read element 0 (or -1) of a scalar as the scalar itself ('"x"'::jsonb
//	                 ->> 0 is x), where json's answer NULL; strict
func init() {
	ownFunctions["json_in"] = jsonIn
	ownFunctions["jsonb_in"] = jsonbKernel(false)
	ownFunctions["jsonb_key"] = jsonbKernel(true)
	ownFunctions["jsonb_scalar_array"] = jsonbScalarArray
}

func jsonbScalarArray(n *fnNode) error {
	if err := textArgs(n, 1, 1, 0); err != nil {
		return err
	}
	n.out = arrow.BinaryTypes.Binary
	n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
		d, _ := asTexts(args[0])
		var buf []byte
		return mapBinary(mem, rows, args, func(i int) ([]byte, bool, error) {
			doc := d.ValueBytes(i)
			if len(doc) > 0 && (doc[0] == '{' || doc[0] == '[') {
				return doc, true, nil
			}
			buf = append(append(append(buf[:0], '['), doc...), ']')
			return buf, true, nil
		})
	}
	return nil
}

// jsonIn is PostgreSQL's json_in of a text or binary value: the value itself, a json
// document keeping its text as written (whitespace, duplicate keys, escapes), once it is
// validated as JSON (RFC 8259's grammar, \u followed by four hexadecimal digits:
// jsonScanner.lax): 22P02 "invalid input syntax for type json" where it is not, 22021 where
// its bytes are not UTF-8; strict. Each non-NULL row is validated, so only the rows a query
// evaluates raise. A text or binary array is answered as the same buffers (no copy).
func jsonIn(n *fnNode) error {
	if err := textArgs(n, 1, 1, 0); err != nil {
		return err
	}
	n.out = arrow.BinaryTypes.Binary
	n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
		d, _ := asTexts(args[0])
		s := jsonScanner{lax: true}
		in := args[0]
		for i := range rows {
			if in.IsValid(i) {
				if _, st := s.scanDoc(d.ValueBytes(i), nil, nil); st != docOK {
					return nil, st.err()
				}
			}
		}
		switch in.DataType().ID() {
		case arrow.STRING, arrow.BINARY:
			// The same offsets and bytes, typed binary: a large document is not copied.
			data := in.Data()
			out := array.NewData(arrow.BinaryTypes.Binary, data.Len(), data.Buffers(), nil, data.NullN(), data.Offset())
			defer out.Release()
			return array.MakeFromData(out), nil
		}
		return mapBinary(mem, rows, args, func(i int) ([]byte, bool, error) { return d.ValueBytes(i), true, nil })
	}
	return nil
}

// jsonbKernel is jsonb_in (key false) or jsonb_key of a document.
func jsonbKernel(key bool) func(*fnNode) error {
	return jsonbBinaryKernel(func(dst []byte, v any) ([]byte, error) {
		return writeJSONB(dst, v, key)
	})
}

// JSONBCanonical returns jsonb_out's text of the jsonb value of doc, or PostgreSQL's error
// for a document jsonb_in refuses (a *DataError: 22P02 not JSON, 22021 not UTF-8, 22P05 a
// \u0000 escape).
func JSONBCanonical(doc []byte) ([]byte, error) {
	return appendJSONB(nil, doc, false)
}

// errJSONBNumber refuses by name a number whose exponent is beyond ±1000, whose digits
// flightsrv does not write out (PostgreSQL's numeric reads it).
var errJSONBNumber = &DataError{Code: "0A000", Msg: "jsonb numbers with an exponent beyond ±1000 are not supported"}

// appendJSONB appends doc's jsonb text (key: its equality key) to dst.
func appendJSONB(dst, doc []byte, key bool) ([]byte, error) {
	v, err := decodeDoc(doc, true)
	if err != nil {
		return dst, err
	}
	return writeJSONB(dst, v, key)
}

// decodeDoc validates doc as PostgreSQL's json input validates it and decodes its value: for
// jsonb (sorted) an object is its members in jsonb's key order, duplicates removed, and a
// \u0000 escape is 22P05; for json the members stay as written, duplicates included, and the
// escape is read (json keeps it). Numbers are json.Number (their text as written).
func decodeDoc(doc []byte, sorted bool) (any, error) {
	var s jsonScanner
	if _, st := s.scanDoc(doc, nil, nil); st != docOK && (sorted || st != docNulEscape) {
		return nil, st.err()
	}
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	return decodeJSONB(dec, sorted)
}

// jsonbMember is one key and value of a jsonb object.
type jsonbMember struct {
	key string
	val any
}

// decodeJSONB reads one value of a validated document; sorted: an object is its members in
// jsonb's key order, duplicates removed (sortMembers).
func decodeJSONB(dec *json.Decoder, sorted bool) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, errInvalidJSON
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '[':
			var elems []any
			for dec.More() {
				v, err := decodeJSONB(dec, sorted)
				if err != nil {
					return nil, err
				}
				elems = append(elems, v)
			}
			_, err := dec.Token()
			if elems == nil {
				elems = []any{}
			}
			return elems, err
		case '{':
			members := []jsonbMember{}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return nil, errInvalidJSON
				}
				v, err := decodeJSONB(dec, sorted)
				if err != nil {
					return nil, err
				}
				members = append(members, jsonbMember{k.(string), v})
			}
			if _, err := dec.Token(); err != nil {
				return nil, errInvalidJSON
			}
			if sorted {
				members = sortMembers(members)
			}
			return members, nil
		}
	}
	return tok, nil
}

// sortMembers puts members in jsonb's order, shorter keys first, then bytewise, and keeps the
// last of equal keys (a stable sort keeps them in input order), in place.
func sortMembers(members []jsonbMember) []jsonbMember {
	slices.SortStableFunc(members, func(a, b jsonbMember) int {
		if len(a.key) != len(b.key) {
			return len(a.key) - len(b.key)
		}
		return strings.Compare(a.key, b.key)
	})
	out := members[:0]
	for i, m := range members {
		if i+1 < len(members) && members[i+1].key == m.key {
			continue
		}
		out = append(out, m)
	}
	return out
}

// writeJSONB appends jsonb_out's text of v.
func writeJSONB(dst []byte, v any, key bool) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(dst, "null"...), nil
	case bool:
		if x {
			return append(dst, "true"...), nil
		}
		return append(dst, "false"...), nil
	case string:
		return appendJSONBString(dst, x), nil
	case json.Number:
		return appendNumericText(dst, string(x), key)
	case []any:
		dst = append(dst, '[')
		for i, e := range x {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			var err error
			if dst, err = writeJSONB(dst, e, key); err != nil {
				return dst, err
			}
		}
		return append(dst, ']'), nil
	case []jsonbMember:
		dst = append(dst, '{')
		for i, m := range x {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = appendJSONBString(dst, m.key)
			dst = append(dst, ": "...)
			var err error
			if dst, err = writeJSONB(dst, m.val, key); err != nil {
				return dst, err
			}
		}
		return append(dst, '}'), nil
	}
	return dst, errInvalidJSON
}

// appendJSONBString appends s quoted as PostgreSQL's escape_json writes it: \" \\ \b \f \n
// \r \t, other characters below U+0020 as \u00XX, everything else as it is.
func appendJSONBString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"':
			dst = append(dst, '\\', '"')
		case '\\':
			dst = append(dst, '\\', '\\')
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\f':
			dst = append(dst, '\\', 'f')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			if c < 0x20 {
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			} else {
				dst = append(dst, c)
			}
		}
	}
	return append(dst, '"')
}

// appendNumericText appends numeric_out's text of the JSON number num as numeric_in reads
// it: the digits with the point moved by the exponent, as many fractional digits as the
// number wrote less the exponent (0 at least), no sign on zero. key drops trailing
// fractional zeros (the point too when none is left).
func appendNumericText(dst []byte, num string, key bool) ([]byte, error) {
	neg := strings.HasPrefix(num, "-")
	num = strings.TrimPrefix(num, "-")
	mant, exp := num, 0
	if i := strings.IndexAny(num, "eE"); i >= 0 {
		mant = num[:i]
		e := num[i+1:]
		sign := 1
		switch {
		case strings.HasPrefix(e, "+"):
			e = e[1:]
		case strings.HasPrefix(e, "-"):
			e, sign = e[1:], -1
		}
		e = strings.TrimLeft(e, "0")
		if len(e) > 4 {
			return dst, errJSONBNumber
		}
		for _, c := range e {
			exp = exp*10 + int(c-'0')
		}
		if exp > 1000 {
			return dst, errJSONBNumber
		}
		exp *= sign
	}
	intPart, frac := mant, ""
	if i := strings.IndexByte(mant, '.'); i >= 0 {
		intPart, frac = mant[:i], mant[i+1:]
	}
	digits := intPart + frac
	point := len(intPart) + exp // digits before the point
	scale := max(len(frac)-exp, 0)
	var ip, fp string
	switch {
	case point <= 0:
		ip, fp = "", strings.Repeat("0", -point)+digits
	case point >= len(digits):
		ip, fp = digits+strings.Repeat("0", point-len(digits)), ""
	default:
		ip, fp = digits[:point], digits[point:]
	}
	ip = strings.TrimLeft(ip, "0")
	if ip == "" {
		ip = "0"
	}
	if len(fp) < scale {
		fp += strings.Repeat("0", scale-len(fp))
	}
	fp = fp[:scale]
	if key {
		fp = strings.TrimRight(fp, "0")
	}
	if neg && strings.Trim(ip+fp, "0") != "" {
		dst = append(dst, '-')
	}
	dst = append(dst, ip...)
	if fp != "" {
		dst = append(dst, '.')
		dst = append(dst, fp...)
	}
	return dst, nil
}
