package shred

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"strconv"
	"unicode/utf8"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// The entry layout (see the package documentation): magic, CRC-32C of the rest, SHA-256 of
// the keys, body length, the CRC-32C of the header (the keys' SHA-256, the body length and
// the range, so that Range can trust a header read alone), the column's range (rangeAt: a
// kind byte, zero padding, then the least and greatest values as little-endian int64s, zero
// when the kind has none), zero padding to 96 bytes, body. The body is the column's Arrow
// buffers (the Arrow columnar format's layout, which an IPC record batch carries too) behind a
// fixed 16-byte header: the type code, the row count (uint64), whether a validity bitmap
// follows (one byte), zero padding; then the bitmap (ceil(rows/8) bytes, bit i set for a
// non-null row i) and the values: rows fixed-width little-endian values, or rows+1 int32
// offsets starting at 0 and the bytes they index. Every buffer starts at a multiple of 8 bytes
// from the start of the file (zero padding after the bitmap and the offsets), so that Get
// reads the file into one buffer and serves the column's buffers as slices of it, without a
// copy. Not an IPC stream: arrow-go's IPC reader trusts the lengths its flatbuffer metadata
// claims and allocates them before checking (FuzzEntry found a sealed entry making it allocate
// hundreds of GiB), where every length of this body is checked against the bytes present
// before anything is allocated.
const (
	entryMagic  = "FSHRED03"
	bodyLenAt   = len(entryMagic) + 4 + sha256.Size
	headCRCAt   = bodyLenAt + 8
	rangeAt     = headCRCAt + 4
	headerBytes = 96
	// bodyHeader is the body's fixed header: code, rows, validity flag, padding.
	bodyHeader = 16
)

// Kinds of an entry's range (the byte at rangeAt).
const (
	rangeNone  byte = iota // the column's type has no range kept (text, binary, float8)
	rangeEmpty             // no row holds a value (every row null, or no row)
	rangeInt               // Min and Max hold the least and greatest values
)

// Range is what an entry says of its column's values without its body being read (Cache.Range):
// for int32, int64 and timestamp columns (as int64) whether any row holds a value and the
// least and greatest of them. Known is false for other types (text, binary, float8: no range
// is kept, as their order is a collation's or has NaN). Null rows have no value.
type Range struct {
	Known bool
	// Empty is set when no row holds a value (then Min and Max are 0).
	Empty    bool
	Min, Max int64
}

// columnRange returns the range of column a.
func columnRange(a arrow.Array) Range {
	var vals func(i int) int64
	switch v := a.(type) {
	case *array.Int32:
		vals = func(i int) int64 { return int64(v.Value(i)) }
	case *array.Int64:
		vals = v.Value
	case *array.Timestamp:
		vals = func(i int) int64 { return int64(v.Value(i)) }
	default:
		return Range{}
	}
	r := Range{Known: true, Empty: true}
	for i := range a.Len() {
		if a.IsNull(i) {
			continue
		}
		x := vals(i)
		if r.Empty {
			r.Empty, r.Min, r.Max = false, x, x
			continue
		}
		r.Min, r.Max = min(r.Min, x), max(r.Max, x)
	}
	return r
}

// putRange writes r into header hdr (its first headerBytes bytes) and seals the header's CRC.
func putRange(hdr []byte, r Range) {
	switch {
	case !r.Known:
		hdr[rangeAt] = rangeNone
	case r.Empty:
		hdr[rangeAt] = rangeEmpty
	default:
		hdr[rangeAt] = rangeInt
		binary.LittleEndian.PutUint64(hdr[rangeAt+8:], uint64(r.Min))
		binary.LittleEndian.PutUint64(hdr[rangeAt+16:], uint64(r.Max))
	}
	binary.LittleEndian.PutUint32(hdr[headCRCAt:], headCRC(hdr))
}

// headCRC returns the CRC-32C of the header's keys, body length and range.
func headCRC(hdr []byte) uint32 {
	c := crc32.Update(0, castagnoli, hdr[len(entryMagic)+4:headCRCAt])
	return crc32.Update(c, castagnoli, hdr[rangeAt:headerBytes])
}

// decodeHeader checks the first headerBytes bytes of an entry as the header of entry id
// (magic, keys, the header's own CRC, the range's kind, zero padding) and returns the body
// length and the range it states. Every failure is errDamaged. The body is not checked: Get
// checks the whole entry (decodeEntry), Range trusts a header that checks.
func decodeHeader(hdr []byte, id [sha256.Size]byte) (uint64, Range, error) {
	if len(hdr) < headerBytes || string(hdr[:len(entryMagic)]) != entryMagic ||
		!bytes.Equal(hdr[len(entryMagic)+4:bodyLenAt], id[:]) ||
		binary.LittleEndian.Uint32(hdr[headCRCAt:]) != headCRC(hdr) {
		return 0, Range{}, errDamaged
	}
	var r Range
	lo, hi := int64(binary.LittleEndian.Uint64(hdr[rangeAt+8:])), int64(binary.LittleEndian.Uint64(hdr[rangeAt+16:]))
	if !zeros(hdr[rangeAt+1:rangeAt+8]) || !zeros(hdr[rangeAt+24:headerBytes]) {
		return 0, Range{}, errDamaged
	}
	switch hdr[rangeAt] {
	case rangeNone, rangeEmpty:
		if lo != 0 || hi != 0 {
			return 0, Range{}, errDamaged
		}
		r = Range{Known: hdr[rangeAt] == rangeEmpty, Empty: hdr[rangeAt] == rangeEmpty}
	case rangeInt:
		if lo > hi {
			return 0, Range{}, errDamaged
		}
		r = Range{Known: true, Min: lo, Max: hi}
	default:
		return 0, Range{}, errDamaged
	}
	return binary.LittleEndian.Uint64(hdr[bodyLenAt:]), r, nil
}

// errDamaged is the error of every entry that fails a check: the caller drops the entry.
var errDamaged = errors.New("shred: damaged cache entry")

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// entryID returns the SHA-256 naming the entry of a content key and a field key: of the text
// "<len(content)>:<content>/<len(field)>:<field>", built on the stack for keys of usual
// lengths (every warm read of a bucket names its entries: scan's shredded.go).
func entryID(content, field string) [sha256.Size]byte {
	var stack [256]byte
	b := strconv.AppendInt(stack[:0], int64(len(content)), 10)
	b = append(append(b, ':'), content...)
	b = strconv.AppendInt(append(b, '/'), int64(len(field)), 10)
	b = append(append(b, ':'), field...)
	return sha256.Sum256(b)
}

// Type codes of the body.
const (
	codeInt32 byte = iota + 1
	codeInt64
	codeFloat64
	codeString
	codeBinary
	codeTimestamp
)

// typeCode returns the body's code for typ and its values' width (0: offsets and bytes), false
// for a type entries do not hold.
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
	case arrow.TIMESTAMP:
		return codeTimestamp, 8, true
	}
	return 0, 0, false
}

// Supported reports whether entries can hold columns of type typ: int32, int64, float64,
// utf8 and binary (what JSON fields read column-at-a-time yield, scan/ops' jsonfields.go),
// and timestamps (a payload's event times). An entry holds the values, not the timestamp's
// unit or zone: callers name the type in the field key.
func Supported(typ arrow.DataType) bool {
	_, _, ok := typeCode(typ)
	return ok
}

// pad8 appends zero bytes to out up to a multiple of 8 bytes.
func pad8(out []byte) []byte {
	for len(out)%8 != 0 {
		out = append(out, 0)
	}
	return out
}

// encodeEntry returns the bytes of the entry id holding column a (a Supported type).
func encodeEntry(id [sha256.Size]byte, a arrow.Array) ([]byte, error) {
	code, width, ok := typeCode(a.DataType())
	if !ok {
		return nil, fmt.Errorf("shred: encode entry: type %s not supported", a.DataType())
	}
	n := a.Len()
	out := make([]byte, headerBytes, headerBytes+bodyHeader+32+n*max(width, 5)+n/8)
	copy(out, entryMagic)
	copy(out[len(entryMagic)+4:], id[:])
	out = append(out, code)
	out = binary.LittleEndian.AppendUint64(out, uint64(n))
	if a.NullN() > 0 {
		out = append(out, 1)
		out = pad8(out)
		bm := make([]byte, bitutil.BytesForBits(int64(n)))
		for i := range n {
			if a.IsValid(i) {
				bitutil.SetBit(bm, i)
			}
		}
		out = pad8(append(out, bm...))
	} else {
		out = pad8(append(out, 0))
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
	case *array.Timestamp:
		for _, x := range v.TimestampValues() {
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
	binary.LittleEndian.PutUint64(out[bodyLenAt:], uint64(len(out)-headerBytes))
	putRange(out, columnRange(a))
	binary.LittleEndian.PutUint32(out[len(entryMagic):], crc32.Checksum(out[len(entryMagic)+4:], castagnoli))
	return out, nil
}

// appendVar appends the offsets (padded to 8 bytes) and bytes of n values (a null row's value
// is empty).
func appendVar(out []byte, n int, value func(int) []byte) []byte {
	var off uint32
	out = binary.LittleEndian.AppendUint32(out, 0)
	for i := range n {
		off += uint32(len(value(i)))
		out = binary.LittleEndian.AppendUint32(out, off)
	}
	out = pad8(out)
	for i := range n {
		out = append(out, value(i)...)
	}
	return out
}

// zeros reports whether b holds only zero bytes.
func zeros(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// padded returns n rounded up to a multiple of 8.
func padded(n int) int { return (n + 7) &^ 7 }

// decodeEntry checks the bytes of buf as the entry id of a column of type typ and returns the
// column, whose buffers are slices of buf (retained: the caller keeps its own reference and
// releases it; the column holds buf until it is released), and the range its header states.
// Every failure is errDamaged.
func decodeEntry(buf *memory.Buffer, id [sha256.Size]byte, typ arrow.DataType) (arrow.Array, Range, error) {
	data := buf.Bytes()
	if len(data) < headerBytes || string(data[:len(entryMagic)]) != entryMagic {
		return nil, Range{}, errDamaged
	}
	if crc32.Checksum(data[len(entryMagic)+4:], castagnoli) != binary.LittleEndian.Uint32(data[len(entryMagic):]) {
		return nil, Range{}, errDamaged
	}
	bodyLen, rng, err := decodeHeader(data, id)
	body := data[headerBytes:]
	if err != nil || bodyLen != uint64(len(body)) {
		return nil, Range{}, errDamaged
	}
	code, width, ok := typeCode(typ)
	// The range's kind follows the type: kept for the integer types only.
	if intRange := code == codeInt32 || code == codeInt64 || code == codeTimestamp; rng.Known != intRange {
		return nil, Range{}, errDamaged
	}
	if !ok || len(body) < bodyHeader || body[0] != code || body[9] > 1 || !zeros(body[10:bodyHeader]) {
		return nil, Range{}, errDamaged
	}
	rows := binary.LittleEndian.Uint64(body[1:])
	hasNulls := body[9] == 1
	at := headerBytes + bodyHeader // the next buffer's offset in data
	rest := len(data) - at
	// Every row takes at least a bit of the bitmap or a byte of values or offsets: a count
	// past that is damage, checked before any length is computed from it.
	if rows > uint64(rest)*8 || rows >= 1<<31 {
		return nil, Range{}, errDamaged
	}
	n := int(rows)
	// take returns the buffer of the next k bytes (then skips to a multiple of 8), false when
	// they are not all present.
	type span struct{ off, len int }
	var spans []span
	take := func(k int, pad bool) bool {
		end := at + k
		if pad {
			end = at + padded(k)
		}
		if end > len(data) || end < at {
			return false
		}
		spans = append(spans, span{at, k})
		at = end
		return true
	}
	nulls := 0
	if hasNulls {
		k := int(bitutil.BytesForBits(int64(n)))
		if !take(k, true) {
			return nil, Range{}, errDamaged
		}
		nulls = n - bitutil.CountSetBits(data[spans[0].off:], 0, n)
	} else {
		spans = append(spans, span{-1, 0})
	}
	if width > 0 {
		if len(data)-at != n*width || !take(n*width, false) {
			return nil, Range{}, errDamaged
		}
	} else {
		if !take(4*(n+1), true) {
			return nil, Range{}, errDamaged
		}
		offs := data[spans[1].off : spans[1].off+4*(n+1)]
		vals := data[at:]
		prev := binary.LittleEndian.Uint32(offs)
		if prev != 0 {
			return nil, Range{}, errDamaged
		}
		for i := 1; i <= n; i++ {
			o := binary.LittleEndian.Uint32(offs[4*i:])
			if o < prev {
				return nil, Range{}, errDamaged
			}
			// Each value's own bytes must be UTF-8 too: with the whole valid, a value boundary
			// must not fall inside a character (on a continuation byte).
			if code == codeString && o < uint32(len(vals)) && vals[o]&0xC0 == 0x80 {
				return nil, Range{}, errDamaged
			}
			prev = o
		}
		if uint64(prev) != uint64(len(vals)) || (code == codeString && !utf8.Valid(vals)) {
			return nil, Range{}, errDamaged
		}
		take(len(vals), false)
	}
	bufs := make([]*memory.Buffer, len(spans))
	for i, s := range spans {
		if s.off >= 0 {
			bufs[i] = memory.SliceBuffer(buf, s.off, s.len)
		}
	}
	d := array.NewData(typ, n, bufs, nil, nulls, 0)
	for _, b := range bufs {
		if b != nil {
			b.Release()
		}
	}
	a := array.MakeFromData(d)
	d.Release()
	return a, rng, nil
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
