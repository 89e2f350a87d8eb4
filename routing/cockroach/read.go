package cockroach

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/flightsrv/flightsrv/routing"
)

// routeCTE selects the bucket's route, synthesising ('hot', NULL, false, 0) when the bucket has
// no metadata row: the one-row VALUES is left-joined to the (unique) metadata row.
const routeCTE = `WITH route AS (
	SELECT COALESCE(m.state, 'hot') AS state,
		m.archive_object_key,
		COALESCE(m.hot_deleted, false) AS hot_deleted,
		COALESCE(m.generation, 0) AS generation
	FROM (VALUES (1)) AS one (x)
	LEFT JOIN pulpitum_v4_bucket_metadata AS m
		ON m.table_id = $1 AND m.partition_key = $2 AND m.bucket_key = $3
)
`

var (
	// sqlMinMax answers MIN and MAX with one primary-key probe each: the two ORDER BY … LIMIT 1
	// subqueries follow the primary key (table_id, partition_key, bucket_key, event_time, …)
	// from either end of the range, so no row is counted or aggregated. They are uncorrelated,
	// so each is planned on its own as a bounded index scan stopping at its first row; the
	// lateral's WHERE on the route discards them for an archived bucket. Route and extremes
	// come from one statement, hence one snapshot.
	sqlMinMax = register("SELECT routed durable bucket min max", "SELECT", RecordsTable, routeCTE+
		`SELECT route.state, route.archive_object_key, route.hot_deleted, route.generation, ext.lo, ext.hi
FROM route
LEFT JOIN LATERAL (
	SELECT `+extremeSQL("ASC")+` AS lo,
		`+extremeSQL("DESC")+` AS hi
	WHERE route.state <> 'archived'
) AS ext ON true`)
	sqlRoute = register("SELECT pulpitum_v4_bucket_metadata", "SELECT", MetadataTable,
		`SELECT state, archive_object_key, hot_deleted, generation
FROM pulpitum_v4_bucket_metadata
WHERE table_id = $1 AND partition_key = $2 AND bucket_key = $3`)
)

// extremeSQL is the event time of b's first (ASC) or last (DESC) record inside $4..$5: a
// scalar subquery reading the primary key only.
func extremeSQL(dir string) string {
	return `(
		SELECT rec.event_time
		FROM pulpitum_v4_records AS rec
		WHERE rec.table_id = $1 AND rec.partition_key = $2 AND rec.bucket_key = $3
			AND rec.event_time >= $4 AND rec.event_time < $5
		ORDER BY rec.event_time ` + dir + `
		LIMIT 1
	)`
}

// Route returns b's current route: hot when it has no metadata row. Errors as for ScanRange.
func (s *Store) Route(ctx context.Context, b routing.BucketID) (routing.Route, error) {
	const op = "read bucket route"
	if err := b.Validate(); err != nil {
		return routing.Route{}, err
	}
	var (
		state   string
		key     *string
		deleted bool
		gen     int64
	)
	err := s.queryRow(ctx, op, sqlRoute, bucketArgs(b), &state, &key, &deleted, &gen)
	if errors.Is(err, pgx.ErrNoRows) {
		return routing.Route{State: routing.StateHot}, nil
	}
	if err != nil {
		return routing.Route{}, err
	}
	return routeFromRow(state, key, deleted, gen)
}

// queryRow runs a one-row statement on a pooled connection. It returns pgx.ErrNoRows itself
// when there is no row, and classified errors otherwise.
func (s *Store) queryRow(ctx context.Context, op, sql string, args []any, dest ...any) error {
	conn, err := s.acquire(ctx, op)
	if err != nil {
		return err
	}
	defer conn.Release()
	if err := conn.QueryRow(ctx, sql, args...).Scan(dest...); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return pgx.ErrNoRows
		}
		return s.classify(op, err)
	}
	return nil
}

// routeFromRow builds a route from a metadata row whose manifest key may be NULL.
func routeFromRow(state string, key *string, hotDeleted bool, generation int64) (routing.Route, error) {
	if key == nil {
		return routing.RouteFromRow(state, "", false, hotDeleted, generation)
	}
	return routing.RouteFromRow(state, *key, true, hotDeleted, generation)
}

const sqlStoredTables = `SELECT DISTINCT table_id, bucket_strategy FROM pulpitum_v4_bucket_metadata ORDER BY table_id, bucket_strategy`

// StoredTables lists the (table id, strategy) pairs of the metadata rows (routing.TableCatalog),
// with one statement that reads every metadata row. A strategy this server does not know is
// routing.ErrOperationFailed. Errors as for ScanRange.
func (s *Store) StoredTables(ctx context.Context) ([]routing.StoredTable, error) {
	const op = "list stored tables"
	conn, err := s.acquire(ctx, op)
	if err != nil {
		return nil, err
	}
	defer conn.Release()
	rows, err := conn.Query(ctx, sqlStoredTables)
	if err != nil {
		return nil, s.classify(op, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (routing.StoredTable, error) {
		var (
			t        routing.StoredTable
			strategy string
		)
		if err := r.Scan(&t.TableID, &strategy); err != nil {
			return t, err
		}
		st, err := routing.ParseStrategy(strategy)
		if err != nil {
			return t, keep(fmt.Errorf("%w: unknown bucket strategy", routing.ErrOperationFailed))
		}
		t.Strategy = st
		return t, nil
	})
	if err != nil {
		return nil, s.classify(op, err)
	}
	return out, nil
}

// sqlPartitions lists the route rows (partition and bucket keys) intersecting a range, by
// partition then bucket start; bucket_start and bucket_end are compared as TIMESTAMPTZ, the
// range bound at microseconds (the stored precision) by routing.PartitionDiscoveryBounds.
const sqlPartitions = `SELECT partition_key, bucket_key FROM pulpitum_v4_bucket_metadata
WHERE table_id = $1 AND bucket_strategy = $2 AND bucket_start < $4 AND bucket_end > $3
ORDER BY partition_key, bucket_start`

// Partitions discovers the partitions of tableID with a bucket of strategy intersecting r and
// their buckets with a route row (routing.HotStore.Partitions), in one statement read until
// the partition past limit (<= 0: no bound). Errors are classified as for ScanRange and carry
// no key.
func (s *Store) Partitions(ctx context.Context, tableID string, strategy routing.Strategy, r routing.TimeRange, limit int) ([]routing.Partition, error) {
	const op = "discover partitions"
	if r.Empty() {
		return nil, nil
	}
	start, end := routing.PartitionDiscoveryBounds(r)
	conn, err := s.acquire(ctx, op)
	if err != nil {
		return nil, err
	}
	defer conn.Release()
	rows, err := conn.Query(ctx, sqlPartitions, tableID, strategy.String(), start, end)
	if err != nil {
		return nil, s.classify(op, err)
	}
	defer rows.Close()
	var out []routing.Partition
	var pk []byte
	var key string
	for rows.Next() {
		if err := rows.Scan(&pk, &key); err != nil {
			return nil, s.classify(op, err)
		}
		var more bool
		if out, more = routing.AddDiscovered(out, pk, key, limit); !more {
			return out, nil
		}
	}
	if err := rows.Err(); err != nil {
		return nil, s.classify(op, err)
	}
	return out, nil
}
