package ops

import (
	"context"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// filterGatherBatch is a batch of 2,240 rows (the 3M-row fixture's mean bucket) of an int4
// column with nulls and a text column of airport codes, and a mask passing about 1 row in 20
// (NULL in about 1 in 13), as (value->>'delay')::int > 60 over the shredded-column cache.
func filterGatherBatch(mem memory.Allocator) (arrow.RecordBatch, arrow.Array) {
	const rows = 2240
	sch := arrow.NewSchema([]arrow.Field{
		{Name: "delay", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "destination", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	rb := array.NewRecordBuilder(mem, sch)
	defer rb.Release()
	mb := array.NewBooleanBuilder(mem)
	defer mb.Release()
	codes := []string{"ORD", "ATL", "DFW", "LAX", "SFO", "JFK", "DEN", "Zürich"}
	for i := range rows {
		if i%13 == 5 {
			rb.Field(0).AppendNull()
			rb.Field(1).AppendNull()
			mb.AppendNull()
			continue
		}
		rb.Field(0).(*array.Int32Builder).Append(int32(i * 7 % 400))
		rb.Field(1).(*array.StringBuilder).Append(codes[i*11%len(codes)])
		mb.Append(i%20 == 3 || (i > 1000 && i < 1010))
	}
	return rb.NewRecordBatch(), mb.NewArray()
}

// TestFilterDropNullsAsTake: filterDropNulls keeps the rows compute's filter keeps (true,
// not NULL), over a batch and a slice of it, with column types of its own gather and of
// compute's take.
func TestFilterDropNullsAsTake(t *testing.T) {
	ctx := compute.WithAllocator(context.Background(), memory.DefaultAllocator)
	b, mask := filterGatherBatch(memory.DefaultAllocator)
	defer b.Release()
	defer mask.Release()
	lb := array.NewListBuilder(memory.DefaultAllocator, arrow.PrimitiveTypes.Int64)
	for i := range int(b.NumRows()) {
		lb.Append(true)
		lb.ValueBuilder().(*array.Int64Builder).Append(int64(i))
	}
	list := lb.NewArray()
	lb.Release()
	defer list.Release()
	wide := array.NewRecordBatch(arrow.NewSchema(append(b.Schema().Fields(), arrow.Field{Name: "l", Type: list.DataType(), Nullable: true}), nil),
		append(b.Columns(), list), b.NumRows())
	defer wide.Release()
	for _, off := range []int64{0, 3, 1001} {
		in := wide.NewSlice(off, wide.NumRows())
		m := array.NewSlice(mask, off, int64(mask.Len()))
		got, err := filterDropNulls(ctx, in, m)
		if err != nil {
			t.Fatal(err)
		}
		want, err := compute.FilterRecordBatch(ctx, in, m, &compute.FilterOptions{NullSelection: compute.SelectionDropNulls})
		if err != nil {
			t.Fatal(err)
		}
		if !array.RecordEqual(got, want) {
			t.Errorf("offset %d: got %v, want %v", off, got, want)
		}
		for _, r := range []arrow.RecordBatch{got, want, in} {
			r.Release()
		}
		m.Release()
	}
}

// BenchmarkFilterDropNulls: the survivors of one filtered batch (filterGatherBatch) gathered.
func BenchmarkFilterDropNulls(b *testing.B) {
	ctx := compute.WithAllocator(context.Background(), memory.DefaultAllocator)
	batch, mask := filterGatherBatch(memory.DefaultAllocator)
	defer batch.Release()
	defer mask.Release()
	for b.Loop() {
		out, err := filterDropNulls(ctx, batch, mask)
		if err != nil {
			b.Fatal(err)
		}
		if out.NumRows() == 0 {
			b.Fatal(fmt.Sprint("no rows"))
		}
		out.Release()
	}
}
