package aggregate

import (
	"bytes"
	"encoding/binary"
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flightsrv/flightsrv/internal/freelist"
)

// keyEntryBytes estimates the Go heap of a map[string]uint32 entry beyond its key bytes
// (string header, value, the table's slack).
const keyEntryBytes = 48

// grouper maps each row's group key to a dense group id, numbering groups in order of first
// appearance, and keeps each group's key values in Arrow builders allocated from the query's
// ledger. One fixed-width key column uses an open-addressing table of normalised values, one
// text or binary column a map[string]uint32 of the values (NULL apart in both); two columns
// of those kinds number each column's values apart and find the pair of numbers in an
// open-addressing table (lookupPair: a map of each column's few distinct values and one
// integer probe per row instead of a map of each row's encoded pair); anything else
// encodes each row's key into bytes (per column: a null marker, then the
// normalised value or a uvarint length and the bytes) and uses a map[string]uint32.
type grouper struct {
	cols   []int // key columns in the batches
	widths []int // keyWidth of each (0: variable)
	bld    []array.Builder
	n      int // groups so far

	fast   bool
	t64    u64Table
	nullID int64 // one key column: the NULL key's group, -1 before one appears

	// pair: two key columns, each text/binary or fixed-width of at most 8 bytes. Each
	// column's values get dense ids of their own (cid), and a row's group is found in t64
	// by the pair of ids, id0<<32 | id1 (lookupPair).
	pair bool
	cid  [2]colIDs

	ms      map[string]uint32
	keyHeap int64

	keys    []uint64
	ckeys   []uint64 // lookupPair: a fixed-width column's normalised values
	scratch []byte
	buf     []byte
	offs    []int
	pos     []int
	newRows []int
	gids    []uint32 // the reader's group ids of a batch (gidsFor)
}

// rowScratch is a grouper's per-batch scratch (its slices' capacity), kept in scratchList
// between groupers: a query over many buckets makes a grouper per fragment and batch sizes
// alike, and the scratch sized to a batch was most of the allocations of issue 19's grouped
// warm queries (bench's BenchmarkAnalytical, an allocation profile of the server).
type rowScratch struct {
	keys, ckeys  []uint64
	scratch, buf []byte
	offs, pos    []int
	newRows      []int
	gids         []uint32
}

// bytes returns the scratch's capacity in bytes.
func (sc *rowScratch) bytes() int {
	return 8*(cap(sc.keys)+cap(sc.ckeys)+cap(sc.offs)+cap(sc.pos)+cap(sc.newRows)) + cap(sc.scratch) + cap(sc.buf) + 4*cap(sc.gids)
}

// scratchList keeps groupers' scratch across garbage collections (internal/freelist): it was a
// sync.Pool, which every two collections empty, and under serve's default memory limit a cold
// grouped query collects every few megabytes (bench's BenchmarkAnalytical fixture, 3M rows:
// origin, destination, count(*) GROUP BY 1, 2 ran 13–17 collections a query), so most of its
// ~135 groupers grew their scratch anew, 15 MB a query. A batch is at most routing's 8,192
// rows, whose scratch of a composite key is about 300 KiB; eight fit the fan-out's groupers.
var scratchList = freelist.New[*rowScratch](8, 4<<20)

// putScratch gives the grouper's scratch back to scratchList and clears it.
func (g *grouper) putScratch() {
	sc := &rowScratch{keys: g.keys[:0], ckeys: g.ckeys[:0], scratch: g.scratch[:0], buf: g.buf[:0], offs: g.offs[:0], pos: g.pos[:0], newRows: g.newRows[:0], gids: g.gids[:0]}
	if n := sc.bytes(); n > 0 { // an empty one would take the place of one worth keeping
		scratchList.Put(sc, n)
	}
	g.keys, g.ckeys, g.scratch, g.buf, g.offs, g.pos, g.newRows, g.gids = nil, nil, nil, nil, nil, nil, nil, nil
}

// gidsFor returns the grouper's scratch for the group ids of n rows.
func (g *grouper) gidsFor(n int) []uint32 {
	g.gids = sized(g.gids, n)
	return g.gids
}

func newGrouper(mem memory.Allocator, types []arrow.DataType, cols []int) *grouper {
	g := &grouper{cols: cols, nullID: -1}
	sc, ok := scratchList.Get()
	if !ok {
		sc = new(rowScratch)
	}
	g.keys, g.ckeys, g.scratch, g.buf, g.offs, g.pos, g.newRows, g.gids = sc.keys, sc.ckeys, sc.scratch, sc.buf, sc.offs, sc.pos, sc.newRows, sc.gids
	for _, t := range types {
		g.widths = append(g.widths, keyWidth(t))
		g.bld = append(g.bld, array.NewBuilder(mem, t))
	}
	switch {
	case len(types) == 1 && g.widths[0] > 0 && g.widths[0] <= 8:
		g.fast = true
		g.t64.init(64)
	case len(types) == 1 && g.widths[0] == 0:
		g.cid[0].init(true) // lookupOneBytes: the column's ids are the group ids
	case len(types) == 2 && pairable(types[0]) && pairable(types[1]):
		g.pair = true
		g.t64.init(64)
		for c, t := range types {
			g.cid[c].init(keyWidth(t) == 0)
		}
	default:
		g.ms = make(map[string]uint32)
	}
	return g
}

// pairable reports whether a key column of type t can take part in lookupPair: text or binary,
// or a fixed-width type of at most 8 bytes (columnKeys' normalised values).
func pairable(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.STRING, arrow.BINARY, arrow.LARGE_STRING, arrow.LARGE_BINARY:
		return true
	}
	w := keyWidth(t)
	return w > 0 && w <= 8
}

// colIDs numbers one key column's distinct values densely (from 0, in order of first
// appearance; NULL is a value of its own): an open-addressing table of a fixed-width column's
// normalised values or of a text or binary column's short values (bytesID), a map of its
// longer ones.
type colIDs struct {
	bytes   bool
	ms      map[string]uint32
	t       u64Table
	n       uint32
	nullID  int64 // -1 before a NULL appears
	keyHeap int64 // ms's estimated Go heap
}

func (c *colIDs) init(bytes bool) {
	c.bytes, c.nullID = bytes, -1
	c.t.init(16)
	if bytes {
		c.ms = make(map[string]uint32)
	}
}

// bytesID returns the id of a text or binary value k: a value of at most 7 bytes is found in
// t by its bytes and length packed into a uint64 (packShort; most keys of the analytical
// queries are such codes, and an integer probe costs a fraction of a map's string hash), a
// longer one in ms.
func (c *colIDs) bytesID(k []byte) uint32 {
	if x, ok := packShort(k); ok {
		id, found := c.t.find(x)
		if !found {
			id = c.n
			c.n++
			c.t.insert(x, id)
		}
		return id
	}
	id, ok := c.ms[string(k)]
	if !ok {
		id = c.n
		c.n++
		c.ms[string(k)] = id
		c.keyHeap += int64(len(k)) + keyEntryBytes
	}
	return id
}

// packShort packs a value of at most 7 bytes into a uint64, distinct for distinct values: its
// bytes in the low 56 bits (the first lowest), its length in the top 8.
func packShort(k []byte) (uint64, bool) {
	if len(k) > 7 {
		return 0, false
	}
	x := uint64(len(k)) << 56
	for i, b := range k {
		x |= uint64(b) << (8 * i)
	}
	return x, true
}

func (c *colIDs) null() uint32 {
	if c.nullID < 0 {
		c.nullID = int64(c.n)
		c.n++
	}
	return uint32(c.nullID)
}

// heapBytes estimates the Go heap c holds.
func (c *colIDs) heapBytes() int64 { return c.keyHeap + int64(len(c.t.slots))*16 }

// ids ORs the id of each row of col, shifted left by shift, into keys (len col.Len()).
// fixed and scratch are scratch for a fixed-width column's values.
func (c *colIDs) ids(col arrow.Array, keys []uint64, shift uint, fixed *[]uint64, scratch *[]byte) {
	n := col.Len()
	bm, off := validity(col)
	var (
		prevID uint32
		have   bool
	)
	if c.bytes {
		bv := bytesView(col)
		var prev []byte
		for i := range n {
			if bm != nil && !bitutil.BitIsSet(bm, off+i) {
				keys[i] |= uint64(c.null()) << shift
				continue
			}
			k := bv.value(i)
			if !have || !bytes.Equal(k, prev) {
				prev, prevID, have = k, c.bytesID(k), true
			}
			keys[i] |= uint64(prevID) << shift
		}
		return
	}
	*fixed = sized(*fixed, n)
	vals := *fixed
	columnKeys(col, vals, scratch)
	var prev uint64
	for i, k := range vals {
		if bm != nil && !bitutil.BitIsSet(bm, off+i) {
			keys[i] |= uint64(c.null()) << shift
			continue
		}
		if !have || k != prev {
			id, ok := c.t.find(k)
			if !ok {
				id = c.n
				c.n++
				c.t.insert(k, id)
			}
			prev, prevID, have = k, id, true
		}
		keys[i] |= uint64(prevID) << shift
	}
}

// lookupPair is lookup for two key columns (pair): each row's pair of column ids, then its
// group by that pair.
func (g *grouper) lookupPair(rec arrow.RecordBatch, gids []uint32) {
	n := int(rec.NumRows())
	g.keys = sized(g.keys, n)
	keys := g.keys
	clear(keys)
	g.cid[0].ids(rec.Column(g.cols[0]), keys, 32, &g.ckeys, &g.scratch)
	g.cid[1].ids(rec.Column(g.cols[1]), keys, 0, &g.ckeys, &g.scratch)
	gids = gids[:n]
	var (
		prevK  uint64
		prevID uint32
	)
	for i, k := range keys {
		if i > 0 && k == prevK {
			gids[i] = prevID
			continue
		}
		id, ok := g.t64.find(k)
		if !ok {
			id = g.newGroup(k, i)
		}
		gids[i] = id
		prevK, prevID = k, id
	}
}

// newGroup gives t64's key k, absent (row row's), the next group id and records row as the
// group's first (newRows).
func (g *grouper) newGroup(k uint64, row int) uint32 {
	id := uint32(g.n)
	g.n++
	g.t64.insert(k, id)
	g.newRows = append(g.newRows, row)
	return id
}

// lookup writes the group id of every row of rec into gids (len rec.NumRows()), creating
// groups for keys not seen before.
func (g *grouper) lookup(rec arrow.RecordBatch, gids []uint32) {
	g.newRows = g.newRows[:0]
	switch {
	case g.fast:
		g.lookupFast(rec.Column(g.cols[0]), gids)
	case g.pair:
		g.lookupPair(rec, gids)
	case len(g.cols) == 1 && g.widths[0] == 0:
		g.lookupOneBytes(rec.Column(g.cols[0]), gids)
	default:
		g.lookupBytes(rec, gids)
	}
	if len(g.newRows) == 0 {
		return
	}
	for c, col := range g.cols {
		appendRows(g.bld[c], rec.Column(col), g.newRows)
	}
}

func (g *grouper) lookupFast(col arrow.Array, gids []uint32) {
	n := col.Len()
	g.keys = sized(g.keys, n)
	columnKeys(col, g.keys, &g.scratch)
	keys := g.keys
	gids = gids[:n]
	bm, off := validity(col)
	var (
		prevK  uint64
		prevID uint32
		have   bool
	)
	for i, k := range keys {
		if bm != nil && !bitutil.BitIsSet(bm, off+i) {
			gids[i] = g.nullGroup(i)
			continue
		}
		if have && k == prevK {
			gids[i] = prevID
			continue
		}
		id, ok := g.t64.find(k)
		if !ok {
			id = g.newGroup(k, i)
		}
		gids[i] = id
		prevK, prevID, have = k, id, true
	}
}

// lookupOneBytes is lookup for one text or binary key column: the key is the value itself,
// NULL apart, and the column's ids (cid[0]) are the group ids.
func (g *grouper) lookupOneBytes(col arrow.Array, gids []uint32) {
	n := col.Len()
	gids = gids[:n]
	bv := bytesView(col)
	bm, off := validity(col)
	var (
		prev   []byte
		prevID uint32
		have   bool
	)
	for i := range gids {
		var id uint32
		if bm != nil && !bitutil.BitIsSet(bm, off+i) {
			id = g.cid[0].null()
		} else {
			k := bv.value(i)
			if have && bytes.Equal(k, prev) {
				gids[i] = prevID
				continue
			}
			id = g.cid[0].bytesID(k)
			prev, prevID, have = k, id, true
		}
		if int(id) == g.n {
			g.n++
			g.newRows = append(g.newRows, i)
		}
		gids[i] = id
	}
}

// putNullTag writes row i's null marker of a composite key at buf[pos[i]]: 0 for a NULL
// (pos[i] then moves past it and ok is false) or 1 before a value, which goes at p.
func putNullTag(buf []byte, pos []int, i int, null bool) (p int, ok bool) {
	p = pos[i]
	if null {
		buf[p] = 0
		pos[i] = p + 1
		return 0, false
	}
	buf[p] = 1
	return p + 1, true
}

// nullGroup returns the group id of the NULL key (row row's), giving it the next id the
// first time and recording row as its first (newRows).
func (g *grouper) nullGroup(row int) uint32 {
	if g.nullID < 0 {
		g.nullID = int64(g.n)
		g.n++
		g.newRows = append(g.newRows, row)
	}
	return uint32(g.nullID)
}

// internBytes returns the group id of key k (the bytes of row row's key), giving a new key
// the next id and recording row as its first (newRows).
func (g *grouper) internBytes(k []byte, row int) uint32 {
	id, ok := g.ms[string(k)]
	if !ok {
		id = uint32(g.n)
		g.n++
		g.ms[string(k)] = id
		g.keyHeap += int64(len(k)) + keyEntryBytes
		g.newRows = append(g.newRows, row)
	}
	return id
}

func (g *grouper) lookupBytes(rec arrow.RecordBatch, gids []uint32) {
	n := int(rec.NumRows())
	offs := sized(g.offs, n+1)
	clear(offs)
	// Pass 1: each row's encoded length.
	for c, ci := range g.cols {
		col := rec.Column(ci)
		bm, off := validity(col)
		w := g.widths[c]
		if w > 0 {
			for i := range n {
				offs[i+1]++
				if bm == nil || bitutil.BitIsSet(bm, off+i) {
					offs[i+1] += w
				}
			}
			continue
		}
		bv := bytesView(col)
		for i := range n {
			offs[i+1]++
			if bm == nil || bitutil.BitIsSet(bm, off+i) {
				l := len(bv.value(i))
				offs[i+1] += uvarintLen(uint64(l)) + l
			}
		}
	}
	for i := 1; i <= n; i++ {
		offs[i] += offs[i-1]
	}
	// Pass 2: encode column by column.
	buf := sized(g.buf, offs[n])
	pos := sized(g.pos, n)
	copy(pos, offs[:n])
	for c, ci := range g.cols {
		col := rec.Column(ci)
		bm, off := validity(col)
		w := g.widths[c]
		if dec, ok := col.(*array.Decimal128); ok {
			// decimal128 keys: the value's 16 bytes (one column's values share its scale, so
			// equal numbers have equal bytes).
			vals := dec.Values()
			for i, v := range vals {
				p, ok := putNullTag(buf, pos, i, bm != nil && !bitutil.BitIsSet(bm, off+i))
				if !ok {
					continue
				}
				binary.LittleEndian.PutUint64(buf[p:], v.LowBits())
				binary.LittleEndian.PutUint64(buf[p+8:], uint64(v.HighBits()))
				pos[i] = p + 16
			}
			continue
		}
		if iv, ok := col.(*array.MonthDayNanoInterval); ok {
			// interval keys: the span PostgreSQL's interval_cmp and interval_hash compare
			// (intervalSpanKey), so that intervals equal as PostgreSQL compares them ('1 mon'
			// and '30 days') form one group, shown as its first row's value.
			for i, v := range iv.MonthDayNanoIntervalValues() {
				p, ok := putNullTag(buf, pos, i, bm != nil && !bitutil.BitIsSet(bm, off+i))
				if !ok {
					continue
				}
				lo, hi := intervalSpanKey(v)
				binary.LittleEndian.PutUint64(buf[p:], lo)
				binary.LittleEndian.PutUint64(buf[p+8:], hi)
				pos[i] = p + 16
			}
			continue
		}
		if w > 0 {
			g.keys = sized(g.keys, n)
			columnKeys(col, g.keys, &g.scratch)
			for i, k := range g.keys {
				p, ok := putNullTag(buf, pos, i, bm != nil && !bitutil.BitIsSet(bm, off+i))
				if !ok {
					continue
				}
				switch w {
				case 1:
					buf[p] = byte(k)
				case 2:
					binary.LittleEndian.PutUint16(buf[p:], uint16(k))
				case 4:
					binary.LittleEndian.PutUint32(buf[p:], uint32(k))
				default:
					binary.LittleEndian.PutUint64(buf[p:], k)
				}
				pos[i] = p + w
			}
			continue
		}
		bv := bytesView(col)
		for i := range n {
			p, ok := putNullTag(buf, pos, i, bm != nil && !bitutil.BitIsSet(bm, off+i))
			if !ok {
				continue
			}
			v := bv.value(i)
			p += binary.PutUvarint(buf[p:], uint64(len(v)))
			pos[i] = p + copy(buf[p:], v)
		}
	}
	// Pass 3: look the keys up.
	gids = gids[:n]
	var (
		prev   []byte
		prevID uint32
	)
	for i := range gids {
		k := buf[offs[i]:offs[i+1]]
		if i > 0 && bytes.Equal(k, prev) {
			gids[i] = prevID
			continue
		}
		id := g.internBytes(k, i)
		gids[i] = id
		prev, prevID = k, id
	}
	g.offs, g.buf, g.pos = offs, buf, pos
}

func uvarintLen(x uint64) int {
	n := 1
	for x >= 0x80 {
		x >>= 7
		n++
	}
	return n
}

// heapBytes estimates the Go heap the grouper holds (the key builders are on the ledger).
func (g *grouper) heapBytes() int64 {
	h := int64(cap(g.keys)+cap(g.ckeys))*8 + int64(cap(g.scratch)) + int64(cap(g.buf)) +
		int64(cap(g.offs)+cap(g.pos)+cap(g.newRows))*8 + int64(cap(g.gids))*4
	switch {
	case g.fast:
		return h + int64(len(g.t64.slots))*16
	case g.pair:
		return h + int64(len(g.t64.slots))*16 + g.cid[0].heapBytes() + g.cid[1].heapBytes()
	case len(g.cols) == 1:
		return h + g.cid[0].heapBytes()
	}
	return h + g.keyHeap
}

// keyArrays returns the key columns of all groups, in group order, and releases the builders
// and the hash table. The caller releases the arrays.
func (g *grouper) keyArrays() []arrow.Array {
	out := make([]arrow.Array, len(g.bld))
	for i, b := range g.bld {
		out[i] = b.NewArray()
		b.Release()
	}
	g.bld = nil
	g.t64, g.ms, g.cid = u64Table{}, nil, [2]colIDs{}
	g.putScratch()
	return out
}

// release frees the builders (when keyArrays was not called).
func (g *grouper) release() {
	for _, b := range g.bld {
		b.Release()
	}
	g.bld = nil
	if g.keys != nil || g.ckeys != nil || g.buf != nil || g.offs != nil || g.gids != nil {
		g.putScratch()
	}
}

// validity returns a's validity bitmap and a's offset into it; nil when a has no null.
func validity(a arrow.Array) ([]byte, int) {
	if a.NullN() == 0 {
		return nil, 0
	}
	d := a.Data()
	return d.Buffers()[0].Bytes(), d.Offset()
}

// appendRows appends the values of col at rows to b (a builder of col's type).
func appendRows(b array.Builder, col arrow.Array, rows []int) {
	switch b := b.(type) {
	case *array.Int8Builder:
		appendTyped(b, col.(*array.Int8).Int8Values(), col, rows)
	case *array.Int16Builder:
		appendTyped(b, col.(*array.Int16).Int16Values(), col, rows)
	case *array.Int32Builder:
		appendTyped(b, col.(*array.Int32).Int32Values(), col, rows)
	case *array.Int64Builder:
		appendTyped(b, col.(*array.Int64).Int64Values(), col, rows)
	case *array.Uint8Builder:
		appendTyped(b, col.(*array.Uint8).Uint8Values(), col, rows)
	case *array.Uint16Builder:
		appendTyped(b, col.(*array.Uint16).Uint16Values(), col, rows)
	case *array.Uint32Builder:
		appendTyped(b, col.(*array.Uint32).Uint32Values(), col, rows)
	case *array.Uint64Builder:
		appendTyped(b, col.(*array.Uint64).Uint64Values(), col, rows)
	case *array.Float32Builder:
		appendTyped(b, col.(*array.Float32).Float32Values(), col, rows)
	case *array.Float64Builder:
		appendTyped(b, col.(*array.Float64).Float64Values(), col, rows)
	case *array.TimestampBuilder:
		appendTyped(b, col.(*array.Timestamp).TimestampValues(), col, rows)
	case *array.Date32Builder:
		appendTyped(b, col.(*array.Date32).Date32Values(), col, rows)
	case *array.Time64Builder:
		appendTyped(b, col.(*array.Time64).Time64Values(), col, rows)
	case *array.Decimal128Builder:
		appendTyped(b, col.(*array.Decimal128).Values(), col, rows)
	case *array.MonthDayNanoIntervalBuilder:
		appendTyped(b, col.(*array.MonthDayNanoInterval).MonthDayNanoIntervalValues(), col, rows)
	case *array.BooleanBuilder:
		c := col.(*array.Boolean)
		for _, r := range rows {
			if c.IsNull(r) {
				b.AppendNull()
			} else {
				b.Append(c.Value(r))
			}
		}
	default:
		bb := binaryBuilder(b)
		bv := bytesView(col)
		for _, r := range rows {
			if col.IsNull(r) {
				bb.AppendNull()
			} else {
				bb.Append(bv.value(r))
			}
		}
	}
}

func appendTyped[T any](b interface {
	Append(T)
	AppendNull()
}, vals []T, col arrow.Array, rows []int) {
	for _, r := range rows {
		if col.IsNull(r) {
			b.AppendNull()
		} else {
			b.Append(vals[r])
		}
	}
}

// binaryBuilder returns the BinaryBuilder of a utf8, large_utf8, binary or large_binary
// builder.
func binaryBuilder(b array.Builder) *array.BinaryBuilder {
	switch x := b.(type) {
	case *array.StringBuilder:
		return x.BinaryBuilder
	case *array.LargeStringBuilder:
		return x.BinaryBuilder
	case *array.BinaryBuilder:
		return x
	}
	panic("aggregate: no binary builder for " + b.Type().String())
}

// u64Table is an open-addressing (linear probing) hash table from uint64 keys to group ids,
// at most half full. Fibonacci hashing spreads the keys, which are often small or dense.
type u64Table struct {
	slots []u64Slot
	shift uint // 64 - log2(len(slots))
	n     int
}

type u64Slot struct {
	key uint64
	id  uint32 // group id + 1; 0: empty
}

func (t *u64Table) init(size int) {
	t.slots = make([]u64Slot, size)
	t.shift = uint(64 - bits.TrailingZeros(uint(size)))
	t.n = 0
}

func (t *u64Table) find(k uint64) (uint32, bool) {
	mask := uint64(len(t.slots) - 1)
	for h := (k * 0x9e3779b97f4a7c15) >> t.shift; ; h = (h + 1) & mask {
		s := &t.slots[h]
		if s.id == 0 {
			return 0, false
		}
		if s.key == k {
			return s.id - 1, true
		}
	}
}

// insert adds k (absent) with id.
func (t *u64Table) insert(k uint64, id uint32) {
	if 2*(t.n+1) > len(t.slots) {
		old := t.slots
		t.init(2 * len(old))
		for _, s := range old {
			if s.id != 0 {
				t.put(s.key, s.id)
			}
		}
	}
	t.put(k, id+1)
}

func (t *u64Table) put(k uint64, id1 uint32) {
	mask := uint64(len(t.slots) - 1)
	h := (k * 0x9e3779b97f4a7c15) >> t.shift
	for t.slots[h].id != 0 {
		h = (h + 1) & mask
	}
	t.slots[h] = u64Slot{key: k, id: id1}
	t.n++
}

// intervalSpanKey is the span of an interval as PostgreSQL's interval_cmp_value computes it
// (a month 30 days, a day 24 hours) in nanoseconds, as a two's-complement 128-bit integer
// (lo, hi): equal exactly where interval_cmp calls the intervals equal.
func intervalSpanKey(v arrow.MonthDayNanoInterval) (lo, hi uint64) {
	days := int64(v.Months)*30 + int64(v.Days) // |days| < 2^37
	neg := days < 0
	ud := uint64(days)
	if neg {
		ud = uint64(-days)
	}
	hi, lo = bits.Mul64(ud, 86_400_000_000_000)
	if neg { // negate the 128-bit product
		lo, hi = ^lo+1, ^hi
		if lo == 0 {
			hi++
		}
	}
	// + nanoseconds, sign-extended
	var c uint64
	lo, c = bits.Add64(lo, uint64(v.Nanoseconds), 0)
	ext := uint64(0)
	if v.Nanoseconds < 0 {
		ext = ^uint64(0)
	}
	hi, _ = bits.Add64(hi, ext, c)
	return lo, hi
}
