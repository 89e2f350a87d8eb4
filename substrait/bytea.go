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
		b, err := pgbytea.In(*v.str)
		if e := (*pgbytea.Error)(nil); errors.As(err, &e) {
			return bval{}, &Error{Code: InvalidArgument, SQLState: e.Code, Msg: e.Msg}
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
		e, err := bd.coerce(args[i], i64Type(), fmt.Sprintf("argument %d of %s", i+1, name))
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
