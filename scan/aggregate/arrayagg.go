package aggregate

import (
	"bytes"
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flightsrv/flightsrv/scan/ops"
)

// SortKey is one ORDER BY key of string_agg(x, s ORDER BY k …) or array_agg(x ORDER BY k …):
// input column Arg (text, integer, bigint, double precision, boolean, date, timestamp or
// numeric: storeType), descending or not, NULLs first or last (PostgreSQL's default: last
// ascending, first descending; the binder says which).
type SortKey struct {
	Arg        int
	Descending bool
	NullsFirst bool
}

// arrayAggType reports an element type ArrayAgg takes.
func arrayAggType(dt arrow.DataType) bool {
	switch dt.ID() {
	case arrow.STRING, arrow.INT32, arrow.INT64, arrow.FLOAT64, arrow.BOOL:
		return true
	}
	return false
}

// storeType reports a type the ordered store keeps and compares (values and sort keys).
func storeType(dt arrow.DataType) bool {
	switch dt.ID() {
	case arrow.STRING, arrow.INT32, arrow.INT64, arrow.FLOAT64, arrow.BOOL, arrow.DATE32, arrow.TIMESTAMP, arrow.DECIMAL128:
		return true
	}
	return false
}

// arrayAggAcc is array_agg(x), string_agg(x, Separator) with sort keys, and mode() of types
// other than bigint and double precision (sorted by the value, Descending or not): each group's
// values (array_agg: NULLs included) in the order they came (the fragments' order), or sorted
// as PostgreSQL's ORDER BY orders them: by the value (Sorted: ascending, NULLs last, or
// Descending, NULLs first) or by the Keys, stably; Distinct (array_agg) sorts by the value and
// keeps each value once (one NULL). NULL for a group without values. The values and keys are
// copied into one store (builders, frozen when the first result or state is asked for); each
// group keeps the store's positions of its values. The partial state is the list of the
// group's values, then one list of each key's values.
type arrayAggAcc struct {
	m      resolved
	b      array.Builder
	kb     []array.Builder
	frozen arrow.Array
	fkeys  []arrow.Array
	groups [][]int32
	n      int32
	heap   int64
}

func newArrayAgg(m resolved) *arrayAggAcc {
	a := &arrayAggAcc{m: m, b: array.NewBuilder(memory.NewGoAllocator(), m.argType)}
	for _, t := range m.keyTypes {
		a.kb = append(a.kb, array.NewBuilder(memory.NewGoAllocator(), t))
	}
	return a
}

func (a *arrayAggAcc) grow(n int) { a.groups = grown(a.groups, n) }

// appendAt appends v's value at i (or NULL) to b, a builder of v's type; it returns the bytes
// of text it copied.
func appendAt(b array.Builder, v arrow.Array, i int) (int64, error) {
	if v.IsNull(i) {
		b.AppendNull()
		return 0, nil
	}
	switch x := v.(type) {
	case *array.String:
		s := x.Value(i)
		b.(*array.StringBuilder).Append(s)
		return int64(len(s)), nil
	case *array.Int32:
		b.(*array.Int32Builder).Append(x.Value(i))
	case *array.Int64:
		b.(*array.Int64Builder).Append(x.Value(i))
	case *array.Float64:
		b.(*array.Float64Builder).Append(x.Value(i))
	case *array.Boolean:
		b.(*array.BooleanBuilder).Append(x.Value(i))
	case *array.Date32:
		b.(*array.Date32Builder).Append(x.Value(i))
	case *array.Timestamp:
		b.(*array.TimestampBuilder).Append(x.Value(i))
	case *array.Decimal128:
		b.(*array.Decimal128Builder).Append(x.Value(i))
	default:
		return 0, fmt.Errorf("aggregate: ordered values of %s", v.DataType())
	}
	return 0, nil
}

func (a *arrayAggAcc) update(arg arrow.Array, gids []uint32, mask []bool) error {
	return a.updateKeyed(arg, nil, gids, mask)
}

// updateKeyed is update with the rows' sort keys (one array per Keys entry).
func (a *arrayAggAcc) updateKeyed(arg arrow.Array, keys []arrow.Array, gids []uint32, mask []bool) error {
	if len(keys) != len(a.kb) {
		return fmt.Errorf("aggregate: %s: %d sort keys, want %d", a.m.Func, len(keys), len(a.kb))
	}
	for i, g := range gids {
		if mask != nil && !mask[i] {
			continue
		}
		if err := a.add(arg, keys, i, g); err != nil {
			return err
		}
	}
	return nil
}

// add appends row i of vals and keys to the store, as group g's.
func (a *arrayAggAcc) add(vals arrow.Array, keys []arrow.Array, i int, g uint32) error {
	if a.frozen != nil {
		return fmt.Errorf("aggregate: %s updated after its result", a.m.Func)
	}
	n, err := appendAt(a.b, vals, i)
	if err != nil {
		return err
	}
	a.heap += n
	for k, kv := range keys {
		n, err := appendAt(a.kb[k], kv, i)
		if err != nil {
			return err
		}
		a.heap += n + 8
	}
	if a.n == math.MaxInt32 {
		return fmt.Errorf("aggregate: %s of more than %d values", a.m.Func, math.MaxInt32)
	}
	a.groups[g] = append(a.groups[g], a.n)
	a.n++
	a.heap += 12
	return nil
}

// merge adds the state's lists: every element, NULLs included (mergeLists masks them out for
// the other aggregates); the key lists have the value list's offsets.
func (a *arrayAggAcc) merge(cols []arrow.Array, gids []uint32) error {
	if len(cols) != 1+len(a.kb) {
		return fmt.Errorf("aggregate: %s state of %d columns, want %d", a.m.Func, len(cols), 1+len(a.kb))
	}
	lists := make([]*array.List, len(cols))
	for c, col := range cols {
		l, ok := col.(*array.List)
		if !ok {
			return fmt.Errorf("aggregate: %s state is %s, not a list", a.m.Func, col.DataType())
		}
		lists[c] = l
	}
	vals := lists[0].ListValues()
	keys := make([]arrow.Array, len(a.kb))
	for k := range keys {
		keys[k] = lists[1+k].ListValues()
	}
	offs := lists[0].Offsets()
	for i, g := range gids {
		if lists[0].IsNull(i) {
			continue
		}
		for j := offs[i]; j < offs[i+1]; j++ {
			if err := a.add(vals, keys, int(j), g); err != nil {
				return err
			}
		}
	}
	return nil
}

// compareAt orders positions i and j of v, NULLs last (the caller flips for NULLS FIRST and
// DESC): text bytewise (the "C" collation), NaN above every other double, false below true.
func compareAt(v arrow.Array, i, j int) int {
	in, jn := v.IsNull(i), v.IsNull(j)
	switch {
	case in && jn:
		return 0
	case in:
		return 1
	case jn:
		return -1
	}
	switch x := v.(type) {
	case *array.String:
		return strings.Compare(x.Value(i), x.Value(j))
	case *array.Int32:
		return cmp.Compare(x.Value(i), x.Value(j))
	case *array.Int64:
		return cmp.Compare(x.Value(i), x.Value(j))
	case *array.Float64:
		return ops.CompareFloat(x.Value(i), x.Value(j))
	case *array.Boolean:
		bi, bj := x.Value(i), x.Value(j)
		switch {
		case bi == bj:
			return 0
		case bj:
			return -1
		}
		return 1
	case *array.Date32:
		return cmp.Compare(x.Value(i), x.Value(j))
	case *array.Timestamp:
		return cmp.Compare(x.Value(i), x.Value(j))
	case *array.Decimal128:
		// One column: one scale.
		return x.Value(i).Cmp(x.Value(j))
	}
	return 0
}

// sortCompare orders store positions i and j by one key: v's values, descending or not,
// NULLs first or not.
func sortCompare(v arrow.Array, i, j int32, desc, nullsFirst bool) int {
	in, jn := v.IsNull(int(i)), v.IsNull(int(j))
	if in != jn {
		if in == nullsFirst {
			return -1
		}
		return 1
	}
	c := compareAt(v, int(i), int(j))
	if desc {
		return -c
	}
	return c
}

// compare orders positions i and j of the frozen store as the measure's ORDER BY does.
func (a *arrayAggAcc) compare(i, j int32) int {
	if len(a.fkeys) == 0 {
		// By the value: ascending NULLs last, or descending NULLs first.
		return sortCompare(a.frozen, i, j, a.m.Descending, a.m.Descending)
	}
	for k, key := range a.m.Keys {
		if c := sortCompare(a.fkeys[k], i, j, key.Descending, key.NullsFirst); c != 0 {
			return c
		}
	}
	return 0
}

// freeze makes the store's arrays, once.
func (a *arrayAggAcc) freeze() {
	if a.frozen != nil {
		return
	}
	a.frozen = a.b.NewArray()
	for _, b := range a.kb {
		a.fkeys = append(a.fkeys, b.NewArray())
	}
}

// ordered returns group g's store positions in the measure's order (Distinct: each value once).
func (a *arrayAggAcc) ordered(g int) []int32 {
	idx := a.groups[g]
	if a.m.Sorted || a.m.Distinct || len(a.fkeys) > 0 || a.m.Func == ModeOf || a.m.Func == PercentileDisc {
		slices.SortStableFunc(idx, a.compare)
	}
	if a.m.Distinct {
		idx = slices.CompactFunc(idx, func(i, j int32) bool { return sortCompare(a.frozen, i, j, false, false) == 0 })
		a.groups[g] = idx
	}
	return idx
}

func (a *arrayAggAcc) result(mem memory.Allocator, lo, hi int) (arrow.Array, error) {
	a.freeze()
	switch a.m.Func {
	case StringAgg:
		return a.joined(mem, lo, hi)
	case ModeOf:
		return a.mode(mem, lo, hi)
	case PercentileDisc:
		return a.disc(mem, lo, hi)
	}
	lb := array.NewListBuilder(mem, a.m.argType)
	defer lb.Release()
	vb := lb.ValueBuilder()
	for g := lo; g < hi; g++ {
		idx := a.ordered(g)
		if len(idx) == 0 {
			lb.AppendNull()
			continue
		}
		lb.Append(true)
		for _, k := range idx {
			if _, err := appendAt(vb, a.frozen, int(k)); err != nil {
				return nil, err
			}
		}
	}
	return lb.NewArray(), nil
}

// mode is mode()'s result: each group's most frequent value, the first in the ordering
// among equally frequent ones (PostgreSQL's mode_final), NULL without values.
func (a *arrayAggAcc) mode(mem memory.Allocator, lo, hi int) (arrow.Array, error) {
	return a.pickEach(mem, lo, hi, func(idx []int32) (int32, error) {
		best, bestN, run := idx[0], 0, 0
		for n, k := range idx {
			if n > 0 && compareAt(a.frozen, int(k), int(idx[n-1])) == 0 {
				run++
			} else {
				run = 1
			}
			if run > bestN {
				best, bestN = k, run
			}
		}
		return best, nil
	})
}

// disc is percentile_disc(f)'s result over the store (text, booleans, dates, timestamps,
// numerics): each group's first value whose position in the ordering reaches fraction f, the
// ceil(f·n)-th and at least the first (PostgreSQL's percentile_disc_final), NULL without
// values; f outside [0, 1] is its 22003 where a group has values.
func (a *arrayAggAcc) disc(mem memory.Allocator, lo, hi int) (arrow.Array, error) {
	return a.pickEach(mem, lo, hi, func(idx []int32) (int32, error) {
		if err := checkFraction(a.m.Fraction); err != nil {
			return 0, err
		}
		return idx[max(int(math.Ceil(a.m.Fraction*float64(len(idx)))), 1)-1], nil
	})
}

// pickEach answers, for each group lo … hi-1, the store's value at the position pick chooses
// among the group's positions in the measure's order (not empty), NULL for a group without
// values.
func (a *arrayAggAcc) pickEach(mem memory.Allocator, lo, hi int, pick func(idx []int32) (int32, error)) (arrow.Array, error) {
	b := array.NewBuilder(mem, a.m.argType)
	defer b.Release()
	for g := lo; g < hi; g++ {
		idx := a.ordered(g)
		if len(idx) == 0 {
			b.AppendNull()
			continue
		}
		k, err := pick(idx)
		if err != nil {
			return nil, err
		}
		if _, err := appendAt(b, a.frozen, int(k)); err != nil {
			return nil, err
		}
	}
	return b.NewArray(), nil
}

// joined is string_agg's result: each group's values joined with the separator.
func (a *arrayAggAcc) joined(mem memory.Allocator, lo, hi int) (arrow.Array, error) {
	b := array.NewStringBuilder(mem)
	defer b.Release()
	vals := a.frozen.(*array.String)
	var sb bytes.Buffer
	for g := lo; g < hi; g++ {
		idx := a.ordered(g)
		if len(idx) == 0 {
			b.AppendNull()
			continue
		}
		sb.Reset()
		for n, k := range idx {
			if n > 0 {
				sb.WriteString(a.m.Separator)
			}
			sb.WriteString(vals.Value(int(k)))
			if sb.Len() > 1<<30 {
				return nil, &ops.DataError{Code: "54000", Msg: "out of memory: string_agg result exceeds 1 GB"}
			}
		}
		b.Append(sb.String())
	}
	return b.NewArray(), nil
}

func (a *arrayAggAcc) state(mem memory.Allocator, lo, hi int) ([]arrow.Array, error) {
	a.freeze()
	out := make([]arrow.Array, 0, 1+len(a.fkeys))
	for _, src := range append([]arrow.Array{a.frozen}, a.fkeys...) {
		lb := array.NewListBuilder(mem, src.DataType())
		vb := lb.ValueBuilder()
		for g := lo; g < hi; g++ {
			lb.Append(true)
			for _, k := range a.groups[g] {
				if _, err := appendAt(vb, src, int(k)); err != nil {
					lb.Release()
					return nil, err
				}
			}
		}
		out = append(out, lb.NewArray())
		lb.Release()
	}
	return out, nil
}

func (a *arrayAggAcc) heapBytes() int64 { return a.heap + int64(cap(a.groups))*24 }
