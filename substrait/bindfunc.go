package substrait

import (
	"cmp"
	_ "embed"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/extensions"
	"github.com/substrait-io/substrait-go/v8/plan"
	"github.com/substrait-io/substrait-go/v8/types"

	"github.com/flightsrv/flightsrv/internal/calendar"
	"github.com/flightsrv/flightsrv/internal/pgnumfmt"
	"github.com/flightsrv/flightsrv/routing"
)

// aggregateNames are the aggregate functions the executor runs.
var aggregateNames = map[string]bool{"count": true, "sum": true, "avg": true, "min": true, "max": true,
	"stddev": true, "stddev_samp": true, "stddev_pop": true, "variance": true, "var_samp": true, "var_pop": true,
	"bool_and": true, "bool_or": true, "every": true, "percentile_cont": true, "percentile_disc": true, "mode": true,
	"string_agg": true, "array_agg": true, "json_agg": true, "jsonb_agg": true,
	"corr": true, "covar_pop": true, "covar_samp": true, "regr_avgx": true, "regr_avgy": true, "regr_count": true,
	"regr_intercept": true, "regr_r2": true, "regr_slope": true, "regr_sxx": true, "regr_sxy": true, "regr_syy": true,
	"bit_and": true, "bit_or": true, "bit_xor": true}

// avgScale is the scale of avg over integers, numeric as in PostgreSQL: each value is
// PostgreSQL's (the sum over the count at the scale numeric_div chooses, 16 to 20 digits
// after the point for groups of fewer than 10,000 rows) shown with zeros up to this scale,
// which one decimal column needs (PostgreSQL's display scale varies with the value). A value
// that does not fit it exactly is an error, never rounded (scan/aggregate numavg.go).
const avgScale = 20

// orderedSetAggregates are the aggregates written WITHIN GROUP (ORDER BY …).
var orderedSetAggregates = map[string]bool{"percentile_cont": true, "percentile_disc": true, "mode": true}

// aggregateAliases are PostgreSQL's other names of the aggregates above.
var aggregateAliases = map[string]string{"stddev": "stddev_samp", "variance": "var_samp", "every": "bool_and"}

// unsupportedAggregates are PostgreSQL's built-in aggregate functions the executor does not
// run yet: a call of one is an aggregate (the statement is grouped) refused by name, never
// taken for a scalar function over ungrouped columns.
var unsupportedAggregates = map[string]bool{
	"json_object_agg": true, "jsonb_object_agg": true,
	"xmlagg": true, "range_agg": true, "range_intersect_agg": true, "any_value": true,
}

func isAggregateCall(fc *pg.FuncCall) bool {
	name := funcName(fc)
	return fc.GetOver() == nil && (aggregateNames[name] || unsupportedAggregates[name] || fc.GetAggStar() || fc.GetAggWithinGroup())
}

// hasAggregate reports whether an aggregate call appears in the select list.
func hasAggregate(list []*pg.Node) bool {
	for _, n := range list {
		if containsAggregate(n) {
			return true
		}
	}
	return false
}

func sortHasAggregate(sorts []*pg.Node) bool {
	for _, n := range sorts {
		if containsAggregate(n.GetSortBy().GetNode()) {
			return true
		}
	}
	return false
}

// containsAggregate walks an expression (not into subqueries) for aggregate calls, the
// arguments and windows of window function calls included.
func containsAggregate(n *pg.Node) bool {
	return anyCall(n, isAggregateCall)
}

// aggCtx is the aggregation of a grouped SELECT being bound: grouping expressions over the
// input, the measures found so far, and their output types (the executor's: count int64,
// sum int64 or float64, avg float64, min/max the argument's type).
type aggCtx struct {
	in     *scope
	groups []expr.Expression
	// collations holds, per group, the COLLATE clauses its GROUP BY item is written under
	// (groupCollation): an expression matches a group only under the same ones.
	collations []string
	nulled     []expr.Expression // grouping expressions outside this grouping set: NULL
	measures   []plan.AggRelMeasure
	mtypes     []types.Type
	built      bool // the AggregateRel is built: no more measures (dscale.go)
	// keys indexes groups (group).
	keys exprIndex
}

// group returns the first group i that is the expression e (sameExpr) written under the
// COLLATE clauses coll (groupCollation), or -1.
func (ac *aggCtx) group(e expr.Expression, coll string) int {
	return ac.keys.find(ac.groups, e, func(i int) bool { return ac.collation(i) == coll })
}

// ref is the reference to column i of the aggregate's output (scope), typed as the column,
// without building the scope (O(groups + measures)) per reference.
func (ac *aggCtx) ref(i int) expr.Expression {
	var t types.Type
	if i < len(ac.groups) {
		t = ac.groups[i].GetType()
	} else {
		t = ac.mtypes[i-len(ac.groups)]
	}
	r, err := expr.NewRootFieldRefFromType(expr.NewStructFieldRef(int32(i)), t)
	if err != nil {
		panic(err) // a struct field reference from the root is always accepted
	}
	return r
}

// scope is the aggregate's output so far: the groups, then the measures, by their types.
func (ac *aggCtx) scope() *scope {
	sc := &scope{}
	for _, g := range ac.groups {
		sc.cols = append(sc.cols, col{typ: g.GetType()})
	}
	for _, t := range ac.mtypes {
		sc.cols = append(sc.cols, col{typ: t})
	}
	return sc
}

// measure adds m, whose output type is out, to the aggregation's measures and returns the
// reference to its output in the aggregate's scope (after the groups and earlier measures).
func (ac *aggCtx) measure(m plan.AggRelMeasure, out types.Type) expr.Expression {
	ac.measures = append(ac.measures, m)
	ac.mtypes = append(ac.mtypes, out)
	return ac.ref(len(ac.groups) + len(ac.measures) - 1)
}

// collation is the COLLATE clauses group i is written under ("" for none).
func (ac *aggCtx) collation(i int) string {
	if i < len(ac.collations) {
		return ac.collations[i]
	}
	return ""
}

// groupCollation names the COLLATE clauses n is written under, outermost first ("" for none),
// for matching an expression with a GROUP BY item as PostgreSQL matches them (the CollateExpr
// is part of the expression, even a bytewise collation's, which flightsrv binds as the value
// itself: GROUP BY x COLLATE "C" does not group x, PostgreSQL's 42803, while x COLLATE "C"
// is that group).
func groupCollation(n *pg.Node) string {
	var names []string
	for c := n.GetCollateClause(); c != nil; c = c.GetArg().GetCollateClause() {
		cn := c.GetCollname()
		if len(cn) == 0 {
			break
		}
		names = append(names, cn[len(cn)-1].GetString_().GetSval())
	}
	return strings.Join(names, " ")
}

// groupExpr binds one GROUP BY item: an ordinal or output name of the select list, or an
// expression over the input (PostgreSQL prefers input columns to output names). It returns
// the item's COLLATE clauses too (groupCollation of the node it binds).
func (bd *binder) groupExpr(n *pg.Node, items []bselItem, in *scope) (expr.Expression, string, error) {
	if err := nonIntegerConstant(n, "GROUP BY"); err != nil {
		return nil, "", err
	}
	if c := n.GetAConst(); c != nil && c.GetIval() != nil {
		pos := int(c.GetIval().GetIval())
		if pos < 1 || pos > len(items) {
			return nil, "", errorf(InvalidArgument, "GROUP BY position %d is not in select list", pos)
		}
		n = items[pos-1].node
		if containsAggregate(n) {
			return nil, "", errorf(InvalidArgument, "aggregate functions are not allowed in GROUP BY")
		}
	} else if cr := n.GetColumnRef(); cr != nil && len(cr.GetFields()) == 1 && cr.GetFields()[0].GetString_() != nil {
		name := cr.GetFields()[0].GetString_().GetSval()
		if _, err := in.lookup("", name); err != nil {
			for _, it := range items {
				if it.name == name {
					n = it.node
					break
				}
			}
		}
	}
	switch n.GetNode().(type) {
	case *pg.Node_GroupingSet:
		return nil, "", unimplementedAre("grouping sets, ROLLUP and CUBE nested in expressions")
	}
	if containsAggregate(n) {
		return nil, "", errorf(InvalidArgument, "aggregate functions are not allowed in GROUP BY")
	}
	v, err := bd.bindExpr(n, in)
	if err != nil {
		return nil, "", err
	}
	if v.json && !v.domainKey {
		return nil, "", errJSONEquality
	}
	e, err := bd.defaultType(v)
	if err == nil && v.jsonb && !v.domainKey {
		// jsonb groups by value: by its sort key, equal for equal values (jsonbGroupValue).
		e, err = bd.fn(URNPostgres, "jsonb_sortkey", binType(), e)
	}
	return e, groupCollation(n), err
}

// bindInAggregate binds n above the aggregation: aggregate calls become measures, expressions
// equal to a grouping expression become references to it.
func (bd *binder) bindInAggregate(n *pg.Node, sc *scope, ac *aggCtx) (bval, error) {
	switch v := n.GetNode().(type) {
	case *pg.Node_AConst, *pg.Node_ParamRef:
		return bd.bindPlain(n, sc)
	case *pg.Node_FuncCall:
		if isAggregateCall(v.FuncCall) {
			return bd.measure(v.FuncCall, ac)
		}
	case *pg.Node_GroupingFunc:
		return bd.groupingValue(v.GroupingFunc, ac)
	}
	if !containsAggregate(n) && !containsWindow(n) {
		bd.agg = nil
		e, err := bd.bindPlain(n, ac.in)
		bd.agg = ac
		if err == nil && e.e != nil {
			if i := ac.group(e.e, groupCollation(n)); i >= 0 {
				v := typed(ac.ref(i))
				v.bytea, v.json, v.jsonb, v.bpchar, v.typmod = e.bytea, e.json, e.jsonb, e.bpchar, e.typmod
				if e.ds != nil {
					v.ds = groupedScale(e.ds, ac)
				}
				return v, nil
			}
			if containsExpr(ac.nulled, e.e) {
				// Outside this arm's grouping set: NULL of the expression's type.
				v := typed(expr.NewNullLiteral(e.e.GetType().WithNullability(nullableN)))
				v.bpchar = e.bpchar
				return v, nil
			}
			if v, ok, err := bd.jsonbGroupValue(e, ac); ok {
				return v, err
			}
		}
		if err == nil && e.e == nil {
			return e, nil // a constant
		}
		if cr := n.GetColumnRef(); cr != nil {
			if err != nil {
				return bval{}, err
			}
			return bval{}, quoting(InvalidArgument, "42803", "column %q must appear in the GROUP BY clause or be used in an aggregate function", figureColname(n))
		}
		if ue, ok := errors.AsType[*Error](err); ok && ue.SQLState == "42883" {
			// PostgreSQL resolves functions while it transforms the expression and checks the
			// grouping after: first(x) of an ungrouped x is "function first(text) does not
			// exist".
			return bval{}, err
		}
		if err == nil {
			if _, lit := e.e.(expr.Literal); lit {
				return e, nil
			}
		}
	}
	return bd.bindPlain(n, sc)
}

// measure binds an aggregate call as a measure of ac and returns a reference to its output.
func (bd *binder) measure(fc *pg.FuncCall, ac *aggCtx) (bval, error) {
	name := funcName(fc)
	switch {
	case fc.GetOver() != nil:
		return bd.windowCall(fc, ac.in)
	case slices.ContainsFunc(fc.GetArgs(), containsWindow) || containsWindow(fc.GetAggFilter()):
		return bval{}, &Error{Code: InvalidArgument, SQLState: "42803", Msg: "aggregate function calls cannot contain window function calls"}
	case !aggregateNames[name] && !fc.GetAggStar():
		return bval{}, refused(Unimplemented, "0A000", "aggregate function %s is not supported", name)
	case orderedSetAggregates[name]:
		return bd.orderedSetMeasure(fc, ac)
	case name == "string_agg":
		return bd.stringAggMeasure(fc, ac)
	case name == "array_agg":
		return bd.arrayAggMeasure(fc, ac)
	case name == "json_agg" || name == "jsonb_agg":
		return bd.jsonAggMeasure(fc, ac)
	case len(fc.GetAggOrder()) > 0 || fc.GetAggWithinGroup():
		return bval{}, unimplementedAre("ordered aggregates")
	case fc.GetFuncVariadic():
		return bval{}, unimplemented("VARIADIC")
	}
	upper := strings.ToUpper(name)
	// Arguments and FILTER bind over the aggregate's input, outside the aggregate context.
	bd.agg = nil
	defer func() { bd.agg = ac }()
	filter, err := bd.aggFilter(fc, ac)
	if err != nil {
		return bval{}, err
	}
	invocation := types.AggInvocationAll
	if fc.GetAggDistinct() {
		invocation = types.AggInvocationDistinct
	}
	var (
		f      *expr.AggregateFunction
		out    types.Type
		aggds  dscale // the display scale of a numeric aggregate whose inputs' scales vary (dscale.go)
		bpchar int32  // min and max of character(n) values are character(n) (bpchar.go)
	)
	args := fc.GetArgs()
	if fc.GetAggStar() || (name == "count" && invocation == types.AggInvocationAll && len(args) == 1 && nonNullConstant(args[0])) {
		// COUNT(1) (any constant but NULL) counts rows as COUNT(*) does, and is planned as
		// it is, so that the stores answer it (pushdown).
		if name != "count" {
			// PostgreSQL looks up name() without arguments for name(*): 42883.
			return bval{}, errorf(InvalidArgument, "function %s() does not exist", name)
		}
		f, err = expr.NewAggregateFunc(bd.reg, extensions.ID{URN: URNAggregate, Name: "count"}, nil, types.AggInvocationAll, types.AggPhaseInitialToResult, nil)
		out = &types.Int64Type{Nullability: types.NullabilityRequired}
	} else {
		if slices.Contains(regressionAggregates, name) {
			return bd.regrMeasure(name, fc, filter, ac)
		}
		if len(args) != 1 {
			return bval{}, errorf(InvalidArgument, "%s takes exactly one argument", upper)
		}
		if containsAggregate(args[0]) {
			return bval{}, errorf(InvalidArgument, "aggregate function calls cannot be nested")
		}
		if (name == "sum" || name == "avg") && invocation != types.AggInvocationDistinct {
			if v, ok, err := bd.rawNumericAggregate(name, args[0], filter, ac); ok || err != nil {
				return v, err
			}
		}
		argv, err := bd.bindExpr(args[0], ac.in)
		if err != nil {
			return bval{}, err
		}
		if argv.json && invocation == types.AggInvocationDistinct {
			return bval{}, errJSONEquality
		}
		if argv.jsonb && invocation == types.AggInvocationDistinct && name != "count" {
			return bval{}, errJSONBGroup
		}
		arg, err := bd.defaultType(argv)
		if err == nil && argv.jsonb && invocation == types.AggInvocationDistinct {
			// count(DISTINCT jsonb) counts values: jsonb's sort key is equal for equal ones.
			arg, err = bd.fn(URNPostgres, "jsonb_sortkey", binType(), arg)
		}
		if err != nil {
			return bval{}, err
		}
		at := arg.GetType()
		fam := familyOf(at)
		id := extensions.ID{Name: name}
		if fam == famTime && (name == "sum" || name == "avg") {
			// sum and avg of times are of intervals (PostgreSQL's implicit cast), interval.
			if arg, err = bd.fn(URNPostgres, "time_interval", intervalType(), arg); err != nil {
				return bval{}, err
			}
			at, fam = arg.GetType(), famOther
		}
		if isIntervalType(at) {
			if (name == "sum" || name == "avg") && invocation != types.AggInvocationDistinct {
				return bd.intervalSum(name == "avg", arg, filter, ac)
			}
			switch {
			case name == "min" || name == "max":
				// Below, intervalExtremes.
			case name != "count" || invocation == types.AggInvocationDistinct:
				return bval{}, unimplemented(name + " of intervals")
			default:
				// count(interval) counts the values that are not NULL: those of their text.
				if arg, err = bd.fn(URNPostgres, "interval_text", strType(), arg); err != nil {
					return bval{}, err
				}
			}
		}
		switch name {
		case "count":
			// count(DISTINCT numeric) counts distinct values (1.5 and 1.50 are one, as in
			// PostgreSQL): the column's one scale holds every value exactly.
			id.URN, id.Name = URNAggregate, "count:any"
			out = &types.Int64Type{Nullability: types.NullabilityRequired}
		case "sum", "avg":
			if fam == famNumeric && name == "sum" {
				// functions_arithmetic_decimal's sum: decimal<38, s>, the exact total
				// (scan/aggregate decsum.go; past 38 digits 22003), of distinct values too
				// (distinct.go's distinctDec).
				id.URN = extensions.SubstraitDefaultURNPrefix + "functions_arithmetic_decimal"
				scale, _ := numScale(at)
				out = numType(scale)
				if argv.ds != nil {
					// PostgreSQL's sum shows the largest display scale of the group's values.
					if aggds, err = bd.maxScaleMeasure(argv, arg, invocation, filter, ac); err != nil {
						return bval{}, err
					}
				}
				break
			}
			if fam == famNumeric && name == "avg" && argv.ds != nil && invocation != types.AggInvocationDistinct {
				// PostgreSQL's numeric avg is numeric_div of the sum, whose display scale is
				// the largest of the values' (maxScaleMeasure), by the count.
				if _, err := argv.ds(); err != nil {
					return bval{}, refused(Unimplemented, "0A000", "avg of %s is not supported: cast it to numeric(p,s)", lostWhat(err))
				}
			}
			if fam == famNumeric && name == "avg" && (argv.ds == nil || invocation != types.AggInvocationDistinct) {
				return bd.numericAvg(fc, ac)
			}
			if fam == famNumeric {
				return bval{}, refused(Unimplemented, "0A000", "%s of a numeric whose display scale varies by row (an average, CASE of numerics of different scales) is not supported: cast it to numeric(p,s)", name)
			}
			if fam != famInt && fam != famFloat {
				return bval{}, errorf(InvalidArgument, "function %s(%s) does not exist", name, typeName(at))
			}
			id.URN = URNArithmetic
			if name == "sum" && isReal(at) {
				// sum(real) is real in PostgreSQL, added in single precision in the order the
				// rows come (float4pl; scan/aggregate's realSums). PostgreSQL sums the
				// distinct values in their sorted order, ours in the order they first come.
				if invocation == types.AggInvocationDistinct {
					return bval{}, errSumDistinctReal
				}
				out = fp32Type()
				break
			}
			if name == "avg" && fam == famInt {
				// avg of integers is numeric in PostgreSQL: sum / count at the scale
				// numeric_div chooses, shown at avgScale (scan/aggregate numavg.go).
				if numRank(at) < numRank(i64Type()) {
					if arg, err = bd.coerce(typed(arg), i64Type().WithNullability(at.GetNullability()), ""); err != nil {
						return bval{}, err
					}
				}
				id.URN, out = URNPostgres, numType(avgScale)
				break
			}
			if name == "avg" || fam == famFloat {
				if arg, err = bd.coerce(typed(arg), fp64Type().WithNullability(at.GetNullability()), ""); err != nil {
					return bval{}, err
				}
				out = fp64Type()
			} else {
				out = i64Type()
				if numRank(at) < numRank(i64Type()) {
					if arg, err = bd.coerce(typed(arg), i64Type().WithNullability(at.GetNullability()), ""); err != nil {
						return bval{}, err
					}
				} else if name == "sum" {
					// sum(bigint) is numeric in PostgreSQL: the exact total, never an overflow
					// (URNPostgres' sum, whose output is decimal<38,0>).
					id.URN, out = URNPostgres, numType(0)
				}
			}
		case "stddev", "stddev_samp", "stddev_pop", "variance", "var_samp", "var_pop":
			// PostgreSQL's float8 overloads (real and double precision input); integer and
			// numeric input return numeric (numericVariance).
			if fam == famInt || fam == famNumeric {
				if invocation == types.AggInvocationDistinct {
					return bval{}, unimplemented(name + "(DISTINCT …) of integers or numerics")
				}
				if argv.ds != nil {
					return bval{}, refused(Unimplemented, "0A000", "%s of a numeric whose display scale varies by row (an average, CASE of numerics of different scales) is not supported: cast it to numeric(p,s)", name)
				}
				return bd.numericVariance(cmp.Or(aggregateAliases[name], name), fc, func(n *pg.Node) (bval, error) {
					bd.agg = ac
					return bd.bindExpr(n, ac.scope())
				})
			}
			if fam != famFloat {
				return bval{}, errorf(InvalidArgument, "function %s(%s) does not exist", name, typeName(at))
			}
			// DISTINCT: float8_accum over each group's distinct values (scan/aggregate's
			// distinct measures; a real's distinct values are its doubles').
			if arg, err = bd.coerce(typed(arg), fp64Type().WithNullability(at.GetNullability()), ""); err != nil {
				return bval{}, err
			}
			id = extensions.ID{URN: URNPostgres, Name: cmp.Or(aggregateAliases[name], name)}
			out = fp64Type()
		case "bit_and", "bit_or", "bit_xor":
			// PostgreSQL's bit_and, bit_or and bit_xor of smallint, integer and bigint, of the
			// argument's type (scan/aggregate's bitFold); its bit(n) overloads are not
			// flightsrv's types.
			if fam != famInt {
				return bval{}, errorf(InvalidArgument, "function %s(%s) does not exist", name, jsonTypeName(argv))
			}
			if invocation == types.AggInvocationDistinct {
				if name == "bit_xor" {
					return bval{}, unimplemented("bit_xor(DISTINCT …)")
				}
				invocation = types.AggInvocationAll // of distinct values: the same fold
			}
			id.URN, out = URNPostgres, at.WithNullability(nullableN)
		case "bool_and", "bool_or", "every":
			if fam != famBool {
				return bval{}, errorf(InvalidArgument, "function %s(%s) does not exist", name, typeName(at))
			}
			// DISTINCT changes nothing: a conjunction or disjunction of distinct values.
			invocation = types.AggInvocationAll
			id = extensions.ID{URN: URNPostgres, Name: cmp.Or(aggregateAliases[name], name)}
			out = booleanType()
		case "min", "max":
			var ok bool
			if isIntervalType(at) {
				// PostgreSQL's interval_smaller and interval_larger (scan/aggregate's
				// intervalExtremes), by the compound name of the impl declaring any1
				// (ownAggregates), which a lookup by the argument's own signature does not find.
				// DISTINCT changes nothing of an extreme.
				id = extensions.ID{URN: URNPostgres, Name: name + ":any"}
				invocation, out = types.AggInvocationAll, at.WithNullability(nullableN)
				break
			}
			if fam == famNumeric {
				// functions_arithmetic_decimal's min and max: the value keeps its scale.
				// DISTINCT changes nothing of an extreme.
				id.URN, invocation = extensions.SubstraitDefaultURNPrefix+"functions_arithmetic_decimal", types.AggInvocationAll
				out = at.WithNullability(nullableN)
				if argv.ds != nil {
					aggds = extremeScale(name, argv.ds)
				}
				break
			}
			if id.URN, ok = minMaxURN(fam); !ok || fam == famBool || fam == famBinary {
				return bval{}, errorf(InvalidArgument, "function %s(%s) does not exist", name, jsonTypeName(argv))
			}
			out = at.WithNullability(nullableN)
			bpchar = argv.bpchar // min(bpchar) is bpchar, of the values without their padding
		default:
			return bval{}, unimplemented("aggregate function " + name)
		}
		f, err = expr.NewAggregateFunc(bd.reg, id, nil, invocation, types.AggPhaseInitialToResult, nil, arg)
		if err != nil {
			return bval{}, fmt.Errorf("bind %s: %w", name, err)
		}

	}
	if err != nil {
		return bval{}, fmt.Errorf("bind %s: %w", name, err)
	}
	v := typed(ac.measure(bd.b.Measure(f, filter), out))
	if name == "avg" && familyOf(out) == famNumeric {
		v.ds = bd.avgDisplayScale(fc, ac)
	}
	if aggds != nil {
		v.ds = aggds
	}
	v.bpchar = bpchar
	return v, nil
}

// maxScaleMeasure is the display scale of sum(x) of a numeric x whose display scale varies by
// row (CASE WHEN … THEN 1.0 ELSE 0 END, avg over a window): PostgreSQL's numeric addition
// keeps the larger display scale, so the sum shows the largest of the group's values that are
// not NULL — a measure max(CASE WHEN x IS NULL THEN NULL ELSE scale(x) END) of ac with the
// sum's FILTER. Of sum(DISTINCT x) it is refused by name (lostScale): which of the equal
// values 1.0 and 1 PostgreSQL keeps depends on its sort.
func (bd *binder) maxScaleMeasure(v bval, x expr.Expression, invocation types.AggregationInvocation, filter expr.Expression, ac *aggCtx) (dscale, error) {
	if invocation == types.AggInvocationDistinct {
		return lostScale("sum(DISTINCT …) of a numeric whose display scale varies by row"), nil
	}
	ds, err := v.ds()
	if err != nil {
		// The values' scales are lost (read from a subquery): so is the sum's, whose text
		// and quotients are refused naming them.
		return lostScale("sum of " + lostWhat(err)), nil
	}
	isNull, err := bd.fn(URNComparison, "is_null", booleanType(), x)
	if err != nil {
		return nil, err
	}
	scale, err := bd.ifThen([]expr.IfThenPair{{If: isNull, Then: expr.NewNullLiteral(i32Type().WithNullability(nullableN))}}, ds)
	if err != nil {
		return nil, err
	}
	f, err := expr.NewAggregateFunc(bd.reg, extensions.ID{URN: URNArithmetic, Name: "max"}, nil, types.AggInvocationAll, types.AggPhaseInitialToResult, nil, scale)
	if err != nil {
		return nil, fmt.Errorf("bind sum: %w", err)
	}
	ref := ac.measure(bd.b.Measure(f, filter), i32Type().WithNullability(nullableN))
	return func() (expr.Expression, error) { return ref, nil }, nil
}

// rawNumericScale is the scale at which sum and avg hold the values of text or double
// precision cast to numeric without a scale (rawNumericAggregate): 16 digits after the point,
// 22 before it; a value needing more is refused at run time (ops.ErrValueScale).
const rawNumericScale = 16

// rawNumericAggregate binds sum(x::numeric) and avg(x::numeric) of text or double precision x
// (ok false for any other argument, nothing bound), whose values each have their own display
// scale (numeric_in's digits after the point; float8_numeric's): PostgreSQL's sum is exact
// and shows the largest display scale of the group's values, its avg is numeric_div of that
// sum by the count. Three measures of ac over the same values and FILTER: the sum of the
// values held exactly at rawNumericScale (numeric_exact), the largest display scale
// (numeric_value_scale) and, for avg, the count; the average is numeric_div_exact of the sum
// (at that display scale) by the count, as numericDivide binds a quotient.
func (bd *binder) rawNumericAggregate(name string, n *pg.Node, filter expr.Expression, ac *aggCtx) (bval, bool, error) {
	if tc := n.GetTypeCast(); tc == nil || tc.GetArg().GetAConst() != nil {
		return bval{}, false, nil
	}
	inner, raw, err := bd.divOperand(n, ac.in)
	if err != nil || !raw {
		return bval{}, false, nil // bound again (and its error reported) as any argument
	}
	x, err := bd.fn(URNPostgres, "numeric_exact", numType(rawNumericScale), types.Enum(strconv.Itoa(rawNumericScale)), inner.e)
	if err != nil {
		return bval{}, true, err
	}
	scales, err := bd.fn(URNPostgres, "numeric_value_scale", i32Type(), inner.e)
	if err != nil {
		return bval{}, true, err
	}
	add := func(id extensions.ID, out types.Type, arg expr.Expression) (expr.Expression, error) {
		f, err := expr.NewAggregateFunc(bd.reg, id, nil, types.AggInvocationAll, types.AggPhaseInitialToResult, nil, arg)
		if err != nil {
			return nil, fmt.Errorf("bind %s: %w", name, err)
		}
		return ac.measure(bd.b.Measure(f, filter), out), nil
	}
	sum, err := add(extensions.ID{URN: extensions.SubstraitDefaultURNPrefix + "functions_arithmetic_decimal", Name: "sum"}, numType(rawNumericScale), x)
	if err != nil {
		return bval{}, true, err
	}
	ds, err := add(extensions.ID{URN: URNArithmetic, Name: "max"}, i32Type().WithNullability(nullableN), scales)
	if err != nil {
		return bval{}, true, err
	}
	if name == "sum" {
		v := typed(sum)
		v.ds = func() (expr.Expression, error) { return ds, nil }
		return v, true, nil
	}
	count, err := add(extensions.ID{URN: URNAggregate, Name: "count:any"}, &types.Int64Type{Nullability: types.NullabilityRequired}, x)
	if err != nil {
		return bval{}, true, err
	}
	zero := expr.NewPrimitiveLiteral(int32(0), false)
	q, err := bd.fn(URNPostgres, "numeric_div_exact", numType(quotientScale), types.Enum(strconv.Itoa(quotientScale)), sum, count, ds, zero)
	if err != nil {
		return bval{}, true, err
	}
	v := typed(q)
	v.ds = onceScale(func() (expr.Expression, error) {
		return bd.fn(URNPostgres, "numeric_div_scale", i32Type(), sum, count, ds, zero)
	})
	return v, true, nil
}

// numericAvg binds avg(x) of a numeric x whose values share its type's scale s (a column of
// numeric(p,s), a literal, arithmetic of those) as PostgreSQL's numeric_avg computes it: the
// exact sum (whose display scale is s, the largest of its values') divided by the count of
// values with numeric_div, at select_div_scale's scale (numericDivide: held exactly in a
// decimal<38, max(20, s)> column, each row's display scale beside it). The sum and the count
// are two measures of ac with fc's argument, FILTER and DISTINCT; a group without values
// has a NULL sum, so its average is NULL, never a division by zero.
func (bd *binder) numericAvg(fc *pg.FuncCall, ac *aggCtx) (bval, error) {
	vs, err := sumAndCount(fc, func(c *pg.FuncCall) (bval, error) { return bd.measure(c, ac) })
	if err != nil {
		return bval{}, err
	}
	bd.agg = ac
	return bd.numericBinary("/", vs[0], vs[1])
}

// numericVariance binds var_samp, var_pop, stddev_samp or stddev_pop (name) of integers or
// numerics of one scale s, the call fc, as PostgreSQL's numeric_stddev_internal computes it
// from the count N and the exact sums Sx and Sxx of the values and their squares (three
// measures of ac with fc's FILTER): NULL without values (var_samp and stddev_samp: with fewer
// than two), else the variance (N·Sxx − Sx²) / (N·(N − 1)) (var_pop: / N²) with numeric_div
// at select_div_scale's scale (numericDivide: the numerator's display scale 2s, held exactly
// at max(20, 2s) digits after the point, a quotient needing more refused at run time), or 0
// (display scale 0) where the numerator is not positive; the standard deviation is its
// square root at the same scale (numeric_sqrt_at, rounded half away from zero as sqrt_var
// rounds). Sxx past 38 digits is 22003. Over a window (fc's OVER), the three are window
// functions of the same window and the formula is each frame's. bind binds the formula.
func (bd *binder) numericVariance(name string, fc *pg.FuncCall, bind func(*pg.Node) (bval, error)) (bval, error) {
	arg := fc.GetArgs()[0]
	x := &pg.Node{Node: &pg.Node_TypeCast{TypeCast: &pg.TypeCast{Arg: arg,
		TypeName: &pg.TypeName{Names: []*pg.Node{pg.MakeStrNode("pg_catalog"), pg.MakeStrNode("numeric")}, Typemod: -1}, Location: -1}}}
	agg := func(fn string, a *pg.Node) *pg.Node {
		return &pg.Node{Node: &pg.Node_FuncCall{FuncCall: &pg.FuncCall{Funcname: []*pg.Node{pg.MakeStrNode(fn)}, Args: []*pg.Node{a},
			AggFilter: fc.GetAggFilter(), Over: fc.GetOver(), Funcformat: fc.GetFuncformat(), Location: fc.GetLocation()}}}
	}
	op := func(o string, l, r *pg.Node) *pg.Node {
		return pg.MakeAExprNode(pg.A_Expr_Kind_AEXPR_OP, []*pg.Node{pg.MakeStrNode(o)}, l, r, -1)
	}
	n, sx, sxx := agg("count", arg), agg("sum", x), agg("sum", op("*", x, x))
	num := op("-", op("*", n, sxx), op("*", sx, sx))
	den := op("*", n, n)
	least := int64(0)
	if strings.HasSuffix(name, "_samp") {
		den, least = op("*", n, op("-", n, pg.MakeAConstIntNode(1, -1))), 1
	}
	variance := pg.MakeCaseExprNode(nil, []*pg.Node{pg.MakeCaseWhenNode(op("<=", num, pg.MakeAConstIntNode(0, -1)), pg.MakeAConstIntNode(0, -1), -1)}, -1)
	variance.GetCaseExpr().Defresult = op("/", num, den)
	whole := pg.MakeCaseExprNode(nil, []*pg.Node{pg.MakeCaseWhenNode(op(">", n, pg.MakeAConstIntNode(least, -1)), variance, -1)}, -1)
	v, err := bind(whole)
	if err != nil || strings.HasPrefix(name, "var") {
		return v, err
	}
	s, ok := numScale(v.typ())
	if !ok || v.ds == nil {
		return bval{}, fmt.Errorf("bind %s: the variance is %s", name, typeName(v.typ()))
	}
	ds, err := v.ds()
	if err != nil {
		return bval{}, err
	}
	f, err := bd.fn(URNPostgres, "numeric_sqrt_at", numType(s), v.e, ds)
	if err != nil {
		return bval{}, err
	}
	out := typed(f)
	out.ds = v.ds
	return out, nil
}

// aggregate builds the AggregateRel of ac over in.
func (bd *binder) aggregate(in *boundRel, ac *aggCtx) (*boundRel, error) {
	var groups [][]expr.Expression
	if len(ac.groups) > 0 {
		groups = [][]expr.Expression{ac.groups}
	}
	// Interval keys group as PostgreSQL's interval_cmp compares them (scan/aggregate's
	// intervalSpanKey: '1 mon' and '30 days' are one group, shown as one of its values).
	var (
		rel *plan.AggregateRel
		err error
	)
	if len(ac.groups) == 0 {
		measures := ac.measures
		if len(measures) == 0 {
			// One group and no value of it read (an empty grouping set of ROLLUP, CUBE or
			// GROUPING SETS whose select list holds no aggregate): Substrait needs a
			// grouping or a measure, so the group's rows are counted, a column no
			// reference of the scope reaches.
			f, err := expr.NewAggregateFunc(bd.reg, extensions.ID{URN: URNAggregate, Name: "count"}, nil, types.AggInvocationAll, types.AggPhaseInitialToResult, nil)
			if err != nil {
				return nil, fmt.Errorf("bind aggregate: %w", err)
			}
			measures = []plan.AggRelMeasure{bd.b.Measure(f, nil)}
		}
		rel, err = bd.b.GetRelBuilder().AggregateRel(in.rel, measures).Build()
	} else {
		rel, err = bd.b.AggregateExprs(in.rel, ac.measures, groups...)
	}
	if err != nil {
		return nil, fmt.Errorf("bind aggregate: %w", err)
	}
	sc := ac.scope()
	if len(sc.cols) == 0 {
		// The count above: a column of the relation, unnamed, so that the select list's
		// projection emits its own columns after it.
		sc.cols = append(sc.cols, col{typ: &types.Int64Type{Nullability: types.NullabilityRequired}, hidden: true})
	}
	return &boundRel{rel: rel, sc: sc}, nil
}

// funcCall binds a scalar function call (aggregates outside an aggregate context are errors).
func (bd *binder) funcCall(fc *pg.FuncCall, sc *scope) (bval, error) {
	name := funcName(fc)
	switch {
	case name == deferredValueFn || name == deferredErrorFn:
		return bd.bindDeferred(name, fc, sc)
	case fc.GetOver() != nil:
		return bd.windowCall(fc, sc)
	case isAggregateCall(fc):
		return bval{}, errorf(InvalidArgument, "aggregate functions are not allowed here")
	case fc.GetAggDistinct() || fc.GetAggFilter() != nil || len(fc.GetAggOrder()) > 0:
		if !pgFunctions()[name] {
			// A function PostgreSQL lacks (ibis' FIRST(x ORDER BY …)): ParseFuncOrColumn's
			// 42883 comes before its check of DISTINCT, FILTER and ORDER BY.
			args := make([]bval, len(fc.GetArgs()))
			for i, a := range fc.GetArgs() {
				v, err := bd.bindExpr(a, sc)
				if err != nil {
					return bval{}, err
				}
				args[i] = v
			}
			return bval{}, noSuchFunction(name, args)
		}
		return bval{}, errorf(InvalidArgument, "%s is not an aggregate function", name)
	case fc.GetFuncVariadic():
		return bval{}, unimplemented("VARIADIC")
	case windowWithoutOver(name, len(fc.GetArgs())):
		// PostgreSQL's ParseFuncOrColumn: a window function found without OVER.
		return bval{}, refused(InvalidArgument, "42809", "window function %s requires an OVER clause", name)
	}
	rawArgs := fc.GetArgs()
	args := make([]bval, len(rawArgs))
	var first *bval // the first argument when numericRoundCall bound it already
	bindArgs := func() error {
		// width_bucket's operand and bounds: a decimal constant past 38 digits beside a
		// double precision is one (PostgreSQL resolves width_bucket(float8, …) there).
		var wide wideConsts
		for i, a := range rawArgs {
			if i == 0 && first != nil {
				args[0] = *first
				continue
			}
			var v bval
			var err error
			fval := a.GetAConst().GetFval().GetFval()
			f, ferr := strconv.ParseFloat(fval, 64)
			switch {
			case name == "width_bucket" && i < 3:
				v, err = wide.bind(bd, a, sc, i)
			case name == "to_timestamp" && len(rawArgs) == 1 && fval != "" && ferr == nil:
				// to_timestamp(double precision) of a decimal constant, which PostgreSQL
				// reads as a float8 (past numeric's 38 digits too: to_timestamp(1e300) is
				// its 22008).
				v = typed(expr.NewPrimitiveLiteral(f, false))
			default:
				v, err = bd.bindExpr(a, sc)
			}
			if err != nil {
				return err
			}
			args[i] = v
		}
		return wide.resolve(args[:min(len(args), 3)])
	}
	nargs := func(lo, hi int) error {
		if len(rawArgs) < lo || len(rawArgs) > hi {
			if lo == hi {
				return errorf(InvalidArgument, "%s takes %d argument(s)", name, lo)
			}
			return errorf(InvalidArgument, "%s takes %d to %d arguments", name, lo, hi)
		}
		return nil
	}
	text := func(i int) (expr.Expression, error) {
		shown := name // as PostgreSQL names it: the SQL-syntax forms (TRIM, POSITION…) qualified
		if fn := fc.GetFuncname(); len(fn) == 2 && fn[0].GetString_().GetSval() == "pg_catalog" {
			shown = "pg_catalog." + fn[1].GetString_().GetSval()
		}
		return bd.textArg(shown, args, i)
	}
	call := func(urn string, out types.Type, es ...expr.Expression) (bval, error) {
		fa := make([]types.FuncArg, len(es))
		for i, e := range es {
			fa[i] = e
		}
		f, err := bd.fn(urn, name, out, fa...)
		return typed(f), err
	}
	switch name {
	case "version":
		return typed(expr.NewPrimitiveLiteral(Version, true)), nargs(0, 0)
	case "current_setting":
		return bd.currentSetting(rawArgs)
	case "current_database", "current_catalog":
		return typed(expr.NewPrimitiveLiteral(catalogName, true)), nargs(0, 0)
	case "current_schema":
		return typed(expr.NewPrimitiveLiteral("public", true)), nargs(0, 0)
	case "current_user", "session_user", "user":
		return typed(expr.NewPrimitiveLiteral(bd.user(), true)), nargs(0, 0)
	case "now", "transaction_timestamp", "statement_timestamp":
		if err := nargs(0, 0); err != nil {
			return bval{}, err
		}
		return bd.stable(tsLiteral(bd.clock()))
	case "date_trunc", "date_bin":
		return bd.timeBin(fc, sc)
	case "make_interval":
		return bd.makeInterval(fc)
	case "row_to_json":
		// Its argument is a row (a whole-row reference, ROW(…)), which flightsrv does not bind.
		return bval{}, unimplemented("row_to_json")
	case "round", "trunc", "ceil", "ceiling", "floor":
		v, ok, err := bd.numericRoundCall(name, rawArgs, sc, &first)
		if ok {
			return v, err
		}
	}
	if err := bindArgs(); err != nil {
		return bval{}, err
	}
	if name == "log10" {
		// log10(x) is PostgreSQL's other name of log(x), of double precision and numeric
		// (ibis compiles its log10 to it); it has no other form.
		if len(args) != 1 {
			return bval{}, noSuchFunction(name, args)
		}
		name = "log"
	}
	if name == "to_timestamp" && len(args) == 1 && !args[0].untyped() && familyOf(args[0].typ()) == famNumeric {
		// to_timestamp takes double precision: PostgreSQL casts a numeric argument
		// (to_timestamp(986860800.5)) implicitly.
		f, _, err := bd.castFromNumeric(args[0].e, &types.Float64Type{Nullability: args[0].typ().GetNullability()})
		if err != nil {
			return bval{}, err
		}
		args[0] = f
	}
	if name == "array_to_string" {
		return bd.arrayToString(args)
	}
	if v, ok, err := bd.jsonFunc(name, args); ok {
		return v, err
	}
	if err := integerPositions(fc, name, args); err != nil {
		return bval{}, err
	}
	if v, ok, err := bd.numericCall(name, rawArgs, args); ok {
		return v, err
	}
	switch name {
	case "scale":
		return bd.numericScaleOf(args)
	case "div", "to_hex":
		return bd.divHex(name, args)
	case "sha224", "sha256", "sha384", "sha512", "encode":
		return bd.shaDigest(name, args)
	case "decode":
		return bd.decodeCall(args)
	case "convert_to":
		return bd.convertTo(args)
	case "cbrt":
		return bd.cbrtCall(args)
	case "string_to_array":
		return bd.stringToArray(args)
	case "get_byte":
		return bd.getByte(args)
	case "gcd", "lcm":
		if err := nargs(2, 2); err != nil {
			return bval{}, err
		}
		return bd.intGcdLcm(name, args)
	case "age":
		return bd.age(args)
	case "justify_hours", "justify_days", "justify_interval":
		if err := nargs(1, 1); err != nil {
			return bval{}, err
		}
		return bd.justify(name, args[0])
	case "lower", "upper", "btrim", "ltrim", "rtrim", "trim":
		if err := nargs(1, 2); err != nil {
			return bval{}, err
		}
		if name == "trim" {
			name = "btrim"
		}
		es := make([]expr.Expression, len(args))
		for i := range args {
			e, err := text(i)
			if err != nil {
				return bval{}, err
			}
			es[i] = e
		}
		if (name == "lower" || name == "upper") && len(es) != 1 {
			return bval{}, errorf(InvalidArgument, "%s takes 1 argument(s)", name)
		}
		return call(URNPostgres, strType(), es...)
	case "ascii":
		// PostgreSQL's ascii(text): the first character's code point (integer), 0 of ''. No
		// other type casts to text implicitly (42883).
		if err := nargs(1, 1); err != nil {
			return bval{}, err
		}
		if !args[0].untyped() && (familyOf(args[0].typ()) != famString || args[0].json || args[0].jsonb) {
			return bval{}, noSuchFunction(name, args)
		}
		e, err := text(0)
		if err != nil {
			return bval{}, err
		}
		return call(URNPostgres, i32Type(), e)
	case "length", "char_length", "character_length", "octet_length":
		if err := nargs(1, 1); err != nil {
			return bval{}, err
		}
		if isJSONDoc(args[0]) {
			// json and jsonb cast to text explicitly only: length(json) does not exist.
			return bval{}, noSuchFunction(name, args)
		}
		if isBytes := familyOf(args[0].typ()) == famBinary; isBytes || name == "octet_length" {
			// PostgreSQL: length(bytea) and octet_length count bytes; char_length(bytea)
			// does not exist.
			if isBytes && name != "length" && name != "octet_length" {
				return bval{}, errorf(InvalidArgument, "function %s(bytea) does not exist", name)
			}
			name = "octet_length"
			e := args[0].e
			if args[0].bpchar > 0 {
				// bpcharoctetlen counts the padding's bytes too.
				p, err := bd.padded(args[0])
				if err != nil {
					return bval{}, err
				}
				e = p.e
			} else if !isBytes {
				var err error
				if e, err = text(0); err != nil {
					return bval{}, err
				}
			}
			return bd.integerLength(call(URNPostgres, i64Type(), e))
		}
		e, err := text(0)
		if err != nil {
			return bval{}, err
		}
		name = "char_length"
		return bd.integerLength(call(URNPostgres, i64Type(), e))
	case "substring", "substr":
		if err := nargs(2, 3); err != nil {
			return bval{}, err
		}
		if name == "substring" && len(args) == 3 && (args[1].untyped() || familyOf(args[1].typ()) != famInt) &&
			(args[2].str != nil || (!args[2].untyped() && familyOf(args[2].typ()) == famString) ||
				!args[0].bytea && args[1].untyped() && args[2].untyped() && (args[1].param > 0 || args[2].param > 0)) {
			// Two arguments of type unknown after a text are text, the SIMILAR form, as
			// PostgreSQL resolves substring(text, unknown, unknown) (its parameters prepare
			// as text); an integer among them makes it substring(text, integer, integer)
			// (substring(s FROM 2 FOR '3'): the '3' an integer).
			return bval{}, unimplemented("substring(… FROM pattern FOR escape) (a SIMILAR pattern)")
		}
		if name == "substring" && len(args) == 2 && (args[1].str != nil || (!args[1].untyped() && familyOf(args[1].typ()) == famString) ||
			!args[0].bytea && args[1].param > 0 && args[1].untyped()) {
			// An untyped parameter is text there too, the pattern, as PostgreSQL resolves
			// substring(text, unknown): substring('abc123' FROM $1) prepares a text $1.
			return bd.regexpSearch("substring_regex", args) // substring(s FROM pattern): a POSIX regular expression
		}
		if args[0].bytea {
			return bd.byteaSubstring(name, args)
		}
		s, err := text(0)
		if err != nil {
			return bval{}, err
		}
		es := []expr.Expression{s}
		for i := 1; i < len(args); i++ {
			e, err := bd.int4Arg(args[i], fmt.Sprintf("argument %d of %s", i+1, name))
			if err != nil {
				return bval{}, err
			}
			es = append(es, e)
		}
		name = "substring"
		return call(URNPostgres, strType(), es...)
	case "ceil", "ceiling", "floor", "trunc", "round", "sign", "sqrt", "exp", "ln", "log", "power", "pow", "mod":
		return bd.mathFunc(name, fc.GetArgs(), args, nargs, call, func(n string) { name = n })
	case "left", "right", "repeat", "split_part", "strpos", "position", "lpad", "rpad", "initcap", "reverse":
		if name == "position" {
			if len(args) == 2 && args[0].bytea && args[1].bytea {
				// position(bytea, bytea): PostgreSQL's byteapos.
				f, err := bd.fn(URNPostgres, "bytea_position", i32Type().WithNullability(nullableN), args[0].e, args[1].e)
				return typed(f), err
			}
			if len(args) == 2 && (args[0].bytea || args[1].bytea) {
				return bval{}, refused(Unimplemented, "0A000", "function position(%s) is not supported", argTypeNames(args))
			}
			name = "strpos" // POSITION(sub IN s) is position(s, sub)
		}
		return bd.stringFunc(name, args, nargs, text, call)
	case "regexp_replace":
		return bd.regexpReplace(args)
	case "regexp_match":
		return bval{}, regexpMatchArray(args)
	case "regexp_count", "regexp_substr":
		return bd.regexpSearch(name, args)
	case "regexp_matches", "regexp_split_to_array", "regexp_split_to_table", "regexp_instr", "regexp_like":
		return bval{}, quoting(Unimplemented, "0A000", "function %s is not supported", name)
	case "replace", "translate":
		if err := nargs(3, 3); err != nil {
			return bval{}, err
		}
		es := make([]expr.Expression, 3)
		for i := range es {
			e, err := text(i)
			if err != nil {
				return bval{}, err
			}
			es[i] = e
		}
		return call(URNPostgres, strType(), es...)
	case "starts_with":
		if err := nargs(2, 2); err != nil {
			return bval{}, err
		}
		a, err := text(0)
		if err != nil {
			return bval{}, err
		}
		b, err := text(1)
		if err != nil {
			return bval{}, err
		}
		return call(URNPostgres, booleanType(), a, b)
	case "concat":
		if len(args) == 0 {
			return bval{}, errorf(InvalidArgument, "concat takes at least one argument")
		}
		es := make([]expr.Expression, len(args))
		for i, a := range args {
			e, err := bd.outputText(a)
			if err != nil {
				return bval{}, err
			}
			es[i] = e
		}
		return call(URNPostgres, strType(), es...)
	case "format", "concat_ws":
		// format(fmt, arg…) and concat_ws(sep, a, …): the first argument is text, each other
		// its output function's text (as concat writes it), as PostgreSQL's text_format and
		// concat_ws read them (ops format and concat_ws). format() without
		// arguments and concat_ws without one after the separator are PostgreSQL's 42883.
		if name == "format" && len(args) < 1 || name == "concat_ws" && len(args) < 2 {
			return bval{}, errorf(InvalidArgument, "function %s(%s) does not exist", name, argTypeNames(args))
		}
		es := make([]expr.Expression, len(args))
		for i, a := range args {
			var err error
			if i == 0 {
				es[i], err = text(0)
			} else {
				es[i], err = bd.outputText(a)
			}
			if err != nil {
				return bval{}, err
			}
		}
		return call(URNPostgres, strType(), es...)
	case "make_date":
		// make_date(integer, integer, integer): smallint and integer arguments (and untyped
		// constants) as PostgreSQL's implicit casts take them; others are its 42883.
		if err := nargs(3, 3); err != nil {
			return bval{}, err
		}
		es := make([]expr.Expression, 3)
		for i, a := range args {
			if !a.untyped() && (familyOf(a.typ()) != famInt || numRank(a.typ()) > numRank(i32Type())) {
				return bval{}, errorf(InvalidArgument, "function make_date(%s) does not exist", argTypeNames(args))
			}
			e, err := bd.coerce(a, i32Type(), fmt.Sprintf("argument %d of make_date", i+1))
			if err != nil {
				return bval{}, err
			}
			if a.param > 0 && a.untyped() {
				bd.ps.noteInt4Arg(a.param) // make_date(integer, integer, integer)
			}
			es[i] = e
		}
		return call(URNPostgres, dateType(), es...)
	case "pg_typeof":
		if err := nargs(1, 1); err != nil {
			return bval{}, err
		}
		if !bd.typeofCalls[fc] {
			return bval{}, unimplemented("pg_typeof other than as a column of the statement's select list (its regtype compares and sorts by the type's OID)")
		}
		return bd.pgTypeof(args[0])
	case "make_timestamp", "make_timestamptz":
		return bd.makeTimestamp(name, args, call)
	case "width_bucket":
		return bd.widthBucket(rawArgs, args, call)
	case "json_typeof", "jsonb_typeof":
		// jsonb_typeof(jsonb) reads jsonb (an untyped literal through jsonb_in); json_typeof
		// json. Neither takes the other's type (42883), as in PostgreSQL.
		if err := nargs(1, 1); err != nil {
			return bval{}, err
		}
		a := args[0]
		if a.jsonb != (name == "jsonb_typeof") && !a.untyped() {
			return bval{}, errorf(InvalidArgument, "function %s(%s) does not exist", name, jsonTypeName(a))
		}
		if name == "jsonb_typeof" {
			j, err := bd.jsonbCast(a)
			if err != nil {
				return bval{}, err
			}
			a = j
		}
		doc, err := bd.jsonDoc(a)
		if err != nil {
			return bval{}, err
		}
		f, err := bd.fn(URNPostgres, "json_typeof", strType(), doc)
		return typed(f), err
	case "chr":
		if err := nargs(1, 1); err != nil {
			return bval{}, err
		}
		if err := integerArgs("chr", args, 0); err != nil {
			return bval{}, err
		}
		e, err := bd.int4Arg(args[0], "argument 1 of chr")
		if err != nil {
			return bval{}, err
		}
		return call(URNPostgres, strType(), e)
	case "quote_ident", "quote_literal", "quote_nullable":
		return bd.quoteFunc(name, args, nargs, text)
	case "overlay":
		// overlay(s PLACING t FROM n [FOR m]), the grammar's overlay(s, t, n[, m]), of text.
		if err := nargs(3, 4); err != nil {
			return bval{}, err
		}
		if err := integerArgs("pg_catalog.overlay", args, 2); err != nil {
			return bval{}, err
		}
		es := make([]expr.Expression, len(args))
		for i := range args {
			var err error
			if i < 2 {
				es[i], err = text(i)
			} else {
				es[i], err = bd.int4Arg(args[i], fmt.Sprintf("argument %d of overlay", i+1))
			}
			if err != nil {
				return bval{}, err
			}
		}
		return call(URNPostgres, strType(), es...)
	case "like_escape":
		return bd.likeEscapeCall(args)
	case "md5":
		// md5(text) and md5(bytea): the digest of the bytes as 32 hexadecimal digits.
		if err := nargs(1, 1); err != nil {
			return bval{}, err
		}
		if !args[0].untyped() && (familyOf(args[0].typ()) == famBinary || args[0].bytea) {
			return call(URNPostgres, strType(), args[0].e)
		}
		e, err := text(0)
		if err != nil {
			return bval{}, err
		}
		return call(URNPostgres, strType(), e)
	case "convert_from":
		if err := nargs(2, 2); err != nil {
			return bval{}, err
		}
		enc := args[1].str
		if enc == nil || !strings.EqualFold(strings.ReplaceAll(*enc, "-", ""), "utf8") {
			return bval{}, unimplemented("convert_from from an encoding other than UTF8")
		}
		if args[0].untyped() || familyOf(args[0].typ()) != famBinary {
			return bval{}, errorf(InvalidArgument, "convert_from needs a bytea value")
		}
		// scan/ops' convert_from_utf8: bytes that are not UTF-8, or hold a NUL, are 22021.
		f, err := bd.fn(URNPostgres, "convert_from_utf8", strType(), args[0].e)
		return typed(f), err
	case "date_part", "extract":
		if err := nargs(2, 2); err != nil {
			return bval{}, err
		}
		if args[0].str == nil {
			return bval{}, unimplemented(name + " with a field that is not a constant")
		}
		field := strings.ToUpper(strings.TrimSpace(*args[0].str))
		switch field {
		case "DAYOFWEEK":
			field = "DOW"
		case "DAYOFYEAR":
			field = "DOY"
		case "J", "JD":
			field = "JULIAN" // PostgreSQL's datetktbl spellings of julian
		default:
			// PostgreSQL reads a unit by its spellings (DecodeUnits: plurals, abbreviations,
			// extract(milliseconds …), date_part('c', …)).
			if u, ok := lookupUnit(field); ok {
				field = strings.ToUpper(strings.TrimSuffix(u, "s"))
			}
		}
		if isTimeVal(args[1]) {
			return bd.timeExtract(name, field, *args[0].str, args[1])
		}
		if isIntervalVal(args[1]) {
			return bd.intervalPart(name, field, args[1])
		}
		if args[1].untyped() && args[1].param == 0 && (args[1].str != nil || args[1].null) {
			// A string constant or NULL: PostgreSQL's candidates (timestamp, timestamp with
			// time zone, date, time, interval…) tie, its 42725.
			fn := name
			if name == "extract" {
				fn = "pg_catalog.extract"
			}
			return bval{}, refused(InvalidArgument, "42725", "function %s(unknown, unknown) is not unique", fn)
		}
		if !datePartFields[field] {
			// PostgreSQL's other fields of a timestamp are refused by name (0A000); a
			// name it does not know is its 22023 "not recognized".
			if pgDatePartFields[field] {
				return bval{}, refused(Unimplemented, "0A000", "%s of the field %s is not supported", name, strings.ToLower(field))
			}
			typ := "timestamp with time zone"
			if !args[1].untyped() && (familyOf(args[1].typ()) == famTimestamp || familyOf(args[1].typ()) == famDate) {
				typ = typeName(args[1].typ())
			}
			return bval{}, quoting(InvalidArgument, "22023", "unit %q not recognized for type "+typ, strings.ToLower(*args[0].str))
		}
		if field == "JULIAN" && name == "extract" {
			// extract(julian from a date) is the Julian day; from a timestamp PostgreSQL
			// answers the day's fraction too, in a numeric whose scale follows the value
			// (numeric_div's), which is not computed here.
			if args[1].untyped() || familyOf(args[1].typ()) != famDate {
				return bval{}, unimplemented("extract(julian from a timestamp)")
			}
			field = "JULIAN_DAY"
		}
		if name == "extract" {
			return bd.extract(field, *args[0].str, args[1])
		}
		ts, err := bd.dateOrTimestamp(args[1], "argument 2 of "+name)
		if err != nil {
			return bval{}, err
		}
		// date_part is double precision, as PostgreSQL types it: the fields with a fraction
		// from the kernel's float64, the others its int64 cast.
		fraction := field == "EPOCH" || field == "SECOND" || field == "MILLISECOND" || field == "JULIAN"
		out := i64Type()
		if fraction {
			out = fp64Type()
		}
		f, err := expr.NewCustomScalarFunc(bd.reg, extensions.NewScalarFuncVariant(extensions.ID{URN: URNPostgres, Name: "date_part"}), out, nil, types.Enum(field), ts)
		if err != nil || fraction {
			return typed(f), err
		}
		return bd.cast(f, fp64Type())
	case "date":
		// date(x) is PostgreSQL's function-style cast x::date (ibis writes DATE(ts)).
		if err := nargs(1, 1); err != nil {
			return bval{}, err
		}
		if args[0].untyped() {
			e, err := bd.coerce(args[0], dateType(), "argument 1 of date")
			return typed(e), err
		}
		return bd.cast(args[0].e, dateType())
	case "timezone":
		if err := nargs(2, 2); err != nil {
			return bval{}, err
		}
		return bd.atTimeZone(args[0], args[1])
	case "to_timestamp":
		if err := nargs(1, 2); err != nil {
			return bval{}, err
		}
		return bd.bindToTimestamp(args)
	case "to_date":
		if err := nargs(2, 2); err != nil {
			return bval{}, err
		}
		return bd.bindToDate(args)
	case "to_char":
		if err := nargs(2, 2); err != nil {
			return bval{}, err
		}
		if !args[0].untyped() {
			switch familyOf(args[0].typ()) {
			case famInt, famNumeric, famFloat:
				// to_char of a number: PostgreSQL's numeric_to_char, int4/int8_to_char and
				// float4/float8_to_char (internal/pgnumfmt), every pattern. A constant template
				// PostgreSQL rejects is its error (42601) here; another template is parsed by
				// the kernel, a rejected one the row's error.
				if s := args[1].str; s != nil {
					if _, err := pgnumfmt.Parse(*s); err != nil {
						var e *pgnumfmt.Error
						if errors.As(err, &e) {
							return bval{}, refused(InvalidArgument, e.Code, "to_char: %s", e.Msg)
						}
						return bval{}, err
					}
				}
				f, err := text(1)
				if err != nil {
					return bval{}, err
				}
				fn, err := bd.fn(URNPostgres, "to_char_number", strType(), args[0].e, f)
				return typed(fn), err
			}
		}
		if isIntervalVal(args[0]) || isTimeVal(args[0]) {
			// interval_to_char: the timestamp template over the interval's fields (scan/ops
			// tocharinterval.go); a time is its interval (PostgreSQL's implicit cast).
			iv, err := bd.intervalValue(args[0], "argument 1 of to_char")
			if err != nil {
				return bval{}, err
			}
			f, err := text(1)
			if err != nil {
				return bval{}, err
			}
			fn, err := bd.fn(URNPostgres, "to_char_interval", strType(), iv, f)
			return typed(fn), err
		}
		if !args[0].untyped() && isWallclock(args[0].typ()) {
			// timestamp_to_char: the kernel writes no zone name for a timestamp without time
			// zone (scan/ops ToCharWallclock).
			f, err := text(1)
			if err != nil {
				return bval{}, err
			}
			return call(URNPostgres, strType(), args[0].e, f)
		}
		ts, err := bd.dateOrTimestamp(args[0], "argument 1 of to_char")
		if err != nil {
			return bval{}, err
		}
		f, err := text(1)
		if err != nil {
			return bval{}, err
		}
		return call(URNPostgres, strType(), ts, f)
	case "abs":
		if err := nargs(1, 1); err != nil {
			return bval{}, err
		}
		if args[0].untyped() || (familyOf(args[0].typ()) != famInt && familyOf(args[0].typ()) != famFloat) {
			return bval{}, errorf(InvalidArgument, "abs needs a number")
		}
		return call(URNArithmetic, args[0].typ().WithNullability(nullableN), args[0].e)
	case "coalesce":
		return bd.coalesce(rawArgs, sc)
	case "nullif":
		if err := nargs(2, 2); err != nil {
			return bval{}, err
		}
	}
	return bval{}, unknownFunction(name, args)
}

// widthBucket binds width_bucket(operand, low, high, count) as PostgreSQL resolves it: of
// integers, double precision and unknown constants, width_bucket_float8 (ops width_bucket);
// with a numeric among them (and no double precision), PostgreSQL's numeric form, refused by
// name, as the form over a thresholds array. count is an integer (a bigint is 42883).
func (bd *binder) widthBucket(raw []*pg.Node, args []bval, call func(string, types.Type, ...expr.Expression) (bval, error)) (bval, error) {
	if len(args) == 2 {
		return bval{}, refused(Unimplemented, "0A000", "width_bucket over an array of thresholds is not supported")
	}
	if len(args) != 4 {
		return bval{}, errorf(InvalidArgument, "function width_bucket(%s) does not exist", argTypeNames(args))
	}
	numeric, float := false, false
	for i, a := range args[:3] {
		switch {
		case raw[i].GetAConst().GetFval() != nil || !a.untyped() && familyOf(a.typ()) == famNumeric:
			numeric = true
		case !a.untyped() && familyOf(a.typ()) == famFloat:
			float = true
		case !a.untyped() && familyOf(a.typ()) != famInt:
			return bval{}, errorf(InvalidArgument, "function width_bucket(%s) does not exist", argTypeNames(args))
		}
	}
	if c := args[3]; !c.untyped() && (familyOf(c.typ()) != famInt || numRank(c.typ()) > numRank(i32Type())) {
		return bval{}, errorf(InvalidArgument, "function width_bucket(%s) does not exist", argTypeNames(args))
	}
	if numeric && !float {
		return bval{}, refused(Unimplemented, "0A000", "width_bucket of numeric is not supported: cast the operand and bounds to double precision")
	}
	es := make([]expr.Expression, 4)
	for i, a := range args {
		t := fp64Type()
		if i == 3 {
			t = i32Type()
		}
		e, err := bd.coerce(a, t, fmt.Sprintf("argument %d of width_bucket", i+1))
		if err != nil {
			return bval{}, err
		}
		es[i] = e
	}
	return call(URNPostgres, i32Type(), es...)
}

// outputText is the text PostgreSQL's output function writes of v, as concat and concat_ws
// write their arguments: asText's (the cast to text), but a boolean is t or f (boolout), where
// its cast to text (and ||) is true or false, and a character(n) value keeps its padding
// (bpcharout), which its cast to text drops.
func (bd *binder) outputText(v bval) (expr.Expression, error) {
	if v.bpchar > 0 {
		p, err := bd.padded(v) // bpcharout writes the padding
		return p.e, err
	}
	if v.untyped() || familyOf(v.typ()) != famBool {
		return bd.asText(v)
	}
	isNull, err := bd.fn(URNComparison, "is_null", booleanType(), v.e)
	if err != nil {
		return nil, err
	}
	return bd.ifThen([]expr.IfThenPair{{If: isNull, Then: expr.NewNullLiteral(strType())}, {If: v.e, Then: expr.NewPrimitiveLiteral("t", false)}},
		expr.NewPrimitiveLiteral("f", false))
}

// pgFunctions are the names of PostgreSQL 15's functions (pg_proc's pronames in pg_catalog:
// SELECT DISTINCT proname FROM pg_proc WHERE pronamespace = 'pg_catalog'::regnamespace),
// one a line.
//
//go:embed pgproc.txt
var pgFunctionNames string

var pgFunctions = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, n := range strings.Split(strings.TrimSpace(pgFunctionNames), "\n") {
		m[n] = true
	}
	return m
})

// unknownFunction refuses a call of a function the binder does not implement, as PostgreSQL's
// catalog decides: a function PostgreSQL has is refused by name, 0A000 feature_not_supported
// (UNIMPLEMENTED); any other name is PostgreSQL's own error, 42883 undefined_function
// "function f(argument types) does not exist" (INVALID_ARGUMENT), whose name is the client's
// text (the log line holds <identifier>).
func unknownFunction(name string, args []bval) *Error {
	if pgFunctions()[name] {
		return refused(Unimplemented, "0A000", "function %s is not supported", name)
	}
	return noSuchFunction(name, args)
}

// byteaFunctions are PostgreSQL's text functions that have a bytea variant too (PostgreSQL
// 15's pg_proc): an argument of one of them that is bytea is refused by name, not as a
// function that does not exist.
var byteaFunctions = map[string]bool{
	"length": true, "octet_length": true, "bit_length": true, "substring": true, "substr": true, "position": true,
	"overlay": true, "btrim": true, "ltrim": true, "rtrim": true, "trim": true, "md5": true,
}

// textArg is argument i of the text function name coerced to text. A typed argument of
// another type is PostgreSQL's 42883 "function name(types) does not exist": no type casts
// to text implicitly; bytea, for the functions that have a bytea variant flightsrv does not
// implement, is refused by name (0A000).
func (bd *binder) textArg(name string, args []bval, i int) (expr.Expression, error) {
	e, err := bd.coerce(args[i], strType(), fmt.Sprintf("argument %d of %s", i+1, name))
	if err != nil && !args[i].untyped() && args[i].e != nil && familyOf(args[i].typ()) != famString {
		if args[i].bytea && byteaFunctions[strings.TrimPrefix(name, "pg_catalog.")] {
			return nil, refused(Unimplemented, "0A000", "function %s(%s) is not supported", name, argTypeNames(args))
		}
		return nil, noSuchFunction(name, args)
	}
	return e, err
}

// noSuchFunction is PostgreSQL's 42883 "function name(types) does not exist" of args.
func noSuchFunction(name string, args []bval) *Error {
	e := quoting(InvalidArgument, "42883", "function %s(", name)
	e.Msg += argTypeNames(args) + ") does not exist"
	e.LogMsg += argTypeNames(args) + ") does not exist"
	return e
}

// integerArgs refuses name(args) as PostgreSQL's 42883 "function name(types) does not exist"
// when an argument from the index from on is not a smallint or an integer (bigint, numeric, a
// float, text…): its int4 parameters take those and untyped constants alone, no implicit cast
// narrows (chr, overlay).
func integerArgs(name string, args []bval, from int) error {
	for _, a := range args[from:] {
		if !a.untyped() && (familyOf(a.typ()) != famInt || numRank(a.typ()) > numRank(i32Type())) {
			return &Error{Code: InvalidArgument, SQLState: "42883", Msg: fmt.Sprintf("function %s(%s) does not exist", name, argTypeNames(args))}
		}
	}
	return nil
}

// int4Arg binds v, an argument PostgreSQL's function declares integer (int4: left's and
// substr's lengths, repeat's count, lpad's width, chr, overlay's positions), as the kernels'
// bigint. An untyped parameter there is PostgreSQL's integer parameter (PREPARE … left('abc',
// $1) declares $1 integer): it is typed integer and widened, and declared int32 to the client
// when every integer use of it is such an argument (ps.int4Only), so that the JDBC driver's
// setInt binds an int32 the statement takes; an int64 binding declares bigint, which such an
// argument refuses as PostgreSQL's 42883 does (integerPositions). Any other value is coerced
// to bigint.
func (bd *binder) int4Arg(v bval, what string) (expr.Expression, error) {
	if prev, ok := bd.ps.types[v.param]; v.param == 0 || !v.untyped() || ok && !sameType(prev, i32Type()) {
		return bd.coerce(v, i64Type(), what)
	}
	e, err := bd.coerce(v, i32Type(), what)
	if err != nil {
		return nil, err
	}
	bd.ps.noteInt4Arg(v.param)
	c, err := bd.cast(e, i64Type())
	return c.e, err
}

// noteInt4Arg counts a use of parameter p as a function's integer argument (int4Args).
func (ps *paramState) noteInt4Arg(p int) {
	if ps.vals != nil {
		return
	}
	if ps.int4Args == nil {
		ps.int4Args = map[int]int{}
	}
	ps.int4Args[p]++
}

// integerParams are the argument positions (from 0) of the string functions whose parameter
// there is integer (int4) in PostgreSQL: substring(text, int [, int]), substr, left, right,
// repeat, lpad, rpad and split_part, of text and (substring, substr) bytea.
var integerParams = map[string][]int{
	"substring": {1, 2}, "substr": {1, 2}, "left": {1}, "right": {1}, "repeat": {1}, "lpad": {1}, "rpad": {1}, "split_part": {2},
}

// integerPositions refuses a bigint, numeric, real or double precision argument where a
// string function of integerParams takes an integer, as PostgreSQL finds no function there
// (none of them casts implicitly to integer): its 42883 "function f(…) does not exist",
// naming the SQL-syntax form (substring(x FROM n)) pg_catalog.substring as it does. A smaller
// integer, an untyped literal or parameter, and text (substring's pattern forms) pass.
func integerPositions(fc *pg.FuncCall, name string, args []bval) error {
	for _, i := range integerParams[name] {
		if i >= len(args) || args[i].untyped() {
			continue
		}
		switch t := args[i].typ(); familyOf(t) {
		case famInt:
			if numRank(t) <= numRank(i32Type()) {
				continue
			}
		case famNumeric, famFloat:
		default:
			continue
		}
		shown := name
		if fn := fc.GetFuncname(); len(fn) == 2 && fn[0].GetString_().GetSval() == "pg_catalog" {
			shown = "pg_catalog." + name
		}
		return &Error{Code: InvalidArgument, SQLState: "42883", Msg: fmt.Sprintf("function %s(%s) does not exist", shown, argTypeNames(args))}
	}
	return nil
}

// argTypeNames names the arguments' types as PostgreSQL's "function f(…) does not exist"
// does: argTypeName's, separated by ", ".
func argTypeNames(args []bval) string {
	names := make([]string, len(args))
	for i, a := range args {
		names[i] = argTypeName(a)
	}
	return strings.Join(names, ", ")
}

// extract binds extract(field FROM x) of a timestamp (with or without time zone) or a date as
// PostgreSQL 15 answers it: numeric, exact, at the scale of calendar.ExtractScale (epoch and second
// 6, millisecond 3, the others 0; the epoch of a date 0), from scan/ops' extract kernel.
// PostgreSQL's extract_date refuses the time fields of a date (0A000, naming the unit as
// written); date_part(field, date) reads the date as a timestamp and answers them (0).
func (bd *binder) extract(field, unit string, v bval) (bval, error) {
	var x expr.Expression
	date := !v.untyped() && familyOf(v.typ()) == famDate
	if date {
		switch field {
		case "HOUR", "MINUTE", "SECOND", "MILLISECOND", "MICROSECOND":
			return bval{}, refused(Unimplemented, "0A000", "unit %q not supported for type date", strings.ToLower(unit))
		}
		x = v.e
	} else {
		ts, err := bd.coerce(v, tsType(), "argument 2 of extract")
		if err != nil {
			return bval{}, err
		}
		x = ts
	}
	out := &types.DecimalType{Precision: 38, Scale: calendar.ExtractScale(field, date), Nullability: nullableN}
	f, err := expr.NewCustomScalarFunc(bd.reg, extensions.NewScalarFuncVariant(extensions.ID{URN: URNPostgres, Name: "extract"}), out, nil, types.Enum(field), x)
	return typed(f), err
}

// datePartFields are the fields date_part and extract take (scan/ops implements them).
var datePartFields = map[string]bool{
	"YEAR": true, "QUARTER": true, "MONTH": true, "WEEK": true, "ISOYEAR": true, "DAY": true, "DOW": true,
	"ISODOW": true, "DOY": true, "HOUR": true, "MINUTE": true, "SECOND": true, "MILLISECOND": true,
	"MICROSECOND": true, "DECADE": true, "CENTURY": true, "MILLENNIUM": true, "JULIAN": true, "EPOCH": true,
}

// pgDatePartFields are the fields of a timestamp or date PostgreSQL's extract and date_part
// take that scan/ops does not implement (its DecodeUnits units: the time zone's offset).
var pgDatePartFields = map[string]bool{
	"TIMEZONE": true, "TIMEZONE_HOUR": true, "TIMEZONE_MINUTE": true,
}

// textConstant reads n as a text constant per execution: a string literal (textLiteral), or a
// parameter ($n, $n::text, as the client declared it) whose value is text — at prepare time,
// with no value yet, the stand-in "hour" (any valid text: the statement's schema does not
// depend on it, and every execution binds the statement again with its values). ok is false
// for any other expression; err is the refusal of a bound value that is not text.
func (bd *binder) textConstant(n *pg.Node, what string) (s string, ok bool, err error) {
	if s, ok := textLiteral(n); ok {
		return s, true, nil
	}
	if tc := n.GetTypeCast(); tc != nil && typeFamily(tc.GetTypeName()) == "text" {
		n = tc.GetArg()
	}
	p := n.GetParamRef()
	if p == nil {
		return "", false, nil
	}
	v, err := bd.bindExpr(n, &scope{})
	if err != nil {
		return "", false, err
	}
	e, err := bd.coerce(v, strType(), what)
	if err != nil {
		return "", false, err
	}
	if _, ph := bd.ps.placeholders[e]; ph && bd.ps.vals == nil {
		return "hour", true, nil
	}
	lit, isText := e.(*expr.PrimitiveLiteral[string])
	if !isText {
		return "", false, nil
	}
	return lit.Value, true, nil
}

// timeBin binds date_trunc(unit, ts[, zone]) and date_bin(stride, ts, origin) over any
// timestamp expression, onto round_calendar and round_temporal (groupby.go's encoding), and
// date_trunc to decades, centuries and millennia onto URNPostgres' date_trunc (truncIn).
func (bd *binder) timeBin(fc *pg.FuncCall, sc *scope) (bval, error) {
	name := funcName(fc)
	args := fc.GetArgs()
	if name == "date_trunc" {
		if len(args) != 2 && len(args) != 3 {
			return bval{}, errorf(InvalidArgument, "date_trunc takes two or three arguments")
		}
		s, ok, err := bd.textConstant(args[0], "date_trunc's unit")
		if err != nil {
			return bval{}, err
		}
		if !ok {
			return bval{}, unimplemented("date_trunc with a unit that is not a string literal or a parameter")
		}
		var trunc truncFunc
		var floor func(time.Time) time.Time
		days := true
		if u, ok := lookupUnit(s); ok && (u == "decade" || u == "century" || u == "millennium") {
			// Units of years from year 1, which round_calendar cannot express: URNPostgres'
			// date_trunc (scan/ops datetrunc.go), never a store's time bin.
			trunc = func(ts expr.Expression) (expr.Expression, error) {
				return bd.fn(URNPostgres, "date_trunc", ts.GetType(), types.Enum(strings.ToUpper(u)), ts)
			}
		} else {
			unit, err := parseTruncUnit(s)
			if err != nil {
				return bval{}, err
			}
			bin := routing.TruncBinning(unit)
			trunc = func(ts expr.Expression) (expr.Expression, error) { return binExprOf(bd.b, ts, bin) }
			floor = bin.Floor
			days = unit >= routing.TruncDay
		}
		zone := ""
		if len(args) == 3 {
			if zone, ok = textLiteral(args[2]); !ok {
				return bval{}, unimplemented("date_trunc with a time zone that is not a text constant")
			}
		}
		return bd.truncIn(trunc, floor, days, args[1], zone, sc)
	}
	if len(args) != 3 {
		return bval{}, errorf(InvalidArgument, "date_bin takes three arguments (stride, timestamp, origin)")
	}
	var stride time.Duration
	if p := strideParamRef(args[0]); p > 0 {
		var err error
		if stride, err = bd.strideParam(p); err != nil {
			return bval{}, err
		}
	} else {
		s, ok := intervalLiteral(args[0])
		if !ok {
			return bval{}, unimplemented("date_bin with a stride that is not an interval literal or a parameter")
		}
		var err error
		if stride, err = parseStride(s); err != nil {
			return bval{}, err
		}
	}
	origin, err := originLiteral(args[2])
	if err != nil {
		return bval{}, err
	}
	bin := routing.StrideBinning(stride, origin)
	v, err := bd.bindExpr(args[1], sc)
	if err != nil {
		return bval{}, err
	}
	ts := v.e
	if v.untyped() || !isWallclock(v.typ()) {
		// A timestamp without time zone keeps its type (PostgreSQL's date_bin(interval,
		// timestamp, timestamp) returns one).
		if ts, err = bd.coerce(v, tsType(), "argument 2 of "+name); err != nil {
			return bval{}, err
		}
	}
	e, err := binExprOf(bd.b, ts, bin)
	if err != nil {
		return bval{}, err
	}
	return typed(e), nil
}

// strideParamRef is the number of the parameter date_bin's stride is ($n, $n::interval, or
// ($n::interval)::interval as DeclareParameterTypes declares an interval the client binds
// to $n::interval), 0 for any other stride.
func strideParamRef(n *pg.Node) int {
	for tc := n.GetTypeCast(); tc != nil; tc = n.GetTypeCast() {
		if !isIntervalTypeName(tc.GetTypeName()) {
			return 0
		}
		n = tc.GetArg()
	}
	return int(n.GetParamRef().GetNumber())
}

// binExprOf is binExpr over any timestamp expression.
func binExprOf(b plan.Builder, ts expr.Expression, bin routing.Binning) (expr.Expression, error) {
	return binExprWith(b.ScalarFn, ts, bin)
}

// binExprWith is binExprOf declaring its functions through scalarFn (a plan.Builder's
// ScalarFn, or a decoded plan's registry: dataFusionRewriter).
func binExprWith(scalarFn func(urn, name string, opts []*types.FunctionOption, args ...types.FuncArg) (*expr.ScalarFunction, error),
	ts expr.Expression, bin routing.Binning) (expr.Expression, error) {
	// The zone-less variants (timestamp without time zone) take no zone argument.
	var zone []types.FuncArg
	origin := timestampLiteral(bin.Origin.UnixNano())
	if !isWallclock(ts.GetType()) {
		zone = []types.FuncArg{expr.NewPrimitiveLiteral("UTC", false)}
	} else {
		origin = expr.NewPrecisionTimestampLiteral(bin.Origin.UnixNano(), types.PrecisionNanoSeconds, types.NullabilityRequired)
	}
	if bin.Unit != 0 {
		c := calendarArgs[bin.Unit]
		args := append([]types.FuncArg{ts, types.Enum("FLOOR"), types.Enum(c.unit), types.Enum(c.origin), expr.NewPrimitiveLiteral(c.multiple, false)}, zone...)
		return scalarFn(URNDatetime, "round_calendar", nil, args...)
	}
	for _, u := range temporalUnits[2:] {
		if bin.Stride%u.d == 0 {
			args := append([]types.FuncArg{ts, types.Enum("FLOOR"), types.Enum(u.name), expr.NewPrimitiveLiteral(int64(bin.Stride/u.d), false)}, zone...)
			return scalarFn(URNDatetime, "round_temporal", nil, append(args, origin)...)
		}
	}
	return nil, fmt.Errorf("substrait: date_bin stride %v is not a whole number of microseconds", bin.Stride)
}

var _ = time.Time{}

// nonNullConstant reports whether n is a numeric, string or boolean constant (never NULL).
func nonNullConstant(n *pg.Node) bool {
	c := n.GetAConst()
	return c != nil && !c.GetIsnull()
}

// stringFunc binds PostgreSQL's string functions of scan/ops (strfuncs.go): left, right,
// repeat, split_part, strpos (and POSITION(sub IN s), which the grammar writes position(s,
// sub)), lpad, rpad, initcap and reverse. Integer arguments are coerced to bigint; text ones
// must be text.
func (bd *binder) stringFunc(name string, args []bval, nargs func(lo, hi int) error, text func(int) (expr.Expression, error),
	call func(string, types.Type, ...expr.Expression) (bval, error)) (bval, error) {
	type argKind uint8
	const (
		txt argKind = iota
		num
	)
	kinds := map[string][]argKind{
		"left": {txt, num}, "right": {txt, num}, "repeat": {txt, num}, "split_part": {txt, txt, num},
		"strpos": {txt, txt}, "lpad": {txt, num, txt}, "rpad": {txt, num, txt},
		"initcap": {txt}, "reverse": {txt},
	}[name]
	lo := len(kinds)
	if name == "lpad" || name == "rpad" {
		lo = 2
	}
	if err := nargs(lo, len(kinds)); err != nil {
		return bval{}, err
	}
	es := make([]expr.Expression, len(args))
	for i := range args {
		var err error
		if kinds[i] == txt {
			es[i], err = text(i)
		} else {
			es[i], err = bd.int4Arg(args[i], fmt.Sprintf("argument %d of %s", i+1, name))
		}
		if err != nil {
			return bval{}, err
		}
	}
	out := strType()
	if name == "strpos" {
		out = i32Type()
	}
	return call(URNPostgres, out, es...)
}

// integerLength types a length (the kernels' bigint) as PostgreSQL's length, char_length
// and octet_length do: integer.
func (bd *binder) integerLength(v bval, err error) (bval, error) {
	if err != nil {
		return v, err
	}
	return bd.cast(v.e, i32Type())
}

// argTypeName is a bound argument's type name in PostgreSQL's words (an untyped literal's
// "unknown").
func argTypeName(v bval) string {
	if v.untyped() {
		return "unknown"
	}
	if isJSONDoc(v) {
		return jsonTypeName(v)
	}
	return typeName(v.typ())
}

// mathFunc binds PostgreSQL's mathematical functions over double precision (scan/ops
// mathfuncs.go): ceil (ceiling), floor, trunc, round (half to even, PostgreSQL's rint), sign, sqrt, exp, ln, log (base 10), power
// (pow), whose integer and float arguments become float8 as PostgreSQL resolves them, and mod
// over integers (intMod). The forms PostgreSQL computes in numeric (a numeric argument, trunc(x, n),
// log(b, x)) are numericCall's, bound before; what reaches here with a decimal literal or two
// arguments of trunc or log has no numeric form either and is refused (trunc(double
// precision, n) is PostgreSQL's 42883). rename sets the kernel's name for call.
func (bd *binder) mathFunc(name string, raw []*pg.Node, args []bval, nargs func(lo, hi int) error,
	call func(string, types.Type, ...expr.Expression) (bval, error), rename func(string)) (bval, error) {
	kernel := map[string]string{"ceiling": "ceil", "log": "log10", "pow": "power"}[name]
	if kernel == "" {
		kernel = name
	}
	want := 1
	if kernel == "power" || kernel == "mod" {
		want = 2
	}
	if len(args) == 2 && (kernel == "trunc" || kernel == "log10" || kernel == "round") || len(args) > 0 && len(args) != want {
		// trunc(numeric, integer), round(numeric, integer) and log(numeric, numeric) are their
		// only two-argument forms (numericCall binds them, integers too); a float has no
		// implicit cast to numeric: PostgreSQL finds no function (42883), as for any other
		// count of arguments.
		return bval{}, &Error{Code: InvalidArgument, SQLState: "42883", Msg: fmt.Sprintf("function %s(%s) does not exist", name, argTypeNames(args))}
	}
	if err := nargs(want, want); err != nil {
		return bval{}, err
	}
	if kernel == "mod" {
		return bd.intMod(args)
	}
	// power of a float and a numeric (numericCall leaves it here) computes in double
	// precision, the numeric cast as PostgreSQL casts it implicitly.
	floatPower := kernel == "power" && slices.ContainsFunc(args, func(v bval) bool { return !v.untyped() && familyOf(v.typ()) == famFloat })
	for _, r := range raw {
		if c := r.GetAConst(); c != nil && c.GetFval() != nil && strings.ContainsAny(c.GetFval().GetFval(), ".eE") && !floatPower {
			return bval{}, refused(Unimplemented, "0A000", "%s of a numeric value (a decimal literal) is not supported yet", name)
		}
	}
	es := make([]expr.Expression, len(args))
	for i, a := range args {
		f := famFloat
		if !a.untyped() {
			f = familyOf(a.typ())
		}
		if f == famNumeric && floatPower {
			f = famFloat
		}
		if f != famInt && f != famFloat {
			return bval{}, errorf(InvalidArgument, "argument %d of %s must be a number", i+1, name)
		}
		e, err := bd.coerce(a, fp64Type(), fmt.Sprintf("argument %d of %s", i+1, name))
		if err != nil {
			return bval{}, err
		}
		es[i] = e
	}
	rename(kernel)
	return call(URNPostgres, fp64Type(), es...)
}

// intMod binds mod(a, b) of integers as the operator a % b (binary): PostgreSQL's mod
// functions of integers are int2mod, int4mod and int8mod, the operator's own, resolved to the
// arguments' common integer type as the operator's are (mod(smallint, smallint) is smallint,
// mod(smallint, integer) integer, beside a bigint bigint), with its errors (a zero divisor is
// 22012, x % -1 is 0). Numerics are numericCall's, bound before. Another type has no mod
// (42883), and two untyped arguments match several (42725), as in PostgreSQL.
func (bd *binder) intMod(args []bval) (bval, error) {
	if args[0].untyped() && args[1].untyped() && args[0].param == 0 && args[1].param == 0 {
		return bval{}, &Error{Code: InvalidArgument, SQLState: "42725", Msg: "function mod(unknown, unknown) is not unique"}
	}
	for _, a := range args {
		if !a.untyped() && familyOf(a.typ()) != famInt {
			return bval{}, &Error{Code: InvalidArgument, SQLState: "42883", Msg: fmt.Sprintf("function mod(%s, %s) does not exist", argTypeName(args[0]), argTypeName(args[1]))}
		}
	}
	return bd.binary("%", args[0], args[1])
}

// intGcdLcm binds gcd(a, b) and lcm(a, b) of integers as PostgreSQL's int4gcd, int8gcd,
// int4lcm and int8lcm (scan/ops' int_gcd, int_lcm): integer, or bigint beside a bigint
// (a smallint beside an integer is one: PostgreSQL has no smallint form), never negative, with
// their out-of-range errors (22003). Numerics are numericCall's (refused by name); another type
// has no gcd (42883); two untyped constants or two smallints match both forms (42725).
func (bd *binder) intGcdLcm(name string, args []bval) (bval, error) {
	untyped := func(a bval) bool { return a.untyped() && a.param == 0 }
	if untyped(args[0]) && untyped(args[1]) ||
		!args[0].untyped() && !args[1].untyped() && numRank(args[0].typ()) < numRank(i32Type()) && numRank(args[1].typ()) < numRank(i32Type()) &&
			familyOf(args[0].typ()) == famInt && familyOf(args[1].typ()) == famInt {
		// Two unknowns, or two smallints, match integer and bigint alike in PostgreSQL.
		return bval{}, &Error{Code: InvalidArgument, SQLState: "42725", Msg: fmt.Sprintf("function %s(%s, %s) is not unique", name, argTypeName(args[0]), argTypeName(args[1]))}
	}
	t := i32Type()
	for _, a := range args {
		if a.untyped() {
			continue
		}
		if familyOf(a.typ()) != famInt {
			return bval{}, &Error{Code: InvalidArgument, SQLState: "42883", Msg: fmt.Sprintf("function %s(%s, %s) does not exist", name, argTypeName(args[0]), argTypeName(args[1]))}
		}
		if numRank(a.typ()) > numRank(i32Type()) {
			t = i64Type()
		}
	}
	es := make([]expr.Expression, 2)
	for i, a := range args {
		e, err := bd.coerce(a, t, fmt.Sprintf("argument %d of %s", i+1, name))
		if err != nil {
			return bval{}, err
		}
		es[i] = e
	}
	f, err := bd.fn(URNPostgres, "int_"+name, t, es[0], es[1])
	return typed(f), err
}

// quoteFunc binds PostgreSQL's quote_ident(text), quote_literal and quote_nullable (scan/ops'
// kernels). quote_literal and quote_nullable of an integer quote its text (their anyelement
// forms cast to text); of other types they are refused by name. quote_nullable is
// quote_literal but for NULL, which it writes as the text NULL.
func (bd *binder) quoteFunc(name string, args []bval, nargs func(lo, hi int) error, text func(int) (expr.Expression, error)) (bval, error) {
	if err := nargs(1, 1); err != nil {
		return bval{}, err
	}
	var e expr.Expression
	var err error
	switch {
	case name != "quote_ident" && !args[0].untyped() && familyOf(args[0].typ()) == famInt:
		var v bval
		v, err = bd.cast(args[0].e, strType())
		e = v.e
	case name == "quote_ident" || args[0].untyped() || familyOf(args[0].typ()) == famString && !args[0].json && !args[0].jsonb:
		e, err = text(0)
	default:
		return bval{}, unimplemented(name + " of a value that is not text or an integer")
	}
	if err != nil {
		return bval{}, err
	}
	fname := name
	if name == "quote_nullable" {
		fname = "quote_literal"
	}
	q, err := bd.fn(URNPostgres, fname, strType(), e)
	if err != nil || name != "quote_nullable" {
		return typed(q), err
	}
	nn, err := bd.fn(URNComparison, "is_not_null", booleanType(), q)
	if err != nil {
		return bval{}, err
	}
	out, err := bd.ifThen([]expr.IfThenPair{{If: nn, Then: q}}, expr.NewPrimitiveLiteral("NULL", false))
	return typed(out), err
}

// currentSetting is PostgreSQL's current_setting(name [, missing_ok]) of a setting SHOW
// answers (showSettings: the values every statement runs with, as PostgreSQL 15 spells them
// for a UTC session; Metabase and Grafana ask for TimeZone and server_version): a text
// constant. An unknown name is PostgreSQL's 42704, unless missing_ok is true (NULL); a name
// PostgreSQL knows (pgParameters) whose value flightsrv does not keep is refused by name, a name
// or missing_ok that is not a constant is refused by name. The name is the client's text: not
// echoed.
func (bd *binder) currentSetting(args []*pg.Node) (bval, error) {
	if len(args) < 1 || len(args) > 2 {
		return bval{}, refused(InvalidArgument, "42883", "function current_setting takes 1 or 2 arguments")
	}
	name, ok := textLiteral(args[0])
	if !ok {
		return bval{}, unimplemented("current_setting of a name that is not a string literal")
	}
	missingOK := false
	if len(args) == 2 {
		c := args[1].GetAConst()
		if c == nil || c.GetBoolval() == nil {
			return bval{}, unimplemented("current_setting's missing_ok that is not a boolean literal")
		}
		missingOK = c.GetBoolval().GetBoolval()
	}
	v, known := showSettings[strings.ToLower(name)]
	switch {
	case known:
		return typed(expr.NewPrimitiveLiteral(v, true)), nil
	case knownParameter(strings.ToLower(name)):
		// PostgreSQL answers its value, which flightsrv does not keep.
		return bval{}, unimplemented("current_setting of this parameter")
	case missingOK:
		return typed(expr.NewNullLiteral(&types.StringType{Nullability: types.NullabilityNullable})), nil
	}
	return bval{}, errUnknownParameter
}
