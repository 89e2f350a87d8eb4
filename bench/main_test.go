package bench

import (
	"testing"

	"github.com/flightsrv/flightsrv/internal/testsupport/pgtest"
)

// TestMain stops the PostgreSQL server pgtest may have started once the benchmarks are done.
func TestMain(m *testing.M) { pgtest.Main(m) }
