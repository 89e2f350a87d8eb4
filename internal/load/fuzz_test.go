package load

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flightsrv/flightsrv/internal/fuzzcount"
)

// FuzzConverter runs one client row of arbitrary values through the conversion Flight SQL bulk
// ingest and load share (Converter): a partition as text or binary, a time as text or a
// timestamp, an id, and value columns of several types under an arbitrary name. It must not
// panic; a refusal names row 0 (never a value); an accepted row keeps the partition and id
// bytes as sent and its value is valid JSON, as is a narrow row's payload passed through.
func FuzzConverter(f *testing.F) {
	f.Add("ORD", "2001-01-01 05:57:00", "f1", int64(1_000_000), 1.5, "note", "a \"quoted\" note", false, uint8(0))
	f.Add("Zürich", "2026-12-04T10:00:00.123456789+02:00", "q", int64(-1), 0.0, "value", "{}", true, uint8(3))
	f.Add("\xff", "x", "", int64(0), 2.5, "p", "", false, uint8(1))
	f.Fuzz(func(t *testing.T, part, ts, id string, n int64, x float64, name, note string, null bool, shape uint8) {
		fuzzcount.Add()
		if name == "p" || name == "t" || name == "id" || name == "x" || name == "n" {
			name += "_"
		}
		var pType, tType arrow.DataType = arrow.BinaryTypes.String, arrow.BinaryTypes.String
		if shape&1 != 0 {
			pType = arrow.BinaryTypes.Binary
		}
		if shape&2 != 0 {
			tType = &arrow.TimestampType{Unit: arrow.Microsecond}
		}
		narrow := shape&4 != 0
		fields := []arrow.Field{{Name: "p", Type: pType}, {Name: "t", Type: tType}, {Name: "id", Type: arrow.BinaryTypes.String}}
		if narrow {
			fields = append(fields, arrow.Field{Name: "value", Type: arrow.BinaryTypes.Binary, Nullable: true})
		} else {
			fields = append(fields, arrow.Field{Name: "n", Type: arrow.PrimitiveTypes.Int64}, arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Float64},
				arrow.Field{Name: name, Type: arrow.BinaryTypes.String, Nullable: true})
		}
		schema := arrow.NewSchema(fields, nil)
		b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		defer b.Release()
		if shape&1 != 0 {
			b.Field(0).(*array.BinaryBuilder).Append([]byte(part))
		} else {
			b.Field(0).(*array.StringBuilder).Append(part)
		}
		if shape&2 != 0 {
			b.Field(1).(*array.TimestampBuilder).Append(arrow.Timestamp(n))
		} else {
			b.Field(1).(*array.StringBuilder).Append(ts)
		}
		b.Field(2).(*array.StringBuilder).Append(id)
		m := Mapping{Partition: "p", Time: "t", ID: "id"}
		if narrow {
			m.Payload = "value"
			if null {
				b.Field(3).AppendNull()
			} else {
				b.Field(3).(*array.BinaryBuilder).Append([]byte(note))
			}
		} else {
			b.Field(3).(*array.Int64Builder).Append(n)
			b.Field(4).(*array.Float64Builder).Append(x)
			if null {
				b.Field(5).AppendNull()
			} else {
				b.Field(5).(*array.StringBuilder).Append(note)
			}
		}
		rec := b.NewRecordBatch()
		defer rec.Release()
		conv, err := NewConverter(schema, m)
		if err != nil {
			t.Fatalf("the mapping of a fixed schema: %v", err)
		}
		recs, err := conv.Append(nil, rec, 0, 1, 0)
		if err != nil {
			if !strings.Contains(err.Error(), "row 0") {
				t.Fatalf("a refusal that names no row: %v", err)
			}
			if !utf8.ValidString(part) && shape&1 != 0 && !errors.Is(err, ErrInvalidUTF8) && strings.Contains(err.Error(), "partition") {
				t.Fatalf("invalid UTF-8 partition refused otherwise: %v", err)
			}
			return
		}
		if len(recs) != 1 {
			t.Fatalf("%d records of one row", len(recs))
		}
		r := recs[0]
		if string(r.PartitionKey) != part {
			t.Fatalf("partition %q stored as %q", part, r.PartitionKey)
		}
		if string(r.SortKey) != id {
			t.Fatalf("id %q stored as %q", id, r.SortKey)
		}
		if narrow {
			if string(r.Value) != note {
				t.Fatal("a narrow row's value was changed")
			}
			return
		}
		if !json.Valid(r.Value) {
			t.Fatalf("value %q is not JSON", r.Value)
		}
	})
}
