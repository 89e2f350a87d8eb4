package substrait

import (
	"fmt"
	"strconv"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/extensions"
	"github.com/substrait-io/substrait-go/v8/types"
)

// orderedSetMeasure binds PostgreSQL's ordered-set aggregates percentile_cont(f),
// percentile_disc(f) and mode() WITHIN GROUP (ORDER BY x [ASC|DESC]) as measures of ac
// (scan/aggregate orderedset.go evaluates them): f a numeric constant; percentile_cont's x
// double precision (integers and real converted, as PostgreSQL's implicit casts do), the
// others' x an integer or a float, computed in bigint or double precision and converted back
// to x's type (exact: the answer is one of the values). Other argument types, fractions that
// are not constants (or arrays of them) and ORDER BY … USING are refused by name.
func (bd *binder) orderedSetMeasure(fc *pg.FuncCall, ac *aggCtx) (bval, error) {
	name := funcName(fc)
	order := fc.GetAggOrder()
	if !fc.GetAggWithinGroup() || len(order) != 1 {
		return bval{}, &Error{Code: InvalidArgument, SQLState: "42809", Msg: fmt.Sprintf("WITHIN GROUP (ORDER BY one expression) is required for ordered-set aggregate %s", name)}
	}
	if fc.GetAggDistinct() {
		return bval{}, errorf(InvalidArgument, "cannot use DISTINCT with WITHIN GROUP")
	}
	want := 1
	if name == "mode" {
		want = 0
	}
	if len(fc.GetArgs()) != want {
		return bval{}, errorf(InvalidArgument, "%s takes %d direct argument(s)", name, want)
	}
	sb := order[0].GetSortBy()
	kind := types.SortAscNullsLast
	switch sb.GetSortbyDir() {
	case pg.SortByDir_SORTBY_DESC:
		kind = types.SortDescNullsFirst
	case pg.SortByDir_SORTBY_USING:
		return bval{}, unimplemented("WITHIN GROUP (ORDER BY … USING)")
	}
	var frac expr.Expression
	if want == 1 {
		c := fc.GetArgs()[0].GetAConst()
		var text string
		switch {
		case c != nil && c.GetIval() != nil:
			text = strconv.FormatInt(int64(c.GetIval().GetIval()), 10)
		case c != nil && c.GetFval() != nil:
			text = c.GetFval().GetFval()
		default:
			return bval{}, unimplemented(name + " of a fraction that is not a numeric constant")
		}
		f, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return bval{}, errorf(InvalidArgument, "invalid fraction of %s", name)
		}
		frac = expr.NewPrimitiveLiteral(f, false)
	}
	if containsAggregate(sb.GetNode()) {
		return bval{}, errorf(InvalidArgument, "aggregate function calls cannot be nested")
	}
	bd.agg = nil
	defer func() { bd.agg = ac }()
	filter, err := bd.aggFilter(fc, ac)
	if err != nil {
		return bval{}, err
	}
	x, err := bd.value(sb.GetNode(), ac.in)
	if err != nil {
		return bval{}, err
	}
	at := x.GetType()
	work := fp64Type()
	switch fam := familyOf(at); {
	case fam == famFloat:
	case fam == famInt && name == "percentile_cont":
	case fam == famInt:
		work = i64Type()
	default:
		return bval{}, refused(Unimplemented, "0A000", "%s is not supported", fmt.Sprintf("%s of %s", name, typeName(at)))
	}
	if x, err = bd.coerce(typed(x), work.WithNullability(at.GetNullability()), ""); err != nil {
		return bval{}, err
	}
	args := []types.FuncArg{x}
	if frac != nil {
		args = []types.FuncArg{frac, x}
	}
	f, err := expr.NewAggregateFunc(bd.reg, extensions.ID{URN: URNPostgres, Name: name}, nil, types.AggInvocationAll, types.AggPhaseInitialToResult,
		[]expr.SortField{{Expr: x, Kind: kind}}, args...)
	if err != nil {
		return bval{}, fmt.Errorf("bind %s: %w", name, err)
	}
	ac.measures = append(ac.measures, bd.b.Measure(f, filter))
	ac.mtypes = append(ac.mtypes, work)
	ref := ac.scope().ref(len(ac.groups) + len(ac.measures) - 1)
	if name == "percentile_cont" || sameType(work, at) {
		return typed(ref), nil
	}
	// Back to x's own type (the answer is one of x's values).
	return typed(&expr.Cast{Type: at.WithNullability(nullableN), Input: ref, FailureBehavior: types.BehaviorThrowException}), nil
}

// stringAggMeasure binds string_agg(x, separator [ORDER BY x [ASC|DESC]]) and
// string_agg(DISTINCT x, separator [ORDER BY x]) over text with a constant, non-null
// separator (scan/aggregate orderedset.go). Without ORDER BY the values come in the
// fragments' order (bucket by bucket), an order PostgreSQL leaves unspecified too; ORDER BY
// another expression, bytea and separators that are not constants are refused by name.
func (bd *binder) stringAggMeasure(fc *pg.FuncCall, ac *aggCtx) (bval, error) {
	args := fc.GetArgs()
	if len(args) != 2 {
		return bval{}, errorf(InvalidArgument, "function string_agg takes two arguments")
	}
	if fc.GetAggWithinGroup() {
		return bval{}, errorf(InvalidArgument, "string_agg is not an ordered-set aggregate, so it cannot have WITHIN GROUP")
	}
	if containsAggregate(args[0]) {
		return bval{}, errorf(InvalidArgument, "aggregate function calls cannot be nested")
	}
	sep, ok := textLiteral(args[1])
	if !ok {
		return bval{}, unimplemented("string_agg with a separator that is not a text constant")
	}
	bd.agg = nil
	defer func() { bd.agg = ac }()
	filter, err := bd.aggFilter(fc, ac)
	if err != nil {
		return bval{}, err
	}
	v, err := bd.bindExpr(args[0], ac.in)
	if err != nil {
		return bval{}, err
	}
	if !v.untyped() && familyOf(v.typ()) != famString {
		return bval{}, refused(Unimplemented, "0A000", "%s is not supported", "string_agg of "+typeName(v.typ()))
	}
	x, err := bd.coerce(v, strType(), "argument 1 of string_agg")
	if err != nil {
		return bval{}, err
	}
	sorts, err := bd.orderByValue(fc, x, ac, false)
	if err != nil {
		return bval{}, err
	}
	inv := types.AggInvocationAll
	if fc.GetAggDistinct() {
		inv = types.AggInvocationDistinct
	}
	f, err := expr.NewAggregateFunc(bd.reg, extensions.ID{URN: URNPostgres, Name: "string_agg"}, nil, inv, types.AggPhaseInitialToResult,
		sorts, x, expr.NewPrimitiveLiteral(sep, false))
	if err != nil {
		return bval{}, fmt.Errorf("bind string_agg: %w", err)
	}
	ac.measures = append(ac.measures, bd.b.Measure(f, filter))
	ac.mtypes = append(ac.mtypes, strType())
	return typed(ac.scope().ref(len(ac.groups) + len(ac.measures) - 1)), nil
}

// orderByValue reads the ORDER BY of string_agg or array_agg (fc), which flightsrv runs only
// by the aggregated value x itself, ascending (NULLs last) or descending (NULLs first); with
// nulls (array_agg, which keeps NULL values) an explicit NULLS FIRST/LAST is refused too.
// Anything else is refused by name.
func (bd *binder) orderByValue(fc *pg.FuncCall, x expr.Expression, ac *aggCtx, nulls bool) ([]expr.SortField, error) {
	order := fc.GetAggOrder()
	if len(order) == 0 {
		return nil, nil
	}
	sb := order[0].GetSortBy()
	var k expr.Expression
	if len(order) == 1 && sb.GetSortbyDir() != pg.SortByDir_SORTBY_USING && (!nulls || sb.GetSortbyNulls() == pg.SortByNulls_SORTBY_NULLS_DEFAULT) {
		var err error
		if k, err = bd.value(sb.GetNode(), ac.in); err != nil {
			return nil, err
		}
	}
	if k == nil || !k.Equals(x) {
		if nulls {
			return nil, unimplemented(funcName(fc) + " with ORDER BY other than its value (ASC or DESC)")
		}
		return nil, unimplemented(funcName(fc) + " with ORDER BY other than its value")
	}
	kind := types.SortAscNullsLast
	if sb.GetSortbyDir() == pg.SortByDir_SORTBY_DESC {
		kind = types.SortDescNullsFirst
	}
	return []expr.SortField{{Expr: x, Kind: kind}}, nil
}

// aggFilter binds an aggregate call's FILTER (WHERE …) over the aggregate's input: nil without
// one. The caller has left the aggregate context (bd.agg is nil).
func (bd *binder) aggFilter(fc *pg.FuncCall, ac *aggCtx) (expr.Expression, error) {
	f := fc.GetAggFilter()
	if f == nil {
		return nil, nil
	}
	if containsAggregate(f) {
		return nil, errorf(InvalidArgument, "aggregate functions are not allowed in FILTER")
	}
	v, err := bd.bindExpr(f, ac.in)
	if err != nil {
		return nil, err
	}
	return bd.coerce(v, booleanType(), "FILTER")
}
