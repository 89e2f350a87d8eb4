package archive

import (
	"context"
	"io"
	"time"

	"github.com/parquet-go/parquet-go"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/flightsrv/flightsrv/routing"
)

var _ routing.ArchiveMinMaxer = (*Reader)(nil)

// MinMax returns the number of records of b inside rng (clipped to the bucket) and their least
// and greatest event times (UTC; zero times when n is 0), without building records for
// Parquet payloads: the MIN/MAX(timestamp) pushdown of an archived bucket.
//
// Parquet payloads are classified as for Count, row group by row group, then page by page,
// with the trusted event_time statistics (stats.go): a group or page outside the range is
// skipped; one inside it answers with its row count and its exact min_value and max_value; a
// straddling one — or one whose statistics are not trusted — has only its event_time values
// fetched and decoded. Nothing assumes the file is sorted or that its row groups come in time
// order: every inside answer and every decoded value takes part, so files written by other
// tools (several unsorted or empty row groups, any timestamp unit, either UTC flag, INT96,
// nullable columns, missing, truncated or reversed statistics) are answered exactly. A
// manifest alone never answers MIN/MAX, except that a bucket whose manifest counts no record
// has none. JSON payloads, and every payload under VerifyFully, are read whole, verified, and
// scanned without Arrow batches. Object reads are counted in the request's routing.ReadStats.
func (r *Reader) MinMax(ctx context.Context, manifestKey string, b routing.BucketID, rng routing.TimeRange) (n uint64, minTime, maxTime time.Time, err error) {
	ctx, span := r.tracer.Start(ctx, "pulpitum.archive.read", trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String("pulpitum.archive.operation", "minmax")))
	c := &ioCounter{}
	defer func() { endSpan(span, c, -1, err) }()
	m, err := r.manifest(ctx, manifestKey, b, c)
	if err != nil {
		return 0, time.Time{}, time.Time{}, err
	}
	span.SetAttributes(attribute.String("pulpitum.archive.format", m.Format.String()))
	rng = rng.Intersect(b.Range())
	if rng.Empty() || (m.RecordCount == 0 && !r.opts.VerifyFully) {
		return 0, time.Time{}, time.Time{}, nil
	}
	if r.opts.VerifyFully || m.Format == FormatJSON {
		all, err := r.fullRecords(ctx, m, b, c)
		if err != nil {
			return 0, time.Time{}, time.Time{}, err
		}
		// fullRecords checked the order, so the range is one run of records.
		lo, hi := rangeIndex(all, rng)
		if lo >= hi {
			return 0, time.Time{}, time.Time{}, nil
		}
		return uint64(hi - lo), all[lo].EventTime.UTC(), all[hi-1].EventTime.UTC(), nil
	}
	ft, rr, err := r.parquetFooter(ctx, m, c)
	if err != nil {
		return 0, time.Time{}, time.Time{}, err
	}
	var ext extremes
	if err := r.minMaxParquet(ctx, ft, rr, b, rng, &ext); err != nil {
		return 0, time.Time{}, time.Time{}, err
	}
	if ext.n == 0 {
		return 0, time.Time{}, time.Time{}, nil
	}
	return ext.n, unitTime(ext.lo, ft.ts.unit), unitTime(ext.hi, ft.ts.unit), nil
}

// extremes accumulates a count and the least and greatest stored event-time values (column
// units) of the values in a range.
type extremes struct {
	n      uint64
	lo, hi int64
}

// add merges k values whose least and greatest are lo and hi; k = 0 adds nothing.
func (e *extremes) add(k uint64, lo, hi int64) {
	if k == 0 {
		return
	}
	if e.n == 0 || lo < e.lo {
		e.lo = lo
	}
	if e.n == 0 || hi > e.hi {
		e.hi = hi
	}
	e.n += k
}

// minMaxParquet classifies the payload's row groups and pages (see MinMax) and adds inside
// answers and decoded straddling values to ext.
func (r *Reader) minMaxParquet(ctx context.Context, ft *footer, rr *rangeReader, b routing.BucketID, rng routing.TimeRange, ext *extremes) error {
	if ft.ts == nil {
		return ft.tsErr
	}
	want := ft.ts.unitRange(rng)
	bucket := ft.ts.unitRange(b.Range())
	var work []rowSpan
	for g := range ft.groups {
		rows := ft.groups[g].numRows
		if rows == 0 {
			continue
		}
		if gb, ok := ft.groupBounds(g, bucket); ok {
			cls, k := gb.classify(want, rows)
			if cls == outside {
				continue
			}
			if cls == inside {
				ext.add(uint64(k), gb.min, gb.max)
				continue
			}
		}
		oi := ft.groups[g].offsets[ft.ts.leaf]
		if oi == nil || ft.groups[g].tsIndex == nil {
			work = append(work, rowSpan{g, 0, rows})
			continue
		}
		for p := range oi.PageLocations {
			s, e := pageRows(oi, p, rows)
			if pb, ok := ft.pageBounds(g, p, bucket); ok {
				cls, k := pb.classify(want, e-s)
				if cls == outside {
					continue
				}
				if cls == inside {
					ext.add(uint64(k), pb.min, pb.max)
					continue
				}
			}
			work = appendSpan(work, rowSpan{g, s, e})
		}
	}
	if len(work) == 0 {
		return nil
	}
	pad := int64(r.opts.ReadBufferBytes)
	var ranges []byteRange
	for _, sp := range work {
		ranges = append(ranges, ft.spanRanges(sp.g, ft.ts.leaf, sp.s, sp.e, pad)...)
	}
	if err := rr.prefetch(ranges); err != nil {
		return err
	}
	for _, sp := range work {
		if err := ft.minMaxSpan(ctx, rr, sp, want, bucket, ext); err != nil {
			return err
		}
	}
	return nil
}

// minMaxSpan adds the non-null event times of rows [s, e) of group g that lie in the unit
// range want to ext. Every decoded value must lie in the bucket's unit range
// (ErrRecordOutsideBucket otherwise), as for countSpan.
func (ft *footer) minMaxSpan(ctx context.Context, ra io.ReaderAt, sp rowSpan, want, bucket unitRange, ext *extremes) error {
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
				ext.add(1, t, t)
			}
		}
		return nil
	})
}

// unitTime converts a stored event-time value of unit nanoseconds per unit to a UTC instant
// (local timestamps are read as UTC wall-clock time, as everywhere in this package). Values
// whose nanoseconds would overflow int64 still convert exactly.
func unitTime(v, unit int64) time.Time {
	per := int64(time.Second) / unit
	sec, rem := v/per, v%per
	if rem < 0 {
		sec, rem = sec-1, rem+per
	}
	return time.Unix(sec, rem*unit).UTC()
}
