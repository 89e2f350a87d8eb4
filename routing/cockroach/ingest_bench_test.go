package cockroach_test

import (
	"context"
	"testing"
	"time"

	"github.com/flightsrv/flightsrv/internal/testsupport/pgtest"
	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/routing/cockroach"
	"github.com/flightsrv/flightsrv/routing/storetest"
)

// BenchmarkAppendStream writes storetest.BenchIngestRows records in one request into a new
// database through a one-connection store (storetest.BenchIngest), so the request's whole
// PostgreSQL side — the fence, the one COPY of the merged, sorted chunks into pulpitum_v4_records (as a
// superuser, without the foreign key's per-row check: omitFKCheck) — runs in one backend,
// whose CPU per record is reported
// (server-cpu-µs/row, from /proc: the cluster must run on this machine, as pgtest's does).
func BenchmarkAppendStream(b *testing.B) {
	srv := pgtest.Start(b)
	storetest.BenchIngest(b, func(b *testing.B) (routing.HotStore, func() time.Duration) {
		ctx := context.Background()
		s, err := cockroach.Open(ctx, cockroach.Config{URL: srv.NewDatabase(b), MaxConns: 1})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(s.Close)
		if err := s.Migrate(ctx); err != nil {
			b.Fatal(err)
		}
		var pid int
		if err := s.Pool().QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
			b.Fatal(err)
		}
		return s, func() time.Duration {
			st, err := procStat(pid)
			if err != nil {
				b.Fatalf("PostgreSQL backend's CPU: %v", err)
			}
			return st.cpu
		}
	})
}
