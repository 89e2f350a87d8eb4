package substrait

import (
	"fmt"
	"slices"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/extensions"
	"github.com/substrait-io/substrait-go/v8/types"
)

// regrMeasure binds corr, covar_pop, covar_samp or a regr_ aggregate (name) of fc, PostgreSQL's
// functions of two double precision arguments (Y, X): integers, numerics and reals are cast to
// double precision as PostgreSQL casts them implicitly, an unknown literal is read as one, any
// other type is PostgreSQL's 42883. Rows where Y or X is NULL are left out (scan/aggregate
// regr.go). DISTINCT is refused by name; filter is fc's bound FILTER (nil: none). bd.agg is
// already cleared: the arguments bind over the aggregate's input.
func (bd *binder) regrMeasure(name string, fc *pg.FuncCall, filter expr.Expression, ac *aggCtx) (bval, error) {
	args := fc.GetArgs()
	if slices.ContainsFunc(args, containsAggregate) {
		return bval{}, errorf(InvalidArgument, "aggregate function calls cannot be nested")
	}
	if fc.GetAggDistinct() {
		return bval{}, unimplemented(name + "(DISTINCT …)")
	}
	vals, err := bd.regrArgs(name, args, ac.in)
	if err != nil {
		return bval{}, err
	}
	out := fp64Type()
	if name == "regr_count" {
		out = &types.Int64Type{Nullability: types.NullabilityRequired}
	}
	f, err := expr.NewAggregateFunc(bd.reg, extensions.ID{URN: URNPostgres, Name: name}, nil, types.AggInvocationAll, types.AggPhaseInitialToResult, nil, vals[0], vals[1])
	if err != nil {
		return bval{}, fmt.Errorf("bind %s: %w", name, err)
	}
	return typed(ac.measure(bd.b.Measure(f, filter), out)), nil
}

// regrArgs binds the arguments (Y, X) of the binary aggregate name over sc as PostgreSQL's
// float8 pairs: integers, numerics and reals cast to double precision as PostgreSQL casts
// them implicitly, an unknown literal read as one; any other type, or another count of
// arguments, is PostgreSQL's 42883.
func (bd *binder) regrArgs(name string, args []*pg.Node, sc *scope) ([]expr.Expression, error) {
	bound := make([]bval, len(args))
	names := make([]string, len(args))
	ok := len(args) == 2
	for i, a := range args {
		v, err := bd.bindExpr(a, sc)
		if err != nil {
			return nil, err
		}
		bound[i], names[i] = v, "unknown"
		if t := v.typ(); t != nil {
			names[i] = jsonTypeName(v)
			fam := familyOf(t)
			ok = ok && (fam == famInt || fam == famFloat || fam == famNumeric) && !isIntervalType(t) && !v.json && !v.jsonb
		}
	}
	if !ok {
		return nil, errorf(InvalidArgument, "function %s(%s) does not exist", name, strings.Join(names, ", "))
	}
	vals := make([]expr.Expression, 2)
	for i, v := range bound {
		t := fp64Type()
		if v.typ() != nil {
			t = t.WithNullability(v.typ().GetNullability())
		}
		var err error
		if vals[i], err = bd.coerce(v, t, name); err != nil {
			return nil, err
		}
	}
	return vals, nil
}
