package scan

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/substrait-io/substrait-go/v8/expr"

	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/scan/ops"
	"github.com/flightsrv/flightsrv/scan/shred"
	"github.com/flightsrv/flightsrv/substrait"
)

// The shredded-column cache in the executor (Options.Shred; docs/architecture.md, "The
// shredded-column cache"). A fragment whose expressions read the value column only through
// JSON fields with constant keys (ops.ShredField) reads an archived bucket whole from the
// cache when it holds every field for the bucket's manifest key: the bucket is read without
// its value column, and each batch carries, after the read columns, the rows' slices of the
// cached typed columns, which a second compilation of the fragment's filters and projection
// reads in place of the fields (ops.CompileShredded); the value column is a null placeholder
// its expressions never read. Otherwise the fragment reads as always and, when the read is
// of a whole archived bucket, extracts the fields of every batch on the side (shredTee) and
// adds them to the bucket's file in the cache (one file per bucket, holding the union of the
// fields read from it: scan/shred's doc.go) once the read has ended without error. Only
// ascending reads of a whole bucket without a limit take part, so that a cached column's row
// i is the payload's record i in file order, as both reads yield them.

// shredPlan is a routed node's shredded variant.
type shredPlan struct {
	fields []ops.ShredField
	// entries are the cache's entries of a bucket the warm read needs: one per field, then one
	// per cached read column (readFrom).
	entries []shredEntry
	// readFrom says where each read column of a warm batch comes from: shredRead (the warm
	// read's batch), shredValue (the value column's null placeholder) or the index in entries
	// of the read column's cached column (the event times and ids, which the payload holds as
	// immutably as its documents: a warm read then fetches neither its footer nor its pages).
	readFrom []int
	// valuePos is the value column's position among the read columns.
	valuePos int
	// sch is the read schema followed by one column per field.
	sch *arrow.Schema
	// filters and proj are the node's, compiled over sch (proj nil when the node has none).
	filters, proj []*ops.Expr
	// used are, per filter, the columns of sch the later stages read (filterUse).
	used [][]bool
	// cols are the warm read's columns: the read columns without the value column and the
	// cached ones.
	cols []routing.Column
	// prune are the leading filters that a bucket's cached ranges can prove false for every
	// row (planPrune).
	prune []shredPrune
}

// shredPrune is a filter that compares a cached integer field with an integer constant: a
// bucket whose cached column's range (shred.Range) admits no value passing it has no row
// passing the filter, and is skipped without reading its payload or cached columns.
type shredPrune struct {
	entry int    // the field's index in shredPlan.entries
	op    string // gt, gte, lt, lte or equal, the field on the left
	lit   int64
}

// admits reports whether a column of range r may hold a value v with v op lit (a null row
// passes no comparison).
func (p shredPrune) admits(r shred.Range) bool {
	if r.Empty {
		return false
	}
	switch p.op {
	case "gt":
		return r.Max > p.lit
	case "gte":
		return r.Max >= p.lit
	case "lt":
		return r.Min < p.lit
	case "lte":
		return r.Min <= p.lit
	case "equal":
		return r.Min <= p.lit && p.lit <= r.Max
	}
	return true
}

// flipped maps a comparison to the one with its operands swapped.
var flipped = map[string]string{"gt": "lt", "gte": "lte", "lt": "gt", "lte": "gte", "equal": "equal"}

// planPrune returns the prunable filters of sp among filters (n's, in the order the fragment
// applies them, compiled over sp.sch as sp.filters), stopping at the first that is not one: a
// bucket is pruned only when a filter that every row reaches first passes none, so that
// skipping it cannot hide an error a later filter would raise (a filter applied before it
// could). Filters are `field op constant` or `constant op field` with op one of >, >=, <, <=,
// = and the field a cached int4 or int8 JSON field (a cast or any other expression around it
// is not matched); the constant an integer literal.
func planPrune(sp *shredPlan, filters []expr.Expression, ext expr.ExtensionRegistry, readWidth int, at map[string]int) []shredPrune {
	var out []shredPrune
	for _, f := range filters {
		p, ok := prunable(sp, f, ext, readWidth, at)
		if !ok {
			break
		}
		out = append(out, p)
	}
	return out
}

// prunable returns f as a shredPrune, false when it is not one.
func prunable(sp *shredPlan, f expr.Expression, ext expr.ExtensionRegistry, readWidth int, at map[string]int) (shredPrune, bool) {
	call, ok := f.(*expr.ScalarFunction)
	if !ok || call.NArgs() != 2 {
		return shredPrune{}, false
	}
	op := call.Name()
	if _, ok := flipped[op]; !ok {
		return shredPrune{}, false
	}
	a, aok := call.Arg(0).(expr.Expression)
	b, bok := call.Arg(1).(expr.Expression)
	if !aok || !bok {
		return shredPrune{}, false
	}
	field, lit := a, b
	v, ok := substrait.IntLiteral(lit)
	if !ok {
		field, lit, op = b, a, flipped[op]
		if v, ok = substrait.IntLiteral(lit); !ok {
			return shredPrune{}, false
		}
	}
	c, err := ops.CompileShredded(field, sp.sch, ext, sp.valuePos, at)
	if err != nil {
		return shredPrune{}, false
	}
	col, ok := c.Column()
	if !ok || col < readWidth || col-readWidth >= len(sp.fields) {
		return shredPrune{}, false
	}
	switch sp.fields[col-readWidth].Type().ID() {
	case arrow.INT32, arrow.INT64:
	default:
		return shredPrune{}, false
	}
	return shredPrune{entry: col - readWidth, op: op, lit: v}, true
}

// pruned reports whether the cache's ranges of the bucket of manifest key prove one of sp's
// prunable filters false for every row.
func (sp *shredPlan) pruned(cache *shred.Cache, key string) bool {
	for _, p := range sp.prune {
		e := sp.entries[p.entry]
		if r, ok := cache.Range(key, e.key); ok && r.Known && !p.admits(r) {
			return true
		}
	}
	return false
}

// shredEntry is one cached column of a bucket: its field key and type.
type shredEntry struct {
	key string
	typ arrow.DataType
}

// Sources of a warm batch's read columns (shredPlan.readFrom).
const (
	shredRead  = -1
	shredValue = -2
)

// cachedColumn reports whether the warm read takes read column c from the cache: the
// timestamp and id columns (the partition column is the bucket's, the value column is read
// through its fields).
func cachedColumn(c routing.Column) bool {
	return c == routing.ColumnTimestamp || c == routing.ColumnID
}

// columnKey is the field key of read column c of type typ in the cache; JSON fields' keys
// start with -> or #>.
func columnKey(c routing.Column, typ arrow.DataType) string {
	return "column " + c.String() + ":" + typ.String()
}

// planShred returns n's shredded variant, nil when n has none: the value column is read,
// only through JSON fields, by an ascending read without a limit or a required order.
// filters and outputs are n's expressions over the read schema, before compilation.
func planShred(n *routedNode, filters, outputs []expr.Expression, ext expr.ExtensionRegistry) *shredPlan {
	valuePos := slices.Index(n.readCols, routing.ColumnValue)
	if valuePos < 0 || n.desc || len(n.readOrder) > 0 || n.readLimit >= 0 {
		return nil
	}
	if n.proj == nil && (n.sel == nil || slices.Contains(n.sel, valuePos)) {
		return nil // the value column itself is output
	}
	sp := &shredPlan{valuePos: valuePos}
	seen := map[string]bool{}
	for _, e := range append(slices.Clone(n.filters), n.proj...) {
		for _, f := range e.ShredFields(valuePos) {
			if !seen[f.Key()] {
				seen[f.Key()] = true
				sp.fields = append(sp.fields, f)
			}
		}
	}
	if len(sp.fields) == 0 {
		return nil
	}
	fields := slices.Clone(n.readSch.Fields())
	at := map[string]int{}
	for i, f := range sp.fields {
		if !shred.Supported(f.Type()) {
			return nil
		}
		at[f.Key()] = len(fields)
		fields = append(fields, arrow.Field{Name: fmt.Sprintf("shred%d", i), Type: f.Type(), Nullable: true})
	}
	sp.sch = arrow.NewSchema(fields, nil)
	compileAll := func(es []expr.Expression) ([]*ops.Expr, bool) {
		out := make([]*ops.Expr, len(es))
		for i, e := range es {
			c, err := ops.CompileShredded(e, sp.sch, ext, valuePos, at)
			if err != nil {
				return nil, false
			}
			out[i] = c
		}
		return out, true
	}
	var ok bool
	if sp.filters, ok = compileAll(filters); !ok {
		return nil
	}
	sp.prune = planPrune(sp, filters, ext, n.readSch.NumFields(), at)
	if n.proj != nil {
		if sp.proj, ok = compileAll(outputs); !ok {
			return nil
		}
		if n.agg != nil && guardAggInputs(*n.agg, sp.proj) != nil {
			return nil
		}
	}
	sp.used = filterUse(sp.sch.NumFields(), sp.filters, sp.proj, n.sel)
	for _, f := range sp.fields {
		sp.entries = append(sp.entries, shredEntry{f.Key(), f.Type()})
	}
	for i, c := range n.readCols {
		switch typ := n.readSch.Field(i).Type; {
		case c == routing.ColumnValue:
			sp.readFrom = append(sp.readFrom, shredValue)
		case cachedColumn(c) && shred.Supported(typ):
			sp.readFrom = append(sp.readFrom, len(sp.entries))
			sp.entries = append(sp.entries, shredEntry{columnKey(c, typ), typ})
		default:
			sp.readFrom = append(sp.readFrom, shredRead)
			sp.cols = append(sp.cols, c)
		}
	}
	return sp
}

// shredRead opens u's read for a node with a shredded variant under a configured cache:
// warm (every field cached for the bucket's manifest key: the read without the value column,
// shredded batches, true) or as always (with the cache's writer on the side when the read is
// of a whole archived bucket, false). It counts the fragment's hit or miss in the analysis.
func (n *routedNode) shredRead(ctx context.Context, rt *runtime, u unit, req routing.BatchRequest) (array.RecordReader, routing.Tier, bool, error) {
	sp, cache := n.shred, rt.opts.Shred
	whole := req.Range.Covers(u.bucket.Range())
	// warm reads the bucket of key with its fields' cached columns cols (looked up when nil).
	warm := func(key string, cols []arrow.Array) (array.RecordReader, routing.Tier, bool, error) {
		if sp.pruned(cache, key) {
			// No row passes: the read is asked for its route only (that it still reads this
			// generation), and yields no batch.
			releaseAll(cols)
			wreq := req
			wreq.Columns = sp.cols
			wreq.ManifestRows = true
			r, tier, err := n.src.Table.ScanBucket(ctx, u.bucket, wreq)
			if err != nil {
				return nil, tier, false, err
			}
			if ar, ok := r.(routing.ArchivedBatchReader); ok && ar.ManifestKey() == key {
				rt.analysis.shredPrune(n)
				return &prunedReader{BatchReader: r, sch: sp.sch}, tier, true, nil
			}
			r.Release()
			return nil, tier, false, nil
		}
		if cols == nil {
			var ok bool
			if cols, ok = cacheGetAll(cache, key, sp.entries, rt.mem); !ok {
				return nil, routing.TierArchive, false, nil
			}
		}
		wreq := req
		wreq.Columns = sp.cols
		wreq.ManifestRows = true
		r, tier, err := n.src.Table.ScanBucket(ctx, u.bucket, wreq)
		if err != nil {
			releaseAll(cols)
			return nil, tier, false, err
		}
		if ar, ok := r.(routing.ArchivedBatchReader); !ok || ar.ManifestKey() != key {
			// The route changed since the hint: read as always.
			r.Release()
			releaseAll(cols)
			return nil, tier, false, nil
		}
		return newShredReader(r, cols, sp, rt.mem), tier, true, nil
	}
	tried := ""
	if whole {
		if key, ok := n.src.Table.ArchivedKey(u.bucket); ok {
			tried = key
			if r, tier, ok, err := warm(key, nil); err != nil || ok {
				rt.analysis.shredHit(n, ok)
				return r, tier, ok, err
			}
		}
	}
	r, tier, err := n.src.Table.ScanBucket(ctx, u.bucket, req)
	if err != nil {
		return nil, tier, false, err
	}
	ar, archived := r.(routing.ArchivedBatchReader)
	if !whole || !archived {
		return r, tier, false, nil
	}
	key := ar.ManifestKey()
	if key != tried {
		// The route was not cached yet (a first read since the process started): the cache may
		// hold the bucket all the same.
		if cols, ok := cacheGetAll(cache, key, sp.entries, rt.mem); ok {
			r.Release()
			w, wtier, ok, err := warm(key, cols)
			if err != nil || ok {
				rt.analysis.shredHit(n, ok)
				return w, wtier, ok, err
			}
			if r, tier, err = n.src.Table.ScanBucket(ctx, u.bucket, req); err != nil {
				return nil, tier, false, err
			}
			if ar, ok := r.(routing.ArchivedBatchReader); !ok || ar.ManifestKey() != key {
				return r, tier, false, nil
			}
		}
	}
	rt.analysis.shredHit(n, false)
	// The columns collected are the query's memory: at most the cache's largest file, and an
	// eighth of the query's limit shared by the fragments that may run at once, so that filling
	// the cache never fails a query that runs without it.
	limit := cache.MaxEntryBytes()
	if q := rt.mem.Limit(); q > 0 {
		limit = min(limit, q/int64(8*rt.fanout(n)))
	}
	return &shredTee{BatchReader: r, cache: cache, key: key, plan: sp, mem: rt.mem,
		parts: make([][]arrow.Array, len(sp.entries)), limit: limit}, tier, false, nil
}

// cacheGetAll returns every entry's cached column for key (one read of the bucket's file), or
// false (nothing held) when one misses.
func cacheGetAll(c *shred.Cache, key string, entries []shredEntry, mem memory.Allocator) ([]arrow.Array, bool) {
	fields := make([]shred.Field, len(entries))
	for i, f := range entries {
		fields[i] = shred.Field{Key: f.key, Type: f.typ}
	}
	return c.Get(key, fields, mem)
}

// prunedReader is the read of a pruned bucket: the route's reader, released with it, and no
// batch.
type prunedReader struct {
	routing.BatchReader
	sch *arrow.Schema
}

func (p *prunedReader) Schema() *arrow.Schema          { return p.sch }
func (p *prunedReader) Next() bool                     { return false }
func (p *prunedReader) Record() arrow.RecordBatch      { return nil }
func (p *prunedReader) RecordBatch() arrow.RecordBatch { return nil }
func (p *prunedReader) Err() error                     { return nil }

// errShredRows fails a warm read whose rows differ in number from its cached columns'.
var errShredRows = errors.New("scan: a shredded-column cache entry does not match its bucket's records")

// shredReader yields a warm read's batches: the read columns in order (the value column a
// null placeholder, cached read columns the rows' slices of their cached columns), followed by
// the rows' slices of the fields' cached columns. A read that yields more or fewer rows than
// the cached columns hold fails: they were not this payload's.
type shredReader struct {
	r        routing.BatchReader
	cols     []arrow.Array // per plan entry
	readFrom []int
	fields   int
	sch      *arrow.Schema
	mem      memory.Allocator
	off      int
	batch    arrow.RecordBatch
	err      error
	refs     int64
}

func newShredReader(r routing.BatchReader, cols []arrow.Array, sp *shredPlan, mem memory.Allocator) *shredReader {
	return &shredReader{r: r, cols: cols, readFrom: sp.readFrom, fields: len(sp.fields), sch: sp.sch, mem: mem, refs: 1}
}

func (s *shredReader) Schema() *arrow.Schema          { return s.sch }
func (s *shredReader) Record() arrow.RecordBatch      { return s.batch }
func (s *shredReader) RecordBatch() arrow.RecordBatch { return s.batch }
func (s *shredReader) Err() error                     { return s.err }
func (s *shredReader) Retain()                        { s.refs++ }
func (s *shredReader) Ordered() bool                  { return s.r.Ordered() }

func (s *shredReader) Release() {
	if s.refs--; s.refs > 0 {
		return
	}
	s.clear()
	s.r.Release()
	releaseAll(s.cols)
	s.cols = nil
}

func (s *shredReader) clear() {
	if s.batch != nil {
		s.batch.Release()
		s.batch = nil
	}
}

func (s *shredReader) Next() bool {
	s.clear()
	if s.err != nil {
		return false
	}
	if !s.r.Next() {
		s.err = s.r.Err()
		if s.err == nil && s.off != s.cols[0].Len() {
			s.err = errShredRows
		}
		return false
	}
	b := s.r.RecordBatch()
	rows := int(b.NumRows())
	if s.off+rows > s.cols[0].Len() {
		s.err = errShredRows
		return false
	}
	out := make([]arrow.Array, 0, s.sch.NumFields())
	j := 0
	for _, from := range s.readFrom {
		switch from {
		case shredValue:
			out = append(out, ops.NullColumn(s.mem, arrow.BinaryTypes.Binary, rows))
		case shredRead:
			col := b.Column(j)
			col.Retain()
			out = append(out, col)
			j++
		default:
			out = append(out, array.NewSlice(s.cols[from], int64(s.off), int64(s.off+rows)))
		}
	}
	for _, c := range s.cols[:s.fields] {
		out = append(out, array.NewSlice(c, int64(s.off), int64(s.off+rows)))
	}
	s.off += rows
	s.batch = array.NewRecordBatch(s.sch, out, int64(rows))
	releaseAll(out)
	return true
}

// shredTee passes a whole archived bucket's batches through unchanged and extracts the
// fields from each batch's value column on the side, keeping the cached read columns'
// arrays too; once the read has ended without error, it adds each entry's column (the
// batches' arrays concatenated) to the bucket's file in one Put. An
// extraction error (a document that is not JSON, a text a cast refuses: the query decides
// whether such rows matter) or columns past limit bytes (the cache's largest file, and a
// share of the query's memory) stop the collection for this read; nothing is written then.
type shredTee struct {
	routing.BatchReader
	cache *shred.Cache
	key   string
	plan  *shredPlan
	mem   memory.Allocator
	parts [][]arrow.Array // per plan entry
	bytes int64
	limit int64 // bytes the columns collected may hold
	off   bool
}

func (t *shredTee) Next() bool {
	if !t.BatchReader.Next() {
		if !t.off && t.BatchReader.Err() == nil {
			t.write()
		}
		t.stop()
		return false
	}
	if t.off {
		return true
	}
	b := t.BatchReader.RecordBatch()
	arrs, err := ops.ExtractShredded(t.mem, b.Column(t.plan.valuePos), t.plan.fields)
	if err != nil {
		t.stop()
		return true
	}
	for i, from := range t.plan.readFrom {
		if from >= 0 {
			// The cold read's columns are the read columns; entries follow the fields in
			// read column order. A copy: the read may reuse its buffers once the batch is
			// released.
			col, err := array.Concatenate([]arrow.Array{b.Column(i)}, t.mem)
			if err != nil {
				releaseAll(arrs)
				t.stop()
				return true
			}
			arrs = append(arrs, col)
		}
	}
	for i, a := range arrs {
		t.parts[i] = append(t.parts[i], a)
		for _, b := range a.Data().Buffers() {
			if b != nil {
				t.bytes += int64(b.Len())
			}
		}
	}
	if t.bytes > t.limit {
		t.stop()
	}
	return true
}

// write concatenates each entry's column and adds them to the bucket's file in one write; a
// failed write only leaves them out (the cache counts it).
func (t *shredTee) write() {
	keys := make([]string, len(t.plan.entries))
	cols := make([]arrow.Array, 0, len(t.plan.entries))
	defer func() { releaseAll(cols) }()
	for i, f := range t.plan.entries {
		keys[i] = f.key
		var col arrow.Array
		switch len(t.parts[i]) {
		case 0:
			col = array.MakeArrayOfNull(t.mem, f.typ, 0)
		case 1:
			col = t.parts[i][0]
			col.Retain()
		default:
			var err error
			if col, err = array.Concatenate(t.parts[i], t.mem); err != nil {
				return
			}
		}
		cols = append(cols, col)
	}
	_ = t.cache.Put(t.key, keys, cols, t.mem)
}

// stop ends the collection and releases what it holds.
func (t *shredTee) stop() {
	t.off = true
	for i := range t.parts {
		releaseAll(t.parts[i])
		t.parts[i] = nil
	}
}

func (t *shredTee) Release() {
	t.stop()
	t.BatchReader.Release()
}
