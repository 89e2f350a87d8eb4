package substrait

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"math/big"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/cockroachdb/apd/v3"
	"github.com/flightsrv/flightsrv/internal/pgnumfmt"
	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/types"
)

// PostgreSQL's numeric, bound to the kernels of scan/ops/numeric.go (URNPostgres numeric_*).
//
// A numeric value is Substrait's decimal<38, s> (Arrow decimal128(38, s)): s is PostgreSQL's
// display scale of every value of the expression, known when binding for
//   - decimal literals (1.50 has scale 2, 1e2 scale 0), as numeric_in reads them;
//   - integers made numeric (scale 0), implicitly beside a numeric or by ::numeric;
//   - casts to numeric(p,s) or decimal(p,s) of numbers, text and numerics (rounded half away
//     from zero, "numeric field overflow" past p digits);
//   - round(x, n) and trunc(x, n) with a constant n (scale max(n, 0)), ceil, floor, round(x),
//     trunc(x) (scale 0), abs and unary minus (x's scale);
//   - a + b, a - b (scale max(sa, sb)) and a * b (sa + sb).
//
// A cast of text or double precision to numeric without a scale gives values whose display
// scales differ from row to row, which one decimal column cannot show: it is accepted where
// the next step fixes the scale (round(x::numeric, n), trunc(x::numeric, n)) and refused by
// name elsewhere. Division and % of numerics (PostgreSQL chooses the quotient's scale from
// the operands' values), numeric aggregates, and the other mathematical functions of numeric
// are refused by name (UNIMPLEMENTED), never computed in double precision.

// numType is the numeric type of scale s.
func numType(s int32) types.Type {
	return &types.DecimalType{Precision: 38, Scale: s, Nullability: nullableN}
}

// numScale returns the scale of a numeric type, ok false for another type.
func numScale(t types.Type) (int32, bool) {
	d, ok := t.(*types.DecimalType)
	if !ok {
		return 0, false
	}
	return d.Scale, true
}

// numericSyntax is numeric_in's syntax of a finite number (after spaces are trimmed).
var numericSyntax = regexp.MustCompile(`^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$`)

// parseNumericText reads s as numeric_in does: its value and display scale. Spaces around it
// are isspace's six ASCII ones (a no-break space is not one). NaN and infinity, which
// PostgreSQL's numeric holds and decimal128 cannot, are refused by name; anything else that
// is not a number is 22P02 (numeric_in reads no sign before NaN).
func parseNumericText(s string) (*apd.Decimal, int32, error) {
	t := trimPGSpace(s)
	if strings.EqualFold(t, "nan") {
		return nil, 0, unimplemented("numeric NaN")
	}
	if numericInfText(s) {
		return nil, 0, unimplemented("numeric infinity")
	}
	ok := numericSyntax.MatchString(t)
	d, _, err := apd.NewFromString(t)
	if !ok || err != nil || d.Form != apd.Finite {
		return nil, 0, &Error{Code: InvalidArgument, SQLState: "22P02", Msg: "invalid input syntax for type numeric"}
	}
	if !d.IsZero() && (d.NumDigits()+int64(d.Exponent) > 39 || d.Exponent < -1000) {
		return nil, 0, &Error{Code: InvalidArgument, SQLState: "22003", Msg: "numeric value out of range: flightsrv's numeric holds 38 digits"}
	}
	return d, max(-d.Exponent, 0), nil
}

// numericInfText reports whether s is numeric_in's spelling of an infinity (inf or infinity,
// any case, an optional sign, spaces around).
func numericInfText(s string) bool {
	t := trimPGSpace(s)
	switch strings.ToLower(strings.TrimLeft(t, "+-")) {
	case "inf", "infinity":
		return len(t) <= len(strings.TrimLeft(t, "+-"))+1
	}
	return false
}

// trimPGSpace trims numeric_in's spaces around s: isspace's six ASCII ones (space, \t, \n,
// \v, \f, \r), not Unicode's others.
func trimPGSpace(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return r == ' ' || (r >= '\t' && r <= '\r') })
}

// numLiteral is the numeric literal of d rounded half away from zero to scale s. prec > 0 is
// numeric(p,s)'s p: a value with p - s or more integer digits is numeric field overflow.
func numLiteral(d *apd.Decimal, s int32, prec int32, round apd.Rounder) (expr.Expression, error) {
	ctx := apd.BaseContext.WithPrecision(100)
	ctx.Rounding = round
	var q apd.Decimal
	if _, err := ctx.Quantize(&q, d, -s); err != nil || q.NumDigits() > 38 {
		return nil, &Error{Code: InvalidArgument, SQLState: "22003", Msg: "numeric value out of range: flightsrv's numeric holds 38 digits"}
	}
	if prec > 0 && !q.IsZero() && q.NumDigits()+int64(q.Exponent) > int64(prec-s) {
		return nil, &Error{Code: InvalidArgument, SQLState: "22003", Msg: "numeric field overflow"}
	}
	bi := q.Coeff.MathBigInt()
	if q.Negative {
		bi.Neg(bi)
	}
	n := decimal128.FromBigInt(bi)
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:8], n.LowBits())
	binary.LittleEndian.PutUint64(b[8:], uint64(n.HighBits()))
	return expr.NewLiteral[*types.Decimal](&types.Decimal{Value: b[:], Precision: 38, Scale: s}, false)
}

// numLiteralValue reads a numeric literal back, ok false for another expression.
func numLiteralValue(e expr.Expression) (*apd.Decimal, int32, bool) {
	l, ok := e.(*expr.ProtoLiteral)
	if !ok {
		return nil, 0, false
	}
	dt, ok := l.GetType().(*types.DecimalType)
	raw, okb := l.Value.([]byte)
	if !ok || !okb || len(raw) != 16 {
		return nil, 0, false
	}
	n := decimal128.New(int64(binary.LittleEndian.Uint64(raw[8:])), binary.LittleEndian.Uint64(raw[:8]))
	bi := n.BigInt()
	d := apd.NewWithBigInt(new(apd.BigInt).SetMathBigInt(new(big.Int).Abs(bi)), -dt.Scale)
	d.Negative = bi.Sign() < 0
	return d, dt.Scale, true
}

// decimalConstant is the numeric literal of a decimal constant's text (1.5, 1e2).
func decimalConstant(text string) (bval, error) {
	d, s, err := parseNumericText(text)
	if err != nil {
		return bval{}, err
	}
	e, err := numLiteral(d, s, 0, apd.RoundHalfUp)
	return typed(e), err
}

// numCast is numeric_cast(mode, places, precision, x): x (integer, double precision, text or
// numeric) rounded by mode to places digits.
func (bd *binder) numCast(mode string, places, prec int32, x expr.Expression) (expr.Expression, error) {
	return bd.fn(URNPostgres, "numeric_cast", numType(max(places, 0)),
		types.Enum(mode), types.Enum(strconv.Itoa(int(places))), types.Enum(strconv.Itoa(int(prec))), x)
}

// toNumeric makes v numeric for an operator beside a numeric: integers at scale 0, an untyped
// literal at its own scale, numerics unchanged. ok is false for other types (double
// precision, whose side wins in PostgreSQL's resolution).
func (bd *binder) toNumeric(v bval) (expr.Expression, bool, error) {
	switch {
	case v.str != nil:
		d, s, err := parseNumericText(*v.str)
		if err != nil {
			return nil, true, err
		}
		e, err := numLiteral(d, s, 0, apd.RoundHalfUp)
		return e, true, err
	case v.null:
		return expr.NewNullLiteral(numType(0)), true, nil
	case v.param > 0:
		// An untyped parameter beside a numeric is numeric (PostgreSQL's unknown-type
		// resolution); callers that follow display scales bind it first (numericParam).
		p, err := bd.numericParam(v.param, 0, 0, false)
		return p.e, true, err
	}
	switch familyOf(v.typ()) {
	case famNumeric:
		return v.e, true, nil
	case famInt:
		if l, ok := IntLiteral(v.e); ok && v.e.GetType().GetNullability() != types.NullabilityNullable {
			// A constant folds; a parameter's value (a nullable literal) is cast at run time,
			// as its placeholder was at prepare time, so that the types (nullability included)
			// are the same for every binding.
			e, err := numLiteral(apd.New(l, 0), 0, 0, apd.RoundHalfUp)
			return e, true, err
		}
		e, err := bd.numCast("ROUND", 0, 0, v.e)
		return e, true, err
	}
	return nil, false, nil
}

// IntLiteral returns the value of a non-null integer literal (i8, i16, i32 or i64) and
// whether e is one.
func IntLiteral(e expr.Expression) (int64, bool) {
	switch l := e.(type) {
	case *expr.PrimitiveLiteral[int8]:
		return int64(l.Value), true
	case *expr.PrimitiveLiteral[int16]:
		return int64(l.Value), true
	case *expr.PrimitiveLiteral[int32]:
		return int64(l.Value), true
	case *expr.PrimitiveLiteral[int64]:
		return l.Value, true
	}
	return 0, false
}

// numericToFloat is the implicit cast numeric → double precision (a numeric beside a float):
// a literal folds to the nearest double, as strtod reads numeric_out's text.
func (bd *binder) numericToFloat(e expr.Expression) (expr.Expression, error) {
	return bd.numericToFloatType(e, fp64Type())
}

// numericToFloatType is the cast numeric → t, double precision or real (PostgreSQL's
// numeric_float8 and numeric_float4: the nearest value of the type to the numeric's text, read
// once, never through the other type): a constant folded, anything else numeric_to's.
func (bd *binder) numericToFloatType(e expr.Expression, t types.Type) (expr.Expression, error) {
	kind := "float64"
	if _, real := t.(*types.Float32Type); real {
		kind = "float32"
	}
	if d, _, ok := numLiteralValue(e); ok {
		return floatOfDecimalText(d.Text('f'), t)
	}
	return bd.fn(URNPostgres, "numeric_to", t.WithNullability(nullableN), types.Enum(kind), e)
}

// floatOfDecimalText is the constant of type t, double precision or real, that float8in or
// float4in reads from text, a numeric constant's digits: past the type's range, or not zero but
// read as zero (1e-50::real), is 22003.
func floatOfDecimalText(text string, t types.Type) (expr.Expression, error) {
	f, err := pgnumfmt.FloatIn(text, floatBits(t))
	if err != nil {
		return nil, floatInError(err, "22003", "value out of range for type "+typeName(t))
	}
	if f == 0 {
		f = 0 // a numeric has no negative zero: (-0.0)::float8 is 0
	}
	return floatConstant(f, t, false), nil
}

// floatBits is pgnumfmt.FloatIn's size of t, real (32) or double precision (64).
func floatBits(t types.Type) int {
	if isReal(t) {
		return 32
	}
	return 64
}

// floatConstant is f as a literal of t, real or double precision.
func floatConstant(f float64, t types.Type, nullable bool) expr.Expression {
	if isReal(t) {
		return expr.NewPrimitiveLiteral(float32(f), nullable)
	}
	return expr.NewPrimitiveLiteral(f, nullable)
}

// floatInError is pgnumfmt.FloatIn's error err as a refusal: its SQLSTATE and message, or
// code and msg for an error of another kind.
func floatInError(err error, code, msg string) *Error {
	e := &pgnumfmt.Error{Code: code, Msg: msg}
	errors.As(err, &e)
	return &Error{Code: InvalidArgument, SQLState: e.Code, Msg: e.Msg}
}

// involvesNumeric reports whether a binary operator's operands resolve to numeric: one is
// numeric and the other an integer, a numeric or untyped — an untyped parameter too, which
// PostgreSQL resolves to numeric beside one (its unknown-type resolution: numericParam).
func involvesNumeric(l, r bval) bool {
	lf, rf := famOther, famOther
	if !l.untyped() {
		lf = familyOf(l.typ())
	}
	if !r.untyped() {
		rf = familyOf(r.typ())
	}
	if lf != famNumeric && rf != famNumeric {
		return false
	}
	ok := func(f family, v bval) bool { return f == famNumeric || f == famInt || v.untyped() }
	return ok(lf, l) && ok(rf, r)
}

// minProductIntDigits is the fewest digits before the point a product of numerics whose
// display scales vary keeps at sa + sb digits after it; past that it is held at max(sa, sb)
// (numericBinary's multiply_exact).
const minProductIntDigits = 7

// numericDigits is the precision of flightsrv's numeric: decimal128's 38 digits.
const numericDigits = 38

// numericOperands reads the two operands of a numeric operator or function: l and r's
// parameters typed beside each other (numericParams, which updates them), then both as
// numeric expressions (toNumeric).
func (bd *binder) numericOperands(l, r *bval) (x, y expr.Expression, err error) {
	if err := bd.numericParams(l, r); err != nil {
		return nil, nil, err
	}
	if x, _, err = bd.toNumeric(*l); err != nil {
		return nil, nil, err
	}
	if y, _, err = bd.toNumeric(*r); err != nil {
		return nil, nil, err
	}
	return x, y, nil
}

// numericBinary binds an arithmetic or comparison operator over numerics (involvesNumeric).
func (bd *binder) numericBinary(op string, l, r bval) (bval, error) {
	x, y, err := bd.numericOperands(&l, &r)
	if err != nil {
		return bval{}, err
	}
	sx, _ := numScale(x.GetType())
	sy, _ := numScale(y.GetType())
	if name, ok := comparisons[op]; ok {
		f, err := bd.fn(URNPostgres, "numeric_cmp", booleanType(), types.Enum(name), x, y)
		return typed(f), err
	}
	var s int32
	kernel := cmp.Or(arithmetic[op], "modulus")
	switch op {
	case "+", "-":
		s = max(sx, sy)
	case "*":
		s = sx + sy
		if (l.ds != nil || r.ds != nil) && s > numericDigits-minProductIntDigits {
			// Values whose display scales vary are held at a scale larger than their digits
			// (rawNumericScale, an average's): their product at sx + sy would keep too few
			// digits before the point (1000 * 1000 of text cast to numeric), so it is held
			// exactly at the larger of the two, a product needing more refused at run time.
			s, kernel = max(sx, sy), "multiply_exact"
		}
	case "%":
		// PostgreSQL's mod_var: a - trunc(a / b) * b, at the larger of the two scales.
		s = max(sx, sy)
	case "/":
		return bd.numericDivide(l, r, x, y, sx, sy)
	default:
		return bval{}, errorf(InvalidArgument, "operator does not exist: numeric %s numeric", op)
	}
	if s > 38 {
		return bval{}, unimplemented("a numeric product of more than 38 digits after the point")
	}
	f, err := bd.fn(URNPostgres, "numeric_arith", numType(s), types.Enum(kernel), x, y)
	// The display scale: add_var's and mod_var's max(sa, sb), mul_var's sa + sb (dscale.go).
	lx, ry := typed(x), typed(y)
	lx.ds, ry.ds = l.ds, r.ds
	out := typed(f)
	out.ds = bd.combineScale(map[string]string{"+": "max", "-": "max", "%": "max", "*": "add"}[op], lx, ry)
	return out, err
}

// numericNegate is unary minus of a numeric.
func (bd *binder) numericNegate(e expr.Expression) (bval, error) {
	if d, s, ok := numLiteralValue(e); ok {
		d.Neg(d)
		n, err := numLiteral(d, s, 0, apd.RoundHalfUp)
		return typed(n), err
	}
	f, err := bd.fn(URNPostgres, "numeric_neg", e.GetType().WithNullability(nullableN), e)
	return typed(f), err
}

// numericTarget reads a cast's target when it is numeric or decimal: its scale and precision
// (0, 0 unconstrained), and ok.
func numericTarget(tn *pg.TypeName) (scale, prec int32, constrained, ok bool, err error) {
	if tn == nil || len(tn.GetArrayBounds()) > 0 || tn.GetSetof() || tn.GetPctType() {
		return 0, 0, false, false, nil
	}
	names := tn.GetNames()
	if len(names) == 2 && names[0].GetString_().GetSval() == "pg_catalog" {
		names = names[1:]
	}
	if len(names) != 1 {
		return 0, 0, false, false, nil
	}
	if n := names[0].GetString_().GetSval(); n != "numeric" && n != "decimal" {
		return 0, 0, false, false, nil
	}
	mods := tn.GetTypmods()
	if len(mods) == 0 {
		return 0, 0, false, true, nil
	}
	if len(mods) > 2 {
		return 0, 0, false, true, errorf(InvalidArgument, "invalid NUMERIC type modifier")
	}
	vals := make([]int64, len(mods))
	for i, m := range mods {
		c := m.GetAConst()
		if c == nil || c.GetIval() == nil {
			return 0, 0, false, true, errorf(InvalidArgument, "type modifiers must be simple constants or identifiers")
		}
		vals[i] = int64(c.GetIval().GetIval())
	}
	p := vals[0]
	var s int64
	if len(vals) == 2 {
		s = vals[1]
	}
	if p < 1 || p > 1000 {
		return 0, 0, false, true, errorf(InvalidArgument, "NUMERIC precision %d must be between 1 and 1000", p)
	}
	if s < -1000 || s > 1000 {
		return 0, 0, false, true, errorf(InvalidArgument, "NUMERIC scale %d must be between -1000 and 1000", s)
	}
	if p > 38 || s < 0 || s > 38 {
		// A scale past the precision (PostgreSQL 15: numeric(4,5) holds values below 0.1 in
		// magnitude) answers; a negative one is refused.
		return 0, 0, false, true, unimplemented(fmt.Sprintf("numeric(%d,%d) (flightsrv's numeric holds 38 digits, a scale from 0 to 38)", p, s))
	}
	return int32(s), int32(p), true, true, nil
}

// numericTypeCast binds a cast to numeric or numeric(p,s) (ok false for other targets).
func (bd *binder) numericTypeCast(tc *pg.TypeCast, sc *scope) (bval, bool, error) {
	s, p, constrained, ok, err := numericTarget(tc.GetTypeName())
	if !ok || err != nil {
		return bval{}, ok, err
	}
	v, err := bd.numericTypeCastTo(tc, sc, s, p, constrained)
	if constrained {
		v.typmod = fmt.Sprintf("numeric(%d,%d)", p, s) // bval.typmod
	}
	return v, true, err
}

// numericTypeCastTo binds tc, a cast to numeric(p,s) (constrained) or numeric.
func (bd *binder) numericTypeCastTo(tc *pg.TypeCast, sc *scope, s, p int32, constrained bool) (bval, error) {
	if constrained {
		if l, r, raw, isDiv, err := bd.division(tc.GetArg(), sc); err != nil {
			return bval{}, err
		} else if isDiv {
			if numericQuotientOf(l, r, raw) {
				// (a / b)::numeric(p,s): the quotient at PostgreSQL's scale, rounded to s.
				e, err := bd.numericQuotient("ROUND", s, p, l, r, raw)
				return typed(e), err
			}
			v, err := bd.binary("/", l, r)
			if err != nil {
				return bval{}, err
			}
			out, err := bd.castToNumeric(v, s, p, constrained)
			return out, err
		}
	}
	v, err := bd.bindExpr(tc.GetArg(), sc)
	if err != nil {
		return bval{}, err
	}
	if c := tc.GetArg().GetAConst(); c != nil && c.GetFval() != nil {
		// A decimal constant is numeric already: no float detour.
		if v, err = decimalConstant(c.GetFval().GetFval()); err != nil {
			return bval{}, err
		}
	}
	out, err := bd.castToNumeric(v, s, p, constrained)
	return out, err
}

// castToNumeric casts v to numeric(p,s) (constrained) or numeric.
func (bd *binder) castToNumeric(v bval, s, p int32, constrained bool) (bval, error) {
	if v.null {
		return typed(expr.NewNullLiteral(numType(s))), nil
	}
	if v.param > 0 {
		return bd.numericParam(v.param, s, p, constrained)
	}
	if isJSONDoc(v) {
		var err error
		if v, err = bd.jsonbNumber(v); err != nil {
			return bval{}, err
		}
	}
	if v.str != nil {
		if constrained && numericInfText(*v.str) {
			// PostgreSQL's apply_typmod: numeric(p,s) "cannot hold an infinite value".
			return bval{}, &Error{Code: InvalidArgument, SQLState: "22003", Msg: "numeric field overflow"}
		}
		d, ds, err := parseNumericText(*v.str)
		if err != nil {
			return bval{}, err
		}
		if !constrained {
			s = ds
		}
		e, err := numLiteral(d, s, p, apd.RoundHalfUp)
		return typed(e), err
	}
	have := v.typ()
	fam := familyOf(have)
	if d, ds, ok := numLiteralValue(v.e); ok {
		if !constrained {
			s = ds
		}
		e, err := numLiteral(d, s, p, apd.RoundHalfUp)
		return typed(e), err
	}
	switch fam {
	case famNumeric:
		if !constrained {
			return v, nil
		}
	case famInt:
	case famFloat, famString:
		if !constrained {
			return bd.varyingNumeric(v.e)
		}
	default:
		return bval{}, errorf(InvalidArgument, "cannot cast type %s to numeric", typeName(have))
	}
	e, err := bd.numCast("ROUND", s, p, v.e)
	return typed(e), err
}

// varyingNumeric is x (text or double precision) cast to numeric without a scale: numeric_in
// (float8_numeric, float4_numeric) keeps each value's own display scale ('1.50' shows 1.50, '2'
// shows 2 in one column). The values are held exactly at rawNumericScale (numeric_exact: a value
// with digits that are not zeros past it, or with more than 38 digits, is refused at run time,
// never rounded; text that is no number is 22P02) and each row's display scale travels beside
// them (numeric_value_scale, dscale.go), so that + - *, sum, avg, CASE and the text follow
// PostgreSQL's display scales.
func (bd *binder) varyingNumeric(x expr.Expression) (bval, error) {
	f, err := bd.fn(URNPostgres, "numeric_exact", numType(rawNumericScale), types.Enum(strconv.Itoa(rawNumericScale)), x)
	if err != nil {
		return bval{}, err
	}
	out := typed(f)
	out.ds = onceScale(func() (expr.Expression, error) {
		return bd.fn(URNPostgres, "numeric_value_scale", i32Type(), x)
	})
	return out, nil
}

// castFromNumeric casts a numeric to another type: integers (rounded half away from zero),
// double precision, text (PostgreSQL's text form); ok false for other targets.
func (bd *binder) castFromNumeric(e expr.Expression, t types.Type) (bval, bool, error) {
	kind := ""
	switch t.(type) {
	case *types.Int16Type:
		kind = "int16"
	case *types.Int32Type:
		kind = "int32"
	case *types.Int64Type:
		kind = "int64"
	case *types.Float64Type:
		kind = "float64"
	case *types.Float32Type:
		kind = "float32"
	case *types.StringType:
		kind = "text"
	case *types.DecimalType:
		s, _ := numScale(t)
		c, err := bd.numCast("ROUND", s, 0, e)
		return typed(c), true, err
	default:
		return bval{}, false, nil
	}
	if d, s, ok := numLiteralValue(e); ok {
		switch kind {
		case "text":
			return typed(expr.NewPrimitiveLiteral(numText(d, s), false)), true, nil
		case "float64", "float32":
			f, err := bd.numericToFloatType(e, t)
			return typed(f), true, err
		}
		lit, _, err := decimalToInteger(d.Text('f'), t)
		if lit != nil || err != nil {
			return typed(lit), true, err
		}
	}
	f, err := bd.fn(URNPostgres, "numeric_to", t.WithNullability(nullableN), types.Enum(kind), e)
	return typed(f), true, err
}

// numText is numeric_out's text of d at scale s.
func numText(d *apd.Decimal, s int32) string {
	var q apd.Decimal
	if _, err := apd.BaseContext.WithPrecision(100).Quantize(&q, d, -s); err != nil {
		return d.Text('f')
	}
	if q.IsZero() {
		q.Negative = false
	}
	return q.Text('f')
}

// roundModes maps round, trunc, ceil and floor to numeric_cast's modes.
var numericRoundModes = map[string]string{"round": "ROUND", "trunc": "TRUNC", "ceil": "CEIL", "ceiling": "CEIL", "floor": "FLOOR"}

// numericRoundCall binds round(x::numeric, n) and trunc(x::numeric, n) before their
// arguments are bound, when x is cast to numeric without a scale: the cast and the rounding
// are one numeric_cast, whose scale n is fixed (PostgreSQL's scale of the result). ok is
// false when the first argument is not such a cast.
func (bd *binder) numericRoundCall(name string, raw []*pg.Node, sc *scope, first **bval) (bval, bool, error) {
	v, ok, err := bd.numericRoundCast(name, raw, sc, first)
	if ok && err == nil {
		v, err = bd.placesParamResult(name, raw, v)
	}
	return v, ok, err
}

// numericRoundCast is numericRoundCall without placesParamResult.
func (bd *binder) numericRoundCast(name string, raw []*pg.Node, sc *scope, first **bval) (bval, bool, error) {
	if len(raw) == 0 || len(raw) > 2 {
		return bval{}, false, nil
	}
	if l, r, rawArgs, ok, err := bd.division(raw[0], sc); ok || err != nil {
		if err != nil {
			return bval{}, true, err
		}
		if !numericQuotientOf(l, r, rawArgs) {
			v, err := bd.binary("/", l, r)
			if err != nil {
				return bval{}, true, err
			}
			*first = &v
			return bval{}, false, nil
		}
		places, err := bd.numericPlaces(name, raw)
		if err != nil {
			return bval{}, true, err
		}
		if len(raw) == 2 && name != "round" && name != "trunc" {
			return bval{}, true, errorf(InvalidArgument, "%s takes 1 argument(s)", name)
		}
		e, err := bd.numericQuotient(numericRoundModes[name], places, 0, l, r, rawArgs)
		return typed(e), true, err
	}
	if name != "round" && name != "trunc" {
		return bval{}, false, nil
	}
	tc := raw[0].GetTypeCast()
	if tc == nil {
		return bval{}, false, nil
	}
	if _, _, constrained, ok, err := numericTarget(tc.GetTypeName()); !ok || constrained || err != nil {
		return bval{}, false, nil
	}
	if c := tc.GetArg().GetAConst(); c != nil {
		return bval{}, false, nil // a constant: the usual path folds it
	}
	inner, err := bd.bindExpr(tc.GetArg(), sc)
	if err != nil {
		return bval{}, true, err
	}
	places, err := bd.numericPlaces(name, raw)
	if err != nil {
		return bval{}, true, err
	}
	x := inner
	if !inner.untyped() {
		switch familyOf(inner.typ()) {
		case famFloat, famString:
			e, err := bd.numCast(numericRoundModes[name], places, 0, inner.e)
			return typed(e), true, err
		}
	}
	if x, err = bd.castToNumeric(inner, 0, 0, false); err != nil {
		return bval{}, true, err
	}
	return bd.numericRound(name, x.e, places)
}

// numericPlaces reads round's or trunc's second argument, a constant integer (0 when absent).
func (bd *binder) numericPlaces(name string, raw []*pg.Node) (int32, error) {
	if len(raw) < 2 {
		return 0, nil
	}
	n := raw[1]
	neg := false
	if a := n.GetAExpr(); a != nil && a.GetLexpr() == nil && len(a.GetName()) == 1 && a.GetName()[0].GetString_().GetSval() == "-" {
		neg, n = true, a.GetRexpr()
	}
	if paramPlaces(raw) {
		places, _, err := bd.placesParam(name, raw[1])
		return places, err
	}
	c := n.GetAConst()
	if c == nil || c.GetIval() == nil {
		return 0, refused(Unimplemented, "0A000", "%s(numeric, n) with n other than an integer constant or a parameter is not supported", name)
	}
	v := int64(c.GetIval().GetIval())
	if neg {
		v = -v
	}
	if v > 38 || v < -38 {
		return 0, refused(Unimplemented, "0A000", "%s(numeric, n) with |n| over 38 is not supported", name)
	}
	return int32(v), nil
}

// paramPlaces reports whether round's or trunc's second argument holds a parameter and no
// column: `round(x, ?)`, `round(avg(x), ?::integer)`, constant for each execution.
func paramPlaces(raw []*pg.Node) bool {
	return len(raw) == 2 && hasParamRef(raw[1]) && !hasNode(raw[1], func(x *pg.Node) bool { return x.GetColumnRef() != nil })
}

// placesParam reads round's or trunc's second argument n holding a parameter, an integer as
// in PostgreSQL's round(numeric, integer) (an untyped parameter is typed integer): its value
// when the statement is bound (null when it is NULL), 0 at prepare time. A value over
// rawNumericScale, the scale the result is held at (placesParamResult), is refused by name, as
// is one under -38.
func (bd *binder) placesParam(name string, n *pg.Node) (places int32, null bool, err error) {
	v, err := bd.bindExpr(n, &scope{})
	if err != nil {
		return 0, false, err
	}
	if !v.untyped() && familyOf(v.typ()) == famInt && !sameType(v.typ(), i32Type()) {
		// A bigint (a parameter an int64 bound declares so) or a smallint: PostgreSQL has no
		// round(numeric, bigint) (smallint would be promoted, bigint is not demoted).
		if _, small := v.typ().(*types.Int16Type); !small {
			return 0, false, &Error{Code: InvalidArgument, SQLState: "42883", Msg: fmt.Sprintf("function %s(numeric, %s) does not exist", name, typeName(v.typ()))}
		}
	}
	e, err := bd.coerce(v, i32Type(), "")
	if err != nil {
		return 0, false, err
	}
	if v.param > 0 && v.untyped() {
		bd.ps.noteInt4Arg(v.param) // round(numeric, integer)
	}
	if bd.ps.vals == nil {
		return 0, false, nil
	}
	x, null, ok, err := oneValue[int32, *array.Int32](bd, e)
	switch {
	case err != nil:
		return 0, false, err
	case !ok:
		return 0, false, refused(Unimplemented, "0A000", "%s(numeric, n) with n other than an integer constant or a parameter is not supported", name)
	case null:
		return 0, true, nil
	}
	switch {
	case x > rawNumericScale:
		return 0, false, refused(Unimplemented, "0A000", "%s(numeric, n) with a parameter n over %d is not supported", name, rawNumericScale)
	case x < -38:
		return 0, false, refused(Unimplemented, "0A000", "%s(numeric, n) with |n| over 38 is not supported", name)
	}
	return x, false, nil
}

// placesParamResult is v, round's or trunc's result, when its second argument n holds a
// parameter (paramPlaces; v unchanged otherwise): the result's type cannot follow n's value
// (PostgreSQL's result is numeric at scale max(n, 0); the statement's schema is the same for
// every binding), so the values are held at rawNumericScale, exactly, with the display scale
// max(n, 0) beside them (dscale.go), which the text and the operators read as PostgreSQL's
// scale; NULL when n is bound NULL, as round is strict.
func (bd *binder) placesParamResult(name string, raw []*pg.Node, v bval) (bval, error) {
	if !paramPlaces(raw) {
		return v, nil
	}
	places, null, err := bd.placesParam(name, raw[1])
	if err != nil {
		return bval{}, err
	}
	if null {
		v = typed(expr.NewNullLiteral(numType(rawNumericScale)))
	} else {
		e, err := bd.numCast("ROUND", rawNumericScale, 0, v.e)
		if err != nil {
			return bval{}, err
		}
		v = typed(e)
	}
	ds := expr.NewPrimitiveLiteral(max(places, 0), false)
	v.ds = func() (expr.Expression, error) { return ds, nil }
	return v, nil
}

// numericRound is round, trunc, ceil or floor of the numeric e to places digits.
func (bd *binder) numericRound(name string, e expr.Expression, places int32) (bval, bool, error) {
	mode := numericRoundModes[name]
	if d, _, ok := numLiteralValue(e); ok {
		r := map[string]apd.Rounder{"ROUND": apd.RoundHalfUp, "TRUNC": apd.RoundDown, "CEIL": apd.RoundCeiling, "FLOOR": apd.RoundFloor}[mode]
		ctx := apd.BaseContext.WithPrecision(100)
		ctx.Rounding = r
		var q apd.Decimal
		if err := pgnumfmt.Quantize(ctx, &q, d, -places); err != nil {
			return bval{}, true, err
		}
		l, err := numLiteral(&q, max(places, 0), 0, apd.RoundHalfUp)
		return typed(l), true, err
	}
	f, err := bd.numCast(mode, places, 0, e)
	return typed(f), true, err
}

// numericCall binds the functions PostgreSQL resolves to numeric when an argument is numeric
// (round, trunc, ceil, ceiling, floor, abs; round(integer, n) too) and refuses by name the
// ones flightsrv does not compute in numeric. ok is false when no argument is numeric.
func (bd *binder) numericCall(name string, raw []*pg.Node, args []bval) (bval, bool, error) {
	isNum := func(v bval) bool { return !v.untyped() && familyOf(v.typ()) == famNumeric }
	any := false
	for _, a := range args {
		any = any || isNum(a)
	}
	if (name == "round" || name == "trunc") && len(args) == 2 && (args[0].str != nil || args[0].param > 0 && args[0].untyped() || !args[0].untyped() && familyOf(args[0].typ()) == famInt) {
		// round(integer, n) is round(numeric, n), trunc(integer, n) trunc(numeric, n); an
		// untyped literal or parameter resolves to numeric, their only two-argument form.
		any = true
	}
	if (name == "power" || name == "pow") && slices.ContainsFunc(args, func(v bval) bool { return !v.untyped() && familyOf(v.typ()) == famFloat }) {
		// power(real or double precision, numeric) is power(double precision, double
		// precision): numeric → double precision is implicit, the other way is not
		// (mathFunc).
		any = false
	}
	if name == "log" && len(args) == 2 && !slices.ContainsFunc(args, func(v bval) bool { return !(v.str != nil || !v.untyped() && familyOf(v.typ()) == famInt) }) {
		any = true // log(b, x) is log(numeric, numeric), its only two-argument form
	}
	if !any || name == "concat" || name == "concat_ws" || name == "to_char" || name == "width_bucket" || name == "cbrt" || name == "get_byte" || name == "div" ||
		name == "make_timestamp" || name == "make_timestamptz" || name == "pg_typeof" {
		// concat and concat_ws write each argument as text (asText: numerics at their display
		// scale); to_char formats numbers itself, width_bucket and div resolve their forms
		// themselves (bindfunc.go, divhex.go); cbrt has only a double precision form (numeric
		// casts to it), get_byte none of numerics (42883, decode.go); make_timestamp's seconds
		// are double precision (numeric casts to it), pg_typeof names any type (maketime.go).
		return bval{}, false, nil
	}
	// An untyped parameter among the numeric arguments is numeric (round's, trunc's second
	// argument is an integer).
	numArgs := args[:min(len(args), 1)]
	if name == "log" || name == "power" || name == "pow" {
		numArgs = args
	}
	for i := range numArgs {
		if err := bd.numericParams(&numArgs[i]); err != nil {
			return bval{}, true, err
		}
	}
	switch name {
	case "scale":
		v, err := bd.numericScaleOf(args)
		return v, true, err
	case "round", "trunc", "ceil", "ceiling", "floor":
		if len(args) > 1 && name != "round" && name != "trunc" {
			return bval{}, true, errorf(InvalidArgument, "%s takes 1 argument(s)", name)
		}
		places, err := bd.numericPlaces(name, raw)
		if err != nil {
			return bval{}, true, err
		}
		x, _, err := bd.toNumeric(args[0])
		if err != nil {
			return bval{}, true, err
		}
		if x == nil {
			return bval{}, true, errorf(InvalidArgument, "function %s(%s, integer) does not exist", name, typeName(args[0].typ()))
		}
		v, _, err := bd.numericRound(name, x, places)
		if err == nil {
			v, err = bd.placesParamResult(name, raw, v)
		}
		return v, true, err
	case "abs":
		if len(args) != 1 {
			return bval{}, true, errorf(InvalidArgument, "abs takes 1 argument(s)")
		}
		if d, s, ok := numLiteralValue(args[0].e); ok {
			d.Abs(d)
			l, err := numLiteral(d, s, 0, apd.RoundHalfUp)
			return typed(l), true, err
		}
		f, err := bd.fn(URNPostgres, "numeric_abs", args[0].typ().WithNullability(nullableN), args[0].e)
		out := typed(f)
		out.ds = args[0].ds
		return out, true, err
	case "mod":
		// mod(a, b) of numerics is a % b (numeric_mod).
		if len(args) != 2 {
			return bval{}, true, errorf(InvalidArgument, "mod takes 2 argument(s)")
		}
		if !involvesNumeric(args[0], args[1]) {
			return bval{}, true, errorf(InvalidArgument, "function mod(%s, %s) does not exist", typeName(args[0].typ()), typeName(args[1].typ()))
		}
		v, err := bd.numericBinary("%", args[0], args[1])
		return v, true, err
	case "sqrt", "exp", "ln", "log", "sign", "power", "pow":
		if name == "pow" {
			name = "power"
		}
		v, err := bd.numericFunc(name, args)
		return v, true, err
	case "chr", "overlay":
		// No numeric form, and no implicit cast from numeric to their integer and text
		// parameters: PostgreSQL's 42883 (bindfunc.go's integerArgs).
		if err := integerArgs(map[string]string{"chr": "chr", "overlay": "pg_catalog.overlay"}[name], args, 0); err != nil {
			return bval{}, true, err
		}
	}
	return bval{}, true, refused(Unimplemented, "0A000", "%s of numeric values is not supported", name)
}

// numericFunc binds sqrt, exp, ln, sign of a numeric and log(x) = log(10, x), log(b, x) and
// power(x, y) (x ^ y) of numerics (integers made numeric) as PostgreSQL's numeric functions
// compute them
// (ops.NumericFunc): each value at the scale PostgreSQL chooses for it, held exactly in a
// decimal<38, max(20, s)> column (s the arguments' largest scale; a value needing more
// digits is refused at run time) with its display scale beside it (numeric_fn_scale), as a
// bare quotient (numericDivide). An argument whose display scale varies by row (sqrt(avg(x)),
// sqrt(variance(x))) passes every argument's display scale to the two kernels, as PostgreSQL's
// scale rules read them; one the binder cannot follow (lostScale) is refused by name.
func (bd *binder) numericFunc(name string, args []bval) (bval, error) {
	want := 1
	if name == "power" {
		want = 2
	}
	if name == "log" {
		want = 2
		if len(args) == 1 {
			args = []bval{typed(expr.NewPrimitiveLiteral(int32(10), false)), args[0]}
		}
	}
	if len(args) != want {
		return bval{}, errorf(InvalidArgument, "%s takes %d argument(s)", name, want)
	}
	vals := make([]types.FuncArg, len(args))
	s := int32(quotientScale)
	if name == "power" && integralValues(args[1]) {
		// An integer exponent: power_var_int's scale, 16 (or the base's display scale, at
		// most its type's), so that 10::numeric ^ 18 (19 digits before the point) fits 38.
		s = powerIntScale
	}
	var scales []types.FuncArg // each argument's display scale, when one varies by row
	if slices.ContainsFunc(args, func(v bval) bool { return v.ds != nil }) {
		for _, a := range args {
			ds, err := bd.scaleExpr(a)
			if err != nil {
				return bval{}, refused(Unimplemented, "0A000", "%s of %s is not supported: round it or cast it to numeric(p,s)", name, lostWhat(err))
			}
			scales = append(scales, ds)
		}
	}
	for i, a := range args {
		x, _, err := bd.toNumeric(a)
		if err != nil {
			return bval{}, err
		}
		if x == nil {
			// PostgreSQL names every argument's type (log(real, numeric)).
			names := make([]string, len(args))
			for j, b := range args {
				names[j] = argTypeName(b)
			}
			return bval{}, errorf(InvalidArgument, "function %s(%s) does not exist", name, strings.Join(names, ", "))
		}
		sx, _ := numScale(x.GetType())
		s = max(s, sx)
		vals[i] = x
	}
	if s > 38 {
		return bval{}, unimplemented("a numeric " + name + " of an argument with more than 38 digits after the point")
	}
	vals = append(vals, scales...)
	f, err := bd.fn(URNPostgres, "numeric_fn", numType(s), append([]types.FuncArg{types.Enum(name), types.Enum(strconv.Itoa(int(s)))}, vals...)...)
	if err != nil {
		return bval{}, err
	}
	out := typed(f)
	out.ds = onceScale(func() (expr.Expression, error) {
		return bd.fn(URNPostgres, "numeric_fn_scale", i32Type(), append([]types.FuncArg{types.Enum(name)}, vals...)...)
	})
	return out, nil
}

// powerIntScale is the scale of numeric power's value for an integer exponent: PostgreSQL 15's
// power_var_int computes it at NUMERIC_MIN_SIG_DIGITS (16) digits after the point, or the
// base's display scale when larger (ops.NumericFunc). An integer exponent beyond int32, which
// power_var takes, answers only for a base of 0, 1 or -1, at the same scale, or overflows.
const powerIntScale = 16

// integralValues reports whether every value of v is an integer by its type: an integer, or a
// numeric of scale 0 whose display scale does not vary by row.
func integralValues(v bval) bool {
	if v.untyped() {
		return false
	}
	if familyOf(v.typ()) == famInt {
		return true
	}
	s, ok := numScale(v.typ())
	return ok && s == 0 && v.ds == nil
}

// widerNumber is the type two numbers resolve to in PostgreSQL: double precision beside a
// float, numeric (the larger scale) beside a numeric, else the wider integer.
func widerNumber(a, b types.Type) types.Type {
	sa, na := numScale(a)
	sb, nb := numScale(b)
	if na && nb {
		return numType(max(sa, sb))
	}
	if numRank(b) > numRank(a) {
		return b
	}
	return a
}

// coerceNumeric gives an integer or numeric value the numeric type t, scaled up to t's scale
// (exact; a larger scale is kept out by widerNumber).
func (bd *binder) coerceNumeric(v bval, t types.Type) (expr.Expression, error) {
	s, _ := numScale(t)
	x, _, err := bd.toNumeric(v)
	if err != nil {
		return nil, err
	}
	if xs, _ := numScale(x.GetType()); xs == s {
		return x, nil
	} else if xs > s {
		return nil, errorf(InvalidArgument, "a numeric of scale %d must be %s", xs, typeName(t))
	}
	if d, _, ok := numLiteralValue(x); ok {
		return numLiteral(d, s, 0, apd.RoundHalfUp)
	}
	return bd.numCast("ROUND", s, 0, x)
}

// numericLiteralOfType reads an untyped literal as a numeric of t's scale; a literal with
// more digits after the point is refused rather than rounded (PostgreSQL keeps them).
func numericLiteralOfType(text string, t types.Type) (expr.Expression, error) {
	s, _ := numScale(t)
	d, ds, err := parseNumericText(text)
	if err != nil {
		return nil, err
	}
	if ds > s {
		return nil, unimplemented("a numeric constant with more digits after the point than the numeric beside it")
	}
	return numLiteral(d, s, 0, apd.RoundHalfUp)
}

// sameScales refuses values of one column (CASE, COALESCE, GREATEST/LEAST, UNION) that are
// numerics of different scales, integers counting as scale 0: PostgreSQL keeps each value's
// own scale (CASE … THEN 1.5 ELSE 2 END shows 2), which one decimal column cannot.
func sameScales(vs []bval, what string) error {
	scale := int32(-1)
	for _, v := range vs {
		if v.untyped() {
			continue
		}
		var s int32
		switch familyOf(v.typ()) {
		case famNumeric:
			s, _ = numScale(v.typ())
		case famInt:
		default:
			continue
		}
		if scale >= 0 && s != scale {
			return refused(Unimplemented, "0A000", "%s of numeric values of different scales is not supported (PostgreSQL keeps each value's scale; cast them to one numeric(p,s))", what)
		}
		scale = s
	}
	return nil
}

// division binds the operands of n when n is a / b (ok false, nothing bound, otherwise). An
// operand that is text or double precision cast to numeric without a scale (x::numeric, each
// value with its own display scale) is bound as x itself, its raw flag set: numeric_div
// reads such values with their scales (numericQuotient), which one decimal column could not
// hold. Where the quotient is not numeric_div's, the operand is cast as anywhere else (and
// refused by name).
func (bd *binder) division(n *pg.Node, sc *scope) (l, r bval, raw [2]bool, ok bool, err error) {
	a := n.GetAExpr()
	if a == nil || a.GetKind() != pg.A_Expr_Kind_AEXPR_OP || a.GetLexpr() == nil || len(a.GetName()) != 1 || a.GetName()[0].GetString_().GetSval() != "/" {
		return bval{}, bval{}, raw, false, nil
	}
	if l, raw[0], err = bd.divOperand(a.GetLexpr(), sc); err != nil {
		return bval{}, bval{}, raw, true, err
	}
	if r, raw[1], err = bd.divOperand(a.GetRexpr(), sc); err != nil {
		return bval{}, bval{}, raw, true, err
	}
	if !numericQuotientOf(l, r, raw) {
		// Not numeric_div's: the casts are bound (or refused) as anywhere else.
		for i, v := range []*bval{&l, &r} {
			if raw[i] {
				if *v, err = bd.castToNumeric(*v, 0, 0, false); err != nil {
					return bval{}, bval{}, raw, true, err
				}
				raw[i] = false
			}
		}
	}
	return l, r, raw, true, nil
}

// divOperand binds one operand of a division; raw is set when n is text or double precision
// cast to numeric without a scale, and the value is then that text or double precision.
func (bd *binder) divOperand(n *pg.Node, sc *scope) (bval, bool, error) {
	if tc := n.GetTypeCast(); tc != nil && tc.GetArg().GetAConst() == nil {
		if _, _, constrained, ok, err := numericTarget(tc.GetTypeName()); ok && !constrained && err == nil {
			inner, err := bd.bindExpr(tc.GetArg(), sc)
			if err != nil {
				return bval{}, false, err
			}
			if !inner.untyped() {
				if f := familyOf(inner.typ()); f == famString || f == famFloat {
					return inner, true, nil
				}
			}
			if inner.param > 0 && inner.untyped() {
				v, err := bd.numericParamRaw(inner.param, 0, 0, false)
				return v, true, err
			}
			v, err := bd.castToNumeric(inner, 0, 0, false)
			return v, false, err
		}
	}
	v, err := bd.bindExpr(n, sc)
	return v, false, err
}

// numericQuotientOf reports whether l / r is a numeric quotient (involvesNumeric), a raw
// operand (division) counting as numeric.
func numericQuotientOf(l, r bval, raw [2]bool) bool {
	for i, v := range []*bval{&l, &r} {
		if raw[i] {
			*v = typed(expr.NewNullLiteral(numType(0)))
		}
	}
	return involvesNumeric(l, r)
}

// numericQuotient is numeric_div: PostgreSQL's l / r of numerics (involvesNumeric), at the
// scale PostgreSQL chooses from the values, rounded by mode to places digits and checked
// against precision p (0: none). One decimal column holds that exactly; the bare quotient,
// whose scale varies by row, is refused (numericBinary). An operand whose raw flag is set
// (division) is passed as the text or double precision it is, each value read with its own
// display scale.
func (bd *binder) numericQuotient(mode string, places, p int32, l, r bval, raw [2]bool) (expr.Expression, error) {
	ops := make([]expr.Expression, 2)
	for i, v := range []bval{l, r} {
		if raw[i] {
			ops[i] = v.e
			continue
		}
		var err error
		if ops[i], _, err = bd.toNumeric(v); err != nil {
			return nil, err
		}
	}
	x, y := ops[0], ops[1]
	return bd.fn(URNPostgres, "numeric_div", numType(max(places, 0)), types.Enum(mode),
		types.Enum(strconv.Itoa(int(places))), types.Enum(strconv.Itoa(int(p))), x, y)
}

// numericScaleOf binds scale(x), PostgreSQL's numeric_scale: the display scale of each value
// of x (an integer or an untyped constant made numeric; NULL of NULL), its ds where it varies
// by row (avg, a quotient), else its type's; one the binder cannot follow is refused by name.
// Another type has no scale (42883: double precision does not cast to numeric implicitly).
func (bd *binder) numericScaleOf(args []bval) (bval, error) {
	if len(args) != 1 {
		return bval{}, noSuchFunction("scale", args)
	}
	x, _, err := bd.toNumeric(args[0])
	if err != nil {
		return bval{}, err
	}
	if x == nil {
		return bval{}, noSuchFunction("scale", args)
	}
	ds, err := bd.scaleExpr(args[0])
	if err != nil {
		return bval{}, refused(Unimplemented, "0A000", "scale of %s is not supported: round it or cast it to numeric(p,s)", lostWhat(err))
	}
	f, err := bd.fn(URNPostgres, "numeric_scale", i32Type(), x, ds)
	return typed(f), err
}
