// The goldens in testdata/ are computed by DuckDB; regenerate them from the repository root
// with:
//
//	.venv/bin/python scan/aggregate/testdata/gen.py
//
// These tests only read the committed files (no Python needed).

package aggregate_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/flightsrv/flightsrv/scan/aggregate"
)

type goldenFile struct {
	Generator string       `json:"generator"`
	Cases     []goldenCase `json:"cases"`
}

type goldenCase struct {
	Table    string          `json:"table"`
	Groups   []string        `json:"groups"`
	Measures []goldenMeasure `json:"measures"`
	SQL      string          `json:"sql"`
	Rows     [][]any         `json:"rows"`
	Error    string          `json:"error"`
}

type goldenMeasure struct {
	Func     string  `json:"func"`
	Arg      *string `json:"arg"`
	Distinct bool    `json:"distinct"`
	Filter   *string `json:"filter"`
	Name     string  `json:"name"`
}

var funcs = map[string]aggregate.Func{
	"count_star": aggregate.CountStar, "count": aggregate.Count, "sum": aggregate.Sum,
	"avg": aggregate.Avg, "min": aggregate.Min, "max": aggregate.Max,
}

func loadGolden(t *testing.T) goldenFile {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	var g goldenFile
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	if len(g.Cases) == 0 {
		t.Fatal("no golden cases")
	}
	return g
}

func column(t *testing.T, s *arrow.Schema, name string) int {
	t.Helper()
	idx := s.FieldIndices(name)
	if len(idx) != 1 {
		t.Fatalf("column %q: %d matches", name, len(idx))
	}
	return idx[0]
}

func (c goldenCase) spec(t *testing.T, s *arrow.Schema) aggregate.Spec {
	var spec aggregate.Spec
	for _, g := range c.Groups {
		spec.Groups = append(spec.Groups, column(t, s, g))
	}
	for _, m := range c.Measures {
		f, ok := funcs[m.Func]
		if !ok {
			t.Fatalf("unknown func %q", m.Func)
		}
		am := aggregate.Measure{Func: f, Distinct: m.Distinct, Filter: -1, Name: m.Name}
		if m.Arg != nil {
			am.Arg = column(t, s, *m.Arg)
		}
		if m.Filter != nil {
			am.Filter = column(t, s, *m.Filter)
		}
		spec.Measures = append(spec.Measures, am)
	}
	return spec
}

// check compares one run's outcome with the golden case.
func (c goldenCase) check(out []arrow.RecordBatch, err error) error {
	if c.Error != "" {
		if err == nil {
			return fmt.Errorf("no error, want %q", c.Error)
		}
		if err.Error() != c.Error || !errors.Is(err, aggregate.ErrSumOverflow) {
			return fmt.Errorf("error %q, want %q", err, c.Error)
		}
		return nil
	}
	if err != nil {
		return err
	}
	if d := diffRows(c.Rows, canonRows(out)); d != "" {
		return errors.New(d)
	}
	return nil
}

// splits returns the ways the golden tests cut n rows into batches: one batch; an empty batch
// then one; one row per batch; and two batches cut at every position.
func splits(n int64) [][]int64 {
	out := [][]int64{{0, n}, {0, 0, n}}
	one := []int64{0}
	for i := int64(1); i <= n; i++ {
		one = append(one, i)
	}
	if n > 0 {
		out = append(out, one)
	}
	for p := int64(1); p < n; p++ {
		out = append(out, []int64{0, p, n})
	}
	return out
}

// fragments returns k contiguous fragments of n rows, as cut points (some empty when k > n).
func fragments(n int64, k int) []int64 {
	cuts := make([]int64, k+1)
	for i := range cuts {
		cuts[i] = n * int64(i) / int64(k)
	}
	return cuts
}

// runPartialFinal runs Partial over each fragment of rec (cut at cuts), then Final over all
// the partial outputs concatenated in fragment order.
func runPartialFinal(t *testing.T, rec arrow.RecordBatch, cuts []int64, spec aggregate.Spec) ([]arrow.RecordBatch, error) {
	mem := newLedger(t, 0)
	ctx := context.Background()
	var partials []arrow.RecordBatch
	defer func() { release(partials) }()
	pschema, err := aggregate.PartialSchema(rec.Schema(), spec)
	if err != nil {
		return nil, err
	}
	for i := 0; i+1 < len(cuts); i++ {
		out, _, err := drain(ctx, readerOf(t, rec, cuts[i:i+2]), rec.Schema(), spec, aggregate.Partial, mem)
		if err != nil {
			return nil, fmt.Errorf("partial %d: %w", i, err)
		}
		partials = append(partials, out...)
	}
	in, err := array.NewRecordReader(pschema, partials)
	if err != nil {
		return nil, err
	}
	out, _, err := drain(ctx, in, rec.Schema(), spec, aggregate.Final, mem)
	return out, err
}

func caseName(i int, c goldenCase) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%03d_%s", i, c.Table)
	for _, g := range c.Groups {
		b.WriteString("_" + g)
	}
	if len(c.Measures) > 0 && c.Measures[len(c.Measures)-1].Arg != nil {
		b.WriteString("_" + *c.Measures[len(c.Measures)-1].Arg)
	}
	return b.String()
}

// TestGoldenSingle runs every golden query in Single mode over every split of its input into
// batches.
func TestGoldenSingle(t *testing.T) {
	t.Parallel()
	g := loadGolden(t)
	for i, c := range g.Cases {
		t.Run(caseName(i, c), func(t *testing.T) {
			t.Parallel()
			rec := loadTable(t, c.Table)
			spec := c.spec(t, rec.Schema())
			mem := newLedger(t, 0)
			for _, cuts := range splits(rec.NumRows()) {
				out, schema, err := drain(context.Background(), readerOf(t, rec, cuts), rec.Schema(), spec, aggregate.Single, mem)
				if err == nil {
					want, _ := aggregate.OutputSchema(rec.Schema(), spec)
					if !schema.Equal(want) {
						t.Errorf("schema %s, want %s", schema, want)
					}
				}
				if err := c.check(out, err); err != nil {
					t.Errorf("%s\ncuts %v: %v", c.SQL, cuts, err)
				}
				release(out)
			}
		})
	}
}

// TestGoldenPartialFinal runs every golden query as Partial over 1..7 contiguous fragments (and
// over none, for the empty table) followed by Final over the concatenated partial outputs.
func TestGoldenPartialFinal(t *testing.T) {
	t.Parallel()
	g := loadGolden(t)
	for i, c := range g.Cases {
		t.Run(caseName(i, c), func(t *testing.T) {
			t.Parallel()
			rec := loadTable(t, c.Table)
			spec := c.spec(t, rec.Schema())
			n := rec.NumRows()
			var cutss [][]int64
			if n == 0 {
				cutss = append(cutss, []int64{0}) // no fragment at all
			}
			for k := 1; k <= 7; k++ {
				cutss = append(cutss, fragments(n, k))
			}
			if n > 2 {
				cutss = append(cutss, []int64{0, 0, 1, 1, n - 1, n, n}) // with empty fragments
			}
			for _, cuts := range cutss {
				out, err := runPartialFinal(t, rec, cuts, spec)
				if err := c.check(out, err); err != nil {
					t.Errorf("%s\nfragments %v: %v", c.SQL, cuts, err)
				}
				release(out)
			}
		})
	}
}
