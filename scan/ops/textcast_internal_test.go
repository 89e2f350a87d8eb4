package ops

import (
	"context"
	"errors"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flightsrv/flightsrv/internal/fuzzcount"
	"github.com/flightsrv/flightsrv/internal/pgnumfmt"
)

// textCastOne casts one text row to `to` with textCast.
func textCastOne(s string, to arrow.DataType) (arrow.Array, error) {
	sb := array.NewStringBuilder(memory.DefaultAllocator)
	sb.Append(s)
	sb.AppendNull()
	a := sb.NewArray()
	sb.Release()
	defer a.Release()
	out, err := textCast(context.Background(), compute.NewDatumWithoutOwning(a), to)
	if err != nil {
		return nil, err
	}
	defer out.Release()
	return out.(*compute.ArrayDatum).MakeArray(), nil
}

// FuzzTextCast: a row's text cast to smallint, integer, bigint, boolean, real or double
// precision is the constant's value (the binder reads the constant with pgnumfmt.IntIn,
// BoolIn and FloatIn) or its error, as a
// *DataError of the same SQLSTATE and message; the NULL row stays NULL.
func FuzzTextCast(f *testing.F) {
	for _, s := range []string{"12", "0612", " -010 ", "0x1A", "1_000", "2147483648", "yes", " oFf ", "o", "", "tr"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fuzzcount.Add()
		for _, to := range []arrow.DataType{arrow.PrimitiveTypes.Int16, arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64, arrow.FixedWidthTypes.Boolean,
			arrow.PrimitiveTypes.Float32, arrow.PrimitiveTypes.Float64} {
			var want string
			var werr error
			switch to.ID() {
			case arrow.BOOL:
				b, err := pgnumfmt.BoolIn(s)
				want, werr = strconv.FormatBool(b), err
			case arrow.FLOAT32, arrow.FLOAT64:
				bits := to.(arrow.FixedWidthDataType).BitWidth()
				v, err := pgnumfmt.FloatIn(s, bits)
				want, werr = strconv.FormatFloat(v, 'g', -1, bits), err
			default:
				v, err := pgnumfmt.IntIn(s, to.(arrow.FixedWidthDataType).BitWidth())
				want, werr = strconv.FormatInt(v, 10), err
			}
			got, err := textCastOne(s, to)
			if werr != nil {
				var de *DataError
				var pe *pgnumfmt.Error
				errors.As(werr, &pe)
				if !errors.As(err, &de) || de.Code != pe.Code || de.Msg != pe.Msg {
					t.Fatalf("%q::%s: %v, constant %v", s, to, err, werr)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%q::%s: %v, constant %s", s, to, err, want)
			}
			gotText := got.ValueStr(0)
			if f, ok := got.(*array.Float32); ok {
				gotText = strconv.FormatFloat(float64(f.Value(0)), 'g', -1, 32)
			} else if f, ok := got.(*array.Float64); ok {
				gotText = strconv.FormatFloat(f.Value(0), 'g', -1, 64)
			}
			if gotText != want || !got.IsNull(1) {
				t.Fatalf("%q::%s = %s, constant %s", s, to, got, want)
			}
			got.Release()
		}
	})
}

// BenchmarkTextToInt4 casts 1M texts of integers (decimal, without leading zeros: text both
// read alike) to int4: kernel=int4in is the cast of computed text (textCast),
// kernel=arrow-go the arrow-go cast kernel it replaced (castDatum), per row.
func BenchmarkTextToInt4(b *testing.B) {
	const rows = 1 << 20
	sb := array.NewStringBuilder(memory.DefaultAllocator)
	for i := range rows {
		sb.Append(strconv.Itoa((i*7919)%2000 - 60))
	}
	a := sb.NewArray()
	sb.Release()
	defer a.Release()
	d := compute.NewDatumWithoutOwning(a)
	for _, k := range []struct {
		name string
		cast func(context.Context) (compute.Datum, error)
	}{
		{"int4in", func(ctx context.Context) (compute.Datum, error) { return textCast(ctx, d, arrow.PrimitiveTypes.Int32) }},
		{"arrow-go", func(ctx context.Context) (compute.Datum, error) {
			return castDatum(ctx, d, compute.SafeCastOptions(arrow.PrimitiveTypes.Int32))
		}},
	} {
		b.Run("kernel="+k.name, func(b *testing.B) {
			ctx := context.Background()
			for b.Loop() {
				out, err := k.cast(ctx)
				if err != nil {
					b.Fatal(err)
				}
				out.Release()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*rows), "ns/row")
		})
	}
}
