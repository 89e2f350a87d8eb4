package scan

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/flightsrv/flightsrv/routing"
)

// Every bucket fragment of a query has a span (issue 20), a child of the query's call span,
// from the fragment's start to the end of its bucket read (its reader's end or release), with
// these attributes. A hot bucket's span is flightsrv.fragment, the hot store's statements its
// children; an archived bucket's read adopts the fragment's span (routing.FragmentSpan), which
// then ends as the archive's pulpitum.archive.read (docs/pulpitum-v4.md §6.1) with the read's
// attributes as well (the bytes and objects read, the Parquet row groups and pages read and
// pruned): one span per bucket, not a fragment span and its archive read (bench/doc.go). No
// partition value, bucket key or object key is an attribute.
const (
	// AttrFragmentTier is the tier that answered the bucket: "hot" or "archive".
	AttrFragmentTier = attribute.Key("flightsrv.fragment.tier")
	// AttrFragmentRows is the rows the bucket read produced (before the fragment's filters).
	AttrFragmentRows = attribute.Key("flightsrv.fragment.rows")
	// AttrFragmentPushed is true when the bucket was answered by a store's partial
	// aggregate; absent otherwise.
	AttrFragmentPushed = attribute.Key("flightsrv.fragment.pushed_down")
)

// fragmentTracer makes the fragment spans from the global tracer provider.
func fragmentTracer() trace.Tracer { return otel.Tracer("github.com/flightsrv/flightsrv/scan") }

// fragmentSpanName is the span name of a bucket fragment that no archive read adopted.
const fragmentSpanName = "flightsrv.fragment"

// startFragmentSpan starts the span of one bucket fragment: a *fragmentSpan, the span of the
// returned context, when it records.
func startFragmentSpan(ctx context.Context) (context.Context, trace.Span) {
	sctx, span := fragmentTracer().Start(ctx, fragmentSpanName)
	if !span.IsRecording() {
		return sctx, span
	}
	fs := &fragmentSpan{Span: span}
	return trace.ContextWithSpan(ctx, fs), fs
}

// fragmentSpan is a recording fragment span: the routing.FragmentSpan of its bucket's read.
type fragmentSpan struct {
	trace.Span
	mu      sync.Mutex
	adopted string               // the name of the read that adopted the span, if one did
	attrs   []attribute.KeyValue // the read's, once it ended
}

var _ routing.FragmentSpan = (*fragmentSpan)(nil)

func (f *fragmentSpan) AdoptRead(name string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.adopted != "" {
		return false
	}
	f.adopted = name
	return true
}

func (f *fragmentSpan) EndRead(attrs []attribute.KeyValue) {
	f.mu.Lock()
	f.attrs = attrs
	f.mu.Unlock()
}

// finish ends the fragment's span s with attrs, as failed or not (the fragment's outcome):
// under the name of the read that adopted it, with that read's attributes, if s is a
// fragmentSpan a read adopted.
func finish(s trace.Span, failed bool, attrs ...attribute.KeyValue) {
	if f, ok := s.(*fragmentSpan); ok {
		f.mu.Lock()
		if f.adopted != "" {
			f.Span.SetName(f.adopted)
			attrs = append(f.attrs, attrs...)
		}
		f.mu.Unlock()
	}
	// The attributes in one call: the span's attribute list is allocated once.
	s.SetAttributes(attrs...)
	if failed {
		s.SetStatus(codes.Error, "bucket read failed")
	}
	s.End()
}

// spanReader ends its fragment's span when the bucket read ends (Next reports false) or is
// released, whichever comes first, with the rows it passed on and its error.
type spanReader struct {
	array.RecordReader
	span   trace.Span
	tier   routing.Tier
	pushed bool
	rows   int64
	ended  atomic.Bool
}

// endedBy wraps r so that span ends with it; tier is the tier that answered. A span that
// records nothing ends at once, unwrapped.
func endedBy(r array.RecordReader, span trace.Span, tier routing.Tier, pushed bool) array.RecordReader {
	if !span.IsRecording() {
		span.End()
		return r
	}
	return &spanReader{RecordReader: r, span: span, tier: tier, pushed: pushed}
}

func (s *spanReader) Next() bool {
	if s.RecordReader.Next() {
		s.rows += s.RecordReader.RecordBatch().NumRows()
		return true
	}
	s.end(s.RecordReader.Err())
	return false
}

// Record is RecordBatch under its deprecated name.
func (s *spanReader) Record() arrow.RecordBatch { return s.RecordReader.RecordBatch() }

// Release releases the bucket read before it ends the span, so that a read that adopted the
// span (routing.FragmentSpan) has ended and handed over its attributes first.
func (s *spanReader) Release() {
	err := s.RecordReader.Err()
	s.RecordReader.Release()
	s.end(err)
}

func (s *spanReader) end(err error) {
	if !s.ended.CompareAndSwap(false, true) {
		return
	}
	if s.pushed {
		finish(s.span, err != nil, AttrFragmentTier.String(string(s.tier)), AttrFragmentRows.Int64(s.rows), AttrFragmentPushed.Bool(true))
		return
	}
	finish(s.span, err != nil, AttrFragmentTier.String(string(s.tier)), AttrFragmentRows.Int64(s.rows))
}

// failFragment ends a fragment span whose bucket read could not start.
func failFragment(span trace.Span) {
	finish(span, true)
}
