// Golden tests: DuckDB's answers (testdata/golden.json) over the rows of testdata/rows.json.
// Regenerate both files from the repository root with
//
//	.venv/bin/python scan/ops/testdata/gen.py
//
// (DuckDB and pyarrow in .venv; see the script's header). These tests need no Python.
package ops_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/flightsrv/flightsrv/scan/ops"
)

type goldenCase struct {
	Name    string         `json:"name"`
	Kind    string         `json:"kind"`
	Expr    map[string]any `json:"expr"`
	SQL     string         `json:"sql"`
	Rows    []int64        `json:"rows"`
	Values  []any          `json:"values"`
	Keys    []goldenKey    `json:"keys"`
	Fetches []struct {
		Offset int64   `json:"offset"`
		Limit  int64   `json:"limit"`
		SQL    string  `json:"sql"`
		Rows   []int64 `json:"rows"`
	} `json:"fetches"`
}

type goldenKey struct {
	Col        string `json:"col"`
	Desc       bool   `json:"desc"`
	NullsFirst bool   `json:"nulls_first"`
}

func goldenCases(t testing.TB, kind string) []goldenCase {
	t.Helper()
	var g struct {
		Cases []goldenCase `json:"cases"`
	}
	readJSON(t, "golden.json", &g)
	var out []goldenCase
	for _, c := range g.Cases {
		if c.Kind == kind {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		t.Fatalf("no %s case in golden.json", kind)
	}
	return out
}

func TestGoldenFilter(t *testing.T) {
	ctx := context.Background()
	for _, c := range goldenCases(t, "filter") {
		t.Run(c.Name, func(t *testing.T) {
			mem := newMem(t, 0)
			rows := goldenRows(t, mem)
			defer rows.Release()
			p := newPlanner(t)
			for variant, pred := range p.compile(p.build(c.Expr))[0] {
				for name, sizes := range splits(int(rows.NumRows())) {
					got := rowNumbers(t, ops.Filter(ctx, sourceOf(t, rows, sizes), pred, mem))
					if !equalInts(got, c.Rows) {
						t.Fatalf("compilation %d, split %s: got rows %v, DuckDB (%s) %v", variant, name, got, c.SQL, c.Rows)
					}
				}
			}
		})
	}
}

func TestGoldenProject(t *testing.T) {
	ctx := context.Background()
	for _, c := range goldenCases(t, "project") {
		t.Run(c.Name, func(t *testing.T) {
			mem := newMem(t, 0)
			rows := goldenRows(t, mem)
			defer rows.Release()
			p := newPlanner(t)
			for variant, e := range p.compile(p.build(c.Expr))[0] {
				for name, sizes := range splits(int(rows.NumRows())) {
					r := ops.Project(ctx, sourceOf(t, rows, sizes), []*ops.Expr{e}, []string{"v"}, mem)
					bs, err := drain(t, r)
					if err != nil {
						t.Fatalf("compilation %d, split %s: %v", variant, name, err)
					}
					got := values(t, bs)
					releaseBatches(bs)
					if d := diffValues(got, c.Values); d != "" {
						t.Fatalf("compilation %d, split %s, %s (DuckDB: %s)", variant, name, d, c.SQL)
					}
				}
			}
		})
	}
}

// values returns column 0 of bs as strings comparable with the golden values.
func values(t testing.TB, bs []arrow.RecordBatch) []*string {
	var out []*string
	for _, b := range bs {
		col := b.Column(0)
		for i := range col.Len() {
			if col.IsNull(i) {
				out = append(out, nil)
				continue
			}
			var s string
			switch a := col.(type) {
			case *array.Timestamp:
				s = strconv.FormatInt(int64(a.Value(i)), 10)
			case *array.Int64:
				s = strconv.FormatInt(a.Value(i), 10)
			case *array.Float64:
				s = normFloat(a.Value(i))
			case *array.String:
				s = a.Value(i)
			case *array.Boolean:
				s = strconv.FormatBool(a.Value(i))
			default:
				t.Fatalf("result of type %s", col.DataType())
			}
			out = append(out, &s)
		}
	}
	return out
}

func normFloat(f float64) string {
	if math.IsNaN(f) {
		return "NaN"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

func diffValues(got []*string, want []any) string {
	if len(got) != len(want) {
		return fmt.Sprintf("got %d values, want %d", len(got), len(want))
	}
	for i, w := range want {
		var ws *string
		switch v := w.(type) {
		case nil:
		case json.Number:
			s := v.String()
			ws = &s
		case bool:
			s := strconv.FormatBool(v)
			ws = &s
		case string:
			s := v
			if f, err := strconv.ParseFloat(v, 64); err == nil && (slices.Contains([]byte(v), '.') || v == "NaN") {
				s = normFloat(f)
			}
			ws = &s
		}
		switch {
		case (ws == nil) != (got[i] == nil):
			return fmt.Sprintf("row %d: got %v, want %v", i, deref(got[i]), deref(ws))
		case ws != nil && *ws != *got[i]:
			return fmt.Sprintf("row %d: got %s, want %s", i, *got[i], *ws)
		}
	}
	return ""
}

func deref(s *string) string {
	if s == nil {
		return "NULL"
	}
	return *s
}

func sortKeys(t testing.TB, ks []goldenKey) []ops.SortKey {
	out := make([]ops.SortKey, len(ks))
	for i, k := range ks {
		out[i] = ops.SortKey{Column: colIndex(t, k.Col), Desc: k.Desc, NullsFirst: k.NullsFirst}
	}
	return out
}

func TestGoldenSort(t *testing.T) {
	for _, path := range []string{"arrow", "own"} {
		t.Run(path, func(t *testing.T) {
			if path == "arrow" {
				defer ops.UseArrowSort()()
			}
			for _, c := range goldenCases(t, "sort") {
				t.Run(c.Name, func(t *testing.T) { goldenSort(t, c) })
			}
		})
	}
}

func goldenSort(t *testing.T, c goldenCase) {
	ctx := context.Background()
	mem := newMem(t, 0)
	rows := goldenRows(t, mem)
	defer rows.Release()
	n := int(rows.NumRows())
	keys := sortKeys(t, c.Keys)
	for name, sizes := range splits(n) {
		src := func() *source { return sourceOf(t, rows, sizes) }
		if got := rowNumbers(t, ops.Sort(ctx, src(), keys, mem)); !equalInts(got, c.Rows) {
			t.Fatalf("split %s: Sort gave %v, DuckDB (%s) %v", name, got, c.SQL, c.Rows)
		}
		for _, f := range c.Fetches {
			if got := rowNumbers(t, ops.Fetch(ops.Sort(ctx, src(), keys, mem), f.Offset, f.Limit)); !equalInts(got, f.Rows) {
				t.Fatalf("split %s: Fetch(Sort, %d, %d) gave %v, DuckDB (%s) %v", name, f.Offset, f.Limit, got, f.SQL, f.Rows)
			}
			if got := rowNumbers(t, ops.Fetch(ops.TopK(ctx, src(), keys, f.Offset+f.Limit, mem), f.Offset, -1)); !equalInts(got, f.Rows) {
				t.Fatalf("split %s: Fetch(TopK(%d), %d) gave %v, DuckDB %v", name, f.Offset+f.Limit, f.Offset, got, f.Rows)
			}
		}
		// Merge of the sorted pieces of a contiguous split: ties come from earlier pieces,
		// which hold the earlier rows, so the merge is the stable sort of all.
		var ins []array.RecordReader
		for _, p := range cut(rows, sizes) {
			ins = append(ins, ops.Sort(ctx, sourceOfWhole(t, p), keys, mem))
			p.Release()
		}
		if got := rowNumbers(t, ops.Merge(ctx, ins, keys, mem)); !equalInts(got, c.Rows) {
			t.Fatalf("split %s: Merge of sorted pieces gave %v, DuckDB %v", name, got, c.Rows)
		}
	}
	for k := int64(0); k <= int64(n)+2; k++ {
		for _, sizes := range [][]int{{n}, splits(n)["rows"], splits(n)["uneven"]} {
			want := c.Rows[:min(k, int64(n))]
			if got := rowNumbers(t, ops.TopK(ctx, sourceOf(t, rows, sizes), keys, k, mem)); !equalInts(got, want) {
				t.Fatalf("TopK(%d) over %d batches gave %v, want %v", k, len(sizes), got, want)
			}
		}
	}
}

func sourceOfWhole(t testing.TB, b arrow.RecordBatch) *source {
	return newSource(t, b.Schema(), []arrow.RecordBatch{b})
}

// TestGoldenSortedRowsArePermutations checks that every order of the oracle holds every row
// once, so that a truncated golden file would not go unnoticed.
func TestGoldenSortedRowsArePermutations(t *testing.T) {
	for _, c := range goldenCases(t, "sort") {
		got := slices.Clone(c.Rows)
		sort.Slice(got, func(i, j int) bool { return got[i] < got[j] })
		for i, v := range got {
			if v != int64(i) {
				t.Fatalf("%s: DuckDB's order is not a permutation of the rows", c.Name)
			}
		}
	}
}
