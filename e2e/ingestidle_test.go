package e2e

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/flightsrv/flightsrv/internal/testsupport/testproc"
)

// TestIdleIngestAbandoned: a bulk-ingest stream whose client goes quiet mid-stream longer than
// `--put-idle-timeout` ends with DEADLINE_EXCEEDED and stores nothing, over PostgreSQL and
// SQLite, and the next ingest into the same buckets is stored (trial 32 F10: an idle DoPut
// held its transaction, and every other write on SQLite, until the query timeout).
func TestIdleIngestAbandoned(t *testing.T) {
	if testing.Short() {
		t.Skip("starts server processes")
	}
	eachWriteStore(t, func(t *testing.T, serve func(args ...string) (*testproc.Process, *flightsql.Client)) {
		_, cl := serve("--put-idle-timeout", "300ms")
		ctx := context.Background()
		now := time.Now().UTC()
		rng := rand.New(rand.NewPCG(22, uint64(now.UnixNano())))
		idle := makeEvents(rng, 2000, "idle", now)
		rdr := newBatchReader(wideSchema, eventBatches(idle, 500, false, -1))
		rdr.onNext = func(i int) {
			if i == 2 {
				time.Sleep(2 * time.Second) // quiet: the server's bound is 300 ms
			}
		}
		_, err := cl.ExecuteIngest(ctx, rdr, &flightsql.ExecuteIngestOpts{Table: "events", TableDefinitionOptions: appendMode})
		if st, _ := status.FromError(err); err == nil || st.Code() != codes.DeadlineExceeded {
			t.Fatalf("an ingest whose client went quiet: %v, want DEADLINE_EXCEEDED", err)
		}
		sameEvents(t, "after an abandoned ingest", readEvents(t, cl, now), nil)
		next := makeEvents(rng, 2000, "next", now)
		if n, err := ingest(ctx, cl, wideSchema, eventBatches(next, 500, false, -1), nil); err != nil || n != int64(len(next)) {
			t.Fatalf("the ingest after an abandoned one = %d, %v", n, err)
		}
		sameEvents(t, "after the next ingest", readEvents(t, cl, now), next)
	})
}
