package shred

import (
	"encoding/binary"
	"hash/crc32"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flightsrv/flightsrv/internal/fuzzcount"
)

// FuzzEntry decodes arbitrary bytes as a cache entry, as they are and with a valid header
// sealed around them (so that the body's decoding is reached): decoding must fail with
// errDamaged or return a valid column of the asked type and the range its header states,
// never panic or leak; the header read alone (Range's decodeHeader) must not panic either.
func FuzzEntry(f *testing.F) {
	id := entryID("content", "field")
	for _, typ := range []arrow.DataType{arrow.PrimitiveTypes.Int32, arrow.BinaryTypes.String} {
		var a arrow.Array
		if typ == arrow.PrimitiveTypes.Int32 {
			a = int32Column(f, memory.DefaultAllocator, 20)
		} else {
			b := array.NewStringBuilder(memory.DefaultAllocator)
			b.AppendValues([]string{"ORD", "", "Zürich"}, []bool{true, false, true})
			a = b.NewArray()
			b.Release()
		}
		data, err := encodeEntry(id, a)
		a.Release()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data, typ == arrow.PrimitiveTypes.Int32)
		f.Add(data[headerBytes:], typ == arrow.PrimitiveTypes.Int32)
	}
	f.Add([]byte(entryMagic), true)
	f.Fuzz(func(t *testing.T, data []byte, asInt bool) {
		fuzzcount.Add()
		typ := arrow.DataType(arrow.BinaryTypes.String)
		if asInt {
			typ = arrow.PrimitiveTypes.Int32
		}
		mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
		check := func(in []byte) {
			buf := memory.NewResizableBuffer(mem)
			buf.Resize(len(in))
			copy(buf.Bytes(), in)
			_, hrng, herr := decodeHeader(in, id)
			a, rng, err := decodeEntry(buf, id, typ)
			buf.Release()
			if herr == nil && hrng.Known && !hrng.Empty && hrng.Min > hrng.Max {
				t.Fatalf("header range %+v", hrng)
			}
			if err != nil {
				if err != errDamaged {
					t.Fatalf("error %v", err)
				}
				return
			}
			if !arrow.TypeEqual(a.DataType(), typ) {
				t.Fatalf("type %s", a.DataType())
			}
			if !valid(a) {
				t.Fatal("an invalid column served")
			}
			if herr != nil || rng != hrng || rng.Known != asInt {
				t.Fatalf("range %+v of a served column, header %+v %v", rng, hrng, herr)
			}
			a.Release()
		}
		check(data)
		sealed := make([]byte, headerBytes, headerBytes+len(data))
		copy(sealed, entryMagic)
		copy(sealed[len(entryMagic)+4:], id[:])
		binary.LittleEndian.PutUint64(sealed[bodyLenAt:], uint64(len(data)))
		putRange(sealed, Range{Known: asInt, Empty: asInt})
		sealed = append(sealed, data...)
		binary.LittleEndian.PutUint32(sealed[len(entryMagic):], crc32.Checksum(sealed[len(entryMagic)+4:], castagnoli))
		check(sealed)
		mem.AssertSize(t, 0)
	})
}
