package aggregate_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flightsrv/flightsrv/scan/aggregate"
)

// TestGroupKeysAgainstReference groups random batches by one text key, by two text keys, by
// text and int64, and by two float8 keys, with count(*), and checks every group's count
// against a count kept in a Go map of the rows' values: NULLs, the empty text, texts that
// differ only by a trailing NUL byte or in length around 7 and 8 bytes (the short values
// packed into integers and the longer ones kept as strings), -0 and +0, and NaN.
func TestGroupKeysAgainstReference(t *testing.T) {
	texts := []string{"", "\x00", "a", "a\x00", "ab", "abc", "ORD", "SFO", "abcdefg", "abcdefg\x00", "abcdefgh", "abcdefghi", "abcdefgi", "ÿÿÿÿÿÿÿ"}
	floats := []float64{0, math.Copysign(0, -1), 1, math.NaN(), math.Inf(1), -1.5}
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "s1", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "s2", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "i", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "f1", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "f2", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	}, nil)
	rng := rand.New(rand.NewPCG(19, 6))
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	// keyOf is a row's reference key of column c: "N" for NULL, else its value's text
	// (floats: -0 as 0 and every NaN alike, as PostgreSQL groups them).
	type row [5]string
	var batches []arrow.RecordBatch
	var rows []row
	for range 5 {
		// Runs of equal values as well as changes from row to row.
		for range 1000 + rng.IntN(3000) {
			var r row
			for c := range 5 {
				if rng.IntN(12) == 0 {
					b.Field(c).AppendNull()
					r[c] = "N"
					continue
				}
				switch c {
				case 0, 1:
					s := texts[rng.IntN(len(texts))]
					if c == 0 && rng.IntN(2) == 0 {
						s = "ORD" // a partition's constant value, mostly
					}
					b.Field(c).(*array.StringBuilder).Append(s)
					r[c] = "V" + s
				case 2:
					v := rng.Int64N(5) - 2
					b.Field(c).(*array.Int64Builder).Append(v)
					r[c] = fmt.Sprint(v)
				default:
					f := floats[rng.IntN(len(floats))]
					b.Field(c).(*array.Float64Builder).Append(f)
					switch {
					case math.IsNaN(f):
						r[c] = "NaN"
					case f == 0:
						r[c] = "0"
					default:
						r[c] = fmt.Sprint(f)
					}
				}
			}
			rows = append(rows, r)
		}
		batches = append(batches, b.NewRecordBatch())
	}
	defer release(batches)
	for _, groups := range [][]int{{0}, {1}, {0, 1}, {1, 0}, {0, 2}, {2, 1}, {3, 4}} {
		t.Run(fmt.Sprint(groups), func(t *testing.T) {
			want := map[string]int64{}
			for _, r := range rows {
				k := ""
				for _, c := range groups {
					k += fmt.Sprintf("%q|", r[c])
				}
				want[k]++
			}
			rr, err := array.NewRecordReader(schema, batches)
			if err != nil {
				t.Fatal(err)
			}
			spec := aggregate.Spec{Groups: groups, Measures: []aggregate.Measure{{Func: aggregate.CountStar, Filter: -1, Name: "n"}}}
			out, _, err := drain(context.Background(), rr, schema, spec, aggregate.Partial, newLedger(t, 0))
			if err != nil {
				t.Fatal(err)
			}
			defer release(out)
			got := map[string]int64{}
			for _, rec := range out {
				for i := range int(rec.NumRows()) {
					k := ""
					for c := range groups {
						col := rec.Column(c)
						var v string
						switch {
						case col.IsNull(i):
							v = "N"
						case col.DataType().ID() == arrow.STRING:
							v = "V" + col.(*array.String).Value(i)
						case col.DataType().ID() == arrow.INT64:
							v = fmt.Sprint(col.(*array.Int64).Value(i))
						default:
							f := col.(*array.Float64).Value(i)
							switch {
							case math.IsNaN(f):
								v = "NaN"
							case f == 0:
								v = "0"
							default:
								v = fmt.Sprint(f)
							}
						}
						k += fmt.Sprintf("%q|", v)
					}
					if _, dup := got[k]; dup {
						t.Fatalf("group %s answered twice", k)
					}
					got[k] = rec.Column(len(groups)).(*array.Int64).Value(i)
				}
			}
			if len(got) != len(want) {
				t.Fatalf("%d groups, want %d", len(got), len(want))
			}
			for k, n := range want {
				if got[k] != n {
					t.Errorf("group %s: count %d, want %d", k, got[k], n)
				}
			}
		})
	}
}
