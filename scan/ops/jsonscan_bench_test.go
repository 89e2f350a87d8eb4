package ops_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/types"

	"github.com/flightsrv/flightsrv/internal/load"
	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/scan/ops"
)

// payloadSink collects the values load.File makes: the payloads flightsrv stores.
type payloadSink struct{ values [][]byte }

func (p *payloadSink) Append(_ context.Context, recs []routing.Record) (int, error) {
	for _, r := range recs {
		p.values = append(p.values, r.Value)
	}
	return len(recs), nil
}

var (
	payloadOnce sync.Once
	payloads    [][]byte
	payloadErr  error
)

// flightPayloads returns the JSON values of testdata/flights-sample.parquet as the loader
// encodes them (`flightsrv load --partition origin --time date --id id`: every other column
// in source order, e.g. {"delay":-3,"distance":599,"destination":"SFO"}).
func flightPayloads(b *testing.B) [][]byte {
	payloadOnce.Do(func() {
		var s payloadSink
		_, payloadErr = load.File(context.Background(), &s, filepath.Join("..", "..", "testdata", "flights-sample.parquet"),
			load.Mapping{Partition: "origin", Time: "date", ID: "id"})
		payloads = s.values
	})
	if payloadErr != nil {
		b.Fatal(payloadErr)
	}
	return payloads
}

// BenchmarkJSONFields measures reading the fields of the issue 19 queries from 8,192-row
// batches of real payloads (binary column): value->>'destination', (value->>'delay')::int and
// (value->>'distance')::int in one Project, through the column-at-a-time extraction
// (engine=columnar) and through the per-row reference of before (engine=gjson-per-row:
// gjson, one parse per row per expression, then arrow-go's cast of the text), per row.
func BenchmarkJSONFields(b *testing.B) {
	docs := flightPayloads(b)
	const rows = 8192
	schema := arrow.NewSchema([]arrow.Field{{Name: "value", Type: arrow.BinaryTypes.Binary, Nullable: true}}, nil)
	bb := array.NewBinaryBuilder(memory.DefaultAllocator, arrow.BinaryTypes.Binary)
	for i := range rows {
		bb.Append(docs[i%len(docs)])
	}
	col := bb.NewArray()
	bb.Release()
	batch := array.NewRecordBatch(schema, []arrow.Array{col}, rows)
	col.Release()
	defer batch.Release()
	rt := types.NewRecordTypeFromTypes([]types.Type{&types.BinaryType{Nullability: types.NullabilityNullable}})
	v, _ := expr.NewRootFieldRef(expr.NewStructFieldRef(0), rt)
	i32 := &types.Int32Type{Nullability: types.NullabilityNullable}
	cast := func(e expr.Expression) expr.Expression {
		return &expr.Cast{Type: i32, Input: e, FailureBehavior: types.BehaviorThrowException}
	}
	es := []expr.Expression{
		own("json_get_text", strOut, v, str("destination")),
		cast(own("json_get_text", strOut, v, str("delay"))),
		cast(own("json_get_text", strOut, v, str("distance"))),
	}
	var exprs []*ops.Expr
	for _, e := range es {
		sqlfnMu.Lock()
		cx, err := ops.Compile(e, schema, sqlfnReg)
		sqlfnMu.Unlock()
		if err != nil {
			b.Fatal(err)
		}
		exprs = append(exprs, cx)
	}
	b.Run("engine=columnar", func(b *testing.B) {
		mem := newMem(b, 0)
		for b.Loop() {
			rdr, _ := array.NewRecordReader(schema, []arrow.RecordBatch{batch})
			p := ops.Project(context.Background(), rdr, exprs, []string{"d", "x", "y"}, mem)
			for p.Next() {
			}
			if err := p.Err(); err != nil {
				b.Fatal(err)
			}
			p.Release()
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*rows), "ns/row")
	})
	b.Run("engine=gjson-per-row", func(b *testing.B) {
		steps := [][]ops.RefStep{{{Key: "destination"}}, {{Key: "delay"}}, {{Key: "distance"}}}
		for b.Loop() {
			sb := array.NewStringBuilder(memory.DefaultAllocator)
			var texts [2]*array.String
			for k, st := range steps {
				tb := array.NewStringBuilder(memory.DefaultAllocator)
				for i := range rows {
					s, null, err := ops.GJSONRef(col.(*array.Binary).Value(i), st, false, true)
					if err != nil {
						b.Fatal(err)
					}
					if null {
						tb.AppendNull()
					} else {
						tb.Append(s)
					}
				}
				a := tb.NewStringArray()
				tb.Release()
				if k == 0 {
					a.Release()
					continue
				}
				texts[k-1] = a
			}
			for _, t := range texts {
				out, err := ops.CastTextForBench(t, arrow.PrimitiveTypes.Int32)
				if err != nil {
					b.Fatal(err)
				}
				out.Release()
				t.Release()
			}
			sb.Release()
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*rows), "ns/row")
	})
}

// BenchmarkJSONNumeric measures (value->>'distance')::numeric(10,0) of BenchmarkAnalytical's
// numeric query over 8,192-row batches of real payloads (binary column), per row: the cast
// fused into the column-at-a-time extraction, reading each field's bytes straight into
// decimal128 (cast=fused), and the extraction of the field's text column then numeric_cast of
// that column, as the query ran before the fusion (cast=text-then-numeric_cast).
func BenchmarkJSONNumeric(b *testing.B) {
	docs := flightPayloads(b)
	const rows = 8192
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "value", Type: arrow.BinaryTypes.Binary, Nullable: true},
		{Name: "text", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	bb := array.NewBinaryBuilder(memory.DefaultAllocator, arrow.BinaryTypes.Binary)
	for i := range rows {
		bb.Append(docs[i%len(docs)])
	}
	col := bb.NewArray()
	bb.Release()
	defer col.Release()
	rt := types.NewRecordTypeFromTypes([]types.Type{&types.BinaryType{Nullability: types.NullabilityNullable}, &types.StringType{Nullability: types.NullabilityNullable}})
	ref := func(i int32) expr.Expression {
		r, _ := expr.NewRootFieldRef(expr.NewStructFieldRef(i), rt)
		return r
	}
	compile := func(e expr.Expression) *ops.Expr { return compileOver(b, e, schema) }
	text := own("json_get_text", strOut, ref(0), str("distance"))
	fused := compile(numCastOf("ROUND", 0, 10, text))
	textX := compile(text)
	castX := compile(numCastOf("ROUND", 0, 10, ref(1)))
	nullText := array.MakeArrayOfNull(memory.DefaultAllocator, arrow.BinaryTypes.String, rows)
	defer nullText.Release()
	batch := array.NewRecordBatch(schema, []arrow.Array{col, nullText}, rows)
	defer batch.Release()
	ctx := context.Background()
	b.Run("cast=fused", func(b *testing.B) {
		mem := newMem(b, 0)
		for b.Loop() {
			out, err := fused.Eval(ctx, batch, mem)
			if err != nil {
				b.Fatal(err)
			}
			out.Release()
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*rows), "ns/row")
	})
	b.Run("cast=text-then-numeric_cast", func(b *testing.B) {
		mem := newMem(b, 0)
		for b.Loop() {
			tx, err := textX.Eval(ctx, batch, mem)
			if err != nil {
				b.Fatal(err)
			}
			tb := array.NewRecordBatch(schema, []arrow.Array{col, tx}, rows)
			tx.Release()
			out, err := castX.Eval(ctx, tb, mem)
			tb.Release()
			if err != nil {
				b.Fatal(err)
			}
			out.Release()
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*rows), "ns/row")
	})
}
