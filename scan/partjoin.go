package scan

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/substrait-io/substrait-go/v8/expr"

	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/scan/aggregate"
	"github.com/flightsrv/flightsrv/scan/ops"
)

// Partition-wise joins (issue 19). A hash join whose two inputs are routed reads of one table
// (routedNodes over the same *routing.DurableTable), one of whose equality keys is the
// partition column on both sides (a plain reference to it, or to a grouping key that is it),
// pairs only rows of one partition with rows of the same partition: the join is the union
// over the partitions p of the join of the left input's rows of p with the right input's rows
// of p. That holds for every input the lowering makes a routed node of — rows, or an
// aggregate grouped by the partition column (among others): such an aggregate's groups of p
// are computed from the rows of p alone. It runs as one fragment per partition, at most the
// table's fan-out at once: the fragment computes the right input over p's buckets (a
// grouped aggregate to its final states), hashes it, and probes it with the left input's rows
// of p, so that the probe and the aggregate run on every core instead of in the coordinator
// after a merge, and a partition's build side alone is held at a time.
//
// When the two inputs read the same buckets (same partitions, buckets and range), neither
// has a residual filter, and no shredded-column cache serves them, each bucket is read once
// (shared read): one read of the union of the two sides' columns, one projection computing
// both sides' expressions (ops.Project extracts the JSON fields every expression reads in
// one pass over each document), the right side's columns aggregated as they come and the
// left side's (its projection's output, e.g. one integer and one error column a row) held
// for the partition under the query's ledger until the right side is complete. The join
// against an aggregate of the same table (every flight against its origin's average delay)
// then parses each document once instead of twice. Both sides still evaluate their
// expressions on every row of the range, as the plain join does, so the same rows raise the
// same errors.
//
// The output is the plain join's (its schema, its pairs); its row order, which SQL leaves
// unspecified, is partition by partition. Right and full joins keep the plain join (their
// unmatched right rows come last).

// partCols flags the output columns of a routed node that hold, on every row, the partition
// of the row's bucket: a plain reference to the partition column, or an aggregate's grouping
// key that is one.
func partCols(outputs []expr.Expression, groups []int, agg bool) []bool {
	if !agg {
		out := make([]bool, len(outputs))
		for i, e := range outputs {
			c, ok := baseRef(e)
			out[i] = ok && c == colPartition
		}
		return out
	}
	out := make([]bool, len(groups))
	for i, g := range groups {
		c, ok := baseRef(outputs[g])
		out[i] = ok && c == colPartition
	}
	return out
}

// partJoinNode is a joinNode run partition by partition (see the top of this file).
type partJoinNode struct {
	join *joinNode
	// spec is the join's spec within one partition: join's but for the partition keys.
	spec        ops.JoinSpec
	left, right *routedNode
	// parts are the partitions, each with its left and right units in bound order; at
	// indexes them by partition value.
	parts []partUnits
	at    map[string]int
	// stream runs the fragments, one unit per partition (fragmentStream), and points back at
	// the node (its pj).
	stream *routedNode
	// shared, when set, is the shared read of both sides' buckets.
	shared *sharedRead
	// agg, when set, is the aggregation directly above the join, run in its fragments
	// (joinagg.go): the node's output is its final aggregate.
	agg *joinAgg
}

// partUnits are one partition's units of the two sides.
type partUnits struct {
	left, right []unit
}

// sharedRead is one read of both sides' columns (cols, schema sch) and one projection of
// both sides' expressions over it: the right side's first (nr of them), then the left's.
type sharedRead struct {
	cols  []routing.Column
	sch   *arrow.Schema
	proj  []*ops.Expr
	names []string
	nr    int
}

// partitionWise returns j run partition by partition when its inputs and keys allow it (see
// the top of this file), else j.
func (l *lowerer) partitionWise(j *joinNode) node {
	switch j.spec.Type {
	case ops.JoinInner, ops.JoinLeft, ops.JoinSemi, ops.JoinAnti, ops.JoinSingle:
	default:
		return j
	}
	ln, ok1 := j.left.(*routedNode)
	rn, ok2 := j.right.(*routedNode)
	if !ok1 || !ok2 || ln.src.Table != rn.src.Table || ln.analyzed != nil || rn.analyzed != nil {
		return j
	}
	for _, n := range []*routedNode{ln, rn} {
		if n.offset != 0 || n.count >= 0 || len(n.sortKeys) > 0 || n.readLimit >= 0 || n.localLimit >= 0 || len(n.readOrder) > 0 || n.desc {
			return j
		}
	}
	// Within a partition the partition keys are equal on every row (a partition value is
	// never NULL): the fragments' join keeps the other keys alone (none: a nested loop over
	// the partition's right rows).
	spec := j.spec
	spec.LeftKeys, spec.RightKeys, spec.NullSafe = nil, nil, nil
	for k := range j.spec.LeftKeys {
		lc, lok := j.spec.LeftKeys[k].Column()
		rc, rok := j.spec.RightKeys[k].Column()
		if lok && rok && lc < len(ln.partOut) && rc < len(rn.partOut) && ln.partOut[lc] && rn.partOut[rc] {
			continue
		}
		spec.LeftKeys = append(spec.LeftKeys, j.spec.LeftKeys[k])
		spec.RightKeys = append(spec.RightKeys, j.spec.RightKeys[k])
		if len(j.spec.NullSafe) > 0 {
			spec.NullSafe = append(spec.NullSafe, j.spec.NullSafe[k])
		}
	}
	if len(spec.LeftKeys) == len(j.spec.LeftKeys) {
		return j
	}
	if spec.NullAware {
		spec = j.spec // NOT IN's null-aware anti join is over one key: it stays
	}
	pj := &partJoinNode{join: j, spec: spec, left: ln, right: rn, at: map[string]int{}}
	at := pj.at
	for side, n := range []*routedNode{ln, rn} {
		for _, u := range n.units {
			i, ok := at[string(u.partition)]
			if !ok {
				i = len(pj.parts)
				at[string(u.partition)] = i
				pj.parts = append(pj.parts, partUnits{})
			}
			if side == 0 {
				pj.parts[i].left = append(pj.parts[i].left, u)
			} else {
				pj.parts[i].right = append(pj.parts[i].right, u)
			}
		}
	}
	pj.shared = l.sharedRead(ln, rn)
	units := make([]unit, len(pj.parts))
	for i, p := range pj.parts {
		u := p.left
		if len(u) == 0 {
			u = p.right
		}
		units[i] = unit{partition: u[0].partition}
	}
	pj.stream = &routedNode{src: ln.src, units: units, projSch: j.schema, schema: j.schema, outWidth: j.schema.NumFields(),
		readLimit: -1, localLimit: -1, count: -1, pj: pj}
	return pj
}

// sharedRead returns the shared read of ln's and rn's buckets, or nil when they do not read
// the same rows (other buckets or ranges, or a residual filter) or one side's aggregate asks
// its buckets' stores (pushdown.go: an archived bucket's count from its manifest costs no
// read).
func (l *lowerer) sharedRead(ln, rn *routedNode) *sharedRead {
	if ln.store != nil || rn.store != nil || len(ln.filters) > 0 || len(rn.filters) > 0 || !ln.src.Range.Start.Equal(rn.src.Range.Start) || !ln.src.Range.End.Equal(rn.src.Range.End) ||
		!reflect.DeepEqual(ln.units, rn.units) {
		return nil
	}
	var used [numBase]bool
	for _, n := range []*routedNode{rn, ln} {
		for _, e := range n.outputs {
			referenced(e, &used)
		}
	}
	sr := &sharedRead{}
	var pos [numBase]int
	for i := range pos {
		pos[i] = -1
		if used[i] {
			pos[i] = len(sr.cols)
			sr.cols = append(sr.cols, routing.AllColumns[i])
		}
	}
	sr.sch = ln.src.Table.Def().BatchSchema(sr.cols)
	rt := recordType(ln.base, pos)
	for side, n := range []*routedNode{rn, ln} {
		for i, e := range n.outputs {
			r, err := rebase(e, pos, rt)
			if err != nil {
				return nil
			}
			c, err := ops.Compile(r, sr.sch, l.ext)
			if err != nil || !arrow.TypeEqual(c.Type(), n.projSch.Field(i).Type) {
				return nil
			}
			sr.proj = append(sr.proj, c)
			sr.names = append(sr.names, fmt.Sprintf("side%d_%d", side, i))
		}
		if side == 0 {
			sr.nr = len(sr.proj)
		}
	}
	return sr
}

func (n *partJoinNode) Schema() *arrow.Schema {
	if n.agg != nil {
		return n.agg.schema
	}
	return n.join.schema
}

func (n *partJoinNode) open(ctx context.Context, rt *runtime) (array.RecordReader, error) {
	sch := n.agg.streamSchema(n.join.schema)
	release, window, err := n.stream.reserveWidth(rt, rt.fanout(n.stream), sch)
	if err != nil {
		return nil, err
	}
	fs := newFragmentStream(ctx, rt, n.stream, sch, -1)
	fs.unreserve, fs.window = release, window // the window is 1: the stream is not grouped
	if n.agg != nil {
		return n.agg.final(ctx, rt, fs)
	}
	return fs, nil
}

func (n *partJoinNode) explain(a *Analysis) []string {
	lines := n.join.explain(nil)
	how := "each side reads its buckets"
	if n.shared != nil {
		how = fmt.Sprintf("one read of each bucket [%s] feeds both sides (unless the shredded-column cache serves them)", colNames(n.shared.cols))
	}
	lines[0] += fmt.Sprintf(", partition-wise: one fragment per partition (%d), %s", len(n.parts), how)
	return n.agg.explain(a, n, lines[0], n.left.explain(a), n.right.explain(a))
}

// colNames lists columns for EXPLAIN.
func colNames(cols []routing.Column) string {
	var b bytes.Buffer
	for i, c := range cols {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(c.String())
	}
	return b.String()
}

// fragment runs the join over partition u.partition's rows, ending in the partial aggregate of
// the aggregation above it when there is one. A fragment runs one partition even then: its
// join is a join of its own, and the partitions' sizes vary by orders of magnitude.
func (n *partJoinNode) fragment(ctx context.Context, rt *runtime, u unit) (array.RecordReader, error) {
	r, err := n.partition(ctx, rt, u)
	if err != nil || n.agg == nil {
		return r, err
	}
	if r, err = n.agg.partialOf(ctx, rt, rt.analysis.track(n, joinOp, r)); err != nil {
		return nil, err
	}
	return rt.analysis.track(n, opLast, r), nil
}

// partition runs the join over partition u.partition's rows.
func (n *partJoinNode) partition(ctx context.Context, rt *runtime, u unit) (array.RecordReader, error) {
	p := n.parts[n.at[string(u.partition)]]
	if len(p.left) == 0 {
		// No left row: no output row for any of the join types run partition-wise.
		return EmptyReader(n.join.schema), nil
	}
	var left, right array.RecordReader
	var err error
	if n.shared != nil && (rt.opts.Shred == nil || n.left.shred == nil && n.right.shred == nil) {
		left, right, err = n.sharedSides(ctx, rt, p.left)
	} else {
		left, right = n.side(ctx, rt, n.left, p.left), n.side(ctx, rt, n.right, p.right)
	}
	if err != nil {
		return nil, err
	}
	return ops.HashJoin(ctx, left, right, n.spec, rt.mem), nil
}

// side reads n's input over units us (one partition's): its rows, or its aggregate's final
// states (a bucket answered by its store gives its partial states).
func (n *partJoinNode) side(ctx context.Context, rt *runtime, rn *routedNode, us []unit) array.RecordReader {
	sch := rn.projSch
	if rn.agg != nil {
		sch = rn.partialSch
	}
	opens := make([]func() (array.RecordReader, error), len(us))
	for i, u := range us {
		opens[i] = func() (array.RecordReader, error) {
			r, done, err := rn.fragmentInput(ctx, rt, u)
			if err != nil || done || rn.agg == nil {
				return r, err
			}
			return aggregate.New(ctx, r, rn.projSch, *rn.agg, aggregate.Partial, rt.mem)
		}
	}
	var r array.RecordReader = newChain(sch, opens)
	if rn.agg == nil {
		return r
	}
	out, err := aggregate.New(ctx, r, rn.projSch, *rn.agg, aggregate.Final, rt.mem)
	if err != nil {
		return ErrReader(rn.schema, err)
	}
	return out
}

// sharedSides reads units us (one partition's, the same on both sides) once for both sides:
// the right reader aggregates (or passes) the right side's columns of the shared projection
// and holds the left side's, which the left reader returns once the right one has ended.
func (n *partJoinNode) sharedSides(ctx context.Context, rt *runtime, us []unit) (left, right array.RecordReader, err error) {
	sr := n.shared
	opens := make([]func() (array.RecordReader, error), len(us))
	for i, u := range us {
		opens[i] = func() (array.RecordReader, error) {
			ctx, span := startFragmentSpan(ctx)
			req := routing.BatchRequest{Range: n.left.src.Range, Columns: sr.cols, Limit: -1, Alloc: rt.mem}
			r, tier, err := n.left.src.Table.ScanBucket(ctx, u.bucket, req)
			if err != nil {
				failFragment(span)
				return nil, err
			}
			rt.countTier(tier)
			rt.analysis.tier(n.left, opScan, tier)
			out := rt.analysis.track(n.left, opScan, conform(endedBy(r, span, tier, false), sr.sch))
			return rt.analysis.track(n.left, opProject, ops.Project(ctx, out, sr.proj, sr.names, rt.mem)), nil
		}
	}
	t := &tee{in: newChain(exprSchema(sr.proj, sr.names), opens), nr: sr.nr, rsch: n.right.projSch, lsch: n.left.projSch}
	t.refs.Store(1)
	right, left = t, &spoolReader{t: t, sch: n.left.projSch}
	if n.right.agg != nil {
		if right, err = aggregate.New(ctx, t, n.right.projSch, *n.right.agg, aggregate.Single, rt.mem); err != nil {
			t.Release()
			return nil, nil, err
		}
	}
	left.(*spoolReader).refs.Store(1)
	if n.left.agg != nil {
		if left, err = aggregate.New(ctx, left, n.left.projSch, *n.left.agg, aggregate.Single, rt.mem); err != nil {
			right.Release()
			return nil, nil, err
		}
	}
	return left, right, nil
}

// chain reads the readers opens make one after the other, opening each once the one before
// it has ended (a grouped fragment's buckets, a partition-wise join's side), each under sch.
type chain struct {
	sch   *arrow.Schema
	opens []func() (array.RecordReader, error)
	cur   array.RecordReader
	batch arrow.RecordBatch
	err   error
	refs  atomic.Int64
}

func newChain(sch *arrow.Schema, opens []func() (array.RecordReader, error)) *chain {
	c := &chain{sch: sch, opens: opens}
	c.refs.Store(1)
	return c
}

func (c *chain) Schema() *arrow.Schema          { return c.sch }
func (c *chain) Record() arrow.RecordBatch      { return c.batch }
func (c *chain) RecordBatch() arrow.RecordBatch { return c.batch }
func (c *chain) Err() error                     { return c.err }
func (c *chain) Retain()                        { c.refs.Add(1) }

func (c *chain) Release() {
	if c.refs.Add(-1) != 0 {
		return
	}
	c.batch = nil
	if c.cur != nil {
		c.cur.Release()
		c.cur = nil
	}
}

func (c *chain) Next() bool {
	c.batch = nil
	for c.err == nil {
		if c.cur == nil {
			if len(c.opens) == 0 {
				return false
			}
			r, err := c.opens[0]()
			c.opens = c.opens[1:]
			if err != nil {
				c.err = err
				return false
			}
			c.cur = conform(r, c.sch)
		}
		if c.cur.Next() {
			c.batch = c.cur.RecordBatch()
			return true
		}
		c.err = c.cur.Err()
		c.cur.Release()
		c.cur = nil
	}
	return false
}

// tee reads the shared projection's batches: it returns their first nr columns (the right
// side's, under rsch) and holds the others (the left side's, under lsch) for spoolReader.
type tee struct {
	in         array.RecordReader
	nr         int
	rsch, lsch *arrow.Schema
	batch      arrow.RecordBatch
	spool      []arrow.RecordBatch
	ended      bool
	err        error
	refs       atomic.Int64
}

func (t *tee) Schema() *arrow.Schema          { return t.rsch }
func (t *tee) Record() arrow.RecordBatch      { return t.batch }
func (t *tee) RecordBatch() arrow.RecordBatch { return t.batch }
func (t *tee) Err() error                     { return t.err }
func (t *tee) Retain()                        { t.refs.Add(1) }

func (t *tee) Release() {
	if t.refs.Add(-1) != 0 {
		return
	}
	t.drop()
}

func (t *tee) drop() {
	if t.batch != nil {
		t.batch.Release()
		t.batch = nil
	}
	if t.in != nil {
		t.in.Release()
		t.in = nil
	}
}

func (t *tee) Next() bool {
	if t.batch != nil {
		t.batch.Release()
		t.batch = nil
	}
	if t.in == nil {
		return false
	}
	if !t.in.Next() {
		t.err, t.ended = t.in.Err(), true
		t.in.Release()
		t.in = nil
		return false
	}
	b := t.in.RecordBatch()
	cols := b.Columns()
	t.spool = append(t.spool, array.NewRecordBatch(t.lsch, cols[t.nr:], b.NumRows()))
	t.batch = array.NewRecordBatch(t.rsch, cols[:t.nr], b.NumRows())
	return true
}

// errSpoolEarly is an internal error: the left side of a shared read was read before the
// right side had ended (ops.HashJoin reads its right input whole first).
var errSpoolEarly = errors.New("scan: a partition-wise join's left side was read before its right side had ended")

// spoolReader returns the left side's batches tee held, once tee has ended, releasing each
// as it passes on.
type spoolReader struct {
	t     *tee
	sch   *arrow.Schema
	batch arrow.RecordBatch
	err   error
	refs  atomic.Int64
}

func (s *spoolReader) Schema() *arrow.Schema          { return s.sch }
func (s *spoolReader) Record() arrow.RecordBatch      { return s.batch }
func (s *spoolReader) RecordBatch() arrow.RecordBatch { return s.batch }
func (s *spoolReader) Err() error                     { return s.err }
func (s *spoolReader) Retain()                        { s.refs.Add(1) }

func (s *spoolReader) Release() {
	if s.refs.Add(-1) != 0 {
		return
	}
	if s.batch != nil {
		s.batch.Release()
		s.batch = nil
	}
	for _, b := range s.t.spool {
		b.Release()
	}
	s.t.spool = nil
}

func (s *spoolReader) Next() bool {
	if s.batch != nil {
		s.batch.Release()
		s.batch = nil
	}
	if s.err != nil {
		return false
	}
	if !s.t.ended {
		s.err = errSpoolEarly
		return false
	}
	if s.t.err != nil || len(s.t.spool) == 0 {
		return false
	}
	s.batch = s.t.spool[0]
	s.t.spool[0] = nil
	s.t.spool = s.t.spool[1:]
	return true
}
