package aggregate

import (
	"math"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Physical value types of the fixed-width columns: timestamps are int64, date32 int32 and
// booleans are unpacked to uint8 (0 or 1).
type intT interface {
	int8 | int16 | int32 | int64
}

type uintT interface {
	uint8 | uint16 | uint32 | uint64
}

type floatT interface {
	float32 | float64
}

type integerT interface {
	intT | uintT
}

type fixedT interface {
	intT | uintT | floatT
}

// physValues returns the values of the fixed-width (or boolean) array a as a []T of a.Len()
// elements, T being a's physical type. Booleans are unpacked into *scratch (T is uint8). The
// values of null slots are unspecified. The slice aliases a's buffer (or scratch): read only,
// valid while a is.
func physValues[T fixedT](a arrow.Array, scratch *[]byte) []T {
	n := a.Len()
	d := a.Data()
	if a.DataType().ID() == arrow.BOOL {
		s := *scratch
		if cap(s) < n {
			s = make([]byte, n)
		}
		s = s[:n]
		if buf := d.Buffers()[1]; buf != nil {
			bits, off := buf.Bytes(), d.Offset()
			for i := range s {
				s[i] = 0
				if bitutil.BitIsSet(bits, off+i) {
					s[i] = 1
				}
			}
		} else {
			clear(s)
		}
		*scratch = s
		if n == 0 {
			return nil
		}
		return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(s))), n)
	}
	buf := d.Buffers()[1]
	if buf == nil || n == 0 {
		return nil
	}
	raw := buf.Bytes()
	var z T
	all := unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(raw))), len(raw)/int(unsafe.Sizeof(z)))
	return all[d.Offset() : d.Offset()+n]
}

func isSigned[T fixedT]() bool {
	var z T
	return z-1 < 0
}

// canonNaN is the one bit pattern all NaNs hash as.
const canonNaN = 0x7ff8000000000000

// normKeys writes into out (len(vals)) a uint64 per value such that two values are equal in
// SQL's sense (GROUP BY, DISTINCT) exactly when their keys are: integers sign- or
// zero-extended, floats as their float64 bits with every NaN one pattern and -0 folded into 0.
// Only the low byte-width bytes of a key are significant.
func normKeys[T fixedT](vals []T, out []uint64) {
	out = out[:len(vals)]
	switch v := any(vals).(type) {
	case []float64:
		for i, x := range v {
			out[i] = normF64(x)
		}
	case []float32:
		for i, x := range v {
			out[i] = normF64(float64(x))
		}
	default:
		if isSigned[T]() {
			for i, x := range vals {
				out[i] = uint64(int64(x))
			}
		} else {
			for i, x := range vals {
				out[i] = uint64(x)
			}
		}
	}
}

func normF64(x float64) uint64 {
	if x != x {
		return canonNaN
	}
	if x == 0 {
		return 0
	}
	return math.Float64bits(x)
}

// columnKeys is normKeys over a column of any supported fixed-width type.
func columnKeys(a arrow.Array, out []uint64, scratch *[]byte) {
	switch a.DataType().ID() {
	case arrow.INT8:
		normKeys(physValues[int8](a, scratch), out)
	case arrow.INT16:
		normKeys(physValues[int16](a, scratch), out)
	case arrow.INT32, arrow.DATE32:
		normKeys(physValues[int32](a, scratch), out)
	case arrow.INT64, arrow.TIMESTAMP, arrow.TIME64:
		normKeys(physValues[int64](a, scratch), out)
	case arrow.UINT8, arrow.BOOL:
		normKeys(physValues[uint8](a, scratch), out)
	case arrow.UINT16:
		normKeys(physValues[uint16](a, scratch), out)
	case arrow.UINT32:
		normKeys(physValues[uint32](a, scratch), out)
	case arrow.UINT64:
		normKeys(physValues[uint64](a, scratch), out)
	case arrow.FLOAT32:
		normKeys(physValues[float32](a, scratch), out)
	case arrow.FLOAT64:
		normKeys(physValues[float64](a, scratch), out)
	default:
		panic("aggregate: columnKeys of " + a.DataType().String())
	}
}

// keyWidth is the number of significant bytes of a normKeys key of type dt (0: variable
// width); decimal128's 16 bytes are its value's.
func keyWidth(dt arrow.DataType) int {
	switch dt.ID() {
	case arrow.INT8, arrow.UINT8, arrow.BOOL:
		return 1
	case arrow.INT16, arrow.UINT16:
		return 2
	case arrow.INT32, arrow.UINT32, arrow.DATE32:
		return 4
	case arrow.INT64, arrow.UINT64, arrow.TIMESTAMP, arrow.TIME64, arrow.FLOAT32, arrow.FLOAT64:
		return 8
	case arrow.DECIMAL128:
		return 16 // encoded whole by lookupBytes, never normKeys
	case arrow.INTERVAL_MONTH_DAY_NANO:
		return 16 // its span, encoded by lookupBytes (intervalSpanKey), never normKeys
	}
	return 0
}

// byteCol is a read-only view of a utf8, large_utf8, binary or large_binary column: absolute
// offsets (one of o32, o64) into data.
type byteCol struct {
	o32  []int32
	o64  []int64
	data []byte
}

func bytesView(a arrow.Array) byteCol {
	var c byteCol
	if b := a.Data().Buffers()[2]; b != nil {
		c.data = b.Bytes()
	}
	switch a := a.(type) {
	case *array.String:
		c.o32 = a.ValueOffsets()
	case *array.Binary:
		c.o32 = a.ValueOffsets()
	case *array.LargeString:
		c.o64 = a.ValueOffsets()
	case *array.LargeBinary:
		c.o64 = a.ValueOffsets()
	default:
		panic("aggregate: bytesView of " + a.DataType().String())
	}
	return c
}

func (c byteCol) value(i int) []byte {
	if c.o32 != nil {
		return c.data[c.o32[i]:c.o32[i+1]]
	}
	return c.data[c.o64[i]:c.o64[i+1]]
}

// validMask returns, in buf, which rows of a are valid, or nil when all are.
func validMask(a arrow.Array, buf []bool) []bool {
	if a.NullN() == 0 {
		return nil
	}
	buf = sized(buf, a.Len())
	bm, off := validity(a)
	expandBits(bm, off, buf)
	return buf
}

// rowMask returns, in buf, which rows a measure aggregates: those where filter (a boolean
// array, or nil) is true and arg (or nil) is not null. It returns nil when every row counts.
func rowMask(arg arrow.Array, filter *array.Boolean, buf []bool) []bool {
	argNulls := arg != nil && arg.NullN() > 0
	if filter == nil && !argNulls {
		return nil
	}
	var n int
	if arg != nil {
		n = arg.Len()
	} else {
		n = filter.Len()
	}
	buf = sized(buf, n)
	if filter != nil {
		d := filter.Data()
		if vals := d.Buffers()[1]; vals != nil {
			expandBits(vals.Bytes(), d.Offset(), buf)
		} else {
			clear(buf)
		}
		if bm, off := validity(filter); bm != nil {
			andBits(bm, off, buf)
		}
		if argNulls {
			bm, off := validity(arg)
			andBits(bm, off, buf)
		}
		return buf
	}
	bm, off := validity(arg)
	expandBits(bm, off, buf)
	return buf
}

// bitWords[b] holds the 8 bits of b as 8 bools (one per byte, little-endian).
var bitWords = func() (t [256]uint64) {
	for b := range 256 {
		for j := range 8 {
			if b&(1<<j) != 0 {
				t[b] |= 1 << (8 * j)
			}
		}
	}
	return t
}()

// expandBits sets out[i] to bit off+i of bits.
func expandBits(bits []byte, off int, out []bool) {
	i := 0
	for ; i < len(out) && (off+i)%8 != 0; i++ {
		out[i] = bitutil.BitIsSet(bits, off+i)
	}
	for ; i+8 <= len(out); i += 8 {
		*(*uint64)(unsafe.Pointer(&out[i])) = bitWords[bits[(off+i)/8]]
	}
	for ; i < len(out); i++ {
		out[i] = bitutil.BitIsSet(bits, off+i)
	}
}

// andBits clears out[i] where bit off+i of bits is clear.
func andBits(bits []byte, off int, out []bool) {
	i := 0
	for ; i < len(out) && (off+i)%8 != 0; i++ {
		out[i] = out[i] && bitutil.BitIsSet(bits, off+i)
	}
	for ; i+8 <= len(out); i += 8 {
		*(*uint64)(unsafe.Pointer(&out[i])) &= bitWords[bits[(off+i)/8]]
	}
	for ; i < len(out); i++ {
		out[i] = out[i] && bitutil.BitIsSet(bits, off+i)
	}
}

func sized[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// grown returns s extended with zero values to length n (s unchanged when already longer).
func grown[T any](s []T, n int) []T {
	if len(s) >= n {
		return s
	}
	old := len(s)
	if cap(s) < n {
		c := 2 * cap(s)
		if c < n {
			c = n
		}
		if c < 8 {
			c = 8
		}
		ns := make([]T, n, c)
		copy(ns, s)
		return ns
	}
	s = s[:n]
	clear(s[old:])
	return s
}

func sizeOf[T any]() int64 {
	var z T
	return int64(unsafe.Sizeof(z))
}

// nullBitmap returns a validity bitmap for valid (nil: all valid) allocated from mem, and the
// null count; nil when there is no null.
func nullBitmap(mem memory.Allocator, valid []bool) (*memory.Buffer, int) {
	nulls := 0
	for _, v := range valid {
		if !v {
			nulls++
		}
	}
	if nulls == 0 {
		return nil, 0
	}
	b := memory.NewResizableBuffer(mem)
	b.Resize(int(bitutil.BytesForBits(int64(len(valid)))))
	bits := b.Bytes()
	for i, v := range valid {
		bitutil.SetBitTo(bits, i, v)
	}
	return b, nulls
}

// makeFixed builds an array of type dt (fixed-width, physical type T; BOOL with T uint8) from
// vals, null where valid (nil: none null) is false, allocating from mem. The caller releases
// it.
func makeFixed[T fixedT](mem memory.Allocator, dt arrow.DataType, vals []T, valid []bool) arrow.Array {
	n := len(vals)
	nb, nulls := nullBitmap(mem, valid)
	data := memory.NewResizableBuffer(mem)
	if dt.ID() == arrow.BOOL {
		data.Resize(int(bitutil.BytesForBits(int64(n))))
		bits := data.Bytes()
		for i, v := range vals {
			bitutil.SetBitTo(bits, i, v != 0)
		}
	} else {
		size := int(sizeOf[T]())
		data.Resize(n * size)
		if n > 0 {
			copy(data.Bytes(), unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(vals))), n*size))
		}
	}
	d := array.NewData(dt, n, []*memory.Buffer{nb, data}, nil, nulls, 0)
	a := array.MakeFromData(d)
	d.Release()
	data.Release()
	if nb != nil {
		nb.Release()
	}
	return a
}

// makeBytes builds an array of type dt (utf8, large_utf8, binary, large_binary) from vals,
// null where valid (nil: none null) is false, allocating from mem. The caller releases it.
func makeBytes[S string | []byte](mem memory.Allocator, dt arrow.DataType, vals []S, valid []bool) arrow.Array {
	b := array.NewBuilder(mem, dt)
	defer b.Release()
	bb := binaryBuilder(b)
	total := 0
	for _, v := range vals {
		total += len(v)
	}
	bb.Reserve(len(vals))
	bb.ReserveData(total)
	switch vals := any(vals).(type) {
	case [][]byte:
		for i, v := range vals {
			if valid != nil && !valid[i] {
				bb.AppendNull()
				continue
			}
			bb.Append(v)
		}
	case []string:
		for i, v := range vals {
			if valid != nil && !valid[i] {
				bb.AppendNull()
				continue
			}
			bb.AppendString(v)
		}
	}
	return b.NewArray()
}

// int128 is an exact two's-complement 128-bit integer sum.
type int128 struct {
	lo uint64
	hi int64
}

// int64 returns s as an int64 and whether it fits.
func (s int128) int64() (int64, bool) {
	v := int64(s.lo)
	return v, s.hi == v>>63
}

func (s int128) float64() float64 {
	if v, ok := s.int64(); ok {
		return float64(v)
	}
	return float64(s.hi)*(1<<64) + float64(s.lo)
}
