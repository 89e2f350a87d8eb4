package routing

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"
)

// IngestBatch is one batch of a write request's records as the write fence hands them to a
// hot store: Records[i] belongs to the bucket *Buckets[i]. Event times are already normalised
// (NormalizeTime) and inside their bucket, keys are non-empty and every bucket is inside the
// table's writable window at the application clock. Bucket pointers are shared by the records
// of one bucket across the batches of a request (a store may key a map on them). The batch
// belongs to the source and is valid until its next Next call.
type IngestBatch struct {
	Records []Record
	Buckets []*BucketID
}

// IngestSource yields the batches of one write request to HotStore.AppendStream. Next returns
// io.EOF after the last batch; any other error ends the request (the store writes nothing and
// returns that error unchanged). Not safe for concurrent use: one store call reads it.
type IngestSource interface {
	Next(ctx context.Context) (IngestBatch, error)
}

// RecordSource yields the records of one write request in batches (DurableTable.Ingest). Next
// returns io.EOF after the last batch (which may come with no records); any other error ends
// the request, nothing written, and is returned unchanged. The records belong to the source
// and stay valid until its next Next call; the fence normalises their event times in place.
type RecordSource interface {
	Next(ctx context.Context) ([]Record, error)
}

// JSONSource is implemented by a RecordSource whose values are JSON by construction (encoded
// from columns, as internal/load's Converter encodes wide rows): the write fence skips its
// check of their values (TableDef.JSONValues), which would only repeat the encoder's work
// (about half a microsecond per 100-byte value, routing's BenchmarkValidJSON).
type JSONSource interface {
	ValuesAreJSON() bool
}

// Ingest writes every record src yields into the table in one all-or-nothing request behind
// the write fence (docs/pulpitum-v4.md §3.1): each record needs a non-empty partition key and
// sort key of at most MaxKeyBytes together, and a JSON value when the table says so
// (TableDef.JSONValues) (ErrInvalidRecord),
// and a bucket inside the writable window at the application clock
// (ErrOutsideWriteWindow; future buckets are refused too), checked as the records stream;
// then the hot store's AppendStream writes them all in one transaction (strategy check,
// metadata rows, hot buckets only, duplicates refused). It returns the records stored: all of
// them, or 0 with the error of the first rule that refused one (naming its position in the
// request, counted from 0, never its values). Memory is the source's batch, not the request.
func (t *DurableTable) Ingest(ctx context.Context, src RecordSource) (int64, error) {
	fs := &fencedSource{t: t, src: src, now: t.clock(), windows: map[string][2]time.Time{}, buckets: map[string]*BucketID{}, lastOf: map[string]*BucketID{}}
	if js, ok := src.(JSONSource); ok && js.ValuesAreJSON() {
		fs.trustJSON = true
	}
	n, err := t.hot.AppendStream(ctx, t.def.TableID, t.def.Strategy, fs)
	if err != nil {
		return 0, err
	}
	if n != fs.records {
		return 0, fmt.Errorf("%w: the store stored %d of %d records", ErrOperationFailed, n, fs.records)
	}
	return n, nil
}

// fencedSource applies the write fence's record rules to a RecordSource and assigns buckets.
type fencedSource struct {
	t       *DurableTable
	src     RecordSource
	now     time.Time
	windows map[string][2]time.Time // partition key → first and last writable bucket start
	buckets map[string]*BucketID    // BucketID.CacheKey → the request's one pointer
	lastOf  map[string]*BucketID    // partition key → the bucket of its latest record
	last    *BucketID
	records int64 // records handed on so far
	out     []*BucketID
	done    bool
	// trustJSON skips the JSON check of values (JSONSource).
	trustJSON bool
}

func (f *fencedSource) Next(ctx context.Context) (IngestBatch, error) {
	for !f.done {
		recs, err := f.src.Next(ctx)
		if errors.Is(err, io.EOF) {
			f.done = true
		} else if err != nil {
			return IngestBatch{}, err
		}
		if len(recs) == 0 {
			continue
		}
		f.out = f.out[:0]
		for i := range recs {
			b, err := f.bucket(&recs[i], f.records+int64(i))
			if err != nil {
				return IngestBatch{}, err
			}
			f.out = append(f.out, b)
		}
		f.records += int64(len(recs))
		return IngestBatch{Records: recs, Buckets: f.out}, nil
	}
	return IngestBatch{}, io.EOF
}

// bucket checks record r (number n of the request), normalises its time and returns its bucket.
func (f *fencedSource) bucket(r *Record, n int64) (*BucketID, error) {
	if len(r.PartitionKey) == 0 || len(r.SortKey) == 0 {
		return nil, fmt.Errorf("%w: record %d has an empty partition key or id", ErrInvalidRecord, n)
	}
	if err := checkKeySize(r, n); err != nil {
		return nil, err
	}
	if !f.trustJSON {
		if err := f.t.def.checkValue(r, n); err != nil {
			return nil, err
		}
	}
	r.EventTime = NormalizeTime(r.EventTime)
	// The bucket of the previous record, then the partition's latest bucket: rows in time
	// order with their partitions interleaved (a file sorted by time) find their bucket
	// without computing it (BucketFor formats its key).
	l := f.last
	if l == nil || !bytes.Equal(l.PartitionKey, r.PartitionKey) {
		l = f.lastOf[string(r.PartitionKey)]
	}
	if l != nil && !r.EventTime.Before(l.Start) && r.EventTime.Before(l.End) {
		f.last = l
		return l, nil
	}
	def := f.t.def
	b := BucketFor(def.TableID, r.PartitionKey, def.Strategy, r.EventTime)
	if p := f.buckets[b.CacheKey()]; p != nil {
		f.last, f.lastOf[string(p.PartitionKey)] = p, p
		return p, nil
	}
	w, ok := f.windows[string(r.PartitionKey)]
	if !ok {
		win := RecentBuckets(def.TableID, r.PartitionKey, def.Strategy, f.now, def.WritableBuckets)
		w = [2]time.Time{win[0].Start, win[len(win)-1].Start}
		f.windows[string(r.PartitionKey)] = w
	}
	if b.Start.Before(w[0]) || b.Start.After(w[1]) {
		return nil, fmt.Errorf("%w (record %d)", ErrOutsideWriteWindow, n)
	}
	b.PartitionKey = bytes.Clone(b.PartitionKey)
	p := &b
	f.buckets[b.CacheKey()] = p
	f.last, f.lastOf[string(p.PartitionKey)] = p, p
	return p, nil
}
