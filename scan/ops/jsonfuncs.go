package ops

import (
	"encoding/binary"
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// PostgreSQL 15's json and jsonb functions and jsonb operators ("JSON Functions and
// Operators"). A jsonb argument is the canonical text jsonb_in writes (the binder casts it);
// a json argument is a document as written, validated as json input validates it (22P02).
// All are strict unless said otherwise.
//
//	jsonb_sortkey(jsonb)          bytes whose bytewise order is jsonb's btree order
//	                              (compareJsonbContainers): null < string < number < boolean
//	                              < array < object; arrays by their length first, then a
//	                              top-level scalar below an array of one element, then element
//	                              by element; objects by their number of pairs, then key,
//	                              value, key… in jsonb's key order; strings bytewise (the C
//	                              collation); numbers by value. Equal keys are equal jsonb.
//	json_array_length(doc)        elements of a top-level array (int32); of an object
//	                              "cannot get array length of a non-array", of a scalar "…
//	                              of a scalar" (22023); for json and jsonb alike
//	jsonb_strip_nulls(jsonb)      object members whose value is null removed at any depth
//	                              (array elements kept); jsonb
//	json_strip_nulls(json)        the same of a json document, written as json_strip_nulls
//	                              writes it: members in their order, duplicates kept, no
//	                              white space, numbers as written
//	jsonb_pretty(jsonb)           the value indented by four spaces a level (text)
//	jsonb_contains(a, b)          a @> b (JsonbDeepContains)
//	jsonb_exists(j, k)            j ? k: k is a top-level key, or a string element of a
//	                              top-level array (or the top-level string)
//	jsonb_exists_any(j, k…)       j ?| array[k…]; not strict in the keys: a NULL key is
//	jsonb_exists_all(j, k…)       skipped (j ?& array[k…])
//	jsonb_concat(a, b)            a || b: objects merged (b's value of a key shared), arrays
//	                              (a scalar as an array of one) concatenated, an object beside
//	                              an array an element of it
//	jsonb_delete(j, k)            j - text: the member k removed, or an array's string
//	                              elements equal to k; of a scalar 22023
//	jsonb_delete_idx(j, n)        j - integer: the array's element n removed (from the end
//	                              when negative; out of range: j); of an object or scalar 22023
//	jsonb_delete_keys(j, k…)      j - array[k…]; not strict in the keys (a NULL key skipped)
//	json_quote(text)              to_json of text: the string quoted as escape_json quotes it
//	json_number(text)             to_json of a number's text: as written when it is a JSON
//	                              number, else quoted (NaN, Infinity)
//	json_build_object(k, v, …)    {"k" : v, …}, v JSON text (NULL is null); not strict; a
//	                              NULL key is "argument n cannot be null" (22023)
//	json_build_array(v, …)        [v, …]; not strict
func init() {
	ownFunctions["jsonb_sortkey"] = jsonbBinaryKernel(func(dst []byte, v any) ([]byte, error) {
		return appendJSONBSortKey(dst, v, true)
	})
	ownFunctions["jsonb_strip_nulls"] = jsonbBinaryKernel(func(dst []byte, v any) ([]byte, error) {
		return writeJSONB(dst, stripNulls(v), false)
	})
	ownFunctions["jsonb_pretty"] = jsonbPrettyKernel
	ownFunctions["json_strip_nulls"] = docBinaryKernel(false, func(dst []byte, v any) ([]byte, error) {
		return appendCompactJSON(dst, stripNulls(v)), nil
	})
	ownFunctions["json_array_length"] = jsonArrayLengthKernel
	ownFunctions["jsonb_contains"] = jsonbContainsKernel
	ownFunctions["jsonb_exists"] = jsonbExistsKernel(0)
	ownFunctions["jsonb_exists_any"] = jsonbExistsKernel(1)
	ownFunctions["jsonb_exists_all"] = jsonbExistsKernel(2)
	ownFunctions["jsonb_concat"] = jsonbConcatKernel
	ownFunctions["jsonb_delete"] = jsonbDeleteKernel(false)
	ownFunctions["jsonb_delete_keys"] = jsonbDeleteKernel(true)
	ownFunctions["jsonb_delete_idx"] = jsonbDeleteIdxKernel
	ownFunctions["json_quote"] = jsonQuoteKernel(false)
	ownFunctions["json_number"] = jsonQuoteKernel(true)
	ownFunctions["json_build_object"] = jsonBuildKernel(true)
	ownFunctions["json_build_array"] = jsonBuildKernel(false)
}

// errScalarDelete is jsonb - of a top-level scalar.
var errScalarDelete = &DataError{Code: "22023", Msg: "cannot delete from scalar"}

// jsonbBinaryKernel is a kernel of one jsonb argument answering bytes f appends.
func jsonbBinaryKernel(f func(dst []byte, v any) ([]byte, error)) func(*fnNode) error {
	return docBinaryKernel(true, f)
}

// docBinaryKernel is a kernel of one JSON document (jsonb: its objects' keys sorted and
// deduplicated as jsonb reads them; json: as written) answering bytes f appends.
func docBinaryKernel(jsonb bool, f func(dst []byte, v any) ([]byte, error)) func(*fnNode) error {
	return func(n *fnNode) error {
		if err := textArgs(n, 1, 1, 0); err != nil {
			return err
		}
		n.out = arrow.BinaryTypes.Binary
		n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
			d, _ := asTexts(args[0])
			var buf []byte
			return mapBinary(mem, rows, args, func(i int) ([]byte, bool, error) {
				v, err := decodeDoc(d.ValueBytes(i), jsonb)
				if err != nil {
					return nil, false, err
				}
				buf, err = f(buf[:0], v)
				return buf, true, err
			})
		}
		return nil
	}
}

// isContainer reports whether a decoded value is an array or an object.
func isContainer(v any) bool {
	switch v.(type) {
	case []any, []jsonbMember:
		return true
	}
	return false
}

// jsonb's btree order of kinds (JsonbValue's type numbers).
const (
	sortNull   = 0x00
	sortString = 0x01
	sortNumber = 0x02
	sortBool   = 0x03
	sortArray  = 0x10
	sortObject = 0x11
)

// appendJSONBSortKey appends the sort key of v (top: v is a document's top-level value, a
// scalar there being the one-element "raw scalar" array jsonb stores).
func appendJSONBSortKey(dst []byte, v any, top bool) ([]byte, error) {
	if top && !isContainer(v) {
		dst = append(dst, sortArray)
		dst = binary.BigEndian.AppendUint32(dst, 1)
		dst = append(dst, 0) // a raw scalar sorts below an array of one element
		return appendJSONBSortKey(dst, v, false)
	}
	switch x := v.(type) {
	case nil:
		return append(dst, sortNull), nil
	case bool:
		if x {
			return append(dst, sortBool, 1), nil
		}
		return append(dst, sortBool, 0), nil
	case string:
		// jsonb strings hold no NUL: 0 ends one below any of its bytes.
		return append(append(append(dst, sortString), x...), 0), nil
	case json.Number:
		return appendNumberSortKey(append(dst, sortNumber), string(x))
	case []any:
		dst = append(dst, sortArray)
		dst = binary.BigEndian.AppendUint32(dst, uint32(len(x)))
		dst = append(dst, 1)
		for _, e := range x {
			var err error
			if dst, err = appendJSONBSortKey(dst, e, false); err != nil {
				return dst, err
			}
		}
		return dst, nil
	case []jsonbMember:
		dst = append(dst, sortObject)
		dst = binary.BigEndian.AppendUint32(dst, uint32(len(x)))
		for _, m := range x {
			dst = append(append(append(dst, sortString), m.key...), 0)
			var err error
			if dst, err = appendJSONBSortKey(dst, m.val, false); err != nil {
				return dst, err
			}
		}
		return dst, nil
	}
	return dst, errInvalidJSON
}

// appendNumberSortKey appends an order-preserving key of the JSON number num: its sign class
// (negative, zero, positive), then the decimal exponent of its first significant digit
// (biased, big-endian) and its significant digits ended by a byte below any digit; a negative
// number's exponent and digits complemented, so larger magnitudes sort first.
func appendNumberSortKey(dst []byte, num string) ([]byte, error) {
	text, err := appendNumericText(nil, num, true)
	if err != nil {
		return dst, err
	}
	s := string(text)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	intPart, frac := s, ""
	if i := strings.IndexByte(s, '.'); i >= 0 {
		intPart, frac = s[:i], s[i+1:]
	}
	intPart = strings.TrimLeft(intPart, "0")
	digits := intPart + frac
	exp := len(intPart) // the point's position after the first significant digit's
	if intPart == "" {
		t := strings.TrimLeft(frac, "0")
		exp = -(len(frac) - len(t))
		digits = t
	}
	digits = strings.TrimRight(digits, "0")
	if digits == "" {
		return append(dst, 2), nil
	}
	class, flip := byte(3), byte(0)
	if neg {
		class, flip = 1, 0xff
	}
	dst = append(dst, class)
	e := uint32(int32(exp)) ^ 1<<31
	var eb [4]byte
	binary.BigEndian.PutUint32(eb[:], e)
	for _, b := range eb {
		dst = append(dst, b^flip)
	}
	for i := 0; i < len(digits); i++ {
		dst = append(dst, (digits[i]-'0'+1)^flip)
	}
	return append(dst, 0^flip), nil
}

// stripNulls removes the null members of v's objects at any depth.
func stripNulls(v any) any {
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = stripNulls(e)
		}
		return out
	case []jsonbMember:
		out := []jsonbMember{}
		for _, m := range x {
			if m.val != nil {
				out = append(out, jsonbMember{m.key, stripNulls(m.val)})
			}
		}
		return out
	}
	return v
}

// appendCompactJSON writes v without white space, numbers as written.
func appendCompactJSON(dst []byte, v any) []byte {
	switch x := v.(type) {
	case []any:
		dst = append(dst, '[')
		for i, e := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendCompactJSON(dst, e)
		}
		return append(dst, ']')
	case []jsonbMember:
		dst = append(dst, '{')
		for i, m := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(appendJSONBString(dst, m.key), ':')
			dst = appendCompactJSON(dst, m.val)
		}
		return append(dst, '}')
	case json.Number:
		return append(dst, x...)
	}
	dst, _ = writeJSONB(dst, v, false)
	return dst
}

func jsonbPrettyKernel(n *fnNode) error {
	if err := textArgs(n, 1, 1, 0); err != nil {
		return err
	}
	n.out = arrow.BinaryTypes.String
	n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
		d, _ := asTexts(args[0])
		c := newValueClaims(mem)
		defer c.release()
		return mapStrings(mem, rows, args, func(i int) (string, bool, error) {
			v, err := decodeDoc(d.ValueBytes(i), true)
			if err != nil {
				return "", false, err
			}
			out, err := appendPretty(nil, v, 0, c)
			if err == nil {
				err = c.value(int64(len(out))) // its copies as a string and in the output array
			}
			return string(out), err == nil, err
		})
	}
	return nil
}

// appendPretty writes v as jsonb_pretty does: each element and member on its own line,
// indented four spaces a level, the closing bracket on a line of its own. The indentation
// grows with the square of the nesting (a document of 20 KB of nested brackets is 1.6 GB
// pretty): each buffer is claimed from c before it is allocated (growClaimed; 54000 past
// 1 GiB).
func appendPretty(dst []byte, v any, level int, c *valueClaims) ([]byte, error) {
	indent := func(dst []byte, level int) ([]byte, error) {
		dst, err := growClaimed(c, dst, 1+4*level)
		if err != nil {
			return dst, err
		}
		dst = append(dst, '\n')
		for range level {
			dst = append(dst, "    "...)
		}
		return dst, nil
	}
	var err error
	switch x := v.(type) {
	case []any:
		dst = append(dst, '[')
		for i, e := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			if dst, err = indent(dst, level+1); err != nil {
				return dst, err
			}
			if dst, err = appendPretty(dst, e, level+1, c); err != nil {
				return dst, err
			}
		}
		if dst, err = indent(dst, level); err != nil {
			return dst, err
		}
		return append(dst, ']'), nil
	case []jsonbMember:
		dst = append(dst, '{')
		for i, m := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			if dst, err = indent(dst, level+1); err != nil {
				return dst, err
			}
			dst = append(appendJSONBString(dst, m.key), ": "...)
			if dst, err = appendPretty(dst, m.val, level+1, c); err != nil {
				return dst, err
			}
		}
		if dst, err = indent(dst, level); err != nil {
			return dst, err
		}
		return append(dst, '}'), nil
	}
	return writeJSONB(dst, v, false)
}

func jsonArrayLengthKernel(n *fnNode) error {
	if err := textArgs(n, 1, 1, 0); err != nil {
		return err
	}
	n.out = arrow.PrimitiveTypes.Int32
	n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
		d, _ := asTexts(args[0])
		return mapRows[int32](array.NewInt32Builder(mem), rows, args, func(i int) (int32, bool, error) {
			v, err := decodeDoc(d.ValueBytes(i), false)
			if err != nil {
				return 0, false, err
			}
			switch x := v.(type) {
			case []any:
				return int32(len(x)), true, nil
			case []jsonbMember:
				return 0, false, &DataError{Code: "22023", Msg: "cannot get array length of a non-array"}
			}
			return 0, false, &DataError{Code: "22023", Msg: "cannot get array length of a scalar"}
		})
	}
	return nil
}

// scalarEqual is jsonb equality of two scalars: of the same kind and value, numbers by value.
func scalarEqual(a, b any) bool {
	switch x := a.(type) {
	case json.Number:
		y, ok := b.(json.Number)
		if !ok {
			return false
		}
		kx, err1 := appendNumericText(nil, string(x), true)
		ky, err2 := appendNumericText(nil, string(y), true)
		return err1 == nil && err2 == nil && string(kx) == string(ky)
	case []any, []jsonbMember:
		return false
	}
	return a == b
}

// topArray is a document's top-level value as JsonbDeepContains and the existence operators
// see it: a scalar as a "raw scalar" array of one element.
func topArray(v any) (elems []any, isArray, raw bool) {
	switch x := v.(type) {
	case []any:
		return x, true, false
	case []jsonbMember:
		return nil, false, false
	}
	return []any{v}, true, true
}

// jsonbContains is a @> b of two documents' top-level values.
func jsonbContains(a, b any) bool {
	ae, aArr, aRaw := topArray(a)
	be, bArr, bRaw := topArray(b)
	switch {
	case aArr != bArr:
		return false
	case !aArr:
		return deepContains(a, b)
	case aRaw && !bRaw:
		return false
	}
	return deepContains(ae, be)
}

// deepContains is JsonbDeepContains of two containers (false when their kinds differ).
func deepContains(a, b any) bool {
	switch y := b.(type) {
	case []jsonbMember:
		x, ok := a.([]jsonbMember)
		if !ok || len(x) < len(y) {
			return false
		}
		for _, m := range y {
			av, found := memberOf(x, m.key)
			switch {
			case !found:
				return false
			case isContainer(m.val):
				if !deepContains(av, m.val) {
					return false
				}
			case !scalarEqual(av, m.val):
				return false
			}
		}
		return true
	case []any:
		x, ok := a.([]any)
		if !ok {
			return false
		}
	elems:
		for _, e := range y {
			for _, c := range x {
				if isContainer(e) && isContainer(c) && deepContains(c, e) || !isContainer(e) && scalarEqual(c, e) {
					continue elems
				}
			}
			return false
		}
		return true
	}
	return false
}

// memberOf finds key among an object's members.
func memberOf(ms []jsonbMember, key string) (any, bool) {
	for _, m := range ms {
		if m.key == key {
			return m.val, true
		}
	}
	return nil, false
}

func jsonbContainsKernel(n *fnNode) error {
	if err := textArgs(n, 2, 2, 0, 1); err != nil {
		return err
	}
	n.out = arrow.FixedWidthTypes.Boolean
	n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
		a, _ := asTexts(args[0])
		b, _ := asTexts(args[1])
		return mapBools(mem, rows, args, func(i int) (bool, error) {
			x, err := decodeDoc(a.ValueBytes(i), true)
			if err != nil {
				return false, err
			}
			y, err := decodeDoc(b.ValueBytes(i), true)
			if err != nil {
				return false, err
			}
			return jsonbContains(x, y), nil
		})
	}
	return nil
}

// jsonbHasKey reports whether key is a top-level key of v, or a string element of its
// top-level array (its top-level string).
func jsonbHasKey(v any, key string) bool {
	if ms, ok := v.([]jsonbMember); ok {
		_, found := memberOf(ms, key)
		return found
	}
	elems, _, _ := topArray(v)
	for _, e := range elems {
		if s, ok := e.(string); ok && s == key {
			return true
		}
	}
	return false
}

// jsonbExistsKernel: mode 0 j ? k, 1 j ?| keys, 2 j ?& keys.
func jsonbExistsKernel(mode int) func(*fnNode) error {
	return func(n *fnNode) error {
		if err := jsonbKeysArgs(n, mode > 0); err != nil {
			return err
		}
		n.out = arrow.FixedWidthTypes.Boolean
		n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
			return forJSONBKeys[bool](array.NewBooleanBuilder(mem), rows, args, mode > 0, func(v any, keys []string) (bool, error) {
				for _, k := range keys {
					if has := jsonbHasKey(v, k); has != (mode == 2) {
						return has, nil
					}
				}
				return mode == 2, nil
			})
		}
		return nil
	}
}

// jsonbKeysArgs checks the arguments of a kernel of a jsonb document and text keys: one key,
// or (list) any number, an array's elements.
func jsonbKeysArgs(n *fnNode, list bool) error {
	lo, hi := 2, 2
	if list {
		lo, hi = 1, max(len(n.args), 1)
	}
	if err := argCount(n, lo, hi); err != nil {
		return err
	}
	for i := range n.args {
		if err := wantText(n, i); err != nil {
			return err
		}
	}
	return nil
}

// forJSONBKeys builds with b a row's f(document, keys) of a jsonb document (args[0]) and text
// keys: NULL where the document is NULL, or a key when not list; with list a NULL key is
// left out of keys, as PostgreSQL skips an array's NULL elements.
func forJSONBKeys[T any](b appender[T], rows int, args []arrow.Array, list bool, f func(v any, keys []string) (T, error)) (arrow.Array, error) {
	d, _ := asTexts(args[0])
	ks := make([]texts, len(args)-1)
	for k := range ks {
		ks[k], _ = asTexts(args[k+1])
	}
	strict := args
	if list {
		strict = args[:1]
	}
	var keys []string
	return mapRows[T](b, rows, strict, func(i int) (T, bool, error) {
		var zero T
		v, err := decodeDoc(d.ValueBytes(i), true)
		if err != nil {
			return zero, false, err
		}
		keys = keys[:0]
		for k, kt := range ks {
			if !args[k+1].IsNull(i) {
				keys = append(keys, string(kt.ValueBytes(i)))
			}
		}
		out, err := f(v, keys)
		return out, err == nil, err
	})
}

func jsonbConcatKernel(n *fnNode) error {
	if err := textArgs(n, 2, 2, 0, 1); err != nil {
		return err
	}
	n.out = arrow.BinaryTypes.Binary
	n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
		a, _ := asTexts(args[0])
		b, _ := asTexts(args[1])
		var buf []byte
		return mapBinary(mem, rows, args, func(i int) ([]byte, bool, error) {
			x, err := decodeDoc(a.ValueBytes(i), true)
			if err != nil {
				return nil, false, err
			}
			y, err := decodeDoc(b.ValueBytes(i), true)
			if err != nil {
				return nil, false, err
			}
			buf, err = writeJSONB(buf[:0], jsonbConcat(x, y), false)
			return buf, true, err
		})
	}
	return nil
}

// jsonbConcat is a || b (IteratorConcat): two objects merged, b's value of a shared key kept;
// else both as arrays (an object as an element, a scalar as an array of one) concatenated.
func jsonbConcat(a, b any) any {
	x, xo := a.([]jsonbMember)
	y, yo := b.([]jsonbMember)
	if xo && yo {
		return sortMembers(append(append([]jsonbMember{}, x...), y...))
	}
	asElems := func(v any) []any {
		if _, o := v.([]jsonbMember); o {
			return []any{v}
		}
		e, _, _ := topArray(v)
		return e
	}
	return append(append([]any{}, asElems(a)...), asElems(b)...)
}

// jsonbDeleteKernel is j - text (keys false) or j - text[] (keys: the array's elements as
// arguments, NULLs skipped).
func jsonbDeleteKernel(keys bool) func(*fnNode) error {
	return func(n *fnNode) error {
		if err := jsonbKeysArgs(n, keys); err != nil {
			return err
		}
		n.out = arrow.BinaryTypes.Binary
		n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
			var buf []byte
			b := array.NewBinaryBuilder(mem, arrow.BinaryTypes.Binary)
			return forJSONBKeys[[]byte](b, rows, args, keys, func(v any, ks []string) ([]byte, error) {
				if !isContainer(v) {
					return nil, errScalarDelete
				}
				switch x := v.(type) {
				case []jsonbMember:
					v = slices.DeleteFunc(slices.Clone(x), func(m jsonbMember) bool { return slices.Contains(ks, m.key) })
				case []any:
					v = slices.DeleteFunc(slices.Clone(x), func(e any) bool {
						s, ok := e.(string)
						return ok && slices.Contains(ks, s)
					})
				}
				var err error
				buf, err = writeJSONB(buf[:0], v, false)
				return buf, err
			})
		}
		return nil
	}
}

func jsonbDeleteIdxKernel(n *fnNode) error {
	if err := textArgs(n, 2, 2, 0); err != nil {
		return err
	}
	if err := wantInt(n, 1); err != nil {
		return err
	}
	n.out = arrow.BinaryTypes.Binary
	n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
		d, _ := asTexts(args[0])
		var buf []byte
		return mapBinary(mem, rows, args, func(i int) ([]byte, bool, error) {
			v, err := decodeDoc(d.ValueBytes(i), true)
			if err != nil {
				return nil, false, err
			}
			switch x := v.(type) {
			case []jsonbMember:
				return nil, false, &DataError{Code: "22023", Msg: "cannot delete from object using integer index"}
			case []any:
				idx, l := intAt(args[1], i), int64(len(x))
				if idx < 0 {
					idx += l
				}
				if idx >= 0 && idx < l {
					v = append(append([]any{}, x[:idx]...), x[idx+1:]...)
				}
				buf, err = writeJSONB(buf[:0], v, false)
				return buf, true, err
			}
			return nil, false, errScalarDelete
		})
	}
	return nil
}

// jsonQuoteKernel: to_json of text (number false: always a quoted string) or of a number's
// text (as written when it is a JSON number, else quoted: NaN, Infinity).
func jsonQuoteKernel(number bool) func(*fnNode) error {
	return func(n *fnNode) error {
		if err := textArgs(n, 1, 1, 0); err != nil {
			return err
		}
		n.out = arrow.BinaryTypes.Binary
		n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
			d, _ := asTexts(args[0])
			var buf []byte
			return mapBinary(mem, rows, args, func(i int) ([]byte, bool, error) {
				s := d.ValueBytes(i)
				if number && isJSONNumber(s) {
					return s, true, nil
				}
				buf = appendJSONBString(buf[:0], string(s))
				return buf, true, nil
			})
		}
		return nil
	}
}

// isJSONNumber reports whether s is a JSON number (IsValidJsonNumber).
func isJSONNumber(s []byte) bool {
	var sc jsonScanner
	kind, st := sc.scanDoc(s, nil, nil)
	return st == docOK && kind == jNumber && len(s) > 0 && s[0] != ' ' && s[len(s)-1] != ' '
}

// jsonBuildKernel is json_build_object (object) or json_build_array of JSON texts.
func jsonBuildKernel(object bool) func(*fnNode) error {
	return func(n *fnNode) error {
		for i := range n.args {
			if err := wantText(n, i); err != nil {
				return err
			}
		}
		if object && len(n.args)%2 != 0 {
			return &DataError{Code: "22023", Msg: "argument list must have even number of elements"}
		}
		n.out = arrow.BinaryTypes.Binary
		n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
			ts := make([]texts, len(args))
			for k := range ts {
				ts[k], _ = asTexts(args[k])
			}
			var buf []byte
			return mapBinary(mem, rows, nil, func(i int) ([]byte, bool, error) {
				open, sep, close := byte('['), ", ", byte(']')
				if object {
					open, close = '{', '}'
				}
				buf = append(buf[:0], open)
				for k, t := range ts {
					switch {
					case k > 0 && (!object || k%2 == 0):
						buf = append(buf, sep...)
					case k > 0:
						buf = append(buf, " : "...)
					}
					null := args[k].IsNull(i)
					switch {
					case object && k%2 == 0 && null:
						return nil, false, &DataError{Code: "22023", Msg: "argument " + strconv.Itoa(k+1) + " cannot be null"}
					case object && k%2 == 0:
						buf = appendJSONBString(buf, string(t.ValueBytes(i)))
					case null:
						buf = append(buf, "null"...)
					default:
						buf = append(buf, t.ValueBytes(i)...)
					}
				}
				return append(buf, close), true, nil
			})
		}
		return nil
	}
}
