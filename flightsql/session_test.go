package flightsql

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"
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
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// serveEngine serves engine through the zero-copy DoGet (as server assembles it) and
// returns a client with a cookie middleware, as the JDBC driver has.
func serveEngine(t *testing.T, engine Engine, alloc memory.Allocator) (*flightsql.Client, *Server) {
	t.Helper()
	return serveEngineConfig(t, engine, Config{Alloc: alloc})
}

// serveEngineConfig is serveEngine with a server configuration.
func serveEngineConfig(t *testing.T, engine Engine, cfg Config) (*flightsql.Client, *Server) {
	t.Helper()
	addr, srv := serveAt(t, engine, cfg)
	return dialCookies(t, addr), srv
}

// dialCookies returns a client of addr with a cookie middleware.
func dialCookies(t *testing.T, addr string) *flightsql.Client {
	t.Helper()
	cl, err := flightsql.NewClient(addr, nil, []flight.ClientMiddleware{flight.NewClientCookieMiddleware()},
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	return cl
}

func optionStrings(t *testing.T, cl *flightsql.Client) map[string]string {
	t.Helper()
	res, err := cl.GetSessionOptions(context.Background(), &flight.GetSessionOptionsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for k, v := range res.GetSessionOptions() {
		out[k] = v.GetStringValue()
	}
	return out
}

type recordingStream struct {
	flight.FlightService_DoGetClient
	body int
}

func (r *recordingStream) Recv() (*flight.FlightData, error) {
	d, err := r.FlightService_DoGetClient.Recv()
	if d != nil {
		r.body += len(d.DataBody)
	}
	return d, err
}

// TestSessionOptions: the defaults, per-option refusals, a change carried by the session
// cookie to the following calls (including the IPC compression sealed into the ticket, with
// the same rows in fewer bytes), and CloseSession back to the defaults.
func TestSessionOptions(t *testing.T) {
	alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
	cl, _ := serveEngine(t, &fakeEngine{alloc: alloc}, alloc)
	ctx := context.Background()
	defaults := map[string]string{OptionCatalog: "", OptionSchema: "public", OptionCompression: "none", OptionEndpoints: "single", OptionAnalytical: "off", OptionTimeParameters: "timestamp"}
	if got := optionStrings(t, cl); !equalMaps(got, defaults) {
		t.Fatalf("defaults %v", got)
	}
	const sql = "with param"
	plainRows, plainBody := paramRows(t, cl, sql, 50000)
	opts, err := flight.NewSessionOptionValues(map[string]any{
		OptionSchema: "PUBLIC", OptionCompression: "ZSTD", OptionCatalog: "other", "no_such_option": "x",
	})
	if err != nil {
		t.Fatal(err)
	}
	res, err := cl.SetSessionOptions(ctx, &flight.SetSessionOptionsRequest{SessionOptions: opts})
	if err != nil {
		t.Fatal(err)
	}
	errs := map[string]string{}
	for k, v := range res.GetErrors() {
		errs[k] = v.GetValue().String()
	}
	if !equalMaps(errs, map[string]string{OptionCatalog: "INVALID_VALUE", "no_such_option": "INVALID_NAME"}) {
		t.Fatalf("errors %v", errs)
	}
	if got := optionStrings(t, cl); !equalMaps(got, map[string]string{OptionCatalog: "", OptionSchema: "public", OptionCompression: "zstd", OptionEndpoints: "single", OptionAnalytical: "off", OptionTimeParameters: "timestamp"}) {
		t.Fatalf("after set %v", got)
	}
	zRows, zBody := paramRows(t, cl, sql, 50000)
	if zRows != plainRows || plainRows != 50000 {
		t.Fatalf("rows %d and %d, want 50000", plainRows, zRows)
	}
	if zBody*4 > plainBody {
		t.Fatalf("zstd body %d bytes, uncompressed %d", zBody, plainBody)
	}
	for _, c := range []string{"lz4", "lz4_frame"} {
		opts, _ := flight.NewSessionOptionValues(map[string]any{OptionCompression: c})
		if _, err := cl.SetSessionOptions(ctx, &flight.SetSessionOptionsRequest{SessionOptions: opts}); err != nil {
			t.Fatal(err)
		}
		if n, body := paramRows(t, cl, sql, 50000); n != 50000 || body*4 > plainBody*3 {
			t.Fatalf("%s: %d rows, %d bytes", c, n, body)
		}
	}
	if res, err := cl.CloseSession(ctx, &flight.CloseSessionRequest{}); err != nil || res.GetStatus() != flight.CloseSessionResultClosed {
		t.Fatalf("close: %v %v", res, err)
	}
	if got := optionStrings(t, cl); !equalMaps(got, defaults) {
		t.Fatalf("after close %v", got)
	}
	alloc.AssertSize(t, 0)
}

// paramRows runs the fake engine's parameterised query for n rows (n, 0…n-1 compress well).
func paramRows(t *testing.T, cl *flightsql.Client, sql string, n int64) (int64, int) {
	t.Helper()
	ctx := context.Background()
	stmt, err := cl.Prepare(ctx, sql)
	if err != nil {
		t.Fatal(err)
	}
	defer stmt.Close(ctx)
	b := array.NewRecordBuilder(memory.DefaultAllocator, pSchema)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).Append(n)
	params := b.NewRecordBatch()
	defer params.Release()
	stmt.SetParameters(params)
	info, err := stmt.Execute(ctx)
	if err != nil {
		t.Fatal(err)
	}
	stream, err := cl.Client.DoGet(ctx, info.Endpoint[0].Ticket)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recordingStream{FlightService_DoGetClient: stream}
	rdr, err := flight.NewRecordReader(rec)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Release()
	var rows int64
	for rdr.Next() {
		col := rdr.RecordBatch().Column(0).(*array.Int64)
		for i := 0; i < col.Len(); i++ {
			if col.Value(i) != rows+int64(i) {
				t.Fatalf("row %d: %d", rows+int64(i), col.Value(i))
			}
		}
		rows += int64(col.Len())
	}
	if err := rdr.Err(); err != nil {
		t.Fatal(err)
	}
	return rows, rec.body
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// blockingEngine answers "block" with one batch, then blocks until the query's context is
// done; started is signalled once the first batch is produced and stopped once the reader saw
// the context end.
type blockingEngine struct {
	fakeEngine
	started, stopped chan struct{}
}

func (e *blockingEngine) Execute(ctx context.Context, sql string, plan []byte, params arrow.RecordBatch) (array.RecordReader, error) {
	if sql != "block" {
		return e.fakeEngine.Execute(ctx, sql, plan, params)
	}
	return &blockingReader{ctx: ctx, e: e, alloc: e.alloc}, nil
}

type blockingReader struct {
	ctx   context.Context
	e     *blockingEngine
	alloc memory.Allocator
	n     int
	cur   arrow.RecordBatch
	err   error
}

func (r *blockingReader) Schema() *arrow.Schema { return nSchema }
func (r *blockingReader) Retain()               {}
func (r *blockingReader) Release() {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
}
func (r *blockingReader) Record() arrow.RecordBatch      { return r.cur }
func (r *blockingReader) RecordBatch() arrow.RecordBatch { return r.cur }
func (r *blockingReader) Err() error                     { return r.err }

func (r *blockingReader) Next() bool {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	r.n++
	if r.n == 1 {
		b := array.NewInt64Builder(r.alloc)
		defer b.Release()
		b.Append(42)
		col := b.NewArray()
		defer col.Release()
		r.cur = array.NewRecordBatch(nSchema, []arrow.Array{col}, 1)
		close(r.e.started)
		return true
	}
	<-r.ctx.Done()
	r.err = r.ctx.Err()
	close(r.e.stopped)
	return false
}

// TestCancelFlightInfo: cancelling a FlightInfo whose DoGet is running stops the query (the
// engine's reader sees its context end) and the client gets CANCELLED; a cancelled ticket is
// refused afterwards; a foreign FlightInfo is INVALID_ARGUMENT.
func TestCancelFlightInfo(t *testing.T) {
	alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
	eng := &blockingEngine{fakeEngine: fakeEngine{alloc: alloc}, started: make(chan struct{}), stopped: make(chan struct{})}
	cl, _ := serveEngine(t, eng, alloc)
	ctx := context.Background()
	info, err := cl.Execute(ctx, "block")
	if err != nil {
		t.Fatal(err)
	}
	rdr, err := cl.DoGet(ctx, info.Endpoint[0].Ticket)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Release()
	if !rdr.Next() || rdr.RecordBatch().Column(0).(*array.Int64).Value(0) != 42 {
		t.Fatalf("first batch: %v", rdr.Err())
	}
	<-eng.started
	res, err := cl.CancelFlightInfo(ctx, &flight.CancelFlightInfoRequest{Info: info})
	if err != nil || res.Status != flight.CancelStatusCancelled {
		t.Fatalf("cancel: %v %v", res, err)
	}
	<-eng.stopped // the query's work stopped
	if rdr.Next() {
		t.Fatal("a batch after the cancel")
	}
	if status.Code(rdr.Err()) != codes.Canceled {
		t.Fatalf("stream ended with %v, want CANCELLED", rdr.Err())
	}
	// The ticket stays cancelled.
	again, err := cl.DoGet(ctx, info.Endpoint[0].Ticket)
	if err == nil {
		again.Next()
		err = again.Err()
		again.Release()
	}
	if status.Code(err) != codes.Canceled {
		t.Fatalf("cancelled ticket fetched again: %v", err)
	}
	// Another query is unaffected; a FlightInfo of another server is refused.
	if info2, err := cl.Execute(ctx, "other"); err != nil || rows(t, cl, info2) != 3 {
		t.Fatalf("other query: %v", err)
	}
	foreign := &flight.FlightInfo{Endpoint: []*flight.FlightEndpoint{{Ticket: &flight.Ticket{Ticket: []byte("not ours")}}}}
	if _, err := cl.CancelFlightInfo(ctx, &flight.CancelFlightInfoRequest{Info: foreign}); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("foreign FlightInfo: %v", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for alloc.CurrentAlloc() != 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	alloc.AssertSize(t, 0)
}

// TestAnalyticalSession: the analytical mode is off by default, on for every session under
// Config.Analytical, set per session by string or boolean values (others refused with
// INVALID_VALUE), and reaches the engine's Prepare (GetFlightInfo) and, sealed into the ticket,
// its Execute (DoGet) through session.Settings.
func TestAnalyticalSession(t *testing.T) {
	ctx := context.Background()
	for _, serverWide := range []bool{false, true} {
		alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
		eng := &fakeEngine{alloc: alloc}
		cl, _ := serveEngineConfig(t, eng, Config{Alloc: alloc, Analytical: serverWide})
		check := func(what string, want bool) {
			t.Helper()
			wantOpt := map[bool]string{false: "off", true: "on"}[want]
			if got := optionStrings(t, cl)[OptionAnalytical]; got != wantOpt {
				t.Fatalf("server-wide %v, %s: option %q, want %q", serverWide, what, got, wantOpt)
			}
			info, err := cl.Execute(ctx, "SELECT 1")
			if err != nil {
				t.Fatal(err)
			}
			// The session changes before DoGet: the ticket's mode is the one planned with.
			flip, _ := flight.NewSessionOptionValues(map[string]any{OptionAnalytical: !want})
			if _, err := cl.SetSessionOptions(ctx, &flight.SetSessionOptionsRequest{SessionOptions: flip}); err != nil {
				t.Fatal(err)
			}
			rdr, err := cl.DoGet(ctx, info.Endpoint[0].Ticket)
			if err != nil {
				t.Fatal(err)
			}
			for rdr.Next() {
			}
			rdr.Release()
			eng.mu.Lock()
			p, e := eng.prepared, eng.executed
			eng.mu.Unlock()
			if p.Analytical != want || e.Analytical != want || p.User != "" {
				t.Fatalf("server-wide %v, %s: Prepare saw %+v, Execute %+v, want analytical %v", serverWide, what, p, e, want)
			}
			back, _ := flight.NewSessionOptionValues(map[string]any{OptionAnalytical: want})
			if _, err := cl.SetSessionOptions(ctx, &flight.SetSessionOptionsRequest{SessionOptions: back}); err != nil {
				t.Fatal(err)
			}
		}
		check("default", serverWide)
		for _, c := range []struct {
			v    any
			want bool
		}{{"on", true}, {"OFF", false}, {"true", true}, {"false", false}, {true, true}, {false, false}} {
			opts, _ := flight.NewSessionOptionValues(map[string]any{OptionAnalytical: c.v})
			res, err := cl.SetSessionOptions(ctx, &flight.SetSessionOptionsRequest{SessionOptions: opts})
			if err != nil || len(res.GetErrors()) > 0 {
				t.Fatalf("set %v: %v %v", c.v, res.GetErrors(), err)
			}
			check(fmt.Sprintf("set to %v", c.v), c.want)
		}
		opts, _ := flight.NewSessionOptionValues(map[string]any{OptionAnalytical: "maybe"})
		res, err := cl.SetSessionOptions(ctx, &flight.SetSessionOptionsRequest{SessionOptions: opts})
		if err != nil || res.GetErrors()[OptionAnalytical].GetValue().String() != "INVALID_VALUE" {
			t.Fatalf("set maybe: %v %v", res.GetErrors(), err)
		}
		// Resetting (no value) returns to the server's default.
		if _, err := cl.SetSessionOptions(ctx, &flight.SetSessionOptionsRequest{SessionOptions: map[string]*flight.SessionOptionValue{OptionAnalytical: {}}}); err != nil {
			t.Fatal(err)
		}
		check("reset", serverWide)
		alloc.AssertSize(t, 0)
	}
}

// sessionCookie returns the cookie header holding opts, as the server writes it.
func sessionCookie(t *testing.T, opts map[string]*flight.SessionOptionValue) string {
	t.Helper()
	b, err := proto.Marshal(&flight.GetSessionOptionsResult{SessionOptions: opts})
	if err != nil {
		t.Fatal(err)
	}
	return SessionCookie + "=" + base64.RawURLEncoding.EncodeToString(b)
}

// TestSessionCookieRefused: a session cookie that does not decode, or holds an option or a
// value this server does not take, is refused with INVALID_ARGUMENT saying so, and the
// answer drops the cookie (a cookie jar's next call starts a new session); SetSessionOptions
// and CloseSession replace such a session and succeed.
func TestSessionCookieRefused(t *testing.T) {
	alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
	addr, _ := serveAt(t, &fakeEngine{alloc: alloc}, Config{Alloc: alloc})
	cl := dialFake(t, addr, grpc.WithUserAgent("some-driver"))
	ctx := context.Background()
	good := sessionCookie(t, map[string]*flight.SessionOptionValue{OptionAnalytical: stringOption("on")})
	bad := map[string]string{
		"not base64":     SessionCookie + "=%%%not-base64",
		"not protobuf":   SessionCookie + "=" + base64.RawURLEncoding.EncodeToString([]byte{0xff, 0xff, 0xff}),
		"unknown option": sessionCookie(t, map[string]*flight.SessionOptionValue{"colour": stringOption("blue")}),
		"invalid value":  sessionCookie(t, map[string]*flight.SessionOptionValue{OptionCompression: stringOption("snappy")}),
		"one of two bad": good + "; " + sessionCookie(t, map[string]*flight.SessionOptionValue{OptionEndpoints: stringOption("many")}),
	}
	for what, cookie := range bad {
		cctx := metadata.AppendToOutgoingContext(ctx, "cookie", cookie)
		calls := map[string]func(opts ...grpc.CallOption) error{
			"GetFlightInfo": func(opts ...grpc.CallOption) error { _, err := cl.Execute(cctx, "select", opts...); return err },
			"GetSchema": func(opts ...grpc.CallOption) error {
				_, err := cl.GetExecuteSchema(cctx, "select", opts...)
				return err
			},
			"CreatePreparedStatement": func(opts ...grpc.CallOption) error {
				_, err := cl.Prepare(cctx, "select", opts...)
				return err
			},
			"GetSessionOptions": func(opts ...grpc.CallOption) error {
				_, err := cl.GetSessionOptions(cctx, &flight.GetSessionOptionsRequest{}, opts...)
				return err
			},
		}
		for call, f := range calls {
			var hdr metadata.MD
			err := f(grpc.Header(&hdr))
			if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "the session cookie flightsrv_session is invalid") {
				t.Fatalf("%s, %s: %v", what, call, err)
			}
			if set := strings.Join(hdr.Get("set-cookie"), "|"); !strings.HasPrefix(set, SessionCookie+"=;") || !strings.Contains(set, "Max-Age=0") {
				t.Fatalf("%s, %s: set-cookie %q, want the cookie dropped", what, call, set)
			}
		}
		// SetSessionOptions starts a new session from the defaults, with what it sets.
		var hdr metadata.MD
		opts, _ := flight.NewSessionOptionValues(map[string]any{OptionEndpoints: "multiple"})
		res, err := cl.SetSessionOptions(cctx, &flight.SetSessionOptionsRequest{SessionOptions: opts}, grpc.Header(&hdr))
		if err != nil || len(res.GetErrors()) > 0 {
			t.Fatalf("%s: SetSessionOptions %v %v", what, res.GetErrors(), err)
		}
		fresh := hdr.Get("set-cookie")
		if len(fresh) != 1 {
			t.Fatalf("%s: set-cookie %q", what, fresh)
		}
		nctx := metadata.AppendToOutgoingContext(ctx, "cookie", strings.SplitN(fresh[0], ";", 2)[0])
		got, err := cl.GetSessionOptions(nctx, &flight.GetSessionOptionsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{OptionCatalog: "", OptionSchema: "public", OptionCompression: "none", OptionEndpoints: "multiple", OptionAnalytical: "off", OptionTimeParameters: "timestamp"}
		gotS := map[string]string{}
		for k, v := range got.GetSessionOptions() {
			gotS[k] = v.GetStringValue()
		}
		if !equalMaps(gotS, want) {
			t.Fatalf("%s: new session %v", what, gotS)
		}
		if res, err := cl.CloseSession(cctx, &flight.CloseSessionRequest{}); err != nil || res.GetStatus() != flight.CloseSessionResultClosed {
			t.Fatalf("%s: CloseSession %v %v", what, res, err)
		}
	}
	// A valid cookie is read.
	if _, err := cl.Execute(metadata.AppendToOutgoingContext(ctx, "cookie", good), "select"); err != nil {
		t.Fatal(err)
	}
	// With a cookie jar, the refused call drops the cookie and the next call starts afresh.
	jar := flight.NewCookieMiddleware()
	jcl, err := flightsql.NewClient(addr, nil, []flight.ClientMiddleware{flight.CreateClientMiddleware(jar)},
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer jcl.Close()
	// Plant a damaged cookie in the jar: the jar keeps what a response sets.
	jar.(flight.ClientHeadersMiddleware).HeadersReceived(ctx, metadata.Pairs("set-cookie", bad["unknown option"]))
	if _, err := jcl.Execute(ctx, "select"); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("first call with the damaged cookie: %v", err)
	}
	if _, err := jcl.Execute(ctx, "select"); err != nil {
		t.Fatalf("next call: %v", err)
	}
	alloc.AssertSize(t, 0)
}

// TestSessionHeaders: a call header flightsrv.<option> sets a session option for that call
// (what the JDBC driver sends for a connection property it does not know), over the cookie;
// a value the option does not take is INVALID_ARGUMENT naming the header. The time_parameters
// option declares a prepared statement's timestamps as utf8.
func TestSessionHeaders(t *testing.T) {
	alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
	eng := &fakeEngine{alloc: alloc}
	cl, _ := serveEngine(t, eng, alloc)
	addr, _ := serveAt(t, eng, Config{Alloc: alloc})
	jdbc := dialFake(t, addr, grpc.WithUserAgent("grpc-java-netty/1.65.0"))
	ctx := context.Background()

	hctx := metadata.AppendToOutgoingContext(ctx, "flightsrv.analytical", "ON", "flightsrv.time_parameters", "text")
	if got := optionStrings(t, cl); got[OptionAnalytical] != "off" {
		t.Fatalf("without the header: %v", got)
	}
	res, err := cl.GetSessionOptions(hctx, &flight.GetSessionOptionsRequest{})
	if err != nil || res.GetSessionOptions()[OptionAnalytical].GetStringValue() != "on" || res.GetSessionOptions()[OptionTimeParameters].GetStringValue() != "text" {
		t.Fatalf("with the headers: %v %v", res, err)
	}
	if _, err := cl.Execute(hctx, "select"); err != nil {
		t.Fatal(err)
	}
	eng.mu.Lock()
	p := eng.prepared
	eng.mu.Unlock()
	if !p.Analytical {
		t.Fatal("the header's analytical mode did not reach Prepare")
	}
	// The header is not stored in the session: SetSessionOptions keeps the cookie's options.
	opts, _ := flight.NewSessionOptionValues(map[string]any{OptionEndpoints: "multiple"})
	if _, err := cl.SetSessionOptions(hctx, &flight.SetSessionOptionsRequest{SessionOptions: opts}); err != nil {
		t.Fatal(err)
	}
	if got := optionStrings(t, cl); got[OptionAnalytical] != "off" || got[OptionEndpoints] != "multiple" {
		t.Fatalf("after set with headers: %v", got)
	}
	for _, h := range [][2]string{{"flightsrv.analytical", "maybe"}, {"flightsrv.time_parameters", "epoch"}} {
		_, err := cl.Execute(metadata.AppendToOutgoingContext(ctx, h[0], h[1]), "select")
		if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "call header "+h[0]+":") || strings.Contains(err.Error(), h[1]) {
			t.Fatalf("%s=%s: %v", h[0], h[1], err)
		}
	}
	// A misspelt option is refused, not ignored.
	_, err = cl.Execute(metadata.AppendToOutgoingContext(ctx, "flightsrv.analytic", "on"), "select")
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "call header flightsrv.analytic names no session option (analytical, catalog, endpoints, ipc_compression, schema, time_parameters)") {
		t.Fatalf("flightsrv.analytic: %v", err)
	}

	// time_parameters: the declared parameter schema of a prepared statement.
	for _, c := range []struct {
		ctx  context.Context
		want string
	}{
		{ctx, "$1: type=utf8, $2: type=timestamp[ms, tz=UTC], $3: type=list<item: timestamp[ms, tz=UTC], nullable>"},
		{metadata.AppendToOutgoingContext(ctx, "flightsrv.time_parameters", "TEXT"), "$1: type=utf8, $2: type=utf8, $3: type=list<item: utf8, nullable>"},
		{metadata.AppendToOutgoingContext(ctx, "flightsrv.time_parameters", "timestamp"), "$1: type=utf8, $2: type=timestamp[ms, tz=UTC], $3: type=list<item: timestamp[ms, tz=UTC], nullable>"},
	} {
		stmt, err := jdbc.Prepare(c.ctx, "with times")
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, f := range stmt.ParameterSchema().Fields() {
			got = append(got, f.Name+": type="+f.Type.String())
		}
		if strings.Join(got, ", ") != c.want {
			t.Errorf("parameters %s, want %s", strings.Join(got, ", "), c.want)
		}
		stmt.Close(ctx)
	}
	// Set in the session (SetSessionOptions) it applies to the following prepared statements.
	topts, _ := flight.NewSessionOptionValues(map[string]any{OptionTimeParameters: "text"})
	if res, err := cl.SetSessionOptions(ctx, &flight.SetSessionOptionsRequest{SessionOptions: topts}); err != nil || len(res.GetErrors()) > 0 {
		t.Fatalf("set time_parameters: %v %v", res, err)
	}
	if got := optionStrings(t, cl)[OptionTimeParameters]; got != "text" {
		t.Fatalf("time_parameters %q", got)
	}
	alloc.AssertSize(t, 0)
}
