package sqlite_test

import (
	"testing"

	"github.com/flightsrv/flightsrv/routing/storetest"
)

// TestDurableMinMax runs the MIN/MAX pushdown suite (routing.DurableTable.MinMax over this
// store and real archives) against SQLite.
func TestDurableMinMax(t *testing.T) {
	t.Parallel()
	storetest.RunMinMax(t, func(t *testing.T) storetest.Store { return migrated(t) })
}
