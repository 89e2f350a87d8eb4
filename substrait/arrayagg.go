package substrait

import (
	"fmt"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/extensions"
	"github.com/substrait-io/substrait-go/v8/types"
)

// array_agg([DISTINCT] x [ORDER BY …]) [FILTER (WHERE …)]: PostgreSQL's array of the group's
// values, NULLs included (DISTINCT: each value once, one NULL, sorted), as a Substrait list
// of x's type (Arrow list; scan/aggregate arrayagg.go), for text, integer, bigint, double
// precision and boolean values; the ORDER BY as aggOrderBy reads it. Other element types are
// refused by name (UNIMPLEMENTED).

// arrayAggMeasure binds an array_agg call as a measure of ac.
func (bd *binder) arrayAggMeasure(fc *pg.FuncCall, ac *aggCtx) (bval, error) {
	args := fc.GetArgs()
	if len(args) != 1 {
		return bval{}, errorf(InvalidArgument, "function array_agg takes one argument")
	}
	if fc.GetAggWithinGroup() {
		return bval{}, errorf(InvalidArgument, "array_agg is not an ordered-set aggregate, so it cannot have WITHIN GROUP")
	}
	defer func() { bd.agg = ac }()
	filter, xv, err := bd.collectInput(fc, ac)
	if err != nil {
		return bval{}, err
	}
	x, err := bd.arrayAggElem(xv)
	if err != nil {
		return bval{}, err
	}
	sorts, err := bd.aggOrderBy(fc, x, ac)
	if err != nil {
		return bval{}, err
	}
	inv := types.AggInvocationAll
	if fc.GetAggDistinct() {
		inv = types.AggInvocationDistinct
	}
	f, err := expr.NewAggregateFunc(bd.reg, extensions.ID{URN: URNPostgres, Name: "array_agg"}, nil, inv, types.AggPhaseInitialToResult, sorts, x)
	if err != nil {
		return bval{}, fmt.Errorf("bind array_agg: %w", err)
	}
	return typed(ac.measure(bd.b.Measure(f, filter), &types.ListType{Type: x.GetType().WithNullability(nullableN), Nullability: nullableN})), nil
}

// arrayAggElem is the element of array_agg(xv) as the executor takes it: text (character(n)
// values keep their padding, as PostgreSQL's array elements do), integer (smallint widened),
// bigint, double precision or boolean; other types are refused by name.
func (bd *binder) arrayAggElem(xv bval) (expr.Expression, error) {
	xv, err := bd.padded(xv)
	if err != nil {
		return nil, err
	}
	x, err := bd.defaultType(xv)
	if err != nil {
		return nil, err
	}
	switch x.GetType().(type) {
	case *types.StringType, *types.Int32Type, *types.Int64Type, *types.Float64Type, *types.BooleanType:
	case *types.Int16Type, *types.Int8Type:
		return bd.coerce(typed(x), i32Type().WithNullability(x.GetType().GetNullability()), "")
	default:
		return nil, refused(Unimplemented, "0A000", "%s is not supported", "array_agg of "+typeName(x.GetType()))
	}
	return x, nil
}

// isArray reports a list (array) type.
func isArray(t types.Type) bool {
	_, ok := t.(*types.ListType)
	return ok
}

// arrayTextCast is an array's ::text (PostgreSQL's array_out, scan/ops arrays.go).
func (bd *binder) arrayTextCast(e expr.Expression) (bval, error) {
	f, err := bd.fn(URNPostgres, "array_text", strType(), e)
	return typed(f), err
}

// arrayToString binds array_to_string(array, separator[, null string]).
func (bd *binder) arrayToString(args []bval) (bval, error) {
	if len(args) < 2 || len(args) > 3 {
		return bval{}, errorf(InvalidArgument, "array_to_string takes 2 to 3 arguments")
	}
	if args[0].untyped() || !isArray(args[0].typ()) {
		return bval{}, errorf(InvalidArgument, "function array_to_string(%s, text) does not exist", typeNameOf(args[0]))
	}
	es := []types.FuncArg{args[0].e}
	for i, a := range args[1:] {
		e, err := bd.coerce(a, strType(), fmt.Sprintf("argument %d of array_to_string", i+2))
		if err != nil {
			return bval{}, err
		}
		es = append(es, e)
	}
	f, err := bd.fn(URNPostgres, "array_to_string", strType(), es...)
	return typed(f), err
}

// typeNameOf names a bound value's type (unknown for an untyped one).
func typeNameOf(v bval) string {
	if v.untyped() {
		return "unknown"
	}
	return typeName(v.typ())
}

// jsonAggMeasure binds json_agg(x [ORDER BY …]) and jsonb_agg(x [ORDER BY …]) (PostgreSQL
// 15's json_agg and jsonb_agg): the JSON array of what to_json (to_jsonb) makes of each row's
// x, a NULL x as null, in the ORDER BY's order (else the fragments' order, which PostgreSQL
// leaves unspecified too), written as PostgreSQL writes it ([1, "a", null]; jsonb_agg's
// elements as jsonb writes them), NULL over no row. It is string_agg's measure of each
// element's text with the separator ", ", bracketed; the values to_json refuses (dates,
// timestamps, intervals, bytea) are refused alike, and DISTINCT by name.
func (bd *binder) jsonAggMeasure(fc *pg.FuncCall, ac *aggCtx) (bval, error) {
	name := funcName(fc)
	jsonb := name == "jsonb_agg"
	args := fc.GetArgs()
	switch {
	case len(args) != 1:
		return bval{}, errorf(InvalidArgument, "function %s takes 1 argument(s)", name)
	case fc.GetAggWithinGroup():
		return bval{}, errorf(InvalidArgument, "%s is not an ordered-set aggregate, so it cannot have WITHIN GROUP", name)
	case fc.GetAggDistinct():
		return bval{}, unimplemented(name + "(DISTINCT …)")
	}
	defer func() { bd.agg = ac }()
	filter, v, err := bd.collectInput(fc, ac)
	if err != nil {
		return bval{}, err
	}
	frag, err := bd.jsonFragment(strings.Replace(name, "_agg", "", 1), v, false)
	if err != nil {
		return bval{}, err
	}
	doc := typed(frag)
	doc.json = true
	if jsonb {
		if doc, err = bd.jsonbCast(doc); err != nil {
			return bval{}, err
		}
	}
	text, err := bd.cast(doc.e, strType())
	if err != nil {
		return bval{}, err
	}
	nn, err := bd.fn(URNComparison, "is_not_null", booleanType(), text.e)
	if err != nil {
		return bval{}, err
	}
	elem, err := bd.ifThen([]expr.IfThenPair{{If: nn, Then: text.e}}, expr.NewPrimitiveLiteral("null", false))
	if err != nil {
		return bval{}, err
	}
	sorts, err := bd.aggOrderBy(fc, elem, ac)
	if err != nil {
		return bval{}, err
	}
	f, err := expr.NewAggregateFunc(bd.reg, extensions.ID{URN: URNPostgres, Name: "string_agg"}, nil, types.AggInvocationAll, types.AggPhaseInitialToResult,
		sorts, elem, expr.NewPrimitiveLiteral(", ", false))
	if err != nil {
		return bval{}, fmt.Errorf("bind %s: %w", name, err)
	}
	ref := ac.measure(bd.b.Measure(f, filter), strType())
	open, err := bd.fn(URNPostgres, "concat_strict", strType(), expr.NewPrimitiveLiteral("[", false), ref)
	if err != nil {
		return bval{}, err
	}
	arr, err := bd.fn(URNPostgres, "concat_strict", strType(), open, expr.NewPrimitiveLiteral("]", false))
	if err != nil {
		return bval{}, err
	}
	if jsonb {
		out, err := bd.fn(URNPostgres, "jsonb_in", binType(), arr)
		res := typed(out)
		res.jsonb = true
		return res, err
	}
	return bd.jsonIn(arr)
}

// collectInput binds the FILTER of fc, a collecting aggregate (array_agg, string_agg, json_agg,
// jsonb_agg), and its first argument over ac's input: an aggregate inside that argument is
// nested (42803). It leaves bd.agg nil, so that the rest of the call (its ORDER BY) binds over
// the input too; the caller restores bd.agg = ac when it is done.
func (bd *binder) collectInput(fc *pg.FuncCall, ac *aggCtx) (filter expr.Expression, v bval, err error) {
	arg := fc.GetArgs()[0]
	if containsAggregate(arg) {
		return nil, bval{}, errorf(InvalidArgument, "aggregate function calls cannot be nested")
	}
	bd.agg = nil
	if filter, err = bd.aggFilter(fc, ac); err != nil {
		return nil, bval{}, err
	}
	v, err = bd.bindExpr(arg, ac.in)
	return filter, v, err
}
