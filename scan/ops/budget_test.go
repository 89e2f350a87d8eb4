package ops_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/types"

	"github.com/flightsrv/flightsrv/scan/ledger"
	"github.com/flightsrv/flightsrv/scan/ops"
)

// rnBatch returns a batch of rowsSchema holding rows 0..n-1 in rn and nulls elsewhere,
// allocated from Go's allocator (outside any ledger under test).
func rnBatch(t testing.TB, n int) arrow.RecordBatch {
	t.Helper()
	b := array.NewRecordBuilder(memory.DefaultAllocator, rowsSchema)
	defer b.Release()
	for i := range n {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		for c := 1; c < rowsSchema.NumFields(); c++ {
			b.Field(c).AppendNull()
		}
	}
	return b.NewRecordBatch()
}

// TestProjectCutsAConstantByBytes (issue 16): a 1,000,000-byte string literal projected beside
// rn over one batch of 1,024 rows is built in pieces of 3 rows (3,000,000 bytes of values, the
// most under MaxBatchTotalBytes = 3,145,728), each sent as slices of 2 rows and 1 (under
// MaxBatchBytes = 2,097,152 of values); the last row makes one piece. The ledger never holds
// more than one piece (before, the whole 1 GB column was built before any check).
func TestProjectCutsAConstantByBytes(t *testing.T) {
	p := newPlanner(t)
	lit := strings.Repeat("x", 1_000_000)
	es := p.compile(p.ref(0), expr.NewPrimitiveLiteral(lit, false))
	in := rnBatch(t, 1024)
	defer in.Release()
	mem := newMem(t, 64<<20)
	r := ops.Project(context.Background(), sourceOf(t, in, []int{1024}), []*ops.Expr{es[0][0], es[1][0]}, []string{"rn", "lit"}, mem)
	defer r.Release()
	var sizes []int64
	next := int64(0)
	for r.Next() {
		b := r.RecordBatch()
		sizes = append(sizes, b.NumRows())
		rn, s := b.Column(0).(*array.Int64), b.Column(1).(*array.String)
		for i := range int(b.NumRows()) {
			if rn.Value(i) != next || s.Value(i) != lit {
				t.Fatalf("row %d: rn %d, literal of %d bytes", next, rn.Value(i), len(s.Value(i)))
			}
			next++
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	var want []int64
	for range 1024 / 3 {
		want = append(want, 2, 1)
	}
	want = append(want, 1)
	if fmt.Sprint(sizes) != fmt.Sprint(want) {
		t.Fatalf("%d batches of %v rows, want %d of 2, 1, …, 1", len(sizes), sizes[:min(len(sizes), 10)], len(want))
	}
	// One piece: 3 × 1,000,000 bytes of values, 16 bytes of offsets (4 × 4), 24 of rn, the
	// buffers' rounding to the pool's size classes (at most a quarter) on top.
	if peak := mem.Peak(); peak < 3_000_000 || peak > 3_000_000*5/4+4096 {
		t.Fatalf("ledger peak %d bytes, want one piece: 3,000,040 to 3,754,096", peak)
	}
	if mem.Claimed() != 0 {
		t.Fatalf("%d bytes still claimed after the end", mem.Claimed())
	}
}

// TestProjectRefusesBeforeAllocating: under a limit of 2 MiB, no piece of a 3 MB literal
// (one row: 3,000,000 bytes and more) can be claimed: Project fails with a
// *ledger.LimitExceededError naming 2,097,152 bytes, and the ledger never allocated a byte.
func TestProjectRefusesBeforeAllocating(t *testing.T) {
	p := newPlanner(t)
	es := p.compile(p.ref(0), expr.NewPrimitiveLiteral(strings.Repeat("x", 3_000_000), false))
	in := rnBatch(t, 8192)
	defer in.Release()
	mem := newMem(t, 2<<20)
	r := ops.Project(context.Background(), sourceOf(t, in, []int{8192}), []*ops.Expr{es[0][0], es[1][0]}, []string{"rn", "lit"}, mem)
	defer r.Release()
	if r.Next() {
		t.Fatalf("a batch of %d rows under a 2 MiB limit", r.RecordBatch().NumRows())
	}
	var le *ledger.LimitExceededError
	if err := r.Err(); !errors.Is(err, ledger.ErrMemoryLimit) || !errors.As(err, &le) || le.Limit != 2<<20 {
		t.Fatalf("error %v, want the 2 MiB memory limit's", err)
	}
	if !strings.Contains(le.Error(), "memory limit of 2097152 bytes") {
		t.Fatalf("message %q does not name the limit", le.Error())
	}
	if mem.Peak() != 0 || mem.Claimed() != 0 {
		t.Fatalf("ledger peak %d bytes, %d claimed: the refusal must come before any allocation", mem.Peak(), mem.Claimed())
	}
}

// TestEstimateBytes: the estimator's prices over rows [0, 10) of rowsSchema, computed by hand
// (validity: (10+7)/8 = 2 bytes).
func TestEstimateBytes(t *testing.T) {
	p := newPlanner(t)
	in := rnBatch(t, 10)
	defer in.Release()
	cast := &expr.Cast{Type: &types.StringType{Nullability: nullable}, Input: p.ref(0), FailureBehavior: types.BehaviorThrowException}
	for _, c := range []struct {
		name      string
		e         expr.Expression
		row, rows int64
	}{
		{"bare column: shares its input", p.ref(0), 0, 0},
		{"string literal 'abc': offset and 3 bytes per row", expr.NewPrimitiveLiteral("abc", false), 4 + 3, 2 + 10*7},
		{"rn + 1: 8 bytes per row", p.fn(urnArithmetic, "add", p.ref(0), expr.NewPrimitiveLiteral(int64(1), false)), 8, 2 + 10*8},
		{"rn::text: offset and 24 bytes per printed number", cast, 4, 2 + 10*4 + 10*24},
	} {
		x := p.compile(c.e)[0][0]
		if got := x.RowBytes(); got != c.row {
			t.Errorf("%s: RowBytes %d, want %d", c.name, got, c.row)
		}
		if got := x.EstimateBytes(in.Columns(), 0, 10); got != c.rows {
			t.Errorf("%s: EstimateBytes of 10 rows %d, want %d", c.name, got, c.rows)
		}
	}
}

// wideBatch returns a batch of cols columns of rows rows, every value of every column the
// same width-byte string (width 0: int64 columns), from Go's allocator.
func wideBatch(t testing.TB, cols, rows, width int) arrow.RecordBatch {
	t.Helper()
	fields := make([]arrow.Field, cols)
	arrs := make([]arrow.Array, cols)
	var col arrow.Array
	if width > 0 {
		b := array.NewStringBuilder(memory.DefaultAllocator)
		v := strings.Repeat("v", width)
		for range rows {
			b.Append(v)
		}
		col = b.NewArray()
		b.Release()
	} else {
		b := array.NewInt64Builder(memory.DefaultAllocator)
		for i := range rows {
			b.Append(int64(i))
		}
		col = b.NewArray()
		b.Release()
	}
	defer col.Release()
	for i := range cols {
		fields[i] = arrow.Field{Name: fmt.Sprintf("c%d", i), Type: col.DataType(), Nullable: true}
		arrs[i] = col
	}
	return array.NewRecordBatch(arrow.NewSchema(fields, nil), arrs, int64(rows))
}

// TestBatchesCutByBytes: operators' output batches are cut by bytes of every kind, one slice
// at a time: 20 columns of 100-byte strings (2,080 bytes a row with offsets) by values,
// 2,097,152 / 2,000 = 1,048 rows a batch; 400 int64 columns (3,200 bytes a row) by all their
// bytes, 3,145,728 / 3,200 = 983 rows a batch, which the values' limit alone never cut.
func TestBatchesCutByBytes(t *testing.T) {
	for _, c := range []struct {
		name              string
		cols, width, each int
	}{{"strings", 20, 100, 1048}, {"int64s", 400, 0, 983}} {
		b := wideBatch(t, c.cols, 8192, c.width)
		sel := make([]int, c.cols)
		for i := range sel {
			sel[i] = i
		}
		r := ops.Select(sourceOf(t, b, []int{8192}), sel)
		b.Release()
		var sizes []int64
		for r.Next() {
			sizes = append(sizes, r.RecordBatch().NumRows())
		}
		r.Release()
		var want []int64
		for n := 8192; n > 0; n -= c.each {
			want = append(want, int64(min(n, c.each)))
		}
		if fmt.Sprint(sizes) != fmt.Sprint(want) {
			t.Errorf("%s: batches of %v rows, want %v", c.name, sizes, want)
		}
	}
}

// TestColumnOverhead measures what one column of one batch costs on the Go heap as a query's
// wide output does: sliced out of a larger batch (the stream's cut) and written by arrow-go's
// IPC writer (Flight's encoding), 2,000 string columns of 4 rows, 50 times. The cost must stay
// under ops.ColumnOverhead, which prices wide projections.
func TestColumnOverhead(t *testing.T) {
	const cols, rounds = 2000, 50
	b := wideBatch(t, cols, 8, 10)
	defer b.Release()
	w := ipc.NewWriter(io.Discard, ipc.WithSchema(b.Schema()))
	defer w.Close()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range rounds {
		s := b.NewSlice(2, 6)
		if err := w.Write(s); err != nil {
			t.Fatal(err)
		}
		s.Release()
	}
	runtime.ReadMemStats(&after)
	per := float64(after.TotalAlloc-before.TotalAlloc) / (cols * rounds)
	t.Logf("a column of a sliced batch written as IPC: %.0f bytes of Go heap", per)
	if per > ops.ColumnOverhead {
		t.Fatalf("a column of a batch costs %.0f bytes, more than ColumnOverhead (%d)", per, ops.ColumnOverhead)
	}
}

// TestColumnShares: ops.Column is a bare reference: priced at nothing, and Project returns
// the input column itself (the same buffers) beside an evaluated literal.
func TestColumnShares(t *testing.T) {
	in := rnBatch(t, 100)
	defer in.Release()
	col, err := ops.Column(rowsSchema, 0)
	if err != nil {
		t.Fatal(err)
	}
	if col.RowBytes() != 0 || col.EstimateBytes(in.Columns(), 0, 100) != 0 || !arrow.TypeEqual(col.Type(), arrow.PrimitiveTypes.Int64) {
		t.Fatalf("Column(0): %d bytes a row, %d for 100 rows, type %s", col.RowBytes(), col.EstimateBytes(in.Columns(), 0, 100), col.Type())
	}
	if _, err := ops.Column(rowsSchema, rowsSchema.NumFields()); err == nil {
		t.Fatal("a column out of range")
	}
	p := newPlanner(t)
	lit := p.compile(expr.NewPrimitiveLiteral("abc", false))[0][0]
	mem := newMem(t, 0)
	r := ops.Project(context.Background(), sourceOf(t, in, []int{100}), []*ops.Expr{col, lit}, []string{"rn", "abc"}, mem)
	defer r.Release()
	if !r.Next() {
		t.Fatal(r.Err())
	}
	b := r.RecordBatch()
	if b.NumRows() != 100 || b.Column(0).Data().Buffers()[1] != in.Column(0).Data().Buffers()[1] || b.Column(1).(*array.String).Value(99) != "abc" {
		t.Fatal("the kept column was copied, or the literal is wrong")
	}
}

// TestProjectHalvesRefusedPieces: under a limit of 1.5 MiB, the first piece of the 1 MB
// literal (two rows under MaxBatchTotalBytes, 2,000,000 bytes and more) is refused; Project evaluates it again in halves and
// keeps pieces of one row, each of which fits: all 16 rows come, in order, one a batch, and
// the ledger's peak is one piece's.
func TestProjectHalvesRefusedPieces(t *testing.T) {
	p := newPlanner(t)
	lit := strings.Repeat("x", 1_000_000)
	es := p.compile(p.ref(0), expr.NewPrimitiveLiteral(lit, false))
	in := rnBatch(t, 16)
	defer in.Release()
	mem := newMem(t, 3<<19)
	r := ops.Project(context.Background(), sourceOf(t, in, []int{16}), []*ops.Expr{es[0][0], es[1][0]}, []string{"rn", "lit"}, mem)
	defer r.Release()
	next := int64(0)
	for r.Next() {
		b := r.RecordBatch()
		if b.NumRows() != 1 {
			t.Fatalf("a batch of %d rows, want 1", b.NumRows())
		}
		rn, s := b.Column(0).(*array.Int64), b.Column(1).(*array.String)
		if rn.Value(0) != next || s.Value(0) != lit {
			t.Fatalf("row %d: rn %d, literal of %d bytes", next, rn.Value(0), len(s.Value(0)))
		}
		next++
	}
	if err := r.Err(); err != nil || next != 16 {
		t.Fatalf("%d rows, %v; want 16", next, err)
	}
	if peak := mem.Peak(); peak > 1_000_000*5/4+4096 {
		t.Fatalf("ledger peak %d bytes, want one row's", peak)
	}
	if mem.Claimed() != 0 {
		t.Fatalf("%d bytes still claimed after the end", mem.Claimed())
	}
}
