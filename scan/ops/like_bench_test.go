package ops_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/types"

	"github.com/flightsrv/flightsrv/scan/ops"
)

// BenchmarkLike measures LIKE and ILIKE filters over 8,192-row batches of real payloads (the
// text of the binary value column, as value::text LIKE … reads it) and of short ids, per row:
// an infix (trial24's '%"destination":"HNL"%'), a suffix ('%5' over ids), a prefix, a pattern
// with '_', and ILIKE.
func BenchmarkLike(b *testing.B) {
	docs := flightPayloads(b)
	const rows = 8192
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "value", Type: arrow.BinaryTypes.Binary, Nullable: true},
		{Name: "id", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	vb := array.NewBinaryBuilder(memory.DefaultAllocator, arrow.BinaryTypes.Binary)
	ib := array.NewStringBuilder(memory.DefaultAllocator)
	for i := range rows {
		vb.Append(docs[i%len(docs)])
		ib.Append(fmt.Sprintf("flight-%d", 1000003*i%999983))
	}
	cols := []arrow.Array{vb.NewArray(), ib.NewArray()}
	vb.Release()
	ib.Release()
	batch := array.NewRecordBatch(schema, cols, rows)
	for _, c := range cols {
		c.Release()
	}
	defer batch.Release()
	rt := types.NewRecordTypeFromTypes([]types.Type{&types.BinaryType{Nullability: types.NullabilityNullable}, strOut})
	value, _ := expr.NewRootFieldRef(expr.NewStructFieldRef(0), rt)
	id, _ := expr.NewRootFieldRef(expr.NewStructFieldRef(1), rt)
	text := &expr.Cast{Type: strOut, Input: value, FailureBehavior: types.BehaviorThrowException}
	boolOut := &types.BooleanType{Nullability: types.NullabilityNullable}
	for _, c := range []struct {
		name string
		e    expr.Expression
	}{
		{"infix", own("like", boolOut, text, str(`%"destination":"HNL"%`))},
		{"suffix", own("like", boolOut, id, str("%5"))},
		{"prefix", own("like", boolOut, id, str("flight-12%"))},
		{"underscore", own("like", boolOut, id, str("flight-_2%"))},
		{"ilike", own("ilike", boolOut, text, str(`%"DESTINATION":"hnl"%`))},
	} {
		sqlfnMu.Lock()
		cx, err := ops.Compile(c.e, schema, sqlfnReg)
		sqlfnMu.Unlock()
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name, func(b *testing.B) {
			mem := newMem(b, 0)
			for b.Loop() {
				rdr, _ := array.NewRecordReader(schema, []arrow.RecordBatch{batch})
				p := ops.Project(context.Background(), rdr, []*ops.Expr{cx}, []string{"m"}, mem)
				for p.Next() {
				}
				if err := p.Err(); err != nil {
					b.Fatal(err)
				}
				p.Release()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*rows), "ns/row")
		})
	}
}
