package query_test

import (
	"context"
	"testing"
	"time"

	"github.com/flightsrv/flightsrv/query"
	"github.com/flightsrv/flightsrv/routing"
)

// BenchmarkSeriesCount measures count(*) over generate_series(1, 1000000) on the engine
// (Execute of a cached statement), a series the executor streams (ProjectSet) and whose rows
// count against --query-max-rows (the default bound) once a batch: counting must not slow it
// (trial 33 m9).
func BenchmarkSeriesCount(b *testing.B) {
	ctx := context.Background()
	tbl := benchHotTable(b, time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC))
	eng, err := query.New([]*routing.DurableTable{tbl}, query.Options{Pushdown: true})
	if err != nil {
		b.Fatal(err)
	}
	const sql = "SELECT count(*) FROM generate_series(1, 1000000)"
	b.ReportAllocs()
	for b.Loop() {
		rdr, err := eng.Execute(ctx, sql, nil, nil)
		if err != nil {
			b.Fatal(err)
		}
		rdr.Next()
		if n := rdr.RecordBatch().Column(0).ValueStr(0); n != "1000000" {
			b.Fatalf("count %s (%v)", n, rdr.Err())
		}
		rdr.Release()
	}
}
