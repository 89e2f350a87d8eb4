package routing

import (
	"bytes"
	"errors"
	"fmt"
	"time"
)

// Helpers shared by the hot-store adapters (routing/cockroach, routing/sqlite): the rules that
// do not depend on a database driver live here once.

// RouteFromRow builds a route from a metadata row and checks the state invariants that concern
// readers (docs/pulpitum-v4.md §1.4): hot and archiving rows have no object key (hasKey
// false), archived rows have a non-empty one. Violations wrap ErrOperationFailed.
func RouteFromRow(state string, key string, hasKey bool, hotDeleted bool, generation int64) (Route, error) {
	st, err := ParseState(state)
	if err != nil {
		return Route{}, err
	}
	r := Route{State: st, HotDeleted: hotDeleted, Generation: generation}
	switch {
	case st == StateArchived && (!hasKey || key == ""):
		return Route{}, fmt.Errorf("%w: archived bucket has no manifest key", ErrOperationFailed)
	case st != StateArchived && hasKey:
		return Route{}, fmt.Errorf("%w: %s bucket has a manifest key", ErrOperationFailed, st)
	case st == StateArchived:
		r.ManifestKey = key
	}
	return r, nil
}

// SetPartitionKeys gives every record its own copy of pk, all carved from one allocation (the
// stores do not select partition_key: every row of a bucket has the bucket's).
func SetPartitionKeys(recs []Record, pk []byte) {
	if len(recs) == 0 {
		return
	}
	slab := make([]byte, len(pk)*len(recs))
	for i := range recs {
		part := slab[i*len(pk) : (i+1)*len(pk) : (i+1)*len(pk)]
		copy(part, pk)
		recs[i].PartitionKey = part
	}
}

// CeilMicro returns t in UTC rounded up to a whole microsecond.
func CeilMicro(t time.Time) time.Time {
	t = t.UTC()
	f := t.Truncate(time.Microsecond)
	if f.Before(t) {
		return f.Add(time.Microsecond)
	}
	return f
}

// MicroBounds converts a range and optional cursor into bounds on the microsecond grid of the
// stored times that select exactly the same stored records: a stored time t (whole µs) lies in
// [s, e) iff it lies in [ceil(s), ceil(e)). A cursor whose time is not a whole microsecond
// excludes every stored record at its microsecond on the wrong side, so it becomes a bound
// (ascending: t ≥ ceil(c); descending: t ≤ floor(c)) and no cursor is returned; otherwise the
// cursor is returned with a non-nil sort key.
func MicroBounds(r TimeRange, after *Cursor, desc bool) (start, end time.Time, cursor *Cursor) {
	start, end = CeilMicro(r.Start), CeilMicro(r.End)
	if after == nil {
		return start, end, nil
	}
	t := after.EventTime.UTC()
	if t.Nanosecond()%1000 == 0 {
		sk := after.SortKey
		if sk == nil {
			sk = []byte{}
		}
		return start, end, &Cursor{EventTime: t, SortKey: sk}
	}
	if !desc {
		if c := CeilMicro(t); c.After(start) {
			start = c
		}
	} else if f := t.Truncate(time.Microsecond).Add(time.Microsecond); f.Before(end) {
		end = f
	}
	return start, end, nil
}

// PartitionDiscoveryBounds returns the microsecond bounds (start, end) that select, among
// buckets whose stored bounds lie on the microsecond grid, exactly those intersecting the
// nanosecond range r: bucket_start < end AND bucket_end > start. start is r.Start truncated and
// end r.End rounded up to the microsecond (a bucket ending at 5 µs intersects [5.5 µs, …) only
// if 5 > 5.5, false, and 5 > 5 is false too; one starting at 6 µs intersects […, 5.5 µs) only
// if 6 < 5.5, false, and 6 < 6 is false too). Used by both hot stores' Partitions.
func PartitionDiscoveryBounds(r TimeRange) (start, end time.Time) {
	return r.Start.UTC().Truncate(time.Microsecond), CeilMicro(r.End)
}

// MaxKeyBytes bounds a record's partition key and sort key together, in bytes: PostgreSQL
// keeps the records' primary key (table id, partition key, bucket key, event time, sort key)
// in a B-tree whose entries may take at most 2,704 bytes (a third of an 8 KiB page), and a
// longer one fails the whole write with SQLSTATE 54000; 2,048 leaves the table id and bucket
// key their room. Both hot stores honour it, so a table moves between them (trial 32 F6).
const MaxKeyBytes = 2048

// checkKeySize refuses record n whose partition key and sort key take more than MaxKeyBytes
// (ErrInvalidRecord, naming the sizes, never the keys).
func checkKeySize(r *Record, n int64) error {
	if k := len(r.PartitionKey) + len(r.SortKey); k > MaxKeyBytes {
		return fmt.Errorf("%w: record %d's partition value and id take %d bytes, more than the %d a record's keys may (the hot store's primary key index)", ErrInvalidRecord, n, k, MaxKeyBytes)
	}
	return nil
}

// CheckRecords checks recs for an append to bucket b, as both hot stores require: every record
// carries b's partition key, a non-empty sort key, keys of at most MaxKeyBytes together and an
// event time inside b once truncated to microseconds (NormalizeTime). The error wraps
// ErrInvalidRecord and names the record by its index only (no key or value).
func CheckRecords(b BucketID, recs []Record) error {
	for i := range recs {
		r := &recs[i]
		if err := checkKeySize(r, int64(i)); err != nil {
			return err
		}
		switch {
		case !bytes.Equal(r.PartitionKey, b.PartitionKey):
			return fmt.Errorf("%w: record %d belongs to another partition", ErrInvalidRecord, i)
		case len(r.SortKey) == 0:
			return fmt.Errorf("%w: record %d has an empty sort key", ErrInvalidRecord, i)
		case !b.Range().Contains(NormalizeTime(r.EventTime)):
			return fmt.Errorf("%w: record %d is outside its bucket", ErrInvalidRecord, i)
		}
	}
	return nil
}

// ClaimedRow interprets the outcome of a claim statement's one-row scan (the new generation,
// RETURNING generation) for Claim: noRows, the driver's "no rows" error, means that no row
// matched — nothing was claimed, which is no error; any other error is returned as it is.
func ClaimedRow(scanErr, noRows error) (claimed bool, err error) {
	if errors.Is(scanErr, noRows) {
		return false, nil
	}
	return scanErr == nil, scanErr
}
