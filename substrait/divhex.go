package substrait

import (
	"fmt"
	"strings"

	"github.com/substrait-io/substrait-go/v8/expr"

	"github.com/substrait-io/substrait-go/v8/types"
)

// divHex binds PostgreSQL's div(a, b) (scan/ops' int_div_numeric of integers, numeric_arith's
// div_trunc of numerics) and to_hex(a) of integers (to_hex).
//
// div(numeric, numeric) is PostgreSQL's only div: integer arguments (smallint, integer,
// bigint, NULL) cast to numeric implicitly, and the quotient truncated toward zero is numeric
// (display scale 0); of integers it is computed exactly over bigint here (div(-2^63, -1) is
// 2^63), a zero divisor is 22012. With a numeric argument (a decimal literal, a numeric
// value, an untyped text constant or parameter, which resolve to numeric) it is computed
// exactly over the numerics (numericDiv). Double precision has no implicit cast to numeric, nor have other types (42883).
//
// to_hex(integer) and to_hex(bigint) write the two's complement at the argument's width in
// lowercase hexadecimal; a smallint or an untyped argument matches both (42725), another type
// neither (42883).
func (bd *binder) divHex(name string, args []bval) (bval, error) {
	want := map[string]int{"div": 2, "to_hex": 1}[name]
	if len(args) != want {
		return bval{}, &Error{Code: InvalidArgument, SQLState: "42883", Msg: fmt.Sprintf("function %s(%s) does not exist", name, argTypeNames(args))}
	}
	if name == "to_hex" {
		a := args[0]
		switch {
		case a.untyped() || familyOf(a.typ()) == famInt && numRank(a.typ()) < numRank(i32Type()):
			return bval{}, &Error{Code: InvalidArgument, SQLState: "42725", Msg: fmt.Sprintf("function to_hex(%s) is not unique", argTypeName(a))}
		case familyOf(a.typ()) != famInt:
			return bval{}, &Error{Code: InvalidArgument, SQLState: "42883", Msg: fmt.Sprintf("function to_hex(%s) does not exist", argTypeName(a))}
		}
		f, err := bd.fn(URNPostgres, "to_hex", strType(), a.e)
		return typed(f), err
	}
	numeric := false
	for _, a := range args {
		switch {
		case a.null && a.param == 0:
		case a.untyped() || familyOf(a.typ()) == famNumeric:
			// A numeric whose display scale varies by row (an average, text cast to numeric)
			// holds PostgreSQL's value exactly (dscale.go): its quotient is PostgreSQL's.
			numeric = true
		case familyOf(a.typ()) != famInt:
			return bval{}, &Error{Code: InvalidArgument, SQLState: "42883", Msg: fmt.Sprintf("function div(%s) does not exist", argTypeNames(args))}
		}
	}
	if numeric {
		return bd.numericDiv(args[0], args[1])
	}
	es := make([]types.FuncArg, 2)
	for i, a := range args {
		e, err := bd.coerce(a, i64Type(), fmt.Sprintf("argument %d of div", i+1))
		if err != nil {
			return bval{}, err
		}
		es[i] = e
	}
	f, err := bd.fn(URNPostgres, "int_div_numeric", numType(0), es...)
	return typed(f), err
}

// numericDiv binds div(a, b) where an argument is numeric (a numeric value, a decimal or
// untyped constant, an untyped parameter, which PostgreSQL resolves to numeric; an integer
// beside one is made numeric): scan/ops' numeric_arith div_trunc, the quotient truncated
// toward zero exactly, numeric of display scale 0 as numeric_div_trunc's.
func (bd *binder) numericDiv(l, r bval) (bval, error) {
	x, y, err := bd.numericOperands(&l, &r)
	if err != nil {
		return bval{}, err
	}
	f, err := bd.fn(URNPostgres, "numeric_arith", numType(0), types.Enum("div_trunc"), x, y)
	return typed(f), err
}

// shaDigest binds PostgreSQL's sha224(bytea), sha256, sha384 and sha512 (scan/ops' kernels
// of those names): the digest as bytea (marked so: its ::text is byteaout's hex). An untyped
// text constant is read as byteain reads it; text, and a binary value that is no bytea (a
// JSON document), have no implicit cast to bytea, so sha256 of one is PostgreSQL's 42883, as
// is any other type or count of arguments.
//
// encode(bytea, format) is bound alike onto scan/ops' encode, the format a constant (any
// letter case) passed lowercased as an enumeration (an unknown one is the row's 22023); a
// format that is not a constant is refused by name, a NULL one answers NULL text.
func (bd *binder) shaDigest(name string, args []bval) (bval, error) {
	want := 1
	if name == "encode" {
		want = 2
	}
	if len(args) != want || !args[0].untyped() && !args[0].bytea || want == 2 && !args[1].untyped() && familyOf(args[1].typ()) != famString {
		types := argTypeNames(args)
		if len(args) == 1 && (args[0].json || args[0].jsonb) {
			types = map[bool]string{false: "json", true: "jsonb"}[args[0].jsonb]
		}
		return bval{}, &Error{Code: InvalidArgument, SQLState: "42883", Msg: fmt.Sprintf("function %s(%s) does not exist", name, types)}
	}
	v := args[0]
	if v.untyped() {
		var err error
		if v, err = bd.byteaCast(v); err != nil {
			return bval{}, err
		}
	}
	if name == "encode" {
		if args[1].null {
			return typed(expr.NewNullLiteral(strType())), nil
		}
		format, ok := constText(args[1])
		if !ok {
			return bval{}, unimplemented("encode with a format that is not a constant")
		}
		f, err := bd.fn(URNPostgres, name, strType(), types.Enum(strings.ToLower(format)), v.e)
		return typed(f), err
	}
	f, err := bd.fn(URNPostgres, name, binType(), v.e)
	out := typed(f)
	out.bytea = true
	return out, err
}
