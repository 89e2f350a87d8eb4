package ops

import (
	"errors"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flightsrv/flightsrv/internal/pgnumfmt"
)

// to_char of integers and numerics: PostgreSQL's numeric_to_char (internal/pgnumfmt).

func init() {
	ownFunctions["to_char_number"] = toCharNumber
}

// toCharNumber is to_char_number(x, template): x an integer or decimal128 array, template text
// (parsed once per distinct template of a batch).
func toCharNumber(n *fnNode) error {
	if err := argCount(n, 2, 2); err != nil {
		return err
	}
	if err := wantText(n, 1); err != nil {
		return err
	}
	if t := n.types[0]; t == nil || !isInt(t) && t.ID() != arrow.DECIMAL128 {
		return errors.New("argument 1 must be an integer or decimal128")
	}
	n.out = arrow.BinaryTypes.String
	n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
		read, err := numericReader(args[0])
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
					return "", false, &DataError{Code: "0A000", Msg: "to_char: " + err.Error() + " is not supported"}
				}
				last = f
			}
			d, err := read(i)
			if err != nil {
				return "", false, err
			}
			return tmpl.Format(d), true, nil
		})
	}
	return nil
}
