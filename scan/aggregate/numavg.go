package aggregate

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flightsrv/flightsrv/scan/ops"
)

// AvgScale is the scale of avg over integers answered as numeric (Measure.Numeric): the
// output is decimal128(38, AvgScale), each value PostgreSQL's (ops.NumericAvg).
const AvgScale = ops.AvgScale

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
		v, err := ops.NumericAvg(sums.Value(i).BigInt(), n)
		if err != nil {
			return nil, err
		}
		b.Append(v)
	}
	return b.NewArray(), nil
}
