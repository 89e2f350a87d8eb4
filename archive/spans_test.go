package archive

import (
	"context"
	"encoding/hex"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/flightsrv/flightsrv/routing"
)

// TestArchiverSpans drives one bucket through every phase of the runner — a cut-over whose
// upload fails (retry_cutover), one whose hot-row deletion fails (retry_cleanup), and the
// cleanup claimed afterwards — and checks the spans of the reference's observability section
// (docs/pulpitum-v4.md §6.1, archival spans): the cycle span, a cutover and a cleanup span,
// one pulpitum.archive.coordinator.<operation> span per store or upload operation with
// pulpitum.archive.operation = <operation> and a coordinator phase of the reference's list,
// the pulpitum.archive.write span of each upload with its record count and format; failed
// operations have an error status. The metrics of the reference (§6.2) count the same
// phases: cycles by outcome, cut-overs started and completed, failures by stage, every
// phase transition, and the jobs gauge (items of the running cycle by phase). No span attribute, status or metric label holds the partition value (or
// its hex), the bucket key or an object key, and metric labels are the reference's fixed set.
func TestArchiverSpans(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const partition = "secretchannel"
	e := newArchiverEnv(t, partition)
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	w, err := NewWriter(openTestBucket(t), WriterOptions{Prefix: testPrefix, RowGroupRows: 64, TracerProvider: tp})
	if err != nil {
		t.Fatal(err)
	}
	e.writer.ArchiveWriter = w
	metrics := sdkmetric.NewManualReader()
	a := e.archiver(t, ArchiverOptions{Retry: time.Minute, TracerProvider: tp, MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(metrics))})
	eligible := routing.BucketFor("", nil, routing.CalendarDayUTC, archiverDay).Start
	injected := errors.New("injected delete failure")

	e.writer.fail.Store(true)
	if _, err := a.RunOnce(ctx, eligible); err == nil {
		t.Fatal("the failing upload was not reported")
	}
	e.writer.fail.Store(false)
	e.clk.advance(time.Minute)
	var during map[string]int64 // the metrics while the hot rows are being deleted
	e.state.deleteHot = func(context.Context, *routing.ArchiveSession) error {
		during = archiverMetricSums(t, metrics)
		return injected
	}
	if _, err := a.RunOnce(ctx, eligible); !errors.Is(err, injected) {
		t.Fatalf("second cycle: %v", err)
	}
	e.state.deleteHot = nil
	e.clk.advance(time.Minute)
	if sum, err := a.RunOnce(ctx, eligible); err != nil || sum.Cleaned != 1 {
		t.Fatalf("third cycle: %+v, %v", sum, err)
	}

	phases := map[string]bool{phaseQueued: true, phaseClaimed: true, phaseUploading: true, phaseUploadedVerified: true,
		phasePublished: true, phaseCompleted: true, phaseRetryScheduled: true, phaseFailed: true}
	bucket := e.bs[0]
	secrets := []string{partition, hex.EncodeToString([]byte(partition)), bucket.Key, hex.EncodeToString([]byte(bucket.Key)), testPrefix + "/"}
	got := map[string]int{}
	failed := map[string]int{}
	for _, s := range spans.Ended() {
		got[s.Name()]++
		if s.Status().Code.String() == "Error" {
			failed[s.Name()]++
		}
		attrs := map[string]string{}
		for _, kv := range s.Attributes() {
			v := kv.Value.Emit()
			attrs[string(kv.Key)] = v
			for _, bad := range secrets {
				if strings.Contains(v, bad) {
					t.Errorf("span %s attribute %s = %q holds %q", s.Name(), kv.Key, v, bad)
				}
			}
		}
		for _, bad := range secrets {
			if strings.Contains(s.Status().Description, bad) {
				t.Errorf("span %s status %q holds %q", s.Name(), s.Status().Description, bad)
			}
		}
		if op, ok := strings.CutPrefix(s.Name(), "pulpitum.archive.coordinator."); ok && op != "cycle" {
			if attrs["pulpitum.archive.operation"] != op || !phases[attrs["pulpitum.archive.coordinator.phase"]] {
				t.Errorf("span %s: operation %q, phase %q", s.Name(), attrs["pulpitum.archive.operation"], attrs["pulpitum.archive.coordinator.phase"])
			}
		}
		if s.Name() == "pulpitum.archive.write" && (attrs["pulpitum.archive.records"] != "150" || attrs["pulpitum.archive.format"] != "parquet") {
			t.Errorf("write span attributes %v", attrs)
		}
	}
	// Three cycles: upload fails (claim, snapshot, upload, retry_cutover); publish then the
	// delete fails (claim, snapshot, upload, publish, cleanup, retry_cleanup); the cleanup is
	// claimed and done (claim_cleanup, cleanup).
	for name, n := range map[string]int{
		"pulpitum.archive.coordinator.cycle":         3,
		"pulpitum.durable_archive.cutover":           2,
		"pulpitum.durable_archive.cleanup":           1,
		"pulpitum.archive.coordinator.claim":         2,
		"pulpitum.archive.coordinator.snapshot":      2,
		"pulpitum.archive.coordinator.upload":        2,
		"pulpitum.archive.coordinator.retry_cutover": 1,
		"pulpitum.archive.coordinator.publish":       1,
		"pulpitum.archive.coordinator.cleanup":       2,
		"pulpitum.archive.coordinator.retry_cleanup": 1,
		"pulpitum.archive.coordinator.claim_cleanup": 1,
		"pulpitum.archive.write":                     1,
	} {
		if got[name] != n {
			t.Errorf("%d %s spans, want %d (all: %v)", got[name], name, n, got)
		}
	}
	for name, n := range map[string]int{
		"pulpitum.archive.coordinator.upload": 1, "pulpitum.archive.coordinator.cleanup": 1, "pulpitum.archive.coordinator.cycle": 2,
	} {
		if failed[name] != n {
			t.Errorf("%d failed %s spans, want %d", failed[name], name, n)
		}
	}

	// The metrics of the same three cycles.
	sums := archiverMetricSums(t, metrics, secrets...)
	// The jobs gauge holds the item in its phase while it is worked on, and nothing once the
	// cycles are over.
	for name, v := range during {
		if strings.HasPrefix(name, "pulpitum.archive.coordinator.jobs/") && v != 0 && name != "pulpitum.archive.coordinator.jobs/"+phasePublished {
			t.Errorf("while deleting the hot rows: %s = %d, want 0", name, v)
		}
	}
	if n := during["pulpitum.archive.coordinator.jobs/"+phasePublished]; n != 1 {
		t.Errorf("while deleting the hot rows: %d jobs in %s, want 1 (all: %v)", n, phasePublished, during)
	}
	for name, v := range sums {
		if strings.HasPrefix(name, "pulpitum.archive.coordinator.jobs/") && v != 0 {
			t.Errorf("after the cycles: %s = %d, want 0", name, v)
		}
	}
	for name, want := range map[string]int64{
		"pulpitum.archive.coordinator.cycles/started": 3, "pulpitum.archive.coordinator.cycles/success": 1, "pulpitum.archive.coordinator.cycles/failure": 2,
		"pulpitum.archive.runs/started": 2, "pulpitum.archive.runs/success": 1, "pulpitum.archive.records/success": 150,
		"pulpitum.archive.failures/upload": 1, "pulpitum.archive.failures/delete_hot": 1,
		"pulpitum.archive.coordinator.phase.transitions/" + phaseQueued:           3,
		"pulpitum.archive.coordinator.phase.transitions/" + phaseClaimed:          3,
		"pulpitum.archive.coordinator.phase.transitions/" + phaseUploading:        2,
		"pulpitum.archive.coordinator.phase.transitions/" + phaseUploadedVerified: 1,
		"pulpitum.archive.coordinator.phase.transitions/" + phasePublished:        1,
		"pulpitum.archive.coordinator.phase.transitions/" + phaseRetryScheduled:   2,
		"pulpitum.archive.coordinator.phase.transitions/" + phaseCompleted:        1,
	} {
		if sums[name] != want {
			t.Errorf("%s = %d, want %d (all: %v)", name, sums[name], want, sums)
		}
	}
}

// archiverMetricSums collects the archiver's metrics from r and returns each counter's sum per
// "<metric name>/<label value>", the label being its outcome, stage or coordinator phase (the
// strategy summed over). It fails the test when an instrument is not of the meter "pulpitum",
// when a label is outside the reference's fixed set (docs/pulpitum-v4.md §6.2: strategy,
// outcome, stage, phase), or when a label value holds one of secrets.
func archiverMetricSums(t *testing.T, r *sdkmetric.ManualReader, secrets ...string) map[string]int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	allowed := map[attribute.Key]bool{"pulpitum.bucket.strategy": true, "pulpitum.archive.outcome": true,
		"pulpitum.archive.stage": true, "pulpitum.archive.coordinator.phase": true}
	sums := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != "pulpitum" {
			t.Errorf("meter %q, want pulpitum", sm.Scope.Name)
		}
		for _, m := range sm.Metrics {
			var sets []attribute.Set
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					sets = append(sets, p.Attributes)
					label := ""
					for _, k := range []attribute.Key{"pulpitum.archive.outcome", "pulpitum.archive.stage", "pulpitum.archive.coordinator.phase"} {
						if v, ok := p.Attributes.Value(k); ok {
							label = v.AsString()
						}
					}
					sums[m.Name+"/"+label] += p.Value
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					sets = append(sets, p.Attributes)
				}
			}
			for _, set := range sets {
				for _, kv := range set.ToSlice() {
					if !allowed[kv.Key] {
						t.Errorf("metric %s has label %s", m.Name, kv.Key)
					}
					for _, bad := range secrets {
						if strings.Contains(kv.Value.Emit(), bad) {
							t.Errorf("metric %s label %s = %q holds %q", m.Name, kv.Key, kv.Value.Emit(), bad)
						}
					}
				}
			}
		}
	}
	return sums
}

// TestReadSpansFollowTheirParent: an archive read starts its pulpitum.archive.read span under a
// recording parent and as a root (a direct call), and none under a valid parent that records
// nothing (what a query's span is without an exporter, or for an unsampled incoming trace),
// whose children a parent-based sampler would not record either; the answers are the same.
func TestReadSpansFollowTheirParent(t *testing.T) {
	t.Parallel()
	bkt := openTestBucket(t)
	b := testBucket("general", routing.CalendarMonthUTC, time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC))
	recs := genRecords(newRand(7), b, 300)
	w, _ := NewWriter(bkt, WriterOptions{Prefix: testPrefix, RowGroupRows: 100})
	key, err := w.Put(context.Background(), b, 1, recs)
	if err != nil {
		t.Fatal(err)
	}
	spans := tracetest.NewSpanRecorder()
	sampler := &countingSampler{Sampler: sdktrace.ParentBased(sdktrace.AlwaysSample())}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans), sdktrace.WithSampler(sampler))
	r, err := NewReader(bkt, ReaderOptions{TracerProvider: tp})
	if err != nil {
		t.Fatal(err)
	}
	parent := func(flags trace.TraceFlags) context.Context {
		return trace.ContextWithSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{
			TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2}, TraceFlags: flags}))
	}
	_, recording := tp.Tracer("test").Start(parent(trace.FlagsSampled), "query")
	defer recording.End()
	req := routing.AggregateRequest{Range: b.Range(), Measures: []routing.Measure{routing.CountStar, routing.MinTime}}
	for _, c := range []struct {
		name  string
		ctx   context.Context
		spans int
	}{
		{"a direct call", context.Background(), 1},
		{"under a recording parent", trace.ContextWithSpan(context.Background(), recording), 1},
		{"under a parent recording nothing", parent(0), 0},
	} {
		before, asked := len(spans.Ended()), sampler.reads.Load()
		gs, err := r.AggregateGroups(c.ctx, key, b, req)
		if err != nil || len(gs) != 1 || gs[0].Count != int64(len(recs)) || !gs[0].Min.Equal(recs[0].EventTime) {
			t.Fatalf("%s: %+v, %v", c.name, gs, err)
		}
		br, err := r.ReadBatches(c.ctx, key, b, routing.BatchRequest{Range: b.Range(), Columns: []routing.Column{routing.ColumnTimestamp}, Limit: -1})
		if err != nil {
			t.Fatal(err)
		}
		rows := 0
		for br.Next() {
			rows += int(br.RecordBatch().NumRows())
		}
		br.Release()
		if rows != len(recs) {
			t.Fatalf("%s: read %d rows, want %d", c.name, rows, len(recs))
		}
		n := 0
		for _, s := range spans.Ended()[before:] {
			if s.Name() == "pulpitum.archive.read" {
				n++
			}
		}
		if n != 2*c.spans || sampler.reads.Load()-asked != int64(2*c.spans) {
			t.Fatalf("%s: %d pulpitum.archive.read spans recorded and %d started for an aggregate and a read, want %d", c.name, n, sampler.reads.Load()-asked, 2*c.spans)
		}
	}
}

// countingSampler counts the pulpitum.archive.read spans started (sampled or not).
type countingSampler struct {
	sdktrace.Sampler
	reads atomic.Int64
}

func (s *countingSampler) ShouldSample(p sdktrace.SamplingParameters) sdktrace.SamplingResult {
	if p.Name == "pulpitum.archive.read" {
		s.reads.Add(1)
	}
	return s.Sampler.ShouldSample(p)
}
