package e2e

import (
	"context"
	"math"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/flightsrv/flightsrv/internal/querylog"
	"github.com/flightsrv/flightsrv/internal/testsupport/testproc"
)

// scrape reads a replica's Prometheus endpoint into its metric families by name.
func scrape(t *testing.T, metricsAddr string) map[string]*dto.MetricFamily {
	t.Helper()
	res, err := http.Get("http://" + metricsAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return fams
}

// series returns the metrics of family name whose labels include every pair of labels.
func series(fams map[string]*dto.MetricFamily, name string, labels ...string) []*dto.Metric {
	var out []*dto.Metric
	f := fams[name]
	if f == nil {
		return nil
	}
next:
	for _, m := range f.GetMetric() {
		for i := 0; i+1 < len(labels); i += 2 {
			found := false
			for _, lp := range m.GetLabel() {
				if lp.GetName() == labels[i] && lp.GetValue() == labels[i+1] {
					found = true
				}
			}
			if !found {
				continue next
			}
		}
		out = append(out, m)
	}
	return out
}

// sum adds the values (a counter's, a gauge's, or a histogram's sample sum) of the series of
// name with labels; count adds their histogram sample counts.
func sum(fams map[string]*dto.MetricFamily, name string, labels ...string) float64 {
	var s float64
	for _, m := range series(fams, name, labels...) {
		switch {
		case m.Counter != nil:
			s += m.GetCounter().GetValue()
		case m.Gauge != nil:
			s += m.GetGauge().GetValue()
		case m.Histogram != nil:
			s += m.GetHistogram().GetSampleSum()
		}
	}
	return s
}

func count(fams map[string]*dto.MetricFamily, name string, labels ...string) uint64 {
	var n uint64
	for _, m := range series(fams, name, labels...) {
		n += m.GetHistogram().GetSampleCount()
	}
	return n
}

// TestMetricsOfEveryQuery (issue 20): one `flightsrv serve` process, real queries over
// PostgreSQL and a Parquet archive, and its /metrics read back. A single-endpoint scan of
// ORD's first half of 2001 (archived buckets and April's hot one) counts as one logical query
// in flightsrv.query.duration and .first_batch, whose values lie inside what the client
// measured around the same calls (the first batch before the whole); its rows and Flight bytes
// equal what the client received; its buckets by tier, row groups, archive bytes and objects
// are counted. A multi-endpoint query fetched from the same replica is one logical query, not
// one per endpoint; a refused one is counted with its code. The pushed-down count, the
// admission gauges and wait, the memory series (ledger, pool reuse, Go heap) are there, every
// duration histogram has the bounds of a millisecond to an hour, the resource names the
// service, and no label holds the partition value or the SQL.
func TestMetricsOfEveryQuery(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server process")
	}
	e := newEnv(t)
	bin := testproc.BuildFlightsrv(t)
	metricsAddr := testproc.FreePorts(t, 1)[0]
	reps := startReplicasEach(t, e, bin, testproc.WriteKeyring(t, "e2e-1"), 1,
		func(int) []string { return []string{"--metrics-listen", metricsAddr} }, "--endpoint-buckets", "2")
	cl := dialAddr(t, reps[0].addr, 0)
	ctx := context.Background()
	before := scrape(t, metricsAddr)

	// One single-endpoint scan, timed by the client.
	want := expected(e.sample, "ORD", ts("2001-01-01T00:00:00Z"), ts("2001-07-01T00:00:00Z"))
	t0 := time.Now()
	info, err := cl.Execute(ctx, ordScan)
	if err != nil {
		t.Fatal(err)
	}
	tInfo := time.Now()
	if len(info.Endpoint) != 1 {
		t.Fatalf("%d endpoints, want 1", len(info.Endpoint))
	}
	rdr, err := cl.DoGet(ctx, info.Endpoint[0].Ticket)
	if err != nil {
		t.Fatal(err)
	}
	var rows int64
	var tFirst, tLast time.Time
	for rdr.Next() {
		if tFirst.IsZero() {
			tFirst = time.Now()
		}
		rows += rdr.RecordBatch().NumRows()
		tLast = time.Now()
	}
	if err := rdr.Err(); err != nil {
		t.Fatal(err)
	}
	rdr.Release()
	tEnd := time.Now()
	if rows != int64(len(want)) {
		t.Fatalf("%d rows, the sample %d", rows, len(want))
	}

	// The call is counted once its handler returned, just after the client read the end.
	var after map[string]*dto.MetricFamily
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		after = scrape(t, metricsAddr)
		if count(after, "flightsrv_query_duration_seconds", "statement", "SELECT", "code", "OK") > count(before, "flightsrv_query_duration_seconds", "statement", "SELECT", "code", "OK") || time.Now().After(deadline) {
			break
		}
	}
	delta := func(name string, labels ...string) float64 {
		return sum(after, name, labels...) - sum(before, name, labels...)
	}
	deltaCount := func(name string, labels ...string) uint64 {
		return count(after, name, labels...) - count(before, name, labels...)
	}
	if n := deltaCount("flightsrv_query_duration_seconds", "statement", "SELECT", "code", "OK"); n != 1 {
		t.Fatalf("one query counted %d times in flightsrv.query.duration", n)
	}
	latency := delta("flightsrv_query_duration_seconds", "statement", "SELECT", "code", "OK")
	// From the GetFlightInfo's start to the DoGet's last byte: inside the client's span of
	// both calls, and longer than the client's wait between the FlightInfo and the last batch.
	if lo, hi := tLast.Sub(tInfo).Seconds(), tEnd.Sub(t0).Seconds(); latency < lo || latency > hi {
		t.Errorf("query latency %.4fs, want within [%.4f, %.4f]s measured by the client", latency, lo, hi)
	}
	if n := deltaCount("flightsrv_query_first_batch_seconds", "statement", "SELECT"); n != 1 {
		t.Fatalf("time to first batch counted %d times", n)
	}
	first := delta("flightsrv_query_first_batch_seconds", "statement", "SELECT")
	if hi := tFirst.Sub(t0).Seconds(); first <= 0 || first > hi || first > latency {
		t.Errorf("time to first batch %.4fs, want in (0, %.4f] and at most the latency %.4f", first, hi, latency)
	}
	// flightsrv.queries lists the DoGet with the same time to first batch, from the
	// GetFlightInfo's start.
	listed := mustRun(t, cl, "SELECT first_batch_seconds AS first, rows FROM flightsrv.queries WHERE rpc = 'DoGet' AND statement = 'SELECT' AND state = 'finished'")
	if fs, rs := column(t, listed, "first"), column(t, listed, "rows"); len(fs) != 1 || rs[0] != strconv.FormatInt(rows, 10) {
		t.Errorf("flightsrv.queries lists %v first batches with rows %v, want one of %d rows", fs, rs, rows)
	} else if f, err := strconv.ParseFloat(fs[0], 64); err != nil || math.Abs(f-first) > 1e-6 {
		t.Errorf("flightsrv.queries' first_batch_seconds %s, the histogram's %.6f", fs[0], first)
	}
	if got := delta("flightsrv_query_rows_total", "rpc", "DoGet", "statement", "SELECT"); got != float64(rows) {
		t.Errorf("rows sent %v, the client got %d", got, rows)
	}
	if got := delta("flightsrv_query_bytes_sent_total", "rpc", "DoGet"); got <= 0 {
		t.Errorf("bytes sent %v", got)
	}
	hot, archived := delta("flightsrv_query_buckets_total", "tier", "hot"), delta("flightsrv_query_buckets_total", "tier", "archive")
	// January to June, monthly buckets: those before the fixture's cutoff are archived but
	// April's, which it left archiving (read from the hot store).
	h, a := ordTiers()
	wantHot, wantArchived := float64(h), float64(a)
	if hot != wantHot || archived != wantArchived {
		t.Errorf("buckets hot %v archived %v, want %v and %v", hot, archived, wantHot, wantArchived)
	}
	if rg := delta("flightsrv_query_row_groups_total", "outcome", "read"); rg < archived {
		t.Errorf("row groups read %v for %v archived buckets", rg, archived)
	}
	if b, o := delta("flightsrv_query_read_bytes_total"), delta("flightsrv_query_read_objects_total"); b <= 0 || o < archived {
		t.Errorf("archive bytes read %v, objects %v", b, o)
	}
	if got := delta("flightsrv_rpc_calls_total", "rpc", "GetFlightInfo", "command", "CommandStatementQuery", "statement", "SELECT", "code", "OK"); got != 1 {
		t.Errorf("GetFlightInfo calls %v", got)
	}

	// A multi-endpoint query fetched here: one logical query, as many DoGets as endpoints.
	before = after
	mctx := metadata.AppendToOutgoingContext(ctx, "flightsrv.endpoints", "multiple")
	minfo, err := cl.Execute(mctx, ordScan)
	if err != nil {
		t.Fatal(err)
	}
	if len(minfo.Endpoint) < 2 {
		t.Fatalf("%d endpoints, want several", len(minfo.Endpoint))
	}
	res, err := fetch(ctx, cl, minfo)
	if err != nil {
		t.Fatal(err)
	}
	res.release()
	// A few days of February (a Parquet bucket of row groups of 256 rows): row groups and
	// pages left out by their statistics.
	pres := mustRun(t, cl, "SELECT timestamp, id FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-02-10T03:00:00Z' AND timestamp < '2001-02-12T00:00:00Z'")
	pres.release()
	// A refused query, and a pushed-down count.
	if _, err := run(ctx, cl, "SELECT id FROM flights WHERE id = 'ORD'"); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("unpinned query: %v", err)
	}
	cres := mustRun(t, cl, "SELECT COUNT(*) FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-01-01' AND timestamp < '2001-03-01'")
	cres.release()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		after = scrape(t, metricsAddr)
		if deltaCount("flightsrv_query_duration_seconds", "statement", "SELECT COUNT") > 0 || time.Now().After(deadline) {
			break
		}
	}
	if n := delta("flightsrv_rpc_calls_total", "rpc", "DoGet", "statement", "SELECT", "code", "OK"); n != float64(len(minfo.Endpoint)+1) {
		t.Errorf("%v DoGet calls counted, want %d (the endpoints and February's)", n, len(minfo.Endpoint)+1)
	}
	if n := deltaCount("flightsrv_query_duration_seconds", "code", "InvalidArgument"); n != 1 {
		t.Errorf("refused query counted %d times with its code", n)
	}
	if n := deltaCount("flightsrv_query_duration_seconds", "statement", "SELECT COUNT", "code", "OK"); n != 1 {
		t.Errorf("count query counted %d times", n)
	}
	if n := deltaCount("flightsrv_query_duration_seconds", "statement", "SELECT", "code", "OK"); n != 2 {
		t.Errorf("a %d-endpoint query and a single-endpoint one counted %d times in flightsrv.query.duration, want twice", len(minfo.Endpoint), n)
	}
	if rg, pages := delta("flightsrv_query_row_groups_total", "outcome", "pruned"), delta("flightsrv_query_pages_total"); rg < 1 || pages < 1 {
		t.Errorf("row groups pruned %v, pages read or pruned %v", rg, pages)
	}
	if n := delta("flightsrv_aggregate_pushdowns_total", "outcome", "success"); n < 1 {
		t.Errorf("pushdowns %v", n)
	}

	// Admission, memory, the Go runtime: present, with plausible values.
	for _, name := range []string{"flightsrv_admission_running", "flightsrv_admission_queued", "flightsrv_memory_ledger_bytes", "flightsrv_memory_ledger_limit_bytes", "flightsrv_memory_pool_held_bytes"} {
		if len(series(after, name)) == 0 {
			t.Errorf("no series %s", name)
		}
	}
	if got := sum(after, "flightsrv_admission_running"); got != 0 {
		t.Errorf("%v queries running after all ended", got)
	}
	if got := sum(after, "flightsrv_memory_ledger_bytes"); got != 0 {
		t.Errorf("ledgers hold %v bytes after every query ended", got)
	}
	if r, f := sum(after, "flightsrv_memory_pool_bytes_total", "source", "reused"), sum(after, "flightsrv_memory_pool_bytes_total", "source", "fresh"); f <= 0 || r <= 0 {
		t.Errorf("pool bytes reused %v fresh %v: a scan of six buckets reuses its buffers", r, f)
	}
	if got := sum(after, "go_memory_used_bytes"); got <= 0 {
		t.Errorf("Go memory used %v", got)
	}

	// Bounds, resource, labels.
	for _, name := range []string{"flightsrv_query_duration_seconds", "flightsrv_query_first_batch_seconds", "flightsrv_rpc_duration_seconds", "flightsrv_aggregate_duration_seconds"} {
		ms := series(after, name)
		if len(ms) == 0 {
			t.Errorf("no series %s", name)
			continue
		}
		var bounds []float64
		for _, b := range ms[0].GetHistogram().GetBucket() {
			if !math.IsInf(b.GetUpperBound(), 1) {
				bounds = append(bounds, b.GetUpperBound())
			}
		}
		if len(bounds) != len(querylog.DurationBuckets) || bounds[0] != querylog.DurationBuckets[0] || bounds[len(bounds)-1] != 3600 {
			t.Errorf("%s bounds %v, want %v", name, bounds, querylog.DurationBuckets)
		}
	}
	if len(series(after, "target_info", "service_name", "flightsrv")) == 0 {
		t.Error("no target_info naming service flightsrv")
	}
	for name, f := range after {
		if !strings.HasPrefix(name, "flightsrv_") {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, lp := range m.GetLabel() {
				if strings.Contains(lp.GetValue(), "ORD") || strings.Contains(strings.ToUpper(lp.GetValue()), "FROM") {
					t.Errorf("%s label %s=%q holds a client's word", name, lp.GetName(), lp.GetValue())
				}
			}
		}
	}
}

// ordTiers returns how many of ORD's monthly buckets from January to June 2001 the fixture
// left hot and archived: those before its cutoff are archived but April's, which it left
// archiving (read from the hot store).
func ordTiers() (hot, archived int) {
	for m := ts("2001-01-01T00:00:00Z"); m.Before(ts("2001-07-01T00:00:00Z")); m = m.AddDate(0, 1, 0) {
		if m.Before(cutoff) && !m.Equal(archivingAt) {
			archived++
		} else {
			hot++
		}
	}
	return hot, archived
}
