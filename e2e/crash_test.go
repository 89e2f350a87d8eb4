package e2e

import (
	"context"
	_ "embed"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/flightsrv/flightsrv/internal/testproc"
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

	// The process still serves: the same connection and a new one.
	rep.proc.Alive(t)
	sql := countSQL("ORD", from, to)
	for name, cl := range map[string]*flightsql.Client{"the same connection": first, "a second connection": dialAddr(t, rep.addr, 0)} {
		if got := scalarCount(t, mustRun(t, cl, sql)); got != want {
			t.Errorf("on %s, %s answered %d, want %d", name, sql, got, want)
		}
	}
}
