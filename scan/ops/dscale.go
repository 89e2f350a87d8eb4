package ops

import (
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/cockroachdb/apd/v3"
)

// Display scales of numerics whose scale varies row by row.
//
// PostgreSQL's numeric carries a display scale in every value: numeric_div gives the quotient
// select_div_scale's scale (divScale), which depends on the operands' values, so avg of
// integers (sum / count) shows 16 significant digits or more, a different number of digits
// after the point from row to row (5.2355239786856128, 15000.000000000000). One Arrow
// decimal column has one scale, so such values are held at a scale large enough for all of
// them (AvgScale) and their display scales travel beside them as an int32 column the binder
// computes (substrait/dscale.go): numeric_div_scale from an average's exact sum and count,
// numeric_dscale to combine two display scales as + - * do, and numeric_text_at to write a
// value at its own display scale, which is the text PostgreSQL's numeric_out writes.

func init() {
	ownFunctions["numeric_div_scale"] = numericDivScale
	ownFunctions["numeric_dscale"] = numericDscale
	ownFunctions["numeric_text_at"] = numericTextAt
}

// numericDivScale is numeric_div_scale(sum, count): the display scale of PostgreSQL's
// numeric_div(sum, count) (divScale), sum an integer or decimal128 of scale 0 (an exact
// total), count an integer; int32, NULL where either is NULL or count is 0 (the average is
// NULL there).
func numericDivScale(n *fnNode) error {
	if err := argCount(n, 2, 2); err != nil {
		return err
	}
	if n.types[0] == nil || n.types[1] == nil || !isInt(n.types[1]) {
		return errors.New("arguments must be a number and an integer")
	}
	n.out = arrow.PrimitiveTypes.Int32
	n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
		sum, err := numericReader(args[0])
		if err != nil {
			return nil, err
		}
		return mapRows[int32](array.NewInt32Builder(mem), rows, args, func(i int) (int32, bool, error) {
			c := intAt(args[1], i)
			if c == 0 {
				return 0, false, nil
			}
			s, err := sum(i)
			if err != nil {
				return 0, false, err
			}
			return divScale(s, apd.New(c, 0), 0, 0), true, nil
		})
	}
	return nil
}

// numericDscale is numeric_dscale(op, a, b) over two int32 display scales: "max" for + and -
// (add_var's rscale), "add" for * (mul_var's); NULL where either is NULL.
func numericDscale(n *fnNode) error {
	if err := argCount(n, 3, 3); err != nil {
		return err
	}
	op := n.enums[0]
	if op != "max" && op != "add" {
		return fmt.Errorf("unknown display scale operation %q", op)
	}
	for _, t := range n.types[1:] {
		if t == nil || t.ID() != arrow.INT32 {
			return errors.New("arguments 2 and 3 must be int32")
		}
	}
	n.out = arrow.PrimitiveTypes.Int32
	n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
		a, b := args[1].(*array.Int32), args[2].(*array.Int32)
		return mapRows[int32](array.NewInt32Builder(mem), rows, args[1:], func(i int) (int32, bool, error) {
			if op == "max" {
				return max(a.Value(i), b.Value(i)), true, nil
			}
			return a.Value(i) + b.Value(i), true, nil
		})
	}
	return nil
}

// numericTextAt is numeric_text_at(x, ds): the decimal128 x written with ds digits after the
// point, as numeric_out writes a value of display scale ds (NumericText; a display scale
// below x's digits rounds half away from zero, one above pads zeros). NULL where x is; a NULL
// ds writes x at its type's scale.
func numericTextAt(n *fnNode) error {
	if err := argCount(n, 2, 2); err != nil {
		return err
	}
	s, ok := decScale(n.types[0])
	if !ok || n.types[1] == nil || n.types[1].ID() != arrow.INT32 {
		return errors.New("arguments must be decimal128 and int32")
	}
	n.out = arrow.BinaryTypes.String
	n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
		x, ds := args[0].(*array.Decimal128), args[1].(*array.Int32)
		return mapStrings(mem, rows, args[:1], func(i int) (string, bool, error) {
			d := new(apd.Decimal)
			decAt(x, i, s, d)
			at := s
			if ds.IsValid(i) {
				at = ds.Value(i)
			}
			return NumericText(d, at), true, nil
		})
	}
	return nil
}
