package ops_test

import (
	"context"
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/extensions"
	"github.com/substrait-io/substrait-go/v8/plan"
	"github.com/substrait-io/substrait-go/v8/types"

	"github.com/flightsrv/flightsrv/scan/ledger"
	"github.com/flightsrv/flightsrv/scan/ops"
)

// Example evaluates date_trunc('day', timestamp), encoded as the SQL front end encodes it, and
// keeps the two latest rows.
func Example() {
	ctx := context.Background()
	mem := ledger.New(memory.DefaultAllocator, 64<<20) // the query's allocator and memory limit

	schema := arrow.NewSchema([]arrow.Field{
		{Name: "timestamp", Type: &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}},
		{Name: "id", Type: arrow.BinaryTypes.String},
	}, nil)
	rb := array.NewRecordBuilder(mem, schema)
	for i, ts := range []string{"2024-02-28T23:59:59Z", "2024-02-29T12:00:00Z", "2024-02-29T00:00:00Z", "2024-03-01T00:00:01Z"} {
		t, _ := time.Parse(time.RFC3339, ts)
		rb.Field(0).(*array.TimestampBuilder).Append(arrow.Timestamp(t.UnixNano()))
		rb.Field(1).(*array.StringBuilder).Append(fmt.Sprint("row", i))
	}
	batch := rb.NewRecordBatch()
	rb.Release()
	in, _ := array.NewRecordReader(schema, []arrow.RecordBatch{batch})
	batch.Release()

	// The Substrait expressions, from a plan builder (a plan's ExtensionRegistry resolves them).
	b := plan.NewBuilderDefault()
	read := b.NamedScan([]string{"t"}, types.NamedStruct{Names: []string{"timestamp", "id"}, Struct: types.StructType{
		Nullability: types.NullabilityRequired,
		Types: []types.Type{
			&types.PrecisionTimestampTzType{PrecisionTimestampType: types.PrecisionTimestampType{Precision: types.PrecisionNanoSeconds, Nullability: types.NullabilityRequired}},
			&types.StringType{Nullability: types.NullabilityRequired},
		},
	}})
	ts, _ := b.RootFieldRef(read, 0)
	id, _ := b.RootFieldRef(read, 1)
	day, _ := b.ScalarFn(extensions.SubstraitDefaultURNPrefix+"functions_datetime", "round_calendar", nil,
		ts, types.Enum("FLOOR"), types.Enum("DAY"), types.Enum("MONTH"), expr.NewPrimitiveLiteral(int64(1), false),
		expr.NewPrimitiveLiteral("UTC", false))
	p, _ := b.Plan(read, []string{"timestamp", "id"})
	dayExpr, err := ops.Compile(day, schema, p.ExtensionRegistry())
	if err != nil {
		panic(err)
	}
	idExpr, _ := ops.Compile(id, schema, p.ExtensionRegistry())

	// Project (day, id), then the two rows of the latest days, ties by id.
	proj := ops.Project(ctx, in, []*ops.Expr{dayExpr, idExpr}, []string{"day", "id"}, mem)
	r := ops.TopK(ctx, proj, []ops.SortKey{{Column: 0, Desc: true}, {Column: 1}}, 2, mem)
	defer r.Release()
	for r.Next() {
		out := r.RecordBatch()
		days, ids := out.Column(0).(*array.Timestamp), out.Column(1).(*array.String)
		for i := range int(out.NumRows()) {
			fmt.Println(time.Unix(0, int64(days.Value(i))).UTC().Format(time.DateOnly), ids.Value(i))
		}
	}
	if err := r.Err(); err != nil {
		panic(err)
	}
	// Output:
	// 2024-03-01 row3
	// 2024-02-29 row1
}
