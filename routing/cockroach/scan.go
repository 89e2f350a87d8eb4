package cockroach

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/flightsrv/flightsrv/routing"
)

// The batch scan statement (ScanRange). Route and rows come from one statement, hence one
// snapshot; but where a LEFT JOIN LATERAL of the records to the route row (the shape of
// Pulpitum's reference read) makes PostgreSQL sort the whole page on top of the join (a nested loop preserves only its outer side's order, here
// the one route row — for an unlimited bucket read that was an external merge sort on disk
// before the first row), the scan is a UNION ALL of
//
//   - the route row (synthesised 'hot' when the bucket has no metadata row), placed by $6 just
//     before the first record in the read order (range start − 1 µs ascending, range end
//     descending), and
//   - the bucket's records inside $4..$5 in primary-key order (LIMIT $7 when limited),
//
// ordered by (event_time, sort_key) on top. PostgreSQL plans the top ORDER BY as a Merge
// Append of the records' ordered index scan and the one-row route, so rows stream in index
// order with no sort and the route row always comes first (TestScanStatementPlan); CockroachDB
// can run an ordered UNION ALL as an ordered synchronizer of ordered inputs.
//
// Two details keep each record row as cheap as a plain SELECT of the same columns (measured:
// four route columns and a NOT EXISTS gate cost about 10% more client and server CPU a row):
//
//   - The route travels in one TEXT column, NULL on record rows: "state/generation/t|f/key"
//     with the hot_deleted flag as t or f and the manifest key as "+key", or "-" when NULL
//     (parseRoute).
//   - An archived bucket's records are excluded by a second upper bound on event_time that
//     collapses to the range start when the bucket is archived: one probe of the metadata
//     key, evaluated once, that PostgreSQL applies as an index-scan key (an uncorrelated
//     NOT EXISTS would put a gating Result node over every row); CockroachDB constrains the
//     span with $5 and filters with the probe.
//
// Only the requested columns are returned: event_time when the timestamp is requested,
// sort_key when the id is, value when the value is (event_time and sort_key stay in the
// UNION ALL's select list, since the order needs them); partition_key never (the partition
// column is the bucket's key). The text depends on the direction, the limit and the selected
// columns: 32 registered variants.
func scanSQL(desc, limited, ts, id, value bool) string {
	dir := "ASC"
	if desc {
		dir = "DESC"
	}
	out := "u.route"
	if ts {
		out += ", u.event_time"
	}
	if id {
		out += ", u.sort_key"
	}
	if value {
		out += ", u.value"
	}
	routeValue, recValue := "", ""
	if value {
		routeValue, recValue = ", NULL::BYTEA AS value", ", rec.value"
	}
	limit := ""
	if limited {
		limit = "\n\tLIMIT $7"
	}
	return `SELECT ` + out + `
FROM (
	SELECT COALESCE(m.state, 'hot') || '/' || CAST(COALESCE(m.generation, 0) AS TEXT) || '/'
			|| CASE WHEN m.hot_deleted THEN 't' ELSE 'f' END || '/'
			|| COALESCE('+' || m.archive_object_key, '-') AS route,
		$6::TIMESTAMPTZ AS event_time, NULL::BYTEA AS sort_key` + routeValue + `
	FROM (VALUES (1)) AS one (x)
	LEFT JOIN pulpitum_v4_bucket_metadata AS m
		ON m.table_id = $1 AND m.partition_key = $2 AND m.bucket_key = $3
	UNION ALL (
	SELECT NULL::TEXT, rec.event_time, rec.sort_key` + recValue + `
	FROM pulpitum_v4_records AS rec
	WHERE rec.table_id = $1 AND rec.partition_key = $2 AND rec.bucket_key = $3
		AND rec.event_time >= $4 AND rec.event_time < $5
		AND rec.event_time < COALESCE((
			SELECT $4::TIMESTAMPTZ FROM pulpitum_v4_bucket_metadata AS a
			WHERE a.table_id = $1 AND a.partition_key = $2 AND a.bucket_key = $3 AND a.state = 'archived'), $5)
	ORDER BY rec.event_time ` + dir + `, rec.sort_key ` + dir + limit + `)
) AS u
ORDER BY u.event_time ` + dir + `, u.sort_key ` + dir
}

// parseRoute decodes the route column of a scan (see scanSQL).
func parseRoute(text string) (routing.Route, error) {
	malformed := fmt.Errorf("%w: scan bucket range: malformed route row", routing.ErrOperationFailed)
	parts := strings.SplitN(text, "/", 4)
	if len(parts) != 4 || (parts[2] != "t" && parts[2] != "f") || parts[3] == "" {
		return routing.Route{}, malformed
	}
	gen, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil {
		return routing.Route{}, malformed
	}
	key, hasKey := parts[3][1:], parts[3][0] == '+'
	if !hasKey && parts[3] != "-" {
		return routing.Route{}, malformed
	}
	return routing.RouteFromRow(parts[0], key, hasKey, parts[2] == "t", gen)
}

// sqlScan[desc][limited][ts][id][value] holds the registered scan statements.
var sqlScan = func() (v [2][2][2][2][2]string) {
	for i := range 32 {
		desc, limited, ts, id, value := i&16 != 0, i&8 != 0, i&4 != 0, i&2 != 0, i&1 != 0
		v[b2i(desc)][b2i(limited)][b2i(ts)][b2i(id)][b2i(value)] =
			register("SELECT routed durable bucket scan", "SELECT", RecordsTable, scanSQL(desc, limited, ts, id, value))
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
const scanRouteColumns = 1

// Draining: a reader stopped before its rows end either reads and discards what is left,
// keeping its connection, when its LIMIT bounds that to about drainBytes (estimated from the
// rows read so far, drainRowGuess bytes a row before the first), or else cancels the
// statement's context, which makes pgx close the connection at once; the pool then discards
// it instead of reusing it, and opens another when needed.
const (
	drainBytes    = 1 << 20
	drainRowGuess = 256
)

// pgEpochMicros is 2000-01-01T00:00:00Z, PostgreSQL's binary timestamp origin, in
// microseconds since the Unix epoch.
const pgEpochMicros = 946_684_800_000_000

var errTimeRange = fmt.Errorf("%w: scan bucket range: stored event time is outside the nanosecond range", routing.ErrOperationFailed)

var _ routing.HotBatchScanner = (*Store)(nil)

// ScanRange implements routing.HotBatchScanner: b's route and, unless it is archived (then the
// reader is nil and no connection is held), a reader of b's records inside req.Range clipped
// to the bucket, in (event_time, sort_key) order (descending when req.Desc), at most
// req.Limit of them when req.Limit >= 0 (0 reads the route only). Route and rows come from one
// statement, hence one snapshot; a bucket without a metadata row is hot. Range bounds finer
// than a microsecond select exactly the stored times they admit (routing.MicroBounds).
//
// The reader's batches have the schema of routing.TableDef.BatchSchema(req.Columns) (the
// partition field's name is the caller's business: it is named "partition" here) and are
// allocated from req.Alloc (memory.DefaultAllocator when nil). Timestamps are nanoseconds
// since the Unix epoch in UTC, whole microseconds; the partition column is b.PartitionKey.
// Rows stream from the pgx result (binary format: raw wire values are decoded straight into
// Arrow buffers) and a batch is cut every routing.MaxBatchRows rows, or before a row
// that would take the selected partition, id and value bytes past routing.MaxBatchBytes; the
// whole bucket is never held.
//
// Ownership: the reader holds one pooled connection (and the open statement) from ScanRange
// until its rows end, it fails, or it is released, whichever comes first; Release returns the
// connection at once (a reader released early with many rows left closes the connection,
// which the pool discards). Batches are valid until the next call to Next; Retain to keep
// one. The reader is not safe for concurrent use; ScanRange is.
//
// Every statement is counted into the context's routing.ReadStats, and the rows the reader
// returns into its HotRows. Errors (from ScanRange or the reader's Err): routing.ErrInvalidRecord
// for an invalid bucket id; routing.ErrOperationFailed for an invalid column list, a metadata
// row violating the state invariants, a stored sort key or partition key that is not valid
// UTF-8 (when that column is requested), database errors and a cancelled or expired context
// (wrapping the context's error); routing.ErrUnavailable for pool and connection failures.
// No error carries keys, values or SQL.
func (s *Store) ScanRange(ctx context.Context, b routing.BucketID, req routing.BatchRequest) (routing.Route, routing.BatchReader, error) {
	const op = "scan bucket range"
	sc, alloc, err := req.Prepare(b)
	if err != nil {
		return routing.Route{}, nil, err
	}
	r := req.Range.Intersect(b.Range())
	start, end, _ := routing.MicroBounds(r, nil, false)
	if end.Before(start) {
		end = start
	}
	routeAt := start.Add(-time.Microsecond)
	if req.Desc {
		routeAt = end
	}
	formats := make(pgx.QueryResultFormats, scanRouteColumns, scanRouteColumns+3)
	for i := range formats {
		formats[i] = pgx.BinaryFormatCode
	}
	for _, on := range []bool{sc.Timestamp, sc.ID, sc.Value} {
		if on {
			formats = append(formats, pgx.BinaryFormatCode)
		}
	}
	args := []any{formats, b.TableID, b.PartitionKey, b.Key, start, end, routeAt}
	limited := req.Limit >= 0
	if limited {
		args = append(args, req.Limit)
	}
	query := sqlScan[b2i(req.Desc)][b2i(limited)][b2i(sc.Timestamp)][b2i(sc.ID)][b2i(sc.Value)]

	conn, err := s.acquire(ctx, op)
	if err != nil {
		return routing.Route{}, nil, err
	}
	qctx, cancel := context.WithCancel(ctx)
	rows, err := conn.Query(qctx, query, args...)
	if err != nil {
		rows.Close()
		cancel()
		conn.Release()
		return routing.Route{}, nil, s.classify(op, err)
	}
	sr := &scanReader{s: s, ctx: qctx, cancel: cancel, conn: conn, rows: rows, remaining: -1,
		stats: routing.StatsFrom(ctx)}
	if limited {
		sr.remaining = req.Limit
	}
	route, err := sr.readRoute()
	if err != nil {
		sr.stop()
		return routing.Route{}, nil, err
	}
	if route.State == routing.StateArchived {
		if err := routing.EndArchivedScan(rows, sr.stop, sr.classify); err != nil {
			return routing.Route{}, nil, err
		}
		return route, nil, nil
	}
	if err := sr.bindColumns(sc); err != nil {
		sr.stop()
		return routing.Route{}, nil, err
	}
	sr.Init(sc, alloc, b.PartitionKey, req.Limit, sr.stop)
	return route, sr, nil
}

// scanReader is the routing.BatchReader of ScanRange over one open pgx result.
type scanReader struct {
	routing.ScanReaderState
	s *Store
	// ctx is the statement's context, a child of ScanRange's: the reader's Next has no context
	// of its own, so the reader keeps the one its statement runs under (as pgx.Rows does) to
	// check it between rows; cancel ends it.
	ctx    context.Context
	cancel context.CancelFunc
	conn   *pgxpool.Conn // nil once returned to the pool
	rows   pgx.Rows
	stats  *routing.ReadStats

	// Positions of the data columns in a row's raw values (-1: not selected) and whether they
	// arrive in binary format.
	tsCol, idCol, valueCol int
	tsBinary, bytesBinary  bool
	scratchTime            time.Time
	scratchID, scratchVal  []byte

	remaining int64 // rows the LIMIT still allows, -1 without a limit
	appended  int64 // data rows appended to batches
	wireBytes int64 // their selected bytes, for the drain estimate
	// id and value are the current row's selected bytes (valid until the next row).
	id, value []byte
	routing.ScanLoop
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
	var text *string
	dest := make([]any, len(r.rows.FieldDescriptions()))
	dest[0] = &text
	if err := r.rows.Scan(dest...); err != nil {
		return routing.Route{}, r.s.classify(op, err)
	}
	if text == nil {
		return routing.Route{}, fmt.Errorf("%w: %s: no route row", routing.ErrOperationFailed, op)
	}
	return parseRoute(*text)
}

// bindColumns locates the selected data columns and checks their types and formats.
func (r *scanReader) bindColumns(sc routing.ColumnSet) error {
	fds := r.rows.FieldDescriptions()
	r.tsCol, r.idCol, r.valueCol = -1, -1, -1
	next := scanRouteColumns
	take := func(on bool, oid uint32, pos *int) error {
		if !on {
			return nil
		}
		if next >= len(fds) || fds[next].DataTypeOID != oid {
			return fmt.Errorf("%w: scan bucket range: unexpected result columns", routing.ErrOperationFailed)
		}
		*pos = next
		next++
		return nil
	}
	if err := errors.Join(take(sc.Timestamp, pgtype.TimestamptzOID, &r.tsCol),
		take(sc.ID, pgtype.ByteaOID, &r.idCol), take(sc.Value, pgtype.ByteaOID, &r.valueCol)); err != nil {
		return err
	}
	if next != len(fds) {
		return fmt.Errorf("%w: scan bucket range: unexpected result columns", routing.ErrOperationFailed)
	}
	r.tsBinary, r.bytesBinary = true, true
	for i := scanRouteColumns; i < len(fds); i++ {
		if fds[i].Format != pgx.BinaryFormatCode {
			// Only when the connection is configured for the simple protocol (or exec mode),
			// which ignores requested result formats: decode the text format through pgx.
			if i == r.tsCol {
				r.tsBinary = false
			} else {
				r.bytesBinary = false
			}
		}
	}
	return nil
}

// Next reads the next batch: rows until the batch is full or the result ends.
func (r *scanReader) Next() bool {
	r.DropCurrent()
	if r.rows == nil {
		return false
	}
	return r.Fill(r.ctx, &r.ScanReaderState, r.rows, r.stats, r.classify, r.decodeRow, r.appendRow)
}

func (r *scanReader) classify(err error) error { return r.s.classify("scan bucket range", err) }

// decodeRow checks a new row and decodes its selected id and value bytes.
func (r *scanReader) decodeRow() error {
	raw := r.rows.RawValues()
	if raw[0] != nil {
		return fmt.Errorf("%w: scan bucket range: second route row", routing.ErrOperationFailed)
	}
	r.id, r.value = nil, nil
	var err error
	if r.idCol >= 0 {
		if r.id, err = r.bytesValue(raw[r.idCol], &r.scratchID); err != nil {
			return err
		}
	}
	if r.valueCol >= 0 {
		if r.value, err = r.bytesValue(raw[r.valueCol], &r.scratchVal); err != nil {
			return err
		}
	}
	return nil
}

// appendRow appends the decoded row to the batch unless it is full.
func (r *scanReader) appendRow() (bool, error) {
	size := r.BB.RowBytes(len(r.id), len(r.value))
	if r.BB.Full(size) {
		return true, nil
	}
	var nanos int64
	if r.tsCol >= 0 {
		var err error
		if nanos, err = r.timeValue(r.rows.RawValues()[r.tsCol]); err != nil {
			return false, err
		}
	}
	if err := r.BB.Append(nanos, r.id, r.value, size); err != nil {
		return false, err
	}
	r.appended++
	r.wireBytes += int64(size) + 8*int64(b2i(r.tsCol >= 0))
	if r.remaining > 0 {
		r.remaining--
	}
	return false, nil
}

// timeValue decodes a TIMESTAMPTZ into nanoseconds since the Unix epoch.
func (r *scanReader) timeValue(raw []byte) (int64, error) {
	const op = "scan bucket range"
	var us int64
	if r.tsBinary {
		if len(raw) != 8 {
			return 0, fmt.Errorf("%w: %s: malformed event time", routing.ErrOperationFailed, op)
		}
		us = int64(binary.BigEndian.Uint64(raw))
		if us > routing.MaxNanoMicros-pgEpochMicros || us < routing.MinNanoMicros-pgEpochMicros {
			return 0, errTimeRange
		}
		us += pgEpochMicros
	} else {
		m := r.rows.TypeMap()
		if err := m.Scan(pgtype.TimestamptzOID, pgx.TextFormatCode, raw, &r.scratchTime); err != nil {
			return 0, fmt.Errorf("%w: %s: malformed event time", routing.ErrOperationFailed, op)
		}
		us = r.scratchTime.UnixMicro()
		if us > routing.MaxNanoMicros || us < routing.MinNanoMicros {
			return 0, errTimeRange
		}
	}
	return us * 1000, nil
}

// bytesValue returns a BYTEA's bytes: the raw value in binary format, else decoded into
// scratch.
func (r *scanReader) bytesValue(raw []byte, scratch *[]byte) ([]byte, error) {
	if r.bytesBinary {
		return raw, nil
	}
	if err := r.rows.TypeMap().Scan(pgtype.ByteaOID, pgx.TextFormatCode, raw, scratch); err != nil {
		return nil, fmt.Errorf("%w: scan bucket range: malformed bytes", routing.ErrOperationFailed)
	}
	return *scratch, nil
}

// drainable reports whether the rows left are few enough to read and discard (see
// drainBytes).
func (r *scanReader) drainable() bool {
	if r.remaining < 0 {
		return false
	}
	perRow := int64(drainRowGuess)
	if r.appended > 0 {
		perRow = r.wireBytes/r.appended + 32 // and the row's framing
	}
	return r.remaining <= drainBytes/perRow
}

// stop ends the statement and returns the connection (see drainBytes); it is idempotent.
func (r *scanReader) stop() {
	if r.rows == nil {
		return
	}
	if !r.drainable() {
		r.cancel() // rows not read to the end are dropped with the connection
	}
	r.rows.Close()
	r.rows = nil
	r.cancel()
	r.conn.Release()
	r.conn = nil
}
