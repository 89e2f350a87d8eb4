package routing

import (
	"context"

	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
)

// HotStore is the port every hot-store adapter implements (CockroachDB/PostgreSQL over pgx,
// embedded SQLite). Implementations are safe for concurrent use by many goroutines.
//
// Every read returns the bucket's route together with its rows from one snapshot, so a read
// racing publication sees either the pre-publication hot rows or the archive route, never a
// mix (docs/pulpitum-v4.md §3.2). A bucket without a metadata row reads as hot with no rows.
// When the route is archived, no rows are returned and the count is zero.
type HotStore interface {
	// AggregateRange is the hot store's partial-aggregate port (partial.go): the route of b
	// and, unless it is archived (then the reader is nil), the answer to req over b's records
	// inside req.Range (already clipped to b), from one statement that reads no value or
	// sort_key column, so route and answer come from one snapshot. Count asks the store to
	// count; MIN/MAX alone are primary-key probes. The reader must be released.
	AggregateRange(ctx context.Context, b BucketID, req AggregateRequest) (Route, array.RecordReader, error)
	// Append inserts recs, which must all belong to b, in one transaction behind the write
	// fence (docs/pulpitum-v4.md §3.1): strategy check (ErrStrategyMismatch), metadata row
	// created if absent, state re-read (ErrBucketReadOnly unless hot), then plain inserts
	// (ErrDuplicateRecord on an existing (event_time, sort_key)). Nothing is written on error.
	Append(ctx context.Context, b BucketID, recs []Record) error
	// AppendStream is the write port of a whole write request (ingest.go): every record src
	// yields, of any buckets of table tableID with strategy, written in one transaction behind
	// the write fence — strategy check (ErrStrategyMismatch), every bucket's metadata row
	// created if absent, every bucket hot (ErrBucketReadOnly otherwise), plain inserts
	// (ErrDuplicateRecord on an existing or repeated (event_time, sort_key) of a bucket) —
	// retried whole on SQLSTATE 40001 where the store retries. It returns the records stored:
	// all of them, or 0 and an error with nothing written (an error of src is returned
	// unchanged). The records' checks are src's (DurableTable.Ingest); a store holds at most a
	// batch of them in memory at a time.
	AppendStream(ctx context.Context, tableID string, strategy Strategy, src IngestSource) (int64, error)
	// Route returns the bucket's current route (hot when no metadata row exists).
	Route(ctx context.Context, b BucketID) (Route, error)
	// HotBatchScanner reads a bucket as Arrow batches (batch.go): the executor's read path.
	HotBatchScanner
	// Partitions is partition discovery for analytical reads (queries that pin no
	// partition): the distinct partition keys of tableID that have a bucket of strategy
	// intersecting the half-open range r, in byte order, at most limit of them (limit <= 0:
	// no bound), each with the keys of its buckets that have such a route row. It reads the
	// route rows (bucket metadata) in one statement, so hot, archiving and archived buckets
	// all count: an archived bucket's route row is what points at its archive manifest, and
	// every record has a route row (the records' foreign key), so a bucket without one was
	// never written and reads as empty (docs/pulpitum-v4.md §1.4). A partition whose every
	// bucket in r is empty but has a route row is listed (its reads return nothing). The
	// answer's partition keys and bucket keys may be shared with a store's cache and must
	// not be modified; the slices holding them are the caller's.
	Partitions(ctx context.Context, tableID string, strategy Strategy, r TimeRange, limit int) ([]Partition, error)
}

// WorkKind says what an archive work item needs: a cut-over (hot or expired archiving bucket
// to archive) or a cleanup (archived bucket whose hot rows are not yet deleted).
type WorkKind uint8

const (
	// WorkCutover is a bucket to claim, snapshot, upload, verify and publish.
	WorkCutover WorkKind = iota + 1
	// WorkCleanup is a published bucket whose hot rows still need deleting.
	WorkCleanup
)

// String returns "cutover" or "cleanup" (a fixed set, usable as a log field or metric label).
func (k WorkKind) String() string {
	switch k {
	case WorkCutover:
		return "cutover"
	case WorkCleanup:
		return "cleanup"
	}
	return "unknown"
}

// ArchiveWork is one advisory item returned by Discover; it must be claimed before use.
type ArchiveWork struct {
	Bucket BucketID
	Kind   WorkKind
}

// ArchiveSession is a claimed archive lease: every owner-conditioned statement checks
// generation, token and unexpired lease (docs/pulpitum-v4.md §4). Token is secret and is
// never logged.
type ArchiveSession struct {
	Bucket     BucketID
	Generation int64
	Token      string
}

// ArchiveStateStore is the archival state machine of the hot store (docs/pulpitum-v4.md
// §4.1). Every method is one conditional statement or transaction; a condition that no longer
// holds yields ErrStaleArchiveSession (or a nil session from the claims: a lost race).
type ArchiveStateStore interface {
	// Discover lists cleanup work first, then cut-over work for buckets ending at or before
	// eligibleBefore, at most limit items, ordered by bucket_end, table_id, partition_key,
	// bucket_key.
	Discover(ctx context.Context, eligibleBefore time.Time, limit int) ([]ArchiveWork, error)
	// ClaimArchive moves a due hot (or expired archiving) bucket to archiving with a new
	// generation and token; it returns nil, nil when the bucket cannot be claimed.
	ClaimArchive(ctx context.Context, b BucketID, lease time.Duration) (*ArchiveSession, error)
	// ClaimCleanup claims an archived bucket whose hot rows are not deleted; nil, nil when
	// it cannot be claimed.
	ClaimCleanup(ctx context.Context, b BucketID, lease time.Duration) (*ArchiveSession, error)
	// Renew extends the session's lease.
	Renew(ctx context.Context, s *ArchiveSession, lease time.Duration) error
	// Snapshot returns every record of the archiving bucket in (event_time, sort_key) order.
	Snapshot(ctx context.Context, s *ArchiveSession) ([]Record, error)
	// PublishArchive sets the bucket archived with the manifest key: the read cut-over commit.
	PublishArchive(ctx context.Context, s *ArchiveSession, manifestKey string) error
	// DeleteHotBucket deletes the archived bucket's hot rows and sets hot_deleted, atomically.
	DeleteHotBucket(ctx context.Context, s *ArchiveSession) error
	// DeferArchive returns an archiving bucket to hot with a retry time now+retry.
	DeferArchive(ctx context.Context, s *ArchiveSession, retry time.Duration) error
	// DeferCleanup postpones cleanup of an archived bucket to now+retry.
	DeferCleanup(ctx context.Context, s *ArchiveSession, retry time.Duration) error
	// Status returns the archival fields of b's metadata row (a bucket without one is hot,
	// generation 0, no attempts): what operators and the archiver read to resolve an
	// ambiguous outcome, and what the conformance suite checks. It never returns the owner
	// token.
	Status(ctx context.Context, b BucketID) (ArchiveStatus, error)
}

// ArchiveStatus is the durable archival state of one bucket (docs/pulpitum-v4.md §1.1):
// its route plus the attempt count, the retry time and the lease expiry, in UTC, zero when
// NULL. Times are those of the clock the store compares them with (the database's now() for
// CockroachDB/PostgreSQL, the store clock for SQLite).
type ArchiveStatus struct {
	Route
	// Attempts counts deferrals (archive_attempts): DeferArchive and DeferCleanup add one.
	Attempts int64
	// NextAttemptAt is the durable retry time (archive_next_attempt_at): nothing claims the
	// bucket before it.
	NextAttemptAt time.Time
	// LeaseExpiresAt is the owner's lease expiry (archive_owner_expires_at).
	LeaseExpiresAt time.Time
}

// ArchiveReader reads published archives (implemented by the archive package). It validates
// the manifest against b before trusting the payload. Safe for concurrent use.
type ArchiveReader interface {
	// AggregateGroups is the archive's partial-aggregate port (partial.go): the answer to req
	// over the archived bucket b's records inside req.Range (already clipped to b), as partial
	// groups in ascending bin order (the caller merges them, AggregateRequest.Merge), from the
	// manifest's record count or trusted statistics, decoding only event_time where they do
	// not settle a row group or page; ErrNoAggregate when the payload's statistics cannot be
	// trusted at all (the caller reads the rows). Groups rather than Arrow batches: a query
	// asks every archived bucket of its range, and one batch is built for all the answers.
	AggregateGroups(ctx context.Context, manifestKey string, b BucketID, req AggregateRequest) ([]PartialGroup, error)
	// ArchiveBatchReader reads an archived bucket as Arrow batches (batch.go): the
	// executor's read path.
	ArchiveBatchReader
}

// ArchiveWriter writes a bucket's payload and manifest for one generation and returns the
// manifest key after reading both objects back and verifying them (docs/pulpitum-v4.md
// §1.5, write protocol).
type ArchiveWriter interface {
	Put(ctx context.Context, b BucketID, generation int64, recs []Record) (manifestKey string, err error)
}

// ReadStats counts the work one query caused. Attach one to a context with WithReadStats;
// stores and archive readers add to it. All methods are safe for concurrent use and accept a
// nil receiver (no-op).
type ReadStats struct {
	BytesRead      atomic.Int64 // bytes fetched from object storage (manifest, footer, pages)
	HotRows        atomic.Int64 // records returned by hot-store reads
	ArchiveRows    atomic.Int64 // records decoded from archives
	HotStatements  atomic.Int64 // statements sent to the hot store
	ObjectReads    atomic.Int64 // object-store range reads
	HotBuckets     atomic.Int64 // buckets answered by the hot tier
	ArchiveBuckets atomic.Int64 // buckets answered by the archive tier
	// Parquet row groups and pages of archived payloads that a row read planned to decode
	// (Read) or left out because their trusted event_time statistics put them outside the
	// range (Pruned). Pages are counted only where the page index was consulted (a row group
	// neither inside nor outside the range as a whole).
	RowGroupsRead, RowGroupsPruned, PagesRead, PagesPruned atomic.Int64
}

// AddPruning counts row groups and pages of a Parquet payload read and pruned (ReadStats).
func (s *ReadStats) AddPruning(groupsRead, groupsPruned, pagesRead, pagesPruned int64) {
	if s != nil {
		s.RowGroupsRead.Add(groupsRead)
		s.RowGroupsPruned.Add(groupsPruned)
		s.PagesRead.Add(pagesRead)
		s.PagesPruned.Add(pagesPruned)
	}
}

// Add helpers; each is a no-op on a nil receiver.
func (s *ReadStats) AddBytes(n int64) {
	if s != nil {
		s.BytesRead.Add(n)
	}
}

// AddObjectRead counts one object-store read of n bytes.
func (s *ReadStats) AddObjectRead(n int64) {
	if s != nil {
		s.ObjectReads.Add(1)
		s.BytesRead.Add(n)
	}
}

// AddHotStatement counts one statement sent to the hot store.
func (s *ReadStats) AddHotStatement() {
	if s != nil {
		s.HotStatements.Add(1)
	}
}

type statsKey struct{}

// WithReadStats returns a context carrying s.
func WithReadStats(ctx context.Context, s *ReadStats) context.Context {
	return context.WithValue(ctx, statsKey{}, s)
}

// StatsFrom returns the ReadStats attached to ctx, or nil.
func StatsFrom(ctx context.Context) *ReadStats {
	s, _ := ctx.Value(statsKey{}).(*ReadStats)
	return s
}

// Validate rejects a nil session or one without a token (ErrStaleArchiveSession) and a session
// whose bucket id is invalid (BucketID.Validate).
func (s *ArchiveSession) Validate() error {
	if s == nil || s.Token == "" {
		return ErrStaleArchiveSession
	}
	return s.Bucket.Validate()
}

// StoredTable is one (table id, bucket strategy) pair the hot store holds metadata rows for.
type StoredTable struct {
	TableID  string
	Strategy Strategy
}

// TableCatalog lists the table ids a hot store holds buckets of, with their persisted
// strategies. A server checks its table definitions against it at start-up: a definition
// whose strategy differs from the persisted one derives bucket keys that match no stored
// bucket, and one whose table id matches nothing stored reads nothing — both would answer
// every query with nothing instead of failing. Appends keep one strategy per table id
// (ErrStrategyMismatch), but rows written by other tools may hold several; each pair is listed
// once, ordered by table id then strategy. Implementations read every metadata row (one
// statement); the call is meant for start-up. Safe for concurrent use.
type TableCatalog interface {
	StoredTables(ctx context.Context) ([]StoredTable, error)
}
