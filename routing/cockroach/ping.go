package cockroach

import (
	"context"

	"github.com/flightsrv/flightsrv/routing"
)

var _ routing.Pinger = (*Store)(nil)

// Ping acquires a pooled connection and checks it with an empty round trip (pgxpool's Ping),
// for health checking. Errors are pgx's, for logs only.
func (s *Store) Ping(ctx context.Context) error { return s.pool.Ping(ctx) }
