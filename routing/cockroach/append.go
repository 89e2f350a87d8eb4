package cockroach

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/flightsrv/flightsrv/routing"
)

var (
	sqlStrategyConflict = register("SELECT pulpitum_v4_bucket_metadata", "SELECT", MetadataTable,
		`SELECT EXISTS (
	SELECT 1 FROM pulpitum_v4_bucket_metadata
	WHERE table_id = $1 AND bucket_strategy <> $2
)`)
	sqlEnsureMetadata = register("INSERT pulpitum_v4_bucket_metadata", "INSERT", MetadataTable,
		`INSERT INTO pulpitum_v4_bucket_metadata
	(table_id, partition_key, bucket_key, bucket_strategy, bucket_start, bucket_end)
VALUES ($1, $2, $3, $4, $5, $6)
ON CONFLICT (table_id, partition_key, bucket_key) DO NOTHING`)
	sqlBucketState = register("SELECT pulpitum_v4_bucket_metadata", "SELECT", MetadataTable,
		`SELECT state FROM pulpitum_v4_bucket_metadata
WHERE table_id = $1 AND partition_key = $2 AND bucket_key = $3
FOR SHARE`)  // locked for the transaction, as sqlBucketStates (ingest.go) says why
	sqlInsertRecords = register("APPEND durable bucket", "APPEND", RecordsTable,
		`INSERT INTO pulpitum_v4_records (table_id, partition_key, bucket_key, event_time, sort_key, value)
SELECT $1::TEXT, $2::BYTEA, $3::TEXT, r.event_time, r.sort_key, r.value
FROM unnest($4::TIMESTAMPTZ[], $5::BYTEA[], $6::BYTEA[]) AS r (event_time, sort_key, value)`)
)

// Append inserts recs into bucket b behind the write fence (docs/pulpitum-v4.md §3.1), in
// one SERIALIZABLE transaction retried on SQLSTATE 40001: a metadata row of b's table with
// another strategy fails with routing.ErrStrategyMismatch; b's metadata row is created (hot)
// if absent; a bucket that is not hot fails with routing.ErrBucketReadOnly; then the records
// are inserted with plain INSERTs of up to 4,096 rows each, and an existing (or repeated)
// (event_time, sort_key) fails with routing.ErrDuplicateRecord. Nothing is written on error.
// Event times are truncated to microseconds (UTC). Every record must carry b's partition key,
// a non-empty sort key and an event time inside b (routing.ErrInvalidRecord otherwise); an
// empty recs is a no-op. Other errors as for ScanRange, and routing.ErrCommitOutcome when a
// COMMIT's outcome is unknown.
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
	times := make([]time.Time, len(recs))
	keys := make([][]byte, len(recs))
	values := make([][]byte, len(recs))
	for i := range recs {
		r := &recs[i]
		times[i], keys[i], values[i] = routing.NormalizeTime(r.EventTime), r.SortKey, r.Value
		if values[i] == nil {
			values[i] = []byte{}
		}
	}
	return s.inTx(ctx, op, func(ctx context.Context, tx pgx.Tx) error {
		var conflict bool
		if err := tx.QueryRow(ctx, sqlStrategyConflict, b.TableID, b.Strategy.String()).Scan(&conflict); err != nil {
			return err
		}
		if conflict {
			return keep(routing.ErrStrategyMismatch)
		}
		if _, err := tx.Exec(ctx, sqlEnsureMetadata, bucketArgs(b, b.Strategy.String(), b.Start, b.End)...); err != nil {
			return err
		}
		var state string
		if err := tx.QueryRow(ctx, sqlBucketState, bucketArgs(b)...).Scan(&state); err != nil {
			return err
		}
		if state != routing.StateHot.String() {
			return keep(fmt.Errorf("%w (state %s)", routing.ErrBucketReadOnly, state))
		}
		for lo := 0; lo < len(recs); lo += insertChunk {
			hi := min(lo+insertChunk, len(recs))
			if _, err := tx.Exec(ctx, sqlInsertRecords, bucketArgs(b, times[lo:hi], keys[lo:hi], values[lo:hi])...); err != nil {
				if isUniqueViolation(err) {
					return keep(routing.ErrDuplicateRecord)
				}
				return err
			}
		}
		return nil
	})
}
