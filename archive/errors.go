package archive

import (
	"context"
	"errors"

	"gocloud.dev/gcerrors"

	"github.com/flightsrv/flightsrv/routing"
)

// ErrValidation matches every archive validation failure: errors.Is(err, ErrValidation) is true
// for each of the ErrManifest…, ErrPayload… and ErrRecord… sentinels below, which name the
// individual checks of docs/pulpitum-v4.md §1.5 ("Reader validation"). Match a specific
// sentinel to learn which check failed.
var ErrValidation = errors.New("archive: manifest validation failed")

// ValidationError is the type of the validation sentinels. Its message names the failed check
// and never carries an object key, a bucket key or a partition value. Compare with errors.Is
// against the exported sentinels; a ValidationError also matches ErrValidation,
// routing.ErrOperationFailed and routing.ErrArchiveDamaged (a published route whose objects
// fail validation has lost data).
type ValidationError struct{ reason string }

// Error returns "archive: manifest validation failed: <reason>".
func (e *ValidationError) Error() string { return ErrValidation.Error() + ": " + e.reason }

// Reason returns the failed check, a fixed phrase (routing.DamageReason).
func (e *ValidationError) Reason() string { return e.reason }

// Is reports whether target is ErrValidation, routing.ErrOperationFailed or
// routing.ErrArchiveDamaged.
func (e *ValidationError) Is(target error) bool {
	return target == ErrValidation || target == routing.ErrOperationFailed || target == routing.ErrArchiveDamaged
}

func validation(reason string) error { return &ValidationError{reason: reason} }

// Validation failures, one per check, in the reference reader's order (docs/pulpitum-v4.md
// §1.5): key digest, manifest fields, bucket, payload length and digest, decoded row count,
// record membership and order; then payload decoding failures.
var (
	// ErrManifestKeyDigest: the manifest key's file name has the manifest-….json form but its
	// digest is not 64 hex digits.
	ErrManifestKeyDigest = validation("manifest object key carries an invalid digest")
	// ErrManifestDigest: the SHA-256 of the manifest's raw bytes differs from its key's digest.
	ErrManifestDigest = validation("manifest digest does not match its object key")
	// ErrManifestDecode: the manifest is not a JSON object of the v4 shape (a field is
	// missing, null or of the wrong type).
	ErrManifestDecode = validation("manifest could not be decoded")
	// ErrManifestVersion: version is not 4.
	ErrManifestVersion = validation("unsupported manifest version")
	// ErrSchemaVersion: schema_version is not 2.
	ErrSchemaVersion = validation("unsupported record schema version")
	// ErrEmptyPayloadKey: payload_key is empty.
	ErrEmptyPayloadKey = validation("manifest payload key is empty")
	// ErrClusteringKey: clustering_key is not exactly ["event_time","sort_key"].
	ErrClusteringKey = validation("unsupported clustering key")
	// ErrFormat: format is neither "json" nor "parquet".
	ErrFormat = validation("unsupported payload format")
	// ErrBucketMismatch: the manifest's bucket differs from the requested bucket.
	ErrBucketMismatch = validation("manifest does not match the requested bucket")
	// ErrPayloadLength: the payload object's size differs from payload_bytes.
	ErrPayloadLength = validation("payload length mismatch")
	// ErrPayloadDigest: the payload's SHA-256 differs from the manifest's sha256.
	ErrPayloadDigest = validation("payload digest mismatch")
	// ErrRecordCount: the number of decoded records (or the Parquet footer's row count)
	// differs from record_count.
	ErrRecordCount = validation("record count mismatch")
	// ErrRecordOutsideBucket: a record has another partition key or an event time outside
	// the bucket's [start, end).
	ErrRecordOutsideBucket = validation("record does not belong to the bucket")
	// ErrRecordsUnsorted: records are not in (event_time, sort_key) order.
	ErrRecordsUnsorted = validation("records are not sorted by (event_time, sort_key)")
	// ErrPayloadSchema: a Parquet payload read as records is not the v2 envelope
	// (partition_key, event_time TIMESTAMP(NANOS, UTC), sort_key, value, all required), or a
	// payload counted by event time has no usable event_time column.
	ErrPayloadSchema = validation("payload schema is not the record envelope v2")
	// ErrPayloadDecode: the payload bytes could not be decoded.
	ErrPayloadDecode = validation("payload could not be decoded")
)

// Object-store errors. They say what failed, never which object; the underlying driver error
// (which names the key) is dropped. Each matches routing.ErrOperationFailed, except
// ErrObjectTimeout and ErrObjectStoreUnavailable, which match routing.ErrUnavailable.
var (
	// ErrObjectNotFound: a referenced object does not exist. It also matches
	// routing.ErrArchiveDamaged: a published route's manifest or payload is gone.
	ErrObjectNotFound error = &storeError{msg: "archive: object not found", is: routing.ErrOperationFailed, reason: "object not found"}
	// ErrObjectExists: an immutable object already exists with different content (write
	// protocol step 3).
	ErrObjectExists error = &storeError{msg: "archive: immutable object already exists with different content", is: routing.ErrOperationFailed}
	// ErrObjectTimeout: one object operation exceeded its deadline (Options.OperationTimeout).
	ErrObjectTimeout error = &storeError{msg: "archive: object-store operation timed out", is: routing.ErrUnavailable}
	// ErrObjectStoreUnavailable: any other object-store failure (permissions, network, …).
	ErrObjectStoreUnavailable error = &storeError{msg: "archive: object store operation failed", is: routing.ErrUnavailable}
	// ErrManifestMismatch: the manifest read back after writing differs from the one
	// intended (write protocol step 6).
	ErrManifestMismatch error = &storeError{msg: "archive: uploaded manifest differs from the intended manifest", is: routing.ErrOperationFailed}
)

// storeError is an object-store error. One with a reason means a missing or damaged object
// and also matches routing.ErrArchiveDamaged.
type storeError struct {
	msg    string
	is     error
	reason string
}

func (e *storeError) Error() string { return e.msg }
func (e *storeError) Is(target error) bool {
	return target == e.is || (e.reason != "" && target == routing.ErrArchiveDamaged)
}

// Reason returns the damage's fixed phrase, "" for errors that are no damage.
func (e *storeError) Reason() string { return e.reason }

// objectError turns a driver error into a key-free archive error. Context cancellation of the
// caller's context is passed through as the context's own error, so errors.Is(err,
// context.Canceled) keeps working; a deadline of our per-operation timeout becomes
// ErrObjectTimeout.
func objectError(parent context.Context, err error) error {
	if err == nil {
		return nil
	}
	if perr := parent.Err(); perr != nil {
		return perr
	}
	switch gcerrors.Code(err) {
	case gcerrors.NotFound:
		return ErrObjectNotFound
	case gcerrors.DeadlineExceeded:
		return ErrObjectTimeout
	case gcerrors.Canceled:
		return context.Canceled
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return ErrObjectTimeout
	}
	return ErrObjectStoreUnavailable
}
