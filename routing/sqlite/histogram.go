package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/flightsrv/flightsrv/routing"
)

// Per-bin counts (grouped COUNT(*) pushdown), with the same answers as the CockroachDB store.
// event_time is stored as integer microseconds, so fixed-width bins (date_trunc to second …
// week, date_bin) are integer arithmetic: (event_time − start ?4 + phase ?6) / width ?7 over
// non-negative offsets, which SQLite's truncating division floors. Calendar bins (month,
// quarter, year) group by the UTC month year·12 + month − 1 read with strftime from the
// record's whole seconds (floored first: strftime would round sub-second times, and a
// truncating division would move times before 1970 up a second).
var (
	sqlBinsFixed = routeCTE + `
SELECT route.state, route.object_key, route.hot_deleted, route.generation, agg.k, agg.n
FROM route LEFT JOIN (
	SELECT (rec.event_time - ?4 + ?6) / ?7 AS k, count(*) AS n
	FROM pulpitum_v4_records AS rec
	WHERE ` + inRange + ` AND ` + notArchived + `
	GROUP BY 1
) AS agg ON true
ORDER BY agg.k`
	sqlBinsMonths = routeCTE + `
SELECT route.state, route.object_key, route.hot_deleted, route.generation, agg.k, agg.n
FROM route LEFT JOIN (
	SELECT CAST(strftime('%Y', secs.s, 'unixepoch') AS INTEGER) * 12
			+ CAST(strftime('%m', secs.s, 'unixepoch') AS INTEGER) - 1 AS k,
		count(*) AS n
	FROM (
		SELECT (rec.event_time - ((rec.event_time % 1000000) + 1000000) % 1000000) / 1000000 AS s
		FROM pulpitum_v4_records AS rec
		WHERE ` + inRange + ` AND ` + notArchived + `
	) AS secs
	GROUP BY 1
) AS agg ON true
ORDER BY agg.k`
)

var _ routing.HotBinCounter = (*Store)(nil)

// CountRangeByBin implements routing.HotBinCounter: b's route and, unless it is archived, the
// non-empty bins of b's records inside r under bin, ascending, with one statement over the
// primary key that never reads value or sort_key (route and bins from one snapshot). Errors
// as for ReadRange, and routing.ErrInvalidBinning.
func (s *Store) CountRangeByBin(ctx context.Context, b routing.BucketID, r routing.TimeRange, bin routing.Binning) (routing.Route, []routing.Bin, error) {
	const op = "count bucket range by bin"
	if err := b.Validate(); err != nil {
		return routing.Route{}, nil, err
	}
	if err := bin.Validate(); err != nil {
		return routing.Route{}, nil, err
	}
	start, end, _ := microBounds(r, nil, false)
	args := []any{b.TableID, b.PartitionKey, b.Key, start, end}
	query := sqlBinsMonths
	width, _, fixed := bin.FixedWidth()
	base := bin.Floor(fromMicros(start)).UnixMicro()
	if fixed {
		query = sqlBinsFixed
		args = append(args, start-base, width)
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
		route   routing.Route
		seen    bool
		bins    []routing.Bin
		state   string
		key     sql.NullString
		deleted bool
		gen     int64
		k, n    sql.NullInt64
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
		if !k.Valid || !n.Valid || n.Int64 <= 0 {
			continue
		}
		if route.State == routing.StateArchived {
			return routing.Route{}, nil, fmt.Errorf("%w: %s: archived bucket returned hot rows", routing.ErrOperationFailed, op)
		}
		var at time.Time
		if fixed {
			at = fromMicros(base + k.Int64*width)
		} else {
			at = bin.Floor(time.Date(int(k.Int64/12), time.Month(k.Int64%12+1), 1, 0, 0, 0, 0, time.UTC))
		}
		bins = append(bins, routing.Bin{Start: at, Count: uint64(n.Int64)})
	}
	if err := rows.Err(); err != nil {
		return routing.Route{}, nil, s.classify(op, err)
	}
	if !seen {
		return routing.Route{}, nil, fmt.Errorf("%w: %s: no route row", routing.ErrOperationFailed, op)
	}
	return route, routing.MergeBins(bins), nil
}
