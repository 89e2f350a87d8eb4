package ops

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flightsrv/flightsrv/internal/fuzzcount"
	"github.com/flightsrv/flightsrv/scan/ledger"
)

// runSet runs ProjectSet of one call of fn over a one-column input of docs (nil: NULL) of
// type dt and returns its rows' columns as Go values (nil for NULL), the batches' sizes and
// the error.
func runSet(t *testing.T, dt arrow.DataType, vals []any, fn string, ordinality, outer bool, mem *ledger.Ledger) ([][]any, []int, error) {
	t.Helper()
	in := arrow.NewSchema([]arrow.Field{{Name: "d", Type: dt, Nullable: true}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, in)
	defer b.Release()
	for _, v := range vals {
		switch x := v.(type) {
		case nil:
			b.Field(0).AppendNull()
		case string:
			b.Field(0).(*array.BinaryBuilder).Append([]byte(x))
		case int64:
			b.Field(0).(*array.Int64Builder).Append(x)
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	reader, err := array.NewRecordReader(in, []arrow.RecordBatch{rec})
	if err != nil {
		t.Fatal(err)
	}
	col, err := Column(in, 0)
	if err != nil {
		t.Fatal(err)
	}
	args := []*Expr{col}
	if fn == "generate_series" {
		args = []*Expr{col, col}
		one, err := Column(in, 0)
		if err != nil {
			t.Fatal(err)
		}
		args[0] = one
	}
	types := make([]arrow.DataType, len(args))
	for i, a := range args {
		types[i] = a.Type()
	}
	outs, err := SetFuncOutputs(fn, types)
	if err != nil {
		t.Fatal(err)
	}
	fields := []arrow.Field{in.Field(0)}
	for _, o := range outs {
		fields = append(fields, arrow.Field{Name: "o", Type: o, Nullable: true})
	}
	if ordinality {
		fields = append(fields, arrow.Field{Name: "n", Type: arrow.PrimitiveTypes.Int64, Nullable: true})
	}
	out := ProjectSet(context.Background(), reader, []SetCall{{Name: fn, Args: args}}, ordinality, outer, arrow.NewSchema(fields, nil), mem)
	defer out.Release()
	var rows [][]any
	var sizes []int
	for out.Next() {
		batch := out.RecordBatch()
		sizes = append(sizes, int(batch.NumRows()))
		for r := range int(batch.NumRows()) {
			var row []any
			for c := 1; c < int(batch.NumCols()); c++ {
				a := batch.Column(c)
				if a.IsNull(r) {
					row = append(row, nil)
					continue
				}
				switch x := a.(type) {
				case *array.String:
					row = append(row, x.Value(r))
				case *array.Binary:
					row = append(row, string(x.Value(r)))
				case *array.Int64:
					row = append(row, x.Value(r))
				}
			}
			rows = append(rows, row)
		}
	}
	return rows, sizes, out.Err()
}

// TestProjectSetSeriesBatches: generate_series(d, d) … of long series cuts batches at
// MaxBatchRows, numbers each input row's rows, and an outer ProjectSet keeps a row without
// rows as one NULL row.
func TestProjectSetSeriesBatches(t *testing.T) {
	// generate_series(d, d) is one row per non-NULL d; its length is checked through
	// json_array_elements below. Here: rows, ordinality and the outer NULL row.
	rows, _, err := runSet(t, arrow.PrimitiveTypes.Int64, []any{int64(5), nil, int64(7)}, "generate_series", true, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]any{{int64(5), int64(1)}, {nil, nil}, {int64(7), int64(1)}}
	if len(rows) != len(want) {
		t.Fatalf("rows %v, want %v", rows, want)
	}
	for i := range want {
		for j := range want[i] {
			if rows[i][j] != want[i][j] {
				t.Fatalf("rows %v, want %v", rows, want)
			}
		}
	}
	// A document of 20,000 elements: batches of at most MaxBatchRows, ordinality 1…20000.
	doc := "[" + strings.Repeat("1,", 19_999) + "2]"
	rows, sizes, err := runSet(t, arrow.BinaryTypes.Binary, []any{doc}, "json_array_elements", true, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 20_000 || rows[19_999][0] != "2" || rows[19_999][1] != int64(20_000) || rows[0][1] != int64(1) {
		t.Fatalf("%d rows, last %v", len(rows), rows[len(rows)-1])
	}
	for _, s := range sizes {
		if s > MaxBatchRows {
			t.Fatalf("batch of %d rows", s)
		}
	}
}

// TestProjectSetJSON: document order and duplicates for json, escapes unescaped for the
// _text forms and kept for json, JSON null as NULL text, NULL documents without rows.
func TestProjectSetJSON(t *testing.T) {
	doc := `{"b": [1,  2], "a":1, "a": "x\u00e9\"y", "n": null, "k\n": {"z" : 1.50}}`
	rows, _, err := runSet(t, arrow.BinaryTypes.Binary, []any{doc, nil, `{}`}, "json_each_text", false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]any{{"b", "[1,  2]"}, {"a", "1"}, {"a", "xé\"y"}, {"n", nil}, {"k\n", `{"z" : 1.50}`}}
	if len(rows) != len(want) {
		t.Fatalf("rows %q, want %q", rows, want)
	}
	for i := range want {
		if rows[i][0] != want[i][0] || rows[i][1] != want[i][1] {
			t.Fatalf("rows %q, want %q", rows, want)
		}
	}
	rows, _, err = runSet(t, arrow.BinaryTypes.Binary, []any{doc}, "json_each", false, false, nil)
	if err != nil || rows[2][1] != `"x\u00e9\"y"` || rows[3][1] != "null" {
		t.Fatalf("json_each: %q, %v", rows, err)
	}
	var de *DataError
	for fn, msg := range map[string]string{
		"json_each": "cannot deconstruct an array as an object", "jsonb_each": "cannot call jsonb_each on a non-object",
		"json_array_elements": "cannot call json_array_elements on a scalar", "jsonb_object_keys": "cannot call jsonb_object_keys on an array",
	} {
		d := "[1]"
		if strings.Contains(msg, "scalar") {
			d = "3"
		}
		if _, _, err := runSet(t, arrow.BinaryTypes.Binary, []any{d}, fn, false, false, nil); !errors.As(err, &de) || de.Code != "22023" || de.Msg != msg {
			t.Errorf("%s(%s): %v, want 22023 %q", fn, d, err, msg)
		}
	}
}

// TestProjectSetMemoryLimit: the values a large document yields are bounded by the query's
// memory limit: past it the reader fails with ErrMemoryLimit.
func TestProjectSetMemoryLimit(t *testing.T) {
	big := `["` + strings.Repeat("x", 1<<20) + `", "` + strings.Repeat("y", 1<<20) + `"]`
	mem := ledger.New(nil, 1<<20)
	if _, _, err := runSet(t, arrow.BinaryTypes.Binary, []any{big}, "json_array_elements_text", false, false, mem); !errors.Is(err, ledger.ErrMemoryLimit) {
		t.Fatalf("%v, want the memory limit's error", err)
	}
	if _, _, err := runSet(t, arrow.BinaryTypes.Binary, []any{big}, "json_array_elements_text", false, false, ledger.New(nil, 64<<20)); err != nil {
		t.Fatalf("under a limit of 64 MiB: %v", err)
	}
}

// FuzzJSONSetFuncs: the JSON set-returning functions over arbitrary documents never panic,
// fail only with a DataError, and on a document encoding/json reads yield its members (or
// elements) in order, every value JSON text, a string's _text its value.
func FuzzJSONSetFuncs(f *testing.F) {
	for _, s := range []string{`{"b": [1,  2], "a":1, "a": "x\u00e9\"y", "n": null}`, `[1, "a", null, [ ], {}]`, `{}`, `[]`, `3`, `"s"`,
		`{"\ud83d\ude00": "\u0041"}`, `[1, 2`, `{"a":"x\u0000"}`, ` [ 1 ] `} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		fuzzcount.Add()
		for _, fn := range []string{"json_each", "json_each_text", "json_array_elements", "json_array_elements_text", "json_object_keys"} {
			rows, _, err := runSet(t, arrow.BinaryTypes.Binary, []any{string(doc)}, fn, false, false, nil)
			if err != nil {
				if de := (*DataError)(nil); !errors.As(err, &de) {
					t.Fatalf("%s(%q): %v is not a DataError", fn, doc, err)
				}
				continue
			}
			if !json.Valid(doc) {
				t.Fatalf("%s(%q) answers a document encoding/json refuses", fn, doc)
			}
			var want []json.RawMessage
			var keys []string
			dec := json.NewDecoder(strings.NewReader(string(doc)))
			tok, _ := dec.Token()
			for dec.More() {
				if tok == json.Delim('{') {
					k, _ := dec.Token()
					keys = append(keys, k.(string))
				}
				var v json.RawMessage
				if err := dec.Decode(&v); err != nil {
					t.Fatal(err)
				}
				want = append(want, v)
			}
			if len(rows) != len(want) {
				t.Fatalf("%s(%q): %d rows, encoding/json reads %d", fn, doc, len(rows), len(want))
			}
			for i, r := range rows {
				switch fn {
				case "json_each", "json_each_text":
					if r[0] != keys[i] {
						t.Fatalf("%s(%q): key %d %q, want %q", fn, doc, i, r[0], keys[i])
					}
					r = r[1:]
				case "json_object_keys":
					if r[0] != keys[i] {
						t.Fatalf("%s(%q): key %d %q, want %q", fn, doc, i, r[0], keys[i])
					}
					continue
				}
				var s string
				isStr := json.Unmarshal(want[i], &s) == nil
				switch {
				case strings.HasSuffix(fn, "_text") && string(want[i]) == "null":
					if r[0] != nil {
						t.Fatalf("%s(%q): value %d %q, want NULL", fn, doc, i, r[0])
					}
				case strings.HasSuffix(fn, "_text") && isStr:
					if r[0] != s {
						t.Fatalf("%s(%q): value %d %q, want %q", fn, doc, i, r[0], s)
					}
				default:
					if v, ok := r[0].(string); !ok || !json.Valid([]byte(v)) {
						t.Fatalf("%s(%q): value %d %q is not JSON", fn, doc, i, r[0])
					}
				}
			}
		}
	})
}
