package ops

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/scalar"
)

// narrowDecimalCast reports whether a cast from `from` to `to` goes through castNarrowDecimal:
// an integer or a decimal128 to a decimal128 of fewer than 38 digits whose scale leaves room
// for any int64 (at most 19).
func narrowDecimalCast(from, to arrow.DataType) (*arrow.Decimal128Type, bool) {
	d, ok := to.(*arrow.Decimal128Type)
	if !ok || d.Precision >= 38 || d.Scale < 0 || d.Scale > 19 {
		return nil, false
	}
	return d, arrow.IsInteger(from.ID()) || from.ID() == arrow.DECIMAL128
}

// castNarrowDecimal casts d (an integer or decimal128 array or scalar) to the decimal128 to
// as PostgreSQL casts to numeric(p,s): every value that fits p digits converts, one that does
// not is 22003 "numeric field overflow". arrow-go's cast instead refuses every integer type
// whose largest value would not fit (int32 to decimal(10,2): "precision is not great enough")
// whatever the values, which failed client plans' casts (DataFusion's CAST(x AS DECIMAL(10,
// 2))) as internal errors. The cast goes through decimal128(38, s), which holds every int64
// at scale s ≤ 19, then each value is checked and the result relabelled, sharing its buffers.
func castNarrowDecimal(ctx context.Context, d compute.Datum, to *arrow.Decimal128Type) (compute.Datum, error) {
	if sd, ok := d.(*compute.ScalarDatum); ok {
		arr, err := scalar.MakeArrayFromScalar(sd.Value, 1, compute.GetAllocator(ctx))
		if err != nil {
			return nil, err
		}
		defer arr.Release()
		out, err := castNarrowDecimal(ctx, compute.NewDatumWithoutOwning(arr), to)
		if err != nil {
			return nil, err
		}
		defer out.Release()
		a := out.(*compute.ArrayDatum).MakeArray()
		defer a.Release()
		s, err := scalar.GetScalar(a, 0)
		if err != nil {
			return nil, err
		}
		return compute.NewDatum(s), nil
	}
	ad, ok := d.(*compute.ArrayDatum)
	if !ok {
		return nil, fmt.Errorf("ops: cast to %s of a %s", to, d.Kind())
	}
	wide := &arrow.Decimal128Type{Precision: 38, Scale: to.Scale}
	out, err := castDatum(ctx, d, compute.SafeCastOptions(wide))
	if err != nil {
		return nil, castError(err, ad.Type(), to)
	}
	defer out.Release()
	a := out.(*compute.ArrayDatum).MakeArray()
	defer a.Release()
	fit, err := FitDecimal(a, to)
	if err != nil {
		return nil, err
	}
	defer fit.Release()
	return compute.NewDatum(fit), nil
}

// FitDecimal returns a (a decimal128 array of to's scale) typed to, sharing its buffers, after
// checking that every value fits to's precision: one that does not is PostgreSQL's 22003
// "numeric field overflow". The caller releases the result.
func FitDecimal(a arrow.Array, to *arrow.Decimal128Type) (arrow.Array, error) {
	dec := a.(*array.Decimal128)
	limit := decimal128.GetScaleMultiplier(int(to.Precision))
	for i, v := range dec.Values() {
		if dec.IsValid(i) && v.Abs().Cmp(limit) >= 0 {
			return nil, &DataError{Code: sqlstateOutOfRange, Msg: fmt.Sprintf("numeric field overflow: a field with precision %d, scale %d must round to an absolute value less than 10^%d", to.Precision, to.Scale, to.Precision-to.Scale)}
		}
	}
	data := a.Data()
	relabelled := array.NewData(to, data.Len(), data.Buffers(), nil, data.NullN(), data.Offset())
	defer relabelled.Release()
	return array.MakeFromData(relabelled), nil
}

// datumType is d's type (arrow.Null for a datum without one).
func datumType(d compute.Datum) arrow.DataType {
	switch v := d.(type) {
	case compute.ArrayLikeDatum:
		return v.Type()
	case *compute.ScalarDatum:
		return v.Type()
	}
	return arrow.Null
}
