package load

import (
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestNestedAndNonFiniteValues: value columns of nested types are encoded as nested JSON
// (a struct as an object, lists of every kind as arrays, a map as an object), and float NaN
// and infinities as the strings PostgreSQL's to_jsonb writes for a float8 ("NaN",
// "Infinity", "-Infinity"; checked on PostgreSQL 15: to_jsonb('NaN'::float8) is "NaN",
// to_jsonb(ARRAY[1,2,NULL]) [1, 2, null], to_jsonb(0.1::float4) 0.1) — never null, never a
// string of Arrow's rendering. Rows are read from a slice of the batch (offsets into the
// children). The expected values are written out here.
func TestNestedAndNonFiniteValues(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	point := arrow.StructOf(arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int64, Nullable: true}, arrow.Field{Name: "label", Type: arrow.BinaryTypes.String, Nullable: true})
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "p", Type: arrow.BinaryTypes.String},
		{Name: "t", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}},
		{Name: "id", Type: arrow.BinaryTypes.String},
		{Name: "f", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "r", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
		{Name: "pt", Type: point, Nullable: true},
		{Name: "xs", Type: arrow.ListOf(arrow.PrimitiveTypes.Float64), Nullable: true},
		{Name: "tags", Type: arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int32), Nullable: true},
		{Name: "pts", Type: arrow.LargeListOf(point), Nullable: true},
		{Name: "pair", Type: arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Int16), Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	at := time.Date(2001, 1, 1, 5, 57, 0, 0, time.UTC)
	type row struct {
		f      float64
		r      float32
		null   bool // every nested column null
		x      int64
		label  string
		xs     []float64
		tags   [][2]any
		pairOK bool
	}
	rows := []row{
		{f: 1, r: 1, x: 0, label: "skipped", xs: []float64{9}, tags: [][2]any{{"z", int32(9)}}, pairOK: true},
		{f: math.NaN(), r: float32(math.Inf(-1)), x: 7, label: `a "b"`, xs: []float64{1.5, math.Inf(1), math.NaN()}, tags: [][2]any{{"k", int32(1)}, {"n", nil}}, pairOK: true},
		{f: math.Inf(1), r: 0.1, null: true},
		{f: -2.5, r: float32(math.NaN()), x: -1, label: "", xs: []float64{}, tags: [][2]any{}, pairOK: false},
	}
	for i, r := range rows {
		b.Field(0).(*array.StringBuilder).Append("ORD")
		b.Field(1).(*array.TimestampBuilder).Append(arrow.Timestamp(at.UnixMicro()))
		b.Field(2).(*array.StringBuilder).Append(string(rune('a' + i)))
		b.Field(3).(*array.Float64Builder).Append(r.f)
		b.Field(4).(*array.Float32Builder).Append(r.r)
		sb := b.Field(5).(*array.StructBuilder)
		lb := b.Field(6).(*array.ListBuilder)
		mb := b.Field(7).(*array.MapBuilder)
		llb := b.Field(8).(*array.LargeListBuilder)
		fb := b.Field(9).(*array.FixedSizeListBuilder)
		if r.null {
			sb.AppendNull()
			lb.AppendNull()
			mb.AppendNull()
			llb.AppendNull()
			fb.AppendNull()
			continue
		}
		sb.Append(true)
		sb.FieldBuilder(0).(*array.Int64Builder).Append(r.x)
		sb.FieldBuilder(1).(*array.StringBuilder).Append(r.label)
		lb.Append(true)
		for _, x := range r.xs {
			lb.ValueBuilder().(*array.Float64Builder).Append(x)
		}
		mb.Append(true)
		for _, kv := range r.tags {
			mb.KeyBuilder().(*array.StringBuilder).Append(kv[0].(string))
			if kv[1] == nil {
				mb.ItemBuilder().AppendNull()
			} else {
				mb.ItemBuilder().(*array.Int32Builder).Append(kv[1].(int32))
			}
		}
		// pts: the point itself and a null point.
		llb.Append(true)
		ps := llb.ValueBuilder().(*array.StructBuilder)
		ps.Append(true)
		ps.FieldBuilder(0).(*array.Int64Builder).Append(r.x)
		ps.FieldBuilder(1).AppendNull()
		ps.AppendNull()
		if r.pairOK {
			fb.Append(true)
			fb.ValueBuilder().(*array.Int16Builder).AppendValues([]int16{int16(r.x), 3}, nil)
		} else {
			fb.AppendNull()
		}
	}
	full := b.NewRecordBatch()
	defer full.Release()
	rec := full.NewSlice(1, 4)
	defer rec.Release()

	conv, err := NewConverter(schema, Mapping{Partition: "p", Time: "t", ID: "id"})
	if err != nil {
		t.Fatal(err)
	}
	recs, err := conv.Append(nil, rec, 0, int(rec.NumRows()), 1)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`{"f":"NaN","r":"-Infinity","pt":{"x":7,"label":"a \"b\""},"xs":[1.5,"Infinity","NaN"],"tags":{"k":1,"n":null},"pts":[{"x":7,"label":null},null],"pair":[7,3]}`,
		`{"f":"Infinity","r":0.1,"pt":null,"xs":null,"tags":null,"pts":null,"pair":null}`,
		`{"f":-2.5,"r":"NaN","pt":{"x":-1,"label":""},"xs":[],"tags":{},"pts":[{"x":-1,"label":null},null],"pair":null}`,
	}
	if len(recs) != len(want) {
		t.Fatalf("%d records, want %d", len(recs), len(want))
	}
	for i, r := range recs {
		if string(r.Value) != want[i] {
			t.Errorf("row %d value\n %s\nwant\n %s", i+1, r.Value, want[i])
		}
		if !json.Valid(r.Value) {
			t.Errorf("row %d value is not JSON: %s", i+1, r.Value)
		}
		if string(r.SortKey) != string(rune('b'+i)) {
			t.Errorf("row %d id %q", i+1, r.SortKey)
		}
	}
}
