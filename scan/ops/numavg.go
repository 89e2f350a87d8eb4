package ops

import (
	"fmt"
	"math/big"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/cockroachdb/apd/v3"
)

// AvgScale is the scale of avg over integers answered as numeric, as an aggregate
// (scan/aggregate's Measure.Numeric) or over a window: decimal128(38, AvgScale). Each value is
// PostgreSQL's: the exact sum over the count as numeric_div computes it (NumericQuotient:
// rounded half away from zero at the scale PostgreSQL chooses, 16 significant digits or more),
// written with zeros up to AvgScale, as one decimal column needs a scale while PostgreSQL's
// display scale varies with the value. That scale is at most 20 for fewer than 10,000 values;
// a quotient with more digits after the point that are not zeros (an average below 0.0001 in
// magnitude over 10,000 values or more), or with 19 integer digits or more, is ErrAvgScale
// rather than rounded.
const AvgScale = 20

// ErrAvgScale is an average of integers that decimal128(38, AvgScale) cannot hold exactly.
var ErrAvgScale = &DataError{Code: "0A000", Msg: fmt.Sprintf("avg of integers whose exact value (as PostgreSQL computes it) "+
	"needs more than %d digits after the point or 18 before it is not supported: cast the argument to double precision", AvgScale)}

// NumericAvg is PostgreSQL's avg of n > 0 integers summing to sum (numeric_div(sum, n)) at
// AvgScale, or ErrAvgScale.
func NumericAvg(sum *big.Int, n int64) (decimal128.Num, error) {
	x := apd.NewWithBigInt(new(apd.BigInt).SetMathBigInt(sum), 0)
	q := NumericQuotient(x, apd.New(n, 0), 0, 0)
	var r apd.Decimal
	ctx := apd.BaseContext.WithPrecision(100)
	if _, err := ctx.Quantize(&r, q, -AvgScale); err != nil || r.Cmp(q) != 0 || r.NumDigits() > 38 {
		return decimal128.Num{}, ErrAvgScale
	}
	c := r.Coeff.MathBigInt()
	if r.Negative {
		c.Neg(c)
	}
	return decimal128.FromBigInt(c), nil
}
