package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"

	"github.com/flightsrv/flightsrv/routing"
)

// scanSQL builds the batch scan statement (ScanRange): ?1..?3 bucket, ?4/?5 range (µs), ?6
// the route row's place, ?7 the limit (−1: none). Route and rows come from one statement,
// hence one snapshot. The compound SELECT is the route row (synthesised 'hot' when the bucket
// has no metadata row), placed by ?6 just before the first record in the read order (range
// start − 1 µs ascending, range end descending), UNION ALL the bucket's records inside
// ?4..?5 unless the bucket is archived; its ORDER BY (event_time, sort_key) runs as SQLite's
// merge of the two arms, the records' arm following the primary key with no temporary B-tree
// (TestScanPlanFollowsPrimaryKey), and the route row comes first. LIMIT counts the route row.
// The outer SELECT, a co-routine over the merge, returns only the requested columns.
func scanSQL(desc, ts, id, value bool) string {
	dir := "ASC"
	if desc {
		dir = "DESC"
	}
	out := "u.state, u.object_key, u.hot_deleted, u.generation"
	if ts {
		out += ", u.event_time"
	}
	if id {
		out += ", u.sort_key"
	}
	if value {
		out += ", u.value"
	}
	return `SELECT ` + out + `
FROM (
	SELECT COALESCE(m.state, 'hot') AS state,
		m.archive_object_key AS object_key,
		COALESCE(m.hot_deleted, 0) AS hot_deleted,
		COALESCE(m.generation, 0) AS generation,
		?6 AS event_time, NULL AS sort_key, NULL AS value
	FROM (SELECT 1) AS one
	LEFT JOIN pulpitum_v4_bucket_metadata AS m
		ON m.table_id = ?1 AND m.partition_key = ?2 AND m.bucket_key = ?3
	UNION ALL
	SELECT NULL, NULL, NULL, NULL, rec.event_time, rec.sort_key, rec.value
	FROM pulpitum_v4_records AS rec
	WHERE ` + inRange + `
		AND ` + notArchived + `
	ORDER BY event_time ` + dir + `, sort_key ` + dir + `
	LIMIT ?7
) AS u`
}

// sqlScan[desc][ts][id][value] holds the scan statements.
var sqlScan = func() (v [2][2][2][2]string) {
	for i := range 16 {
		desc, ts, id, value := i&8 != 0, i&4 != 0, i&2 != 0, i&1 != 0
		v[b2i(desc)][b2i(ts)][b2i(id)][b2i(value)] = scanSQL(desc, ts, id, value)
	}
	return v
}()

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// scanRouteColumns is the number of route columns leading every row of a scan.
const scanRouteColumns = 4

var _ routing.HotBatchScanner = (*Store)(nil)

// ScanRange implements routing.HotBatchScanner: b's route and, unless it is archived (then the
// reader is nil and no connection is held), a reader of b's records inside req.Range clipped
// to the bucket, in (event_time, sort_key) order (descending when req.Desc), at most
// req.Limit of them when req.Limit >= 0 (0 reads the route only). Route and rows come from one
// statement, which reads one WAL snapshot for as long as it is open; a bucket without a
// metadata row is hot. Range bounds finer than a microsecond select exactly the stored times
// they admit (routing.MicroBounds).
//
// The reader's batches have the schema of routing.TableDef.BatchSchema(req.Columns) (the
// partition field is named "partition"; callers conform names) and are allocated from
// req.Alloc (memory.DefaultAllocator when nil). Timestamps are nanoseconds since the Unix
// epoch in UTC, whole microseconds; the partition column is b.PartitionKey. Rows stream from
// the database/sql result, scanned without conversion straight into Arrow buffers, and a
// batch is cut every routing.MaxBatchRows rows, or before a row that would take the selected
// partition, id and value bytes past routing.MaxBatchBytes; the whole bucket is never held.
//
// Ownership: the reader holds one read connection (and the open statement, hence its
// snapshot) from ScanRange until its rows end, it fails, or it is released, whichever comes
// first; Release returns the connection at once. Batches are valid until the next call to
// Next; Retain to keep one. The reader is not safe for concurrent use; ScanRange is.
//
// The statement is counted into the context's routing.ReadStats, and the rows the reader
// returns into its HotRows. Errors (from ScanRange or the reader's Err): routing.ErrInvalidRecord
// for an invalid bucket id; routing.ErrOperationFailed for an invalid column list, a metadata
// row violating the state invariants, a stored sort key or partition key that is not valid
// UTF-8 (when that column is requested) and database errors; the context's error when it is
// cancelled; routing.ErrUnavailable for a closed store. No error carries keys or values.
func (s *Store) ScanRange(ctx context.Context, b routing.BucketID, req routing.BatchRequest) (routing.Route, routing.BatchReader, error) {
	const op = "scan bucket range"
	sc, alloc, err := req.Prepare(b)
	if err != nil {
		return routing.Route{}, nil, err
	}
	start, end, _ := microBounds(req.Range.Intersect(b.Range()), nil, false)
	end = max(end, start)
	routeAt := start - 1
	if req.Desc {
		routeAt = end
	}
	limit := int64(-1) // the route row counts
	if req.Limit >= 0 && req.Limit < math.MaxInt64 {
		limit = req.Limit + 1
	}
	if s.closed.Load() {
		return routing.Route{}, nil, s.classify(op, errClosed)
	}
	s.count(ctx)
	rows, err := s.readQuery(ctx, sqlScan[b2i(req.Desc)][b2i(sc.Timestamp)][b2i(sc.ID)][b2i(sc.Value)],
		b.TableID, b.PartitionKey, b.Key, start, end, routeAt, limit)
	if err != nil {
		return routing.Route{}, nil, s.classify(op, err)
	}
	r := &scanReader{s: s, ctx: ctx, rows: rows, stats: routing.StatsFrom(ctx)}
	route, err := r.readRoute()
	if err != nil {
		r.stop()
		return routing.Route{}, nil, err
	}
	if route.State == routing.StateArchived {
		if err := routing.EndArchivedScan(rows, r.stop, func(err error) error { return s.classify(op, err) }); err != nil {
			return routing.Route{}, nil, err
		}
		return route, nil, nil
	}
	r.dest = append(r.dest, &r.routeCol, nopScanner{}, nopScanner{}, nopScanner{})
	if sc.Timestamp {
		r.dest = append(r.dest, &r.micros)
	}
	if sc.ID {
		r.dest = append(r.dest, &r.id)
	}
	if sc.Value {
		r.dest = append(r.dest, &r.value)
	}
	r.Init(sc, alloc, b.PartitionKey, req.Limit, r.stop)
	return route, r, nil
}

var errClosed = errors.New("store closed")

// scanReader is the routing.BatchReader of ScanRange over one open database/sql result.
type scanReader struct {
	routing.ScanReaderState
	s *Store
	// ctx is the statement's context: the reader's Next has no context of its own, so the
	// reader keeps the one its statement runs under (as sql.Rows does) to check it between
	// rows.
	ctx   context.Context
	rows  *sql.Rows // nil once closed
	stats *routing.ReadStats

	// Scan destinations of a data row, reused: no conversion, no allocation by the store.
	dest     []any
	routeCol nullScanner
	micros   microsScanner
	id       bytesScanner
	value    bytesScanner

	routing.ScanLoop
}

// nopScanner discards a column (a data row's NULL route columns).
type nopScanner struct{}

func (nopScanner) Scan(any) error { return nil }

// nullScanner records whether a column is NULL (the state column: NULL on data rows only).
type nullScanner struct{ notNull bool }

func (n *nullScanner) Scan(src any) error { n.notNull = src != nil; return nil }

// microsScanner takes an INTEGER (event_time, µs since the Unix epoch).
type microsScanner struct{ v int64 }

func (m *microsScanner) Scan(src any) error {
	v, ok := src.(int64)
	if !ok {
		return fmt.Errorf("%w: scan bucket range: malformed event time", routing.ErrOperationFailed)
	}
	m.v = v
	return nil
}

// bytesScanner takes a BLOB without copying it: the bytes are valid until the next row.
type bytesScanner struct{ b []byte }

func (s *bytesScanner) Scan(src any) error {
	switch v := src.(type) {
	case []byte:
		s.b = v
	case nil:
		s.b = nil
	default:
		return fmt.Errorf("%w: scan bucket range: malformed bytes", routing.ErrOperationFailed)
	}
	return nil
}

// readRoute reads the statement's first row, the route.
func (r *scanReader) readRoute() (routing.Route, error) {
	const op = "scan bucket range"
	if !r.rows.Next() {
		if err := r.rows.Err(); err != nil {
			return routing.Route{}, r.s.classify(op, err)
		}
		return routing.Route{}, fmt.Errorf("%w: %s: no route row", routing.ErrOperationFailed, op)
	}
	cols, err := r.rows.Columns()
	if err != nil {
		return routing.Route{}, r.s.classify(op, err)
	}
	var (
		state   sql.NullString
		key     sql.NullString
		deleted bool
		gen     int64
	)
	dest := []any{&state, &key, &deleted, &gen}
	for range len(cols) - len(dest) {
		dest = append(dest, nopScanner{})
	}
	if err := r.rows.Scan(dest...); err != nil {
		return routing.Route{}, r.s.classify(op, err)
	}
	if !state.Valid {
		return routing.Route{}, fmt.Errorf("%w: %s: no route row", routing.ErrOperationFailed, op)
	}
	return routeFromRow(state.String, key, deleted, gen)
}

// Next reads the next batch: rows until the batch is full or the result ends.
func (r *scanReader) Next() bool {
	r.DropCurrent()
	if r.rows == nil {
		return false
	}
	return r.Fill(r.ctx, &r.ScanReaderState, r.rows, r.stats, r.classify, r.scanRow, r.appendRow)
}

func (r *scanReader) classify(err error) error { return r.s.classify("scan bucket range", err) }

// scanRow scans a new row into the reader's destinations.
func (r *scanReader) scanRow() error {
	if err := r.rows.Scan(r.dest...); err != nil {
		return r.classify(err)
	}
	if r.routeCol.notNull {
		return fmt.Errorf("%w: scan bucket range: second route row", routing.ErrOperationFailed)
	}
	return nil
}

// appendRow appends the scanned row to the batch unless it is full.
func (r *scanReader) appendRow() (bool, error) {
	size := r.BB.RowBytes(len(r.id.b), len(r.value.b))
	if r.BB.Full(size) {
		return true, nil
	}
	var nanos int64
	if r.BB.Columns().Timestamp {
		if r.micros.v > routing.MaxNanoMicros || r.micros.v < routing.MinNanoMicros {
			return false, fmt.Errorf("%w: scan bucket range: stored event time is outside the nanosecond range", routing.ErrOperationFailed)
		}
		nanos = r.micros.v * 1000
	}
	return false, r.BB.Append(nanos, r.id.b, r.value.b, size)
}

// stop closes the statement, returning the connection to the read pool; idempotent.
func (r *scanReader) stop() {
	if r.rows == nil {
		return
	}
	_ = r.rows.Close()
	r.rows = nil
	r.id.b, r.value.b = nil, nil
}
