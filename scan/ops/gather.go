package ops

import (
	"context"
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// rowRef is row r of source batch b.
type rowRef struct {
	b, r int32
}

// gather returns a new batch of schema holding the rows refs of srcs (batches of schema's
// types), in order, allocated from mem. Fixed-width, boolean, string and binary columns are
// copied here, value by value with one allocation per buffer (arrow-go's take over chunked
// string columns re-grows its output buffer and measured several times slower); other types
// go through compute's take over the sources' columns.
func gather(ctx context.Context, schema *arrow.Schema, srcs []arrow.RecordBatch, refs []rowRef, mem memory.Allocator) (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, schema.NumFields())
	parts := make([]arrow.Array, len(srcs))
	for c := range cols {
		for i, s := range srcs {
			parts[i] = s.Column(c)
		}
		a, err := gatherColumn(ctx, schema.Field(c).Type, parts, refs, mem)
		if err != nil {
			releaseArrays(cols)
			return nil, fmt.Errorf("ops: gather: %w", err)
		}
		cols[c] = a
	}
	b := array.NewRecordBatch(schema, cols, int64(len(refs)))
	releaseArrays(cols)
	return b, nil
}

func gatherColumn(ctx context.Context, dt arrow.DataType, parts []arrow.Array, refs []rowRef, mem memory.Allocator) (arrow.Array, error) {
	n := len(refs)
	if a := runOf(parts, refs); a != nil {
		return a, nil
	}
	validity, nulls := gatherValidity(parts, refs, mem)
	bufs := []*memory.Buffer{validity}
	release := func() {
		for _, b := range bufs {
			if b != nil {
				b.Release()
			}
		}
	}
	switch id := dt.ID(); {
	case id == arrow.BOOL:
		out := newBuffer(mem, int(bitutil.BytesForBits(int64(n))), true)
		bits := out.Bytes()
		for k, ref := range refs {
			p := parts[ref.b]
			if bitutil.BitIsSet(p.Data().Buffers()[1].Bytes(), p.Data().Offset()+int(ref.r)) {
				bitutil.SetBit(bits, k)
			}
		}
		bufs = append(bufs, out)
	case id == arrow.STRING || id == arrow.BINARY:
		offs, data, err := gatherBinary[int32](parts, refs, mem)
		if err != nil {
			release()
			return nil, err
		}
		bufs = append(bufs, offs, data)
	case id == arrow.LARGE_STRING || id == arrow.LARGE_BINARY:
		offs, data, err := gatherBinary[int64](parts, refs, mem)
		if err != nil {
			release()
			return nil, err
		}
		bufs = append(bufs, offs, data)
	default:
		fw, ok := dt.(arrow.FixedWidthDataType)
		if !ok || fw.BitWidth()%8 != 0 || len(dt.Layout().Buffers) != 2 || id == arrow.DICTIONARY || id == arrow.EXTENSION {
			release()
			return takeColumn(ctx, dt, parts, refs, mem)
		}
		bufs = append(bufs, gatherFixed(fw.BitWidth()/8, parts, refs, mem))
	}
	data := array.NewData(dt, n, bufs, nil, nulls, 0)
	release()
	defer data.Release()
	return array.MakeFromData(data), nil
}

// newBuffer returns a buffer of size bytes from mem, zeroed when zero (bitmaps that are set
// bit by bit; value buffers are overwritten whole).
func newBuffer(mem memory.Allocator, size int, zero bool) *memory.Buffer {
	b := memory.NewResizableBuffer(mem)
	b.Resize(size)
	if zero {
		clear(b.Bytes())
	}
	return b
}

// gatherValidity returns the validity bitmap of the gathered rows and their null count (nil, 0
// when no source has a null).
func gatherValidity(parts []arrow.Array, refs []rowRef, mem memory.Allocator) (*memory.Buffer, int) {
	has := false
	for _, p := range parts {
		if p.NullN() > 0 {
			has = true
			break
		}
	}
	if !has {
		return nil, 0
	}
	out := newBuffer(mem, int(bitutil.BytesForBits(int64(len(refs)))), true)
	bits := out.Bytes()
	nulls := 0
	for k, ref := range refs {
		if parts[ref.b].IsValid(int(ref.r)) {
			bitutil.SetBit(bits, k)
		} else {
			nulls++
		}
	}
	if nulls == 0 {
		out.Release()
		return nil, 0
	}
	return out, nulls
}

// gatherFixed copies values of width bytes.
func gatherFixed(width int, parts []arrow.Array, refs []rowRef, mem memory.Allocator) *memory.Buffer {
	out := newBuffer(mem, width*len(refs), false)
	dst := out.Bytes()
	src := make([][]byte, len(parts))
	for i, p := range parts {
		if p.Len() > 0 {
			src[i] = p.Data().Buffers()[1].Bytes()[p.Data().Offset()*width:]
		}
	}
	switch width {
	case 8:
		d := arrow.Uint64Traits.CastFromBytes(dst)
		s := make([][]uint64, len(src))
		for i := range src {
			s[i] = arrow.Uint64Traits.CastFromBytes(src[i])
		}
		for k, ref := range refs {
			d[k] = s[ref.b][ref.r]
		}
	case 4:
		d := arrow.Uint32Traits.CastFromBytes(dst)
		s := make([][]uint32, len(src))
		for i := range src {
			s[i] = arrow.Uint32Traits.CastFromBytes(src[i])
		}
		for k, ref := range refs {
			d[k] = s[ref.b][ref.r]
		}
	default:
		for k, ref := range refs {
			o := int(ref.r) * width
			copy(dst[k*width:(k+1)*width], src[ref.b][o:o+width])
		}
	}
	return out
}

// gatherBinary copies string or binary values with offsets of type O.
func gatherBinary[O int32 | int64](parts []arrow.Array, refs []rowRef, mem memory.Allocator) (*memory.Buffer, *memory.Buffer, error) {
	offs := make([][]O, len(parts))
	datas := make([][]byte, len(parts))
	for i, p := range parts {
		d := p.Data()
		if d.Len() == 0 {
			continue
		}
		all := castOffsets[O](d.Buffers()[1].Bytes())
		offs[i] = all[d.Offset() : d.Offset()+d.Len()+1]
		if b := d.Buffers()[2]; b != nil {
			datas[i] = b.Bytes()
		}
	}
	var total int64
	for _, ref := range refs {
		o := offs[ref.b]
		total += int64(o[ref.r+1] - o[ref.r])
	}
	var zero O
	if _, is32 := any(zero).(int32); is32 && total > math.MaxInt32 {
		return nil, nil, fmt.Errorf("%d bytes of values overflow 32-bit offsets", total)
	}
	ob := newBuffer(mem, (len(refs)+1)*int(sizeOf[O]()), false)
	db := newBuffer(mem, int(total), false)
	out := castOffsets[O](ob.Bytes())
	data := db.Bytes()
	var at O
	for k, ref := range refs {
		o := offs[ref.b]
		lo, hi := o[ref.r], o[ref.r+1]
		out[k] = at
		at += O(copy(data[at:], datas[ref.b][lo:hi]))
	}
	out[len(refs)] = at
	return ob, db, nil
}

func sizeOf[O int32 | int64]() int64 {
	var z O
	if _, ok := any(z).(int32); ok {
		return 4
	}
	return 8
}

func castOffsets[O int32 | int64](b []byte) []O {
	var z O
	switch any(z).(type) {
	case int32:
		return any(arrow.Int32Traits.CastFromBytes(b)).([]O)
	default:
		return any(arrow.Int64Traits.CastFromBytes(b)).([]O)
	}
}

// takeColumn gathers a column of another type with compute's take over the sources'
// columns (concatenated when arrow-go cannot take from several chunks).
func takeColumn(ctx context.Context, dt arrow.DataType, parts []arrow.Array, refs []rowRef, mem memory.Allocator) (arrow.Array, error) {
	starts := make([]int64, len(parts))
	var total int64
	for i, p := range parts {
		starts[i] = total
		total += int64(p.Len())
	}
	ib := array.NewInt64Builder(mem)
	ib.Reserve(len(refs))
	for _, ref := range refs {
		ib.UnsafeAppend(starts[ref.b] + int64(ref.r))
	}
	idx := ib.NewArray()
	ib.Release()
	defer idx.Release()
	var values compute.Datum
	if len(parts) == 1 {
		values = compute.NewDatumWithoutOwning(parts[0])
	} else {
		one, err := array.Concatenate(parts, mem)
		if err != nil {
			return nil, err
		}
		defer one.Release()
		values = compute.NewDatumWithoutOwning(one)
	}
	if dt.ID() == arrow.INTERVAL_MONTH_DAY_NANO {
		v := values.(*compute.ArrayDatum).MakeArray()
		defer v.Release()
		return takeArray(compute.WithAllocator(ctx, mem), v, idx)
	}
	d, err := callFunction(compute.WithAllocator(ctx, mem), "array_take", compute.DefaultTakeOptions(), values, compute.NewDatumWithoutOwning(idx))
	if err != nil {
		return nil, err
	}
	defer d.Release()
	return toArray(d, len(refs), mem)
}

// runOf returns, when refs are consecutive rows of one part making at least half of it (a
// join's left rows each paired with one right row: a partition-wise join against an
// aggregate, scan/partjoin.go), those rows as a slice of that part, sharing its buffers (which
// the slice keeps alive: at most twice the bytes of a copy); else nil.
func runOf(parts []arrow.Array, refs []rowRef) arrow.Array {
	if len(refs) == 0 || 2*len(refs) < parts[refs[0].b].Len() {
		return nil
	}
	b, r0 := refs[0].b, refs[0].r
	for k, ref := range refs {
		if ref.b != b || ref.r != r0+int32(k) {
			return nil
		}
	}
	return array.NewSlice(parts[b], int64(r0), int64(r0)+int64(len(refs)))
}
