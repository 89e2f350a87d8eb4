package ops_test

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flightsrv/flightsrv/scan/ledger"
	"github.com/flightsrv/flightsrv/scan/ops"
)

func TestMain(m *testing.M) {
	code := m.Run()
	// The operators start no goroutine of their own; arrow-go's exprs starts one per function
	// call and waits for it. None may outlive the tests.
	if code == 0 {
		deadline := time.Now().Add(5 * time.Second)
		for {
			buf := make([]byte, 1<<20)
			stacks := string(buf[:runtime.Stack(buf, true)])
			if !strings.Contains(stacks, "scan/ops.") || time.Now().After(deadline) {
				if strings.Contains(stacks, "scan/ops.") {
					fmt.Fprintf(os.Stderr, "leaked goroutines:\n%s\n", stacks)
					code = 1
				}
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	os.Exit(code)
}

// newMem returns a ledger (limit bytes, <= 0 none) over a checked allocator that must be back
// to zero bytes when the test ends.
func newMem(t testing.TB, limit int64) *ledger.Ledger {
	t.Helper()
	checked := memory.NewCheckedAllocator(testPool)
	t.Cleanup(func() { checked.AssertSize(t, 0) })
	return ledger.New(checked, limit)
}

// testPool is the engine's recycling allocator, poisoning what it recycles: a batch used
// after its last Release reads garbage, and a kernel that writes past a buffer's length
// crashes as it would in the server.
var testPool = &ledger.Pool{Poison: true}

// --- the golden rows ---------------------------------------------------------------------

var (
	tsType = &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}
	// rowsSchema is the schema of testdata/rows.json.
	rowsSchema = arrow.NewSchema([]arrow.Field{
		{Name: "rn", Type: arrow.PrimitiveTypes.Int64},
		{Name: "ts", Type: tsType, Nullable: true},
		{Name: "id", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "grp", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "x", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "flag", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
		{Name: "val", Type: arrow.BinaryTypes.Binary, Nullable: true},
	}, nil)
)

func colIndex(t testing.TB, name string) int {
	t.Helper()
	idx := rowsSchema.FieldIndices(name)
	if len(idx) != 1 {
		t.Fatalf("no column %q", name)
	}
	return idx[0]
}

type jsonRow struct {
	RN   int64       `json:"rn"`
	TS   json.Number `json:"ts"`
	ID   *string     `json:"id"`
	Grp  json.Number `json:"grp"`
	X    *string     `json:"x"`
	Flag *bool       `json:"flag"`
	Val  *string     `json:"val"`
}

func readJSON(t testing.TB, name string, v any) {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d := json.NewDecoder(f)
	d.UseNumber()
	if err := d.Decode(v); err != nil {
		t.Fatalf("decode %s: %v", name, err)
	}
}

// goldenRows builds testdata/rows.json as one batch allocated from mem.
func goldenRows(t testing.TB, mem memory.Allocator) arrow.RecordBatch {
	t.Helper()
	var rows []jsonRow
	readJSON(t, "rows.json", &rows)
	b := array.NewRecordBuilder(mem, rowsSchema)
	defer b.Release()
	for _, r := range rows {
		b.Field(0).(*array.Int64Builder).Append(r.RN)
		if r.TS == "" {
			b.Field(1).AppendNull()
		} else {
			b.Field(1).(*array.TimestampBuilder).Append(arrow.Timestamp(mustInt(t, r.TS)))
		}
		if r.ID == nil {
			b.Field(2).AppendNull()
		} else {
			b.Field(2).(*array.StringBuilder).Append(*r.ID)
		}
		if r.Grp == "" {
			b.Field(3).AppendNull()
		} else {
			b.Field(3).(*array.Int64Builder).Append(mustInt(t, r.Grp))
		}
		if r.X == nil {
			b.Field(4).AppendNull()
		} else {
			b.Field(4).(*array.Float64Builder).Append(mustFloat(t, *r.X))
		}
		if r.Flag == nil {
			b.Field(5).AppendNull()
		} else {
			b.Field(5).(*array.BooleanBuilder).Append(*r.Flag)
		}
		if r.Val == nil {
			b.Field(6).AppendNull()
		} else {
			v, err := hex.DecodeString(*r.Val)
			if err != nil {
				t.Fatal(err)
			}
			b.Field(6).(*array.BinaryBuilder).Append(v)
		}
	}
	return b.NewRecordBatch()
}

func mustInt(t testing.TB, n json.Number) int64 {
	t.Helper()
	v, err := strconv.ParseInt(string(n), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func mustFloat(t testing.TB, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// --- sources -------------------------------------------------------------------------------

// source is an input reader over batches that counts Next calls and references; every source
// a test makes must be released (by the operator that owns it) before the test ends.
type source struct {
	schema *arrow.Schema
	bs     []arrow.RecordBatch
	pos    int
	cur    arrow.RecordBatch
	err    error // returned by Err once the batches are consumed
	refs   atomic.Int64
	nexts  int
}

func newSource(t testing.TB, schema *arrow.Schema, bs []arrow.RecordBatch) *source {
	t.Helper()
	s := &source{schema: schema}
	for _, b := range bs {
		b.Retain()
		s.bs = append(s.bs, b)
	}
	s.refs.Store(1)
	t.Cleanup(func() {
		if n := s.refs.Load(); n != 0 {
			t.Errorf("an input reader was left with %d references", n)
		}
	})
	return s
}

func (s *source) Schema() *arrow.Schema          { return s.schema }
func (s *source) RecordBatch() arrow.RecordBatch { return s.cur }
func (s *source) Record() arrow.RecordBatch      { return s.cur }
func (s *source) Err() error {
	if s.pos >= len(s.bs) {
		return s.err
	}
	return nil
}
func (s *source) Retain() { s.refs.Add(1) }
func (s *source) Release() {
	switch n := s.refs.Add(-1); {
	case n == 0:
		for _, b := range s.bs[s.pos:] {
			b.Release()
		}
		s.bs = nil
		if s.cur != nil {
			s.cur.Release()
			s.cur = nil
		}
	case n < 0:
		panic("source released too often")
	}
}
func (s *source) Next() bool {
	s.nexts++
	if s.refs.Load() <= 0 {
		panic("Next on a released source")
	}
	if s.cur != nil {
		s.cur.Release()
		s.cur = nil
	}
	if s.pos >= len(s.bs) {
		return false
	}
	s.cur = s.bs[s.pos]
	s.bs[s.pos] = nil
	s.pos++
	return true
}

// splits returns the ways the tests cut n rows into batches: one batch, one row per batch,
// two batches cut at every position, and uneven cuts (with empty batches).
func splits(n int) map[string][]int {
	out := map[string][]int{"whole": {n}}
	if n == 0 {
		out["empty-batches"] = []int{0, 0}
		return out
	}
	ones := make([]int, n)
	for i := range ones {
		ones[i] = 1
	}
	out["rows"] = ones
	for i := 1; i < n; i++ {
		out[fmt.Sprintf("cut%d", i)] = []int{i, n - i}
	}
	var uneven []int
	for left, k := n, 1; left > 0; k = k%7 + 1 {
		c := min(k, left)
		uneven = append(uneven, c, 0)
		left -= c
	}
	out["uneven"] = uneven
	return out
}

// cut returns zero-copy slices of b of the given sizes (summing to b's rows).
func cut(b arrow.RecordBatch, sizes []int) []arrow.RecordBatch {
	var out []arrow.RecordBatch
	off := int64(0)
	for _, s := range sizes {
		out = append(out, b.NewSlice(off, off+int64(s)))
		off += int64(s)
	}
	return out
}

func releaseBatches(bs []arrow.RecordBatch) {
	for _, b := range bs {
		b.Release()
	}
}

// sourceOf returns a source of b cut into sizes.
func sourceOf(t testing.TB, b arrow.RecordBatch, sizes []int) *source {
	t.Helper()
	parts := cut(b, sizes)
	defer releaseBatches(parts)
	return newSource(t, b.Schema(), parts)
}

// --- output ------------------------------------------------------------------------------

// drain reads r to its end, checks the batch invariants (no empty batch, at most
// MaxBatchRows rows and MaxBatchBytes of string/binary values unless one row, the reader's
// schema), releases r and returns the batches (retained; the caller releases them) and Err.
func drain(t testing.TB, r array.RecordReader) ([]arrow.RecordBatch, error) {
	t.Helper()
	defer r.Release()
	var out []arrow.RecordBatch
	for r.Next() {
		b := r.RecordBatch()
		switch {
		case b.NumRows() == 0:
			t.Errorf("empty batch")
		case b.NumRows() > ops.MaxBatchRows:
			t.Errorf("batch of %d rows", b.NumRows())
		case b.NumRows() > 1 && batchVarBytes(b) > ops.MaxBatchBytes:
			t.Errorf("batch of %d rows holds %d bytes of values", b.NumRows(), batchVarBytes(b))
		}
		if !b.Schema().Equal(r.Schema()) {
			t.Errorf("batch schema %s, reader schema %s", b.Schema(), r.Schema())
		}
		b.Retain()
		out = append(out, b)
	}
	return out, r.Err()
}

func batchVarBytes(b arrow.RecordBatch) int64 {
	var n int64
	for _, c := range b.Columns() {
		switch a := c.(type) {
		case *array.String:
			for i := range a.Len() {
				n += int64(len(a.Value(i)))
			}
		case *array.Binary:
			for i := range a.Len() {
				n += int64(len(a.Value(i)))
			}
		}
	}
	return n
}

// ints returns column c of batches as int64 values (nil for null), in order; timestamps as
// nanoseconds.
func ints(t testing.TB, bs []arrow.RecordBatch, c int) []*int64 {
	t.Helper()
	var out []*int64
	for _, b := range bs {
		col := b.Column(c)
		for i := range col.Len() {
			if col.IsNull(i) {
				out = append(out, nil)
				continue
			}
			var v int64
			switch a := col.(type) {
			case *array.Int64:
				v = a.Value(i)
			case *array.Timestamp:
				v = int64(a.Value(i))
			default:
				t.Fatalf("column %d is %s", c, col.DataType())
			}
			out = append(out, &v)
		}
	}
	return out
}

// rowNumbers returns column rn (0) of the output: the input rows, in output order.
func rowNumbers(t testing.TB, r array.RecordReader) []int64 {
	t.Helper()
	bs, err := drain(t, r)
	defer releaseBatches(bs)
	if err != nil {
		t.Fatalf("operator failed: %v", err)
	}
	var out []int64
	for _, v := range ints(t, bs, 0) {
		out = append(out, *v)
	}
	return out
}

func equalInts(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
