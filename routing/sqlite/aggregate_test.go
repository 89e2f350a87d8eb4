package sqlite_test

import (
	"testing"

	"github.com/flightsrv/flightsrv/routing/storetest"
)

// TestAggregate runs the partial-aggregate port's conformance suite (AggregateRange, and
// routing.DurableTable.AggregateBucket over this store and real archives) against SQLite.
func TestAggregate(t *testing.T) {
	t.Parallel()
	storetest.RunAggregate(t, func(t *testing.T) storetest.Store { return migrated(t) })
}
