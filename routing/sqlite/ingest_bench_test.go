package sqlite_test

import (
	"testing"
	"time"

	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/routing/storetest"
)

// BenchmarkAppendStream writes storetest.BenchIngestRows records in one request into a new
// migrated store (storetest.BenchIngest: rows/s and this process's CPU per row, the whole
// write on SQLite).
func BenchmarkAppendStream(b *testing.B) {
	storetest.BenchIngest(b, func(b *testing.B) (routing.HotStore, func() time.Duration) { return migrated(b), nil })
}
