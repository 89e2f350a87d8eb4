package scan

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/flightsrv/flightsrv/scan/ops"
)

// Joins probed in the probe side's fragments (issue 19). A hash join whose left (probe) input
// is a routed read of rows — no aggregate, sort, limit or offset above its fragments, which
// then each give the rows of their bucket, and the coordinator their concatenation in unit
// order — and whose type is inner, left, semi, anti or single, pairs each left row with the
// right rows alone: its output is the concatenation, in the same order, of each fragment's
// rows joined with the whole right side. So the right input is read, buffered and hashed once
// (ops.BuildJoinTable, under the query's ledger, before any fragment starts), and each
// fragment of the left input ends in a probe of that table (ops.HashJoinProbe, read-only, so
// the fragments probe concurrently): the probe runs on every core instead of in the
// coordinator after the merge. Every left row is still probed, so the same rows raise the
// same errors, and the table is built before any left row is read, as the coordinator's join
// does. Right and full joins keep the coordinator's join (their unmatched right rows depend
// on every fragment's), as do joins whose inputs are both routed reads of one table keyed on
// the partition columns (partjoin.go runs those partition by partition).

// probeJoinNode is a joinNode whose probe runs in the left input's fragments (see the top of
// this file).
type probeJoinNode struct {
	join *joinNode
	// left is the probe side as lowered: its fragments read, filter and project the rows.
	left *routedNode
	// stream runs the left input's units, each fragment left's ending in the probe (its
	// probe field points back at this node), and in agg's partial aggregate when set.
	stream *routedNode
	// agg, when set, is the aggregation directly above the join, run in its fragments
	// (joinagg.go): the node's output is its final aggregate.
	agg *joinAgg
}

// distribute returns j run partition by partition (partitionWise) or probed in its left
// input's fragments (probeInFragments) when its inputs allow it, else j.
func (l *lowerer) distribute(j *joinNode) node {
	if n := l.partitionWise(j); n != node(j) {
		return n
	}
	return l.probeInFragments(j)
}

// probeInFragments returns j probed in its left input's fragments when its type and left
// input allow it (see the top of this file), else j.
func (l *lowerer) probeInFragments(j *joinNode) node {
	switch j.spec.Type {
	case ops.JoinInner, ops.JoinLeft, ops.JoinSemi, ops.JoinAnti, ops.JoinSingle:
	default:
		return j
	}
	ln, ok := j.left.(*routedNode)
	if !ok || ln.analyzed != nil || ln.pj != nil || ln.probe != nil || ln.agg != nil || ln.store != nil || ln.hot != nil {
		return j
	}
	if ln.offset != 0 || ln.count >= 0 || len(ln.sortKeys) > 0 || ln.readLimit >= 0 || ln.localLimit >= 0 || len(ln.readOrder) > 0 || ln.desc {
		return j
	}
	if ln.outWidth != ln.projSch.NumFields() {
		return j // the coordinator would drop sort-key columns the join's left schema lacks
	}
	pn := &probeJoinNode{join: j, left: ln}
	pn.stream = &routedNode{src: ln.src, units: ln.units, projSch: j.schema, schema: j.schema, outWidth: j.schema.NumFields(),
		rowBytes: ln.rowBytes, readLimit: -1, localLimit: -1, count: -1, probe: pn}
	return pn
}

func (n *probeJoinNode) Schema() *arrow.Schema {
	if n.agg != nil {
		return n.agg.schema
	}
	return n.join.schema
}

// probeTableKey is the context key under which a probeJoinNode's execution hands its built
// table to its fragments (a Prepared plan is shared by concurrent executions: the table is
// the execution's, not the node's).
type probeTableKey struct{ n *probeJoinNode }

func (n *probeJoinNode) open(ctx context.Context, rt *runtime) (array.RecordReader, error) {
	right, err := openNode(ctx, rt, n.join.right)
	if err != nil {
		return nil, err
	}
	sch := n.agg.streamSchema(n.join.schema)
	release, window, err := n.stream.reserveWidth(rt, rt.fanout(n.stream), sch)
	if err != nil {
		right.Release()
		return nil, err
	}
	s := &probeStream{ctx: ctx, rt: rt, n: n, sch: sch, window: window, right: right, unreserve: release}
	s.refs.Store(1)
	if n.agg != nil {
		return n.agg.final(ctx, rt, s)
	}
	return s, nil
}

func (n *probeJoinNode) explain(a *Analysis) []string {
	lines := n.join.explain(nil)
	lines[0] += fmt.Sprintf(", probed in the probe side's fragments (%d), its build side hashed once and shared", len(n.left.units))
	if g := groupSize(len(n.left.units), n.left.src.Table.Fanout()); g > 1 && n.agg != nil {
		lines[0] += fmt.Sprintf(", runs of up to %d consecutive buckets a fragment", g)
	}
	return n.agg.explain(a, n, lines[0], n.left.explain(a), n.join.right.explain(a))
}

// fragment runs the left input's fragment over units us, ending in the probe of the
// execution's table.
func (n *probeJoinNode) fragment(ctx context.Context, rt *runtime, us []unit) (array.RecordReader, error) {
	tab, _ := ctx.Value(probeTableKey{n}).(*ops.JoinTable)
	if tab == nil {
		return nil, fmt.Errorf("scan: a join's probe fragment started without its table")
	}
	if n.agg == nil {
		in, err := n.left.fragment(ctx, rt, us)
		if err != nil {
			return nil, err
		}
		return ops.HashJoinProbe(ctx, in, tab, rt.mem), nil
	}
	// The partial aggregate takes batches of any size: the left input's rows are probed as
	// they are read, not coalesced first (ops.Rebatch would copy the small batches of a run
	// of small buckets).
	out := ops.HashJoinProbe(ctx, n.left.inputs(ctx, rt, us), tab, rt.mem)
	r, err := n.agg.partialOf(ctx, rt, rt.analysis.track(n, joinOp, out))
	if err != nil {
		return nil, err
	}
	return rt.analysis.track(n, opLast, r), nil
}

// probeStream builds the join's table at its first Next, then runs the left input's
// fragments, each probing it, and returns their outputs in unit order.
type probeStream struct {
	ctx       context.Context
	rt        *runtime
	n         *probeJoinNode
	sch       *arrow.Schema // the fragments' output: the join's, or its aggregation's partial states
	window    int           // reserveWidth's
	right     array.RecordReader
	tab       *ops.JoinTable
	fs        *fragmentStream
	unreserve func()
	batch     arrow.RecordBatch
	err       error
	refs      atomic.Int64
}

func (s *probeStream) Schema() *arrow.Schema          { return s.sch }
func (s *probeStream) Record() arrow.RecordBatch      { return s.batch }
func (s *probeStream) RecordBatch() arrow.RecordBatch { return s.batch }
func (s *probeStream) Err() error                     { return s.err }
func (s *probeStream) Retain()                        { s.refs.Add(1) }

func (s *probeStream) Release() {
	if s.refs.Add(-1) != 0 {
		return
	}
	s.batch = nil
	s.end()
	if s.unreserve != nil {
		s.unreserve()
		s.unreserve = nil
	}
}

// end stops the fragments (waiting for them) and releases the table and the right input.
func (s *probeStream) end() {
	if s.fs != nil {
		s.fs.Release() // its unreserve is s's: given back in Release
		s.fs = nil
	}
	if s.tab != nil {
		s.tab.Release()
		s.tab = nil
	}
	if s.right != nil {
		s.right.Release()
		s.right = nil
	}
}

func (s *probeStream) Next() bool {
	s.batch = nil
	if s.err != nil {
		return false
	}
	if s.fs == nil {
		if s.right == nil {
			return false // ended
		}
		right := s.right
		s.right = nil
		tab, err := ops.BuildJoinTable(s.ctx, s.n.left.projSch, right, s.n.join.spec, s.rt.mem)
		if err != nil {
			s.err = err
			return false
		}
		s.tab = tab
		ctx := context.WithValue(s.ctx, probeTableKey{s.n}, tab)
		s.fs = newFragmentStream(ctx, s.rt, s.n.stream, s.sch, -1)
		s.fs.window = s.window
	}
	if s.fs.Next() {
		s.batch = s.fs.RecordBatch()
		return true
	}
	s.err = s.fs.Err()
	s.end()
	return false
}
