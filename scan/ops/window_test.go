package ops_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flightsrv/flightsrv/scan/ledger"
	"github.com/flightsrv/flightsrv/scan/ops"
)

// windowRow is one input row of the window tests: a unique id, a partition key and an order
// key with NULLs and many ties, and an argument with NULLs.
type windowRow struct {
	id       int64
	grp, key *int64
	val      *int64
	f        *float64
}

var windowSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "grp", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "key", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "val", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "f", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "n", Type: arrow.PrimitiveTypes.Int32},
}, nil)

func randomWindowRows(r *rand.Rand, n int) []windowRow {
	opt := func(v int64, pNull float64) *int64 {
		if r.Float64() < pNull {
			return nil
		}
		return &v
	}
	rows := make([]windowRow, n)
	for i := range rows {
		rows[i] = windowRow{id: int64(i), grp: opt(r.Int64N(4), 0.1), key: opt(r.Int64N(6), 0.15), val: opt(r.Int64N(100)-50, 0.2)}
		if r.Float64() > 0.2 {
			f := float64(r.Int64N(1000)) / 8
			rows[i].f = &f
		}
	}
	return rows
}

func windowBatch(rows []windowRow, nth int32) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, windowSchema)
	defer b.Release()
	put := func(fb array.Builder, v *int64) {
		if v == nil {
			fb.AppendNull()
		} else {
			fb.(*array.Int64Builder).Append(*v)
		}
	}
	for _, w := range rows {
		b.Field(0).(*array.Int64Builder).Append(w.id)
		put(b.Field(1), w.grp)
		put(b.Field(2), w.key)
		put(b.Field(3), w.val)
		if w.f == nil {
			b.Field(4).AppendNull()
		} else {
			b.Field(4).(*array.Float64Builder).Append(*w.f)
		}
		b.Field(5).(*array.Int32Builder).Append(nth)
	}
	return b.NewRecordBatch()
}

// refWindow evaluates f for every row by definition (a reference independent of Window's
// prefix sums, peer scans and incremental frames): rows grouped by grp, each group stably
// sorted by key (order), frames read off the sorted positions. It returns one value per id (nil
// for NULL): int64, float64 or the argument's value.
func refWindow(rows []windowRow, order ops.SortKey, f ops.WindowFunc) []any {
	out := make([]any, len(rows))
	groups := map[string][]windowRow{}
	var names []string
	for _, r := range rows {
		k := "null"
		if r.grp != nil {
			k = fmt.Sprint(*r.grp)
		}
		if _, ok := groups[k]; !ok {
			names = append(names, k)
		}
		groups[k] = append(groups[k], r)
	}
	cmpKey := func(a, b *int64) int {
		switch {
		case a == nil && b == nil:
			return 0
		case a == nil:
			if order.NullsFirst {
				return -1
			}
			return 1
		case b == nil:
			if order.NullsFirst {
				return 1
			}
			return -1
		}
		c := 0
		if *a < *b {
			c = -1
		} else if *a > *b {
			c = 1
		}
		if order.Desc {
			c = -c
		}
		return c
	}
	for _, name := range names {
		p := slices.Clone(groups[name])
		slices.SortStableFunc(p, func(a, b windowRow) int { return cmpKey(a.key, b.key) })
		m := len(p)
		peers := func(k int) (int, int) {
			s, e := k, k+1
			for s > 0 && cmpKey(p[s-1].key, p[k].key) == 0 {
				s--
			}
			for e < m && cmpKey(p[e].key, p[k].key) == 0 {
				e++
			}
			return s, e
		}
		// group is the ordinal of position k's peer group, counted by definition.
		group := func(k int) int {
			g := 0
			for j := 1; j <= k; j++ {
				if cmpKey(p[j-1].key, p[j].key) != 0 {
					g++
				}
			}
			return g
		}
		frame := func(k int) (int, int) {
			ps, pe := peers(k)
			var s, e int
			if f.Frame.Groups {
				// The rows of the groups within the offsets of k's.
				lo, hi := math.MinInt, math.MaxInt
				switch b := f.Frame.Start; b.Kind {
				case ops.CurrentRow:
					lo = group(k)
				case ops.Preceding:
					lo = group(k) - int(b.Offset)
				case ops.Following:
					lo = group(k) + int(b.Offset)
				}
				switch b := f.Frame.End; b.Kind {
				case ops.CurrentRow:
					hi = group(k)
				case ops.Preceding:
					hi = group(k) - int(b.Offset)
				case ops.Following:
					hi = group(k) + int(b.Offset)
				}
				s, e = m, 0
				for j := range m {
					if g := group(j); g >= lo && g <= hi {
						s, e = min(s, j), max(e, j+1)
					}
				}
				return s, e
			}
			switch b := f.Frame.Start; b.Kind {
			case ops.Unbounded:
				s = 0
			case ops.CurrentRow:
				s = map[bool]int{true: k, false: ps}[f.Frame.Rows]
			case ops.Preceding:
				s = k - int(b.Offset)
			case ops.Following:
				s = k + int(b.Offset)
			}
			switch b := f.Frame.End; b.Kind {
			case ops.Unbounded:
				e = m - 1
			case ops.CurrentRow:
				e = map[bool]int{true: k, false: pe - 1}[f.Frame.Rows]
			case ops.Preceding:
				e = k - int(b.Offset)
			case ops.Following:
				e = k + int(b.Offset)
			}
			return max(s, 0), min(e, m-1) + 1
		}
		for k, r := range p {
			var v any
			ps, pe := peers(k)
			s, e := frame(k)
			// The frame's positions less the exclusion's.
			var in []int
			for j := s; j < e; j++ {
				switch f.Frame.Exclude {
				case ops.ExcludeCurrentRow:
					if j == k {
						continue
					}
				case ops.ExcludeGroup:
					if j >= ps && j < pe {
						continue
					}
				case ops.ExcludeTies:
					if j != k && j >= ps && j < pe {
						continue
					}
				}
				in = append(in, j)
			}
			var nonNull []int64
			for _, j := range in {
				if p[j].val != nil {
					nonNull = append(nonNull, *p[j].val)
				}
			}
			switch f.Kind {
			case ops.RowNumber:
				v = int64(k + 1)
			case ops.Rank:
				v = int64(ps + 1)
			case ops.DenseRank:
				d := int64(0)
				for j := 0; j <= k; j++ {
					if j == 0 || cmpKey(p[j].key, p[j-1].key) != 0 {
						d++
					}
				}
				v = d
			case ops.PercentRank:
				v = 0.0
				if m > 1 {
					v = float64(ps) / float64(m-1)
				}
			case ops.CumeDist:
				v = float64(pe) / float64(m)
			case ops.Ntile:
				// Bucket b holds rows [start(b), start(b+1)): the first m % n buckets one more.
				n := 2
				size, extra := m/n, m%n
				for b, start := 0, 0; b < n; b++ {
					end := start + size
					if b < extra {
						end++
					}
					if k >= start && k < end {
						v = int64(b + 1)
					}
					start = end
				}
			case ops.Lag, ops.Lead:
				t := k - 2
				if f.Kind == ops.Lead {
					t = k + 2
				}
				if t >= 0 && t < m {
					v = optVal(p[t].val)
				}
			case ops.FirstValue, ops.LastValue, ops.NthValue:
				t := map[ops.WindowKind]int{ops.FirstValue: 0, ops.LastValue: len(in) - 1, ops.NthValue: 1}[f.Kind]
				if t >= 0 && t < len(in) {
					v = optVal(p[in[t]].val)
				}
			case ops.CountStar:
				v = int64(len(in))
			case ops.Count:
				v = int64(len(nonNull))
			case ops.Sum, ops.Avg:
				if len(nonNull) > 0 {
					var sum int64
					for _, x := range nonNull {
						sum += x
					}
					v = sum
					if f.Kind == ops.Avg {
						v = float64(sum) / float64(len(nonNull))
					}
				}
			case ops.Min, ops.Max:
				if len(nonNull) > 0 {
					if f.Kind == ops.Min {
						v = slices.Min(nonNull)
					} else {
						v = slices.Max(nonNull)
					}
				}
			}
			out[r.id] = v
		}
	}
	return out
}

func optVal(v *int64) any {
	if v == nil {
		return nil
	}
	return *v
}

// TestWindowAgainstReference: every window function over every frame form, over random rows
// with NULL partition keys, tied and NULL order keys and NULL arguments, cut into batches in
// several ways, equals the reference evaluation by definition; and the batches Window emits
// keep the operators' invariants and leave no buffer behind.
func TestWindowAgainstReference(t *testing.T) {
	r := rand.New(rand.NewPCG(18, 1))
	rows := randomWindowRows(r, 300)
	in := windowBatch(rows, 2)
	defer in.Release()
	const val, nth = 3, 5
	frames := []ops.WindowFrame{
		{Rows: false, Start: ops.FrameBound{Kind: ops.Unbounded}, End: ops.FrameBound{Kind: ops.CurrentRow}},
		{Rows: false, Start: ops.FrameBound{Kind: ops.CurrentRow}, End: ops.FrameBound{Kind: ops.Unbounded}},
		{Rows: false, Start: ops.FrameBound{Kind: ops.CurrentRow}, End: ops.FrameBound{Kind: ops.CurrentRow}},
		{Rows: true, Start: ops.FrameBound{Kind: ops.Unbounded}, End: ops.FrameBound{Kind: ops.Unbounded}},
		{Rows: true, Start: ops.FrameBound{Kind: ops.Preceding, Offset: 3}, End: ops.FrameBound{Kind: ops.Following, Offset: 1}},
		{Rows: true, Start: ops.FrameBound{Kind: ops.CurrentRow}, End: ops.FrameBound{Kind: ops.Unbounded}},
		{Rows: true, Start: ops.FrameBound{Kind: ops.Preceding, Offset: 4}, End: ops.FrameBound{Kind: ops.Preceding, Offset: 2}},
		{Rows: true, Start: ops.FrameBound{Kind: ops.Following, Offset: 2}, End: ops.FrameBound{Kind: ops.Following, Offset: 5}},
		{Rows: true, Start: ops.FrameBound{Kind: ops.Following, Offset: 3}, End: ops.FrameBound{Kind: ops.Following, Offset: 1}},
		// GROUPS frames, and exclusions in every mode.
		{Groups: true, Start: ops.FrameBound{Kind: ops.Preceding, Offset: 1}, End: ops.FrameBound{Kind: ops.Following, Offset: 1}},
		{Groups: true, Start: ops.FrameBound{Kind: ops.Unbounded}, End: ops.FrameBound{Kind: ops.Preceding, Offset: 2}},
		{Groups: true, Start: ops.FrameBound{Kind: ops.Following, Offset: 1}, End: ops.FrameBound{Kind: ops.Following, Offset: 9}},
		{Groups: true, Start: ops.FrameBound{Kind: ops.CurrentRow}, End: ops.FrameBound{Kind: ops.Following, Offset: 1}, Exclude: ops.ExcludeTies},
		{Groups: true, Start: ops.FrameBound{Kind: ops.Preceding, Offset: 2}, End: ops.FrameBound{Kind: ops.CurrentRow}, Exclude: ops.ExcludeGroup},
		{Rows: true, Start: ops.FrameBound{Kind: ops.Preceding, Offset: 3}, End: ops.FrameBound{Kind: ops.Following, Offset: 1}, Exclude: ops.ExcludeCurrentRow},
		{Rows: true, Start: ops.FrameBound{Kind: ops.Preceding, Offset: 2}, End: ops.FrameBound{Kind: ops.Following, Offset: 2}, Exclude: ops.ExcludeTies},
		{Rows: true, Start: ops.FrameBound{Kind: ops.Following, Offset: 1}, End: ops.FrameBound{Kind: ops.Following, Offset: 3}, Exclude: ops.ExcludeGroup},
		{Rows: true, Start: ops.FrameBound{Kind: ops.Preceding, Offset: 3}, End: ops.FrameBound{Kind: ops.Preceding, Offset: 1}, Exclude: ops.ExcludeTies},
		{Rows: true, Start: ops.FrameBound{Kind: ops.Unbounded}, End: ops.FrameBound{Kind: ops.Unbounded}, Exclude: ops.ExcludeTies},
		{Start: ops.FrameBound{Kind: ops.Unbounded}, End: ops.FrameBound{Kind: ops.CurrentRow}, Exclude: ops.ExcludeCurrentRow},
		{Start: ops.FrameBound{Kind: ops.CurrentRow}, End: ops.FrameBound{Kind: ops.CurrentRow}, Exclude: ops.ExcludeTies},
		{Start: ops.FrameBound{Kind: ops.Unbounded}, End: ops.FrameBound{Kind: ops.Unbounded}, Exclude: ops.ExcludeGroup},
	}
	i64, f64 := arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Float64
	var funcs []ops.WindowFunc
	for _, k := range []ops.WindowKind{ops.RowNumber, ops.Rank, ops.DenseRank} {
		funcs = append(funcs, ops.WindowFunc{Kind: k, Type: i64})
	}
	funcs = append(funcs, ops.WindowFunc{Kind: ops.PercentRank, Type: f64}, ops.WindowFunc{Kind: ops.CumeDist, Type: f64},
		ops.WindowFunc{Kind: ops.Ntile, Args: []int{nth}, Type: arrow.PrimitiveTypes.Int32},
		ops.WindowFunc{Kind: ops.Lag, Args: []int{val, nth}, Type: i64}, ops.WindowFunc{Kind: ops.Lead, Args: []int{val, nth}, Type: i64})
	for _, fr := range frames {
		for _, k := range []ops.WindowKind{ops.FirstValue, ops.LastValue, ops.NthValue, ops.CountStar, ops.Count, ops.Sum, ops.Avg, ops.Min, ops.Max} {
			f := ops.WindowFunc{Kind: k, Args: []int{val}, Frame: fr, Type: i64}
			switch k {
			case ops.NthValue:
				f.Args = []int{val, nth}
			case ops.CountStar:
				f.Args = nil
			case ops.Avg:
				f.Type = f64
			}
			funcs = append(funcs, f)
		}
	}
	for _, order := range []ops.SortKey{{Column: 2}, {Column: 2, Desc: true, NullsFirst: true}, {Column: 2, NullsFirst: true}} {
		spec := ops.WindowSpec{Partition: []int{1}, Order: []ops.SortKey{order}, Funcs: funcs}
		for name, sizes := range map[string][]int{"whole": {300}, "uneven": {1, 0, 7, 100, 2, 190}} {
			mem := newMem(t, 0)
			bs, err := drain(t, ops.Window(context.Background(), sourceOf(t, in, sizes), spec, mem))
			if err != nil {
				t.Fatal(err)
			}
			got := make([][]any, len(rows))
			n := 0
			for _, b := range bs {
				ids := b.Column(0).(*array.Int64)
				for i := range int(b.NumRows()) {
					row := make([]any, len(funcs))
					for j := range funcs {
						c := b.Column(windowSchema.NumFields() + j)
						if c.IsNull(i) {
							continue
						}
						switch a := c.(type) {
						case *array.Int64:
							row[j] = a.Value(i)
						case *array.Int32:
							row[j] = int64(a.Value(i))
						case *array.Float64:
							row[j] = a.Value(i)
						}
					}
					got[ids.Value(i)] = row
					n++
				}
			}
			releaseBatches(bs)
			if n != len(rows) {
				t.Fatalf("%d rows out of %d", n, len(rows))
			}
			for j, f := range funcs {
				want := refWindow(rows, order, f)
				for id := range rows {
					if fmt.Sprint(got[id][j]) != fmt.Sprint(want[id]) {
						t.Fatalf("order %+v, %s, function %d (kind %d, frame %+v), row %d: %v, reference %v", order, name, j, f.Kind, f.Frame, id, got[id][j], want[id])
					}
				}
			}
		}
	}
}

// TestWindowPresorted: over input already ordered by (partition, order) with each partition's
// rows together, Presorted keeps the input's order and answers as the sort would.
func TestWindowPresorted(t *testing.T) {
	rows := randomWindowRows(rand.New(rand.NewPCG(5, 6)), 200)
	for i := range rows {
		rows[i].grp = nil // one partition
	}
	slices.SortStableFunc(rows, func(a, b windowRow) int {
		switch {
		case a.key == nil && b.key == nil:
			return 0
		case a.key == nil:
			return 1
		case b.key == nil:
			return -1
		}
		return int(*a.key - *b.key)
	})
	in := windowBatch(rows, 2)
	defer in.Release()
	funcs := []ops.WindowFunc{{Kind: ops.RowNumber, Type: arrow.PrimitiveTypes.Int64}, {Kind: ops.Rank, Type: arrow.PrimitiveTypes.Int64},
		{Kind: ops.Sum, Args: []int{3}, Type: arrow.PrimitiveTypes.Int64, Frame: ops.WindowFrame{Start: ops.FrameBound{Kind: ops.Unbounded}, End: ops.FrameBound{Kind: ops.CurrentRow}}}}
	var got [2][]string
	for i, pre := range []bool{false, true} {
		spec := ops.WindowSpec{Order: []ops.SortKey{{Column: 2}}, Funcs: funcs, Presorted: pre}
		bs, err := drain(t, ops.Window(context.Background(), sourceOf(t, in, []int{50, 150}), spec, newMem(t, 0)))
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range bs {
			for r := range int(b.NumRows()) {
				got[i] = append(got[i], fmt.Sprint(b.Column(0).ValueStr(r), b.Column(6).ValueStr(r), b.Column(7).ValueStr(r), b.Column(8).ValueStr(r)))
			}
		}
		releaseBatches(bs)
	}
	if len(got[0]) != len(rows) || !slices.Equal(got[0], got[1]) {
		t.Fatalf("presorted %v, sorted %v", got[1], got[0])
	}
}

// TestWindowMemoryLimit: Window buffers its input under the ledger: past the limit it fails
// with ledger.ErrMemoryLimit, having released everything.
func TestWindowMemoryLimit(t *testing.T) {
	rows := randomWindowRows(rand.New(rand.NewPCG(1, 2)), 20000)
	in := windowBatch(rows, 1)
	defer in.Release()
	spec := ops.WindowSpec{Order: []ops.SortKey{{Column: 2}}, Funcs: []ops.WindowFunc{{Kind: ops.RowNumber, Type: arrow.PrimitiveTypes.Int64}}}
	sizes := make([]int, 20)
	for i := range sizes {
		sizes[i] = 1000
	}
	mem := newMem(t, 256<<10)
	// The source's batches are the caller's: what Window holds is what it retains and builds.
	_, err := drain(t, ops.Window(context.Background(), sourceOf(t, in, sizes), spec, mem))
	if !errors.Is(err, ledger.ErrMemoryLimit) {
		t.Fatalf("%v, want the memory limit", err)
	}
}

// TestWindowDataErrors: ntile and nth_value of a number below one are PostgreSQL's data
// exceptions, and a bigint sum past the type is "bigint out of range".
func TestWindowDataErrors(t *testing.T) {
	rows := randomWindowRows(rand.New(rand.NewPCG(3, 4)), 10)
	in := windowBatch(rows, 0)
	defer in.Release()
	for _, c := range []struct {
		f     ops.WindowFunc
		state string
	}{
		{ops.WindowFunc{Kind: ops.Ntile, Args: []int{5}, Type: arrow.PrimitiveTypes.Int32}, "22014"},
		{ops.WindowFunc{Kind: ops.NthValue, Args: []int{3, 5}, Type: arrow.PrimitiveTypes.Int64}, "22016"},
	} {
		_, err := drain(t, ops.Window(context.Background(), sourceOf(t, in, []int{10}), ops.WindowSpec{Funcs: []ops.WindowFunc{c.f}}, newMem(t, 0)))
		var de *ops.DataError
		if !errors.As(err, &de) || de.SQLState() != c.state {
			t.Errorf("kind %d: %v, want SQLSTATE %s", c.f.Kind, err, c.state)
		}
	}
	big := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema([]arrow.Field{{Name: "v", Type: arrow.PrimitiveTypes.Int64}}, nil))
	defer big.Release()
	big.Field(0).(*array.Int64Builder).AppendValues([]int64{1 << 62, 1 << 62, -(1 << 62), 5}, nil)
	b := big.NewRecordBatch()
	defer b.Release()
	sum := ops.WindowFunc{Kind: ops.Sum, Args: []int{0}, Type: arrow.PrimitiveTypes.Int64, Frame: ops.WindowFrame{Rows: true, Start: ops.FrameBound{Kind: ops.Unbounded}, End: ops.FrameBound{Kind: ops.CurrentRow}}}
	_, err := drain(t, ops.Window(context.Background(), sourceOf(t, b, []int{4}), ops.WindowSpec{Funcs: []ops.WindowFunc{sum}}, newMem(t, 0)))
	var de *ops.DataError
	if !errors.As(err, &de) || de.Msg != "bigint out of range" {
		t.Errorf("a sum past bigint: %v", err)
	}
	// The whole partition's sum is back in range (2^62 + 5): exact, where a running int64
	// sum would have wrapped on the way.
	sum.Frame = ops.WindowFrame{Rows: true, Start: ops.FrameBound{Kind: ops.Unbounded}, End: ops.FrameBound{Kind: ops.Unbounded}}
	bs, err := drain(t, ops.Window(context.Background(), sourceOf(t, b, []int{4}), ops.WindowSpec{Funcs: []ops.WindowFunc{sum}}, newMem(t, 0)))
	if err != nil || len(bs) != 1 || bs[0].Column(1).(*array.Int64).Value(3) != 1<<62+5 {
		t.Errorf("the whole partition's sum: %v %v", bs, err)
	}
	releaseBatches(bs)

	// numeric sums: exact through prefix sums past 128 bits (9.99…e37 four times, then
	// back), NULLs skipped, a frame's total of 38 digits 22003.
	dt := &arrow.Decimal128Type{Precision: 38, Scale: 2}
	nb := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema([]arrow.Field{{Name: "v", Type: dt, Nullable: true}}, nil))
	defer nb.Release()
	top := decimal128.GetMaxValue(38) // 10^38 - 1
	neg := top.Negate()
	nb.Field(0).(*array.Decimal128Builder).AppendValues([]decimal128.Num{top, top, top, top, neg, neg, neg, neg, decimal128.FromI64(150), decimal128.FromI64(-25)},
		[]bool{true, true, true, true, true, true, true, true, true, true})
	nb.Field(0).(*array.Decimal128Builder).AppendNull()
	d := nb.NewRecordBatch()
	defer d.Release()
	dsum := ops.WindowFunc{Kind: ops.Sum, Args: []int{0}, Type: dt, Frame: ops.WindowFrame{Rows: true, Start: ops.FrameBound{Kind: ops.Unbounded}, End: ops.FrameBound{Kind: ops.Unbounded}}}
	bs, err = drain(t, ops.Window(context.Background(), sourceOf(t, d, []int{11}), ops.WindowSpec{Funcs: []ops.WindowFunc{dsum}}, newMem(t, 0)))
	if err != nil || len(bs) != 1 || bs[0].Column(1).(*array.Decimal128).Value(0) != decimal128.FromI64(125) {
		t.Errorf("the whole partition's numeric sum: %v %v", bs, err)
	}
	releaseBatches(bs)
	// One row before and after: the frames at the turn hold 10^38 - 1 once (fine), but
	// the first frames two values of it (22003).
	dsum.Frame = ops.WindowFrame{Rows: true, Start: ops.FrameBound{Kind: ops.Preceding, Offset: 1}, End: ops.FrameBound{Kind: ops.Following, Offset: 1}}
	_, err = drain(t, ops.Window(context.Background(), sourceOf(t, d, []int{11}), ops.WindowSpec{Funcs: []ops.WindowFunc{dsum}}, newMem(t, 0)))
	if !errors.As(err, &de) || de.SQLState() != "22003" {
		t.Errorf("a numeric sum of 39 digits: %v", err)
	}
	dsum.Frame = ops.WindowFrame{Rows: true, Start: ops.FrameBound{Kind: ops.CurrentRow}, End: ops.FrameBound{Kind: ops.CurrentRow}}
	bs, err = drain(t, ops.Window(context.Background(), sourceOf(t, d, []int{11}), ops.WindowSpec{Funcs: []ops.WindowFunc{dsum}}, newMem(t, 0)))
	if err != nil || len(bs) != 1 || bs[0].Column(1).(*array.Decimal128).Value(4) != neg || bs[0].Column(1).IsValid(10) {
		t.Errorf("each row's own numeric sum: %v %v", bs, err)
	}
	releaseBatches(bs)

	// The variance family of doubles: finite values whose sum overflows are PostgreSQL's
	// 22003, an infinite value makes the frames holding it NaN, and one value's var_samp is
	// NULL (float8_accum, float8_var_samp).
	fb := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema([]arrow.Field{{Name: "v", Type: arrow.PrimitiveTypes.Float64}}, nil))
	defer fb.Release()
	fb.Field(0).(*array.Float64Builder).AppendValues([]float64{1e308, 1e308}, nil)
	huge := fb.NewRecordBatch()
	defer huge.Release()
	running := ops.WindowFrame{Rows: true, Start: ops.FrameBound{Kind: ops.Unbounded}, End: ops.FrameBound{Kind: ops.CurrentRow}}
	vs := ops.WindowFunc{Kind: ops.VarSamp, Args: []int{0}, Type: arrow.PrimitiveTypes.Float64, Frame: running}
	_, err = drain(t, ops.Window(context.Background(), sourceOf(t, huge, []int{2}), ops.WindowSpec{Funcs: []ops.WindowFunc{vs}}, newMem(t, 0)))
	if !errors.As(err, &de) || de.SQLState() != "22003" {
		t.Errorf("a variance whose sum overflows: %v, want 22003", err)
	}
	fb.Field(0).(*array.Float64Builder).AppendValues([]float64{2, math.Inf(1), 4}, nil)
	inf := fb.NewRecordBatch()
	defer inf.Release()
	vs.Frame = ops.WindowFrame{Rows: true, Start: ops.FrameBound{Kind: ops.CurrentRow}, End: ops.FrameBound{Kind: ops.Following, Offset: 1}}
	bs, err = drain(t, ops.Window(context.Background(), sourceOf(t, inf, []int{3}), ops.WindowSpec{Funcs: []ops.WindowFunc{vs}}, newMem(t, 0)))
	if err != nil || len(bs) != 1 {
		t.Fatalf("a variance over an infinite value: %v %v", bs, err)
	}
	got := bs[0].Column(1).(*array.Float64)
	if !math.IsNaN(got.Value(0)) || !math.IsNaN(got.Value(1)) || got.IsValid(2) {
		t.Errorf("var_samp over {2, inf}, {inf, 4}, {4}: %v (want NaN, NaN, NULL)", got)
	}
	releaseBatches(bs)
}

// BenchmarkWindowRunningSum: a running sum and a row number over 200,000 rows already in
// order, sorted by Window and kept in the input's order (Presorted), to measure what the read's
// order saves.
func BenchmarkWindowRunningSum(b *testing.B) {
	rows := randomWindowRows(rand.New(rand.NewPCG(7, 8)), 200_000)
	for i := range rows {
		k := int64(i / 3) // ordered, with ties
		rows[i].grp, rows[i].key = nil, &k
	}
	in := windowBatch(rows, 1)
	defer in.Release()
	sizes := make([]int, 25)
	for i := range sizes {
		sizes[i] = 8000
	}
	funcs := []ops.WindowFunc{{Kind: ops.RowNumber, Type: arrow.PrimitiveTypes.Int64},
		{Kind: ops.Sum, Args: []int{3}, Type: arrow.PrimitiveTypes.Int64, Frame: ops.WindowFrame{Start: ops.FrameBound{Kind: ops.Unbounded}, End: ops.FrameBound{Kind: ops.CurrentRow}}}}
	for _, pre := range []bool{false, true} {
		b.Run(fmt.Sprintf("presorted=%v", pre), func(b *testing.B) {
			spec := ops.WindowSpec{Order: []ops.SortKey{{Column: 2}, {Column: 0}}, Funcs: funcs, Presorted: pre}
			for b.Loop() {
				mem := ledger.New(memory.NewGoAllocator(), 0)
				parts := make([]arrow.RecordBatch, 0, len(sizes))
				for i := range sizes {
					parts = append(parts, in.NewSlice(int64(i*8000), int64((i+1)*8000)))
				}
				r := ops.Window(context.Background(), &sliceReader{schema: windowSchema, bs: parts}, spec, mem)
				for r.Next() {
				}
				if r.Err() != nil {
					b.Fatal(r.Err())
				}
				r.Release()
			}
		})
	}
}

// sliceReader reads batches it owns (a benchmark's input, without the tests' checks).
type sliceReader struct {
	schema *arrow.Schema
	bs     []arrow.RecordBatch
	cur    arrow.RecordBatch
}

func (s *sliceReader) Schema() *arrow.Schema          { return s.schema }
func (s *sliceReader) RecordBatch() arrow.RecordBatch { return s.cur }
func (s *sliceReader) Record() arrow.RecordBatch      { return s.cur }
func (s *sliceReader) Err() error                     { return nil }
func (s *sliceReader) Retain()                        {}
func (s *sliceReader) Release() {
	if s.cur != nil {
		s.cur.Release()
		s.cur = nil
	}
	releaseBatches(s.bs)
	s.bs = nil
}
func (s *sliceReader) Next() bool {
	if s.cur != nil {
		s.cur.Release()
		s.cur = nil
	}
	if len(s.bs) == 0 {
		return false
	}
	s.cur, s.bs = s.bs[0], s.bs[1:]
	return true
}

// BenchmarkWindowFrames: aggregates over sliding frames of 200,000 rows of one partition
// ordered by a key with ties (three rows a value): the integer sum and count (prefix sums),
// the double sum and min (accumulated as the frame slides, restarted when its start moves)
// and first_value, under ROWS BETWEEN 50 PRECEDING AND 50 FOLLOWING, the same EXCLUDE
// CURRENT ROW and EXCLUDE TIES, and GROUPS BETWEEN 17 PRECEDING AND 17 FOLLOWING (105 rows).
//
// On the shared 2-core machine (issue 18, the least of six runs of ten queries, load average
// 14 to 21, so only coarse): under ROWS without an exclusion, before and after GROUPS and
// EXCLUDE came, count 9 → 9 ms, the integer sum 11 → 11 ms, first_value 11 → 11 ms, min
// 406 → 469 ms (its sliding loop now calls a closure; not settled on this machine). With
// EXCLUDE CURRENT ROW: count 14, sum 18, first_value 15, min 491 ms; EXCLUDE TIES: 17, 19, 15,
// 558 ms (min recomputes each row's 100 rows, as PostgreSQL restarts it; it already restarted
// at every row of a moving frame). GROUPS (three runs): count 27–50, sum 47–60, double sum
// 207–270, min 266–337, first_value 19–33 ms.
func BenchmarkWindowFrames(b *testing.B) {
	rows := randomWindowRows(rand.New(rand.NewPCG(7, 9)), 200_000)
	for i := range rows {
		k := int64(i / 3)
		rows[i].grp, rows[i].key = nil, &k
	}
	in := windowBatch(rows, 1)
	defer in.Release()
	i64, f64 := arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Float64
	rowsFrame := ops.WindowFrame{Rows: true, Start: ops.FrameBound{Kind: ops.Preceding, Offset: 50}, End: ops.FrameBound{Kind: ops.Following, Offset: 50}}
	for _, fr := range []struct {
		name  string
		frame ops.WindowFrame
	}{{"rows", rowsFrame},
		{"rows-exclude-current", ops.WindowFrame{Rows: true, Start: rowsFrame.Start, End: rowsFrame.End, Exclude: ops.ExcludeCurrentRow}},
		{"rows-exclude-ties", ops.WindowFrame{Rows: true, Start: rowsFrame.Start, End: rowsFrame.End, Exclude: ops.ExcludeTies}},
		{"groups", ops.WindowFrame{Groups: true, Start: ops.FrameBound{Kind: ops.Preceding, Offset: 17}, End: ops.FrameBound{Kind: ops.Following, Offset: 17}}},
	} {
		for _, f := range []ops.WindowFunc{
			{Kind: ops.Sum, Args: []int{3}, Type: i64}, {Kind: ops.Count, Args: []int{3}, Type: i64},
			{Kind: ops.Sum, Args: []int{4}, Type: f64}, {Kind: ops.Min, Args: []int{3}, Type: i64},
			{Kind: ops.FirstValue, Args: []int{3}, Type: i64},
		} {
			f.Frame = fr.frame
			b.Run(fmt.Sprintf("%s/kind=%d/arg=%d", fr.name, f.Kind, f.Args[0]), func(b *testing.B) {
				spec := ops.WindowSpec{Order: []ops.SortKey{{Column: 2}}, Funcs: []ops.WindowFunc{f}, Presorted: true}
				for b.Loop() {
					mem := ledger.New(memory.NewGoAllocator(), 0)
					in.Retain()
					r := ops.Window(context.Background(), &sliceReader{schema: windowSchema, bs: []arrow.RecordBatch{in}}, spec, mem)
					for r.Next() {
					}
					if r.Err() != nil {
						b.Fatal(r.Err())
					}
					r.Release()
				}
			})
		}
	}
}
