package shred

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// The bucket file's layout (see the package documentation), all integers little-endian:
//
//	0   magic "FSHRED04"
//	8   CRC-32C of bytes 12 up to the end of the directory (the header and the directory)
//	12  the number of columns n (uint32)
//	16  the SHA-256 of the content key
//	48  the file's length (uint64)
//	56  zero (8 bytes)
//	64  the directory: n records of dirRecord bytes, in ascending order of their field's
//	    SHA-256: the SHA-256 of the field key (32), the column's offset in the file (uint64)
//	    and length (uint64), the CRC-32C of the column's bytes (uint32), its range's kind (one
//	    byte: rangeNone, rangeEmpty, rangeInt), zero (3), the least and greatest values
//	    (int64; zero unless the kind is rangeInt)
//	    then the columns in directory order, each starting at the first multiple of 8 bytes
//	    after the one before (the first right after the directory), the file ending with the
//	    last.
//
// A column is the Arrow buffers of one array (the Arrow columnar format's layout, which an
// IPC record batch carries too) behind a fixed 16-byte header: the type code, the row count
// (uint64), whether a validity bitmap follows (one byte), zero padding; then the bitmap
// (ceil(rows/8) bytes, bit i set for a non-null row i) and the values: rows fixed-width
// values, or rows+1 int32 offsets starting at 0 and the bytes they index. Every buffer starts
// at a multiple of 8 bytes of the file (zero padding after the bitmap and the offsets), so
// that Get reads the file into one buffer and serves the columns' buffers as slices of it,
// without a copy. Not an IPC stream: arrow-go's IPC reader trusts the lengths its flatbuffer
// metadata claims and allocates them before checking (FuzzEntry found a sealed entry making
// it allocate hundreds of GiB), where every length here is checked against the bytes present
// before anything is allocated.
const (
	fileMagic = "FSHRED04"
	// header fields' offsets
	headCRCAt  = 8
	countAt    = 12
	contentAt  = 16
	fileLenAt  = contentAt + sha256.Size
	headerSize = 64
	// dirRecord is a directory record's size; its fields' offsets follow.
	dirRecord  = 72
	recOffAt   = sha256.Size
	recLenAt   = recOffAt + 8
	recCRCAt   = recLenAt + 8
	recKindAt  = recCRCAt + 4
	recMinAt   = recKindAt + 4
	recMaxAt   = recMinAt + 8
	bodyHeader = 16 // a column's fixed header: code, rows, validity flag, padding
	// maxColumns bounds the directory (a count past it is damage before anything is
	// allocated for it).
	maxColumns = 1 << 12
)

// Kinds of a column's range (a directory record's kind byte).
const (
	rangeNone  byte = iota // the column's type has no range kept (text, binary, float8)
	rangeEmpty             // no row holds a value (every row null, or no row)
	rangeInt               // Min and Max hold the least and greatest values
)

// Range is what a bucket's file says of one column's values without the column being read
// (Cache.Range): for int32, int64 and timestamp columns (as int64) whether any row holds a
// value and the least and greatest of them. Known is false for other types (text, binary,
// float8: no range is kept, as their order is a collation's or has NaN). Null rows have no
// value.
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

// errDamaged is the error of every file that fails a check: the caller drops the file.
var errDamaged = errors.New("shred: damaged cache file")

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// contentID returns the SHA-256 naming the file of a content key: of the text
// "<len(content)>:<content>", built on the stack for keys of usual lengths.
func contentID(content string) [sha256.Size]byte {
	var stack [256]byte
	b := strconv.AppendInt(stack[:0], int64(len(content)), 10)
	b = append(append(b, ':'), content...)
	return sha256.Sum256(b)
}

// fieldID returns the SHA-256 of a field key, which names its column in a file's directory.
func fieldID(field string) [sha256.Size]byte {
	return sha256.Sum256(unsafeBytes(field))
}

// column is one column of a bucket's file: its field's SHA-256, its bytes (from its 16-byte
// header on), their CRC-32C and its range.
type column struct {
	field [sha256.Size]byte
	body  []byte
	crc   uint32
	rng   Range
}

// dirEntry is a directory record as decodeDirectory returns it: the column's field, place
// (offset and length in the file), CRC-32C and range.
type dirEntry struct {
	field    [sha256.Size]byte
	off, len int
	crc      uint32
	rng      Range
}

// find returns the record of field in dir (sorted by field), false when dir has none.
func find(dir []dirEntry, field [sha256.Size]byte) (dirEntry, bool) {
	i, ok := slices.BinarySearchFunc(dir, field, func(e dirEntry, f [sha256.Size]byte) int { return bytes.Compare(e.field[:], f[:]) })
	if !ok {
		return dirEntry{}, false
	}
	return dir[i], true
}

// encodeFile returns the bytes of the file of content id holding cols (distinct fields, in any
// order): its head (encodeHead) and the columns, each at a multiple of 8 bytes.
func encodeFile(id [sha256.Size]byte, cols []column) []byte {
	head, sorted, size := encodeHead(id, cols)
	out := make([]byte, 0, size)
	out = append(out, head...)
	for _, c := range sorted {
		out = append(pad8(out), c.body...)
	}
	return out
}

// encodeHead returns the header and directory of the file of content id holding cols
// (distinct fields, in any order), the columns in the directory's order (cols is not
// changed), and the file's length: the columns follow the directory in that order, each at
// the first multiple of 8 bytes after the one before, zero bytes between.
func encodeHead(id [sha256.Size]byte, cols []column) ([]byte, []column, int) {
	cols = slices.Clone(cols)
	slices.SortFunc(cols, func(a, b column) int { return bytes.Compare(a.field[:], b.field[:]) })
	n := len(cols)
	head := make([]byte, headerSize+n*dirRecord)
	at := len(head)
	for i, c := range cols {
		at = padded(at)
		rec := head[headerSize+i*dirRecord:]
		copy(rec, c.field[:])
		binary.LittleEndian.PutUint64(rec[recOffAt:], uint64(at))
		binary.LittleEndian.PutUint64(rec[recLenAt:], uint64(len(c.body)))
		binary.LittleEndian.PutUint32(rec[recCRCAt:], c.crc)
		switch r := c.rng; {
		case !r.Known:
			rec[recKindAt] = rangeNone
		case r.Empty:
			rec[recKindAt] = rangeEmpty
		default:
			rec[recKindAt] = rangeInt
			binary.LittleEndian.PutUint64(rec[recMinAt:], uint64(r.Min))
			binary.LittleEndian.PutUint64(rec[recMaxAt:], uint64(r.Max))
		}
		at += len(c.body)
	}
	copy(head, fileMagic)
	binary.LittleEndian.PutUint32(head[countAt:], uint32(n))
	copy(head[contentAt:], id[:])
	binary.LittleEndian.PutUint64(head[fileLenAt:], uint64(at))
	binary.LittleEndian.PutUint32(head[headCRCAt:], crc32.Checksum(head[countAt:], castagnoli))
	return head, cols, at
}

// directoryBytes returns how many bytes the header and directory of a file take, from its
// first headerSize bytes (errDamaged when they are fewer or the count is past maxColumns).
func directoryBytes(head []byte) (int, error) {
	if len(head) < headerSize || string(head[:len(fileMagic)]) != fileMagic {
		return 0, errDamaged
	}
	n := binary.LittleEndian.Uint32(head[countAt:])
	if n > maxColumns {
		return 0, errDamaged
	}
	return headerSize + int(n)*dirRecord, nil
}

// decodeDirectory checks the header and directory at the start of data as those of the file of
// content id, size bytes long (data may hold the header and directory alone: Range reads no
// more), and returns the directory. It checks the magic, the CRC-32C of header and directory,
// the content key's SHA-256, the length, zero padding, the records' order (strictly ascending
// fields) and places (the layout, ending at size), and the range kinds. The columns are not
// checked: Get checks those it serves (decodeColumn). Every failure is errDamaged.
func decodeDirectory(data []byte, id [sha256.Size]byte, size int) ([]dirEntry, error) {
	end, err := directoryBytes(data)
	if err != nil || len(data) < end {
		return nil, errDamaged
	}
	if binary.LittleEndian.Uint32(data[headCRCAt:]) != crc32.Checksum(data[countAt:end], castagnoli) ||
		!bytes.Equal(data[contentAt:fileLenAt], id[:]) || binary.LittleEndian.Uint64(data[fileLenAt:]) != uint64(size) ||
		!zeros(data[fileLenAt+8:headerSize]) {
		return nil, errDamaged
	}
	n := (end - headerSize) / dirRecord
	dir := make([]dirEntry, n)
	at := end
	for i := range dir {
		rec := data[headerSize+i*dirRecord : headerSize+(i+1)*dirRecord]
		e := &dir[i]
		copy(e.field[:], rec)
		if i > 0 && bytes.Compare(dir[i-1].field[:], e.field[:]) >= 0 {
			return nil, errDamaged
		}
		at = padded(at)
		off, ln := binary.LittleEndian.Uint64(rec[recOffAt:]), binary.LittleEndian.Uint64(rec[recLenAt:])
		if off != uint64(at) || ln > uint64(size) || ln < bodyHeader || uint64(at)+ln > uint64(size) || !zeros(rec[recKindAt+1:recMinAt]) {
			return nil, errDamaged
		}
		e.off, e.len, e.crc = at, int(ln), binary.LittleEndian.Uint32(rec[recCRCAt:])
		at += int(ln)
		lo, hi := int64(binary.LittleEndian.Uint64(rec[recMinAt:])), int64(binary.LittleEndian.Uint64(rec[recMaxAt:]))
		switch rec[recKindAt] {
		case rangeNone, rangeEmpty:
			if lo != 0 || hi != 0 {
				return nil, errDamaged
			}
			e.rng = Range{Known: rec[recKindAt] == rangeEmpty, Empty: rec[recKindAt] == rangeEmpty}
		case rangeInt:
			if lo > hi {
				return nil, errDamaged
			}
			e.rng = Range{Known: true, Min: lo, Max: hi}
		default:
			return nil, errDamaged
		}
	}
	if at != size {
		return nil, errDamaged
	}
	return dir, nil
}

// Type codes of a column.
const (
	codeInt32 byte = iota + 1
	codeInt64
	codeFloat64
	codeString
	codeBinary
	codeTimestamp
	codeDecimal128
)

// typeCode returns the column code for typ and its values' width (0: offsets and bytes), false
// for a type the cache does not hold.
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
	case arrow.DECIMAL128:
		return codeDecimal128, 16, true
	}
	return 0, 0, false
}

// Supported reports whether the cache can hold columns of type typ: int32, int64, float64,
// decimal128, utf8 and binary (what JSON fields read column-at-a-time yield, scan/ops'
// jsonfields.go), and timestamps (a payload's event times). A column holds the values, not
// the timestamp's unit or zone nor the decimal's precision and scale: callers name the type
// in the field key.
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

// encodeColumn returns column a (a Supported type) of field as a file's column: its bytes, to
// be placed at a multiple of 8 bytes of the file, their CRC-32C and its range.
func encodeColumn(field string, a arrow.Array) (column, error) {
	code, width, ok := typeCode(a.DataType())
	if !ok {
		return column{}, fmt.Errorf("shred: encode column: type %s not supported", a.DataType())
	}
	n := a.Len()
	out := make([]byte, 0, bodyHeader+32+n*max(width, 5)+n/8)
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
	case *array.Decimal128:
		for _, x := range v.Values() {
			out = binary.LittleEndian.AppendUint64(out, x.LowBits())
			out = binary.LittleEndian.AppendUint64(out, uint64(x.HighBits()))
		}
	case *array.String:
		out = appendVar(out, n, func(i int) []byte { return unsafeBytes(v.Value(i)) })
	case *array.Binary:
		out = appendVar(out, n, v.Value)
	default:
		return column{}, fmt.Errorf("shred: encode column: array %T", a)
	}
	return column{field: fieldID(field), body: out, crc: crc32.Checksum(out, castagnoli), rng: columnRange(a)}, nil
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

// decodeColumn checks the column of directory record e in buf (a whole file that
// decodeDirectory accepted) as a column of type typ and returns it, its buffers slices of buf
// (retained: the caller keeps its own reference; the column holds buf until it is released).
// It checks the column's CRC-32C, its type against the record's range kind (kept for the
// integer types only), every length against the bytes present, offsets, and UTF-8. Every
// failure is errDamaged.
func decodeColumn(buf *memory.Buffer, e dirEntry, typ arrow.DataType) (arrow.Array, error) {
	data := buf.Bytes()
	if e.off < 0 || e.len < bodyHeader || e.off%8 != 0 || e.off+e.len > len(data) {
		return nil, errDamaged
	}
	body := data[e.off : e.off+e.len]
	if crc32.Checksum(body, castagnoli) != e.crc {
		return nil, errDamaged
	}
	code, width, ok := typeCode(typ)
	if intRange := code == codeInt32 || code == codeInt64 || code == codeTimestamp; e.rng.Known != intRange {
		return nil, errDamaged
	}
	if !ok || body[0] != code || body[9] > 1 || !zeros(body[10:bodyHeader]) {
		return nil, errDamaged
	}
	rows := binary.LittleEndian.Uint64(body[1:])
	hasNulls := body[9] == 1
	at := e.off + bodyHeader // the next buffer's offset in data
	stop := e.off + e.len
	// Every row takes at least a bit of the bitmap or a byte of values or offsets: a count
	// past that is damage, checked before any length is computed from it.
	if rows > uint64(stop-at)*8 || rows >= 1<<31 {
		return nil, errDamaged
	}
	n := int(rows)
	type span struct{ off, len int }
	var spans []span
	// take records the buffer of the next k bytes (then skips to a multiple of 8 when pad is
	// set), false when they are not all within the column.
	take := func(k int, pad bool) bool {
		end := at + k
		if pad {
			end = at + padded(k)
		}
		if end > stop || end < at {
			return false
		}
		spans = append(spans, span{at, k})
		at = end
		return true
	}
	nulls := 0
	if hasNulls {
		k := int(bitutil.BytesForBits(int64(n)))
		if !take(k, true) || !zeros(data[at-padded(k)+k:at]) {
			return nil, errDamaged
		}
		nulls = n - bitutil.CountSetBits(data[spans[0].off:], 0, n)
	} else {
		spans = append(spans, span{-1, 0})
	}
	if width > 0 {
		if stop-at != n*width || !take(n*width, false) {
			return nil, errDamaged
		}
	} else {
		if !take(4*(n+1), true) {
			return nil, errDamaged
		}
		offs := data[spans[1].off : spans[1].off+4*(n+1)]
		vals := data[at:stop]
		prev := binary.LittleEndian.Uint32(offs)
		if prev != 0 {
			return nil, errDamaged
		}
		// Each value's own bytes must be UTF-8 too: with the whole valid, a value boundary must
		// not fall inside a character (on a continuation byte). Bytes all below 0x80 are valid
		// UTF-8 with no continuation byte, so only the offsets' order is left to check.
		boundaries := code == codeString && !ascii(vals)
		for i := 1; i <= n; i++ {
			o := binary.LittleEndian.Uint32(offs[4*i:])
			if o < prev {
				return nil, errDamaged
			}
			if boundaries && o < uint32(len(vals)) && vals[o]&0xC0 == 0x80 {
				return nil, errDamaged
			}
			prev = o
		}
		if uint64(prev) != uint64(len(vals)) || (boundaries && !utf8.Valid(vals)) {
			return nil, errDamaged
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
	return a, nil
}

// ascii reports whether every byte of b is below 0x80 (eight at a time).
func ascii(b []byte) bool {
	var or uint64
	for len(b) >= 32 {
		or |= binary.LittleEndian.Uint64(b) | binary.LittleEndian.Uint64(b[8:]) |
			binary.LittleEndian.Uint64(b[16:]) | binary.LittleEndian.Uint64(b[24:])
		b = b[32:]
	}
	for len(b) >= 8 {
		or |= binary.LittleEndian.Uint64(b)
		b = b[8:]
	}
	for _, c := range b {
		or |= uint64(c)
	}
	return or&0x8080808080808080 == 0
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

// crc32Of returns the CRC-32C of b.
func crc32Of(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// columnRows returns the row count a column's header states (body is at least bodyHeader
// bytes: decodeDirectory's check).
func columnRows(body []byte) uint64 { return binary.LittleEndian.Uint64(body[1:]) }
