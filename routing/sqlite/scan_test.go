package sqlite_test

import (
	"github.com/flightsrv/flightsrv/routing/sqlite"
	"github.com/flightsrv/flightsrv/routing/storetest"
)

// gauged adds storetest.ConnGauge to a store: the read pool's connections in use (reads,
// batch scans included, use the read pool).
type gauged struct{ *sqlite.Store }

var _ storetest.ConnGauge = gauged{}

func (g gauged) ConnsInUse() int { return g.ReadConnsInUse() }
