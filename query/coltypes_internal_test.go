package query

import (
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/flightsrv/flightsrv/substrait"
)

// TestSameColumnTypes: a client plan declaring an output type its expression does not
// compute (a decimal sum declared int64: trial 33 G5) is an invalid plan naming the column and
// both types; equal types pass.
func TestSameColumnTypes(t *testing.T) {
	declared := arrow.NewSchema([]arrow.Field{{Name: "n", Type: arrow.PrimitiveTypes.Int64}, {Name: "s", Type: arrow.PrimitiveTypes.Int64}}, nil)
	computed := arrow.NewSchema([]arrow.Field{{Name: "n", Type: arrow.PrimitiveTypes.Int64}, {Name: "s", Type: &arrow.Decimal128Type{Precision: 38, Scale: 10}}}, nil)
	err := sameColumnTypes(declared, computed)
	code, ok := substrait.CodeOf(err)
	if !ok || code != substrait.InvalidArgument || !strings.Contains(err.Error(), "output column 2 is declared int64, but its expression computes decimal(38, 10)") {
		t.Fatalf("sameColumnTypes = %v", err)
	}
	if err := sameColumnTypes(declared, declared); err != nil {
		t.Fatalf("equal schemas: %v", err)
	}
}
