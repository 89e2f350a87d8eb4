package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// vacuumAnalyze leaves the hot store's tables as autovacuum leaves them on a server that
// commits synchronously: every page of pulpitum_v4_records all-visible (index-only scans read
// no heap page) and fresh planner statistics, so that the server's statements and the direct
// statements they are compared with read the same settled table state.
//
// The benchmarks' PostgreSQL runs with synchronous_commit=off (internal/testsupport/pgtest),
// where a VACUUM that starts before the WAL writer has flushed the load's last commit record
// may set neither the tuples' commit hint bits nor a page's all-visible bit (PostgreSQL marks
// a page all-visible only when every tuple's inserter is known committed on disk), and nothing
// vacuums the table again: every index-only scan of the measurements then visited the heap for
// each row counted (EXPLAIN (ANALYZE) Heap Fetches equal to the rows). So the WAL is flushed
// first (a transaction committed with synchronous_commit on flushes all WAL written before
// it), and the visibility map is checked after the VACUUM, retried a few times (an ANALYZE of
// autovacuum's may hold an older snapshot); it fails when the pages stay unmarked.
func vacuumAnalyze(ctx context.Context, pool *pgxpool.Pool) error {
	const attempts = 5
	for attempt := 1; ; attempt++ {
		tx, err := pool.Begin(ctx)
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, "SET LOCAL synchronous_commit = on")
		if err == nil {
			_, err = tx.Exec(ctx, "SELECT pg_current_xact_id()")
		}
		if err != nil {
			_ = tx.Rollback(ctx)
			return err
		}
		if err := tx.Commit(ctx); err != nil {
			return err
		}
		if _, err := pool.Exec(ctx, "VACUUM ANALYZE"); err != nil {
			return err
		}
		var pages, visible int64
		if err := pool.QueryRow(ctx, "SELECT relpages, relallvisible FROM pg_class WHERE oid = 'pulpitum_v4_records'::regclass").Scan(&pages, &visible); err != nil {
			return err
		}
		if visible >= pages {
			return nil
		}
		if attempt == attempts {
			return fmt.Errorf("vacuum: %d of pulpitum_v4_records' %d pages all-visible after %d VACUUMs", visible, pages, attempts)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
