package sqlite_test

import (
	"testing"

	"github.com/flightsrv/flightsrv/routing/storetest"
)

// TestHistogram runs the per-bin count conformance suite against the embedded store.
func TestHistogram(t *testing.T) {
	storetest.RunHistogram(t, func(t *testing.T) storetest.Store { return migrated(t) })
}
