package ops_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/types"

	"github.com/flightsrv/flightsrv/scan/ledger"
	"github.com/flightsrv/flightsrv/scan/ops"
)

// seqRows returns n rows numbered from first, ts = rn seconds, id = rn in six digits.
func seqRows(first, n int) []row {
	rows := make([]row, n)
	for i := range rows {
		rn := int64(first + i)
		rows[i] = row{rn: rn, ts: ptr(rn * 1e9), id: ptr(fmt.Sprintf("%06d", rn)), grp: ptr(rn % 3), val: []byte{byte(rn)}}
	}
	return rows
}

func seqSource(t testing.TB, mem memory.Allocator, n int, sizes []int) *source {
	b := batchOf(mem, seqRows(0, n))
	defer b.Release()
	return sourceOf(t, b, sizes)
}

func TestFetchStopsPullingEarly(t *testing.T) {
	mem := newMem(t, 0)
	cases := []struct {
		offset, count int64
		want          []int64 // first and last row
		nexts         int
	}{
		{5, 12, []int64{5, 16}, 2},
		{0, 10, []int64{0, 9}, 1},
		{0, 11, []int64{0, 10}, 2},
		{95, 100, []int64{95, 99}, 11}, // runs out: the last Next reports the end
		{0, 0, nil, 0},
		{200, 5, nil, 11},
		{30, -1, []int64{30, 99}, 11},
	}
	for _, c := range cases {
		src := seqSource(t, mem, 100, sizesOf(100, 10))
		r := ops.Fetch(src, c.offset, c.count)
		var got []int64
		for r.Next() {
			for _, v := range ints(t, []arrow.RecordBatch{r.RecordBatch()}, 0) {
				got = append(got, *v)
			}
		}
		if err := r.Err(); err != nil {
			t.Fatal(err)
		}
		if src.refs.Load() != 0 {
			t.Errorf("Fetch(%d, %d) still holds its input after the last row", c.offset, c.count)
		}
		r.Release()
		if src.nexts != c.nexts {
			t.Errorf("Fetch(%d, %d) called Next %d times on its input, want %d", c.offset, c.count, src.nexts, c.nexts)
		}
		if c.want == nil {
			if len(got) != 0 {
				t.Errorf("Fetch(%d, %d) gave %d rows", c.offset, c.count, len(got))
			}
			continue
		}
		if len(got) == 0 || got[0] != c.want[0] || got[len(got)-1] != c.want[1] || int64(len(got)) != c.want[1]-c.want[0]+1 {
			t.Errorf("Fetch(%d, %d) gave rows %v", c.offset, c.count, got)
		}
	}
}

// TestTopKStopsEarlyWithFetch: a Fetch above a Sort stops the sort's output, not its input
// (a sort reads everything); above a pass-through it stops the input.
func TestFetchAboveSelectStopsInput(t *testing.T) {
	mem := newMem(t, 0)
	src := seqSource(t, mem, 100, sizesOf(100, 10))
	r := ops.Fetch(ops.Select(src, []int{2, 0}), 0, 15)
	got := rowNumbersAt(t, r, 1)
	if len(got) != 15 || src.nexts != 2 {
		t.Fatalf("got %d rows after %d input batches", len(got), src.nexts)
	}
}

func rowNumbersAt(t testing.TB, r array.RecordReader, col int) []int64 {
	bs, err := drain(t, r)
	defer releaseBatches(bs)
	if err != nil {
		t.Fatal(err)
	}
	var out []int64
	for _, v := range ints(t, bs, col) {
		out = append(out, *v)
	}
	return out
}

// operators returns every operator over one input (of rowsSchema), by name, with keys on
// (grp, rn) and a filter keeping every row.
func operators(t testing.TB, mem *ledger.Ledger) map[string]func(ctx context.Context, in array.RecordReader) array.RecordReader {
	p := newPlanner(t)
	c := p.compile(p.fn(urnComparison, "gte", p.ref(0), expr.NewPrimitiveLiteral(int64(0), false)), p.ref(0), p.trunc("hour", p.ref(1)))
	pred, rn, hour := c[0][0], c[1][0], c[2][0]
	keys := []ops.SortKey{{Column: 3}, {Column: 0}}
	return map[string]func(ctx context.Context, in array.RecordReader) array.RecordReader{
		"filter": func(ctx context.Context, in array.RecordReader) array.RecordReader {
			return ops.Filter(ctx, in, pred, mem)
		},
		"project": func(ctx context.Context, in array.RecordReader) array.RecordReader {
			return ops.Project(ctx, in, []*ops.Expr{rn, hour}, []string{"rn", "hour"}, mem)
		},
		"select": func(_ context.Context, in array.RecordReader) array.RecordReader { return ops.Select(in, []int{0, 6}) },
		"sort": func(ctx context.Context, in array.RecordReader) array.RecordReader {
			return ops.Sort(ctx, in, keys, mem)
		},
		"topk": func(ctx context.Context, in array.RecordReader) array.RecordReader {
			return ops.TopK(ctx, in, keys, 1<<40, mem)
		},
		"topk3": func(ctx context.Context, in array.RecordReader) array.RecordReader {
			return ops.Fetch(ops.TopK(ctx, in, keys, 3, mem), 0, -1)
		},
		"fetch": func(_ context.Context, in array.RecordReader) array.RecordReader { return ops.Fetch(in, 0, -1) },
		"union": func(_ context.Context, in array.RecordReader) array.RecordReader {
			return ops.UnionAll([]array.RecordReader{in})
		},
		"rebatch": func(ctx context.Context, in array.RecordReader) array.RecordReader { return ops.Rebatch(ctx, in, mem) },
		"merge": func(ctx context.Context, in array.RecordReader) array.RecordReader {
			return ops.Merge(ctx, []array.RecordReader{in, newSource(t, rowsSchema, nil)}, keys, mem)
		},
	}
}

func TestEmptyInputsAndOneRow(t *testing.T) {
	ctx := context.Background()
	mem := newMem(t, 0)
	one := batchOf(mem, seqRows(7, 1))
	defer one.Release()
	empty := batchOf(mem, nil)
	defer empty.Release()
	for name, op := range operators(t, mem) {
		for _, in := range []struct {
			name  string
			batch []arrow.RecordBatch
			rows  int
		}{
			{"no batch", nil, 0},
			{"empty batches", []arrow.RecordBatch{empty, empty}, 0},
			{"one row", []arrow.RecordBatch{empty, one, empty}, 1},
		} {
			r := op(ctx, newSource(t, rowsSchema, in.batch))
			bs, err := drain(t, r)
			if err != nil {
				t.Fatalf("%s over %s: %v", name, in.name, err)
			}
			rows := 0
			for _, b := range bs {
				rows += int(b.NumRows())
			}
			releaseBatches(bs)
			if rows != in.rows {
				t.Errorf("%s over %s: %d rows, want %d", name, in.name, rows, in.rows)
			}
		}
	}
}

func TestBatchLimits(t *testing.T) {
	ctx := context.Background()
	mem := newMem(t, 0)
	// Rows: one batch of 20,000 rows.
	many := batchOf(mem, seqRows(0, 20000))
	defer many.Release()
	// Bytes: 40 values of 256 KiB (10 MiB), then one of 3 MiB, which goes alone.
	var big []row
	for i := range 41 {
		r := seqRows(i, 1)[0]
		size := 256 << 10
		if i == 40 {
			size = 3 << 20
		}
		r.val = make([]byte, size)
		r.val[0] = byte(i)
		big = append(big, r)
	}
	heavy := batchOf(mem, big)
	defer heavy.Release()
	for name, op := range operators(t, mem) {
		for _, in := range []arrow.RecordBatch{many, heavy} {
			bs, err := drain(t, op(ctx, newSource(t, rowsSchema, []arrow.RecordBatch{in})))
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			rows := int64(0)
			for _, b := range bs {
				rows += b.NumRows()
			}
			releaseBatches(bs)
			want := in.NumRows()
			if name == "topk3" {
				want = 3
			}
			if rows != want {
				t.Errorf("%s: %d rows, want %d", name, rows, want)
			}
		}
	}
	// Merge of two heavy inputs gathers by bytes as well.
	ins := []array.RecordReader{
		newSource(t, rowsSchema, []arrow.RecordBatch{heavy}),
		newSource(t, rowsSchema, []arrow.RecordBatch{heavy}),
	}
	bs, err := drain(t, ops.Merge(ctx, ins, []ops.SortKey{{Column: 3}}, mem))
	releaseBatches(bs)
	if err != nil {
		t.Fatal(err)
	}
}

// genSource generates batches on demand (allocated from mem, freed when the next is asked
// for), so that what a query holds is what its operators keep.
type genSource struct {
	*source
	mem     memory.Allocator
	batches int
	per     int
	made    int
}

func newGenSource(t testing.TB, mem memory.Allocator, batches, per int) *genSource {
	return &genSource{source: newSource(t, rowsSchema, nil), mem: mem, batches: batches, per: per}
}

func (g *genSource) Next() bool {
	g.nexts++
	if g.cur != nil {
		g.cur.Release()
		g.cur = nil
	}
	if g.made == g.batches {
		return false
	}
	rows := randomRows(uint64(g.made), g.per)
	for i := range rows {
		rows[i].rn = int64(g.made*g.per + i)
	}
	g.cur = batchOf(g.mem, rows)
	g.made++
	return true
}

func TestMemoryLimit(t *testing.T) {
	ctx := context.Background()
	keys := []ops.SortKey{{Column: 1}, {Column: 0}}
	const limit = 4 << 20 // a batch of 4,096 random rows takes ~300 KiB
	mem := newMem(t, limit)
	r := ops.Sort(ctx, newGenSource(t, mem, 100, 4096), keys, mem)
	bs, err := drain(t, r)
	releaseBatches(bs)
	if !errors.Is(err, ledger.ErrMemoryLimit) || !strings.HasPrefix(err.Error(), "ops: ") {
		t.Fatalf("Sort over 409,600 rows under a 4 MiB limit: %v, want ledger.ErrMemoryLimit", err)
	}
	// TopK holds k rows and one batch: the same input fits.
	mem = newMem(t, limit)
	got := rowNumbers(t, ops.TopK(ctx, newGenSource(t, mem, 100, 4096), keys, 10, mem))
	if len(got) != 10 {
		t.Fatalf("TopK(10) gave %d rows", len(got))
	}
	if mem.Peak() > limit {
		t.Errorf("TopK peaked at %d bytes", mem.Peak())
	}
	// So does a merge, one batch per input at a time.
	var ins []array.RecordReader
	for range 3 {
		ins = append(ins, ops.Sort(ctx, newGenSource(t, mem, 1, 4096), keys, mem))
	}
	bs, err = drain(t, ops.Merge(ctx, ins, keys, mem))
	releaseBatches(bs)
	if err != nil {
		t.Fatal(err)
	}
}

func TestCancellation(t *testing.T) {
	mem := newMem(t, 0)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for name, op := range operators(t, mem) {
		if name == "select" || name == "fetch" || name == "union" {
			continue // no context
		}
		bs, err := drain(t, op(ctx, seqSource(t, mem, 100, sizesOf(100, 10))))
		releaseBatches(bs)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s under a cancelled context: %v", name, err)
		}
	}
}

func TestInputErrorsPropagate(t *testing.T) {
	ctx := context.Background()
	mem := newMem(t, 0)
	boom := errors.New("boom")
	for name, op := range operators(t, mem) {
		src := seqSource(t, mem, 30, sizesOf(30, 10))
		src.err = boom
		bs, err := drain(t, op(ctx, src))
		releaseBatches(bs)
		if !errors.Is(err, boom) {
			t.Errorf("%s: %v, want the input's error", name, err)
		}
	}
}

func TestUnionAllAndSelect(t *testing.T) {
	mem := newMem(t, 0)
	renamed := arrow.NewSchema(append([]arrow.Field{{Name: "other", Type: arrow.PrimitiveTypes.Int64}}, rowsSchema.Fields()[1:]...), nil)
	b := batchOf(mem, seqRows(10, 5))
	defer b.Release()
	relabelled := array.NewRecordBatch(renamed, b.Columns(), b.NumRows())
	defer relabelled.Release()
	r := ops.UnionAll([]array.RecordReader{
		seqSource(t, mem, 10, sizesOf(10, 3)),
		newSource(t, rowsSchema, nil),
		newSource(t, renamed, []arrow.RecordBatch{relabelled}),
	})
	if r.Schema().Field(0).Name != "rn" {
		t.Errorf("UnionAll schema %s", r.Schema())
	}
	if got := rowNumbers(t, r); len(got) != 15 || got[10] != 10 || got[14] != 14 {
		t.Errorf("UnionAll gave %v", got)
	}
	s := ops.Select(seqSource(t, mem, 10, []int{10}), []int{3, 0, 0})
	if names := fmt.Sprint(s.Schema().Field(0).Name, s.Schema().Field(1).Name, s.Schema().Field(2).Name); names != "grprnrn" {
		t.Errorf("Select schema %s", s.Schema())
	}
	if got := rowNumbersAt(t, s, 2); len(got) != 10 || got[9] != 9 {
		t.Errorf("Select gave %v", got)
	}
}

func TestRebatch(t *testing.T) {
	ctx := context.Background()
	mem := newMem(t, 0)
	// Tiny batches coalesce into batches of MaxBatchRows/2 to MaxBatchRows rows.
	bs, err := drain(t, ops.Rebatch(ctx, seqSource(t, mem, 30000, sizesOf(30000, 3)), mem))
	defer releaseBatches(bs)
	if err != nil {
		t.Fatal(err)
	}
	for i, b := range bs[:len(bs)-1] {
		if b.NumRows() < ops.MaxBatchRows/2 {
			t.Errorf("batch %d of %d rows", i, b.NumRows())
		}
	}
	for i, v := range ints(t, bs, 0) {
		if *v != int64(i) {
			t.Fatalf("row %d is %d", i, *v)
		}
	}
	// Mixed sizes: big batches pass (sliced), order holds.
	sizes := []int{5, 9000, 0, 1, 5000, 3, 3, 5000, 20000}
	n := 0
	for _, s := range sizes {
		n += s
	}
	bs2, err := drain(t, ops.Rebatch(ctx, seqSource(t, mem, n, sizes), mem))
	defer releaseBatches(bs2)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range ints(t, bs2, 0) {
		if *v != int64(i) {
			t.Fatalf("row %d is %d", i, *v)
		}
	}
}

// TestFilterForwardsWholeBatches: a batch all of whose rows pass goes on without a copy.
func TestFilterForwardsWholeBatches(t *testing.T) {
	ctx := context.Background()
	mem := newMem(t, 0)
	b := batchOf(mem, seqRows(0, 100))
	defer b.Release()
	p := newPlanner(t)
	pred := p.compile(p.fn(urnComparison, "lt", p.ref(0), expr.NewPrimitiveLiteral(int64(1000), false)))[0][0]
	r := ops.Filter(ctx, newSource(t, rowsSchema, []arrow.RecordBatch{b}), pred, mem)
	defer r.Release()
	if !r.Next() || r.RecordBatch().Column(6).Data().Buffers()[2] != b.Column(6).Data().Buffers()[2] {
		t.Fatal("the batch was copied")
	}
}

func TestErrors(t *testing.T) {
	ctx := context.Background()
	mem := newMem(t, 0)
	p := newPlanner(t)
	ts := p.ref(1)
	utc := expr.NewPrimitiveLiteral("UTC", false)
	one := expr.NewPrimitiveLiteral(int64(1), false)
	mustCompile := func(e expr.Expression) *ops.Expr { return p.compile(e)[0][0] }
	compileErrs := map[string]expr.Expression{
		"factorial": p.fn(urnArithmetic, "factorial", p.ref(3)),
		"CEIL": p.fn(urnDatetime, "round_calendar", ts, types.Enum("CEIL"), types.Enum("DAY"), types.Enum("MONTH"),
			one, utc),
		"other than UTC": p.fn(urnDatetime, "round_calendar", ts, types.Enum("FLOOR"), types.Enum("DAY"), types.Enum("MONTH"),
			one, expr.NewPrimitiveLiteral("Europe/Paris", false)),
		"shorter than its unit": p.fn(urnDatetime, "round_calendar", ts, types.Enum("FLOOR"), types.Enum("MONTH"), types.Enum("DAY"),
			one, utc),
		"not positive": p.fn(urnDatetime, "round_calendar", ts, types.Enum("FLOOR"), types.Enum("DAY"), types.Enum("MONTH"),
			expr.NewPrimitiveLiteral(int64(0), false), utc),
		"calendar unit MONTH": p.fn(urnDatetime, "round_temporal", ts, types.Enum("FLOOR"), types.Enum("MONTH"), one, utc, tsLit(0)),
		"empty list":          &expr.SingularOrList{Value: p.ref(3)},
		"must be literals":    &expr.SingularOrList{Value: p.ref(3), Options: []expr.Expression{p.ref(0)}},
	}
	for want, e := range compileErrs {
		_, err := ops.Compile(e, rowsSchema, p.registry())
		if err == nil || !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), "ops: ") {
			t.Errorf("Compile(%s): %v, want an error about %q", e, err, want)
		}
	}
	// A schema that is not the plan's.
	other := arrow.NewSchema([]arrow.Field{{Name: "rn", Type: arrow.BinaryTypes.String}}, nil)
	if _, err := ops.Compile(p.ref(0), other, p.registry()); err == nil {
		t.Error("Compile of an i64 reference over a string column succeeded")
	}

	notBool := mustCompile(p.ref(3))
	bs, err := drain(t, ops.Filter(ctx, seqSource(t, mem, 3, []int{3}), notBool, mem))
	releaseBatches(bs)
	if err == nil || !strings.Contains(err.Error(), "not boolean") {
		t.Errorf("Filter with an int64 predicate: %v", err)
	}
	// A safe cast fails on overflow at evaluation, with no value in the message.
	b := batchOf(mem, []row{{rn: 1 << 40}})
	defer b.Release()
	narrow := mustCompile(&expr.Cast{Type: &types.Int32Type{Nullability: nullable}, Input: p.ref(0), FailureBehavior: types.BehaviorThrowException})
	if a, err := narrow.Eval(ctx, b, mem); err == nil {
		a.Release()
		t.Error("cast of 2^40 to i32 succeeded")
	} else if de := (*ops.DataError)(nil); strings.Contains(err.Error(), "1099511627776") || !errors.As(err, &de) ||
		de.Msg != "integer out of range" || de.SQLState() != "22003" || !errors.Is(err, arrow.ErrInvalid) {
		t.Errorf("cast error %q (%T), want PostgreSQL's value-free integer out of range (22003) wrapping arrow.ErrInvalid", err, err)
	}
	if _, err := narrow.Eval(ctx, array.NewRecordBatch(other, nil, 0), mem); err == nil {
		t.Error("Eval over another schema succeeded")
	}

	readerErrs := map[string]array.RecordReader{
		"out of range": ops.Select(seqSource(t, mem, 3, []int{3}), []int{7}),
		"union all":    ops.UnionAll([]array.RecordReader{seqSource(t, mem, 3, []int{3}), newSource(t, other, nil)}),
		"merge":        ops.Merge(ctx, []array.RecordReader{seqSource(t, mem, 3, []int{3}), newSource(t, other, nil)}, nil, mem),
		"no input":     ops.Merge(ctx, nil, nil, mem),
		"sort key":     ops.Sort(ctx, seqSource(t, mem, 3, []int{3}), []ops.SortKey{{Column: 9}}, mem),
		"names":        ops.Project(ctx, seqSource(t, mem, 3, []int{3}), []*ops.Expr{notBool}, nil, mem),
		"of no input":  ops.UnionAll(nil),
	}
	for want, r := range readerErrs {
		bs, err := drain(t, r)
		releaseBatches(bs)
		if err == nil || !strings.HasPrefix(err.Error(), "ops: ") {
			t.Errorf("%s: %v", want, err)
		}
	}
	// A type that cannot be ordered.
	lt := arrow.ListOf(arrow.PrimitiveTypes.Int64)
	ls := arrow.NewSchema([]arrow.Field{{Name: "l", Type: lt}}, nil)
	bs, err = drain(t, ops.Sort(ctx, newSource(t, ls, nil), []ops.SortKey{{Column: 0}}, mem))
	releaseBatches(bs)
	if err == nil || !strings.Contains(err.Error(), "cannot be ordered") {
		t.Errorf("Sort on a list column: %v", err)
	}
}

// TestSourcesAreReleasedOnEarlyRelease: releasing an operator's reader before its end releases
// its inputs.
func TestSourcesAreReleasedOnEarlyRelease(t *testing.T) {
	ctx := context.Background()
	mem := newMem(t, 0)
	for name, op := range operators(t, mem) {
		src := seqSource(t, mem, 100, sizesOf(100, 10))
		r := op(ctx, src)
		r.Next()
		r.Release()
		if n := src.refs.Load(); n != 0 {
			t.Errorf("%s: input has %d references after an early Release", name, n)
		}
	}
}

// TestFilterCols: the columns FilterCols is told are used hold exactly Filter's rows, the
// others are all null of their type, over batches none, some and all of whose rows pass (a
// batch all pass is forwarded whole, as Filter does); Reads names the columns a predicate
// reads.
func TestFilterCols(t *testing.T) {
	ctx := context.Background()
	mem := newMem(t, 0)
	p := newPlanner(t)
	// rn < 25 over four batches of 10 rows: the first two pass whole, the third 5 rows, the
	// fourth none.
	pred := p.compile(p.fn(urnComparison, "lt", p.ref(0), expr.NewPrimitiveLiteral(int64(25), false)))[0][0]
	grp := colIndex(t, "grp")
	if !pred.Reads(0) || pred.Reads(grp) || pred.Reads(-1) || pred.Reads(rowsSchema.NumFields()) {
		t.Fatalf("Reads of rn < 25: want column 0 only")
	}
	sizes := []int{10, 10, 10, 10}
	for name, used := range map[string][]bool{
		"grp and id": {false, false, true, true, false, false, false},
		"none":       make([]bool, rowsSchema.NumFields()),
		"all":        nil,
	} {
		want, err := drain(t, ops.Filter(ctx, seqSource(t, mem, 40, sizes), pred, mem))
		if err != nil {
			t.Fatal(err)
		}
		got, err := drain(t, ops.FilterCols(ctx, seqSource(t, mem, 40, sizes), pred, used, mem))
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) || len(got) != 3 {
			t.Fatalf("%s: %d batches, Filter's %d (want 3: 10 and 10 rows whole, 5 rows of the third)", name, len(got), len(want))
		}
		for i := range got {
			if !got[i].Schema().Equal(rowsSchema) || got[i].NumRows() != want[i].NumRows() {
				t.Fatalf("%s: batch %d: %s of %d rows, want %d rows of %s", name, i, got[i].Schema(), got[i].NumRows(), want[i].NumRows(), rowsSchema)
			}
			whole := got[i].NumRows() == 10
			for c := range rowsSchema.NumFields() {
				g, w := got[i].Column(c), want[i].Column(c)
				switch {
				case used == nil || used[c] || whole:
					if !array.Equal(g, w) {
						t.Errorf("%s: batch %d column %d: %v, want %v", name, i, c, g, w)
					}
				case g.NullN() != g.Len() || g.Len() != w.Len() || !arrow.TypeEqual(g.DataType(), w.DataType()):
					t.Errorf("%s: batch %d column %d (unused): %v, want %d nulls of %s", name, i, c, g, w.Len(), w.DataType())
				}
			}
		}
		releaseBatches(got)
		releaseBatches(want)
	}
	r := ops.FilterCols(ctx, seqSource(t, mem, 10, nil), pred, []bool{true}, mem)
	defer r.Release()
	if r.Next() || r.Err() == nil || !strings.Contains(r.Err().Error(), "1 column flags for 7 columns") {
		t.Fatalf("a flag short: %v", r.Err())
	}
}

// TestNullColumn: all-null columns of every length and a few types, the short ones sharing one
// process-wide column's buffers (nothing from the caller's allocator), the long ones
// allocated from it.
func TestNullColumn(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	for _, dt := range []arrow.DataType{arrow.BinaryTypes.Binary, arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int32,
		&arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}} {
		a, b := ops.NullColumn(mem, dt, 5), ops.NullColumn(mem, dt, 8192)
		if mem.CurrentAlloc() != 0 || a.Data().Buffers()[0] != b.Data().Buffers()[0] {
			t.Fatalf("%s: short null columns allocated %d bytes or did not share their buffers", dt, mem.CurrentAlloc())
		}
		long := ops.NullColumn(mem, dt, 8193)
		if mem.CurrentAlloc() == 0 {
			t.Fatalf("%s: a long null column allocated nothing from its allocator", dt)
		}
		if a.Len() != 5 || b.Len() != 8192 || long.Len() != 8193 {
			t.Fatalf("%s: lengths %d, %d, %d", dt, a.Len(), b.Len(), long.Len())
		}
		for _, c := range []arrow.Array{a, b, long} {
			if !arrow.TypeEqual(c.DataType(), dt) || c.NullN() != c.Len() || c.IsValid(c.Len()-1) {
				t.Fatalf("%s: %d rows, %d nulls, type %s", dt, c.Len(), c.NullN(), c.DataType())
			}
			c.Release()
		}
	}
}
