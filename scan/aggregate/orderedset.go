package aggregate

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flightsrv/flightsrv/scan/ledger"
	"github.com/flightsrv/flightsrv/scan/ops"
)

// PostgreSQL's ordered-set aggregates (PostgreSQL 15, "Ordered-Set Aggregate Functions"),
// WITHIN GROUP (ORDER BY x [DESC]), NULL values of x ignored, NULL for a group without values:
//
//	percentile_cont(f)   float64 x: the value at fraction f of the ordered values,
//	                     interpolated linearly between the two nearest (PostgreSQL's
//	                     percentile_cont_float8_final); of month_day_nano_interval x (one
//	                     fraction): the intervals ordered as interval_cmp orders them and
//	                     interpolated as percentile_cont_interval_final does (intervalContAcc)
//	percentile_disc(f)   int64 or float64 x: the first value whose position in the ordering
//	                     reaches fraction f (the ceil(f·n)-th, at least the first)
//	mode()               int64 or float64 x: the most frequent value, the first in the
//	                     ordering among equally frequent ones
//
// f must lie in [0, 1] (else PostgreSQL's "percentile value … is not between 0 and 1",
// 22003). Floats order as PostgreSQL's (NaN above every other value; -0 equal to 0). Every
// value is kept until the result: the partial state is the list of a group's values, and the
// values' heap is counted against the query's ledger through heapBytes.

// orderedAcc keeps each group's values.
type orderedAcc[T int64 | float64] struct {
	m    resolved
	dt   arrow.DataType
	vals [][]T
	n    int64
}

func newOrdered(m resolved) (accumulator, error) {
	switch m.argType.ID() {
	case arrow.INTERVAL_MONTH_DAY_NANO:
		if m.Func == PercentileCont {
			return &intervalContAcc{m: m}, nil
		}
	case arrow.INT64:
		if m.Func == PercentileCont {
			break
		}
		return &orderedAcc[int64]{m: m, dt: m.argType}, nil
	case arrow.FLOAT64:
		return &orderedAcc[float64]{m: m, dt: m.argType}, nil
	}
	return nil, fmt.Errorf("aggregate: %s of %s is not supported", m.Func, m.argType)
}

func (a *orderedAcc[T]) grow(n int) { a.vals = grown(a.vals, n) }

func (a *orderedAcc[T]) update(arg arrow.Array, gids []uint32, mask []bool) error {
	var vals []T
	switch v := arg.(type) {
	case *array.Int64:
		vals = any(v.Int64Values()).([]T)
	case *array.Float64:
		vals = any(v.Float64Values()).([]T)
	default:
		return fmt.Errorf("aggregate: %s of %s", a.m.Func, arg.DataType())
	}
	for i, g := range gids {
		if mask == nil || mask[i] {
			a.vals[g] = append(a.vals[g], vals[i])
			a.n++
		}
	}
	return nil
}

func (a *orderedAcc[T]) merge(cols []arrow.Array, gids []uint32) error {
	return mergeLists(cols[0], gids, a.update)
}

// compareValues orders as PostgreSQL: NaN above everything, -0 equal to 0.
func compareValues[T int64 | float64](x, y T) int {
	fx, fy := float64(x), float64(y)
	switch nx, ny := math.IsNaN(fx), math.IsNaN(fy); {
	case nx && ny:
		return 0
	case nx:
		return 1
	case ny:
		return -1
	}
	return cmp.Compare(x, y)
}

// checkFraction is PostgreSQL's error of a percentile fraction outside [0, 1] (22003).
func checkFraction(f float64) error {
	if f < 0 || f > 1 || math.IsNaN(f) {
		// PostgreSQL's message quotes the query's constant; the log line's form does not.
		return &ops.DataError{Code: "22003", Msg: fmt.Sprintf("percentile value %g is not between 0 and 1", f), LogMsg: "percentile value <value> is not between 0 and 1"}
	}
	return nil
}

// percentileOf is percentile_cont's (cont) or percentile_disc's value at fraction f of the
// sorted values v (not empty).
func percentileOf[T int64 | float64](v []T, f float64, cont bool) (T, float64) {
	n := len(v)
	if cont {
		pos := f * float64(n-1)
		first, second := math.Floor(pos), math.Ceil(pos)
		lo, hi := float64(v[int(first)]), float64(v[int(second)])
		if first == second {
			return 0, lo
		}
		return 0, lo + (hi-lo)*(pos-first)
	}
	k := int(math.Ceil(f * float64(n)))
	return v[max(k, 1)-1], 0
}

// multiResult answers percentile_cont and percentile_disc of an array of fractions
// (PostgreSQL's percentile_cont_multi_final and percentile_disc_multi_final): NULL for a group
// without values, else a list of one value per fraction, NULL for a NULL fraction; a fraction
// outside [0, 1] is the error of one, raised for groups with values only.
func (a *orderedAcc[T]) multiResult(mem memory.Allocator, lo, hi int) (arrow.Array, error) {
	elem := a.m.multiElem()
	lb := array.NewListBuilder(mem, elem)
	defer lb.Release()
	vb := lb.ValueBuilder()
	for g := lo; g < hi; g++ {
		v := a.vals[g]
		if len(v) == 0 {
			lb.AppendNull()
			continue
		}
		a.sort(v)
		lb.Append(true)
		for i, f := range a.m.Fractions {
			if a.m.FractionNulls[i] {
				vb.AppendNull()
				continue
			}
			if err := checkFraction(f); err != nil {
				return nil, err
			}
			x, c := percentileOf(v, f, a.m.Func == PercentileCont)
			switch b := vb.(type) {
			case *array.Float64Builder:
				if a.m.Func == PercentileCont {
					b.Append(c)
				} else {
					b.Append(float64(x))
				}
			case *array.Int64Builder:
				b.Append(int64(x))
			case *array.Int32Builder:
				b.Append(int32(x))
			case *array.Int16Builder:
				b.Append(int16(x))
			default:
				return nil, fmt.Errorf("aggregate: %s answered as a list of %s", a.m.Func, elem)
			}
		}
	}
	return lb.NewArray(), nil
}

// sort orders a group's values as the measure's WITHIN GROUP (ORDER BY x [DESC]).
func (a *orderedAcc[T]) sort(v []T) {
	slices.SortFunc(v, func(x, y T) int {
		if a.m.Descending {
			return compareValues(y, x)
		}
		return compareValues(x, y)
	})
}

func (a *orderedAcc[T]) result(mem memory.Allocator, lo, hi int) (arrow.Array, error) {
	if a.m.Multi {
		return a.multiResult(mem, lo, hi)
	}
	out := make([]T, hi-lo)
	valid := make([]bool, hi-lo)
	cont := make([]float64, hi-lo)
	f := a.m.Fraction
	if a.m.Func != ModeOf {
		if err := checkFraction(f); err != nil {
			return nil, err
		}
	}
	for i := range out {
		v := a.vals[lo+i]
		if len(v) == 0 {
			continue
		}
		valid[i] = true
		a.sort(v)
		switch a.m.Func {
		case PercentileCont, PercentileDisc:
			out[i], cont[i] = percentileOf(v, f, a.m.Func == PercentileCont)
		case ModeOf:
			best, bestN, run := v[0], 0, 0
			for j := range v {
				if j > 0 && compareValues(v[j], v[j-1]) == 0 {
					run++
				} else {
					run = 1
				}
				if run > bestN {
					best, bestN = v[j], run
				}
			}
			out[i] = best
		}
	}
	if a.m.Func == PercentileCont {
		return makeFixed(mem, arrow.PrimitiveTypes.Float64, cont, valid), nil
	}
	return makeFixed(mem, a.dt, out, valid), nil
}

func (a *orderedAcc[T]) state(mem memory.Allocator, lo, hi int) ([]arrow.Array, error) {
	off := make([]int64, hi-lo+1)
	var flat []T
	for i := lo; i < hi; i++ {
		flat = append(flat, a.vals[i]...)
		off[i-lo+1] = int64(len(flat))
	}
	child := makeFixed(mem, a.dt, flat, nil)
	defer child.Release()
	return []arrow.Array{makeList(mem, a.dt, off, child)}, nil
}

func (a *orderedAcc[T]) heapBytes() int64 { return a.n*8 + int64(cap(a.vals))*24 }

// stringAggAcc is string_agg(x, Separator): each group's non-null values, joined with the
// separator in the order they came (the fragments' order) or, Sorted, in bytewise order
// (descending when Descending); Distinct keeps each value once (in bytewise order, as
// PostgreSQL's sorted distinct input gives them). NULL for a group without values. The partial
// state is the list of the group's values.
type stringAggAcc struct {
	m    resolved
	vals [][]string
	n    int64
}

func (a *stringAggAcc) grow(n int) { a.vals = grown(a.vals, n) }

func (a *stringAggAcc) update(arg arrow.Array, gids []uint32, mask []bool) error {
	col := bytesView(arg)
	for i, g := range gids {
		if mask == nil || mask[i] {
			v := string(col.value(i))
			a.vals[g] = append(a.vals[g], v)
			a.n += int64(len(v)) + 16
		}
	}
	return nil
}

func (a *stringAggAcc) merge(cols []arrow.Array, gids []uint32) error {
	return mergeLists(cols[0], gids, a.update)
}

// result joins each group's values. A long separator multiplies the input (a 10 KB separator
// between 16,000 short values is 160 MB): each value is claimed from the query's ledger (mem,
// when it is one) before it is joined, twice its bytes (the joined string and its copy in the
// output array), the claims kept until the batch is built; past the query's limit the
// ledger's *ledger.LimitExceededError, past 1 GiB PostgreSQL's 54000 first.
func (a *stringAggAcc) result(mem memory.Allocator, lo, hi int) (arrow.Array, error) {
	b := array.NewStringBuilder(mem)
	defer b.Release()
	l, _ := mem.(*ledger.Ledger)
	var claimed int64
	defer func() { l.Unclaim(claimed) }()
	for g := lo; g < hi; g++ {
		v := a.vals[g]
		if len(v) == 0 {
			b.AppendNull()
			continue
		}
		if a.m.Sorted || a.m.Distinct {
			slices.Sort(v)
			if a.m.Distinct {
				v = slices.Compact(v)
			}
			if a.m.Descending {
				slices.Reverse(v)
			}
		}
		size := len(a.m.Separator) * (len(v) - 1)
		for _, s := range v {
			size += len(s)
		}
		if size > 1<<30 {
			return nil, &ops.DataError{Code: "54000", Msg: "out of memory: string_agg result exceeds 1 GB"}
		}
		if err := l.Claim(2 * int64(size)); err != nil {
			return nil, err
		}
		claimed += 2 * int64(size)
		b.Append(strings.Join(v, a.m.Separator))
	}
	return b.NewArray(), nil
}

func (a *stringAggAcc) state(mem memory.Allocator, lo, hi int) ([]arrow.Array, error) {
	off := make([]int64, hi-lo+1)
	cb := array.NewStringBuilder(mem)
	defer cb.Release()
	k := int64(0)
	for g := lo; g < hi; g++ {
		for _, s := range a.vals[g] {
			cb.Append(s)
			k++
		}
		off[g-lo+1] = k
	}
	child := cb.NewArray()
	defer child.Release()
	return []arrow.Array{makeList(mem, arrow.BinaryTypes.String, off, child)}, nil
}

func (a *stringAggAcc) heapBytes() int64 { return a.n + int64(cap(a.vals))*24 }

// intervalContAcc is percentile_cont(f) of intervals (PostgreSQL's
// percentile_cont_interval_final; of an array of fractions, Multi, its
// percentile_cont_interval_multi_final): each group's intervals sorted as interval_cmp sorts them
// (stably: intervals equal under it, '1 mon' and '30 days', keep the order they came in,
// which PostgreSQL's sort leaves unspecified), then the interval at row floor(f·(n-1)), or
// interval_lerp of it and the next row's at their fraction (ops.LerpInterval: 22008 where a
// field overflows).
type intervalContAcc struct {
	m    resolved
	vals [][]arrow.MonthDayNanoInterval
	n    int64
}

func (a *intervalContAcc) grow(n int) { a.vals = grown(a.vals, n) }

func (a *intervalContAcc) update(arg arrow.Array, gids []uint32, mask []bool) error {
	v, ok := arg.(*array.MonthDayNanoInterval)
	if !ok {
		return fmt.Errorf("aggregate: %s of %s", a.m.Func, arg.DataType())
	}
	vals := v.MonthDayNanoIntervalValues()
	for i, g := range gids {
		if mask == nil || mask[i] {
			a.vals[g] = append(a.vals[g], vals[i])
			a.n++
		}
	}
	return nil
}

func (a *intervalContAcc) merge(cols []arrow.Array, gids []uint32) error {
	return mergeLists(cols[0], gids, a.update)
}

func (a *intervalContAcc) result(mem memory.Allocator, lo, hi int) (arrow.Array, error) {
	if !a.m.Multi {
		if err := checkFraction(a.m.Fraction); err != nil {
			return nil, err
		}
	}
	b := array.NewMonthDayNanoIntervalBuilder(mem)
	defer b.Release()
	var lb *array.ListBuilder
	if a.m.Multi {
		// percentile_cont(ARRAY[…]) (percentile_cont_interval_multi_final): NULL for a group
		// without values, else a list of one interval per fraction, NULL for a NULL fraction.
		lb = array.NewListBuilder(mem, arrow.FixedWidthTypes.MonthDayNanoInterval)
		defer lb.Release()
		b = lb.ValueBuilder().(*array.MonthDayNanoIntervalBuilder)
	}
	for g := lo; g < hi; g++ {
		v := a.vals[g]
		if len(v) == 0 {
			if lb != nil {
				lb.AppendNull()
			} else {
				b.AppendNull()
			}
			continue
		}
		slices.SortStableFunc(v, func(x, y arrow.MonthDayNanoInterval) int {
			if a.m.Descending {
				return ops.CompareIntervals(y, x)
			}
			return ops.CompareIntervals(x, y)
		})
		if lb == nil {
			r, err := intervalAt(v, a.m.Fraction)
			if err != nil {
				return nil, err
			}
			b.Append(r)
			continue
		}
		lb.Append(true)
		for i, f := range a.m.Fractions {
			if a.m.FractionNulls[i] {
				b.AppendNull()
				continue
			}
			if err := checkFraction(f); err != nil {
				return nil, err
			}
			r, err := intervalAt(v, f)
			if err != nil {
				return nil, err
			}
			b.Append(r)
		}
	}
	if lb != nil {
		return lb.NewArray(), nil
	}
	return b.NewArray(), nil
}

// intervalAt is percentile_cont's interval at fraction f of the sorted intervals v (not
// empty): the one at row floor(f·(n-1)), or interval_lerp of it and the next at their
// fraction.
func intervalAt(v []arrow.MonthDayNanoInterval, f float64) (arrow.MonthDayNanoInterval, error) {
	pos := f * float64(len(v)-1)
	first, second := math.Floor(pos), math.Ceil(pos)
	if first == second {
		return v[int(first)], nil
	}
	return ops.LerpInterval(v[int(first)], v[int(second)], pos-first)
}

func (a *intervalContAcc) state(mem memory.Allocator, lo, hi int) ([]arrow.Array, error) {
	off := make([]int64, hi-lo+1)
	var flat []arrow.MonthDayNanoInterval
	for i := lo; i < hi; i++ {
		flat = append(flat, a.vals[i]...)
		off[i-lo+1] = int64(len(flat))
	}
	b := array.NewMonthDayNanoIntervalBuilder(mem)
	defer b.Release()
	b.AppendValues(flat, nil)
	child := b.NewArray()
	defer child.Release()
	return []arrow.Array{makeList(mem, arrow.FixedWidthTypes.MonthDayNanoInterval, off, child)}, nil
}

func (a *intervalContAcc) heapBytes() int64 { return a.n*16 + int64(cap(a.vals))*24 }
