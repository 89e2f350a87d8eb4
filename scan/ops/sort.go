package ops

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flightsrv/flightsrv/scan/ledger"
)

// Sort returns a reader of in's rows ordered by keys (stable: rows with equal keys keep their
// input order), with in's schema. It buffers all of in, calling mem.Check after each input
// batch (the error wraps ledger.ErrMemoryLimit past the limit), concatenates the key columns,
// orders row indices with this package's typed comparators (pdqsort with ties broken by
// position; a first key that is a 64- or 32-bit integer or timestamp is sorted by value
// without indirection), and emits the rows gathered from the buffered batches in batches of at
// most MaxBatchRows rows and MaxBatchBytes bytes of string and binary values. arrow-go's
// sort_indices is not used: it was 2.5 to 3 times slower on a million rows, leaks scratch
// buffers and orders NaN differently (see arrowSort). With no keys it passes in through. It
// takes ownership of in (released once buffered, or when the reader is released); the reader
// is not safe for concurrent use. ctx is kept by the reader and checked once per input batch.
func Sort(ctx context.Context, in array.RecordReader, keys []SortKey, mem *ledger.Ledger) array.RecordReader {
	o, err := newOrdering(in.Schema(), keys)
	if err != nil {
		return errStream(in.Schema(), err, in)
	}
	if len(keys) == 0 {
		return pass(ctx, in)
	}
	s := &sorter{ctx: ctx, in: &owned{r: in}, o: o, mem: mem, schema: in.Schema()}
	return newStream(in.Schema(), s.pull, s.close)
}

type sorter struct {
	ctx    context.Context
	in     *owned
	o      *ordering
	mem    *ledger.Ledger
	schema *arrow.Schema

	loaded  bool
	batches []arrow.RecordBatch
	g       *gatherer
	idx     arrow.Array // row order over the concatenation of batches
	at      func(int) int64
	next    int
}

func (s *sorter) close() {
	s.in.release()
	for _, b := range s.batches {
		b.Release()
	}
	s.batches = nil
	s.g = nil
	if s.idx != nil {
		s.idx.Release()
		s.idx = nil
	}
}

func (s *sorter) pull() (arrow.RecordBatch, error) {
	if !s.loaded {
		s.loaded = true
		if err := s.load(); err != nil {
			return nil, err
		}
	}
	if s.idx == nil || s.next >= s.idx.Len() {
		return nil, nil
	}
	if err := ctxErr(s.ctx); err != nil {
		return nil, err
	}
	lo := s.next
	hi := s.g.chunkEnd(lo, s.idx.Len(), s.at)
	s.next = hi
	return s.g.take(s.ctx, lo, hi, s.at, allocator(s.mem))
}

// load buffers the input and computes the order.
func (s *sorter) load() error {
	var rows int64
	for s.in.r.Next() {
		if err := ctxErr(s.ctx); err != nil {
			return err
		}
		b := s.in.r.RecordBatch()
		if b.NumRows() == 0 {
			continue
		}
		b.Retain()
		s.batches = append(s.batches, b)
		rows += b.NumRows()
		if err := s.mem.Check(); err != nil {
			return fmt.Errorf("ops: sort: %w", err)
		}
	}
	if err := s.in.r.Err(); err != nil {
		return err
	}
	s.in.release()
	if rows == 0 {
		return nil
	}
	if rows > math.MaxInt32 {
		return fmt.Errorf("ops: sort: %d rows are more than one sort can order", rows)
	}
	cctx := computeCtx(s.ctx, s.mem)
	keys, err := concatKeys(s.o, s.batches, allocator(s.mem))
	if err != nil {
		return fmt.Errorf("ops: sort: %w", err)
	}
	defer releaseArrays(keys)
	if err := s.mem.Check(); err != nil {
		return fmt.Errorf("ops: sort: %w", err)
	}
	if s.idx, err = sortIndices(cctx, s.o, keys, allocator(s.mem)); err != nil {
		return fmt.Errorf("ops: sort: %w", err)
	}
	s.at = indexAt(s.idx)
	s.g = newGatherer(s.schema, s.batches)
	return s.mem.Check()
}

// concatKeys returns the key columns of batches, each concatenated into one array.
func concatKeys(o *ordering, batches []arrow.RecordBatch, mem memory.Allocator) ([]arrow.Array, error) {
	keys := make([]arrow.Array, len(o.keys))
	for i, k := range o.keys {
		if len(batches) == 1 {
			keys[i] = batches[0].Column(k.Column)
			keys[i].Retain()
			continue
		}
		parts := make([]arrow.Array, len(batches))
		for j, b := range batches {
			parts[j] = b.Column(k.Column)
		}
		a, err := array.Concatenate(parts, mem)
		if err != nil {
			releaseArrays(keys[:i])
			return nil, err
		}
		keys[i] = a
	}
	return keys, nil
}

func releaseArrays(as []arrow.Array) {
	for _, a := range as {
		if a != nil {
			a.Release()
		}
	}
}

// arrowSort makes sortIndices use arrow-go's sort_indices where it orders as this package does
// (tests compare both paths). It is off: on 1,000,000 rows sort_indices (a stable merge sort)
// took 2.5 to 3 times the CPU of this package's comparator sort, leaked its scratch buffers,
// and places NaN next to the nulls.
var arrowSort atomic.Bool

// sortIndices returns the stable order of the rows of the key columns (one array per key, of
// equal lengths) as an array of int64 or uint64 row indices allocated from mem.
func sortIndices(ctx context.Context, o *ordering, keys []arrow.Array, mem memory.Allocator) (arrow.Array, error) {
	n := keys[0].Len()
	if arrowSort.Load() && arrowSorts(keys) {
		fields := make([]arrow.Field, len(keys))
		akeys := make([]compute.SortKey, len(keys))
		for i, k := range o.keys {
			fields[i] = arrow.Field{Name: fmt.Sprintf("k%d", i), Type: keys[i].DataType(), Nullable: true}
			akeys[i] = compute.SortKey{ColumnIndex: i, Order: compute.SortOrderAscending, NullPlacement: compute.SortNullsAtEnd}
			if k.Desc {
				akeys[i].Order = compute.SortOrderDescending
			}
			if k.NullsFirst {
				akeys[i].NullPlacement = compute.SortNullsAtStart
			}
		}
		rb := array.NewRecordBatch(arrow.NewSchema(fields, nil), keys, int64(n))
		defer rb.Release()
		// arrow-go v18.8.0's sort_indices never frees its scratch buffers (found by the checked
		// allocator): sort with Go's allocator, whose garbage the collector takes, and copy
		// the indices into mem so that the ledger counts them.
		idx, err := compute.SortIndicesRecordBatch(compute.WithAllocator(ctx, memory.NewGoAllocator()), rb, akeys)
		if err != nil {
			return nil, err
		}
		defer idx.Release()
		return array.Concatenate([]arrow.Array{idx}, mem)
	}
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(n * 8)
	idx := arrow.Int64Traits.CastFromBytes(buf.Bytes())
	vs := o.views(keys)
	if !sortByFirstKey(idx, vs) {
		for i := range idx {
			idx[i] = int64(i)
		}
		// Ties broken by position: a stable order with pdqsort's speed.
		slices.SortFunc(idx, func(x, y int64) int {
			if r := compareViews(vs, int(x), vs, int(y)); r != 0 {
				return r
			}
			return cmp.Compare(x, y)
		})
	}
	if err := ctx.Err(); err != nil {
		buf.Release()
		return nil, err
	}
	data := array.NewData(arrow.PrimitiveTypes.Int64, n, []*memory.Buffer{nil, buf}, nil, 0, 0)
	buf.Release()
	defer data.Release()
	return array.MakeFromData(data), nil
}

// sortByFirstKey fills idx with the stable order of the rows of the key views vs when the first
// key is a 64- or 32-bit integer or temporal column (a timestamp, in our plans): rows sort as
// (null rank, first key value, rest of the keys, position) pairs whose first comparisons need
// no indirection. It reports false, leaving idx alone, for other first keys.
func sortByFirstKey(idx []int64, vs []keyView) bool {
	v := &vs[0]
	if v.kind != viewI64 && v.kind != viewI32 {
		return false
	}
	type pair struct {
		k   int64 // the first key's value, bit-inverted when descending (^ reverses int64 order)
		row int64
	}
	n := len(idx)
	pairs := make([]pair, 0, n)
	var nulls []int64
	for i := range n {
		if v.valid != nil && !bitutil.BitIsSet(v.valid, v.off+i) {
			nulls = append(nulls, int64(i))
			continue
		}
		var k int64
		if v.kind == viewI64 {
			k = v.i64[i]
		} else {
			k = int64(v.i32[i])
		}
		if v.desc {
			k = ^k
		}
		pairs = append(pairs, pair{k, int64(i)})
	}
	rest := vs[1:]
	slices.SortFunc(pairs, func(a, b pair) int {
		if a.k != b.k {
			return cmp.Compare(a.k, b.k)
		}
		if r := compareViews(rest, int(a.row), rest, int(b.row)); r != 0 {
			return r
		}
		return cmp.Compare(a.row, b.row)
	})
	slices.SortFunc(nulls, func(a, b int64) int {
		if r := compareViews(rest, int(a), rest, int(b)); r != 0 {
			return r
		}
		return cmp.Compare(a, b)
	})
	out := idx[:0]
	if v.nullFirst {
		out = append(out, nulls...)
	}
	for _, p := range pairs {
		out = append(out, p.row)
	}
	if !v.nullFirst {
		out = append(out, nulls...)
	}
	return true
}

// arrowSorts reports whether arrow-go's sort_indices orders these key columns as this package
// does: supported types, and no NaN in a float key (arrow-go places NaN next to the nulls).
func arrowSorts(keys []arrow.Array) bool {
	for _, k := range keys {
		switch a := k.(type) {
		case *array.Float64:
			if hasNaN(a, a.Float64Values(), a.Len()) {
				return false
			}
		case *array.Float32:
			if hasNaN(a, a.Float32Values(), a.Len()) {
				return false
			}
		case *array.Float16:
			for i := range a.Len() {
				if a.IsValid(i) && a.Value(i).IsNaN() {
					return false
				}
			}
		default:
			switch k.DataType().ID() {
			case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32,
				arrow.UINT64, arrow.BOOL, arrow.STRING, arrow.LARGE_STRING, arrow.BINARY, arrow.LARGE_BINARY,
				arrow.FIXED_SIZE_BINARY, arrow.TIMESTAMP, arrow.DATE32, arrow.DATE64, arrow.TIME32,
				arrow.TIME64, arrow.DURATION:
			default:
				return false
			}
		}
	}
	return true
}

func hasNaN[T float32 | float64](a arrow.Array, vals []T, n int) bool {
	for i := range n {
		if vals[i] != vals[i] && a.IsValid(i) {
			return true
		}
	}
	return false
}

// indexAt returns an accessor of an int64 or uint64 index array.
func indexAt(idx arrow.Array) func(int) int64 {
	switch a := idx.(type) {
	case *array.Int64:
		v := a.Int64Values()
		return func(i int) int64 { return v[i] }
	case *array.Uint64:
		v := a.Uint64Values()
		return func(i int) int64 { return int64(v[i]) }
	case *array.Int32:
		v := a.Int32Values()
		return func(i int) int64 { return int64(v[i]) }
	case *array.Uint32:
		v := a.Uint32Values()
		return func(i int) int64 { return int64(v[i]) }
	}
	panic(fmt.Sprintf("ops: index array of type %s", idx.DataType()))
}

// --- gathering -----------------------------------------------------------------------------

// gatherer gathers rows by global index (over the concatenation of batches) into new batches.
type gatherer struct {
	schema  *arrow.Schema
	batches []arrow.RecordBatch // not retained: the owner keeps them
	starts  []int64             // first global row of each batch
	varCols [][]arrow.Array     // the string and binary columns of each batch
	heavy   bool                // more than MaxBatchBytes of such values in all
}

func newGatherer(schema *arrow.Schema, batches []arrow.RecordBatch) *gatherer {
	g := &gatherer{schema: schema, batches: batches}
	var total, row int64
	for _, b := range batches {
		g.starts = append(g.starts, row)
		row += b.NumRows()
		var vc []arrow.Array
		for _, c := range b.Columns() {
			if hasVarCols([]arrow.Array{c}) {
				vc = append(vc, c)
			}
		}
		g.varCols = append(g.varCols, vc)
		total += varBytes(vc, 0, int(b.NumRows()))
	}
	g.heavy = total > MaxBatchBytes
	return g
}

// locate returns the batch and row of global row r.
func (g *gatherer) locate(r int64) rowRef {
	b := sort.Search(len(g.starts), func(i int) bool { return g.starts[i] > r }) - 1
	return rowRef{b: int32(b), r: int32(r - g.starts[b])}
}

// rowBytes returns the bytes of string and binary values of global row r.
func (g *gatherer) rowBytes(r int64) int64 {
	ref := g.locate(r)
	return varBytes(g.varCols[ref.b], int(ref.r), int(ref.r)+1)
}

// chunkEnd returns the end of the output batch of order positions from lo (< n): at most
// MaxBatchRows rows and MaxBatchBytes of string and binary values (one row at least).
func (g *gatherer) chunkEnd(lo, n int, at func(int) int64) int {
	hi := min(n, lo+MaxBatchRows)
	if !g.heavy {
		return hi
	}
	var acc int64
	for k := lo; k < hi; k++ {
		acc += g.rowBytes(at(k))
		if acc > MaxBatchBytes && k > lo {
			return k
		}
	}
	return hi
}

// take returns the rows at global indices at(lo) … at(hi-1) as one batch.
func (g *gatherer) take(ctx context.Context, lo, hi int, at func(int) int64, mem memory.Allocator) (arrow.RecordBatch, error) {
	refs := make([]rowRef, hi-lo)
	if len(g.batches) == 1 {
		for k := range refs {
			refs[k] = rowRef{r: int32(at(lo + k))}
		}
	} else {
		for k := range refs {
			refs[k] = g.locate(at(lo + k))
		}
	}
	return gather(ctx, g.schema, g.batches, refs, mem)
}

// --- top-k ---------------------------------------------------------------------------------

// TopK returns a reader of the first k rows of Sort(ctx, in, keys, mem), with in's schema,
// holding at most about max(k, MaxBatchRows) rows besides the current input batch: it keeps the
// best k rows seen so far (sorted), takes from each input batch only the rows strictly better
// than the k-th (a row equal to it comes later in the input, so it loses the tie), and
// compacts when the rows taken reach max(k, MaxBatchRows). Ties are broken by input order, so
// TopK equals Fetch(Sort(…), 0, k). k == 0 yields no row without reading in; k < 0 is Sort.
// mem.Check is called after each input batch. It takes ownership of in; the reader is not safe
// for concurrent use. ctx is kept by the reader and checked once per input batch.
func TopK(ctx context.Context, in array.RecordReader, keys []SortKey, k int64, mem *ledger.Ledger) array.RecordReader {
	if k < 0 {
		return Sort(ctx, in, keys, mem)
	}
	o, err := newOrdering(in.Schema(), keys)
	if err != nil {
		return errStream(in.Schema(), err, in)
	}
	if k == 0 {
		return emptyStream(in.Schema(), in)
	}
	if len(keys) == 0 {
		return Fetch(pass(ctx, in), 0, k)
	}
	t := &topK{ctx: ctx, in: &owned{r: in}, o: o, k: k, mem: mem, schema: in.Schema()}
	return newStream(in.Schema(), t.pull, t.close)
}

type topK struct {
	ctx    context.Context
	in     *owned
	o      *ordering
	k      int64
	mem    *ledger.Ledger
	schema *arrow.Schema

	done        bool
	top         arrow.RecordBatch // the best rows so far, sorted, at most k
	topViews    []keyView
	pending     []arrow.RecordBatch // candidate rows, in input order, not yet compacted
	pendingRows int64
}

func (t *topK) close() {
	t.in.release()
	if t.top != nil {
		t.top.Release()
		t.top = nil
	}
	for _, b := range t.pending {
		b.Release()
	}
	t.pending = nil
}

func (t *topK) pull() (arrow.RecordBatch, error) {
	if t.done {
		return nil, nil
	}
	t.done = true
	limit := max(t.k, MaxBatchRows)
	for t.in.r.Next() {
		if err := ctxErr(t.ctx); err != nil {
			return nil, err
		}
		b := t.in.r.RecordBatch()
		if b.NumRows() == 0 {
			continue
		}
		cand, err := t.candidates(b)
		if err != nil {
			return nil, err
		}
		if cand != nil {
			t.pending = append(t.pending, cand)
			t.pendingRows += cand.NumRows()
		}
		if err := t.mem.Check(); err != nil {
			return nil, fmt.Errorf("ops: top-k: %w", err)
		}
		// Compact when the candidates reach the bound, and as soon as they make k rows while
		// the top holds fewer: until then no batch is filtered by the top's k-th row.
		if t.pendingRows >= limit || (t.pendingRows >= t.k && (t.top == nil || t.top.NumRows() < t.k)) {
			if err := t.compact(); err != nil {
				return nil, err
			}
		}
	}
	if err := t.in.r.Err(); err != nil {
		return nil, err
	}
	t.in.release()
	if err := t.compact(); err != nil {
		return nil, err
	}
	top := t.top
	t.top, t.topViews = nil, nil
	return top, nil
}

// candidates returns the rows of b that may enter the top, as a new batch (b itself, retained,
// when all of its rows may), or nil when none may: the rows strictly better than the top's
// k-th when the top holds k rows, and of those at most the best k of b (bestRows), since a row
// of b with k better rows of b before it in the sort's order cannot be among the first k. So
// a batch adds at most k rows to the pending ones, and a read of small inputs (a top-k per
// fragment) sorts at most k rows of each batch instead of all of them.
func (t *topK) candidates(b arrow.RecordBatch) (arrow.RecordBatch, error) {
	n := int(b.NumRows())
	full := t.top != nil && t.top.NumRows() >= t.k
	if !full && int64(n) <= t.k {
		b.Retain()
		return b, nil
	}
	vs := t.o.views(t.o.keyCols(b))
	var refs []rowRef
	if full {
		worst := int(t.top.NumRows() - 1)
		var ok bool
		if refs, ok = betterInts(vs, t.topViews, worst, n); !ok {
			for r := range n {
				if compareViews(vs, r, t.topViews, worst) < 0 {
					refs = append(refs, rowRef{r: int32(r)})
				}
			}
		}
	} else {
		refs = make([]rowRef, n)
		for r := range refs {
			refs[r] = rowRef{r: int32(r)}
		}
	}
	if int64(len(refs)) > t.k {
		refs = bestRows(vs, refs, int(t.k))
	}
	switch len(refs) {
	case 0:
		return nil, nil
	case n:
		b.Retain()
		return b, nil
	}
	return gather(t.ctx, t.schema, []arrow.RecordBatch{b}, refs, allocator(t.mem))
}

// betterInts is candidates' filter for one int32 or int64 sort key without NULLs in the batch
// (vs) nor at the top's worst row: the rows of the batch (n rows) whose key is strictly
// better than the worst's, as compareViews orders them, read without a call per row (the
// per-row comparison was most of a top-k's own CPU in bench's BenchmarkAnalytical, top 10 by
// delay). false when the key is of another shape.
func betterInts(vs, top []keyView, worst, n int) ([]rowRef, bool) {
	if len(vs) != 1 || vs[0].valid != nil || vs[0].kind != top[0].kind {
		return nil, false
	}
	a, w := &vs[0], &top[0]
	if w.valid != nil && !bitutil.BitIsSet(w.valid, w.off+worst) {
		return nil, false
	}
	switch a.kind {
	case viewI32:
		return betterOf(a.i32[:n], w.i32[worst], a.desc), true
	case viewI64:
		return betterOf(a.i64[:n], w.i64[worst], a.desc), true
	}
	return nil, false
}

// betterOf returns the rows of vals above x (desc) or below it.
func betterOf[T int32 | int64](vals []T, x T, desc bool) []rowRef {
	var refs []rowRef
	if desc {
		for r, v := range vals {
			if v > x {
				refs = append(refs, rowRef{r: int32(r)})
			}
		}
		return refs
	}
	for r, v := range vals {
		if v < x {
			refs = append(refs, rowRef{r: int32(r)})
		}
	}
	return refs
}

// bestRows returns the first k of refs (rows of one batch, in input order, len(refs) > k) in
// the order of vs with ties broken by input order, themselves in input order: a bounded heap
// whose root is the worst row kept, which a later row replaces only when strictly better (an
// equal later row loses the tie). It reuses refs' memory.
func bestRows(vs []keyView, refs []rowRef, k int) []rowRef {
	heap := slices.Clone(refs[:k])
	// worse reports whether heap row a comes after heap row b (a later row loses a tie).
	worse := func(a, b rowRef) bool {
		if c := compareViews(vs, int(a.r), vs, int(b.r)); c != 0 {
			return c > 0
		}
		return a.r > b.r
	}
	down := func(i int) {
		for {
			w, l, r := i, 2*i+1, 2*i+2
			if l < k && worse(heap[l], heap[w]) {
				w = l
			}
			if r < k && worse(heap[r], heap[w]) {
				w = r
			}
			if w == i {
				return
			}
			heap[i], heap[w] = heap[w], heap[i]
			i = w
		}
	}
	for i := k/2 - 1; i >= 0; i-- {
		down(i)
	}
	for _, ref := range refs[k:] {
		if compareViews(vs, int(ref.r), vs, int(heap[0].r)) < 0 {
			heap[0] = ref
			down(0)
		}
	}
	slices.SortFunc(heap, func(a, b rowRef) int { return int(a.r - b.r) })
	return append(refs[:0], heap...)
}

// compact keeps the best k rows of the top and the pending candidates.
func (t *topK) compact() error {
	if len(t.pending) == 0 {
		return nil
	}
	all := t.pending
	if t.top != nil {
		all = append([]arrow.RecordBatch{t.top}, t.pending...)
	}
	defer func() {
		for _, b := range all {
			b.Release()
		}
	}()
	t.top, t.topViews, t.pending, t.pendingRows = nil, nil, nil, 0

	mem := allocator(t.mem)
	keys, err := concatKeys(t.o, all, mem)
	if err != nil {
		return fmt.Errorf("ops: top-k: %w", err)
	}
	defer releaseArrays(keys)
	idx, err := sortIndices(computeCtx(t.ctx, t.mem), t.o, keys, mem)
	if err != nil {
		return fmt.Errorf("ops: top-k: %w", err)
	}
	defer idx.Release()
	keep := int(min(t.k, int64(idx.Len())))
	top, err := newGatherer(t.schema, all).take(t.ctx, 0, keep, indexAt(idx), mem)
	if err != nil {
		return fmt.Errorf("ops: top-k: %w", err)
	}
	t.top, t.topViews = top, t.o.views(t.o.keyCols(top))
	return t.mem.Check()
}

// concatBatches returns batches (of schema's types) as one batch of schema, sharing the only
// batch when there is one.
func concatBatches(schema *arrow.Schema, batches []arrow.RecordBatch, mem memory.Allocator) (arrow.RecordBatch, error) {
	var rows int64
	for _, b := range batches {
		rows += b.NumRows()
	}
	if len(batches) == 1 {
		return array.NewRecordBatch(schema, batches[0].Columns(), rows), nil
	}
	cols := make([]arrow.Array, schema.NumFields())
	parts := make([]arrow.Array, len(batches))
	for c := range cols {
		for i, b := range batches {
			parts[i] = b.Column(c)
		}
		a, err := array.Concatenate(parts, mem)
		if err != nil {
			releaseArrays(cols)
			return nil, err
		}
		cols[c] = a
	}
	b := array.NewRecordBatch(schema, cols, rows)
	releaseArrays(cols)
	return b, nil
}
