package archive_test

import (
	"context"
	"fmt"
	"os"
	"time"

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
	n, _ := r.Count(ctx, key, b, morning)
	last, _ := r.Read(ctx, key, b, routing.ReadRequest{Range: b.Range(), Limit: 2, Desc: true})
	fmt.Println(n, string(last[0].SortKey), string(last[1].SortKey))
	// Output: 12 msg-23 msg-22
}
