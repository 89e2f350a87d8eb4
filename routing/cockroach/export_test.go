package cockroach

import (
	"testing"

	"github.com/flightsrv/flightsrv/routing"
)

// ScanFormats reports whether a ScanRange reader decodes its timestamp and byte columns from
// the binary wire format (false: the text fallback).
func ScanFormats(r routing.BatchReader) (timestamps, bytes bool) {
	sr := r.(*scanReader)
	return sr.tsBinary, sr.bytesBinary
}

// SetIngestChunkRows makes pipelined write requests spool n records a chunk until t ends
// (tests using it must not run in parallel).
func SetIngestChunkRows(t testing.TB, n int) {
	old := ingestChunkRows
	ingestChunkRows = n
	t.Cleanup(func() { ingestChunkRows = old })
}

// BinStride is the date_bin stride and origin the row-aggregate statement bins unit with
// (fixedStride, binOrigin); false for a unit it truncates with date_trunc.
func BinStride(unit routing.TruncUnit) (stride, origin string, ok bool) {
	stride, ok = fixedStride[unit]
	return stride, binOrigin, ok
}
