package ops

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flightsrv/flightsrv/scan/ledger"
)

// TestSetFilterGroups: SetFilter over an outer ProjectSet's rows (input row x, the call's value
// v, the condition as a column, the ordinality) keeps the rows meeting the condition and one
// NULL-extended row of each input row none of whose rows does, in order, also when an input
// row's rows span batches, checked against the rule applied row by row over random groups and
// batch cuts.
func TestSetFilterGroups(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "x", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "v", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "keep", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
		{Name: "n", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	}, nil)
	type row struct {
		x, v, n int64
		keep    *bool // nil: NULL
		noRows  bool  // the input row yielded nothing: v and n NULL
	}
	for seed := range uint64(40) {
		r := rand.New(rand.NewPCG(seed, 18))
		var rows []row
		var want []string
		for x := range int64(r.IntN(30) + 1) {
			size := r.IntN(6)
			if r.IntN(10) == 0 {
				size = 20 + r.IntN(40)
			}
			if size == 0 {
				rows = append(rows, row{x: x, noRows: true})
				want = append(want, fmt.Sprintf("%d NULL NULL", x))
				continue
			}
			kept := false
			for n := range int64(size) {
				rw := row{x: x, v: 100*x + n, n: n + 1}
				switch r.IntN(4) {
				case 0:
					rw.keep = new(bool)
					*rw.keep = true
					kept = true
					want = append(want, fmt.Sprintf("%d %d %d", x, rw.v, rw.n))
				case 1: // NULL: dropped
				default:
					rw.keep = new(bool)
				}
				rows = append(rows, rw)
			}
			if !kept {
				want = append(want, fmt.Sprintf("%d NULL NULL", x))
			}
		}
		// Random cuts into batches.
		var batches []arrow.RecordBatch
		for start := 0; start < len(rows); {
			end := min(len(rows), start+1+r.IntN(12))
			b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
			for _, rw := range rows[start:end] {
				b.Field(0).(*array.Int64Builder).Append(rw.x)
				if rw.noRows {
					b.Field(1).AppendNull()
					b.Field(2).AppendNull()
					b.Field(3).AppendNull()
					continue
				}
				b.Field(1).(*array.Int64Builder).Append(rw.v)
				if rw.keep == nil {
					b.Field(2).AppendNull()
				} else {
					b.Field(2).(*array.BooleanBuilder).Append(*rw.keep)
				}
				b.Field(3).(*array.Int64Builder).Append(rw.n)
			}
			batches = append(batches, b.NewRecordBatch())
			b.Release()
			start = end
		}
		cond, err := Column(schema, 2)
		if err != nil {
			t.Fatal(err)
		}
		for _, keepOrd := range []bool{true, false} {
			in, err := array.NewRecordReader(schema, batches)
			if err != nil {
				t.Fatal(err)
			}
			checked := memory.NewCheckedAllocator(memory.NewGoAllocator())
			out := SetFilter(context.Background(), in, []*Expr{cond}, 1, keepOrd, ledger.New(checked, 0))
			var got []string
			for out.Next() {
				b := out.RecordBatch()
				if want := 3 + btoi(keepOrd); int(b.NumCols()) != want {
					t.Fatalf("seed %d: %d columns, want %d", seed, b.NumCols(), want)
				}
				for i := range int(b.NumRows()) {
					x := b.Column(0).(*array.Int64).Value(i)
					v := b.Column(1).(*array.Int64)
					if v.IsNull(i) {
						if !b.Column(2).IsNull(i) || keepOrd && !b.Column(3).IsNull(i) {
							t.Fatalf("seed %d: a kept input row's other columns are not NULL", seed)
						}
						got = append(got, fmt.Sprintf("%d NULL NULL", x))
						continue
					}
					n := v.Value(i) - 100*x + 1
					if keepOrd {
						n = b.Column(3).(*array.Int64).Value(i)
					}
					got = append(got, fmt.Sprintf("%d %d %d", x, v.Value(i), n))
				}
			}
			if err := out.Err(); err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			out.Release()
			checked.AssertSize(t, 0)
			if !slices.Equal(got, want) {
				t.Fatalf("seed %d keepOrd %v:\n got %q\nwant %q", seed, keepOrd, got, want)
			}
		}
		for _, b := range batches {
			b.Release()
		}
	}
}
