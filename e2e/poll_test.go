package e2e

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	pb "github.com/apache/arrow-go/v18/arrow/flight/gen/flight"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/flightsrv/flightsrv/server"
)

// pollToEnd polls a query with arrow-go's Flight SQL client (ExecutePoll and its retry
// descriptors) until the PollInfo has no retry descriptor, checking on the way that progress
// is known, in [0, 1], never goes back, that endpoints are only appended, and that the final
// answer's progress is 1.0. It returns the final PollInfo.
func pollToEnd(t *testing.T, cl *flightsql.Client, query string) *flight.PollInfo {
	t.Helper()
	ctx := context.Background()
	pi, err := cl.ExecutePoll(ctx, query, nil)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	last := -1.0
	var eps []*flight.FlightEndpoint
	for {
		if pi.Progress == nil || *pi.Progress < 0 || *pi.Progress > 1 || *pi.Progress < last {
			t.Fatalf("progress %v after %v", pi.Progress, last)
		}
		last = *pi.Progress
		got := pi.GetInfo().GetEndpoint()
		if len(got) < len(eps) {
			t.Fatalf("%d endpoints after %d", len(got), len(eps))
		}
		for i := range eps {
			if string(got[i].GetTicket().GetTicket()) != string(eps[i].GetTicket().GetTicket()) {
				t.Fatalf("endpoint %d changed between polls", i)
			}
		}
		eps = got
		if pi.GetFlightDescriptor() == nil {
			break
		}
		time.Sleep(2 * time.Millisecond)
		if pi, err = cl.ExecutePoll(ctx, query, pi.GetFlightDescriptor()); err != nil {
			t.Fatal(err)
		}
	}
	if *pi.Progress != 1 {
		t.Fatalf("final progress %v", *pi.Progress)
	}
	return pi
}

// TestPollFlightInfo (issue 10): PollFlightInfo through arrow-go's Flight SQL client against
// the server over PostgreSQL and the archive, with one endpoint per bucket: ORD's ordered scan
// and COUNT(*) polled to completion (progress known, never going back, 1.0 at the end; the
// app_metadata's rows and buckets), and the endpoints' rows equal the sample's and the direct
// answer's. A metadata command polled is answered at once. A poll cancelled with
// CancelFlightInfo answers CANCELLED, or, when it had completed, its tickets are refused.
func TestPollFlightInfo(t *testing.T) {
	e := newEnv(t)
	cl := dial(t, serverWith(t, e, func(c *server.Config) { c.Alloc, c.MultiEndpoint, c.EndpointBuckets = e.alloc, true, 1 }))
	ctx := context.Background()
	from, to := ts("2001-01-01T00:00:00Z"), ts("2001-07-01T00:00:00Z")
	want := expected(e.sample, "ORD", from, to)

	final := pollToEnd(t, cl, ordScan)
	if n := len(final.GetInfo().GetEndpoint()); n != 6 || !final.GetInfo().GetOrdered() {
		t.Fatalf("%d endpoints (ordered %v), want one per month", n, final.GetInfo().GetOrdered())
	}
	if final.GetInfo().GetTotalRecords() != int64(len(want)) {
		t.Fatalf("total_records %d, the sample %d", final.GetInfo().GetTotalRecords(), len(want))
	}
	var meta struct {
		BucketsDone int   `json:"buckets_done"`
		Buckets     int   `json:"buckets"`
		Rows        int64 `json:"rows"`
	}
	if err := json.Unmarshal(final.GetInfo().GetAppMetadata(), &meta); err != nil || meta.Buckets != 6 || meta.BucketsDone != 6 || meta.Rows != int64(len(want)) {
		t.Fatalf("app_metadata %s: %v", final.GetInfo().GetAppMetadata(), err)
	}
	res, err := fetch(ctx, cl, final.GetInfo())
	if err != nil {
		t.Fatal(err)
	}
	got := rowsOf(t, res, "ORD")
	res.release()
	if !slices.Equal(got, want) {
		t.Fatalf("polled scan: %d rows, the sample %d", len(got), len(want))
	}
	direct := rowsOf(t, mustRun(t, cl, ordScan), "ORD")
	if !slices.Equal(got, direct) {
		t.Fatalf("polled scan: %d rows, the direct answer %d", len(got), len(direct))
	}

	count := pollToEnd(t, cl, countSQL("ORD", from, to))
	res, err = fetch(ctx, cl, count.GetInfo())
	if err != nil {
		t.Fatal(err)
	}
	if n := scalarCount(t, res); n != int64(len(want)) {
		t.Fatalf("polled COUNT(*) %d, want %d", n, len(want))
	}
	res.release()

	tables, err := cl.Client.PollFlightInfo(ctx, tablesDescriptor(t))
	if err != nil || tables.GetFlightDescriptor() != nil || tables.Progress == nil || *tables.Progress != 1 || len(tables.GetInfo().GetEndpoint()) != 1 {
		t.Fatalf("GetTables polled: %v %v", tables, err)
	}

	pollThenCancel(t, cl, cl)
}

// pollThenCancel polls ORD's scan at poller, cancels it with CancelFlightInfo of the first
// PollInfo's FlightInfo sent to canceller, and checks that the poll was cancelled: polling it
// again answers CANCELLED, or, when it completed before the cancel, fetching its endpoints
// does.
func pollThenCancel(t *testing.T, poller, canceller *flightsql.Client) {
	t.Helper()
	ctx := context.Background()
	pi, err := poller.ExecutePoll(ctx, ordScan, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := canceller.CancelFlightInfo(ctx, &flight.CancelFlightInfoRequest{Info: pi.GetInfo()}); err != nil || res.Status != flight.CancelStatusCancelled {
		t.Fatalf("cancel the poll: %v %v", res, err)
	}
	after, err := poller.ExecutePoll(ctx, "", pi.GetFlightDescriptor())
	if status.Code(err) == codes.Canceled {
		return
	}
	if err != nil || after.GetFlightDescriptor() != nil || len(after.GetInfo().GetEndpoint()) == 0 {
		t.Fatalf("poll after the cancel: %v %v", after, err)
	}
	if _, err := fetch(ctx, poller, after.GetInfo()); status.Code(err) != codes.Canceled {
		t.Fatalf("endpoint of a cancelled poll fetched: %v", err)
	}
}

// tablesDescriptor returns the descriptor of CommandGetTables.
func tablesDescriptor(t *testing.T) *flight.FlightDescriptor {
	t.Helper()
	a, err := anypb.New(&pb.CommandGetTables{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := proto.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	return &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: b}
}
