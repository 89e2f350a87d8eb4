package scan

import (
	"errors"
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/plan"
	"github.com/substrait-io/substrait-go/v8/types"

	"github.com/flightsrv/flightsrv/internal/exprs"
	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/scan/aggregate"
	"github.com/flightsrv/flightsrv/scan/ops"
	"github.com/flightsrv/flightsrv/substrait"
)

// ErrUnsupported is wrapped by the errors of plans the executor cannot run (a relation kind,
// an expression or an aggregate it does not know). The front ends refuse such plans first, so
// it marks a plan the planner should not have produced.
var ErrUnsupported = errors.New("scan: unsupported plan")

func unsupported(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrUnsupported}, args...)...)
}

// errSplitRealSum is splitRealSum's refusal.
var errSplitRealSum = &ops.DataError{Code: "0A000", Msg: "sum of real over a routed table's rows is not supported: they are added bucket by bucket, not in single precision in the order PostgreSQL reads them; sum(x::float8) is the double precision sum"}

// splitRealSum refuses a sum of float32 values (PostgreSQL's sum(real)) in an aggregation
// split into per-fragment partial aggregates: PostgreSQL adds reals in single precision one
// after the other in the order it reads the rows, and the fragments' partial sums combined are
// another sum, far from its in the low digits of a real. Sums of reals answer where one
// aggregation reads the rows in one stream (VALUES, a series, a window). The refusal is
// PostgreSQL's feature_not_supported (0A000), by name, as the binder's.
func splitRealSum(in *arrow.Schema, spec aggregate.Spec) error {
	for _, m := range spec.Measures {
		if m.Func == aggregate.Sum && m.Arg >= 0 && m.Arg < in.NumFields() && in.Field(m.Arg).Type.ID() == arrow.FLOAT32 {
			return errSplitRealSum
		}
	}
	return nil
}

// Base columns of a routed table in ReadRel base-schema order (substrait.TableSchema).
const (
	colPartition = 0
	colTimestamp = 1
	colID        = 2
	numBase      = 4
)

// routedPlan is a relation subtree that is still per-row over one routed read: the part of
// the plan that runs inside each bucket's fragment. Every expression is over the ReadRel's
// base schema: projections above the read are inlined into cols, so the fragment reads only
// the base columns its expressions reference.
type routedPlan struct {
	src   Source
	base  *types.RecordType
	cols  []expr.Expression // output columns, over the base schema
	names []string          // output column names (for error messages and schemas)
	// filters are the residual conjuncts (the routed ones are implied by the read).
	filters []expr.Expression
	// order is set when the output must come in bucket order: (timestamp, id) ascending, or
	// descending when desc.
	order, desc bool
	// sortKeys is a sort that is not bucket order (keys over the base schema): fragments sort
	// (or keep their top k) and the coordinator sorts (or merges top ks) again.
	sortKeys []sortKey
}

type sortKey struct {
	e          expr.Expression
	desc       bool
	nullsFirst bool
}

// lowered is a lowered relation: either still a routed per-row plan, or a coordinator node.
type lowered struct {
	routed *routedPlan
	node   node
}

// lowerer lowers a plan's relations.
type lowerer struct {
	opts     *Options
	ext      expr.ExtensionRegistry
	rewrites *[]Rewrite
	// needs is the walk down the plan before lowering (joinprune.go).
	needs needWalk
	// work holds the working tables of the recursive queries being lowered, by ID
	// (recursive.go).
	work map[int]*workTable
}

func (l *lowerer) lower(rel plan.Rel) (*lowered, error) {
	var (
		out *lowered
		err error
	)
	switch r := rel.(type) {
	case *plan.NamedTableReadRel:
		out, err = l.read(r)
	case *plan.FilterRel:
		out, err = l.filter(r)
	case *plan.ProjectRel:
		out, err = l.project(r)
	case *plan.AggregateRel:
		out, err = l.aggregate(r)
	case *plan.SortRel:
		out, err = l.sort(r)
	case *plan.FetchRel:
		out, err = l.fetch(r)
	case *plan.SetRel:
		out, err = l.set(r)
	case *plan.VirtualTableReadRel:
		out, err = l.values(r)
	case *plan.JoinRel:
		out, err = l.join(r)
	case *plan.HashJoinRel:
		out, err = l.hashJoin(r)
	case *plan.ExtensionSingleRel:
		out, err = l.projectSet(r)
	case *plan.ExtensionMultiRel:
		out, err = l.recursive(r)
	case *plan.ExtensionLeafRel:
		out, err = l.workTableRead(r)
	case nil:
		return nil, unsupported("missing relation")
	default:
		return nil, unsupported("relation %T", rel)
	}
	if err != nil {
		return nil, err
	}
	return l.emit(out, rel.OutputMapping())
}

// emit applies a relation's emit mapping.
func (l *lowerer) emit(in *lowered, mapping []int32) (*lowered, error) {
	if len(mapping) == 0 {
		return in, nil
	}
	idx := make([]int, len(mapping))
	for i, m := range mapping {
		idx[i] = int(m)
	}
	if rp := in.routed; rp != nil {
		cols := make([]expr.Expression, len(idx))
		names := make([]string, len(idx))
		for i, m := range idx {
			if m < 0 || m >= len(rp.cols) {
				return nil, unsupported("emit index %d out of range", m)
			}
			cols[i], names[i] = rp.cols[m], rp.names[m]
		}
		rp.cols, rp.names = cols, names
		return in, nil
	}
	n, err := newSelect(in.node, idx)
	if err != nil {
		return nil, err
	}
	return &lowered{node: n}, nil
}

func (l *lowerer) read(r *plan.NamedTableReadRel) (*lowered, error) {
	if r.Projection() != nil {
		return nil, unsupported("ReadRel projection masks")
	}
	if l.opts.Bind == nil {
		return nil, unsupported("no routed table binding")
	}
	src, err := l.opts.Bind(r)
	if err != nil {
		return nil, err
	}
	rt := r.RecordType()
	if len(rt.Types()) != numBase {
		return nil, unsupported("ReadRel base schema of %d columns", len(rt.Types()))
	}
	def := src.Table.Def()
	rp := &routedPlan{src: src, base: &rt}
	for i := range numBase {
		ref, err := expr.NewRootFieldRef(expr.NewStructFieldRef(int32(i)), &rt)
		if err != nil {
			return nil, fmt.Errorf("scan: base reference: %w", err)
		}
		rp.cols = append(rp.cols, ref)
		rp.names = append(rp.names, def.Field(routing.AllColumns[i]).Name)
	}
	if f := r.Filter(); f != nil {
		rp.addFilter(f)
	}
	return &lowered{routed: rp}, nil
}

// addFilter adds the conjuncts of cond (over the base schema) that the routed read does not
// imply.
func (rp *routedPlan) addFilter(cond expr.Expression) {
	for _, c := range conjuncts(cond) {
		if !impliedByRoute(c, rp.src) {
			rp.filters = append(rp.filters, c)
		}
	}
}

// conjuncts splits nested boolean `and`s.
func conjuncts(e expr.Expression) []expr.Expression {
	if f, ok := e.(*expr.ScalarFunction); ok && f.Name() == "and" {
		var out []expr.Expression
		for i := range f.NArgs() {
			a, ok := f.Arg(i).(expr.Expression)
			if !ok {
				return []expr.Expression{e}
			}
			out = append(out, conjuncts(a)...)
		}
		return out
	}
	return []expr.Expression{e}
}

// perRow reports whether a per-row relation may still be pushed into the fragments.
func perRow(in *lowered) *routedPlan { return in.routed }

func (l *lowerer) filter(r *plan.FilterRel) (*lowered, error) {
	if j, ok := foldable(r); ok && l.needs.folded[j] {
		return l.join(j, conjuncts(r.Condition())...)
	}
	in, err := l.lower(r.Input())
	if err != nil {
		return nil, err
	}
	if rp := perRow(in); rp != nil {
		rp.addFilter(substitute(r.Condition(), rp.cols))
		return in, nil
	}
	n, err := newFilter(in.node, r.Condition(), l.ext)
	if err != nil {
		return nil, err
	}
	return &lowered{node: n}, nil
}

func (l *lowerer) project(r *plan.ProjectRel) (*lowered, error) {
	if slices.ContainsFunc(r.Expressions(), substrait.HasWindow) {
		return l.windowProject(r)
	}
	in, err := l.lower(r.Input())
	if err != nil {
		return nil, err
	}
	if rp := perRow(in); rp != nil {
		for i, e := range r.Expressions() {
			rp.cols = append(rp.cols, substitute(e, rp.cols))
			rp.names = append(rp.names, fmt.Sprintf("expr%d", i))
		}
		return in, nil
	}
	n, err := newProject(in.node, r.Expressions(), true, l.ext)
	if err != nil {
		return nil, err
	}
	return &lowered{node: n}, nil
}

func sortKeysOf(sorts []expr.SortField) ([]sortKey, error) {
	keys := make([]sortKey, len(sorts))
	for i, s := range sorts {
		d, ok := s.Kind.(types.SortDirection)
		if !ok {
			return nil, unsupported("sort by a comparison function")
		}
		k := sortKey{e: s.Expr}
		switch d {
		case types.SortAscNullsFirst:
			k.nullsFirst = true
		case types.SortAscNullsLast:
		case types.SortDescNullsFirst:
			k.desc, k.nullsFirst = true, true
		case types.SortDescNullsLast:
			k.desc = true
		default:
			return nil, unsupported("sort direction %v", d)
		}
		keys[i] = k
	}
	return keys, nil
}

func (l *lowerer) sort(r *plan.SortRel) (*lowered, error) {
	in, err := l.lower(r.Input())
	if err != nil {
		return nil, err
	}
	keys, err := sortKeysOf(r.Sorts())
	if err != nil {
		return nil, err
	}
	if rp := perRow(in); rp != nil {
		for i := range keys {
			keys[i].e = substitute(keys[i].e, rp.cols)
		}
		rp.order, rp.sortKeys = false, nil
		if desc, ok := bucketOrder(keys); ok {
			rp.order, rp.desc = true, desc
		} else {
			rp.sortKeys = keys
		}
		return in, nil
	}
	n, err := newSort(in.node, keys, -1, l.ext)
	if err != nil {
		return nil, err
	}
	return &lowered{node: n}, nil
}

// bucketOrder reports whether keys (over the base schema) are the clustering order
// (timestamp[, id]) in one direction, which buckets deliver by construction.
func bucketOrder(keys []sortKey) (desc bool, ok bool) {
	if len(keys) == 0 || len(keys) > 2 {
		return false, false
	}
	want := []int{colTimestamp, colID}
	for i, k := range keys {
		c, isRef := baseRef(k.e)
		if !isRef || c != want[i] || k.desc != keys[0].desc {
			return false, false
		}
	}
	return keys[0].desc, true
}

// windows says how a per-row routed plan, before it is finished, splits into time windows
// (Prepared.Windows): in bucket order, by a sort whose first key is the timestamp (the
// timestamp is never null), or in no order.
func (rp *routedPlan) windows() Windows {
	switch {
	case rp.order && rp.desc:
		return WindowsDesc
	case rp.order:
		return WindowsAsc
	case len(rp.sortKeys) == 0:
		return WindowsAny
	}
	if c, ok := baseRef(rp.sortKeys[0].e); !ok || c != colTimestamp {
		return WindowsNone
	}
	if rp.sortKeys[0].desc {
		return WindowsDesc
	}
	return WindowsAsc
}

func (l *lowerer) fetch(r *plan.FetchRel) (*lowered, error) {
	in, err := l.lower(r.Input())
	if err != nil {
		return nil, err
	}
	if r.Offset() < 0 {
		return nil, unsupported("negative OFFSET")
	}
	if rp := perRow(in); rp != nil {
		if r.Offset() == 0 && r.Count() < 0 {
			// FETCH ALL (the binder's carrier of an emit that drops hidden sort columns)
			// changes no row: the plan stays per-row.
			return in, nil
		}
		n, err := l.finishRouted(rp, nil, r.Offset(), r.Count())
		if err != nil {
			return nil, err
		}
		return &lowered{node: n}, nil
	}
	return &lowered{node: newFetch(in.node, r.Offset(), r.Count())}, nil
}

func (l *lowerer) aggregate(r *plan.AggregateRel) (*lowered, error) {
	in, err := l.lower(r.Input())
	if err != nil {
		return nil, err
	}
	if len(r.GroupingReferences()) > 1 {
		return nil, unsupported("grouping sets")
	}
	groups := r.GroupingExpressions()
	measures := r.Measures()
	if rp := perRow(in); rp != nil {
		rp.order, rp.sortKeys = false, nil
		sub := func(e expr.Expression) expr.Expression { return substitute(e, rp.cols) }
		spec, inputs, err := aggregateSpec(groups, measures, sub)
		if err != nil {
			return nil, err
		}
		n, err := l.finishRouted(rp, &aggTail{spec: spec, inputs: inputs}, 0, -1)
		if err != nil {
			return nil, err
		}
		return &lowered{node: n}, nil
	}
	spec, inputs, err := aggregateSpec(groups, measures, func(e expr.Expression) expr.Expression { return e })
	if err != nil {
		return nil, err
	}
	if n, ok, err := l.aggregateInFragments(in.node, spec, inputs); ok || err != nil {
		return &lowered{node: n}, err
	}
	n, err := newAggregate(in.node, spec, inputs, l.ext)
	if err != nil {
		return nil, err
	}
	return &lowered{node: n}, nil
}

// aggTail is the aggregation of a routed plan: the fragments project inputs (grouping
// expressions, then each measure's argument and filter, over the base schema) and aggregate
// them partially; the coordinator combines the partial states.
type aggTail struct {
	spec   aggregate.Spec
	inputs []expr.Expression
}

// aggregateSpec maps an AggregateRel onto the aggregate package: the input projection is the
// grouping expressions, then one column per measure argument and per measure filter.
func aggregateSpec(groups []expr.Expression, measures []plan.AggRelMeasure, sub func(expr.Expression) expr.Expression) (aggregate.Spec, []expr.Expression, error) {
	var spec aggregate.Spec
	var inputs []expr.Expression
	for _, g := range groups {
		spec.Groups = append(spec.Groups, len(inputs))
		inputs = append(inputs, sub(g))
	}
	for i := range measures {
		m := &measures[i]
		f := m.Measure()
		if f == nil || !substrait.HasDeclaration(f) {
			// substrait-go gives such a function a new anchor: the plan's is not known here.
			return spec, nil, unsupported("aggregate measure %d resolves to no declaration of the plan's extensions (a name matching several variants: declare it by its compound name, e.g. count:any)", i)
		}
		if f.Phase() != types.AggPhaseInitialToResult && f.Phase() != types.AggPhaseUnspecified {
			return spec, nil, unsupported("aggregate phase %v", f.Phase())
		}
		am := aggregate.Measure{Arg: -1, Arg2: -1, Filter: -1, Name: fmt.Sprintf("measure%d", i)}
		switch f.Name() {
		case "count":
			am.Func = aggregate.CountStar
			if f.NArgs() == 1 {
				am.Func = aggregate.Count
			}
		case "sum":
			am.Func = aggregate.Sum
			// sum(bigint) typed numeric (the binder's, as PostgreSQL types it): the exact total.
			_, am.Numeric = f.GetType().(*types.DecimalType)
		case "avg":
			am.Func = aggregate.Avg
			// avg of integers typed numeric (the binder's, as PostgreSQL types it): PostgreSQL's
			// quotient at aggregate.AvgScale.
			if d, ok := f.GetType().(*types.DecimalType); ok {
				if d.Scale != aggregate.AvgScale || d.Precision != 38 {
					return spec, nil, unsupported("avg typed %s (the executor's numeric avg is decimal<38,%d>)", d, aggregate.AvgScale)
				}
				am.Numeric = true
			}
		case "min":
			am.Func = aggregate.Min
		case "max":
			am.Func = aggregate.Max
		case "var_samp":
			am.Func = aggregate.VarSamp
		case "var_pop":
			am.Func = aggregate.VarPop
		case "stddev_samp":
			am.Func = aggregate.StddevSamp
		case "stddev_pop":
			am.Func = aggregate.StddevPop
		case "bit_and":
			am.Func = aggregate.BitAnd
		case "bit_or":
			am.Func = aggregate.BitOr
		case "bit_xor":
			am.Func = aggregate.BitXor
		case "bool_and":
			am.Func = aggregate.BoolAnd
		case "bool_or":
			am.Func = aggregate.BoolOr
		case "string_agg":
			// string_agg(x, separator literal), sorted by x or by other keys.
			am.Func = aggregate.StringAgg
			sep, ok := f.Arg(1).(*expr.PrimitiveLiteral[string])
			x, xok := f.Arg(0).(expr.Expression)
			if f.NArgs() != 2 || !ok || !xok {
				return spec, nil, unsupported("string_agg other than of a value and a constant separator")
			}
			am.Separator = sep.Value
			am.Arg = len(inputs)
			inputs = append(inputs, sub(x))
			// NULL values are left out: how NULLs of x sort does not matter.
			inputs = aggOrder(&am, f, x, true, inputs, sub)
		case "array_agg":
			// array_agg(x), sorted by x or by other keys.
			am.Func = aggregate.ArrayAgg
			x, ok := f.Arg(0).(expr.Expression)
			if f.NArgs() != 1 || !ok {
				return spec, nil, unsupported("array_agg other than of one value")
			}
			am.Arg = len(inputs)
			inputs = append(inputs, sub(x))
			inputs = aggOrder(&am, f, x, false, inputs, sub)
		case "percentile_cont", "percentile_disc", "mode":
			// Ordered-set aggregates: (fraction literal,) x, the direction in the sort.
			var (
				x   expr.Expression
				err error
			)
			if am, x, err = orderedSetMeasure(am, f); err != nil {
				return spec, nil, err
			}
			am.Arg = len(inputs)
			inputs = append(inputs, sub(x))
		default:
			fn, ok := regressionFuncs[f.Name()]
			if !ok {
				return spec, nil, unsupported("aggregate function %s", f.Name())
			}
			// The binary aggregates of (Y, X) pairs, Y first as in PostgreSQL.
			if f.NArgs() != 2 {
				return spec, nil, unsupported("%s with %d arguments", f.Name(), f.NArgs())
			}
			y, yok := f.Arg(0).(expr.Expression)
			x, xok := f.Arg(1).(expr.Expression)
			if !yok || !xok {
				return spec, nil, unsupported("%s other than of two values", f.Name())
			}
			am.Arg, am.Arg2 = len(inputs), len(inputs)+1
			inputs = append(inputs, sub(y), sub(x))
			am.Func = fn
		}
		am.Distinct = f.Invocation() == types.AggInvocationDistinct
		if am.Arg >= 0 {
			// An ordered-set aggregate's argument, bound above.
		} else if f.NArgs() > 1 || (am.Func != aggregate.CountStar && f.NArgs() != 1) {
			return spec, nil, unsupported("aggregate %s with %d arguments", f.Name(), f.NArgs())
		} else if f.NArgs() == 1 {
			a, ok := f.Arg(0).(expr.Expression)
			if !ok {
				return spec, nil, unsupported("aggregate argument %T", f.Arg(0))
			}
			am.Arg = len(inputs)
			inputs = append(inputs, sub(a))
		}
		if fl := m.Filter(); fl != nil && !isTrueLiteral(fl) {
			am.Filter = len(inputs)
			inputs = append(inputs, sub(fl))
		}
		spec.Measures = append(spec.Measures, am)
	}
	return spec, inputs, nil
}

// guardAggInputs guards the compiled inputs of spec's measures that have a FILTER (their
// arguments and ORDER BY keys) by the filter's column (ops.Expr.Guarded): PostgreSQL evaluates
// an aggregate's arguments only on the rows its FILTER passes. inputs are aggregateSpec's,
// compiled in its order; guarded ones are replaced in place.
func guardAggInputs(spec aggregate.Spec, inputs []*ops.Expr) error {
	for _, m := range spec.Measures {
		if m.Filter < 0 {
			continue
		}
		args := []int{m.Arg, m.Arg2}
		for _, k := range m.Keys {
			args = append(args, k.Arg)
		}
		for _, a := range args {
			if a < 0 || a >= len(inputs) || a == m.Filter {
				continue
			}
			g, err := inputs[a].Guarded(inputs[m.Filter])
			if err != nil {
				return err
			}
			inputs[a] = g
		}
	}
	return nil
}

// regressionFuncs are the executor's binary aggregates by their names.
var regressionFuncs = map[string]aggregate.Func{"corr": aggregate.Corr, "covar_pop": aggregate.CovarPop, "covar_samp": aggregate.CovarSamp,
	"regr_avgx": aggregate.RegrAvgX, "regr_avgy": aggregate.RegrAvgY, "regr_count": aggregate.RegrCount, "regr_intercept": aggregate.RegrIntercept,
	"regr_r2": aggregate.RegrR2, "regr_slope": aggregate.RegrSlope, "regr_sxx": aggregate.RegrSxx, "regr_sxy": aggregate.RegrSxy, "regr_syy": aggregate.RegrSyy}

// aggOrder reads the sorts of string_agg or array_agg (f) of value x into am: one sort by x
// itself (ascending NULLs last, descending NULLs first, or any NULLs order when anyNulls: the
// aggregate leaves NULL values out) is Sorted; others are Keys, their expressions appended to
// inputs (sub lowers them).
func aggOrder(am *aggregate.Measure, f *expr.AggregateFunction, x expr.Expression, anyNulls bool, inputs []expr.Expression, sub func(expr.Expression) expr.Expression) []expr.Expression {
	if len(f.Sorts) == 0 {
		return inputs
	}
	if len(f.Sorts) == 1 && exprs.Same(f.Sorts[0].Expr, x) {
		switch k := f.Sorts[0].Kind; {
		case k == types.SortAscNullsLast || anyNulls && k == types.SortAscNullsFirst:
			am.Sorted = true
			return inputs
		case k == types.SortDescNullsFirst || anyNulls && k == types.SortDescNullsLast:
			am.Sorted, am.Descending = true, true
			return inputs
		}
	}
	for _, sf := range f.Sorts {
		key := aggregate.SortKey{Arg: len(inputs)}
		switch sf.Kind {
		case types.SortAscNullsFirst:
			key.NullsFirst = true
		case types.SortDescNullsFirst:
			key.Descending, key.NullsFirst = true, true
		case types.SortDescNullsLast:
			key.Descending = true
		}
		am.Keys = append(am.Keys, key)
		inputs = append(inputs, sub(sf.Expr))
	}
	return inputs
}

// orderedSetMeasure reads percentile_cont(fraction, x), percentile_disc(fraction, x) and
// mode(x) with one sort of x (ascending or descending) into am, returning x.
func orderedSetMeasure(am aggregate.Measure, f *expr.AggregateFunction) (aggregate.Measure, expr.Expression, error) {
	switch f.Name() {
	case "percentile_cont":
		am.Func = aggregate.PercentileCont
	case "percentile_disc":
		am.Func = aggregate.PercentileDisc
	default:
		am.Func = aggregate.ModeOf
	}
	if len(f.Sorts) == 1 {
		switch f.Sorts[0].Kind {
		case types.SortDescNullsFirst, types.SortDescNullsLast:
			am.Descending = true
		}
	}
	if am.Func == aggregate.ModeOf {
		if f.NArgs() != 1 {
			return am, nil, unsupported("aggregate %s with %d arguments", f.Name(), f.NArgs())
		}
		x, ok := f.Arg(0).(expr.Expression)
		if !ok {
			return am, nil, unsupported("aggregate argument %T", f.Arg(0))
		}
		return am, x, nil
	}
	if f.NArgs() != 2 {
		return am, nil, unsupported("aggregate %s with %d arguments", f.Name(), f.NArgs())
	}
	x, ok := f.Arg(1).(expr.Expression)
	if !ok {
		return am, nil, unsupported("aggregate argument %T", f.Arg(1))
	}
	if list, ok := f.Arg(0).(*expr.ListLiteral); ok {
		// An array of fractions: one answer each, NULL for a NULL fraction.
		am.Multi = true
		for _, e := range list.Value {
			switch v := e.(type) {
			case *expr.PrimitiveLiteral[float64]:
				am.Fractions = append(am.Fractions, v.Value)
				am.FractionNulls = append(am.FractionNulls, false)
			case *expr.NullLiteral:
				am.Fractions = append(am.Fractions, 0)
				am.FractionNulls = append(am.FractionNulls, true)
			default:
				return am, nil, unsupported("%s of an array of fractions that are not double precision constants", f.Name())
			}
		}
		// percentile_disc of integers: computed in bigint, answered in x's type.
		switch x.GetType().(type) {
		case *types.Int32Type:
			am.ElemType = arrow.PrimitiveTypes.Int32
		case *types.Int16Type:
			am.ElemType = arrow.PrimitiveTypes.Int16
		}
		if am.ElemType != nil {
			x = &expr.Cast{Type: &types.Int64Type{Nullability: types.NullabilityNullable}, Input: x, FailureBehavior: types.BehaviorThrowException}
		}
		return am, x, nil
	}
	lit, ok := f.Arg(0).(*expr.PrimitiveLiteral[float64])
	if !ok {
		return am, nil, unsupported("%s of a fraction that is not a double precision constant", f.Name())
	}
	am.Fraction = lit.Value
	return am, x, nil
}

func isTrueLiteral(e expr.Expression) bool {
	b, ok := e.(*expr.PrimitiveLiteral[bool])
	return ok && b.Value
}

func (l *lowerer) set(r *plan.SetRel) (*lowered, error) {
	if r.Op() != plan.SetOpUnionAll {
		return nil, unsupported("set operation %v", r.Op())
	}
	var inputs []node
	for _, in := range r.Inputs() {
		lo, err := l.lower(in)
		if err != nil {
			return nil, err
		}
		n, err := l.finish(lo)
		if err != nil {
			return nil, err
		}
		inputs = append(inputs, n)
	}
	n, err := newUnion(inputs)
	if err != nil {
		return nil, err
	}
	return &lowered{node: n}, nil
}

// finish turns a lowered relation into a node.
func (l *lowerer) finish(lo *lowered) (node, error) {
	if lo.routed != nil {
		return l.finishRouted(lo.routed, nil, 0, -1)
	}
	return lo.node, nil
}

// substitute replaces the root field references of e (which index cols) by cols' expressions.
func substitute(e expr.Expression, cols []expr.Expression) expr.Expression {
	var visit expr.VisitFunc
	visit = func(x expr.Expression) expr.Expression {
		if fr, ok := x.(*expr.FieldReference); ok {
			if i, ok := rootIndex(fr); ok && i < len(cols) {
				return cols[i]
			}
			return x
		}
		return x.Visit(visit)
	}
	return visit(e)
}

// rootIndex returns the field index of a direct reference to a root field.
func rootIndex(fr *expr.FieldReference) (int, bool) {
	sf, ok := fr.Reference.(*expr.StructFieldRef)
	if !ok || fr.Root != expr.RootReference || sf.Child != nil || sf.Field < 0 {
		return 0, false
	}
	return int(sf.Field), true
}

// baseRef returns the base column a plain reference points at.
func baseRef(e expr.Expression) (int, bool) {
	fr, ok := e.(*expr.FieldReference)
	if !ok {
		return 0, false
	}
	return rootIndex(fr)
}

// referenced adds to used the root fields e references.
func referenced(e expr.Expression, used *[numBase]bool) {
	var visit expr.VisitFunc
	visit = func(x expr.Expression) expr.Expression {
		if fr, ok := x.(*expr.FieldReference); ok {
			if i, ok := rootIndex(fr); ok && i < numBase {
				used[i] = true
			}
			return x
		}
		return x.Visit(visit)
	}
	visit(e)
}

// rebase rewrites base-schema references of e to references into the read schema rt, where
// base column b is read at position pos[b].
func rebase(e expr.Expression, pos [numBase]int, rt *types.RecordType) (expr.Expression, error) {
	var err error
	var visit expr.VisitFunc
	visit = func(x expr.Expression) expr.Expression {
		if fr, ok := x.(*expr.FieldReference); ok {
			if i, ok := rootIndex(fr); ok && i < numBase && pos[i] >= 0 {
				ref, rerr := expr.NewRootFieldRef(expr.NewStructFieldRef(int32(pos[i])), rt)
				if rerr != nil {
					err = rerr
					return x
				}
				return ref
			}
			return x
		}
		return x.Visit(visit)
	}
	out := visit(e)
	return out, err
}

// compileConjuncts compiles the conjuncts of cond against schema, for the operators that set
// a failing conjunct aside (ops.FilterAll, ops.SetFilter); cond whole when it is one, or when
// a conjunct compiled alone fails where cond does not (the folding of `false AND 1/0 > 1`
// stops at false, PostgreSQL's eval_const_expressions too).
func compileConjuncts(cond expr.Expression, schema *arrow.Schema, ext expr.ExtensionRegistry) ([]*ops.Expr, error) {
	whole, err := ops.Compile(cond, schema, ext)
	if err != nil {
		return nil, err
	}
	if cs := conjuncts(cond); len(cs) > 1 {
		if ps, err := compileAll(cs, schema, ext); err == nil {
			return ps, nil
		}
	}
	return []*ops.Expr{whole}, nil
}

// compileResidual compiles conj, the conjuncts a join evaluates on its joined rows (over
// schema), each alone, after folding their conjunction as PostgreSQL's planner does
// (ops.FoldConjuncts): a constant false decides it before a later conjunct's constant raises.
func compileResidual(conj []expr.Expression, schema *arrow.Schema, ext expr.ExtensionRegistry) ([]*ops.Expr, error) {
	folded, err := ops.FoldConjuncts(conj, schema, ext)
	if err != nil {
		return nil, err
	}
	return compileAll(folded, schema, ext)
}

// compileAll compiles expressions against schema.
func compileAll(es []expr.Expression, schema *arrow.Schema, ext expr.ExtensionRegistry) ([]*ops.Expr, error) {
	out := make([]*ops.Expr, len(es))
	for i, e := range es {
		c, err := ops.Compile(e, schema, ext)
		if err != nil {
			return nil, err
		}
		out[i] = c
	}
	return out, nil
}
