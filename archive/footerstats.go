package archive

import (
	"bytes"
	"encoding/binary"
	"errors"
)

// errFooterStats is leafStatistics's refusal of bytes that are not a FileMetaData it can walk;
// openFooter reports it as ErrPayloadDecode.
var errFooterStats = errors.New("archive: malformed footer statistics")

// Thrift compact-protocol type codes (the Thrift compact protocol specification, which the
// Parquet format uses for FileMetaData).
const (
	ctStop   = 0
	ctTrue   = 1
	ctFalse  = 2
	ctByte   = 3
	ctI16    = 4
	ctI32    = 5
	ctI64    = 6
	ctDouble = 7
	ctBinary = 8
	ctList   = 9
	ctSet    = 10
	ctMap    = 11
	ctStruct = 12
	ctUUID   = 13
)

// maxFooterDepth bounds the nesting leafStatistics follows when skipping, so that a hostile
// footer cannot exhaust the stack.
const maxFooterDepth = 64

// leafStatistics walks a Parquet footer (a FileMetaData in the Thrift compact protocol) and
// returns one entry per row group: the raw statistics (field 12 of the ColumnMetaData) of
// column chunk leaf, nil when absent. With leaf < 0 only the row groups are counted (the
// entries are nil). Everything else is skipped without being decoded; the min and max
// values are copied out of b. A kept field (or list) of another type is skipped, as
// parquet-go's decoder skips it. A row group with leaf or fewer column chunks, bytes that end
// early or trail, an unknown type or nesting deeper than maxFooterDepth are errFooterStats.
//
// It stands in for decoding the whole footer a second time with parquet-go's reflective
// thrift decoder into mirrors of these structs (parquet.OpenFile parses it into
// format.FileMetaData, which cannot tell an absent null count from zero and has no
// is_*_exact fields): measured by BenchmarkOpenFooter, that decode was about a fifth of a
// footer's open time and 18 of its 114 allocations.
func leafStatistics(b []byte, leaf int) ([]*rawStatistics, error) {
	c := compactCursor{b: b}
	var groups []*rawStatistics
	for id, typ, last := int16(0), byte(0), int16(0); c.field(&id, &typ, &last); {
		n, ok := c.structList(id, typ, 4, 1) // FileMetaData.row_groups
		if !ok {
			continue
		}
		groups = make([]*rawStatistics, 0, n)
		for range n {
			groups = append(groups, c.rowGroup(leaf))
		}
	}
	if c.bad || c.i != len(b) {
		return nil, errFooterStats
	}
	return groups, nil
}

// compactCursor reads Thrift compact-protocol values from b; the first malformed value sets
// bad, after which every read returns zero values.
type compactCursor struct {
	b   []byte
	i   int
	bad bool
}

func (c *compactCursor) byte() byte {
	if c.bad || c.i >= len(c.b) {
		c.bad = true
		return 0
	}
	c.i++
	return c.b[c.i-1]
}

func (c *compactCursor) uvarint() uint64 {
	if c.bad {
		return 0
	}
	v, n := binary.Uvarint(c.b[c.i:])
	if n <= 0 {
		c.bad = true
		return 0
	}
	c.i += n
	return v
}

// zigzag reads a zigzag-encoded varint (i16, i32 and i64 values).
func (c *compactCursor) zigzag() int64 {
	u := c.uvarint()
	return int64(u>>1) ^ -int64(u&1)
}

// bytes returns the next binary value, aliasing b.
func (c *compactCursor) bytes() []byte {
	n := c.uvarint()
	if c.bad || n > uint64(len(c.b)-c.i) {
		c.bad = true
		return nil
	}
	c.i += int(n)
	return c.b[c.i-int(n) : c.i]
}

// structList reads the value of field id of type typ at nesting depth: when it is field want
// holding a list of structs, the list's header, returning its length; anything else
// (another field, another type, a list of another element type, which parquet-go's decoder
// skips too) is skipped and reported !ok.
func (c *compactCursor) structList(id int16, typ byte, want int16, depth int) (n int, ok bool) {
	if id != want || typ != ctList {
		c.skip(typ, depth)
		return 0, false
	}
	h := c.byte()
	size := uint64(h >> 4)
	if size == 15 {
		size = c.uvarint()
	}
	if c.bad || size > uint64(len(c.b)-c.i) { // every element takes at least a byte
		c.bad = true
		return 0, false
	}
	if h&0x0f != ctStruct {
		c.skipItems(h&0x0f, size, depth)
		return 0, false
	}
	return int(size), true
}

// field reads the next field header of a struct into id and typ, last being the previous
// field's id (0 before the first); it returns false at the struct's stop byte or once bad.
// The caller consumes (or skips) the field's value before the next call.
func (c *compactCursor) field(id *int16, typ *byte, last *int16) bool {
	h := c.byte()
	if c.bad || h&0x0f == ctStop { // a stop type ends the struct whatever its delta, as parquet-go's decoder has it
		return false
	}
	if h>>4 == 0 {
		v := c.zigzag()
		if v != int64(int16(v)) {
			c.bad = true
			return false
		}
		*id = int16(v)
	} else {
		*id = *last + int16(h>>4)
	}
	*last, *typ = *id, h&0x0f
	return !c.bad
}

// skip consumes a value of type typ at nesting depth.
func (c *compactCursor) skip(typ byte, depth int) {
	if depth > maxFooterDepth {
		c.bad = true
		return
	}
	switch typ {
	case ctTrue, ctFalse: // a field's boolean is in its header
	case ctByte:
		c.byte()
	case ctI16, ctI32, ctI64:
		c.uvarint()
	case ctDouble:
		c.advance(8)
	case ctUUID:
		c.advance(16)
	case ctBinary:
		c.bytes()
	case ctList, ctSet:
		h := c.byte()
		n := uint64(h >> 4)
		if n == 15 {
			n = c.uvarint()
		}
		c.skipItems(h&0x0f, n, depth)
	case ctMap:
		n := c.uvarint()
		if n == 0 {
			return
		}
		kv := c.byte()
		for i := uint64(0); i < n && !c.bad; i++ {
			c.skipItem(kv>>4, depth)
			c.skipItem(kv&0x0f, depth)
		}
	case ctStruct:
		for id, t, last := int16(0), byte(0), int16(0); c.field(&id, &t, &last); {
			c.skip(t, depth+1)
		}
	default:
		c.bad = true
	}
}

func (c *compactCursor) skipItems(typ byte, n uint64, depth int) {
	if n > uint64(len(c.b)-c.i) { // every element takes at least a byte
		c.bad = true
		return
	}
	for i := uint64(0); i < n && !c.bad; i++ {
		c.skipItem(typ, depth)
	}
}

// skipItem consumes a list, set or map element: booleans there take a byte each.
func (c *compactCursor) skipItem(typ byte, depth int) {
	if typ == ctTrue || typ == ctFalse {
		c.byte()
		return
	}
	c.skip(typ, depth+1)
}

func (c *compactCursor) advance(n int) {
	if c.bad || n > len(c.b)-c.i {
		c.bad = true
		return
	}
	c.i += n
}

// rowGroup reads a RowGroup and returns the statistics of column chunk leaf.
func (c *compactCursor) rowGroup(leaf int) *rawStatistics {
	var st *rawStatistics
	cols := -1
	for id, typ, last := int16(0), byte(0), int16(0); c.field(&id, &typ, &last); {
		n, ok := c.structList(id, typ, 1, 2) // RowGroup.columns
		if !ok {
			continue
		}
		st, cols = nil, n
		for j := 0; j < cols && !c.bad; j++ {
			if j == leaf {
				st = c.columnChunk()
			} else {
				c.skip(ctStruct, 2)
			}
		}
	}
	if leaf >= 0 && cols <= leaf {
		c.bad = true
	}
	return st
}

// columnChunk reads a ColumnChunk and returns the statistics of its meta_data.
func (c *compactCursor) columnChunk() *rawStatistics {
	var st *rawStatistics
	for id, typ, last := int16(0), byte(0), int16(0); c.field(&id, &typ, &last); {
		if id != 3 || typ != ctStruct { // ColumnChunk.meta_data
			c.skip(typ, 3)
			continue
		}
		st = nil
		for id, typ, last := int16(0), byte(0), int16(0); c.field(&id, &typ, &last); {
			if id != 12 || typ != ctStruct { // ColumnMetaData.statistics
				c.skip(typ, 4)
				continue
			}
			st = c.statistics()
		}
	}
	return st
}

// statistics reads the fields of a Statistics struct that rawStatistics keeps.
func (c *compactCursor) statistics() *rawStatistics {
	st := new(rawStatistics)
	for id, typ, last := int16(0), byte(0), int16(0); c.field(&id, &typ, &last); {
		switch {
		case id == 3 && typ == ctI64:
			n := c.zigzag()
			st.NullCount = &n
		case id == 5 && typ == ctBinary:
			st.MaxValue = bytes.Clone(c.bytes())
		case id == 6 && typ == ctBinary:
			st.MinValue = bytes.Clone(c.bytes())
		case (id == 7 || id == 8) && (typ == ctTrue || typ == ctFalse):
			v := typ == ctTrue
			if id == 7 {
				st.IsMaxValueExact = &v
			} else {
				st.IsMinValueExact = &v
			}
		default: // other fields, and kept ones of another type (parquet-go's decoder skips them)
			c.skip(typ, 5)
		}
	}
	return st
}
