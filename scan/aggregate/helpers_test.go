package aggregate_test

import (
	"context"
	"encoding/hex"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flightsrv/flightsrv/scan/aggregate"
	"github.com/flightsrv/flightsrv/scan/ledger"
)

// newLedger returns a ledger (with limit bytes, <= 0: none) over a checked allocator that
// must hold nothing when the test ends.
func newLedger(t testing.TB, limit int64) *ledger.Ledger {
	t.Helper()
	checked := memory.NewCheckedAllocator(testPool)
	t.Cleanup(func() { checked.AssertSize(t, 0) })
	return ledger.New(checked, limit)
}

// testPool is the engine's recycling allocator, poisoning what it recycles: a batch used
// after its last Release reads garbage, and a kernel that writes past a buffer's length
// crashes as it would in the server.
var testPool = &ledger.Pool{Poison: true}

var tables sync.Map // name → arrow.RecordBatch, read once, never released (default allocator)

// loadTable returns testdata/<name>.arrow as one record batch (shared, read only).
func loadTable(t testing.TB, name string) arrow.RecordBatch {
	t.Helper()
	if rec, ok := tables.Load(name); ok {
		return rec.(arrow.RecordBatch)
	}
	f, err := os.Open(filepath.Join("testdata", name+".arrow"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := ipc.NewFileReader(f)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var recs []arrow.RecordBatch
	for i := range r.NumRecords() {
		rec, err := r.RecordBatchAt(i)
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rec)
	}
	var out arrow.RecordBatch
	if len(recs) == 1 {
		out = recs[0]
	} else {
		tbl := array.NewTableFromRecords(r.Schema(), recs)
		cols := make([]arrow.Array, tbl.NumCols())
		for i := range cols {
			chunks := tbl.Column(i).Data().Chunks()
			if len(chunks) == 0 {
				b := array.NewBuilder(memory.DefaultAllocator, tbl.Schema().Field(i).Type)
				cols[i] = b.NewArray()
				continue
			}
			cols[i], err = array.Concatenate(chunks, memory.DefaultAllocator)
			if err != nil {
				t.Fatal(err)
			}
		}
		out = array.NewRecordBatch(r.Schema(), cols, tbl.NumRows())
	}
	actual, _ := tables.LoadOrStore(name, out)
	return actual.(arrow.RecordBatch)
}

// readerOf returns a reader over the slices [cuts[i], cuts[i+1]) of rec.
func readerOf(t testing.TB, rec arrow.RecordBatch, cuts []int64) array.RecordReader {
	t.Helper()
	var recs []arrow.RecordBatch
	for i := 0; i+1 < len(cuts); i++ {
		recs = append(recs, rec.NewSlice(cuts[i], cuts[i+1]))
	}
	rr, err := array.NewRecordReader(rec.Schema(), recs)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		r.Release()
	}
	return rr
}

// drain runs New and returns its output batches (retained: the caller releases them).
func drain(ctx context.Context, in array.RecordReader, orig *arrow.Schema, s aggregate.Spec, mode aggregate.Mode, mem *ledger.Ledger) ([]arrow.RecordBatch, *arrow.Schema, error) {
	r, err := aggregate.New(ctx, in, orig, s, mode, mem)
	if err != nil {
		return nil, nil, err
	}
	defer r.Release()
	var out []arrow.RecordBatch
	for r.Next() {
		rec := r.RecordBatch()
		if rec.NumRows() > aggregate.BatchRows {
			release(out)
			return nil, nil, fmt.Errorf("batch of %d rows", rec.NumRows())
		}
		rec.Retain()
		out = append(out, rec)
	}
	if err := r.Err(); err != nil {
		release(out)
		return nil, nil, err
	}
	return out, r.Schema(), nil
}

func release(recs []arrow.RecordBatch) {
	for _, r := range recs {
		r.Release()
	}
}

// canonRows converts batches to rows of canonical values (as testdata/gen.py writes them):
// nil; integers, timestamps and dates as decimal strings; floats as float64 or "NaN",
// "Infinity", "-Infinity"; bool; text; binary as hex.
func canonRows(recs []arrow.RecordBatch) [][]any {
	var rows [][]any
	for _, rec := range recs {
		for i := range int(rec.NumRows()) {
			row := make([]any, rec.NumCols())
			for c, col := range rec.Columns() {
				row[c] = canonValue(col, i)
			}
			rows = append(rows, row)
		}
	}
	return rows
}

func canonValue(col arrow.Array, i int) any {
	if col.IsNull(i) {
		return nil
	}
	switch a := col.(type) {
	case *array.Int8:
		return strconv.FormatInt(int64(a.Value(i)), 10)
	case *array.Int16:
		return strconv.FormatInt(int64(a.Value(i)), 10)
	case *array.Int32:
		return strconv.FormatInt(int64(a.Value(i)), 10)
	case *array.Int64:
		return strconv.FormatInt(a.Value(i), 10)
	case *array.Uint8:
		return strconv.FormatUint(uint64(a.Value(i)), 10)
	case *array.Uint16:
		return strconv.FormatUint(uint64(a.Value(i)), 10)
	case *array.Uint32:
		return strconv.FormatUint(uint64(a.Value(i)), 10)
	case *array.Uint64:
		return strconv.FormatUint(a.Value(i), 10)
	case *array.Timestamp:
		return strconv.FormatInt(int64(a.Value(i)), 10)
	case *array.Date32:
		return strconv.FormatInt(int64(a.Value(i)), 10)
	case *array.Float32:
		return canonFloat(float64(a.Value(i)))
	case *array.Float64:
		return canonFloat(a.Value(i))
	case *array.Boolean:
		return a.Value(i)
	case *array.String:
		return a.Value(i)
	case *array.LargeString:
		return a.Value(i)
	case *array.Binary:
		return hex.EncodeToString(a.Value(i))
	case *array.LargeBinary:
		return hex.EncodeToString(a.Value(i))
	}
	return fmt.Sprintf("unexpected %s", col.DataType())
}

func canonFloat(f float64) any {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	return f
}

// diffRows returns "" when got equals want (floats within a relative 1e-9), else the first
// difference.
func diffRows(want, got [][]any) string {
	if len(want) != len(got) {
		return fmt.Sprintf("%d rows, want %d:\ngot  %v\nwant %v", len(got), len(want), got, want)
	}
	for r := range want {
		if len(want[r]) != len(got[r]) {
			return fmt.Sprintf("row %d: %d columns, want %d", r, len(got[r]), len(want[r]))
		}
		for c := range want[r] {
			if !sameValue(want[r][c], got[r][c]) {
				return fmt.Sprintf("row %d column %d: got %#v, want %#v\ngot  %v\nwant %v", r, c, got[r][c], want[r][c], got, want)
			}
		}
	}
	return ""
}

func sameValue(want, got any) bool {
	wf, ok1 := want.(float64)
	gf, ok2 := got.(float64)
	if ok1 && ok2 {
		return wf == gf || math.Abs(wf-gf) <= 1e-9*math.Max(math.Abs(wf), math.Abs(gf))
	}
	return want == got
}
