package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	pb "github.com/apache/arrow-go/v18/arrow/flight/gen/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/flightsrv/flightsrv/internal/testsupport/pgtest"
	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/routing/sqlite"
	"github.com/flightsrv/flightsrv/server"
)

// eventsTable is the routed table the ingest tests write: day buckets, a writable window of
// three days at the server's clock (now).
var eventsTable = routing.TableDef{Name: "events", TableID: "flightsrv.e2e.events", PartitionColumn: "channel",
	Strategy: routing.CalendarDayUTC, WritableBuckets: 3, JSONValues: true}

// event is one ingested row as the test generates it; want is the value it must read back as.
type event struct {
	channel, id string
	at          time.Time // µs
	delay       int64
	note        *string
}

func (e event) want() string {
	note := "null"
	if e.note != nil {
		note = fmt.Sprintf("%q", *e.note)
	}
	return fmt.Sprintf(`{"delay":%d,"note":%s}`, e.delay, note)
}

var ingestChannels = []string{"alpha", "beta", "gamma", "delta"}

// makeEvents returns n events of ingestChannels inside the last day before now, ids prefixed.
func makeEvents(rng *rand.Rand, n int, prefix string, now time.Time) []event {
	out := make([]event, n)
	for i := range out {
		e := event{channel: ingestChannels[rng.IntN(len(ingestChannels))], id: fmt.Sprintf("%s-%06d", prefix, i),
			at: now.Add(-time.Duration(rng.Int64N(int64(20 * time.Hour)))).Truncate(time.Microsecond), delay: rng.Int64N(200) - 50}
		if i%7 != 0 {
			s := fmt.Sprintf("n%d \"q\"", rng.IntN(1000))
			e.note = &s
		}
		out[i] = e
	}
	return out
}

var (
	wideSchema = arrow.NewSchema([]arrow.Field{
		{Name: "channel", Type: arrow.BinaryTypes.String},
		{Name: "timestamp", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}},
		{Name: "id", Type: arrow.BinaryTypes.String},
		{Name: "delay", Type: arrow.PrimitiveTypes.Int64},
		{Name: "note", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	narrowSchema = arrow.NewSchema([]arrow.Field{
		{Name: "channel", Type: arrow.BinaryTypes.String},
		{Name: "timestamp", Type: &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}},
		{Name: "id", Type: arrow.BinaryTypes.String},
		{Name: "value", Type: arrow.BinaryTypes.Binary},
	}, nil)
)

// eventBatches builds batches of at most per rows of evs in the wide or the narrow shape
// (narrow: the value pre-encoded as want). A nil timestamp at index bad makes a bad row.
func eventBatches(evs []event, per int, narrow bool, bad int) []arrow.RecordBatch {
	schema := wideSchema
	if narrow {
		schema = narrowSchema
	}
	var out []arrow.RecordBatch
	for lo := 0; lo < len(evs); lo += per {
		b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		for i, e := range evs[lo:min(lo+per, len(evs))] {
			b.Field(0).(*array.StringBuilder).Append(e.channel)
			if lo+i == bad {
				b.Field(1).AppendNull()
			} else if narrow {
				b.Field(1).(*array.TimestampBuilder).Append(arrow.Timestamp(e.at.UnixNano()))
			} else {
				b.Field(1).(*array.TimestampBuilder).Append(arrow.Timestamp(e.at.UnixMicro()))
			}
			b.Field(2).(*array.StringBuilder).Append(e.id)
			if narrow {
				b.Field(3).(*array.BinaryBuilder).Append([]byte(e.want()))
				continue
			}
			b.Field(3).(*array.Int64Builder).Append(e.delay)
			if e.note == nil {
				b.Field(4).AppendNull()
			} else {
				b.Field(4).(*array.StringBuilder).Append(*e.note)
			}
		}
		out = append(out, b.NewRecordBatch())
		b.Release()
	}
	return out
}

// batchReader is an array.RecordReader over batches; onNext, when set, runs before batch i is
// handed out (a client cancelling mid-stream).
type batchReader struct {
	refs    atomic.Int64
	schema  *arrow.Schema
	batches []arrow.RecordBatch
	i       int
	onNext  func(i int)
}

func newBatchReader(schema *arrow.Schema, batches []arrow.RecordBatch) *batchReader {
	r := &batchReader{schema: schema, batches: batches, i: -1}
	r.refs.Store(1)
	return r
}

func (r *batchReader) Retain()               { r.refs.Add(1) }
func (r *batchReader) Release()              { r.refs.Add(-1) }
func (r *batchReader) Schema() *arrow.Schema { return r.schema }
func (r *batchReader) Err() error            { return nil }
func (r *batchReader) Next() bool {
	r.i++
	if r.onNext != nil && r.i < len(r.batches) {
		r.onNext(r.i)
	}
	return r.i < len(r.batches)
}
func (r *batchReader) RecordBatch() arrow.RecordBatch { return r.batches[r.i] }
func (r *batchReader) Record() arrow.RecordBatch      { return r.batches[r.i] }

var appendMode = &flightsql.TableDefinitionOptions{
	IfNotExist: flightsql.TableDefinitionOptionsTableNotExistOptionFail,
	IfExists:   flightsql.TableDefinitionOptionsTableExistsOptionAppend,
}

// ingest sends batches with arrow-go's ExecuteIngest (v18.8 ends the stream without the IPC
// end-of-stream marker).
func ingest(ctx context.Context, cl *flightsql.Client, schema *arrow.Schema, batches []arrow.RecordBatch, opts *flightsql.ExecuteIngestOpts) (int64, error) {
	if opts == nil {
		opts = &flightsql.ExecuteIngestOpts{Table: "events", TableDefinitionOptions: appendMode}
	}
	return cl.ExecuteIngest(ctx, newBatchReader(schema, batches), opts)
}

// ingestWithEOS sends batches over a raw DoPut that ends with the IPC end-of-stream marker, as
// arrow-go v18.9 and the C++, Java and ADBC clients do, and returns the PutResult's count.
func ingestWithEOS(ctx context.Context, cl *flightsql.Client, schema *arrow.Schema, batches []arrow.RecordBatch) (int64, error) {
	cmd, err := anypb.New(&pb.CommandStatementIngest{Table: "events", TableDefinitionOptions: appendMode})
	if err != nil {
		return 0, err
	}
	raw, err := proto.Marshal(cmd)
	if err != nil {
		return 0, err
	}
	stream, err := cl.Client.DoPut(ctx)
	if err != nil {
		return 0, err
	}
	w := flight.NewRecordWriter(stream, ipc.WithSchema(schema))
	w.SetFlightDescriptor(&flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: raw})
	for _, b := range batches {
		if err := w.Write(b); err != nil {
			return 0, err
		}
	}
	if err := w.Close(); err != nil { // writes the end-of-stream marker
		return 0, err
	}
	if err := stream.CloseSend(); err != nil {
		return 0, err
	}
	res, err := stream.Recv()
	if err != nil {
		return 0, err
	}
	var upd pb.DoPutUpdateResult
	if err := proto.Unmarshal(res.GetAppMetadata(), &upd); err != nil {
		return 0, err
	}
	if _, err := stream.Recv(); err != nil && !strings.Contains(err.Error(), "EOF") {
		return upd.RecordCount, err
	}
	return upd.RecordCount, nil
}

// readEvents reads every row of the events table back through a query per channel, keyed by
// id, with its channel, time and value.
func readEvents(t *testing.T, cl *flightsql.Client, now time.Time) map[string]event {
	t.Helper()
	out := map[string]event{}
	for _, ch := range ingestChannels {
		res := mustRun(t, cl, fmt.Sprintf("SELECT timestamp, id, value FROM events WHERE channel = '%s' AND timestamp >= TIMESTAMPTZ '%s' AND timestamp < TIMESTAMPTZ '%s'",
			ch, now.Add(-72*time.Hour).Format(time.RFC3339), now.Add(24*time.Hour).Format(time.RFC3339)))
		for _, rec := range res.recs {
			tsCol, ids, vals := rec.Column(0).(*array.Timestamp), rec.Column(1).(*array.String), rec.Column(2).(*array.Binary)
			for i := range int(rec.NumRows()) {
				note := string(vals.Value(i)) // the stored value, compared with want below
				out[ids.Value(i)] = event{channel: ch, id: ids.Value(i), at: tsCol.Value(i).ToTime(arrow.Nanosecond).UTC(), note: &note}
			}
		}
	}
	return out
}

// sameEvents requires got (readEvents) to hold exactly want, value for value.
func sameEvents(t *testing.T, what string, got map[string]event, want []event) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d rows read back, want %d", what, len(got), len(want))
	}
	for _, e := range want {
		g, ok := got[e.id]
		if !ok || g.channel != e.channel || !g.at.Equal(e.at) || *g.note != e.want() {
			t.Fatalf("%s: row %s read back as %+v (value %s), want channel %s at %s value %s", what, e.id, g, deref(g.note), e.channel, e.at, e.want())
		}
	}
}

func deref(s *string) string {
	if s == nil {
		return "<none>"
	}
	return *s
}

func wantCode(t *testing.T, what string, err error, code codes.Code, text string) {
	t.Helper()
	if status.Code(err) != code || !strings.Contains(status.Convert(err).Message(), text) {
		t.Fatalf("%s: got %v, want %s containing %q", what, err, code, text)
	}
}

// TestIngest runs Flight SQL bulk ingest (CommandStatementIngest) against the assembled server
// over PostgreSQL and over SQLite with arrow-go's client: wide and narrow rows, with and
// without the IPC end-of-stream marker, are stored with an exact count and read back equal
// through queries; empty ingests (no message at all, or a schema alone) store nothing and count 0;
// a bad row in the middle, a duplicate and a client cancelling mid-stream
// each leave the table exactly as before; the ADBC modes that would define a table and the
// options the server does not carry out are refused naming themselves; GetSqlInfo reports
// bulk ingestion on and ingest transactions off.
func TestIngest(t *testing.T) {
	for _, store := range []string{"postgres", "sqlite"} {
		t.Run(store, func(t *testing.T) { testIngest(t, dial(t, eventsServer(t, store))) })
	}
}

// eventsServer starts the assembled server serving eventsTable over a new, migrated store:
// "postgres" (a database of the throwaway cluster) or "sqlite" (a file in a temporary
// directory).
func eventsServer(t *testing.T, store string) *server.Server {
	t.Helper()
	var hot routing.HotStore
	if store == "postgres" {
		st, _ := pgtest.Start(t).NewStore(t)
		hot = st
	} else {
		st, err := sqlite.Open(context.Background(), sqlite.Config{Path: filepath.Join(t.TempDir(), "hot.db")})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		if err := st.Migrate(context.Background()); err != nil {
			t.Fatal(err)
		}
		hot = st
	}
	srv, err := server.Start(context.Background(), server.Config{Listen: "127.0.0.1:0", Tables: []routing.TableDef{eventsTable}, Hot: hot, Pushdown: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return srv
}

func testIngest(t *testing.T, cl *flightsql.Client) {
	ctx := context.Background()
	now := time.Now().UTC()
	rng := rand.New(rand.NewPCG(21, uint64(now.UnixNano())))
	var stored []event

	// Wide rows without the end-of-stream marker, in uneven batches.
	first := makeEvents(rng, 5000, "w", now)
	n, err := ingest(ctx, cl, wideSchema, eventBatches(first, 777, false, -1), nil)
	if err != nil || n != int64(len(first)) {
		t.Fatalf("wide ingest = %d, %v; want %d", n, err, len(first))
	}
	stored = append(stored, first...)
	sameEvents(t, "after the wide ingest", readEvents(t, cl, now), stored)

	// Narrow rows with the marker, in one batch of single rows and one big batch.
	second := makeEvents(rng, 3000, "n", now)
	batches := append(eventBatches(second[:3], 1, true, -1), eventBatches(second[3:], 4096, true, -1)...)
	if n, err = ingestWithEOS(ctx, cl, narrowSchema, batches); err != nil || n != int64(len(second)) {
		t.Fatalf("narrow ingest = %d, %v; want %d", n, err, len(second))
	}
	stored = append(stored, second...)
	sameEvents(t, "after the narrow ingest", readEvents(t, cl, now), stored)

	// Empty ingests store nothing and count 0: arrow-go's ExecuteIngest sends no message for a
	// reader without batches; the others send the schema and the end-of-stream marker.
	if n, err := ingest(ctx, cl, wideSchema, nil, nil); n != 0 || err != nil {
		t.Fatalf("empty ingest = %d, %v; want 0, nil", n, err)
	}
	if n, err := ingestWithEOS(ctx, cl, narrowSchema, nil); n != 0 || err != nil {
		t.Fatalf("empty ingest with the end-of-stream marker = %d, %v; want 0, nil", n, err)
	}
	sameEvents(t, "after the empty ingests", readEvents(t, cl, now), stored)

	// Refused requests: each stores nothing.
	bad := makeEvents(rng, 4000, "x", now)
	_, err = ingest(ctx, cl, wideSchema, eventBatches(bad, 500, false, 2100), nil)
	wantCode(t, "a null timestamp in the middle", err, codes.InvalidArgument, "row 2100")
	late := slices.Clone(bad)
	late[3001].at = now.Add(72 * time.Hour).Truncate(time.Microsecond)
	_, err = ingest(ctx, cl, wideSchema, eventBatches(late, 500, false, -1), nil)
	wantCode(t, "a row in a future bucket", err, codes.InvalidArgument, "writable window")
	dup := append(slices.Clone(bad), first[1234])
	_, err = ingest(ctx, cl, wideSchema, eventBatches(dup, 500, false, -1), nil)
	wantCode(t, "a stored row sent again", err, codes.AlreadyExists, "row 4000 of the request (counted from 0) has the partition, timestamp and id of a row already stored")
	_, err = ingest(ctx, cl, wideSchema, eventBatches(append(slices.Clone(bad), bad[0]), 500, false, -1), nil)
	wantCode(t, "a row repeated in the request", err, codes.AlreadyExists, "row 4000 of the request")
	// A narrow row whose value is not JSON (the table's values are: JSONValues).
	notJSON := eventBatches(bad[:1000], 300, true, -1)
	b := array.NewRecordBuilder(memory.DefaultAllocator, narrowSchema)
	b.Field(0).(*array.StringBuilder).Append(bad[1000].channel)
	b.Field(1).(*array.TimestampBuilder).Append(arrow.Timestamp(bad[1000].at.UnixNano()))
	b.Field(2).(*array.StringBuilder).Append(bad[1000].id)
	b.Field(3).(*array.BinaryBuilder).Append([]byte("secret-not-json{"))
	notJSON = append(notJSON, b.NewRecordBatch())
	b.Release()
	_, err = ingest(ctx, cl, narrowSchema, notJSON, nil)
	wantCode(t, "a value that is not JSON", err, codes.InvalidArgument, "record 1000's value is not JSON")
	if strings.Contains(status.Convert(err).Message(), "secret") {
		t.Fatalf("the refusal quotes the value: %v", err)
	}
	if s := sqlstateOf(err); s != "22P02" {
		t.Errorf("a value that is not JSON: SQLSTATE %q, want PostgreSQL's 22P02 of a json column", s)
	}
	sameEvents(t, "after the refused requests", readEvents(t, cl, now), stored)

	// A client cancelling mid-stream.
	cctx, cancel := context.WithCancel(ctx)
	rdr := newBatchReader(wideSchema, eventBatches(bad, 200, false, -1))
	rdr.onNext = func(i int) {
		if i == 10 {
			cancel()
			time.Sleep(50 * time.Millisecond)
		}
	}
	_, err = cl.ExecuteIngest(cctx, rdr, &flightsql.ExecuteIngestOpts{Table: "events", TableDefinitionOptions: appendMode})
	cancel()
	if err == nil {
		t.Fatal("a cancelled ingest succeeded")
	}
	// The server's side of the cancelled request ends asynchronously; the table must never
	// show any of its rows.
	for range 5 {
		time.Sleep(100 * time.Millisecond)
		sameEvents(t, "after a cancelled ingest", readEvents(t, cl, now), stored)
	}

	// Modes and options.
	one := eventBatches(makeEvents(rng, 1, "o", now), 1, false, -1)
	mode := func(ifNot flightsql.TableDefinitionOptionsTableNotExistOption, ifExists flightsql.TableDefinitionOptionsTableExistsOption) *flightsql.TableDefinitionOptions {
		return &flightsql.TableDefinitionOptions{IfNotExist: ifNot, IfExists: ifExists}
	}
	for _, tc := range []struct {
		name string
		opts *flightsql.ExecuteIngestOpts
		code codes.Code
		text string
	}{
		{"create", &flightsql.ExecuteIngestOpts{Table: "events", TableDefinitionOptions: mode(flightsql.TableDefinitionOptionsTableNotExistOptionCreate, flightsql.TableDefinitionOptionsTableExistsOptionFail)}, codes.InvalidArgument, "--table"},
		{"replace", &flightsql.ExecuteIngestOpts{Table: "events", TableDefinitionOptions: mode(flightsql.TableDefinitionOptionsTableNotExistOptionCreate, flightsql.TableDefinitionOptionsTableExistsOptionReplace)}, codes.InvalidArgument, "--table"},
		{"create_append of an unknown table", &flightsql.ExecuteIngestOpts{Table: "nope", TableDefinitionOptions: mode(flightsql.TableDefinitionOptionsTableNotExistOptionCreate, flightsql.TableDefinitionOptionsTableExistsOptionAppend)}, codes.InvalidArgument, "--table"},
		{"append to an unknown table", &flightsql.ExecuteIngestOpts{Table: "nope", TableDefinitionOptions: appendMode}, codes.NotFound, "not served"},
		{"temporary", &flightsql.ExecuteIngestOpts{Table: "events", TableDefinitionOptions: appendMode, Temporary: true}, codes.InvalidArgument, "temporary"},
		{"transaction", &flightsql.ExecuteIngestOpts{Table: "events", TableDefinitionOptions: appendMode, TransactionId: []byte("tx")}, codes.InvalidArgument, "transaction_id"},
		{"unknown option", &flightsql.ExecuteIngestOpts{Table: "events", TableDefinitionOptions: appendMode, Options: map[string]string{"compact": "yes"}}, codes.InvalidArgument, `"compact"`},
	} {
		_, err := ingest(ctx, cl, wideSchema, one, tc.opts)
		wantCode(t, tc.name, err, tc.code, tc.text)
	}
	// create_append and default-valued options into the served table append.
	extra := makeEvents(rng, 10, "c", now)
	n, err = ingest(ctx, cl, wideSchema, eventBatches(extra, 4, false, -1), &flightsql.ExecuteIngestOpts{Table: "EVENTS", Schema: proto.String("public"),
		TableDefinitionOptions: mode(flightsql.TableDefinitionOptionsTableNotExistOptionCreate, flightsql.TableDefinitionOptionsTableExistsOptionAppend)})
	if err != nil || n != int64(len(extra)) {
		t.Fatalf("create_append = %d, %v", n, err)
	}
	stored = append(stored, extra...)
	sameEvents(t, "after create_append", readEvents(t, cl, now), stored)

	info, err := cl.GetSqlInfo(ctx, []flightsql.SqlInfo{flightsql.SqlInfoFlightSqlServerBulkIngestion, flightsql.SqlInfoFlightSqlServerIngestTransactionsSupported})
	if err != nil {
		t.Fatal(err)
	}
	res, err := fetch(ctx, cl, info)
	if err != nil {
		t.Fatal(err)
	}
	defer res.release()
	got := map[uint32]any{}
	for _, rec := range res.recs {
		vals := rec.Column(1).(*array.DenseUnion)
		for i := range int(rec.NumRows()) {
			got[rec.Column(0).(*array.Uint32).Value(i)] = vals.Field(vals.ChildID(i)).GetOneForMarshal(int(vals.ValueOffset(i)))
		}
	}
	if got[uint32(flightsql.SqlInfoFlightSqlServerBulkIngestion)] != true || got[uint32(flightsql.SqlInfoFlightSqlServerIngestTransactionsSupported)] != false {
		t.Fatalf("GetSqlInfo bulk ingestion / ingest transactions = %v", got)
	}
}
