package e2e

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"google.golang.org/grpc/metadata"

	"github.com/flightsrv/flightsrv/internal/testsupport/otlprecv"
	"github.com/flightsrv/flightsrv/internal/testsupport/testproc"
)

// TestOneTracePerQueryOverOTLP (issue 20): two `flightsrv serve` replicas export their spans
// and metrics over OTLP to a real receiver (otlprecv: the collector's gRPC services and its
// HTTP/protobuf endpoints), the first configured by the flags (--otlp-endpoint, --otlp-protocol
// grpc, overriding the variables), the second by the standard OTEL_EXPORTER_OTLP_* variables
// alone (http/protobuf). A client's GetFlightInfo carries a W3C traceparent; the query's four
// endpoints are fetched from both replicas without one. Every span of the query — the
// GetFlightInfo on the first replica and each DoGet on either — is in the client's trace:
// the GetFlightInfo's parent is the client's span, each DoGet's the GetFlightInfo's (its
// ticket carried the context), all with the same query id, the DoGets' read statistics
// adding up to the rows returned, and no attribute holding the partition value. Both
// replicas push metrics, each over its own transport.
func TestOneTracePerQueryOverOTLP(t *testing.T) {
	if testing.Short() {
		t.Skip("starts server processes")
	}
	recv := otlprecv.Start(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", recv.HTTPURL)
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "100")
	t.Setenv("OTEL_METRIC_EXPORT_INTERVAL", "300")
	e := newEnv(t)
	reps := startReplicasEach(t, e, testproc.BuildFlightsrv(t), testproc.WriteKeyring(t, "e2e-otlp"), 2, func(i int) []string {
		if i == 0 {
			return []string{"--otlp-endpoint", "http://" + recv.GRPCAddr, "--otlp-protocol", "grpc"}
		}
		return nil
	}, "--multi-endpoint", "--endpoint-buckets", "2")
	transport := map[string]string{reps[0].addr: otlprecv.GRPC, reps[1].addr: otlprecv.HTTP}

	const traceID, clientSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	ctx := metadata.AppendToOutgoingContext(context.Background(), "traceparent", "00-"+traceID+"-"+clientSpan+"-01")
	cls := []*flightsql.Client{dialAddr(t, reps[0].addr, 0), dialAddr(t, reps[1].addr, 0)}
	info, err := cls[0].Execute(ctx, ordScan)
	if err != nil {
		t.Fatal(err)
	}
	if len(info.Endpoint) != 4 {
		t.Fatalf("%d endpoints, want 4", len(info.Endpoint))
	}
	rows := 0
	for i, ep := range info.Endpoint {
		res, err := fetchEndpoint(context.Background(), cls[i%2], info, ep)
		if err != nil {
			t.Fatalf("endpoint %d: %v", i, err)
		}
		rows += len(rowsOf(t, res, "ORD"))
		res.release()
	}
	if want := len(expected(e.sample, "ORD", ts("2001-01-01T00:00:00Z"), ts("2001-07-01T00:00:00Z"))); rows != want {
		t.Fatalf("%d rows, the sample has %d", rows, want)
	}

	// Spans are batched every 100 ms, metrics pushed every 300 ms.
	var query []otlprecv.Span
	deadline := time.Now().Add(30 * time.Second)
	for {
		query = query[:0]
		for _, s := range recv.Spans() {
			if s.TraceID == traceID && (s.Name == "arrow.flight.protocol.FlightService/GetFlightInfo" || s.Name == "arrow.flight.protocol.FlightService/DoGet") {
				query = append(query, s)
			}
		}
		if len(query) >= 5 || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	var planning *otlprecv.Span
	var doGets []otlprecv.Span
	for i, s := range query {
		if s.Name == "arrow.flight.protocol.FlightService/GetFlightInfo" {
			planning = &query[i]
		} else {
			doGets = append(doGets, s)
		}
	}
	if planning == nil || len(doGets) != 4 {
		t.Fatalf("the client's trace holds %d spans (GetFlightInfo %v, %d DoGets), want the GetFlightInfo and 4 DoGets; all spans received: %d\n%s\n%s",
			len(query), planning != nil, len(doGets), len(recv.Spans()), reps[0].proc.Output(), reps[1].proc.Output())
	}
	if planning.ParentSpanID != clientSpan || planning.Instance != reps[0].addr || planning.Transport != otlprecv.GRPC {
		t.Errorf("GetFlightInfo span: parent %s (want the client's %s), instance %s over %s", planning.ParentSpanID, clientSpan, planning.Instance, planning.Transport)
	}
	id := planning.Attrs["flightsrv.query.id"]
	var instances []string
	spanRows := 0
	for _, s := range doGets {
		if s.ParentSpanID != planning.SpanID {
			t.Errorf("DoGet span on %s: parent %s, want the GetFlightInfo span %s", s.Instance, s.ParentSpanID, planning.SpanID)
		}
		if s.Transport != transport[s.Instance] {
			t.Errorf("DoGet span of %s arrived over %s, want %s", s.Instance, s.Transport, transport[s.Instance])
		}
		if s.Attrs["flightsrv.query.id"] != id || id == "" {
			t.Errorf("DoGet span query id %q, the GetFlightInfo's %q", s.Attrs["flightsrv.query.id"], id)
		}
		n, _ := strconv.Atoi(s.Attrs["pulpitum.query.rows_returned"])
		spanRows += n
		hot, _ := strconv.Atoi(s.Attrs["flightsrv.read.hot_statements"])
		objects, _ := strconv.Atoi(s.Attrs["flightsrv.read.objects"])
		if hot+objects == 0 {
			t.Errorf("DoGet span on %s records no read (hot_statements %d, objects %d)", s.Instance, hot, objects)
		}
		instances = append(instances, s.Instance)
	}
	if spanRows != rows {
		t.Errorf("the DoGet spans count %d rows, the client got %d", spanRows, rows)
	}
	slices.Sort(instances)
	if !slices.Contains(instances, reps[0].addr) || !slices.Contains(instances, reps[1].addr) {
		t.Errorf("DoGet spans from %v, want both replicas", instances)
	}
	checkFragmentSpans(t, recv, traceID, doGets, rows)
	for _, s := range recv.Spans() {
		for k, v := range s.Attrs {
			if partitionWord.MatchString(v) {
				t.Errorf("span %q attribute %s carries the partition value", s.Name, k)
			}
		}
	}

	// Metrics: each replica pushes flightsrv.rpc.calls over its transport.
	for {
		pushed := map[string]bool{}
		for _, m := range recv.Metrics() {
			if m.Name == "flightsrv.rpc.calls" && m.Transport == transport[m.Instance] {
				pushed[m.Instance] = true
			}
		}
		if len(pushed) == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("flightsrv.rpc.calls pushed by %v, want both replicas", pushed)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// checkFragmentSpans checks the bucket fragments' spans of the query (issue 20): one span
// per bucket of ORD's January to June, each under one of the query's DoGet spans, its tier as
// the fixture archived the bucket (before the cutoff, April left archiving), their rows
// adding up to the rows the client got (the scan filters nothing after the bucket read); a
// hot bucket's span is flightsrv.fragment, an archived bucket's is its archive read's
// (pulpitum.archive.read, the name Pulpitum's dashboards know, docs/pulpitum-v4.md §6.1) with
// the bytes it read, and the Parquet ones the row groups read, with no archive read span
// beside or under it.
func checkFragmentSpans(t *testing.T, recv *otlprecv.Receiver, traceID string, doGets []otlprecv.Span, rows int) {
	t.Helper()
	wantHot, wantArchive := ordTiers()
	var frags []otlprecv.Span
	byID := map[string]otlprecv.Span{}
	reads := 0
	deadline := time.Now().Add(10 * time.Second)
	for {
		frags, reads = frags[:0], 0
		for _, s := range recv.Spans() {
			if s.TraceID != traceID {
				continue
			}
			byID[s.SpanID] = s
			if s.Attrs["flightsrv.fragment.tier"] != "" {
				frags = append(frags, s)
			}
			if s.Name == "pulpitum.archive.read" {
				reads++
			}
		}
		if len(frags) >= wantHot+wantArchive || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if reads != wantArchive {
		t.Errorf("%d archive read spans, want one per archived bucket (%d)", reads, wantArchive)
	}
	isDoGet := map[string]bool{}
	for _, d := range doGets {
		isDoGet[d.SpanID] = true
	}
	tiers := map[string]int{}
	fragRows, parquet := 0, 0
	for _, f := range frags {
		under := false
		for p := f.ParentSpanID; p != "" && !under; p = byID[p].ParentSpanID {
			under = isDoGet[p]
			if _, ok := byID[p]; !ok {
				break
			}
		}
		if !under {
			t.Errorf("fragment span %s is not under a DoGet span of the query", f.SpanID)
		}
		tier := f.Attrs["flightsrv.fragment.tier"]
		tiers[tier]++
		n, _ := strconv.Atoi(f.Attrs["flightsrv.fragment.rows"])
		fragRows += n
		want := map[string]string{"hot": "flightsrv.fragment", "archive": "pulpitum.archive.read"}[tier]
		if f.Name != want {
			t.Errorf("fragment span %s of tier %q is named %q, want %q", f.SpanID, tier, f.Name, want)
		}
		if tier != "archive" {
			continue
		}
		if b, _ := strconv.Atoi(f.Attrs["pulpitum.archive.bytes_read"]); b <= 0 {
			t.Errorf("archive read of fragment %s: bytes_read %q", f.SpanID, f.Attrs["pulpitum.archive.bytes_read"])
		}
		if g, _ := strconv.Atoi(f.Attrs["flightsrv.read.row_groups"]); g > 0 {
			parquet++
		}
	}
	if tiers["hot"] != wantHot || tiers["archive"] != wantArchive || len(frags) != wantHot+wantArchive {
		t.Errorf("fragment spans %d by tier %v, want %d hot and %d archive", len(frags), tiers, wantHot, wantArchive)
	}
	if fragRows != rows {
		t.Errorf("fragment spans count %d rows, the client got %d", fragRows, rows)
	}
	// February and March are Parquet (January JSON: e2e/fixture_test.go).
	if parquet < 2 {
		t.Errorf("%d archive read spans carry the row groups read, want the 2 Parquet buckets'", parquet)
	}
}
