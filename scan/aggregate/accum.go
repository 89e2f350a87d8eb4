package aggregate

import (
	"bytes"
	"fmt"
	"math"
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flightsrv/flightsrv/scan/ops"
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
	addValues(vals []T, gids []uint32, mask []bool) error
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
		if m.argType.ID() == arrow.DECIMAL128 { // validate admits sum only
			return &decSumAcc{dt: decSumType(m.argType)}
		}
		if m.floatAccum() {
			return newVarAcc(m)
		}
		a := newSum(m.argType, m.Func == Avg)
		if m.Numeric && m.argKind != kFloat && m.Func == Sum {
			return &numericSum{a}
		}
		if m.Numeric && m.argKind != kFloat {
			return &numericAvg{a}
		}
		return a
	case VarSamp, VarPop, StddevSamp, StddevPop:
		return newVarAcc(m)
	case BoolAnd, BoolOr:
		return &boolAcc{or: m.Func == BoolOr}
	case Corr, CovarPop, CovarSamp, RegrAvgX, RegrAvgY, RegrCount, RegrIntercept, RegrR2, RegrSlope, RegrSxx, RegrSxy, RegrSyy:
		return &regrAcc{fn: m.Func}
	case StringAgg, ArrayAgg, ModeOf, PercentileDisc:
		if m.stored() {
			return newArrayAgg(m)
		}
		if m.Func == StringAgg {
			return &stringAggAcc{m: m}
		}
	}
	switch m.Func {
	case BitAnd, BitOr, BitXor:
		return newBitFold(m.argType, m.Func)
	case PercentileCont, PercentileDisc, ModeOf:
		a, err := newOrdered(m)
		if err != nil {
			panic(err) // validate admits only the types newOrdered takes
		}
		return a
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

func (a *countValues[T]) addValues(_ []T, gids []uint32, mask []bool) error {
	a.addRows(gids, mask)
	return nil
}

func newSum(dt arrow.DataType, avg bool) accumulator {
	switch dt.ID() {
	case arrow.INT8:
		return &sumAcc[int8]{avg: avg, sums: &intSums[int8]{}}
	case arrow.INT16:
		return &sumAcc[int16]{avg: avg, sums: &intSums[int16]{}}
	case arrow.INT32:
		return &sumAcc[int32]{avg: avg, sums: &intSums[int32]{}}
	case arrow.INT64:
		return &sumAcc[int64]{avg: avg, sums: &intSums[int64]{}}
	case arrow.UINT8:
		return &sumAcc[uint8]{avg: avg, sums: &intSums[uint8]{}}
	case arrow.UINT16:
		return &sumAcc[uint16]{avg: avg, sums: &intSums[uint16]{}}
	case arrow.UINT32:
		return &sumAcc[uint32]{avg: avg, sums: &intSums[uint32]{}}
	case arrow.UINT64:
		return &sumAcc[uint64]{avg: avg, sums: &intSums[uint64]{}}
	case arrow.FLOAT32:
		if !avg {
			return &sumAcc[float32]{sums: &realSums{}}
		}
		return &sumAcc[float32]{avg: avg, sums: &floatSums[float32]{}}
	case arrow.FLOAT64:
		return &sumAcc[float64]{avg: avg, sums: &floatSums[float64]{}}
	}
	panic("aggregate: sum of " + dt.String())
}

// sumAcc is sum or avg over values of physical type T: per group, the sum (kept by sums, exact
// 128-bit integers or float64) and the number of values summed (count; a group without values
// is null). Avg's partial state is the sum and the count; sum's is the sum alone.
// numericSum is sum(x) of integers answered as the exact decimal128(38, 0) total
// (Measure.Numeric): the partial state itself.
type numericSum struct{ accumulator }

func (a *numericSum) result(mem memory.Allocator, lo, hi int) (arrow.Array, error) {
	return totalOf(a.accumulator, mem, lo, hi)
}

// totalOf is the result of a sum of integers answered as numeric: its partial state, the
// exact decimal128(38, 0) totals.
func totalOf(a accumulator, mem memory.Allocator, lo, hi int) (arrow.Array, error) {
	st, err := a.state(mem, lo, hi)
	if err != nil {
		return nil, err
	}
	return st[0], nil
}

type sumAcc[T fixedT] struct {
	avg     bool
	count   countAcc
	sums    sumsOf[T]
	scratch []byte
}

// sumsOf is sumAcc's per-group sums of values of physical type T. Like accumulator, it is
// called once per batch by one goroutine.
type sumsOf[T fixedT] interface {
	grow(n int)
	// add adds vals[i] to group gids[i] for the rows whose mask is true (mask nil: all); a
	// float sum that overflows is an error (floatSums.add).
	add(vals []T, gids []uint32, mask []bool) error
	// merge adds the non-null partial sums of col to groups gids.
	merge(col arrow.Array, gids []uint32) error
	// float returns group g's sum as a float64 (avg's numerator).
	float(g int) float64
	// result returns the sums of groups lo..hi-1 as sum's result type (int64 for integers:
	// ErrSumOverflow when one does not fit; float64 for floats), null where valid is false.
	result(mem memory.Allocator, lo, hi int, valid []bool) (arrow.Array, error)
	// state returns the partial sums of groups lo..hi-1, null where valid is false.
	state(mem memory.Allocator, lo, hi int, valid []bool) arrow.Array
	heapBytes() int64
}

func (a *sumAcc[T]) grow(n int) {
	a.count.grow(n)
	a.sums.grow(n)
}

func (a *sumAcc[T]) update(arg arrow.Array, gids []uint32, mask []bool) error {
	return a.addValues(physValues[T](arg, &a.scratch), gids, mask)
}

func (a *sumAcc[T]) addValues(vals []T, gids []uint32, mask []bool) error {
	a.count.addRows(gids, mask)
	return a.sums.add(vals, gids, mask)
}

func (a *sumAcc[T]) merge(cols []arrow.Array, gids []uint32) error {
	if err := a.sums.merge(cols[0], gids); err != nil {
		return err
	}
	if a.avg { // the counts column: nulls count nothing, as their sums are null too
		return a.count.merge(cols[1:], gids)
	}
	// Every non-null partial sum counts one value: its group is no longer empty.
	n := a.count.n
	for i, g := range gids {
		if cols[0].IsValid(i) {
			n[g]++
		}
	}
	return nil
}

// valid returns which of groups lo..hi-1 summed a value (the others are null).
func (a *sumAcc[T]) valid(lo, hi int) []bool {
	valid := make([]bool, hi-lo)
	for i := range valid {
		valid[i] = a.count.n[lo+i] > 0
	}
	return valid
}

func (a *sumAcc[T]) result(mem memory.Allocator, lo, hi int) (arrow.Array, error) {
	valid := a.valid(lo, hi)
	if !a.avg {
		return a.sums.result(mem, lo, hi, valid)
	}
	out := make([]float64, hi-lo)
	for i := range out {
		if valid[i] {
			out[i] = a.sums.float(lo+i) / float64(a.count.n[lo+i])
		}
	}
	return makeFixed(mem, arrow.PrimitiveTypes.Float64, out, valid), nil
}

func (a *sumAcc[T]) state(mem memory.Allocator, lo, hi int) ([]arrow.Array, error) {
	out := []arrow.Array{a.sums.state(mem, lo, hi, a.valid(lo, hi))}
	if a.avg {
		out = append(out, makeFixed(mem, arrow.PrimitiveTypes.Int64, a.count.n[lo:hi], nil))
	}
	return out, nil
}

func (a *sumAcc[T]) heapBytes() int64 {
	return a.count.heapBytes() + a.sums.heapBytes() + int64(cap(a.scratch))
}

// addInt returns s + x, x sign-extended when T is signed (the test folds to a constant in each
// instantiation).
func addInt[T integerT](s int128, x T) int128 {
	v := int64(x)
	var ext int64
	if isSigned[T]() {
		ext = v >> 63
	}
	lo, c := bits.Add64(s.lo, uint64(v), 0)
	return int128{lo: lo, hi: s.hi + ext + int64(c)}
}

// intSums are exact 128-bit sums of integers of physical type T.
type intSums[T integerT] struct{ sum []int128 }

func (s *intSums[T]) grow(n int) { s.sum = grown(s.sum, n) }

func (s *intSums[T]) add(vals []T, gids []uint32, mask []bool) error {
	vals = vals[:len(gids)]
	if mask != nil {
		mask = mask[:len(gids)]
	}
	sum := s.sum
	if len(sum) == 1 { // one group: every gid is 0; sum in registers
		acc := sum[0]
		for i, x := range vals {
			if mask == nil || mask[i] {
				acc = addInt(acc, x)
			}
		}
		sum[0] = acc
		return nil
	}
	for i, g := range gids {
		if mask == nil || mask[i] {
			sum[g] = addInt(sum[g], vals[i])
		}
	}
	return nil
}

func (s *intSums[T]) merge(col arrow.Array, gids []uint32) error {
	d, ok := col.(*array.Decimal128)
	if !ok {
		return fmt.Errorf("aggregate: sum state is %s, not decimal128", col.DataType())
	}
	nums := d.Values()[:len(gids)]
	for i, g := range gids {
		if d.IsNull(i) {
			continue
		}
		cur := &s.sum[g]
		x := nums[i]
		lo, c := bits.Add64(cur.lo, x.LowBits(), 0)
		hi := cur.hi + x.HighBits() + int64(c)
		// Signed 128-bit overflow: both operands have one sign and the result the other.
		if (cur.hi < 0) == (x.HighBits() < 0) && (hi < 0) != (cur.hi < 0) {
			return fmt.Errorf("aggregate: sum overflows 128 bits")
		}
		cur.lo, cur.hi = lo, hi
	}
	return nil
}

func (s *intSums[T]) float(g int) float64 { return s.sum[g].float64() }

func (s *intSums[T]) result(mem memory.Allocator, lo, hi int, valid []bool) (arrow.Array, error) {
	out := make([]int64, hi-lo)
	for i := range out {
		if !valid[i] {
			continue
		}
		v, ok := s.sum[lo+i].int64()
		if !ok {
			return nil, ErrSumOverflow
		}
		out[i] = v
	}
	return makeFixed(mem, arrow.PrimitiveTypes.Int64, out, valid), nil
}

func (s *intSums[T]) state(mem memory.Allocator, lo, hi int, valid []bool) arrow.Array {
	b := array.NewDecimal128Builder(mem, &arrow.Decimal128Type{Precision: 38, Scale: 0})
	defer b.Release()
	b.Reserve(hi - lo)
	for i, ok := range valid {
		if !ok {
			b.AppendNull()
			continue
		}
		b.Append(decimal128.New(s.sum[lo+i].hi, s.sum[lo+i].lo))
	}
	return b.NewArray()
}

func (s *intSums[T]) heapBytes() int64 { return int64(cap(s.sum)) * 16 }

// floatSums are float64 sums of floats of physical type T. A group's sum starts at -0, the
// identity of floating-point addition, so that it is its first value's as PostgreSQL's
// sum(float8) takes its first value as the state (float8pl is strict, its initial state NULL):
// the sum of -0 alone is -0, of -0 and 0 is 0.
type floatSums[T floatT] struct{ sum []float64 }

func (s *floatSums[T]) grow(n int) {
	old := len(s.sum)
	s.sum = grown(s.sum, n)
	for i := old; i < len(s.sum); i++ {
		s.sum[i] = math.Copysign(0, -1)
	}
}

// add is intSums.add with float arithmetic and PostgreSQL's overflow check (float8pl,
// float8_accum): a sum that becomes infinite from finite values is errFloatOverflow ("value
// out of range: overflow", 22003); an infinite value summed is infinite, as in PostgreSQL.
// The two loops stay apart: one kernel taking the addition as a function value (not inlined:
// an indirect call per row) measured 2.5 times slower over 1M int64 rows.
func (s *floatSums[T]) add(vals []T, gids []uint32, mask []bool) error {
	vals = vals[:len(gids)]
	if mask != nil {
		mask = mask[:len(gids)]
	}
	sum := s.sum
	if len(sum) == 1 { // one group: every gid is 0; sum in registers
		acc := sum[0]
		for i, x := range vals {
			if mask == nil || mask[i] {
				acc += float64(x)
			}
		}
		// Once infinite (or NaN) a sum stays so: a finite start and a non-finite end is
		// either an infinite value summed or an overflow, which the rows tell apart.
		if finite(acc) || !finite(sum[0]) {
			sum[0] = acc
			return nil
		}
		for i, x := range vals {
			if mask == nil || mask[i] {
				if err := floatAdd(&sum[0], float64(x)); err != nil {
					return err
				}
			}
		}
		return nil
	}
	for i, g := range gids {
		if mask == nil || mask[i] {
			if err := floatAdd(&sum[g], float64(vals[i])); err != nil {
				return err
			}
		}
	}
	return nil
}

// finite reports whether x is neither infinite nor NaN.
func finite(x float64) bool { return x-x == 0 }

// floatAdd is *acc += x with float8pl's check: an infinite sum of finite operands is
// errFloatOverflow.
func floatAdd(acc *float64, x float64) error {
	v := *acc + x
	if !finite(v) && finite(*acc) && finite(x) {
		return errFloatOverflow
	}
	*acc = v
	return nil
}

func (s *floatSums[T]) merge(col arrow.Array, gids []uint32) error {
	f, ok := col.(*array.Float64)
	if !ok {
		return fmt.Errorf("aggregate: sum state is %s, not float64", col.DataType())
	}
	// float8pl's check, as PostgreSQL's float8_combine combines partial sums.
	return mergeSums(f, f.Float64Values(), gids, s.sum, floatAdd)
}

// mergeSums adds the non-null partial sums vals of col to groups gids of sums with add (the
// sum's own overflow check).
func mergeSums[S float32 | float64](col arrow.Array, vals []S, gids []uint32, sums []S, add func(*S, S) error) error {
	vals = vals[:len(gids)]
	for i, g := range gids {
		if col.IsValid(i) {
			if err := add(&sums[g], vals[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *floatSums[T]) float(g int) float64 { return s.sum[g] }

func (s *floatSums[T]) result(mem memory.Allocator, lo, hi int, valid []bool) (arrow.Array, error) {
	return s.state(mem, lo, hi, valid), nil
}

func (s *floatSums[T]) state(mem memory.Allocator, lo, hi int, valid []bool) arrow.Array {
	return makeFixed(mem, arrow.PrimitiveTypes.Float64, s.sum[lo:hi], valid)
}

func (s *floatSums[T]) heapBytes() int64 { return int64(cap(s.sum)) * 8 }

// realSums are sum(real)'s float32 sums, PostgreSQL's: float4pl adds the values in single
// precision one after the other in the order they come (and, as float4pl is also sum(real)'s
// combine function, a partial sum to the sum of the partial sums before it), so the result
// is the order's as PostgreSQL's is its plan's order. A group's sum starts at -0, as
// floatSums'; a sum that becomes infinite from finite values is errFloatOverflow (float4pl's
// "value out of range: overflow", 22003).
type realSums struct{ sum []float32 }

func (s *realSums) grow(n int) {
	old := len(s.sum)
	s.sum = grown(s.sum, n)
	for i := old; i < len(s.sum); i++ {
		s.sum[i] = float32(math.Copysign(0, -1))
	}
}

func (s *realSums) add(vals []float32, gids []uint32, mask []bool) error {
	vals = vals[:len(gids)]
	for i, g := range gids {
		if mask == nil || mask[i] {
			if err := realAdd(&s.sum[g], vals[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

// realAdd is *acc += x in single precision with float4pl's check: an infinite sum of finite
// operands is errFloatOverflow.
func realAdd(acc *float32, x float32) error {
	v := *acc + x
	if math.IsInf(float64(v), 0) && !math.IsInf(float64(*acc), 0) && !math.IsInf(float64(x), 0) {
		return errFloatOverflow
	}
	*acc = v
	return nil
}

func (s *realSums) merge(col arrow.Array, gids []uint32) error {
	f, ok := col.(*array.Float32)
	if !ok {
		return fmt.Errorf("aggregate: sum state is %s, not float32", col.DataType())
	}
	return mergeSums(f, f.Float32Values(), gids, s.sum, realAdd)
}

func (s *realSums) float(g int) float64 { return float64(s.sum[g]) }

func (s *realSums) result(mem memory.Allocator, lo, hi int, valid []bool) (arrow.Array, error) {
	return s.state(mem, lo, hi, valid), nil
}

func (s *realSums) state(mem memory.Allocator, lo, hi int, valid []bool) arrow.Array {
	return makeFixed(mem, arrow.PrimitiveTypes.Float32, s.sum[lo:hi], valid)
}

func (s *realSums) heapBytes() int64 { return int64(cap(s.sum)) * 4 }

func newMinMax(dt arrow.DataType, isMax bool) accumulator {
	a := &minMaxAcc{max: isMax, dt: dt}
	switch dt.ID() {
	case arrow.INT8:
		a.vals = &fixedExtremes[int8]{}
	case arrow.INT16:
		a.vals = &fixedExtremes[int16]{}
	case arrow.INT32, arrow.DATE32:
		a.vals = &fixedExtremes[int32]{}
	case arrow.INT64, arrow.TIMESTAMP, arrow.TIME64:
		a.vals = &fixedExtremes[int64]{}
	case arrow.UINT8, arrow.BOOL:
		a.vals = &fixedExtremes[uint8]{}
	case arrow.UINT16:
		a.vals = &fixedExtremes[uint16]{}
	case arrow.UINT32:
		a.vals = &fixedExtremes[uint32]{}
	case arrow.UINT64:
		a.vals = &fixedExtremes[uint64]{}
	case arrow.FLOAT32:
		a.vals = &fixedExtremes[float32]{}
	case arrow.FLOAT64:
		a.vals = &fixedExtremes[float64]{}
	case arrow.STRING, arrow.LARGE_STRING, arrow.BINARY, arrow.LARGE_BINARY:
		a.vals = &bytesExtremes{}
	case arrow.DECIMAL128:
		a.vals = &decimalExtremes{}
	case arrow.INTERVAL_MONTH_DAY_NANO:
		a.vals = &intervalExtremes{}
	default:
		panic("aggregate: min/max of " + dt.String())
	}
	return a
}

// minMaxAcc is min or max over a column of type dt: per group, whether it has a value (has)
// and the extreme so far (kept by vals, typed). Its state is the value itself, of type dt.
type minMaxAcc struct {
	max  bool
	dt   arrow.DataType
	has  []bool
	vals extremes
	mask []bool
}

// extremes is minMaxAcc's per-group extreme values of one physical type. Like accumulator, it
// is called once per batch by one goroutine.
type extremes interface {
	grow(n int)
	// update replaces group gids[i]'s value by row i of arg where mask (nil: all) is true and
	// the group has none (has) or row i's value is greater (max) or less (!max); it sets has.
	update(arg arrow.Array, gids []uint32, mask, has []bool, max bool)
	// result returns the values of groups lo..hi-1 as an array of dt, null where has is false.
	result(mem memory.Allocator, dt arrow.DataType, has []bool, lo, hi int) arrow.Array
	heapBytes() int64
}

func (a *minMaxAcc) grow(n int) {
	a.has = grown(a.has, n)
	a.vals.grow(n)
}

func (a *minMaxAcc) update(arg arrow.Array, gids []uint32, mask []bool) error {
	a.vals.update(arg, gids, mask, a.has, a.max)
	return nil
}

func (a *minMaxAcc) merge(cols []arrow.Array, gids []uint32) error {
	a.mask = validMask(cols[0], a.mask)
	return a.update(cols[0], gids, a.mask)
}

func (a *minMaxAcc) result(mem memory.Allocator, lo, hi int) (arrow.Array, error) {
	return a.vals.result(mem, a.dt, a.has, lo, hi), nil
}

func (a *minMaxAcc) state(mem memory.Allocator, lo, hi int) ([]arrow.Array, error) {
	r, err := a.result(mem, lo, hi)
	return []arrow.Array{r}, err
}

func (a *minMaxAcc) heapBytes() int64 {
	return a.vals.heapBytes() + int64(cap(a.has)) + int64(cap(a.mask))
}

// fixedExtremes are min or max values of physical type T (integers, timestamps, dates and
// booleans as integers; floats in PostgreSQL's order, ops.PGLess: NaN greatest, so max is NaN
// when any value is and min only when all are). Of equal values the later one is kept, as PostgreSQL's float8larger and
// float8smaller (and every larger/smaller transition function) keep their second argument
// unless the first is strictly greater or less: max over -0 then 0 is 0, over 0 then -0 is -0.
type fixedExtremes[T fixedT] struct {
	vals    []T
	scratch []byte
}

func (x *fixedExtremes[T]) grow(n int) { x.vals = grown(x.vals, n) }

func (x *fixedExtremes[T]) update(arg arrow.Array, gids []uint32, mask, has []bool, max bool) {
	vals := physValues[T](arg, &x.scratch)[:len(gids)]
	if mask != nil {
		mask = mask[:len(gids)]
	}
	cur := x.vals
	if len(cur) == 1 { // one group: every gid is 0; extreme in registers
		c, h := cur[0], has[0]
		for i, v := range vals {
			if (mask == nil || mask[i]) && (!h || (max && ops.PGLess(v, c) == 0) || (!max && ops.PGLess(c, v) == 0)) {
				c, h = v, true
			}
		}
		cur[0], has[0] = c, h
		return
	}
	for i, g := range gids {
		if v, c := vals[i], cur[g]; (mask == nil || mask[i]) && (!has[g] || (max && ops.PGLess(v, c) == 0) || (!max && ops.PGLess(c, v) == 0)) {
			cur[g], has[g] = v, true
		}
	}
}

func (x *fixedExtremes[T]) result(mem memory.Allocator, dt arrow.DataType, has []bool, lo, hi int) arrow.Array {
	return makeFixed(mem, dt, x.vals[lo:hi], has[lo:hi])
}

func (x *fixedExtremes[T]) heapBytes() int64 {
	return int64(cap(x.vals))*sizeOf[T]() + int64(cap(x.scratch))
}

// bytesExtremes are min or max values of text or binary in bytewise order; each group's value
// is a copy owned by the accumulator.
type bytesExtremes struct {
	vals  [][]byte
	bytes int64 // capacity of the copies
}

func (x *bytesExtremes) grow(n int) { x.vals = grown(x.vals, n) }

func (x *bytesExtremes) update(arg arrow.Array, gids []uint32, mask, has []bool, max bool) {
	col := bytesView(arg)
	want := -1
	if max {
		want = 1
	}
	for i, g := range gids {
		if mask != nil && !mask[i] {
			continue
		}
		v := col.value(i)
		if has[g] && bytes.Compare(v, x.vals[g])*want <= 0 {
			continue
		}
		old := cap(x.vals[g])
		x.vals[g] = append(x.vals[g][:0], v...)
		has[g] = true
		x.bytes += int64(cap(x.vals[g]) - old)
	}
}

func (x *bytesExtremes) result(mem memory.Allocator, dt arrow.DataType, has []bool, lo, hi int) arrow.Array {
	return makeBytes(mem, dt, x.vals[lo:hi], has[lo:hi])
}

func (x *bytesExtremes) heapBytes() int64 { return int64(cap(x.vals))*24 + x.bytes }

// decimalExtremes are min or max values of decimal128 (PostgreSQL's numeric: one column's
// values share its scale, so they compare as 128-bit integers).
type decimalExtremes struct {
	vals []decimal128.Num
}

func (x *decimalExtremes) grow(n int) { x.vals = grown(x.vals, n) }

func (x *decimalExtremes) update(arg arrow.Array, gids []uint32, mask, has []bool, max bool) {
	vals := arg.(*array.Decimal128).Values()
	for i, g := range gids {
		if mask != nil && !mask[i] {
			continue
		}
		v := vals[i]
		if has[g] && (max && !v.Greater(x.vals[g]) || !max && !v.Less(x.vals[g])) {
			continue
		}
		x.vals[g], has[g] = v, true
	}
}

func (x *decimalExtremes) result(mem memory.Allocator, dt arrow.DataType, has []bool, lo, hi int) arrow.Array {
	b := array.NewDecimal128Builder(mem, dt.(*arrow.Decimal128Type))
	defer b.Release()
	b.AppendValues(x.vals[lo:hi], has[lo:hi])
	return b.NewArray()
}

func (x *decimalExtremes) heapBytes() int64 { return int64(cap(x.vals)) * 16 }

// intervalExtremes are min or max values of intervals (PostgreSQL's interval), ordered as its
// interval_cmp orders them (ops.CompareIntervals: a month as 30 days, a day as 24 hours). Of
// values that compare equal the later one is kept, as interval_larger and interval_smaller
// keep their second argument unless the first is strictly greater or less: max over '1 mon'
// then '30 days' is '30 days', the fields of the value kept.
type intervalExtremes struct {
	vals []arrow.MonthDayNanoInterval
}

func (x *intervalExtremes) grow(n int) { x.vals = grown(x.vals, n) }

func (x *intervalExtremes) update(arg arrow.Array, gids []uint32, mask, has []bool, max bool) {
	col := arg.(*array.MonthDayNanoInterval)
	for i, g := range gids {
		if mask != nil && !mask[i] {
			continue
		}
		v := col.Value(i)
		if has[g] {
			c := ops.CompareIntervals(x.vals[g], v)
			if max && c > 0 || !max && c < 0 {
				continue
			}
		}
		x.vals[g], has[g] = v, true
	}
}

func (x *intervalExtremes) result(mem memory.Allocator, dt arrow.DataType, has []bool, lo, hi int) arrow.Array {
	b := array.NewMonthDayNanoIntervalBuilder(mem)
	defer b.Release()
	b.AppendValues(x.vals[lo:hi], has[lo:hi])
	return b.NewArray()
}

func (x *intervalExtremes) heapBytes() int64 { return int64(cap(x.vals)) * 16 }

// newBitFold is bit_and, bit_or or bit_xor (f) over a column of int16, int32 or int64 (dt): a
// minMaxAcc whose values fold each group's values bitwise instead of keeping an extreme (its
// state is the value so far, of type dt, NULL before the first).
func newBitFold(dt arrow.DataType, f Func) accumulator {
	a := &minMaxAcc{dt: dt}
	switch dt.ID() {
	case arrow.INT16:
		a.vals = &bitFold[int16]{f: f}
	case arrow.INT32:
		a.vals = &bitFold[int32]{f: f}
	default:
		a.vals = &bitFold[int64]{f: f}
	}
	return a
}

// bitFold are per-group bitwise folds of integers of type T (bit_and, bit_or, bit_xor: f);
// the first value of a group is kept as it is.
type bitFold[T int16 | int32 | int64] struct {
	f       Func
	vals    []T
	scratch []byte
}

func (x *bitFold[T]) grow(n int) { x.vals = grown(x.vals, n) }

func (x *bitFold[T]) update(arg arrow.Array, gids []uint32, mask, has []bool, _ bool) {
	vals := physValues[T](arg, &x.scratch)[:len(gids)]
	for i, g := range gids {
		if mask != nil && !mask[i] {
			continue
		}
		v := vals[i]
		switch {
		case !has[g]:
		case x.f == BitAnd:
			v &= x.vals[g]
		case x.f == BitOr:
			v |= x.vals[g]
		default:
			v ^= x.vals[g]
		}
		x.vals[g], has[g] = v, true
	}
}

func (x *bitFold[T]) result(mem memory.Allocator, dt arrow.DataType, has []bool, lo, hi int) arrow.Array {
	return makeFixed(mem, dt, x.vals[lo:hi], has[lo:hi])
}

func (x *bitFold[T]) heapBytes() int64 { return int64(cap(x.vals))*sizeOf[T]() + int64(cap(x.scratch)) }
