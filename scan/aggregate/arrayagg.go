package aggregate

import (
	"bytes"
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flightsrv/flightsrv/scan/ops"
)

// arrayAggType reports an element type ArrayAgg takes.
func arrayAggType(dt arrow.DataType) bool {
	switch dt.ID() {
	case arrow.STRING, arrow.INT32, arrow.INT64, arrow.FLOAT64, arrow.BOOL:
		return true
	}
	return false
}

// arrayAggAcc is array_agg(x): each group's values, NULLs included, in the order they came
// (the fragments' order) or, Sorted, ascending (NULLs last) or Descending (NULLs first), as
// PostgreSQL's ORDER BY x [DESC] orders them; NULL for a group without rows. The values are
// copied into one store (a builder of x's type, frozen when the first result or state is
// asked for); each group keeps the store's positions of its values. The partial state is the
// list of the group's values, as the result.
type arrayAggAcc struct {
	m      resolved
	b      array.Builder
	frozen arrow.Array
	groups [][]int32
	n      int32
	heap   int64
}

func newArrayAgg(m resolved) *arrayAggAcc {
	return &arrayAggAcc{m: m, b: array.NewBuilder(memory.NewGoAllocator(), m.argType)}
}

func (a *arrayAggAcc) grow(n int) { a.groups = grown(a.groups, n) }

func (a *arrayAggAcc) update(arg arrow.Array, gids []uint32, mask []bool) error {
	if a.frozen != nil {
		return fmt.Errorf("aggregate: array_agg updated after its result")
	}
	for i, g := range gids {
		if mask != nil && !mask[i] {
			continue
		}
		if arg.IsNull(i) {
			a.b.AppendNull()
		} else {
			switch v := arg.(type) {
			case *array.String:
				s := v.Value(i)
				a.b.(*array.StringBuilder).Append(s)
				a.heap += int64(len(s))
			case *array.Int32:
				a.b.(*array.Int32Builder).Append(v.Value(i))
			case *array.Int64:
				a.b.(*array.Int64Builder).Append(v.Value(i))
			case *array.Float64:
				a.b.(*array.Float64Builder).Append(v.Value(i))
			case *array.Boolean:
				a.b.(*array.BooleanBuilder).Append(v.Value(i))
			default:
				return fmt.Errorf("aggregate: array_agg of %s", arg.DataType())
			}
		}
		if a.n == math.MaxInt32 {
			return fmt.Errorf("aggregate: array_agg of more than %d values", math.MaxInt32)
		}
		a.groups[g] = append(a.groups[g], a.n)
		a.n++
		a.heap += 12
	}
	return nil
}

func (a *arrayAggAcc) merge(cols []arrow.Array, gids []uint32) error {
	// Every element, NULLs included (mergeLists masks them out for the other aggregates).
	return mergeLists(cols[0], gids, func(arg arrow.Array, gids []uint32, _ []bool) error { return a.update(arg, gids, nil) })
}

// compare orders positions i and j of the frozen store: ascending, NULLs last (Sorted), or
// the reverse (Descending: NULLs first), as PostgreSQL orders them; text bytewise (the "C"
// collation), NaN above every other double, false below true.
func (a *arrayAggAcc) compare(i, j int32) int {
	v := a.frozen
	in, jn := v.IsNull(int(i)), v.IsNull(int(j))
	var c int
	switch {
	case in && jn:
		c = 0
	case in:
		c = 1
	case jn:
		c = -1
	default:
		switch x := v.(type) {
		case *array.String:
			c = bytes.Compare([]byte(x.Value(int(i))), []byte(x.Value(int(j))))
		case *array.Int32:
			c = cmp.Compare(x.Value(int(i)), x.Value(int(j)))
		case *array.Int64:
			c = cmp.Compare(x.Value(int(i)), x.Value(int(j)))
		case *array.Float64:
			c = ops.CompareFloat(x.Value(int(i)), x.Value(int(j)))
		case *array.Boolean:
			bi, bj := x.Value(int(i)), x.Value(int(j))
			switch {
			case bi == bj:
			case bj:
				c = -1
			default:
				c = 1
			}
		}
	}
	if a.m.Descending {
		return -c
	}
	return c
}

func (a *arrayAggAcc) result(mem memory.Allocator, lo, hi int) (arrow.Array, error) {
	if a.frozen == nil {
		a.frozen = a.b.NewArray()
	}
	lb := array.NewListBuilder(mem, a.m.argType)
	defer lb.Release()
	vb := lb.ValueBuilder()
	for g := lo; g < hi; g++ {
		idx := a.groups[g]
		if len(idx) == 0 {
			lb.AppendNull()
			continue
		}
		if a.m.Sorted {
			slices.SortStableFunc(idx, a.compare)
		}
		lb.Append(true)
		for _, k := range idx {
			if a.frozen.IsNull(int(k)) {
				vb.AppendNull()
				continue
			}
			switch x := a.frozen.(type) {
			case *array.String:
				vb.(*array.StringBuilder).Append(x.Value(int(k)))
			case *array.Int32:
				vb.(*array.Int32Builder).Append(x.Value(int(k)))
			case *array.Int64:
				vb.(*array.Int64Builder).Append(x.Value(int(k)))
			case *array.Float64:
				vb.(*array.Float64Builder).Append(x.Value(int(k)))
			case *array.Boolean:
				vb.(*array.BooleanBuilder).Append(x.Value(int(k)))
			}
		}
	}
	return lb.NewArray(), nil
}

func (a *arrayAggAcc) state(mem memory.Allocator, lo, hi int) ([]arrow.Array, error) {
	r, err := a.result(mem, lo, hi)
	return []arrow.Array{r}, err
}

func (a *arrayAggAcc) heapBytes() int64 { return a.heap + int64(cap(a.groups))*24 }
