package ops_test

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flightsrv/flightsrv/scan/ops"
)

// TestTopKIntKeys: TopK by one int32 or int64 key, ascending and descending, with NULLs first
// or last, over batches with and without NULLs and many ties, equals a stable sort of the rows
// (ties in input order) cut to k, for several k.
func TestTopKIntKeys(t *testing.T) {
	rng := rand.New(rand.NewPCG(10, 19))
	for _, typ := range []arrow.DataType{arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64} {
		schema := arrow.NewSchema([]arrow.Field{{Name: "k", Type: typ, Nullable: true}, {Name: "row", Type: arrow.PrimitiveTypes.Int64}}, nil)
		type row struct {
			k    int64
			null bool
			n    int64
		}
		var rows []row
		var batches []arrow.RecordBatch
		b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		for bi := range 12 {
			for range 50 + rng.IntN(400) {
				r := row{k: rng.Int64N(60) - 30, n: int64(len(rows))}
				r.null = bi%3 == 1 && rng.IntN(10) == 0 // some batches hold NULLs
				if r.null {
					b.Field(0).AppendNull()
				} else if typ.ID() == arrow.INT32 {
					b.Field(0).(*array.Int32Builder).Append(int32(r.k))
				} else {
					b.Field(0).(*array.Int64Builder).Append(r.k)
				}
				b.Field(1).(*array.Int64Builder).Append(r.n)
				rows = append(rows, r)
			}
			batches = append(batches, b.NewRecordBatch())
		}
		b.Release()
		for _, desc := range []bool{false, true} {
			for _, nullsFirst := range []bool{false, true} {
				want := slices.Clone(rows)
				slices.SortStableFunc(want, func(x, y row) int {
					switch {
					case x.null && y.null:
						return 0
					case x.null != y.null:
						if x.null == nullsFirst {
							return -1
						}
						return 1
					}
					if desc {
						return cmp.Compare(y.k, x.k)
					}
					return cmp.Compare(x.k, y.k)
				})
				for _, k := range []int64{1, 3, 10, 100} {
					t.Run(fmt.Sprintf("%s/desc=%t/nullsfirst=%t/k=%d", typ, desc, nullsFirst, k), func(t *testing.T) {
						rr, err := array.NewRecordReader(schema, batches)
						if err != nil {
							t.Fatal(err)
						}
						r := ops.TopK(context.Background(), rr, []ops.SortKey{{Column: 0, Desc: desc, NullsFirst: nullsFirst}}, k, newMem(t, 0))
						defer r.Release()
						var got []int64
						for r.Next() {
							got = append(got, r.RecordBatch().Column(1).(*array.Int64).Int64Values()...)
						}
						if err := r.Err(); err != nil {
							t.Fatal(err)
						}
						for i, w := range want[:k] {
							if i >= len(got) || got[i] != w.n {
								t.Fatalf("rows %v, want the first %d of the stable sort (row %d first differs)", got, k, i)
							}
						}
						if len(got) != int(k) {
							t.Fatalf("%d rows, want %d", len(got), k)
						}
					})
				}
			}
		}
		for _, bt := range batches {
			bt.Release()
		}
	}
}
