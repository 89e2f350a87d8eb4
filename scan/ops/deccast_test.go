package ops

import (
	"context"
	"errors"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/arrow/scalar"
)

// TestCastToNarrowDecimal: integers and decimals cast to a decimal of fewer than 38 digits
// convert whenever the values fit (arrow-go refuses int32 to decimal(10,2) for any value),
// keep NULLs, carry the declared type, and a value past the precision is 22003; a scalar
// casts as an array does.
func TestCastToNarrowDecimal(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx := compute.WithAllocator(context.Background(), mem)
	to := &arrow.Decimal128Type{Precision: 10, Scale: 2}
	b := array.NewInt32Builder(mem)
	b.AppendValues([]int32{10, -99999999, 0}, nil)
	b.AppendNull()
	in := b.NewArray()
	b.Release()
	defer in.Release()
	if _, ok := narrowDecimalCast(in.DataType(), to); !ok {
		t.Fatal("int32 to decimal(10,2) is not a narrow decimal cast")
	}
	out, err := castNarrowDecimal(ctx, compute.NewDatumWithoutOwning(in), to)
	if err != nil {
		t.Fatal(err)
	}
	a := out.(*compute.ArrayDatum).MakeArray()
	out.Release()
	dec := a.(*array.Decimal128)
	if !arrow.TypeEqual(dec.DataType(), to) || dec.Value(0) != decimal128.FromI64(1000) || dec.Value(1) != decimal128.FromI64(-9999999900) ||
		dec.Value(2) != decimal128.FromI64(0) || dec.IsValid(3) {
		t.Fatalf("got %s %v", dec.DataType(), dec)
	}
	a.Release()

	big := array.NewInt64Builder(mem)
	big.AppendValues([]int64{1, 100000000}, nil) // 100000000.00 needs 11 digits
	over := big.NewArray()
	big.Release()
	defer over.Release()
	_, err = castNarrowDecimal(ctx, compute.NewDatumWithoutOwning(over), to)
	var de *DataError
	if !errors.As(err, &de) || de.Code != "22003" {
		t.Fatalf("a value past the precision: %v, want 22003", err)
	}

	s, err := castNarrowDecimal(ctx, compute.NewDatum(scalar.NewInt64Scalar(7)), to)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Release()
	if v, ok := s.(*compute.ScalarDatum).Value.(*scalar.Decimal128); !ok || !arrow.TypeEqual(v.Type, to) || v.Value != decimal128.FromI64(700) {
		t.Fatalf("scalar: %v", s)
	}
}
