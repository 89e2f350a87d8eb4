package aggregate

import (
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flightsrv/flightsrv/scan/ops"
)

// PostgreSQL's statistical and boolean aggregates (PostgreSQL 15, "Aggregate Functions"):
//
//	var_samp, var_pop, stddev_samp, stddev_pop   float64 input and output (the float8
//	                                             overloads); NULL for no value, and var_samp
//	                                             and stddev_samp for one
//	bool_and, bool_or                            boolean input and output; NULL for no value
//
// The variances accumulate as PostgreSQL's float8_accum does (the Youngs-Cramer algorithm: the
// count N, the sum Sx and the sum of squared differences from the mean Sxx, all float64) and
// combine partial states as its float8_combine does, so that a result is PostgreSQL's up to the
// order in which rows and fragments are combined (floating-point rounding). A finite input
// whose Sx or Sxx overflows is PostgreSQL's "value out of range: overflow" (22003); an
// infinite or NaN input makes the result NaN. avg of double precision and real reads the same
// state (PostgreSQL's float8_avg: Sx / N), so it raises the same overflow, also where Sx
// alone would not (1e200 and -1e200: Sxx overflows).

// varAcc is the state of the variance family and of avg of floats (PostgreSQL's float8_avg and
// float4 avg read float8_accum's state too: float4_accum widens each real to a double): per
// group N, Sx and Sxx. T is the input's physical type (float64; float32 for avg of reals).
type varAcc[T floatT] struct {
	fn      Func
	st      []ops.Float8State
	scratch []byte
}

var errFloatOverflow = ops.ErrFloat8Overflow

func newVarAcc(m resolved) accumulator {
	if m.argType.ID() == arrow.FLOAT32 {
		return &varAcc[float32]{fn: m.Func}
	}
	return &varAcc[float64]{fn: m.Func}
}

func (a *varAcc[T]) grow(n int) { a.st = grown(a.st, n) }

func (a *varAcc[T]) update(arg arrow.Array, gids []uint32, mask []bool) error {
	if id := arg.DataType().ID(); id != arrow.FLOAT64 && id != arrow.FLOAT32 {
		return fmt.Errorf("aggregate: %s of %s, not a float", a.fn, arg.DataType())
	}
	return a.addValues(physValues[T](arg, &a.scratch), gids, mask)
}

// accumFinite is float8_accum's arithmetic (ops.Float8State.Accum) of x into st, and whether
// the new Sx and Sxx are finite: then the state is Accum's, which neither raised nor set Sxx
// to NaN; otherwise Accum itself decides (an overflow, or an infinite or NaN input).
func accumFinite(st ops.Float8State, x float64) (ops.Float8State, bool) {
	n0 := st.N
	n := n0 + 1
	sx := st.Sx + x
	sxx := st.Sxx
	if n0 > 0 {
		tmp := x*n - sx
		sxx += tmp * tmp / (n * n0)
	}
	return ops.Float8State{N: n, Sx: sx, Sxx: sxx}, finite(sx) && finite(sxx)
}

// addValues is float8_accum of the values vals into groups gids where mask (nil: all) is true
// (also a distinct measure's values new to their groups).
func (a *varAcc[T]) addValues(vals []T, gids []uint32, mask []bool) error {
	vals = vals[:len(gids)]
	if mask != nil {
		mask = mask[:len(gids)]
	}
	if len(a.st) == 1 && a.addOne(vals, mask) { // one group: every gid is 0
		return nil
	}
	for i, g := range gids {
		if mask != nil && !mask[i] {
			continue
		}
		st := &a.st[g]
		next, ok := accumFinite(*st, float64(vals[i]))
		if !ok {
			var err error
			if next, err = st.Accum(float64(vals[i])); err != nil {
				return err
			}
		}
		*st = next
	}
	return nil
}

// addOne is float8_accum of vals (where mask is true) into the one group's state, with the
// state in registers and no check per row, and reports whether the sums it ends with are
// finite; when they are not it leaves the state as it was, for addValues to accumulate the
// values again with float8_accum's checks. Sx and Sxx never come back to finite once they are
// not (an infinite Sx stays infinite or becomes NaN, Sxx adds squares), so finite sums at the
// end mean no row raised or made Sxx NaN: the state is float8_accum's, bit for bit.
func (a *varAcc[T]) addOne(vals []T, mask []bool) bool {
	n, sx, sxx := a.st[0].N, a.st[0].Sx, a.st[0].Sxx
	i := 0
	if n == 0 { // the first value: Sxx stays 0 (or NaN for a non-finite one: not kept below)
		for ; i < len(vals) && mask != nil && !mask[i]; i++ {
		}
		if i == len(vals) {
			return true
		}
		n, sx, i = 1, sx+float64(vals[i]), i+1
	}
	for ; i < len(vals); i++ {
		if mask != nil && !mask[i] {
			continue
		}
		x := float64(vals[i])
		n0 := n
		n++
		sx += x
		tmp := x*n - sx
		sxx += tmp * tmp / (n * n0)
	}
	if !finite(sx) || !finite(sxx) {
		return false
	}
	a.st[0] = ops.Float8State{N: n, Sx: sx, Sxx: sxx}
	return true
}

// merge is float8_combine of each partial state row (Sx, N, Sxx: see state) into its group.
func (a *varAcc[T]) merge(cols []arrow.Array, gids []uint32) error {
	sx, ok1 := cols[0].(*array.Float64)
	n, ok2 := cols[1].(*array.Int64)
	sxx, ok3 := cols[2].(*array.Float64)
	if !ok1 || !ok2 || !ok3 {
		return fmt.Errorf("aggregate: %s state is %s, %s, %s, not float64, int64, float64", a.fn, cols[0].DataType(), cols[1].DataType(), cols[2].DataType())
	}
	sxs, ns, sxxs := sx.Float64Values(), n.Int64Values(), sxx.Float64Values()
	for i, g := range gids {
		if ns[i] == 0 {
			continue
		}
		st, err := combine(a.st[g], ops.Float8State{N: float64(ns[i]), Sx: sxs[i], Sxx: sxxs[i]})
		if err != nil {
			return err
		}
		a.st[g] = st
	}
	return nil
}

// combine is PostgreSQL's float8_combine: the state over the values of s1 and of s2, or
// errFloatOverflow where Sx (float8pl's check) or Sxx becomes infinite from finite sums.
func combine(s1, s2 ops.Float8State) (ops.Float8State, error) {
	switch {
	case s2.N == 0:
		return s1, nil
	case s1.N == 0:
		return s2, nil
	}
	n := s1.N + s2.N
	sx := s1.Sx + s2.Sx
	if math.IsInf(sx, 0) && !math.IsInf(s1.Sx, 0) && !math.IsInf(s2.Sx, 0) {
		return s1, errFloatOverflow
	}
	tmp := s1.Sx/s1.N - s2.Sx/s2.N
	sxx := s1.Sxx + s2.Sxx + s1.N*s2.N*tmp*tmp/n
	if math.IsInf(sxx, 0) && !math.IsInf(s1.Sxx, 0) && !math.IsInf(s2.Sxx, 0) {
		return s1, errFloatOverflow
	}
	return ops.Float8State{N: n, Sx: sx, Sxx: sxx}, nil
}

// result is float8_avg (Sx / N), float8_var_samp, _var_pop, _stddev_samp or _stddev_pop.
func (a *varAcc[T]) result(mem memory.Allocator, lo, hi int) (arrow.Array, error) {
	out := make([]float64, hi-lo)
	valid := make([]bool, hi-lo)
	for i := range out {
		n, sxx := a.st[lo+i].N, a.st[lo+i].Sxx
		var v float64
		switch a.fn {
		case Avg:
			if n == 0 {
				continue
			}
			v = a.st[lo+i].Sx / n
		case VarSamp, StddevSamp:
			if n <= 1 {
				continue
			}
			v = sxx / (n - 1)
		default:
			if n == 0 {
				continue
			}
			v = sxx / n
		}
		if a.fn == StddevSamp || a.fn == StddevPop {
			v = math.Sqrt(v)
		}
		out[i], valid[i] = v, true
	}
	return makeFixed(mem, arrow.PrimitiveTypes.Float64, out, valid), nil
}

// state is the partial state of groups lo..hi-1: Sx (NULL where N is 0), N as int64 and Sxx
// (see PartialSchema).
func (a *varAcc[T]) state(mem memory.Allocator, lo, hi int) ([]arrow.Array, error) {
	sx, sxx := make([]float64, hi-lo), make([]float64, hi-lo)
	n := make([]int64, hi-lo)
	valid := make([]bool, hi-lo)
	for i, st := range a.st[lo:hi] {
		sx[i], n[i], sxx[i], valid[i] = st.Sx, int64(st.N), st.Sxx, st.N > 0
	}
	return []arrow.Array{
		makeFixed(mem, arrow.PrimitiveTypes.Float64, sx, valid),
		makeFixed(mem, arrow.PrimitiveTypes.Int64, n, nil),
		makeFixed(mem, arrow.PrimitiveTypes.Float64, sxx, nil),
	}, nil
}

func (a *varAcc[T]) heapBytes() int64 { return int64(cap(a.st))*24 + int64(cap(a.scratch)) }

// boolAcc is bool_and or bool_or: per group whether a value was seen and the running result.
type boolAcc struct {
	or   bool
	seen []bool
	val  []bool
}

func (a *boolAcc) grow(n int) { a.seen, a.val = grown(a.seen, n), grown(a.val, n) }

func (a *boolAcc) fold(g uint32, x bool) {
	if !a.seen[g] {
		a.seen[g], a.val[g] = true, x
		return
	}
	if a.or {
		a.val[g] = a.val[g] || x
	} else {
		a.val[g] = a.val[g] && x
	}
}

func (a *boolAcc) update(arg arrow.Array, gids []uint32, mask []bool) error {
	b, ok := arg.(*array.Boolean)
	if !ok {
		return fmt.Errorf("aggregate: boolean aggregate of %s", arg.DataType())
	}
	for i, g := range gids {
		if mask == nil || mask[i] {
			a.fold(g, b.Value(i))
		}
	}
	return nil
}

func (a *boolAcc) merge(cols []arrow.Array, gids []uint32) error {
	b, ok := cols[0].(*array.Boolean)
	if !ok {
		return fmt.Errorf("aggregate: boolean aggregate state is %s", cols[0].DataType())
	}
	for i, g := range gids {
		if b.IsValid(i) {
			a.fold(g, b.Value(i))
		}
	}
	return nil
}

func (a *boolAcc) result(mem memory.Allocator, lo, hi int) (arrow.Array, error) {
	vals := make([]uint8, hi-lo)
	for i := range vals {
		if a.val[lo+i] {
			vals[i] = 1
		}
	}
	return makeFixed(mem, arrow.FixedWidthTypes.Boolean, vals, a.seen[lo:hi]), nil
}

func (a *boolAcc) state(mem memory.Allocator, lo, hi int) ([]arrow.Array, error) {
	r, err := a.result(mem, lo, hi)
	return []arrow.Array{r}, err
}

func (a *boolAcc) heapBytes() int64 { return int64(cap(a.seen) + cap(a.val)) }
