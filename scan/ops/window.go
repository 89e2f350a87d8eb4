package ops

import (
	"context"
	"fmt"
	"math"
	"math/big"
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flightsrv/flightsrv/scan/ledger"
)

// WindowKind is a window function the Window operator evaluates.
type WindowKind uint8

// The window functions, with PostgreSQL's meaning (its documentation's "Window Functions";
// substrait/window.go binds them): ranks over the partition's order (peers share a rank),
// values of other rows of the partition (lag, lead) or of the frame (first_value, last_value,
// nth_value), and aggregates over the frame.
const (
	RowNumber   WindowKind = iota // bigint: the row's position in its partition, from 1
	Rank                          // bigint: 1 + the rows before the row's first peer
	DenseRank                     // bigint: the ordinal of the row's peer group
	PercentRank                   // double: (rank - 1) / (rows - 1), 0 for one row
	CumeDist                      // double: (rows up to the row's last peer) / rows
	Ntile                         // integer: Args[0] (integer, read at the partition's first row) buckets
	Lag                           // Args: value [, offset (integer, per row; default 1) [, default]]
	Lead                          // as Lag, offset rows after
	FirstValue                    // Args[0] at the frame's first row
	LastValue                     // Args[0] at the frame's last row
	NthValue                      // Args[0] at the frame's Args[1]-th row (integer, per row)
	CountStar                     // bigint: the frame's rows
	Count                         // bigint: the frame's non-null Args[0]
	Sum                           // bigint of integers (exact; out of range is an error), double of floats, numeric of numerics (decimal128, the argument's type; exact, 38 digits)
	Avg                           // double: Sum / Count of Args[0] (integers or floats)
	Min                           // the least non-null Args[0] of the frame (PostgreSQL's order)
	Max                           // the greatest
	VarSamp                       // double: PostgreSQL's float8 var_samp of Args[0] (double) over the frame; NULL below two values
	VarPop                        // double: var_pop; NULL without a value
	StddevSamp                    // double: the square root of VarSamp
	StddevPop                     // double: the square root of VarPop
	// The binary aggregates of (Y, X) pairs, Args[0] Y and Args[1] X (doubles), a pair with a
	// NULL left out, as PostgreSQL's float8_regr_accum over the frame (RegrState): double,
	// RegrCount bigint (0 for no pair).
	Corr          // corr(Y, X); NULL for no pair or where Sxx or Syy is 0
	CovarPop      // covar_pop
	CovarSamp     // covar_samp; NULL below two pairs
	RegrAvgX      // regr_avgx
	RegrAvgY      // regr_avgy
	RegrCount     // regr_count
	RegrIntercept // regr_intercept; NULL where Sxx is 0
	RegrR2        // regr_r2; NULL where Sxx is 0, 1 where only Syy is
	RegrSlope     // regr_slope; NULL where Sxx is 0
	RegrSxx       // regr_sxx
	RegrSxy       // regr_sxy
	RegrSyy       // regr_syy
	// The aggregates that keep the frame's values (their output charged to the query's
	// ledger as it is built).
	StringAgg // text: string_agg(Args[0], Args[1]) of text over the frame, NULL values left out, each value after the first preceded by its own row's delimiter (none where NULL); NULL without a value
	ArrayAgg  // list of Args[0]'s type: array_agg over the frame, NULLs included, but the rows where Args[1] (a boolean FILTER, optional) is not true; NULL without a row
)

// FrameBoundKind is how a frame bound is given.
type FrameBoundKind uint8

// Frame bounds: unbounded (the partition's start or end), Offset rows (ROWS), key units (RANGE)
// or peer groups (GROUPS) before or after the current row, or the current row (ROWS: the row
// itself; RANGE and GROUPS: its first or last peer).
const (
	Unbounded FrameBoundKind = iota
	Preceding
	CurrentRow
	Following
)

// FrameBound is one bound of a window frame.
type FrameBound struct {
	Kind   FrameBoundKind
	Offset int64 // Preceding and Following: a count of rows (ROWS), of the key's units (RANGE) or of peer groups (GROUPS), >= 0
}

// FrameExclusion is a frame's EXCLUDE clause (PostgreSQL's frame_exclusion): the rows of the
// frame left out of it around the current row.
type FrameExclusion uint8

// The exclusions: none (EXCLUDE NO OTHERS, the default), the current row, the current row's
// peer group (itself included), or its peers other than itself (TIES). Rows are peers when they
// are equal on every order key (every row of the partition without one).
const (
	ExcludeNoOthers FrameExclusion = iota
	ExcludeCurrentRow
	ExcludeGroup
	ExcludeTies
)

// WindowFrame is a frame: ROWS (positions), RANGE (peers of the order keys; an offset is a
// distance from the current row's single order key in the key's units, winrange.go) or, with
// Groups (Rows false), GROUPS (an offset is a count of peer groups before or after the current
// row's, as PostgreSQL's GROUPS mode). Exclude then removes rows around the current row from
// the frame (the rows keep their order).
type WindowFrame struct {
	Rows       bool
	Groups     bool
	Start, End FrameBound
	Exclude    FrameExclusion
}

// WindowFunc is one window function of a WindowSpec: its kind, its argument columns (of the
// input), its frame (used by FirstValue, LastValue, NthValue and the aggregates) and its
// output type (int64, float64 or int32 for the numeric kinds, decimal128(38, AvgScale) for Avg
// of integers as PostgreSQL's numeric; the first argument's type for Lag, Lead, FirstValue,
// LastValue, NthValue, Min and Max).
type WindowFunc struct {
	Kind  WindowKind
	Args  []int
	Frame WindowFrame
	Type  arrow.DataType
}

// WindowSpec is the window functions sharing one partitioning and order: rows are grouped by
// the Partition columns (NULLs group together) and ordered by Order within each group; rows
// equal on every Order key are peers.
type WindowSpec struct {
	Partition []int
	Order     []SortKey
	Funcs     []WindowFunc
	// Presorted declares that the input arrives ordered by Order with each partition's rows
	// together (a routed read of one partition in bucket order, ordered by its timestamp and
	// id): Window then keeps the input's order instead of sorting it.
	Presorted bool
}

// WindowSchema is the schema of Window's output: in's fields, then one nullable field per
// function, named window0, window1…
func WindowSchema(in *arrow.Schema, spec WindowSpec) *arrow.Schema {
	fields := append([]arrow.Field(nil), in.Fields()...)
	for i, f := range spec.Funcs {
		fields = append(fields, arrow.Field{Name: fmt.Sprintf("window%d", i), Type: f.Type, Nullable: true})
	}
	return arrow.NewSchema(fields, nil)
}

// Window returns a reader of in's rows each followed by the values of spec's functions, in the
// order of (Partition ascending, Order): it buffers all of in, calling mem.Check after each
// input batch (past the limit the error wraps ledger.ErrMemoryLimit: a window over more rows
// than the query's memory is refused, never run out of memory), orders row indices as Sort does,
// and evaluates each function partition by partition. Its Go-heap working set (a few words per
// row) is claimed from mem (Ledger.Claim) before it is allocated. A data exception (ntile or
// nth_value of a number below 1, a bigint sum out of range) is a *DataError with PostgreSQL's
// message and SQLSTATE. It takes ownership of in; the reader is not safe for concurrent use;
// ctx is checked once per input batch and per partition.
func Window(ctx context.Context, in array.RecordReader, spec WindowSpec, mem *ledger.Ledger) array.RecordReader {
	out := WindowSchema(in.Schema(), spec)
	if err := CheckWindowSpec(in.Schema(), spec); err != nil {
		return errStream(out, err, in)
	}
	keys := make([]SortKey, 0, len(spec.Partition)+len(spec.Order))
	for _, c := range spec.Partition {
		keys = append(keys, SortKey{Column: c})
	}
	keys = append(keys, spec.Order...)
	o, err := newOrdering(in.Schema(), keys)
	if err != nil {
		return errStream(out, err, in)
	}
	w := &windower{ctx: ctx, in: &owned{r: in}, spec: spec, o: o, mem: mem, inSchema: in.Schema(), schema: out}
	return newStream(out, w.pull, w.close)
}

// CheckWindowSpec refuses argument columns out of range, argument types a kind does not take
// and frames the kind or the order cannot have (a RANGE offset without exactly one ORDER BY
// key of a type that carries one: ErrRangeOffsetOrder), over input schema s. Window calls it
// when it opens; planners call it first, so that a client's plan is refused before it runs.
func CheckWindowSpec(s *arrow.Schema, spec WindowSpec) error {
	for i, f := range spec.Funcs {
		for _, a := range f.Args {
			if a < 0 || a >= s.NumFields() {
				return fmt.Errorf("ops: window function %d: argument column %d out of range", i, a)
			}
		}
		need := map[WindowKind]int{Ntile: 1, Lag: 1, Lead: 1, FirstValue: 1, LastValue: 1, NthValue: 2, Count: 1, Sum: 1, Avg: 1, Min: 1, Max: 1}[f.Kind]
		if len(f.Args) < need {
			return fmt.Errorf("ops: window function %d: %d arguments", i, len(f.Args))
		}
		switch f.Kind {
		case Sum, Avg:
			if dt := s.Field(f.Args[0]).Type; f.Kind == Sum && dt.ID() == arrow.DECIMAL128 {
				// decimal<P',S> of the argument's scale: decimal<38,S> (Substrait's sum of
				// decimal<P,S>; the binder's numerics are decimal<38,S> already) or the
				// precision a client's plan declares, totals past it 22003 (decSums).
				if ft, ok := f.Type.(*arrow.Decimal128Type); !ok || ft.Scale != dt.(*arrow.Decimal128Type).Scale {
					return fmt.Errorf("ops: window function %d: sum of %s as %s", i, dt, f.Type)
				}
				continue
			}
			if dt := s.Field(f.Args[0]).Type; !integerType(dt) && dt.ID() != arrow.FLOAT64 && dt.ID() != arrow.FLOAT32 {
				return fmt.Errorf("ops: window function %d: sum or avg of %s", i, dt)
			}
			if dt := s.Field(f.Args[0]).Type; f.Type.ID() == arrow.DECIMAL128 &&
				!(f.Kind == Avg && integerType(dt) && arrow.TypeEqual(f.Type, &arrow.Decimal128Type{Precision: 38, Scale: AvgScale})) &&
				!(f.Kind == Sum && integerType(dt) && arrow.TypeEqual(f.Type, &arrow.Decimal128Type{Precision: 38, Scale: 0})) {
				return fmt.Errorf("ops: window function %d: kind %d of %s as %s", i, f.Kind, dt, f.Type)
			}
		case StringAgg:
			if len(f.Args) != 2 || !isUTF8(s.Field(f.Args[0]).Type) || !isUTF8(s.Field(f.Args[1]).Type) || f.Type.ID() != arrow.STRING {
				return fmt.Errorf("ops: window function %d: string_agg of %d arguments, not two texts", i, len(f.Args))
			}
		case ArrayAgg:
			lt, ok := f.Type.(*arrow.ListType)
			if len(f.Args) < 1 || len(f.Args) > 2 || !ok || !arrow.TypeEqual(lt.Elem(), s.Field(f.Args[0]).Type) ||
				len(f.Args) == 2 && s.Field(f.Args[1]).Type.ID() != arrow.BOOL {
				return fmt.Errorf("ops: window function %d: array_agg of %d arguments as %s", i, len(f.Args), f.Type)
			}
			switch lt.Elem().ID() {
			case arrow.STRING, arrow.INT32, arrow.INT64, arrow.FLOAT64, arrow.BOOL:
			default:
				return fmt.Errorf("ops: window function %d: array_agg of %s", i, lt.Elem())
			}
		case Corr, CovarPop, CovarSamp, RegrAvgX, RegrAvgY, RegrCount, RegrIntercept, RegrR2, RegrSlope, RegrSxx, RegrSxy, RegrSyy:
			if len(f.Args) != 2 || s.Field(f.Args[0]).Type.ID() != arrow.FLOAT64 || s.Field(f.Args[1]).Type.ID() != arrow.FLOAT64 {
				return fmt.Errorf("ops: window function %d: a binary aggregate of %d arguments, not two doubles", i, len(f.Args))
			}
		case Min, Max:
			if _, ok := valueCmpOf(s.Field(f.Args[0]).Type); !ok {
				return fmt.Errorf("ops: window function %d: min or max of %s", i, s.Field(f.Args[0]).Type)
			}
		}
		if f.Kind == Lag || f.Kind == Lead {
			if len(f.Args) == 3 && !arrow.TypeEqual(s.Field(f.Args[0]).Type, s.Field(f.Args[2]).Type) {
				return fmt.Errorf("ops: window function %d: a default of another type", i)
			}
		}
		if (f.Frame.Rows && f.Frame.Groups) || f.Frame.Exclude > ExcludeTies {
			return fmt.Errorf("ops: window function %d: frame %+v", i, f.Frame)
		}
		if f.Frame.hasRangeOffset() {
			if err := checkRangeOffset(s, spec, i); err != nil {
				return err
			}
		}
	}
	return nil
}

type windower struct {
	ctx      context.Context
	in       *owned
	spec     WindowSpec
	o        *ordering
	mem      *ledger.Ledger
	inSchema *arrow.Schema
	schema   *arrow.Schema

	loaded  bool
	batches []arrow.RecordBatch
	g       *gatherer
	idx     arrow.Array
	at      func(int) int64
	n       int
	outs    []arrow.Array // per function, in output (sorted) order
	next    int
	// inOrder is set when the output keeps the input's order (Presorted, or no keys): the
	// input batches are emitted as they are, beside slices of the function columns.
	inOrder bool
	nextIn  int // the next input batch, when inOrder
	claimed int64
}

func (w *windower) close() {
	w.in.release()
	for _, b := range w.batches {
		b.Release()
	}
	w.batches, w.g = nil, nil
	if w.idx != nil {
		w.idx.Release()
		w.idx = nil
	}
	releaseArrays(w.outs)
	w.outs = nil
	if w.claimed > 0 {
		w.mem.Unclaim(w.claimed)
		w.claimed = 0
	}
}

func (w *windower) pull() (arrow.RecordBatch, error) {
	if !w.loaded {
		w.loaded = true
		if err := w.load(); err != nil {
			return nil, err
		}
	}
	if w.next >= w.n {
		return nil, nil
	}
	if err := ctxErr(w.ctx); err != nil {
		return nil, err
	}
	lo := w.next
	var b arrow.RecordBatch
	if w.inOrder {
		b = w.batches[w.nextIn]
		b.Retain()
		w.nextIn++
	} else {
		var err error
		hi := w.g.chunkEnd(lo, w.n, w.at)
		if b, err = w.g.take(w.ctx, lo, hi, w.at, allocator(w.mem)); err != nil {
			return nil, err
		}
	}
	defer b.Release()
	hi := lo + int(b.NumRows())
	w.next = hi
	cols := make([]arrow.Array, 0, w.schema.NumFields())
	cols = append(cols, b.Columns()...)
	for _, o := range w.outs {
		s := array.NewSlice(o, int64(lo), int64(hi))
		defer s.Release()
		cols = append(cols, s)
	}
	return array.NewRecordBatch(w.schema, cols, int64(hi-lo)), nil
}

// load buffers the input, orders it and evaluates every function.
func (w *windower) load() error {
	var rows int64
	for w.in.r.Next() {
		if err := ctxErr(w.ctx); err != nil {
			return err
		}
		b := w.in.r.RecordBatch()
		if b.NumRows() == 0 {
			continue
		}
		b.Retain()
		w.batches = append(w.batches, b)
		rows += b.NumRows()
		if err := w.mem.Check(); err != nil {
			return fmt.Errorf("ops: window: %w", err)
		}
	}
	if err := w.in.r.Err(); err != nil {
		return err
	}
	w.in.release()
	if rows == 0 {
		return nil
	}
	if rows > math.MaxInt32 {
		return fmt.Errorf("ops: window: %d rows are more than one window can order", rows)
	}
	w.n = int(rows)
	// The working set on the Go heap: the order (8 bytes a row, allocated from mem), peer
	// bounds and per-function indices or values (about 40 bytes a row in all).
	w.claimed = int64(w.n) * 40
	groups := false
	for _, f := range w.spec.Funcs {
		groups = groups || f.Frame.Groups
		if f.Type.ID() == arrow.DECIMAL128 {
			// numeric values: avg's (numavg.go), sum(bigint)'s, sum(numeric)'s (with its
			// 24-byte prefix sums and counts over a partition)
			w.claimed += int64(w.n) * 16
			if f.Kind == Sum && w.inSchema.Field(f.Args[0]).Type.ID() == arrow.DECIMAL128 {
				w.claimed += int64(w.n) * 32
			}
		}
	}
	if groups {
		// GROUPS frames: each row's peer group and each group's start (groupsOf).
		w.claimed += int64(w.n) * 8
	}
	if err := w.mem.Claim(w.claimed); err != nil {
		w.claimed = 0
		return fmt.Errorf("ops: window: %w", err)
	}
	alloc := allocator(w.mem)
	var views []keyView
	var keys []arrow.Array
	if len(w.o.keys) > 0 {
		var err error
		keys, err = concatKeys(w.o, w.batches, alloc)
		if err != nil {
			return fmt.Errorf("ops: window: %w", err)
		}
		defer releaseArrays(keys)
		if err := w.mem.Check(); err != nil {
			return fmt.Errorf("ops: window: %w", err)
		}
		views = w.o.views(keys)
	}
	if len(keys) > 0 && !w.spec.Presorted {
		var err error
		if w.idx, err = sortIndices(computeCtx(w.ctx, w.mem), w.o, keys, alloc); err != nil {
			return fmt.Errorf("ops: window: %w", err)
		}
	} else {
		w.inOrder = true
		buf := memory.NewResizableBuffer(alloc)
		buf.Resize(w.n * 8)
		ids := arrow.Int64Traits.CastFromBytes(buf.Bytes())
		for i := range ids {
			ids[i] = int64(i)
		}
		data := array.NewData(arrow.PrimitiveTypes.Int64, w.n, []*memory.Buffer{nil, buf}, nil, 0, 0)
		buf.Release()
		w.idx = array.MakeFromData(data)
		data.Release()
	}
	w.at = indexAt(w.idx)
	w.g = newGatherer(w.inSchema, w.batches)
	// The argument columns, each concatenated once (indexed by global row).
	args := map[int]arrow.Array{}
	defer func() {
		for _, a := range args {
			a.Release()
		}
	}()
	for _, f := range w.spec.Funcs {
		for _, c := range f.Args {
			if _, ok := args[c]; ok {
				continue
			}
			a, err := concatColumn(w.batches, c, alloc)
			if err != nil {
				return fmt.Errorf("ops: window: %w", err)
			}
			args[c] = a
		}
	}
	if err := w.mem.Check(); err != nil {
		return fmt.Errorf("ops: window: %w", err)
	}
	ev := &winEval{w: w, views: views, nPart: len(w.spec.Partition), args: args}
	for _, f := range w.spec.Funcs {
		out, err := ev.eval(f)
		if err != nil {
			return err
		}
		w.outs = append(w.outs, out)
		if err := w.mem.Check(); err != nil {
			return fmt.Errorf("ops: window: %w", err)
		}
	}
	return nil
}

// concatColumn returns column c of batches as one array.
func concatColumn(batches []arrow.RecordBatch, c int, mem memory.Allocator) (arrow.Array, error) {
	if len(batches) == 1 {
		a := batches[0].Column(c)
		a.Retain()
		return a, nil
	}
	parts := make([]arrow.Array, len(batches))
	for j, b := range batches {
		parts[j] = b.Column(c)
	}
	return array.Concatenate(parts, mem)
}

// winEval evaluates functions over the ordered rows of a windower.
type winEval struct {
	w     *windower
	views []keyView // partition keys, then order keys, over the concatenated key columns
	nPart int
	args  map[int]arrow.Array
	// The peer groups of the partition at groupPS (groupM rows), for GROUPS frames (groupsOf).
	group, groupStart []int32
	groupPS, groupM   int
}

// partitions calls fn with each partition's positions [ps, pe) in output order and, per
// position of the partition, its peer group's bounds [peerStart, peerEnd) relative to ps.
func (ev *winEval) partitions(fn func(ps, pe int, peerStart, peerEnd []int32) error) error {
	n, at := ev.w.n, ev.w.at
	same := func(from, to, a, b int) bool {
		for k := from; k < to; k++ {
			if compareView(&ev.views[k], int(at(a)), &ev.views[k], int(at(b))) != 0 {
				return false
			}
		}
		return true
	}
	var peerStart, peerEnd []int32
	for ps := 0; ps < n; {
		if err := ctxErr(ev.w.ctx); err != nil {
			return err
		}
		pe := ps + 1
		for pe < n && same(0, ev.nPart, ps, pe) {
			pe++
		}
		m := pe - ps
		peerStart, peerEnd = peerStart[:0], peerEnd[:0]
		for k := 0; k < m; {
			e := k + 1
			for e < m && same(ev.nPart, len(ev.views), ps+k, ps+e) {
				e++
			}
			for range e - k {
				peerStart, peerEnd = append(peerStart, int32(k)), append(peerEnd, int32(e))
			}
			k = e
		}
		if err := fn(ps, pe, peerStart, peerEnd); err != nil {
			return err
		}
		ps = pe
	}
	return nil
}

// frameOf returns the frame [s, e) of position k of a partition of m rows (positions relative
// to the partition; s >= e is an empty frame).
func frameOf(f WindowFrame, k, m int, peerStart, peerEnd []int32) (int, int) {
	var s, e int
	switch f.Start.Kind {
	case Unbounded:
		s = 0
	case CurrentRow:
		s = k
		if !f.Rows {
			s = int(peerStart[k])
		}
	case Preceding:
		s = k - int(min(f.Start.Offset, int64(m)))
	case Following:
		s = k + int(min(f.Start.Offset, int64(m)))
	}
	switch f.End.Kind {
	case Unbounded:
		e = m
	case CurrentRow:
		e = k + 1
		if !f.Rows {
			e = int(peerEnd[k])
		}
	case Preceding:
		e = k + 1 - int(min(f.End.Offset, int64(m)))
	case Following:
		e = k + 1 + int(min(f.End.Offset, int64(m)))
	}
	return max(s, 0), min(e, m)
}

// integerType reports a signed integer type (what intArg reads).
func integerType(dt arrow.DataType) bool {
	switch dt.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64:
		return true
	}
	return false
}

// intArg reads an integer argument at global row r (null: ok false).
func intArg(a arrow.Array, r int) (int64, bool) {
	if a.IsNull(r) {
		return 0, false
	}
	switch v := a.(type) {
	case *array.Int32:
		return int64(v.Value(r)), true
	case *array.Int64:
		return v.Value(r), true
	case *array.Int16:
		return int64(v.Value(r)), true
	case *array.Int8:
		return int64(v.Value(r)), true
	}
	return 0, false
}

// eval evaluates one function over every partition: an array of the output type in output
// order.
func (ev *winEval) eval(f WindowFunc) (arrow.Array, error) {
	w := ev.w
	n, at := w.n, w.at
	alloc := allocator(w.mem)
	var arg arrow.Array
	if len(f.Args) > 0 {
		arg = ev.args[f.Args[0]]
	}
	switch f.Kind {
	case RowNumber, Rank, DenseRank, CountStar, Count, PercentRank, CumeDist, Ntile, Sum, Avg:
	case Corr, CovarPop, CovarSamp, RegrAvgX, RegrAvgY, RegrCount, RegrIntercept, RegrR2, RegrSlope, RegrSxx, RegrSxy, RegrSyy:
		return ev.regrWindow(f)
	case StringAgg, ArrayAgg:
		return ev.collectWindow(f)
	case VarSamp, VarPop, StddevSamp, StddevPop:
		f64, ok := arg.(*array.Float64)
		if !ok {
			return nil, fmt.Errorf("ops: window: a variance of %s, not float64", arg.DataType())
		}
		out := make([]float64, n)
		valid := make([]bool, n)
		if err := ev.partitions(func(ps, pe int, peerStart, peerEnd []int32) error {
			return ev.floatVariances(f, f64, ps, pe-ps, peerStart, peerEnd, out, valid)
		}); err != nil {
			return nil, err
		}
		b := array.NewFloat64Builder(alloc)
		defer b.Release()
		b.AppendValues(out, valid)
		return b.NewArray(), nil
	default:
		return ev.evalTake(f, arg)
	}
	ints := make([]int64, n)
	floats := []float64(nil)
	if f.Type.ID() == arrow.FLOAT64 || f.Type.ID() == arrow.FLOAT32 {
		floats = make([]float64, n)
	}
	var decs []decimal128.Num // avg of integers as numeric (numavg.go)
	if f.Type.ID() == arrow.DECIMAL128 {
		decs = make([]decimal128.Num, n)
	}
	valid := make([]bool, n)
	for i := range valid {
		valid[i] = true
	}
	err := ev.partitions(func(ps, pe int, peerStart, peerEnd []int32) error {
		m := pe - ps
		switch f.Kind {
		case RowNumber:
			for k := range m {
				ints[ps+k] = int64(k + 1)
			}
		case Rank:
			for k := range m {
				ints[ps+k] = int64(peerStart[k]) + 1
			}
		case DenseRank:
			var g int64
			for k := range m {
				if k == 0 || peerStart[k] != peerStart[k-1] {
					g++
				}
				ints[ps+k] = g
			}
		case PercentRank:
			for k := range m {
				if m > 1 {
					floats[ps+k] = float64(peerStart[k]) / float64(m-1)
				}
			}
		case CumeDist:
			for k := range m {
				floats[ps+k] = float64(peerEnd[k]) / float64(m)
			}
		case Ntile:
			nb, ok := intArg(arg, int(at(ps)))
			if !ok {
				for k := range m {
					valid[ps+k] = false
				}
				return nil
			}
			if nb <= 0 {
				return &DataError{Code: "22014", Msg: "argument of ntile must be greater than zero"}
			}
			// PostgreSQL's window_ntile: the first m % nb buckets hold one row more.
			boundary := int64(m) / nb
			remainder := int64(0)
			if boundary <= 0 {
				boundary = 1
			} else if remainder = int64(m) % nb; remainder != 0 {
				boundary++
			}
			tile, inBucket := int64(1), int64(0)
			for k := range m {
				if inBucket >= boundary {
					tile++
					inBucket = 0
					if remainder != 0 && tile == remainder+1 {
						boundary--
					}
				}
				inBucket++
				ints[ps+k] = tile
			}
		case CountStar, Count:
			pre := make([]int64, m+1)
			for k := range m {
				pre[k+1] = pre[k]
				if f.Kind == CountStar || arg.IsValid(int(at(ps+k))) {
					pre[k+1]++
				}
			}
			for k := range m {
				s, e := ev.frame(f.Frame, ps, k, m, peerStart, peerEnd)
				if f.Frame.Exclude == ExcludeNoOthers {
					if e > s {
						ints[ps+k] = pre[e] - pre[s]
					}
					continue
				}
				for _, r := range excluded(f.Frame, k, s, e, peerStart, peerEnd) {
					if r.hi > r.lo {
						ints[ps+k] += pre[r.hi] - pre[r.lo]
					}
				}
			}
		case Sum, Avg:
			if arg.DataType().ID() == arrow.DECIMAL128 {
				return ev.decSums(arg.(*array.Decimal128), ps, m, peerStart, peerEnd, f, decs, valid)
			}
			if integerType(arg.DataType()) {
				return ev.intSums(f, arg, ps, m, peerStart, peerEnd, ints, floats, decs, valid)
			}
			return ev.floatSums(f, arg, ps, m, peerStart, peerEnd, floats, valid)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	switch f.Type.ID() {
	case arrow.DECIMAL128:
		b := array.NewDecimal128Builder(alloc, f.Type.(*arrow.Decimal128Type))
		defer b.Release()
		b.AppendValues(decs, valid)
		return b.NewArray(), nil
	case arrow.FLOAT64:
		b := array.NewFloat64Builder(alloc)
		defer b.Release()
		b.AppendValues(floats, valid)
		return b.NewArray(), nil
	case arrow.FLOAT32: // sum(real): floatSums' single precision sums, exact as float64
		b := array.NewFloat32Builder(alloc)
		defer b.Release()
		b.Reserve(n)
		for i, v := range floats {
			if valid[i] {
				b.UnsafeAppend(float32(v))
			} else {
				b.UnsafeAppendBoolToBitmap(false)
			}
		}
		return b.NewArray(), nil
	case arrow.INT32:
		b := array.NewInt32Builder(alloc)
		defer b.Release()
		b.Reserve(n)
		for i, v := range ints {
			if valid[i] {
				b.UnsafeAppend(int32(v))
			} else {
				b.UnsafeAppendBoolToBitmap(false)
			}
		}
		return b.NewArray(), nil
	case arrow.INT64:
		b := array.NewInt64Builder(alloc)
		defer b.Release()
		b.AppendValues(ints, valid)
		return b.NewArray(), nil
	}
	return nil, fmt.Errorf("ops: window: output type %s of a numeric window function", f.Type)
}

// int128 is a two's-complement 128-bit integer: exact running sums of bigints.
type int128 struct {
	hi int64
	lo uint64
}

func (x int128) add(v int64) int128 {
	lo, carry := bits.Add64(x.lo, uint64(v), 0)
	hi := x.hi + int64(carry)
	if v < 0 {
		hi--
	}
	return int128{hi: hi, lo: lo}
}

// plus returns x + y.
func (x int128) plus(y int128) int128 {
	lo, carry := bits.Add64(x.lo, y.lo, 0)
	return int128{hi: x.hi + y.hi + int64(carry), lo: lo}
}

func (x int128) sub(y int128) int128 {
	lo, borrow := bits.Sub64(x.lo, y.lo, 0)
	return int128{hi: x.hi - y.hi - int64(borrow), lo: lo}
}

// int64 returns x when it fits in an int64.
func (x int128) int64() (int64, bool) {
	v := int64(x.lo)
	return v, (x.hi == 0 && v >= 0) || (x.hi == -1 && v < 0)
}

// big returns x as a big.Int.
func (x int128) big() *big.Int {
	v := new(big.Int).Lsh(big.NewInt(x.hi), 64)
	return v.Add(v, new(big.Int).SetUint64(x.lo))
}

func (x int128) float64() float64 {
	if x.hi < 0 {
		neg := int128{}.sub(x)
		return -(float64(uint64(neg.hi))*(1<<64) + float64(neg.lo))
	}
	return float64(x.hi)*(1<<64) + float64(x.lo)
}

// intSums evaluates sum or avg of integers over a partition's frames from exact 128-bit prefix
// sums; into decs when the function's type is decimal128: avg as PostgreSQL's numeric, sum
// (of bigints, numeric in PostgreSQL) as the exact total. A bigint sum (of smaller integers)
// outside bigint's range is PostgreSQL's "bigint out of range".
func (ev *winEval) intSums(f WindowFunc, a arrow.Array, ps, m int, peerStart, peerEnd []int32, ints []int64, floats []float64, decs []decimal128.Num, valid []bool) error {
	pre := make([]int128, m+1)
	cnt := make([]int64, m+1)
	for k := range m {
		r := int(ev.w.at(ps + k))
		pre[k+1], cnt[k+1] = pre[k], cnt[k]
		if v, ok := intArg(a, r); ok {
			pre[k+1], cnt[k+1] = pre[k].add(v), cnt[k]+1
		}
	}
	for k := range m {
		var sum int128
		var c int64
		s, e := ev.frame(f.Frame, ps, k, m, peerStart, peerEnd)
		if f.Frame.Exclude == ExcludeNoOthers {
			if e > s {
				sum, c = pre[e].sub(pre[s]), cnt[e]-cnt[s]
			}
		} else {
			sum, c = excludedTotal(f.Frame, k, s, e, peerStart, peerEnd, pre, cnt)
		}
		if c == 0 {
			valid[ps+k] = false
			continue
		}
		if f.Kind == Avg && decs != nil {
			d, err := NumericAvg(sum.big(), c)
			if err != nil {
				return err
			}
			decs[ps+k] = d
			continue
		}
		if f.Kind == Avg {
			floats[ps+k] = sum.float64() / float64(c)
			continue
		}
		if decs != nil {
			// sum(bigint) as numeric: the exact total (past bigint's range too).
			decs[ps+k] = decimal128.FromBigInt(sum.big())
			continue
		}
		v, ok := sum.int64()
		if !ok {
			return &DataError{Code: sqlstateOutOfRange, Msg: "bigint out of range"}
		}
		ints[ps+k] = v
	}
	return nil
}

// int192 is a 192-bit two's-complement integer, three little-endian words: prefix sums of
// decimal128 values, whose differences are exact for any frame of fewer than 2^63 rows
// (arithmetic modulo 2^192 is exact while the true value fits, and a frame's total of such
// values is below 2^190).
type int192 [3]uint64

// addDec adds the 128-bit two's-complement v.
func (x int192) addDec(v decimal128.Num) int192 {
	ext := uint64(0)
	if v.HighBits() < 0 {
		ext = ^uint64(0)
	}
	lo, c := bits.Add64(x[0], v.LowBits(), 0)
	mid, c := bits.Add64(x[1], uint64(v.HighBits()), c)
	hi, _ := bits.Add64(x[2], ext, c)
	return int192{lo, mid, hi}
}

// plus returns x + y.
func (x int192) plus(y int192) int192 {
	lo, c := bits.Add64(x[0], y[0], 0)
	mid, c := bits.Add64(x[1], y[1], c)
	hi, _ := bits.Add64(x[2], y[2], c)
	return int192{lo, mid, hi}
}

// sub returns x - y.
func (x int192) sub(y int192) int192 {
	lo, b := bits.Sub64(x[0], y[0], 0)
	mid, b := bits.Sub64(x[1], y[1], b)
	hi, _ := bits.Sub64(x[2], y[2], b)
	return int192{lo, mid, hi}
}

// dec returns x as a decimal128 when it fits in 128 bits and below 10^38 in magnitude (ok
// false otherwise: past numeric's 38 digits).
func (x int192) dec() (decimal128.Num, bool) {
	hi := int64(x[1])
	if (hi < 0 && x[2] != ^uint64(0)) || (hi >= 0 && x[2] != 0) {
		return decimal128.Num{}, false
	}
	d := decimal128.New(hi, x[0])
	if d.Abs().Cmp(decimal128.GetScaleMultiplier(38)) >= 0 || d == decimal128.New(math.MinInt64, 0) {
		return decimal128.Num{}, false
	}
	return d, true
}

// decSums evaluates sum of decimal128 values (PostgreSQL's numeric sum, of the argument's
// scale) over a partition's frames from exact prefix sums, into decs; a frame's total of 38
// digits or more is numeric's 22003, as the aggregate's (scan/aggregate decsum.go).
func (ev *winEval) decSums(a *array.Decimal128, ps, m int, peerStart, peerEnd []int32, f WindowFunc, decs []decimal128.Num, valid []bool) error {
	pre := make([]int192, m+1)
	cnt := make([]int64, m+1)
	for k := range m {
		r := int(ev.w.at(ps + k))
		pre[k+1], cnt[k+1] = pre[k], cnt[k]
		if a.IsValid(r) {
			pre[k+1], cnt[k+1] = pre[k].addDec(a.Value(r)), cnt[k]+1
		}
	}
	for k := range m {
		var sum int192
		var c int64
		s, e := ev.frame(f.Frame, ps, k, m, peerStart, peerEnd)
		if f.Frame.Exclude == ExcludeNoOthers {
			if e > s {
				sum, c = pre[e].sub(pre[s]), cnt[e]-cnt[s]
			}
		} else {
			sum, c = excludedTotal(f.Frame, k, s, e, peerStart, peerEnd, pre, cnt)
		}
		if c == 0 {
			valid[ps+k] = false
			continue
		}
		d, ok := sum.dec()
		if !ok {
			return errNumericWide
		}
		if p := f.Type.(*arrow.Decimal128Type).Precision; p < 38 && d.Abs().Cmp(decimal128.GetScaleMultiplier(int(p))) >= 0 {
			return &DataError{Code: sqlstateOutOfRange, Msg: "numeric field overflow"}
		}
		decs[ps+k] = d
	}
	return nil
}

// floatSums evaluates sum or avg of doubles (and reals) over a partition's frames as
// PostgreSQL does (it has no inverse transition for float8): the frame's values accumulated
// in order, restarting when the frame's start moves. sum is float8pl's: its first value
// (so -0 alone is -0), and "value out of range: overflow" (22003) where finite values sum
// to an infinity; avg is float8_avg of float8_accum's state (Float8State.Accum), with its
// overflow errors (also where Sxx overflows: 1e200 and -1e200). A sum whose type is float32
// (sum(real)) is float4pl's: added in single precision, with the same overflow check.
func (ev *winEval) floatSums(f WindowFunc, a arrow.Array, ps, m int, peerStart, peerEnd []int32, floats []float64, valid []bool) error {
	var sum float64
	var st Float8State
	single := f.Type.ID() == arrow.FLOAT32
	add := func(p int) error {
		r := int(ev.w.at(ps + p))
		if !a.IsValid(r) {
			return nil
		}
		var x float64
		if f64, ok := a.(*array.Float64); ok {
			x = f64.Value(r)
		} else {
			x = float64(a.(*array.Float32).Value(r))
		}
		if f.Kind == Avg {
			var err error
			st, err = st.Accum(x)
			return err
		}
		v := sum + x
		if single {
			v = float64(float32(sum) + float32(x))
		}
		if math.IsInf(v, 0) && !math.IsInf(sum, 0) && !math.IsInf(x, 0) {
			return ErrFloat8Overflow
		}
		sum, st.N = v, st.N+1
		return nil
	}
	cs, ce := -1, -1
	for k := range m {
		if f.Frame.Exclude != ExcludeNoOthers {
			// Recomputed over the row's runs (no frame of another row contains them).
			sum, st = math.Copysign(0, -1), Float8State{}
			if err := ev.eachInFrame(f.Frame, ps, k, m, peerStart, peerEnd, add); err != nil {
				return err
			}
		} else {
			s, e := ev.frame(f.Frame, ps, k, m, peerStart, peerEnd)
			if s != cs || e < ce {
				sum, st, cs, ce = math.Copysign(0, -1), Float8State{}, s, s
			}
			for ; ce < e; ce++ {
				if err := add(ce); err != nil {
					return err
				}
			}
		}
		if st.N == 0 {
			valid[ps+k] = false
			continue
		}
		floats[ps+k] = sum
		if f.Kind == Avg {
			floats[ps+k] = st.Sx / st.N
		}
	}
	return nil
}

// floatVariances evaluates the variance family of doubles over a partition's frames as
// PostgreSQL does: float8_accum (Float8Accum) over the frame's values in order, restarting
// when the frame's start moves (float8_accum has no inverse transition), then
// float8_var_samp, _var_pop, _stddev_samp or _stddev_pop.
func (ev *winEval) floatVariances(f WindowFunc, a *array.Float64, ps, m int, peerStart, peerEnd []int32, out []float64, valid []bool) error {
	var st Float8State
	add := func(p int) error {
		if r := int(ev.w.at(ps + p)); a.IsValid(r) {
			var err error
			st, err = st.Accum(a.Value(r))
			return err
		}
		return nil
	}
	return ev.restartFrames(f, ps, m, peerStart, peerEnd, func() { st = Float8State{} }, add, func(k int) error {
		var v float64
		switch f.Kind {
		case VarSamp, StddevSamp:
			if st.N <= 1 {
				return nil
			}
			v = st.Sxx / (st.N - 1)
		default:
			if st.N == 0 {
				return nil
			}
			v = st.Sxx / st.N
		}
		if f.Kind == StddevSamp || f.Kind == StddevPop {
			v = math.Sqrt(v)
		}
		out[ps+k], valid[ps+k] = v, true
		return nil
	})
}

// Float8State is PostgreSQL's float8_accum transition state of the variance family (the
// Youngs-Cramer algorithm): the count N, the sum Sx and the sum of squared
// differences from the mean Sxx, all float64. The zero value is the state over no value.
type Float8State struct{ N, Sx, Sxx float64 }

// ErrFloat8Overflow is PostgreSQL's "value out of range: overflow" (22003) of float8_accum: a
// finite value whose Sx or Sxx overflows.
var ErrFloat8Overflow = &DataError{Code: "22003", Msg: "value out of range: overflow"}

// Accum is float8_accum: the state after x. An infinite or NaN x makes Sxx NaN (the result
// NaN, as PostgreSQL's); a finite x whose sums overflow is ErrFloat8Overflow.
func (st Float8State) Accum(x float64) (Float8State, error) {
	n0, sx0 := st.N, st.Sx
	n := n0 + 1
	sx := sx0 + x
	sxx := st.Sxx
	if n0 > 0 {
		tmp := x*n - sx
		sxx += tmp * tmp / (n * n0)
		if math.IsInf(sx, 0) || math.IsInf(sxx, 0) {
			if !math.IsInf(sx0, 0) && !math.IsInf(x, 0) {
				return st, ErrFloat8Overflow
			}
			sxx = math.NaN()
		}
	} else if math.IsNaN(x) || math.IsInf(x, 0) {
		sxx = math.NaN()
	}
	return Float8State{N: n, Sx: sx, Sxx: sxx}, nil
}

// evalTake evaluates the functions whose value is one of their argument's (lag, lead,
// first_value, last_value, nth_value, min, max): the global row of each output (or of the
// default's, for lag and lead), gathered with compute's take.
func (ev *winEval) evalTake(f WindowFunc, arg arrow.Array) (arrow.Array, error) {
	w := ev.w
	n, at := w.n, w.at
	idx := make([]int64, n)
	valid := make([]bool, n)
	values := arg
	var cmp valueCmp
	switch f.Kind {
	case Lag, Lead:
		if len(f.Args) == 3 {
			both, err := array.Concatenate([]arrow.Array{arg, ev.args[f.Args[2]]}, allocator(w.mem))
			if err != nil {
				return nil, fmt.Errorf("ops: window: %w", err)
			}
			defer both.Release()
			values = both
		}
	case Min, Max:
		cmp, _ = valueCmpOf(arg.DataType())
	}
	err := ev.partitions(func(ps, pe int, peerStart, peerEnd []int32) error {
		m := pe - ps
		cs, ce, best := -1, -1, -1
		for k := range m {
			pos := ps + k
			switch f.Kind {
			case Lag, Lead:
				off := int64(1)
				if len(f.Args) >= 2 {
					var ok bool
					if off, ok = intArg(ev.args[f.Args[1]], int(at(pos))); !ok {
						continue // a NULL offset: NULL
					}
				}
				if f.Kind == Lag {
					off = -off
				}
				if t := int64(k) + off; t >= 0 && t < int64(m) {
					idx[pos], valid[pos] = at(ps+int(t)), true
				} else if len(f.Args) == 3 {
					idx[pos], valid[pos] = int64(n)+at(pos), true
				}
			case FirstValue, LastValue, NthValue:
				s, e := ev.frame(f.Frame, ps, k, m, peerStart, peerEnd)
				nth := int64(1) // the row of the frame wanted, from 1; last_value's is its last
				if f.Kind == NthValue {
					var ok bool
					if nth, ok = intArg(ev.args[f.Args[1]], int(at(pos))); !ok {
						continue
					}
					if nth <= 0 {
						return &DataError{Code: "22016", Msg: "argument of nth_value must be greater than zero"}
					}
				}
				if f.Frame.Exclude == ExcludeNoOthers {
					// One run: position arithmetic.
					if nth > int64(e-s) || e <= s {
						continue
					}
					t := s + int(nth) - 1
					if f.Kind == LastValue {
						t = e - 1
					}
					idx[pos], valid[pos] = at(ps+t), true
					continue
				}
				sp := excluded(f.Frame, k, s, e, peerStart, peerEnd)
				if nth > int64(frameRows(sp)) {
					continue
				}
				t, ok := nthInFrame(sp, int(nth)-1)
				if f.Kind == LastValue {
					t, ok = lastInFrame(sp)
				}
				if ok {
					idx[pos], valid[pos] = at(ps+t), true
				}
			case Min, Max:
				// Of equal values the later in the frame, as PostgreSQL's min and max
				// transition functions (float8larger…) keep: of -0 and 0, the later.
				add := func(p int) error {
					r := int(at(ps + p))
					if arg.IsNull(r) {
						return nil
					}
					if best < 0 {
						best = r
						return nil
					}
					c := cmp(arg, r, arg, best)
					if (f.Kind == Min && c <= 0) || (f.Kind == Max && c >= 0) {
						best = r
					}
					return nil
				}
				if f.Frame.Exclude != ExcludeNoOthers {
					best = -1
					if err := ev.eachInFrame(f.Frame, ps, k, m, peerStart, peerEnd, add); err != nil {
						return err
					}
				} else {
					s, e := ev.frame(f.Frame, ps, k, m, peerStart, peerEnd)
					if s != cs || e < ce {
						cs, ce, best = s, s, -1
					}
					for ; ce < e; ce++ {
						_ = add(ce)
					}
				}
				if best >= 0 {
					idx[pos], valid[pos] = int64(best), true
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	ib := array.NewInt64Builder(allocator(w.mem))
	defer ib.Release()
	ib.AppendValues(idx, valid)
	indices := ib.NewArray()
	defer indices.Release()
	out, err := takeArray(computeCtx(w.ctx, w.mem), values, indices)
	if err != nil {
		return nil, fmt.Errorf("ops: window: %w", err)
	}
	return out, nil
}
