package ops

import "math"

// RegrState is PostgreSQL's float8_regr_accum transition state of the SQL:2003 binary
// aggregates (PostgreSQL 15, "Aggregate Functions for Statistics": corr, covar_pop,
// covar_samp and the regr_ family) over (Y, X) pairs of double precision: the count N, the
// sums Sx and Sy and the sums of squared (cross) differences from the means Sxx, Syy and Sxy,
// accumulated one pair at a time with the Youngs-Cramer algorithm. The zero value is the state
// over no pair. scan/aggregate combines partial states per group; the Window operator
// accumulates each frame as PostgreSQL's window aggregation does (restarting where the
// frame's head moves: float8_regr_accum has no inverse).
type RegrState struct{ N, Sx, Sxx, Sy, Syy, Sxy float64 }

// Accum is float8_regr_accum: the state after the pair (y, x), or ErrFloat8Overflow where a
// finite input makes a sum infinite.
func (s RegrState) Accum(y, x float64) (RegrState, error) {
	n0 := s.N
	t := RegrState{N: n0 + 1, Sx: s.Sx + x, Sxx: s.Sxx, Sy: s.Sy + y, Syy: s.Syy, Sxy: s.Sxy}
	if n0 > 0 {
		tmpX := x*t.N - t.Sx
		tmpY := y*t.N - t.Sy
		scale := 1.0 / (t.N * n0)
		t.Sxx += tmpX * tmpX * scale
		t.Syy += tmpY * tmpY * scale
		t.Sxy += tmpX * tmpY * scale
		if math.IsInf(t.Sx, 0) || math.IsInf(t.Sxx, 0) || math.IsInf(t.Sy, 0) || math.IsInf(t.Syy, 0) || math.IsInf(t.Sxy, 0) {
			if (math.IsInf(t.Sx, 0) || math.IsInf(t.Sxx, 0)) && !math.IsInf(s.Sx, 0) && !math.IsInf(x, 0) ||
				(math.IsInf(t.Sy, 0) || math.IsInf(t.Syy, 0)) && !math.IsInf(s.Sy, 0) && !math.IsInf(y, 0) ||
				math.IsInf(t.Sxy, 0) && !math.IsInf(s.Sx, 0) && !math.IsInf(x, 0) && !math.IsInf(s.Sy, 0) && !math.IsInf(y, 0) {
				return s, ErrFloat8Overflow
			}
			if math.IsInf(t.Sxx, 0) {
				t.Sxx = math.NaN()
			}
			if math.IsInf(t.Syy, 0) {
				t.Syy = math.NaN()
			}
			if math.IsInf(t.Sxy, 0) {
				t.Sxy = math.NaN()
			}
		}
		return t, nil
	}
	// The first pair: an infinite or NaN value makes the sums depending on it NaN, lest one
	// pair report a variance of zero.
	if math.IsNaN(x) || math.IsInf(x, 0) {
		t.Sxx, t.Sxy = math.NaN(), math.NaN()
	}
	if math.IsNaN(y) || math.IsInf(y, 0) {
		t.Syy, t.Sxy = math.NaN(), math.NaN()
	}
	return t, nil
}

// Combine is float8_regr_combine: the state over the pairs of s and of o.
func (s RegrState) Combine(o RegrState) (RegrState, error) {
	switch {
	case s.N == 0:
		return o, nil
	case o.N == 0:
		return s, nil
	}
	n := s.N + o.N
	t := RegrState{N: n, Sx: s.Sx + o.Sx, Sy: s.Sy + o.Sy}
	if math.IsInf(t.Sx, 0) && !math.IsInf(s.Sx, 0) && !math.IsInf(o.Sx, 0) || math.IsInf(t.Sy, 0) && !math.IsInf(s.Sy, 0) && !math.IsInf(o.Sy, 0) {
		return s, ErrFloat8Overflow // float8pl's check
	}
	tmp1 := s.Sx/s.N - o.Sx/o.N
	t.Sxx = s.Sxx + o.Sxx + s.N*o.N*tmp1*tmp1/n
	tmp2 := s.Sy/s.N - o.Sy/o.N
	t.Syy = s.Syy + o.Syy + s.N*o.N*tmp2*tmp2/n
	t.Sxy = s.Sxy + o.Sxy + s.N*o.N*tmp1*tmp2/n
	if math.IsInf(t.Sxx, 0) && !math.IsInf(s.Sxx, 0) && !math.IsInf(o.Sxx, 0) || math.IsInf(t.Syy, 0) && !math.IsInf(s.Syy, 0) && !math.IsInf(o.Syy, 0) ||
		math.IsInf(t.Sxy, 0) && !math.IsInf(s.Sxy, 0) && !math.IsInf(o.Sxy, 0) {
		return s, ErrFloat8Overflow
	}
	return t, nil
}

// Final is the final function of fn (Corr … RegrSyy) over the state: float8_corr, float8_covar_pop,
// float8_covar_samp, float8_regr_avgx, _avgy, _intercept, _r2, _slope, _sxx, _sxy or _syy
// (regr_count's count is the state's N); ok false for NULL.
func (s RegrState) Final(fn WindowKind) (float64, bool) {
	if s.N < 1 {
		return 0, false
	}
	switch fn {
	case Corr:
		if s.Sxx == 0 || s.Syy == 0 {
			return 0, false
		}
		return s.Sxy / math.Sqrt(s.Sxx*s.Syy), true
	case CovarPop:
		return s.Sxy / s.N, true
	case CovarSamp:
		if s.N < 2 {
			return 0, false
		}
		return s.Sxy / (s.N - 1), true
	case RegrAvgX:
		return s.Sx / s.N, true
	case RegrAvgY:
		return s.Sy / s.N, true
	case RegrIntercept:
		if s.Sxx == 0 {
			return 0, false
		}
		return (s.Sy - s.Sx*s.Sxy/s.Sxx) / s.N, true
	case RegrR2:
		if s.Sxx == 0 {
			return 0, false
		}
		if s.Syy == 0 {
			return 1, true
		}
		return (s.Sxy * s.Sxy) / (s.Sxx * s.Syy), true
	case RegrSlope:
		if s.Sxx == 0 {
			return 0, false
		}
		return s.Sxy / s.Sxx, true
	case RegrSxx:
		return s.Sxx, true
	case RegrSxy:
		return s.Sxy, true
	case RegrSyy:
		return s.Syy, true
	}
	return 0, false
}
