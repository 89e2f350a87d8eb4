package substrait

import (
	"fmt"
	"strings"
	"unicode"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/types"
)

// makeTimestamp binds make_timestamp(year, month, mday, hour, min, sec) (timestamp without
// time zone) and make_timestamptz of the same six arguments (timestamp with time zone, in the
// session's zone, UTC) as PostgreSQL's: the five fields integers (smallint and integer, and
// untyped constants, as its implicit casts take them), sec double precision (integers and
// numerics cast to it); other types are its 42883 (scan/ops make_timestamp for the values and
// errors). make_timestamptz with a seventh argument, a zone, is PostgreSQL's
// make_timestamptz_at_timezone: the wall clock's instant in that zone, as make_timestamp(…)
// AT TIME ZONE zone computes it for a zone named by letters (a name, an abbreviation, a POSIX
// zone: checked against PostgreSQL 15 around DST changes); a zone that is not a text
// constant, or a numeric offset ('+05', which PostgreSQL reads there with the ISO sign and AT
// TIME ZONE with the POSIX one), is refused by name.
func (bd *binder) makeTimestamp(name string, args []bval, call func(string, types.Type, ...expr.Expression) (bval, error)) (bval, error) {
	if name == "make_timestamptz" && len(args) == 7 {
		z, ok := constText(args[6])
		if z = strings.TrimSpace(z); !ok || z == "" || !unicode.IsLetter(rune(z[0])) {
			return bval{}, unimplemented("make_timestamptz with a time zone argument that is not a zone name constant (a numeric offset or a column)")
		}
		wall, err := bd.makeTimestamp("make_timestamp", args[:6], func(urn string, out types.Type, es ...expr.Expression) (bval, error) {
			fa := make([]types.FuncArg, len(es))
			for i, e := range es {
				fa[i] = e
			}
			f, err := bd.fn(urn, "make_timestamp", out, fa...)
			return typed(f), err
		})
		if err != nil {
			return bval{}, err
		}
		return bd.atTimeZone(args[6], wall)
	}
	if len(args) != 6 {
		return bval{}, errorf(InvalidArgument, "function %s(%s) does not exist", name, argTypeNames(args))
	}
	es := make([]expr.Expression, 6)
	for i, a := range args {
		target := i32Type()
		if i == 5 {
			target = fp64Type()
		}
		if !a.untyped() {
			f := familyOf(a.typ())
			ok := f == famInt && numRank(a.typ()) <= numRank(i32Type())
			if i == 5 {
				ok = (f == famInt || f == famFloat || f == famNumeric) && !isIntervalType(a.typ()) && !a.json && !a.jsonb
			}
			if !ok {
				return bval{}, errorf(InvalidArgument, "function %s(%s) does not exist", name, argTypeNames(args))
			}
		}
		e, err := bd.coerce(a, target, fmt.Sprintf("argument %d of %s", i+1, name))
		if err != nil {
			return bval{}, err
		}
		es[i] = e
	}
	out := wallclockType()
	if name == "make_timestamptz" {
		out = tsType()
	}
	return call(URNPostgres, out, es...)
}

// pgTypeof binds pg_typeof(v): the name of v's type as PostgreSQL's regtype output writes it
// (format_type_be: integer, double precision, character varying, timestamp with time zone,
// text[]…; unknown for an untyped literal or NULL), as text. The argument is still evaluated
// on every row, as PostgreSQL evaluates it (its errors are raised): the name is the answer
// of a CASE over it. A parameter without a type, and a binary value that is neither bytea
// nor a JSON document (the value column of a table not declaring its values), whose
// PostgreSQL type the binder does not know, are refused by name.
func (bd *binder) pgTypeof(v bval) (bval, error) {
	if _, ok := v.intervalConst(); ok {
		e, err := bd.intervalValue(v, "argument of pg_typeof") // read, as PostgreSQL reads it
		if err != nil {
			return bval{}, err
		}
		v = typed(e)
	}
	var name string
	switch {
	case v.param > 0 && v.untyped():
		return bval{}, unimplemented("pg_typeof of a parameter without a type")
	case v.untyped():
		// A quoted literal or NULL: PostgreSQL's unknown.
		return typed(expr.NewPrimitiveLiteral("unknown", false)), nil
	case v.jsonb:
		name = "jsonb"
	case v.json:
		name = "json"
	case familyOf(v.typ()) == famBinary && !v.bytea:
		return bval{}, unimplemented("pg_typeof of a binary value that is not bytea, json or jsonb")
	case familyOf(v.typ()) == famString && v.bpchar == 0 && !v.varchar && v.typmod == "":
		if mayBeVarchar(v.e) {
			return bval{}, unimplemented("pg_typeof of a text column or a CASE, COALESCE, NULLIF, GREATEST or LEAST of text (text or character varying: the binder does not follow which)")
		}
		name = "text"
	default:
		name = modTypeName(v.typ(), v.bpchar, v.varchar, v.typmod)
	}
	lit := expr.NewPrimitiveLiteral(name, false)
	isNull, err := bd.fn(URNComparison, "is_null", booleanType(), v.e)
	if err != nil {
		return bval{}, err
	}
	e, err := bd.ifThen([]expr.IfThenPair{{If: isNull, Then: lit}}, lit)
	return typed(e), err
}

// allowTypeof records the pg_typeof calls of sel that pgTypeof answers: a select-list column
// of the statement's outermost SELECT that is pg_typeof(x) or pg_typeof(x)::text, in a SELECT
// without DISTINCT, ORDER BY or set operations. PostgreSQL's pg_typeof is a regtype, which
// compares, groups and sorts by the type's OID and reads a literal beside it as a type name
// ('int4' = 'integer'): the text pgTypeof answers is its output only where nothing reads it.
func (bd *binder) allowTypeof(sel *pg.SelectStmt) {
	if sel == nil || sel.GetOp() != pg.SetOperation_SETOP_NONE || len(sel.GetDistinctClause()) > 0 || len(sel.GetSortClause()) > 0 {
		return
	}
	for _, t := range sel.GetTargetList() {
		n := t.GetResTarget().GetVal()
		if tc := n.GetTypeCast(); tc != nil {
			if names := tc.GetTypeName().GetNames(); len(tc.GetTypeName().GetArrayBounds()) == 0 && len(names) > 0 && names[len(names)-1].GetString_().GetSval() == "text" {
				n = tc.GetArg()
			}
		}
		if fc := n.GetFuncCall(); fc != nil && funcName(fc) == "pg_typeof" && fc.GetOver() == nil {
			if bd.typeofCalls == nil {
				bd.typeofCalls = map[*pg.FuncCall]bool{}
			}
			bd.typeofCalls[fc] = true
		}
	}
}

// mayBeVarchar reports whether a text expression may stand for a character varying value
// whose kind the binder lost: a column (of a derived table, where bval.varchar is not kept),
// or a CASE, COALESCE, NULLIF, GREATEST or LEAST, which PostgreSQL types as its arguments'
// common type. Other text expressions (casts to text, literals, functions returning text)
// are text.
func mayBeVarchar(e expr.Expression) bool {
	switch x := e.(type) {
	case *expr.FieldReference, *expr.IfThen:
		return true
	case *expr.ScalarFunction:
		switch x.Name() {
		case "coalesce", "nullif", "greatest", "least":
			return true
		}
	case *expr.Cast:
		// The binder's nullability casts keep the value's kind.
		return sameType(x.Type, x.Input.GetType()) && mayBeVarchar(x.Input)
	}
	return false
}
