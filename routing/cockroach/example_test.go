package cockroach_test

import (
	"context"
	"fmt"
	"time"

	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/routing/cockroach"
)

// Example shows the life of a bucket: append, routed read, claim, snapshot, publish. It needs
// a server, so it is compiled but not run.
func Example() {
	ctx := context.Background()
	store, err := cockroach.Open(ctx, cockroach.Config{URL: "postgres://root@localhost:26257/defaultdb?sslmode=disable"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer store.Close()
	if err := store.Validate(ctx); err != nil { // run store.Migrate from a deployment job first
		fmt.Println(err)
		return
	}
	pk := []byte("general")
	b := routing.BucketFor("chat", pk, routing.CalendarDayUTC, time.Now())
	if err := store.Append(ctx, b, []routing.Record{{PartitionKey: pk, EventTime: time.Now(), SortKey: []byte("m1"), Value: []byte("hi")}}); err != nil {
		fmt.Println(err)
		return
	}
	route, rows, err := store.ScanRange(ctx, b, routing.BatchRequest{Range: b.Range(), Columns: routing.AllColumns, Limit: 100})
	if err != nil {
		fmt.Println(err)
		return
	}
	if rows != nil { // nil when the bucket is archived: read its manifest instead
		for rows.Next() {
			fmt.Println(route.State, rows.RecordBatch().NumRows())
		}
		rows.Release()
	}

	sess, err := store.ClaimArchive(ctx, b, time.Minute)
	if err != nil || sess == nil {
		return // lost the race, or an error
	}
	snapshot, _ := store.Snapshot(ctx, sess)
	_ = snapshot // write the archive, then:
	_ = store.PublishArchive(ctx, sess, "archives/…/manifest-….json")
}
