package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/flightsrv/flightsrv/routing"
)

// Owner condition (?4 generation, ?5 token, ?6 the store clock's now) and retry-due condition
// (?6 now) of the archival statements.
const (
	whereBucket = `table_id = ?1 AND partition_key = ?2 AND bucket_key = ?3`
	andOwner    = ` AND generation = ?4 AND archive_owner_token = ?5 AND archive_owner_expires_at > ?6`
)

// Append inserts recs into bucket b behind the write fence, in one IMMEDIATE transaction: a
// metadata row of b's table with another strategy fails with routing.ErrStrategyMismatch;
// b's metadata row is created (hot) if absent; a bucket that is not hot fails with
// routing.ErrBucketReadOnly; then the records are inserted, and an existing (or repeated)
// (event_time, sort_key) fails with routing.ErrDuplicateRecord. Nothing is written on error.
// Event times are truncated to microseconds (UTC). Every record must carry b's partition key,
// a non-empty sort key and an event time inside b (routing.ErrInvalidRecord otherwise); an
// empty recs is a no-op. Other errors as for ScanRange.
func (s *Store) Append(ctx context.Context, b routing.BucketID, recs []routing.Record) error {
	const op = "append"
	if err := b.Validate(); err != nil {
		return err
	}
	if len(recs) == 0 {
		return nil
	}
	if err := routing.CheckRecords(b, recs); err != nil {
		return err
	}
	return s.inTx(ctx, op, func(ctx context.Context, tx *sql.Tx) error {
		if err := s.fenceTable(ctx, tx, b.TableID, b.Strategy); err != nil {
			return err
		}
		if err := s.fenceBucket(ctx, tx, b); err != nil {
			return err
		}
		stmt, err := tx.PrepareContext(ctx, sqlInsertRecord)
		if err != nil {
			return err
		}
		defer stmt.Close()
		for i := range recs {
			if i%1024 == 0 && ctx.Err() != nil {
				return ctx.Err()
			}
			if err := s.insertRecord(ctx, stmt, b, &recs[i]); err != nil {
				return err
			}
		}
		return nil
	})
}

const sqlInsertRecord = `INSERT INTO pulpitum_v4_records
	(table_id, partition_key, bucket_key, event_time, sort_key, value) VALUES (?1, ?2, ?3, ?4, ?5, ?6)`

// fenceTable is the write fence's first step: a metadata row of tableID with another strategy
// refuses the write (routing.ErrStrategyMismatch, kept).
func (s *Store) fenceTable(ctx context.Context, tx *sql.Tx, tableID string, strategy routing.Strategy) error {
	var conflict bool
	if err := s.queryRow(ctx, tx, `SELECT EXISTS (
	SELECT 1 FROM pulpitum_v4_bucket_metadata WHERE table_id = ?1 AND bucket_strategy <> ?2
)`, []any{tableID, strategy.String()}, &conflict); err != nil {
		return err
	}
	if conflict {
		return keep(routing.ErrStrategyMismatch)
	}
	return nil
}

// fenceBucket creates b's metadata row if absent and refuses a bucket that is not hot
// (routing.ErrBucketReadOnly, kept).
func (s *Store) fenceBucket(ctx context.Context, tx *sql.Tx, b routing.BucketID) error {
	if _, err := s.exec(ctx, tx, `INSERT INTO pulpitum_v4_bucket_metadata
	(table_id, partition_key, bucket_key, bucket_strategy, bucket_start, bucket_end)
VALUES (?1, ?2, ?3, ?4, ?5, ?6)
ON CONFLICT (table_id, partition_key, bucket_key) DO NOTHING`,
		b.TableID, b.PartitionKey, b.Key, b.Strategy.String(), micros(b.Start), micros(b.End)); err != nil {
		return err
	}
	var state string
	if err := s.queryRow(ctx, tx, `SELECT state FROM pulpitum_v4_bucket_metadata WHERE `+whereBucket,
		[]any{b.TableID, b.PartitionKey, b.Key}, &state); err != nil {
		return err
	}
	if state != routing.StateHot.String() {
		return keep(fmt.Errorf("%w (state %s)", routing.ErrBucketReadOnly, state))
	}
	return nil
}

// insertRecord inserts r into bucket b with the prepared sqlInsertRecord (a primary-key
// violation is routing.ErrDuplicateRecord, kept).
func (s *Store) insertRecord(ctx context.Context, stmt *sql.Stmt, b routing.BucketID, r *routing.Record) error {
	value := r.Value
	if value == nil {
		value = []byte{}
	}
	s.count(ctx)
	if _, err := stmt.ExecContext(ctx, b.TableID, b.PartitionKey, b.Key, micros(routing.NormalizeTime(r.EventTime)), r.SortKey, value); err != nil {
		if isPrimaryKeyViolation(err) {
			return keep(routing.ErrDuplicateRecord)
		}
		return err
	}
	return nil
}

// Discover lists archive work: first cleanup work (archived buckets whose hot rows remain,
// retry time due, no unexpired lease), then, with the remaining budget, cut-over work
// (buckets ending at or before eligibleBefore, retry time due, hot or archiving with an
// expired lease), each ordered by bucket_end, table_id, partition_key, bucket_key. At most
// limit items; none when limit <= 0. "Due" and "expired" are judged by the store's clock.
// Errors as for ScanRange.
func (s *Store) Discover(ctx context.Context, eligibleBefore time.Time, limit int) ([]routing.ArchiveWork, error) {
	const op = "discover archive work"
	if limit <= 0 {
		return nil, nil
	}
	now := micros(s.clock())
	out, err := s.discover(ctx, routing.WorkCleanup, `SELECT table_id, partition_key, bucket_key, bucket_strategy, bucket_start, bucket_end
FROM pulpitum_v4_bucket_metadata
WHERE state = 'archived' AND hot_deleted = 0
	AND (archive_next_attempt_at IS NULL OR archive_next_attempt_at <= ?1)
	AND (archive_owner_expires_at IS NULL OR archive_owner_expires_at <= ?1)
ORDER BY bucket_end, table_id, partition_key, bucket_key
LIMIT ?2`, now, int64(limit))
	if err != nil {
		return nil, s.classify(op, err)
	}
	if rest := limit - len(out); rest > 0 {
		more, err := s.discover(ctx, routing.WorkCutover, `SELECT table_id, partition_key, bucket_key, bucket_strategy, bucket_start, bucket_end
FROM pulpitum_v4_bucket_metadata
WHERE bucket_end <= ?3
	AND (archive_next_attempt_at IS NULL OR archive_next_attempt_at <= ?1)
	AND (state = 'hot' OR (state = 'archiving' AND archive_owner_expires_at <= ?1))
ORDER BY bucket_end, table_id, partition_key, bucket_key
LIMIT ?2`, now, int64(rest), micros(eligibleBefore))
		if err != nil {
			return nil, s.classify(op, err)
		}
		out = append(out, more...)
	}
	return out, nil
}

func (s *Store) discover(ctx context.Context, kind routing.WorkKind, query string, args ...any) ([]routing.ArchiveWork, error) {
	s.count(ctx)
	rows, err := s.r.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []routing.ArchiveWork
	for rows.Next() {
		var (
			w          routing.ArchiveWork
			strategy   string
			start, end int64
		)
		if err := rows.Scan(&w.Bucket.TableID, &w.Bucket.PartitionKey, &w.Bucket.Key, &strategy, &start, &end); err != nil {
			return nil, err
		}
		st, err := routing.ParseStrategy(strategy)
		if err != nil {
			return nil, keep(fmt.Errorf("%w: unknown bucket strategy", routing.ErrOperationFailed))
		}
		w.Kind, w.Bucket.Strategy, w.Bucket.Start, w.Bucket.End = kind, st, fromMicros(start), fromMicros(end)
		out = append(out, w)
	}
	return out, rows.Err()
}

// ClaimArchive moves b to archiving when its retry time is due and it is hot or archiving
// with an expired lease: generation+1, a new UUIDv4 token, lease expiry = clock + lease (a
// non-positive lease yields an already expired session), retry time and object key cleared.
// It returns nil, nil when b cannot be claimed. Errors as for ScanRange.
func (s *Store) ClaimArchive(ctx context.Context, b routing.BucketID, lease time.Duration) (*routing.ArchiveSession, error) {
	return s.claim(ctx, "claim archive", `UPDATE pulpitum_v4_bucket_metadata
SET state = 'archiving', generation = generation + 1,
	archive_owner_token = ?4, archive_owner_expires_at = ?5,
	archive_next_attempt_at = NULL, archive_object_key = NULL, hot_deleted = 0
WHERE `+whereBucket+`
	AND (archive_next_attempt_at IS NULL OR archive_next_attempt_at <= ?6)
	AND (state = 'hot' OR (state = 'archiving' AND archive_owner_expires_at <= ?6))
RETURNING generation`, b, lease)
}

// ClaimCleanup claims archived bucket b whose hot rows are not deleted, when its retry time is
// due and no lease is live: generation+1, new token and expiry, retry time cleared. It returns
// nil, nil when b cannot be claimed. Errors as for ScanRange.
func (s *Store) ClaimCleanup(ctx context.Context, b routing.BucketID, lease time.Duration) (*routing.ArchiveSession, error) {
	return s.claim(ctx, "claim cleanup", `UPDATE pulpitum_v4_bucket_metadata
SET generation = generation + 1,
	archive_owner_token = ?4, archive_owner_expires_at = ?5, archive_next_attempt_at = NULL
WHERE `+whereBucket+`
	AND state = 'archived' AND hot_deleted = 0
	AND (archive_next_attempt_at IS NULL OR archive_next_attempt_at <= ?6)
	AND (archive_owner_expires_at IS NULL OR archive_owner_expires_at <= ?6)
RETURNING generation`, b, lease)
}

func (s *Store) claim(ctx context.Context, op, query string, b routing.BucketID, lease time.Duration) (*routing.ArchiveSession, error) {
	return routing.Claim(b, func(token string) (gen int64, claimed bool, err error) {
		err = s.inTx(ctx, op, func(ctx context.Context, tx *sql.Tx) error {
			now := s.clock()
			claimed, err = routing.ClaimedRow(s.queryRow(ctx, tx, query, []any{b.TableID, b.PartitionKey, b.Key, token, micros(now.Add(lease)), micros(now)}, &gen), sql.ErrNoRows)
			return err
		})
		return gen, claimed, err
	})
}

// Renew sets the session's lease expiry to clock + lease while the session owns the bucket
// (archiving, or archived with hot rows remaining); otherwise routing.ErrStaleArchiveSession.
func (s *Store) Renew(ctx context.Context, sess *routing.ArchiveSession, lease time.Duration) error {
	return s.ownerUpdate(ctx, "renew archive lease", sess, `UPDATE pulpitum_v4_bucket_metadata
SET archive_owner_expires_at = ?7
WHERE `+whereBucket+andOwner+`
	AND (state = 'archiving' OR (state = 'archived' AND hot_deleted = 0))`, lease)
}

// Snapshot returns every record of the session's archiving bucket in (event_time, sort_key)
// order, reading the owner check and the rows in one read transaction (one snapshot), or
// routing.ErrStaleArchiveSession when the session no longer owns the bucket. The whole bucket
// is held in memory. Errors as for ScanRange.
func (s *Store) Snapshot(ctx context.Context, sess *routing.ArchiveSession) ([]routing.Record, error) {
	const op = "snapshot bucket"
	if err := sess.Validate(); err != nil {
		return nil, err
	}
	if s.closed.Load() {
		return nil, s.classify(op, errors.New("closed"))
	}
	b := sess.Bucket
	s.count(ctx)
	tx, err := s.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, s.classify(op, err)
	}
	defer func() { s.count(ctx); _ = tx.Rollback() }()
	var owned bool
	if err := s.queryRow(ctx, tx, `SELECT EXISTS (
	SELECT 1 FROM pulpitum_v4_bucket_metadata WHERE `+whereBucket+andOwner+` AND state = 'archiving'
)`, []any{b.TableID, b.PartitionKey, b.Key, sess.Generation, sess.Token, micros(s.clock())}, &owned); err != nil {
		return nil, s.classify(op, err)
	}
	if !owned {
		return nil, routing.ErrStaleArchiveSession
	}
	s.count(ctx)
	rows, err := tx.QueryContext(ctx, `SELECT event_time, sort_key, value FROM pulpitum_v4_records
WHERE `+whereBucket+`
ORDER BY event_time, sort_key`, b.TableID, b.PartitionKey, b.Key)
	if err != nil {
		return nil, s.classify(op, err)
	}
	defer rows.Close()
	var recs []routing.Record
	for rows.Next() {
		var (
			us      int64
			sk, val []byte
		)
		if err := rows.Scan(&us, &sk, &val); err != nil {
			return nil, s.classify(op, err)
		}
		if val == nil {
			val = []byte{}
		}
		recs = append(recs, routing.Record{EventTime: fromMicros(us), SortKey: sk, Value: val})
	}
	if err := rows.Err(); err != nil {
		return nil, s.classify(op, err)
	}
	routing.SetPartitionKeys(recs, b.PartitionKey)
	return recs, nil
}

// PublishArchive sets the session's archiving bucket archived with manifestKey, clearing
// hot_deleted: the read cut-over commit point. routing.ErrStaleArchiveSession when the session
// no longer owns an archiving bucket; an empty manifestKey is routing.ErrInvalidRecord.
func (s *Store) PublishArchive(ctx context.Context, sess *routing.ArchiveSession, manifestKey string) error {
	if manifestKey == "" {
		return fmt.Errorf("%w: empty manifest key", routing.ErrInvalidRecord)
	}
	return s.ownerUpdate(ctx, "publish archive", sess, `UPDATE pulpitum_v4_bucket_metadata
SET state = 'archived', archive_object_key = ?7, hot_deleted = 0
WHERE `+whereBucket+andOwner+` AND state = 'archiving'`, manifestKey)
}

// DeleteHotBucket deletes the hot rows of the session's archived bucket and sets hot_deleted,
// in one transaction: the DELETE is guarded by the owner condition, and when the UPDATE does
// not change exactly one row the transaction rolls back and routing.ErrStaleArchiveSession is
// returned.
func (s *Store) DeleteHotBucket(ctx context.Context, sess *routing.ArchiveSession) error {
	const op = "delete hot bucket"
	if err := sess.Validate(); err != nil {
		return err
	}
	return s.inTx(ctx, op, func(ctx context.Context, tx *sql.Tx) error {
		args := ownerArgs(sess, micros(s.clock()))
		if _, err := s.exec(ctx, tx, `DELETE FROM pulpitum_v4_records
WHERE `+whereBucket+`
	AND EXISTS (
		SELECT 1 FROM pulpitum_v4_bucket_metadata AS m
		WHERE m.table_id = ?1 AND m.partition_key = ?2 AND m.bucket_key = ?3
			AND m.generation = ?4 AND m.archive_owner_token = ?5 AND m.archive_owner_expires_at > ?6
			AND m.state = 'archived' AND m.hot_deleted = 0
	)`, args...); err != nil {
			return err
		}
		res, err := s.exec(ctx, tx, `UPDATE pulpitum_v4_bucket_metadata
SET hot_deleted = 1
WHERE `+whereBucket+andOwner+` AND state = 'archived' AND hot_deleted = 0`, args...)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			return keep(routing.ErrStaleArchiveSession)
		}
		return nil
	})
}

// DeferArchive returns the session's archiving bucket to hot (token, expiry and object key
// cleared), counts an attempt and sets its retry time to clock + retry.
// routing.ErrStaleArchiveSession when the session no longer owns an archiving bucket.
func (s *Store) DeferArchive(ctx context.Context, sess *routing.ArchiveSession, retry time.Duration) error {
	return s.ownerUpdate(ctx, "defer archive", sess, `UPDATE pulpitum_v4_bucket_metadata
SET state = 'hot', archive_owner_token = NULL, archive_owner_expires_at = NULL,
	archive_object_key = NULL, hot_deleted = 0,
	archive_attempts = archive_attempts + 1, archive_next_attempt_at = ?7
WHERE `+whereBucket+andOwner+` AND state = 'archiving'`, retry)
}

// DeferCleanup postpones cleanup of the session's archived bucket: lease expiry and retry time
// both become clock + retry and an attempt is counted; the bucket stays archived.
// routing.ErrStaleArchiveSession when the session no longer owns it.
func (s *Store) DeferCleanup(ctx context.Context, sess *routing.ArchiveSession, retry time.Duration) error {
	return s.ownerUpdate(ctx, "defer cleanup", sess, `UPDATE pulpitum_v4_bucket_metadata
SET archive_owner_expires_at = ?7, archive_next_attempt_at = ?7,
	archive_attempts = archive_attempts + 1
WHERE `+whereBucket+andOwner+` AND state = 'archived' AND hot_deleted = 0`, retry)
}

// AbortArchive returns the session's archiving bucket to hot with token, expiry and object key
// cleared, without counting an attempt or setting a retry time.
// routing.ErrStaleArchiveSession when the session no longer owns an archiving bucket.
func (s *Store) AbortArchive(ctx context.Context, sess *routing.ArchiveSession) error {
	return s.ownerUpdate(ctx, "abort archive", sess, `UPDATE pulpitum_v4_bucket_metadata
SET state = 'hot', archive_owner_token = NULL, archive_owner_expires_at = NULL,
	archive_object_key = NULL, hot_deleted = 0
WHERE `+whereBucket+andOwner+` AND state = 'archiving'`, nil)
}

// ownerUpdate runs one owner-conditioned UPDATE (?6 now, ?7 the value: a duration is turned
// into clock + duration) and requires it to change exactly one row.
func (s *Store) ownerUpdate(ctx context.Context, op string, sess *routing.ArchiveSession, query string, value any) error {
	if err := sess.Validate(); err != nil {
		return err
	}
	return s.inTx(ctx, op, func(ctx context.Context, tx *sql.Tx) error {
		now := s.clock()
		if d, ok := value.(time.Duration); ok {
			value = micros(now.Add(d))
		}
		args := ownerArgs(sess, micros(now))
		if value != nil {
			args = append(args, value)
		}
		res, err := s.exec(ctx, tx, query, args...)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			return keep(routing.ErrStaleArchiveSession)
		}
		return nil
	})
}

func ownerArgs(sess *routing.ArchiveSession, extra ...any) []any {
	b := sess.Bucket
	return append([]any{b.TableID, b.PartitionKey, b.Key, sess.Generation, sess.Token}, extra...)
}

// Status returns b's archival fields (routing.ArchiveStateStore): route, attempts, retry time
// and lease expiry (store clock, UTC). A bucket without a metadata row is hot with zero fields.
// Errors as for ScanRange.
func (s *Store) Status(ctx context.Context, b routing.BucketID) (routing.ArchiveStatus, error) {
	const op = "read archive status"
	if err := b.Validate(); err != nil {
		return routing.ArchiveStatus{}, err
	}
	var (
		st            routing.ArchiveStatus
		state         string
		key           sql.NullString
		deleted       bool
		next, expires sql.NullInt64
	)
	err := s.queryRow(ctx, s.r, `SELECT state, archive_object_key, hot_deleted, generation, archive_attempts,
	archive_next_attempt_at, archive_owner_expires_at
FROM pulpitum_v4_bucket_metadata WHERE `+whereBucket, []any{b.TableID, b.PartitionKey, b.Key},
		&state, &key, &deleted, &st.Generation, &st.Attempts, &next, &expires)
	if errors.Is(err, sql.ErrNoRows) {
		return routing.ArchiveStatus{Route: routing.Route{State: routing.StateHot}}, nil
	}
	if err != nil {
		return routing.ArchiveStatus{}, s.classify(op, err)
	}
	if st.Route, err = routing.RouteFromRow(state, key.String, key.Valid, deleted, st.Generation); err != nil {
		return routing.ArchiveStatus{}, err
	}
	if next.Valid {
		st.NextAttemptAt = fromMicros(next.Int64)
	}
	if expires.Valid {
		st.LeaseExpiresAt = fromMicros(expires.Int64)
	}
	return st, nil
}
