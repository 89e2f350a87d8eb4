package routing

import (
	"unicode/utf8"

	"bytes"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tidwall/gjson"
)

// Record is one row of a routed table as stored: the physical row of pulpitum_v4_records
// without its table and bucket columns. EventTime is UTC with microsecond precision (the
// precision of CockroachDB TIMESTAMPTZ; values are truncated to µs at ingest so that cursors
// compare the same way on both tiers, docs/pulpitum-v4.md §11.7). The byte slices are owned
// by the Record; readers hand out fresh slices and callers may keep them.
type Record struct {
	PartitionKey []byte
	EventTime    time.Time
	SortKey      []byte
	Value        []byte
}

// Cursor is a position in (event_time, sort_key) order. It names no bucket, so it stays valid
// across buckets and tiers (docs/pulpitum-v4.md §3.2).
type Cursor struct {
	EventTime time.Time
	SortKey   []byte
}

// Compare orders records by (event_time, sort_key), comparing sort keys bytewise: it returns
// -1, 0 or +1.
func Compare(aTime time.Time, aKey []byte, bTime time.Time, bKey []byte) int {
	if c := aTime.Compare(bTime); c != 0 {
		return c
	}
	return bytes.Compare(aKey, bKey)
}

// Admits reports whether record r comes strictly after cursor c in the given direction: later
// for ascending reads, earlier for descending ones. A nil cursor admits every record.
func (c *Cursor) Admits(r *Record, desc bool) bool {
	if c == nil {
		return true
	}
	cmp := Compare(r.EventTime, r.SortKey, c.EventTime, c.SortKey)
	if desc {
		return cmp < 0
	}
	return cmp > 0
}

// CursorOf returns the cursor positioned at r.
func CursorOf(r *Record) *Cursor { return &Cursor{EventTime: r.EventTime, SortKey: r.SortKey} }

// ReadRequest asks one bucket for at most Limit records of its partition inside Range and
// strictly after After (in Desc order when set), ordered by (event_time, sort_key) ascending,
// or descending when Desc is set. Limit must be positive.
type ReadRequest struct {
	Range TimeRange
	After *Cursor
	Limit int
	Desc  bool
}

// State is a bucket's route state (docs/pulpitum-v4.md §1.4): hot, archiving or archived.
type State uint8

const (
	// StateHot buckets are read from and appended to in the hot store. A bucket without a
	// metadata row is hot.
	StateHot State = iota
	// StateArchiving buckets are being archived: read from the hot store, closed to appends.
	StateArchiving
	// StateArchived buckets are read only from their published manifest; archived is terminal.
	StateArchived
)

// String returns the persisted spelling of the state column.
func (s State) String() string {
	switch s {
	case StateHot:
		return "hot"
	case StateArchiving:
		return "archiving"
	case StateArchived:
		return "archived"
	}
	return fmt.Sprintf("state(%d)", uint8(s))
}

// ParseState parses the state column.
func ParseState(s string) (State, error) {
	switch s {
	case "hot":
		return StateHot, nil
	case "archiving":
		return StateArchiving, nil
	case "archived":
		return StateArchived, nil
	}
	return 0, fmt.Errorf("%w: unknown bucket state", ErrOperationFailed)
}

// Route is what the metadata row says about a bucket at one instant. ManifestKey is set only
// for archived buckets.
type Route struct {
	State       State
	ManifestKey string
	HotDeleted  bool
	Generation  int64
}

// Tier names where a bucket's answer came from; it is used as a metric label value.
type Tier string

const (
	// TierHot is the hot store (CockroachDB, PostgreSQL or SQLite).
	TierHot Tier = "hot"
	// TierArchive is a published archive object.
	TierArchive Tier = "archive"
)

// Errors of the durable-table ports. They never carry partition values, bucket keys, object
// keys, tokens or SQL (docs/pulpitum-v4.md §3.1, error privacy); wrap them with %w.
var (
	ErrInvalidTimeRange    = errors.New("routing: invalid time range")
	ErrOutsideWriteWindow  = errors.New("routing: record is outside the table's writable window")
	ErrBucketReadOnly      = errors.New("routing: bucket is not hot and cannot be appended to")
	ErrStrategyMismatch    = errors.New("routing: bucket strategy differs from the table's persisted strategy")
	ErrDuplicateRecord     = errors.New("routing: a record with the same (event_time, sort_key) already exists")
	ErrStaleArchiveSession = errors.New("routing: archive session is stale")
	ErrOperationFailed     = errors.New("routing: durable operation failed")
	ErrUnavailable         = errors.New("routing: store unavailable")
	ErrCommitOutcome       = errors.New("routing: commit outcome unknown")
	ErrInvalidRecord       = errors.New("routing: invalid record")
	// ErrValueNotJSON is an ErrInvalidRecord whose value is not JSON where the table's values
	// are (TableDef.JSONValues): PostgreSQL's 22P02 "invalid input syntax for type json" of
	// a json column.
	ErrValueNotJSON = errors.New("routing: value is not JSON")
)

// DuplicateRecordError is the ErrDuplicateRecord of a write request (HotStore.AppendStream)
// that names the record refused: its position in the request, counted from 0 as the write
// fence counts them (DurableTable.Ingest), never its values. errors.Is matches
// ErrDuplicateRecord.
type DuplicateRecordError struct {
	Record int64
}

func (e *DuplicateRecordError) Error() string {
	return fmt.Sprintf("%s (record %d)", ErrDuplicateRecord.Error(), e.Record)
}

// Is reports whether target is ErrDuplicateRecord.
func (e *DuplicateRecordError) Is(target error) bool { return target == ErrDuplicateRecord }

// TableDef defines one routed table (docs/pulpitum-v4.md §2, TableDefinition).
type TableDef struct {
	// Name is the SQL name clients use, matched case-insensitively (folded to lower case).
	Name string
	// TableID is the persisted table_id; several names may not share one id.
	TableID string
	// PartitionColumn is the logical column mapped to partition_key, for example channel_id.
	PartitionColumn string
	// Strategy is the bucket strategy; immutable per TableID.
	Strategy Strategy
	// WritableBuckets is the size of the writable window, at least 1 (the reference's chat
	// default is 2).
	WritableBuckets int
	// JSONValues declares that the table's value column holds JSON documents (what `flightsrv
	// load` encodes, and what the SQL surface's ->> and friends read): writes through the
	// fence (Ingest, Append) refuse a record whose value is not valid UTF-8 JSON text
	// (ErrInvalidRecord naming its position). Off, values are opaque bytes, as Pulpitum's
	// BYTES column (docs/pulpitum-v4.md §5.1). serve and load turn it on unless --table says
	// value=bytes.
	JSONValues bool
}

// silent wraps err without adding to a message (fmt.Errorf's %w of it writes nothing), so
// that errors.Is finds a second sentinel behind a message naming the first.
type silent struct{ err error }

func (s silent) Error() string { return "" }
func (s silent) Unwrap() error { return s.err }

// validJSON reports whether v is one JSON value in UTF-8, as PostgreSQL's json input accepts
// it (any value, surrounding white space allowed).
func validJSON(v []byte) bool {
	return utf8.Valid(v) && gjson.ValidBytes(v)
}

// checkValue refuses record n (its position in the request, from 0) when the table's values
// are JSON (TableDef.JSONValues) and its value is not.
func (d TableDef) checkValue(r *Record, n int64) error {
	if d.JSONValues && !validJSON(r.Value) {
		return fmt.Errorf("%w: record %d's value is not JSON (the table's values are JSON documents)%w", ErrInvalidRecord, n, silent{ErrValueNotJSON})
	}
	return nil
}

// Validate checks the definition: non-blank name, id and partition column, a known strategy
// and a writable window of at least one bucket.
func (d TableDef) Validate() error {
	switch {
	case strings.TrimSpace(d.Name) == "":
		return errors.New("routing: table name is blank")
	case strings.TrimSpace(d.TableID) == "":
		return errors.New("routing: table id is blank")
	case strings.TrimSpace(d.PartitionColumn) == "":
		return errors.New("routing: partition column is blank")
	case !d.Strategy.Valid():
		return ErrUnknownStrategy
	case d.WritableBuckets < 1:
		return errors.New("routing: writable window must hold at least one bucket")
	case strings.ContainsRune(d.TableID, 0):
		return errors.New("routing: table id contains a NUL byte")
	}
	switch strings.ToLower(d.PartitionColumn) {
	case "timestamp", "id", "value":
		return errors.New("routing: partition column collides with a fixed column")
	}
	return nil
}
