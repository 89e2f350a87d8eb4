package ops

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/flightsrv/flightsrv/scan/ledger"
)

// Merge returns the ordered k-way merge of inputs, each already sorted by keys: a reader of
// all their rows sorted by keys, rows with equal keys taken from the lower-indexed input first,
// with the first input's schema (the others must have the same column types). It pulls lazily,
// holding one batch per input (and the batches of at most MaxBatchRows rows being gathered),
// and moves rows in runs: the run of the input with the smallest
// head is every row up to the next-smallest head, found with one comparison when the whole
// rest of the batch qualifies (inputs that do not overlap, such as the buckets of one
// partition, cost one comparison per batch and pass their batches on as zero-copy slices) and
// by galloping otherwise. Runs shorter than 1,024 rows are gathered into batches of up to
// MaxBatchRows rows (concatenated, or copied row by row when more than 32), allocated from
// mem. An input
// that is not sorted yields rows out of order, not an error. mem.Check is called after each
// input batch taken. It takes ownership of every input (each released as soon as it ends);
// with no input the reader fails. The reader is not safe for concurrent use; ctx is kept by
// it and checked once per input batch.
func Merge(ctx context.Context, inputs []array.RecordReader, keys []SortKey, mem *ledger.Ledger) array.RecordReader {
	if len(inputs) == 0 {
		return errStream(nil, fmt.Errorf("ops: merge of no input"))
	}
	schema := inputs[0].Schema()
	for i, in := range inputs[1:] {
		if !sameTypes(schema, in.Schema()) {
			return errStream(schema, fmt.Errorf("ops: merge: input %d has columns %s, not %s", i+1, in.Schema(), schema), inputs...)
		}
	}
	o, err := newOrdering(schema, keys)
	if err != nil {
		return errStream(schema, err, inputs...)
	}
	if len(inputs) == 1 {
		return pass(ctx, inputs[0])
	}
	m := &merger{ctx: ctx, o: o, mem: mem, schema: schema}
	for i, in := range inputs {
		m.srcs = append(m.srcs, &mergeSrc{idx: i, in: &owned{r: in}, pend: -1})
	}
	return newStream(schema, m.pull, m.close)
}

// Tuning of Merge's output.
const (
	// directRun is the length from which a run goes out as a slice of its batch rather than
	// being gathered with others.
	directRun = 1024
	// concatRuns is the most gathered runs concatenated; more are taken by index.
	concatRuns = 32
)

type mergeSrc struct {
	idx   int
	in    *owned
	b     arrow.RecordBatch // current batch, retained; nil when the input ended
	views []keyView
	pos   int
	n     int
	pend  int // index of b in merger.pend, -1 when b has no gathered run
	sizes varSizes
}

// varSizes measures the string and binary values of rows of one batch.
type varSizes struct {
	o32   [][]int32
	o64   [][]int64
	other bool // some column is measured otherwise than through offsets
	b     arrow.RecordBatch
}

func newVarSizes(b arrow.RecordBatch) varSizes {
	v := varSizes{b: b}
	for _, c := range b.Columns() {
		switch a := c.(type) {
		case *array.String:
			v.o32 = append(v.o32, a.ValueOffsets())
		case *array.Binary:
			v.o32 = append(v.o32, a.ValueOffsets())
		case *array.LargeString:
			v.o64 = append(v.o64, a.ValueOffsets())
		case *array.LargeBinary:
			v.o64 = append(v.o64, a.ValueOffsets())
		default:
			if hasVarCols([]arrow.Array{c}) {
				v.other = true
			}
		}
	}
	return v
}

// bytes returns the bytes of string and binary values of rows [i, j).
func (v *varSizes) bytes(i, j int) int64 {
	if v.other {
		return varBytes(v.b.Columns(), i, j)
	}
	var n int64
	for _, o := range v.o32 {
		n += int64(o[j] - o[i])
	}
	for _, o := range v.o64 {
		n += o[j] - o[i]
	}
	return n
}

// run is rows [off, off+n) of merger.pend[b].
type run struct {
	b, off, n int
}

type merger struct {
	ctx    context.Context
	o      *ordering
	mem    *ledger.Ledger
	schema *arrow.Schema

	started bool
	srcs    []*mergeSrc
	heap    []*mergeSrc // binary min-heap by (head row, idx)

	pend    []arrow.RecordBatch // batches of the gathered runs, retained
	runs    []run               // gathered short runs, in output order
	runRows int
	runSize int64               // bytes of string and binary values of runs
	out     []arrow.RecordBatch // batches ready to go
}

func (m *merger) close() {
	for _, s := range m.srcs {
		s.in.release()
		if s.b != nil {
			s.b.Release()
			s.b = nil
		}
	}
	for _, b := range m.pend {
		b.Release()
	}
	m.pend, m.runs = nil, nil
	for _, b := range m.out {
		b.Release()
	}
	m.out = nil
}

// advance moves s to its next non-empty batch, or ends it.
func (m *merger) advance(s *mergeSrc) error {
	if s.b != nil {
		s.b.Release()
		s.b, s.views, s.sizes = nil, nil, varSizes{}
	}
	s.pend = -1
	for s.in.r != nil && s.in.r.Next() {
		if err := ctxErr(m.ctx); err != nil {
			return err
		}
		b := s.in.r.RecordBatch()
		if b.NumRows() == 0 {
			continue
		}
		b.Retain()
		s.b, s.views, s.pos, s.n = b, m.o.views(m.o.keyCols(b)), 0, int(b.NumRows())
		s.sizes = newVarSizes(b)
		if err := m.mem.Check(); err != nil {
			return fmt.Errorf("ops: merge: %w", err)
		}
		return nil
	}
	if s.in.r != nil {
		err := s.in.r.Err()
		s.in.release()
		return err
	}
	return nil
}

// before reports whether row i of a goes before row j of b: a smaller key, or an equal key of
// a lower-indexed input.
func (m *merger) before(a *mergeSrc, i int, b *mergeSrc, j int) bool {
	c := compareViews(a.views, i, b.views, j)
	return c < 0 || (c == 0 && a.idx < b.idx)
}

func (m *merger) less(x, y int) bool {
	a, b := m.heap[x], m.heap[y]
	return m.before(a, a.pos, b, b.pos)
}

func (m *merger) down(i int) {
	n := len(m.heap)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		c := l
		if r := l + 1; r < n && m.less(r, l) {
			c = r
		}
		if !m.less(c, i) {
			return
		}
		m.heap[i], m.heap[c] = m.heap[c], m.heap[i]
		i = c
	}
}

func (m *merger) pull() (arrow.RecordBatch, error) {
	if !m.started {
		m.started = true
		for _, s := range m.srcs {
			if err := m.advance(s); err != nil {
				return nil, err
			}
			if s.b != nil {
				m.heap = append(m.heap, s)
			}
		}
		for i := len(m.heap)/2 - 1; i >= 0; i-- {
			m.down(i)
		}
	}
	for len(m.out) == 0 {
		if len(m.heap) == 0 {
			if len(m.runs) == 0 {
				return nil, nil
			}
			if err := m.flush(); err != nil {
				return nil, err
			}
			break
		}
		if err := m.step(); err != nil {
			return nil, err
		}
	}
	b := m.out[0]
	m.out[0] = nil
	m.out = m.out[1:]
	return b, nil
}

// step moves the run of the smallest input to the output.
func (m *merger) step() error {
	s := m.heap[0]
	end := s.n
	if len(m.heap) > 1 {
		t := m.heap[1]
		if len(m.heap) > 2 && m.less(2, 1) {
			t = m.heap[2]
		}
		end = m.runEnd(s, t)
	}
	if err := m.emit(s, s.pos, end); err != nil {
		return err
	}
	s.pos = end
	if s.pos == s.n {
		if err := m.advance(s); err != nil {
			return err
		}
		if s.b == nil { // ended: the last leaf takes the root's place
			last := len(m.heap) - 1
			m.heap[0] = m.heap[last]
			m.heap[last] = nil
			m.heap = m.heap[:last]
		}
	}
	if len(m.heap) > 0 {
		m.down(0)
	}
	return nil
}

// runEnd returns the end of the rows of s from s.pos that go before t's head; s's head does.
func (m *merger) runEnd(s, t *mergeSrc) int {
	tp := t.pos
	if m.before(s, s.n-1, t, tp) {
		return s.n
	}
	// Gallop: rows [pos, lo] go before t's head, row hi does not.
	lo, hi, step := s.pos, s.n-1, 1
	for lo+step < hi {
		if !m.before(s, lo+step, t, tp) {
			hi = lo + step
			break
		}
		lo += step
		step *= 2
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if m.before(s, mid, t, tp) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}

// emit adds rows [i, j) of s's batch to the output.
func (m *merger) emit(s *mergeSrc, i, j int) error {
	b := s.b
	n := j - i
	if n >= directRun || (i == 0 && j == s.n && len(m.runs) == 0) {
		if len(m.runs) > 0 {
			if err := m.flush(); err != nil {
				return err
			}
		}
		m.out = append(m.out, m.relabel(b, i, j))
		return nil
	}
	for i < j {
		if s.pend < 0 {
			b.Retain()
			s.pend = len(m.pend)
			m.pend = append(m.pend, b)
		}
		k := min(j, i+MaxBatchRows-m.runRows)
		if r := len(m.runs) - 1; r >= 0 && m.runs[r].b == s.pend && m.runs[r].off+m.runs[r].n == i {
			m.runs[r].n += k - i
		} else {
			m.runs = append(m.runs, run{b: s.pend, off: i, n: k - i})
		}
		m.runRows += k - i
		m.runSize += s.sizes.bytes(i, k)
		i = k
		if m.runRows >= MaxBatchRows || m.runSize >= MaxBatchBytes {
			if err := m.flush(); err != nil {
				return err
			}
		}
	}
	return nil
}

// relabel returns rows [i, j) of b with the output schema, without copying.
func (m *merger) relabel(b arrow.RecordBatch, i, j int) arrow.RecordBatch {
	if i == 0 && j == int(b.NumRows()) {
		return array.NewRecordBatch(m.schema, b.Columns(), b.NumRows())
	}
	cols := make([]arrow.Array, b.NumCols())
	for c := range cols {
		cols[c] = array.NewSlice(b.Column(c), int64(i), int64(j))
	}
	out := array.NewRecordBatch(m.schema, cols, int64(j-i))
	releaseArrays(cols)
	return out
}

// flush turns the gathered runs into one output batch.
func (m *merger) flush() error {
	runs, pend := m.runs, m.pend
	m.runs, m.pend, m.runRows, m.runSize = m.runs[:0], nil, 0, 0
	for _, s := range m.srcs {
		s.pend = -1
	}
	defer func() {
		for _, b := range pend {
			b.Release()
		}
	}()
	var (
		b   arrow.RecordBatch
		err error
	)
	switch {
	case len(runs) == 1:
		r := runs[0]
		b = m.relabel(pend[r.b], r.off, r.off+r.n)
	case len(runs) <= concatRuns:
		b, err = m.concatRuns(pend, runs)
	default:
		var refs []rowRef
		for _, r := range runs {
			for k := r.off; k < r.off+r.n; k++ {
				refs = append(refs, rowRef{b: int32(r.b), r: int32(k)})
			}
		}
		b, err = gather(m.ctx, m.schema, pend, refs, allocator(m.mem))
	}
	if err != nil {
		return fmt.Errorf("ops: merge: %w", err)
	}
	m.out = append(m.out, b)
	return nil
}

func (m *merger) concatRuns(pend []arrow.RecordBatch, runs []run) (arrow.RecordBatch, error) {
	mem := allocator(m.mem)
	rows := 0
	for _, r := range runs {
		rows += r.n
	}
	cols := make([]arrow.Array, m.schema.NumFields())
	parts := make([]arrow.Array, len(runs))
	for c := range cols {
		for i, r := range runs {
			parts[i] = array.NewSlice(pend[r.b].Column(c), int64(r.off), int64(r.off+r.n))
		}
		a, err := array.Concatenate(parts, mem)
		releaseArrays(parts)
		if err != nil {
			releaseArrays(cols)
			return nil, err
		}
		cols[c] = a
	}
	out := array.NewRecordBatch(m.schema, cols, int64(rows))
	releaseArrays(cols)
	return out, nil
}
