package ops

import (
	"errors"
	"math"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/cockroachdb/apd/v3"
)

// PostgreSQL's numeric sqrt, exp, ln, log, sign and power (its numeric_sqrt,
// numeric_exp, numeric_ln, numeric_log and log(numeric) = log(10, x), numeric_sign,
// numeric_power with power_var and power_var_int). Each result is the
// exact function's value rounded half away from zero to the scale PostgreSQL chooses for it
// (NumericFunc's rscale: at least 16 significant digits, never fewer digits after the point
// than an argument's display scale), which is the result's display scale: numeric_fn gives
// the value held at a fixed scale, numeric_fn_scale the display scale, as numeric_div_exact
// and numeric_div_scale give a quotient's (dscale.go). PostgreSQL computes with guard digits
// and rounds once, so its results are the correctly rounded ones computed here.

func init() {
	ownFunctions["numeric_fn"] = numericFn
	ownFunctions["numeric_fn_scale"] = numericFnScale
}

// numericFuncArgs are the arguments each of NumericFunc's functions takes.
var numericFuncArgs = map[string]int{"sqrt": 1, "exp": 1, "ln": 1, "log": 2, "sign": 1, "power": 2}

// ErrFuncScale is a numeric function's value that decimal128(38, s) cannot hold exactly at the
// scale PostgreSQL gives it.
var ErrFuncScale = &DataError{Code: "0A000", Msg: "a numeric sqrt, exp, ln or log whose value (as PostgreSQL computes it) needs more than " +
	"20 digits after the point is not supported: round it (round(ln(x), n)) or cast the argument to double precision"}

// decWeight returns floor(log10 |d|) of a nonzero d (the exponent of its first digit) and
// PostgreSQL's base-10000 weight of it (floor of that over 4).
func decWeight(d *apd.Decimal) (adj, weight int64) {
	adj = d.NumDigits() + int64(d.Exponent) - 1
	weight = adj / 4
	if adj < 0 && adj%4 != 0 {
		weight--
	}
	return adj, weight
}

// estimateLnDweight is PostgreSQL's estimate_ln_dweight: the decimal weight of ln(d) of a
// positive d, from d − 1 near 1 and from d's first two base-10000 digits elsewhere, in
// double precision as PostgreSQL computes it.
func estimateLnDweight(d *apd.Decimal) int64 {
	lo, hi := apd.New(9, -1), apd.New(11, -1)
	if d.Cmp(lo) >= 0 && d.Cmp(hi) <= 0 {
		var x apd.Decimal
		if _, err := numericCtx.Sub(&x, d, apd.New(1, 0)); err != nil || x.IsZero() {
			return 0
		}
		adj, _ := decWeight(&x)
		return adj
	}
	if d.IsZero() || d.Negative {
		return 0
	}
	_, w := decWeight(d)
	// The first base-10000 digits: d / 10000^w in [1, 10000), its integer part and the next
	// four digits (a second digit only when d has digits past the first).
	scaled := new(apd.Decimal).Set(d)
	scaled.Exponent -= int32(4 * w)
	var g0, frac, g1 apd.Decimal
	down := numericCtx
	down.Rounding = apd.RoundDown
	_, _ = down.Quantize(&g0, scaled, 0)
	_, _ = numericCtx.Sub(&frac, scaled, &g0)
	first, _ := g0.Int64()
	digits, dweight := first, w*4
	if !frac.IsZero() {
		frac.Exponent += 4
		_, _ = down.Quantize(&g1, &frac, 0)
		second, _ := g1.Int64()
		digits, dweight = first*10000+second, dweight-4
	}
	lnv := math.Log(float64(digits)) + float64(dweight)*2.302585092994046
	return int64(math.Log10(math.Abs(lnv)))
}

// clampScale is PostgreSQL's last steps of a result scale: at least each display scale of
// the arguments and NUMERIC_MIN_DISPLAY_SCALE (0), at most NUMERIC_MAX_DISPLAY_SCALE (1000).
func clampScale(r int64, ds ...int32) int32 {
	for _, s := range ds {
		r = max(r, int64(s))
	}
	return int32(min(max(r, 0), 1000))
}

// NumericFunc computes PostgreSQL's numeric fn ("sqrt", "exp", "ln", "sign" of x; "log" of
// base x and value y; "power" of base x and exponent y) of values with display scales sx and
// sy: the result rounded half away from zero to its display scale rscale, and rscale.
// PostgreSQL's errors: a negative sqrt (2201F), ln or log of zero or a negative number
// (2201E), log to the base 1 (22012), zero to a negative power and a negative number to a
// non-integer one (2201F).
func NumericFunc(fn string, x, y *apd.Decimal, sx, sy int32) (*apd.Decimal, int32, error) {
	const minSig = 16 // NUMERIC_MIN_SIG_DIGITS
	var (
		exact  apd.Decimal
		rscale int32
	)
	logArg := func(d *apd.Decimal) error {
		switch {
		case d.IsZero():
			return &DataError{Code: "2201E", Msg: "cannot take logarithm of zero"}
		case d.Negative:
			return &DataError{Code: "2201E", Msg: "cannot take logarithm of a negative number"}
		}
		return nil
	}
	switch fn {
	case "sign":
		exact.SetInt64(int64(x.Sign()))
		return &exact, 0, nil
	case "sqrt":
		if x.Negative && !x.IsZero() {
			return nil, 0, &DataError{Code: "2201F", Msg: "cannot take square root of a negative number"}
		}
		w := int64(0)
		if !x.IsZero() {
			_, w = decWeight(x)
		}
		rscale = clampScale(minSig-((w+1)*4/2-1), sx)
		if _, err := numericCtx.Sqrt(&exact, x); err != nil {
			return nil, 0, err
		}
	case "exp":
		f, err := x.Float64()
		if err != nil {
			f = math.Copysign(math.Inf(1), float64(x.Sign()))
		}
		val := min(max(f*0.434294481903252, -2000), 2000) // NUMERIC_MAX_RESULT_SCALE
		rscale = clampScale(minSig-int64(val), sx)
		if val > numericDigits {
			return nil, 0, errNumericWide
		}
		if _, err := numericCtx.Exp(&exact, x); err != nil {
			return nil, 0, errNumericWide
		}
	case "ln":
		if err := logArg(x); err != nil {
			return nil, 0, err
		}
		rscale = clampScale(minSig-estimateLnDweight(x), sx)
		if _, err := numericCtx.Ln(&exact, x); err != nil {
			return nil, 0, err
		}
	case "log":
		if err := logArg(x); err != nil {
			return nil, 0, err
		}
		if err := logArg(y); err != nil {
			return nil, 0, err
		}
		rscale = clampScale(minSig-(estimateLnDweight(y)-estimateLnDweight(x)), sx, sy)
		var lb, ly apd.Decimal
		if _, err := numericCtx.Ln(&lb, x); err != nil {
			return nil, 0, err
		}
		if _, err := numericCtx.Ln(&ly, y); err != nil {
			return nil, 0, err
		}
		if lb.IsZero() {
			return nil, 0, errNumericDivZero
		}
		if _, err := numericCtx.Quo(&exact, &ly, &lb); err != nil {
			return nil, 0, err
		}
	case "power":
		var err error
		if rscale, err = powerScale(x, y, sx, sy, &exact); err != nil {
			return nil, 0, err
		}
	default:
		return nil, 0, errors.New("unknown numeric function " + fn)
	}
	ctx := numericCtx
	ctx.Rounding = apd.RoundHalfUp
	var r apd.Decimal
	if _, err := ctx.Quantize(&r, &exact, -rscale); err != nil {
		return nil, 0, errNumericWide
	}
	return &r, rscale, nil
}

// numericFnArgs checks numeric_fn's and numeric_fn_scale's arguments after their enums:
// fn's count of integers or decimal128 values, then as many int32 display scales or none.
func numericFnArgs(fn string, vals []arrow.DataType) error {
	want, ok := numericFuncArgs[fn]
	if !ok {
		return errors.New("unknown numeric function " + fn)
	}
	if len(vals) != want && len(vals) != 2*want {
		return errors.New("wrong number of arguments")
	}
	for i, t := range vals {
		switch {
		case i >= want && (t == nil || t.ID() != arrow.INT32):
			return errors.New("display scales must be int32")
		case i < want && (t == nil || !isInt(t) && t.ID() != arrow.DECIMAL128):
			return errors.New("arguments must be integers or decimal128")
		}
	}
	return nil
}

// numericFnValues maps row i of the value arguments (integers or decimal128, their type's
// scale their display scale unless display-scale columns follow them) through NumericFunc.
func numericFnValues(fn string, i int, readers []func(int) (*apd.Decimal, int32, error)) (*apd.Decimal, int32, error) {
	x, sx, err := readers[0](i)
	if err != nil {
		return nil, 0, err
	}
	var (
		y  *apd.Decimal
		sy int32
	)
	if len(readers) > 1 {
		if y, sy, err = readers[1](i); err != nil {
			return nil, 0, err
		}
	}
	return NumericFunc(fn, x, y, sx, sy)
}

// scaledReaders reads fn's value arguments of args, each with its display scale: its type's,
// or the int32 column after the values.
func scaledReaders(fn string, args []arrow.Array) ([]func(int) (*apd.Decimal, int32, error), error) {
	want := numericFuncArgs[fn]
	out := make([]func(int) (*apd.Decimal, int32, error), want)
	for i, a := range args[:want] {
		r, err := scaledReader(a)
		if err != nil {
			return nil, err
		}
		out[i] = r
		if len(args) == 2*want {
			scales := args[want+i].(*array.Int32)
			out[i] = func(row int) (*apd.Decimal, int32, error) {
				v, _, err := r(row)
				return v, scales.Value(row), err
			}
		}
	}
	return out, nil
}

// numericFn is numeric_fn(fn, s, x[, y][, dsx[, dsy]]): NumericFunc's value held exactly in
// decimal128(38, s) (s at least the arguments' scales); a value with digits that are not
// zeros past s is ErrFuncScale, one of more than 38 digits 22003. NULL where an argument is.
func numericFn(n *fnNode) error {
	if len(n.enums) < 2 || len(n.types) < 3 {
		return errors.New("numeric_fn(fn, scale, args…)")
	}
	fn := n.enums[0]
	s64, err := strconv.ParseInt(n.enums[1], 10, 32)
	if err != nil || s64 < 0 || s64 > numericDigits {
		return errors.New("bad scale")
	}
	if err := numericFnArgs(fn, n.types[2:]); err != nil {
		return err
	}
	s := int32(s64)
	n.out = numericOut(s)
	n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
		readers, err := scaledReaders(fn, args[2:])
		if err != nil {
			return nil, err
		}
		return mapNumeric(mem, s, rows, args[2:], func(i int) (*apd.Decimal, error) {
			v, _, err := numericFnValues(fn, i, readers)
			if err != nil {
				return nil, err
			}
			var r apd.Decimal
			if _, err := numericCtx.Quantize(&r, v, -s); err != nil || r.Cmp(v) != 0 {
				return nil, ErrFuncScale
			}
			if r.NumDigits() > numericDigits {
				return nil, errNumericWide
			}
			return &r, nil
		})
	}
	return nil
}

// numericFnScale is numeric_fn_scale(fn, x[, y][, dsx[, dsy]]): the display scale (int32) of NumericFunc's
// value; NULL where an argument is. Arguments it refuses (a negative sqrt) are numeric_fn's
// errors, so it answers NULL for them.
func numericFnScale(n *fnNode) error {
	if len(n.enums) < 1 || len(n.types) < 2 {
		return errors.New("numeric_fn_scale(fn, args…)")
	}
	fn := n.enums[0]
	if err := numericFnArgs(fn, n.types[1:]); err != nil {
		return err
	}
	n.out = arrow.PrimitiveTypes.Int32
	n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
		readers, err := scaledReaders(fn, args[1:])
		if err != nil {
			return nil, err
		}
		return mapRows[int32](array.NewInt32Builder(mem), rows, args[1:], func(i int) (int32, bool, error) {
			_, s, err := numericFnValues(fn, i, readers)
			return s, err == nil, nil
		})
	}
	return nil
}

// powerScale is numeric_power's result scale of x ^ y (display scales sx and sy) in
// PostgreSQL 15, its exact value set into exact: for an integer exponent in int32's range
// (power_var_int) 16 digits after the point or x's display scale; for others (power_var)
// estimated from ln(|x|) · y at about 8 significant digits, rounded as PostgreSQL rounds
// that low-precision step, and at least either display scale; 0 ^ y (y not an integer) is 0
// at scale 16.
func powerScale(x, y *apd.Decimal, sx, sy int32, exact *apd.Decimal) (int32, error) {
	const minSig = 16 // NUMERIC_MIN_SIG_DIGITS
	if x.IsZero() && y.Sign() < 0 {
		return 0, &DataError{Code: "2201F", Msg: "zero raised to a negative power is undefined"}
	}
	var frac apd.Decimal
	if _, err := numericCtx.Rem(&frac, y, apd.New(1, 0)); err != nil {
		return 0, err
	}
	e64, intErr := y.Int64()
	if frac.IsZero() && intErr == nil && e64 >= math.MinInt32 && e64 <= math.MaxInt32 {
		rscale := clampScale(minSig, sx)
		if e64 == 0 {
			exact.SetInt64(1) // 0 ^ 0 too, as PostgreSQL (SQL:2003)
			return rscale, nil
		}
		if _, err := numericCtx.Pow(exact, x, y); err != nil {
			return 0, errNumericWide
		}
		return rscale, nil
	}
	if x.IsZero() {
		exact.SetInt64(0)
		return minSig, nil
	}
	if x.Negative && !frac.IsZero() {
		return 0, &DataError{Code: "2201F", Msg: "a negative number raised to a non-integer power yields a complex result"}
	}
	abs := new(apd.Decimal).Abs(x)
	lnDweight := estimateLnDweight(abs)
	local := int32(max(8-lnDweight, 0))
	half := numericCtx
	half.Rounding = apd.RoundHalfUp
	var lnb, lnn apd.Decimal
	if _, err := numericCtx.Ln(&lnb, abs); err != nil {
		return 0, err
	}
	_, _ = half.Quantize(&lnb, &lnb, -local)
	_, _ = numericCtx.Mul(&lnn, &lnb, y)
	_, _ = half.Quantize(&lnn, &lnn, -local)
	val, err := lnn.Float64()
	if err != nil || math.Abs(val) > 2000*3.01 || val*0.434294481903252 > numericDigits {
		return 0, errNumericWide
	}
	rscale := clampScale(minSig-int64(val*0.434294481903252), sx, sy)
	// e ^ (y · ln|x|), negative for a negative x to an odd power.
	var ln, prod apd.Decimal
	if _, err := numericCtx.Ln(&ln, abs); err != nil {
		return 0, err
	}
	_, _ = numericCtx.Mul(&prod, &ln, y)
	if _, err := numericCtx.Exp(exact, &prod); err != nil {
		return 0, errNumericWide
	}
	return rscale, nil
}
