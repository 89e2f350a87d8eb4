package cockroach

import (
	"context"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/flightsrv/flightsrv/routing"
)

// The partial-aggregate port (routing.HotStore.AggregateRange). Every statement returns the
// route and the bucket's partial state from one snapshot and reads only primary-key columns
// (table_id, partition_key, bucket_key, event_time), never value or sort_key:
//
//   - ungrouped with count(*): count(*), min(event_time), max(event_time) over the key range;
//   - ungrouped MIN/MAX only: one primary-key probe from each end of the range (sqlMinMax in
//     read.go), no row counted;
//   - grouped by a time bin: count(*), min and max per bin. Bins are computed with arithmetic
//     that runs unchanged on CockroachDB and PostgreSQL: fixed-width bins (date_trunc to
//     second … week, date_bin) as the record's offset from the range start $4 in whole
//     microseconds — extract(epoch FROM interval) rounded, exact on both (PostgreSQL's
//     numeric; CockroachDB's float, whose spacing within a bucket of at most a year is far
//     below half a microsecond) — plus the phase $6 of the start inside its bin,
//     floor-divided by the width $7 (offsets are non-negative, so truncating and decimal
//     division floor alike; the store maps bin k to floor(start) + k·width; neither date_bin,
//     absent from CockroachDB, nor date_trunc('week') is used); calendar bins (month,
//     quarter, year) as the record's UTC month year·12 + month − 1 with extract(… FROM
//     event_time AT TIME ZONE 'UTC'), independent of the session time zone, folded into
//     quarters and years by the store.
var (
	sqlAggregate = register("SELECT routed durable bucket count", "SELECT", RecordsTable, routeCTE+
		`SELECT route.state, route.archive_object_key, route.hot_deleted, route.generation, agg.n, agg.lo, agg.hi
FROM route
LEFT JOIN LATERAL (
	SELECT count(*) AS n, min(rec.event_time) AS lo, max(rec.event_time) AS hi
	FROM pulpitum_v4_records AS rec
	WHERE route.state <> 'archived'
		AND rec.table_id = $1 AND rec.partition_key = $2 AND rec.bucket_key = $3
		AND rec.event_time >= $4 AND rec.event_time < $5
) AS agg ON true`)
	sqlAggregateFixed = register("SELECT routed durable bucket count by bin", "SELECT", RecordsTable,
		binsSQL(`CAST(floor((CAST(round(extract(epoch FROM rec.event_time - $4::TIMESTAMPTZ) * 1000000) AS INT8) + $6::INT8) / $7::INT8) AS INT8)`))
	sqlAggregateMonths = register("SELECT routed durable bucket count by bin", "SELECT", RecordsTable,
		binsSQL(`CAST(extract(year FROM rec.event_time AT TIME ZONE 'UTC') AS INT8) * 12
			+ CAST(extract(month FROM rec.event_time AT TIME ZONE 'UTC') AS INT8) - 1`))
)

// binsSQL is the grouped partial aggregate with bin key expression k.
func binsSQL(k string) string {
	return routeCTE + `SELECT route.state, route.archive_object_key, route.hot_deleted, route.generation, agg.k, agg.n, agg.lo, agg.hi
FROM route
LEFT JOIN LATERAL (
	SELECT ` + k + ` AS k,
		count(*) AS n, min(rec.event_time) AS lo, max(rec.event_time) AS hi
	FROM pulpitum_v4_records AS rec
	WHERE route.state <> 'archived'
		AND rec.table_id = $1 AND rec.partition_key = $2 AND rec.bucket_key = $3
		AND rec.event_time >= $4::TIMESTAMPTZ AND rec.event_time < $5::TIMESTAMPTZ
	GROUP BY 1
) AS agg ON true
ORDER BY agg.k`
}

// AggregateRange implements the hot store's partial-aggregate port
// (routing.HotStore.AggregateRange): b's route and, unless it is archived (nil reader), the
// partial count(*), min and max of b's records inside req.Range, ungrouped or per time bin,
// with one statement over the primary key (see the statements above). Range bounds finer
// than a microsecond select exactly the stored times they admit. Errors as for ScanRange,
// routing.ErrInvalidBinning and routing.ErrBinOutOfRange.
func (s *Store) AggregateRange(ctx context.Context, b routing.BucketID, req routing.AggregateRequest) (routing.Route, array.RecordReader, error) {
	const op = "aggregate bucket range"
	h, err := routing.NewHotAggregate(b, req)
	if err != nil {
		return routing.Route{}, nil, err
	}
	sql := h.Statement(routing.HotStatements{Probe: sqlMinMax, Count: sqlAggregate, BinsFixed: sqlAggregateFixed, BinsMonths: sqlAggregateMonths})
	conn, err := s.acquire(ctx, op)
	if err != nil {
		return routing.Route{}, nil, err
	}
	defer conn.Release()
	rows, err := conn.Query(ctx, sql, append(bucketArgs(b, h.Start, h.End), h.BinArgs...)...)
	if err != nil {
		return routing.Route{}, nil, s.classify(op, err)
	}
	defer rows.Close()
	var (
		state   string
		key     *string
		deleted bool
		gen     int64
		k, n    *int64
		lo, hi  *time.Time
	)
	dest := h.Dest([]any{&state, &key, &deleted, &gen}, &k, &n, &lo, &hi)
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return routing.Route{}, nil, s.classify(op, err)
		}
		route, err := routeFromRow(state, key, deleted, gen)
		if err != nil {
			return routing.Route{}, nil, err
		}
		if err := h.Row(route, k, n, lo, hi); err != nil {
			return routing.Route{}, nil, err
		}
	}
	if err := rows.Err(); err != nil {
		return routing.Route{}, nil, s.classify(op, err)
	}
	return h.Answer()
}
