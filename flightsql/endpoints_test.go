package flightsql

import (
	"context"
	"slices"
	"strconv"
	"strings"
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
)

// fragEngine is a FragmentEngine over the rows 0…frags*10-1: fragment i holds the rows
// 10i…10i+9, and the even fragments are immutable. Execute answers every row.
type fragEngine struct {
	fakeEngine
	frags int
	mu    sync.Mutex
	split []bool // the split argument of every Fragments call
}

func (f *fragEngine) Fragments(_ context.Context, sql string, _ []byte, _ arrow.RecordBatch, split bool) ([]Fragment, error) {
	f.mu.Lock()
	f.split = append(f.split, split)
	f.mu.Unlock()
	if !split {
		return []Fragment{{Spec: []byte("all"), Buckets: f.frags}}, nil
	}
	out := make([]Fragment, f.frags)
	for i := range out {
		out[i] = Fragment{Spec: []byte(strconv.Itoa(i)), Immutable: i%2 == 0, Buckets: 1}
	}
	return out, nil
}

func (f *fragEngine) ExecuteFragment(_ context.Context, sql string, _ []byte, _ arrow.RecordBatch, spec []byte) (array.RecordReader, error) {
	if string(spec) == "all" {
		return f.rows(0, int64(f.frags)*10)
	}
	i, err := strconv.Atoi(string(spec))
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, "bad spec")
	}
	return f.rows(int64(i)*10, int64(i)*10+10)
}

func (f *fragEngine) Execute(context.Context, string, []byte, arrow.RecordBatch) (array.RecordReader, error) {
	return f.rows(0, int64(f.frags)*10)
}

func (f *fragEngine) rows(from, to int64) (array.RecordReader, error) {
	b := array.NewInt64Builder(f.alloc)
	defer b.Release()
	for i := from; i < to; i++ {
		b.Append(i)
	}
	col := b.NewArray()
	defer col.Release()
	rec := array.NewRecordBatch(nSchema, []arrow.Array{col}, to-from)
	defer rec.Release()
	return array.NewRecordReader(nSchema, []arrow.RecordBatch{rec})
}

// clock is a settable clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// values reads every int64 of one endpoint's stream.
func values(t *testing.T, cl *flightsql.Client, tkt *flight.Ticket) ([]int64, error) {
	t.Helper()
	rdr, err := cl.DoGet(context.Background(), tkt)
	if err != nil {
		return nil, err
	}
	defer rdr.Release()
	var out []int64
	for rdr.Next() {
		out = append(out, rdr.RecordBatch().Column(0).(*array.Int64).Int64Values()...)
	}
	return out, rdr.Err()
}

func setEndpoints(t *testing.T, cl *flightsql.Client, v string) {
	t.Helper()
	opts, _ := flight.NewSessionOptionValues(map[string]any{OptionEndpoints: v})
	res, err := cl.SetSessionOptions(context.Background(), &flight.SetSessionOptionsRequest{SessionOptions: opts})
	if err != nil || len(res.GetErrors()) > 0 {
		t.Fatalf("set endpoints=%s: %v %v", v, res.GetErrors(), err)
	}
}

// TestMultiEndpoint: one endpoint by default; with the session option, ordered endpoints one
// per fragment, each with its own ticket, the advertised locations, expiration_time on the
// immutable ones only, served by another replica sharing the keyring (one endpoint from each)
// and refused by a replica of another keyring; their rows in order are the single endpoint's.
func TestMultiEndpoint(t *testing.T) {
	alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer alloc.AssertSize(t, 0)
	ring := testKeyring(t, []byte("shared"))
	adv := []string{"grpc+tcp://replica-a.example:32010", "grpc+tcp://replica-b.example:32010"}
	eng := &fragEngine{fakeEngine: fakeEngine{alloc: alloc}, frags: 5}
	addrA, _ := serveAt(t, eng, Config{Keyring: ring, Alloc: alloc, Advertise: adv})
	addrB, _ := serveAt(t, eng, Config{Keyring: ring, Alloc: alloc})
	addrC, _ := serveAt(t, eng, Config{Keyring: testKeyring(t, []byte("other")), Alloc: alloc})
	a, b, c := dialCookies(t, addrA), dialFake(t, addrB), dialFake(t, addrC)
	ctx := context.Background()

	single, err := a.Execute(ctx, "select")
	if err != nil {
		t.Fatal(err)
	}
	if len(single.Endpoint) != 1 || !single.Ordered || single.Endpoint[0].ExpirationTime != nil {
		t.Fatalf("default: %d endpoints, ordered %v, expiration %v", len(single.Endpoint), single.Ordered, single.Endpoint[0].ExpirationTime)
	}
	want, err := values(t, a, single.Endpoint[0].Ticket)
	if err != nil || len(want) != 50 {
		t.Fatalf("single endpoint: %d rows, %v", len(want), err)
	}

	setEndpoints(t, a, EndpointsMultiple)
	multi, err := a.Execute(ctx, "select")
	if err != nil {
		t.Fatal(err)
	}
	if len(multi.Endpoint) != 5 || !multi.Ordered {
		t.Fatalf("multiple: %d endpoints, ordered %v", len(multi.Endpoint), multi.Ordered)
	}
	var got []int64
	tickets := map[string]bool{}
	for i, ep := range multi.Endpoint {
		tickets[string(ep.Ticket.Ticket)] = true
		var locs []string
		for _, l := range ep.Location {
			locs = append(locs, l.Uri)
		}
		// Endpoint i lists the advertised addresses from the i-th on, wrapping around.
		if want := append(slices.Clone(adv[i%2:]), adv[:i%2]...); !slices.Equal(locs, want) {
			t.Errorf("endpoint %d locations %v, want %v", i, locs, want)
		}
		if (ep.ExpirationTime != nil) != (i%2 == 0) {
			t.Errorf("endpoint %d expiration_time %v; only immutable endpoints carry one", i, ep.ExpirationTime)
		}
		// Alternate replicas: a ticket is served by any replica holding the keyring.
		cl := a
		if i%2 == 1 {
			cl = b
		}
		vs, err := values(t, cl, ep.Ticket)
		if err != nil {
			t.Fatalf("endpoint %d: %v", i, err)
		}
		got = append(got, vs...)
		if _, err := values(t, c, ep.Ticket); status.Code(err) != codes.InvalidArgument || strings.Contains(status.Convert(err).Message(), "select") {
			t.Fatalf("endpoint %d at a replica of another keyring: %v", i, err)
		}
	}
	if len(tickets) != 5 {
		t.Fatalf("%d distinct tickets for 5 endpoints", len(tickets))
	}
	if !slices.Equal(got, want) {
		t.Fatalf("endpoints in order %v, single endpoint %v", got, want)
	}

	// A server flag makes multiple the default; a session may still choose single.
	addrD, _ := serveAt(t, eng, Config{Keyring: ring, Alloc: alloc, MultiEndpoint: true})
	d := dialCookies(t, addrD)
	if info, err := d.Execute(ctx, "select"); err != nil || len(info.Endpoint) != 5 {
		t.Fatalf("--multi-endpoint: %v", err)
	}
	setEndpoints(t, d, EndpointsSingle)
	if info, err := d.Execute(ctx, "select"); err != nil || len(info.Endpoint) != 1 {
		t.Fatalf("session single under --multi-endpoint: %v", err)
	}
	opts, _ := flight.NewSessionOptionValues(map[string]any{OptionEndpoints: "several"})
	if res, err := d.SetSessionOptions(ctx, &flight.SetSessionOptionsRequest{SessionOptions: opts}); err != nil || res.GetErrors()[OptionEndpoints].GetValue() != flight.SetSessionOptionsResultErrorInvalidValue {
		t.Fatalf("endpoints=several: %v %v", res, err)
	}
}

// TestTicketExpiry: a ticket past its expiry (plus the clock skew) is FAILED_PRECONDITION
// naming only the expiry; RenewFlightEndpoint gives an immutable endpoint a new ticket and
// expiration_time, and refuses a hot one; a prepared-statement handle does not pass for a
// ticket.
func TestTicketExpiry(t *testing.T) {
	alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer alloc.AssertSize(t, 0)
	clk := &clock{t: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)}
	eng := &fragEngine{fakeEngine: fakeEngine{alloc: alloc}, frags: 2}
	addr, _ := serveAt(t, eng, Config{Alloc: alloc, TicketTTL: 10 * time.Minute, Now: clk.now, MultiEndpoint: true})
	cl := dialFake(t, addr)
	ctx := context.Background()
	info, err := cl.Execute(ctx, "select")
	if err != nil {
		t.Fatal(err)
	}
	imm, hot := info.Endpoint[0], info.Endpoint[1]
	if got, want := imm.ExpirationTime.AsTime(), clk.now().Add(10*time.Minute); !got.Equal(want) {
		t.Fatalf("expiration_time %v, want %v", got, want)
	}
	clk.add(10*time.Minute + 29*time.Second) // within the clock skew
	if vs, err := values(t, cl, imm.Ticket); err != nil || len(vs) != 10 {
		t.Fatalf("within the skew: %d rows, %v", len(vs), err)
	}
	renewed, err := cl.RenewFlightEndpoint(ctx, &flight.RenewFlightEndpointRequest{Endpoint: imm})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := renewed.ExpirationTime.AsTime(), clk.now().Add(10*time.Minute).Truncate(time.Second); !got.Equal(want) {
		t.Fatalf("renewed expiration_time %v, want %v", got, want)
	}
	if _, err := cl.RenewFlightEndpoint(ctx, &flight.RenewFlightEndpointRequest{Endpoint: hot}); status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("renew a hot endpoint: %v", err)
	}
	clk.add(2 * time.Second)
	for _, ep := range []*flight.FlightEndpoint{imm, hot} {
		_, err := values(t, cl, ep.Ticket)
		st := status.Convert(err)
		if st.Code() != codes.FailedPrecondition || !strings.Contains(st.Message(), "expired at 2026-12-01T12:10:00Z") || strings.Contains(st.Message(), "select") {
			t.Fatalf("expired ticket: %v", err)
		}
		if _, err := cl.RenewFlightEndpoint(ctx, &flight.RenewFlightEndpointRequest{Endpoint: ep}); status.Code(err) != codes.FailedPrecondition {
			t.Fatalf("renew an expired ticket: %v", err)
		}
	}
	if vs, err := values(t, cl, renewed.Ticket); err != nil || !slices.Equal(vs, []int64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}) {
		t.Fatalf("renewed ticket: %v, %v", vs, err)
	}
	clk.add(11 * time.Minute)
	if _, err := values(t, cl, renewed.Ticket); status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("renewed ticket past its expiry: %v", err)
	}

	// A prepared handle wrapped as a statement ticket is no ticket.
	stmt, err := cl.Prepare(ctx, "select")
	if err != nil {
		t.Fatal(err)
	}
	defer stmt.Close(ctx)
	tkt, _ := flightsql.CreateStatementQueryTicket(stmt.Handle())
	if _, err := values(t, cl, &flight.Ticket{Ticket: tkt}); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("handle as ticket: %v", err)
	}
	// Renewing a foreign ticket is INVALID_ARGUMENT.
	if _, err := cl.RenewFlightEndpoint(ctx, &flight.RenewFlightEndpointRequest{Endpoint: &flight.FlightEndpoint{Ticket: &flight.Ticket{Ticket: []byte("x")}}}); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("renew garbage: %v", err)
	}
}

// TestSelfFirst: a replica that knows which advertised location is its own lists it first in
// a single endpoint (clients fetch from the first location, so each replica streams what it
// planned) and rotates multi-endpoint results from it.
func TestSelfFirst(t *testing.T) {
	alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer alloc.AssertSize(t, 0)
	ring := testKeyring(t, []byte("shared"))
	adv := []string{"grpc+tcp://replica-a.example:32010", "grpc+tcp://replica-b.example:32010", "grpc+tcp://replica-c.example:32010"}
	eng := &fragEngine{fakeEngine: fakeEngine{alloc: alloc}, frags: 4}
	for self, want := range []string{adv[0], adv[1], adv[2]} {
		addr, _ := serveAt(t, eng, Config{Keyring: ring, Alloc: alloc, Advertise: adv, Self: want})
		cl := dialCookies(t, addr)
		info, err := cl.Execute(context.Background(), "select")
		if err != nil {
			t.Fatal(err)
		}
		if got := info.Endpoint[0].Location[0].Uri; got != want {
			t.Errorf("replica %d: single endpoint first location %s, want %s", self, got, want)
		}
		setEndpoints(t, cl, EndpointsMultiple)
		if info, err = cl.Execute(context.Background(), "select"); err != nil {
			t.Fatal(err)
		}
		for i, ep := range info.Endpoint {
			if got := ep.Location[0].Uri; got != adv[(self+i)%3] {
				t.Errorf("replica %d endpoint %d: first location %s, want %s", self, i, got, adv[(self+i)%3])
			}
		}
	}
}
