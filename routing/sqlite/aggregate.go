package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/flightsrv/flightsrv/routing"
)

// The partial-aggregate port (routing.HotStore.AggregateRange), with the same answers as the
// CockroachDB store. Every statement returns the route and the partial state from one
// snapshot and reads only primary-key columns: ungrouped count(*), min and max over the key
// range; MIN/MAX alone as one primary-key probe from each end (sqlMinMax in read.go); or
// count(*), min and max per time bin. event_time is stored as integer microseconds, so
// fixed-width bins (date_trunc to second … week, date_bin) are integer arithmetic:
// (event_time − start ?4 + phase ?6) / width ?7 over non-negative offsets, which SQLite's
// truncating division floors. Calendar bins (month, quarter, year) group by the UTC month
// year·12 + month − 1 read with strftime from the record's whole seconds (floored first:
// strftime would round sub-second times, and a truncating division would move times before
// 1970 up a second); the store folds months into quarters and years.
var (
	sqlAggregate = routeCTE + `
SELECT route.state, route.object_key, route.hot_deleted, route.generation, agg.n, agg.lo, agg.hi
FROM route LEFT JOIN (
	SELECT count(*) AS n, min(rec.event_time) AS lo, max(rec.event_time) AS hi
	FROM pulpitum_v4_records AS rec
	WHERE ` + inRange + ` AND ` + notArchived + `
) AS agg ON true`
	sqlAggregateFixed = routeCTE + `
SELECT route.state, route.object_key, route.hot_deleted, route.generation, agg.k, agg.n, agg.lo, agg.hi
FROM route LEFT JOIN (
	SELECT (rec.event_time - ?4 + ?6) / ?7 AS k, count(*) AS n, min(rec.event_time) AS lo, max(rec.event_time) AS hi
	FROM pulpitum_v4_records AS rec
	WHERE ` + inRange + ` AND ` + notArchived + `
	GROUP BY 1
) AS agg ON true
ORDER BY agg.k`
	sqlAggregateMonths = routeCTE + `
SELECT route.state, route.object_key, route.hot_deleted, route.generation, agg.k, agg.n, agg.lo, agg.hi
FROM route LEFT JOIN (
	SELECT CAST(strftime('%Y', secs.s, 'unixepoch') AS INTEGER) * 12
			+ CAST(strftime('%m', secs.s, 'unixepoch') AS INTEGER) - 1 AS k,
		count(*) AS n, min(secs.t) AS lo, max(secs.t) AS hi
	FROM (
		SELECT rec.event_time AS t,
			(rec.event_time - ((rec.event_time % 1000000) + 1000000) % 1000000) / 1000000 AS s
		FROM pulpitum_v4_records AS rec
		WHERE ` + inRange + ` AND ` + notArchived + `
	) AS secs
	GROUP BY 1
) AS agg ON true
ORDER BY agg.k`
	hotStatements = routing.HotStatements{Probe: sqlMinMax, Count: sqlAggregate, BinsFixed: sqlAggregateFixed, BinsMonths: sqlAggregateMonths}
)

// AggregateRange implements the hot store's partial-aggregate port
// (routing.HotStore.AggregateRange): b's route and, unless it is archived (nil reader), the
// partial count(*), min and max of b's records inside req.Range, ungrouped or per time bin,
// with one statement over the primary key that never reads value or sort_key. Errors as for
// ScanRange, routing.ErrInvalidBinning and routing.ErrBinOutOfRange.
func (s *Store) AggregateRange(ctx context.Context, b routing.BucketID, req routing.AggregateRequest) (routing.Route, array.RecordReader, error) {
	const op = "aggregate bucket range"
	h, err := routing.NewHotAggregate(b, req)
	if err != nil {
		return routing.Route{}, nil, err
	}
	query := h.Statement(hotStatements)
	args := append([]any{b.TableID, b.PartitionKey, b.Key, h.Start.UnixMicro(), h.End.UnixMicro()}, h.BinArgs...)
	if s.closed.Load() {
		return routing.Route{}, nil, s.classify(op, errors.New("closed"))
	}
	s.count(ctx)
	rows, err := s.readQuery(ctx, query, args...)
	if err != nil {
		return routing.Route{}, nil, s.classify(op, err)
	}
	defer rows.Close()
	var (
		state     string
		key       sql.NullString
		deleted   bool
		gen       int64
		k, n      sql.NullInt64
		lo, hi    sql.NullInt64
		dest      = h.Dest([]any{&state, &key, &deleted, &gen}, &k, &n, &lo, &hi)
		nullable  = func(v sql.NullInt64) *int64 { return ptrIf(v.Valid, v.Int64) }
		timeIfSet = func(v sql.NullInt64) *time.Time { return ptrIf(v.Valid, fromMicros(v.Int64)) }
	)
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return routing.Route{}, nil, s.classify(op, err)
		}
		route, err := routeFromRow(state, key, deleted, gen)
		if err != nil {
			return routing.Route{}, nil, err
		}
		if err := h.Row(route, nullable(k), nullable(n), timeIfSet(lo), timeIfSet(hi)); err != nil {
			return routing.Route{}, nil, err
		}
	}
	if err := rows.Err(); err != nil {
		return routing.Route{}, nil, s.classify(op, err)
	}
	return h.Answer()
}

// ptrIf returns &v when ok, else nil.
func ptrIf[T any](ok bool, v T) *T {
	if !ok {
		return nil
	}
	return &v
}
