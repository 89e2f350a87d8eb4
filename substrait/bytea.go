package substrait

import (
	"errors"
	"fmt"

	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/types"

	"github.com/flightsrv/flightsrv/internal/pgbytea"
)

// bytea casts as PostgreSQL reads and writes bytea text (internal/pgbytea): x::bytea of a
// text constant is byteain's value, read here ('\x6162'::bytea is two bytes, 'a\\b'::bytea
// three); of a text value, scan/ops' bytea_in per row; a text the format does not read is
// PostgreSQL's 22023 or 22P02 in its words, quoting nothing. A value known to be bytea (the
// result of such a cast, and a column holding one read from a subquery, CTE, set operation,
// join or grouping key: the scope's col.bytea) cast to text is byteaout's hex (scan/ops'
// bytea_out, or read here of a constant). bytea and JSON documents are both Arrow binary: a
// binary value of another origin (the routed table's value, a JSON function's result) casts to
// text as the document's text.

// byteaCast binds v::bytea.
func (bd *binder) byteaCast(v bval) (bval, error) {
	var out bval
	switch {
	case v.str != nil:
		b, err := byteaIn(*v.str)
		if err != nil {
			return bval{}, err
		}
		out = typed(expr.NewByteSliceLiteral(b, true))
	case v.param > 0 && bd.boundString(v.param) != nil:
		// A parameter bound as text (Arrow utf8) is PostgreSQL's unknown-typed value of a
		// bytea parameter: read by byteain as the constant is; one bound as Arrow binary is
		// its bytes (the coerce below).
		if _, err := bd.coerce(v, binType(), ""); err != nil {
			return bval{}, err
		}
		text := *bd.boundString(v.param)
		if !validText(text) {
			return bval{}, errInvalidUTF8Param(v.param, text)
		}
		b, err := byteaIn(text)
		if err != nil {
			return bval{}, paramError(v.param, err)
		}
		out = typed(expr.NewByteSliceLiteral(b, true))
	case v.untyped():
		e, err := bd.coerce(v, binType(), "")
		if err != nil {
			return bval{}, err
		}
		out = typed(e)
	case familyOf(v.typ()) == famString:
		f, err := bd.fn(URNPostgres, "bytea_in", binType(), v.e)
		if err != nil {
			return bval{}, err
		}
		out = typed(f)
	default:
		var err error
		if out, err = bd.cast(v.e, binType()); err != nil {
			return bval{}, err
		}
	}
	out.bytea = true
	return out, nil
}

// byteaIn is pgbytea.In with its error as an *Error (PostgreSQL's SQLSTATE, InvalidArgument).
func byteaIn(s string) ([]byte, error) {
	b, err := pgbytea.In(s)
	if e := (*pgbytea.Error)(nil); errors.As(err, &e) {
		return nil, &Error{Code: InvalidArgument, SQLState: e.Code, Msg: e.Msg}
	}
	return b, err
}

// boundString is the value bound to parameter $pos when it is a Go string (Arrow utf8 and
// its kin), nil when the statement is bound without values or $pos holds another value.
func (bd *binder) boundString(pos int) *string {
	if pos > len(bd.ps.vals) {
		return nil
	}
	if s, ok := bd.ps.vals[pos-1].(string); ok {
		return &s
	}
	return nil
}

// byteaText binds v::text of a value known to be bytea (v.bytea).
func (bd *binder) byteaText(v bval) (bval, error) {
	if lit, ok := v.e.(*expr.ByteSliceLiteral[[]byte]); ok {
		return typed(expr.NewPrimitiveLiteral(pgbytea.Out(lit.Value), true)), nil
	}
	f, err := bd.fn(URNPostgres, "bytea_out", strType(), v.e)
	return typed(f), err
}

// byteaSubstring binds substring(b FROM from [FOR count]) (or substr) of bytea b as
// PostgreSQL's bytea_substr: bytes, not characters (scan/ops' bytea_substring); the result
// is bytea.
func (bd *binder) byteaSubstring(name string, args []bval) (bval, error) {
	es := []types.FuncArg{args[0].e}
	for i := 1; i < len(args); i++ {
		e, err := bd.int4Arg(args[i], fmt.Sprintf("argument %d of %s", i+1, name))
		if err != nil {
			return bval{}, err
		}
		es = append(es, e)
	}
	f, err := bd.fn(URNPostgres, "bytea_substring", binType(), es...)
	out := typed(f)
	out.bytea = true
	return out, err
}
