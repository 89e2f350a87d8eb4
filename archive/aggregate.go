package archive

import (
	"context"
	"slices"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"go.opentelemetry.io/otel/attribute"

	"github.com/flightsrv/flightsrv/routing"
)

// AggregateGroups is the archive's partial-aggregate port (routing.ArchiveReader): the partial
// count(*), min(event_time) and max(event_time) of the archived bucket b's records inside
// req.Range (clipped to the bucket), ungrouped or per time bin (req.Bin, groups in ascending
// bin order), without building records for Parquet payloads.
//
//   - The validated manifest answers an ungrouped count(*) alone when the range covers the
//     whole bucket (its record_count, after the payload check: one metadata request, no
//     payload byte read), and every request over a bucket whose manifest counts no record.
//   - Parquet payloads are classified row group by row group, then page by page, with the
//     trusted event_time statistics (stats.go): a group or page outside the range is skipped;
//     one inside it answers with its row count (minus nulls) and its exact min_value and
//     max_value — when grouped, only if both fall in the same bin; every other one
//     (straddling the range, spanning bins, or whose own statistics are missing or not
//     trusted) has only its event_time values fetched and decoded. Nothing assumes the file
//     is sorted or its row groups in time order, so files written by other tools (several
//     unsorted or empty row groups, any timestamp unit, either UTC flag, nullable columns,
//     missing, truncated or reversed statistics) are answered exactly.
//   - A Parquet payload whose event_time statistics cannot be used at all (no TIMESTAMP
//     logical type, INT96, no TYPE_DEFINED_ORDER) returns routing.ErrNoAggregate: the
//     executor reads the bucket's rows (ReadBatches) in that fragment instead.
//   - JSON payloads, and every payload under VerifyFully, are read whole, verified and
//     aggregated without Arrow batches.
//
// Object reads are counted in the request's routing.ReadStats. Safe for concurrent use; the
// caller owns the groups.
func (r *Reader) AggregateGroups(ctx context.Context, manifestKey string, b routing.BucketID, req routing.AggregateRequest) (out []routing.PartialGroup, err error) {
	ctx, span, c := r.startSpan(ctx, "aggregate")
	defer func() { endSpan(span, c, -1, err) }()
	if req.Bin != nil {
		if err := req.Bin.Validate(); err != nil {
			return nil, err
		}
	}
	m, err := r.manifest(ctx, manifestKey, b, c)
	if err != nil {
		return nil, err
	}
	c.setAttrs(attribute.String("pulpitum.archive.format", m.Format.String()))
	rng := req.Range.Intersect(b.Range())
	if rng.Empty() || (m.RecordCount == 0 && !r.opts.VerifyFully) {
		return nil, nil
	}
	if !r.opts.VerifyFully && req.Bin == nil && !req.Needs(routing.MeasureMin) && !req.Needs(routing.MeasureMax) && rng.Covers(b.Range()) {
		// The payload check (r.manifest: the payload exists with the manifest's size) is the
		// whole check: the footer is not fetched, so damage inside the payload (footer
		// included) is found by the first read that decodes it, and routing then refuses
		// counts of the route too.
		c.setAttrs(attribute.String("pulpitum.archive.count_source", "manifest"))
		return []routing.PartialGroup{{Count: int64(m.RecordCount)}}, nil
	}
	acc := newPartialTally(req.Bin)
	if r.opts.VerifyFully || m.Format == FormatJSON {
		recs, err := r.fullRange(ctx, m, b, c, rng)
		if err != nil {
			return nil, err
		}
		for i := range recs {
			t := recs[i].EventTime.UTC()
			acc.add(t.UnixMicro(), 1, t, t)
		}
		return acc.groups(), nil
	}
	ft, rr, err := r.parquetFooter(ctx, m, c)
	if err != nil {
		return nil, err
	}
	if ft.ts != nil && !ft.statsUsable() {
		c.setAttrs(attribute.String("pulpitum.archive.count_source", "rows"))
		return nil, routing.ErrNoAggregate
	}
	// An inside group or page brings its count and its exact bounds (when grouped, only if
	// they share a bin); a decoded value counts itself.
	inside := func(bd bounds, k int64) bool {
		lo, hi := valueMicros(bd.min, ft.ts.unit), valueMicros(bd.max, ft.ts.unit)
		if req.Bin != nil && !acc.sameBin(lo, hi) {
			return false
		}
		if k > 0 {
			acc.add(lo, k, unitTime(bd.min, ft.ts.unit), unitTime(bd.max, ft.ts.unit))
		}
		return true
	}
	value := func(v int64) {
		t := unitTime(v, ft.ts.unit)
		acc.add(valueMicros(v, ft.ts.unit), 1, t, t)
	}
	if err := r.aggregateParquet(ctx, ft, rr, b, rng, inside, value); err != nil {
		return nil, err
	}
	return acc.groups(), nil
}

// Aggregate is AggregateGroups' answer as Arrow batches of req.Schema() (routing.AggregateRequest.Answer):
// the partial-aggregate port's shape for callers outside the executor. The reader must be
// released.
func (r *Reader) Aggregate(ctx context.Context, manifestKey string, b routing.BucketID, req routing.AggregateRequest) (array.RecordReader, error) {
	gs, err := r.AggregateGroups(ctx, manifestKey, b, req)
	if err != nil {
		return nil, err
	}
	return req.Answer(gs)
}

// partialTally accumulates partial groups by bin start (one group when ungrouped). It
// remembers the last bin so that sorted input costs one comparison per value.
type partialTally struct {
	bin        *routing.Binning
	byBin      map[int64]*routing.PartialGroup // by bin start, µs
	start, end int64                           // the last bin [start, end), µs; empty before the first add
}

func newPartialTally(bin *routing.Binning) *partialTally {
	return &partialTally{bin: bin, byBin: map[int64]*routing.PartialGroup{}}
}

// locate returns the start of the bin holding us (0 when ungrouped).
func (a *partialTally) locate(us int64) int64 {
	if a.bin == nil {
		return 0
	}
	if us >= a.start && us < a.end {
		return a.start
	}
	s := a.bin.Floor(time.UnixMicro(us))
	a.start, a.end = s.UnixMicro(), a.bin.Next(s).UnixMicro()
	return a.start
}

// sameBin reports whether lo and hi (µs, lo ≤ hi) lie in one bin.
func (a *partialTally) sameBin(lo, hi int64) bool { return a.locate(lo) == a.locate(hi) }

// add merges n > 0 values whose least and greatest are lo and hi into the bin holding us.
func (a *partialTally) add(us, n int64, lo, hi time.Time) {
	k := a.locate(us)
	g := a.byBin[k]
	if g == nil {
		g = &routing.PartialGroup{Bin: time.UnixMicro(k).UTC(), Min: lo, Max: hi, Found: true}
		a.byBin[k] = g
	}
	g.Count += n
	if lo.Before(g.Min) {
		g.Min = lo
	}
	if hi.After(g.Max) {
		g.Max = hi
	}
}

// groups returns the groups in ascending bin order.
func (a *partialTally) groups() []routing.PartialGroup {
	out := make([]routing.PartialGroup, 0, len(a.byBin))
	for _, g := range a.byBin {
		out = append(out, *g)
	}
	slices.SortFunc(out, func(x, y routing.PartialGroup) int { return x.Bin.Compare(y.Bin) })
	return out
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
