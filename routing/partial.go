package routing

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// The partial-aggregate port: the one way a store answers a per-bucket aggregate without
// reading rows (docs/architecture.md, "The executor and its fragments": one partial-aggregate port
// per store, not one port per aggregate). A bucket's answer is the partial state of the
// request's measures (measure.go: count(*), min(timestamp), max(timestamp)), ungrouped or
// grouped by one time bin of the timestamp, as partial groups (PartialGroup: what the executor
// asks every bucket for, AggregateGroups) or as Arrow batches of PartialAggregateSchema
// (AggregateBucket, Answer); the executor's final aggregate combines it with the partial states
// of fragments that read rows.

// ErrNoAggregate is returned by a partial-aggregate port for a bucket the store cannot answer
// without reading rows (an archive whose event_time statistics are not trusted at all, a
// reader without the capability): the caller reads the bucket's rows instead. It is never a
// failure of the query.
var ErrNoAggregate = errors.New("routing: the store cannot answer this aggregate without reading rows")

// ErrNotSummed is a hot store's answer to a RowAggregate.Summed request that it answers only
// bucket by bucket after all, nothing having been answered (the merged answer would cost it
// more, or could not be attributed: routing/cockroach/rowagg.go, "Summed counts"): the caller
// asks again without Summed.
var ErrNotSummed = errors.New("routing: the store answers this row aggregate bucket by bucket")

// AggregateRequest asks a store for the partial aggregate of one bucket's records inside
// Range. A plain value, safe to copy (Measures is shared, not modified).
type AggregateRequest struct {
	// Range is the finite half-open range [Start, End), UTC. DurableTable.AggregateBucket
	// clips it to the bucket before asking a store.
	Range TimeRange
	// Bin, when set, groups the records by Bin.Floor(event_time) (date_trunc or date_bin in
	// UTC); nil asks for one ungrouped row.
	Bin *Binning
	// Measures are the states asked for, in the answer's column order (each Validate'd by
	// the caller): asking for min and max alone lets a store answer with primary-key probes
	// instead of counting. A grouped request without measures answers its non-empty bins.
	Measures []Measure
	// Alloc allocates the returned batches (nil: memory.DefaultAllocator).
	Alloc memory.Allocator
}

// Asks reports whether one of req's measures has function f.
func (req AggregateRequest) Asks(f MeasureFunc) bool {
	for _, m := range req.Measures {
		if m.Func == f {
			return true
		}
	}
	return false
}

// Needs reports whether answering req needs the state of f: a measure of req asks for it
// (Asks), or, for MeasureCount, a grouped request asks for no min or max (its bins are those
// holding records, which a count finds). Stores choose their statement or statistics from it.
func (req AggregateRequest) Needs(f MeasureFunc) bool {
	if req.Asks(f) {
		return true
	}
	return f == MeasureCount && req.Bin != nil && !req.Asks(MeasureMin) && !req.Asks(MeasureMax)
}

// Schema returns the schema of req's answer: PartialAggregateSchema(req.Bin != nil,
// req.Measures).
func (req AggregateRequest) Schema() *arrow.Schema {
	return PartialAggregateSchema(req.Bin != nil, req.Measures)
}

// PartialAggregateSchema returns the schema of a partial-aggregate answer: when grouped, a
// non-null "bin" timestamp[ns, UTC] (the bin's start) first; then one column per measure, in
// order (Measure.Field): "count" int64, "min" and "max" timestamp[ns, UTC], NULL in a row
// without records. The common schemas are shared: do not modify the result.
func PartialAggregateSchema(grouped bool, measures []Measure) *arrow.Schema {
	key := partialKey{grouped: grouped}
	if len(measures) <= len(key.funcs) {
		for i, m := range measures {
			key.funcs[i] = m.Func
		}
		if sc, ok := partialSchemas.Load(key); ok {
			return sc.(*arrow.Schema)
		}
	}
	var fields []arrow.Field
	if grouped {
		fields = append(fields, arrow.Field{Name: "bin", Type: TimestampType})
	}
	for _, m := range measures {
		fields = append(fields, m.Field())
	}
	sc := arrow.NewSchema(fields, nil)
	if len(measures) <= len(key.funcs) {
		partialSchemas.Store(key, sc)
	}
	return sc
}

// partialKey identifies a partial schema of at most four measures (their functions decide
// the fields).
type partialKey struct {
	grouped bool
	funcs   [4]MeasureFunc
}

// partialSchemas caches the schemas of partialKey (a request per bucket asks the same one).
var partialSchemas sync.Map

// PartialGroup is one group of a partial-aggregate answer as a store computes it: the bin's
// start (UTC; ignored when ungrouped), the number of records (when asked), and the least and
// greatest event times (UTC; meaningful when Found).
type PartialGroup struct {
	Bin      time.Time
	Count    int64
	Min, Max time.Time
	Found    bool
}

// add merges g into p (same bin).
func (p *PartialGroup) add(g PartialGroup) {
	p.Count += g.Count
	if !g.Found {
		return
	}
	if !p.Found || g.Min.Before(p.Min) {
		p.Min = g.Min
	}
	if !p.Found || g.Max.After(p.Max) {
		p.Max = g.Max
	}
	p.Found = true
}

// Merge returns groups as req's answer holds them: an ungrouped answer is exactly one group
// (the groups merged, or count 0 and no extremes when there is none); a grouped one has one
// group per non-empty bin (count > 0 or found), consecutive groups of the same bin start merged
// (as when months fold into quarters). Stores compute groups in ascending bin order. groups is
// not modified; the result is a new slice, except that an ungrouped answer of exactly one
// group is groups itself (capacity clipped to one), as most buckets' answers are.
func (req AggregateRequest) Merge(groups []PartialGroup) []PartialGroup {
	if req.Bin == nil {
		if len(groups) == 1 {
			return groups[:1:1]
		}
		var one PartialGroup
		for _, g := range groups {
			one.add(g)
		}
		return []PartialGroup{one}
	}
	merged := groups[:0:0]
	for _, g := range groups {
		if g.Count <= 0 && !g.Found {
			continue
		}
		if n := len(merged); n > 0 && merged[n-1].Bin.Equal(g.Bin) {
			merged[n-1].add(g)
			continue
		}
		merged = append(merged, g)
	}
	return merged
}

// Answer builds the Arrow answer to req from groups (merged by Merge): an ungrouped answer is
// exactly one row, a grouped one has one row per non-empty bin, in batches of at most
// MaxBatchRows rows. Errors: ErrBinOutOfRange when a bin start or an extreme is outside
// timestamp[ns]. The reader owns its batches.
func (req AggregateRequest) Answer(groups []PartialGroup) (array.RecordReader, error) {
	alloc := req.Alloc
	if alloc == nil {
		alloc = memory.DefaultAllocator
	}
	grouped := req.Bin != nil
	groups = req.Merge(groups)
	schema := req.Schema()
	var out []arrow.RecordBatch
	release := func() {
		for _, b := range out {
			b.Release()
		}
	}
	for len(groups) > 0 || (out == nil && !grouped) {
		n := min(len(groups), MaxBatchRows)
		cols, err := req.columns(alloc, groups[:n], grouped)
		if err != nil {
			release()
			return nil, err
		}
		out = append(out, array.NewRecordBatch(schema, cols, int64(n)))
		for _, c := range cols {
			c.Release()
		}
		groups = groups[n:]
	}
	r, err := array.NewRecordReader(schema, out)
	release()
	return r, err
}

// columns builds the answer's columns over groups straight into buffers of alloc (no
// builders: an answer is often one row per bucket, where builders' growth dominates): the bin
// when grouped, then one column per measure.
func (req AggregateRequest) columns(alloc memory.Allocator, groups []PartialGroup, grouped bool) ([]arrow.Array, error) {
	n := len(groups)
	bins, counts, los, his := make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n)
	found := make([]bool, n)
	needMin, needMax := req.Needs(MeasureMin), req.Needs(MeasureMax)
	for i, g := range groups {
		if grouped {
			ns, ok := nanos(g.Bin)
			if !ok {
				return nil, ErrBinOutOfRange
			}
			bins[i] = ns
		}
		counts[i] = g.Count
		var ok bool
		found[i] = g.Found
		if needMin && g.Found {
			if los[i], ok = nanos(g.Min); !ok {
				return nil, ErrBinOutOfRange
			}
		}
		if needMax && g.Found {
			if his[i], ok = nanos(g.Max); !ok {
				return nil, ErrBinOutOfRange
			}
		}
	}
	var cols []arrow.Array
	if grouped {
		cols = append(cols, fixedArray(alloc, TimestampType, bins, nil))
	}
	for _, m := range req.Measures {
		switch m.Func {
		case MeasureCount:
			cols = append(cols, fixedArray(alloc, arrow.PrimitiveTypes.Int64, counts, nil))
		case MeasureMin:
			cols = append(cols, fixedArray(alloc, TimestampType, los, found))
		case MeasureMax:
			cols = append(cols, fixedArray(alloc, TimestampType, his, found))
		default:
			for _, c := range cols {
				c.Release()
			}
			return nil, m.Validate()
		}
	}
	return cols, nil
}

// fixedArray builds an array of a 64-bit fixed-width type from vals; valid (nil: all valid)
// marks the non-null slots.
func fixedArray(alloc memory.Allocator, dt arrow.DataType, vals []int64, valid []bool) arrow.Array {
	n := len(vals)
	data := memory.NewResizableBuffer(alloc)
	data.Resize(n * 8)
	copy(arrow.Int64Traits.CastFromBytes(data.Bytes()), vals)
	var bitmap *memory.Buffer
	nulls := 0
	if valid != nil {
		bitmap = memory.NewResizableBuffer(alloc)
		bitmap.Resize(int(bitutil.BytesForBits(int64(n))))
		bits := bitmap.Bytes()
		clear(bits)
		for i, ok := range valid {
			bitutil.SetBitTo(bits, i, ok)
			if !ok {
				nulls++
			}
		}
	}
	d := array.NewData(dt, n, []*memory.Buffer{bitmap, data}, nil, nulls, 0)
	a := array.MakeFromData(d)
	d.Release()
	data.Release()
	if bitmap != nil {
		bitmap.Release()
	}
	return a
}

// nanos returns t in nanoseconds since the epoch when timestamp[ns] can hold it.
func nanos(t time.Time) (int64, bool) {
	if t.Before(minNano) || t.After(maxNano) {
		return 0, false
	}
	return t.UnixNano(), true
}

// AggregateBucket answers req for bucket b through the partial-aggregate ports, with the same
// route decision and route cache as ReadBucket: a cached archived route goes straight to the
// archive (ArchiveReader.AggregateGroups); otherwise one hot-store statement returns route and answer
// from one snapshot (HotStore.AggregateRange), and an archived answer is cached and asked of
// the archive. req.Range is clipped to the bucket; a grouped request without measures is
// asked count(*). When grouped and the clipped range lies in
// one bin (a month bucket under date_trunc('month') or coarser, any range inside one bin), the
// bucket is asked ungrouped — a hot count, a manifest record count or archive statistics —
// and its row becomes that bin's. The returned tier says which tier answered. Errors:
// ErrNoAggregate when the tier cannot answer without rows (read the bucket instead),
// ErrInvalidBinning, and the stores' errors. The reader must be released.
func (t *DurableTable) AggregateBucket(ctx context.Context, b BucketID, req AggregateRequest) (array.RecordReader, Tier, error) {
	if req.Bin != nil && len(req.Measures) == 0 {
		req.Measures = []Measure{CountStar} // the bins holding records, counted
	}
	gs, tier, err := t.AggregateGroups(ctx, b, req)
	if err != nil {
		return nil, tier, err
	}
	r, err := req.Answer(gs)
	return r, tier, err
}

// AggregateGroups is AggregateBucket without Arrow: the answer to req for bucket b as the
// groups its Arrow answer would hold (AggregateRequest.Merge: one group when ungrouped, the
// non-empty bins in ascending order when grouped), with the same route decision, tier and
// errors. The executor's store-aggregate path asks every bucket of a query this way and builds
// one Arrow batch for all of their answers. Safe for concurrent use; the caller owns the slice.
func (t *DurableTable) AggregateGroups(ctx context.Context, b BucketID, req AggregateRequest) ([]PartialGroup, Tier, error) {
	if req.Bin != nil {
		if err := req.Bin.Validate(); err != nil {
			return nil, TierHot, err
		}
		if len(req.Measures) == 0 {
			req.Measures = []Measure{CountStar} // the bins holding records, counted
		}
	}
	req.Range = req.Range.Intersect(b.Range())
	if req.Range.Empty() {
		return req.Merge(nil), TierHot, nil
	}
	if req.Bin == nil || !req.Bin.Contains(req.Range) {
		return t.aggregateRoute(ctx, b, req)
	}
	one := req
	one.Bin = nil
	gs, tier, err := t.aggregateRoute(ctx, b, one) // merged: exactly one group
	if err != nil {
		return nil, tier, err
	}
	gs[0].Bin = req.Bin.Floor(req.Range.Start)
	return req.Merge(gs), tier, nil
}

// groupAnswer is a tier's answer as groups, for routeBucket (nothing to release).
type groupAnswer []PartialGroup

func (groupAnswer) Release() {}

// aggregateRoute asks the tier that holds b (the route decision of routeBucket) and returns its
// answer merged (AggregateRequest.Merge).
func (t *DurableTable) aggregateRoute(ctx context.Context, b BucketID, req AggregateRequest) ([]PartialGroup, Tier, error) {
	gs, tier, err := routeBucket(ctx, t, b,
		func() (Route, groupAnswer, error) {
			route, r, err := t.hot.AggregateRange(ctx, b, req)
			if err != nil || r == nil {
				return route, nil, err
			}
			defer r.Release()
			if route.State == StateArchived {
				return route, nil, nil
			}
			gs, err := ReadPartial(r, req.Bin != nil)
			return route, gs, err
		},
		func(key string) (groupAnswer, error) { return t.archive.AggregateGroups(ctx, key, b, req) })
	if err != nil {
		return nil, tier, err
	}
	return req.Merge(gs), tier, nil
}

// routeBucket is the route decision of the batch and aggregate reads of bucket b: a cached
// archived route goes straight to archived(key); otherwise hot returns the route and, unless
// archived, its answer (one snapshot); an archived route is cached and asked of the archive.
// After publication the retained hot rows are never a fallback. The tier says which answered.
// An archived route found damaged is reported and remembered (damage.go): reads of it fail
// with the same error on every path for DamageMemory.
// Under WithPins, a pinned bucket must route to its pinned manifest (ErrPinMismatch).
func routeBucket[R interface{ Release() }](ctx context.Context, t *DurableTable, b BucketID, hot func() (Route, R, error), archived func(key string) (R, error)) (R, Tier, error) {
	var none R
	fromArchive := func(key, route string) (R, Tier, error) {
		if err := checkPin(ctx, b, key, route); err != nil {
			return none, TierArchive, err
		}
		if t.archive == nil {
			return none, TierArchive, fmt.Errorf("%w: no archive reader configured", ErrOperationFailed)
		}
		if err := t.damage.check(key); err != nil {
			return none, TierArchive, err
		}
		r, err := archived(key)
		return r, TierArchive, t.damage.note(ctx, key, err)
	}
	if e, ok := t.cache.archived(b); ok {
		return fromArchive(e.manifestKey, e.route)
	}
	route, r, err := hot()
	if err != nil {
		return none, TierHot, err
	}
	if route.State == StateArchived {
		if any(r) != nil {
			r.Release()
		}
		t.cache.PutArchived(b, route.ManifestKey)
		return fromArchive(route.ManifestKey, "")
	}
	if err := checkPin(ctx, b, "", ""); err != nil {
		if any(r) != nil {
			r.Release()
		}
		return none, TierHot, err
	}
	return r, TierHot, nil
}

// ReadPartial reads an answer r to req (of req.Schema()) back into groups (see the function
// ReadPartial). Errors: r's, or ErrOperationFailed for another schema.
func (req AggregateRequest) ReadPartial(r array.RecordReader) ([]PartialGroup, error) {
	if !r.Schema().Equal(req.Schema()) {
		return nil, fmt.Errorf("%w: a partial aggregate of schema %v", ErrOperationFailed, r.Schema())
	}
	return ReadPartial(r, req.Bin != nil)
}

// ReadPartial reads a partial-aggregate answer r of PartialAggregateSchema(grouped, measures)
// back into groups, in order, its measures known by their columns' names (Measure.Field): a
// count not asked for reads as 0, Found is set when a min or max is not NULL, and an extreme
// not asked for reads as the zero time. It does not release r. Errors: r's, or
// ErrOperationFailed for a schema that is no partial-aggregate answer.
func ReadPartial(r array.RecordReader, grouped bool) ([]PartialGroup, error) {
	sc := r.Schema()
	off := 0
	if grouped {
		off = 1
		if sc.NumFields() == 0 || sc.Field(0).Name != "bin" || !arrow.TypeEqual(sc.Field(0).Type, TimestampType) {
			return nil, fmt.Errorf("%w: a grouped partial aggregate of schema %v", ErrOperationFailed, sc)
		}
	}
	funcs := make([]MeasureFunc, sc.NumFields()-off)
	for j := range funcs {
		f := sc.Field(off + j)
		for _, m := range []Measure{CountStar, MinTime, MaxTime} {
			if mf := m.Field(); mf.Name == f.Name && arrow.TypeEqual(mf.Type, f.Type) {
				funcs[j] = m.Func
			}
		}
		if funcs[j] == 0 {
			return nil, fmt.Errorf("%w: a partial aggregate of schema %v", ErrOperationFailed, sc)
		}
	}
	var out []PartialGroup
	for r.Next() {
		b := r.RecordBatch()
		for i := range int(b.NumRows()) {
			var g PartialGroup
			if grouped {
				g.Bin = time.Unix(0, int64(b.Column(0).(*array.Timestamp).Value(i))).UTC()
			}
			for j, f := range funcs {
				c := b.Column(off + j)
				if !c.IsValid(i) {
					continue
				}
				switch f {
				case MeasureCount:
					g.Count = c.(*array.Int64).Value(i)
				case MeasureMin:
					g.Min, g.Found = time.Unix(0, int64(c.(*array.Timestamp).Value(i))).UTC(), true
				case MeasureMax:
					g.Max, g.Found = time.Unix(0, int64(c.(*array.Timestamp).Value(i))).UTC(), true
				}
			}
			out = append(out, g)
		}
	}
	return out, r.Err()
}

// HotAggregateShape is the statement a hot store runs for a partial-aggregate request; every
// shape returns the route columns first, then its own.
type HotAggregateShape uint8

const (
	// HotProbe answers MIN/MAX alone with one primary-key probe from each end of the range
	// (columns lo, hi), counting nothing.
	HotProbe HotAggregateShape = iota + 1
	// HotCount aggregates count(*), min and max of the event time over the range (n, lo, hi).
	HotCount
	// HotBinsFixed groups by fixed-width bin k = (offset from the range start + phase) / width
	// in whole microseconds, with HotAggregate.BinArgs = phase, width (k, n, lo, hi).
	HotBinsFixed
	// HotBinsMonths groups by UTC month k = year·12 + month − 1 (k, n, lo, hi); months fold
	// into quarters and years.
	HotBinsMonths
)

// HotAggregate is the store-independent half of HotStore.AggregateRange that both hot-store
// adapters share: which statement a request needs, the microsecond bounds and bin arguments to
// bind, and the answer built from the statement's rows. Not safe for concurrent use.
type HotAggregate struct {
	// Shape is the statement to run.
	Shape HotAggregateShape
	// Start and End are the range's microsecond bounds (MicroBounds), UTC.
	Start, End time.Time
	// BinArgs are the extra arguments of HotBinsFixed: the phase of Start inside its bin and
	// the bin width, both int64 microseconds.
	BinArgs []any

	req         AggregateRequest
	base, width int64
	route       Route
	seen        bool
	groups      []PartialGroup
}

// HotStatements are a hot store's statements for the shapes of HotAggregate, in its SQL
// dialect; each returns the route columns first, then its shape's columns.
type HotStatements struct {
	Probe, Count, BinsFixed, BinsMonths string
}

// Statement returns the statement of h's shape among s.
func (h *HotAggregate) Statement(s HotStatements) string {
	switch h.Shape {
	case HotProbe:
		return s.Probe
	case HotCount:
		return s.Count
	case HotBinsFixed:
		return s.BinsFixed
	}
	return s.BinsMonths
}

// Dest returns the scan destinations of one row of h's statement: route (the route columns'),
// then those of the shape's columns among k, n, lo and hi — all four for the bin shapes, n,
// lo and hi for HotCount, lo and hi for HotProbe.
func (h *HotAggregate) Dest(route []any, k, n, lo, hi any) []any {
	switch h.Shape {
	case HotBinsFixed, HotBinsMonths:
		return append(route, k, n, lo, hi)
	case HotCount:
		return append(route, n, lo, hi)
	}
	return append(route, lo, hi)
}

// NewHotAggregate plans req over bucket b. Errors: b's (BucketID.Validate), ErrInvalidBinning.
func NewHotAggregate(b BucketID, req AggregateRequest) (*HotAggregate, error) {
	if err := b.Validate(); err != nil {
		return nil, err
	}
	h := &HotAggregate{req: req}
	h.Start, h.End, _ = MicroBounds(req.Range, nil, false)
	switch {
	case req.Bin != nil:
		if err := req.Bin.Validate(); err != nil {
			return nil, err
		}
		h.Shape = HotBinsMonths
		var fixed bool
		h.width, _, fixed = req.Bin.FixedWidth()
		h.base = req.Bin.Floor(h.Start).UnixMicro()
		if fixed {
			h.Shape = HotBinsFixed
			h.BinArgs = []any{h.Start.UnixMicro() - h.base, h.width}
		}
	case req.Needs(MeasureCount):
		h.Shape = HotCount
	default:
		h.Shape = HotProbe
	}
	return h, nil
}

// Row adds one row of the statement: its route and the shape's columns, nil when NULL or not
// in the shape (k and n for HotProbe, k for HotCount). Errors: ErrOperationFailed for a row
// with one extreme only, or with rows of an archived bucket.
func (h *HotAggregate) Row(route Route, k, n *int64, lo, hi *time.Time) error {
	if !h.seen {
		h.route, h.seen = route, true
	}
	if (lo == nil) != (hi == nil) {
		return fmt.Errorf("%w: aggregate bucket range: only one extreme found", ErrOperationFailed)
	}
	g := PartialGroup{Found: lo != nil}
	if n != nil {
		g.Count = *n
	}
	if g.Found {
		g.Min, g.Max = lo.UTC(), hi.UTC()
	}
	if g.Count == 0 && !g.Found {
		return nil
	}
	if h.route.State == StateArchived {
		return fmt.Errorf("%w: aggregate bucket range: archived bucket returned hot rows", ErrOperationFailed)
	}
	if h.req.Bin != nil {
		if k == nil {
			return nil
		}
		if h.Shape == HotBinsFixed {
			g.Bin = time.UnixMicro(h.base + *k*h.width).UTC()
		} else {
			g.Bin = h.req.Bin.Floor(time.Date(int(*k/12), time.Month(*k%12+1), 1, 0, 0, 0, 0, time.UTC))
		}
	}
	h.groups = append(h.groups, g)
	return nil
}

// Answer returns the route and, unless it is archived (nil reader), the answer built from
// the rows. Errors: ErrOperationFailed when the statement returned no row (it always returns
// the route), ErrBinOutOfRange.
func (h *HotAggregate) Answer() (Route, array.RecordReader, error) {
	if !h.seen {
		return Route{}, nil, fmt.Errorf("%w: aggregate bucket range: no route row", ErrOperationFailed)
	}
	if h.route.State == StateArchived {
		return h.route, nil, nil
	}
	r, err := h.req.Answer(h.groups)
	if err != nil {
		return Route{}, nil, err
	}
	return h.route, r, nil
}

// CountBucket returns how many records of bucket b lie inside r (clipped to the bucket) and the
// tier that answered: AggregateBucket's count(*) (one key-only statement for a hot bucket,
// statistics or the manifest for an archived one), or, when the tier cannot count without rows
// (ErrNoAggregate), the bucket's rows read without columns and counted. Errors are the
// stores'; ErrOperationFailed for an answer that is not one ungrouped count.
func (t *DurableTable) CountBucket(ctx context.Context, b BucketID, r TimeRange) (uint64, Tier, error) {
	rd, tier, err := t.AggregateBucket(ctx, b, AggregateRequest{Range: r, Measures: []Measure{CountStar}})
	if errors.Is(err, ErrNoAggregate) {
		return t.countRows(ctx, b, r)
	}
	if err != nil {
		return 0, tier, err
	}
	defer rd.Release()
	gs, err := ReadPartial(rd, false)
	if err != nil {
		return 0, tier, err
	}
	if len(gs) != 1 {
		return 0, tier, fmt.Errorf("%w: an ungrouped count answered %d rows", ErrOperationFailed, len(gs))
	}
	return uint64(gs[0].Count), tier, nil
}

// countRows counts the records of b inside r by reading them without columns.
func (t *DurableTable) countRows(ctx context.Context, b BucketID, r TimeRange) (uint64, Tier, error) {
	rd, tier, err := t.ScanBucket(ctx, b, BatchRequest{Range: r, Limit: -1})
	if err != nil {
		return 0, tier, err
	}
	defer rd.Release()
	var n uint64
	for rd.Next() {
		n += uint64(rd.RecordBatch().NumRows())
	}
	return n, tier, rd.Err()
}
