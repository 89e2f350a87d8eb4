package scan

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/flightsrv/flightsrv/routing"
)

// TestFragmentSpanAdoption: a bucket read that adopts its fragment's span (routing.FragmentSpan,
// as the archive's reads do) makes the fragment one span, ended under the read's name with
// the read's attributes and the fragment's, with the fragment's status (an aggregate the
// archive could not answer leaves the fragment that read the rows instead successful); a
// second read of the fragment cannot adopt it; a fragment no read adopted keeps its name; and
// under a sampler that records nothing the fragment's span is no FragmentSpan.
func TestFragmentSpanAdoption(t *testing.T) {
	spans := tracetest.NewSpanRecorder()
	prev := otel.GetTracerProvider()
	t.Cleanup(func() { otel.SetTracerProvider(prev) })
	otel.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans)))

	adopt := func(ctx context.Context) routing.FragmentSpan {
		fs, ok := trace.SpanFromContext(ctx).(routing.FragmentSpan)
		if !ok || !fs.AdoptRead("pulpitum.archive.read") {
			t.Fatalf("the fragment's context holds no span to adopt (%T)", trace.SpanFromContext(ctx))
		}
		return fs
	}
	// An archived bucket: the read adopts the span, fails (no aggregate from statistics), the
	// fragment reads the rows and succeeds.
	ctx, span := startFragmentSpan(context.Background())
	adopt(ctx).EndRead([]attribute.KeyValue{attribute.String("pulpitum.archive.operation", "aggregate"), attribute.Int64("pulpitum.archive.bytes_read", 42)})
	if fs := trace.SpanFromContext(ctx).(routing.FragmentSpan); fs.AdoptRead("pulpitum.archive.read") {
		t.Error("a second read adopted the fragment's span")
	}
	finish(span, false, AttrFragmentTier.String("archive"), AttrFragmentRows.Int64(7))
	// A hot bucket whose read failed.
	_, hot := startFragmentSpan(context.Background())
	finish(hot, true, AttrFragmentTier.String("hot"), AttrFragmentRows.Int64(0))

	ended := spans.Ended()
	if len(ended) != 2 {
		t.Fatalf("%d spans ended, want 2", len(ended))
	}
	attrs := func(s sdktrace.ReadOnlySpan) map[attribute.Key]string {
		m := map[attribute.Key]string{}
		for _, kv := range s.Attributes() {
			m[kv.Key] = kv.Value.Emit()
		}
		return m
	}
	read, frag := ended[0], ended[1]
	a := attrs(read)
	if read.Name() != "pulpitum.archive.read" || read.Status().Code != codes.Unset || len(a) != 4 ||
		a["pulpitum.archive.operation"] != "aggregate" || a["pulpitum.archive.bytes_read"] != "42" ||
		a[AttrFragmentTier] != "archive" || a[AttrFragmentRows] != "7" {
		t.Errorf("adopted span %q, status %v, attributes %v", read.Name(), read.Status(), a)
	}
	if a := attrs(frag); frag.Name() != "flightsrv.fragment" || frag.Status().Code != codes.Error || a[AttrFragmentTier] != "hot" {
		t.Errorf("hot fragment span %q, status %v, attributes %v", frag.Name(), frag.Status(), a)
	}

	otel.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.NeverSample())))
	ctx, span = startFragmentSpan(context.Background())
	if _, ok := trace.SpanFromContext(ctx).(routing.FragmentSpan); ok || span.IsRecording() {
		t.Error("a span that records nothing is a FragmentSpan")
	}
	finish(span, false)
}
