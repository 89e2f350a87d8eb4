package pgtest

import (
	"context"
	"testing"

	"github.com/flightsrv/flightsrv/routing/cockroach"
)

// NewStore creates a new database on the server (NewDatabase), opens the hot store over it
// through the CockroachDB adapter (routing/cockroach), closed at tb's cleanup, and applies the
// Pulpitum v4 migrations. It returns the store and the database's URL (for processes and
// second pools); it fails tb on any error.
func (s *Server) NewStore(tb testing.TB) (*cockroach.Store, string) {
	tb.Helper()
	url := s.NewDatabase(tb)
	ctx := context.Background()
	st, err := cockroach.Open(ctx, cockroach.Config{URL: url})
	if err != nil {
		tb.Fatalf("pgtest: open the store: %v", err)
	}
	tb.Cleanup(st.Close)
	if err := st.Migrate(ctx); err != nil {
		tb.Fatalf("pgtest: migrate: %v", err)
	}
	return st, url
}
