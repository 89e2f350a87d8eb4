package scan

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/substrait-io/substrait-go/v8/plan"

	"github.com/flightsrv/flightsrv/pushdown"
	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/scan/ledger"
	"github.com/flightsrv/flightsrv/scan/ops"
	"github.com/flightsrv/flightsrv/scan/shred"
)

// Source is what a plan's routed ReadRel reads: a table, the partitions pinned by the query
// (at least one), and the finite half-open time range [Start, End), UTC. Present, when not
// nil, holds per partition (parallel to Partitions) the only buckets to read: partition
// discovery's buckets with a route row (routing.BucketSet; the others were never written).
// Ranges, when not nil, are the disjoint ranges (sorted) whose union the read's time filter
// allows, Range their hull: only the buckets they cover are read, each clipped to Range (the
// residual filter drops the rows between the ranges).
type Source struct {
	Table      *routing.DurableTable
	Partitions [][]byte
	Present    []routing.BucketSet
	Range      routing.TimeRange
	Ranges     []routing.TimeRange
}

// Buckets returns the buckets the source reads, per partition (parallel to Partitions), each
// ordered by bounds.
func (s Source) Buckets() [][]routing.BucketID {
	if s.Ranges != nil {
		return routing.PartitionBucketsIn(s.Table.Def(), s.Partitions, s.Present, s.Ranges)
	}
	return routing.PartitionBuckets(s.Table.Def(), s.Partitions, s.Present, s.Range)
}

// Options configures one execution.
type Options struct {
	// Bind resolves a ReadRel of the plan to its routed source (the planner knows the routed
	// predicate); an error refuses the plan.
	Bind func(*plan.NamedTableReadRel) (Source, error)
	// Alloc is the parent allocator of the query's ledger (nil: memory.DefaultAllocator).
	Alloc memory.Allocator
	// QueryMemory bounds the bytes the query's batches may hold (<= 0: none); past it the query
	// fails with an error wrapping ledger.ErrMemoryLimit.
	QueryMemory int64
	// Budget, when set, is the account all the process's queries share (ledger.Budget): the
	// query's ledger joins it, and the query fails with an error wrapping
	// ledger.ErrMemoryLimit when its bytes would take the total past the budget's limit.
	Budget *ledger.Budget
	// QueryMaxRows bounds the rows the fragments may read together, with the rows the
	// query's set-returning functions produce (ops.ProjectSet) (<= 0: none); past it the query
	// fails with a *ledger.RowLimitExceededError.
	QueryMaxRows int64
	// QueryCPU bounds the CPU time the query's fragments and coordinator may use in all,
	// measured per batch on their threads (ledger.CPUTimer) (<= 0: none, and nothing is
	// measured); past it the query fails with a *ledger.CPULimitExceededError.
	QueryCPU time.Duration
	// Fanout overrides the table's bound on concurrently running fragments (0: the table's).
	Fanout int
	// Pushdown enables the pushdown rewrite (pushdown.go): a fragment whose partial aggregate
	// a store answers without reading rows asks the store. When false every fragment reads
	// rows (the --pushdown=false baseline); EXPLAIN still reports the candidates.
	Pushdown bool
	// Shred, when set, is the shredded-column cache (scan/shred; shredded.go): fragments whose
	// expressions read the value column only through JSON fields read whole archived buckets
	// from it when it holds their fields, and fill it otherwise. Shared by every query.
	Shred *shred.Cache

	// explaining is set by Explain: a plan refused only for what executing it would hold
	// (routedNode.checkWidth) is still described.
	explaining bool
}

// Result is a running execution: a record reader over the plan's output (schema Schema, root
// names as field names) that also reports what the fragments did. Batches are owned by the
// reader (valid until the next Next). Release stops every fragment, waits for them and
// returns their connections and memory; it must be called.
type Result struct {
	array.RecordReader
	rt   *runtime
	refs atomic.Int64
}

// Retain adds a reference to the result.
func (r *Result) Retain() {
	r.refs.Add(1)
	r.RecordReader.Retain()
}

// Release drops a reference; the last one stops the execution (see Result) and takes its
// ledger out of the process's budget (ledger.Ledger.Detach).
func (r *Result) Release() {
	r.RecordReader.Release()
	if r.refs.Add(-1) == 0 {
		r.rt.mem.Detach()
	}
}

// Tiers returns how many fragments the hot store and the archive answered so far.
func (r *Result) Tiers() (hot, archive int) {
	return int(r.rt.hotBuckets.Load()), int(r.rt.archiveBuckets.Load())
}

// Pushed returns how many fragments the stores answered through the partial-aggregate port
// and how many of the rewritten fragments read rows instead because their store could not
// answer (routing.ErrNoAggregate).
func (r *Result) Pushed() (answered, fellBack int) {
	return int(r.rt.pushed.Load()), int(r.rt.fellBack.Load())
}

// Rewritten reports whether the pushdown rewrite applied to at least one routed aggregate of
// the plan.
func (r *Result) Rewritten() bool { return r.rt.rewritten }

// Started returns how many fragments were started so far.
func (r *Result) Started() int { return int(r.rt.started.Load()) }

// Ledger returns the execution's ledger (bytes held, peak, outstanding reservations).
func (r *Result) Ledger() *ledger.Ledger { return r.rt.mem }

// Prepared is a plan lowered onto per-bucket fragments and a coordinator stage, not started.
// It is immutable once Prepare returns: Execute may be called any number of times, from any
// number of goroutines, each call an independent execution with its own ledger, fragments
// and routes (nothing of a store's state is resolved at Prepare).
type Prepared struct {
	n        node
	names    []string
	schema   *arrow.Schema // n's schema under the root names
	opts     Options
	rewrites []Rewrite
	windows  Windows
}

// Windows says whether a plan's result may be computed per time window of its routed read:
// WindowsNone when it may not; WindowsAny when the plan's rows are the union of its rows over
// any partition of the read's range into windows, in no particular order; WindowsAsc and
// WindowsDesc when, besides, the rows over consecutive windows concatenated in ascending (or
// descending) time order are the plan's rows in its order.
type Windows int

// The values of Windows.
const (
	WindowsNone Windows = iota
	WindowsAny
	WindowsAsc
	WindowsDesc
)

// Rewrite describes one routed aggregate the stores can answer (a pushdown candidate): its
// measures ("count(*)", "min(timestamp)", "max(timestamp)", in order), its time bin (nil when
// ungrouped), the routed table's name, and whether the pushdown rewrite applied to it
// (Options.Pushdown). It holds no partition value or literal beyond a date_bin origin.
type Rewrite struct {
	Measures []string
	Bin      *routing.Binning
	Table    string
	Applied  bool
	rw       *pushdown.Rewrite
}

// Operation names the span of a query whose routed aggregates rws were rewritten
// (pushdown.Operation: COUNT, MIN, MAX, MINMAX or AGGREGATE; "" for none).
func Operation(rws []Rewrite) string {
	var out []*pushdown.Rewrite
	for _, r := range rws {
		out = append(out, r.rw)
	}
	return pushdown.Operation(out)
}

// Prepare lowers a plan's one root relation onto per-bucket fragments and a coordinator stage
// (seed 002 in one process; docs/architecture.md, "The executor and its fragments") without
// starting anything. Relations: ReadRel (NamedTable, bound by opts.Bind; its filter is a
// residual predicate unless the routed read implies it), FilterRel, ProjectRel, AggregateRel
// (one grouping set; count, sum, avg, min, max, DISTINCT, measure filters), SortRel, FetchRel
// and SetRel (UNION ALL), with any emit mapping. The per-row part above each routed read runs
// in the fragments, which read only the columns it references; the rest runs in the
// coordinator. With opts.Pushdown, routed aggregates a store answers are rewritten onto the
// stores' partial-aggregate ports (pushdown.go). Errors: an error wrapping ErrUnsupported for
// plans outside this, Bind's errors, and expression compile errors from scan/ops.
func Prepare(p *plan.Plan, opts Options) (*Prepared, error) {
	pr := &Prepared{opts: opts}
	n, err := lowerPlan(p, &pr.opts, &pr.rewrites, &pr.windows)
	if err != nil {
		return nil, err
	}
	pr.n, pr.names = n, p.GetRoots()[0].Names()
	if len(pr.names) != n.Schema().NumFields() {
		return nil, unsupported("%d root names for %d columns", len(pr.names), n.Schema().NumFields())
	}
	fields := n.Schema().Fields()
	for i := range fields {
		fields[i].Name = pr.names[i]
	}
	pr.schema = arrow.NewSchema(fields, nil)
	return pr, nil
}

// Schema returns the schema of the batches the plan's root produces (its columns under the
// root's names), as the executor computes its types.
func (pr *Prepared) Schema() *arrow.Schema { return pr.schema }

// Rewrites lists the routed aggregates the stores can answer, in plan order, each marked
// Applied when the pushdown rewrite applied to it.
func (pr *Prepared) Rewrites() []Rewrite { return pr.rewrites }

// Windows reports whether the plan may be split into time windows of its one routed read
// (docs/architecture.md decision 9: ordered endpoints). It is WindowsNone unless the root is
// per-row over one routed read — filters and projections only, no aggregate, FetchRel or
// SetRel — and then WindowsAny when unsorted, WindowsAsc or WindowsDesc when a SortRel's
// first key is the read's timestamp (rows of an earlier window then all sort before those of
// a later one, whatever the other keys), WindowsNone for any other sort.
func (pr *Prepared) Windows() Windows { return pr.windows }

// Explain describes the operators of the coordinator stage and of each bucket's fragment,
// one line each, top-down, inputs indented, with the pushdown decision of every routed
// aggregate (rewritten onto the stores, or why not). It names shapes, never partition values
// or literals.
func (pr *Prepared) Explain() []string { return pr.n.explain(nil) }

// Execute starts one execution of the prepared plan: fragments start as the reader is pulled,
// at most the fan-out at a time. Safe for concurrent use.
func (pr *Prepared) Execute(ctx context.Context) (*Result, error) { return pr.execute(ctx, nil) }

// execute starts an execution, analysed into a when not nil (ExecuteAnalyzed).
func (pr *Prepared) execute(ctx context.Context, a *Analysis) (*Result, error) {
	mem := ledger.New(pr.opts.Alloc, pr.opts.QueryMemory)
	mem.SetBudget(pr.opts.Budget)
	mem.SetRowLimit(pr.opts.QueryMaxRows)
	mem.SetCPULimit(pr.opts.QueryCPU)
	rt := &runtime{mem: mem, opts: &pr.opts, analysis: a}
	r, err := openNode(ctx, rt, pr.n)
	if err != nil {
		return nil, err
	}
	r = conform(r, pr.schema)
	if mem.CPULimited() {
		r = &cpuReader{RecordReader: r, mem: mem}
	}
	res := &Result{RecordReader: r, rt: rt}
	res.refs.Store(1)
	return res, nil
}

// cpuReader charges the CPU time of the coordinator's work (the operators above the
// fragments, run by each Next) to the query's ledger, and ends the stream with the ledger's
// error past its CPU limit.
type cpuReader struct {
	array.RecordReader
	mem *ledger.Ledger
	err error
}

func (r *cpuReader) Next() bool {
	if r.err != nil {
		return false
	}
	t := r.mem.StartCPU()
	more := r.RecordReader.Next()
	if err := t.Stop(r.mem); err != nil {
		r.err = err
		return false
	}
	return more
}

func (r *cpuReader) Err() error {
	if r.err != nil {
		return r.err
	}
	return r.RecordReader.Err()
}

// Execute prepares p (see Prepare) and starts it.
func Execute(ctx context.Context, p *plan.Plan, opts Options) (*Result, error) {
	pr, err := Prepare(p, opts)
	if err != nil {
		return nil, err
	}
	return pr.Execute(ctx)
}

// Explain prepares p as Execute would, without starting anything, and describes it (see
// Prepared.Explain). Errors are Prepare's.
func Explain(p *plan.Plan, opts Options) ([]string, error) {
	opts.explaining = true
	pr, err := Prepare(p, opts)
	if err != nil {
		return nil, err
	}
	return pr.Explain(), nil
}

// lowerPlan lowers the plan's one root relation, collecting the pushdown rewrites and, when
// windows is not nil, how the result splits into time windows (Prepared.Windows).
func lowerPlan(p *plan.Plan, opts *Options, rewrites *[]Rewrite, windows *Windows) (node, error) {
	roots := p.GetRoots()
	if len(roots) != 1 {
		return nil, unsupported("a plan with %d roots", len(roots))
	}
	l := &lowerer{opts: opts, ext: p.ExtensionRegistry(), rewrites: rewrites,
		needs: needWalk{joins: map[plan.Rel]colSet{}, folded: map[*plan.JoinRel]bool{}}}
	l.needs.visit(roots[0].Input(), colSet{all: true})
	lo, err := l.lower(roots[0].Input())
	if err != nil {
		return nil, err
	}
	if windows != nil && lo.routed != nil {
		*windows = lo.routed.windows()
	}
	return l.finish(lo)
}

// Conform returns a reader of r's batches under schema, which must have r's column types
// (names and nullability may differ), or decimals (BothDecimal: each value is rescaled to
// schema's scale and checked against its precision, a value past it fails the stream with
// 22003): the batches share r's arrays. Another type mismatch fails the stream with an
// internal error.
func Conform(r array.RecordReader, schema *arrow.Schema) array.RecordReader {
	return conform(r, schema)
}

func conform(r array.RecordReader, schema *arrow.Schema) array.RecordReader {
	if r.Schema().Equal(schema) {
		return r
	}
	return &conformReader{in: r, schema: schema, refs: 1}
}

type conformReader struct {
	in     array.RecordReader
	schema *arrow.Schema
	cur    arrow.RecordBatch
	err    error
	refs   int64
}

func (r *conformReader) Schema() *arrow.Schema          { return r.schema }
func (r *conformReader) Record() arrow.RecordBatch      { return r.cur }
func (r *conformReader) RecordBatch() arrow.RecordBatch { return r.cur }
func (r *conformReader) Retain()                        { r.refs++ }
func (r *conformReader) Err() error {
	if r.err != nil {
		return r.err
	}
	return r.in.Err()
}

func (r *conformReader) Release() {
	if r.refs--; r.refs > 0 {
		return
	}
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	r.in.Release()
}

func (r *conformReader) Next() bool {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	if r.err != nil || !r.in.Next() {
		return false
	}
	b := r.in.RecordBatch()
	if int(b.NumCols()) != r.schema.NumFields() {
		r.err = fmt.Errorf("scan: batch of %d columns for a schema of %d", b.NumCols(), r.schema.NumFields())
		return false
	}
	cols := b.Columns()
	var made []arrow.Array
	defer func() {
		for _, a := range made {
			a.Release()
		}
	}()
	for i := range r.schema.NumFields() {
		if arrow.TypeEqual(b.Column(i).DataType(), r.schema.Field(i).Type) {
			continue
		}
		a, err := redeclareDecimal(b.Column(i), r.schema.Field(i).Type)
		if err != nil {
			r.err = err
			return false
		}
		if a == nil {
			r.err = fmt.Errorf("scan: column %d is %s, want %s", i, b.Column(i).DataType(), r.schema.Field(i).Type)
			return false
		}
		if len(made) == 0 {
			cols = slices.Clone(cols)
		}
		made = append(made, a)
		cols[i] = a
	}
	r.cur = array.NewRecordBatch(r.schema, cols, b.NumRows())
	return true
}

// BothDecimal reports whether computed and declared are decimal128 types, whose values
// Conform rescales and checks against the declared type (a client plan may declare a
// quotient decimal<14,6> where the executor computes decimal<30,22>).
func BothDecimal(computed, declared arrow.DataType) bool {
	_, ok1 := computed.(*arrow.Decimal128Type)
	_, ok2 := declared.(*arrow.Decimal128Type)
	return ok1 && ok2
}

// redeclareDecimal returns col under the decimal128 type want (ops.FitDecimal: rescaled,
// rounding half away from zero, each value checked against want's precision, 22003 past
// it); nil, nil when the types are not both decimals.
func redeclareDecimal(col arrow.Array, want arrow.DataType) (arrow.Array, error) {
	if !BothDecimal(col.DataType(), want) {
		return nil, nil
	}
	return ops.FitDecimal(memory.DefaultAllocator, col, want.(*arrow.Decimal128Type))
}
