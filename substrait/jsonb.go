package substrait

import (
	"github.com/substrait-io/substrait-go/v8/expr"
)

// PostgreSQL's jsonb (PostgreSQL 15, "JSON Types"). A jsonb value is carried as Arrow binary
// holding the text jsonb_out writes of it (scan/ops jsonb_in: keys sorted shorter first then
// bytewise, a duplicate key's last value kept, numbers as numeric_out writes them, ", " and
// ": " between elements), marked jsonb (bval.jsonb, col.jsonb) beside json documents, which
// keep their input's text. So ->, ->>, #>, #>> and ::text read it as they read a json
// document and answer jsonb's text; = and <> compare jsonb_key's of both sides (numbers by
// value: 1.0 = 1), as jsonb equality. What jsonb has and flightsrv does not — grouping by
// value (GROUP BY, DISTINCT, PARTITION BY: errJSONBGroup), its ordering (<, ORDER BY:
// errJSONBOrder), jsonb || jsonb, jsonb - key, the containment and existence operators, the
// jsonb_* functions other than jsonb_typeof — is refused by name. CASE and COALESCE of jsonb
// branches are jsonb (docMarkers); other expressions of a binary type (NULLIF, GREATEST, a
// scalar subquery's value) are a binary value of unknown kind, compared bytewise.

// errJSONBOrder refuses ORDER BY of a jsonb value: jsonb's btree order (objects above
// arrays above booleans above numbers above strings above null, objects by their number of
// pairs first) is not the bytewise order of its text.
var errJSONBOrder = unimplemented("ORDER BY of jsonb values (jsonb's ordering)")

// errJSONBGroup refuses grouping jsonb values (GROUP BY, DISTINCT, PARTITION BY, an
// aggregate's DISTINCT): jsonb equality groups numbers by value ('1.0' with '1', shown as
// one of them), which grouping the canonical text bytewise would not.
var errJSONBGroup = unimplemented("grouping jsonb values (GROUP BY, DISTINCT, PARTITION BY)")

// jsonbCast binds v::jsonb: text, an untyped literal or a json document through jsonb_in; a
// jsonb value unchanged; other types have no cast to jsonb (42846), as in PostgreSQL.
func (bd *binder) jsonbCast(v bval) (bval, error) {
	switch {
	case v.jsonb:
		return v, nil
	case v.null:
		out := typed(expr.NewNullLiteral(binType()))
		out.jsonb = true
		return out, nil
	}
	var in expr.Expression
	switch {
	case v.untyped():
		e, err := bd.coerce(v, strType(), "")
		if err != nil {
			return bval{}, err
		}
		in = e
	case v.bytea || isIntervalVal(v):
		return bval{}, errorf(InvalidArgument, "cannot cast type %s to jsonb", opTypeName(v))
	default:
		switch familyOf(v.typ()) {
		case famString, famBinary:
			in = v.e
		default:
			return bval{}, errorf(InvalidArgument, "cannot cast type %s to jsonb", typeName(v.typ()))
		}
	}
	f, err := bd.fn(URNPostgres, "jsonb_in", binType(), in)
	if err != nil {
		return bval{}, err
	}
	out := typed(f)
	out.jsonb = true
	return out, nil
}

// docMarkers is the json and jsonb markers of a CASE's or COALESCE's result: those every
// branch that is not an untyped NULL has.
func docMarkers(vs []bval) (json, jsonb bool) {
	json, jsonb = true, true
	seen := false
	for _, v := range vs {
		if v.null && v.untyped() {
			continue
		}
		seen = true
		json, jsonb = json && v.json, jsonb && v.jsonb
	}
	return json && seen, jsonb && seen
}

// isJSONDoc reports whether v is known to be a json or jsonb document.
func isJSONDoc(v bval) bool {
	return v.json || v.jsonb
}

// jsonTypeName names v's type for "operator does not exist": json, jsonb, or opTypeName's.
func jsonTypeName(v bval) string {
	switch {
	case v.jsonb:
		return "jsonb"
	case v.json:
		return "json"
	}
	return opTypeName(v)
}

// jsonCompare binds a comparison with a json or jsonb operand (ok false for none). json has
// no comparison operators (42883, json = json); jsonb = jsonb and <> compare jsonb_key's of
// both sides (an untyped literal beside jsonb read as jsonb); jsonb's ordering is refused by
// name; jsonb beside another type has no operator (42883).
func (bd *binder) jsonCompare(op string, a, b bval) (expr.Expression, bool, error) {
	if !isJSONDoc(a) && !isJSONDoc(b) {
		return nil, false, nil
	}
	both := (a.jsonb || a.untyped()) && (b.jsonb || b.untyped())
	if !both {
		return nil, true, errorf(InvalidArgument, "operator does not exist: %s %s %s", jsonTypeName(a), op, jsonTypeName(b))
	}
	if op != "=" && op != "<>" && op != "!=" {
		return nil, true, unimplemented("jsonb's ordering (" + op + ")")
	}
	keys := make([]expr.Expression, 2)
	for i, v := range []bval{a, b} {
		j, err := bd.jsonbCast(v)
		if err != nil {
			return nil, true, err
		}
		if keys[i], err = bd.fn(URNPostgres, "jsonb_key", binType(), j.e); err != nil {
			return nil, true, err
		}
	}
	e, err := bd.fn(URNComparison, comparisons[op], booleanType(), keys[0], keys[1])
	return e, true, err
}
