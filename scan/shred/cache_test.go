package shred

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

func int32Column(t testing.TB, mem memory.Allocator, n int) arrow.Array {
	b := array.NewInt32Builder(mem)
	defer b.Release()
	for i := range n {
		if i%7 == 3 {
			b.AppendNull()
			continue
		}
		b.Append(int32(i*31 - 500))
	}
	return b.NewArray()
}

func entryFiles(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*"+entrySuffix))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestCacheRoundTrip writes an entry and reads it back equal, from this Cache and from a new
// one over the same directory; another field or content key misses.
func TestCacheRoundTrip(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	dir := t.TempDir()
	c, err := Open(dir, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	col := int32Column(t, mem, 1000)
	defer col.Release()
	if err := c.Put("m1", "delay::int4", col); err != nil {
		t.Fatal(err)
	}
	for _, cc := range []*Cache{c, mustOpen(t, dir, 1<<20)} {
		got, ok := cc.Get("m1", "delay::int4", arrow.PrimitiveTypes.Int32, mem)
		if !ok {
			t.Fatal("miss after Put")
		}
		if !array.Equal(got, col) {
			t.Fatalf("entry differs: %v", got)
		}
		got.Release()
		if _, ok := cc.Get("m1", "delay::int8", arrow.PrimitiveTypes.Int64, mem); ok {
			t.Fatal("another field hit")
		}
		if _, ok := cc.Get("m2", "delay::int4", arrow.PrimitiveTypes.Int32, mem); ok {
			t.Fatal("another content hit")
		}
	}
	// The wrong type for the entry is damage, never a reinterpretation.
	if _, ok := c.Get("m1", "delay::int4", arrow.PrimitiveTypes.Int64, mem); ok {
		t.Fatal("served as another type")
	}
	if s := c.Stats(); s.Damaged != 1 || s.Entries != 0 {
		t.Fatalf("stats %+v", s)
	}
}

func mustOpen(t *testing.T, dir string, n int64) *Cache {
	t.Helper()
	c, err := Open(dir, n)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestCacheDamaged changes one byte of an entry at several places: every such entry is
// removed and misses, never served.
func TestCacheDamaged(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	dir := t.TempDir()
	c := mustOpen(t, dir, 1<<20)
	col := int32Column(t, mem, 300)
	defer col.Release()
	if err := c.Put("m", "f", col); err != nil {
		t.Fatal(err)
	}
	files := entryFiles(t, dir)
	if len(files) != 1 {
		t.Fatalf("files %v", files)
	}
	good, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, at := range []int{0, 9, 20, headerBytes - 1, headerBytes + 10, len(good) / 2, len(good) - 1} {
		bad := append([]byte(nil), good...)
		bad[at] ^= 0x40
		if err := os.WriteFile(files[0], bad, 0o600); err != nil {
			t.Fatal(err)
		}
		cc := mustOpen(t, dir, 1<<20)
		if got, ok := cc.Get("m", "f", arrow.PrimitiveTypes.Int32, mem); ok {
			got.Release()
			t.Fatalf("byte %d changed: served", at)
		}
		if _, err := os.Stat(files[0]); !os.IsNotExist(err) {
			t.Fatalf("byte %d changed: entry not removed (%v)", at, err)
		}
		if s := cc.Stats(); s.Damaged != 1 {
			t.Fatalf("byte %d: stats %+v", at, s)
		}
	}
	// A truncated entry (a torn write) is damaged too.
	if err := os.WriteFile(files[0], good[:len(good)-3], 0o600); err != nil {
		t.Fatal(err)
	}
	if _, ok := mustOpen(t, dir, 1<<20).Get("m", "f", arrow.PrimitiveTypes.Int32, mem); ok {
		t.Fatal("truncated entry served")
	}
}

// TestCacheBound keeps the directory under its bound, evicting least recently used first,
// and removes leftover temporary files at Open.
func TestCacheBound(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	dir := t.TempDir()
	col := int32Column(t, mem, 400)
	defer col.Release()
	probe := mustOpen(t, t.TempDir(), 1<<20)
	if err := probe.Put("x", "f", col); err != nil {
		t.Fatal(err)
	}
	size := probe.Stats().Bytes
	// Room for three entries; MaxEntryBytes (an eighth) must admit one.
	c := mustOpen(t, dir, max(3*size, 8*size))
	bound := max(3*size, 8*size)
	keys := []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"}
	for i, k := range keys {
		if err := c.Put(k, "f", col); err != nil {
			t.Fatal(err)
		}
		if i == 2 {
			// a is used again: b is now the least recently used.
			if got, ok := c.Get("a", "f", arrow.PrimitiveTypes.Int32, mem); ok {
				got.Release()
			} else {
				t.Fatal("a missing")
			}
		}
	}
	s := c.Stats()
	if s.Bytes > bound || s.Evicted == 0 || int64(len(entryFiles(t, dir))) != s.Entries {
		t.Fatalf("stats %+v, bound %d, files %d", s, bound, len(entryFiles(t, dir)))
	}
	if got, ok := c.Get("b", "f", arrow.PrimitiveTypes.Int32, mem); ok {
		got.Release()
		t.Fatal("b kept over more recent entries")
	}
	if got, ok := c.Get("j", "f", arrow.PrimitiveTypes.Int32, mem); !ok {
		t.Fatal("latest entry evicted")
	} else {
		got.Release()
	}
	// A cache too small for any entry writes none.
	tiny := mustOpen(t, t.TempDir(), 16)
	if err := tiny.Put("a", "f", col); err != nil {
		t.Fatal(err)
	}
	if s := tiny.Stats(); s.Entries != 0 || s.Writes != 0 {
		t.Fatalf("tiny stats %+v", s)
	}
	// Leftovers of a crash go at Open; a smaller bound evicts at Open.
	if err := os.WriteFile(filepath.Join(dir, tmpPrefix+"123"), []byte("half"), 0o600); err != nil {
		t.Fatal(err)
	}
	c2 := mustOpen(t, dir, size)
	if _, err := os.Stat(filepath.Join(dir, tmpPrefix+"123")); !os.IsNotExist(err) {
		t.Fatal("temporary file left")
	}
	if s := c2.Stats(); s.Bytes > size || s.Entries != 1 {
		t.Fatalf("reopened smaller: %+v", s)
	}
	if _, err := Open(dir, 0); err == nil {
		t.Fatal("size 0 accepted")
	}
}

// TestCacheConcurrent writes and reads the same entries from many goroutines (run under
// -race): every hit equals the column written.
func TestCacheConcurrent(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	col := int32Column(t, mem, 500)
	defer col.Release()
	c := mustOpen(t, t.TempDir(), 40_000)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 40 {
				k := string(rune('a' + (g+i)%12))
				if got, ok := c.Get(k, "f", arrow.PrimitiveTypes.Int32, mem); ok {
					if !array.Equal(got, col) {
						t.Error("entry differs")
					}
					got.Release()
					continue
				}
				if err := c.Put(k, "f", col); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	if s := c.Stats(); s.Damaged != 0 || s.Bytes > 40_000 {
		t.Fatalf("stats %+v", s)
	}
}

// TestEntryTypes round-trips a column of every supported type (with and without nulls) through
// an entry, checks that every buffer of the decoded column lies at a multiple of 8 bytes of
// the one buffer it was read into (no copy), and that an entry whose text values are each
// re-cut inside a character (the whole still valid UTF-8, resealed with a good checksum) is
// damaged.
func TestEntryTypes(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	id := entryID("content", "field")
	ts := &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}
	var cols []arrow.Array
	for _, nulls := range []bool{false, true} {
		valid := []bool{true, !nulls, true, true}
		ib := array.NewInt64Builder(mem)
		ib.AppendValues([]int64{1, -2, 1 << 40, 7}, valid)
		fb := array.NewFloat64Builder(mem)
		fb.AppendValues([]float64{1.5, -0.25, 1e300, 0}, valid)
		tb := array.NewTimestampBuilder(mem, ts)
		tb.AppendValues([]arrow.Timestamp{978307200000000000, 978307201000000000, 0, -1}, valid)
		sb := array.NewStringBuilder(mem)
		sb.AppendValues([]string{"ORD", "Zürich", "", "東京"}, valid)
		bb := array.NewBinaryBuilder(mem, arrow.BinaryTypes.Binary)
		bb.AppendValues([][]byte{{0xff, 0}, nil, {1}, {2, 3, 4}}, valid)
		for _, b := range []array.Builder{ib, fb, tb, sb, bb} {
			cols = append(cols, b.NewArray())
			b.Release()
		}
		cols = append(cols, int32Column(t, mem, 9))
	}
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	for _, col := range cols {
		data, err := encodeEntry(id, col)
		if err != nil {
			t.Fatal(err)
		}
		buf := memory.NewResizableBuffer(mem)
		buf.Resize(len(data))
		copy(buf.Bytes(), data)
		got, rng, err := decodeEntry(buf, id, col.DataType())
		base := uintptr(unsafe.Pointer(&buf.Bytes()[0]))
		buf.Release()
		if err != nil {
			t.Fatalf("%s: %v", col.DataType(), err)
		}
		if !array.Equal(got, col) || !arrow.TypeEqual(got.DataType(), col.DataType()) {
			t.Fatalf("%s: got %v, want %v", col.DataType(), got, col)
		}
		if want := columnRange(col); rng != want {
			t.Fatalf("%s: range %+v, want %+v", col.DataType(), rng, want)
		}
		for _, b := range got.Data().Buffers() {
			if b != nil && b.Len() > 0 {
				at := uintptr(unsafe.Pointer(&b.Bytes()[0])) - base
				if at >= uintptr(len(data)) || at%8 != 0 {
					t.Fatalf("%s: a buffer at offset %d of the entry", col.DataType(), at)
				}
			}
		}
		got.Release()
	}

	// "Zürich" and "東京" as the values "Z\xc3", "\xbcrich東京": the bytes are the same valid
	// UTF-8, the boundary falls inside ü.
	sb := array.NewStringBuilder(mem)
	sb.AppendValues([]string{"Zürich", "東京"}, nil)
	s := sb.NewArray()
	sb.Release()
	defer s.Release()
	data, err := encodeEntry(id, s)
	if err != nil {
		t.Fatal(err)
	}
	offs := headerBytes + bodyHeader
	binary.LittleEndian.PutUint32(data[offs+4:], 2)
	binary.LittleEndian.PutUint32(data[len(entryMagic):], crc32.Checksum(data[len(entryMagic)+4:], castagnoli))
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(len(data))
	copy(buf.Bytes(), data)
	defer buf.Release()
	if a, _, err := decodeEntry(buf, id, arrow.BinaryTypes.String); err != errDamaged {
		if a != nil {
			a.Release()
		}
		t.Fatalf("a value cut inside a character: %v", err)
	}
}

// TestCacheRange: Range states an integer column's least and greatest values (nulls left out),
// that a column of nulls has none, and nothing for text; from the index after Put, and from
// the header alone in a new process. A changed byte in the body leaves the header's range
// trusted (Get still refuses the entry); a changed byte in the header makes the entry damaged
// for Range too (removed, counted).
func TestCacheRange(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	dir := t.TempDir()
	c := mustOpen(t, dir, 1<<20)
	ints := int32Column(t, mem, 100) // i*31-500 but every 7th row (from 3) null
	defer ints.Release()
	nb := array.NewInt64Builder(mem)
	nb.AppendNulls(5)
	nulls := nb.NewArray()
	nb.Release()
	defer nulls.Release()
	sb := array.NewStringBuilder(mem)
	sb.AppendValues([]string{"b", "a"}, nil)
	texts := sb.NewArray()
	sb.Release()
	defer texts.Release()
	// Row 0 holds -500 and row 99 (not null: 99%7 == 1) 2569.
	want := map[string]Range{"ints": {Known: true, Min: -500, Max: 99*31 - 500}, "nulls": {Known: true, Empty: true}, "texts": {}}
	for field, a := range map[string]arrow.Array{"ints": ints, "nulls": nulls, "texts": texts} {
		if err := c.Put("k", field, a); err != nil {
			t.Fatal(err)
		}
	}
	check := func(c *Cache, phase string) {
		t.Helper()
		for field, w := range want {
			if got, ok := c.Range("k", field); !ok || got != w {
				t.Errorf("%s: Range(%s) = %+v %v, want %+v", phase, field, got, ok, w)
			}
		}
		if _, ok := c.Range("k", "absent"); ok {
			t.Errorf("%s: a range for no entry", phase)
		}
	}
	check(c, "after Put")
	c2 := mustOpen(t, dir, 1<<20)
	check(c2, "from the headers")
	if s := c2.Stats(); s.Ranges != 3 || s.Hits != 0 {
		t.Fatalf("from the headers: %+v", s)
	}

	path := filepath.Join(dir, nameOf(entryID("k", "ints")))
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	body := slices.Clone(data)
	body[len(body)-1] ^= 1
	if err := os.WriteFile(path, body, 0o600); err != nil {
		t.Fatal(err)
	}
	c3 := mustOpen(t, dir, 1<<20)
	check(c3, "body damaged")
	if a, ok := c3.Get("k", "ints", arrow.PrimitiveTypes.Int32, mem); ok {
		a.Release()
		t.Fatal("a damaged body served")
	}

	data[rangeAt+8] ^= 1 // the least value
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	c4 := mustOpen(t, dir, 1<<20)
	if got, ok := c4.Range("k", "ints"); ok {
		t.Fatalf("a damaged header's range served: %+v", got)
	}
	if s := c4.Stats(); s.Damaged != 1 || s.Entries != 2 {
		t.Fatalf("damaged header: %+v", s)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("damaged entry kept: %v", err)
	}
}

// TestCacheEarlierLayout: an entry of the layout before ranges ("FSHRED02", sealed with a
// valid checksum) is damaged for Get and Range alike: removed and counted, never served.
func TestCacheEarlierLayout(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	dir := t.TempDir()
	a := int32Column(t, mem, 10)
	defer a.Release()
	for _, read := range []string{"get", "range"} {
		if err := mustOpen(t, dir, 1<<20).Put("k", read, a); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, nameOf(entryID("k", read)))
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		copy(data, "FSHRED02")
		binary.LittleEndian.PutUint32(data[len(entryMagic):], crc32.Checksum(data[len(entryMagic)+4:], castagnoli))
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		c := mustOpen(t, dir, 1<<20)
		if read == "get" {
			if got, ok := c.Get("k", read, arrow.PrimitiveTypes.Int32, mem); ok {
				got.Release()
				t.Fatal("an entry of the earlier layout served")
			}
		} else if _, ok := c.Range("k", read); ok {
			t.Fatal("the range of an entry of the earlier layout served")
		}
		if s := c.Stats(); s.Damaged != 1 {
			t.Fatalf("%s: %+v", read, s)
		}
	}
}

// TestEntryNames: an entry's name is the first 20 bytes of the SHA-256 of
// "<len(content)>:<content>/<len(field)>:<field>" in hex with the .shred suffix, so that a
// directory a build of another layout of the code wrote keeps its entries (long keys too,
// past the stack buffer entryID builds them in).
func TestEntryNames(t *testing.T) {
	long := strings.Repeat("manifest-", 40)
	for _, k := range [][2]string{{"content", "field"}, {"", ""}, {long, `->"delay":int4`}, {"k", long + long}} {
		sum := sha256.Sum256(fmt.Appendf(nil, "%d:%s/%d:%s", len(k[0]), k[0], len(k[1]), k[1]))
		if got := entryID(k[0], k[1]); got != sum {
			t.Fatalf("entryID(%.20q, %.20q) = %x, want %x", k[0], k[1], got, sum)
		}
		if got, want := nameOf(sum), hex.EncodeToString(sum[:20])+".shred"; got != want || !validName(got) {
			t.Fatalf("nameOf = %q, want %q", got, want)
		}
	}
}
