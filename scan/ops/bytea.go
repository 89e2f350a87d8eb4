package ops

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flightsrv/flightsrv/internal/pgbytea"
)

// bytea's text forms, as PostgreSQL 15 reads and writes them (internal/pgbytea):
//
//	bytea_in(s)    s::bytea of a text value: byteain's hex (\x6162) or escape format
//	               (a\\b, \141); a text it does not read is PostgreSQL's 22023 or 22P02
//	bytea_out(b)   b::text of a bytea value: byteaout's hex (\x6162)
//	bytea_substring(b, from[, count])  PostgreSQL's substring(bytea FROM from FOR count)
//	               (bytea_substr): bytes from the 1-based from, count of them (negative:
//	               22011), the part outside the value dropped
//	bytea_position(b, sub)  PostgreSQL's position(sub IN b) of bytea (byteapos): the
//	               1-based byte offset of sub's first occurrence, 0 if none, 1 for empty sub
//	decode(format, s)
//	               decode(s, format) (binary_decode): s in format "hex", "base64" or
//	               "escape" (an enumeration, any letter case) read as pgbytea.Decode reads
//	               it, its errors PostgreSQL's (22023, 22P02)
//	get_byte(b, n)  PostgreSQL's get_byte: the byte at 0-based offset n (integer); outside b
//	               2202E
//	bytea_concat(a, b)
//	               a || b of bytea (byteacat): a's bytes, then b's
//	convert_from_utf8(b)
//	               convert_from(b, 'UTF8'): the bytes as text, verified as PostgreSQL's
//	               pg_verify_mbstr verifies them: bytes that are not UTF-8, and a NUL
//	               byte (text cannot hold one), are 22021 "invalid byte sequence for
//	               encoding "UTF8"" (PostgreSQL's message names the bytes; ours does not)
//
// The SQL binder calls them for casts of values it knows to be bytea (substrait/bytea.go);
// JSON documents are binary too, and their text is the document's.
func init() {
	ownFunctions["bytea_in"] = byteaIn
	ownFunctions["bytea_out"] = byteaOut
	ownFunctions["bytea_substring"] = byteaSubstring
	ownFunctions["bytea_position"] = byteaPosition
	ownFunctions["convert_from_utf8"] = convertFromUTF8
	ownFunctions["decode"] = decodeKernel
	ownFunctions["bytea_concat"] = byteaConcat
	ownFunctions["get_byte"] = getByte
}

// getByte is PostgreSQL's get_byte(bytea, integer) (byteaGetByte): the byte at the 0-based
// offset as an integer; an offset outside the value is 2202E "index n out of valid range,
// 0..len-1".
func getByte(n *fnNode) error {
	if err := textArgs(n, 2, 2, 0); err != nil {
		return err
	}
	if err := wantInt(n, 1); err != nil {
		return err
	}
	n.out = arrow.PrimitiveTypes.Int32
	n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
		b, _ := asTexts(args[0])
		return mapRows[int32](array.NewInt32Builder(mem), rows, args, func(i int) (int32, bool, error) {
			v, k := b.ValueBytes(i), intAt(args[1], i)
			if k < 0 || k >= int64(len(v)) {
				return 0, false, &DataError{Code: "2202E", Msg: fmt.Sprintf("index %d out of valid range, 0..%d", k, len(v)-1)}
			}
			return int32(v[k]), true, nil
		})
	}
	return nil
}

// byteaConcat is bytea_concat(a, b): PostgreSQL's byteacat, a's bytes followed by b's.
func byteaConcat(n *fnNode) error {
	if err := textArgs(n, 2, 2, 0, 1); err != nil {
		return err
	}
	n.out = arrow.BinaryTypes.Binary
	n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
		a, _ := asTexts(args[0])
		b, _ := asTexts(args[1])
		return mapBinary(mem, rows, args, func(i int) ([]byte, bool, error) {
			return append(append(make([]byte, 0, len(a.ValueBytes(i))+len(b.ValueBytes(i))), a.ValueBytes(i)...), b.ValueBytes(i)...), true, nil
		})
	}
	return nil
}

func byteaSubstring(n *fnNode) error {
	if err := textArgs(n, 2, 3, 0); err != nil {
		return err
	}
	for i := 1; i < len(n.args); i++ {
		if err := wantInt(n, i); err != nil {
			return err
		}
	}
	n.out = arrow.BinaryTypes.Binary
	n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
		b, _ := asTexts(args[0])
		return mapBinary(mem, rows, args, func(i int) ([]byte, bool, error) {
			v := b.ValueBytes(i)
			start := intAt(args[1], i)
			end := int64(math.MaxInt64)
			if len(args) == 3 {
				cnt := intAt(args[2], i)
				if cnt < 0 {
					return nil, false, &DataError{Code: "22011", Msg: "negative substring length not allowed"}
				}
				if start > 0 || cnt <= math.MaxInt64+start {
					end = start + cnt
				}
			}
			lo, hi := max(start, 1), min(end, int64(len(v))+1)
			if lo >= hi {
				return []byte{}, true, nil
			}
			return v[lo-1 : hi-1], true, nil
		})
	}
	return nil
}

func byteaPosition(n *fnNode) error {
	if err := textArgs(n, 2, 2, 0, 1); err != nil {
		return err
	}
	n.out = arrow.PrimitiveTypes.Int32
	n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
		b, _ := asTexts(args[0])
		sub, _ := asTexts(args[1])
		return mapInt32s(mem, rows, args, func(i int) int32 {
			return int32(bytes.Index(b.ValueBytes(i), sub.ValueBytes(i)) + 1)
		}), nil
	}
	return nil
}

func byteaIn(n *fnNode) error {
	if err := textArgs(n, 1, 1, 0); err != nil {
		return err
	}
	n.out = arrow.BinaryTypes.Binary
	n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
		s, _ := asTexts(args[0])
		return mapBinary(mem, rows, args, func(i int) ([]byte, bool, error) {
			return bytesOf(pgbytea.In(string(s.ValueBytes(i))))
		})
	}
	return nil
}

// bytesOf is a pgbytea reader's value as mapBinary's function answers it, its *pgbytea.Error
// a DataError of the same SQLSTATE and message.
func bytesOf(b []byte, err error) ([]byte, bool, error) {
	if e := (*pgbytea.Error)(nil); errors.As(err, &e) {
		return nil, false, &DataError{Code: e.Code, Msg: e.Msg}
	}
	return b, err == nil, err
}

// decodeKernel is PostgreSQL's decode(text, format) (binary_decode), the format an
// enumeration first (as the query wrote it): pgbytea.Decode of each value, its errors the
// row's (22023, 22P02; an unknown format 22023 on the first row).
func decodeKernel(n *fnNode) error {
	if err := argCount(n, 2, 2); err != nil {
		return err
	}
	if n.args[0] != nil {
		return errors.New("decode takes the format as an enumeration first")
	}
	if err := wantText(n, 1); err != nil {
		return err
	}
	format := n.enums[0]
	n.out = arrow.BinaryTypes.Binary
	n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
		s, _ := asTexts(args[1])
		return mapBinary(mem, rows, args, func(i int) ([]byte, bool, error) {
			return bytesOf(pgbytea.Decode(string(s.ValueBytes(i)), format))
		})
	}
	return nil
}

// byteaOut is bytea_out: byteaout's hex text of each value.
var byteaOut = bytesToText(func(b []byte) (string, error) { return pgbytea.Out(b), nil })

// convertFromUTF8 is convert_from_utf8: the bytes as text, 22021 where they are not UTF-8 or
// hold a NUL.
var convertFromUTF8 = bytesToText(func(b []byte) (string, error) {
	if !utf8.Valid(b) || bytes.IndexByte(b, 0) >= 0 {
		return "", errNotUTF8
	}
	return string(b), nil
})

// bytesToText is the setup of a function of one binary (or text) argument whose text result
// is f of each value's bytes, NULL where the argument is; f's first error fails the call.
func bytesToText(f func([]byte) (string, error)) func(*fnNode) error {
	return func(n *fnNode) error {
		if err := textArgs(n, 1, 1, 0); err != nil {
			return err
		}
		n.out = arrow.BinaryTypes.String
		n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
			b, _ := asTexts(args[0])
			return mapStrings(mem, rows, args, func(i int) (string, bool, error) {
				s, err := f(b.ValueBytes(i))
				return s, err == nil, err
			})
		}
		return nil
	}
}
