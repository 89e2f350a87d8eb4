package flightsql

// Fuzz targets of the Flight SQL layer's outside input: DoPut parameter streams
// (FuzzParameterBatch), statement handles and tickets (FuzzHandle, FuzzTicket), session
// cookies and flightsrv.* call headers (FuzzSessionOptions) and Flight SQL command Anys in
// descriptors, tickets and actions (FuzzCommand). Seed corpora: testdata/fuzz/<target> (Go's
// layout), plus the seeds f.Add gives below.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	pb "github.com/apache/arrow-go/v18/arrow/flight/gen/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/flightsrv/flightsrv/internal/auth"
	"github.com/flightsrv/flightsrv/internal/fuzzcount"
	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/substrait"
)

// fuzzServer returns a Server over fakeEngine whose handles and tickets are signed with a
// fixed keyring (so that seeds stay valid), at a fixed clock.
func fuzzServer(tb testing.TB, alloc memory.Allocator) *Server {
	tb.Helper()
	secret := sha256.Sum256([]byte("fuzz"))
	ring, err := auth.NewKeyring("fuzz", []auth.Key{{ID: "fuzz", Secret: secret[:]}})
	if err != nil {
		tb.Fatal(err)
	}
	srv, err := NewServer(&fakeEngine{alloc: alloc}, Config{Keyring: ring, Alloc: alloc, Now: func() time.Time { return fuzzNow }})
	if err != nil {
		tb.Fatal(err)
	}
	return srv
}

var fuzzNow = time.Date(2026, 1, 15, 12, 0, 0, 0, time.UTC)

// putStream is a DoPut stream that yields msgs, then io.EOF.
type putStream struct {
	flight.FlightService_DoPutServer
	ctx  context.Context
	msgs []*flight.FlightData
}

func (p *putStream) Context() context.Context { return p.ctx }

func (p *putStream) Recv() (*flight.FlightData, error) {
	if len(p.msgs) == 0 {
		return nil, io.EOF
	}
	m := p.msgs[0]
	p.msgs = p.msgs[1:]
	return m, nil
}

// paramStatements are the statements a bound row is bound to in FuzzParameterBatch, by its
// number of parameters.
var paramStatements = map[int][]string{
	1: {`SELECT $1::bigint + 1`, `SELECT id FROM messages WHERE channel_id = 'g' AND timestamp >= '2026-01-01' AND timestamp < '2026-02-01' LIMIT $1`,
		`SELECT $1::numeric, round($1::numeric, 2), $1::numeric(10,2), scale($1::numeric)`},
	3: {`SELECT id, upper(id) FROM messages WHERE channel_id = $1 AND timestamp >= $2 AND timestamp < $3`, `SELECT count(*) FROM messages WHERE channel_id = ANY($1) AND timestamp >= $2 AND timestamp < $3`},
}

// FuzzParameterBatch sends bytes, as the FlightData messages of an Arrow IPC stream, as the
// DoPut of a prepared statement's parameters through the path a client's stream takes:
// CheckedPutStream, arrow-go's flight reader, Server.DoPutPreparedStatementQuery, then the
// updated handle's parameters decoded as DoGet decodes them (decodeParams) and bound to
// statements of the general binder (substrait.Statement.BindGeneralRecord). A refusal must be
// a gRPC status (INVALID_ARGUMENT) or a planning error, and no Arrow buffer may leak.
func FuzzParameterBatch(f *testing.F) {
	msTZ := &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}
	f.Add(ipcStream(f, []arrow.Field{{Name: "$1", Type: arrow.PrimitiveTypes.Int64}}, int64(7)), false)
	f.Add(ipcStream(f, []arrow.Field{{Name: "$1", Type: arrow.BinaryTypes.String}, {Name: "$2", Type: msTZ}, {Name: "$3", Type: msTZ}},
		"general", int64(1767225600000), int64(1769904000000)), true)
	f.Add(ipcStream(f, []arrow.Field{{Name: "$1", Type: arrow.BinaryTypes.String}, {Name: "$2", Type: arrow.BinaryTypes.String}, {Name: "$3", Type: arrow.BinaryTypes.String}},
		"general", "2026-01-01T00:00:00Z", "2026-02-01T00:00:00.123456Z"), true)
	f.Add(ipcStream(f, []arrow.Field{{Name: "$1", Type: arrow.ListOf(arrow.BinaryTypes.String)}, {Name: "$2", Type: &arrow.TimestampType{Unit: arrow.Nanosecond}}, {Name: "$3", Type: arrow.PrimitiveTypes.Int64}},
		[]string{"a", "b"}, int64(1767225600000000000), int64(1769904000000)), true)
	f.Add(ipcStream(f, []arrow.Field{{Name: "$1", Type: arrow.BinaryTypes.String, Nullable: true}}, nil), false)
	f.Add(ipcStream(f, []arrow.Field{{Name: "$1", Type: arrow.PrimitiveTypes.Float64}}, 2.5), false)
	f.Add(ipcStream(f, []arrow.Field{{Name: "$1", Type: &arrow.Decimal128Type{Precision: 5, Scale: 3}}}, decimal128.FromI64(12345)), false)
	cat, err := substrait.NewCatalog(routing.TableDef{Name: "messages", TableID: "chat", PartitionColumn: "channel_id", Strategy: routing.CalendarMonthUTC, WritableBuckets: 2})
	if err != nil {
		f.Fatal(err)
	}
	stmts := map[int][]*substrait.Statement{}
	for n, sqls := range paramStatements {
		for _, s := range sqls {
			st, err := substrait.Prepare(s, cat)
			if err != nil {
				f.Fatalf("%s: %v", s, err)
			}
			stmts[n] = append(stmts[n], st)
		}
	}
	f.Fuzz(func(t *testing.T, raw []byte, three bool) {
		fuzzcount.Add()
		alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
		defer alloc.AssertSize(t, 0)
		srv := fuzzServer(t, alloc)
		sql, n := "with param", 1
		if three {
			sql, n = "with times", 3
		}
		h, err := srv.sign.seal(Query{SQL: sql})
		if err != nil {
			t.Fatal(err)
		}
		cmd := &pb.CommandPreparedStatementQuery{PreparedStatementHandle: h}
		anyCmd, err := anypb.New(cmd)
		if err != nil {
			t.Fatal(err)
		}
		cmdBytes, err := proto.Marshal(anyCmd)
		if err != nil {
			t.Fatal(err)
		}
		msgs, ok := SplitIPCStream(raw, &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: cmdBytes})
		if !ok {
			return
		}
		stream := CheckedPutStream(&putStream{ctx: context.Background(), msgs: msgs})
		// As arrow-go's Flight SQL DoPut reads a client's stream, with the server's allocator
		// (the Go allocator's): arrow-go v18.8's reader does not release a buffer it
		// decompressed when the rest of the batch then fails to decode (its panic is recovered
		// into an error); the garbage collector reclaims it, a checked allocator would count it.
		rdr, err := flight.NewRecordReader(stream, ipc.WithAllocator(memory.DefaultAllocator), ipc.WithDelayReadSchema(true))
		if err != nil {
			return
		}
		nh, err := srv.DoPutPreparedStatementQuery(context.Background(), flightsqlHandle(h), rdr, nil)
		rdr.Release()
		if err != nil {
			if st, ok := status.FromError(err); !ok || st.Code() != codes.InvalidArgument {
				t.Fatalf("DoPut refused with %v, want INVALID_ARGUMENT", err)
			}
			return
		}
		q, err := srv.resolve(nh)
		if err != nil {
			t.Fatalf("the updated handle does not open: %v", err)
		}
		rec, err := srv.decodeParams(q.Params)
		if err != nil || rec == nil {
			t.Fatalf("the parameters DoPut kept do not decode: %v", err)
		}
		defer rec.Release()
		if rec.NumRows() != 1 || int(rec.NumCols()) != n {
			t.Fatalf("kept parameters: %d rows of %d columns, want 1 of %d", rec.NumRows(), rec.NumCols(), n)
		}
		for _, st := range stmts[n] {
			if _, err := st.BindGeneralRecord(substrait.BindOptions{}, rec, 0); err != nil {
				if _, ok := substrait.CodeOf(err); !ok {
					t.Fatalf("%s: binding refused with %v (%T), no planning error", st.SQL(), err, err)
				}
			}
		}
	})
}

// flightsqlHandle is a flightsql.PreparedStatementQuery of handle h.
type flightsqlHandle []byte

func (h flightsqlHandle) GetPreparedStatementHandle() []byte { return h }

// ipcStream returns the Arrow IPC stream of one row of fields holding vals (nil: NULL; a
// []string for a list of strings).
func ipcStream(tb testing.TB, fields []arrow.Field, vals ...any) []byte {
	tb.Helper()
	schema := arrow.NewSchema(fields, nil)
	bld := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer bld.Release()
	for i, v := range vals {
		fb := bld.Field(i)
		switch v := v.(type) {
		case nil:
			fb.AppendNull()
		case string:
			fb.(*array.StringBuilder).Append(v)
		case int64:
			switch b := fb.(type) {
			case *array.Int64Builder:
				b.Append(v)
			case *array.TimestampBuilder:
				b.Append(arrow.Timestamp(v))
			}
		case float64:
			fb.(*array.Float64Builder).Append(v)
		case decimal128.Num:
			fb.(*array.Decimal128Builder).Append(v)
		case []string:
			lb := fb.(*array.ListBuilder)
			lb.Append(true)
			for _, s := range v {
				lb.ValueBuilder().(*array.StringBuilder).Append(s)
			}
		}
	}
	rec := bld.NewRecordBatch()
	defer rec.Release()
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(schema))
	if err := w.Write(rec); err != nil {
		tb.Fatal(err)
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// FuzzHandle opens bytes as a prepared-statement handle, a statement ticket and a poll
// descriptor: every failure is errBadHandle or an expired ticket's FAILED_PRECONDITION. And
// the query the bytes stand for (sql, plan and nonce), sealed, opens again to the same query
// in its own domain only, and with any one byte flipped does not open.
func FuzzHandle(f *testing.F) {
	srv := fuzzServer(f, memory.DefaultAllocator)
	for _, q := range []Query{{SQL: "SELECT 1"}, {Substrait: []byte{1, 2, 3}, Nonce: []byte("n")}, {SQL: "x", Expires: fuzzNow.Unix() + 60, Fragment: []byte("{}")}} {
		for _, seal := range []func(Query) ([]byte, error){srv.sign.seal, srv.sign.sealTicket} {
			h, err := seal(q)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(h, q.SQL, q.Substrait, uint16(len(h)/2))
		}
	}
	f.Fuzz(func(t *testing.T, raw []byte, sql string, plan []byte, flip uint16) {
		fuzzcount.Add()
		for _, open := range []func([]byte) (Query, error){srv.sign.open, srv.sign.openTicket, srv.openPollDescriptor} {
			if _, err := open(raw); err != nil && !errors.Is(err, errBadHandle) {
				if st, ok := status.FromError(err); !ok || (st.Code() != codes.FailedPrecondition && st.Code() != codes.InvalidArgument) {
					t.Fatalf("open refused with %v, want errBadHandle or an expired ticket", err)
				}
			}
		}
		q := Query{SQL: sql, Substrait: plan, Nonce: raw, Expires: fuzzNow.Unix() + 60}
		if (sql == "") == (len(plan) == 0) || !utf8.ValidString(sql) {
			// A handle holds exactly one of them; and SQL text arrives in protobuf string
			// fields, which hold valid UTF-8 only (the JSON body would replace the rest).
			return
		}
		h, err := srv.sign.seal(q)
		if err != nil {
			t.Fatal(err)
		}
		got, err := srv.sign.open(h)
		if err != nil || got.SQL != q.SQL || !bytes.Equal(got.Substrait, q.Substrait) || !bytes.Equal(got.Nonce, q.Nonce) {
			t.Fatalf("round trip: %+v, %v; want %+v", got, err, q)
		}
		if _, err := srv.sign.openTicket(h); !errors.Is(err, errBadHandle) {
			t.Fatalf("a handle opens as a ticket: %v", err)
		}
		tk, err := srv.sign.sealTicket(q)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := srv.sign.openTicket(tk); err != nil || got.SQL != q.SQL {
			t.Fatalf("ticket round trip: %+v, %v", got, err)
		}
		bad := bytes.Clone(h)
		bad[int(flip)%len(bad)] ^= 1 << (flip % 8)
		if _, err := srv.sign.open(bad); err == nil {
			t.Fatalf("a handle with byte %d flipped opens", int(flip)%len(bad))
		}
	})
}

// FuzzTicket opens bytes as a DoGet ticket (an Any of TicketStatementQuery or
// CommandPreparedStatementQuery; anything else goes to the metadata dispatcher): a query
// ticket that does not open is refused with errBadHandle or FAILED_PRECONDITION, and
// IsQueryTicket agrees with ticketQuery on what is a query ticket.
func FuzzTicket(f *testing.F) {
	srv := fuzzServer(f, memory.DefaultAllocator)
	tk, err := srv.sign.sealTicket(Query{SQL: "SELECT 1", Expires: fuzzNow.Unix() + 60})
	if err != nil {
		f.Fatal(err)
	}
	h, err := srv.sign.seal(Query{SQL: "with param"})
	if err != nil {
		f.Fatal(err)
	}
	for _, m := range []proto.Message{&pb.TicketStatementQuery{StatementHandle: tk}, &pb.CommandPreparedStatementQuery{PreparedStatementHandle: h},
		&pb.TicketStatementQuery{StatementHandle: []byte("forged")}, &pb.CommandGetTables{}} {
		a, err := anypb.New(m)
		if err != nil {
			f.Fatal(err)
		}
		raw, err := proto.Marshal(a)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(raw)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		fuzzcount.Add()
		_, ok, err := srv.ticketQuery(raw)
		if ok != IsQueryTicket(&flight.Ticket{Ticket: raw}) {
			t.Fatalf("ticketQuery ok = %v, IsQueryTicket disagrees", ok)
		}
		if err != nil && !errors.Is(err, errBadHandle) {
			if st, _ := status.FromError(err); st.Code() != codes.FailedPrecondition {
				t.Fatalf("ticket refused with %v", err)
			}
		}
		if _, _, err := srv.cancelQuery(raw); err != nil && !errors.Is(err, errBadHandle) {
			t.Fatalf("cancel ticket refused with %v", err)
		}
		if ok && err == nil {
			if _, _, err := srv.ticketQuery(raw); err != nil {
				t.Fatalf("a ticket that opened once does not open again: %v", err)
			}
		}
	})
}

// FuzzSessionOptions reads a session from a cookie header and a flightsrv.<name> call header:
// a session is either read (every option then holds a value its option takes: it survives
// being stored in a cookie and read again) or refused with INVALID_ARGUMENT; a refused
// cookie's message names the cookie, not its value.
func FuzzSessionOptions(f *testing.F) {
	srv := fuzzServer(f, memory.DefaultAllocator)
	good, err := proto.Marshal(&flight.GetSessionOptionsResult{SessionOptions: map[string]*flight.SessionOptionValue{
		OptionCompression: stringOption("zstd"), OptionAnalytical: stringOption("on")}})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(SessionCookie+"="+base64.RawURLEncoding.EncodeToString(good), "analytical", "off")
	f.Add(SessionCookie+"=%%%; other=1", "endpoints", "multiple")
	f.Add("a=b; "+SessionCookie+"=AAAA", "nosuch", "x")
	f.Add("", "time_parameters", " TEXT ")
	f.Fuzz(func(t *testing.T, cookie, name, value string) {
		fuzzcount.Add()
		md := metadata.MD{}
		if cookie != "" {
			md.Append("cookie", cookie)
		}
		hdr := strings.ToLower(SessionHeaderPrefix + name)
		md.Append(hdr, value)
		ctx := metadata.NewIncomingContext(context.Background(), md)
		opts, err := srv.sessionOptions(ctx)
		if err != nil {
			st, ok := status.FromError(err)
			if !ok || st.Code() != codes.InvalidArgument {
				t.Fatalf("session refused with %v, want INVALID_ARGUMENT", err)
			}
			if v := strings.TrimSpace(value); len(v) > 3 && strings.Contains(st.Message(), v) && !strings.Contains(hdr, v) && !strings.Contains(SessionCookie, v) {
				t.Fatalf("refusal %q quotes the value", st.Message())
			}
			return
		}
		b, err := proto.Marshal(&flight.GetSessionOptionsResult{SessionOptions: opts})
		if err != nil {
			t.Fatal(err)
		}
		c := http.Cookie{Name: SessionCookie, Value: base64.RawURLEncoding.EncodeToString(b)}
		again, err := srv.sessionOptions(metadata.NewIncomingContext(context.Background(), metadata.Pairs("cookie", c.String())))
		if err != nil {
			t.Fatalf("the session read does not read back from its cookie: %v", err)
		}
		for k, v := range opts {
			if again[k].GetStringValue() != v.GetStringValue() {
				t.Fatalf("option %s: %q read back as %q", k, v.GetStringValue(), again[k].GetStringValue())
			}
		}
	})
}

// doGetStream is a DoGet stream that discards what is sent.
type doGetStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s doGetStream) Context() context.Context      { return s.ctx }
func (s doGetStream) Send(*flight.FlightData) error { return nil }
func (s doGetStream) SendMsg(m any) error {
	if e, ok := m.(*encodedFlightData); ok {
		e.data.Free() // as gRPC does once written
	}
	return nil
}
func (s doGetStream) SetHeader(metadata.MD) error  { return nil }
func (s doGetStream) SendHeader(metadata.MD) error { return nil }
func (s doGetStream) SetTrailer(metadata.MD)       {}

// headerSink is a call's transport stream that discards the response headers set.
type headerSink struct{}

func (headerSink) Method() string               { return "/arrow.flight.protocol.FlightService/DoAction" }
func (headerSink) SetHeader(metadata.MD) error  { return nil }
func (headerSink) SendHeader(metadata.MD) error { return nil }
func (headerSink) SetTrailer(metadata.MD) error { return nil }

// doActionStream is a DoAction stream that discards what is sent.
type doActionStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s doActionStream) Send(*flight.Result) error   { return nil }
func (s doActionStream) Context() context.Context    { return s.ctx }
func (s doActionStream) SetHeader(metadata.MD) error { return nil }

// FuzzCommand dispatches bytes as a Flight SQL command the way a client's calls carry one:
// the Cmd of a FlightDescriptor (GetFlightInfo, GetSchema, PollFlightInfo), a DoGet ticket
// and the body of the Flight SQL actions, through arrow-go's dispatcher over this Server, as
// server serves it. Every refusal must be a gRPC status whose code a client acts on:
// never UNKNOWN or INTERNAL.
func FuzzCommand(f *testing.F) {
	srv := fuzzServer(f, memory.DefaultAllocator)
	h, err := srv.sign.seal(Query{SQL: "SELECT 1"})
	if err != nil {
		f.Fatal(err)
	}
	tk, err := srv.sign.sealTicket(Query{SQL: "SELECT 1", Expires: fuzzNow.Unix() + 60})
	if err != nil {
		f.Fatal(err)
	}
	schema := "public"
	for _, m := range []proto.Message{
		&pb.CommandStatementQuery{Query: "SELECT 1"},
		&pb.CommandStatementSubstraitPlan{Plan: &pb.SubstraitPlan{Plan: []byte{1}}},
		&pb.CommandPreparedStatementQuery{PreparedStatementHandle: h},
		&pb.TicketStatementQuery{StatementHandle: tk},
		&pb.CommandGetTables{DbSchemaFilterPattern: &schema, IncludeSchema: true},
		&pb.CommandGetDbSchemas{}, &pb.CommandGetCatalogs{}, &pb.CommandGetTableTypes{},
		&pb.CommandGetSqlInfo{Info: []uint32{0, 1, 504}},
		&pb.CommandGetXdbcTypeInfo{}, &pb.CommandGetPrimaryKeys{Table: "flights"},
		&pb.ActionCreatePreparedStatementRequest{Query: "with param"},
		&pb.ActionClosePreparedStatementRequest{PreparedStatementHandle: h},
		&pb.ActionCancelQueryRequest{Info: []byte{1}},
	} {
		a, err := anypb.New(m)
		if err != nil {
			f.Fatal(err)
		}
		raw, err := proto.Marshal(a)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(raw, uint8(0))
	}
	actions := []string{flightsql.CreatePreparedStatementActionType, flightsql.ClosePreparedStatementActionType,
		flightsql.CreatePreparedSubstraitPlanActionType, flight.CancelFlightInfoActionType, flight.RenewFlightEndpointActionType,
		flight.SetSessionOptionsActionType, flight.GetSessionOptionsActionType, flight.CloseSessionActionType}
	check := func(t *testing.T, what string, err error) {
		t.Helper()
		if err == nil {
			return
		}
		st, ok := status.FromError(err)
		if !ok || st.Code() == codes.Unknown || st.Code() == codes.Internal {
			t.Fatalf("%s: refused with %v (%T)", what, err, err)
		}
	}
	f.Fuzz(func(t *testing.T, raw []byte, action uint8) {
		fuzzcount.Add()
		alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
		srv := fuzzServer(t, alloc)
		svc := zeroCopyService{flightsql.NewFlightServerWithAllocator(srv, alloc), srv}
		defer func() {
			srv.Close()
			// The producer of a DoGet releases its last batch as it ends, after the stream.
			for deadline := time.Now().Add(2 * time.Second); alloc.CurrentAlloc() != 0 && time.Now().Before(deadline); {
				time.Sleep(time.Millisecond)
			}
			alloc.AssertSize(t, 0)
		}()
		// The call's transport stream, which response headers (the session cookie) go to.
		ctx, cancel := context.WithTimeout(grpc.NewContextWithServerTransportStream(context.Background(), headerSink{}), 10*time.Second)
		defer cancel()
		desc := &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: raw}
		_, err := svc.GetFlightInfo(ctx, desc)
		check(t, "GetFlightInfo", err)
		_, err = svc.GetSchema(ctx, desc)
		check(t, "GetSchema", err)
		_ = IsMetadataCommand(desc)
		_, err = svc.PollFlightInfo(ctx, desc)
		check(t, "PollFlightInfo", err)
		check(t, "DoGet", svc.DoGet(&flight.Ticket{Ticket: raw}, doGetStream{ctx: ctx}))
		act := &flight.Action{Type: actions[int(action)%len(actions)], Body: raw}
		// The server's check of an action's body (server.service.DoAction): nil or INVALID_ARGUMENT.
		if err := CheckActionBody(act); err != nil && status.Code(err) != codes.InvalidArgument {
			t.Fatalf("CheckActionBody %s: %v", act.Type, err)
		}
		check(t, "DoAction "+act.Type, svc.DoAction(act, doActionStream{ctx: ctx}))
	})
}
