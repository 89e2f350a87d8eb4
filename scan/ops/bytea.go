package ops

import (
	"bytes"
	"errors"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flightsrv/flightsrv/internal/pgbytea"
)

// bytea's text forms, as PostgreSQL 15 reads and writes them (internal/pgbytea):
//
//	bytea_in(s)    s::bytea of a text value: byteain's hex (\x6162) or escape format
//	               (a\\b, \141); a text it does not read is PostgreSQL's 22023 or 22P02
//	bytea_out(b)   b::text of a bytea value: byteaout's hex (\x6162)
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
	ownFunctions["convert_from_utf8"] = convertFromUTF8
}

func byteaIn(n *fnNode) error {
	if err := textArgs(n, 1, 1, 0); err != nil {
		return err
	}
	n.out = arrow.BinaryTypes.Binary
	n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
		s, _ := asTexts(args[0])
		return mapBinary(mem, rows, args, func(i int) ([]byte, bool, error) {
			b, err := pgbytea.In(string(s.ValueBytes(i)))
			if e := (*pgbytea.Error)(nil); errors.As(err, &e) {
				return nil, false, &DataError{Code: e.Code, Msg: e.Msg}
			}
			return b, err == nil, err
		})
	}
	return nil
}

func byteaOut(n *fnNode) error {
	if err := textArgs(n, 1, 1, 0); err != nil {
		return err
	}
	n.out = arrow.BinaryTypes.String
	n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
		b, _ := asTexts(args[0])
		return mapStrings(mem, rows, args, func(i int) (string, bool, error) {
			return pgbytea.Out(b.ValueBytes(i)), true, nil
		})
	}
	return nil
}

func convertFromUTF8(n *fnNode) error {
	if err := textArgs(n, 1, 1, 0); err != nil {
		return err
	}
	n.out = arrow.BinaryTypes.String
	n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
		b, _ := asTexts(args[0])
		return mapStrings(mem, rows, args, func(i int) (string, bool, error) {
			v := b.ValueBytes(i)
			if !utf8.Valid(v) || bytes.IndexByte(v, 0) >= 0 {
				return "", false, errNotUTF8
			}
			return string(v), true, nil
		})
	}
	return nil
}
