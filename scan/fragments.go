package scan

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/types"

	"github.com/flightsrv/flightsrv/internal/panics"
	"github.com/flightsrv/flightsrv/pushdown"
	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/scan/aggregate"
	"github.com/flightsrv/flightsrv/scan/ledger"
	"github.com/flightsrv/flightsrv/scan/ops"
	"github.com/flightsrv/flightsrv/substrait"
)

// fragmentBuffer is how many batches a fragment may produce ahead of the coordinator while an
// earlier fragment is being consumed, and headBuffer how many the fragment being consumed (the
// head) may: with the fan-out bound they cap what one query buffers ((fanout-1) ×
// fragmentBuffer + headBuffer batches of at most routing.MaxBatchBytes of variable-width data
// each, plus the batch each fragment is building). One keeps ORD's scan under 100 MiB of peak
// RSS with no throughput loss measured against four (make bench). The head's larger buffer
// lets it decode its next span (an archive decodes up to 32,768 rows at once, four batches
// sliced from the same buffers) while the batches of the current one are on the wire: with one,
// the head stopped decoding until the writer had taken all but one of them.
const (
	fragmentBuffer = 1
	headBuffer     = 4
)

// groupedWindow is how many times the fan-out a grouped read (routedNode.grouped) may have
// started and not yet consumed: at most fanout of its fragments run at once, and those that
// have ended wait with their output (one partial aggregate or top-k each) until the
// coordinator reaches them, so that a slow fragment at the head no longer holds the other
// slots idle. With the window the fan-out alone, a cold aggregate over 1,341 archived buckets
// ran one fragment on one core while the head's three followers, ended, waited for it (issue
// 19; scan/doc.go).
const groupedWindow = 4

// heldBatches is how many of a routed read's output batches one execution may hold at once
// with fanout fragments, of which up to window × fanout started and unconsumed (window 1 but
// for a grouped read): each running fragment's buffered batches (the head's headBuffer, the
// others' fragmentBuffer) and the two its pipeline is building or slicing, each ended
// fragment's fragmentBuffer, the coordinator's current batch and the one the Flight writer is
// encoding.
func heldBatches(fanout, window int) int64 {
	return int64(fanout*(fragmentBuffer+2) + fanout*(window-1)*fragmentBuffer + headBuffer + 2)
}

// MaxOutputColumns returns the most output columns a routed read's execution may have under a
// query memory of limit bytes (> 0) with fanout concurrent fragments: past it, the metadata of
// the batches one execution holds (heldBatches × columns × ops.ColumnOverhead) alone passes
// the limit, and Prepare refuses the plan. The query engine bounds select lists with it
// before binding them (64 MiB at a fan-out of 4: 3,640 columns).
func MaxOutputColumns(limit int64, fanout int) int {
	return int(limit / (heldBatches(fanout, 1) * ops.ColumnOverhead))
}

// reserveWidth reserves, for one execution of n, what its output batches cost outside the
// query's allocator before the first bucket is read: heldBatches × streamSch's columns ×
// ops.ColumnOverhead bytes, claimed from the ledger until release is called. It refuses
// the query at once — a *ledger.LimitExceededError naming the limit — when heldBatches
// batches of a single row (that cost plus rowBytes, the bytes one row of n's projection
// allocates: its constants, fixed widths and offsets) would pass the query's memory limit: a
// projection of 50,000 columns, or of a 10 MB string literal under a 64 MiB limit, is
// refused before any memory is taken. window is how many times fanout the execution may have
// started and not consumed: groupedWindow for a grouped read whose reservation for it fits
// the limit too, else 1.
func (n *routedNode) reserveWidth(rt *runtime, fanout int, streamSch *arrow.Schema) (release func(), window int, err error) {
	window = 1
	fixed, err := n.checkWidth(rt.mem.Limit(), fanout, 1, streamSch)
	if err != nil {
		return nil, 0, err
	}
	if n.grouped(-1) {
		if wide, err := n.checkWidth(rt.mem.Limit(), fanout, groupedWindow, streamSch); err == nil {
			fixed, window = wide, groupedWindow
		}
	}
	if err := rt.mem.Claim(fixed); err != nil {
		return nil, 0, err
	}
	var once sync.Once
	return func() { once.Do(func() { rt.mem.Unclaim(fixed) }) }, window, nil
}

// runtime is one execution's shared state: its ledger and what its fragments did. Safe for
// concurrent use by the fragments.
type runtime struct {
	mem  *ledger.Ledger
	opts *Options
	// hotBuckets and archiveBuckets count the fragments answered by each tier; started
	// counts fragments started; pushed counts fragments answered by a store's
	// partial-aggregate port and fellBack rewritten fragments that read rows instead.
	hotBuckets, archiveBuckets, started, pushed, fellBack atomic.Int64
	// rewritten is set at open when a routed aggregate of the plan is rewritten.
	rewritten bool
	// analysis records the operators' measures (EXPLAIN ANALYZE); nil: none.
	analysis *Analysis
	// work holds what the working tables of the execution's recursive queries read
	// (recursive.go), under workMu.
	workMu sync.Mutex
	work   map[*workTable]workRead
}

// countTier counts a fragment answered by tier.
func (rt *runtime) countTier(tier routing.Tier) {
	if tier == routing.TierArchive {
		rt.archiveBuckets.Add(1)
	} else {
		rt.hotBuckets.Add(1)
	}
}

// fanout is how many of n's fragments may run at once: Options.Fanout, else the table's (at
// least 1).
func (rt *runtime) fanout(n *routedNode) int {
	if rt.opts.Fanout > 0 {
		return rt.opts.Fanout
	}
	return max(1, n.src.Table.Fanout())
}

// unit is one fragment's bucket.
type unit struct {
	partition []byte
	bucket    routing.BucketID
}

// routedNode is a routed plan lowered onto per-bucket fragments and their coordinator stage
// (seed 002, in one process):
//
//	fragment: ScanBucket(readCols, range, limit hint) → [sort when the archive is unordered
//	          and order is required] → Filter(residual) → Project → partial Aggregate |
//	          local top-k | local limit
//	coordinator: ordered concatenation of fragments in bucket order (buckets of one
//	          partition never overlap in time, so this is the ordered k-way merge) with
//	          bounded look-ahead, then final Aggregate | top-k | Sort, Fetch, and dropping
//	          the sort-key columns.
type routedNode struct {
	// analyzed is the node whose EXPLAIN ANALYZE counters this one counts into: set on the
	// copies that run a store node's declined buckets as row-reading fragments (storeagg.go,
	// hotagg.go), nil for the plan's own nodes.
	analyzed *routedNode
	src      Source
	units    []unit
	readCols []routing.Column
	readSch  *arrow.Schema
	// sortCols and readOrder are how an unordered read is made ordered when order is
	// required: read sortCols (readCols and the key columns), sort by readOrder, keep the
	// first len(readCols) columns.
	sortCols  []routing.Column
	readOrder []ops.SortKey
	desc      bool
	filters   []*ops.Expr // residual conjuncts, applied in turn
	proj      []*ops.Expr // expressions evaluated over the read columns, or nil
	sel       []int       // read columns selected when the output is plain references
	// used are, per filter, the read columns a later filter or the projection reads
	// (filterUse): the others leave the filter as nulls.
	used    [][]bool
	projSch *arrow.Schema
	// agg, when set, makes fragments aggregate partially (partialSch) and the coordinator
	// finally.
	agg        *aggregate.Spec
	partialSch *arrow.Schema
	// store, when set, is the pushdown rewrite of the partial aggregate (pushdown.go);
	// pushdown otherwise says why there is none (empty without an aggregate).
	store *storeAggregate
	// hot, when set, is the row-aggregate rewrite of the partial aggregate (hotagg.go): the
	// coordinator asks the hot stores for the buckets' partial states, many buckets a
	// statement (storeStream.askHot). Alone (a shape the store rule left), buckets no store
	// answered run fragments; beside store (a shape the rule took, but not the extremes'
	// start order), they are asked through the partial-aggregate port (archived buckets,
	// stores without the row-aggregate port).
	hot      *hotAggregate
	pushdown string
	// sortKeys (over projSch) sort the output when set: fragments keep their top k (or sort
	// nothing and the coordinator sorts all).
	sortKeys      []ops.SortKey
	offset, count int64
	// rowBytes is what one output row of proj allocates at least (ops.Expr.RowBytes):
	// reserveWidth prices the execution's batches with it.
	rowBytes   int64
	readLimit  int64 // limit pushed into each bucket read, -1 none
	localLimit int64 // rows each fragment keeps at most (local limit or top k), -1 none
	// shred is the node's shredded variant (shredded.go), nil without one or without a cache.
	shred    *shredPlan
	outWidth int
	schema   *arrow.Schema
	// outputs are the expressions the fragments evaluate (the projection's, or the aggregate's
	// inputs), over the base schema; partOut flags the output columns that are the bucket's
	// partition (partCols), for partition-wise joins (partjoin.go).
	outputs []expr.Expression
	base    *types.RecordType
	partOut []bool
	// pj, when set, makes this node the fragment stream of a partition-wise join: one unit
	// per partition, each fragment the join over that partition (partJoinNode.fragment).
	pj *partJoinNode
	// probe, when set, makes this node the fragment stream of a join probed in its left
	// input's fragments: each fragment the left input's, ending in the probe
	// (probeJoinNode.fragment).
	probe *probeJoinNode
}

// finishRouted lowers a routed plan with an optional aggregation and fetch onto fragments.
func (l *lowerer) finishRouted(rp *routedPlan, agg *aggTail, offset, count int64) (node, error) {
	def := rp.src.Table.Def()
	// The residual conjuncts as PostgreSQL's planner folds the WHERE: a constant false decides
	// it before the conjuncts after it are folded (`1 = 2 AND 1/0 = 1` reads no row, without
	// the 22012 the last conjunct raises compiled alone).
	folded, err := ops.FoldConjuncts(rp.filters, def.BatchSchema(routing.AllColumns), l.ext)
	if err != nil {
		return nil, err
	}
	rp.filters = folded
	n := &routedNode{src: rp.src, offset: offset, count: count, readLimit: -1, localLimit: -1}
	// Several partitions overlap in time: their order is a sort on (timestamp, id).
	if rp.order && len(rp.src.Partitions) > 1 {
		rp.sortKeys = nil
		for _, c := range []int{colTimestamp, colID} {
			ref, err := baseRefExpr(rp.base, c)
			if err != nil {
				return nil, err
			}
			rp.sortKeys = append(rp.sortKeys, sortKey{e: ref, desc: rp.desc})
		}
		rp.order = false
	}
	n.desc = rp.order && rp.desc

	// The expressions the fragment evaluates, over the base schema.
	var outputs []expr.Expression
	switch {
	case agg != nil:
		outputs = agg.inputs
	default:
		outputs = slices.Clone(rp.cols)
		for _, k := range rp.sortKeys {
			outputs = append(outputs, k.e)
		}
	}
	var used [numBase]bool
	for _, e := range outputs {
		referenced(e, &used)
	}
	for _, e := range rp.filters {
		referenced(e, &used)
	}
	var pos [numBase]int
	for i := range pos {
		pos[i] = -1
		if used[i] {
			pos[i] = len(n.readCols)
			n.readCols = append(n.readCols, routing.AllColumns[i])
		}
	}
	if rp.order {
		// An unordered read (an archive written by another tool) is sorted on (timestamp,
		// id): it is read again with the key columns it lacks, appended after the others.
		n.sortCols = slices.Clone(n.readCols)
		for _, c := range []int{colTimestamp, colID} {
			at := pos[c]
			if at < 0 {
				at = len(n.sortCols)
				n.sortCols = append(n.sortCols, routing.AllColumns[c])
			}
			n.readOrder = append(n.readOrder, ops.SortKey{Column: at, Desc: rp.desc})
		}
	}
	n.readSch = def.BatchSchema(n.readCols)
	readRT := recordType(rp.base, pos)
	rebaseAll := func(es []expr.Expression) ([]expr.Expression, error) {
		out := make([]expr.Expression, len(es))
		for i, e := range es {
			r, err := rebase(e, pos, readRT)
			if err != nil {
				return nil, err
			}
			out[i] = r
		}
		return out, nil
	}
	fs, err := rebaseAll(rp.filters)
	if err != nil {
		return nil, err
	}
	if n.filters, err = compileAll(fs, n.readSch, l.ext); err != nil {
		return nil, err
	}
	rebased, err := rebaseAll(outputs)
	if err != nil {
		return nil, err
	}
	// Output names: the columns', then the sort keys' (dropped by the coordinator), or the
	// aggregate inputs'.
	names := slices.Clone(rp.names)
	if agg != nil {
		names = names[:0]
	}
	for i := len(names); i < len(rebased); i++ {
		names = append(names, fmt.Sprintf("input%d", i))
	}
	if refs, ok := plainRefs(rebased); ok {
		// Plain column references select read columns (zero-copy) and keep their fields.
		fields := make([]arrow.Field, len(refs))
		for i, c := range refs {
			fields[i] = n.readSch.Field(c)
			fields[i].Name = names[i]
		}
		n.projSch = arrow.NewSchema(fields, nil)
		if !identity(rebased, len(n.readCols)) {
			n.sel = refs
		}
	} else {
		if n.proj, err = compileAll(rebased, n.readSch, l.ext); err != nil {
			return nil, err
		}
		if agg != nil {
			if err := guardAggInputs(agg.spec, n.proj); err != nil {
				return nil, err
			}
		}
		n.projSch = exprSchema(n.proj, names)
		for _, e := range n.proj {
			n.rowBytes += e.RowBytes()
		}
	}

	switch {
	case agg != nil:
		spec := agg.spec
		n.agg = &spec
		if n.schema, err = aggregate.OutputSchema(n.projSch, spec); err != nil {
			return nil, err
		}
		n.outWidth = n.schema.NumFields()
		if err := splitRealSum(n.projSch, spec); err != nil {
			return nil, err
		}
		if n.partialSch, err = aggregate.PartialSchema(n.projSch, spec); err != nil {
			return nil, err
		}
		st, why := matchStoreAggregate(rp, agg, n.partialSch)
		switch {
		case st == nil:
			n.pushdown = "not pushed down: " + why
			if l.opts.Pushdown {
				if n.hot, _ = matchHotAggregate(rp, agg, n.partialSch); n.hot != nil {
					n.pushdown = "hot buckets run the filter and partial aggregate in their store (HotAggregate); not answered from keys or statistics: " + why
				}
			}
		case l.opts.Pushdown:
			n.store = st
			if !st.rw.Extremes() && len(rp.src.Partitions) > 1 {
				// Over several partitions, hot buckets answer many a statement with their
				// routes rather than one key-only statement each. One partition's buckets
				// keep one key-only count each, asked concurrently: bench's BenchmarkCountORD
				// measured the batched statement over ORD's six hot buckets at 44 ms against
				// 15 ms for the per-bucket statements (direct pgx: 19–22 ms).
				n.hot, _ = matchHotAggregate(rp, agg, n.partialSch)
			}
		default:
			n.pushdown = "a pushdown candidate, but pushdown is disabled: every fragment reads rows"
		}
		if st != nil {
			*l.rewrites = append(*l.rewrites, Rewrite{Measures: st.rw.MeasureNames(), Bin: st.rw.Bin, rw: st.rw, Table: def.Name, Applied: l.opts.Pushdown})
		}
	default:
		n.outWidth = len(rp.cols)
		for i, k := range rp.sortKeys {
			n.sortKeys = append(n.sortKeys, ops.SortKey{Column: len(rp.cols) + i, Desc: k.desc, NullsFirst: k.nullsFirst})
		}
		n.schema = arrow.NewSchema(n.projSch.Fields()[:n.outWidth], nil)
		if count >= 0 {
			n.localLimit = offset + count
			if len(n.filters) == 0 && len(n.sortKeys) == 0 {
				n.readLimit = n.localLimit
			}
		}
	}
	n.used = filterUse(n.readSch.NumFields(), n.filters, n.proj, n.sel)
	n.outputs, n.base = outputs, rp.base
	if agg != nil {
		n.partOut = partCols(outputs, agg.spec.Groups, true)
	} else {
		n.partOut = partCols(outputs[:n.outWidth], nil, false)
	}
	if l.opts.Shred != nil {
		var outs []expr.Expression
		if n.proj != nil {
			outs = rebased
		}
		n.shred = planShred(n, fs, outs, l.ext)
	}
	n.units = units(rp.src, n.desc)
	if !l.opts.explaining && n.store == nil {
		fanout := l.opts.Fanout
		if fanout <= 0 {
			fanout = max(1, n.src.Table.Fanout())
		}
		if _, err := n.checkWidth(l.opts.QueryMemory, fanout, 1, n.streamSchema()); err != nil {
			return nil, err
		}
	}
	return n, nil
}

// filterUse returns, per filter of a fragment's filters over batches of width columns, which
// columns the stages after it read: the later filters and the projection proj, or the
// selection sel when proj is nil (nil: the batch is the output, every column is read). A
// column no later stage reads leaves its filter as nulls (ops.FilterCols): the count of a
// filtered bucket takes none of its values, a grouping only its keys.
func filterUse(width int, filters, proj []*ops.Expr, sel []int) [][]bool {
	if len(filters) == 0 || (proj == nil && sel == nil) {
		return nil
	}
	later := make([]bool, width)
	if proj != nil {
		for _, e := range proj {
			for c := range later {
				later[c] = later[c] || e.Reads(c)
			}
		}
	} else {
		for _, c := range sel {
			later[c] = true
		}
	}
	used := make([][]bool, len(filters))
	for i := len(filters) - 1; i >= 0; i-- {
		used[i] = slices.Clone(later)
		for c := range later {
			later[c] = later[c] || filters[i].Reads(c)
		}
	}
	return used
}

// identity reports whether es are the read columns 0..width-1 in order.
func identity(es []expr.Expression, width int) bool {
	if len(es) != width {
		return false
	}
	for i, e := range es {
		if c, ok := baseRef(e); !ok || c != i {
			return false
		}
	}
	return true
}

// plainRefs returns the columns es reference when every expression is a plain reference.
func plainRefs(es []expr.Expression) ([]int, bool) {
	out := make([]int, len(es))
	for i, e := range es {
		c, ok := baseRef(e)
		if !ok {
			return nil, false
		}
		out[i] = c
	}
	return out, true
}

// recordType is the Substrait record type of the read schema: base columns at pos.
func recordType(base *types.RecordType, pos [numBase]int) *types.RecordType {
	var ts []types.Type
	for i, p := range pos {
		if p >= 0 {
			ts = append(ts, base.Types()[i])
		}
	}
	return types.NewRecordTypeFromTypes(ts)
}

func baseRefExpr(base *types.RecordType, col int) (expr.Expression, error) {
	return expr.NewRootFieldRef(expr.NewStructFieldRef(int32(col)), base)
}

// units lists the fragments of a source: per partition, its buckets in bound order (reversed
// for descending reads).
func units(src Source, desc bool) []unit {
	parts := src.Buckets()
	n := 0
	for _, bs := range parts {
		n += len(bs)
	}
	out := make([]unit, 0, n)
	for i, bs := range parts {
		p := src.Partitions[i]
		if desc {
			slices.Reverse(bs)
		}
		for _, b := range bs {
			out = append(out, unit{partition: p, bucket: b})
		}
	}
	return out
}

func impliedByRoute(e expr.Expression, src Source) bool {
	return substrait.ImpliedByRoute(e, src.Table.Def(), src.Partitions, src.Range)
}

func (n *routedNode) Schema() *arrow.Schema { return n.schema }

// explain describes the coordinator stage, then the per-bucket fragment below it.
func (n *routedNode) explain(a *Analysis) []string {
	var coord []string
	switch {
	case n.agg != nil:
		coord = append(coord, "Final aggregate "+aggText(*n.agg))
	case len(n.sortKeys) > 0 && n.localLimit >= 0:
		coord = append(coord, fmt.Sprintf("TopK %d merge by %d keys", n.localLimit, len(n.sortKeys)))
	case len(n.sortKeys) > 0:
		coord = append(coord, fmt.Sprintf("Sort by %d keys", len(n.sortKeys)))
	}
	if n.agg == nil && (n.offset > 0 || n.count >= 0) {
		coord = append([]string{fetchText(n.offset, n.count)}, coord...)
	}
	order := "in bucket order"
	switch {
	case n.desc:
		order = "in bucket order, descending"
	case len(n.units) > 0 && len(n.src.Partitions) > 1:
		order = "partition by partition"
	}
	start := "up to the fan-out at a time"
	switch {
	case n.agg == nil && len(n.sortKeys) == 0 && n.localLimit >= 0:
		start = "the first alone, more only while the earlier ones fall short of the limit"
	case n.store != nil && n.store.rw.Extremes():
		start = "in time order from the end(s) MIN/MAX need, the first alone per end, none once earlier ones answered"
	}
	concat := fmt.Sprintf("Concatenate %d fragments %s; start %s", len(n.units), order, start)
	if g := groupSize(len(n.units), n.src.Table.Fanout()); g > 1 && n.grouped(-1) {
		last := "partial aggregate"
		if n.agg == nil {
			last = "top-k"
		}
		concat += fmt.Sprintf("; runs of up to %d consecutive buckets share one fragment's %s", g, last)
	}
	if len(coord) > 0 {
		concat += a.suffix(n, opConcat)
		coord[0] += a.suffix(n, "")
	} else {
		concat += a.suffix(n, "")
	}
	coord = append(coord, concat)
	cols := make([]string, len(n.readCols))
	for i, c := range n.readCols {
		cols[i] = c.String()
	}
	read := fmt.Sprintf("ScanBucket [%s]", strings.Join(cols, ", "))
	if n.desc {
		read += " descending"
	}
	if n.readLimit >= 0 {
		read += fmt.Sprintf(" limit %d", n.readLimit)
	}
	if n.shred != nil {
		keys := make([]string, len(n.shred.entries))
		for i, f := range n.shred.entries {
			keys[i] = f.key
		}
		read += fmt.Sprintf("; whole archived buckets read %s from the shredded-column cache when it holds them", strings.Join(keys, ", "))
		var pruning []string
		for _, p := range n.shred.prune {
			if k := n.shred.entries[p.entry].key; !slices.Contains(pruning, k) {
				pruning = append(pruning, k)
			}
		}
		if len(pruning) > 0 {
			read += fmt.Sprintf(", skipped unread when the cached range of %s proves the filter false", strings.Join(pruning, " or "))
		}
	}
	frag := []string{read + a.suffix(n, opScan)}
	if len(n.readOrder) > 0 {
		frag = append(frag, "Sort by (timestamp, id) when the bucket is not stored in order")
	}
	if len(n.filters) > 0 {
		frag = append(frag, fmt.Sprintf("Filter %d residual conjuncts", len(n.filters))+a.suffix(n, opFilter))
	}
	switch {
	case n.proj != nil:
		frag = append(frag, fmt.Sprintf("Project %d expressions", len(n.proj))+a.suffix(n, opProject))
	case n.sel != nil:
		frag = append(frag, fmt.Sprintf("Select columns %v", n.sel)+a.suffix(n, opProject))
	}
	switch {
	case n.agg != nil:
		frag = append(frag, "Partial aggregate "+aggText(*n.agg)+a.suffix(n, opLast))
	case len(n.sortKeys) > 0 && n.localLimit >= 0:
		frag = append(frag, fmt.Sprintf("TopK %d", n.localLimit)+a.suffix(n, opLast))
	case n.localLimit >= 0:
		frag = append(frag, fmt.Sprintf("Limit %d", n.localLimit)+a.suffix(n, opLast))
	}
	// Operators are listed top-down: the fragment's last operator first.
	slices.Reverse(frag)
	if n.store != nil {
		store := n.store.explain(n.src.Table.Def().Strategy)
		if len(store) > 0 && n.hot == nil {
			store[0] += a.suffix(n, opStore)
		}
		frag = append(store, indent(indent(frag))...)
	}
	if n.hot != nil {
		hot := n.hot.explain(n.store != nil)
		hot[0] += a.suffix(n, opStore)
		frag = append(hot, indent(indent(frag))...)
	}
	out := coord
	if n.pushdown != "" {
		out = append(out, "Pushdown: "+n.pushdown)
	}
	lead := "Fragment per bucket:"
	out = append(out, lead)
	return append(out, indent(frag)...)
}

// open starts the coordinator stage; fragments start as it pulls.
func (n *routedNode) open(ctx context.Context, rt *runtime) (array.RecordReader, error) {
	need := int64(-1)
	if n.agg == nil && len(n.sortKeys) == 0 && n.localLimit >= 0 {
		need = n.localLimit
	}
	streamSch := n.projSch
	if n.agg != nil {
		streamSch = n.partialSch
	}
	if n.store != nil {
		rt.rewritten = true
	}
	var out array.RecordReader
	if n.store != nil && !n.store.rw.Extremes() || n.hot != nil {
		out = newStoreStream(ctx, rt, n)
	} else {
		release, window, err := n.reserveWidth(rt, rt.fanout(n), streamSch)
		if err != nil {
			return nil, err
		}
		fs := newFragmentStream(ctx, rt, n, streamSch, need)
		fs.unreserve, fs.window = release, window
		out = fs
	}
	out = rt.analysis.track(n, opConcat, out)
	switch {
	case n.agg != nil:
		var err error
		if out, err = aggregate.New(ctx, out, n.projSch, *n.agg, aggregate.Final, rt.mem); err != nil {
			return nil, err
		}
	case len(n.sortKeys) > 0:
		out = sortStream(ctx, out, nil, n.sortKeys, n.localLimit, rt)
	}
	if n.agg == nil && (n.offset > 0 || n.count >= 0) {
		out = ops.Fetch(out, n.offset, n.count)
	}
	if n.outWidth < streamSch.NumFields() && n.agg == nil {
		cols := make([]int, n.outWidth)
		for i := range cols {
			cols[i] = i
		}
		out = ops.Select(out, cols)
	}
	return out, nil
}

// fragment builds and runs the pipeline of one bucket, or of a run of buckets (groupSize) whose
// inputs (read, filters, projection: fragmentInput) feed one partial aggregate or top-k one
// bucket after the other, returning its output reader.
func (n *routedNode) fragment(ctx context.Context, rt *runtime, us []unit) (array.RecordReader, error) {
	if n.pj != nil {
		return n.pj.fragment(ctx, rt, us[0])
	}
	if n.probe != nil {
		return n.probe.fragment(ctx, rt, us)
	}
	if len(us) > 1 {
		return n.fragmentTail(ctx, rt, n.inputs(ctx, rt, us))
	}
	in, done, err := n.fragmentInput(ctx, rt, us[0])
	if err != nil || done {
		return in, err
	}
	return n.fragmentTail(ctx, rt, in)
}

// inputs returns the inputs of units us (fragmentInput: each bucket's read, filters and
// projection, projSch's batches) one after the other, each opened once the one before it has
// ended, so that at most one bucket's read is open. A bucket answered by its store instead
// is an error: such a node's fragments run one unit each.
func (n *routedNode) inputs(ctx context.Context, rt *runtime, us []unit) array.RecordReader {
	opens := make([]func() (array.RecordReader, error), len(us))
	for i, u := range us {
		opens[i] = func() (array.RecordReader, error) {
			r, done, err := n.fragmentInput(ctx, rt, u)
			if err == nil && done {
				r.Release()
				return nil, errors.New("scan: a grouped fragment's bucket was answered by its store")
			}
			return r, err
		}
	}
	return newChain(n.projSch, opens)
}

// fragmentInput opens bucket u's read, its residual filters and its projection (a reader of
// projSch's batches); done when a store's partial aggregate answered the bucket instead (a
// reader of partialSch's batches: the fragment's output).
func (n *routedNode) fragmentInput(ctx context.Context, rt *runtime, u unit) (_ array.RecordReader, done bool, _ error) {
	ctx, span := startFragmentSpan(ctx)
	if n.store != nil {
		r, tier, err := n.src.Table.AggregateBucket(ctx, u.bucket, n.store.request(n.src.Range, rt.mem))
		switch {
		case err == nil:
			rt.pushed.Add(1)
			rt.countTier(tier)
			rt.analysis.tier(n, opStore, tier)
			return rt.analysis.track(n, opStore, endedBy(n.store.reader(r, n.partialSch, u.partition), span, tier, true)), true, nil
		case !errors.Is(err, routing.ErrNoAggregate):
			failFragment(span)
			return nil, false, err
		}
		rt.fellBack.Add(1)
	}
	req := routing.BatchRequest{Range: n.src.Range, Columns: n.readCols, Desc: n.desc, Limit: n.readLimit, Alloc: rt.mem}
	filters, proj, readSch, used := n.filters, n.proj, n.readSch, n.used
	var r routing.BatchReader
	var tier routing.Tier
	var err error
	if n.shred != nil && rt.opts.Shred != nil {
		var rr array.RecordReader
		var warm bool
		if rr, tier, warm, err = n.shredRead(ctx, rt, u, req); err != nil {
			failFragment(span)
			return nil, false, err
		}
		if warm {
			filters, proj, readSch, used = n.shred.filters, n.shred.proj, n.shred.sch, n.shred.used
		}
		r = rr.(routing.BatchReader)
	} else if r, tier, err = n.src.Table.ScanBucket(ctx, u.bucket, req); err != nil {
		failFragment(span)
		return nil, false, err
	}
	rt.countTier(tier)
	rt.analysis.tier(n, opScan, tier)
	var out array.RecordReader = r
	if !r.Ordered() && (n.readLimit >= 0 || len(n.readOrder) > 0) {
		// A limit means "the first rows" and order holds only for an ordered read: read the
		// bucket whole, with the key columns, and sort it.
		r.Release()
		req.Limit = -1
		if len(n.readOrder) > 0 {
			req.Columns = n.sortCols
		}
		if r, _, err = n.src.Table.ScanBucket(ctx, u.bucket, req); err != nil {
			failFragment(span)
			return nil, false, err
		}
		out = r
		if len(n.readOrder) > 0 {
			out = ops.Sort(ctx, r, n.readOrder, rt.mem)
			if len(n.sortCols) > len(n.readCols) {
				cols := make([]int, len(n.readCols))
				for i := range cols {
					cols[i] = i
				}
				out = ops.Select(out, cols)
			}
		}
	}
	out = rt.analysis.track(n, opScan, conform(endedBy(out, span, tier, false), readSch))
	if len(filters) > 0 {
		out = rt.analysis.track(n, opFilter, ops.FilterAll(ctx, out, filters, used, rt.mem))
	}
	if proj != nil {
		names := make([]string, n.projSch.NumFields())
		for i := range names {
			names[i] = n.projSch.Field(i).Name
		}
		out = ops.Project(ctx, out, proj, names, rt.mem)
	} else {
		if n.sel != nil {
			out = ops.Select(out, n.sel)
		}
		out = conform(out, n.projSch)
	}
	if n.proj != nil || n.sel != nil {
		out = rt.analysis.track(n, opProject, out)
	}
	return out, false, nil
}

// fragmentTail runs a fragment's last operators over its input (projSch's batches): the
// partial aggregate, the local top-k or limit, or the batches coalesced.
func (n *routedNode) fragmentTail(ctx context.Context, rt *runtime, out array.RecordReader) (array.RecordReader, error) {
	if n.agg == nil {
		// Archives with small row groups and selective filters give small batches: coalesce
		// them (batches of at least half the row cap pass without a copy).
		out = ops.Rebatch(ctx, out, rt.mem)
	}
	switch {
	case n.agg != nil:
		r, err := aggregate.New(ctx, out, n.projSch, *n.agg, aggregate.Partial, rt.mem)
		if err != nil {
			return nil, err
		}
		return rt.analysis.track(n, opLast, r), nil
	case len(n.sortKeys) > 0 && n.localLimit >= 0:
		return rt.analysis.track(n, opLast, ops.TopK(ctx, out, n.sortKeys, n.localLimit, rt.mem)), nil
	case n.localLimit >= 0:
		return rt.analysis.track(n, opLast, ops.Fetch(out, 0, n.localLimit)), nil
	}
	return out, nil
}

// The operators of a routed node that an Analysis measures (fragment operators summed over
// the fragments): the concatenation of the fragments' outputs, a fragment's bucket read (or
// store answer), its residual filters, its projection, its last operator (partial aggregate,
// top-k or limit).
const (
	opConcat  = "concat"
	opScan    = "scan"
	opStore   = "store"
	opFilter  = "filter"
	opProject = "project"
	opLast    = "last"
)

// checkWidth returns what reserveWidth claims for an execution of n with fanout fragments and
// a window of window × fanout (heldBatches) whose batches have streamSch's columns, or its
// refusal under limit bytes (<= 0: none), a *ledger.LimitExceededError. Prepare calls it too
// (window 1), so that such a query is refused when it is planned (GetFlightInfo), before a
// ticket is made for it.
func (n *routedNode) checkWidth(limit int64, fanout, window int, streamSch *arrow.Schema) (fixed int64, err error) {
	held := heldBatches(fanout, window)
	fixed = held * int64(streamSch.NumFields()) * ops.ColumnOverhead
	if limit > 0 && fixed+held*n.rowBytes > limit {
		return 0, ledger.LimitError(limit)
	}
	return fixed, nil
}

// streamSchema is the schema of n's fragments' output: the partial aggregate's, or the
// projection's.
func (n *routedNode) streamSchema() *arrow.Schema {
	if n.agg != nil {
		return n.partialSch
	}
	return n.projSch
}

// fragmentStream runs a routed node's fragments under the table's fan-out bound and
// concatenates their outputs in unit order. At most fanout fragments are running or holding
// unconsumed output at once, but for a grouped read (routedNode.grouped), whose fragments
// each end in one partial aggregate or top-k: at most fanout of them run, and up to
// groupedWindow × fanout (reserveWidth's window) may have started and not been consumed.
// With a row need (a limit over bucket-ordered or unordered rows),
// the first fragment starts alone and later ones only while the rows produced by the earlier
// ones fall short of it; once one fragment has finished short, the look-ahead widens to the
// fan-out (the seed's top-k refill: stop starting buckets once earlier ones prove the page
// full).
type fragmentStream struct {
	ctx    context.Context
	cancel context.CancelFunc
	rt     *runtime
	n      *routedNode
	schema *arrow.Schema
	need   int64
	fanout int

	// early is the MIN/MAX launch policy's state (it picks the units to start), nil without
	// it: units start in order. Until a fragment ends without an answer, the policy starts
	// rounds of first fragments (one per end), each once the round before it (from launch
	// position round) has ended.
	early *pushdown.StartOrder
	first int
	round int

	// grouped is set when n's fragments are grouped (routedNode.grouped): a fragment runs
	// groupSize of the units not started yet, at most fanout run at once and at most window ×
	// fanout are started and unconsumed (reserveWidth's window); ended is signalled
	// (capacity 1) when one of them ends, so that the coordinator starts the next one while it
	// waits for the head. next is the first unit not started yet (without the MIN/MAX policy).
	grouped bool
	window  int
	ended   chan struct{}
	next    int

	frags     []*fragRun
	cur       int
	speculate atomic.Bool
	wg        sync.WaitGroup
	batch     arrow.RecordBatch
	err       error
	done      bool
	refs      atomic.Int64
	// unreserve gives back the execution's width reservation (reserveWidth) once the stream
	// has stopped; idempotent.
	unreserve func()
}

// fragRun is one started fragment.
type fragRun struct {
	unit    int                    // its first unit (the run's, groupSize)
	fromEnd bool                   // taken by the MIN/MAX policy's walk from the last bucket
	ch      chan arrow.RecordBatch // capacity headBuffer; fragmentBuffer until head is closed
	head    chan struct{}          // closed when the coordinator starts consuming the fragment
	err     error                  // set before ch is closed
	rows    atomic.Int64
	done    atomic.Bool
}

// promote lets f fill its whole buffer: the coordinator consumes it now.
func (f *fragRun) promote() {
	select {
	case <-f.head:
	default:
		close(f.head)
	}
}

// newFragmentStream starts nothing yet: the first Next launches. Its window is 1 until the
// caller sets reserveWidth's.
func newFragmentStream(ctx context.Context, rt *runtime, n *routedNode, schema *arrow.Schema, need int64) *fragmentStream {
	ctx, cancel := context.WithCancel(ctx)
	s := &fragmentStream{ctx: ctx, cancel: cancel, rt: rt, n: n, schema: schema, need: need, fanout: rt.fanout(n), first: 1, window: 1}
	if n.store != nil && n.store.rw.Extremes() {
		s.early = pushdown.NewStartOrder(n.store.rw, len(n.units))
		s.first = s.early.Walks()
	}
	if n.grouped(need) {
		s.grouped = true
		s.ended = make(chan struct{}, 1)
	}
	s.refs.Store(1)
	return s
}

func (s *fragmentStream) Schema() *arrow.Schema          { return s.schema }
func (s *fragmentStream) Record() arrow.RecordBatch      { return s.batch }
func (s *fragmentStream) RecordBatch() arrow.RecordBatch { return s.batch }
func (s *fragmentStream) Err() error                     { return s.err }
func (s *fragmentStream) Retain()                        { s.refs.Add(1) }

func (s *fragmentStream) Release() {
	if s.refs.Add(-1) != 0 {
		return
	}
	s.stop()
}

// produced returns the rows produced so far by the fragments before index j.
func (s *fragmentStream) produced(j int) int64 {
	var n int64
	for _, f := range s.frags[:j] {
		n += f.rows.Load()
	}
	return n
}

// launch starts fragments while the look-ahead and the row need allow.
//
// Under the MIN/MAX launch policy (an ungrouped store aggregate of MIN/MAX(timestamp) only),
// units start in time order from the end each measure needs, one per end and round until a
// fragment ends without an answer; a unit whose answer can no longer change the result (a MIN answered
// by an earlier bucket, a MAX by a later one) is not started.
func (s *fragmentStream) launch() {
	for {
		j := len(s.frags)
		if s.early == nil && s.next >= len(s.n.units) {
			return
		}
		ahead := s.fanout
		if s.need >= 0 && !s.speculate.Load() {
			ahead = 1
		}
		if s.grouped {
			if j-s.cur >= ahead*s.window || s.running(j) >= ahead {
				return
			}
		} else if j-s.cur >= ahead {
			return
		}
		if s.need >= 0 && j > s.cur && s.produced(j) >= s.need {
			return
		}
		if j > s.cur && s.heavy() {
			return // the fragments running hold enough: no look-ahead until they free some
		}
		u, fromEnd, k := s.next, false, 1
		if s.grouped {
			k = groupSize(len(s.n.units)-s.next, s.fanout)
		}
		if s.early != nil {
			k = 1
			if !s.speculate.Load() && j-s.round >= s.first {
				// A new round (one fragment per end) starts once the last one has ended.
				for _, f := range s.frags[s.round:] {
					if !f.done.Load() {
						return
					}
				}
				s.round = j
			}
			if u, fromEnd = s.early.Next(); u < 0 {
				return
			}
		}
		if s.early == nil {
			s.next += k
		}
		f := &fragRun{unit: u, fromEnd: fromEnd, ch: make(chan arrow.RecordBatch, headBuffer), head: make(chan struct{})}
		if j == s.cur {
			f.promote()
		}
		s.frags = append(s.frags, f)
		s.rt.started.Add(int64(k))
		s.wg.Add(1)
		go s.run(f, s.n.units[u:u+k])
	}
}

// running returns how many of the fragments started from the head up to index j have not
// ended.
func (s *fragmentStream) running(j int) int {
	n := 0
	for _, f := range s.frags[s.cur:j] {
		if !f.done.Load() {
			n++
		}
	}
	return n
}

// grouped reports whether n's fragments (under a row need of need, < 0: none) may run runs of
// consecutive units (groupSize): they end in a partial aggregate or a local top-k that no
// store answers.
func (n *routedNode) grouped(need int64) bool {
	return n.store == nil && need < 0 && (n.agg != nil || len(n.sortKeys) > 0 && n.localLimit >= 0)
}

// maxGroup is the most units one fragment of a partial aggregate or local top-k runs
// (groupSize).
const maxGroup = 16

// groupSize is how many consecutive units one fragment of a partial aggregate or a local
// top-k runs when units buckets are left to start with fanout fragments at once: a quarter of
// a fair share of them per fragment, 1 to maxGroup. The runs shrink as the read nears its end
// (guided scheduling), so that the last fragments, which run while no others are left to
// start, are single buckets and the fan-out stays busy to the end. Each bucket's
// read, filters and projection feed the fragment's one partial aggregate or top-k in turn
// (newChain), so that what a fragment costs besides its rows (its goroutine, operator,
// output batch and the coordinator's share of it) is paid once per run: a warm query over a
// thousand small archived buckets, whose rows the shredded-column cache serves in a few
// microseconds, spent most of its time there (bench/doc.go). The rows and their order are
// the same: the run's buckets are consecutive units, read one after the other in unit order,
// and the runs depend only on the units and the fan-out, so that a query's partial results
// are combined in the same runs and order every time.
func groupSize(units, fanout int) int {
	return max(1, min(maxGroup, units/(4*max(fanout, 1))))
}

// heavy reports whether the query holds more than a quarter of its memory limit (its ledger's
// bytes and claims): launch then starts no fragment ahead of the one being consumed, since
// each fragment ahead holds its batches until the coordinator reaches it. An ordinary scan
// holds a few MB of its 256 MiB and always looks ahead; a projection of a 1 MB literal under
// 64 MiB stops at 16 MiB instead of holding the look-ahead's 30 MB.
func (s *fragmentStream) heavy() bool {
	m := s.rt.mem
	return m.Limit() > 0 && (m.Bytes()+m.Claimed())*4 > m.Limit()
}

// run executes one fragment over units us, sending its batches (retained) until it ends.
func (s *fragmentStream) run(f *fragRun, us []unit) {
	answered := false
	defer s.wg.Done()
	defer close(f.ch)
	defer func() {
		if p := recover(); p != nil {
			f.err = panics.FromValue("fragment", p)
		}
		f.done.Store(true)
		if s.need >= 0 || (s.early != nil && !answered) {
			s.speculate.Store(true)
		}
		if s.ended != nil {
			select {
			case s.ended <- struct{}{}:
			default: // a signal is pending: the coordinator looks at every fragment
			}
		}
	}()
	res := s.rt.mem.Reserve(0)
	defer res.Release()
	r, err := s.n.fragment(s.ctx, s.rt, us)
	if err != nil {
		f.err = err
		return
	}
	defer r.Release()
	for {
		// The fragment's CPU time is charged to the query's ledger (ledger.CPUTimer: nothing
		// is measured without a CPU limit).
		cpu := s.rt.mem.StartCPU()
		more := r.Next()
		if err := cpu.Stop(s.rt.mem); err != nil {
			f.err = err
			return
		}
		if !more {
			break
		}
		b := r.RecordBatch()
		if b.NumRows() == 0 {
			continue
		}
		if err := res.AddRows(b.NumRows()); err != nil {
			f.err = err
			return
		}
		f.rows.Add(b.NumRows())
		if s.early != nil && s.early.Observe(f.unit, f.fromEnd, b) {
			answered = true
		}
		if len(f.ch) >= fragmentBuffer {
			// Not the head yet: wait until the coordinator reaches this fragment.
			select {
			case <-f.head:
			case <-s.ctx.Done():
				f.err = s.ctx.Err()
				return
			}
		}
		b.Retain()
		select {
		case f.ch <- b:
		case <-s.ctx.Done():
			b.Release()
			f.err = s.ctx.Err()
			return
		}
	}
	f.err = r.Err()
}

func (s *fragmentStream) Next() bool {
	if s.batch != nil {
		s.batch.Release()
		s.batch = nil
	}
	if s.done {
		return false
	}
	for {
		if err := s.ctx.Err(); err != nil {
			return s.fail(err)
		}
		if s.need >= 0 && s.produced(s.cur) >= s.need {
			break
		}
		s.launch()
		if s.cur >= len(s.frags) {
			break // every fragment that can change the result has ended
		}
		f := s.frags[s.cur]
		f.promote()
		select {
		case b, ok := <-f.ch:
			if ok {
				s.batch = b
				return true
			}
			if f.err != nil {
				return s.fail(f.err)
			}
			s.cur++
		case <-s.ended: // nil but for a grouped read: a fragment ended, start the next
		case <-s.ctx.Done():
			return s.fail(s.ctx.Err())
		}
	}
	s.done = true
	s.stop()
	return false
}

func (s *fragmentStream) fail(err error) bool {
	s.err = err
	s.done = true
	s.stop()
	return false
}

// stop cancels every fragment, waits for them and releases what they buffered.
func (s *fragmentStream) stop() {
	s.cancel()
	for _, f := range s.frags {
		for b := range f.ch {
			b.Release()
		}
	}
	s.wg.Wait()
	if s.batch != nil && s.refs.Load() == 0 {
		s.batch.Release()
		s.batch = nil
	}
	if s.unreserve != nil && s.refs.Load() == 0 {
		s.unreserve()
	}
}
