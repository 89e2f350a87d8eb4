package archive

import (
	"context"
	"time"

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
		recs, err := r.fullRange(ctx, m, b, c, rng)
		if err != nil || len(recs) == 0 {
			return 0, time.Time{}, time.Time{}, err
		}
		return uint64(len(recs)), recs[0].EventTime.UTC(), recs[len(recs)-1].EventTime.UTC(), nil
	}
	ft, rr, err := r.parquetFooter(ctx, m, c)
	if err != nil {
		return 0, time.Time{}, time.Time{}, err
	}
	// An inside group or page brings its count and its exact bounds; a decoded value itself.
	var ext extremes
	err = r.aggregateParquet(ctx, ft, rr, b, rng,
		func(bd bounds, k int64) bool { ext.add(uint64(k), bd.min, bd.max); return true },
		func(t int64) { ext.add(1, t, t) })
	if err != nil {
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
