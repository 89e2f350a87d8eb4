package e2e

import (
	"context"
	_ "embed"
	"encoding/base64"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	pb "github.com/apache/arrow-go/v18/arrow/flight/gen/flight"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	internalflightsql "github.com/flightsrv/flightsrv/flightsql"
	"github.com/flightsrv/flightsrv/internal/testsupport/testproc"
)

// dataFusionCountPlan is DataFusion 55's Substrait plan (base64) for
//
//	SELECT count(*) FROM flights WHERE origin = 'ORD'
//	  AND timestamp >= '2001-04-01' AND timestamp < '2001-05-01'
//
// with its function extension declarations completed (URNs declared): the plan that took the
// whole server process down with a nil-pointer panic through CreatePreparedSubstraitPlan
// (issue 16).
//
//go:embed testdata/datafusion-count.b64
var dataFusionCountPlan string

// TestCrashReproducersKeepServing sends the plans that once took the server down to a
// running `flightsrv serve` process, through both Substrait paths (CommandStatementSubstraitPlan
// and CreatePreparedSubstraitPlan), then runs an ordinary query on the same connection and on
// a second one: the process must still be serving, and each plan must answer the SQL
// statement it was produced from (or be refused with a status code, never kill the process).
// Every crasher fuzzing found in the client plan and DoPut parameter decoders (the committed
// corpora of substrait's FuzzSubstraitPlan and flightsql's FuzzParameterBatch, among them the
// 650-byte DoPut that had the process allocate 289 GB) goes to the same process first.
func TestCrashReproducersKeepServing(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server process")
	}
	e := newEnv(t)
	bin := testproc.BuildFlightsrv(t)
	rep := startReplicas(t, e, bin, testproc.WriteKeyring(t, "e2e-crash"), 1)[0]
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	first := dialAddr(t, rep.addr, 0)

	plan, err := base64.StdEncoding.DecodeString(strings.TrimSpace(dataFusionCountPlan))
	if err != nil {
		t.Fatal(err)
	}
	from, to := ts("2001-04-01T00:00:00Z"), ts("2001-05-01T00:00:00Z")
	want := int64(len(expected(e.sample, "ORD", from, to)))
	if want == 0 {
		t.Fatal("the sample has no ORD flights in April 2001")
	}
	sp := flightsql.SubstraitPlan{Plan: plan, Version: "0.85.0"}

	// The statement path.
	info, err := first.ExecuteSubstrait(ctx, sp)
	if err != nil {
		t.Fatalf("ExecuteSubstrait of DataFusion's COUNT(*) plan: %v", err)
	}
	res, err := fetch(ctx, first, info)
	if err != nil {
		t.Fatalf("DoGet of DataFusion's COUNT(*) plan: %v", err)
	}
	if got := scalarCount(t, res); got != want {
		t.Errorf("DataFusion's COUNT(*) plan answered %d, the sample has %d", got, want)
	}
	res.release()

	// The prepared path (the one that panicked).
	prep, err := first.PrepareSubstrait(ctx, sp)
	if err != nil {
		t.Fatalf("CreatePreparedSubstraitPlan of DataFusion's COUNT(*) plan: %v", err)
	}
	info, err = prep.Execute(ctx)
	if err != nil {
		t.Fatalf("executing the prepared plan: %v", err)
	}
	res, err = fetch(ctx, first, info)
	if err != nil {
		t.Fatalf("DoGet of the prepared plan: %v", err)
	}
	if got := scalarCount(t, res); got != want {
		t.Errorf("the prepared plan answered %d, the sample has %d", got, want)
	}
	res.release()
	if err := prep.Close(ctx); err != nil {
		t.Errorf("closing the prepared plan: %v", err)
	}

	// Bytes that are no plan at all are refused with a reason, on the same connection.
	_, err = first.ExecuteSubstrait(ctx, flightsql.SubstraitPlan{Plan: plan[:len(plan)/2]})
	if c := status.Code(err); c != codes.InvalidArgument {
		t.Errorf("a truncated plan: %v, want InvalidArgument", err)
	}

	// Every crasher fuzzing found in the decoders of client plans and DoPut parameter streams
	// (their corpora's committed inputs): each is refused with a status (or answered), never
	// taking the process down.
	for _, raw := range fuzzCorpus(t, "../substrait/testdata/fuzz/FuzzSubstraitPlan") {
		if info, err := first.ExecuteSubstrait(ctx, flightsql.SubstraitPlan{Plan: raw}); err == nil {
			if res, err := fetch(ctx, first, info); err == nil {
				res.release()
			}
		} else if c := status.Code(err); c == codes.Unknown || c == codes.Internal {
			t.Errorf("a fuzzing crasher plan: %v", err)
		}
		rep.proc.Alive(t)
	}
	prepared, err := first.Prepare(ctx, "SELECT count(*) FROM flights WHERE origin = ? AND timestamp >= ? AND timestamp < ?")
	if err != nil {
		t.Fatal(err)
	}
	defer prepared.Close(ctx)
	anyCmd, err := anypb.New(&pb.CommandPreparedStatementQuery{PreparedStatementHandle: prepared.Handle()})
	if err != nil {
		t.Fatal(err)
	}
	cmd, err := proto.Marshal(anyCmd)
	if err != nil {
		t.Fatal(err)
	}
	puts := fuzzCorpus(t, "../flightsql/testdata/fuzz/FuzzParameterBatch")
	if len(puts) < 3 {
		t.Fatalf("%d DoPut crashers", len(puts))
	}
	for _, raw := range puts {
		msgs, ok := internalflightsql.SplitIPCStream(raw, &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: cmd})
		if !ok {
			continue
		}
		stream, err := first.Client.DoPut(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs {
			if stream.Send(m) != nil {
				break // the server ended the call
			}
		}
		_ = stream.CloseSend()
		if _, err := stream.Recv(); status.Code(err) != codes.InvalidArgument {
			t.Errorf("a fuzzing crasher DoPut: %v, want INVALID_ARGUMENT", err)
		}
		rep.proc.Alive(t)
	}

	// The process still serves: the same connection and a new one.
	rep.proc.Alive(t)
	sql := countSQL("ORD", from, to)
	for name, cl := range map[string]*flightsql.Client{"the same connection": first, "a second connection": dialAddr(t, rep.addr, 0)} {
		if got := scalarCount(t, mustRun(t, cl, sql)); got != want {
			t.Errorf("on %s, %s answered %d, want %d", name, sql, got, want)
		}
	}
}

// fuzzCorpus returns the []byte inputs of the Go fuzz corpus files in dir (Go's "go test fuzz
// v1" encoding, one []byte value each).
func fuzzCorpus(t *testing.T, dir string) [][]byte {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*"))
	if err != nil || len(files) == 0 {
		t.Fatalf("fuzz corpus %s: %v (%d files)", dir, err, len(files))
	}
	var out [][]byte
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(data), "\n")
		if len(lines) < 2 || lines[0] != "go test fuzz v1" || !strings.HasPrefix(lines[1], "[]byte(") {
			t.Fatalf("%s is no []byte corpus entry", f)
		}
		raw, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(lines[1], "[]byte("), ")"))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out = append(out, []byte(raw))
	}
	return out
}
