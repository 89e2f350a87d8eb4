package ops_test

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flightsrv/flightsrv/scan/ops"
)

// Property tests over random rows (more than MaxBatchRows), against a reference order written
// here over plain Go values, independently of the package's comparators.

// row is one row of rowsSchema as Go values; nil is NULL.
type row struct {
	rn   int64
	ts   *int64
	id   *string
	grp  *int64
	x    *float64
	flag *bool
	val  []byte // nil: NULL
}

func ptr[T any](v T) *T { return &v }

// randomRows returns n rows with many ties, NULLs, NaNs and signed zeros.
func randomRows(seed uint64, n int) []row {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	floats := []float64{math.NaN(), 0, math.Copysign(0, -1), 1.5, -2, math.Inf(1), math.Inf(-1), 1e300}
	rows := make([]row, n)
	for i := range rows {
		rw := row{rn: int64(i)}
		if r.IntN(20) != 0 {
			rw.ts = ptr(r.Int64N(200)*1e9 - 100e9)
		}
		if r.IntN(15) != 0 {
			rw.id = ptr(strings.Repeat(string(rune('a'+r.IntN(4))), r.IntN(3)))
		}
		if r.IntN(10) != 0 {
			rw.grp = ptr(r.Int64N(7) - 3)
		}
		if r.IntN(10) != 0 {
			if r.IntN(3) == 0 {
				rw.x = ptr(floats[r.IntN(len(floats))])
			} else {
				rw.x = ptr(float64(r.IntN(50)) / 4)
			}
		}
		if r.IntN(6) != 0 {
			rw.flag = ptr(r.IntN(2) == 0)
		}
		if r.IntN(8) != 0 {
			v := make([]byte, r.IntN(4))
			for j := range v {
				v[j] = byte(r.IntN(3)) * 0x7f
			}
			rw.val = v
		}
		rows[i] = rw
	}
	return rows
}

// batchOf builds rows as one batch of rowsSchema.
func batchOf(mem memory.Allocator, rows []row) arrow.RecordBatch {
	b := array.NewRecordBuilder(mem, rowsSchema)
	defer b.Release()
	for _, r := range rows {
		b.Field(0).(*array.Int64Builder).Append(r.rn)
		if r.ts == nil {
			b.Field(1).AppendNull()
		} else {
			b.Field(1).(*array.TimestampBuilder).Append(arrow.Timestamp(*r.ts))
		}
		if r.id == nil {
			b.Field(2).AppendNull()
		} else {
			b.Field(2).(*array.StringBuilder).Append(*r.id)
		}
		if r.grp == nil {
			b.Field(3).AppendNull()
		} else {
			b.Field(3).(*array.Int64Builder).Append(*r.grp)
		}
		if r.x == nil {
			b.Field(4).AppendNull()
		} else {
			b.Field(4).(*array.Float64Builder).Append(*r.x)
		}
		if r.flag == nil {
			b.Field(5).AppendNull()
		} else {
			b.Field(5).(*array.BooleanBuilder).Append(*r.flag)
		}
		if r.val == nil {
			b.Field(6).AppendNull()
		} else {
			b.Field(6).(*array.BinaryBuilder).Append(r.val)
		}
	}
	return b.NewRecordBatch()
}

// refCompare is the reference order of two rows by keys (PostgreSQL's: NaN greatest, NULLs
// placed per key whatever the direction).
func refCompare(a, b row, keys []ops.SortKey) int {
	for _, k := range keys {
		var an, bn bool
		var c int
		switch k.Column {
		case 0:
			c = cmpInt(a.rn, b.rn)
		case 1:
			an, bn = a.ts == nil, b.ts == nil
			if !an && !bn {
				c = cmpInt(*a.ts, *b.ts)
			}
		case 2:
			an, bn = a.id == nil, b.id == nil
			if !an && !bn {
				c = strings.Compare(*a.id, *b.id)
			}
		case 3:
			an, bn = a.grp == nil, b.grp == nil
			if !an && !bn {
				c = cmpInt(*a.grp, *b.grp)
			}
		case 4:
			an, bn = a.x == nil, b.x == nil
			if !an && !bn {
				x, y := *a.x, *b.x
				switch {
				case math.IsNaN(x) && math.IsNaN(y):
				case math.IsNaN(x):
					c = 1
				case math.IsNaN(y):
					c = -1
				case x < y:
					c = -1
				case x > y:
					c = 1
				}
			}
		case 5:
			an, bn = a.flag == nil, b.flag == nil
			if !an && !bn && *a.flag != *b.flag {
				c = 1
				if !*a.flag {
					c = -1
				}
			}
		case 6:
			an, bn = a.val == nil, b.val == nil
			if !an && !bn {
				c = bytes.Compare(a.val, b.val)
			}
		}
		switch {
		case an && bn:
			continue
		case an || bn:
			first := an
			if k.NullsFirst == first {
				return -1
			}
			return 1
		}
		if k.Desc {
			c = -c
		}
		if c != 0 {
			return c
		}
	}
	return 0
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// refSort returns the row numbers of rows stably sorted by keys.
func refSort(rows []row, keys []ops.SortKey) []int64 {
	s := slices.Clone(rows)
	slices.SortStableFunc(s, func(a, b row) int { return refCompare(a, b, keys) })
	out := make([]int64, len(s))
	for i, r := range s {
		out[i] = r.rn
	}
	return out
}

var propKeys = [][]ops.SortKey{
	{{Column: 1}},
	{{Column: 1, Desc: true, NullsFirst: true}, {Column: 2}},
	{{Column: 3, NullsFirst: true}, {Column: 4, Desc: true}},
	{{Column: 4}},
	{{Column: 4, Desc: true, NullsFirst: true}},
	{{Column: 6, Desc: true}, {Column: 5, NullsFirst: true}},
	{{Column: 5}, {Column: 3, Desc: true}, {Column: 2, NullsFirst: true}, {Column: 6}},
	{{Column: 2, Desc: true}, {Column: 2}},
}

// sizesOf cuts n rows into batches of at most per rows.
func sizesOf(n, per int) []int {
	var s []int
	for n > 0 {
		c := min(n, per)
		s = append(s, c)
		n -= c
	}
	return s
}

func TestSortTopKMergeProperties(t *testing.T) {
	ctx := context.Background()
	const n = 10000
	rows := randomRows(1, n)
	for _, path := range []string{"arrow", "own"} {
		t.Run(path, func(t *testing.T) {
			if path == "arrow" {
				defer ops.UseArrowSort()()
			}
			for ki, keys := range propKeys {
				t.Run(fmt.Sprint(ki), func(t *testing.T) {
					mem := newMem(t, 0)
					all := batchOf(mem, rows)
					defer all.Release()
					want := refSort(rows, keys)
					for _, per := range []int{n, 777} {
						got := rowNumbers(t, ops.Sort(ctx, sourceOf(t, all, sizesOf(n, per)), keys, mem))
						if !equalInts(got, want) {
							t.Fatalf("Sort over batches of %d: first difference at %d", per, firstDiff(got, want))
						}
					}
					for _, k := range []int64{1, 10, 8191, 8193, n, n + 1} {
						got := rowNumbers(t, ops.TopK(ctx, sourceOf(t, all, sizesOf(n, 3000)), keys, k, mem))
						if w := want[:min(k, n)]; !equalInts(got, w) {
							t.Fatalf("TopK(%d): first difference at %d of %d rows", k, firstDiff(got, w), len(got))
						}
					}
					// Merge of the sorted contiguous pieces is the stable sort of all.
					for _, pieces := range []int{3, 17} {
						var ins []array.RecordReader
						for _, p := range cut(all, sizesOf(n, (n+pieces-1)/pieces)) {
							ins = append(ins, ops.Sort(ctx, sourceOf(t, p, sizesOf(int(p.NumRows()), 500)), keys, mem))
							p.Release()
						}
						if got := rowNumbers(t, ops.Merge(ctx, ins, keys, mem)); !equalInts(got, want) {
							t.Fatalf("Merge of %d sorted pieces: first difference at %d", pieces, firstDiff(got, want))
						}
					}
				})
			}
		})
	}
}

func firstDiff(a, b []int64) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestSortPathsAgree sorts random data without NaN (so that arrow-go's sort_indices may be
// used) with both paths and compares them with the reference, over many small inputs.
func TestSortPathsAgree(t *testing.T) {
	ctx := context.Background()
	mem := newMem(t, 0)
	for seed := uint64(0); seed < 40; seed++ {
		rows := randomRows(seed, 1+int(seed)*13)
		for i := range rows {
			if rows[i].x != nil && math.IsNaN(*rows[i].x) {
				rows[i].x = ptr(7.0)
			}
		}
		all := batchOf(mem, rows)
		for _, keys := range propKeys {
			want := refSort(rows, keys)
			o := rowNumbers(t, ops.Sort(ctx, sourceOf(t, all, []int{len(rows)}), keys, mem))
			restore := ops.UseArrowSort()
			a := rowNumbers(t, ops.Sort(ctx, sourceOf(t, all, []int{len(rows)}), keys, mem))
			restore()
			if !equalInts(a, want) || !equalInts(o, want) {
				t.Fatalf("seed %d keys %v: arrow %v, own %v, reference %v", seed, keys, a, o, want)
			}
		}
		all.Release()
	}
}

// TestMergeInterleaved merges inputs whose rows alternate (runs of one row), where Merge
// gathers rows from every input into each batch.
func TestMergeInterleaved(t *testing.T) {
	ctx := context.Background()
	mem := newMem(t, 0)
	const inputs, per = 5, 6000
	var rows []row
	for i := range inputs * per {
		rows = append(rows, row{rn: int64(i), ts: ptr(int64(i / 3)), id: ptr(fmt.Sprint(i % 7)), val: []byte{byte(i)}})
	}
	keys := []ops.SortKey{{Column: 1}}
	var ins []array.RecordReader
	for in := range inputs {
		var mine []row
		for i := in; i < len(rows); i += inputs {
			mine = append(mine, rows[i])
		}
		b := batchOf(mem, mine)
		ins = append(ins, sourceOf(t, b, sizesOf(len(mine), 1234)))
		b.Release()
	}
	// The stable sort by ts of the rows in input order (input 0's rows first, then 1's…).
	var inOrder []row
	for in := range inputs {
		for i := in; i < len(rows); i += inputs {
			inOrder = append(inOrder, rows[i])
		}
	}
	want := refSort(inOrder, keys)
	if got := rowNumbers(t, ops.Merge(ctx, ins, keys, mem)); !equalInts(got, want) {
		t.Fatalf("first difference at %d", firstDiff(got, want))
	}
}

// TestMergeNonOverlapping checks that inputs that do not overlap (buckets of one partition)
// pass through as slices of their own batches: the output batches are the input batches, and
// nothing is allocated.
func TestMergeNonOverlapping(t *testing.T) {
	ctx := context.Background()
	mem := newMem(t, 0)
	keys := []ops.SortKey{{Column: 1}, {Column: 2}}
	var ins []array.RecordReader
	var want []int64
	batches := 0
	for in := range 6 {
		var mine []row
		for i := range 5000 {
			rn := int64(in*5000 + i)
			mine = append(mine, row{rn: rn, ts: ptr(rn / 2), id: ptr(fmt.Sprintf("%06d", rn))})
			want = append(want, rn)
		}
		b := batchOf(mem, mine)
		sizes := sizesOf(len(mine), 1000)
		batches += len(sizes)
		ins = append(ins, sourceOf(t, b, sizes))
		b.Release()
	}
	before := mem.Bytes()
	r := ops.Merge(ctx, ins, keys, mem)
	var got []int64
	n := 0
	for r.Next() {
		n++
		if mem.Bytes() > before {
			t.Errorf("Merge allocated %d bytes", mem.Bytes()-before)
		}
		for _, v := range ints(t, []arrow.RecordBatch{r.RecordBatch()}, 0) {
			got = append(got, *v)
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	r.Release()
	if n != batches {
		t.Errorf("Merge emitted %d batches for %d input batches", n, batches)
	}
	if !equalInts(got, want) {
		t.Fatalf("first difference at %d", firstDiff(got, want))
	}
	// Reversed order of the inputs: the merge still orders them.
	var ins2 []array.RecordReader
	for in := 5; in >= 0; in-- {
		var mine []row
		for i := range 3000 {
			rn := int64(in*3000 + i)
			mine = append(mine, row{rn: rn, ts: ptr(rn), id: ptr("x")})
		}
		b := batchOf(mem, mine)
		ins2 = append(ins2, sourceOf(t, b, sizesOf(len(mine), 700)))
		b.Release()
	}
	got = rowNumbers(t, ops.Merge(ctx, ins2, keys, mem))
	for i, v := range got {
		if v != int64(i) {
			t.Fatalf("reversed inputs: row %d is %d", i, v)
		}
	}
}
