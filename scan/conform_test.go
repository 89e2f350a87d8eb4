package scan_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flightsrv/flightsrv/scan"
	"github.com/flightsrv/flightsrv/scan/ops"
)

// TestConformDecimalPrecision: a decimal column conforms to a declared decimal of another
// precision (a client plan's sum declared decimal<20,2> where the executor's is
// decimal<38,2>) or scale (rounded half away from zero), each value checked against the
// declared precision: one past it fails the stream with 22003; another type stays an
// internal error.
func TestConformDecimalPrecision(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	computed := arrow.NewSchema([]arrow.Field{{Name: "s", Type: &arrow.Decimal128Type{Precision: 38, Scale: 2}, Nullable: true}}, nil)
	read := func(declared arrow.DataType) (string, error) {
		rec, _, err := array.RecordFromJSON(mem, computed, strings.NewReader(`[{"s": "12345.67"}, {"s": null}, {"s": "-999.99"}]`))
		if err != nil {
			t.Fatal(err)
		}
		in, err := array.NewRecordReader(computed, []arrow.RecordBatch{rec})
		rec.Release()
		if err != nil {
			t.Fatal(err)
		}
		r := scan.Conform(in, arrow.NewSchema([]arrow.Field{{Name: "s", Type: declared, Nullable: true}}, nil))
		defer r.Release()
		var got string
		for r.Next() {
			b := r.RecordBatch()
			if !arrow.TypeEqual(b.Column(0).DataType(), declared) {
				t.Fatalf("column typed %s, declared %s", b.Column(0).DataType(), declared)
			}
			got += b.Column(0).String()
		}
		return got, r.Err()
	}
	if got, err := read(&arrow.Decimal128Type{Precision: 20, Scale: 2}); err != nil || got != "[12345.67 (null) -999.99]" {
		t.Fatalf("decimal(20,2): %q, %v", got, err)
	}
	_, err := read(&arrow.Decimal128Type{Precision: 6, Scale: 2})
	var de *ops.DataError
	if !errors.As(err, &de) || de.SQLState() != "22003" {
		t.Fatalf("12345.67 as decimal(6,2): %v, want 22003", err)
	}
	// Another scale: rescaled, rounding half away from zero (a client plan's quotient
	// declared decimal<14,6> where the executor computes more digits).
	if got, err := read(&arrow.Decimal128Type{Precision: 20, Scale: 1}); err != nil || got != "[12345.7 (null) -1000]" {
		t.Fatalf("decimal(20,1): %q, %v", got, err)
	}
	if _, err := read(&arrow.Decimal128Type{Precision: 5, Scale: 1}); !errors.As(err, &de) || de.SQLState() != "22003" {
		t.Fatalf("12345.67 as decimal(5,1): %v, want 22003", err)
	}
	if _, err := read(arrow.PrimitiveTypes.Int64); err == nil || errors.As(err, &de) {
		t.Fatalf("another type: %v, want an internal error", err)
	}
}
