package ops

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/cockroachdb/apd/v3"

	"github.com/flightsrv/flightsrv/internal/pgnumfmt"
	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/extensions"
	"github.com/substrait-io/substrait-go/v8/types"
)

// PostgreSQL's numeric, as far as a fixed scale per column represents it exactly. A numeric
// value is an Arrow decimal128(38, s): the column's scale s is PostgreSQL's display scale of
// every value in it, which the binder (substrait/numeric.go) knows statically for decimal
// literals, integers, numeric(p,s) casts, round/trunc to a constant number of places, and
// + - * of those. The arithmetic is apd's (github.com/cockroachdb/apd/v3, CockroachDB's
// implementation of PostgreSQL's decimal semantics), exact; rounding is half away from zero
// as PostgreSQL's. A result needing more than 38 digits is an error (22003), never rounded.
// Casts of text and integers that need no rounding, and + - * and comparisons within 38
// digits, run in 128-bit integers without apd (numfast.go), with the same answers.
//
// The kernels, all functions of URNPostgres (sqlfuncs.go) with enumeration arguments first:
//
//	numeric_cast(mode, places, precision, x)  x (integer, float64, text or decimal128) as
//	                       numeric rounded to places digits after the point (negative: before
//	                       it) with mode ROUND (half away from zero), TRUNC (toward zero), CEIL
//	                       or FLOOR; the result is decimal128(38, max(places, 0)). precision
//	                       is numeric(p,s)'s p ("0": unconstrained): a value with p-s or more
//	                       integer digits is "numeric field overflow" (22003). A float64 is
//	                       first written with 15 significant digits, as PostgreSQL's float8 to
//	                       numeric cast does, a float32 with 6 (float4_numeric); text is read as numeric_in reads it (22P02 when
//	                       it is not a number). NaN and infinities are refused by name (0A000);
//	                       an infinity cast to numeric(p,s) is "numeric field overflow" (22003).
//	numeric_to(kind, x)    decimal128 x as int16, int32, int64 (rounded half away from zero,
//	                       "<type> out of range" 22003), float64 (the nearest double), float32
//	                       (the nearest real to its text, rounded once) or text
//	                       (PostgreSQL's form: every digit of the scale, "-0.50")
//	numeric_arith(op, a, b) add, subtract, multiply or modulus of two decimal128 values; the
//	                       result scale is max(sa, sb) (add, subtract, modulus: PostgreSQL's
//	                       mod_var, the sign of a; b = 0 is 22012) or sa + sb (multiply);
//	                       multiply_exact is the product held exactly at max(sa, sb), for
//	                       values whose display scales vary by row (their held scales are
//	                       larger than their digits): a product with digits that are not
//	                       zeros past it is ErrProductScale, never rounded; div_trunc is
//	                       PostgreSQL's div(a, b) (numeric_div_trunc): the quotient truncated
//	                       toward zero, exactly, at scale 0 (b = 0 is 22012; a quotient past
//	                       38 digits is 22003, flightsrv's numeric being decimal128)
//	numeric_cmp(op, a, b)  equal, not_equal, lt, lte, gt, gte of two decimal128 values (any
//	                       scales): boolean
//	numeric_neg(x), numeric_abs(x)  decimal128 of x's scale
//
// Kernels keep no state; they are safe for concurrent use. Errors quote no value.

// numericDigits is the precision of the numeric columns: decimal128's 38 digits.
const numericDigits = 38

var (
	errNumericOverflow = &DataError{Code: sqlstateOutOfRange, Msg: "numeric field overflow"}
	errNumericWide     = &DataError{Code: sqlstateOutOfRange, Msg: "numeric value out of range: flightsrv's numeric holds 38 digits"}
	errNumericText     = &DataError{Code: sqlstateInvalidText, Msg: "invalid input syntax for type numeric"}
	// PostgreSQL's numeric holds NaN and ±Infinity; decimal128 cannot, so they are refused
	// by name. Infinity cast to numeric(p,s) is PostgreSQL's own error, errNumericOverflow
	// (apply_typmod: "cannot hold an infinite value").
	errNumericNaN = &DataError{Code: sqlstateNotSupported, Msg: "numeric NaN is not supported"}
	errNumericInf = &DataError{Code: sqlstateNotSupported, Msg: "numeric infinity is not supported"}
)

// numericCtx computes exactly: + - * of 38-digit values need at most 77 digits.
var numericCtx = apd.Context{Precision: 100, MaxExponent: apd.MaxExponent, MinExponent: apd.MinExponent, Traps: apd.DefaultTraps}

func init() {
	ownFunctions["numeric_cast"] = numericCast
	ownFunctions["numeric_to"] = numericTo
	ownFunctions["numeric_arith"] = numericArith
	ownFunctions["numeric_cmp"] = numericCmp
	ownFunctions["numeric_div"] = numericDiv
	ownFunctions["numeric_neg"] = numericUnary(func(d, x *apd.Decimal) { d.Neg(x) })
	ownFunctions["numeric_abs"] = numericUnary(func(d, x *apd.Decimal) { d.Abs(x) })
	ownFunctions["numeric_is_null"] = numericNullTest(true)
	ownFunctions["numeric_is_not_null"] = numericNullTest(false)
}

// isDecimalNullTest reports whether f is functions_comparison's is_null or is_not_null of a
// decimal: arrow-go v18.8.0's comparison dispatch indexes a second argument for decimals and
// panics on these one-argument functions, so numericNullTest evaluates them.
func isDecimalNullTest(f *expr.ScalarFunction) bool {
	if f.ID().URN != extensions.SubstraitDefaultURNPrefix+"functions_comparison" || (f.Name() != "is_null" && f.Name() != "is_not_null") || f.NArgs() != 1 {
		return false
	}
	a, ok := f.Arg(0).(expr.Expression)
	if !ok || a == nil {
		return false
	}
	_, dec := a.GetType().(*types.DecimalType)
	return dec
}

// numericNullTest is IS NULL (null true) or IS NOT NULL of a decimal128: never NULL itself.
func numericNullTest(null bool) func(*fnNode) error {
	return func(n *fnNode) error {
		if err := argCount(n, 1, 1); err != nil {
			return err
		}
		n.out = arrow.FixedWidthTypes.Boolean
		n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
			b := array.NewBooleanBuilder(mem)
			defer b.Release()
			b.Reserve(rows)
			for i := range rows {
				b.UnsafeAppend(args[0].IsNull(i) == null)
			}
			return b.NewArray(), nil
		}
		return nil
	}
}

// decScale returns the scale of a decimal128 type, ok false for another type.
func decScale(t arrow.DataType) (int32, bool) {
	d, ok := t.(*arrow.Decimal128Type)
	if !ok {
		return 0, false
	}
	return d.Scale, true
}

// decAt reads row i of a decimal128 array of scale s into d.
func decAt(a *array.Decimal128, i int, s int32, d *apd.Decimal) {
	v := a.Value(i)
	d.Coeff.SetMathBigInt(v.BigInt())
	d.Negative = d.Coeff.Sign() < 0
	d.Coeff.Abs(&d.Coeff)
	d.Exponent = -s
	d.Form = apd.Finite
}

// toNum rescales d (exactly: the caller rounded it) to scale s as a decimal128 value; an
// error when it needs more than 38 digits.
func toNum(d *apd.Decimal, s int32) (decimal128.Num, error) {
	var q apd.Decimal
	if _, err := numericCtx.Quantize(&q, d, -s); err != nil {
		return decimal128.Num{}, errNumericWide
	}
	if q.NumDigits() > numericDigits {
		return decimal128.Num{}, errNumericWide
	}
	bi := q.Coeff.MathBigInt()
	if q.Negative {
		bi.Neg(bi)
	}
	return decimal128.FromBigInt(bi), nil
}

// roundModes are numeric_cast's modes as apd's rounders.
var roundModes = map[string]apd.Rounder{
	"ROUND": apd.RoundHalfUp, "TRUNC": apd.RoundDown, "CEIL": apd.RoundCeiling, "FLOOR": apd.RoundFloor,
}

// roundTo rounds d to places digits after the point with r.
func roundTo(d *apd.Decimal, places int32, r apd.Rounder) (*apd.Decimal, error) {
	ctx := numericCtx
	ctx.Rounding = r
	var q apd.Decimal
	if err := pgnumfmt.Quantize(&ctx, &q, d, -places); err != nil {
		return nil, errNumericWide
	}
	if places < 0 {
		// round(1234.5, -2) = 1200: shown with no fraction.
		if _, err := ctx.Quantize(&q, &q, 0); err != nil {
			return nil, errNumericWide
		}
	}
	return &q, nil
}

// numericSyntax is numeric_in's syntax of a finite number (after spaces are trimmed).
var numericSyntax = regexp.MustCompile(`^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$`)

// parseNumeric reads text as PostgreSQL's numeric_in: optional spaces (isspace's six ASCII
// ones: a no-break space is not one), a sign, digits with one optional point, an optional
// exponent. NaN is errNumericNaN, infinities errNumericInf.
func parseNumeric(s string) (*apd.Decimal, error) {
	t := strings.TrimFunc(s, func(r rune) bool { return r < 0x80 && isPGSpace(byte(r)) })
	low := strings.ToLower(strings.TrimLeft(t, "+-"))
	switch low {
	case "nan":
		if low == strings.ToLower(t) { // numeric_in reads no sign before NaN
			return nil, errNumericNaN
		}
	case "inf", "infinity":
		if len(t)-len(low) <= 1 { // one sign at most
			return nil, errNumericInf
		}
	}
	if !numericSyntax.MatchString(t) {
		return nil, errNumericText
	}
	d, _, err := apd.NewFromString(t)
	if err != nil || d.Form != apd.Finite {
		return nil, errNumericText
	}
	if !d.IsZero() && (d.NumDigits()+int64(d.Exponent) > numericDigits+1 || d.Exponent < -1000) {
		// Past 38 integer digits or PostgreSQL's 1000 digits of scale (1e999999999 would
		// take a billion digits to round).
		return nil, errNumericWide
	}
	return d, nil
}

// ParseNumeric reads a numeric constant (a decimal literal's text, or text cast to numeric)
// as numeric_in does: its value and display scale (digits after the point, at least 0). It
// fails with a *DataError (22P02) when s is not a number, 0A000 for NaN and infinities.
func ParseNumeric(s string) (*apd.Decimal, int32, error) {
	d, err := parseNumeric(s)
	if err != nil {
		return nil, 0, err
	}
	return d, max(-d.Exponent, 0), nil
}

// NumericText writes d with scale digits after the point, as PostgreSQL's numeric_out writes
// a value of that display scale. d must be finite.
func NumericText(d *apd.Decimal, scale int32) string {
	var q apd.Decimal
	if _, err := numericCtx.Quantize(&q, d, -scale); err != nil {
		return d.Text('f')
	}
	if q.IsZero() {
		q.Negative = false
	}
	return q.Text('f')
}

// floatNumeric is PostgreSQL's float8 to numeric: the value written with 15 significant digits.
func floatNumeric(f float64) (*apd.Decimal, error) { return floatDigitsNumeric(f, 15) }

// floatDigitsNumeric is f written with digits significant digits (printf's %.*g) read as a
// numeric: float8_numeric's 15 (DBL_DIG), float4_numeric's 6 (FLT_DIG) for a real's value.
func floatDigitsNumeric(f float64, digits int) (*apd.Decimal, error) {
	if math.IsNaN(f) {
		return nil, errNumericNaN
	}
	if math.IsInf(f, 0) {
		return nil, errNumericInf
	}
	d, _, err := apd.NewFromString(strconv.FormatFloat(f, 'e', digits-1, 64))
	if err != nil {
		return nil, errNumericText
	}
	return d, nil
}

// numericReader returns a function reading row i of a, an integer, float64, float32, text or decimal128
// array, as a numeric value.
func numericReader(a arrow.Array) (func(i int) (*apd.Decimal, error), error) {
	if isInt(a.DataType()) {
		return func(i int) (*apd.Decimal, error) { return apd.New(intAt(a, i), 0), nil }, nil
	}
	switch v := a.(type) {
	case *array.Float64:
		return func(i int) (*apd.Decimal, error) { return floatNumeric(v.Value(i)) }, nil
	case *array.Float32:
		return func(i int) (*apd.Decimal, error) { return floatDigitsNumeric(float64(v.Value(i)), 6) }, nil
	case *array.Decimal128:
		s := v.DataType().(*arrow.Decimal128Type).Scale
		return func(i int) (*apd.Decimal, error) {
			d := new(apd.Decimal)
			decAt(v, i, s, d)
			return d, nil
		}, nil
	}
	if tx, ok := asTexts(a); ok {
		return func(i int) (*apd.Decimal, error) { return parseNumeric(string(tx.ValueBytes(i))) }, nil
	}
	return nil, fmt.Errorf("argument must be a number or text, not %s", a.DataType())
}

func numericOut(s int32) arrow.DataType {
	return &arrow.Decimal128Type{Precision: numericDigits, Scale: s}
}

// mapNumeric builds a decimal128(38, s) array of n rows: f(i) rounded already to s places,
// NULL where an argument is.
func mapNumeric(mem memory.Allocator, s int32, n int, args []arrow.Array, f func(i int) (*apd.Decimal, error)) (arrow.Array, error) {
	b := array.NewDecimal128Builder(mem, numericOut(s).(*arrow.Decimal128Type))
	return mapRows[decimal128.Num](b, n, args, func(i int) (decimal128.Num, bool, error) {
		d, err := f(i)
		if err != nil {
			return decimal128.Num{}, false, err
		}
		v, err := toNum(d, s)
		return v, err == nil, err
	})
}

// rounding is numeric_cast's and numeric_div's last step, read from their first three
// enumeration arguments (mode, places, precision): round by mode to places digits, then
// check numeric(p,s)'s precision (0: none). s is the result's scale, max(places, 0).
type rounding struct {
	mode         apd.Rounder
	places, prec int32
	s            int32
}

func parseRounding(n *fnNode) (rounding, error) { return roundingOf(n.enums) }

// roundingOf reads a rounding from enumeration arguments mode, places and precision (the first
// three of enums).
func roundingOf(enums []string) (rounding, error) {
	r, ok := roundModes[enums[0]]
	places, err1 := strconv.ParseInt(enums[1], 10, 32)
	prec, err2 := strconv.ParseInt(enums[2], 10, 32)
	if !ok || err1 != nil || err2 != nil || places > numericDigits || places < -numericDigits || prec < 0 || prec > numericDigits {
		return rounding{}, errors.New("bad rounding, places or precision")
	}
	return rounding{mode: r, places: int32(places), prec: int32(prec), s: int32(max(places, 0))}, nil
}

// apply rounds d and checks the precision ("numeric field overflow", 22003).
func (rd rounding) apply(d *apd.Decimal) (*apd.Decimal, error) {
	q, err := roundTo(d, rd.places, rd.mode)
	if err != nil {
		return nil, err
	}
	if rd.prec > 0 && !q.IsZero() && q.NumDigits()+int64(q.Exponent) > int64(rd.prec-rd.s) {
		return nil, errNumericOverflow
	}
	return q, nil
}

func numericCast(n *fnNode) error {
	if err := argCount(n, 4, 4); err != nil {
		return err
	}
	rd, err := parseRounding(n)
	if err != nil {
		return err
	}
	if n.types[3] == nil {
		return errors.New("argument 4 must be a value")
	}
	n.out = numericOut(rd.s)
	n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
		read, err := numericReader(args[3])
		if err != nil {
			return nil, err
		}
		slow := func(i int) (decimal128.Num, bool, error) {
			d, err := read(i)
			v, err := castRounded(d, err, rd)
			return v, err == nil, err
		}
		f := slow
		// Text read in place (asTexts' ValueBytes copies a string array's value).
		switch v := args[3].(type) {
		case *array.String:
			f = textRows(v.Value, rd)
		case *array.LargeString:
			f = textRows(v.Value, rd)
		case *array.Binary:
			f = textRows(v.Value, rd)
		case *array.LargeBinary:
			f = textRows(v.Value, rd)
		}
		if v := args[3]; isInt(v.DataType()) {
			if out, ok := castIntsNumeric(mem, v, rd); ok {
				return out, nil // every row on the fast path, in one loop (numbulk.go)
			}
			// The fast path (numfast.go), the general path for what it cannot decide.
			f = func(i int) (decimal128.Num, bool, error) {
				if x, ok, err := fastIntNumeric(intAt(v, i), rd); ok {
					return x, err == nil, err
				}
				return slow(i)
			}
		}
		b := array.NewDecimal128Builder(mem, numericOut(rd.s).(*arrow.Decimal128Type))
		return mapRows[decimal128.Num](b, rows, args, f)
	}
	return nil
}

// textRows is numeric_cast's reading of row i of a text array whose values are value(i).
func textRows[T string | []byte](value func(int) T, rd rounding) func(i int) (decimal128.Num, bool, error) {
	return func(i int) (decimal128.Num, bool, error) {
		x, err := textNumeric(value(i), rd)
		return x, err == nil, err
	}
}

// textNumeric reads text b as numeric_cast(mode, places, prec) reads a text row, the one
// reader of text as numeric of the kernel and of JSON fields cast in their extraction
// (jsonfields.go): numeric_in's syntax (parseNumeric), rounded and checked by rd (22003
// "numeric field overflow" past numeric(p,s)'s precision), at scale rd.s; fastTextNumeric
// first. Its errors are *DataError (22P02 for text that is not a number). b is a string or
// bytes, read in place.
func textNumeric[T string | []byte](b T, rd rounding) (decimal128.Num, error) {
	if v, ok, err := fastTextNumeric(b, rd); ok {
		return v, err
	}
	d, err := parseNumeric(string(b))
	return castRounded(d, err, rd)
}

// castRounded is numeric_cast's last step of a value read as d, or of the reading's error err:
// rounded and checked by rd, at scale rd.s. An infinity cast to numeric(p,s) is PostgreSQL's
// "numeric field overflow" (apply_typmod: numeric(p,s) cannot hold an infinite value).
func castRounded(d *apd.Decimal, err error, rd rounding) (decimal128.Num, error) {
	if err == nil {
		d, err = rd.apply(d)
	} else if err == errNumericInf && rd.prec > 0 {
		err = errNumericOverflow
	}
	if err != nil {
		return decimal128.Num{}, err
	}
	return toNum(d, rd.s)
}

func numericTo(n *fnNode) error {
	if err := argCount(n, 2, 2); err != nil {
		return err
	}
	s, ok := decScale(n.types[1])
	if !ok {
		return errors.New("argument 2 must be decimal128")
	}
	kind := n.enums[0]
	read := func(a arrow.Array, i int) *apd.Decimal {
		d := new(apd.Decimal)
		decAt(a.(*array.Decimal128), i, s, d)
		return d
	}
	switch kind {
	case "int16", "int32", "int64":
		lim := map[string]struct {
			lo, hi int64
			name   string
		}{"int16": {math.MinInt16, math.MaxInt16, "smallint"}, "int32": {math.MinInt32, math.MaxInt32, "integer"}, "int64": {math.MinInt64, math.MaxInt64, "bigint"}}[kind]
		dt := map[string]arrow.DataType{"int16": arrow.PrimitiveTypes.Int16, "int32": arrow.PrimitiveTypes.Int32, "int64": arrow.PrimitiveTypes.Int64}[kind]
		n.out = dt
		n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
			b := array.NewBuilder(mem, dt)
			defer b.Release()
			for i := range rows {
				if args[1].IsNull(i) {
					b.AppendNull()
					continue
				}
				q, err := roundTo(read(args[1], i), 0, apd.RoundHalfUp)
				if err != nil {
					return nil, err
				}
				v, err := q.Int64()
				if err != nil || v < lim.lo || v > lim.hi {
					return nil, &DataError{Code: sqlstateOutOfRange, Msg: lim.name + " out of range"}
				}
				switch bb := b.(type) {
				case *array.Int16Builder:
					bb.Append(int16(v))
				case *array.Int32Builder:
					bb.Append(int32(v))
				case *array.Int64Builder:
					bb.Append(v)
				}
			}
			return b.NewArray(), nil
		}
	case "float64", "float32":
		// numeric_float8 and numeric_float4: the nearest value of the type to the numeric's
		// text, read once (a real never through a double, which could round twice).
		bits := 64
		n.out = arrow.PrimitiveTypes.Float64
		if kind == "float32" {
			bits, n.out = 32, arrow.PrimitiveTypes.Float32
		}
		n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
			toFloat := func(i int) (float64, bool, error) {
				f, err := strconv.ParseFloat(read(args[1], i).Text('f'), bits)
				if err != nil {
					return 0, false, &DataError{Code: sqlstateOutOfRange, Msg: "value out of range: overflow", Err: err}
				}
				return f, true, nil
			}
			if bits == 32 {
				return mapRows[float32](array.NewFloat32Builder(mem), rows, args[1:], func(i int) (float32, bool, error) {
					f, ok, err := toFloat(i)
					return float32(f), ok, err
				})
			}
			return mapRows[float64](array.NewFloat64Builder(mem), rows, args[1:], toFloat)
		}
	case "text":
		n.out = arrow.BinaryTypes.String
		n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
			return mapStrings(mem, rows, args[1:], func(i int) (string, bool, error) {
				return NumericText(read(args[1], i), s), true, nil
			})
		}
	default:
		return fmt.Errorf("unknown target %q", kind)
	}
	return nil
}

// twoNumerics checks a binary numeric kernel's arguments and returns their scales.
func twoNumerics(n *fnNode) (int32, int32, error) {
	if err := argCount(n, 3, 3); err != nil {
		return 0, 0, err
	}
	sa, oka := decScale(n.types[1])
	sb, okb := decScale(n.types[2])
	if !oka || !okb {
		return 0, 0, errors.New("arguments 2 and 3 must be decimal128")
	}
	return sa, sb, nil
}

// ErrProductScale is a product of numerics whose display scales vary by row (multiply_exact)
// that decimal128 at the larger of the operands' held scales cannot hold exactly.
var ErrProductScale = &DataError{Code: "0A000", Msg: "a product of numerics whose display scales vary by row (text or double precision cast to numeric, " +
	"an average) that needs more digits after the point than its operands are held at is not supported: round the operands or cast them to numeric(p,s)"}

func numericArith(n *fnNode) error {
	sa, sb, err := twoNumerics(n)
	if err != nil {
		return err
	}
	var op func(d, x, y *apd.Decimal) (apd.Condition, error)
	s := max(sa, sb)
	switch n.enums[0] {
	case "add":
		op = numericCtx.Add
	case "subtract":
		op = numericCtx.Sub
	case "multiply":
		op, s = numericCtx.Mul, sa+sb
	case "multiply_exact":
		op = func(d, x, y *apd.Decimal) (apd.Condition, error) {
			if _, err := numericCtx.Mul(d, x, y); err != nil {
				return 0, err
			}
			var r apd.Decimal
			if _, err := numericCtx.Quantize(&r, d, -s); err != nil || r.Cmp(d) != 0 {
				return 0, ErrProductScale
			}
			return 0, nil
		}
	case "div_trunc":
		// PostgreSQL's numeric_div_trunc: div_var truncating at scale 0. Exact: the operands
		// hold at most 38 digits each, so the quotient's integer part has at most 76, within
		// numericCtx's precision.
		op, s = func(d, x, y *apd.Decimal) (apd.Condition, error) {
			if y.IsZero() {
				return 0, errNumericDivZero
			}
			return numericCtx.QuoInteger(d, x, y)
		}, 0
	case "modulus":
		// PostgreSQL's mod_var: x - trunc(x / y) * y, the sign of x (apd's Rem, exact).
		op = func(d, x, y *apd.Decimal) (apd.Condition, error) {
			if y.IsZero() {
				return 0, errNumericDivZero
			}
			return numericCtx.Rem(d, x, y)
		}
	default:
		return fmt.Errorf("unknown operation %q", n.enums[0])
	}
	if s > numericDigits {
		return errNumericWide
	}
	opName := n.enums[0]
	n.out = numericOut(s)
	n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
		a, b := args[1].(*array.Decimal128), args[2].(*array.Decimal128)
		if out := fastArithArray(mem, opName, a, b, sa, sb, s); out != nil {
			return out, nil
		}
		var x, y apd.Decimal
		db := array.NewDecimal128Builder(mem, numericOut(s).(*arrow.Decimal128Type))
		return mapRows[decimal128.Num](db, rows, args[1:], func(i int) (decimal128.Num, bool, error) {
			if v, ok := fastArith(opName, a.Value(i), b.Value(i), sa, sb, s); ok {
				return v, true, nil
			}
			decAt(a, i, sa, &x)
			decAt(b, i, sb, &y)
			var d apd.Decimal
			if _, err := op(&d, &x, &y); err == errNumericDivZero || err == ErrProductScale {
				return decimal128.Num{}, false, err
			} else if err != nil {
				return decimal128.Num{}, false, errNumericWide
			}
			v, err := toNum(&d, s)
			return v, err == nil, err
		})
	}
	return nil
}

func numericCmp(n *fnNode) error {
	sa, sb, err := twoNumerics(n)
	if err != nil {
		return err
	}
	test, ok := map[string]func(c int) bool{
		"equal": func(c int) bool { return c == 0 }, "not_equal": func(c int) bool { return c != 0 },
		"lt": func(c int) bool { return c < 0 }, "lte": func(c int) bool { return c <= 0 },
		"gt": func(c int) bool { return c > 0 }, "gte": func(c int) bool { return c >= 0 },
	}[n.enums[0]]
	if !ok {
		return fmt.Errorf("unknown comparison %q", n.enums[0])
	}
	n.out = arrow.FixedWidthTypes.Boolean
	n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
		a, b := args[1].(*array.Decimal128), args[2].(*array.Decimal128)
		if out, ok := cmpDecimals(mem, a, b, sa, sb, test); ok {
			return out, nil // every row on the fast path, in one loop (numbulk.go)
		}
		var x, y apd.Decimal
		return mapBools(mem, rows, args[1:], func(i int) (bool, error) {
			if c, ok := fastCmp(a.Value(i), b.Value(i), sa, sb); ok {
				return test(c), nil
			}
			decAt(a, i, sa, &x)
			decAt(b, i, sb, &y)
			return test(x.Cmp(&y)), nil
		})
	}
	return nil
}

func numericUnary(f func(d, x *apd.Decimal)) func(*fnNode) error {
	return func(n *fnNode) error {
		if err := argCount(n, 1, 1); err != nil {
			return err
		}
		s, ok := decScale(n.types[0])
		if !ok {
			return errors.New("argument 1 must be decimal128")
		}
		n.out = numericOut(s)
		n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
			a := args[0].(*array.Decimal128)
			var x apd.Decimal
			return mapNumeric(mem, s, rows, args, func(i int) (*apd.Decimal, error) {
				decAt(a, i, s, &x)
				d := new(apd.Decimal)
				f(d, &x)
				return d, nil
			})
		}
		return nil
	}
}

// errNumericDivZero is PostgreSQL's division_by_zero.
var errNumericDivZero = &DataError{Code: sqlstateDivisionByZero, Msg: "division by zero"}

// divScale is PostgreSQL's select_div_scale for a / b: at least 16 significant
// digits, counted in the base-10000 digits numeric stores, and at least either operand's
// display scale. a and b are finite; b is not zero.
func divScale(a, b *apd.Decimal, sa, sb int32) int32 {
	// weight and first base-10000 digit of a nonzero value; 0, 0 for zero.
	wd := func(d *apd.Decimal) (int64, int64) {
		if d.IsZero() {
			return 0, 0
		}
		adj := d.NumDigits() + int64(d.Exponent) - 1 // floor(log10 |d|)
		w := adj / 4
		if adj < 0 && adj%4 != 0 {
			w--
		}
		// first digit = floor(|d| / 10000^w) = floor(C / 10^k) for the coefficient C and
		// k = 4w − Exponent: in uint64 when C and 10^k are (below 10^4 either way).
		if k := 4*w - int64(d.Exponent); d.Coeff.IsUint64() && k >= -3 && k <= 19 {
			c := d.Coeff.Uint64()
			if k < 0 {
				return w, int64(c * pow10u64[-k])
			}
			return w, int64(c / pow10u64[k])
		}
		var q apd.Decimal
		scaled := new(apd.Decimal).Set(d)
		scaled.Negative = false
		scaled.Exponent -= int32(4 * w)
		ctx := numericCtx
		ctx.Rounding = apd.RoundDown
		if _, err := ctx.Quantize(&q, scaled, 0); err != nil {
			return w, 0
		}
		f, _ := q.Int64()
		return w, f
	}
	w1, f1 := wd(a)
	w2, f2 := wd(b)
	qw := w1 - w2
	if f1 <= f2 {
		qw--
	}
	r := 16 - qw*4
	r = max(r, int64(sa), int64(sb), 0)
	return int32(min(r, 1000))
}

// pow10u64 are the powers of ten a uint64 holds, 10^0 to 10^19.
var pow10u64 = func() (p [20]uint64) {
	p[0] = 1
	for i := 1; i < len(p); i++ {
		p[i] = p[i-1] * 10
	}
	return p
}()

// numericDiv is numeric_div(mode, places, precision, a, b): PostgreSQL's a / b (the quotient
// rounded half away from zero to select_div_scale's scale) rounded again by mode (ROUND,
// TRUNC, CEIL, FLOOR) to places digits, as round(a / b, n), trunc, ceil, floor or a cast to
// numeric(p,s) of the quotient compute it; decimal128(38, max(places, 0)). a and b are
// decimal128 values (their type's scale is their display scale), integers (scale 0), or text
// or double precision cast to numeric without a scale (x::numeric), each value of which has
// its own display scale as numeric_in and float8_numeric give it (the digits after the point
// of the text; of the float's 15 significant digits, trailing zeros dropped). A zero divisor
// is "division by zero" (22012); text that is no number is 22P02.
func numericDiv(n *fnNode) error {
	if err := argCount(n, 5, 5); err != nil {
		return err
	}
	rd, err := parseRounding(n)
	if err != nil {
		return err
	}
	for _, t := range n.types[3:5] {
		if t == nil {
			return errors.New("arguments 4 and 5 must be values")
		}
	}
	n.out = numericOut(rd.s)
	n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
		if len(args) == 5 {
			x, y, err := quotientReaders(args[3], args[4], nil)
			if err != nil {
				return nil, err
			}
			if arr, ok, err := floorQuotients(mem, rd, rows, args, args[3], args[4], quotientRow(x, y, rd.apply)); ok {
				return arr, err
			}
		}
		return mapQuotients(mem, rd.s, rows, args, args[3], args[4], rd.apply)
	}
	return nil
}

// mapQuotients builds a decimal128(38, s) array of n rows of PostgreSQL's a / b
// (NumericQuotient, the operands read by scaledReader), each quotient passed through finish
// (rounded or checked to scale s); NULL where an argument of args is, 22012 where b is zero.
func mapQuotients(mem memory.Allocator, s int32, n int, args []arrow.Array, a, b arrow.Array, finish func(*apd.Decimal) (*apd.Decimal, error), ds ...arrow.Array) (arrow.Array, error) {
	x, y, err := quotientReaders(a, b, ds)
	if err != nil {
		return nil, err
	}
	return mapNumeric(mem, s, n, args, quotientRow(x, y, finish))
}

// quotientRow is row i's PostgreSQL x / y (NumericQuotient of the values and display scales
// x and y read) passed through finish; 22012 where y is zero.
func quotientRow(x, y func(i int) (*apd.Decimal, int32, error), finish func(*apd.Decimal) (*apd.Decimal, error)) func(i int) (*apd.Decimal, error) {
	return func(i int) (*apd.Decimal, error) {
		p, sa, err := x(i)
		if err != nil {
			return nil, err
		}
		q, sb, err := y(i)
		if err != nil {
			return nil, err
		}
		if q.IsZero() {
			return nil, errNumericDivZero
		}
		return finish(NumericQuotient(p, q, sa, sb))
	}
}

// NumericQuotient is PostgreSQL's numeric_div of x (display scale sa) by y (display scale
// sb): the quotient rounded half away from zero to select_div_scale's scale (divScale), which
// is the quotient's display scale (-Exponent of the result). y must not be zero.
func NumericQuotient(x, y *apd.Decimal, sa, sb int32) *apd.Decimal {
	rs := divScale(x, y, sa, sb)
	// x / y * 10^rs = X * 10^(rs - ex) / (Y * 10^-ey) over the coefficients (value =
	// coefficient * 10^exponent), rounded half away from zero in integers (exact).
	num := x.Coeff.MathBigInt()
	den := y.Coeff.MathBigInt()
	e := int64(rs) + int64(x.Exponent) - int64(y.Exponent)
	var p big.Int
	if e >= 0 {
		num.Mul(num, pow10Big(&p, e))
	} else {
		den.Mul(den, pow10Big(&p, -e))
	}
	q, rem := new(big.Int).QuoRem(num, den, new(big.Int))
	if rem.Lsh(rem, 1).Cmp(den) >= 0 {
		q.Add(q, big.NewInt(1))
	}
	d := apd.NewWithBigInt(new(apd.BigInt).SetMathBigInt(q), -rs)
	d.Negative = x.Negative != y.Negative && q.Sign() != 0
	return d
}

// quotientReaders are scaledReader of a and b, whose display scales are the int32 arrays ds
// (both, row by row: numerics whose display scale varies, substrait/dscale.go) when given.
func quotientReaders(a, b arrow.Array, ds []arrow.Array) (x, y func(i int) (*apd.Decimal, int32, error), err error) {
	if x, err = scaledReader(a); err != nil {
		return nil, nil, err
	}
	if y, err = scaledReader(b); err != nil {
		return nil, nil, err
	}
	if len(ds) == 0 {
		return x, y, nil
	}
	at := func(read func(i int) (*apd.Decimal, int32, error), d arrow.Array) (func(i int) (*apd.Decimal, int32, error), error) {
		scales, ok := d.(*array.Int32)
		if !ok {
			return nil, errors.New("display scales must be int32")
		}
		return func(i int) (*apd.Decimal, int32, error) {
			v, _, err := read(i)
			return v, scales.Value(i), err
		}, nil
	}
	if len(ds) != 2 {
		return nil, nil, errors.New("two display scales or none")
	}
	if x, err = at(x, ds[0]); err != nil {
		return nil, nil, err
	}
	y, err = at(y, ds[1])
	return x, y, err
}

// scaledReader returns a function reading row i of a (decimal128, integer, text or float64)
// as a numeric value and its display scale, as numericDiv reads its operands.
func scaledReader(a arrow.Array) (func(i int) (*apd.Decimal, int32, error), error) {
	read, err := numericReader(a)
	if err != nil {
		return nil, err
	}
	if s, ok := decScale(a.DataType()); ok {
		return func(i int) (*apd.Decimal, int32, error) {
			d, err := read(i)
			return d, s, err
		}, nil
	}
	isFloat := a.DataType().ID() == arrow.FLOAT64 || a.DataType().ID() == arrow.FLOAT32
	return func(i int) (*apd.Decimal, int32, error) {
		d, err := read(i)
		if err != nil {
			return nil, 0, err
		}
		if isFloat {
			// float8_numeric (float4_numeric) prints 15 (6) significant digits with %g, which
			// drops trailing zeros.
			d.Reduce(d)
		}
		return d, max(-d.Exponent, 0), nil
	}, nil
}
