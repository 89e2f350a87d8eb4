package scan

import (
	"errors"
	"strings"
	"testing"

	"github.com/substrait-io/substrait-go/v8/extensions"
	"github.com/substrait-io/substrait-go/v8/plan"
	"github.com/substrait-io/substrait-go/v8/types"
)

// TestAggregateWithoutDeclarationRefused: substrait-go v8.1.1 decodes an aggregate function
// whose anchor names no single variant (DataFusion's "count", two variants in
// functions_aggregate_generic) into one without its declaration; aggregateSpec refuses it
// naming the measure instead of dereferencing nil (issue 16's crash).
//
// Not parallel: the scan tests' goroutine checks count any goroutine with a scan frame, a
// paused parallel test of this package included.
func TestAggregateWithoutDeclarationRefused(t *testing.T) {
	b := plan.NewBuilderDefault()
	read := b.NamedScan([]string{"t"}, types.NamedStruct{Names: []string{"x"}, Struct: types.StructType{
		Nullability: types.NullabilityRequired, Types: []types.Type{&types.Int64Type{Nullability: types.NullabilityRequired}}}})
	count, err := b.AggregateFn(extensions.SubstraitDefaultURNPrefix+"functions_aggregate_generic", "count", nil)
	if err != nil {
		t.Fatal(err)
	}
	agg, err := b.AggregateColumns(read, []plan.AggRelMeasure{b.Measure(count, nil)})
	if err != nil {
		t.Fatal(err)
	}
	p, err := b.Plan(agg, []string{"n"})
	if err != nil {
		t.Fatal(err)
	}
	pb, err := p.ToProto()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range pb.Extensions {
		d.GetExtensionFunction().Name = "count" // the simple name: ambiguous
	}
	decoded, err := plan.FromProto(pb, extensions.GetDefaultCollectionWithNoError())
	if err != nil {
		t.Fatal(err)
	}
	measures := decoded.GetRoots()[0].Input().(*plan.AggregateRel).Measures()
	_, _, err = aggregateSpec(nil, measures, nil)
	if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "aggregate measure 0 resolves to no declaration") {
		t.Fatalf("got %v", err)
	}
}

// TestHotBatchSize: row-aggregate requests spread a query's buckets over about four requests
// an asker, at most hotBatch buckets each, at least one.
func TestHotBatchSize(t *testing.T) {
	for _, c := range []struct{ units, fanout, want int }{
		{1332, 4, 64}, {300, 4, 19}, {6, 4, 1}, {0, 4, 1}, {17, 1, 5}, {10, 0, 3}, {100000, 16, 64},
	} {
		if got := hotBatchSize(c.units, c.fanout); got != c.want {
			t.Errorf("hotBatchSize(%d, %d) = %d, want %d", c.units, c.fanout, got, c.want)
		}
	}
}
