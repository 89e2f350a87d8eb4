package ops

import (
	"errors"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flightsrv/flightsrv/internal/pgnumfmt"
)

// to_char of numbers: PostgreSQL's numeric_to_char, int4_to_char, int8_to_char,
// float4_to_char and float8_to_char (internal/pgnumfmt), chosen by the argument's type as
// PostgreSQL chooses them (smallint is written as integer).

func init() {
	ownFunctions["to_char_number"] = toCharNumber
}

// toCharNumber is to_char_number(x, template): x an integer, float or decimal128 array,
// template text (parsed once per distinct template of a batch). A template PostgreSQL
// rejects, or a value it cannot write, is the row's error with PostgreSQL's SQLSTATE (42601,
// 22003, 22P02); a case pgnumfmt refuses is 0A000.
func toCharNumber(n *fnNode) error {
	if err := argCount(n, 2, 2); err != nil {
		return err
	}
	if err := wantText(n, 1); err != nil {
		return err
	}
	if t := n.types[0]; t == nil || !isInt(t) && t.ID() != arrow.DECIMAL128 && t.ID() != arrow.FLOAT64 && t.ID() != arrow.FLOAT32 {
		return errors.New("argument 1 must be an integer, a float or decimal128")
	}
	n.out = arrow.BinaryTypes.String
	n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
		format, err := numberFormatter(args[0])
		if err != nil {
			return nil, err
		}
		tx, ok := asTexts(args[1])
		if !ok {
			return nil, errors.New("argument 2 must be text")
		}
		var (
			last string
			tmpl *pgnumfmt.Template
		)
		return mapStrings(mem, rows, args, func(i int) (string, bool, error) {
			f := string(tx.ValueBytes(i))
			if tmpl == nil || f != last {
				if tmpl, err = pgnumfmt.Parse(f); err != nil {
					return "", false, numFmtError(err)
				}
				last = f
			}
			s, err := format(tmpl, i)
			if err != nil {
				return "", false, numFmtError(err)
			}
			return s, true, nil
		})
	}
	return nil
}

// numberFormatter returns the to_char of row i of a with a template, by a's type.
func numberFormatter(a arrow.Array) (func(t *pgnumfmt.Template, i int) (string, error), error) {
	switch v := a.(type) {
	case *array.Int64:
		return func(t *pgnumfmt.Template, i int) (string, error) { return t.Int8(v.Value(i)) }, nil
	case *array.Float64:
		return func(t *pgnumfmt.Template, i int) (string, error) { return t.Float8(v.Value(i)) }, nil
	case *array.Float32:
		return func(t *pgnumfmt.Template, i int) (string, error) { return t.Float4(v.Value(i)) }, nil
	}
	if isInt(a.DataType()) { // int8, int16, int32: integer's to_char
		return func(t *pgnumfmt.Template, i int) (string, error) { return t.Int4(int32(intAt(a, i))) }, nil
	}
	read, err := numericReader(a)
	if err != nil {
		return nil, err
	}
	return func(t *pgnumfmt.Template, i int) (string, error) {
		d, err := read(i)
		if err != nil {
			return "", err
		}
		return t.Numeric(d)
	}, nil
}

// numFmtError is a pgnumfmt error as the row's DataError, prefixed by the function's name.
func numFmtError(err error) error {
	var e *pgnumfmt.Error
	if errors.As(err, &e) {
		return &DataError{Code: e.Code, Msg: "to_char: " + e.Msg, Err: err}
	}
	return err
}
