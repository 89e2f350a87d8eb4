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
// The benchmarks' PostgreSQL runs with synchronous_commit=off (internal/testsupport/pgtest).
// PostgreSQL marks a page all-visible only when every tuple's commit hint bit is set, and sets
// that bit only once the WAL holding the commit records of the tuple's transaction's group of
// transaction ids is flushed. A VACUUM ANALYZE right after the load met both the load's
// unflushed commits and, table by table, its own ANALYZE commits (asynchronous too, of ids in
// the same groups): it marked none of the 300,000-row sample's 5,455 pages, or only those it
// reached after the WAL writer's next flush, and nothing vacuumed the table again, so every
// index-only scan of the measurements visited the heap for each row counted (EXPLAIN (ANALYZE)
// Heap Fetches equal to the rows). So the WAL is flushed first (a transaction that writes WAL
// commits with synchronous_commit on), the records table is vacuumed before any ANALYZE
// commits, its visibility map is checked (retried a few times: autovacuum's ANALYZE commits
// too), and then the whole database is vacuumed and analysed.
func vacuumAnalyze(ctx context.Context, pool *pgxpool.Pool) error {
	const attempts = 5
	for attempt := 1; ; attempt++ {
		tx, err := pool.Begin(ctx)
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, "SET LOCAL synchronous_commit = on")
		if err == nil {
			// A catalog change writes WAL, so the commit flushes all WAL up to it.
			_, err = tx.Exec(ctx, "CREATE TEMPORARY TABLE flightsrv_bench_flush () ON COMMIT DROP")
		}
		if err != nil {
			_ = tx.Rollback(ctx)
			return err
		}
		if err := tx.Commit(ctx); err != nil {
			return err
		}
		if _, err := pool.Exec(ctx, "VACUUM pulpitum_v4_records"); err != nil {
			return err
		}
		var pages, visible int64
		if err := pool.QueryRow(ctx, "SELECT relpages, relallvisible FROM pg_class WHERE oid = 'pulpitum_v4_records'::regclass").Scan(&pages, &visible); err != nil {
			return err
		}
		if visible >= pages {
			break
		}
		if attempt == attempts {
			return fmt.Errorf("vacuum: %d of pulpitum_v4_records' %d pages all-visible after %d VACUUMs", visible, pages, attempts)
		}
		time.Sleep(200 * time.Millisecond)
	}
	_, err := pool.Exec(ctx, "VACUUM ANALYZE")
	return err
}
