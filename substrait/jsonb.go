package substrait

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/extensions"
	"github.com/substrait-io/substrait-go/v8/plan"
	"github.com/substrait-io/substrait-go/v8/types"
)

// PostgreSQL's jsonb (PostgreSQL 15, "JSON Types"). A jsonb value is carried as Arrow binary
// holding the text jsonb_out writes of it (scan/ops jsonb_in: keys sorted shorter first then
// bytewise, a duplicate key's last value kept, numbers as numeric_out writes them, ", " and
// ": " between elements), marked jsonb (bval.jsonb, col.jsonb) beside json documents, which
// keep their input's text. So ->, ->>, #>, #>> and ::text read it as they read a json
// document and answer jsonb's text; = and <> compare jsonb_key's of both sides (numbers by
// value: 1.0 = 1), as jsonb equality; <, <=, >, >=, ORDER BY, GREATEST/LEAST compare
// jsonb_sortkey's (jsonb's btree order); GROUP BY, DISTINCT, UNION and PARTITION BY group by
// jsonb_sortkey, a group showing its least canonical text (jsonbGroupValue, distinctJSONB).
// jsonb's functions and operators are jsonFunc's and jsonbOperator's. A list of values meeting
// in one result (CASE, COALESCE, GREATEST/LEAST, VALUES) with jsonb among untyped literals is
// jsonb (docUnify). json has no equality or ordering (errJSONEquality, errJSONOrdering), as in
// PostgreSQL. INTERSECT and EXCEPT of jsonb are refused by name (errJSONBGroup).

// errJSONBGroup refuses grouping jsonb values where flightsrv does not group them by value
// (INTERSECT, EXCEPT, an aggregate's DISTINCT other than count's): jsonb equality groups
// numbers by value ('1.0' with '1'), which grouping the canonical text bytewise would not.
var errJSONBGroup = unimplemented("grouping jsonb values (INTERSECT, EXCEPT, DISTINCT in an aggregate other than count)")

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

// docCast binds v::t for a json or jsonb document v and a target other than text, json and
// jsonb: jsonb's casts to smallint, integer, bigint, real, double precision, numeric and
// boolean (PostgreSQL 11+: jsonb_int4…, the document's top-level number, or boolean, as the
// target reads it: a number through numeric, so 2.5 is 3 as an integer; any other value 22023,
// the jsonb_scalar kernel's); json has none of them, and neither has any other target (42846).
func (bd *binder) docCast(v bval, t types.Type) (bval, error) {
	fam := familyOf(t)
	if v.json || fam != famInt && fam != famFloat && fam != famBool && fam != famNumeric {
		return bval{}, errorf(InvalidArgument, "cannot cast type %s to %s", jsonTypeName(v), typeName(t))
	}
	text, err := bd.fn(URNPostgres, "jsonb_scalar", strType(), v.e, expr.NewPrimitiveLiteral(typeName(t), false))
	if err != nil {
		return bval{}, err
	}
	if fam == famInt {
		n, err := bd.varyingNumeric(text)
		if err != nil {
			return bval{}, err
		}
		return bd.cast(n.e, t)
	}
	return bd.cast(text, t)
}

// jsonbNumber is the number of jsonb document v as text, for its cast to numeric (jsonb_numeric);
// a json document has no such cast (42846).
func (bd *binder) jsonbNumber(v bval) (bval, error) {
	if v.json {
		return bval{}, errorf(InvalidArgument, "cannot cast type json to numeric")
	}
	f, err := bd.fn(URNPostgres, "jsonb_scalar", strType(), v.e, expr.NewPrimitiveLiteral("numeric", false))
	return typed(f), err
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
// both sides (an untyped literal beside jsonb read as jsonb), <, <=, >, >= their
// jsonb_sortkey's; jsonb beside another type has no operator (42883).
func (bd *binder) jsonCompare(op string, a, b bval) (expr.Expression, bool, error) {
	if !isJSONDoc(a) && !isJSONDoc(b) {
		return nil, false, nil
	}
	both := (a.jsonb || a.untyped()) && (b.jsonb || b.untyped())
	if !both {
		return nil, true, errorf(InvalidArgument, "operator does not exist: %s %s %s", jsonTypeName(a), op, jsonTypeName(b))
	}
	// = and <> compare jsonb_key's; <, <=, >, >= jsonb_sortkey's (jsonb's btree order).
	kernel := "jsonb_key"
	if op != "=" && op != "<>" && op != "!=" {
		kernel = "jsonb_sortkey"
	}
	keys := make([]expr.Expression, 2)
	for i, v := range []bval{a, b} {
		j, err := bd.jsonbCast(v)
		if err != nil {
			return nil, true, err
		}
		if keys[i], err = bd.fn(URNPostgres, kernel, binType(), j.e); err != nil {
			return nil, true, err
		}
	}
	e, err := bd.fn(URNComparison, comparisons[op], booleanType(), keys[0], keys[1])
	return e, true, err
}

// jsonArg binds a function's document argument: for a jsonb function (jsonb) a jsonb value
// or an untyped literal (read as jsonb), for a json function a json document, the value
// column or an untyped literal; another type is PostgreSQL's "function … does not exist"
// (42883).
func (bd *binder) jsonArg(name string, v bval, jsonb bool, args []bval) (expr.Expression, error) {
	ok := v.untyped() || v.jsonb == jsonb && (jsonb || !v.bytea && !isIntervalVal(v) && familyOf(v.typ()) == famBinary)
	if !ok {
		names := make([]string, len(args))
		for i, a := range args {
			names[i] = jsonTypeName(a)
		}
		return nil, errorf(InvalidArgument, "function %s(%s) does not exist", name, strings.Join(names, ", "))
	}
	if jsonb {
		j, err := bd.jsonbCast(v)
		if err != nil {
			return nil, err
		}
		return j.e, nil
	}
	return bd.jsonDoc(v)
}

// jsonFragment binds v as the JSON text to_json writes of it (nil: an untyped NULL, JSON
// null): text quoted, integers, numerics and floats as their text (NaN and the infinities
// quoted, as not JSON numbers), booleans true and false, json and jsonb as they are (the
// value column as json). An untyped literal is text (literal true) or PostgreSQL's 42804.
// Other types (dates, timestamps, intervals, bytea) are refused by name.
func (bd *binder) jsonFragment(fname string, v bval, literal bool) (expr.Expression, error) {
	v, err := bd.padded(v) // a character(n) value's JSON string is its output, padding and all
	if err != nil {
		return nil, err
	}
	switch {
	case v.null && v.untyped():
		if !literal {
			return nil, refused(InvalidArgument, "42804", "could not determine polymorphic type because input has type unknown")
		}
		return nil, nil
	case v.untyped():
		if !literal {
			return nil, refused(InvalidArgument, "42804", "could not determine polymorphic type because input has type unknown")
		}
		e, err := bd.coerce(v, strType(), "")
		if err != nil {
			return nil, err
		}
		return bd.fn(URNPostgres, "json_quote", binType(), e)
	case v.json || v.jsonb:
		return v.e, nil
	case v.bytea || isIntervalVal(v):
		return nil, unimplemented(fname + " of " + opTypeName(v))
	}
	switch familyOf(v.typ()) {
	case famBinary:
		return v.e, nil
	case famString:
		return bd.fn(URNPostgres, "json_quote", binType(), v.e)
	case famInt, famBool:
		return bd.asText(v)
	case famNumeric, famFloat:
		t, err := bd.asText(v)
		if err != nil {
			return nil, err
		}
		return bd.fn(URNPostgres, "json_number", binType(), t)
	}
	return nil, unimplemented(fname + " of " + opTypeName(v))
}

// jsonKeyText binds a json_build_object key: a scalar's text (a json or jsonb key is
// PostgreSQL's 22023), an untyped NULL left to the kernel's "argument n cannot be null".
func (bd *binder) jsonKeyText(fname string, v bval) (expr.Expression, error) {
	v, err := bd.padded(v) // a character(n) key keeps its padding
	if err != nil {
		return nil, err
	}
	switch {
	case v.null && v.untyped():
		return expr.NewNullLiteral(strType().WithNullability(nullableN)), nil
	case v.json || v.jsonb:
		return nil, refused(InvalidArgument, "22023", "key value must be scalar, not array, composite, or json")
	case v.untyped():
		return bd.coerce(v, strType(), "")
	case v.bytea || isIntervalVal(v):
		return nil, unimplemented(fname + " with a key of " + opTypeName(v))
	}
	switch familyOf(v.typ()) {
	case famString, famInt, famBool, famNumeric, famFloat:
		return bd.asText(v)
	}
	return nil, unimplemented(fname + " with a key of " + opTypeName(v))
}

// docResult marks a function's result json or jsonb.
func docResult(f expr.Expression, err error, jsonb bool) (bval, error) {
	v := typed(f)
	v.json, v.jsonb = !jsonb, jsonb
	return v, err
}

// jsonFunc binds PostgreSQL's json and jsonb functions other than json[b]_typeof (ok false
// for another name): json[b]_array_length, json[b]_strip_nulls, jsonb_pretty,
// json[b]_extract_path[_text], to_json[b] and json[b]_build_object/array.
func (bd *binder) jsonFunc(name string, args []bval) (bval, bool, error) {
	jsonb := strings.HasPrefix(name, "jsonb") || name == "to_jsonb"
	one := func() (expr.Expression, error) {
		if len(args) != 1 {
			return nil, errorf(InvalidArgument, "%s takes 1 argument(s)", name)
		}
		return bd.jsonArg(name, args[0], jsonb, args)
	}
	switch name {
	case "json_array_length", "jsonb_array_length":
		doc, err := one()
		if err != nil {
			return bval{}, true, err
		}
		f, err := bd.fn(URNPostgres, "json_array_length", i32Type(), doc)
		return typed(f), true, err
	case "json_strip_nulls", "jsonb_strip_nulls":
		doc, err := one()
		if err != nil {
			return bval{}, true, err
		}
		f, err := bd.fn(URNPostgres, name, binType(), doc)
		v, err := docResult(f, err, jsonb)
		return v, true, err
	case "jsonb_pretty":
		doc, err := one()
		if err != nil {
			return bval{}, true, err
		}
		f, err := bd.fn(URNPostgres, name, strType(), doc)
		return typed(f), true, err
	case "json_extract_path", "json_extract_path_text", "jsonb_extract_path", "jsonb_extract_path_text":
		if len(args) < 2 {
			return bval{}, true, errorf(InvalidArgument, "%s takes a document and at least one key", name)
		}
		doc, err := bd.jsonArg(name, args[0], jsonb, args)
		if err != nil {
			return bval{}, true, err
		}
		es := []types.FuncArg{doc}
		for _, a := range args[1:] {
			e, err := bd.coerce(a, strType(), "a key of "+name)
			if err != nil {
				return bval{}, true, err
			}
			es = append(es, e)
		}
		if strings.HasSuffix(name, "_text") {
			f, err := bd.fn(URNPostgres, "json_path_text", strType(), es...)
			return typed(f), true, err
		}
		f, err := bd.fn(URNPostgres, "json_path", binType(), es...)
		v, err := docResult(f, err, jsonb)
		return v, true, err
	case "to_json", "to_jsonb":
		if len(args) != 1 {
			return bval{}, true, errorf(InvalidArgument, "%s takes 1 argument(s)", name)
		}
		if args[0].null && args[0].untyped() {
			return bval{}, true, refused(InvalidArgument, "42804", "could not determine polymorphic type because input has type unknown")
		}
		frag, err := bd.jsonFragment(name, args[0], false)
		if err != nil {
			return bval{}, true, err
		}
		v := typed(frag)
		v.json = true
		if jsonb {
			v, err = bd.jsonbCast(v)
		}
		return v, true, err
	case "json_build_object", "jsonb_build_object", "json_build_array", "jsonb_build_array":
		object := strings.HasSuffix(name, "_object")
		if object && len(args)%2 != 0 {
			return bval{}, true, refused(InvalidArgument, "22023", "argument list must have even number of elements")
		}
		es := make([]types.FuncArg, len(args))
		for i, a := range args {
			var e expr.Expression
			var err error
			if object && i%2 == 0 {
				e, err = bd.jsonKeyText(name, a)
			} else if e, err = bd.jsonFragment(name, a, true); e == nil && err == nil {
				e = expr.NewNullLiteral(binType().WithNullability(nullableN))
			}
			if err != nil {
				return bval{}, true, err
			}
			es[i] = e
		}
		kernel := "json_build_array"
		if object {
			kernel = "json_build_object"
		}
		f, err := bd.fn(URNPostgres, kernel, binType(), es...)
		v := typed(f)
		v.json = true
		if err == nil && jsonb {
			v, err = bd.jsonbCast(v)
		}
		return v, true, err
	}
	return bval{}, false, nil
}

// jsonbOperator binds jsonb's operators @>, <@, ?, ||, - (of a key or an index) (ok false
// when neither operand is jsonb and op is not one of jsonb's own). An untyped operand beside
// jsonb is read as jsonb (@>, <@, ||) or text (?, -).
func (bd *binder) jsonbOperator(op string, l, r bval) (bval, bool, error) {
	switch op {
	case "@>", "<@", "?", "||", "-":
	default:
		return bval{}, false, nil
	}
	if !l.jsonb && (op == "-" || op == "||" && !r.jsonb) {
		return bval{}, false, nil
	}
	noOp := func() (bval, bool, error) {
		return bval{}, true, errorf(InvalidArgument, "operator does not exist: %s %s %s", jsonTypeName(l), op, jsonTypeName(r))
	}
	both := func() (expr.Expression, expr.Expression, error) {
		x, err := bd.jsonbCast(l)
		if err != nil {
			return nil, nil, err
		}
		y, err := bd.jsonbCast(r)
		return x.e, y.e, err
	}
	switch op {
	case "@>", "<@", "||":
		if !(l.jsonb || l.untyped()) || !(r.jsonb || r.untyped()) || l.untyped() && r.untyped() {
			textual := func(v bval) bool {
				return v.untyped() || !isIntervalVal(v) && !isJSONDoc(v) && familyOf(v.typ()) == famString
			}
			switch {
			case op == "||" && (textual(l) || textual(r)):
				return bval{}, false, nil // jsonb || text: text's concatenation
			case !isJSONDoc(l) && !isJSONDoc(r):
				return bval{}, false, nil
			}
			return noOp()
		}
		x, y, err := both()
		if err != nil {
			return bval{}, true, err
		}
		if op == "<@" {
			x, y = y, x
		}
		if op == "||" {
			f, err := bd.fn(URNPostgres, "jsonb_concat", binType(), x, y)
			v, err := docResult(f, err, true)
			return v, true, err
		}
		f, err := bd.fn(URNPostgres, "jsonb_contains", booleanType(), x, y)
		return typed(f), true, err
	}
	// ? and -: jsonb on the left, text (or an integer for -) on the right.
	if !l.jsonb {
		if !r.jsonb && !l.json {
			return bval{}, false, nil
		}
		return noOp()
	}
	doc, err := bd.jsonbCast(l)
	if err != nil {
		return bval{}, true, err
	}
	var key expr.Expression
	kernel := map[string]string{"?": "jsonb_exists", "-": "jsonb_delete"}[op]
	switch {
	case r.untyped() && !r.null:
		key, err = bd.coerce(r, strType(), "")
	case r.null && r.untyped():
		key = expr.NewNullLiteral(strType().WithNullability(nullableN))
	case !isIntervalVal(r) && familyOf(r.typ()) == famString:
		key = r.e
	case op == "-" && !isIntervalVal(r) && familyOf(r.typ()) == famInt:
		key, kernel = r.e, "jsonb_delete_idx"
		if numRank(r.typ()) > numRank(i32Type()) {
			return noOp()
		}
	default:
		return noOp()
	}
	if err != nil {
		return bval{}, true, err
	}
	if op == "?" {
		f, err := bd.fn(URNPostgres, kernel, booleanType(), doc.e, key)
		return typed(f), true, err
	}
	f, err := bd.fn(URNPostgres, kernel, binType(), doc.e, key)
	v, err := docResult(f, err, true)
	return v, true, err
}

// jsonbArrayOperator binds jsonb ?| ARRAY[…], jsonb ?& ARRAY[…] and jsonb - ARRAY[…] of
// text constants or '{…}' literals (ok false for other shapes): the array's elements become
// the kernel's arguments (a NULL element skipped, as PostgreSQL skips it; a NULL array is
// NULL).
func (bd *binder) jsonbArrayOperator(op string, a *pg.A_Expr, sc *scope) (bval, bool, error) {
	if op != "?|" && op != "?&" && op != "-" {
		return bval{}, false, nil
	}
	arr := a.GetRexpr().GetAArrayExpr()
	if tc := a.GetRexpr().GetTypeCast(); arr == nil && tc != nil && tc.GetArg().GetAArrayExpr() != nil {
		arr = tc.GetArg().GetAArrayExpr()
	}
	var lit *string
	if tc := a.GetRexpr().GetTypeCast(); arr == nil && tc != nil {
		if s := tc.GetArg().GetAConst().GetSval(); s != nil && len(tc.GetTypeName().GetArrayBounds()) > 0 {
			v := s.GetSval()
			lit = &v
		}
	}
	if arr == nil && lit == nil {
		if op == "-" {
			return bval{}, false, nil
		}
		return bval{}, true, unimplemented("jsonb " + op + " with an operand other than ARRAY[…] or '{…}'::text[]")
	}
	l, err := bd.bindExpr(a.GetLexpr(), sc)
	if err != nil {
		return bval{}, true, err
	}
	if !l.jsonb {
		if op == "-" {
			return bval{}, false, nil
		}
		return bval{}, true, errorf(InvalidArgument, "operator does not exist: %s %s text[]", jsonTypeName(l), op)
	}
	doc, err := bd.jsonbCast(l)
	if err != nil {
		return bval{}, true, err
	}
	es := []types.FuncArg{doc.e}
	if lit != nil {
		keys, err := parseArrayLiteral(*lit)
		if err != nil {
			return bval{}, true, err
		}
		for _, k := range keys {
			es = append(es, expr.NewPrimitiveLiteral(k, true))
		}
	} else {
		for _, el := range arr.GetElements() {
			v, err := bd.bindExpr(el, sc)
			if err != nil {
				return bval{}, true, err
			}
			e, err := bd.coerce(v, strType(), "an element of the array beside jsonb "+op)
			if err != nil {
				return bval{}, true, err
			}
			es = append(es, e)
		}
	}
	kernel := map[string]string{"?|": "jsonb_exists_any", "?&": "jsonb_exists_all", "-": "jsonb_delete_keys"}[op]
	if op == "-" {
		f, err := bd.fn(URNPostgres, kernel, binType(), es...)
		v, err := docResult(f, err, true)
		return v, true, err
	}
	f, err := bd.fn(URNPostgres, kernel, booleanType(), es...)
	return typed(f), true, err
}

// errJSONEquality is PostgreSQL's error for grouping or comparing json values, which have no
// equality operator (GROUP BY, DISTINCT, UNION, INTERSECT, EXCEPT, PARTITION BY).
var errJSONEquality = errorf(InvalidArgument, "could not identify an equality operator for type json")

// errJSONOrdering is PostgreSQL's error for ORDER BY of json values.
var errJSONOrdering = errorf(InvalidArgument, "could not identify an ordering operator for type json")

// docGroupKeys refuses grouping columns holding json (no equality: errJSONEquality) or jsonb
// (grouping by value: errJSONBGroup).
func docGroupKeys(cols []col) error {
	for _, c := range cols {
		switch {
		case c.domainKey:
			// bytewise (col.domainKey)
		case c.json:
			return errJSONEquality
		case c.jsonb:
			return errJSONBGroup
		}
	}
	return nil
}

// docSortKey is the expression ORDER BY sorts by for v bound to e: jsonb's sort key
// (jsonb_sortkey: its btree order) of a jsonb value; json has no ordering (errJSONOrdering);
// other values e itself.
func (bd *binder) docSortKey(v bval, e expr.Expression) (expr.Expression, error) {
	switch {
	case v.domainKey:
		return e, nil // bytewise (col.domainKey)
	case v.json:
		return nil, errJSONOrdering
	case v.jsonb:
		return bd.fn(URNPostgres, "jsonb_sortkey", binType(), e)
	}
	return e, nil
}

// docUnify resolves a list of values that meet in one column or result (VALUES, CASE,
// COALESCE, GREATEST/LEAST) as PostgreSQL resolves a json or jsonb value beside unknown
// literals (select_common_type: the literals take the typed values' type): when one is jsonb
// (json) and every other is jsonb (json) or an untyped literal or NULL, the literals are read
// as jsonb (jsonb_in), so the result is jsonb in jsonb's text, or as json documents, so the
// result is json, which has no equality (VALUES ('{}'::json), ('{}') cannot be grouped: 42883).
// Other lists are unchanged.
func (bd *binder) docUnify(vs []bval) ([]bval, error) {
	anyJSON, anyJSONB := false, false
	for _, v := range vs {
		switch {
		case v.json && !v.jsonb:
			anyJSON = true
		case v.jsonb:
			anyJSONB = true
		case !v.untyped():
			return vs, nil
		}
	}
	if anyJSON == anyJSONB {
		return vs, nil // neither, or json beside jsonb (commonType's to refuse)
	}
	out := make([]bval, len(vs))
	for i, v := range vs {
		var err error
		if anyJSONB {
			out[i], err = bd.jsonbCast(v)
		} else {
			out[i], err = bd.jsonLiteral(v)
		}
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// jsonLiteral is v read as a json document: v itself when it is one, an untyped literal (or
// NULL) as json, its text kept and validated (jsonIn). An untyped parameter is text, read by
// json_in (validated when the statement is bound with its value), as jsonbCast reads one: its
// declared type is utf8, which the JDBC driver fills from setString (PostgreSQL's json
// parameter takes the document's text).
func (bd *binder) jsonLiteral(v bval) (bval, error) {
	if !v.untyped() {
		return v, nil
	}
	t := binType()
	if v.param > 0 {
		t = strType()
	}
	e, err := bd.coerce(v, t, "")
	if err != nil || v.null {
		out := typed(e)
		out.json = true
		return out, err
	}
	return bd.jsonIn(e)
}

// jsonIn binds PostgreSQL's json_in of e, a text or binary expression: the value, validated as
// a json document (22P02 "invalid input syntax for type json" where it is not), marked json.
// A constant is validated here, as PostgreSQL reads a literal's input when it parses the
// statement ('ab'::json is 22P02 whatever rows the query reads), and is then the constant
// itself (a text one cast to binary); any other value (a column, an expression over one, a
// parameter not bound yet) is validated row by row, only where the query evaluates it.
func (bd *binder) jsonIn(e expr.Expression) (bval, error) {
	f, err := bd.fn(URNPostgres, "json_in", binType(), e)
	if err != nil {
		return bval{}, err
	}
	out := typed(f)
	out.json = true
	a, ok, err := bd.evalConstantErr(f)
	if err != nil {
		var de *Error
		if errors.As(err, &de) {
			return bval{}, de
		}
		return out, nil // not evaluable here: validated row by row
	}
	if ok {
		a.Release()
		// Validated: no need to check it again per row.
		if familyOf(e.GetType()) == famBinary {
			out.e = e
		} else {
			c, err := bd.cast(e, binType())
			if err != nil {
				return bval{}, err
			}
			out.e = c.e
		}
	}
	return out, nil
}

// docNullIf binds NULLIF(a, b) with a json or jsonb operand: NULL when a = b as jsonCompare
// compares them (jsonb by value; json has no = : 42883), else a, jsonb when both are (an
// untyped literal beside jsonb read as jsonb).
func (bd *binder) docNullIf(l, r bval) (bval, error) {
	eq, _, err := bd.jsonCompare("=", l, r)
	if err != nil {
		return bval{}, err
	}
	x, err := bd.jsonbCast(l)
	if err != nil {
		return bval{}, err
	}
	e, err := bd.ifThen([]expr.IfThenPair{{If: eq, Then: expr.NewNullLiteral(x.e.GetType().WithNullability(nullableN))}}, x.e)
	x.e = e
	return x, err
}

// jsonbGroupValue binds, above a grouped SELECT's aggregation, a jsonb expression e whose
// value the SELECT groups by (GROUP BY binds jsonb_sortkey(e), equal for values equal as
// jsonb): the group's value is one of its members, the least canonical text (min over the
// group; PostgreSQL shows the member it met first, '1.0' or '1'), jsonb. Outside this arm's
// grouping set it is NULL. ok is false when e is not jsonb or not grouped.
func (bd *binder) jsonbGroupValue(e bval, ac *aggCtx) (bval, bool, error) {
	if !e.jsonb || e.e == nil {
		return bval{}, false, nil
	}
	key, err := bd.fn(URNPostgres, "jsonb_sortkey", binType(), e.e)
	if err != nil {
		return bval{}, false, nil
	}
	out := bval{jsonb: true}
	switch {
	case containsExpr(ac.groups, key):
		f, err := expr.NewAggregateFunc(bd.reg, extensions.ID{URN: URNPostgres, Name: "min"}, nil, types.AggInvocationAll, types.AggPhaseInitialToResult, nil, e.e)
		if err != nil {
			return bval{}, true, fmt.Errorf("bind GROUP BY jsonb: %w", err)
		}
		out.e = ac.measure(bd.b.Measure(f, nil), binType().WithNullability(nullableN))
	case containsExpr(ac.nulled, key):
		out.e = expr.NewNullLiteral(binType().WithNullability(nullableN))
	default:
		return bval{}, false, nil
	}
	return out, true, nil
}

// distinctJSONB groups every column of br (SELECT DISTINCT, UNION), a jsonb column by value:
// by its sort key, the group showing its least canonical text (jsonbGroupValue's rule).
func (bd *binder) distinctJSONB(br *boundRel) (*boundRel, error) {
	if err := docGroupKeys(slices.DeleteFunc(slices.Clone(br.sc.cols), func(c col) bool { return c.jsonb })); err != nil {
		return nil, err
	}
	n := len(br.sc.cols)
	groups := make([]expr.Expression, n)
	var measures []plan.AggRelMeasure
	at := make([]int, n) // a jsonb column's measure, -1 for the others
	for i, c := range br.sc.cols {
		at[i] = -1
		groups[i] = br.sc.ref(i)
		if !c.jsonb {
			continue
		}
		key, err := bd.fn(URNPostgres, "jsonb_sortkey", binType(), groups[i])
		if err != nil {
			return nil, err
		}
		f, err := expr.NewAggregateFunc(bd.reg, extensions.ID{URN: URNPostgres, Name: "min"}, nil, types.AggInvocationAll, types.AggPhaseInitialToResult, nil, groups[i])
		if err != nil {
			return nil, fmt.Errorf("bind DISTINCT jsonb: %w", err)
		}
		groups[i] = key
		at[i] = len(measures)
		measures = append(measures, bd.b.Measure(f, nil))
	}
	rel, err := bd.b.AggregateExprs(br.rel, measures, groups)
	if err != nil {
		return nil, fmt.Errorf("bind distinct: %w", err)
	}
	asc := &scope{}
	for _, g := range groups {
		asc.cols = append(asc.cols, col{typ: g.GetType()})
	}
	for range measures {
		asc.cols = append(asc.cols, col{typ: binType().WithNullability(nullableN)})
	}
	es := make([]expr.Expression, n)
	for i := range es {
		es[i] = asc.ref(i)
		if at[i] >= 0 {
			es[i] = asc.ref(n + at[i])
		}
	}
	out, err := bd.project(&boundRel{rel: rel, sc: asc}, es, br.names)
	if err != nil {
		return nil, err
	}
	for i, c := range br.sc.cols {
		out.sc.cols[i] = c
		out.sc.cols[i].typ = es[i].GetType()
	}
	return out, nil
}
