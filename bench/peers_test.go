package bench

import (
	"context"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flightsrv/flightsrv/internal/testsupport/testproc"
)

// exampleScanSQL is the scan asked of arrow-go's example SQLite server: the same rows, WHERE
// and ORDER BY. The example server maps no SQLite type to an Arrow timestamp, so the table
// keeps the timestamp as INTEGER nanoseconds since the epoch (UTC) and the bounds are written
// as such; the client reads it as int64.
func exampleScanSQL(r countRange) string {
	return fmt.Sprintf("SELECT timestamp, id, value FROM flights WHERE origin = '%s' AND timestamp >= %d AND timestamp < %d ORDER BY timestamp, id",
		airport, r.from.UnixNano(), r.to.UnixNano())
}

// exampleSchemaSQL creates the example server's table: the partition column, then the scan's
// three columns, clustered on (origin, timestamp, id) as flightsrv's stores are on
// (partition, event_time, sort_key), so the ORDER BY is a range walk of the primary key.
const exampleSchemaSQL = `CREATE TABLE flights (
	origin TEXT NOT NULL,
	timestamp INTEGER NOT NULL,
	id TEXT NOT NULL,
	value BLOB NOT NULL,
	PRIMARY KEY (origin, timestamp, id)
) WITHOUT ROWID`

// runExample starts arrow-go's example SQLite Flight SQL server (its own command, unmodified,
// in-memory database) as a child process, loads ORD's reference rows into it through its own
// Flight SQL interface, and times the same ordered scan through the same client. The rows go
// in as SQL literals (CREATE TABLE, then multi-row INSERT statements via ExecuteUpdate): the
// example's parameter binding (arrow-go v18.8.0, getParamsForStatement) releases each string
// and binary scalar before reading it, so bound ids and values would arrive empty or NULL.
func (sc *scanSuite) runExample(b *testing.B) {
	proc, addr := testproc.StartReady(b, "sqlite_flightsql_server", exampleReady, sc.bins.example, "-host", "127.0.0.1", "-port", "0")
	cl := sc.client(b, addr)
	ctx := sc.ctx
	start := time.Now()
	if _, err := cl.ExecuteUpdate(ctx, exampleSchemaSQL); err != nil {
		b.Fatalf("example server: create table: %v", err)
	}
	var loaded int64
	for _, rec := range sc.refBatches {
		for lo := 0; lo < int(rec.NumRows()); lo += exampleInsertRows {
			n, err := cl.ExecuteUpdate(ctx, exampleInsertSQL(rec, lo, min(lo+exampleInsertRows, int(rec.NumRows()))))
			if err != nil {
				b.Fatalf("example server: insert: %v", err)
			}
			loaded += n
		}
	}
	if loaded != sc.ref.rows {
		b.Fatalf("example server: inserted %d rows, want %d", loaded, sc.ref.rows)
	}
	sc.exampleLoad = time.Since(start)
	sc.bench(b, "ORD/"+peerExample, sc.ref, flightScan(cl, exampleScanSQL(fullRange)), proc)
}

// exampleInsertRows is the number of rows per INSERT statement (about 250 KB of SQL).
const exampleInsertRows = 2048

// exampleInsertSQL is one INSERT of the reference batch's rows [lo, hi): the origin, the
// timestamp as int64 nanoseconds, the id as a text literal and the value as a blob literal.
func exampleInsertSQL(rec arrow.RecordBatch, lo, hi int) string {
	ts := rec.Column(0).(*array.Timestamp)
	ids := rec.Column(1).(*array.String)
	vals := rec.Column(2).(*array.Binary)
	var sb strings.Builder
	sb.WriteString("INSERT INTO flights (origin, timestamp, id, value) VALUES ")
	for i := lo; i < hi; i++ {
		if i > lo {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, "(%s, %d, %s, X'%s')", sqlString(airport), int64(ts.Value(i)), sqlString(ids.Value(i)), hex.EncodeToString(vals.Value(i)))
	}
	return sb.String()
}

// loopbackServer is the ceiling: a Flight SQL server that answers every statement with the
// same in-memory record batches (ORD's reference rows, 8,192-row batches of timestamp[ns,
// UTC], utf8 and binary), streamed by arrow-go's StreamChunksFromReader. Only the Flight
// SQL statement calls the scan makes are implemented.
type loopbackServer struct {
	flightsql.BaseServer
	batches []arrow.RecordBatch
	rows    int64
}

func (l *loopbackServer) GetFlightInfoStatement(_ context.Context, _ flightsql.StatementQuery, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	tkt, err := flightsql.CreateStatementQueryTicket([]byte("scan"))
	if err != nil {
		return nil, err
	}
	return &flight.FlightInfo{
		Endpoint:         []*flight.FlightEndpoint{{Ticket: &flight.Ticket{Ticket: tkt}}},
		FlightDescriptor: desc,
		Schema:           flight.SerializeSchema(scanSchema, memory.DefaultAllocator),
		TotalRecords:     l.rows,
		TotalBytes:       -1,
	}, nil
}

func (l *loopbackServer) DoGetStatement(ctx context.Context, _ flightsql.StatementQueryTicket) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	rdr, err := array.NewRecordReader(scanSchema, l.batches)
	if err != nil {
		return nil, nil, err
	}
	ch := make(chan flight.StreamChunk)
	go flight.StreamChunksFromReader(ctx, rdr, ch)
	return scanSchema, ch, nil
}

// runLoopback serves the reference batches from the loopback server on 127.0.0.1 in this
// process and times the same client reading them: what gRPC, Arrow IPC and the client's
// touching cost without any store behind the server.
func (sc *scanSuite) runLoopback(b *testing.B) {
	ls := &loopbackServer{batches: sc.refBatches, rows: sc.ref.rows}
	ls.Alloc = memory.DefaultAllocator
	srv := flight.NewServerWithMiddleware(nil)
	srv.RegisterFlightService(flightsql.NewFlightServer(ls))
	if err := srv.Init("127.0.0.1:0"); err != nil {
		b.Fatal(err)
	}
	go func() { _ = srv.Serve() }()
	b.Cleanup(srv.Shutdown)
	sc.bench(b, "ORD/"+peerLoopback, sc.ref, flightScan(sc.client(b, srv.Addr().String()), "SELECT timestamp, id, value FROM flights"), nil)
}
