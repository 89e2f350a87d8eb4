package archive

import (
	"context"
	"errors"
	"io"
	"math"
	"sync"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/flightsrv/flightsrv/routing"
)

// rowSpan is a half-open row span [s, e) of one row group.
type rowSpan struct {
	g    int
	s, e int64
}

var valuePool = sync.Pool{New: func() any { b := make([]parquet.Value, 1024); return &b }}

// readLeaf reads rows [s, e) of leaf column leaf in row group g through ra and hands the values
// to fn in batches (a top-level, non-repeated column has one value per row, nulls included).
// The values, and any byte slices they reference, are valid only until fn returns. ctx is
// checked between pages; I/O through ra carries the request's context too.
func (ft *footer) readLeaf(ctx context.Context, ra io.ReaderAt, g, leaf int, s, e int64, fn func([]parquet.Value) error) (err error) {
	defer recoverDecode(&err)
	n := e - s
	if n <= 0 {
		return nil
	}
	pages := ft.pagesFrom(ra, g, leaf)
	defer pages.Close()
	if err := pages.SeekToRow(s); err != nil {
		return decodeError(err)
	}
	bufp := valuePool.Get().(*[]parquet.Value)
	defer valuePool.Put(bufp)
	buf := *bufp
	for n > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		p, err := pages.ReadPage()
		if err != nil {
			return decodeError(err)
		}
		vr := p.Values()
		for n > 0 {
			k, rerr := vr.ReadValues(buf[:min(n, int64(len(buf)))])
			if k > 0 {
				if ferr := fn(buf[:k]); ferr != nil {
					parquet.Release(p)
					return ferr
				}
				n -= int64(k)
			}
			if rerr == io.EOF || (rerr == nil && k == 0) {
				break
			}
			if rerr != nil {
				parquet.Release(p)
				return decodeError(rerr)
			}
		}
		parquet.Release(p)
	}
	return nil
}

// decodeError keeps errors that come from the object store or the caller's context (our
// reader's sentinels, possibly wrapped by parquet-go) and turns everything else — a malformed
// page, an object shorter than its own footer says — into ErrPayloadDecode.
func decodeError(err error) error {
	var se *storeError
	switch {
	case errors.Is(err, context.Canceled):
		return context.Canceled
	case errors.Is(err, context.DeadlineExceeded):
		return context.DeadlineExceeded
	case errors.As(err, &se):
		return se
	}
	return ErrPayloadDecode
}

// tsValue returns the stored event time of v in column units (nanoseconds for INT96).
func (ts *tsColumn) tsValue(v parquet.Value) int64 {
	if ts.int96 {
		return int96Nanos(v.Int96())
	}
	return v.Int64()
}

// decodeEventTimes decodes the event_time values of rows [s, e) of group g and calls fn with
// each non-null one that lies in the unit range want. Every decoded value must lie in the
// bucket's unit range (ErrRecordOutsideBucket otherwise).
func (ft *footer) decodeEventTimes(ctx context.Context, ra io.ReaderAt, sp rowSpan, want, bucket unitRange, fn func(t int64)) error {
	ts := ft.ts
	return ft.readLeaf(ctx, ra, sp.g, ts.leaf, sp.s, sp.e, func(vals []parquet.Value) error {
		for _, v := range vals {
			if v.IsNull() {
				continue
			}
			t := ts.tsValue(v)
			if t < bucket.lo || t >= bucket.hi {
				return ErrRecordOutsideBucket
			}
			if t >= want.lo && t < want.hi {
				fn(t)
			}
		}
		return nil
	})
}

// sortKey is a position in (event_time, sort_key) order, for order checks across spans.
type sortKey struct {
	t   int64
	key []byte
}

// envelopeDecoder decodes envelope rows into records.
type envelopeDecoder struct {
	bucket   routing.BucketID
	inBucket unitRange // bucket bounds in nanoseconds
	cand     unitRange // candidate event times in nanoseconds: only these rows become records
	validate bool      // check membership and order of every decoded row
}

func newEnvelopeDecoder(b routing.BucketID, cand routing.TimeRange, validate bool) *envelopeDecoder {
	ns := &tsColumn{unit: 1}
	d := &envelopeDecoder{bucket: b, validate: validate}
	d.inBucket = ns.unitRange(b.Range())
	d.cand = ns.unitRange(cand)
	return d
}

// allTimes is a candidate range admitting every representable event time.
var allTimes = routing.TimeRange{Start: time.Unix(0, math.MinInt64), End: time.Unix(0, math.MaxInt64).Add(time.Nanosecond)}

// decodeSpan decodes rows [s, e) of an envelope row group and returns the candidate rows as
// records in file order, plus the first and last positions decoded (for order checks across
// spans; ok is false when the span held no rows). With validate, every decoded row must have
// the bucket's partition key and an event time inside the bucket (ErrRecordOutsideBucket) and
// follow its predecessor in the span (ErrRecordsUnsorted). Record slices are fresh and owned by
// the caller.
func (ft *footer) decodeSpan(ctx context.Context, ra io.ReaderAt, sp rowSpan, d *envelopeDecoder) (recs []routing.Record, first, last sortKey, ok bool, err error) {
	n := int(sp.e - sp.s)
	if n <= 0 {
		return nil, first, last, false, nil
	}
	times := make([]int64, 0, n)
	err = ft.readLeaf(ctx, ra, sp.g, colEventTime, sp.s, sp.e, func(vals []parquet.Value) error {
		for _, v := range vals {
			t := v.Int64()
			if d.validate && (t < d.inBucket.lo || t >= d.inBucket.hi) {
				return ErrRecordOutsideBucket
			}
			times = append(times, t)
		}
		return nil
	})
	if err != nil {
		return nil, first, last, false, err
	}
	if len(times) != n {
		return nil, first, last, false, ErrPayloadDecode
	}
	cand := 0
	for _, t := range times {
		if t >= d.cand.lo && t < d.cand.hi {
			cand++
		}
	}
	if cand == 0 && !d.validate {
		return nil, first, last, false, nil
	}
	// Candidate rows' bytes are copied into one arena; spans[c] holds the arena offsets of
	// candidate c's partition key, sort key and value.
	type cell struct{ a, b int }
	var arena []byte
	cells := make([][3]cell, cand)
	isCand := func(row int) bool { t := times[row]; return t >= d.cand.lo && t < d.cand.hi }
	readBytes := func(leaf, col int, check func(row int, v []byte) error) error {
		row, c := 0, 0
		err := ft.readLeaf(ctx, ra, sp.g, leaf, sp.s, sp.e, func(vals []parquet.Value) error {
			for _, v := range vals {
				if row >= n {
					return ErrPayloadDecode
				}
				b := v.ByteArray()
				if check != nil {
					if err := check(row, b); err != nil {
						return err
					}
				}
				if isCand(row) {
					cells[c][col] = cell{len(arena), len(arena) + len(b)}
					arena = append(arena, b...)
					c++
				}
				row++
			}
			return nil
		})
		if err == nil && row != n {
			err = ErrPayloadDecode
		}
		return err
	}
	var checkPK, checkKey func(int, []byte) error
	var prev []byte
	if d.validate {
		checkPK = func(_ int, v []byte) error {
			if string(v) != string(d.bucket.PartitionKey) {
				return ErrRecordOutsideBucket
			}
			return nil
		}
	}
	checkKey = func(row int, k []byte) error {
		t := times[row]
		if row == 0 {
			first = sortKey{t: t, key: append([]byte(nil), k...)}
		} else if d.validate && (times[row-1] > t || (times[row-1] == t && string(prev) > string(k))) {
			return ErrRecordsUnsorted
		}
		prev = append(prev[:0], k...)
		return nil
	}
	if err := readBytes(colPartitionKey, 0, checkPK); err != nil {
		return nil, first, last, false, err
	}
	if err := readBytes(colSortKey, 1, checkKey); err != nil {
		return nil, first, last, false, err
	}
	last = sortKey{t: times[n-1], key: prev}
	if cand == 0 {
		return nil, first, last, true, nil
	}
	if err := readBytes(colValue, 2, nil); err != nil {
		return nil, first, last, false, err
	}
	recs = make([]routing.Record, 0, cand)
	c := 0
	for row, t := range times {
		if !isCand(row) {
			continue
		}
		x := cells[c]
		recs = append(recs, routing.Record{
			PartitionKey: arena[x[0].a:x[0].b:x[0].b],
			EventTime:    time.Unix(0, t).UTC(),
			SortKey:      arena[x[1].a:x[1].b:x[1].b],
			Value:        arena[x[2].a:x[2].b:x[2].b],
		})
		c++
	}
	return recs, first, last, true, nil
}
