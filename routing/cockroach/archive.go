package cockroach

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/flightsrv/flightsrv/routing"
)

// Conditions shared by the archival statements (docs/pulpitum-v4.md §4). owner is the
// session fence: $4 generation, $5 token, and a lease unexpired at database time.
//
// Lease expiries and retry times are computed by the database (now() + a duration sent in
// microseconds) as well as compared with its now(). The reference computes them with the
// application's clock (§4, notation), so a runner whose clock is ahead holds leases longer
// than intended and one behind loses them early; here only the database's clock counts.
const (
	whereBucket = `table_id = $1 AND partition_key = $2 AND bucket_key = $3`
	andOwner    = ` AND generation = $4 AND archive_owner_token = $5 AND archive_owner_expires_at > now()`
	retryDue    = `(archive_next_attempt_at IS NULL OR archive_next_attempt_at <= now())`
)

var (
	sqlDiscoverCleanup = register("SELECT pulpitum_v4_bucket_metadata", "SELECT", MetadataTable,
		`SELECT table_id, partition_key, bucket_key, bucket_strategy, bucket_start, bucket_end
FROM pulpitum_v4_bucket_metadata
WHERE state = 'archived' AND hot_deleted = false
	AND `+retryDue+`
	AND (archive_owner_expires_at IS NULL OR archive_owner_expires_at <= now())
ORDER BY bucket_end, table_id, partition_key, bucket_key
LIMIT $1`)
	sqlDiscoverCutover = register("SELECT pulpitum_v4_bucket_metadata", "SELECT", MetadataTable,
		`SELECT table_id, partition_key, bucket_key, bucket_strategy, bucket_start, bucket_end
FROM pulpitum_v4_bucket_metadata
WHERE bucket_end <= $1
	AND `+retryDue+`
	AND (state = 'hot' OR (state = 'archiving' AND archive_owner_expires_at <= now()))
ORDER BY bucket_end, table_id, partition_key, bucket_key
LIMIT $2`)
	sqlClaimArchive = register("UPDATE pulpitum_v4_bucket_metadata", "UPDATE", MetadataTable,
		`UPDATE pulpitum_v4_bucket_metadata
SET state = 'archiving', generation = generation + 1,
	archive_owner_token = $4, archive_owner_expires_at = now() + $5::INT8 * INTERVAL '1 microsecond',
	archive_next_attempt_at = NULL, archive_object_key = NULL, hot_deleted = false
WHERE `+whereBucket+`
	AND `+retryDue+`
	AND (state = 'hot' OR (state = 'archiving' AND archive_owner_expires_at <= now()))
RETURNING generation`)
	sqlClaimCleanup = register("UPDATE pulpitum_v4_bucket_metadata", "UPDATE", MetadataTable,
		`UPDATE pulpitum_v4_bucket_metadata
SET generation = generation + 1,
	archive_owner_token = $4, archive_owner_expires_at = now() + $5::INT8 * INTERVAL '1 microsecond',
	archive_next_attempt_at = NULL
WHERE `+whereBucket+`
	AND state = 'archived' AND hot_deleted = false
	AND `+retryDue+`
	AND (archive_owner_expires_at IS NULL OR archive_owner_expires_at <= now())
RETURNING generation`)
	sqlRenew = register("UPDATE pulpitum_v4_bucket_metadata", "UPDATE", MetadataTable,
		`UPDATE pulpitum_v4_bucket_metadata
SET archive_owner_expires_at = now() + $6::INT8 * INTERVAL '1 microsecond'
WHERE `+whereBucket+andOwner+`
	AND (state = 'archiving' OR (state = 'archived' AND hot_deleted = false))`)
	sqlSnapshot = register("SNAPSHOT durable bucket", "SNAPSHOT", RecordsTable,
		`WITH owner AS (
	SELECT 1 AS x FROM pulpitum_v4_bucket_metadata
	WHERE `+whereBucket+andOwner+` AND state = 'archiving'
)
SELECT snap.event_time, snap.sort_key, snap.value
FROM owner
LEFT JOIN LATERAL (
	SELECT rec.event_time, rec.sort_key, rec.value
	FROM pulpitum_v4_records AS rec
	WHERE rec.table_id = $1 AND rec.partition_key = $2 AND rec.bucket_key = $3
	ORDER BY rec.event_time, rec.sort_key
) AS snap ON true
ORDER BY snap.event_time, snap.sort_key`)
	sqlPublish = register("UPDATE pulpitum_v4_bucket_metadata", "UPDATE", MetadataTable,
		`UPDATE pulpitum_v4_bucket_metadata
SET state = 'archived', archive_object_key = $6, hot_deleted = false
WHERE `+whereBucket+andOwner+` AND state = 'archiving'`)
	sqlDeleteRecords = register("DELETE pulpitum_v4_records", "DELETE", RecordsTable,
		`DELETE FROM pulpitum_v4_records
WHERE `+whereBucket+`
	AND EXISTS (
		SELECT 1 FROM pulpitum_v4_bucket_metadata AS m
		WHERE m.table_id = $1 AND m.partition_key = $2 AND m.bucket_key = $3
			AND m.generation = $4 AND m.archive_owner_token = $5 AND m.archive_owner_expires_at > now()
			AND m.state = 'archived' AND m.hot_deleted = false
	)`)
	sqlMarkHotDeleted = register("UPDATE pulpitum_v4_bucket_metadata", "UPDATE", MetadataTable,
		`UPDATE pulpitum_v4_bucket_metadata
SET hot_deleted = true
WHERE `+whereBucket+andOwner+` AND state = 'archived' AND hot_deleted = false`)
	sqlDeferArchive = register("UPDATE pulpitum_v4_bucket_metadata", "UPDATE", MetadataTable,
		`UPDATE pulpitum_v4_bucket_metadata
SET state = 'hot', archive_owner_token = NULL, archive_owner_expires_at = NULL,
	archive_object_key = NULL, hot_deleted = false,
	archive_attempts = archive_attempts + 1,
	archive_next_attempt_at = now() + $6::INT8 * INTERVAL '1 microsecond'
WHERE `+whereBucket+andOwner+` AND state = 'archiving'`)
	sqlDeferCleanup = register("UPDATE pulpitum_v4_bucket_metadata", "UPDATE", MetadataTable,
		`UPDATE pulpitum_v4_bucket_metadata
SET archive_owner_expires_at = now() + $6::INT8 * INTERVAL '1 microsecond',
	archive_next_attempt_at = now() + $6::INT8 * INTERVAL '1 microsecond',
	archive_attempts = archive_attempts + 1
WHERE `+whereBucket+andOwner+` AND state = 'archived' AND hot_deleted = false`)
	sqlAbortArchive = register("UPDATE pulpitum_v4_bucket_metadata", "UPDATE", MetadataTable,
		`UPDATE pulpitum_v4_bucket_metadata
SET state = 'hot', archive_owner_token = NULL, archive_owner_expires_at = NULL,
	archive_object_key = NULL, hot_deleted = false
WHERE `+whereBucket+andOwner+` AND state = 'archiving'`)
)

// Discover lists archive work (docs/pulpitum-v4.md §4.1): first cleanup work (archived
// buckets whose hot rows remain, retry time due, no unexpired lease), then, with the
// remaining budget, cut-over work (buckets ending at or before eligibleBefore, retry time due,
// hot or archiving with an expired lease), each ordered by bucket_end, table_id,
// partition_key, bucket_key. At most limit items; none when limit <= 0. Only buckets with a
// metadata row are found. The list is advisory: claim before use. Errors as for ScanRange;
// routing.ErrOperationFailed for a row with an unknown strategy.
func (s *Store) Discover(ctx context.Context, eligibleBefore time.Time, limit int) ([]routing.ArchiveWork, error) {
	const op = "discover archive work"
	if limit <= 0 {
		return nil, nil
	}
	conn, err := s.acquire(ctx, op)
	if err != nil {
		return nil, err
	}
	defer conn.Release()
	out, err := discoverRows(ctx, conn, routing.WorkCleanup, sqlDiscoverCleanup, int64(limit))
	if err != nil {
		return nil, s.classify(op, err)
	}
	if rest := limit - len(out); rest > 0 {
		more, err := discoverRows(ctx, conn, routing.WorkCutover, sqlDiscoverCutover, eligibleBefore, int64(rest))
		if err != nil {
			return nil, s.classify(op, err)
		}
		out = append(out, more...)
	}
	return out, nil
}

func discoverRows(ctx context.Context, q querier, kind routing.WorkKind, sql string, args ...any) ([]routing.ArchiveWork, error) {
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (routing.ArchiveWork, error) {
		var (
			w          routing.ArchiveWork
			strategy   string
			start, end time.Time
		)
		if err := r.Scan(&w.Bucket.TableID, &w.Bucket.PartitionKey, &w.Bucket.Key, &strategy, &start, &end); err != nil {
			return w, err
		}
		st, err := routing.ParseStrategy(strategy)
		if err != nil {
			return w, keep(fmt.Errorf("%w: unknown bucket strategy", routing.ErrOperationFailed))
		}
		w.Kind, w.Bucket.Strategy, w.Bucket.Start, w.Bucket.End = kind, st, start.UTC(), end.UTC()
		return w, nil
	})
}

// ClaimArchive moves b to archiving when its retry time is due and it is hot or archiving
// with an expired lease: generation+1, a new UUIDv4 token, lease expiry = database now() +
// lease (a non-positive lease yields an already expired session),
// retry time and object key cleared. It returns nil, nil when b cannot be claimed (a lost race,
// a live lease, a retry time not due, an archived or unknown bucket). Errors as for ScanRange.
func (s *Store) ClaimArchive(ctx context.Context, b routing.BucketID, lease time.Duration) (*routing.ArchiveSession, error) {
	return s.claim(ctx, "claim archive", sqlClaimArchive, b, lease)
}

// ClaimCleanup claims archived bucket b whose hot rows are not deleted, when its retry time is
// due and no lease is live: generation+1, new token and expiry, retry time cleared. It returns
// nil, nil when b cannot be claimed. Errors as for ScanRange.
func (s *Store) ClaimCleanup(ctx context.Context, b routing.BucketID, lease time.Duration) (*routing.ArchiveSession, error) {
	return s.claim(ctx, "claim cleanup", sqlClaimCleanup, b, lease)
}

func (s *Store) claim(ctx context.Context, op, sql string, b routing.BucketID, lease time.Duration) (*routing.ArchiveSession, error) {
	return routing.Claim(b, func(token string) (gen int64, claimed bool, err error) {
		err = s.inTx(ctx, op, func(ctx context.Context, tx pgx.Tx) error {
			claimed, err = routing.ClaimedRow(tx.QueryRow(ctx, sql, bucketArgs(b, token, lease.Microseconds())...).Scan(&gen), pgx.ErrNoRows)
			return err
		})
		return gen, claimed, err
	})
}

// Renew sets the session's lease expiry to database now() + lease while the session owns
// the bucket (archiving, or archived with hot rows remaining); otherwise
// routing.ErrStaleArchiveSession. Errors as for ScanRange.
func (s *Store) Renew(ctx context.Context, sess *routing.ArchiveSession, lease time.Duration) error {
	return s.ownerUpdate(ctx, "renew archive lease", sess, sqlRenew, lease.Microseconds())
}

// Snapshot returns every record of the session's archiving bucket in (event_time, sort_key)
// order with one statement (one snapshot), or routing.ErrStaleArchiveSession when the session
// no longer owns the bucket. The whole bucket is held in memory. Errors as for ScanRange.
func (s *Store) Snapshot(ctx context.Context, sess *routing.ArchiveSession) ([]routing.Record, error) {
	const op = "snapshot bucket"
	if err := sess.Validate(); err != nil {
		return nil, err
	}
	conn, err := s.acquire(ctx, op)
	if err != nil {
		return nil, err
	}
	defer conn.Release()
	rows, err := conn.Query(ctx, sqlSnapshot, ownerArgs(sess)...)
	if err != nil {
		return nil, s.classify(op, err)
	}
	defer rows.Close()
	var (
		owned   bool
		recs    []routing.Record
		et      *time.Time
		sk, val []byte
	)
	for rows.Next() {
		owned = true
		if err := rows.Scan(&et, &sk, &val); err != nil {
			return nil, s.classify(op, err)
		}
		if et == nil {
			continue
		}
		if val == nil {
			val = []byte{}
		}
		recs = append(recs, routing.Record{EventTime: et.UTC(), SortKey: sk, Value: val})
	}
	if err := rows.Err(); err != nil {
		return nil, s.classify(op, err)
	}
	if !owned {
		return nil, routing.ErrStaleArchiveSession
	}
	routing.SetPartitionKeys(recs, sess.Bucket.PartitionKey)
	return recs, nil
}

// PublishArchive sets the session's archiving bucket archived with manifestKey, clearing
// hot_deleted: the read cut-over commit point. routing.ErrStaleArchiveSession when the session
// no longer owns an archiving bucket; an empty manifestKey is routing.ErrInvalidRecord. Errors
// as for ScanRange.
func (s *Store) PublishArchive(ctx context.Context, sess *routing.ArchiveSession, manifestKey string) error {
	if manifestKey == "" {
		return fmt.Errorf("%w: empty manifest key", routing.ErrInvalidRecord)
	}
	return s.ownerUpdate(ctx, "publish archive", sess, sqlPublish, manifestKey)
}

// DeleteHotBucket deletes the hot rows of the session's archived bucket and sets hot_deleted,
// in one transaction: the DELETE is guarded by the owner condition, and when the UPDATE does
// not change exactly one row the transaction rolls back (nothing deleted) and
// routing.ErrStaleArchiveSession is returned. Errors as for ScanRange.
func (s *Store) DeleteHotBucket(ctx context.Context, sess *routing.ArchiveSession) error {
	const op = "delete hot bucket"
	if err := sess.Validate(); err != nil {
		return err
	}
	return s.inTx(ctx, op, func(ctx context.Context, tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, sqlDeleteRecords, ownerArgs(sess)...); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, sqlMarkHotDeleted, ownerArgs(sess)...)
		if err != nil {
			return err
		}
		if tag.RowsAffected() != 1 {
			return keep(routing.ErrStaleArchiveSession)
		}
		return nil
	})
}

// DeferArchive returns the session's archiving bucket to hot (token, expiry and object key
// cleared), counts an attempt and sets its retry time to database now() + retry.
// routing.ErrStaleArchiveSession when the session no longer owns an archiving bucket. Errors
// as for ScanRange.
func (s *Store) DeferArchive(ctx context.Context, sess *routing.ArchiveSession, retry time.Duration) error {
	return s.ownerUpdate(ctx, "defer archive", sess, sqlDeferArchive, retry.Microseconds())
}

// DeferCleanup postpones cleanup of the session's archived bucket: lease expiry and retry time
// both become database now() + retry and an attempt is counted; the bucket stays archived.
// routing.ErrStaleArchiveSession when the session no longer owns it. Errors as for ScanRange.
func (s *Store) DeferCleanup(ctx context.Context, sess *routing.ArchiveSession, retry time.Duration) error {
	return s.ownerUpdate(ctx, "defer cleanup", sess, sqlDeferCleanup, retry.Microseconds())
}

// AbortArchive returns the session's archiving bucket to hot with token, expiry and object key
// cleared, without counting an attempt or setting a retry time (the reference's direct
// coordinator path). routing.ErrStaleArchiveSession when the session no longer owns an
// archiving bucket. Errors as for ScanRange.
func (s *Store) AbortArchive(ctx context.Context, sess *routing.ArchiveSession) error {
	return s.ownerUpdate(ctx, "abort archive", sess, sqlAbortArchive)
}

// ownerUpdate runs one owner-conditioned UPDATE in a transaction and requires it to change
// exactly one row.
func (s *Store) ownerUpdate(ctx context.Context, op string, sess *routing.ArchiveSession, sql string, extra ...any) error {
	if err := sess.Validate(); err != nil {
		return err
	}
	return s.inTx(ctx, op, func(ctx context.Context, tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, sql, ownerArgs(sess, extra...)...)
		if err != nil {
			return err
		}
		if tag.RowsAffected() != 1 {
			return keep(routing.ErrStaleArchiveSession)
		}
		return nil
	})
}

var sqlStatus = register("SELECT pulpitum_v4_bucket_metadata", "SELECT", MetadataTable,
	`SELECT state, archive_object_key, hot_deleted, generation, archive_attempts,
	archive_next_attempt_at, archive_owner_expires_at
FROM pulpitum_v4_bucket_metadata
WHERE `+whereBucket)

// Status returns b's archival fields (routing.ArchiveStateStore): route, attempts, retry time
// and lease expiry (database time, UTC). A bucket without a metadata row is hot with zero
// fields. Errors as for ScanRange.
func (s *Store) Status(ctx context.Context, b routing.BucketID) (routing.ArchiveStatus, error) {
	const op = "read archive status"
	if err := b.Validate(); err != nil {
		return routing.ArchiveStatus{}, err
	}
	var (
		st            routing.ArchiveStatus
		state         string
		key           *string
		deleted       bool
		next, expires *time.Time
	)
	err := s.queryRow(ctx, op, sqlStatus, bucketArgs(b), &state, &key, &deleted, &st.Generation, &st.Attempts, &next, &expires)
	if errors.Is(err, pgx.ErrNoRows) {
		return routing.ArchiveStatus{Route: routing.Route{State: routing.StateHot}}, nil
	}
	if err != nil {
		return routing.ArchiveStatus{}, err
	}
	gen := st.Generation
	if st.Route, err = routeFromRow(state, key, deleted, gen); err != nil {
		return routing.ArchiveStatus{}, err
	}
	if next != nil {
		st.NextAttemptAt = next.UTC()
	}
	if expires != nil {
		st.LeaseExpiresAt = expires.UTC()
	}
	return st, nil
}
