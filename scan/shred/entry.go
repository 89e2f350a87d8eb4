package shred

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"unicode/utf8"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// The entry layout (see the package documentation): magic, CRC-32C of the rest, SHA-256 of
// the keys, body length, body. The body is the column's Arrow buffers (the Arrow columnar
// format's layout, which an IPC record batch carries too) behind a fixed header: the type
// code, the row count (uint64), whether a validity bitmap follows (one byte), then the bitmap
// (ceil(rows/8) bytes, bit i set for a non-null row i), and the values: rows fixed-width
// little-endian values, or rows+1 int32 offsets starting at 0 and the bytes they index. Not
// an IPC stream: arrow-go's IPC reader trusts the lengths its flatbuffer metadata claims and
// allocates them before checking (FuzzEntry found a sealed entry making it allocate hundreds
// of GiB), where every length of this body is checked against the bytes present before
// anything is allocated.
const (
	entryMagic  = "FSHRED01"
	headerBytes = len(entryMagic) + 4 + sha256.Size + 8
)

// errDamaged is the error of every entry that fails a check: the caller drops the entry.
var errDamaged = errors.New("shred: damaged cache entry")

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// entryID returns the SHA-256 naming the entry of a content key and a field key.
func entryID(content, field string) [sha256.Size]byte {
	h := sha256.New()
	fmt.Fprintf(h, "%d:%s/%d:%s", len(content), content, len(field), field)
	var id [sha256.Size]byte
	h.Sum(id[:0])
	return id
}

// Type codes of the body.
const (
	codeInt32 byte = iota + 1
	codeInt64
	codeFloat64
	codeString
	codeBinary
)

// typeCode returns the body's code for typ, false for a type entries do not hold.
func typeCode(typ arrow.DataType) (byte, int, bool) {
	switch typ.ID() {
	case arrow.INT32:
		return codeInt32, 4, true
	case arrow.INT64:
		return codeInt64, 8, true
	case arrow.FLOAT64:
		return codeFloat64, 8, true
	case arrow.STRING:
		return codeString, 0, true
	case arrow.BINARY:
		return codeBinary, 0, true
	}
	return 0, 0, false
}

// Supported reports whether entries can hold columns of type typ: int32, int64, float64,
// utf8 and binary (what JSON fields read column-at-a-time yield, scan/ops' jsonfields.go).
func Supported(typ arrow.DataType) bool {
	_, _, ok := typeCode(typ)
	return ok
}

// encodeEntry returns the bytes of the entry id holding column a (a Supported type).
func encodeEntry(id [sha256.Size]byte, a arrow.Array) ([]byte, error) {
	code, width, ok := typeCode(a.DataType())
	if !ok {
		return nil, fmt.Errorf("shred: encode entry: type %s not supported", a.DataType())
	}
	n := a.Len()
	out := make([]byte, headerBytes, headerBytes+16+n*max(width, 5))
	copy(out, entryMagic)
	copy(out[len(entryMagic)+4:], id[:])
	out = append(out, code)
	out = binary.LittleEndian.AppendUint64(out, uint64(n))
	if a.NullN() > 0 {
		out = append(out, 1)
		bm := make([]byte, bitutil.BytesForBits(int64(n)))
		for i := range n {
			if a.IsValid(i) {
				bitutil.SetBit(bm, i)
			}
		}
		out = append(out, bm...)
	} else {
		out = append(out, 0)
	}
	switch v := a.(type) {
	case *array.Int32:
		for _, x := range v.Int32Values() {
			out = binary.LittleEndian.AppendUint32(out, uint32(x))
		}
	case *array.Int64:
		for _, x := range v.Int64Values() {
			out = binary.LittleEndian.AppendUint64(out, uint64(x))
		}
	case *array.Float64:
		for _, x := range v.Float64Values() {
			out = binary.LittleEndian.AppendUint64(out, math.Float64bits(x))
		}
	case *array.String:
		out = appendVar(out, n, func(i int) []byte { return unsafeBytes(v.Value(i)) })
	case *array.Binary:
		out = appendVar(out, n, v.Value)
	default:
		return nil, fmt.Errorf("shred: encode entry: array %T", a)
	}
	binary.LittleEndian.PutUint64(out[len(entryMagic)+4+sha256.Size:], uint64(len(out)-headerBytes))
	binary.LittleEndian.PutUint32(out[len(entryMagic):], crc32.Checksum(out[len(entryMagic)+4:], castagnoli))
	return out, nil
}

// appendVar appends the offsets and bytes of n values (a null row's value is empty).
func appendVar(out []byte, n int, value func(int) []byte) []byte {
	var off uint32
	out = binary.LittleEndian.AppendUint32(out, 0)
	for i := range n {
		off += uint32(len(value(i)))
		out = binary.LittleEndian.AppendUint32(out, off)
	}
	for i := range n {
		out = append(out, value(i)...)
	}
	return out
}

// decodeEntry checks data as the entry id of a column of type typ and returns the column,
// its buffers allocated from mem (owned by the caller). Every failure is errDamaged.
func decodeEntry(data []byte, id [sha256.Size]byte, typ arrow.DataType, mem memory.Allocator) (arrow.Array, error) {
	if len(data) < headerBytes || string(data[:len(entryMagic)]) != entryMagic {
		return nil, errDamaged
	}
	if crc32.Checksum(data[len(entryMagic)+4:], castagnoli) != binary.LittleEndian.Uint32(data[len(entryMagic):]) {
		return nil, errDamaged
	}
	if !bytes.Equal(data[len(entryMagic)+4:len(entryMagic)+4+sha256.Size], id[:]) {
		return nil, errDamaged
	}
	body := data[headerBytes:]
	if binary.LittleEndian.Uint64(data[headerBytes-8:]) != uint64(len(body)) {
		return nil, errDamaged
	}
	code, width, ok := typeCode(typ)
	if !ok || len(body) < 10 || body[0] != code || body[9] > 1 {
		return nil, errDamaged
	}
	rows := binary.LittleEndian.Uint64(body[1:])
	hasNulls := body[9] == 1
	rest := body[10:]
	// Every row takes at least a bit of the bitmap or a byte of values or offsets: a count
	// past that is damage, checked before any length is computed from it.
	if rows > uint64(len(rest))*8 || rows >= 1<<31 {
		return nil, errDamaged
	}
	n := int(rows)
	var bitmap []byte
	if hasNulls {
		k := int(bitutil.BytesForBits(int64(n)))
		if len(rest) < k {
			return nil, errDamaged
		}
		bitmap, rest = rest[:k], rest[k:]
	}
	var valueBufs [][]byte
	if width > 0 {
		if len(rest) != n*width {
			return nil, errDamaged
		}
		valueBufs = [][]byte{rest}
	} else {
		if len(rest) < 4*(n+1) {
			return nil, errDamaged
		}
		offs, vals := rest[:4*(n+1)], rest[4*(n+1):]
		prev := binary.LittleEndian.Uint32(offs)
		if prev != 0 {
			return nil, errDamaged
		}
		for i := 1; i <= n; i++ {
			o := binary.LittleEndian.Uint32(offs[4*i:])
			if o < prev {
				return nil, errDamaged
			}
			prev = o
		}
		if uint64(prev) != uint64(len(vals)) || (code == codeString && !utf8.Valid(vals)) {
			return nil, errDamaged
		}
		valueBufs = [][]byte{offs, vals}
	}
	bufs := make([]*memory.Buffer, 0, 3)
	nulls := 0
	if bitmap != nil {
		bufs = append(bufs, copyBuffer(mem, bitmap))
		nulls = n - bitutil.CountSetBits(bitmap, 0, n)
	} else {
		bufs = append(bufs, nil)
	}
	for _, b := range valueBufs {
		bufs = append(bufs, copyBuffer(mem, b))
	}
	d := array.NewData(typ, n, bufs, nil, nulls, 0)
	for _, b := range bufs {
		if b != nil {
			b.Release()
		}
	}
	a := array.MakeFromData(d)
	d.Release()
	if code == codeString {
		// Each value's own bytes must be UTF-8 too (a boundary inside a character).
		s := a.(*array.String)
		for i := range n {
			if !utf8.ValidString(s.Value(i)) {
				a.Release()
				return nil, errDamaged
			}
		}
	}
	return a, nil
}

// copyBuffer returns a buffer of mem holding a copy of b.
func copyBuffer(mem memory.Allocator, b []byte) *memory.Buffer {
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(len(b))
	copy(buf.Bytes(), b)
	return buf
}

// unsafeBytes returns s's bytes without a copy; they must not be modified.
func unsafeBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// valid checks a decoded column's buffers against its length: offsets and UTF-8 of text and
// binary columns (arrow-go's ValidateFull), the sizes of a fixed-width column's validity and
// value buffers.
func valid(a arrow.Array) bool {
	if v, ok := a.(interface{ ValidateFull() error }); ok {
		if v.ValidateFull() != nil {
			return false
		}
	}
	d := a.Data()
	end := d.Offset() + d.Len()
	bufs := d.Buffers()
	if len(bufs) > 0 && bufs[0] != nil && bufs[0].Len() < (end+7)/8 {
		return false
	}
	if fw, ok := a.DataType().(arrow.FixedWidthDataType); ok {
		if len(bufs) < 2 || (end > 0 && (bufs[1] == nil || bufs[1].Len() < end*fw.BitWidth()/8)) {
			return false
		}
	}
	return true
}
