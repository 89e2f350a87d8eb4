package archive

import (
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flightsrv/flightsrv/routing"
)

// Arrow building blocks of ReadBatches. Arrays are built straight into buffers from the
// request's allocator, without validity bitmaps (stored values are never null), so that a
// batch's memory is exactly its offsets, data and timestamps.

// uninitAllocator is an allocator that can hand out a buffer without clearing it
// (ledger.Ledger and ledger.Pool: a recycled buffer keeps what it held).
type uninitAllocator interface {
	AllocateUninit(size int) []byte
}

// allocateUninit returns size bytes from alloc, not cleared when alloc can skip it: only for
// buffers every byte of which is written before anything reads it.
func allocateUninit(alloc memory.Allocator, size int) []byte {
	if u, ok := alloc.(uninitAllocator); ok {
		return u.AllocateUninit(size)
	}
	return alloc.Allocate(size)
}

// newUninitBuffer returns an empty buffer with room for n bytes (rounded up to 64, as
// memory.Buffer's Reserve does) from alloc, not cleared (see allocateUninit): its users
// write every byte below the length they set. Growing it clears what it adds.
func newUninitBuffer(alloc memory.Allocator, n int) *memory.Buffer {
	b := memory.NewBufferWithAllocator(allocateUninit(alloc, (n+63)&^63), alloc)
	b.ResizeNoShrink(0)
	return b
}

// varColumn accumulates the values of one variable-width column (utf8 or binary) in Arrow
// layout: n+1 int32 offsets and the concatenated data.
type varColumn struct {
	offs, data *memory.Buffer
	n, size    int
	rows       int // the values expected (the room offs was made for)
	grows      int // times data grew past its room
}

// newVarColumn returns an empty column with room for rows values and dataHint bytes.
func newVarColumn(alloc memory.Allocator, rows, dataHint int) *varColumn {
	c := &varColumn{offs: newUninitBuffer(alloc, columnRoom(4*(rows+1))), data: newUninitBuffer(alloc, columnRoom(max(dataHint, 0))), rows: rows}
	c.offs.ResizeNoShrink(4)
	arrow.Int32Traits.CastFromBytes(c.offs.Bytes())[0] = 0
	return c
}

// append adds v. The column grows geometrically; a column larger than 2 GiB cannot be
// represented with int32 offsets and panics (a span never holds that much: pages are far
// smaller).
func (c *varColumn) append(v []byte) {
	if need := 4 * (c.n + 2); need > c.offs.Cap() {
		c.offs.Reserve(max(need, 2*c.offs.Cap()))
	}
	if need := c.size + len(v); need > c.data.Cap() {
		c.growData(need, c.n+1)
	}
	copy(c.data.Buf()[c.size:], v)
	c.size += len(v)
	c.n++
	offs := arrow.Int32Traits.CastFromBytes(c.offs.Buf())
	offs[c.n] = int32(c.size)
}

// growData makes room for need bytes of data once n values are in, and for the values still
// expected at the mean size of the n (plus a sixteenth): a column whose size hint fell short
// by a little grows once, by a little, which the allocator often gives in place (a
// ledger.Pool buffer has the room of its size class), rather than doubling, which always
// moves the data. From its third growth on it at least doubles.
func (c *varColumn) growData(need, n int) {
	room := max(need, 256)
	if n > 0 && c.rows > n {
		room += (c.rows - n) * need / n * 17 / 16
	}
	if c.grows++; c.grows > 2 {
		// Values growing steadily larger would outrun every estimate: from the third growth
		// on, double, so that moving the data stays linear in its size.
		room = max(room, 2*c.data.Cap())
	}
	c.data.Reserve(room)
}

// appendRun adds the m values data[offs[i]:offs[i+1]] (i < m, len(offs) = m+1, offsets
// ascending) with one copy of their bytes.
func (c *varColumn) appendRun(data []byte, offs []uint32) {
	m := len(offs) - 1
	if m <= 0 {
		return
	}
	first, last := offs[0], offs[m]
	if need := 4 * (c.n + m + 1); need > c.offs.Cap() {
		c.offs.Reserve(max(need, 2*c.offs.Cap()))
	}
	if need := c.size + int(last-first); need > c.data.Cap() {
		c.growData(need, c.n+m)
	}
	copy(c.data.Buf()[c.size:], data[first:last])
	dst := arrow.Int32Traits.CastFromBytes(c.offs.Buf())[c.n+1 : c.n+1+m]
	base := int32(c.size) - int32(first)
	for i := range dst {
		dst[i] = base + int32(offs[i+1])
	}
	c.size += int(last - first)
	c.n += m
}

// finish returns the column as an array of type dt and releases the builder's references.
func (c *varColumn) finish(dt arrow.DataType) arrow.Array {
	c.offs.ResizeNoShrink(4 * (c.n + 1))
	c.data.ResizeNoShrink(c.size)
	data := array.NewData(dt, c.n, []*memory.Buffer{nil, c.offs, c.data}, nil, 0, 0)
	arr := array.MakeFromData(data)
	data.Release()
	c.release()
	return arr
}

// release drops the builder's buffers (after finish, or on an error).
func (c *varColumn) release() {
	if c.offs != nil {
		c.offs.Release()
		c.data.Release()
		c.offs, c.data = nil, nil
	}
}

// newTimestamps returns a timestamp[ns, UTC] array of vals (copied).
func newTimestamps(alloc memory.Allocator, vals []int64) arrow.Array {
	return newTimestampsFunc(alloc, len(vals), func(dst []int64) { copy(dst, vals) })
}

// newTimestampsFunc returns a timestamp[ns, UTC] array of n values written by fill.
func newTimestampsFunc(alloc memory.Allocator, n int, fill func(dst []int64)) arrow.Array {
	buf := newUninitBuffer(alloc, 8*n)
	buf.ResizeNoShrink(8 * n)
	fill(arrow.Int64Traits.CastFromBytes(buf.Bytes()))
	data := array.NewData(routing.TimestampType, n, []*memory.Buffer{nil, buf}, nil, 0, 0)
	buf.Release()
	arr := array.MakeFromData(data)
	data.Release()
	return arr
}

// constantString returns a utf8 array of n copies of v: the partition column, every row of
// which holds the bucket's partition key.
func constantString(alloc memory.Allocator, v []byte, n int) arrow.Array {
	offs := memory.NewResizableBuffer(alloc)
	offs.Resize(4 * (n + 1))
	o := arrow.Int32Traits.CastFromBytes(offs.Bytes())
	data := memory.NewResizableBuffer(alloc)
	data.Resize(n * len(v))
	d := data.Bytes()
	for i := 0; i <= n; i++ {
		o[i] = int32(i * len(v))
	}
	if len(v) > 0 {
		copy(d, v)
		for filled := len(v); filled < len(d); filled *= 2 {
			copy(d[filled:], d[:filled])
		}
	}
	ad := array.NewData(arrow.BinaryTypes.String, n, []*memory.Buffer{nil, offs, data}, nil, 0, 0)
	offs.Release()
	data.Release()
	arr := array.MakeFromData(ad)
	ad.Release()
	return arr
}

// varView is read access to a utf8 or binary array without nulls: value i is
// data[offs[i]:offs[i+1]].
type varView struct {
	offs []int32
	data []byte
}

func viewVar(a arrow.Array) varView {
	var v varView
	switch a := a.(type) {
	case *array.String:
		v.offs = a.ValueOffsets()
	case *array.Binary:
		v.offs = a.ValueOffsets()
	default:
		return v
	}
	if buf := a.Data().Buffers()[2]; buf != nil {
		v.data = buf.Bytes()
	}
	return v
}

// sliceVar returns values [lo, hi) of a utf8 or binary array without nulls, whose view v is,
// sharing its data buffer (retained) but with offsets of its own that start at zero, from
// alloc: arrow-go's IPC writer would otherwise rebase the offsets of a slice that does not
// start at the array's first value into a new buffer per batch, from an allocator that does
// not recycle. A slice from the first value is an ordinary slice.
func sliceVar(alloc memory.Allocator, a arrow.Array, v varView, lo, hi int) arrow.Array {
	data := a.Data().Buffers()[2]
	if v.offs[lo] == 0 || data == nil {
		return array.NewSlice(a, int64(lo), int64(hi))
	}
	offs := newUninitBuffer(alloc, 4*(hi-lo+1))
	offs.ResizeNoShrink(4 * (hi - lo + 1))
	dst := arrow.Int32Traits.CastFromBytes(offs.Bytes())
	base := v.offs[lo]
	for i, o := range v.offs[lo : hi+1] {
		dst[i] = o - base
	}
	vals := memory.SliceBuffer(data, int(base), int(v.offs[hi]-base))
	ad := array.NewData(a.DataType(), hi-lo, []*memory.Buffer{nil, offs, vals}, nil, 0, 0)
	offs.Release()
	vals.Release()
	out := array.MakeFromData(ad)
	ad.Release()
	return out
}

// reversed returns values [lo, hi) of a utf8 or binary array in reverse order, as a new array.
func reversed(alloc memory.Allocator, a arrow.Array, lo, hi int) arrow.Array {
	if ts, ok := a.(*array.Timestamp); ok {
		src := ts.TimestampValues()
		buf := memory.NewResizableBuffer(alloc)
		buf.Resize(8 * (hi - lo))
		dst := arrow.TimestampTraits.CastFromBytes(buf.Bytes())
		for i := range dst {
			dst[i] = src[hi-1-i]
		}
		data := array.NewData(a.DataType(), hi-lo, []*memory.Buffer{nil, buf}, nil, 0, 0)
		buf.Release()
		out := array.MakeFromData(data)
		data.Release()
		return out
	}
	v := viewVar(a)
	c := newVarColumn(alloc, hi-lo, int(v.offs[hi]-v.offs[lo]))
	for i := hi - 1; i >= lo; i-- {
		c.append(v.data[v.offs[i]:v.offs[i+1]])
	}
	return c.finish(a.DataType())
}

// columnRoom rounds a column buffer's size up to a power of two (from 512 bytes on). A span's
// columns are sized by its bucket (its rows, its chunk's bytes), so with sizes as they come
// the buckets of an analytical read ask the recycling allocator (ledger.Pool, four classes per
// power of two) for buffers of classes no recently freed buffer has, and its free lists, trimmed
// at every garbage collection, hold the wrong ones: measured on bench's BenchmarkAnalytical
// fixture (3M flights, 1,338 archived buckets, serve --analytical under the default 40 MiB
// limit), count(*) WHERE (value->>'delay')::int > 60 took 53 MB a query of fresh heap for span
// columns. Rounded, the spans' columns fall into a few classes that the next buckets reuse:
// 134 → 104 MB of heap allocated a query, 36 → 26 garbage collections, for buffers up to
// twice the bytes while a span is held (the query's ledger counts them).
func columnRoom(n int) int {
	if n <= 512 {
		return n
	}
	return 1 << bits.Len(uint(n-1))
}
