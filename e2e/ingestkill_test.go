package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/flightsrv/flightsrv/internal/testsupport/pgtest"
	"github.com/flightsrv/flightsrv/internal/testsupport/testproc"
)

var servingRe = regexp.MustCompile(`msg="serving Flight SQL" addr=(\S+)`)

// TestIngestServerKilled kills `flightsrv serve` (SIGKILL) in the middle of a bulk-ingest
// stream, over PostgreSQL and over SQLite: a server started again on the same store reads
// back exactly the rows of the ingest that finished before, none of the killed one.
func TestIngestServerKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("starts server processes")
	}
	eachWriteStore(t, func(t *testing.T, serve func(args ...string) (*testproc.Process, *flightsql.Client)) {
		proc, cl := serve()
		ctx := context.Background()
		now := time.Now().UTC()
		rng := rand.New(rand.NewPCG(21, uint64(now.UnixNano())))
		first := makeEvents(rng, 2000, "before", now)
		if n, err := ingest(ctx, cl, wideSchema, eventBatches(first, 500, false, -1), nil); err != nil || n != int64(len(first)) {
			t.Fatalf("first ingest = %d, %v", n, err)
		}
		killed := makeEvents(rng, 20000, "killed", now)
		rdr := newBatchReader(wideSchema, eventBatches(killed, 500, false, -1))
		rdr.onNext = func(i int) {
			if i == 20 {
				proc.Kill()
			}
		}
		if _, err := cl.ExecuteIngest(ctx, rdr, &flightsql.ExecuteIngestOpts{Table: "events", TableDefinitionOptions: appendMode}); err == nil {
			t.Fatal("an ingest whose server was killed succeeded")
		}
		_, again := serve()
		sameEvents(t, "after the server was killed mid-stream", readEvents(t, again, now), first)
	})
}

// eachWriteStore runs body once over PostgreSQL (a throwaway cluster) and once over SQLite (a
// migrated file), each a subtest; serve starts `flightsrv serve` over that store with the
// events table (extra flags args) and returns the process and a client, both stopped at the
// subtest's end.
func eachWriteStore(t *testing.T, body func(t *testing.T, serve func(args ...string) (*testproc.Process, *flightsql.Client))) {
	bin := testproc.BuildFlightsrv(t)
	for _, store := range []string{"postgres", "sqlite"} {
		t.Run(store, func(t *testing.T) {
			var url string
			if store == "postgres" {
				_, url = pgtest.Start(t).NewStore(t)
			} else {
				url = "sqlite://" + filepath.Join(t.TempDir(), "hot.db")
				if out, err := exec.Command(bin, "migrate", "--store", url).CombinedOutput(); err != nil {
					t.Fatalf("migrate: %v\n%s", err, out)
				}
			}
			table := fmt.Sprintf("name=%s,id=%s,partition=%s,strategy=day,window=%d", eventsTable.Name, eventsTable.TableID, eventsTable.PartitionColumn, eventsTable.WritableBuckets)
			body(t, func(args ...string) (*testproc.Process, *flightsql.Client) {
				proc, addr := testproc.StartReady(t, "flightsrv serve", servingRe, bin, append([]string{"serve", "--store", url, "--table", table, "--listen", "127.0.0.1:0", "--no-auth"}, args...)...)
				cl, err := flightsql.NewClient(addr, nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithUserAgent("flightsrv-e2e"))
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { cl.Close() })
				return proc, cl
			})
		})
	}
}
