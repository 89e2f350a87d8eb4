package scan

import (
	"context"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/flightsrv/flightsrv/routing"
)

// Every bucket fragment of a query has a span (issue 20), flightsrv.fragment, a child of the
// query's call span, from the fragment's start to the end of its bucket read (its reader's
// end or release), with these attributes; the archive's read of the bucket is its child
// (pulpitum.archive.read, with the bytes and objects read and the Parquet row groups and
// pages read and pruned), and so are the hot store's statements. No partition value, bucket
// key or object key is an attribute.
const (
	// AttrFragmentTier is the tier that answered the bucket: "hot" or "archive".
	AttrFragmentTier = attribute.Key("flightsrv.fragment.tier")
	// AttrFragmentRows is the rows the bucket read produced (before the fragment's filters).
	AttrFragmentRows = attribute.Key("flightsrv.fragment.rows")
	// AttrFragmentPushed is set when the bucket was answered by a store's partial aggregate.
	AttrFragmentPushed = attribute.Key("flightsrv.fragment.pushed_down")
)

// fragmentTracer makes the fragment spans from the global tracer provider.
func fragmentTracer() trace.Tracer { return otel.Tracer("github.com/flightsrv/flightsrv/scan") }

// startFragmentSpan starts the span of one bucket fragment.
func startFragmentSpan(ctx context.Context) (context.Context, trace.Span) {
	return fragmentTracer().Start(ctx, "flightsrv.fragment")
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
	s.end()
	return false
}

// Record is RecordBatch under its deprecated name.
func (s *spanReader) Record() arrow.RecordBatch { return s.RecordReader.RecordBatch() }

func (s *spanReader) Release() {
	s.end()
	s.RecordReader.Release()
}

func (s *spanReader) end() {
	if !s.ended.CompareAndSwap(false, true) {
		return
	}
	// The attributes in one call: the span's attribute list is allocated once.
	s.span.SetAttributes(AttrFragmentTier.String(string(s.tier)), AttrFragmentPushed.Bool(s.pushed), AttrFragmentRows.Int64(s.rows))
	if err := s.RecordReader.Err(); err != nil {
		s.span.SetStatus(codes.Error, "bucket read failed")
	}
	s.span.End()
}

// failFragment ends a fragment span whose bucket read could not start.
func failFragment(span trace.Span) {
	span.SetStatus(codes.Error, "bucket read failed")
	span.End()
}
