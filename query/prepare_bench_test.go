package query_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/flightsrv/flightsrv/query"
	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/routing/sqlite"
)

// BenchmarkCountStatement measures what a client pays per COUNT(*) statement on the engine:
// Prepare (GetFlightInfo) then Execute (DoGet) of the same SQL text, over one hot day bucket
// holding 100 records, pushdown on.
func BenchmarkCountStatement(b *testing.B) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(b.TempDir(), "hot.db")})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	if err := st.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	day := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	def := routing.TableDef{Name: "messages", TableID: "m", PartitionColumn: "channel_id", Strategy: routing.CalendarDayUTC, WritableBuckets: 2}
	tbl, err := routing.NewDurableTable(def, st, nil, routing.Options{Clock: func() time.Time { return day }})
	if err != nil {
		b.Fatal(err)
	}
	recs := make([]routing.Record, 100)
	for i := range recs {
		recs[i] = routing.Record{PartitionKey: []byte("general"), EventTime: day.Add(time.Duration(i) * time.Minute), SortKey: []byte{byte(i)}, Value: []byte("v")}
	}
	if _, err := tbl.Append(ctx, recs); err != nil {
		b.Fatal(err)
	}
	eng, err := query.New([]*routing.DurableTable{tbl}, query.Options{Pushdown: true})
	if err != nil {
		b.Fatal(err)
	}
	const sql = "SELECT COUNT(*) FROM messages WHERE channel_id = 'general' AND timestamp >= TIMESTAMPTZ '2025-03-01T00:00:00Z' AND timestamp < TIMESTAMPTZ '2025-03-02T00:00:00Z'"
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := eng.Prepare(ctx, sql, nil); err != nil {
			b.Fatal(err)
		}
		rdr, err := eng.Execute(ctx, sql, nil, nil)
		if err != nil {
			b.Fatal(err)
		}
		rdr.Next()
		if n := rdr.RecordBatch().Column(0).ValueStr(0); n != "100" {
			b.Fatalf("count %s", n)
		}
		rdr.Release()
	}
}
