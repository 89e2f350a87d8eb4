package sqlite_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/routing/sqlite"
)

func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "sqlite-example-")
	defer os.RemoveAll(dir)

	store, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(dir, "hot.db")})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer store.Close()
	if err := store.Migrate(ctx); err != nil {
		fmt.Println(err)
		return
	}

	pk := []byte("general")
	b := routing.BucketFor("chat", pk, routing.CalendarDayUTC, time.Date(2024, 2, 29, 9, 0, 0, 0, time.UTC))
	_ = store.Append(ctx, b, []routing.Record{
		{PartitionKey: pk, EventTime: time.Date(2024, 2, 29, 9, 0, 0, 0, time.UTC), SortKey: []byte("m1"), Value: []byte("hello")},
		{PartitionKey: pk, EventTime: time.Date(2024, 2, 29, 9, 5, 0, 0, time.UTC), SortKey: []byte("m2"), Value: []byte("world")},
	})
	// The read path: route and rows from one statement, as Arrow batches of the columns asked.
	route, rows, _ := store.ScanRange(ctx, b, routing.BatchRequest{Range: b.Range(), Columns: []routing.Column{routing.ColumnTimestamp, routing.ColumnID, routing.ColumnValue}, Desc: true, Limit: 10})
	fmt.Println(b.Key, route.State)
	for rows.Next() {
		batch := rows.RecordBatch()
		for i := 0; i < int(batch.NumRows()); i++ {
			at := time.Unix(0, int64(batch.Column(0).(*array.Timestamp).Value(i))).UTC()
			fmt.Println(at.Format(time.RFC3339), batch.Column(1).(*array.String).Value(i), string(batch.Column(2).(*array.Binary).Value(i)))
		}
	}
	rows.Release()
	// The partial-aggregate port: count(*), min and max of the event time, from one statement.
	_, agg, _ := store.AggregateRange(ctx, b, routing.AggregateRequest{Range: b.Range(), Measures: []routing.Measure{routing.CountStar, routing.MinTime, routing.MaxTime}})
	agg.Next()
	row := agg.RecordBatch()
	fmt.Println("count", row.Column(0).(*array.Int64).Value(0), "max", time.Unix(0, int64(row.Column(2).(*array.Timestamp).Value(0))).UTC().Format(time.Kitchen))
	agg.Release()
	// Output:
	// day:2024-02-29 hot
	// 2024-02-29T09:05:00Z m2 world
	// 2024-02-29T09:00:00Z m1 hello
	// count 2 max 9:05AM
}
