package e2e

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/flightsrv/flightsrv/server"
)

// endlessCount is a query that runs until it is cancelled: counting 10^12 generated rows.
const endlessCount = "SELECT count(*) FROM generate_series(1, 1000000000000)"

// TestPollsLeaveSlotsToQueries (the trial of fire-and-forget polls): a client starts polls of
// a query that runs until cancelled, more of them than the server's query slots and queue
// places together, and stops asking about them. Under --max-queries 2, --max-queued 2 and a
// short --queue-wait, a SELECT 1 and ORD's count from another client are still answered (the
// count equal to the sample's) while the polls are unfinished: one runs in the polls' share
// of the slots (one of two) and the others wait in their own queue, saying "queued" in their
// app_metadata. CancelFlightInfo then cancels each (its next poll answers CANCELLED), and a
// later poll runs to completion with the sample's count.
func TestPollsLeaveSlotsToQueries(t *testing.T) {
	e := newEnv(t)
	srv := serverWith(t, e, func(c *server.Config) {
		c.Alloc, c.MaxQueries, c.MaxQueued, c.QueueWait = e.alloc, 2, 2, time.Second
	})
	poller, other := dial(t, srv), dial(t, srv)
	ctx := context.Background()
	const polls = 6 // beyond the 2 slots and 2 queue places
	infos := make([]*flight.PollInfo, polls)
	for i := range infos {
		pi, err := poller.ExecutePoll(ctx, endlessCount, nil)
		if err != nil {
			t.Fatal(err)
		}
		infos[i] = pi
	}
	// again polls each once more and returns how many wait for their slot; every poll must
	// still be unfinished (a retry descriptor, progress below 1).
	again := func() (queued int) {
		t.Helper()
		for i, pi := range infos {
			next, err := poller.ExecutePoll(ctx, "", pi.GetFlightDescriptor())
			if err != nil {
				t.Fatalf("poll %d: %v", i, err)
			}
			if next.GetFlightDescriptor() == nil || next.Progress == nil || *next.Progress >= 1 {
				t.Fatalf("poll %d of an endless count finished: progress %v", i, next.Progress)
			}
			var meta struct {
				Queued bool `json:"queued"`
			}
			if err := json.Unmarshal(next.GetInfo().GetAppMetadata(), &meta); err != nil {
				t.Fatal(err)
			}
			if meta.Queued {
				queued++
			}
			infos[i] = next
		}
		return queued
	}
	var queued int
	if !waitFor(60*time.Second, func() bool { queued = again(); return queued == polls-1 }) {
		t.Fatalf("%d of %d polls queued, want all but the share's one", queued, polls)
	}

	if n := scalarCount(t, mustRun(t, other, "SELECT count(*) FROM (SELECT 1) s")); n != 1 {
		t.Fatalf("SELECT 1 beside the polls: %d rows", n)
	}
	from, to := ts("2001-01-01T00:00:00Z"), ts("2001-07-01T00:00:00Z")
	want := int64(len(expected(e.sample, "ORD", from, to)))
	if n := scalarCount(t, mustRun(t, poller, countSQL("ORD", from, to))); n != want {
		t.Fatalf("ORD's count beside the polls: %d, the sample %d", n, want)
	}
	if q := again(); q != polls-1 { // answered while the polls were still unfinished
		t.Fatalf("%d of %d polls queued after the queries, want all but one", q, polls)
	}

	for i, pi := range infos {
		if res, err := other.CancelFlightInfo(ctx, &flight.CancelFlightInfoRequest{Info: pi.GetInfo()}); err != nil || res.Status != flight.CancelStatusCancelled {
			t.Fatalf("cancel poll %d: %v %v", i, res, err)
		}
		if _, err := poller.ExecutePoll(ctx, "", pi.GetFlightDescriptor()); status.Code(err) != codes.Canceled {
			t.Fatalf("poll %d after its cancel: %v", i, err)
		}
	}
	final := pollToEnd(t, poller, countSQL("ORD", from, to))
	res, err := fetch(ctx, poller, final.GetInfo())
	if err != nil {
		t.Fatal(err)
	}
	defer res.release()
	if n := scalarCount(t, res); n != want {
		t.Fatalf("polled count after the cancels: %d, the sample %d", n, want)
	}
}
