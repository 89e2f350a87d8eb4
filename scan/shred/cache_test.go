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
	"github.com/apache/arrow-go/v18/arrow/decimal128"
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

func stringColumn(t testing.TB, mem memory.Allocator, n int) arrow.Array {
	b := array.NewStringBuilder(mem)
	defer b.Release()
	for i := range n {
		if i%5 == 2 {
			b.AppendNull()
			continue
		}
		b.Append([]string{"ORD", "Zürich", "", "東京"}[i%4])
	}
	return b.NewArray()
}

func bucketFiles(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*"+fileSuffix))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

var (
	int4 = arrow.PrimitiveTypes.Int32
	text = arrow.BinaryTypes.String
)

// get is Get of one field.
func get(c *Cache, content, field string, typ arrow.DataType, mem memory.Allocator) (arrow.Array, bool) {
	cols, ok := c.Get(content, []Field{{field, typ}}, mem)
	if !ok {
		return nil, false
	}
	return cols[0], true
}

// put is Put of one field.
func put(t testing.TB, c *Cache, content, field string, a arrow.Array) {
	t.Helper()
	if err := c.Put(content, []string{field}, []arrow.Array{a}, memory.DefaultAllocator); err != nil {
		t.Fatal(err)
	}
}

// TestCacheRoundTrip writes a bucket's columns and reads them back equal, from this Cache and
// from a new one over the same directory; another field or content key misses.
func TestCacheRoundTrip(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	dir := t.TempDir()
	c, err := Open(dir, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	col, dest := int32Column(t, mem, 1000), stringColumn(t, mem, 1000)
	defer col.Release()
	defer dest.Release()
	if err := c.Put("m1", []string{"delay::int4", "destination"}, []arrow.Array{col, dest}, mem); err != nil {
		t.Fatal(err)
	}
	if n := len(bucketFiles(t, dir)); n != 1 {
		t.Fatalf("%d files for one bucket", n)
	}
	for _, cc := range []*Cache{c, mustOpen(t, dir, 1<<20)} {
		got, ok := cc.Get("m1", []Field{{"destination", text}, {"delay::int4", int4}}, mem)
		if !ok {
			t.Fatal("miss after Put")
		}
		if !array.Equal(got[0], dest) || !array.Equal(got[1], col) {
			t.Fatalf("columns differ: %v", got)
		}
		releaseAll(got)
		if _, ok := get(cc, "m1", "delay::int8", arrow.PrimitiveTypes.Int64, mem); ok {
			t.Fatal("another field hit")
		}
		if _, ok := cc.Get("m1", []Field{{"delay::int4", int4}, {"distance", int4}}, mem); ok {
			t.Fatal("a bucket lacking one field hit")
		}
		if _, ok := get(cc, "m2", "delay::int4", int4, mem); ok {
			t.Fatal("another content hit")
		}
	}
	// The wrong type for a column is damage, never a reinterpretation.
	if _, ok := get(c, "m1", "delay::int4", arrow.PrimitiveTypes.Int64, mem); ok {
		t.Fatal("served as another type")
	}
	if s := c.Stats(); s.Damaged != 1 || s.Entries != 0 {
		t.Fatalf("stats %+v", s)
	}
	if err := c.Put("m1", []string{"a", "a"}, []arrow.Array{col, col}, mem); err == nil {
		t.Fatal("a field twice accepted")
	}
}

// TestCacheUnion: a bucket's file accumulates the fields of successive Puts (one file, the
// union), a Put of a field it holds replaces that column, and concurrent Puts of different
// fields of one bucket all end in the file (they are serialised). A union past the largest
// file keeps the new columns.
func TestCacheUnion(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	dir := t.TempDir()
	c := mustOpen(t, dir, 1<<20)
	a, b := int32Column(t, mem, 300), stringColumn(t, mem, 300)
	defer a.Release()
	defer b.Release()
	put(t, c, "k", "a", a)
	put(t, c, "k", "b", b)
	put(t, c, "k", "a", a)
	if n := len(bucketFiles(t, dir)); n != 1 {
		t.Fatalf("%d files", n)
	}
	for _, cc := range []*Cache{c, mustOpen(t, dir, 1<<20)} {
		got, ok := cc.Get("k", []Field{{"a", int4}, {"b", text}}, mem)
		if !ok || !array.Equal(got[0], a) || !array.Equal(got[1], b) {
			t.Fatalf("union: %v %v", got, ok)
		}
		releaseAll(got)
	}
	if s := c.Stats(); s.Writes != 3 || s.Entries != 1 || s.Damaged != 0 {
		t.Fatalf("stats %+v", s)
	}

	// Readers of the bucket while it grows see its columns, never a damaged file (a read of
	// the size the index held when the file was replaced).
	put(t, c, "concurrent", "base", a)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 200 {
				if got, ok := get(c, "concurrent", "base", int4, mem); ok {
					got.Release()
				} else {
					t.Error("base column lost")
				}
				c.Range("concurrent", "base")
			}
		}()
	}
	fields := make([]string, 24)
	distinct := make([]arrow.Array, len(fields)) // column i: every value of a plus i
	for i := range fields {
		fields[i] = fmt.Sprintf("f%d", i)
		bld := array.NewInt32Builder(mem)
		for j := range a.Len() {
			bld.Append(a.(*array.Int32).Value(j) + int32(i))
		}
		distinct[i] = bld.NewArray()
		bld.Release()
		wg.Add(1)
		go func() {
			defer wg.Done()
			put(t, c, "concurrent", fields[i], distinct[i])
		}()
	}
	defer releaseAll(distinct)
	wg.Wait()
	want := make([]Field, len(fields))
	for i, f := range fields {
		want[i] = Field{f, int4}
	}
	got, ok := c.Get("concurrent", want, mem)
	if !ok {
		t.Fatal("a concurrent Put's column lost")
	}
	releaseAll(got)
	// Some of the columns, adjacent in the file and not, read alone (the directory known).
	for _, pick := range [][]int{{3}, {3, 7, 8}, {0, 1, 2, 23}, {23, 5, 6, 12}} {
		var fs []Field
		for _, i := range pick {
			fs = append(fs, want[i])
		}
		got, ok := c.Get("concurrent", fs, mem)
		if !ok {
			t.Fatalf("%v: miss", pick)
		}
		for k, g := range got {
			if !array.Equal(g, distinct[pick[k]]) {
				t.Fatalf("%v: %v", pick, g)
			}
		}
		releaseAll(got)
	}
	if s := c.Stats(); s.Damaged != 0 {
		t.Fatalf("concurrent: %+v", s)
	}

	// Room for about two columns: the union keeps the newest.
	probe := mustOpen(t, t.TempDir(), 1<<20)
	put(t, probe, "x", "a", a)
	small := mustOpen(t, t.TempDir(), 8*(probe.Stats().Bytes*2))
	for _, f := range []string{"a", "b", "c"} {
		put(t, small, "k", f, a)
	}
	if got, ok := get(small, "k", "c", int4, mem); !ok {
		t.Fatal("the newest column left out")
	} else {
		got.Release()
	}
	if got, ok := small.Get("k", []Field{{"a", int4}, {"b", int4}, {"c", int4}}, mem); ok {
		releaseAll(got)
		t.Fatal("a file past the largest written")
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

// TestCacheDamaged changes one byte of a bucket's file at several places (header, directory,
// each column, the padding between columns): every such file is removed and misses, never
// served; a torn (truncated) file too.
func TestCacheDamaged(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	dir := t.TempDir()
	c := mustOpen(t, dir, 1<<20)
	col, s := int32Column(t, mem, 301), stringColumn(t, mem, 301)
	defer col.Release()
	defer s.Release()
	if err := c.Put("m", []string{"f", "g"}, []arrow.Array{col, s}, mem); err != nil {
		t.Fatal(err)
	}
	files := bucketFiles(t, dir)
	if len(files) != 1 {
		t.Fatalf("files %v", files)
	}
	good, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	dir0, err := decodeDirectory(good, contentID("m"), len(good))
	if err != nil || len(dir0) != 2 {
		t.Fatalf("directory %v %v", dir0, err)
	}
	places := []int{0, 9, 13, 20, 50, 60, headerSize + 3, headerSize + dirRecord + recKindAt, headerSize + 2*dirRecord - 1, len(good) - 1}
	for _, e := range dir0 {
		places = append(places, e.off, e.off+9, e.off+e.len/2, e.off+e.len-1)
	}
	if gap := dir0[0].off + dir0[0].len; gap < dir0[1].off {
		places = append(places, gap)
	} else if gap := dir0[1].off + dir0[1].len; gap < len(good) {
		t.Fatal("unexpected layout")
	}
	for _, at := range places {
		bad := slices.Clone(good)
		bad[at] ^= 0x40
		if err := os.WriteFile(files[0], bad, 0o600); err != nil {
			t.Fatal(err)
		}
		cc := mustOpen(t, dir, 1<<20)
		if got, ok := cc.Get("m", []Field{{"f", int4}, {"g", text}}, mem); ok {
			releaseAll(got)
			t.Fatalf("byte %d changed: served", at)
		}
		if _, err := os.Stat(files[0]); !os.IsNotExist(err) {
			t.Fatalf("byte %d changed: file not removed (%v)", at, err)
		}
		if s := cc.Stats(); s.Damaged != 1 {
			t.Fatalf("byte %d: stats %+v", at, s)
		}
	}
	// With the directory known (read by Range before the byte changed), Get reads the columns
	// alone: a changed byte in one of them is damage all the same.
	for _, e := range dir0 {
		for _, at := range []int{e.off, e.off + 9, e.off + e.len/2, e.off + e.len - 1} {
			if err := os.WriteFile(files[0], good, 0o600); err != nil {
				t.Fatal(err)
			}
			cc := mustOpen(t, dir, 1<<20)
			if _, ok := cc.Range("m", "f"); !ok {
				t.Fatal("no range")
			}
			bad := slices.Clone(good)
			bad[at] ^= 0x40
			if err := os.WriteFile(files[0], bad, 0o600); err != nil {
				t.Fatal(err)
			}
			if got, ok := cc.Get("m", []Field{{"f", int4}, {"g", text}}, mem); ok {
				releaseAll(got)
				t.Fatalf("byte %d changed, directory known: served", at)
			}
			if s := cc.Stats(); s.Damaged != 1 || s.Entries != 0 {
				t.Fatalf("byte %d, directory known: stats %+v", at, s)
			}
		}
	}
	// A file cut short under a known directory is damaged.
	if err := os.WriteFile(files[0], good, 0o600); err != nil {
		t.Fatal(err)
	}
	cc := mustOpen(t, dir, 1<<20)
	cc.Range("m", "f")
	if err := os.WriteFile(files[0], good[:dir0[1].off+8], 0o600); err != nil {
		t.Fatal(err)
	}
	if got, ok := cc.Get("m", []Field{{"g", text}, {"f", int4}}, mem); ok {
		releaseAll(got)
		t.Fatal("a file cut short served")
	}
	if s := cc.Stats(); s.Damaged != 1 {
		t.Fatalf("cut short: %+v", s)
	}
	// A file another process rewrote (another union, other places) under a known directory:
	// what is served is the column written, or nothing.
	if err := os.WriteFile(files[0], good, 0o600); err != nil {
		t.Fatal(err)
	}
	c1, c2 := mustOpen(t, dir, 1<<20), mustOpen(t, dir, 1<<20)
	if got, ok := get(c1, "m", "g", text, mem); !ok {
		t.Fatal("miss")
	} else {
		got.Release()
	}
	other := int32Column(t, mem, 301)
	defer other.Release()
	for _, k := range []string{"h", "i", "j", "a"} {
		put(t, c2, "m", k, other)
	}
	if got, ok := c1.Get("m", []Field{{"g", text}, {"f", int4}}, mem); ok {
		if !array.Equal(got[0], s) || !array.Equal(got[1], col) {
			t.Fatal("a rewritten file served wrong columns")
		}
		releaseAll(got)
	}

	// A truncated file (a torn write) is damaged too, and so is a longer one.
	for _, bad := range [][]byte{good[:len(good)-3], append(slices.Clone(good), 0)} {
		if err := os.WriteFile(files[0], bad, 0o600); err != nil {
			t.Fatal(err)
		}
		cc := mustOpen(t, dir, 1<<20)
		if got, ok := get(cc, "m", "f", int4, mem); ok {
			got.Release()
			t.Fatal("truncated file served")
		}
		if s := cc.Stats(); s.Damaged != 1 {
			t.Fatalf("stats %+v", s)
		}
	}
}

// TestCacheBound keeps the directory under its bound, evicting least recently used buckets
// first, and removes leftover temporary files at Open.
func TestCacheBound(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	dir := t.TempDir()
	col := int32Column(t, mem, 400)
	defer col.Release()
	probe := mustOpen(t, t.TempDir(), 1<<20)
	put(t, probe, "x", "f", col)
	size := probe.Stats().Bytes
	// Room for three files; MaxEntryBytes (an eighth) must admit one.
	bound := max(3*size, 8*size)
	c := mustOpen(t, dir, bound)
	keys := []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"}
	for i, k := range keys {
		put(t, c, k, "f", col)
		if i == 2 {
			// a is used again: b is now the least recently used.
			if got, ok := get(c, "a", "f", int4, mem); ok {
				got.Release()
			} else {
				t.Fatal("a missing")
			}
		}
	}
	s := c.Stats()
	if s.Bytes > bound || s.Evicted == 0 || int64(len(bucketFiles(t, dir))) != s.Entries {
		t.Fatalf("stats %+v, bound %d, files %d", s, bound, len(bucketFiles(t, dir)))
	}
	if got, ok := get(c, "b", "f", int4, mem); ok {
		got.Release()
		t.Fatal("b kept over more recent buckets")
	}
	if got, ok := get(c, "j", "f", int4, mem); !ok {
		t.Fatal("latest bucket evicted")
	} else {
		got.Release()
	}
	// A cache too small for any file writes none.
	tiny := mustOpen(t, t.TempDir(), 16)
	put(t, tiny, "a", "f", col)
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

// TestCacheConcurrent writes and reads the same buckets' fields from many goroutines (run
// under -race): every hit equals the columns written.
func TestCacheConcurrent(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	col := int32Column(t, mem, 500)
	defer col.Release()
	c := mustOpen(t, t.TempDir(), 60_000)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 40 {
				k, f := string(rune('a'+(g+i)%12)), fmt.Sprint("f", (g+i)%3)
				if got, ok := get(c, k, f, int4, mem); ok {
					if !array.Equal(got, col) {
						t.Error("column differs")
					}
					got.Release()
					continue
				}
				put(t, c, k, f, col)
			}
		}()
	}
	wg.Wait()
	if s := c.Stats(); s.Damaged != 0 || s.Bytes > 60_000 {
		t.Fatalf("stats %+v", s)
	}
}

// TestEntryTypes round-trips a column of every supported type (with and without nulls)
// through a bucket's file, checks that every buffer of a decoded column lies at a multiple of
// 8 bytes of the one buffer the file was read into (no copy), and that a file whose text
// values are each re-cut inside a character (the whole still valid UTF-8, resealed with good
// checksums) is damaged.
func TestEntryTypes(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	id := contentID("content")
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
		db := array.NewDecimal128Builder(mem, &arrow.Decimal128Type{Precision: 38, Scale: 2})
		db.AppendValues([]decimal128.Num{decimal128.FromI64(123456), decimal128.FromI64(-5), decimal128.MaxDecimal128, decimal128.FromI64(-1).Mul(decimal128.MaxDecimal128)}, valid)
		for _, b := range []array.Builder{ib, fb, tb, sb, bb, db} {
			cols = append(cols, b.NewArray())
			b.Release()
		}
		cols = append(cols, int32Column(t, mem, 4))
	}
	defer releaseAll(cols)
	var enc []column
	for i, col := range cols {
		c, err := encodeColumn(fmt.Sprint("field", i), col)
		if err != nil {
			t.Fatal(err)
		}
		enc = append(enc, c)
	}
	data := encodeFile(id, enc)
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(len(data))
	copy(buf.Bytes(), data)
	defer buf.Release()
	dir, err := decodeDirectory(buf.Bytes(), id, len(data))
	if err != nil || len(dir) != len(cols) || !zeroPadding(data, dir) {
		t.Fatalf("directory: %v", err)
	}
	base := uintptr(unsafe.Pointer(&buf.Bytes()[0]))
	for i, col := range cols {
		e, ok := find(dir, fieldID(fmt.Sprint("field", i)))
		if !ok {
			t.Fatalf("%s: not in the directory", col.DataType())
		}
		got, err := decodeColumn(buf, e, col.DataType())
		if err != nil {
			t.Fatalf("%s: %v", col.DataType(), err)
		}
		if !array.Equal(got, col) || !arrow.TypeEqual(got.DataType(), col.DataType()) {
			t.Fatalf("%s: got %v, want %v", col.DataType(), got, col)
		}
		if want := columnRange(col); e.rng != want {
			t.Fatalf("%s: range %+v, want %+v", col.DataType(), e.rng, want)
		}
		for _, b := range got.Data().Buffers() {
			if b != nil && b.Len() > 0 {
				at := uintptr(unsafe.Pointer(&b.Bytes()[0])) - base
				if at >= uintptr(len(data)) || at%8 != 0 {
					t.Fatalf("%s: a buffer at offset %d of the file", col.DataType(), at)
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
	c, err := encodeColumn("f", s)
	if err != nil {
		t.Fatal(err)
	}
	binary.LittleEndian.PutUint32(c.body[bodyHeader+4:], 2)
	c.crc = crc32Of(c.body)
	cut := encodeFile(id, []column{c})
	cbuf := memory.NewResizableBuffer(mem)
	cbuf.Resize(len(cut))
	copy(cbuf.Bytes(), cut)
	defer cbuf.Release()
	cdir, err := decodeDirectory(cut, id, len(cut))
	if err != nil {
		t.Fatal(err)
	}
	if a, err := decodeColumn(cbuf, cdir[0], text); err != errDamaged {
		if a != nil {
			a.Release()
		}
		t.Fatalf("a value cut inside a character: %v", err)
	}
}

// TestCacheRange: Range states an integer column's least and greatest values (nulls left out),
// that a column of nulls has none, and nothing for text; from the index after Put, and from
// the header and directory alone in a new process. A changed byte in a column leaves the
// directory's range trusted (Get still refuses the file); a changed byte in the directory
// makes the file damaged for Range too (removed, counted).
func TestCacheRange(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	dir := t.TempDir()
	c := mustOpen(t, dir, 1<<20)
	ints := int32Column(t, mem, 100) // i*31-500 but every 7th row (from 3) null
	defer ints.Release()
	nb := array.NewInt64Builder(mem)
	nb.AppendNulls(100)
	nulls := nb.NewArray()
	nb.Release()
	defer nulls.Release()
	texts := stringColumn(t, mem, 100)
	defer texts.Release()
	// Row 0 holds -500 and row 99 (not null: 99%7 == 1) 2569.
	want := map[string]Range{"ints": {Known: true, Min: -500, Max: 99*31 - 500}, "nulls": {Known: true, Empty: true}, "texts": {}}
	for field, a := range map[string]arrow.Array{"ints": ints, "nulls": nulls, "texts": texts} {
		put(t, c, "k", field, a)
	}
	check := func(c *Cache, phase string) {
		t.Helper()
		for field, w := range want {
			if got, ok := c.Range("k", field); !ok || got != w {
				t.Errorf("%s: Range(%s) = %+v %v, want %+v", phase, field, got, ok, w)
			}
		}
		if _, ok := c.Range("k", "absent"); ok {
			t.Errorf("%s: a range for no column", phase)
		}
		if _, ok := c.Range("absent", "ints"); ok {
			t.Errorf("%s: a range for no bucket", phase)
		}
	}
	check(c, "after Put")
	c2 := mustOpen(t, dir, 1<<20)
	check(c2, "from the directory")
	if s := c2.Stats(); s.Ranges != 3 || s.Hits != 0 {
		t.Fatalf("from the directory: %+v", s)
	}

	path := filepath.Join(dir, nameOf(contentID("k")))
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
	check(c3, "column damaged")
	if got, ok := c3.Get("k", []Field{{"ints", int4}, {"texts", text}, {"nulls", arrow.PrimitiveTypes.Int64}}, mem); ok {
		releaseAll(got)
		t.Fatal("a damaged column served")
	}

	e, _ := find(func() []dirEntry { d, _ := decodeDirectory(data, contentID("k"), len(data)); return d }(), fieldID("ints"))
	for r := range 3 {
		rec := data[headerSize+r*dirRecord:]
		if [32]byte(rec[:32]) == e.field {
			rec[recMinAt] ^= 1 // the least value
		}
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	c4 := mustOpen(t, dir, 1<<20)
	if got, ok := c4.Range("k", "ints"); ok {
		t.Fatalf("a damaged directory's range served: %+v", got)
	}
	if s := c4.Stats(); s.Damaged != 1 || s.Entries != 0 {
		t.Fatalf("damaged directory: %+v", s)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("damaged file kept: %v", err)
	}
}

// TestCacheEarlierLayout: the files of the layouts of one file per bucket and field
// (DIR/<hex>.shred, "FSHRED01" to "FSHRED03") are removed by Open and counted as damaged; a
// bucket's file of an earlier magic (resealed with valid checksums) is damaged for Get and
// Range alike: removed and counted, never served.
func TestCacheEarlierLayout(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	dir := t.TempDir()
	old := filepath.Join(dir, strings.Repeat("ab", 20)+earlierSuffix)
	if err := os.WriteFile(old, []byte("FSHRED03 an entry of the earlier layout"), 0o600); err != nil {
		t.Fatal(err)
	}
	if s := mustOpen(t, dir, 1<<20).Stats(); s.Damaged != 1 || s.Entries != 0 {
		t.Fatalf("earlier layout at Open: %+v", s)
	}
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Fatalf("earlier layout's file kept: %v", err)
	}
	a := int32Column(t, mem, 10)
	defer a.Release()
	for _, read := range []string{"get", "range"} {
		put(t, mustOpen(t, dir, 1<<20), read, "f", a)
		path := filepath.Join(dir, nameOf(contentID(read)))
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		copy(data, "FSHRED03")
		n, _ := directoryBytes(append([]byte(fileMagic), data[8:]...))
		binary.LittleEndian.PutUint32(data[headCRCAt:], crc32.Checksum(data[countAt:n], castagnoli))
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		c := mustOpen(t, dir, 1<<20)
		if read == "get" {
			if got, ok := get(c, read, "f", int4, mem); ok {
				got.Release()
				t.Fatal("a file of an earlier layout served")
			}
		} else if _, ok := c.Range(read, "f"); ok {
			t.Fatal("the range of a file of an earlier layout served")
		}
		if s := c.Stats(); s.Damaged != 1 {
			t.Fatalf("%s: %+v", read, s)
		}
	}
}

// TestFileNames: a bucket's file name is the first 20 bytes of the SHA-256 of
// "<len(content)>:<content>" in hex with the .bucket suffix (long keys too, past the stack
// buffer contentID builds them in), and a column's field is named by its key's SHA-256.
func TestFileNames(t *testing.T) {
	long := strings.Repeat("manifest-", 40)
	for _, k := range []string{"content", "", long} {
		sum := sha256.Sum256(fmt.Appendf(nil, "%d:%s", len(k), k))
		if got := contentID(k); got != sum {
			t.Fatalf("contentID(%.20q) = %x, want %x", k, got, sum)
		}
		if got, want := nameOf(sum), hex.EncodeToString(sum[:20])+".bucket"; got != want || !validName(got, fileSuffix) {
			t.Fatalf("nameOf = %q, want %q", got, want)
		}
		if fieldID(k) != sha256.Sum256([]byte(k)) {
			t.Fatalf("fieldID(%.20q)", k)
		}
	}
}
