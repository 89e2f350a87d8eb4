package aggregate

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flightsrv/flightsrv/scan/ops"
)

// PostgreSQL's SQL:2003 binary aggregates (PostgreSQL 15, "Aggregate Functions for
// Statistics"): corr, covar_pop, covar_samp, regr_avgx, regr_avgy, regr_count, regr_intercept,
// regr_r2, regr_slope, regr_sxx, regr_sxy and regr_syy of double precision pairs (Y, X) — Y is
// the first argument, as in PostgreSQL. A row whose Y or X is NULL is left out. regr_count is
// bigint (0 for no pair); the others are double precision, NULL for no pair (covar_samp also
// for one), and corr, regr_r2, regr_slope and regr_intercept NULL where Sxx is 0 (a vertical
// line; corr also where Syy is 0; regr_r2 is 1 where only Syy is).
//
// The state is PostgreSQL's float8_regr_accum's: N, Sx, Sxx, Sy, Syy, Sxy accumulated with
// the Youngs-Cramer algorithm, one pair at a time, and partial states combine as its
// float8_regr_combine does, so a result is PostgreSQL's up to the order in which rows and
// fragments are combined (floating-point rounding). A finite input whose sums overflow is
// PostgreSQL's "value out of range: overflow" (22003, errFloatOverflow); an infinite or NaN
// input makes the sums that depend on it NaN.

// isRegression reports whether f is one of the binary aggregates over (Y, X) pairs.
func (f Func) isRegression() bool { return f >= Corr && f <= RegrSyy }

// regrState is float8_regr_accum's transition state of one group (ops.RegrState, which the
// Window operator shares).
type regrState = ops.RegrState

// regrKind is the window kind whose final function is fn's (the binary aggregates are
// listed in the same order in both).
func regrKind(fn Func) ops.WindowKind { return ops.Corr + ops.WindowKind(fn-Corr) }

// regrAcc is one of the binary aggregates: float8_regr_accum's state per group.
type regrAcc struct {
	fn Func
	st []regrState
}

func (a *regrAcc) grow(n int) { a.st = grown(a.st, n) }

// update is never called: the reader gives both arguments to updatePair.
func (a *regrAcc) update(arrow.Array, []uint32, []bool) error {
	return fmt.Errorf("aggregate: %s takes two arguments", a.fn)
}

// updatePair accumulates the pairs (y[i], x[i]) of the rows whose mask is true (nil: all)
// into groups gids; the mask leaves out the rows where y or x is NULL (pairMask).
func (a *regrAcc) updatePair(y, x arrow.Array, gids []uint32, mask []bool) error {
	ys, ok1 := y.(*array.Float64)
	xs, ok2 := x.(*array.Float64)
	if !ok1 || !ok2 {
		return fmt.Errorf("aggregate: %s of %s and %s, not float64", a.fn, y.DataType(), x.DataType())
	}
	yv, xv := ys.Float64Values()[:len(gids)], xs.Float64Values()[:len(gids)]
	for i, g := range gids {
		if mask != nil && !mask[i] {
			continue
		}
		st, err := a.st[g].Accum(yv[i], xv[i])
		if err != nil {
			return err
		}
		a.st[g] = st
	}
	return nil
}

// merge is float8_regr_combine of each partial state row (see stateFields) into its group.
func (a *regrAcc) merge(cols []arrow.Array, gids []uint32) error {
	n, ok := cols[0].(*array.Int64)
	if !ok {
		return fmt.Errorf("aggregate: %s state count is %s, not int64", a.fn, cols[0].DataType())
	}
	var sums [5][]float64
	for k := range sums {
		c, ok := cols[k+1].(*array.Float64)
		if !ok {
			return fmt.Errorf("aggregate: %s state column %d is %s, not float64", a.fn, k+1, cols[k+1].DataType())
		}
		sums[k] = c.Float64Values()
	}
	ns := n.Int64Values()
	for i, g := range gids {
		if ns[i] == 0 {
			continue
		}
		o := regrState{N: float64(ns[i]), Sx: sums[0][i], Sxx: sums[1][i], Sy: sums[2][i], Syy: sums[3][i], Sxy: sums[4][i]}
		st, err := a.st[g].Combine(o)
		if err != nil {
			return err
		}
		a.st[g] = st
	}
	return nil
}

func (a *regrAcc) result(mem memory.Allocator, lo, hi int) (arrow.Array, error) {
	if a.fn == RegrCount {
		out := make([]int64, hi-lo)
		for i, st := range a.st[lo:hi] {
			out[i] = int64(st.N)
		}
		return makeFixed(mem, arrow.PrimitiveTypes.Int64, out, nil), nil
	}
	out := make([]float64, hi-lo)
	valid := make([]bool, hi-lo)
	for i, st := range a.st[lo:hi] {
		out[i], valid[i] = st.Final(regrKind(a.fn))
	}
	return makeFixed(mem, arrow.PrimitiveTypes.Float64, out, valid), nil
}

// state is the partial state of groups lo..hi-1: N as int64, then Sx, Sxx, Sy, Syy, Sxy.
func (a *regrAcc) state(mem memory.Allocator, lo, hi int) ([]arrow.Array, error) {
	n := make([]int64, hi-lo)
	var sums [5][]float64
	for k := range sums {
		sums[k] = make([]float64, hi-lo)
	}
	for i, st := range a.st[lo:hi] {
		n[i] = int64(st.N)
		sums[0][i], sums[1][i], sums[2][i], sums[3][i], sums[4][i] = st.Sx, st.Sxx, st.Sy, st.Syy, st.Sxy
	}
	out := []arrow.Array{makeFixed(mem, arrow.PrimitiveTypes.Int64, n, nil)}
	for _, s := range sums {
		out = append(out, makeFixed(mem, arrow.PrimitiveTypes.Float64, s, nil))
	}
	return out, nil
}

func (a *regrAcc) heapBytes() int64 { return int64(cap(a.st)) * 48 }

// regrStateFields are the partial state of a binary aggregate named name: "name.n" (int64),
// then "name.sx", "name.sxx", "name.sy", "name.syy" and "name.sxy" (float64), none nullable.
func regrStateFields(name string) []arrow.Field {
	fs := []arrow.Field{{Name: name + ".n", Type: arrow.PrimitiveTypes.Int64}}
	for _, s := range []string{"sx", "sxx", "sy", "syy", "sxy"} {
		fs = append(fs, arrow.Field{Name: name + "." + s, Type: arrow.PrimitiveTypes.Float64})
	}
	return fs
}

// pairMask returns, in buf, which rows a binary aggregate aggregates: those rowMask admits
// (filter true, y not NULL) whose x is not NULL too; nil when every row counts.
func pairMask(y, x arrow.Array, filter *array.Boolean, buf []bool) []bool {
	mask := rowMask(y, filter, buf)
	if x.NullN() == 0 {
		return mask
	}
	bm, off := validity(x)
	if mask == nil {
		mask = sized(buf, x.Len())
		expandBits(bm, off, mask)
		return mask
	}
	andBits(bm, off, mask)
	return mask
}
