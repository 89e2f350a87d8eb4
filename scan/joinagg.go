package scan

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/substrait-io/substrait-go/v8/expr"

	"github.com/flightsrv/flightsrv/scan/aggregate"
	"github.com/flightsrv/flightsrv/scan/ops"
)

// Aggregates over a join run in its fragments (issue 19). A join probed in its left input's
// fragments (fragjoin.go) or run partition by partition (partjoin.go) outputs the
// concatenation, in fragment order, of its fragments' outputs; an aggregation directly
// above it (through emit mappings alone) is then computed as a routed read's is: each
// fragment aggregates its own pairs partially, and the coordinator combines the partial
// states in fragment order (aggregate.Final), which gives the groups, the values and their
// order that one aggregation over the concatenation gives (scan/aggregate's Partial and
// Final). No joined row is handed to the coordinator: a count over a semi join moves one row
// per fragment instead of every matching row's batch, and a probe's fragments, each ending
// in one partial state, run runs of consecutive buckets (groupSize) as a routed aggregate's
// do, so a fragment's fixed costs (goroutine, probe, operators) are paid once per run of
// buckets instead of once per bucket. A partition-wise join's fragments still run one
// partition each.

// joinAgg is the aggregation run in a distributed join's fragments (see the top of this file).
type joinAgg struct {
	// sel are the join's output columns the aggregation reads, in the order of its input
	// (the emit mappings between them composed), nil when it reads the join's output as it is.
	sel []int
	// exprs are the aggregation's inputs (grouping expressions, measure arguments and
	// filters), compiled over its input schema (the join's output through sel); proj is
	// their schema.
	exprs []*ops.Expr
	proj  *arrow.Schema
	spec  aggregate.Spec
	// partial is the fragments' output schema, schema the final output's.
	partial, schema *arrow.Schema
}

// aggregateInFragments returns the distributed join under in (through selects) with the
// aggregation spec of inputs (compiled over in's schema) run in its fragments (see the top of
// this file), and true; nil and false when in is no such join or its join aggregates already.
func (l *lowerer) aggregateInFragments(in node, spec aggregate.Spec, inputs []expr.Expression) (node, bool, error) {
	var sel []int
	n := in
	for {
		s, ok := n.(*selectNode)
		if !ok {
			break
		}
		if sel == nil {
			sel = s.cols
		} else {
			composed := make([]int, len(sel))
			for i, c := range sel {
				composed[i] = s.cols[c]
			}
			sel = composed
		}
		n = s.in
	}
	var agg **joinAgg
	var stream **routedNode // the probe's, whose fragments then run runs of buckets
	switch j := n.(type) {
	case *probeJoinNode:
		agg, stream = &j.agg, &j.stream
	case *partJoinNode:
		agg = &j.agg // one partition a fragment still (partJoinNode.fragment)
	default:
		return nil, false, nil
	}
	if *agg != nil {
		return nil, false, nil
	}
	exprs, err := compileAll(inputs, in.Schema(), l.ext)
	if err != nil {
		return nil, false, err
	}
	if err := guardAggInputs(spec, exprs); err != nil {
		return nil, false, err
	}
	a := &joinAgg{sel: sel, exprs: exprs, proj: exprSchema(exprs, nil), spec: spec}
	if a.schema, err = aggregate.OutputSchema(a.proj, spec); err != nil {
		return nil, false, err
	}
	if err := splitRealSum(a.proj, spec); err != nil {
		return nil, false, err
	}
	if a.partial, err = aggregate.PartialSchema(a.proj, spec); err != nil {
		return nil, false, err
	}
	*agg = a
	if stream != nil {
		*stream = a.aggregated(*stream)
	}
	return n, true, nil
}

// partialOf runs the partial aggregation over one fragment's join output r, taking ownership
// of r.
func (a *joinAgg) partialOf(ctx context.Context, rt *runtime, r array.RecordReader) (array.RecordReader, error) {
	if a.sel != nil {
		r = ops.Select(r, a.sel)
	}
	return aggregate.New(ctx, projectKeeping(ctx, r, nil, a.exprs, a.proj, rt), a.proj, a.spec, aggregate.Partial, rt.mem)
}

// final combines the fragments' partial states (the stream of them, in fragment order).
// It takes ownership of partials.
func (a *joinAgg) final(ctx context.Context, rt *runtime, partials array.RecordReader) (array.RecordReader, error) {
	return aggregate.New(ctx, partials, a.proj, a.spec, aggregate.Final, rt.mem)
}

// explain is the EXPLAIN of distributed join n whose own line is head and whose inputs
// explain as left and right, aggregated by a (nil: none): the aggregation's lines (the final
// aggregate at the coordinator, the partial one in each fragment) above the join's.
func (a *joinAgg) explain(an *Analysis, n node, head string, left, right []string) []string {
	if a == nil {
		return append(append([]string{head + an.suffix(n, "")}, indent(left)...), indent(right)...)
	}
	join := append(append([]string{head + an.suffix(n, joinOp)}, indent(left)...), indent(right)...)
	return append([]string{
		"Final aggregate " + aggText(a.spec) + an.suffix(n, ""),
		"  Partial aggregate " + aggText(a.spec) + " in each of the join's fragments, over its pairs" + an.suffix(n, opLast),
	}, indent(indent(join))...)
}

// joinOp is the operator under which a join whose aggregation runs in its fragments counts
// the pairs its fragments produce (EXPLAIN ANALYZE).
const joinOp = "join"

// streamSchema is the schema of the fragments' output of a distributed join whose
// aggregation is a (nil: none) and whose own output schema is joinSch.
func (a *joinAgg) streamSchema(joinSch *arrow.Schema) *arrow.Schema {
	if a == nil {
		return joinSch
	}
	return a.partial
}

// aggregated returns a copy of stream, the fragment stream of a distributed join, ending in
// a's partial aggregate, so that its fragments run runs of units (routedNode.grouped).
func (a *joinAgg) aggregated(stream *routedNode) *routedNode {
	s := *stream
	s.agg, s.partialSch, s.projSch, s.schema, s.outWidth = &a.spec, a.partial, a.proj, a.schema, a.schema.NumFields()
	return &s
}
