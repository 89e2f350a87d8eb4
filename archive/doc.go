// Package archive holds the archive tier of flightsrv: the Pulpitum v4 archive artifacts
// (content-addressed object keys, manifest v4, JSON payloads and the Parquet record envelope
// v2), a [Reader] that implements routing.ArchiveReader with statistics pushdown and
// routing.ArchiveBatchReader (Arrow batch reads), a [Writer] that implements
// routing.ArchiveWriter with the reference's verified write protocol, and the [Archiver]
// runner that drives due buckets through claim → snapshot → upload → verify → publish →
// cleanup. Everything follows docs/pulpitum-v4.md §1.5 (artifacts) and §4
// (state machine and runner); an existing Pulpitum deployment's archives are read as they are.
//
// # Object storage
//
// Objects live in a gocloud.dev/blob bucket, opened by URL by the caller (file:// here;
// s3://, gs:// and azblob:// once cmd blank-imports their drivers). Each object request has
// its own deadline (30 s by default). Parquet payloads are read with ranged requests through
// a per-request io.ReaderAt, so the request's context reaches every read parquet-go makes;
// needed byte ranges are computed from the footer's offset index, merged when close, and
// fetched before decoding. Every object request is counted in the request's
// routing.ReadStats (AddObjectRead). Errors never carry object keys, bucket keys or partition
// values: driver errors are replaced by key-free sentinels ([ErrObjectNotFound], …).
//
// Archive objects are immutable: they are created if-not-exists and never rewritten, and
// their keys carry their content's digest. Validated manifests are cached per manifest key and
// Parquet footers per payload key (bounded LRUs); failures are never cached.
//
// # Validation, and the digest-versus-pushdown trade-off
//
// The reference reader validates in this order: the manifest key's digest against the raw
// manifest bytes, the manifest fields (version 4, schema_version 2, payload key, clustering
// key), the bucket field for field, the payload's length and SHA-256, the decoded row count,
// and finally that every record belongs to the bucket and that records are sorted. Each check
// has its own sentinel error (see [ErrValidation]).
//
// A SHA-256 over the payload needs every byte of it, which is exactly what statistics
// pushdown exists to avoid. The Reader therefore splits the checks:
//
//   - The manifest is always validated fully (key digest, fields, bucket).
//   - Parquet payloads read partially: the object's size is checked against payload_bytes
//     (from the same ranged request that fetches the footer) and the footer's row count
//     against record_count; every row actually decoded is checked for membership and order.
//     The digest is not computed, so corruption in parts of the payload that are not read
//     goes unnoticed by that request, and corruption of data that is read but still decodes
//     is only caught by the membership and order checks.
//   - The full reference validation (length, digest, decoded count, membership, order) runs
//     whenever the whole payload is read anyway: JSON payloads (always), record reads of the
//     whole bucket (full range, no cursor, limit ≥ record_count), Parquet payloads small
//     enough to arrive whole with the footer (ReaderOptions.TailBytes), [Reader.Verify], and
//     the Writer's read-back, which is the archiver's verify step before publication.
//   - ReaderOptions.VerifyFully forces the full validation on every Read, Aggregate and
//     ReadBatches, bypassing the caches, for deployments that prefer integrity over pushdown.
//
// Every read of a route (Read, Aggregate, ReadBatches) also checks that its payload exists
// with the size the manifest recorded: one metadata request (stat, HEAD) per route, trusted
// for ReaderOptions.PayloadCheckInterval (payloadcheck.go). A deleted payload is
// ErrObjectNotFound, a truncated one ErrPayloadLength; both, and every validation error,
// match routing.ErrArchiveDamaged, which routing reports (the route's opaque id in the log,
// the flightsrv.archive.read_errors counter) and the Flight SQL boundary answers with
// DATA_LOSS.
//
// [Reader.AggregateGroups] is the archive's partial-aggregate port (routing.ArchiveReader;
// [Reader.Aggregate] is its answer as Arrow batches): the
// partial count(*), min and max of the event time of a bucket's records in a range,
// ungrouped or per time bin. Whole-bucket ungrouped counts are answered from the validated
// manifest's record_count once the payload check has passed (the payload exists with the
// manifest's size: a deleted or truncated payload fails the count as it fails a scan),
// without fetching the footer: the first count of an archive reads its manifests only (a few
// KiB) where a footer read costs 64 KiB per bucket. Damage inside the payload (a changed byte
// in its pages, its footer, or a JSON payload) is found by the first read that decodes it;
// routing then refuses every read of the route, counts included, for routing.DamageMemory.
// MIN/MAX(timestamp) never come from the manifest: it cannot say which instants its records
// hold.
//
// # Statistics trust rules and pushdown
//
// Counts of a partial range classify each row group by the event_time chunk statistics as
// inside (its row count answers), outside (skipped) or straddling; a straddling group is
// classified page by page with the column index, and only the straddling pages' event_time
// values are fetched and decoded (page-level pushdown: pages are located with the offset
// index and read with parquet-go's SeekToRow). Record reads use the same classification to
// skip row groups and pages, then decode the four columns of the remaining row spans.
// Statistics are used only when they can be trusted (see stats.go): a TIMESTAMP logical
// type (unit and UTC flag from it), type-defined column order, present 8-byte min_value and
// max_value not flagged inexact, min ≤ max, bounds inside the bucket, and, for "inside", a
// known null count. INT96, legacy converted types, deprecated min/max fields, truncated,
// reversed or out-of-bucket bounds are never trusted; such groups and pages are decoded.
// An inside group or page answers with its row count and its exact min_value/max_value,
// straddling ones have only their event_time decoded, and every group takes part whatever the
// file's row order, so unsorted files answer exactly too. Grouped by a time bin, an inside
// group or page answers without decoding only when its trusted min and max fall in the same
// bin. A payload whose event_time statistics cannot be used at all (INT96, no type-defined
// column order) is not aggregated here: Aggregate returns routing.ErrNoAggregate and the
// executor reads its rows with ReadBatches, which accepts any timestamp unit, either UTC flag
// — local timestamps are read as UTC wall-clock time — INT96, nullable columns, missing
// statistics or page index and any number of possibly empty row groups; record reads through
// Read require the exact envelope schema ([ErrPayloadSchema] otherwise).
//
// # Arrow batch reads
//
// [Reader.ReadBatches] (routing.ArchiveBatchReader) is the scan path's read: it streams a
// bucket's records inside a range as Arrow record batches of the requested columns, without
// routing.Record values in between. For Parquet payloads it classifies row groups and pages
// with the same trusted statistics as Read and the aggregates, fetches only the requested
// columns' pages of the spans that remain (the next row group's in the background once more
// rows are wanted), and decodes one span at a time as the consumer calls Next. Column chunks
// with an offset index and no dictionary (every envelope this package writes) are decoded from
// their page bytes (batch_pages.go): headers parsed in place from the fetched regions, pages
// decompressed by pooled zstd decoders into a page buffer the read reuses and decoded in place
// with parquet-go's encodings; the scratch buffers come from a free list shared by concurrent
// reads and kept across garbage collections (internal/freelist), the buffers of the ranged
// fetches from the request's allocator (the query's ledger, over the engine's recycling
// pool). Other chunks (dictionaries, no offset index) go through parquet-go's page reader.
// Either way the event_time values (INT64 in any unit, or INT96, converted to nanoseconds)
// select the rows inside the range, and the selected
// byte-array values are copied from the decoded page straight into Arrow offset and data
// buffers allocated from the request's allocator — runs of consecutive rows with one copy, no
// per-value Go allocation. Batches of an ascending read are slices of the span's arrays; a
// descending read copies them in reverse. The partition column is a constant (the bucket's
// key): partition_key pages are read only to check them when that column is requested.
//
// Batch reads accept every Parquet payload the aggregates accept, envelope or not: a request
// needs the sort_key and value columns only when it asks for id or value. Ordered is decided
// from metadata before the first batch: the envelope is sorted by contract; another file is
// claimed sorted only by sorting_columns (event_time, sort_key ascending) in every row group
// and strictly ascending trusted row-group bounds. A claimed-sorted file is streamed in file
// order (reversed for descending reads) and every decoded row is checked against its
// predecessor (ErrRecordsUnsorted on a violation: rows already emitted cannot be taken back,
// so the read fails); any other file is streamed in file order unchecked, reports Ordered
// false, and the consumer sorts. JSON payloads, and all payloads under VerifyFully, are read
// whole and fully verified before their first batch, as Read does.
//
// A request with routing.BatchRequest.ManifestRows for at most the partition column of a whole
// bucket (no limit, not VerifyFully) is answered from the validated manifest's record_count
// once the payload check has passed, as whole-bucket counts are: no footer or page is fetched.
// The executor asks so when the shredded-column cache holds the bucket's other columns.
//
// Batch reads never hash a Parquet payload, even when they read the whole bucket, except when
// the payload arrives whole with the footer: the digest needs every byte in order before any
// row may be trusted, which a streaming read of selected columns cannot provide. Read keeps
// verifying whole-bucket reads; deployments that need the digest on every scan set
// VerifyFully.
//
// # Writing
//
// The Writer serialises a bucket's records (Parquet by default, JSON as the reference writes
// by default), derives the content-addressed keys, creates payload then manifest if not
// exists, reads each back, requires identical bytes, decodes and validates the payload fully,
// and parses, validates and compares the manifest before returning its key. Envelope files
// are sorted by (event_time, sort_key), ZSTD-compressed, with statistics and a page index for
// every column, at most 16,384 rows per row group and small pages (both configurable).
//
// # Archiving
//
// The [Archiver] is the reference's recovery runner (§4.2) with two departures. A failing work
// item never stops the others: it is deferred to its own retry time (or, when lease renewal
// failed, left for its lease to expire) and listed in the cycle's summary with a key-free
// reason. Ambiguous outcomes are resolved by re-reading durable state: a publish or hot-row
// delete whose result is unknown is judged by the bucket's route (state, generation, manifest
// key, hot_deleted); an object write that failed or timed out by the read-back that always
// follows it. Keys are generation- and content-addressed, so a stale worker's upload lands
// beside, never over, the new owner's; its owner-conditioned statements are all rejected.
// Publication never starts once lease renewal has failed.
//
// The reference's direct path (DurableArchiveCoordinator::archive_bucket: begin_archive with
// a five-minute lease, abort_archive on a snapshot or upload failure) is not implemented; the
// runner's claim path is the only way in, for three reasons. begin_archive ignores the durable
// retry time (docs/pulpitum-v4.md §4.1 and §11.8), so a direct archive could retry a
// deferred bucket at once, the very behaviour deferral exists to prevent. Its one other
// difference, creating the metadata row of a bucket that has none, archives nothing: such a
// bucket was never appended to, holds no record and reads as an empty hot bucket. And every
// condition it checks (hot, or archiving with its lease expired by the database's clock) is
// ClaimArchive's, which `flightsrv archive` reaches for any bucket through Discover; its
// failure handling (abort back to hot without counting an attempt) is DeferArchive's with a
// retry time, which the runner uses. Both hot-store adapters implement AbortArchive for the
// conformance suite.
//
// The [OrphanCollector] deletes the payloads and manifests of attempts that never published,
// once older than a safety delay, and never an object a route points to or one of a
// generation that may still publish. The reference keeps them forever.
//
// A bucket whose keys would exceed the object store's limits (a 255-byte path segment: a
// partition value of 128 bytes or more in hex) fails alone with a [*KeyLimitError] before
// anything is written.
//
// # Imports
//
// This package imports routing (for the shared types and ports), parquet-go (and the zstd
// decoder of klauspost/compress, which parquet-go itself uses, for batch reads), arrow-go's
// arrow, array and memory packages (batch reads; its Parquet reader only in tests, as an
// independent decoder), gocloud.dev/blob and OpenTelemetry. It must not import Flight, Substrait, SQL planning, a hot-store driver
// package (routing/cockroach, routing/sqlite: tests excepted) or anything above routing.
package archive
