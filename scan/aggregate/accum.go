package aggregate

import (
	"bytes"
	"fmt"
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// accumulator holds one measure's state for every group, indexed by dense group id. It is
// called once per batch (never per row), by one goroutine.
type accumulator interface {
	// grow makes groups 0..n-1 exist (new ones empty).
	grow(n int)
	// update aggregates the rows of arg (nil for count(*)) whose mask is true (mask nil: all)
	// into the groups gids (one per row).
	update(arg arrow.Array, gids []uint32, mask []bool) error
	// merge combines partial-state rows (cols: the measure's state columns) into gids.
	merge(cols []arrow.Array, gids []uint32) error
	// result returns the final values of groups lo..hi-1 (one array the caller releases).
	result(mem memory.Allocator, lo, hi int) (arrow.Array, error)
	// state returns the partial states of groups lo..hi-1 (arrays the caller releases).
	state(mem memory.Allocator, lo, hi int) ([]arrow.Array, error)
	// heapBytes estimates the Go heap the state holds.
	heapBytes() int64
}

// valuesAcc is an accumulator that can also be fed typed values directly (used by the
// distinct accumulators with the values they have not seen before).
type valuesAcc[T fixedT] interface {
	accumulator
	addValues(vals []T, gids []uint32, mask []bool)
}

// newAccumulator returns the accumulator of m; partial says whether its partial state will be
// asked for (distinct accumulators then keep their values, not only their set).
func newAccumulator(m resolved, partial bool) accumulator {
	if m.distinct() {
		return newDistinct(m, partial)
	}
	switch m.Func {
	case CountStar, Count:
		return &countAcc{}
	case Sum, Avg:
		return newSum(m.argType, m.Func == Avg)
	}
	return newMinMax(m.argType, m.Func == Max)
}

// countAcc counts rows; its state is the count itself.
type countAcc struct {
	n []int64
}

func (a *countAcc) grow(n int) { a.n = grown(a.n, n) }

func (a *countAcc) addRows(gids []uint32, mask []bool) {
	n := a.n
	if len(n) == 1 { // one group: every gid is 0
		if mask == nil {
			n[0] += int64(len(gids))
			return
		}
		c := int64(0)
		for _, m := range mask[:len(gids)] {
			if m {
				c++
			}
		}
		n[0] += c
		return
	}
	if mask == nil {
		for _, g := range gids {
			n[g]++
		}
		return
	}
	mask = mask[:len(gids)]
	for i, g := range gids {
		if mask[i] {
			n[g]++
		}
	}
}

func (a *countAcc) update(_ arrow.Array, gids []uint32, mask []bool) error {
	a.addRows(gids, mask)
	return nil
}

func (a *countAcc) merge(cols []arrow.Array, gids []uint32) error {
	c, ok := cols[0].(*array.Int64)
	if !ok {
		return fmt.Errorf("aggregate: count state is %s, not int64", cols[0].DataType())
	}
	vals := c.Int64Values()[:len(gids)]
	n := a.n
	for i, g := range gids {
		if c.IsValid(i) {
			n[g] += vals[i]
		}
	}
	return nil
}

func (a *countAcc) result(mem memory.Allocator, lo, hi int) (arrow.Array, error) {
	return makeFixed(mem, arrow.PrimitiveTypes.Int64, a.n[lo:hi], nil), nil
}

func (a *countAcc) state(mem memory.Allocator, lo, hi int) ([]arrow.Array, error) {
	r, err := a.result(mem, lo, hi)
	return []arrow.Array{r}, err
}

func (a *countAcc) heapBytes() int64 { return int64(cap(a.n)) * 8 }

// countValues is count fed with values (count(distinct x)).
type countValues[T fixedT] struct{ countAcc }

func (a *countValues[T]) addValues(_ []T, gids []uint32, mask []bool) { a.addRows(gids, mask) }

func newSum(dt arrow.DataType, avg bool) accumulator {
	switch dt.ID() {
	case arrow.INT8:
		return &sumIntAcc[int8]{avg: avg}
	case arrow.INT16:
		return &sumIntAcc[int16]{avg: avg}
	case arrow.INT32:
		return &sumIntAcc[int32]{avg: avg}
	case arrow.INT64:
		return &sumIntAcc[int64]{avg: avg}
	case arrow.UINT8:
		return &sumIntAcc[uint8]{avg: avg}
	case arrow.UINT16:
		return &sumIntAcc[uint16]{avg: avg}
	case arrow.UINT32:
		return &sumIntAcc[uint32]{avg: avg}
	case arrow.UINT64:
		return &sumIntAcc[uint64]{avg: avg}
	case arrow.FLOAT32:
		return &sumFloatAcc[float32]{avg: avg}
	case arrow.FLOAT64:
		return &sumFloatAcc[float64]{avg: avg}
	}
	panic("aggregate: sum of " + dt.String())
}

// sumIntAcc is sum or avg over integers of physical type T: an exact 128-bit sum and a count
// per group.
type sumIntAcc[T integerT] struct {
	avg     bool
	sum     []int128
	cnt     []int64
	scratch []byte
}

func (a *sumIntAcc[T]) grow(n int) {
	a.sum = grown(a.sum, n)
	a.cnt = grown(a.cnt, n)
}

func (a *sumIntAcc[T]) update(arg arrow.Array, gids []uint32, mask []bool) error {
	a.addValues(physValues[T](arg, &a.scratch), gids, mask)
	return nil
}

func (a *sumIntAcc[T]) addValues(vals []T, gids []uint32, mask []bool) {
	vals = vals[:len(gids)]
	sum, cnt := a.sum, a.cnt
	if len(sum) == 1 { // one group: every gid is 0; sum in registers
		s, n := sum[0], cnt[0]
		signed := isSigned[T]()
		if mask != nil {
			mask = mask[:len(vals)]
		}
		for i, x := range vals {
			if mask != nil && !mask[i] {
				continue
			}
			var c uint64
			if signed {
				v := int64(x)
				s.lo, c = bits.Add64(s.lo, uint64(v), 0)
				s.hi += v>>63 + int64(c)
			} else {
				s.lo, c = bits.Add64(s.lo, uint64(x), 0)
				s.hi += int64(c)
			}
			n++
		}
		sum[0], cnt[0] = s, n
		return
	}
	if isSigned[T]() {
		if mask == nil {
			for i, g := range gids {
				v := int64(vals[i])
				s := &sum[g]
				var c uint64
				s.lo, c = bits.Add64(s.lo, uint64(v), 0)
				s.hi += v>>63 + int64(c)
				cnt[g]++
			}
			return
		}
		mask = mask[:len(gids)]
		for i, g := range gids {
			if !mask[i] {
				continue
			}
			v := int64(vals[i])
			s := &sum[g]
			var c uint64
			s.lo, c = bits.Add64(s.lo, uint64(v), 0)
			s.hi += v>>63 + int64(c)
			cnt[g]++
		}
		return
	}
	if mask == nil {
		for i, g := range gids {
			s := &sum[g]
			var c uint64
			s.lo, c = bits.Add64(s.lo, uint64(vals[i]), 0)
			s.hi += int64(c)
			cnt[g]++
		}
		return
	}
	mask = mask[:len(gids)]
	for i, g := range gids {
		if !mask[i] {
			continue
		}
		s := &sum[g]
		var c uint64
		s.lo, c = bits.Add64(s.lo, uint64(vals[i]), 0)
		s.hi += int64(c)
		cnt[g]++
	}
}

func (a *sumIntAcc[T]) merge(cols []arrow.Array, gids []uint32) error {
	d, ok := cols[0].(*array.Decimal128)
	if !ok {
		return fmt.Errorf("aggregate: sum state is %s, not decimal128", cols[0].DataType())
	}
	nums := d.Values()[:len(gids)]
	var counts []int64
	if a.avg {
		c, ok := cols[1].(*array.Int64)
		if !ok {
			return fmt.Errorf("aggregate: avg count state is %s, not int64", cols[1].DataType())
		}
		counts = c.Int64Values()
	}
	for i, g := range gids {
		if d.IsNull(i) {
			continue
		}
		s := &a.sum[g]
		x := nums[i]
		lo, c := bits.Add64(s.lo, x.LowBits(), 0)
		hi := s.hi + x.HighBits() + int64(c)
		// Signed 128-bit overflow: both operands have one sign and the result the other.
		if (s.hi < 0) == (x.HighBits() < 0) && (hi < 0) != (s.hi < 0) {
			return fmt.Errorf("aggregate: sum overflows 128 bits")
		}
		s.lo, s.hi = lo, hi
		if a.avg {
			a.cnt[g] += counts[i]
		} else {
			a.cnt[g]++
		}
	}
	return nil
}

func (a *sumIntAcc[T]) result(mem memory.Allocator, lo, hi int) (arrow.Array, error) {
	valid := make([]bool, hi-lo)
	if a.avg {
		out := make([]float64, hi-lo)
		for i := range out {
			if c := a.cnt[lo+i]; c > 0 {
				valid[i] = true
				out[i] = a.sum[lo+i].float64() / float64(c)
			}
		}
		return makeFixed(mem, arrow.PrimitiveTypes.Float64, out, valid), nil
	}
	out := make([]int64, hi-lo)
	for i := range out {
		if a.cnt[lo+i] == 0 {
			continue
		}
		v, ok := a.sum[lo+i].int64()
		if !ok {
			return nil, ErrSumOverflow
		}
		out[i], valid[i] = v, true
	}
	return makeFixed(mem, arrow.PrimitiveTypes.Int64, out, valid), nil
}

func (a *sumIntAcc[T]) state(mem memory.Allocator, lo, hi int) ([]arrow.Array, error) {
	b := array.NewDecimal128Builder(mem, &arrow.Decimal128Type{Precision: 38, Scale: 0})
	defer b.Release()
	b.Reserve(hi - lo)
	for g := lo; g < hi; g++ {
		if a.cnt[g] == 0 {
			b.AppendNull()
			continue
		}
		b.Append(decimal128.New(a.sum[g].hi, a.sum[g].lo))
	}
	out := []arrow.Array{b.NewArray()}
	if a.avg {
		out = append(out, makeFixed(mem, arrow.PrimitiveTypes.Int64, a.cnt[lo:hi], nil))
	}
	return out, nil
}

func (a *sumIntAcc[T]) heapBytes() int64 {
	return int64(cap(a.sum))*16 + int64(cap(a.cnt))*8 + int64(cap(a.scratch))
}

// sumFloatAcc is sum or avg over floats of physical type T: a float64 sum and a count per
// group.
type sumFloatAcc[T floatT] struct {
	avg bool
	sum []float64
	cnt []int64
}

func (a *sumFloatAcc[T]) grow(n int) {
	a.sum = grown(a.sum, n)
	a.cnt = grown(a.cnt, n)
}

func (a *sumFloatAcc[T]) update(arg arrow.Array, gids []uint32, mask []bool) error {
	a.addValues(physValues[T](arg, nil), gids, mask)
	return nil
}

func (a *sumFloatAcc[T]) addValues(vals []T, gids []uint32, mask []bool) {
	vals = vals[:len(gids)]
	sum, cnt := a.sum, a.cnt
	if len(sum) == 1 { // one group: every gid is 0; sum in registers
		s, n := sum[0], cnt[0]
		if mask != nil {
			mask = mask[:len(vals)]
		}
		for i, x := range vals {
			if mask == nil || mask[i] {
				s += float64(x)
				n++
			}
		}
		sum[0], cnt[0] = s, n
		return
	}
	if mask == nil {
		for i, g := range gids {
			sum[g] += float64(vals[i])
			cnt[g]++
		}
		return
	}
	mask = mask[:len(gids)]
	for i, g := range gids {
		if mask[i] {
			sum[g] += float64(vals[i])
			cnt[g]++
		}
	}
}

func (a *sumFloatAcc[T]) merge(cols []arrow.Array, gids []uint32) error {
	f, ok := cols[0].(*array.Float64)
	if !ok {
		return fmt.Errorf("aggregate: sum state is %s, not float64", cols[0].DataType())
	}
	vals := f.Float64Values()[:len(gids)]
	var counts []int64
	if a.avg {
		c, ok := cols[1].(*array.Int64)
		if !ok {
			return fmt.Errorf("aggregate: avg count state is %s, not int64", cols[1].DataType())
		}
		counts = c.Int64Values()
	}
	for i, g := range gids {
		if f.IsNull(i) {
			continue
		}
		a.sum[g] += vals[i]
		if a.avg {
			a.cnt[g] += counts[i]
		} else {
			a.cnt[g]++
		}
	}
	return nil
}

func (a *sumFloatAcc[T]) result(mem memory.Allocator, lo, hi int) (arrow.Array, error) {
	valid := make([]bool, hi-lo)
	out := make([]float64, hi-lo)
	for i := range out {
		if c := a.cnt[lo+i]; c > 0 {
			valid[i] = true
			out[i] = a.sum[lo+i]
			if a.avg {
				out[i] /= float64(c)
			}
		}
	}
	return makeFixed(mem, arrow.PrimitiveTypes.Float64, out, valid), nil
}

func (a *sumFloatAcc[T]) state(mem memory.Allocator, lo, hi int) ([]arrow.Array, error) {
	valid := make([]bool, hi-lo)
	for i := range valid {
		valid[i] = a.cnt[lo+i] > 0
	}
	out := []arrow.Array{makeFixed(mem, arrow.PrimitiveTypes.Float64, a.sum[lo:hi], valid)}
	if a.avg {
		out = append(out, makeFixed(mem, arrow.PrimitiveTypes.Int64, a.cnt[lo:hi], nil))
	}
	return out, nil
}

func (a *sumFloatAcc[T]) heapBytes() int64 { return int64(cap(a.sum))*8 + int64(cap(a.cnt))*8 }

func newMinMax(dt arrow.DataType, isMax bool) accumulator {
	switch dt.ID() {
	case arrow.INT8:
		return &minMaxAcc[int8]{max: isMax, dt: dt}
	case arrow.INT16:
		return &minMaxAcc[int16]{max: isMax, dt: dt}
	case arrow.INT32, arrow.DATE32:
		return &minMaxAcc[int32]{max: isMax, dt: dt}
	case arrow.INT64, arrow.TIMESTAMP:
		return &minMaxAcc[int64]{max: isMax, dt: dt}
	case arrow.UINT8, arrow.BOOL:
		return &minMaxAcc[uint8]{max: isMax, dt: dt}
	case arrow.UINT16:
		return &minMaxAcc[uint16]{max: isMax, dt: dt}
	case arrow.UINT32:
		return &minMaxAcc[uint32]{max: isMax, dt: dt}
	case arrow.UINT64:
		return &minMaxAcc[uint64]{max: isMax, dt: dt}
	case arrow.FLOAT32:
		return &minMaxFloat[float32]{max: isMax, dt: dt}
	case arrow.FLOAT64:
		return &minMaxFloat[float64]{max: isMax, dt: dt}
	case arrow.STRING, arrow.LARGE_STRING, arrow.BINARY, arrow.LARGE_BINARY:
		return &minMaxBytes{max: isMax, dt: dt}
	}
	panic("aggregate: min/max of " + dt.String())
}

// minMaxAcc is min or max over integers (and timestamps, dates, booleans) of physical type T;
// its state is the value itself, of the input type dt.
type minMaxAcc[T integerT] struct {
	max     bool
	dt      arrow.DataType
	vals    []T
	has     []bool
	scratch []byte
	mask    []bool
}

func (a *minMaxAcc[T]) grow(n int) {
	a.vals = grown(a.vals, n)
	a.has = grown(a.has, n)
}

func (a *minMaxAcc[T]) update(arg arrow.Array, gids []uint32, mask []bool) error {
	vals := physValues[T](arg, &a.scratch)[:len(gids)]
	cur, has := a.vals, a.has
	if len(cur) == 1 { // one group: every gid is 0; extreme in registers
		c, h := cur[0], has[0]
		if mask != nil {
			mask = mask[:len(vals)]
		}
		if a.max {
			for i, v := range vals {
				if (mask == nil || mask[i]) && (!h || v > c) {
					c, h = v, true
				}
			}
		} else {
			for i, v := range vals {
				if (mask == nil || mask[i]) && (!h || v < c) {
					c, h = v, true
				}
			}
		}
		cur[0], has[0] = c, h
		return nil
	}
	switch {
	case a.max && mask == nil:
		for i, g := range gids {
			if v := vals[i]; !has[g] || v > cur[g] {
				cur[g], has[g] = v, true
			}
		}
	case a.max:
		mask = mask[:len(gids)]
		for i, g := range gids {
			if v := vals[i]; mask[i] && (!has[g] || v > cur[g]) {
				cur[g], has[g] = v, true
			}
		}
	case mask == nil:
		for i, g := range gids {
			if v := vals[i]; !has[g] || v < cur[g] {
				cur[g], has[g] = v, true
			}
		}
	default:
		mask = mask[:len(gids)]
		for i, g := range gids {
			if v := vals[i]; mask[i] && (!has[g] || v < cur[g]) {
				cur[g], has[g] = v, true
			}
		}
	}
	return nil
}

func (a *minMaxAcc[T]) merge(cols []arrow.Array, gids []uint32) error {
	a.mask = validMask(cols[0], a.mask)
	return a.update(cols[0], gids, a.mask)
}

func (a *minMaxAcc[T]) result(mem memory.Allocator, lo, hi int) (arrow.Array, error) {
	return makeFixed(mem, a.dt, a.vals[lo:hi], a.has[lo:hi]), nil
}

func (a *minMaxAcc[T]) state(mem memory.Allocator, lo, hi int) ([]arrow.Array, error) {
	r, err := a.result(mem, lo, hi)
	return []arrow.Array{r}, err
}

func (a *minMaxAcc[T]) heapBytes() int64 {
	return int64(cap(a.vals))*sizeOf[T]() + int64(cap(a.has)) + int64(cap(a.scratch)) + int64(cap(a.mask))
}

// minMaxFloat is min or max over floats: NaN is greater than every other value (PostgreSQL's
// order), so max is NaN when any value is and min only when all are.
type minMaxFloat[T floatT] struct {
	max  bool
	dt   arrow.DataType
	vals []T
	has  []bool
	mask []bool
}

func (a *minMaxFloat[T]) grow(n int) {
	a.vals = grown(a.vals, n)
	a.has = grown(a.has, n)
}

func (a *minMaxFloat[T]) update(arg arrow.Array, gids []uint32, mask []bool) error {
	vals := physValues[T](arg, nil)[:len(gids)]
	cur, has := a.vals, a.has
	if mask != nil {
		mask = mask[:len(gids)]
	}
	if len(cur) == 1 { // one group: every gid is 0; extreme in registers
		c, h := cur[0], has[0]
		if a.max {
			for i, v := range vals {
				if (mask == nil || mask[i]) && (!h || (v != v && c == c) || v > c) {
					c, h = v, true
				}
			}
		} else {
			for i, v := range vals {
				if (mask == nil || mask[i]) && (!h || (c != c && v == v) || v < c) {
					c, h = v, true
				}
			}
		}
		cur[0], has[0] = c, h
		return nil
	}
	if a.max {
		for i, g := range gids {
			if mask != nil && !mask[i] {
				continue
			}
			// v > c in NaN-greatest order: v is NaN and c is not, or both are numbers and v > c.
			if v, c := vals[i], cur[g]; !has[g] || (v != v && c == c) || v > c {
				cur[g], has[g] = v, true
			}
		}
		return nil
	}
	for i, g := range gids {
		if mask != nil && !mask[i] {
			continue
		}
		// v < c in NaN-greatest order: c is NaN and v is not, or both are numbers and v < c.
		if v, c := vals[i], cur[g]; !has[g] || (c != c && v == v) || v < c {
			cur[g], has[g] = v, true
		}
	}
	return nil
}

func (a *minMaxFloat[T]) merge(cols []arrow.Array, gids []uint32) error {
	a.mask = validMask(cols[0], a.mask)
	return a.update(cols[0], gids, a.mask)
}

func (a *minMaxFloat[T]) result(mem memory.Allocator, lo, hi int) (arrow.Array, error) {
	return makeFixed(mem, a.dt, a.vals[lo:hi], a.has[lo:hi]), nil
}

func (a *minMaxFloat[T]) state(mem memory.Allocator, lo, hi int) ([]arrow.Array, error) {
	r, err := a.result(mem, lo, hi)
	return []arrow.Array{r}, err
}

func (a *minMaxFloat[T]) heapBytes() int64 {
	return int64(cap(a.vals))*sizeOf[T]() + int64(cap(a.has)) + int64(cap(a.mask))
}

// minMaxBytes is min or max over text or binary in bytewise order; each group's value is a
// copy owned by the accumulator.
type minMaxBytes struct {
	max   bool
	dt    arrow.DataType
	vals  [][]byte
	has   []bool
	bytes int64 // capacity of the copies
	mask  []bool
}

func (a *minMaxBytes) grow(n int) {
	a.vals = grown(a.vals, n)
	a.has = grown(a.has, n)
}

func (a *minMaxBytes) update(arg arrow.Array, gids []uint32, mask []bool) error {
	col := bytesView(arg)
	want := -1
	if a.max {
		want = 1
	}
	for i, g := range gids {
		if mask != nil && !mask[i] {
			continue
		}
		v := col.value(i)
		if a.has[g] && bytes.Compare(v, a.vals[g])*want <= 0 {
			continue
		}
		old := cap(a.vals[g])
		a.vals[g] = append(a.vals[g][:0], v...)
		a.has[g] = true
		a.bytes += int64(cap(a.vals[g]) - old)
	}
	return nil
}

func (a *minMaxBytes) merge(cols []arrow.Array, gids []uint32) error {
	a.mask = validMask(cols[0], a.mask)
	return a.update(cols[0], gids, a.mask)
}

func (a *minMaxBytes) result(mem memory.Allocator, lo, hi int) (arrow.Array, error) {
	return makeBytes(mem, a.dt, a.vals[lo:hi], a.has[lo:hi]), nil
}

func (a *minMaxBytes) state(mem memory.Allocator, lo, hi int) ([]arrow.Array, error) {
	r, err := a.result(mem, lo, hi)
	return []arrow.Array{r}, err
}

func (a *minMaxBytes) heapBytes() int64 {
	return int64(cap(a.vals))*24 + int64(cap(a.has)) + a.bytes + int64(cap(a.mask))
}
