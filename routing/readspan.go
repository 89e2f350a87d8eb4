package routing

import (
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// FragmentSpan is the span of one bucket fragment (the executor's flightsrv.fragment, issue
// 20) offered to the store read of its bucket: a store that would start a span of its own for
// the read (the archive's pulpitum.archive.read, docs/pulpitum-v4.md §6.1) finds it as the span
// of the read's context and takes it instead, so that an archived bucket costs a query one
// span, not a fragment span and its child (each span is an allocation, a snapshot and an
// OTLP message for the exporter: bench's BenchmarkOTLPExport, bench/doc.go). The adopted span
// ends with its fragment under the read's name, with the read's attributes and the
// fragment's; its kind stays the fragment's (internal). A span that records nothing is never
// a FragmentSpan.
//
// Safe for concurrent use: the read may end on another goroutine than the fragment's.
type FragmentSpan interface {
	trace.Span
	// AdoptRead makes the span the read's, to end under name; it reports false when a read
	// of the fragment adopted it already (a fragment that reads its bucket again starts a
	// span for the second read).
	AdoptRead(name string) bool
	// EndRead records the adopting read's attributes; the span keeps them until its fragment
	// ends it. The attributes are the caller's no longer. The span's status is the
	// fragment's: a read that failed fails its fragment (which says so), or was one the
	// fragment could do without (an aggregate the archive could not answer from statistics,
	// routing.ErrNoAggregate, after which the fragment reads the bucket's rows in a span of
	// their own).
	EndRead(attrs []attribute.KeyValue)
}
