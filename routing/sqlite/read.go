package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/flightsrv/flightsrv/routing"
)

// routeCTE selects the bucket's route, synthesising ('hot', NULL, 0, 0) when the bucket has no
// metadata row. notArchived is true when the bucket is not archived; rows are read only then.
const (
	routeCTE = `WITH route AS (
	SELECT COALESCE(m.state, 'hot') AS state,
		m.archive_object_key AS object_key,
		COALESCE(m.hot_deleted, 0) AS hot_deleted,
		COALESCE(m.generation, 0) AS generation
	FROM (SELECT 1) AS one
	LEFT JOIN pulpitum_v4_bucket_metadata AS m
		ON m.table_id = ?1 AND m.partition_key = ?2 AND m.bucket_key = ?3
)`
	notArchived = `NOT EXISTS (
			SELECT 1 FROM pulpitum_v4_bucket_metadata AS a
			WHERE a.table_id = ?1 AND a.partition_key = ?2 AND a.bucket_key = ?3 AND a.state = 'archived')`
	inRange = `rec.table_id = ?1 AND rec.partition_key = ?2 AND rec.bucket_key = ?3
		AND rec.event_time >= ?4 AND rec.event_time < ?5`
)

var (
	// sqlMinMax answers MIN and MAX with one primary-key probe each (ORDER BY … LIMIT 1 from
	// either end of the range), never counting or aggregating rows.
	sqlMinMax = routeCTE + `
SELECT route.state, route.object_key, route.hot_deleted, route.generation,
	` + extremeSQL("ASC") + `,
	` + extremeSQL("DESC") + `
FROM route`
	sqlRoute = `SELECT state, archive_object_key, hot_deleted, generation
FROM pulpitum_v4_bucket_metadata
WHERE table_id = ?1 AND partition_key = ?2 AND bucket_key = ?3`
)

// extremeSQL is the event time of b's first (ASC) or last (DESC) record inside ?4..?5 unless
// b is archived: a scalar subquery reading the primary key only.
func extremeSQL(dir string) string {
	return `(SELECT rec.event_time FROM pulpitum_v4_records AS rec
		WHERE ` + inRange + ` AND ` + notArchived + `
		ORDER BY rec.event_time ` + dir + ` LIMIT 1)`
}

// Route returns b's current route: hot when it has no metadata row. Errors as for ScanRange.
func (s *Store) Route(ctx context.Context, b routing.BucketID) (routing.Route, error) {
	const op = "read bucket route"
	if err := b.Validate(); err != nil {
		return routing.Route{}, err
	}
	var (
		state   string
		key     sql.NullString
		deleted bool
		gen     int64
	)
	err := s.queryRow(ctx, s.r, sqlRoute, []any{b.TableID, b.PartitionKey, b.Key}, &state, &key, &deleted, &gen)
	if errors.Is(err, sql.ErrNoRows) {
		return routing.Route{State: routing.StateHot}, nil
	}
	if err != nil {
		return routing.Route{}, s.classify(op, err)
	}
	return routeFromRow(state, key, deleted, gen)
}

// routeFromRow builds a route from a metadata row whose manifest key may be NULL.
func routeFromRow(state string, key sql.NullString, hotDeleted bool, generation int64) (routing.Route, error) {
	return routing.RouteFromRow(state, key.String, key.Valid, hotDeleted, generation)
}

// microCursor is a cursor on the stored microsecond grid.
type microCursor struct {
	us      int64
	sortKey []byte
}

// microBounds is routing.MicroBounds on the stored integer microseconds.
func microBounds(r routing.TimeRange, after *routing.Cursor, desc bool) (start, end int64, cursor *microCursor) {
	s, e, c := routing.MicroBounds(r, after, desc)
	if c != nil {
		cursor = &microCursor{us: c.EventTime.UnixMicro(), sortKey: c.SortKey}
	}
	return s.UnixMicro(), e.UnixMicro(), cursor
}

const sqlStoredTables = `SELECT DISTINCT table_id, bucket_strategy FROM pulpitum_v4_bucket_metadata ORDER BY table_id, bucket_strategy`

// StoredTables lists the (table id, strategy) pairs of the metadata rows (routing.TableCatalog),
// with one statement that reads every metadata row. A strategy this server does not know is
// routing.ErrOperationFailed. Errors as for ScanRange.
func (s *Store) StoredTables(ctx context.Context) ([]routing.StoredTable, error) {
	const op = "list stored tables"
	s.count(ctx)
	rows, err := s.r.QueryContext(ctx, sqlStoredTables)
	if err != nil {
		return nil, s.classify(op, err)
	}
	defer rows.Close()
	var out []routing.StoredTable
	for rows.Next() {
		var (
			t        routing.StoredTable
			strategy string
		)
		if err := rows.Scan(&t.TableID, &strategy); err != nil {
			return nil, s.classify(op, err)
		}
		st, err := routing.ParseStrategy(strategy)
		if err != nil {
			return nil, fmt.Errorf("%w: unknown bucket strategy", routing.ErrOperationFailed)
		}
		t.Strategy = st
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, s.classify(op, err)
	}
	return out, nil
}

// sqlPartitions lists the route rows (partition and bucket keys) intersecting a range, by
// partition then bucket start (bounds in µs since the epoch, as stored).
const sqlPartitions = `SELECT partition_key, bucket_key FROM pulpitum_v4_bucket_metadata
WHERE table_id = ? AND bucket_strategy = ? AND bucket_start < ? AND bucket_end > ?
ORDER BY partition_key, bucket_start`

// Partitions discovers the partitions of tableID with a bucket of strategy intersecting r and
// their buckets with a route row (routing.HotStore.Partitions), in one statement read until
// the partition past limit (<= 0: no bound), or from the discovery cache when the database has
// not changed since that statement last answered the same question (discoveryCache). Errors are
// classified as for ScanRange and carry no key.
func (s *Store) Partitions(ctx context.Context, tableID string, strategy routing.Strategy, r routing.TimeRange, limit int) ([]routing.Partition, error) {
	if r.Empty() {
		return nil, nil
	}
	start, end := routing.PartitionDiscoveryBounds(r)
	k := discoveryKey{table: tableID, strategy: strategy.String(), start: start.UnixMicro(), end: end.UnixMicro(), limit: max(limit, 0)}
	ps, hit, version, versioned := s.discovery.lookup(ctx, k)
	if hit {
		return shared(ps), nil
	}
	ps, err := s.partitions(ctx, k)
	if err != nil || !versioned {
		return ps, err
	}
	s.discovery.store(k, version, ps)
	return shared(ps), nil
}

// partitions runs the discovery statement for k (Partitions).
func (s *Store) partitions(ctx context.Context, k discoveryKey) ([]routing.Partition, error) {
	const op = "discover partitions"
	s.count(ctx)
	rows, err := s.readQuery(ctx, sqlPartitions, k.table, k.strategy, k.end, k.start)
	if err != nil {
		return nil, s.classify(op, err)
	}
	defer rows.Close()
	var out []routing.Partition
	for rows.Next() {
		var pk []byte
		var key string
		if err := rows.Scan(&pk, &key); err != nil {
			return nil, s.classify(op, err)
		}
		var more bool
		if out, more = routing.AddDiscovered(out, pk, key, k.limit); !more {
			return out, nil
		}
	}
	if err := rows.Err(); err != nil {
		return nil, s.classify(op, err)
	}
	return out, nil
}
