package archive_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"gocloud.dev/blob"
	_ "gocloud.dev/blob/fileblob"

	"github.com/flightsrv/flightsrv/archive"
	"github.com/flightsrv/flightsrv/routing"
)

// Archive one bucket to a file:// bucket and read it back through the archive reader.
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "archive-example")
	defer os.RemoveAll(dir)
	bucket, err := blob.OpenBucket(ctx, "file://"+dir)
	if err != nil {
		panic(err)
	}
	defer bucket.Close()

	w, _ := archive.NewWriter(bucket, archive.WriterOptions{Prefix: "archives"})
	r, _ := archive.NewReader(bucket, archive.ReaderOptions{})

	b := routing.BucketFor("messages", []byte("general"), routing.CalendarDayUTC, time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC))
	var recs []routing.Record
	for i := range 24 {
		recs = append(recs, routing.Record{
			PartitionKey: []byte("general"),
			EventTime:    b.Start.Add(time.Duration(i) * time.Hour),
			SortKey:      fmt.Appendf(nil, "msg-%02d", i),
			Value:        []byte("hello"),
		})
	}
	key, err := w.Put(ctx, b, 1, recs)
	if err != nil {
		panic(err)
	}
	morning := routing.TimeRange{Start: b.Start, End: b.Start.Add(12 * time.Hour)}
	// The partial aggregate of the morning: count(*), min and max of the event time, from the
	// manifest and the Parquet statistics.
	agg, err := r.Aggregate(ctx, key, b, routing.AggregateRequest{Range: morning, Measures: []routing.Measure{routing.CountStar, routing.MinTime, routing.MaxTime}})
	if err != nil {
		panic(err)
	}
	defer agg.Release()
	agg.Next()
	row := agg.RecordBatch()
	n := row.Column(0).(*array.Int64).Value(0)
	lo := time.Unix(0, int64(row.Column(1).(*array.Timestamp).Value(0))).UTC()
	hi := time.Unix(0, int64(row.Column(2).(*array.Timestamp).Value(0))).UTC()
	// The read path: the last two records, decoding only the id column, as Arrow batches.
	last, err := r.ReadBatches(ctx, key, b, routing.BatchRequest{Range: b.Range(), Columns: []routing.Column{routing.ColumnID}, Desc: true, Limit: 2})
	if err != nil {
		panic(err)
	}
	defer last.Release()
	last.Next()
	ids := last.RecordBatch().Column(0).(*array.String)
	fmt.Println(n, lo.Format(time.TimeOnly), hi.Format(time.TimeOnly), ids.Value(0), ids.Value(1))
	// Output: 12 00:00:00 11:00:00 msg-23 msg-22
}
