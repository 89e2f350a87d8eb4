package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
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
)

// AggregateRange implements the hot store's partial-aggregate port
// (routing.HotStore.AggregateRange): b's route and, unless it is archived (nil reader), the
// partial count(*), min and max of b's records inside req.Range, ungrouped or per time bin,
// with one statement over the primary key that never reads value or sort_key. Errors as for
// ReadRange, routing.ErrInvalidBinning and routing.ErrBinOutOfRange.
func (s *Store) AggregateRange(ctx context.Context, b routing.BucketID, req routing.AggregateRequest) (routing.Route, array.RecordReader, error) {
	const op = "aggregate bucket range"
	if err := b.Validate(); err != nil {
		return routing.Route{}, nil, err
	}
	start, end, _ := microBounds(req.Range, nil, false)
	args := []any{b.TableID, b.PartitionKey, b.Key, start, end}
	var (
		query string
		fixed bool
		width int64
		base  int64
	)
	switch {
	case req.Bin != nil:
		if err := req.Bin.Validate(); err != nil {
			return routing.Route{}, nil, err
		}
		query = sqlAggregateMonths
		width, _, fixed = req.Bin.FixedWidth()
		base = req.Bin.Floor(fromMicros(start)).UnixMicro()
		if fixed {
			query = sqlAggregateFixed
			args = append(args, start-base, width)
		}
	case req.Count:
		query = sqlAggregate
	default:
		query = sqlMinMax
	}
	if s.closed.Load() {
		return routing.Route{}, nil, s.classify(op, errors.New("closed"))
	}
	s.count(ctx)
	rows, err := s.r.QueryContext(ctx, query, args...)
	if err != nil {
		return routing.Route{}, nil, s.classify(op, err)
	}
	defer rows.Close()
	var (
		route      routing.Route
		seen       bool
		groups     []routing.PartialGroup
		state      string
		key        sql.NullString
		deleted    bool
		gen        int64
		k, n       sql.NullInt64
		lo, hi     sql.NullInt64
		dest       = []any{&state, &key, &deleted, &gen}
		grouped    = req.Bin != nil
		countShape = grouped || req.Count
	)
	switch {
	case grouped:
		dest = append(dest, &k, &n, &lo, &hi)
	case countShape:
		dest = append(dest, &n, &lo, &hi)
	default:
		dest = append(dest, &lo, &hi)
	}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return routing.Route{}, nil, s.classify(op, err)
		}
		if !seen {
			if route, err = routeFromRow(state, key, deleted, gen); err != nil {
				return routing.Route{}, nil, err
			}
			seen = true
		}
		if lo.Valid != hi.Valid {
			return routing.Route{}, nil, fmt.Errorf("%w: %s: only one extreme found", routing.ErrOperationFailed, op)
		}
		g := routing.PartialGroup{Count: n.Int64, Found: lo.Valid}
		if g.Found {
			g.Min, g.Max = fromMicros(lo.Int64), fromMicros(hi.Int64)
		}
		if g.Count == 0 && !g.Found {
			continue
		}
		if route.State == routing.StateArchived {
			return routing.Route{}, nil, fmt.Errorf("%w: %s: archived bucket returned hot rows", routing.ErrOperationFailed, op)
		}
		if grouped {
			if !k.Valid {
				continue
			}
			if fixed {
				g.Bin = fromMicros(base + k.Int64*width)
			} else {
				g.Bin = req.Bin.Floor(time.Date(int(k.Int64/12), time.Month(k.Int64%12+1), 1, 0, 0, 0, 0, time.UTC))
			}
		}
		groups = append(groups, g)
	}
	if err := rows.Err(); err != nil {
		return routing.Route{}, nil, s.classify(op, err)
	}
	if !seen {
		return routing.Route{}, nil, fmt.Errorf("%w: %s: no route row", routing.ErrOperationFailed, op)
	}
	if route.State == routing.StateArchived {
		return route, nil, nil
	}
	r, err := req.Answer(groups)
	if err != nil {
		return routing.Route{}, nil, err
	}
	return route, r, nil
}
