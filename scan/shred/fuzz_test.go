package shred

import (
	"encoding/binary"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flightsrv/flightsrv/internal/fuzzcount"
)

// FuzzEntry decodes arbitrary bytes as a bucket's file, as they are and sealed (magic, content
// key, length and the directory's CRC-32C rewritten, each column's CRC-32C recomputed, so
// that the columns' decoding is reached): decoding the directory (from the whole file as Get
// does, and from its first bytes alone as Range does) must fail with errDamaged or return
// records within the file; each record's column, decoded as the asked type, must fail with
// errDamaged or be a valid column of that type; never a panic or a leak.
func FuzzEntry(f *testing.F) {
	id := contentID("content")
	mem := memory.DefaultAllocator
	ints, strs := int32Column(f, mem, 20), stringColumn(f, mem, 7)
	ci, err := encodeColumn("delay", ints)
	if err != nil {
		f.Fatal(err)
	}
	cs, err := encodeColumn("destination", strs)
	if err != nil {
		f.Fatal(err)
	}
	ints.Release()
	strs.Release()
	for _, cols := range [][]column{{ci}, {cs}, {ci, cs}} {
		data := encodeFile(id, cols)
		f.Add(data, true)
		f.Add(data, false)
		f.Add(data[headerSize:], true)
	}
	f.Add([]byte(fileMagic), true)
	f.Fuzz(func(t *testing.T, data []byte, asInt bool) {
		fuzzcount.Add()
		typ := arrow.DataType(arrow.BinaryTypes.String)
		if asInt {
			typ = arrow.PrimitiveTypes.Int32
		}
		mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
		check := func(in []byte) {
			if _, err := decodeDirectory(in[:min(len(in), 4096)], id, len(in)); err != nil && err != errDamaged {
				t.Fatalf("directory alone: %v", err)
			}
			dir, err := decodeDirectory(in, id, len(in))
			if err != nil {
				if err != errDamaged {
					t.Fatalf("error %v", err)
				}
				return
			}
			zeroPadding(in, dir)
			buf := memory.NewResizableBuffer(mem)
			buf.Resize(len(in))
			copy(buf.Bytes(), in)
			defer buf.Release()
			for _, e := range dir {
				if e.off%8 != 0 || e.off+e.len > len(in) || (e.rng.Known && !e.rng.Empty && e.rng.Min > e.rng.Max) {
					t.Fatalf("record %+v of a file of %d bytes", e, len(in))
				}
				a, err := decodeColumn(buf, e, typ)
				if err != nil {
					if err != errDamaged {
						t.Fatalf("error %v", err)
					}
					continue
				}
				if !arrow.TypeEqual(a.DataType(), typ) || !valid(a) || e.rng.Known != asInt {
					t.Fatalf("an invalid column served: %s, range %+v", a.DataType(), e.rng)
				}
				a.Release()
			}
		}
		check(data)
		check(seal(data, id))
		mem.AssertSize(t, 0)
	})
}

// seal returns a copy of data (at least a header's bytes) with the header made to check as
// the file of content id: magic, a column count the bytes can hold, the content key, the
// length, zero padding, each column's CRC-32C (where its record places it within the bytes)
// and the directory's CRC-32C.
func seal(data []byte, id [32]byte) []byte {
	out := append(make([]byte, 0, max(len(data), headerSize)), data...)
	for len(out) < headerSize {
		out = append(out, 0)
	}
	copy(out, fileMagic)
	n := min(binary.LittleEndian.Uint32(out[countAt:]), uint32((len(out)-headerSize)/dirRecord))
	binary.LittleEndian.PutUint32(out[countAt:], n)
	copy(out[contentAt:], id[:])
	binary.LittleEndian.PutUint64(out[fileLenAt:], uint64(len(out)))
	clear(out[fileLenAt+8 : headerSize])
	end := headerSize + int(n)*dirRecord
	for i := range int(n) {
		rec := out[headerSize+i*dirRecord:]
		off, ln := binary.LittleEndian.Uint64(rec[recOffAt:]), binary.LittleEndian.Uint64(rec[recLenAt:])
		if off <= uint64(len(out)) && ln <= uint64(len(out))-off && off >= uint64(end) {
			binary.LittleEndian.PutUint32(rec[recCRCAt:], crc32Of(out[off:off+ln]))
		}
	}
	binary.LittleEndian.PutUint32(out[headCRCAt:], crc32Of(out[countAt:end]))
	return out
}
