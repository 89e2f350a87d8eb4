package ops

import (
	"errors"
	"fmt"
	"math/big"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
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
// value at its own display scale, which is the text PostgreSQL's numeric_out writes;
// numeric_exact and numeric_value_scale hold text or double precision cast to numeric
// without a scale exactly and give each value's display scale, for sum and avg of them.

func init() {
	ownFunctions["numeric_div_scale"] = numericDivScale
	ownFunctions["numeric_dscale"] = numericDscale
	ownFunctions["numeric_text_at"] = numericTextAt
	ownFunctions["numeric_div_exact"] = numericDivExact
	ownFunctions["numeric_exact"] = numericExact
	ownFunctions["numeric_value_scale"] = numericValueScale
	ownFunctions["numeric_group_scale"] = numericGroupScale
	ownFunctions["numeric_scale_known"] = numericScaleKnown
}

// ErrValueScale is a value of text, double precision or a JSON number (jsonb_numeric's) cast to
// numeric without a scale that decimal128(38, s) cannot hold exactly (numeric_exact): refused
// by name, never rounded.
var ErrValueScale = &DataError{Code: "0A000", Msg: "a value cast to numeric without a scale (of text, double precision or json) that needs more than " +
	"16 digits after the point or 22 before it is not supported: cast it to numeric(p,s)"}

// numericExact is numeric_exact(s, x): x (text or double precision cast to numeric without a
// scale, each value at its own display scale, as scaledReader reads it) held exactly in
// decimal128(38, s), s the enum argument; a value with digits that are not zeros past s, or
// more than 38 digits, is ErrValueScale, never rounded. Text that is no number is 22P02.
func numericExact(n *fnNode) error {
	if err := argCount(n, 2, 2); err != nil {
		return err
	}
	s64, err := strconv.ParseInt(n.enums[0], 10, 32)
	if err != nil || s64 < 0 || s64 > numericDigits || n.types[1] == nil {
		return errors.New("bad scale or argument")
	}
	s := int32(s64)
	n.out = numericOut(s)
	n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
		x, err := scaledReader(args[1])
		if err != nil {
			return nil, err
		}
		return mapNumeric(mem, s, rows, args[1:], func(i int) (*apd.Decimal, error) {
			d, _, err := x(i)
			if err != nil {
				return nil, err
			}
			var r apd.Decimal
			if _, err := numericCtx.Quantize(&r, d, -s); err != nil || r.Cmp(d) != 0 || r.NumDigits() > numericDigits {
				return nil, ErrValueScale
			}
			return &r, nil
		})
	}
	return nil
}

// numericValueScale is numeric_value_scale(x): the display scale (int32) of each value of x
// as scaledReader reads it (text: its digits after the point; double precision: those of its
// 15 significant digits, trailing zeros dropped; decimal128: its type's scale), as
// PostgreSQL's numeric_in and float8_numeric give it.
func numericValueScale(n *fnNode) error {
	if err := argCount(n, 1, 1); err != nil {
		return err
	}
	if n.types[0] == nil {
		return errors.New("argument must be a value")
	}
	n.out = arrow.PrimitiveTypes.Int32
	n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
		x, err := scaledReader(args[0])
		if err != nil {
			return nil, err
		}
		return mapRows[int32](array.NewInt32Builder(mem), rows, args, func(i int) (int32, bool, error) {
			_, s, err := x(i)
			return s, err == nil, err
		})
	}
	return nil
}

// numericDivScale is numeric_div_scale(a, b[, sa, sb]): the display scale of PostgreSQL's
// numeric_div(a, b) (divScale), a and b integers (scale 0) or decimal128 values (their type's
// scale is their display scale, unless the int32 sa and sb give each row's), as an
// average's sum and count or a quotient's operands;
// int32, NULL where either is NULL or b is 0 (the average is NULL there, the quotient an
// error).
func numericDivScale(n *fnNode) error {
	if err := argCount(n, 2, 4); err != nil {
		return err
	}
	if n.types[0] == nil || n.types[1] == nil || len(n.types) == 3 {
		return errors.New("arguments must be two numbers and their display scales or none")
	}
	n.out = arrow.PrimitiveTypes.Int32
	n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
		x, y, err := quotientReaders(args[0], args[1], args[2:])
		if err != nil {
			return nil, err
		}
		return mapRows[int32](array.NewInt32Builder(mem), rows, args, func(i int) (int32, bool, error) {
			a, sa, err := x(i)
			if err != nil {
				return 0, false, err
			}
			b, sb, err := y(i)
			if err != nil || b.IsZero() {
				return 0, false, err
			}
			return divScale(a, b, sa, sb), true, nil
		})
	}
	return nil
}

// numericDivExact is numeric_div_exact(a, b[, sa, sb]) into decimal128(38, s) (s the
// function's enum argument, at least either operand's scale; sa and sb, int32, each row's
// display scales of a and b where they vary): PostgreSQL's quotient a / b (NumericQuotient,
// at select_div_scale's scale, whose display scale numeric_div_scale gives), held exactly at
// scale s; a quotient with digits that are not zeros past s, or more than 38 digits, is
// ErrQuotientScale rather than rounded. A zero divisor is 22012.
func numericDivExact(n *fnNode) error {
	if err := argCount(n, 3, 5); err != nil {
		return err
	}
	if len(n.types) == 4 {
		return errors.New("arguments must be two numbers and their display scales or none")
	}
	s64, err := strconv.ParseInt(n.enums[0], 10, 32)
	if err != nil || s64 < 0 || s64 > numericDigits {
		return errors.New("bad scale")
	}
	s := int32(s64)
	for _, t := range n.types[1:3] {
		if t == nil || !isInt(t) && t.ID() != arrow.DECIMAL128 {
			return errors.New("arguments 2 and 3 must be integers or decimal128")
		}
	}
	n.out = numericOut(s)
	n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
		return mapQuotients(mem, s, rows, args[1:], args[1], args[2], func(q *apd.Decimal) (*apd.Decimal, error) {
			var r apd.Decimal
			if _, err := numericCtx.Quantize(&r, q, -s); err != nil || r.Cmp(q) != 0 || r.NumDigits() > numericDigits {
				return nil, ErrQuotientScale
			}
			return &r, nil
		}, args[3:]...)
	}
	return nil
}

// ErrQuotientScale is a numeric quotient that decimal128(38, s) cannot hold exactly.
var ErrQuotientScale = &DataError{Code: "0A000", Msg: "a numeric quotient whose exact value (as PostgreSQL computes it) needs more than " +
	"20 digits after the point or 18 before it is not supported: round it (round(a / b, n)) or cast it to numeric(p,s)"}

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
	return int32Pair(n, 1, func(a, b int32) (int32, error) {
		if op == "max" {
			return max(a, b), nil
		}
		return a + b, nil
	})
}

// int32Pair makes n, a function of three arguments the last two of which are int32, compute
// f of those two per row: NULL where an argument from the first'th on is NULL.
func int32Pair(n *fnNode, first int, f func(a, b int32) (int32, error)) error {
	if err := argCount(n, 3, 3); err != nil {
		return err
	}
	for _, t := range n.types[1:] {
		if t == nil || t.ID() != arrow.INT32 {
			return errors.New("arguments 2 and 3 must be int32")
		}
	}
	n.out = arrow.PrimitiveTypes.Int32
	n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
		a, b := args[1].(*array.Int32), args[2].(*array.Int32)
		return mapRows[int32](array.NewInt32Builder(mem), rows, args[first:], func(i int) (int32, bool, error) {
			v, err := f(a.Value(i), b.Value(i))
			return v, err == nil, err
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

// ErrGroupScale is the display scale, read (numeric_scale_known), of a group of equal
// numerics of different display scales, one of which a set operation shows
// (numeric_group_scale): PostgreSQL shows the one its plan meets first, which flightsrv
// cannot know.
var ErrGroupScale = &DataError{Code: "0A000", Msg: "the display scale of equal numerics of different display scales (1.5 and 1.50) in one row of a UNION, INTERSECT or EXCEPT " +
	"(their text) is not supported: PostgreSQL shows the one its plan meets first; cast them to one numeric(p,s)"}

// numericGroupScale is numeric_group_scale(v, lo, hi): the display scale (int32) of the value
// v of a group of equal numerics (a row of UNION, INTERSECT, EXCEPT) whose members' display
// scales range from lo to hi (the int32 min and max over the group): lo where they agree,
// NULL where any argument is NULL (a NULL value shows no digits), and -1 where they differ
// or a member's is -1 already (a nested set operation's), which numeric_scale_known refuses
// where the scale is read, never here: the values alone still answer.
func numericGroupScale(n *fnNode) error {
	return int32Pair(n, 0, func(lo, hi int32) (int32, error) {
		if lo != hi || lo < 0 {
			return -1, nil
		}
		return lo, nil
	})
}

// numericScaleKnown is numeric_scale_known(ds): the int32 display scale ds, NULL where it is,
// ErrGroupScale where it is negative (numeric_group_scale's unknown scale).
func numericScaleKnown(n *fnNode) error {
	if err := argCount(n, 1, 1); err != nil {
		return err
	}
	if n.types[0] == nil || n.types[0].ID() != arrow.INT32 {
		return errors.New("argument must be int32")
	}
	n.out = arrow.PrimitiveTypes.Int32
	n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
		ds := args[0].(*array.Int32)
		return mapRows[int32](array.NewInt32Builder(mem), rows, args, func(i int) (int32, bool, error) {
			if ds.Value(i) < 0 {
				return 0, false, ErrGroupScale
			}
			return ds.Value(i), true, nil
		})
	}
	return nil
}

func init() { ownFunctions["numeric_sqrt_at"] = numericSqrtAt }

// ErrSqrtScale is a numeric square root decimal128(38, s) cannot hold at the scale PostgreSQL
// gives it.
var ErrSqrtScale = &DataError{Code: "0A000", Msg: "a numeric standard deviation whose value (as PostgreSQL computes it) needs more than " +
	"20 digits after the point is not supported: round the argument or cast it to double precision"}

// numericSqrtAt is numeric_sqrt_at(x, ds): the square root of the decimal128 x rounded half
// away from zero to ds digits after the point (int32 per row), as PostgreSQL's sqrt_var
// rounds it to its rscale (a standard deviation's: its variance's display scale), in
// decimal128(38, s) of x's scale s (SqrtAt); a root with digits that are not zeros past s is
// ErrSqrtScale, a negative x 2201F (cannot take square root of a negative number). NULL
// where either is NULL.
func numericSqrtAt(n *fnNode) error {
	if err := argCount(n, 2, 2); err != nil {
		return err
	}
	s, ok := decScale(n.types[0])
	if !ok || n.types[1] == nil || n.types[1].ID() != arrow.INT32 {
		return errors.New("arguments must be decimal128 and int32")
	}
	n.out = numericOut(s)
	n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
		x, ds := args[0].(*array.Decimal128), args[1].(*array.Int32)
		b := array.NewDecimal128Builder(mem, numericOut(s).(*arrow.Decimal128Type))
		var sq sqrtScratch
		return mapRows[decimal128.Num](b, rows, args, func(i int) (decimal128.Num, bool, error) {
			v, err := sq.at(x.Value(i), s, ds.Value(i))
			return v, err == nil, err
		})
	}
	return nil
}

// SqrtAt returns the square root of x·10^-s (x an unscaled decimal128 value of scale s)
// rounded half away from zero to ds digits after the point, as the unscaled value of scale s
// (numeric_sqrt_at's value for one row): ErrSqrtScale when the rounded root has digits that are
// not zeros past s or more than 38 digits at s, a 2201F DataError when x is negative. The root
// is exact: the integer square root of x·10^(2·ds−s+2j), floor(√(x·10^-s)·10^(ds+j)) for
// j ≥ 1 extra digits, rounded at those j digits; a floor on that finer grid keeps every
// comparison with the halfway points of ds's grid, so the rounding is of the true root, as
// sqrt_var's truncated root rounded by round_var is.
func SqrtAt(x decimal128.Num, s, ds int32) (decimal128.Num, error) {
	var sq sqrtScratch
	return sq.at(x, s, ds)
}

// sqrtScratch is SqrtAt's big integers, reused from row to row.
type sqrtScratch struct{ v, r, p, m big.Int }

func (sq *sqrtScratch) at(x decimal128.Num, s, ds int32) (decimal128.Num, error) {
	if x.Sign() < 0 {
		return decimal128.Num{}, &DataError{Code: "2201F", Msg: "cannot take square root of a negative number"}
	}
	if x.Sign() == 0 {
		return decimal128.Num{}, nil
	}
	if ds > numericMaxDisplayScale || ds < -numericMaxDisplayScale {
		// Past PostgreSQL's NUMERIC_MAX_DISPLAY_SCALE, which no display scale reaches.
		return decimal128.Num{}, ErrSqrtScale
	}
	j := max(1, (int64(s)-2*int64(ds)+1)/2) // 2·ds − s + 2j >= 0
	e := 2*int64(ds) - int64(s) + 2*j
	v, r, p, m := &sq.v, &sq.r, &sq.p, &sq.m
	v.SetUint64(x.LowBits())
	if hi := x.HighBits(); hi != 0 {
		p.SetInt64(hi)
		v.Or(v, p.Lsh(p, 64))
	}
	v.Mul(v, pow10Big(p, e))
	r.Sqrt(v)
	// Half away from zero at j digits: add half a unit of ds's grid, then truncate.
	unit := pow10Big(p, j)
	r.Add(r, m.Rsh(unit, 1)) // 10^j / 2 = 5·10^(j-1) exactly (j >= 1)
	r.Quo(r, unit)
	// r is the root at ds digits; at s digits:
	if ds > s {
		r.QuoRem(r, pow10Big(p, int64(ds-s)), m)
		if m.Sign() != 0 {
			return decimal128.Num{}, ErrSqrtScale
		}
	} else if ds < s {
		r.Mul(r, pow10Big(p, int64(s-ds)))
	}
	if r.Cmp(pow10Big(p, numericDigits)) >= 0 {
		return decimal128.Num{}, ErrSqrtScale
	}
	return decimal128.FromBigInt(r), nil
}

// numericMaxDisplayScale is PostgreSQL's NUMERIC_MAX_DISPLAY_SCALE.
const numericMaxDisplayScale = 1000

// pow10Big returns 10^k (k >= 0): a shared value of pow10Bigs, not to be modified, or p set
// to it past them.
func pow10Big(p *big.Int, k int64) *big.Int {
	if k < int64(len(pow10Bigs)) {
		return pow10Bigs[k]
	}
	return p.Exp(big.NewInt(10), big.NewInt(k), nil)
}

// pow10Bigs are 10^0 to 10^99, the powers SqrtAt's scales reach (a root of scale s up to 38
// rounded to a display scale near it).
var pow10Bigs = func() []*big.Int {
	out := make([]*big.Int, 100)
	for k := range out {
		out[k] = new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(k)), nil)
	}
	return out
}()
