package archive

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"math"
	"slices"
	"sort"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/parquet-go/parquet-go"

	"github.com/flightsrv/flightsrv/internal/panics"
	"github.com/flightsrv/flightsrv/routing"
)

// byteLeaf is a top-level, non-repeated BYTE_ARRAY leaf column read by ReadBatches
// (partition_key, sort_key or value); maxDef is 1 for an optional column, 0 for a required one.
type byteLeaf struct {
	leaf   int
	maxDef byte
}

// byteArrayColumn locates the top-level column name as a byteLeaf: ok is false when the file
// has no such column, err is ErrPayloadSchema when it exists with another shape (nested,
// repeated, or not BYTE_ARRAY). Any logical type is accepted: values are read as bytes.
func byteArrayColumn(f *parquet.File, name string) (l *byteLeaf, ok bool, err error) {
	c := f.Root().Column(name)
	if c == nil {
		return nil, false, nil
	}
	if !c.Leaf() || c.Repeated() || c.Index() < 0 || c.Type().Kind() != parquet.ByteArray || c.MaxDefinitionLevel() > 1 {
		return nil, true, ErrPayloadSchema
	}
	return &byteLeaf{leaf: c.Index(), maxDef: byte(c.MaxDefinitionLevel())}, true, nil
}

// spanPlan is one row group of a read: its row spans to decode (sub-spans, in emission order)
// and the byte ranges of the requested columns' pages over them.
type spanPlan struct {
	g      int
	spans  []rowSpan
	ranges []byteRange
}

// prefetchJob fetches the byte ranges of one planned row group in the background.
type prefetchJob struct {
	plan int
	done chan struct{}
	err  error
}

// position is a row's place in (event_time, sort_key) order, for order checks across spans;
// hasKey is false when the row's sort key was not decoded (then only times compare).
type position struct {
	t      int64
	key    []byte
	hasKey bool
}

// parquetSource streams the records of a Parquet payload as Arrow batches (see ReadBatches).
type parquetSource struct {
	ctx    context.Context
	ft     *footer
	rr     *rangeReader
	b      routing.BucketID
	cols   columnSet
	schema *arrow.Schema
	alloc  memory.Allocator
	desc   bool
	sorted bool // the file is claimed sorted: check the order of decoded rows
	// checkKeys is set when sort keys must be compared (sorted, and the footer's
	// keysChecked was not set when the read began); keysRead counts the rows whose keys were
	// compared, so that a read that compared every row of the file, in file order, can set
	// keysChecked when it ends.
	checkKeys bool
	keysRead  int64
	// keysValid is set when the footer's keysChecked was set when the read began: every key
	// a read can emit was found valid UTF-8 by then, and is not checked again.
	keysValid bool
	left      int64 // rows still to emit; < 0: no limit

	want, bucket unitRange // in event_time column units
	pk, key, val *byteLeaf // the byte leaves to decode (nil: not decoded)

	plans   []spanPlan
	pi      int // current plan (row group)
	si      int // next span of the current plan
	entered bool
	job     *prefetchJob

	edge     position // the last decoded position (asc) or the first (desc) so far
	haveEdge bool

	out spanOutput

	// Scratch reused across spans (taken from sc, and given back to it by close).
	sc    *pageScratch
	times []int64 // event times in ns of the span's rows
	tnull []bool  // null event times
	nulls bool    // some row of the span has a null event time
	sel   []int32 // candidate rows (span-relative), ascending
	prev  []byte  // previous sort key of an order check
}

// newParquetSource plans a read of req over a Parquet payload: it resolves the columns,
// decides whether the file is claimed sorted and selects the row spans by statistics.
func newParquetSource(ctx context.Context, r *Reader, ft *footer, rr *rangeReader, b routing.BucketID, req routing.BatchRequest, cols columnSet, schema *arrow.Schema, c *ioCounter) (*parquetSource, error) {
	if ft.ts == nil {
		return nil, ft.tsErr
	}
	s := &parquetSource{
		ctx: ctx, ft: ft, rr: rr, b: b, cols: cols, schema: schema, alloc: req.Alloc, desc: req.Desc, left: req.Limit,
		want: ft.ts.unitRange(req.Range), bucket: ft.ts.unitRange(b.Range()),
	}
	f := ft.file
	key, hasKey, keyErr := byteArrayColumn(f, "sort_key")
	if keyErr != nil && cols.id >= 0 {
		return nil, keyErr
	}
	if cols.id >= 0 {
		if !hasKey {
			return nil, ErrPayloadSchema
		}
		s.key = key
	}
	if cols.val >= 0 {
		val, ok, err := byteArrayColumn(f, "value")
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, ErrPayloadSchema
		}
		s.val = val
	}
	if cols.part >= 0 {
		pk, _, err := byteArrayColumn(f, "partition_key")
		if err != nil {
			return nil, err
		}
		s.pk = pk // nil without such a column: the manifest's bucket says the partition
	}
	s.sorted = keyErr == nil && hasKey && ft.claimsSorted(key.leaf, s.bucket)
	s.keysValid = ft.keysChecked.Load()
	s.checkKeys = s.sorted && s.key != nil && !s.keysValid

	leaves := []int{ft.ts.leaf}
	for _, l := range []*byteLeaf{s.pk, s.key, s.val} {
		if l != nil {
			leaves = append(leaves, l.leaf)
		}
	}
	pad := int64(r.opts.ReadBufferBytes)
	var pruned pruning
	defer pruned.add(ctx, c)
	for g := range ft.groups {
		spans := ft.selectSpans(g, s.want, s.bucket, &pruned)
		if len(spans) == 0 {
			continue
		}
		p := spanPlan{g: g}
		for _, sp := range spans {
			for _, l := range leaves {
				p.ranges = append(p.ranges, ft.spanRanges(g, l, sp.s, sp.e, pad)...)
			}
			p.spans = append(p.spans, ft.splitSpan(sp, leaves, int64(r.opts.BatchSpanRows))...)
		}
		if s.desc {
			slices.Reverse(p.spans)
		}
		s.plans = append(s.plans, p)
	}
	if s.desc {
		slices.Reverse(s.plans)
	}
	rr.alloc = req.Alloc // retainRegions, called as the read moves on and by close, frees them
	s.sc = getScratch()
	s.times, s.tnull, s.sel, s.prev = s.sc.times[:0], s.sc.tnull[:0], s.sc.sel[:0], s.sc.prev[:0]
	return s, nil
}

// claimsSorted reports whether the file is known to be sorted by (event_time, sort_key) from
// its metadata (see ReadBatches): the envelope, or sorting_columns in every non-empty row
// group with strictly ascending trusted row-group bounds.
func (ft *footer) claimsSorted(keyLeaf int, bucket unitRange) bool {
	if ft.envelope == nil {
		return true
	}
	md := ft.file.Metadata()
	var groups []int
	for g := range ft.groups {
		if ft.groups[g].numRows == 0 {
			continue
		}
		sc := md.RowGroups[g].SortingColumns
		if len(sc) < 2 || int(sc[0].ColumnIdx) != ft.ts.leaf || sc[0].Descending || int(sc[1].ColumnIdx) != keyLeaf || sc[1].Descending {
			return false
		}
		groups = append(groups, g)
	}
	if len(groups) <= 1 {
		return true
	}
	var prev bounds
	for i, g := range groups {
		gb, ok := ft.groupBounds(g, bucket)
		if !ok || (i > 0 && prev.max >= gb.min) {
			return false
		}
		prev = gb
	}
	return true
}

// splitSpan cuts a row span into sub-spans of at most target rows at event_time page
// boundaries (a single page may hold more), when every leaf has an offset index — seeking to
// a sub-span's first row then costs one page; otherwise it returns the span whole.
func (ft *footer) splitSpan(sp rowSpan, leaves []int, target int64) []rowSpan {
	if target <= 0 || sp.e-sp.s <= target {
		return []rowSpan{sp}
	}
	g := &ft.groups[sp.g]
	for _, l := range leaves {
		if g.offsets[l] == nil {
			return []rowSpan{sp}
		}
	}
	oi := g.offsets[ft.ts.leaf]
	var out []rowSpan
	cur := rowSpan{sp.g, sp.s, sp.s}
	for p := range oi.PageLocations {
		s, e := pageRows(oi, p, g.numRows)
		s, e = max(s, sp.s), min(e, sp.e)
		if s >= e {
			continue
		}
		if cur.e > cur.s && e-cur.s > target {
			out = append(out, cur)
			cur = rowSpan{sp.g, s, s}
		}
		cur.e = e
	}
	if cur.e > cur.s {
		out = append(out, cur)
	}
	return out
}

// next implements batchSource.
func (s *parquetSource) next() (arrow.RecordBatch, error) {
	for {
		if rec := s.out.next(s); rec != nil {
			return rec, nil
		}
		s.out.release()
		if s.left == 0 {
			return nil, nil
		}
		sp, ok, err := s.nextSpan()
		if err != nil {
			return nil, err
		}
		if !ok {
			if s.checkKeys && !s.desc && s.keysRead == s.ft.numRows {
				s.ft.keysChecked.Store(true)
			}
			return nil, nil
		}
		if err := s.decodeSpan(sp); err != nil {
			return nil, err
		}
		if s.left != 0 && s.job == nil && s.pi+1 < len(s.plans) {
			// More rows are wanted than the first span gave: fetch the next row group in the
			// background while this one is decoded and consumed.
			s.startPrefetch(s.pi + 1)
		}
	}
}

// close implements batchSource: it waits for a background fetch (the reader's context is
// already cancelled) and drops the current span.
func (s *parquetSource) close() {
	if s.job != nil {
		<-s.job.done
		s.job = nil
	}
	s.out.release()
	s.rr.freeOwned()
	if sc := s.sc; sc != nil {
		s.sc = nil
		sc.times, sc.tnull, sc.sel, sc.prev = s.times[:0], s.tnull[:0], s.sel[:0], s.prev[:0]
		s.times, s.tnull, s.sel, s.prev = nil, nil, nil, nil
		putScratch(sc)
	}
}

// nextSpan returns the next row span to decode, entering row groups as it goes: a row
// group's byte ranges are fetched (or their background fetch awaited) when it is entered and
// the fetched bytes of earlier groups are dropped. The next group's fetch starts once a span
// of the current one has been decoded and more rows are wanted (next), so that a small limit
// fetches one row group only.
func (s *parquetSource) nextSpan() (rowSpan, bool, error) {
	for s.pi < len(s.plans) {
		p := &s.plans[s.pi]
		if !s.entered {
			if err := s.enter(s.pi); err != nil {
				return rowSpan{}, false, err
			}
			s.entered = true
		}
		if s.si < len(p.spans) {
			s.si++
			return p.spans[s.si-1], true, nil
		}
		s.pi, s.si, s.entered = s.pi+1, 0, false
	}
	return rowSpan{}, false, nil
}

func (s *parquetSource) enter(pi int) error {
	ranges := s.plans[pi].ranges
	if j := s.job; j != nil && j.plan == pi {
		<-j.done
		s.job = nil
		if j.err != nil {
			return j.err
		}
	}
	if err := s.rr.prefetch(ranges); err != nil {
		return err
	}
	s.rr.retainRegions(ranges, s.ft.tail)
	return nil
}

// startPrefetch fetches the byte ranges of plan pi in a goroutine; enter(pi) or close waits
// for it.
func (s *parquetSource) startPrefetch(pi int) {
	j := &prefetchJob{plan: pi, done: make(chan struct{})}
	ranges := s.plans[pi].ranges
	go func() {
		defer close(j.done)
		defer panics.Handle("archive prefetch", func(err error) { j.err = err })
		j.err = s.rr.prefetch(ranges)
	}()
	s.job = j
}

// retainRegions drops the fetched regions that overlap none of keep, except tail (the cached
// footer's bytes), so that a streaming read holds only the row groups it is working on. The
// allocated buffers (see rangeReader.alloc) that no retained region overlaps are freed: the
// caller must hold no slice of the regions it drops.
func (r *rangeReader) retainRegions(keep []byteRange, tail region) {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.regions[:0]
	for _, g := range r.regions {
		held := g.off < tail.end() && tail.off < g.end()
		for _, k := range keep {
			if held {
				break
			}
			held = g.off < k.end && k.off < g.end()
		}
		if held {
			out = append(out, g)
		}
	}
	clear(r.regions[len(out):])
	r.regions = out
	// A region made from an allocated buffer is a slice of it (addRegion only trims regions);
	// a buffer no retained region is a slice of is referenced by none. Other regions may
	// overlap its range (the footer's bytes, a region kept over a trimmed one) without using
	// its memory.
	owned := r.owned[:0]
	for _, b := range r.owned {
		used := false
		for _, g := range r.regions {
			if len(g.data) > 0 && g.off >= b.off && g.end() <= b.end() && &g.data[0] == &b.data[g.off-b.off] {
				used = true
				break
			}
		}
		if used {
			owned = append(owned, b)
		} else {
			r.alloc.Free(b.data)
		}
	}
	clear(r.owned[len(owned):])
	r.owned = owned
}

// freeOwned drops every fetched region and frees the allocated buffers (see
// rangeReader.alloc): the end of a read, which must hold no slice of them.
func (r *rangeReader) freeOwned() {
	r.mu.Lock()
	defer r.mu.Unlock()
	clear(r.regions)
	r.regions = r.regions[:0]
	for _, b := range r.owned {
		r.alloc.Free(b.data)
	}
	clear(r.owned)
	r.owned = r.owned[:0]
	if r.lent != nil {
		putTail(r.lent)
		r.lent = nil
	}
}

// readPages calls fn with the pages of leaf covering rows [from, to) of row group g, the first
// starting at row from, and the number of its leading rows that belong to the span. A view is
// valid only until fn returns. Pages are read from their bytes when the chunk allows it
// (rawPages), else through parquet-go (forPages). Malformed pages give ErrPayloadDecode; the
// read's context is checked between pages.
func (s *parquetSource) readPages(g, leaf int, maxDef byte, kind pageKind, from, to int64, fn func(v *pageView, rows int) error) error {
	if from >= to {
		return nil
	}
	if ok, err := s.rawPages(g, leaf, maxDef, kind, from, to, fn); ok {
		return err
	}
	return s.ft.forPages(s.ctx, s.rr, g, leaf, from, to, func(p parquet.Page, rows int) error {
		v := viewPage(p, kind)
		return fn(&v, rows)
	})
}

// forPages calls fn with the pages parquet-go decodes of leaf covering rows [s, e) of row
// group g, the first starting at row s, and the number of its leading rows that belong to the
// span. A page is valid only until fn returns. Malformed pages (a parquet-go panic included)
// give ErrPayloadDecode; ctx is checked between pages.
func (ft *footer) forPages(ctx context.Context, ra io.ReaderAt, g, leaf int, s, e int64, fn func(p parquet.Page, rows int) error) (err error) {
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
	for n > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		p, err := pages.ReadPage()
		if err != nil {
			return decodeError(err)
		}
		k := min(p.NumRows(), n)
		if k > 0 {
			err = fn(p, int(k))
			n -= k
		}
		parquet.Release(p)
		if err != nil {
			return err
		}
	}
	return nil
}

// decodeSpan decodes one row span into s.out: event times first (every row: membership, order,
// candidates), then, over the rows from the first to the last candidate to emit, the requested
// byte columns (partition keys are only checked: the output column is a constant).
func (s *parquetSource) decodeSpan(sp rowSpan) error {
	n := int(sp.e - sp.s)
	if err := s.readTimes(sp, n); err != nil {
		return err
	}
	sel := s.sel
	if s.left >= 0 && int64(len(sel)) > s.left {
		if s.desc {
			sel = sel[int64(len(sel))-s.left:]
		} else {
			sel = sel[:s.left]
		}
	}
	// first and last are the span's first and last rows with an event time.
	first, last := -1, -1
	for i := 0; i < n; i++ {
		if !s.tnull[i] {
			first = i
			break
		}
	}
	for i := n - 1; i >= 0; i-- {
		if !s.tnull[i] {
			last = i
			break
		}
	}
	// Order across spans: the span's first (asc) or last (desc) row against the edge left by
	// the span emitted before it.
	if s.sorted && s.haveEdge && first >= 0 {
		if (!s.desc && s.times[first] < s.edge.t) || (s.desc && s.times[last] > s.edge.t) {
			return ErrRecordsUnsorted
		}
	}
	// The span's edge for the next one: its last (asc) or first (desc) row with a time.
	edgeRow := last
	if s.desc {
		edgeRow = first
	}
	var newEdge position
	if edgeRow >= 0 {
		newEdge.t = s.times[edgeRow]
	}

	out := spanOutput{}
	ok := false
	defer func() {
		if !ok {
			out.release()
		}
	}()
	if len(sel) > 0 {
		lo, hi := int(sel[0]), int(sel[len(sel)-1])+1
		if s.pk != nil {
			if err := s.readBytes(sp, s.pk, lo, hi, nil, nil, false, s.checkPartition); err != nil {
				return err
			}
		}
		if s.key != nil {
			out.idCol = newVarColumn(s.alloc, len(sel), s.ft.dataHint(sp.g, s.key.leaf, hi-lo))
			var check func(int, *pageView, int) error
			if s.checkKeys {
				check = s.keyOrderCheck(first, last, edgeRow, &newEdge)
				s.keysRead += int64(hi - lo)
			}
			if err := s.readBytes(sp, s.key, lo, hi, sel, out.idCol, !s.keysValid, check); err != nil {
				return err
			}
		}
		if s.val != nil {
			out.valCol = newVarColumn(s.alloc, len(sel), s.ft.dataHint(sp.g, s.val.leaf, hi-lo))
			if err := s.readBytes(sp, s.val, lo, hi, sel, out.valCol, false, nil); err != nil {
				return err
			}
		}
		if s.cols.ts >= 0 {
			out.ts = newTimestampsFunc(s.alloc, len(sel), func(ts []int64) {
				for i, r := range sel {
					ts[i] = s.times[r]
				}
			})
		}
	}
	if edgeRow >= 0 {
		s.edge.t, s.edge.hasKey = newEdge.t, newEdge.hasKey
		s.edge.key = append(s.edge.key[:0], newEdge.key...)
		s.haveEdge = true
	}
	if s.left > 0 {
		s.left -= int64(len(sel))
	}
	out.finish(len(sel), s.desc)
	s.out = out
	ok = true
	return nil
}

// readTimes decodes the event_time values of the span's n rows into s.times (nanoseconds) and
// s.tnull, and collects the rows inside the requested range into s.sel. Every value must lie
// in the bucket (ErrRecordOutsideBucket) and, in a file claimed sorted, follow its predecessor
// (ErrRecordsUnsorted).
func (s *parquetSource) readTimes(sp rowSpan, n int) error {
	s.times = slices.Grow(s.times[:0], n)[:n]
	s.tnull = slices.Grow(s.tnull[:0], n)[:n]
	s.nulls = false
	s.sel = s.sel[:0]
	ts := s.ft.ts
	var maxDef byte
	if !ts.required {
		maxDef = 1
	}
	kind := kindInt64
	if ts.int96 {
		kind = kindInt96
	}
	row := 0
	havePrev, prev := false, int64(0)
	err := s.readPages(sp.g, ts.leaf, maxDef, kind, sp.s, sp.e, func(v *pageView, k int) error {
		if _, ok := v.check(k, maxDef, kind); !ok || row+k > n {
			return ErrPayloadDecode
		}
		times, tnull := s.times[row:row+k], s.tnull[row:row+k]
		if maxDef == 0 && v.idx == nil && kind == kindInt64 {
			// Every row holds a plain INT64 (the envelope): one pass without indirection.
			clear(tnull)
			lo, hi, wlo, whi, unit := s.bucket.lo, s.bucket.hi, s.want.lo, s.want.hi, ts.unit
			if unit == 1 && s.sorted && k > 0 {
				// Nanoseconds in a file claimed sorted (the envelope): check bounds and order
				// in one pass, then the rows inside the range are one run, found by bisection.
				vals := v.i64[:k]
				p := prev
				if !havePrev {
					p = vals[0]
				}
				for _, x := range vals {
					if x < lo || x >= hi {
						return ErrRecordOutsideBucket
					}
					if x < p {
						return ErrRecordsUnsorted
					}
					p = x
				}
				copy(times, vals)
				havePrev, prev = true, p
				a, _ := slices.BinarySearch(vals, wlo)
				b, _ := slices.BinarySearch(vals, whi)
				for r := a; r < b; r++ {
					s.sel = append(s.sel, int32(row+r))
				}
				row += k
				return nil
			}
			for r, x := range v.i64[:k] {
				if x < lo || x >= hi {
					return ErrRecordOutsideBucket
				}
				ns, ok := toNanos(x, unit)
				if !ok {
					return ErrPayloadDecode
				}
				times[r] = ns
				if s.sorted {
					if havePrev && ns < prev {
						return ErrRecordsUnsorted
					}
					havePrev, prev = true, ns
				}
				if x >= wlo && x < whi {
					s.sel = append(s.sel, int32(row+r))
				}
			}
			row += k
			return nil
		}
		vi := 0
		for r := range k {
			if maxDef > 0 && v.defs[r] != maxDef {
				tnull[r] = true
				s.nulls = true
				continue
			}
			j := vi
			vi++
			if v.idx != nil {
				j = int(v.idx[j])
			}
			var x int64
			if kind == kindInt96 {
				x = int96Nanos(v.i96[j])
			} else {
				x = v.i64[j]
			}
			if x < s.bucket.lo || x >= s.bucket.hi {
				return ErrRecordOutsideBucket
			}
			ns, ok := toNanos(x, ts.unit)
			if !ok {
				return ErrPayloadDecode
			}
			tnull[r], times[r] = false, ns
			if s.sorted {
				if havePrev && ns < prev {
					return ErrRecordsUnsorted
				}
				havePrev, prev = true, ns
			}
			if x >= s.want.lo && x < s.want.hi {
				s.sel = append(s.sel, int32(row+r))
			}
		}
		row += k
		return nil
	})
	if err == nil && row != n {
		err = ErrPayloadDecode
	}
	return err
}

// dataHint estimates the bytes of rows values of a byte leaf in row group g from the chunk's
// uncompressed size (an overestimate for plain pages, an underestimate for dictionary ones), so
// that columns rarely grow while decoding.
func (ft *footer) dataHint(g, leaf, rows int) int {
	n := ft.groups[g].numRows
	md := ft.file.Metadata().RowGroups[g].Columns[leaf].MetaData
	if n <= 0 || md.TotalUncompressedSize <= 0 {
		return 0
	}
	return int(min(md.TotalUncompressedSize/n*int64(rows)+64, 64<<20))
}

// toNanos converts a stored event time of unit nanoseconds per unit to nanoseconds; ok is
// false when the instant does not fit (an Arrow timestamp[ns] cannot hold it).
func toNanos(v, unit int64) (int64, bool) {
	if unit == 1 {
		return v, true
	}
	if v > math.MaxInt64/unit || v < math.MinInt64/unit {
		return 0, false
	}
	return v * unit, true
}

// readBytes decodes rows [lo, hi) of the span (span-relative) of a byte leaf. Every decoded
// row must be non-null (ErrPayloadSchema) and pass check (when set, called once per page with
// the page's first row and its rows); the rows listed in sel (ascending, inside [lo, hi)) are
// appended to col, checked for UTF-8 when isUTF8 is set.
func (s *parquetSource) readBytes(sp rowSpan, l *byteLeaf, lo, hi int, sel []int32, col *varColumn, isUTF8 bool, check func(row int, v *pageView, k int) error) error {
	row, j := lo, 0
	err := s.readPages(sp.g, l.leaf, l.maxDef, kindBytes, sp.s+int64(lo), sp.s+int64(hi), func(v *pageView, k int) error {
		if _, ok := v.check(k, l.maxDef, kindBytes); !ok || row+k > hi {
			return ErrPayloadDecode
		}
		if l.maxDef > 0 {
			for _, d := range v.defs[:k] {
				if d != l.maxDef {
					return ErrPayloadSchema
				}
			}
		}
		if check != nil {
			if err := check(row, v, k); err != nil {
				return err
			}
		}
		if col == nil {
			row += k
			return nil
		}
		if v.idx == nil {
			// Plain values: copy each run of consecutive selected rows at once.
			for j < len(sel) && int(sel[j]) < row+k {
				a := int(sel[j]) - row
				e := a + 1
				for j++; j < len(sel) && int(sel[j])-row == e && e < k; j++ {
					e++
				}
				offs := v.offs[a : e+1]
				if isUTF8 && !validUTF8Values(v.data, offs) {
					return ErrKeyNotUTF8
				}
				col.appendRun(v.data, offs)
			}
		} else {
			for j < len(sel) && int(sel[j]) < row+k {
				x := v.value(int(sel[j]) - row)
				if isUTF8 && !utf8.Valid(x) {
					return ErrKeyNotUTF8
				}
				col.append(x)
				j++
			}
		}
		row += k
		return nil
	})
	if err == nil && (row != hi || j != len(sel)) {
		err = ErrPayloadDecode
	}
	return err
}

// validUTF8Values reports whether every value data[offs[i]:offs[i+1]] is valid UTF-8: at
// once when their bytes are all ASCII, value by value otherwise.
func validUTF8Values(data []byte, offs []uint32) bool {
	run := data[offs[0]:offs[len(offs)-1]]
	ascii := true
	for len(run) >= 8 && ascii {
		ascii = binary.LittleEndian.Uint64(run)&0x8080808080808080 == 0
		run = run[8:]
	}
	for _, c := range run {
		ascii = ascii && c < utf8.RuneSelf
	}
	if ascii {
		return true
	}
	for i := 0; i+1 < len(offs); i++ {
		if !utf8.Valid(data[offs[i]:offs[i+1]]) {
			return false
		}
	}
	return true
}

// checkPartition requires the decoded partition keys of a page's k rows to be the bucket's.
func (s *parquetSource) checkPartition(_ int, v *pageView, k int) error {
	pk := s.b.PartitionKey
	for i := range k {
		if !bytes.Equal(v.value(i), pk) {
			return ErrRecordOutsideBucket
		}
	}
	return nil
}

// keyOrderCheck returns the sort-key check of a span of a file claimed sorted, called with the
// decoded pages in file order: among equal event times keys must not decrease, within the span
// and against the edge of the span emitted before (whose first — asc — or last — desc — row
// first and last are). It records the key of edgeRow into edge. Keys are looked at only where
// a comparison needs them (equal times, the edge rows); the previous row's key is kept as its
// place in the page, and copied (into s.prev) once per page.
func (s *parquetSource) keyOrderCheck(first, last, edgeRow int, edge *position) func(int, *pageView, int) error {
	havePrev := false
	var prevT int64
	return func(row0 int, v *pageView, k int) error {
		if k == 0 {
			return nil
		}
		var prevR int // the previous row's index in this page; -1: its key is s.prev
		if s.nulls {
			prevR = -1
			for r := range k {
				row := row0 + r
				if s.tnull[row] {
					continue
				}
				t := s.times[row]
				if havePrev && t == prevT {
					prev := s.prev
					if prevR >= 0 {
						prev = v.value(prevR)
					}
					if bytes.Compare(prev, v.value(r)) > 0 {
						return ErrRecordsUnsorted
					}
				}
				havePrev, prevT, prevR = true, t, r
			}
		} else {
			// Every row has a time: compare the keys of adjacent rows with equal times only.
			times := s.times[row0 : row0+k]
			if havePrev && times[0] == prevT && bytes.Compare(s.prev, v.value(0)) > 0 {
				return ErrRecordsUnsorted
			}
			if v.idx == nil {
				data, offs := v.data, v.offs
				for r := 1; r < k; r++ {
					if times[r] == times[r-1] && bytes.Compare(data[offs[r-1]:offs[r]], data[offs[r]:offs[r+1]]) > 0 {
						return ErrRecordsUnsorted
					}
				}
			} else {
				for r := 1; r < k; r++ {
					if times[r] == times[r-1] && bytes.Compare(v.value(r-1), v.value(r)) > 0 {
						return ErrRecordsUnsorted
					}
				}
			}
			havePrev, prevT, prevR = true, times[k-1], k-1
		}
		// The edge rows: the span's first (asc) or last (desc) row against the span emitted
		// before it, and the row whose key the next span compares with.
		if s.haveEdge && s.edge.hasKey {
			row := first
			if s.desc {
				row = last
			}
			if row >= row0 && row < row0+k && !s.tnull[row] && s.times[row] == s.edge.t {
				c := bytes.Compare(v.value(row-row0), s.edge.key)
				if (!s.desc && c < 0) || (s.desc && c > 0) {
					return ErrRecordsUnsorted
				}
			}
		}
		if edgeRow >= row0 && edgeRow < row0+k {
			edge.key, edge.hasKey = append(edge.key[:0], v.value(edgeRow-row0)...), true
		}
		if prevR >= 0 {
			s.prev = append(s.prev[:0], v.value(prevR)...)
		}
		return nil
	}
}

// spanOutput is a decoded span's candidate rows as Arrow arrays in file order, and the rows
// not yet emitted: [lo, hi), emitted from lo upwards (asc) or from hi downwards (desc).
type spanOutput struct {
	idCol, valCol *varColumn // while decoding
	ts, id, val   arrow.Array
	idv, valv     varView
	lo, hi        int
	desc          bool
}

// finish turns the decoded columns into arrays of n rows.
func (o *spanOutput) finish(n int, desc bool) {
	if o.idCol != nil {
		o.id = o.idCol.finish(arrow.BinaryTypes.String)
		o.idv = viewVar(o.id)
		o.idCol = nil
	}
	if o.valCol != nil {
		o.val = o.valCol.finish(arrow.BinaryTypes.Binary)
		o.valv = viewVar(o.val)
		o.valCol = nil
	}
	o.lo, o.hi, o.desc = 0, n, desc
}

// release drops everything the span holds; emitted batches keep their own references.
func (o *spanOutput) release() {
	for _, c := range []*varColumn{o.idCol, o.valCol} {
		if c != nil {
			c.release()
		}
	}
	for _, a := range []arrow.Array{o.ts, o.id, o.val} {
		if a != nil {
			a.Release()
		}
	}
	*o = spanOutput{}
}

// batchBytes returns the bytes of the selected variable-width columns of the k rows the next
// batch would take: from lo upwards (asc) or from hi downwards (desc).
func (o *spanOutput) batchBytes(s *parquetSource, k int) int {
	a, b := o.lo, o.lo+k
	if o.desc {
		a, b = o.hi-k, o.hi
	}
	n := 0
	if s.cols.part >= 0 {
		n += k * len(s.b.PartitionKey)
	}
	if o.id != nil {
		n += int(o.idv.offs[b] - o.idv.offs[a])
	}
	if o.val != nil {
		n += int(o.valv.offs[b] - o.valv.offs[a])
	}
	return n
}

// next returns the span's next batch, or nil when it is exhausted: as many rows as fit the
// batch limits, sliced from the span's arrays (asc) or copied in reverse order (desc).
func (o *spanOutput) next(s *parquetSource) arrow.RecordBatch {
	if o.lo >= o.hi {
		return nil
	}
	// The batch takes as many rows as fit the limits (at least one): the largest k whose
	// rows' bytes stay within MaxBatchBytes, found by bisection over the offsets.
	m := min(o.hi-o.lo, routing.MaxBatchRows)
	k := m
	if o.batchBytes(s, m) > routing.MaxBatchBytes {
		k = max(sort.Search(m+1, func(k int) bool { return o.batchBytes(s, k) > routing.MaxBatchBytes })-1, 1)
	}
	a, b := o.lo, o.lo+k
	if o.desc {
		a, b = o.hi-k, o.hi
		o.hi -= k
	} else {
		o.lo += k
	}
	cols := make([]arrow.Array, s.cols.num)
	if s.cols.part >= 0 {
		cols[s.cols.part] = constantString(s.alloc, s.b.PartitionKey, k)
	}
	for _, c := range []struct {
		pos int
		arr arrow.Array
		v   *varView
	}{{s.cols.ts, o.ts, nil}, {s.cols.id, o.id, &o.idv}, {s.cols.val, o.val, &o.valv}} {
		switch {
		case c.pos < 0:
		case o.desc:
			cols[c.pos] = reversed(s.alloc, c.arr, a, b)
		case c.v != nil:
			cols[c.pos] = sliceVar(s.alloc, c.arr, *c.v, a, b)
		default:
			cols[c.pos] = array.NewSlice(c.arr, int64(a), int64(b))
		}
	}
	rec := array.NewRecordBatch(s.schema, cols, int64(k))
	for _, c := range cols {
		c.Release()
	}
	return rec
}
