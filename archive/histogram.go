package archive

import (
	"context"
	"slices"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/flightsrv/flightsrv/routing"
)

var _ routing.ArchiveBinCounter = (*Reader)(nil)

// CountByBin returns the histogram of the archived bucket b's records inside rng (clipped to
// the bucket) under bin: the non-empty bins in ascending order, without building records for
// Parquet payloads (grouped COUNT(*) pushdown).
//
// When the clipped range lies inside one bin the answer is Count's: the validated manifest's
// record_count when the range covers the whole bucket, statistics otherwise. Parquet payloads
// are classified as for Count, row group by row group, then page by page, with the trusted
// event_time statistics (stats.go): a group or page outside the range is skipped; one inside
// it whose trusted min_value and max_value fall in the same bin adds its row count (minus
// nulls) to that bin without decoding; every other one — straddling the range, spanning bins,
// or with statistics that are not trusted — has only its event_time values fetched, decoded
// and binned (every decoded value must lie in the bucket). Nothing assumes the file is sorted,
// so payloads written by other tools are answered exactly. JSON payloads, and every payload
// under VerifyFully, are read whole, verified and binned without Arrow batches.
func (r *Reader) CountByBin(ctx context.Context, manifestKey string, b routing.BucketID, rng routing.TimeRange, bin routing.Binning) (bins []routing.Bin, err error) {
	if err := bin.Validate(); err != nil {
		return nil, err
	}
	rng = rng.Intersect(b.Range())
	if !rng.Empty() && bin.Contains(rng) {
		n, err := r.Count(ctx, manifestKey, b, rng)
		if err != nil || n == 0 {
			return nil, err
		}
		return []routing.Bin{{Start: bin.Floor(rng.Start), Count: n}}, nil
	}
	ctx, span := r.tracer.Start(ctx, "pulpitum.archive.read", trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String("pulpitum.archive.operation", "count_by_bin")))
	c := &ioCounter{}
	defer func() { endSpan(span, c, -1, err) }()
	m, err := r.manifest(ctx, manifestKey, b, c)
	if err != nil {
		return nil, err
	}
	span.SetAttributes(attribute.String("pulpitum.archive.format", m.Format.String()))
	if rng.Empty() {
		return nil, nil
	}
	acc := newBinTally(bin)
	if r.opts.VerifyFully || m.Format == FormatJSON {
		recs, err := r.fullRange(ctx, m, b, c, rng)
		if err != nil {
			return nil, err
		}
		for i := range recs {
			acc.add(recs[i].EventTime.UnixMicro(), 1)
		}
		return acc.bins(), nil
	}
	ft, rr, err := r.parquetFooter(ctx, m, c)
	if err != nil {
		return nil, err
	}
	// An inside group or page answers when its trusted bounds fall in one bin, which gets its
	// count; a decoded value counts in its own bin.
	oneBin := func(bd bounds, k int64) bool {
		lo, hi := valueMicros(bd.min, ft.ts.unit), valueMicros(bd.max, ft.ts.unit)
		if !acc.sameBin(lo, hi) {
			return false
		}
		acc.add(lo, uint64(k))
		return true
	}
	err = r.aggregateParquet(ctx, ft, rr, b, rng, oneBin,
		func(t int64) { acc.add(valueMicros(t, ft.ts.unit), 1) })
	if err != nil {
		return nil, err
	}
	return acc.bins(), nil
}

// valueMicros converts a stored event-time value (unit nanoseconds per unit) to whole
// microseconds since the epoch, rounding down: bin bounds are whole microseconds, so a value
// and its microsecond always share a bin.
func valueMicros(v, unit int64) int64 {
	switch unit {
	case 1:
		q := v / 1000
		if v%1000 < 0 {
			q--
		}
		return q
	case 1000:
		return v
	}
	return v * (unit / 1000)
}

// binTally counts microsecond instants per bin. It remembers the last bin so that sorted
// input costs one comparison per value.
type binTally struct {
	bin        routing.Binning
	counts     map[int64]uint64 // by bin start, µs
	start, end int64            // the last bin [start, end), µs; empty before the first add
}

func newBinTally(bin routing.Binning) *binTally {
	return &binTally{bin: bin, counts: map[int64]uint64{}}
}

// locate returns the start of the bin holding us.
func (a *binTally) locate(us int64) int64 {
	if us >= a.start && us < a.end {
		return a.start
	}
	s := a.bin.Floor(time.UnixMicro(us))
	a.start, a.end = s.UnixMicro(), a.bin.Next(s).UnixMicro()
	return a.start
}

// sameBin reports whether lo and hi (µs, lo ≤ hi) lie in one bin.
func (a *binTally) sameBin(lo, hi int64) bool { return a.locate(lo) == a.locate(hi) }

// add counts n values in the bin holding us.
func (a *binTally) add(us int64, n uint64) {
	if n > 0 {
		a.counts[a.locate(us)] += n
	}
}

// bins returns the non-empty bins in ascending order.
func (a *binTally) bins() []routing.Bin {
	out := make([]routing.Bin, 0, len(a.counts))
	for s, n := range a.counts {
		out = append(out, routing.Bin{Start: time.UnixMicro(s).UTC(), Count: n})
	}
	slices.SortFunc(out, func(x, y routing.Bin) int { return x.Start.Compare(y.Start) })
	return out
}
