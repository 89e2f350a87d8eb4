package aggregate_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flightsrv/flightsrv/scan/aggregate"
	"github.com/flightsrv/flightsrv/scan/ledger"
)

// Two fragments aggregate their rows partially; the coordinator combines the partial states.
func Example() {
	mem := ledger.New(memory.DefaultAllocator, 64<<20)
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "origin", Type: arrow.BinaryTypes.String},
		{Name: "delay", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	}, nil)
	spec := aggregate.Spec{Groups: []int{0}, Measures: []aggregate.Measure{
		{Func: aggregate.CountStar, Filter: -1, Name: "flights"},
		{Func: aggregate.Avg, Arg: 1, Filter: -1, Name: "avg_delay"},
		{Func: aggregate.Count, Arg: 1, Distinct: true, Filter: -1, Name: "delays"},
	}}
	fragment := func(rows string) array.RecordReader {
		rec, _, err := array.RecordFromJSON(mem, schema, strings.NewReader(rows))
		if err != nil {
			panic(err)
		}
		defer rec.Release()
		in, _ := array.NewRecordReader(schema, []arrow.RecordBatch{rec})
		r, err := aggregate.New(context.Background(), in, schema, spec, aggregate.Partial, mem)
		if err != nil {
			panic(err)
		}
		return r
	}
	var partials []arrow.RecordBatch
	for _, rows := range []string{
		`[{"origin": "ORD", "delay": 10}, {"origin": "SFO", "delay": null}, {"origin": "ORD", "delay": 10}]`,
		`[{"origin": "JFK", "delay": -3}, {"origin": "ORD", "delay": 4}]`,
	} {
		r := fragment(rows)
		for r.Next() {
			r.RecordBatch().Retain()
			partials = append(partials, r.RecordBatch())
		}
		r.Release()
	}
	pschema, _ := aggregate.PartialSchema(schema, spec)
	in, _ := array.NewRecordReader(pschema, partials)
	for _, p := range partials {
		p.Release()
	}
	final, err := aggregate.New(context.Background(), in, schema, spec, aggregate.Final, mem)
	if err != nil {
		panic(err)
	}
	defer final.Release()
	for final.Next() {
		rec := final.RecordBatch()
		for i := range int(rec.NumRows()) {
			fmt.Println(rec.Column(0).ValueStr(i), rec.Column(1).ValueStr(i), rec.Column(2).ValueStr(i), rec.Column(3).ValueStr(i))
		}
	}
	if err := final.Err(); err != nil {
		panic(err)
	}
	// Output:
	// ORD 3 8 2
	// SFO 1 (null) 0
	// JFK 1 -3 1
}
