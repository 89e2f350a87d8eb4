package flightsql

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/flightsrv/flightsrv/query"
)

// fetchText runs sql, whose result is one text column, with arrow-go's Flight SQL client and
// returns its values, and the error that ended the stream.
func fetchText(t *testing.T, cl *flightsql.Client, sql string) ([]string, error) {
	t.Helper()
	ctx := context.Background()
	info, err := cl.Execute(ctx, sql)
	if err != nil {
		return nil, err
	}
	rdr, err := cl.DoGet(ctx, info.Endpoint[0].Ticket)
	if err != nil {
		return nil, err
	}
	defer rdr.Release()
	var out []string
	for rdr.Next() {
		col := rdr.RecordBatch().Column(0).(*array.String)
		for i := range col.Len() {
			out = append(out, col.Value(i))
		}
	}
	return out, rdr.Err()
}

// TestLargeResultsReachClients, with arrow-go's Flight SQL client over gRPC and the engine:
//   - 10,000 rows of 10,000 bytes (100 MB) reach a client with grpc-go's default receive
//     limit of 4 MiB: the executor's batches, hence the messages, stay under it;
//   - repeat('x', 100000000), one row of 100 MB (PostgreSQL answers it), reaches a client that
//     accepts messages of 256 MiB, equal to the text; a client with the default limit gets its
//     library's RESOURCE_EXHAUSTED naming the message's size and the limit, not INTERNAL;
//   - a message past what the server may send (maxMessageBytes, lowered here) is refused with
//     RESOURCE_EXHAUSTED and SQLSTATE 54000, naming its size and the limit.
func TestLargeResultsReachClients(t *testing.T) {
	eng, err := query.New(nil, query.Options{})
	if err != nil {
		t.Fatal(err)
	}
	addr, _ := serveAt(t, eng, Config{})
	small := dialFake(t, addr)
	large := dialFake(t, addr, grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(256<<20)))

	vals, err := fetchText(t, small, "SELECT repeat('x', 9995) || lpad(i::text, 5, '0') FROM generate_series(1, 10000) AS g(i)")
	if err != nil || len(vals) != 10000 {
		t.Fatalf("10,000 rows of 10 KB: %d rows, %v", len(vals), err)
	}
	for i, v := range vals {
		if want := fmt.Sprintf("%s%05d", strings.Repeat("x", 9995), i+1); v != want {
			t.Fatalf("row %d: %d bytes ending %q", i, len(v), v[len(v)-5:])
		}
	}

	const big = "SELECT repeat('x', 100000000)"
	vals, err = fetchText(t, large, big)
	if err != nil || len(vals) != 1 || len(vals[0]) != 100_000_000 || strings.Trim(vals[0], "x") != "" {
		t.Fatalf("a 100 MB row to a client accepting 256 MiB: %d rows, %v", len(vals), err)
	}
	vals = nil
	_, err = fetchText(t, small, big)
	if st := status.Convert(err); st.Code() != codes.ResourceExhausted || !strings.Contains(st.Message(), "4194304") {
		t.Fatalf("a 100 MB row to a client accepting 4 MiB: %v, want its RESOURCE_EXHAUSTED naming its limit", err)
	}

	defer func(old int) { maxMessageBytes = old }(maxMessageBytes)
	maxMessageBytes = 50 << 20
	_, err = fetchText(t, large, big)
	st := status.Convert(err)
	if st.Code() != codes.ResourceExhausted || !strings.Contains(st.Message(), "a result message of 1000") || !strings.Contains(st.Message(), "52428800 bytes") {
		t.Fatalf("a message past the server's limit: %v", err)
	}
	if sqlstate := refusalSQLState(st); sqlstate != "54000" {
		t.Fatalf("a message past the server's limit: SQLSTATE %q, want 54000", sqlstate)
	}
}
