package aggregate_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flightsrv/flightsrv/scan/aggregate"
	"github.com/flightsrv/flightsrv/scan/ledger"
	"github.com/flightsrv/flightsrv/scan/ops"
)

var kvSchema = arrow.NewSchema([]arrow.Field{
	{Name: "k", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "v", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "x", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "p", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
}, nil)

// kvBatch builds a batch of kvSchema with n rows: k = key(i), s = "s<k mod 997>", v = i-n/2,
// x = i/4, p = i odd; every 50th row has nulls in k, s and v.
func kvBatch(mem memory.Allocator, from, n int, key func(int) int64) arrow.RecordBatch {
	b := array.NewRecordBuilder(mem, kvSchema)
	defer b.Release()
	for i := from; i < from+n; i++ {
		if i%50 == 49 {
			b.Field(0).AppendNull()
			b.Field(1).AppendNull()
			b.Field(2).AppendNull()
		} else {
			k := key(i)
			b.Field(0).(*array.Int64Builder).Append(k)
			b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("s%d", k%997))
			b.Field(2).(*array.Int64Builder).Append(int64(i - n/2))
		}
		b.Field(3).(*array.Float64Builder).Append(float64(i) / 4)
		b.Field(4).(*array.BooleanBuilder).Append(i%2 == 1)
	}
	return b.NewRecordBatch()
}

func batchesReader(t testing.TB, schema *arrow.Schema, recs []arrow.RecordBatch) array.RecordReader {
	t.Helper()
	rr, err := array.NewRecordReader(schema, recs)
	if err != nil {
		t.Fatal(err)
	}
	return rr
}

// countingReader wraps a reader and records its releases.
type countingReader struct {
	array.RecordReader
	released *atomic.Int32
	err      error
}

func (r *countingReader) Release() {
	r.released.Add(1)
	r.RecordReader.Release()
}

func (r *countingReader) Err() error {
	if r.err != nil {
		return r.err
	}
	return r.RecordReader.Err()
}

func TestMemoryLimitTooManyGroups(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		groups []int
	}{
		{"int64 key", []int{0}},
		{"int64 and text keys", []int{0, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			mem := newLedger(t, 1<<20)
			var recs []arrow.RecordBatch
			for from := 0; from < 200_000; from += 10_000 {
				recs = append(recs, kvBatch(memory.DefaultAllocator, from, 10_000, func(i int) int64 { return int64(i) }))
			}
			in := batchesReader(t, kvSchema, recs)
			release(recs)
			spec := aggregate.Spec{Groups: tc.groups, Measures: []aggregate.Measure{
				{Func: aggregate.CountStar, Filter: -1, Name: "n"},
				{Func: aggregate.Sum, Arg: 2, Filter: -1, Name: "sum"},
			}}
			out, _, err := drain(context.Background(), in, kvSchema, spec, aggregate.Single, mem)
			release(out)
			if !errors.Is(err, ledger.ErrMemoryLimit) {
				t.Fatalf("error %v, want ErrMemoryLimit", err)
			}
			if !strings.HasPrefix(err.Error(), "aggregate: ") {
				t.Errorf("error %q lacks the package prefix", err)
			}
		})
	}
}

func TestMemoryLimitFewGroupsPasses(t *testing.T) {
	t.Parallel()
	mem := newLedger(t, 1<<20)
	var recs []arrow.RecordBatch
	for from := 0; from < 200_000; from += 10_000 {
		recs = append(recs, kvBatch(memory.DefaultAllocator, from, 10_000, func(i int) int64 { return int64(i % 100) }))
	}
	in := batchesReader(t, kvSchema, recs)
	release(recs)
	spec := aggregate.Spec{Groups: []int{0}, Measures: []aggregate.Measure{{Func: aggregate.CountStar, Filter: -1, Name: "n"}}}
	out, _, err := drain(context.Background(), in, kvSchema, spec, aggregate.Single, mem)
	defer release(out)
	if err != nil {
		t.Fatal(err)
	}
	if rows := canonRows(out); len(rows) != 99 { // keys 49 and 99 fall on NULL rows
		t.Fatalf("%d groups, want 99", len(rows))
	}
}

// TestManyGroups checks the output batching (at most BatchRows rows, first-appearance order)
// and that Partial over fragments then Final equals Single when there are more groups than
// one output batch holds, for every kind of state (distinct lists split across batches).
func TestManyGroups(t *testing.T) {
	t.Parallel()
	const rows, groups = 60_000, 20_000
	perm := rand.New(rand.NewPCG(1, 2)).Perm(groups)
	key := func(i int) int64 { return int64(perm[i%groups]) * 7 }
	var recs []arrow.RecordBatch
	for from := 0; from < rows; from += 7_000 {
		recs = append(recs, kvBatch(memory.DefaultAllocator, from, min(7_000, rows-from), key))
	}
	defer release(recs)
	spec := aggregate.Spec{Groups: []int{0}, Measures: []aggregate.Measure{
		{Func: aggregate.CountStar, Filter: -1, Name: "n"},
		{Func: aggregate.Count, Arg: 2, Distinct: true, Filter: -1, Name: "nv"},
		{Func: aggregate.Sum, Arg: 2, Distinct: true, Filter: 4, Name: "sv"},
		{Func: aggregate.Avg, Arg: 3, Distinct: true, Filter: -1, Name: "ax"},
		{Func: aggregate.VarPop, Arg: 3, Distinct: true, Filter: 4, Name: "vx"},
		{Func: aggregate.Count, Arg: 1, Distinct: true, Filter: -1, Name: "ns"},
		{Func: aggregate.Min, Arg: 1, Filter: -1, Name: "mins"},
		{Func: aggregate.Max, Arg: 3, Filter: 4, Name: "maxx"},
		{Func: aggregate.Avg, Arg: 2, Filter: -1, Name: "av"},
	}}
	for _, grp := range [][]int{{0}, {1, 0}} {
		spec.Groups = grp
		t.Run(fmt.Sprint(grp), func(t *testing.T) {
			mem := newLedger(t, 0)
			single, _, err := drain(context.Background(), batchesReader(t, kvSchema, recs), kvSchema, spec, aggregate.Single, mem)
			if err != nil {
				t.Fatal(err)
			}
			defer release(single)
			seen := map[int64]bool{}
			for i := range rows {
				if i%50 != 49 {
					seen[key(i)] = true
				}
			}
			total := int64(len(seen) + 1) // and NULL
			var sizes []int64
			for _, r := range single {
				sizes = append(sizes, r.NumRows())
			}
			if want := fmt.Sprint([]int64{8192, 8192, total - 2*8192}); fmt.Sprint(sizes) != want {
				t.Errorf("batch sizes %v, want %s", sizes, want)
			}
			want := canonRows(single)
			// First appearance: group i is row i's key for i < 99, NULL (row 49) included.
			for i, row := range want[:99] {
				var k any
				if i != 49 {
					k = fmt.Sprint(key(i))
				}
				if row[len(grp)-1] != k {
					t.Fatalf("group %d is %v, want %v", i, row[len(grp)-1], k)
				}
			}
			for _, k := range []int{1, 3, 8} {
				var partials []arrow.RecordBatch
				for f := range k {
					frag := recs[f*len(recs)/k : (f+1)*len(recs)/k]
					out, _, err := drain(context.Background(), batchesReader(t, kvSchema, frag), kvSchema, spec, aggregate.Partial, mem)
					if err != nil {
						t.Fatal(err)
					}
					partials = append(partials, out...)
				}
				pschema, _ := aggregate.PartialSchema(kvSchema, spec)
				final, _, err := drain(context.Background(), batchesReader(t, pschema, partials), kvSchema, spec, aggregate.Final, mem)
				release(partials)
				if err != nil {
					t.Fatal(err)
				}
				if d := diffRows(want, canonRows(final)); d != "" {
					t.Errorf("%d fragments: %.2000s", k, d)
				}
				release(final)
			}
		})
	}
}

func TestFinalOverNoPartials(t *testing.T) {
	t.Parallel()
	spec := aggregate.Spec{Measures: []aggregate.Measure{
		{Func: aggregate.CountStar, Filter: -1, Name: "n"},
		{Func: aggregate.Sum, Arg: 2, Filter: -1, Name: "s"},
		{Func: aggregate.Count, Arg: 1, Distinct: true, Filter: -1, Name: "d"},
		{Func: aggregate.Max, Arg: 1, Filter: -1, Name: "m"},
	}}
	pschema, err := aggregate.PartialSchema(kvSchema, spec)
	if err != nil {
		t.Fatal(err)
	}
	mem := newLedger(t, 0)
	out, _, err := drain(context.Background(), batchesReader(t, pschema, nil), kvSchema, spec, aggregate.Final, mem)
	if err != nil {
		t.Fatal(err)
	}
	if d := diffRows([][]any{{"0", nil, "0", nil}}, canonRows(out)); d != "" {
		t.Error(d)
	}
	release(out)

	spec.Groups = []int{1}
	pschema, _ = aggregate.PartialSchema(kvSchema, spec)
	out, _, err = drain(context.Background(), batchesReader(t, pschema, nil), kvSchema, spec, aggregate.Final, mem)
	if err != nil || len(out) != 0 {
		t.Fatalf("grouped over nothing: %d batches, %v", len(out), err)
	}
}

func TestPartialEmptyUngroupedIsOneRow(t *testing.T) {
	t.Parallel()
	spec := aggregate.Spec{Measures: []aggregate.Measure{
		{Func: aggregate.CountStar, Filter: -1, Name: "n"},
		{Func: aggregate.Avg, Arg: 2, Filter: -1, Name: "a"},
		{Func: aggregate.Sum, Arg: 2, Distinct: true, Filter: -1, Name: "d"},
	}}
	mem := newLedger(t, 0)
	out, schema, err := drain(context.Background(), batchesReader(t, kvSchema, nil), kvSchema, spec, aggregate.Partial, mem)
	if err != nil {
		t.Fatal(err)
	}
	defer release(out)
	if len(out) != 1 || out[0].NumRows() != 1 {
		t.Fatalf("partial over nothing: %v", out)
	}
	if got := schema.String(); !strings.Contains(got, "a.sum: type=decimal(38, 0), nullable") ||
		!strings.Contains(got, "a.count: type=int64") || !strings.Contains(got, "d: type=list<item: int64>") {
		t.Errorf("partial schema:\n%s", got)
	}
	// count 0, avg state (NULL, 0), distinct state [].
	row := out[0]
	if row.Column(0).(*array.Int64).Value(0) != 0 || row.Column(1).IsValid(0) ||
		row.Column(2).(*array.Int64).Value(0) != 0 || row.Column(3).(*array.List).ListValues().Len() != 0 {
		t.Errorf("partial state: %v", row)
	}
}

// TestDistinctState checks the documented partial state of a distinct measure: per group, the
// list of its distinct non-null filtered-in values in first-appearance order.
func TestDistinctState(t *testing.T) {
	t.Parallel()
	mem := newLedger(t, 0)
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "g", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "x", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	}, nil)
	rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, schema, strings.NewReader(`[
		{"g": "a", "x": 2}, {"g": "b", "x": null}, {"g": "a", "x": -0.0}, {"g": "a", "x": 2},
		{"g": "a", "x": 0}, {"g": null, "x": 5}, {"g": "b", "x": 1}, {"g": "a", "x": 7}
	]`))
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	spec := aggregate.Spec{Groups: []int{0}, Measures: []aggregate.Measure{
		{Func: aggregate.Count, Arg: 1, Distinct: true, Filter: -1, Name: "d"},
	}}
	out, _, err := drain(context.Background(), batchesReader(t, schema, []arrow.RecordBatch{rec}), schema, spec, aggregate.Partial, mem)
	if err != nil {
		t.Fatal(err)
	}
	defer release(out)
	if got, want := fmt.Sprint(out[0].Column(1)), "[[2 -0 7] [1] [5]]"; got != want {
		t.Errorf("distinct state %s, want %s", got, want)
	}
}

func TestContextCancelled(t *testing.T) {
	t.Parallel()
	mem := newLedger(t, 0)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rec := kvBatch(memory.DefaultAllocator, 0, 10, func(i int) int64 { return int64(i) })
	defer rec.Release()
	spec := aggregate.Spec{Groups: []int{0}, Measures: []aggregate.Measure{{Func: aggregate.CountStar, Filter: -1, Name: "n"}}}
	var released atomic.Int32
	in := &countingReader{RecordReader: batchesReader(t, kvSchema, []arrow.RecordBatch{rec}), released: &released}
	_, _, err := drain(ctx, in, kvSchema, spec, aggregate.Single, mem)
	if !errors.Is(err, context.Canceled) || !strings.HasPrefix(err.Error(), "aggregate: ") {
		t.Fatalf("error %v, want aggregate: context canceled", err)
	}
	if released.Load() != 1 {
		t.Errorf("input released %d times", released.Load())
	}
}

func TestInputError(t *testing.T) {
	t.Parallel()
	mem := newLedger(t, 0)
	rec := kvBatch(memory.DefaultAllocator, 0, 10, func(i int) int64 { return int64(i) })
	defer rec.Release()
	boom := errors.New("boom")
	var released atomic.Int32
	in := &countingReader{RecordReader: batchesReader(t, kvSchema, []arrow.RecordBatch{rec}), released: &released, err: boom}
	spec := aggregate.Spec{Groups: []int{1}, Measures: []aggregate.Measure{{Func: aggregate.Max, Arg: 1, Filter: -1, Name: "m"}}}
	_, _, err := drain(context.Background(), in, kvSchema, spec, aggregate.Single, mem)
	if !errors.Is(err, boom) || !strings.HasPrefix(err.Error(), "aggregate: ") {
		t.Fatalf("error %v, want boom", err)
	}
	if released.Load() != 1 {
		t.Errorf("input released %d times", released.Load())
	}
}

func TestReleaseBeforeNext(t *testing.T) {
	t.Parallel()
	mem := newLedger(t, 0)
	rec := kvBatch(mem, 0, 10, func(i int) int64 { return int64(i) })
	var released atomic.Int32
	in := &countingReader{RecordReader: batchesReader(t, kvSchema, []arrow.RecordBatch{rec}), released: &released}
	rec.Release()
	r, err := aggregate.New(context.Background(), in, kvSchema, aggregate.Spec{Groups: []int{1}}, aggregate.Single, mem)
	if err != nil {
		t.Fatal(err)
	}
	r.Retain()
	r.Release()
	if released.Load() != 0 {
		t.Fatal("input released while the reader is retained")
	}
	r.Release()
	if released.Load() != 1 {
		t.Errorf("input released %d times", released.Load())
	}
}

func TestSpecErrors(t *testing.T) {
	t.Parallel()
	m := func(f aggregate.Func, arg, filter int) aggregate.Measure {
		return aggregate.Measure{Func: f, Arg: arg, Filter: filter, Name: "m"}
	}
	listSchema := arrow.NewSchema([]arrow.Field{{Name: "l", Type: arrow.ListOf(arrow.PrimitiveTypes.Int8)}}, nil)
	for _, tc := range []struct {
		name   string
		schema *arrow.Schema
		spec   aggregate.Spec
		want   string
	}{
		{"group out of range", kvSchema, aggregate.Spec{Groups: []int{5}}, "aggregate: group 0: column 5 out of range"},
		{"group type", listSchema, aggregate.Spec{Groups: []int{0}}, "unsupported type list"},
		{"arg out of range", kvSchema, aggregate.Spec{Measures: []aggregate.Measure{m(aggregate.Sum, -1, -1)}}, "argument column -1 out of range"},
		{"sum of text", kvSchema, aggregate.Spec{Measures: []aggregate.Measure{m(aggregate.Sum, 1, -1)}}, `sum of column "s": type utf8 is not numeric`},
		{"avg of bool", kvSchema, aggregate.Spec{Measures: []aggregate.Measure{m(aggregate.Avg, 4, -1)}}, "not numeric"},
		{"filter not bool", kvSchema, aggregate.Spec{Measures: []aggregate.Measure{m(aggregate.Count, 1, 0)}}, `filter column "k" is int64, not bool`},
		{"filter out of range", kvSchema, aggregate.Spec{Measures: []aggregate.Measure{m(aggregate.Count, 1, 9)}}, "filter column 9 out of range"},
		{"distinct count(*)", kvSchema, aggregate.Spec{Measures: []aggregate.Measure{{Func: aggregate.CountStar, Distinct: true, Filter: -1, Name: "n"}}}, "count(*) cannot be distinct"},
		{"no name", kvSchema, aggregate.Spec{Measures: []aggregate.Measure{{Func: aggregate.CountStar, Filter: -1}}}, "empty name"},
		{"unknown func", kvSchema, aggregate.Spec{Measures: []aggregate.Measure{m(0, 1, -1)}}, "unknown function 0"},
		{"min of list", listSchema, aggregate.Spec{Measures: []aggregate.Measure{m(aggregate.Min, 0, -1)}}, "unsupported type list"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, f := range []func(*arrow.Schema, aggregate.Spec) (*arrow.Schema, error){aggregate.OutputSchema, aggregate.PartialSchema} {
				if _, err := f(tc.schema, tc.spec); err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "aggregate: ") {
					t.Errorf("error %v, want %q", err, tc.want)
				}
			}
			var released atomic.Int32
			in := &countingReader{RecordReader: batchesReader(t, tc.schema, nil), released: &released}
			if _, err := aggregate.New(context.Background(), in, tc.schema, tc.spec, aggregate.Single, nil); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("New: error %v, want %q", err, tc.want)
			}
			if released.Load() != 1 {
				t.Errorf("input released %d times by a failing New", released.Load())
			}
		})
	}
}

func TestInputSchemaMismatch(t *testing.T) {
	t.Parallel()
	spec := aggregate.Spec{Groups: []int{0}, Measures: []aggregate.Measure{{Func: aggregate.Sum, Arg: 2, Filter: -1, Name: "s"}}}
	// Final fed raw rows instead of partial states.
	if _, err := aggregate.New(context.Background(), batchesReader(t, kvSchema, nil), kvSchema, spec, aggregate.Final, nil); err == nil ||
		!strings.Contains(err.Error(), "aggregate: final input: schema has 5 fields, want 2") {
		t.Errorf("final over raw rows: %v", err)
	}
	other := arrow.NewSchema([]arrow.Field{{Name: "k", Type: arrow.PrimitiveTypes.Int32}}, nil)
	if _, err := aggregate.New(context.Background(), batchesReader(t, other, nil), kvSchema, spec, aggregate.Single, nil); err == nil {
		t.Error("single over another schema: no error")
	}
	if _, err := aggregate.New(context.Background(), batchesReader(t, kvSchema, nil), kvSchema, spec, aggregate.Mode(9), nil); err == nil {
		t.Error("unknown mode: no error")
	}
}

func TestSchemas(t *testing.T) {
	t.Parallel()
	spec := aggregate.Spec{Groups: []int{1, 0}, Measures: []aggregate.Measure{
		{Func: aggregate.CountStar, Filter: -1, Name: "n"},
		{Func: aggregate.Count, Arg: 3, Filter: 4, Name: "c"},
		{Func: aggregate.Sum, Arg: 2, Filter: -1, Name: "si"},
		{Func: aggregate.Sum, Arg: 3, Filter: -1, Name: "sf"},
		{Func: aggregate.Avg, Arg: 2, Filter: -1, Name: "a"},
		{Func: aggregate.Min, Arg: 1, Distinct: true, Filter: -1, Name: "mn"},
		{Func: aggregate.Count, Arg: 1, Distinct: true, Filter: -1, Name: "cd"},
	}}
	out, err := aggregate.OutputSchema(kvSchema, spec)
	if err != nil {
		t.Fatal(err)
	}
	const wantOut = `schema:
  fields: 9
    - s: type=utf8, nullable
    - k: type=int64, nullable
    - n: type=int64
    - c: type=int64
    - si: type=int64, nullable
    - sf: type=float64, nullable
    - a: type=float64, nullable
    - mn: type=utf8, nullable
    - cd: type=int64`
	if out.String() != wantOut {
		t.Errorf("output schema\n%s\nwant\n%s", out, wantOut)
	}
	part, err := aggregate.PartialSchema(kvSchema, spec)
	if err != nil {
		t.Fatal(err)
	}
	const wantPart = `schema:
  fields: 10
    - s: type=utf8, nullable
    - k: type=int64, nullable
    - n: type=int64
    - c: type=int64
    - si: type=decimal(38, 0), nullable
    - sf: type=float64, nullable
    - a.sum: type=decimal(38, 0), nullable
    - a.count: type=int64
    - mn: type=utf8, nullable
    - cd: type=list<item: utf8>`
	if part.String() != wantPart {
		t.Errorf("partial schema\n%s\nwant\n%s", part, wantPart)
	}
}

// TestDistinctNumeric: count and sum of distinct decimal128 values (one scale: 1.50 written
// twice is one value), NULLs and filtered rows skipped; each partial state lists a group's
// distinct values, and Final merges two partials' states into the distinct values of both
// (a value in both counted and added once), the sum past 38 digits 22003.
func TestDistinctNumeric(t *testing.T) {
	t.Parallel()
	dt := &arrow.Decimal128Type{Precision: 38, Scale: 2}
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "g", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "x", Type: dt, Nullable: true},
		{Name: "f", Type: arrow.FixedWidthTypes.Boolean},
	}, nil)
	batch := func(js string) arrow.RecordBatch {
		rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, schema, strings.NewReader(js))
		if err != nil {
			t.Fatal(err)
		}
		return rec
	}
	one := batch(`[{"g": "a", "x": "1.50", "f": true}, {"g": "a", "x": "1.50", "f": true}, {"g": "a", "x": null, "f": true},
		{"g": "a", "x": "-2.25", "f": true}, {"g": "b", "x": "7.00", "f": false}, {"g": "b", "x": "0.01", "f": true}]`)
	two := batch(`[{"g": "a", "x": "-2.25", "f": true}, {"g": "a", "x": "3.00", "f": true}, {"g": "b", "x": "0.01", "f": true}]`)
	defer one.Release()
	defer two.Release()
	spec := aggregate.Spec{Groups: []int{0}, Measures: []aggregate.Measure{
		{Func: aggregate.Count, Arg: 1, Distinct: true, Filter: 2, Name: "n"},
		{Func: aggregate.Sum, Arg: 1, Distinct: true, Filter: 2, Name: "s"},
	}}
	mem := newLedger(t, 0)
	var partials []arrow.RecordBatch
	for _, rec := range []arrow.RecordBatch{one, two} {
		out, _, err := drain(context.Background(), batchesReader(t, schema, []arrow.RecordBatch{rec}), schema, spec, aggregate.Partial, mem)
		if err != nil {
			t.Fatal(err)
		}
		defer release(out)
		partials = append(partials, out...)
	}
	if got, want := fmt.Sprint(partials[0].Column(1)), "[[1.5 -2.25] [0.01]]"; got != want {
		t.Errorf("distinct numeric state %s, want %s", got, want)
	}
	final, _, err := drain(context.Background(), batchesReader(t, partials[0].Schema(), partials), schema, spec, aggregate.Final, mem)
	if err != nil {
		t.Fatal(err)
	}
	defer release(final)
	if got, want := fmt.Sprint(final[0].Column(0), final[0].Column(1), final[0].Column(2)), `["a" "b"] [3 1] [2.25 0.01]`; got != want {
		t.Errorf("distinct numerics merged %s, want %s", got, want)
	}
	// A distinct total of 38 digits: 22003.
	big := batch(`[{"g": "a", "x": "999999999999999999999999999999999999.99", "f": true}, {"g": "a", "x": "0.01", "f": true}]`)
	defer big.Release()
	_, _, err = drain(context.Background(), batchesReader(t, schema, []arrow.RecordBatch{big}), schema, spec, aggregate.Single, mem)
	var de *ops.DataError
	if !errors.As(err, &de) || de.SQLState() != "22003" {
		t.Errorf("a distinct numeric sum of 39 digits: %v", err)
	}
}

// TestSumOfNarrowDecimal: a sum of decimal(10,2) values is decimal(38,2) (Substrait's sum of
// decimal<P,S>), in one pass and through partial states, plain and distinct, so that a total
// of more digits than its argument is held (99999999.99 twice and 99999999.98 are 299999999.96, 11 digits).
func TestSumOfNarrowDecimal(t *testing.T) {
	t.Parallel()
	dt := &arrow.Decimal128Type{Precision: 10, Scale: 2}
	schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: dt, Nullable: true}}, nil)
	rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, schema, strings.NewReader(`[{"x": "99999999.99"}, {"x": "99999999.99"}, {"x": null}, {"x": "99999999.98"}]`))
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	spec := aggregate.Spec{Measures: []aggregate.Measure{
		{Func: aggregate.Sum, Arg: 0, Filter: -1, Name: "s"},
		{Func: aggregate.Sum, Arg: 0, Distinct: true, Filter: -1, Name: "d"},
	}}
	mem := newLedger(t, 0)
	want := &arrow.Decimal128Type{Precision: 38, Scale: 2}
	check := func(what string, out []arrow.RecordBatch) {
		t.Helper()
		if len(out) != 1 || !arrow.TypeEqual(out[0].Column(0).DataType(), want) || !arrow.TypeEqual(out[0].Column(1).DataType(), want) {
			t.Fatalf("%s: %v", what, out)
		}
		if got := fmt.Sprint(out[0].Column(0), out[0].Column(1)); got != "[299999999.96] [199999999.97]" {
			t.Errorf("%s: sums %s", what, got)
		}
	}
	single, _, err := drain(context.Background(), batchesReader(t, schema, []arrow.RecordBatch{rec}), schema, spec, aggregate.Single, mem)
	if err != nil {
		t.Fatal(err)
	}
	defer release(single)
	check("single", single)
	partial, _, err := drain(context.Background(), batchesReader(t, schema, []arrow.RecordBatch{rec}), schema, spec, aggregate.Partial, mem)
	if err != nil {
		t.Fatal(err)
	}
	defer release(partial)
	final, _, err := drain(context.Background(), batchesReader(t, partial[0].Schema(), partial), schema, spec, aggregate.Final, mem)
	if err != nil {
		t.Fatal(err)
	}
	defer release(final)
	check("partial and final", final)
}
