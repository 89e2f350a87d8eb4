package substrait

import (
	"fmt"
	"slices"
	"strings"

	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/types"
)

// decodeCall binds PostgreSQL's decode(text, format) onto scan/ops' decode (internal/pgbytea's
// Decode): the bytea value (marked so: its ::text is byteaout's hex) of the text read in the
// format, a constant passed as written as an enumeration ("hex", "base64" or "escape" in any
// letter case; another is the row's 22023). An untyped text constant is text; bytea, json and
// other types have no implicit cast to text (42883, as any other count of arguments); a format
// that is not a constant is refused by name, a NULL one answers NULL.
func (bd *binder) decodeCall(args []bval) (bval, error) {
	if len(args) != 2 || !textArg(args[0]) || !textArg(args[1]) {
		return bval{}, &Error{Code: InvalidArgument, SQLState: "42883", Msg: fmt.Sprintf("function decode(%s) does not exist", argTypeNames(args))}
	}
	if args[1].null {
		out := typed(expr.NewNullLiteral(binType()))
		out.bytea = true
		return out, nil
	}
	format, ok := constText(args[1])
	if !ok {
		return bval{}, unimplemented("decode with a format that is not a constant")
	}
	s, err := bd.asText(args[0])
	if err != nil {
		return bval{}, err
	}
	f, err := bd.fn(URNPostgres, "decode", binType(), types.Enum(format), s)
	out := typed(f)
	out.bytea = true
	return out, err
}

// textArg reports whether v is text for a function of text: untyped, or of the string family
// and not bytea.
func textArg(v bval) bool {
	return v.untyped() || familyOf(v.typ()) == famString && !v.bytea
}

// convertTo binds PostgreSQL's convert_to(text, 'UTF8'): the text's bytes as bytea (the
// database encoding is UTF-8, so they are unchanged). The encoding name is read as
// PostgreSQL's clean_encoding_name reads it (letter case and punctuation ignored: utf-8,
// UTF_8; unicode is its alias); a constant naming another encoding, or one that is not a
// constant, is refused by name; NULL answers NULL. Arguments that are not text are 42883.
func (bd *binder) convertTo(args []bval) (bval, error) {
	if len(args) != 2 || !textArg(args[0]) || !textArg(args[1]) {
		return bval{}, &Error{Code: InvalidArgument, SQLState: "42883", Msg: fmt.Sprintf("function convert_to(%s) does not exist", argTypeNames(args))}
	}
	var out bval
	switch enc, ok := constText(args[1]); {
	case args[1].null || args[0].null:
		out = typed(expr.NewNullLiteral(binType()))
	case !ok || !isUTF8Name(enc):
		return bval{}, unimplemented("convert_to to an encoding other than UTF8")
	case args[0].str != nil:
		out = typed(expr.NewByteSliceLiteral([]byte(*args[0].str), false))
	default:
		s, err := bd.asText(args[0])
		if err != nil {
			return bval{}, err
		}
		if out, err = bd.cast(s, binType()); err != nil {
			return bval{}, err
		}
	}
	out.bytea = true
	return out, nil
}

// isUTF8Name reports whether PostgreSQL reads name as the UTF8 encoding (clean_encoding_name
// keeps letters and digits, lowercased; "unicode" is an alias).
func isUTF8Name(name string) bool {
	clean := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			return r
		case r >= 'A' && r <= 'Z':
			return r + 'a' - 'A'
		}
		return -1
	}, name)
	return clean == "utf8" || clean == "unicode"
}

// byteaConcat binds l || r where one operand is bytea (concatOperator): PostgreSQL's byteacat
// (scan/ops' bytea_concat) when the other is bytea or an untyped constant (read as byteain
// reads it), bytea; text's || (anytextcat) of byteaout's hex text when the other is text;
// any other type has no operator (42883).
func (bd *binder) byteaConcat(l, r bval) (bval, error) {
	isText := func(v bval) bool { return !v.untyped() && familyOf(v.typ()) == famString && !v.bytea }
	if isText(l) || isText(r) {
		x, y := l, r
		var err error
		for _, v := range []*bval{&x, &y} {
			if v.bytea {
				if *v, err = bd.byteaText(*v); err != nil {
					return bval{}, err
				}
			}
		}
		return bd.concatOperator(x, y)
	}
	es := make([]expr.Expression, 2)
	for i, v := range []bval{l, r} {
		switch {
		case v.null:
			es[i] = expr.NewNullLiteral(binType())
		case v.untyped():
			b, err := bd.byteaCast(v)
			if err != nil {
				return bval{}, err
			}
			es[i] = b.e
		case v.bytea:
			es[i] = v.e
		default:
			return bval{}, errorf(InvalidArgument, "operator does not exist: %s || %s", opTypeName(l), opTypeName(r))
		}
	}
	f, err := bd.fn(URNPostgres, "bytea_concat", binType(), es[0], es[1])
	out := typed(f)
	out.bytea = true
	return out, err
}

// cbrtCall binds PostgreSQL's cbrt(double precision) (scan/ops' cbrt, the GNU C library's
// cube root): integers, numerics and reals are cast to double precision as PostgreSQL casts
// them implicitly, an untyped constant is read as one; another type, or another count of
// arguments, is 42883.
func (bd *binder) cbrtCall(args []bval) (bval, error) {
	if len(args) != 1 || !args[0].untyped() && !isNumber(familyOf(args[0].typ())) || isIntervalVal(args[0]) {
		return bval{}, &Error{Code: InvalidArgument, SQLState: "42883", Msg: fmt.Sprintf("function cbrt(%s) does not exist", argTypeNames(args))}
	}
	e, err := bd.coerce(args[0], fp64Type(), "argument of cbrt")
	if err != nil {
		return bval{}, err
	}
	f, err := bd.fn(URNPostgres, "cbrt", fp64Type(), e)
	return typed(f), err
}

// stringToArray binds PostgreSQL's string_to_array(text, delimiter[, null_string]) onto
// scan/ops' string_to_array: a text[] (a list of nullable text, as array_agg's), whose ::text
// is array_out's and which array_to_string reads. Untyped constants are text; other types
// are 42883, as other counts of arguments.
func (bd *binder) stringToArray(args []bval) (bval, error) {
	if len(args) < 2 || len(args) > 3 || slices.ContainsFunc(args, func(v bval) bool { return !textArg(v) }) {
		return bval{}, &Error{Code: InvalidArgument, SQLState: "42883", Msg: fmt.Sprintf("function string_to_array(%s) does not exist", argTypeNames(args))}
	}
	es := make([]types.FuncArg, len(args))
	for i, a := range args {
		e, err := bd.coerce(a, strType(), "argument of string_to_array")
		if err != nil {
			return bval{}, err
		}
		es[i] = e
	}
	f, err := bd.fn(URNPostgres, "string_to_array", &types.ListType{Type: strType(), Nullability: nullableN}, es...)
	return typed(f), err
}

// getByte binds PostgreSQL's get_byte(bytea, integer) onto scan/ops' get_byte: an untyped
// constant is read as byteain reads it, a smallint or an untyped offset is made integer;
// text, bigint and other types are 42883.
func (bd *binder) getByte(args []bval) (bval, error) {
	if len(args) != 2 || !args[0].untyped() && !args[0].bytea ||
		!args[1].untyped() && (familyOf(args[1].typ()) != famInt || numRank(args[1].typ()) > numRank(i32Type())) {
		return bval{}, &Error{Code: InvalidArgument, SQLState: "42883", Msg: fmt.Sprintf("function get_byte(%s) does not exist", argTypeNames(args))}
	}
	b := args[0]
	if b.untyped() {
		var err error
		if b, err = bd.byteaCast(b); err != nil {
			return bval{}, err
		}
	}
	k, err := bd.coerce(args[1], i32Type(), "argument 2 of get_byte")
	if err != nil {
		return bval{}, err
	}
	f, err := bd.fn(URNPostgres, "get_byte", i32Type(), b.e, k)
	return typed(f), err
}
