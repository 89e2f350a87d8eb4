package flightsql

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/flightsrv/flightsrv/internal/querylog"
)

// gatedEngine splits every query into frags fragments of two buckets each, fragment i holding
// the rows 10i…10i+9. A fragment's execution reports one of its buckets read (through the
// query record, as the engine does), signals entered, and waits for gate (or for its context
// to end: stopped is then signalled) before answering.
type gatedEngine struct {
	fakeEngine
	frags   int
	entered chan int
	gate    chan struct{}
	stopped chan int
	mu      sync.Mutex
	runs    int // ExecuteFragment calls
}

func newGatedEngine(alloc memory.Allocator, frags int) *gatedEngine {
	return &gatedEngine{fakeEngine: fakeEngine{alloc: alloc}, frags: frags, entered: make(chan int, frags*4), gate: make(chan struct{}), stopped: make(chan int, frags*4)}
}

func (g *gatedEngine) Fragments(context.Context, string, []byte, arrow.RecordBatch, bool) ([]Fragment, error) {
	out := make([]Fragment, g.frags)
	for i := range out {
		out[i] = Fragment{Spec: []byte(strconv.Itoa(i)), Buckets: 2}
	}
	return out, nil
}

func (g *gatedEngine) ExecuteFragment(ctx context.Context, _ string, _ []byte, _ arrow.RecordBatch, spec []byte) (array.RecordReader, error) {
	i, err := strconv.Atoi(string(spec))
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, "bad spec")
	}
	g.mu.Lock()
	g.runs++
	g.mu.Unlock()
	querylog.FromContext(ctx).SetBuckets(func() (int, int) { return 1, 0 })
	g.entered <- i
	select {
	case <-g.gate:
	case <-ctx.Done():
		g.stopped <- i
		return nil, ctx.Err()
	}
	return (&fragEngine{fakeEngine: fakeEngine{alloc: g.alloc}}).rows(int64(i)*10, int64(i)*10+10)
}

func (g *gatedEngine) runCount() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.runs
}

// pollMeta decodes a poll FlightInfo's app_metadata.
func pollMeta(t *testing.T, pi *flight.PollInfo) pollMetadata {
	t.Helper()
	var m pollMetadata
	if err := json.Unmarshal(pi.GetInfo().GetAppMetadata(), &m); err != nil {
		t.Fatalf("app_metadata %q: %v", pi.GetInfo().GetAppMetadata(), err)
	}
	return m
}

// TestPollFlightInfo: a poll runs the query in the background; each PollInfo reports the
// buckets read of the total (progress and app_metadata), lists the endpoints of the completed
// fragments in order, and carries a retry descriptor until the query is complete, when
// progress is 1.0 and total_records the rows. The endpoints' rows equal the direct answer's;
// this replica serves them from the batches it kept (no second execution), another replica
// sharing the keyring executes them. Kept batches are released when the poll expires.
func TestPollFlightInfo(t *testing.T) {
	alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer alloc.AssertSize(t, 0)
	ring := testKeyring(t, []byte("shared"))
	eng := newGatedEngine(alloc, 3)
	addr, srv := serveAt(t, eng, Config{Keyring: ring, Alloc: alloc, PollTTL: time.Hour})
	other, _ := serveAt(t, &fragEngine{fakeEngine: fakeEngine{alloc: alloc}, frags: 3}, Config{Keyring: ring, Alloc: alloc})
	cl, cl2 := dialFake(t, addr), dialFake(t, other)
	ctx := context.Background()

	first, err := cl.ExecutePoll(ctx, "select", nil)
	if err != nil {
		t.Fatal(err)
	}
	if first.GetFlightDescriptor() == nil || len(first.GetInfo().GetEndpoint()) != 0 {
		t.Fatalf("first poll: descriptor %v, %d endpoints", first.GetFlightDescriptor(), len(first.GetInfo().GetEndpoint()))
	}
	if first.Progress == nil || *first.Progress >= 1 || first.GetExpirationTime() == nil {
		t.Fatalf("first poll: progress %v, expiration %v", first.Progress, first.GetExpirationTime())
	}
	last := *first.Progress
	retry := first.GetFlightDescriptor()
	for i := range 3 {
		if got := <-eng.entered; got != i {
			t.Fatalf("fragment %d ran, want %d", got, i)
		}
		pi, err := cl.ExecutePoll(ctx, "ignored", retry)
		if err != nil {
			t.Fatal(err)
		}
		m := pollMeta(t, pi)
		// Fragments before i are done (2 buckets each); fragment i has read one bucket.
		if m.BucketsDone != 2*i+1 || m.Buckets != 6 || m.EndpointsDone != i || m.Endpoints != 3 || m.Rows != int64(10*i) {
			t.Fatalf("poll during fragment %d: %+v", i, m)
		}
		if want := float64(2*i+1) / 6; *pi.Progress != want || *pi.Progress < last {
			t.Fatalf("poll during fragment %d: progress %v, want %v (last %v)", i, *pi.Progress, want, last)
		}
		last = *pi.Progress
		if pi.GetFlightDescriptor() == nil || !pi.GetInfo().GetOrdered() || len(pi.GetInfo().GetEndpoint()) != i {
			t.Fatalf("poll during fragment %d: %v", i, pi)
		}
		retry = pi.GetFlightDescriptor()
		eng.gate <- struct{}{}
	}
	var final *flight.PollInfo
	for final == nil {
		pi, err := cl.ExecutePoll(ctx, "ignored", retry)
		if err != nil {
			t.Fatal(err)
		}
		if *pi.Progress < last {
			t.Fatalf("progress went back from %v to %v", last, *pi.Progress)
		}
		last = *pi.Progress
		if pi.GetFlightDescriptor() == nil {
			final = pi
		} else {
			retry = pi.GetFlightDescriptor()
			time.Sleep(5 * time.Millisecond)
		}
	}
	if *final.Progress != 1 || final.GetInfo().GetTotalRecords() != 30 || len(final.GetInfo().GetEndpoint()) != 3 {
		t.Fatalf("final poll: progress %v, %d records, %d endpoints", *final.Progress, final.GetInfo().GetTotalRecords(), len(final.GetInfo().GetEndpoint()))
	}
	if m := pollMeta(t, final); m.BucketsDone != 6 || m.Rows != 30 || m.EndpointsDone != 3 {
		t.Fatalf("final poll: %+v", m)
	}
	want := make([]int64, 30)
	for i := range want {
		want[i] = int64(i)
	}
	var got, gotElsewhere []int64
	for _, ep := range final.GetInfo().GetEndpoint() {
		vs, err := values(t, cl, ep.Ticket)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, vs...)
		vs, err = values(t, cl2, ep.Ticket)
		if err != nil {
			t.Fatal(err)
		}
		gotElsewhere = append(gotElsewhere, vs...)
	}
	if !slices.Equal(got, want) || !slices.Equal(gotElsewhere, want) {
		t.Fatalf("rows from the poll's replica %v, from another %v, want %v", got, gotElsewhere, want)
	}
	if n := eng.runCount(); n != 3 {
		t.Fatalf("%d fragment executions; the poll's replica should serve its kept batches", n)
	}
	// The retry descriptor of a finished poll still answers it; a forged one is refused.
	if pi, err := cl.ExecutePoll(ctx, "ignored", retry); err != nil || pi.GetFlightDescriptor() != nil || *pi.Progress != 1 {
		t.Fatalf("finished poll asked again: %v %v", pi, err)
	}
	forged := &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: append(slices.Clone(retry.Cmd[:len(retry.Cmd)-1]), retry.Cmd[len(retry.Cmd)-1]^1)}
	if _, err := cl.ExecutePoll(ctx, "ignored", forged); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("forged retry descriptor: %v", err)
	}
	srv.Close() // drops the kept batches (the checked allocator must come back to zero)
}

// TestPollCancel: CancelFlightInfo of a PollInfo's FlightInfo — without an endpoint yet —
// stops the background run (the engine sees its context end) and the next poll answers
// CANCELLED.
func TestPollCancel(t *testing.T) {
	eng, cl, _, pi := pollGated(t, 2, Config{})
	ctx := context.Background()
	res, err := cl.CancelFlightInfo(ctx, &flight.CancelFlightInfoRequest{Info: pi.GetInfo()})
	if err != nil || res.Status != flight.CancelStatusCancelled {
		t.Fatalf("cancel: %v %v", res, err)
	}
	if i := <-eng.stopped; i != 0 {
		t.Fatalf("fragment %d stopped, want 0", i)
	}
	if _, err := cl.ExecutePoll(ctx, "ignored", pi.GetFlightDescriptor()); status.Code(err) != codes.Canceled {
		t.Fatalf("poll after cancel: %v", err)
	}
}

// TestPollExpiry: a poll nobody asks about for PollTTL is abandoned: its run is cancelled.
// Its retry descriptor, still within its own expiry, starts the query again.
func TestPollExpiry(t *testing.T) {
	eng, cl, srv, pi := pollGated(t, 1, Config{PollTTL: 50 * time.Millisecond})
	ctx := context.Background()
	<-eng.stopped // the poll expired: its run was cancelled
	if srv.polls.get(pollIDOf(t, srv, pi)) != nil {
		t.Fatal("an expired poll is still kept")
	}
	again, err := cl.ExecutePoll(ctx, "ignored", pi.GetFlightDescriptor())
	if err != nil || again.GetFlightDescriptor() == nil {
		t.Fatalf("expired poll asked again: %v %v", again, err)
	}
	<-eng.entered
	// The restarted poll may expire again before its fragment takes the gate.
	select {
	case eng.gate <- struct{}{}:
	case <-eng.stopped:
	}
	srv.Close()
}

// pollGated serves a gatedEngine of frags fragments under cfg (its allocator checked at the
// end of the test), starts a poll of "select" and waits until its first fragment runs.
func pollGated(t *testing.T, frags int, cfg Config) (*gatedEngine, *flightsql.Client, *Server, *flight.PollInfo) {
	t.Helper()
	alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { alloc.AssertSize(t, 0) })
	eng := newGatedEngine(alloc, frags)
	cfg.Alloc = alloc
	addr, srv := serveAt(t, eng, cfg)
	cl := dialFake(t, addr)
	pi, err := cl.ExecutePoll(context.Background(), "select", nil)
	if err != nil {
		t.Fatal(err)
	}
	<-eng.entered
	return eng, cl, srv, pi
}

func pollIDOf(t *testing.T, srv *Server, pi *flight.PollInfo) []byte {
	t.Helper()
	id, ok := srv.pollID(pi.GetFlightDescriptor())
	if !ok {
		t.Fatal("no poll id in the retry descriptor")
	}
	return id
}

// TestPollMemory: with no memory to keep batches, a poll lists every endpoint at once as
// tickets executed when fetched; their rows equal the direct answer.
func TestPollMemory(t *testing.T) {
	eng, cl, _, pi := pollGated(t, 2, Config{PollMemory: -1})
	ctx := context.Background()
	var err error
	eng.gate <- struct{}{}
	for pi.GetFlightDescriptor() != nil {
		time.Sleep(5 * time.Millisecond)
		if pi, err = cl.ExecutePoll(ctx, "ignored", pi.GetFlightDescriptor()); err != nil {
			t.Fatal(err)
		}
	}
	if len(pi.GetInfo().GetEndpoint()) != 2 || *pi.Progress != 1 || pi.GetInfo().GetTotalRecords() != -1 {
		t.Fatalf("final poll: %d endpoints, progress %v, %d records", len(pi.GetInfo().GetEndpoint()), *pi.Progress, pi.GetInfo().GetTotalRecords())
	}
	go func() {
		for range 2 {
			<-eng.entered
			eng.gate <- struct{}{}
		}
	}()
	var got []int64
	for _, ep := range pi.GetInfo().GetEndpoint() {
		vs, err := values(t, cl, ep.Ticket)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, vs...)
	}
	if !slices.Equal(got, []int64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19}) {
		t.Fatalf("rows %v", got)
	}
}
