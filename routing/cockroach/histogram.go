package cockroach

import (
	"context"
	"fmt"
	"time"

	"github.com/flightsrv/flightsrv/routing"
)

// Per-bin counts (grouped COUNT(*) pushdown). Each statement returns the route and the
// bucket's non-empty bins from one snapshot, like sqlCount, reading only key columns. Bins
// are computed with arithmetic that runs unchanged on CockroachDB and PostgreSQL:
//
//   - fixed-width bins (date_trunc to second … week, date_bin): the record's offset from the
//     range start $4 in whole microseconds, extract(epoch FROM interval) rounded — exact on
//     both (PostgreSQL's numeric; CockroachDB's float, whose spacing within a bucket of at
//     most a year is far below half a microsecond) — plus the phase $6 of the start inside
//     its bin, floor-divided by the width $7. Offsets are non-negative, so PostgreSQL's
//     truncating integer division and CockroachDB's decimal division floor alike; the store
//     maps bin k to the start (floor(start) + k·width). Neither date_bin (absent from
//     CockroachDB) nor date_trunc('week') (whose week start we need not trust) is used.
//   - calendar bins (month, quarter, year): the record's UTC month as year·12 + month − 1
//     with extract(… FROM event_time AT TIME ZONE 'UTC'), independent of the session time
//     zone; the store folds months into quarters and years.
var (
	sqlBinsFixed = register("SELECT routed durable bucket count by bin", "SELECT", RecordsTable, routeCTE+
		`SELECT route.state, route.archive_object_key, route.hot_deleted, route.generation, agg.k, agg.n
FROM route
LEFT JOIN LATERAL (
	SELECT CAST(floor((CAST(round(extract(epoch FROM rec.event_time - $4::TIMESTAMPTZ) * 1000000) AS INT8) + $6::INT8) / $7::INT8) AS INT8) AS k,
		count(*) AS n
	FROM pulpitum_v4_records AS rec
	WHERE route.state <> 'archived'
		AND rec.table_id = $1 AND rec.partition_key = $2 AND rec.bucket_key = $3
		AND rec.event_time >= $4::TIMESTAMPTZ AND rec.event_time < $5::TIMESTAMPTZ
	GROUP BY 1
) AS agg ON true
ORDER BY agg.k`)
	sqlBinsMonths = register("SELECT routed durable bucket count by bin", "SELECT", RecordsTable, routeCTE+
		`SELECT route.state, route.archive_object_key, route.hot_deleted, route.generation, agg.k, agg.n
FROM route
LEFT JOIN LATERAL (
	SELECT CAST(extract(year FROM rec.event_time AT TIME ZONE 'UTC') AS INT8) * 12
			+ CAST(extract(month FROM rec.event_time AT TIME ZONE 'UTC') AS INT8) - 1 AS k,
		count(*) AS n
	FROM pulpitum_v4_records AS rec
	WHERE route.state <> 'archived'
		AND rec.table_id = $1 AND rec.partition_key = $2 AND rec.bucket_key = $3
		AND rec.event_time >= $4::TIMESTAMPTZ AND rec.event_time < $5::TIMESTAMPTZ
	GROUP BY 1
) AS agg ON true
ORDER BY agg.k`)
)

var _ routing.HotBinCounter = (*Store)(nil)

// CountRangeByBin implements routing.HotBinCounter: b's route and, unless it is archived, the
// non-empty bins of b's records inside r under bin, ascending, with one statement over the
// primary key that never reads value or sort_key (route and bins from one snapshot). Range
// bounds finer than a microsecond select exactly the stored times they admit. Errors as for
// ReadRange, and routing.ErrInvalidBinning.
func (s *Store) CountRangeByBin(ctx context.Context, b routing.BucketID, r routing.TimeRange, bin routing.Binning) (routing.Route, []routing.Bin, error) {
	const op = "count bucket range by bin"
	if err := b.Validate(); err != nil {
		return routing.Route{}, nil, err
	}
	if err := bin.Validate(); err != nil {
		return routing.Route{}, nil, err
	}
	start, end, _ := routing.MicroBounds(r, nil, false)
	args := bucketArgs(b, start, end)
	sql := sqlBinsMonths
	width, _, fixed := bin.FixedWidth()
	base := bin.Floor(start).UnixMicro()
	if fixed {
		sql = sqlBinsFixed
		args = append(args, start.UnixMicro()-base, width)
	}
	conn, err := s.acquire(ctx, op)
	if err != nil {
		return routing.Route{}, nil, err
	}
	defer conn.Release()
	rows, err := conn.Query(ctx, sql, args...)
	if err != nil {
		return routing.Route{}, nil, s.classify(op, err)
	}
	defer rows.Close()
	var (
		route   routing.Route
		seen    bool
		bins    []routing.Bin
		state   string
		key     *string
		deleted bool
		gen     int64
		k, n    *int64
	)
	for rows.Next() {
		if err := rows.Scan(&state, &key, &deleted, &gen, &k, &n); err != nil {
			return routing.Route{}, nil, s.classify(op, err)
		}
		if !seen {
			if route, err = routeFromRow(state, key, deleted, gen); err != nil {
				return routing.Route{}, nil, err
			}
			seen = true
		}
		if k == nil || n == nil || *n <= 0 {
			continue
		}
		if route.State == routing.StateArchived {
			return routing.Route{}, nil, fmt.Errorf("%w: %s: archived bucket returned hot rows", routing.ErrOperationFailed, op)
		}
		var at time.Time
		if fixed {
			at = time.UnixMicro(base + *k*width).UTC()
		} else {
			at = bin.Floor(time.Date(int(*k/12), time.Month(*k%12+1), 1, 0, 0, 0, 0, time.UTC))
		}
		bins = append(bins, routing.Bin{Start: at, Count: uint64(*n)})
	}
	if err := rows.Err(); err != nil {
		return routing.Route{}, nil, s.classify(op, err)
	}
	if !seen {
		return routing.Route{}, nil, fmt.Errorf("%w: %s: no route row", routing.ErrOperationFailed, op)
	}
	return route, routing.MergeBins(bins), nil
}
