package aggregate_test

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flightsrv/flightsrv/scan/aggregate"
)

// TestSortKeysPartialFinal: string_agg and array_agg ordered by another column (Keys), and
// mode and percentile_disc of text, answer the same through Single and through Partial over two fragments then
// Final (the keys travel in the partial state), and the orders PostgreSQL's ORDER BY k DESC
// and ORDER BY k NULLS FIRST give (written out by hand).
func TestSortKeysPartialFinal(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{{Name: "g", Type: arrow.PrimitiveTypes.Int64}, {Name: "x", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "k", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)
	b := array.NewRecordBuilder(memory.NewGoAllocator(), schema)
	defer b.Release()
	rows := []struct {
		g  int64
		x  string
		xn bool
		k  int64
		kn bool
	}{{1, "a", false, 3, false}, {1, "b", false, 0, true}, {2, "c", false, 5, false}, {1, "", true, 1, false}, {1, "d", false, 2, false}, {2, "c", false, 4, false}, {2, "e", false, 6, false}}
	for _, r := range rows {
		b.Field(0).(*array.Int64Builder).Append(r.g)
		if r.xn {
			b.Field(1).AppendNull()
		} else {
			b.Field(1).(*array.StringBuilder).Append(r.x)
		}
		if r.kn {
			b.Field(2).AppendNull()
		} else {
			b.Field(2).(*array.Int64Builder).Append(r.k)
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	spec := aggregate.Spec{Groups: []int{0}, Measures: []aggregate.Measure{
		{Func: aggregate.StringAgg, Arg: 1, Filter: -1, Name: "s", Separator: ",", Keys: []aggregate.SortKey{{Arg: 2, Descending: true, NullsFirst: true}}},
		{Func: aggregate.ArrayAgg, Arg: 1, Filter: -1, Name: "a", Keys: []aggregate.SortKey{{Arg: 2, NullsFirst: true}}},
		{Func: aggregate.ModeOf, Arg: 1, Filter: -1, Name: "m"},
		{Func: aggregate.PercentileDisc, Arg: 1, Filter: -1, Name: "p", Fraction: 0.5}, // the ceil(0.5·3) = 2nd value
	}}
	want := map[int64][4]string{
		1: {"b,a,d", `["b",null,"d","a"]`, "a", "b"}, // k NULL, 3, 2 (x NULL left out); k NULL first, then 1, 2, 3
		2: {"e,c,c", `["c","c","e"]`, "c", "c"},
	}
	check := func(how string, recs []arrow.RecordBatch) {
		t.Helper()
		n := 0
		for _, r := range recs {
			for i := range int(r.NumRows()) {
				g := r.Column(0).(*array.Int64).Value(i)
				got := [4]string{r.Column(1).(*array.String).Value(i), r.Column(2).ValueStr(i), r.Column(3).(*array.String).Value(i), r.Column(4).(*array.String).Value(i)}
				if got != want[g] {
					t.Errorf("%s: group %d: %q, want %q", how, g, got, want[g])
				}
				n++
			}
		}
		if n != len(want) {
			t.Errorf("%s: %d groups, want %d", how, n, len(want))
		}
	}
	single, _, err := drain(context.Background(), readerOf(t, rec, []int64{0, 7}), schema, spec, aggregate.Single, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer release(single)
	check("single", single)

	var parts []arrow.RecordBatch
	for _, cut := range [][]int64{{0, 3}, {3, 7}} {
		out, _, err := drain(context.Background(), readerOf(t, rec, []int64{cut[0], cut[1]}), schema, spec, aggregate.Partial, nil)
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, out...)
	}
	defer release(parts)
	pschema, err := aggregate.PartialSchema(schema, spec)
	if err != nil {
		t.Fatal(err)
	}
	rr, err := array.NewRecordReader(pschema, parts)
	if err != nil {
		t.Fatal(err)
	}
	final, _, err := drain(context.Background(), rr, schema, spec, aggregate.Final, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer release(final)
	check("partial then final", final)
}
