package aggregate

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/cockroachdb/apd/v3"

	"github.com/flightsrv/flightsrv/scan/ops"
)

// AvgScale is the scale of avg over integers answered as numeric (Measure.Numeric): the
// output is decimal128(38, AvgScale). Each value is PostgreSQL's: the exact sum over the count
// as numeric_div computes it (ops.NumericQuotient: rounded half away from zero at the scale
// PostgreSQL chooses, 16 significant digits or more), written with zeros up to AvgScale, as one
// decimal column needs a scale while PostgreSQL's display scale varies with the value. That
// scale is at most 20 for any group of fewer than 10,000 values; a quotient with more digits
// after the point that are not zeros (an average below 0.0001 in magnitude over 10,000 values
// or more), or with 19 integer digits or more, is errAvgScale rather than rounded.
const AvgScale = 20

// errAvgScale is an average of integers that decimal128(38, AvgScale) cannot hold exactly.
var errAvgScale = &ops.DataError{Code: "0A000", Msg: fmt.Sprintf("avg of integers whose exact value (as PostgreSQL computes it) "+
	"needs more than %d digits after the point or 18 before it is not supported: cast the argument to double precision", AvgScale)}

// avgType is the output type of a numeric avg of integers.
var avgType = &arrow.Decimal128Type{Precision: 38, Scale: AvgScale}

// numericAvg is avg(x) of integers answered as numeric (Measure.Numeric); the inner
// accumulator is the avg's sumAcc (or a distinct one over it), whose partial state, the exact
// sums as decimal128(38, 0) and the counts, is what the result is computed from.
type numericAvg struct{ accumulator }

func (a *numericAvg) result(mem memory.Allocator, lo, hi int) (arrow.Array, error) {
	return avgOfState(a.accumulator, mem, lo, hi)
}

// avgOfState is the numeric avg of groups lo..hi-1 of a, an avg sumAcc over integers.
func avgOfState(a accumulator, mem memory.Allocator, lo, hi int) (arrow.Array, error) {
	st, err := a.state(mem, lo, hi)
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, c := range st {
			c.Release()
		}
	}()
	sums, ok1 := st[0].(*array.Decimal128)
	counts, ok2 := st[1].(*array.Int64)
	if len(st) != 2 || !ok1 || !ok2 {
		return nil, fmt.Errorf("aggregate: avg state is %v, not decimal128 sums and int64 counts", st)
	}
	b := array.NewDecimal128Builder(mem, avgType)
	defer b.Release()
	b.Reserve(hi - lo)
	for i := range hi - lo {
		n := counts.Value(i)
		if n == 0 || sums.IsNull(i) {
			b.AppendNull()
			continue
		}
		v, err := numericAvgValue(sums.Value(i), n)
		if err != nil {
			return nil, err
		}
		b.Append(v)
	}
	return b.NewArray(), nil
}

// numericAvgValue is PostgreSQL's avg of n integers summing to sum (numeric_div(sum, n)) at
// AvgScale, or errAvgScale.
func numericAvgValue(sum decimal128.Num, n int64) (decimal128.Num, error) {
	bi := sum.BigInt()
	x := apd.NewWithBigInt(new(apd.BigInt).SetMathBigInt(bi), 0)
	q := ops.NumericQuotient(x, apd.New(n, 0), 0, 0)
	var r apd.Decimal
	ctx := apd.BaseContext.WithPrecision(100)
	if _, err := ctx.Quantize(&r, q, -AvgScale); err != nil || r.Cmp(q) != 0 || r.NumDigits() > 38 {
		return decimal128.Num{}, errAvgScale
	}
	c := r.Coeff.MathBigInt()
	if r.Negative {
		c.Neg(c)
	}
	return decimal128.FromBigInt(c), nil
}
