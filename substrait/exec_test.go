package substrait

import (
	"context"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/compute/exprs"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/substrait-io/substrait-go/v8/plan"
)

// filterOf returns the FilterRel of a canonical plan.
func filterOf(t *testing.T, p *plan.Plan) *plan.FilterRel {
	t.Helper()
	rel := p.GetRoots()[0].Input()
	for rel != nil {
		if f, ok := rel.(*plan.FilterRel); ok {
			return f
		}
		in := rel.GetInputs()
		if len(in) != 1 {
			break
		}
		rel = in[0]
	}
	t.Fatal("no FilterRel")
	return nil
}

// TestFilterExecutesWithArrowCompute runs the routed predicate of canonical plans through
// arrow-go's compute/exprs over a batch of TableSchema, as the scan executor will, and
// compares the selection with the half-open contract evaluated in Go.
func TestFilterExecutesWithArrowCompute(t *testing.T) {
	t.Parallel()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	cat := testCatalog(t)
	schema := TableSchema(testDef)

	type row struct {
		part string
		ts   time.Time
	}
	rows := []row{
		{"general", jan1.Add(-time.Nanosecond)},
		{"general", jan1},
		{"general", jan1.Add(time.Nanosecond)},
		{"other", jan1.Add(time.Hour)},
		{"general", feb1.Add(-time.Nanosecond)},
		{"general", feb1},
		{"General", jan1.Add(time.Hour)},
	}
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	for i, r := range rows {
		b.Field(0).(*array.StringBuilder).Append(r.part)
		b.Field(1).(*array.TimestampBuilder).Append(arrow.Timestamp(r.ts.UnixNano()))
		b.Field(2).(*array.StringBuilder).Append(string(rune('a' + i)))
		b.Field(3).(*array.BinaryBuilder).Append([]byte{byte(i)})
	}
	rec := b.NewRecordBatch()
	defer rec.Release()

	for _, sql := range []string{
		`SELECT * FROM messages` + routedWhere,
		`SELECT count(*) FROM messages WHERE '2026-02-01' > timestamp AND timestamp >= TIMESTAMPTZ '2026-01-01T01:00:00+01:00' AND 'general' = channel_id`,
	} {
		p, err := FromSQL(sql, cat)
		if err != nil {
			t.Fatal(err)
		}
		ctx := compute.WithAllocator(context.Background(), mem)
		ctx = exprs.WithExtensionIDSet(ctx, exprs.NewExtensionSetDefault(p.ExtensionRegistry()))
		out, err := exprs.ExecuteScalarExpression(ctx, schema, filterOf(t, p).Condition(), compute.NewDatumWithoutOwning(rec))
		if err != nil {
			t.Fatalf("%q: execute: %v", sql, err)
		}
		mask := out.(*compute.ArrayDatum).MakeArray().(*array.Boolean)
		for i, r := range rows {
			want := r.part == "general" && !r.ts.Before(jan1) && r.ts.Before(feb1)
			if mask.Value(i) != want || mask.IsNull(i) {
				t.Errorf("%q: row %d (%s %s) selected=%v, want %v", sql, i, r.part, r.ts, mask.Value(i), want)
			}
		}
		mask.Release()
		out.Release()
	}
}
