package scan

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/substrait-io/substrait-go/v8/plan"

	"github.com/flightsrv/flightsrv/scan/ops"
	"github.com/flightsrv/flightsrv/substrait"
)

// recursionFallback bounds the rows a recursive query keeps (their bytes) when the query
// has no memory limit (Options.QueryMemory <= 0): a recursion that does not end fails there
// instead of running on.
const recursionFallback = 1 << 30

// workTable is a recursive query's working table: its schema; what its recursive term reads in
// the iteration running is the execution's (runtime.setWork, set by the recursiveNode before
// it opens the term), as a compiled plan may run several times at once.
type workTable struct {
	schema *arrow.Schema
}

// workRead is what the reads of a working table return in one execution: the batches of the
// iteration running, or, for a term opened once for every iteration (streamedTerm), the
// recursion's reader of every working table in turn.
type workRead struct {
	batches []arrow.RecordBatch
	feed    array.RecordReader
}

// setWork makes w what wt's reads return in this execution.
func (rt *runtime) setWork(wt *workTable, w workRead) {
	rt.workMu.Lock()
	defer rt.workMu.Unlock()
	if rt.work == nil {
		rt.work = map[*workTable]workRead{}
	}
	rt.work[wt] = w
}

// workOf returns what wt's reads return in this execution.
func (rt *runtime) workOf(wt *workTable) workRead {
	rt.workMu.Lock()
	defer rt.workMu.Unlock()
	return rt.work[wt]
}

// workTableNode reads a working table (substrait.WorkTable).
type workTableNode struct {
	id int
	wt *workTable
}

func (n *workTableNode) Schema() *arrow.Schema { return n.wt.schema }

func (n *workTableNode) explain(a *Analysis) []string {
	return []string{fmt.Sprintf("WorkTable %d", n.id) + a.suffix(n, "")}
}

func (n *workTableNode) open(ctx context.Context, rt *runtime) (array.RecordReader, error) {
	w := rt.workOf(n.wt)
	if w.feed != nil {
		w.feed.Retain()
		return w.feed, nil
	}
	// The batches are the recursion's, of the working table's schema.
	return array.NewRecordReader(n.wt.schema, w.batches)
}

// recursiveNode is a recursive query (substrait.RecursiveUnion, ops.RecursiveUnion): its
// non-recursive term, then its recursive term over the working table, opened once per
// iteration, or once for all of them when streamed (streamedTerm).
type recursiveNode struct {
	seed, step node
	wt         *workTable
	def        *substrait.RecursiveUnion
	streamed   bool
}

func (n *recursiveNode) Schema() *arrow.Schema { return n.wt.schema }

func (n *recursiveNode) explain(a *Analysis) []string {
	op := "UNION ALL"
	if n.def.Distinct {
		op = "UNION"
	}
	out := []string{fmt.Sprintf("RecursiveUnion %s, work table %d", op, n.def.ID) + a.suffix(n, "")}
	out = append(out, indent(n.seed.explain(a))...)
	return append(out, indent(n.step.explain(a))...)
}

func (n *recursiveNode) open(ctx context.Context, rt *runtime) (array.RecordReader, error) {
	seed, err := openNode(ctx, rt, n.seed)
	if err != nil {
		return nil, err
	}
	term := ops.RecursiveTerm{Open: func(work []arrow.RecordBatch) (array.RecordReader, error) {
		rt.setWork(n.wt, workRead{batches: work})
		return openNode(ctx, rt, n.step)
	}}
	if n.streamed {
		term.Stream = func(feed array.RecordReader) (array.RecordReader, error) {
			rt.setWork(n.wt, workRead{feed: feed})
			return openNode(ctx, rt, n.step)
		}
	}
	return ops.RecursiveUnion(ctx, seed, n.wt.schema, term, n.def.Distinct, rt.mem, recursionFallback), nil
}

// streamedTerm reports whether step, a recursive term, is filters, projections and
// selections of one read of the working table wt: operators that read a batch at a time and
// emit every row they derive from it before they read the next, which ops.RecursiveTerm.Stream
// asks for, so that the term is opened once rather than once per iteration.
func streamedTerm(step node, wt *workTable) bool {
	for {
		switch n := step.(type) {
		case *filterNode:
			step = n.in
		case *projectNode:
			step = n.in
		case *selectNode:
			step = n.in
		case *workTableNode:
			return n.wt == wt
		default:
			return false
		}
	}
}

// recursive lowers a recursive query: its terms as coordinator nodes, the recursive term's
// WorkTable leaves reading the working table of the same ID.
func (l *lowerer) recursive(r *plan.ExtensionMultiRel) (*lowered, error) {
	def, ok := r.Definition().(*substrait.RecursiveUnion)
	if !ok || len(r.GetInputs()) != 2 {
		return nil, unsupported("extension relation %T", r.Definition())
	}
	seedLo, err := l.lower(r.GetInputs()[0])
	if err != nil {
		return nil, err
	}
	seed, err := l.finish(seedLo)
	if err != nil {
		return nil, err
	}
	schema := seed.Schema()
	if def.Distinct {
		for _, f := range schema.Fields() {
			if !ops.JoinKeyType(f.Type) {
				return nil, unsupported("recursive UNION of a column of type %s", f.Type)
			}
		}
	}
	wt := &workTable{schema: schema}
	if l.work == nil {
		l.work = map[int]*workTable{}
	}
	l.work[def.ID] = wt
	stepLo, err := l.lower(r.GetInputs()[1])
	if err != nil {
		return nil, err
	}
	step, err := l.finish(stepLo)
	if err != nil {
		return nil, err
	}
	ss := step.Schema()
	if ss.NumFields() != schema.NumFields() {
		return nil, unsupported("recursive query terms of different widths")
	}
	for i := range ss.NumFields() {
		if !arrow.TypeEqual(ss.Field(i).Type, schema.Field(i).Type) {
			return nil, unsupported("recursive query terms of different column types")
		}
	}
	return &lowered{node: &recursiveNode{seed: seed, step: step, wt: wt, def: def, streamed: streamedTerm(step, wt)}}, nil
}

// workTableRead lowers the read of a recursive query's working table.
func (l *lowerer) workTableRead(r *plan.ExtensionLeafRel) (*lowered, error) {
	def, ok := r.Definition().(*substrait.WorkTable)
	if !ok {
		return nil, unsupported("extension relation %T", r.Definition())
	}
	wt, ok := l.work[def.ID]
	if !ok {
		return nil, unsupported("a work table read outside its recursive query")
	}
	return &lowered{node: &workTableNode{id: def.ID, wt: wt}}, nil
}
