package substrait

import (
	"fmt"
	"math"
	"strconv"

	"github.com/cockroachdb/apd/v3"
	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/types"
)

// Parameters of type numeric.
//
// PostgreSQL types a parameter numeric where it is cast to numeric or numeric(p,s) ($1::numeric,
// round($1::numeric, 2)) and where it stands beside a numeric in an operator (x::numeric > $1,
// price * $1, avg(x) * $1); its value is read by numeric_in, so that text '1.50' keeps its
// display scale 2. A client binding decimal128(p,s) (ADBC with a Python Decimal, the JDBC
// driver's setBigDecimal) declares numeric (DeclareParameterTypes), its value's display scale
// being the Arrow type's s; text, an integer or a double precision value binds as PostgreSQL
// reads it into numeric (numeric_in; int8_numeric; float8_numeric's 15 significant digits).
//
// One decimal column has one scale, fixed at prepare time (the dataset schema does not change
// with the values bound): an unconstrained numeric parameter is held, exactly, at
// rawNumericScale, like text cast to numeric (varyingNumeric), with its display scale beside it
// (bval.ds), so text, products and quotients follow PostgreSQL's display scales; a value that
// needs more than 16 digits after the point (nonzero ones) or more than 22 before it is refused
// by name when it is bound. A cast to numeric(p,s) rounds the value to s as numeric_in and
// apply_typmod do, whatever its digits.

// paramNumericScale is the scale of an unconstrained numeric parameter (rawNumericScale), and
// of its declared Arrow type decimal128(38, 16) (paramArrowType; a parameter cast to
// numeric(p,s) where it is first met is declared decimal128(p, s)).
const paramNumericScale = rawNumericScale

// numericParam binds parameter p as PostgreSQL's numeric: cast to numeric(prec, s) when
// constrained (numeric_cast of its text: rounded half away from zero to s, numeric field
// overflow past prec digits), else numeric_exact of its text, held at paramNumericScale with
// its own display scale beside it (varyingNumeric). The value is a text literal (a placeholder
// at prepare time) that nothing folds, so that the plan's types, nullability included, are the
// same at prepare time and for every binding; what the value would make fail at run time is
// refused when it is bound.
func (bd *binder) numericParam(p int, s, prec int32, constrained bool) (bval, error) {
	text, err := bd.numericParamRaw(p, s, prec, constrained)
	if err != nil {
		return bval{}, err
	}
	if constrained {
		e, err := bd.numCast("ROUND", s, prec, text.e)
		return typed(e), err
	}
	return bd.varyingNumeric(text.e)
}

// numericParamRaw binds parameter p, cast to numeric(prec, s) when constrained, else to numeric,
// as the text numeric_in reads: a text literal of its value (numericParamText), a placeholder at
// prepare time. Without a cast it is also a division's raw operand, read with its own display
// scale by numericQuotient.
func (bd *binder) numericParamRaw(p int, s, prec int32, constrained bool) (bval, error) {
	d, _, err := bd.numericParamValue(p, s, prec, constrained)
	if err != nil {
		return bval{}, err
	}
	if d == nil {
		lit := expr.NewNullLiteral(strType())
		if bd.ps.vals == nil {
			bd.ps.placeholders[lit] = p
		}
		return typed(lit), nil // a stand-in at prepare time, a NULL bound
	}
	if constrained {
		if _, err := numLiteral(d, s, prec, apd.RoundHalfUp); err != nil {
			return bval{}, err // numeric field overflow, as the cast would fail
		}
	} else if !fitsScale(d, paramNumericScale) {
		return bval{}, refused(Unimplemented, "0A000", "parameter $%d: a numeric parameter that needs more than %d digits after the point or %d before it is not supported: cast it to numeric(p,s)",
			p, paramNumericScale, numericDigits-paramNumericScale)
	}
	return typed(expr.NewPrimitiveLiteral(d.Text('f'), true)), nil
}

// numericParamValue records parameter p as numeric (declared decimal128(38, 16), or
// decimal128(prec, s) when constrained and first met so) and reads its value as numeric_in
// does, with its display scale; nil at prepare time. A parameter typed otherwise elsewhere is
// refused.
func (bd *binder) numericParamValue(p int, s, prec int32, constrained bool) (*apd.Decimal, int32, error) {
	if prev, ok := bd.ps.types[p]; ok && familyOf(prev) != famNumeric {
		return nil, 0, errorf(InvalidArgument, "parameter $%d is used both as %s and as numeric", p, typeName(prev))
	} else if !ok {
		bd.ps.types[p] = numType(paramNumericScale)
		if constrained {
			// Declared decimal128(prec, s): the JDBC driver binds a BigDecimal of scale s.
			bd.ps.types[p] = &types.DecimalType{Precision: prec, Scale: s, Nullability: nullableN}
		}
	}
	if bd.ps.vals == nil || bd.boundNull(p) {
		return nil, 0, nil
	}
	if p > len(bd.ps.vals) {
		return nil, 0, errorf(InvalidArgument, "parameter $%d has no value", p)
	}
	text, err := numericParamText(bd.ps.vals[p-1], p)
	if err != nil {
		return nil, 0, err
	}
	d, ds, err := parseNumericText(text)
	if err != nil {
		return nil, 0, paramError(p, err)
	}
	return d, ds, nil
}

// numericParams binds the untyped parameters among vs as numerics (numericParam), in place:
// the operands of an operator or the arguments of a function PostgreSQL resolves to numeric.
func (bd *binder) numericParams(vs ...*bval) error {
	for _, v := range vs {
		if v.param > 0 && v.untyped() {
			p, err := bd.numericParam(v.param, 0, 0, false)
			if err != nil {
				return err
			}
			*v = p
		}
	}
	return nil
}

// fitsScale reports whether d is held exactly at scale s in decimal128(38, s): no nonzero
// digit past s, at most 38 - s digits before the point.
func fitsScale(d *apd.Decimal, s int32) bool {
	if d.IsZero() {
		return true
	}
	var q apd.Decimal
	ctx := apd.BaseContext.WithPrecision(100)
	if _, err := ctx.Quantize(&q, d, -s); err != nil || q.Cmp(d) != 0 {
		return false
	}
	return q.NumDigits() <= numericDigits
}

// numericParamText is the text numeric_in reads for a numeric parameter's value v: text as it
// is, a numeric (a bound decimal) at its scale, an integer's digits, a double precision value
// with float8_numeric's 15 significant digits (a real's float4_numeric's 6).
func numericParamText(v any, p int) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case *apd.Decimal:
		if x.Exponent < -1000 || x.Exponent > 1000 {
			// A client's decimal type of a scale numeric has not (its text would be as long).
			return "", &Error{Code: InvalidArgument, SQLState: "22003", Msg: fmt.Sprintf("parameter $%d: a decimal of scale %d is out of numeric's range", p, -x.Exponent)}
		}
		return x.Text('f'), nil
	case float64:
		return strconv.FormatFloat(x, 'g', 15, 64), nil
	case float32:
		return strconv.FormatFloat(float64(x), 'g', 6, 32), nil
	}
	if n, ok := asInt64(v); ok {
		return strconv.FormatInt(n, 10), nil
	}
	if isUnsigned(v) {
		return "", limitRange(p)
	}
	return "", errorf(InvalidArgument, "parameter $%d must be numeric, got %s", p, valueTypeName(v))
}

// Parameters compared with integers.
//
// A parameter PostgreSQL types integer or smallint because it is compared with such an
// expression ((value->>'delay')::int >= $1, x::int BETWEEN $1 AND $2, x::int IN ($1, $2)) is
// declared float64, not int64 (general.declared, over paramArrowType's int64): every integer and smallint is exact in double
// precision, and the JDBC driver converts each Java number into the declared type, so that
// setDouble(12.5) arrives unchanged, where an int64 declaration truncates it to 12 silently. The
// statement the binding then declares (DeclareParameterTypes: $1::double precision) compares
// as PostgreSQL compares an integer with a double precision value, in double precision; a whole
// value is compared as an integer (wholeFloatAsInt), the same answer. A parameter whose
// integer type flows anywhere else ($1 + 1, LIMIT $1) or that is compared with a bigint
// (exactness past 2^53) stays int64.

// countInt adds one to parameter p's count of comparisons with an integer (cmp) or of integer
// uses, at prepare time.
func (ps *paramState) countInt(cmp bool, p int) {
	if ps.vals != nil {
		return
	}
	if ps.intCmp == nil {
		ps.intCmp, ps.intUses = map[int]int{}, map[int]int{}
	}
	if cmp {
		ps.intCmp[p]++
	} else {
		ps.intUses[p]++
	}
}

// int4Only reports whether parameter p's integer uses are all arguments a function declares
// integer (int4Arg): declared int32 (general.declared).
func (ps *paramState) int4Only(p int) bool {
	n := ps.int4Args[p]
	return n > 0 && n == ps.intUses[p] && ps.intCmp[p] == 0
}

// noteIntComparison counts a comparison of v, an untyped parameter, with other, a smallint or
// integer value (countInt).
func (bd *binder) noteIntComparison(v, other bval) {
	if v.param > 0 && v.untyped() && !other.untyped() && isInt4(other.typ()) {
		bd.ps.countInt(true, v.param)
	}
}

// isInt4 reports whether t is smallint or integer, whose values double precision holds exactly.
func isInt4(t types.Type) bool {
	switch t.(type) {
	case *types.Int8Type, *types.Int16Type, *types.Int32Type:
		return true
	}
	return false
}

// floatCompared reports whether parameter p is compared with smallint or integer expressions
// and used as an integer nowhere else: declared float64 (general.declared).
func (ps *paramState) floatCompared(p int) bool {
	n := ps.intCmp[p]
	return n > 0 && n == ps.intUses[p] && isInt4(ps.types[p])
}

// wholeFloatAsInt is v, a double precision constant compared with other, a smallint or integer
// value, as a bigint constant when it is whole and within bigint's range (a bound parameter's
// value, declared float64 by floatCompared): PostgreSQL compares an integer with a double
// precision value in double precision, where every integer is exact, so comparing with the
// whole value as an integer is the same answer, and the plan that of an integer binding. Any
// other v is returned as it is.
func wholeFloatAsInt(v, other bval) bval {
	if other.untyped() || !isInt4(other.typ()) {
		return v
	}
	l, ok := v.e.(*expr.PrimitiveLiteral[float64])
	if !ok || l.Value != math.Trunc(l.Value) || l.Value < -(1<<63) || l.Value >= 1<<63 {
		return v
	}
	return typed(expr.NewPrimitiveLiteral(int64(l.Value), l.GetType().GetNullability() == types.NullabilityNullable))
}
