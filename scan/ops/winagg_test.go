package ops_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flightsrv/flightsrv/scan/ledger"
	"github.com/flightsrv/flightsrv/scan/ops"
)

// collectBatch is n rows (k, s, d): k = i, s the text of i (NULL every fifth row), d the
// delimiter "," (NULL every seventh row).
func collectBatch(n int) arrow.RecordBatch {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "k", Type: arrow.PrimitiveTypes.Int64},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "d", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for i := range n {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		if i%5 == 4 {
			b.Field(1).AppendNull()
		} else {
			b.Field(1).(*array.StringBuilder).Append(strconv.Itoa(i))
		}
		if i%7 == 6 {
			b.Field(2).AppendNull()
		} else {
			b.Field(2).(*array.StringBuilder).Append(",")
		}
	}
	return b.NewRecordBatch()
}

// TestWindowStringAggArrayAgg: string_agg and array_agg over a running frame and a sliding one
// are each frame's values in order, computed here by a loop over the rows: string_agg leaves
// NULL values out and puts each value's own row's delimiter before it (none where NULL), the
// first one's cut off; array_agg keeps NULLs; an empty frame is NULL.
func TestWindowStringAggArrayAgg(t *testing.T) {
	const n = 40
	in := collectBatch(n)
	defer in.Release()
	running := ops.WindowFrame{Rows: true, Start: ops.FrameBound{Kind: ops.Unbounded}, End: ops.FrameBound{Kind: ops.CurrentRow}}
	sliding := ops.WindowFrame{Rows: true, Start: ops.FrameBound{Kind: ops.Following, Offset: 1}, End: ops.FrameBound{Kind: ops.Following, Offset: 2}}
	spec := ops.WindowSpec{Order: []ops.SortKey{{Column: 0}}, Funcs: []ops.WindowFunc{
		{Kind: ops.StringAgg, Args: []int{1, 2}, Frame: running, Type: arrow.BinaryTypes.String},
		{Kind: ops.ArrayAgg, Args: []int{1}, Frame: sliding, Type: arrow.ListOf(arrow.BinaryTypes.String)},
	}}
	bs, err := drain(t, ops.Window(context.Background(), sourceOf(t, in, []int{13, 27}), spec, newMem(t, 0)))
	if err != nil {
		t.Fatal(err)
	}
	defer releaseBatches(bs)
	val := func(i int) (string, bool) { return strconv.Itoa(i), i%5 != 4 }
	row := 0
	for _, b := range bs {
		sa := b.Column(3).(*array.String)
		aa := b.Column(4).(*array.List)
		for r := range int(b.NumRows()) {
			i := int(b.Column(0).(*array.Int64).Value(r))
			if i != row {
				t.Fatalf("row %d is k = %d", row, i)
			}
			var want strings.Builder
			some := false
			for j := 0; j <= i; j++ {
				v, ok := val(j)
				if !ok {
					continue
				}
				if some && j%7 != 6 {
					want.WriteString(",")
				}
				want.WriteString(v)
				some = true
			}
			if sa.IsNull(r) || sa.Value(r) != want.String() {
				t.Errorf("string_agg at %d: %q, want %q", i, sa.ValueStr(r), want.String())
			}
			var elems []string
			for j := i + 1; j <= i+2 && j < n; j++ {
				if v, ok := val(j); ok {
					elems = append(elems, strconv.Quote(v))
				} else {
					elems = append(elems, "null")
				}
			}
			if len(elems) == 0 {
				if !aa.IsNull(r) {
					t.Errorf("array_agg at %d: %s, want NULL", i, aa.ValueStr(r))
				}
			} else if got, want := aa.ValueStr(r), "["+strings.Join(elems, ",")+"]"; got != want {
				t.Errorf("array_agg at %d: %s, want %s", i, got, want)
			}
			row++
		}
	}
	if row != n {
		t.Fatalf("%d rows, want %d", row, n)
	}
}

// TestWindowStringAggMemoryLimit: the answers of a running string_agg grow with the square of
// the rows; past the query's limit the window fails naming it instead of building them.
func TestWindowStringAggMemoryLimit(t *testing.T) {
	in := collectBatch(20000)
	defer in.Release()
	running := ops.WindowFrame{Rows: true, Start: ops.FrameBound{Kind: ops.Unbounded}, End: ops.FrameBound{Kind: ops.CurrentRow}}
	spec := ops.WindowSpec{Order: []ops.SortKey{{Column: 0}}, Funcs: []ops.WindowFunc{
		{Kind: ops.StringAgg, Args: []int{1, 2}, Frame: running, Type: arrow.BinaryTypes.String},
	}}
	_, err := drain(t, ops.Window(context.Background(), sourceOf(t, in, []int{20000}), spec, newMem(t, 16<<20)))
	if !errors.Is(err, ledger.ErrMemoryLimit) {
		t.Fatalf("%v, want the memory limit", err)
	}
}
