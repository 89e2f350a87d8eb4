package routing

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Column names a stored column of a routed table: the physical row of pulpitum_v4_records
// without its table and bucket columns (docs/pulpitum-v4.md §1.2).
type Column uint8

const (
	// ColumnPartition is partition_key, the table's partition column: Arrow utf8, not null.
	ColumnPartition Column = iota
	// ColumnTimestamp is event_time: Arrow timestamp[ns, tz=UTC], not null, stored with µs
	// precision.
	ColumnTimestamp
	// ColumnID is sort_key: Arrow utf8, not null.
	ColumnID
	// ColumnValue is value: Arrow binary, not null.
	ColumnValue
)

// AllColumns lists every stored column in table order.
var AllColumns = []Column{ColumnPartition, ColumnTimestamp, ColumnID, ColumnValue}

// TimestampType is the Arrow type of the timestamp column: nanoseconds since the Unix epoch,
// UTC.
var TimestampType = &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}

// String returns the column's fixed SQL name; the partition column's is the table's own
// (TableDef.PartitionColumn), so it answers "partition".
func (c Column) String() string {
	switch c {
	case ColumnPartition:
		return "partition"
	case ColumnTimestamp:
		return "timestamp"
	case ColumnID:
		return "id"
	case ColumnValue:
		return "value"
	}
	return fmt.Sprintf("column(%d)", uint8(c))
}

// Field returns the Arrow field of column c of def: its SQL name and type. The fields are
// declared nullable, as the logical table schema has always been; stored values are never
// null.
func (def TableDef) Field(c Column) arrow.Field {
	switch c {
	case ColumnPartition:
		return arrow.Field{Name: def.PartitionColumn, Type: arrow.BinaryTypes.String, Nullable: false}
	case ColumnTimestamp:
		return arrow.Field{Name: "timestamp", Type: TimestampType, Nullable: false}
	case ColumnID:
		return arrow.Field{Name: "id", Type: arrow.BinaryTypes.String, Nullable: false}
	}
	return arrow.Field{Name: "value", Type: arrow.BinaryTypes.Binary, Nullable: false}
}

// BatchSchema returns the schema of a batch read of cols (BatchRequest.Columns), one field per
// column in the given order.
func (def TableDef) BatchSchema(cols []Column) *arrow.Schema {
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		fields[i] = def.Field(c)
	}
	return arrow.NewSchema(fields, nil)
}

// Batch limits: a batch read from a store holds at most MaxBatchRows rows and, past its first
// row, at most MaxBatchBytes bytes of the selected variable-width columns, keeping each Flight
// message well under gRPC's default 4 MiB receive limit (docs/flightsql-clients.md, result
// streams).
const (
	MaxBatchRows  = 8192
	MaxBatchBytes = 2 << 20
)

// BatchRequest asks one bucket for its records inside Range as Arrow record batches.
type BatchRequest struct {
	// Range is the requested half-open time range; the store clips it to the bucket.
	Range TimeRange
	// Columns are the columns of each batch, in output order; they may repeat no column. An
	// empty list asks for batches with no column whose row counts are the records' (the scan
	// path of COUNT(*)).
	Columns []Column
	// Desc asks for (event_time, sort_key) descending instead of ascending.
	Desc bool
	// Limit bounds the records returned; < 0 means no limit, 0 returns none.
	Limit int64
	// Alloc allocates the batches; nil means memory.DefaultAllocator. The query's memory limit
	// is enforced through it.
	Alloc memory.Allocator
	// ManifestRows lets an archived bucket answer a request for at most the partition column
	// of the whole bucket (Range covering it, no limit) from its validated manifest's record
	// count once the payload check has passed, without fetching or decoding the payload: the
	// trust the aggregate pushdown gives whole-bucket counts (docs/pulpitum-v4.md; archive's
	// package documentation). Damage inside the payload then goes unseen by this read. The
	// executor sets it for reads whose other columns come from the shredded-column cache.
	// Hot stores ignore it.
	ManifestRows bool
}

// BatchReader is one bucket read in progress: an Arrow record reader (schema
// TableDef.BatchSchema(req.Columns)) whose batches are never empty, respect the batch limits,
// and are owned by the reader (valid until the next call to Next; Retain to keep one). Errors
// arrive through Err(). Release stops the read and returns what it holds (a pooled
// connection, an open object reader) at once; a reader may not be used from two goroutines at
// once.
//
// Ordered reports whether the batches come in (event_time, sort_key) order (descending when
// requested). Hot stores are always ordered; an archive written by another tool may not be,
// and the consumer then sorts.
type BatchReader interface {
	array.RecordReader
	Ordered() bool
}

// HotBatchScanner is the hot-store port of Arrow reads (implemented by both hot-store
// adapters; the conformance suite in routing/storetest covers it). Safe for concurrent use.
type HotBatchScanner interface {
	// ScanRange returns the route of b and, unless it is archived (then the reader is nil),
	// a reader of b's records inside req.Range, with the route and the rows from one
	// snapshot (docs/pulpitum-v4.md §3.2): one statement per bucket, streamed into Arrow
	// builders page by page, never the whole bucket in memory. Stored partition or sort keys
	// that are not valid UTF-8 fail the read with an error wrapping ErrOperationFailed. The
	// reader holds a pooled connection until it ends or is released.
	ScanRange(ctx context.Context, b BucketID, req BatchRequest) (Route, BatchReader, error)
}

// ArchiveBatchReader is the archive port of Arrow reads (implemented by the archive package).
// Safe for concurrent use.
type ArchiveBatchReader interface {
	// ReadBatches validates the manifest against b and returns a reader of the archived
	// records of b inside req.Range (clipped to the bucket). Parquet row groups and pages
	// outside the range are skipped by the same trusted-statistics classification as the
	// aggregate path, and only the requested columns are decoded, straight into Arrow arrays.
	ReadBatches(ctx context.Context, manifestKey string, b BucketID, req BatchRequest) (BatchReader, error)
}

// ScanBucket reads one bucket as Arrow batches through its route, with the route decision of
// ReadBucket: a cached archived route goes straight to the archive; otherwise the hot store
// returns the route and the rows from one snapshot, and an archived answer is cached and read
// from the archive (the retained hot rows are never a fallback). The tier says which tier
// answered. A request whose range misses the bucket, or whose limit is 0, yields an empty
// ordered reader. The caller must Release the reader.
func (t *DurableTable) ScanBucket(ctx context.Context, b BucketID, req BatchRequest) (BatchReader, Tier, error) {
	req.Range = req.Range.Intersect(b.Range())
	if req.Alloc == nil {
		req.Alloc = memory.DefaultAllocator
	}
	if req.Range.Empty() || req.Limit == 0 {
		return EmptyBatchReader(t.def.BatchSchema(req.Columns)), TierHot, nil
	}
	return routeBucket(ctx, t, b,
		func() (Route, BatchReader, error) { return t.hot.ScanRange(ctx, b, req) },
		func(key string) (BatchReader, error) {
			r, err := t.archive.ReadBatches(ctx, key, b, req)
			if err != nil {
				return nil, err
			}
			return t.damage.watch(ctx, key, r), nil
		})
}

// ArchivedBatchReader is a BatchReader of an archived bucket: every reader ScanBucket returns
// for a bucket the archive answered implements it. ManifestKey is the manifest key of the
// route read (content-addressed and immutable, docs/pulpitum-v4.md §1.5: a new generation of
// the bucket has a new key), which names the records the reader yields.
type ArchivedBatchReader interface {
	BatchReader
	ManifestKey() string
}

// EmptyBatchReader returns an ordered reader of schema that yields no batch.
func EmptyBatchReader(schema *arrow.Schema) BatchReader {
	r, _ := array.NewRecordReader(schema, nil)
	return orderedReader{r}
}

type orderedReader struct{ array.RecordReader }

func (orderedReader) Ordered() bool { return true }
