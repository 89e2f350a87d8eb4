package cockroach

import "github.com/flightsrv/flightsrv/routing"

// ScanFormats reports whether a ScanRange reader decodes its timestamp and byte columns from
// the binary wire format (false: the text fallback).
func ScanFormats(r routing.BatchReader) (timestamps, bytes bool) {
	sr := r.(*scanReader)
	return sr.tsBinary, sr.bytesBinary
}
