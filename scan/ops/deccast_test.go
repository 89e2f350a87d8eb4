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

	// Scales past 19 from integers, and a decimal's scale reduced, rounding half away from
	// zero as PostgreSQL's numeric does (trial 34 D1, D2).
	for _, c := range []struct {
		in   arrow.Array
		to   *arrow.Decimal128Type
		want string // the values, or the SQLSTATE of the refusal
	}{
		{intArray(mem, 12345, -1, 0), &arrow.Decimal128Type{Precision: 25, Scale: 20}, "[12345 -1 0]"},
		{intArray(mem, 0, 10), &arrow.Decimal128Type{Precision: 38, Scale: 38}, "22003"},
		{intArray(mem, 0), &arrow.Decimal128Type{Precision: 38, Scale: 38}, "[0]"},
		{decArray(mem, 4, 12345, -12350, 12349, 99995), &arrow.Decimal128Type{Precision: 4, Scale: 2}, "[1.23 -1.24 1.23 10]"},
		{decArray(mem, 4, 999950), &arrow.Decimal128Type{Precision: 4, Scale: 2}, "22003"},
	} {
		if _, ok := narrowDecimalCast(c.in.DataType(), c.to); !ok {
			t.Fatalf("%s to %s is not a narrow decimal cast", c.in.DataType(), c.to)
		}
		out, err := castNarrowDecimal(ctx, compute.NewDatumWithoutOwning(c.in), c.to)
		c.in.Release()
		got := ""
		if err != nil {
			var de *DataError
			if !errors.As(err, &de) {
				t.Fatalf("%s to %s: %v", c.in.DataType(), c.to, err)
			}
			got = de.Code
		} else {
			a := out.(*compute.ArrayDatum).MakeArray()
			out.Release()
			got = a.String()
			a.Release()
		}
		if got != c.want {
			t.Errorf("%s to %s: %s, want %s", c.in.DataType(), c.to, got, c.want)
		}
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

// intArray is an int64 array of vs.
func intArray(mem memory.Allocator, vs ...int64) arrow.Array {
	b := array.NewInt64Builder(mem)
	defer b.Release()
	b.AppendValues(vs, nil)
	return b.NewArray()
}

// decArray is a decimal128(38, scale) array of the unscaled values vs.
func decArray(mem memory.Allocator, scale int32, vs ...int64) arrow.Array {
	b := array.NewDecimal128Builder(mem, &arrow.Decimal128Type{Precision: 38, Scale: scale})
	defer b.Release()
	for _, v := range vs {
		b.Append(decimal128.FromI64(v))
	}
	return b.NewArray()
}
