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
// infinite or NaN input makes the result NaN.

// varAcc is the state of the variance family: per group N, Sx and Sxx.
type varAcc struct {
	fn         Func
	n, sx, sxx []float64
}

var errFloatOverflow = ops.ErrFloat8Overflow

func (a *varAcc) grow(n int) {
	a.n, a.sx, a.sxx = grown(a.n, n), grown(a.sx, n), grown(a.sxx, n)
}

// add is float8_accum for one value of group g (ops.Float8State.Accum).
func (a *varAcc) add(g uint32, x float64) error {
	st, err := ops.Float8State{N: a.n[g], Sx: a.sx[g], Sxx: a.sxx[g]}.Accum(x)
	a.n[g], a.sx[g], a.sxx[g] = st.N, st.Sx, st.Sxx
	return err
}

func (a *varAcc) update(arg arrow.Array, gids []uint32, mask []bool) error {
	f, ok := arg.(*array.Float64)
	if !ok {
		return fmt.Errorf("aggregate: %s of %s, not float64", a.fn, arg.DataType())
	}
	return a.addValues(f.Float64Values(), gids, mask)
}

// addValues is update of the values vals (a distinct measure's values new to their groups).
func (a *varAcc) addValues(vals []float64, gids []uint32, mask []bool) error {
	for i, g := range gids {
		if mask != nil && !mask[i] {
			continue
		}
		if err := a.add(g, vals[i]); err != nil {
			return err
		}
	}
	return nil
}

// merge is float8_combine of each partial state row into its group.
func (a *varAcc) merge(cols []arrow.Array, gids []uint32) error {
	var st [3][]float64
	for k := range st {
		c, ok := cols[k].(*array.Float64)
		if !ok {
			return fmt.Errorf("aggregate: %s state is %s, not float64", a.fn, cols[k].DataType())
		}
		st[k] = c.Float64Values()
	}
	for i, g := range gids {
		n2, sx2, sxx2 := st[0][i], st[1][i], st[2][i]
		n1, sx1, sxx1 := a.n[g], a.sx[g], a.sxx[g]
		switch {
		case n2 == 0:
			continue
		case n1 == 0:
			a.n[g], a.sx[g], a.sxx[g] = n2, sx2, sxx2
			continue
		}
		n := n1 + n2
		sx := sx1 + sx2
		if math.IsInf(sx, 0) && !math.IsInf(sx1, 0) && !math.IsInf(sx2, 0) {
			return errFloatOverflow
		}
		tmp := sx1/n1 - sx2/n2
		sxx := sxx1 + sxx2 + n1*n2*tmp*tmp/n
		if math.IsInf(sxx, 0) && !math.IsInf(sxx1, 0) && !math.IsInf(sxx2, 0) {
			return errFloatOverflow
		}
		a.n[g], a.sx[g], a.sxx[g] = n, sx, sxx
	}
	return nil
}

// result is float8_var_samp, _var_pop, _stddev_samp or _stddev_pop.
func (a *varAcc) result(mem memory.Allocator, lo, hi int) (arrow.Array, error) {
	out := make([]float64, hi-lo)
	valid := make([]bool, hi-lo)
	for i := range out {
		n, sxx := a.n[lo+i], a.sxx[lo+i]
		var v float64
		switch a.fn {
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

func (a *varAcc) state(mem memory.Allocator, lo, hi int) ([]arrow.Array, error) {
	return []arrow.Array{
		makeFixed(mem, arrow.PrimitiveTypes.Float64, a.n[lo:hi], nil),
		makeFixed(mem, arrow.PrimitiveTypes.Float64, a.sx[lo:hi], nil),
		makeFixed(mem, arrow.PrimitiveTypes.Float64, a.sxx[lo:hi], nil),
	}, nil
}

func (a *varAcc) heapBytes() int64 { return int64(cap(a.n)+cap(a.sx)+cap(a.sxx)) * 8 }

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
