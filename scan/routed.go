package scan

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flightsrv/flightsrv/routing"
)

// Batch limits: a batch holds at most MaxBatchRows rows and, past its first row, at most
// MaxBatchBytes bytes of variable-width data, keeping each Flight message well under gRPC's
// default 4 MiB receive limit (flightsql-clients.md, result streams).
const (
	MaxBatchRows  = 8192
	MaxBatchBytes = 2 << 20
	// PageRows is how many records one bucket read asks a store for at a time.
	PageRows = 16384
)

// ErrRoutedRead is the generic execution error surfaced to clients when a routed read fails
// for a reason that must not be shown (store errors, invalid stored UTF-8).
var ErrRoutedRead = errors.New("scan: routed read failed")

// Spec describes one routed scan. Columns are logical column names (the table's partition
// column, "timestamp", "id", "value") in output order; Schema must have one field per column
// with the table's types (substrait.TableSchema). Limit < 0 means no limit.
type Spec struct {
	Table     *routing.DurableTable
	Partition []byte
	Range     routing.TimeRange
	Columns   []string
	Desc      bool
	Limit     int64
	Schema    *arrow.Schema
}

// bucketStream reads the buckets of a spec in order with bounded look-ahead: the launcher takes
// a slot before starting a bucket and the consumer frees it when it takes that bucket's result,
// so at most Fanout bucket results are being read or buffered at once.
type bucketStream struct {
	ctx     context.Context
	cancel  context.CancelFunc
	results []chan bucketResult
	next    int
	wg      sync.WaitGroup
	slots   chan struct{}
	// hotBuckets and archiveBuckets count the buckets consumed so far by the tier that
	// answered them (consumer goroutine only).
	hotBuckets, archiveBuckets int
}

type bucketResult struct {
	recs []routing.Record
	tier routing.Tier
	err  error
}

// openBuckets starts reading the buckets of spec (limit caps each bucket's read: the seed's
// bounded over-fetch) with at most the table's fan-out buckets read or buffered ahead of the
// consumer.
func openBuckets(ctx context.Context, spec *Spec, limit int64) *bucketStream {
	buckets := spec.Table.Buckets(spec.Partition, spec.Range)
	if spec.Desc {
		slices.Reverse(buckets)
	}
	ctx, cancel := context.WithCancel(ctx)
	s := &bucketStream{ctx: ctx, cancel: cancel, results: make([]chan bucketResult, len(buckets)), slots: make(chan struct{}, spec.Table.Fanout())}
	for i := range s.results {
		s.results[i] = make(chan bucketResult, 1)
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for i, b := range buckets {
			select {
			case s.slots <- struct{}{}:
			case <-ctx.Done():
				for j := i; j < len(buckets); j++ {
					s.results[j] <- bucketResult{err: ctx.Err()}
				}
				return
			}
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				recs, tier, err := readBucket(ctx, spec, b, limit)
				s.results[i] <- bucketResult{recs: recs, tier: tier, err: err}
			}()
		}
	}()
	return s
}

// readBucket reads up to limit records (all when limit < 0) of bucket b in pages, and says
// which tier answered the last page.
func readBucket(ctx context.Context, spec *Spec, b routing.BucketID, limit int64) ([]routing.Record, routing.Tier, error) {
	var out []routing.Record
	var after *routing.Cursor
	tier := routing.TierHot
	for {
		page := int64(PageRows)
		if limit >= 0 && limit-int64(len(out)) < page {
			page = limit - int64(len(out))
		}
		if page <= 0 {
			return out, tier, nil
		}
		recs, t, err := spec.Table.ReadBucket(ctx, b, routing.ReadRequest{Range: spec.Range, After: after, Limit: int(page), Desc: spec.Desc})
		if err != nil {
			return nil, tier, err
		}
		tier = t
		out = append(out, recs...)
		if int64(len(recs)) < page {
			return out, tier, nil
		}
		after = routing.CursorOf(&out[len(out)-1])
	}
}

// nextBucket returns the next bucket's records; ok is false when no bucket is left.
func (s *bucketStream) nextBucket() (recs []routing.Record, ok bool, err error) {
	if s.next >= len(s.results) {
		return nil, false, nil
	}
	select {
	case r := <-s.results[s.next]:
		s.next++
		<-s.slots
		if r.err == nil && r.tier == routing.TierArchive {
			s.archiveBuckets++
		} else if r.err == nil {
			s.hotBuckets++
		}
		return r.recs, true, r.err
	case <-s.ctx.Done():
		return nil, false, s.ctx.Err()
	}
}

// close cancels outstanding bucket reads and waits for them to return.
func (s *bucketStream) close() {
	s.cancel()
	s.wg.Wait()
}

// Summary is what the scan path computes for ungrouped aggregates: the number of rows and,
// when Rows > 0, the earliest and latest event time (UTC, µs precision as stored), and how many
// buckets each tier answered.
type Summary struct {
	Rows                       uint64
	Min, Max                   time.Time
	HotBuckets, ArchiveBuckets int
}

// Source returns hot, archive or mixed according to the tiers that answered (the seed's metric
// label).
func (s Summary) Source() string {
	return routing.CountResult{HotBuckets: s.HotBuckets, ArchiveBuckets: s.ArchiveBuckets}.Source()
}

// Summarize reads every record of spec's range (values included, exactly as a record scan
// would: this is the scan path that pushdown is measured against) and returns their count and
// time bounds. spec.Limit and spec.Desc are ignored.
func Summarize(ctx context.Context, spec *Spec) (Summary, error) {
	s := openBuckets(ctx, spec, -1)
	defer s.close()
	var sum Summary
	for {
		recs, ok, err := s.nextBucket()
		if err != nil {
			return Summary{}, err
		}
		if !ok {
			sum.HotBuckets, sum.ArchiveBuckets = s.hotBuckets, s.archiveBuckets
			return sum, nil
		}
		for i := range recs {
			t := recs[i].EventTime
			if sum.Rows == 0 || t.Before(sum.Min) {
				sum.Min = t
			}
			if sum.Rows == 0 || t.After(sum.Max) {
				sum.Max = t
			}
			sum.Rows++
		}
	}
}

// Scan starts a routed scan and returns a reader of record batches with spec.Schema, in
// (timestamp, id) order (descending when spec.Desc), at most spec.Limit rows. Batches are
// never empty; a scan with no rows yields no batch. The reader owns its batches: a batch
// returned by RecordBatch is valid until the next call to Next; Retain it to keep it. The
// caller must Release the reader, which stops outstanding bucket reads. Errors arrive through
// Err(). Scan fails early only for an invalid spec.
func Scan(ctx context.Context, spec *Spec, alloc memory.Allocator) (array.RecordReader, error) {
	if len(spec.Columns) != spec.Schema.NumFields() {
		return nil, fmt.Errorf("scan: %d columns for a schema of %d fields", len(spec.Columns), spec.Schema.NumFields())
	}
	if spec.Limit == 0 {
		return EmptyReader(spec.Schema), nil
	}
	r := &routedReader{spec: spec, alloc: alloc, remaining: spec.Limit, refs: 1}
	r.stream = openBuckets(ctx, spec, spec.Limit)
	return r, nil
}

type routedReader struct {
	spec      *Spec
	alloc     memory.Allocator
	stream    *bucketStream
	pending   []routing.Record
	remaining int64 // < 0: unlimited
	cur       arrow.RecordBatch
	err       error
	done      bool
	refs      int64
}

func (r *routedReader) Schema() *arrow.Schema          { return r.spec.Schema }
func (r *routedReader) Record() arrow.RecordBatch      { return r.cur }
func (r *routedReader) RecordBatch() arrow.RecordBatch { return r.cur }
func (r *routedReader) Err() error                     { return r.err }
func (r *routedReader) Retain()                        { atomic.AddInt64(&r.refs, 1) }

func (r *routedReader) Release() {
	if atomic.AddInt64(&r.refs, -1) != 0 {
		return
	}
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	if r.stream != nil {
		r.stream.close()
		r.stream = nil
	}
}

func (r *routedReader) Next() bool {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	if r.done || r.err != nil {
		return false
	}
	for len(r.pending) == 0 {
		if r.remaining == 0 {
			r.finish()
			return false
		}
		recs, ok, err := r.stream.nextBucket()
		if err != nil {
			r.err = err
			r.finish()
			return false
		}
		if !ok {
			r.finish()
			return false
		}
		if r.remaining >= 0 && int64(len(recs)) > r.remaining {
			recs = recs[:r.remaining]
		}
		if r.remaining >= 0 {
			r.remaining -= int64(len(recs))
		}
		r.pending = recs
	}
	n := batchRows(r.pending, r.spec.Columns)
	rec, err := buildBatch(r.alloc, r.spec, r.pending[:n])
	r.pending = r.pending[n:]
	if err != nil {
		r.err = err
		r.finish()
		return false
	}
	r.cur = rec
	return true
}

func (r *routedReader) finish() {
	r.done = true
	r.pending = nil
	if r.stream != nil {
		r.stream.close()
		r.stream = nil
	}
}

// batchRows returns how many of recs fit one batch under MaxBatchRows and MaxBatchBytes
// (always at least one). Only the selected columns count: cols are logical column names, the
// partition column being any name other than timestamp, id and value.
func batchRows(recs []routing.Record, cols []string) int {
	var ts, ids, parts, vals int
	for _, c := range cols {
		switch c {
		case "timestamp":
			ts++
		case "id":
			ids++
		case "value":
			vals++
		default:
			parts++
		}
	}
	size := 0
	for i := range recs {
		if i >= MaxBatchRows {
			return i
		}
		size += 8*ts + ids*len(recs[i].SortKey) + parts*len(recs[i].PartitionKey) + vals*len(recs[i].Value)
		if i > 0 && size > MaxBatchBytes {
			return i
		}
	}
	return len(recs)
}

// buildBatch converts records to one Arrow batch of spec's columns.
func buildBatch(alloc memory.Allocator, spec *Spec, recs []routing.Record) (arrow.RecordBatch, error) {
	b := array.NewRecordBuilder(alloc, spec.Schema)
	defer b.Release()
	for ci, col := range spec.Columns {
		switch fb := b.Field(ci).(type) {
		case *array.StringBuilder:
			fb.Reserve(len(recs))
			for i := range recs {
				v := recs[i].SortKey
				if col != "id" {
					v = recs[i].PartitionKey
				}
				if !utf8.Valid(v) {
					return nil, fmt.Errorf("%w: stored %s is not valid UTF-8", ErrRoutedRead, col)
				}
				fb.Append(string(v))
			}
		case *array.TimestampBuilder:
			fb.Reserve(len(recs))
			for i := range recs {
				fb.UnsafeAppend(arrow.Timestamp(recs[i].EventTime.UnixNano()))
			}
		case *array.BinaryBuilder:
			fb.Reserve(len(recs))
			for i := range recs {
				fb.Append(recs[i].Value)
			}
		default:
			return nil, fmt.Errorf("scan: column %q has unsupported type %s", col, spec.Schema.Field(ci).Type)
		}
	}
	return b.NewRecordBatch(), nil
}
