package aggregate

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flightsrv/flightsrv/scan/ops"
)

// errDecimalSum is a sum of numerics past decimal128's 38 digits: PostgreSQL's numeric would
// hold it, flightsrv's does not (22003, as numeric's other values past 38 digits).
var errDecimalSum = &ops.DataError{Code: "22003", Msg: "numeric value out of range: flightsrv's numeric holds 38 digits"}

// maxDecimal is 10^38, the first value decimal128(38, s) cannot hold.
var maxDecimal = decimal128.GetScaleMultiplier(38)

// decSumType is the type of a sum of decimal128(p, s) values: decimal128(38, s), the widest
// of the argument's scale (Substrait's functions_arithmetic_decimal sum: decimal<38,S>;
// PostgreSQL's numeric sum is unconstrained), so that a total of more than p digits is held.
func decSumType(arg arrow.DataType) arrow.DataType {
	return &arrow.Decimal128Type{Precision: 38, Scale: arg.(*arrow.Decimal128Type).Scale}
}

// decSumAcc is sum(x) of decimal128(38, s) values (PostgreSQL's numeric sum, of the argument's
// scale): per group the exact total and how many values it summed (none: NULL). Its partial
// state is the total, decimal128(38, s), NULL for an empty group; a total of 38 digits or more
// is errDecimalSum.
type decSumAcc struct {
	dt  arrow.DataType
	sum []decimal128.Num
	n   []int64
}

func (a *decSumAcc) grow(n int) {
	a.sum = grown(a.sum, n)
	a.n = grown(a.n, n)
}

// add adds v to group g's total.
func (a *decSumAcc) add(g uint32, v decimal128.Num) error {
	s := a.sum[g].Add(v)
	// A total whose high word lies strictly between -2^61 and 2^61 is below 2^125 < 10^38 in
	// magnitude, and it is the exact sum: the total before it is below 10^38 in magnitude and
	// v below 2^127, so a sum that wrapped past ±2^127 lies within 10^38 of ∓2^127, where the
	// high word is beyond ∓3.8·10^18 (2^61 is 2.3·10^18). Only the others are checked in full.
	if h := s.HighBits(); h <= -(1<<61) || h >= 1<<61 {
		if s.Abs().Cmp(maxDecimal) >= 0 || s.Sign() != 0 && (a.sum[g].Sign() == v.Sign()) && s.Sign() != v.Sign() {
			return errDecimalSum
		}
	}
	a.sum[g] = s
	a.n[g]++
	return nil
}

func (a *decSumAcc) update(arg arrow.Array, gids []uint32, mask []bool) error {
	vals := arg.(*array.Decimal128).Values()
	for i, g := range gids {
		if mask == nil || mask[i] {
			if err := a.add(g, vals[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

func (a *decSumAcc) merge(cols []arrow.Array, gids []uint32) error {
	col := cols[0].(*array.Decimal128)
	vals := col.Values()
	for i, g := range gids {
		if col.IsValid(i) {
			if err := a.add(g, vals[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

func (a *decSumAcc) result(mem memory.Allocator, lo, hi int) (arrow.Array, error) {
	b := array.NewDecimal128Builder(mem, a.dt.(*arrow.Decimal128Type))
	defer b.Release()
	for i := lo; i < hi; i++ {
		if a.n[i] == 0 {
			b.AppendNull()
		} else {
			b.Append(a.sum[i])
		}
	}
	return b.NewArray(), nil
}

func (a *decSumAcc) state(mem memory.Allocator, lo, hi int) ([]arrow.Array, error) {
	r, err := a.result(mem, lo, hi)
	return []arrow.Array{r}, err
}

func (a *decSumAcc) heapBytes() int64 { return int64(cap(a.sum))*16 + int64(cap(a.n))*8 }
