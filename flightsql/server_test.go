package flightsql

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/flightsrv/flightsrv/internal/auth"
	"github.com/flightsrv/flightsrv/internal/session"
)

// fakeEngine answers every query with one int64 column "n": the number of rows is the first
// parameter (int64) when bound, else 3. Queries whose SQL is "bad" fail planning with
// InvalidArgument; "boom" fails execution with an internal error.
type fakeEngine struct {
	alloc memory.Allocator
	mu    sync.Mutex
	execs []string
	// prepared and executed are the session settings of the last Prepare and Execute.
	prepared, executed session.Settings
}

var nSchema = arrow.NewSchema([]arrow.Field{{Name: "n", Type: arrow.PrimitiveTypes.Int64}}, nil)
var pSchema = arrow.NewSchema([]arrow.Field{{Name: "$1", Type: arrow.PrimitiveTypes.Int64}}, nil)

// tSchema declares a partition, a time bound and a list of times, as the planner types them.
var tSchema = arrow.NewSchema([]arrow.Field{
	{Name: "$1", Type: arrow.BinaryTypes.String},
	{Name: "$2", Type: &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}},
	{Name: "$3", Type: arrow.ListOf(&arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"})},
}, nil)

func (f *fakeEngine) Prepare(ctx context.Context, sql string, plan []byte) (*arrow.Schema, *arrow.Schema, error) {
	f.mu.Lock()
	f.prepared = session.From(ctx)
	f.mu.Unlock()
	switch {
	case sql == "bad":
		return nil, nil, status.Error(codes.InvalidArgument, "bad query")
	case sql == "with param":
		return nSchema, pSchema, nil
	case sql == "with times":
		return nSchema, tSchema, nil
	}
	return nSchema, nil, nil
}

func (f *fakeEngine) Execute(ctx context.Context, sql string, plan []byte, params arrow.RecordBatch) (array.RecordReader, error) {
	f.mu.Lock()
	f.execs = append(f.execs, sql)
	f.executed = session.From(ctx)
	f.mu.Unlock()
	if sql == "boom" {
		return nil, errors.New("pq: relation secret_table does not exist at /var/lib/secret")
	}
	n := int64(3)
	if params != nil {
		n = params.Column(0).(*array.Int64).Value(0)
	}
	b := array.NewInt64Builder(f.alloc)
	defer b.Release()
	for i := range n {
		b.Append(i)
	}
	col := b.NewArray()
	defer col.Release()
	rec := array.NewRecordBatch(nSchema, []arrow.Array{col}, n)
	defer rec.Release()
	return array.NewRecordReader(nSchema, []arrow.RecordBatch{rec})
}

func (f *fakeEngine) Tables() map[string]*arrow.Schema {
	return map[string]*arrow.Schema{"messages": nSchema, "flights": nSchema}
}

func startFake(t *testing.T, key []byte) (*flightsql.Client, *memory.CheckedAllocator) {
	t.Helper()
	addr, alloc := serveFake(t, key)
	// A user agent of its own, as ADBC and other drivers have: arrow-go's own (grpc-go's)
	// gets no declared parameter schema (TestParameterSchemaForArrowGo).
	return dialFake(t, addr, grpc.WithUserAgent("flightsrv-test")), alloc
}

// testKeyring returns a keyring of one key (id "test") derived from key; nil for nil.
func testKeyring(t *testing.T, key []byte) *auth.Keyring {
	t.Helper()
	if key == nil {
		return nil
	}
	secret := sha256.Sum256(key)
	ring, err := auth.NewKeyring("test", []auth.Key{{ID: "test", Secret: secret[:]}})
	if err != nil {
		t.Fatal(err)
	}
	return ring
}

// serveFake serves a fakeEngine with the zero-copy DoGet, handles and tickets signed with a
// keyring derived from key (nil: random), and returns its address.
func serveFake(t *testing.T, key []byte) (string, *memory.CheckedAllocator) {
	t.Helper()
	alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
	addr, _ := serveAt(t, &fakeEngine{alloc: alloc}, Config{Keyring: testKeyring(t, key), Alloc: alloc})
	return addr, alloc
}

// serveAt serves engine under cfg with the zero-copy DoGet and returns its address and
// server.
func serveAt(t *testing.T, engine Engine, cfg Config) (string, *Server) {
	t.Helper()
	srv, err := NewServer(engine, cfg)
	if err != nil {
		t.Fatal(err)
	}
	alloc := cfg.Alloc
	if alloc == nil {
		alloc = memory.DefaultAllocator
	}
	fs := flight.NewServerWithMiddleware(nil, ServerOptions()...)
	fs.RegisterFlightService(zeroCopyService{flightsql.NewFlightServerWithAllocator(srv, alloc), srv})
	if err := fs.Init("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	go fs.Serve()
	t.Cleanup(fs.Shutdown)
	return fs.Addr().String(), srv
}

func dialFake(t *testing.T, addr string, opts ...grpc.DialOption) *flightsql.Client {
	t.Helper()
	cl, err := flightsql.NewClient(addr, nil, nil, append(opts, grpc.WithTransportCredentials(insecure.NewCredentials()))...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	return cl
}

// TestParameterSchemaForArrowGo: arrow-go's client (grpc-go's user agent) gets no parameter
// schema, so that its database/sql driver infers parameter types from the Go values; every
// prepared query says is_update = false.
func TestParameterSchemaForArrowGo(t *testing.T) {
	addr, _ := serveFake(t, nil)
	ctx := context.Background()
	for c, want := range map[*flightsql.Client]bool{dialFake(t, addr, grpc.WithUserAgent("some-driver")): true, dialFake(t, addr): false} {
		stmt, err := c.Prepare(ctx, "with param")
		if err != nil {
			t.Fatal(err)
		}
		if got := stmt.ParameterSchema() != nil; got != want {
			t.Errorf("parameter schema declared: %v, want %v", got, want)
		}
		// A query, not an update (arrow-go v18.8 exposes the hint).
		if isUpdate, ok := stmt.IsUpdate(); !ok || isUpdate {
			t.Errorf("is_update %v (set %v), want false", isUpdate, ok)
		}
		stmt.Close(ctx)
	}
}

// TestRefusalDeferredForADBC: ADBC's Flight SQL driver gets a handle for a statement the
// engine refuses and the refusal, with its code, when it executes or binds it (its DB-API
// swallows a NotSupportedError from the prepare); every other client gets it from the prepare.
func TestRefusalDeferredForADBC(t *testing.T) {
	addr, _ := serveFake(t, nil)
	ctx := context.Background()
	if _, err := dialFake(t, addr, grpc.WithUserAgent("some-driver")).Prepare(ctx, "bad"); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("another client's prepare of a refused statement: %v, want INVALID_ARGUMENT", err)
	}
	adbc := dialFake(t, addr, grpc.WithUserAgent("ADBC Flight SQL Driver v1.9.0"))
	stmt, err := adbc.Prepare(ctx, "bad")
	if err != nil {
		t.Fatalf("ADBC's prepare of a refused statement: %v, want a handle", err)
	}
	defer stmt.Close(ctx)
	if stmt.DatasetSchema() != nil {
		t.Errorf("dataset schema %v, want none", stmt.DatasetSchema())
	}
	if _, err := stmt.Execute(ctx); status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "bad query") {
		t.Errorf("executing it: %v, want the refusal INVALID_ARGUMENT bad query", err)
	}
	if _, err := adbc.Prepare(ctx, "boom"); err != nil {
		t.Errorf("ADBC's prepare of a statement that plans: %v", err)
	}
}

func rows(t *testing.T, cl *flightsql.Client, info *flight.FlightInfo) int64 {
	t.Helper()
	var n int64
	for _, ep := range info.Endpoint {
		rdr, err := cl.DoGet(context.Background(), ep.Ticket)
		if err != nil {
			t.Fatal(err)
		}
		for rdr.Next() {
			n += rdr.RecordBatch().NumRows()
		}
		if err := rdr.Err(); err != nil {
			t.Fatal(err)
		}
		rdr.Release()
	}
	return n
}

func TestStatementsAndErrors(t *testing.T) {
	cl, _ := startFake(t, nil)
	ctx := context.Background()
	info, err := cl.Execute(ctx, "select")
	if err != nil {
		t.Fatal(err)
	}
	if !info.Ordered || len(info.Endpoint) != 1 || len(info.Endpoint[0].Location) != 0 {
		t.Fatalf("flight info %+v", info)
	}
	if n := rows(t, cl, info); n != 3 {
		t.Fatalf("rows %d", n)
	}
	if _, err := cl.Execute(ctx, "bad"); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("planning error: %v", err)
	}
	info, err = cl.Execute(ctx, "boom")
	if err != nil {
		t.Fatal(err)
	}
	rdr, err := cl.DoGet(ctx, info.Endpoint[0].Ticket)
	if err == nil {
		rdr.Next()
		err = rdr.Err()
		rdr.Release()
	}
	st, _ := status.FromError(err)
	if st.Code() != codes.Internal || st.Message() != "query could not be executed" {
		t.Fatalf("internal error leaked or mis-coded: %v", err)
	}
}

func TestForgedAndForeignTickets(t *testing.T) {
	cl, _ := startFake(t, []byte("key-a"))
	other, _ := startFake(t, []byte("key-b"))
	same, _ := startFake(t, []byte("key-a"))
	ctx := context.Background()
	info, err := cl.Execute(ctx, "select")
	if err != nil {
		t.Fatal(err)
	}
	// A replica with the same key serves the ticket; one with another key refuses it.
	if n := rows(t, same, info); n != 3 {
		t.Fatalf("replica rows %d", n)
	}
	rdr, err := other.DoGet(ctx, info.Endpoint[0].Ticket)
	if err == nil {
		rdr.Next()
		err = rdr.Err()
	}
	if status.Code(err) != codes.InvalidArgument {
		t.Fatalf("foreign ticket: %v", err)
	}
	// Flipping a byte of the signed handle is refused.
	tkt, err := flightsql.GetStatementQueryTicket(info.Endpoint[0].Ticket)
	if err != nil {
		t.Fatal(err)
	}
	h := append([]byte(nil), tkt.GetStatementHandle()...)
	h[3] ^= 1
	forged, _ := flightsql.CreateStatementQueryTicket(h)
	rdr, err = cl.DoGet(ctx, &flight.Ticket{Ticket: forged})
	if err == nil {
		rdr.Next()
		err = rdr.Err()
	}
	if status.Code(err) != codes.InvalidArgument {
		t.Fatalf("forged ticket: %v", err)
	}
}

func TestPreparedStatementBinding(t *testing.T) {
	cl, alloc := startFake(t, nil)
	ctx := context.Background()
	stmt, err := cl.Prepare(ctx, "with param")
	if err != nil {
		t.Fatal(err)
	}
	if !stmt.ParameterSchema().Equal(pSchema) || !stmt.DatasetSchema().Equal(nSchema) {
		t.Fatalf("schemas %s %s", stmt.ParameterSchema(), stmt.DatasetSchema())
	}
	bind := func(vals ...int64) arrow.RecordBatch {
		b := array.NewInt64Builder(memory.DefaultAllocator)
		defer b.Release()
		b.AppendValues(vals, nil)
		col := b.NewArray()
		defer col.Release()
		return array.NewRecordBatch(pSchema, []arrow.Array{col}, int64(len(vals)))
	}
	p := bind(5)
	stmt.SetParameters(p)
	p.Release()
	info, err := stmt.Execute(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n := rows(t, cl, info); n != 5 {
		t.Fatalf("bound rows %d", n)
	}
	// Two rows of parameters are refused for a query.
	p = bind(1, 2)
	stmt.SetParameters(p)
	p.Release()
	if _, err := stmt.Execute(ctx); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("two parameter rows: %v", err)
	}
	if err := stmt.Close(ctx); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Second)
	for alloc.CurrentAlloc() != 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := alloc.CurrentAlloc(); n != 0 {
		t.Fatalf("%d bytes of Arrow memory leaked", n)
	}
}

func TestOriginalHandleKeepsItsBinding(t *testing.T) {
	eng := &fakeEngine{alloc: memory.DefaultAllocator}
	srv, err := NewServer(eng, Config{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	res, err := srv.CreatePreparedStatement(ctx, fakeCreate{"with param"})
	if err != nil {
		t.Fatal(err)
	}
	srv.remember(res.Handle, []byte("params"))
	q, err := srv.resolve(res.Handle)
	if err != nil || string(q.Params) != "params" {
		t.Fatalf("resolve original handle: %q %v", q.Params, err)
	}
	if err := srv.ClosePreparedStatement(ctx, fakeClose{res.Handle}); err != nil {
		t.Fatal(err)
	}
	if err := srv.ClosePreparedStatement(ctx, fakeClose{res.Handle}); err != nil {
		t.Fatalf("second close: %v", err)
	}
	if err := srv.ClosePreparedStatement(ctx, fakeClose{[]byte("never issued")}); err != nil {
		t.Fatalf("close of unknown handle: %v", err)
	}
	q, _ = srv.resolve(res.Handle)
	if len(q.Params) != 0 {
		t.Fatal("binding survived close")
	}
}

type fakeCreate struct{ q string }

func (f fakeCreate) GetQuery() string         { return f.q }
func (f fakeCreate) GetTransactionId() []byte { return nil }

type fakeClose struct{ h []byte }

func (f fakeClose) GetPreparedStatementHandle() []byte { return f.h }

func TestLikeMatch(t *testing.T) {
	cases := []struct {
		pattern, s string
		want       bool
	}{
		{"%", "flights", true},
		{"fli%", "flights", true},
		{"%hts", "flights", true},
		{"f_ights", "flights", true},
		{"f_ight", "flights", false},
		{"messages", "flights", false},
		{"", "", true},
		{"", "x", false},
		{`fl\%`, "fl%", true},
		{`fl\%`, "flights", false},
		{`%\_%`, "a_b", true},
		{`%\_%`, "ab", false},
		{"%i%h%", "flights", true},
	}
	for _, c := range cases {
		p := c.pattern
		if got := likeMatch(&p, c.s); got != c.want {
			t.Errorf("like(%q, %q) = %v", c.pattern, c.s, got)
		}
	}
	if !likeMatch(nil, "anything") {
		t.Error("nil pattern must match")
	}
}

func TestHandleRoundTrip(t *testing.T) {
	s, err := newSigner(testKeyring(t, []byte("k")), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []Query{{SQL: "select 1"}, {Substrait: []byte{1, 2, 3}, Params: []byte("p")}} {
		h, err := s.seal(q)
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.open(h)
		if err != nil || got.SQL != q.SQL || string(got.Substrait) != string(q.Substrait) || string(got.Params) != string(q.Params) {
			t.Fatalf("round trip %+v → %+v, %v", q, got, err)
		}
	}
	for _, bad := range [][]byte{nil, {1}, {2, 1, 2, 3}, {2, 200, 1}} {
		if _, err := s.open(bad); !errors.Is(err, errBadHandle) {
			t.Fatalf("open(%v): %v", bad, err)
		}
	}
	// A validly signed handle with neither SQL nor a plan is refused.
	h, _ := s.seal(Query{})
	if _, err := s.open(h); !errors.Is(err, errBadHandle) {
		t.Fatalf("empty query: %v", err)
	}
}

// TestTicketHeader: a ticket's header (openHeader) is the whole ticket but its fragment, and
// it refuses what openDomain refuses.
func TestTicketHeader(t *testing.T) {
	s, err := newSigner(testKeyring(t, []byte("k")), nil)
	if err != nil {
		t.Fatal(err)
	}
	q := Query{SQL: "select 1", Nonce: []byte{1, 2}, Statement: "SELECT", Fragment: bytes.Repeat([]byte{7}, 4096),
		Endpoint: 2, Endpoints: 3, Trace: "00-ab-cd-01", Planned: 5, Expires: 9}
	tk, err := s.sealTicket(q)
	if err != nil {
		t.Fatal(err)
	}
	whole, err := s.openDomain(domainTicket, tk)
	if err != nil || !bytes.Equal(whole.Fragment, q.Fragment) {
		t.Fatalf("openDomain: %v, fragment of %d bytes", err, len(whole.Fragment))
	}
	head, err := s.openHeader(domainTicket, tk)
	if err != nil || head.Fragment != nil {
		t.Fatalf("openHeader: %v, fragment of %d bytes", err, len(head.Fragment))
	}
	whole.Fragment = nil
	if !reflect.DeepEqual(head, whole) {
		t.Fatalf("header %+v, ticket %+v", head, whole)
	}
	tk[len(tk)-1] ^= 1
	if _, err := s.openHeader(domainTicket, tk); !errors.Is(err, errBadHandle) {
		t.Fatalf("a changed signature: %v", err)
	}
	h, _ := s.sealTicket(Query{Fragment: []byte{1}})
	if _, err := s.openHeader(domainTicket, h); !errors.Is(err, errBadHandle) {
		t.Fatalf("neither SQL nor a plan: %v", err)
	}
}

// TestBindingsAreNotShared: two clients preparing the same SQL get distinct handles, and one
// client's binding never reaches the other's handle.
func TestBindingsAreNotShared(t *testing.T) {
	a, _ := startFake(t, []byte("k"))
	ctx := context.Background()
	s1, err := a.Prepare(ctx, "with param")
	if err != nil {
		t.Fatal(err)
	}
	s2, err := a.Prepare(ctx, "with param")
	if err != nil {
		t.Fatal(err)
	}
	if string(s1.Handle()) == string(s2.Handle()) {
		t.Fatal("two prepares of the same SQL share a handle")
	}
	b := array.NewInt64Builder(memory.DefaultAllocator)
	b.Append(7)
	col := b.NewArray()
	b.Release()
	p := array.NewRecordBatch(pSchema, []arrow.Array{col}, 1)
	col.Release()
	s1.SetParameters(p)
	p.Release()
	info, err := s1.Execute(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n := rows(t, a, info); n != 7 {
		t.Fatalf("bound statement rows %d", n)
	}
	info, err = s2.Execute(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n := rows(t, a, info); n != 3 {
		t.Fatalf("the other handle saw a foreign binding: %d rows", n)
	}
}
