package substrait

import (
	"fmt"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow/array"
	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/extensions"
	"github.com/substrait-io/substrait-go/v8/types"

	"github.com/flightsrv/flightsrv/internal/exprs"
)

// orderedSetMeasure binds PostgreSQL's ordered-set aggregates percentile_cont(f),
// percentile_disc(f) and mode() WITHIN GROUP (ORDER BY x [ASC|DESC]) as measures of ac
// (scan/aggregate orderedset.go evaluates them): f a numeric constant; percentile_cont's x
// double precision (integers and real converted, as PostgreSQL's implicit casts do) or an
// interval (of one fraction: interpolated as PostgreSQL interpolates intervals), the
// others' x an integer or a float, computed in bigint or double precision and converted back
// to x's type (exact: the answer is one of the values), and mode's also text, boolean, date,
// timestamp or numeric (of one display scale), as it is. Other argument types, fractions
// that are not constants (or arrays of them) and ORDER BY … USING are refused by name.
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
	multi := false    // an array of fractions
	nullFrac := false // a fraction parameter bound NULL
	if want == 1 {
		var err error
		arg := fc.GetArgs()[0]
		if tc := arg.GetTypeCast(); tc != nil && tc.GetArg().GetAArrayExpr() != nil {
			// ARRAY[…]::float8[] (numeric[]…): its fractions are read as double precision.
			arg = tc.GetArg()
		}
		if arr := arg.GetAArrayExpr(); arr != nil {
			multi = true
			frac, err = fractionArray(name, arr)
		} else if paramFraction(arg) {
			frac, err = bd.fractionParam(arg)
		} else {
			frac, err = fraction(name, fc.GetArgs()[0], false)
		}
		if err != nil {
			return bval{}, err
		}
		if _, null := frac.(*expr.NullLiteral); null && !multi {
			// A fraction bound NULL: the answer is NULL (the aggregate is strict in it),
			// computed over a stand-in fraction so that the plan's shape stays the same.
			nullFrac, frac = true, expr.NewPrimitiveLiteral(0.5, false)
		}
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
	xv, err := bd.bindExpr(sb.GetNode(), ac.in)
	if err != nil {
		return bval{}, err
	}
	switch {
	case xv.json:
		return bval{}, &Error{Code: InvalidArgument, SQLState: "42883", Msg: "could not identify an ordering operator for type json"}
	case xv.jsonb:
		return bval{}, unimplemented(name + " of jsonb")
	case xv.ds != nil && (name == "mode" || name == "percentile_disc"):
		// Each value's own display scale would be lost in the decimal column's.
		return bval{}, unimplemented(name + " of numeric values of varying display scale")
	case xv.bpchar > 0:
		return bval{}, unimplemented(name + " of character(n) values (cast them to text)")
	}
	x, err := bd.defaultType(xv)
	if err != nil {
		return bval{}, err
	}
	at := x.GetType()
	work := fp64Type()
	switch fam := familyOf(at); {
	case fam == famFloat:
	case fam == famInt && name == "percentile_cont":
	case fam == famInt && multi:
		// The lowering widens x to bigint and the answer's elements are x's type.
		work = at.WithNullability(nullableN)
	case fam == famInt:
		work = i64Type()
	case (name == "mode" || name == "percentile_disc" && !multi) && modeType(at):
		// As it is, on scan/aggregate's ordered store: percentile_disc of any type
		// PostgreSQL orders that the store orders as it does (its answer is one of the values).
		work = at.WithNullability(nullableN)
	case name == "percentile_cont" && isIntervalType(at):
		// PostgreSQL's percentile_cont(float8, interval) and percentile_cont(float8[],
		// interval): interpolated intervals (scan/aggregate's intervalContAcc).
		work = at.WithNullability(nullableN)
	case name == "percentile_cont" && !multi && !isIntervalType(at) && fam != famNumeric:
		// PostgreSQL has percentile_cont of double precision and interval alone (numeric
		// casts to double precision): 42883 for the others.
		ftype := "numeric"
		if c := fc.GetArgs()[0].GetAConst(); c != nil && c.GetIval() != nil {
			ftype = "integer"
		}
		return bval{}, errorf(InvalidArgument, "function percentile_cont(%s, %s) does not exist", ftype, typeName(at))
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
	id := extensions.ID{URN: URNPostgres, Name: name}
	if isIntervalType(at) {
		// The interval impl by its compound name: its declared argument is any1
		// (bindexpr.go's ownAggregates), which substrait-go's lookup by the arguments' own
		// signature (fp64_icompound) does not find.
		id.Name = "percentile_cont:fp64_any"
		if multi {
			id.Name = "percentile_cont:list_any"
		}
	}
	f, err := expr.NewAggregateFunc(bd.reg, id, nil, types.AggInvocationAll, types.AggPhaseInitialToResult,
		[]expr.SortField{{Expr: x, Kind: kind}}, args...)
	if err != nil {
		return bval{}, fmt.Errorf("bind %s: %w", name, err)
	}
	if multi {
		return typed(ac.measure(bd.b.Measure(f, filter), &types.ListType{Type: work.WithNullability(nullableN), Nullability: nullableN})), nil
	}
	ref := ac.measure(bd.b.Measure(f, filter), work)
	if name == "percentile_cont" || sameType(work, at) {
		if nullFrac {
			return typed(expr.NewNullLiteral(work.WithNullability(nullableN))), nil
		}
		return typed(ref), nil
	}
	if nullFrac {
		return typed(expr.NewNullLiteral(at.WithNullability(nullableN))), nil
	}
	// Back to x's own type (the answer is one of x's values).
	return typed(&expr.Cast{Type: at.WithNullability(nullableN), Input: ref, FailureBehavior: types.BehaviorThrowException}), nil
}

// fraction reads a percentile's fraction: a numeric constant, or NULL in an array (inArray).
func fraction(name string, n *pg.Node, inArray bool) (expr.Literal, error) {
	c := n.GetAConst()
	var text string
	switch {
	case c != nil && c.GetIval() != nil:
		text = strconv.FormatInt(int64(c.GetIval().GetIval()), 10)
	case c != nil && c.GetFval() != nil:
		text = c.GetFval().GetFval()
	case c != nil && c.GetIsnull() && inArray:
		return expr.NewNullLiteral(fp64Type()), nil
	case inArray:
		return nil, unimplemented(name + " of an array of fractions that are not numeric constants")
	default:
		return nil, unimplemented(name + " of a fraction that is not a numeric constant")
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil {
		return nil, errorf(InvalidArgument, "invalid fraction of %s", name)
	}
	return expr.NewPrimitiveLiteral(f, inArray), nil
}

// paramFraction reports whether a percentile's fraction n holds a parameter and no column
// (`percentile_cont(?)`, `percentile_cont(?::float8)`): a constant of each execution.
func paramFraction(n *pg.Node) bool {
	return hasParamRef(n) && !hasNode(n, func(x *pg.Node) bool {
		return x.GetColumnRef() != nil || x.GetFuncCall() != nil || x.GetSubLink() != nil
	})
}

// fractionParam binds a percentile's fraction holding a parameter as double precision (an
// untyped parameter is double precision, percentile_cont's and percentile_disc's argument
// type): its value when the statement is bound (a NULL answers NULL), 0.5 standing in at
// prepare time; the aggregate checks the value as it checks a constant's.
func (bd *binder) fractionParam(n *pg.Node) (expr.Expression, error) {
	v, err := bd.bindExpr(n, &scope{})
	if err != nil {
		return nil, err
	}
	e, err := bd.coerce(v, fp64Type(), "the fraction")
	if err != nil {
		return nil, err
	}
	if bd.ps.vals == nil {
		return expr.NewPrimitiveLiteral(0.5, false), nil
	}
	f, null, ok, err := oneValue[float64, *array.Float64](bd, e)
	switch {
	case err != nil:
		return nil, err
	case !ok:
		return nil, unimplemented("percentile of a fraction that is not a numeric constant or a parameter")
	case null:
		return expr.NewNullLiteral(fp64Type()), nil
	}
	return expr.NewPrimitiveLiteral(f, false), nil
}

// fractionArray reads ARRAY[f, …] of percentile_cont and percentile_disc: a one-dimensional
// list literal of double precision fractions (numeric constants or NULL; PostgreSQL's
// percentile_cont(float8[]) and percentile_disc(float8[]) answer an array of one element per
// fraction).
func fractionArray(name string, arr *pg.A_ArrayExpr) (expr.Expression, error) {
	var vals expr.ListLiteralValue
	for _, e := range arr.GetElements() {
		if e.GetAArrayExpr() != nil {
			return nil, unimplemented(name + " of a multidimensional array of fractions")
		}
		l, err := fraction(name, e, true)
		if err != nil {
			return nil, err
		}
		vals = append(vals, l)
	}
	return &expr.ListLiteral{Value: vals, Type: &types.ListType{Type: fp64Type(), Nullability: types.NullabilityRequired}}, nil
}

// modeType reports a type mode() takes as it is (scan/aggregate's ordered store): text,
// boolean, date, timestamps and numeric (integers and floats are widened to bigint and
// double precision).
func modeType(t types.Type) bool {
	switch t.(type) {
	case *types.StringType, *types.BooleanType, *types.DateType, *types.DecimalType, *types.PrecisionTimestampType, *types.PrecisionTimestampTzType:
		return true
	}
	return false
}

// stringAggMeasure binds string_agg(x, separator [ORDER BY …]) and string_agg(DISTINCT x,
// separator [ORDER BY x]) over text with a constant, non-null separator (scan/aggregate
// orderedset.go and arrayagg.go; aggOrderBy reads the ORDER BY). Without ORDER BY the values
// come in the fragments' order (bucket by bucket), an order PostgreSQL leaves unspecified too;
// bytea and separators that are not constants are refused by name.
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
	defer func() { bd.agg = ac }()
	filter, v, err := bd.collectInput(fc, ac)
	if err != nil {
		return bval{}, err
	}
	delim := "unknown" // the delimiter is a quoted constant, or one cast to text
	if args[1].GetTypeCast() != nil {
		delim = "text"
	}
	x, err := bd.stringAggValue(v, delim)
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
	f, err := expr.NewAggregateFunc(bd.reg, extensions.ID{URN: URNPostgres, Name: "string_agg"}, nil, inv, types.AggPhaseInitialToResult,
		sorts, x, expr.NewPrimitiveLiteral(sep, false))
	if err != nil {
		return bval{}, fmt.Errorf("bind string_agg: %w", err)
	}
	return typed(ac.measure(bd.b.Measure(f, filter), strType())), nil
}

// stringAggValue is the value of string_agg(v, delimiter) as the executor takes it: text (an
// untyped literal read as text, character(n) without its trailing spaces, as bpchar casts to
// text); string_agg of bytea and JSON documents is refused by name, of the other types
// (PostgreSQL has string_agg(text, text) and string_agg(bytea, bytea) alone) its 42883, delim
// naming the delimiter's type for the message.
func (bd *binder) stringAggValue(v bval, delim string) (expr.Expression, error) {
	if !v.untyped() && familyOf(v.typ()) != famString {
		if familyOf(v.typ()) == famBinary {
			return nil, refused(Unimplemented, "0A000", "%s is not supported", "string_agg of "+jsonTypeName(v))
		}
		return nil, errorf(InvalidArgument, "function string_agg(%s, %s) does not exist", jsonTypeName(v), delim)
	}
	return bd.coerce(v, strType(), "argument 1 of string_agg")
}

// aggOrderBy binds the ORDER BY of string_agg or array_agg (fc) over the aggregated value x:
// each key an expression of the aggregate's input, ASC or DESC, NULLS FIRST or LAST
// (PostgreSQL's defaults: last ascending, first descending), of a type the executor orders as
// PostgreSQL (scan/aggregate arrayagg.go: text in the "C" collation, integers, double
// precision, boolean, date, timestamp, numeric; smallint widened). With DISTINCT every key
// must be the value (PostgreSQL's 42P10), and array_agg(DISTINCT x ORDER BY x) takes only the
// default NULLs order. ORDER BY … USING, json and jsonb keys and other types are refused.
func (bd *binder) aggOrderBy(fc *pg.FuncCall, x expr.Expression, ac *aggCtx) ([]expr.SortField, error) {
	name := funcName(fc)
	var sorts []expr.SortField
	for _, o := range fc.GetAggOrder() {
		sb := o.GetSortBy()
		if sb.GetSortbyDir() == pg.SortByDir_SORTBY_USING {
			return nil, unimplemented(name + " with ORDER BY … USING")
		}
		v, err := bd.bindExpr(sb.GetNode(), ac.in)
		if err != nil {
			return nil, err
		}
		switch {
		case v.json:
			return nil, &Error{Code: InvalidArgument, SQLState: "42883", Msg: "could not identify an ordering operator for type json"}
		case v.jsonb:
			return nil, unimplemented(name + " ordered by jsonb")
		}
		k, err := bd.defaultType(v)
		if err != nil {
			return nil, err
		}
		switch k.GetType().(type) {
		case *types.StringType, *types.Int32Type, *types.Int64Type, *types.Float64Type, *types.BooleanType, *types.DateType,
			*types.PrecisionTimestampType, *types.PrecisionTimestampTzType, *types.DecimalType:
		case *types.Int16Type, *types.Int8Type:
			if k, err = bd.coerce(typed(k), i32Type().WithNullability(k.GetType().GetNullability()), ""); err != nil {
				return nil, err
			}
		default:
			return nil, refused(Unimplemented, "0A000", "%s is not supported", name+" ordered by "+typeName(k.GetType()))
		}
		kind := sortKind(sb)
		if fc.GetAggDistinct() {
			if !exprs.Same(k, x) {
				return nil, &Error{Code: InvalidArgument, SQLState: "42P10", Msg: "in an aggregate with DISTINCT, ORDER BY expressions must appear in argument list"}
			}
			if name == "array_agg" && (kind == types.SortAscNullsFirst || kind == types.SortDescNullsLast) {
				return nil, unimplemented("array_agg(DISTINCT …) with NULLS FIRST or LAST other than the default")
			}
		}
		sorts = append(sorts, expr.SortField{Expr: k, Kind: kind})
	}
	if fc.GetAggDistinct() && len(sorts) > 1 {
		// Every key is the value: the first decides.
		sorts = sorts[:1]
	}
	return sorts, nil
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
