package sqlite

import (
	"context"

	"github.com/flightsrv/flightsrv/routing"
)

var _ routing.Pinger = (*Store)(nil)

// Ping checks that the database file is still open and readable (database/sql's PingContext
// on the read pool), for health checking. Errors are the driver's, for logs only.
func (s *Store) Ping(ctx context.Context) error { return s.r.PingContext(ctx) }
