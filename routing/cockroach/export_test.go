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

// SetIngestMoveRows makes pipelined write requests move n records at a time until t ends
// (tests using it must not run in parallel).
func SetIngestMoveRows(t testing.TB, n int) {
	old := ingestMoveRows
	ingestMoveRows = n
	t.Cleanup(func() { ingestMoveRows = old })
}
