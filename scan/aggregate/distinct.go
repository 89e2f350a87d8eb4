package aggregate

import (
	"encoding/binary"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Distinct measures keep, per measure, one set of (group, value) pairs and an insertion log of
// the pairs in first-appearance order. A value new to its group is fed to the inner
// accumulator (count, sum, avg or a variance of doubles), so results need no second pass; the partial state is the
// log grouped into one list per group.

func newDistinct(m resolved, keepLog bool) accumulator {
	switch m.argType.ID() {
	case arrow.INT8:
		return newDistinctNum[int8](m, keepLog)
	case arrow.INT16:
		return newDistinctNum[int16](m, keepLog)
	case arrow.INT32, arrow.DATE32:
		return newDistinctNum[int32](m, keepLog)
	case arrow.INT64, arrow.TIMESTAMP, arrow.TIME64:
		return newDistinctNum[int64](m, keepLog)
	case arrow.UINT8, arrow.BOOL:
		return newDistinctNum[uint8](m, keepLog)
	case arrow.UINT16:
		return newDistinctNum[uint16](m, keepLog)
	case arrow.UINT32:
		return newDistinctNum[uint32](m, keepLog)
	case arrow.UINT64:
		return newDistinctNum[uint64](m, keepLog)
	case arrow.FLOAT32:
		return newDistinctNum[float32](m, keepLog)
	case arrow.FLOAT64:
		return newDistinctNum[float64](m, keepLog)
	case arrow.DECIMAL128:
		return newDistinctDec(m, keepLog)
	case arrow.STRING, arrow.LARGE_STRING, arrow.BINARY, arrow.LARGE_BINARY:
		return &distinctBytes{dt: m.argType, distinctSet: newDistinctSet[string, string](keepLog)}
	}
	panic("aggregate: distinct of " + m.argType.String())
}

func newDistinctNum[T fixedT](m resolved, keepLog bool) *distinctNum[T] {
	a := &distinctNum[T]{dt: m.argType, log: distinctLog[T]{keep: keepLog}, set: map[distinctKey]struct{}{}}
	switch m.Func {
	case Count:
		a.inner = &countValues[T]{}
	default: // Sum, Avg
		if m.floatAccum() {
			a.inner = newVarAcc(m).(valuesAcc[T])
			break
		}
		a.inner = newSum(m.argType, m.Func == Avg).(valuesAcc[T])
		a.numeric = m.Numeric && m.Func == Sum && m.argKind != kFloat
		a.numericAvg = m.Numeric && m.Func == Avg && m.argKind != kFloat
	}
	return a
}

type distinctKey struct {
	g uint32
	v uint64
}

// distinctEntryBytes estimates the Go heap of one set entry and its log entry.
const distinctEntryBytes = 48

// distinctNum is count/sum/avg(distinct x) over a fixed-width type (physical type T).
type distinctNum[T fixedT] struct {
	dt         arrow.DataType
	inner      valuesAcc[T]
	numeric    bool // sum answered as its decimal128 total (Measure.Numeric)
	numericAvg bool // avg of integers answered as numeric (Measure.Numeric, numavg.go)
	set        map[distinctKey]struct{}
	log        distinctLog[T]

	keys    []uint64
	newG    []uint32
	newV    []T
	scratch []byte
}

func (a *distinctNum[T]) grow(n int) { a.inner.grow(n) }

func (a *distinctNum[T]) update(arg arrow.Array, gids []uint32, mask []bool) error {
	vals := physValues[T](arg, &a.scratch)[:len(gids)]
	a.keys = sized(a.keys, len(vals))
	normKeys(vals, a.keys)
	keys := a.keys
	newG, newV := a.newG[:0], a.newV[:0]
	for i, g := range gids {
		if mask != nil && !mask[i] {
			continue
		}
		k := distinctKey{g, keys[i]}
		if _, ok := a.set[k]; ok {
			continue
		}
		a.set[k] = struct{}{}
		newG = append(newG, g)
		newV = append(newV, vals[i])
	}
	a.log.add(newG, newV)
	a.newG, a.newV = newG, newV
	return a.inner.addValues(newV, newG, nil)
}

func (a *distinctNum[T]) merge(cols []arrow.Array, gids []uint32) error {
	return mergeLists(cols[0], gids, a.update)
}

func (a *distinctNum[T]) result(mem memory.Allocator, lo, hi int) (arrow.Array, error) {
	if a.numeric {
		return totalOf(a.inner, mem, lo, hi)
	}
	if a.numericAvg {
		return avgOfState(a.inner, mem, lo, hi)
	}
	return a.inner.result(mem, lo, hi)
}

func (a *distinctNum[T]) state(mem memory.Allocator, lo, hi int) ([]arrow.Array, error) {
	a.set = nil // the state is asked for once the input ended
	return []arrow.Array{a.log.state(mem, a.dt, lo, hi, func(vals []T) arrow.Array { return makeFixed(mem, a.dt, vals, nil) })}, nil
}

func (a *distinctNum[T]) heapBytes() int64 {
	return a.inner.heapBytes() + int64(len(a.set))*distinctEntryBytes + a.log.heapBytes() +
		int64(cap(a.keys))*8 + int64(cap(a.newG))*4 + int64(cap(a.newV))*sizeOf[T]()
}

// distinctSet is the set of (group, value) pairs and the insertion log distinctBytes and
// distinctDec keep: key K is the pair's, V the value the log holds.
type distinctSet[K comparable, V any] struct {
	set  map[K]struct{}
	log  distinctLog[V]
	newG []uint32 // the groups of the pairs the last update found new
}

func newDistinctSet[K comparable, V any](keepLog bool) distinctSet[K, V] {
	return distinctSet[K, V]{set: map[K]struct{}{}, log: distinctLog[V]{keep: keepLog}}
}

// update calls row for each row of gids mask keeps (nil: every row), with its group; row
// reports whether the row's pair is new (insert), whose group newG then lists.
func (s *distinctSet[K, V]) update(gids []uint32, mask []bool, row func(i int, g uint32) (bool, error)) error {
	s.newG = s.newG[:0]
	for i, g := range gids {
		if mask != nil && !mask[i] {
			continue
		}
		isNew, err := row(i, g)
		if err != nil {
			return err
		}
		if isNew {
			s.newG = append(s.newG, g)
		}
	}
	return nil
}

// insert adds the pair k of group g and value v, and reports whether it is new.
func (s *distinctSet[K, V]) insert(k K, g uint32, v V) bool {
	if _, ok := s.set[k]; ok {
		return false
	}
	s.set[k] = struct{}{}
	s.log.add1(g, v)
	return true
}

// state is the partial state of groups lo..hi-1 (distinctLog.state); the set is dropped, as
// the state is asked for once the input ended.
func (s *distinctSet[K, V]) state(mem memory.Allocator, dt arrow.DataType, lo, hi int, values func([]V) arrow.Array) []arrow.Array {
	s.set = nil
	return []arrow.Array{s.log.state(mem, dt, lo, hi, values)}
}

// heapBytes estimates the Go heap of the log and the scratch (the set's entries are the
// caller's to count: their size depends on K).
func (s *distinctSet[K, V]) heapBytes() int64 {
	return s.log.heapBytes() + int64(cap(s.newG))*4
}

// distinctBytes is count(distinct x) over text or binary. The set's keys are the group id
// (4 bytes, little-endian) followed by the value.
type distinctBytes struct {
	dt                          arrow.DataType
	count                       countAcc
	distinctSet[string, string] // the log's values are views into the set's keys
	heap                        int64
	kbuf                        []byte
}

func (a *distinctBytes) grow(n int) { a.count.grow(n) }

func (a *distinctBytes) update(arg arrow.Array, gids []uint32, mask []bool) error {
	col := bytesView(arg)
	err := a.distinctSet.update(gids, mask, func(i int, g uint32) (bool, error) {
		a.kbuf = binary.LittleEndian.AppendUint32(a.kbuf[:0], g)
		a.kbuf = append(a.kbuf, col.value(i)...)
		if _, ok := a.set[string(a.kbuf)]; ok {
			return false, nil // looked up without a copy of the key
		}
		k := string(a.kbuf)
		a.heap += int64(len(k)) + distinctEntryBytes + 16
		return a.insert(k, g, k[4:]), nil
	})
	a.count.addRows(a.newG, nil)
	return err
}

func (a *distinctBytes) merge(cols []arrow.Array, gids []uint32) error {
	return mergeLists(cols[0], gids, a.update)
}

func (a *distinctBytes) result(mem memory.Allocator, lo, hi int) (arrow.Array, error) {
	return a.count.result(mem, lo, hi)
}

func (a *distinctBytes) state(mem memory.Allocator, lo, hi int) ([]arrow.Array, error) {
	return a.distinctSet.state(mem, a.dt, lo, hi, func(vals []string) arrow.Array { return makeBytes(mem, a.dt, vals, nil) }), nil
}

func (a *distinctBytes) heapBytes() int64 {
	// The log's values are views into the set's keys, counted in heap.
	return a.count.heapBytes() + a.heap + a.distinctSet.heapBytes() + int64(cap(a.kbuf))
}

// distinctLog is a distinct measure's insertion log, kept only when its partial state will be
// asked for (keep): the group and value of each distinct pair, in first-appearance order. The
// first state call sorts it by group (and drops the groups), so it must not grow after that.
type distinctLog[V any] struct {
	keep bool
	g    []uint32
	v    []V
	ord  *groupOrder // built on the first state call
}

// add logs the pairs (gs[i], vs[i]).
func (l *distinctLog[V]) add(gs []uint32, vs []V) {
	if l.keep {
		l.g = append(l.g, gs...)
		l.v = append(l.v, vs...)
	}
}

// add1 logs the pair (g, v).
func (l *distinctLog[V]) add1(g uint32, v V) {
	if l.keep {
		l.g = append(l.g, g)
		l.v = append(l.v, v)
	}
}

// state returns groups lo..hi-1's values as one list<dt> array (a list per group), the values
// built into an array of dt by values. The caller releases it.
func (l *distinctLog[V]) state(mem memory.Allocator, dt arrow.DataType, lo, hi int, values func([]V) arrow.Array) arrow.Array {
	if l.ord == nil {
		l.ord = orderByGroup(l.g)
		sorted := make([]V, len(l.v))
		for i, p := range l.ord.perm {
			sorted[i] = l.v[p]
		}
		l.v, l.g = sorted, nil
	}
	off := l.ord.offsets(lo, hi)
	child := values(l.v[off[0]:off[len(off)-1]])
	defer child.Release()
	return makeList(mem, dt, off, child)
}

// heapBytes estimates the Go heap the log holds.
func (l *distinctLog[V]) heapBytes() int64 {
	return int64(cap(l.g))*4 + int64(cap(l.v))*sizeOf[V]()
}

// groupOrder is a stable counting sort of a distinct log by group: perm lists log positions
// group by group, start[g] is where group g's run begins in perm (start has one entry per
// group, plus the end).
type groupOrder struct {
	perm  []int32
	start []int64
}

// orderByGroup sorts the log positions by group (groups after the last one in logG are
// empty).
func orderByGroup(logG []uint32) *groupOrder {
	n := 0
	for _, g := range logG {
		if int(g)+1 > n {
			n = int(g) + 1
		}
	}
	start := make([]int64, n+1)
	for _, g := range logG {
		start[g+1]++
	}
	for g := 1; g <= n; g++ {
		start[g] += start[g-1]
	}
	next := make([]int64, n)
	copy(next, start[:n])
	perm := make([]int32, len(logG))
	for i, g := range logG {
		perm[next[g]] = int32(i)
		next[g]++
	}
	return &groupOrder{perm: perm, start: start}
}

// offsets returns the list offsets of groups lo..hi-1 into the sorted log (absolute; the first
// is where group lo begins). Groups past the last one with a value are empty.
func (o *groupOrder) offsets(lo, hi int) []int64 {
	end := int64(len(o.perm))
	at := func(g int) int64 {
		if g < len(o.start) {
			return o.start[g]
		}
		return end
	}
	off := make([]int64, hi-lo+1)
	for i := range off {
		off[i] = at(lo + i)
	}
	return off
}

// makeList builds a non-nullable list<elem> array of len(off)-1 lists whose elements are
// child (absolute offsets off, rebased to child's start). The caller releases it.
func makeList(mem memory.Allocator, elem arrow.DataType, off []int64, child arrow.Array) arrow.Array {
	base := off[0]
	rel := make([]int32, len(off))
	for i, o := range off {
		rel[i] = int32(o - base)
	}
	offs := makeFixed(mem, arrow.PrimitiveTypes.Int32, rel, nil)
	defer offs.Release()
	d := array.NewData(arrow.ListOfNonNullable(elem), len(off)-1,
		[]*memory.Buffer{nil, offs.Data().Buffers()[1]}, []arrow.ArrayData{child.Data()}, 0, 0)
	defer d.Release()
	return array.MakeFromData(d)
}

// mergeLists feeds the elements of a list column (a distinct partial state) to update, each
// with its row's group.
func mergeLists(col arrow.Array, gids []uint32, update func(arrow.Array, []uint32, []bool) error) error {
	l, ok := col.(*array.List)
	if !ok {
		return fmt.Errorf("aggregate: distinct state is %s, not a list", col.DataType())
	}
	offs := l.Offsets()
	if len(offs) == 0 || len(gids) == 0 {
		return nil
	}
	first, last := int64(offs[0]), int64(offs[len(gids)])
	eg := make([]uint32, 0, last-first)
	for i, g := range gids {
		if l.IsNull(i) {
			continue
		}
		for range offs[i+1] - offs[i] {
			eg = append(eg, g)
		}
	}
	if int64(len(eg)) != last-first {
		// A null list with elements behind it: aggregate only the non-null lists' elements.
		return mergeListsSlow(l, gids, update)
	}
	vals := array.NewSlice(l.ListValues(), first, last)
	defer vals.Release()
	return update(vals, eg, validMask(vals, nil))
}

func mergeListsSlow(l *array.List, gids []uint32, update func(arrow.Array, []uint32, []bool) error) error {
	offs := l.Offsets()
	for i, g := range gids {
		if l.IsNull(i) || offs[i+1] == offs[i] {
			continue
		}
		vals := array.NewSlice(l.ListValues(), int64(offs[i]), int64(offs[i+1]))
		eg := make([]uint32, vals.Len())
		for j := range eg {
			eg[j] = g
		}
		err := update(vals, eg, validMask(vals, nil))
		vals.Release()
		if err != nil {
			return err
		}
	}
	return nil
}

// distinctDec is count(distinct x) and sum(distinct x) of numerics (decimal128 of one scale,
// so that equal values have equal unscaled integers): the set's keys are the group and the
// value, each value new to its group counted or added to its exact total (decSumAcc, 22003
// past 38 digits). avg(distinct x) of numerics is the binder's quotient of the two.
type distinctDec struct {
	dt    arrow.DataType
	count *countAcc  // count
	sum   *decSumAcc // sum
	distinctSet[distinctDecKey, decimal128.Num]
}

type distinctDecKey struct {
	g uint32
	v decimal128.Num
}

func newDistinctDec(m resolved, keepLog bool) *distinctDec {
	a := &distinctDec{dt: m.argType, distinctSet: newDistinctSet[distinctDecKey, decimal128.Num](keepLog)}
	if m.Func == Count {
		a.count = &countAcc{}
	} else {
		a.sum = &decSumAcc{dt: decSumType(m.argType)}
	}
	return a
}

func (a *distinctDec) grow(n int) {
	if a.count != nil {
		a.count.grow(n)
	} else {
		a.sum.grow(n)
	}
}

func (a *distinctDec) update(arg arrow.Array, gids []uint32, mask []bool) error {
	vals := arg.(*array.Decimal128).Values()
	err := a.distinctSet.update(gids, mask, func(i int, g uint32) (bool, error) {
		if !a.insert(distinctDecKey{g, vals[i]}, g, vals[i]) {
			return false, nil
		}
		if a.sum != nil {
			return true, a.sum.add(g, vals[i])
		}
		return true, nil
	})
	if err != nil {
		return err
	}
	if a.count != nil {
		a.count.addRows(a.newG, nil)
	}
	return nil
}

func (a *distinctDec) merge(cols []arrow.Array, gids []uint32) error {
	return mergeLists(cols[0], gids, a.update)
}

func (a *distinctDec) result(mem memory.Allocator, lo, hi int) (arrow.Array, error) {
	if a.count != nil {
		return a.count.result(mem, lo, hi)
	}
	return a.sum.result(mem, lo, hi)
}

func (a *distinctDec) state(mem memory.Allocator, lo, hi int) ([]arrow.Array, error) {
	return a.distinctSet.state(mem, a.dt, lo, hi, func(vals []decimal128.Num) arrow.Array {
		b := array.NewDecimal128Builder(mem, a.dt.(*arrow.Decimal128Type))
		defer b.Release()
		b.AppendValues(vals, nil)
		return b.NewArray()
	}), nil
}

func (a *distinctDec) heapBytes() int64 {
	inner := int64(0)
	if a.count != nil {
		inner = a.count.heapBytes()
	} else {
		inner = a.sum.heapBytes()
	}
	return inner + int64(len(a.set))*(distinctEntryBytes+16) + a.distinctSet.heapBytes()
}
