package cockroach

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/flightsrv/flightsrv/internal/panics"
	"github.com/flightsrv/flightsrv/routing"
)

// ingestBodyTimeout bounds the fenced transaction of one write request, which moves every
// staged row and, pipelined, lasts as long as the client's stream (a million rows take
// seconds; the caller's context, --query-timeout, bounds it too).
const ingestBodyTimeout = time.Hour

// stagingColumns are the staging table's columns COPY fills.
var stagingColumns = []string{"partition_key", "bucket_key", "event_time", "sort_key", "value", "pos"}

// recordColumns are the columns of pulpitum_v4_records a pipelined request's COPY fills.
var recordColumns = []string{"table_id", "partition_key", "bucket_key", "event_time", "sort_key", "value"}

// stagingTable is the session-local temporary table a write request is copied into before the
// fenced transaction moves it into pulpitum_v4_records (AppendStream on CockroachDB), and where
// a refused request's records are copied to find its first duplicate (findDuplicate).
const stagingTable = "flightsrv_ingest_staging"

var (
	sqlCreateStaging = register("CREATE flightsrv_ingest_staging", "CREATE", stagingTable,
		`DROP TABLE IF EXISTS pg_temp.`+stagingTable+`;
CREATE TEMPORARY TABLE `+stagingTable+` (
	partition_key BYTEA NOT NULL,
	bucket_key TEXT NOT NULL,
	event_time TIMESTAMPTZ NOT NULL,
	sort_key BYTEA NOT NULL,
	value BYTEA NOT NULL,
	pos INT8 NOT NULL
)`)
	sqlDropStaging = register("DROP flightsrv_ingest_staging", "DROP", stagingTable,
		`DROP TABLE IF EXISTS pg_temp.`+stagingTable)
	// sqlLockRecords takes, at the start of a pipelined request's transaction, the lock its
	// COPY into pulpitum_v4_records takes anyway: no trigger or rule can be added to the table
	// (CREATE TRIGGER and CREATE RULE wait for it) between sqlFenceOnlyTriggers and the commit.
	sqlLockRecords = register("LOCK pulpitum_v4_records", "LOCK", RecordsTable,
		`LOCK TABLE pulpitum_v4_records IN ROW EXCLUSIVE MODE`)
	// sqlFenceOnlyTriggers says whether the only triggers of pulpitum_v4_records are its
	// foreign key's to the bucket metadata (pulpitum_v4_records_bucket_fk, the schema's one
	// constraint trigger) and it has no rule, with whether the role is a superuser and the
	// server's version number (omitFKCheck).
	sqlFenceOnlyTriggers = register("SELECT pg_trigger pulpitum_v4_records", "SELECT", "pg_trigger",
		`SELECT NOT EXISTS (
	SELECT 1 FROM pg_trigger AS t
	WHERE t.tgrelid = 'pulpitum_v4_records'::regclass AND (NOT t.tgisinternal OR t.tgconstraint IS DISTINCT FROM (
		SELECT c.oid FROM pg_constraint AS c
		WHERE c.conrelid = 'pulpitum_v4_records'::regclass AND c.conname = 'pulpitum_v4_records_bucket_fk' AND c.contype = 'f'))
) AND NOT EXISTS (SELECT 1 FROM pg_rewrite AS r WHERE r.ev_class = 'pulpitum_v4_records'::regclass),
(SELECT rolsuper FROM pg_roles WHERE rolname = current_user),
current_setting('server_version_num')::INT`)
	// sqlMaySetReplicationRole says whether a role that is not a superuser was granted SET on
	// session_replication_role (PostgreSQL 15 and later).
	sqlMaySetReplicationRole = register("SELECT has_parameter_privilege", "SELECT", "",
		`SELECT has_parameter_privilege('session_replication_role', 'SET')`)
	// sqlSkipTriggers and sqlFireTriggers bracket a pipelined request's COPY when the foreign
	// key's per-row check is omitted (omitFKCheck): for the rest of the transaction's
	// statements triggers fire as always.
	sqlSkipTriggers  = register("SET session_replication_role", "SET", "", `SET LOCAL session_replication_role = replica`)
	sqlFireTriggers  = register("SET session_replication_role", "SET", "", `SET LOCAL session_replication_role = origin`)
	sqlEnsureBuckets = register("INSERT pulpitum_v4_bucket_metadata", "INSERT", MetadataTable,
		`INSERT INTO pulpitum_v4_bucket_metadata
	(table_id, partition_key, bucket_key, bucket_strategy, bucket_start, bucket_end)
SELECT $1::TEXT, u.p, u.k, $2::TEXT, u.s, u.e
FROM unnest($3::BYTEA[], $4::TEXT[], $5::TIMESTAMPTZ[], $6::TIMESTAMPTZ[]) AS u (p, k, s, e)
ON CONFLICT (table_id, partition_key, bucket_key) DO NOTHING`)
	// sqlBucketStates reads the state of every bucket of the request and locks their metadata
	// rows (FOR SHARE): an archiver's claim (an UPDATE of the row) then waits for the request to
	// commit, and a claim that committed first makes this statement fail with 40001 (the
	// request is retried and sees the bucket archiving). Without the lock, PostgreSQL's
	// SERIALIZABLE does not order the request after a claim whose snapshot statement runs
	// outside a serializable transaction, and the request's rows could land after the
	// snapshot and be deleted with the bucket's hot rows (archive/archivefault
	// TestIngestRacesArchiver).
	sqlBucketStates = register("SELECT pulpitum_v4_bucket_metadata", "SELECT", MetadataTable,
		`SELECT m.state FROM pulpitum_v4_bucket_metadata AS m
JOIN unnest($2::BYTEA[], $3::TEXT[]) AS u (p, k) ON m.partition_key = u.p AND m.bucket_key = u.k
WHERE m.table_id = $1
ORDER BY m.partition_key, m.bucket_key
FOR SHARE OF m`)
	// sqlFirstDuplicate finds the first staged record (by its position in the request) whose
	// (partition, bucket, event_time, sort_key) is stored already or repeats an earlier staged
	// record's: the position a refused request names (DuplicateRecordError).
	sqlFirstDuplicate = register("SELECT flightsrv_ingest_staging duplicate", "SELECT", stagingTable,
		`SELECT min(pos) FROM (
	SELECT s.pos FROM `+stagingTable+` AS s
	JOIN pulpitum_v4_records AS r ON r.table_id = $1 AND r.partition_key = s.partition_key
		AND r.bucket_key = s.bucket_key AND r.event_time = s.event_time AND r.sort_key = s.sort_key
	UNION ALL
	SELECT d.pos FROM (
		SELECT pos, row_number() OVER (PARTITION BY partition_key, bucket_key, event_time, sort_key ORDER BY pos) AS k
		FROM `+stagingTable+`) AS d
	WHERE d.k > 1
) AS x`)
	// sqlInsertStaged moves the staged rows in the order of pulpitum_v4_records' primary key
	// (table_id is the request's one value; within a partition, bucket keys sort as their
	// times do, so event_time orders the buckets too and the sort compares no bucket key):
	// the primary key's B-tree is then filled from left to right, each leaf page once, and the
	// heap holds each bucket's rows together. On PostgreSQL 15 with 1,000,000 rows this took
	// 17% less of the backend's CPU than the staging table's order, the sort included (9.0–9.2
	// s against 10.8–11.2 s), and left an index of half the size (82 MB instead of 147 MB:
	// pages split at their right end are left full). The sort runs in the default work_mem:
	// PostgreSQL's external merge of 4 MB runs took 1.1 s for the 1M rows where a 64 MB
	// work_mem took 1.75 s, and sorting by bucket_key too 2.4 s. The foreign key's per-row
	// check (about 5 µs a row) is unchanged. docs/architecture.md (the write path) has the
	// figures.
	sqlInsertStaged = register("APPEND durable bucket", "APPEND", RecordsTable,
		`INSERT INTO pulpitum_v4_records (table_id, partition_key, bucket_key, event_time, sort_key, value)
SELECT $1::TEXT, partition_key, bucket_key, event_time, sort_key, value FROM `+stagingTable+`
ORDER BY partition_key, event_time, sort_key`)
)

// ingestChunkRows is the records of a pipelined write request the spool sorts at a time
// (AppendStream on PostgreSQL; fewer when they exceed spoolChunkBytes), its chunks, whose
// buckets the transaction fences as they come and which the request's one COPY merges: large
// enough that a request of millions of records merges few chunks (3,000,000 records: 46,
// each read back through a buffer of 64 KiB), small enough that the chunk the spool sorts in
// memory is small and the first one is fenced soon. A variable for tests.
var ingestChunkRows = 65536

// AppendStream writes a whole write request behind the write fence (routing.HotStore;
// docs/pulpitum-v4.md §3.1) on one pooled connection in one SERIALIZABLE transaction retried
// whole on SQLSTATE 40001 that checks the strategy (routing.ErrStrategyMismatch), creates the
// metadata row of every bucket the request touches, locks it and refuses the request when one
// of them is not hot (routing.ErrBucketReadOnly), and writes the records in the primary key's
// order; a unique violation refuses the request with a routing.DuplicateRecordError naming
// the first duplicate's position in the request, found after the rollback by staging the
// records in a session-local temporary table (sqlFirstDuplicate).
//
// On PostgreSQL the request is pipelined: src is read into a spool (spool.go) by its own
// goroutine, which sorts every ingestChunkRows records into the primary key's order, while the
// transaction fences each such chunk as soon as the spool has it — the metadata rows of its
// new buckets created, locked FOR SHARE and checked hot — so a refused bucket ends the request
// while the client sends, and the request's buckets stay locked (an archiver's claim waits)
// from then to the commit. Once the source has ended, one COPY (pgx CopyFrom) writes the
// chunks merged into the primary key's order of the whole request (spool.merged) straight
// into pulpitum_v4_records: the B-tree is filled in one pass, which cost PostgreSQL about 1.8
// µs a record where a COPY per chunk cost 2.8–3.4 (docs/architecture.md, "The write path").
// A retry fences and copies the spooled records again. On CockroachDB the whole request is
// staged first (COPY into a temporary table outside any transaction: no lock is held while
// the client sends) and moved after its end with one INSERT … SELECT in the primary key's
// order (sqlInsertStaged); CockroachDB also needs the session setting
// experimental_enable_temp_tables for temporary tables, which AppendStream sets for its
// connection.
//
// A staging table is dropped at the end (the connection is closed if that fails), so nothing
// of a failed or cancelled request stays anywhere; a process killed mid-request leaves at most
// its session's temporary table, which the database drops with the session, and its
// transaction, which it rolls back. Memory: a batch of src, and on PostgreSQL the spool's
// open chunk (at most ingestChunkRows records and spoolChunkBytes of them), its first chunk
// (ingestChunkRows/8 records) and, for the merge, a read buffer a chunk (spoolMergeRead bytes
// in all, at most 64 KiB each). Errors as for Append; src's errors unchanged.
func (s *Store) AppendStream(ctx context.Context, tableID string, strategy routing.Strategy, src routing.IngestSource) (int64, error) {
	const op = "ingest"
	conn, err := s.acquire(ctx, op)
	if err != nil {
		return 0, err
	}
	defer conn.Release()
	if s.product != "CockroachDB" {
		return s.appendPipelined(ctx, conn, tableID, strategy, src)
	}
	if _, err := conn.Exec(ctx, "SET experimental_enable_temp_tables = 'on'"); err != nil {
		return 0, s.classify(op, err)
	}
	if _, err := conn.Exec(ctx, sqlCreateStaging); err != nil {
		return 0, s.classify(op, err)
	}
	defer dropStaging(ctx, conn)
	return s.appendStaged(ctx, conn, tableID, strategy, src)
}

// appendPipelined is AppendStream's pipelined request (PostgreSQL) on conn.
func (s *Store) appendPipelined(ctx context.Context, conn *pgxpool.Conn, tableID string, strategy routing.Strategy, src routing.IngestSource) (int64, error) {
	const op = "ingest"
	sp := newSpool(tableID, strategy, ingestChunkRows)
	fctx, stop := context.WithCancel(ctx)
	go sp.fill(ctx, fctx, src)
	defer func() {
		stop()
		sp.wait()
		sp.close()
	}()
	// The transaction begins once the first chunk is spooled (or the source has ended): no
	// lock is held while a client is slow to start, and a request without records writes
	// nothing.
	if _, _, err := sp.chunk(ctx, 0); err != nil {
		if errors.Is(err, io.EOF) {
			return 0, nil
		}
		return 0, err
	}
	var (
		stored int64
		failed = -1 // the last chunk the COPY that met a duplicate held
	)
	err := s.inTxOn(ctx, conn, op, ingestBodyTimeout, func(ctx context.Context, tx pgx.Tx) error {
		stored, failed = 0, -1
		var conflict bool
		if err := tx.QueryRow(ctx, sqlStrategyConflict, tableID, strategy.String()).Scan(&conflict); err != nil {
			return err
		}
		if conflict {
			return keep(routing.ErrStrategyMismatch)
		}
		skipFK, err := omitFKCheck(ctx, tx)
		if err != nil {
			return err
		}
		locked := 0 // buckets whose metadata rows this attempt created and locked
		var (
			chunks []spoolChunk
			all    []*routing.BucketID // the buckets of the chunks so far, by index
		)
		for i := 0; ; i++ {
			c, buckets, err := sp.chunk(ctx, i)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				if ctx.Err() != nil {
					return err
				}
				return keep(err) // the source's error, unchanged
			}
			// The fence before the rows: every bucket of the chunk has its metadata row,
			// locked for the transaction and hot, before the records are copied.
			if len(buckets) > locked {
				if err := ensureHot(ctx, tx, tableID, strategy, buckets[locked:]); err != nil {
					return err
				}
				locked = len(buckets)
			}
			chunks, all = append(chunks, c), buckets
		}
		if skipFK {
			if _, err := tx.Exec(ctx, sqlSkipTriggers); err != nil {
				return err
			}
		}
		rows := sp.merged(chunks, all, false)
		n, err := tx.CopyFrom(ctx, pgx.Identifier{RecordsTable}, recordColumns, rows)
		if err == nil && skipFK {
			_, err = tx.Exec(ctx, sqlFireTriggers)
		}
		if err != nil {
			if rows.err != nil {
				return keep(rows.err)
			}
			if isUniqueViolation(err) {
				failed = len(chunks) - 1
				return keep(routing.ErrDuplicateRecord)
			}
			return err
		}
		stored = n
		return nil
	})
	if err != nil {
		stop()
		sp.wait()
		if serr := sp.sourceErr(); serr != nil {
			return 0, serr // the client's stream failed first (or the context ended)
		}
	}
	if errors.Is(err, routing.ErrDuplicateRecord) && failed >= 0 {
		// The transaction rolled back: stage the request's records (those of the chunks its
		// COPY held) in a temporary table to find the first duplicate.
		if pos, ok := s.findDuplicate(ctx, conn, tableID, sp, failed); ok {
			return 0, &routing.DuplicateRecordError{Record: pos}
		}
	}
	if err != nil {
		return 0, err
	}
	return stored, nil
}

// omitFKCheck locks pulpitum_v4_records for the pipelined request's transaction tx
// (sqlLockRecords) and says whether its COPY may omit the foreign key's per-row check, which
// costs PostgreSQL about three quarters of a record's write (docs/architecture.md, "The write
// path"). The check repeats the fence: before the records are copied, every bucket of them
// has its metadata row, created in tx if need be and locked FOR SHARE by tx (a stronger lock
// than the check's FOR KEY SHARE) until the commit, and each record's table id, partition key
// and bucket key are those of its bucket (spool.fill). So the COPY may run with
// session_replication_role = replica, which turns off the table's triggers, when those
// triggers are the foreign key's only and the table has no rule (sqlFenceOnlyTriggers: a
// deployment's own triggers always fire), and the role may set it (a superuser, or SET
// granted on the parameter, PostgreSQL 15 and later); otherwise false and the check runs.
// Unique, NOT NULL and CHECK constraints are not triggers and hold either way.
func omitFKCheck(ctx context.Context, tx pgx.Tx) (bool, error) {
	if _, err := tx.Exec(ctx, sqlLockRecords); err != nil {
		return false, err
	}
	var only, super bool
	var version int
	if err := tx.QueryRow(ctx, sqlFenceOnlyTriggers).Scan(&only, &super, &version); err != nil {
		return false, err
	}
	if !only || super || version < 150000 {
		return only && super, nil
	}
	var granted bool
	if err := tx.QueryRow(ctx, sqlMaySetReplicationRole).Scan(&granted); err != nil {
		return false, err
	}
	return granted, nil
}

// findDuplicate names the first duplicate of a pipelined request whose COPY of chunks 0 to
// last was refused: it copies those spooled chunks into a staging table of conn outside any
// transaction (dropped again) and asks firstDuplicate. ok is false when it cannot say.
func (s *Store) findDuplicate(ctx context.Context, conn *pgxpool.Conn, tableID string, sp *spool, last int) (pos int64, ok bool) {
	if _, err := conn.Exec(ctx, sqlCreateStaging); err != nil {
		return 0, false
	}
	defer dropStaging(ctx, conn)
	for i := 0; i <= last; i++ {
		c, buckets, err := sp.chunk(ctx, i)
		if err != nil {
			return 0, false
		}
		if _, err := conn.CopyFrom(ctx, pgx.Identifier{stagingTable}, stagingColumns, sp.rows(c, buckets, true)); err != nil {
			return 0, false
		}
	}
	return firstDuplicate(ctx, conn, tableID)
}

// appendStaged is AppendStream's staged request (CockroachDB) on conn, whose staging table
// exists and is empty: src is copied whole into it, then moved in one transaction.
func (s *Store) appendStaged(ctx context.Context, conn *pgxpool.Conn, tableID string, strategy routing.Strategy, src routing.IngestSource) (int64, error) {
	const op = "ingest"
	cs := &copySource{ctx: ctx, src: src, buckets: map[*routing.BucketID]struct{}{}}
	n, err := conn.CopyFrom(ctx, pgx.Identifier{stagingTable}, stagingColumns, cs)
	if cs.err != nil {
		return 0, cs.err
	}
	if err != nil {
		return 0, s.classify(op, err)
	}
	if n == 0 {
		return 0, nil
	}
	for _, b := range cs.order {
		if b.TableID != tableID || b.Strategy != strategy {
			return 0, fmt.Errorf("%w: a record's bucket is not of the request's table", routing.ErrInvalidRecord)
		}
	}
	var stored int64
	err = s.inTxOn(ctx, conn, op, ingestBodyTimeout, func(ctx context.Context, tx pgx.Tx) error {
		var conflict bool
		if err := tx.QueryRow(ctx, sqlStrategyConflict, tableID, strategy.String()).Scan(&conflict); err != nil {
			return err
		}
		if conflict {
			return keep(routing.ErrStrategyMismatch)
		}
		if err := ensureHot(ctx, tx, tableID, strategy, cs.order); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, sqlInsertStaged, tableID)
		if err != nil {
			if isUniqueViolation(err) {
				return keep(routing.ErrDuplicateRecord)
			}
			return err
		}
		stored = tag.RowsAffected()
		return nil
	})
	if errors.Is(err, routing.ErrDuplicateRecord) {
		if pos, ok := firstDuplicate(ctx, conn, tableID); ok {
			return 0, &routing.DuplicateRecordError{Record: pos}
		}
	}
	if err != nil {
		return 0, err
	}
	return stored, nil
}

// ensureHot creates the metadata rows of buckets (of table tableID and strategy) where absent
// and locks them for the transaction (checkHot): routing.ErrBucketReadOnly (kept) when one of
// them is not hot.
func ensureHot(ctx context.Context, tx pgx.Tx, tableID string, strategy routing.Strategy, buckets []*routing.BucketID) error {
	parts, keys := make([][]byte, len(buckets)), make([]string, len(buckets))
	starts, ends := make([]time.Time, len(buckets)), make([]time.Time, len(buckets))
	for i, b := range buckets {
		parts[i], keys[i], starts[i], ends[i] = b.PartitionKey, b.Key, b.Start, b.End
	}
	if _, err := tx.Exec(ctx, sqlEnsureBuckets, tableID, strategy.String(), parts, keys, starts, ends); err != nil {
		return err
	}
	return checkHot(ctx, tx, tableID, parts, keys)
}

// firstDuplicate returns the position of the first staged record of a request refused as a
// duplicate (sqlFirstDuplicate), after its transaction rolled back; ok is false when it
// cannot say (the query failed, or the duplicate is gone: a concurrent request's rows
// rolled back since).
func firstDuplicate(ctx context.Context, conn *pgxpool.Conn, tableID string) (int64, bool) {
	var pos *int64
	if err := conn.QueryRow(ctx, sqlFirstDuplicate, tableID).Scan(&pos); err != nil || pos == nil {
		return 0, false
	}
	return *pos, true
}

// checkHot locks the metadata rows of the buckets (table tableID, parts[i], keys[i]) for the
// transaction (sqlBucketStates) and returns routing.ErrBucketReadOnly (kept: not retried) when
// one of them is not hot.
func checkHot(ctx context.Context, tx pgx.Tx, tableID string, parts [][]byte, keys []string) error {
	rows, err := tx.Query(ctx, sqlBucketStates, tableID, parts, keys)
	if err != nil {
		return err
	}
	defer rows.Close()
	notHot := ""
	for rows.Next() {
		var state string
		if err := rows.Scan(&state); err != nil {
			return err
		}
		if state != routing.StateHot.String() && notHot == "" {
			notHot = state
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if notHot != "" {
		return keep(fmt.Errorf("%w (state %s)", routing.ErrBucketReadOnly, notHot))
	}
	return nil
}

// dropStaging drops the staging table of conn, or closes conn when it cannot (its session's
// temporary tables then go with it).
func dropStaging(ctx context.Context, conn *pgxpool.Conn) {
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), rollbackTimeout)
	defer cancel()
	if _, err := conn.Exec(dctx, sqlDropStaging); err != nil {
		_ = conn.Conn().Close(dctx)
	}
}

// copySource feeds an IngestSource's records to CopyFrom and notes the buckets they touch in
// first-seen order. An error of the source is kept in err (CopyFrom's own error wraps it).
type copySource struct {
	ctx     context.Context
	src     routing.IngestSource
	batch   routing.IngestBatch
	i       int
	row     [6]any
	pos     int64 // the next record's position in the request, from 0
	buckets map[*routing.BucketID]struct{}
	order   []*routing.BucketID
	err     error
}

// Next runs on pgx's copy goroutine: a panic of the source is recovered into err there, where
// no caller's recover would reach it.
func (c *copySource) Next() (more bool) {
	defer func() {
		if p := recover(); p != nil {
			c.err, more = panics.FromValue("ingest source", p), false
		}
	}()
	c.i++
	for c.i >= len(c.batch.Records) {
		b, err := c.src.Next(c.ctx)
		if err != nil {
			if !errors.Is(err, io.EOF) {
				c.err = err
			}
			return false
		}
		c.batch, c.i = b, 0
	}
	return true
}

func (c *copySource) Values() ([]any, error) {
	r, b := &c.batch.Records[c.i], c.batch.Buckets[c.i]
	if _, ok := c.buckets[b]; !ok {
		c.buckets[b] = struct{}{}
		c.order = append(c.order, b)
	}
	value := r.Value
	if value == nil {
		value = []byte{}
	}
	c.row = [6]any{r.PartitionKey, b.Key, r.EventTime, r.SortKey, value, c.pos}
	c.pos++
	return c.row[:], nil
}

func (c *copySource) Err() error { return c.err }
