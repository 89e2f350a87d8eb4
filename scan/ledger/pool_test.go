package ledger

import (
	"bytes"
	"context"
	"runtime"
	"runtime/debug"
	"sync"
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

func aligned(b []byte) bool {
	return cap(b) == 0 || uintptr(unsafe.Pointer(unsafe.SliceData(b[:1])))%alignment == 0
}

// TestPoolRecyclesZeroedBuffers: a freed buffer of a size class comes back for the next
// allocation of that class, cleared, aligned, with the requested length; sizes outside the
// classes are plain allocations that Free leaves alone.
func TestPoolRecyclesZeroedBuffers(t *testing.T) {
	p := &Pool{}
	zeros := make([]byte, 1<<20)
	for _, size := range []int{MinPooledBytes, MinPooledBytes + 1, 100_000, 1 << 20} {
		b := p.Allocate(size)
		if len(b) != size || !aligned(b) {
			t.Fatalf("Allocate(%d): len %d cap %d aligned %v", size, len(b), cap(b), aligned(b))
		}
		if cap(b) != size {
			t.Fatalf("Allocate(%d): cap %d, want the size (arrow-go's kernels write up to cap)", size, cap(b))
		}
		if _, n, _ := class(size); n < size || n*4 > size*5+4<<10 {
			t.Fatalf("Allocate(%d): class of %d bytes, want less than a quarter more", size, n)
		}
		copy(b, bytes.Repeat([]byte{0xdd}, size))
		p.Free(b)
		// The free lists are plain lists (no sync.Pool drops): every allocation gets the
		// buffer freed just before it back.
		for range 100 {
			again := p.Allocate(size)
			if len(again) != size || !aligned(again) {
				t.Fatalf("Allocate(%d) again: len %d", size, len(again))
			}
			if !bytes.Equal(again, zeros[:size]) {
				t.Fatalf("a recycled buffer of %d bytes is not cleared", size)
			}
			if unsafe.SliceData(again) != unsafe.SliceData(b) {
				t.Fatalf("Allocate(%d) after a Free of that class: a new buffer", size)
			}
			again[len(again)-1] = 0xdd
			p.Free(again)
		}
		p.get(size) // empty the list for the next size
	}
	// Every class: its index, and the sizes that fall into it (the class size and the size
	// just above the class before it).
	prev := MinPooledBytes - 1
	for idx := 0; idx < numClasses; idx++ {
		want := MinPooledBytes
		if idx > 0 {
			k, m := minShift+(idx+3)/4, 5+(idx+3)%4
			want = m << k
		}
		for _, size := range []int{prev + 1, want} {
			if c, n, ok := class(size); !ok || c != idx || n != want {
				t.Fatalf("class(%d) = %d, %d, %v; want %d, %d", size, c, n, ok, idx, want)
			}
		}
		prev = want
	}
	if prev != MaxPooledBytes {
		t.Fatalf("the last class is %d bytes, want %d", prev, MaxPooledBytes)
	}
	for _, size := range []int{0, 1, MinPooledBytes - 1} {
		b := p.Allocate(size)
		if len(b) != size || cap(b) != size || !aligned(b) {
			t.Fatalf("Allocate(%d): len %d cap %d", size, len(b), cap(b))
		}
		p.Free(b) // not pooled: a no-op
	}
	if _, _, ok := class(MaxPooledBytes + 1); ok {
		t.Error("sizes beyond MaxPooledBytes are pooled")
	}
}

// TestPoolReallocate keeps the contents, zeroes what it adds, grows in place within the size
// class and keeps capacity equal to length.
func TestPoolReallocate(t *testing.T) {
	p := &Pool{}
	b := p.Allocate(5000) // class 5120
	for i := range b {
		b[i] = byte(i)
	}
	base := unsafe.SliceData(b)
	check := func(what string, b []byte, size, kept int) {
		t.Helper()
		if len(b) != size || cap(b) != size || !aligned(b) {
			t.Fatalf("%s: len %d cap %d, want %d", what, len(b), cap(b), size)
		}
		for i := range b {
			want := byte(0)
			if i < kept {
				want = byte(i)
			}
			if b[i] != want {
				t.Fatalf("%s: byte %d = %d, want %d", what, i, b[i], want)
			}
		}
	}
	b = p.Reallocate(4500, b) // shrink within the class
	check("shrink", b, 4500, 4500)
	b = p.Reallocate(5100, b) // grow within the class: in place, bytes 4500..5100 cleared
	check("grow within the class", b, 5100, 4500)
	if unsafe.SliceData(b) != base {
		t.Fatal("growing within the class moved the buffer")
	}
	b = p.Reallocate(20000, b) // another class
	check("grow to another class", b, 20000, 4500)
	p.Free(b)
	small := p.Reallocate(100, p.Allocate(50)) // not pooled
	check("unpooled", small, 100, 0)
}

// TestPoolShrinkKeepsClasses: a shrink below a buffer's class moves its contents into a
// recycled buffer of the smaller class (or a plain allocation below the pooled sizes) and frees
// the buffer into its own class, so the next allocation of that class reuses it; with no
// recycled buffer of the smaller class the shrink is in place. An arrow-go builder of 5,000
// decimals (a power of two reserved, shrunk when the array is built), released and built
// again, takes nothing more from the heap.
func TestPoolShrinkKeepsClasses(t *testing.T) {
	p := &Pool{}
	fill := func(b []byte) {
		for i := range b {
			b[i] = byte(i % 251)
		}
	}
	kept := func(what string, b []byte, size int) {
		t.Helper()
		if len(b) != size || cap(b) != size || !aligned(b) {
			t.Fatalf("%s: len %d cap %d, want %d", what, len(b), cap(b), size)
		}
		for i := range b {
			if b[i] != byte(i%251) {
				t.Fatalf("%s: byte %d = %d, want %d", what, i, b[i], byte(i%251))
			}
		}
	}
	big := p.Allocate(128 << 10)
	fill(big)
	base := unsafe.SliceData(big)
	b := p.Reallocate(80_000, big) // no recycled buffer of 80,000's class: in place
	kept("shrink, nothing recycled", b, 80_000)
	if unsafe.SliceData(b) != base {
		t.Fatal("a shrink with nothing recycled moved the buffer")
	}
	p.Free(b) // into the 80 KiB class
	big = p.Allocate(128 << 10)
	fill(big)
	base = unsafe.SliceData(big)
	fresh := p.Stats().Fresh
	b = p.Reallocate(80_000, big) // the recycled 80 KiB buffer takes the contents
	kept("shrink into a recycled buffer", b, 80_000)
	if unsafe.SliceData(b) == base {
		t.Fatal("the shrink stayed in place although a buffer of its class was recycled")
	}
	again := p.Allocate(128 << 10)
	if unsafe.SliceData(again) != base || p.Stats().Fresh != fresh {
		t.Fatal("the shrunk buffer did not go back to its own class")
	}
	small := p.Reallocate(100, again[:1000:1000]) // below the pooled sizes: a plain allocation
	if len(small) != 100 || cap(small) != 100 || !aligned(small) || unsafe.SliceData(small) == base {
		t.Fatalf("shrink below the pooled sizes: len %d cap %d", len(small), cap(small))
	}
	p.Free(b)

	// A builder built, released and built again: the second takes nothing from the heap.
	dt := &arrow.Decimal128Type{Precision: 20, Scale: 2}
	build := func() {
		bld := array.NewDecimal128Builder(p, dt)
		defer bld.Release()
		bld.Reserve(5000)
		for range 5000 {
			bld.UnsafeAppendBoolToBitmap(true)
		}
		a := bld.NewArray()
		a.Release()
	}
	build()
	build()
	fresh = p.Stats().Fresh
	build()
	if d := p.Stats().Fresh - fresh; d != 0 {
		t.Errorf("a builder built a third time took %d bytes from the heap", d)
	}
}

// TestPoolUnderComputeTake: arrow-go's take kernel over a binary column, with its buffers
// from a Pool whose recycled buffers hold other data, gives the values taken (its buffer
// builder writes up to the capacity of the buffers it reserves; a larger capacity than length
// crashed it).
func TestPoolUnderComputeTake(t *testing.T) {
	p := &Pool{Poison: true}
	ctx := compute.WithAllocator(context.Background(), p)
	vals := array.NewBinaryBuilder(memory.NewGoAllocator(), arrow.BinaryTypes.Binary)
	defer vals.Release()
	var want [][]byte
	for i := range 5000 {
		v := bytes.Repeat([]byte{byte(i)}, i%97)
		want = append(want, v)
		vals.Append(v)
	}
	arr := vals.NewArray()
	defer arr.Release()
	for round := range 20 {
		idx := array.NewInt64Builder(memory.NewGoAllocator())
		var order []int
		for i := range 3000 {
			j := (i*7919 + round*104729) % len(want)
			order = append(order, j)
			idx.Append(int64(j))
		}
		ia := idx.NewArray()
		idx.Release()
		out, err := compute.TakeArray(ctx, arr, ia)
		ia.Release()
		if err != nil {
			t.Fatal(err)
		}
		got := out.(*array.Binary)
		for i, j := range order {
			if !bytes.Equal(got.Value(i), want[j]) {
				t.Fatalf("round %d: row %d = %x, want %x", round, i, got.Value(i), want[j])
			}
		}
		out.Release()
	}
}

// TestLedgerOverPoolCountsReleasedBuffers: a ledger whose parent is a Pool still counts every
// byte its batches hold and returns to zero when they are released, buffers recycled or not,
// from goroutines at once (run with -race).
func TestLedgerOverPoolCountsReleasedBuffers(t *testing.T) {
	checked := memory.NewCheckedAllocator(&Pool{})
	l := New(checked, 0)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				buf := memory.NewResizableBuffer(l)
				buf.Resize(1000 + (g*997+i*4093)%40_000)
				bs := buf.Bytes()
				if !bytes.Equal(bs, make([]byte, len(bs))) {
					t.Error("a new buffer is not cleared")
				}
				copy(bs, bytes.Repeat([]byte{byte(g + 1)}, len(bs)))
				buf.Resize(len(bs) * 2)
				buf.Release()
			}
		}()
	}
	wg.Wait()
	if l.Bytes() != 0 {
		t.Fatalf("ledger holds %d bytes after every buffer was released", l.Bytes())
	}
	checked.AssertSize(t, 0)
}

// TestPoolPoison: a poisoning Pool overwrites what it recycles, so a slice kept past Free
// reads PoisonByte.
func TestPoolPoison(t *testing.T) {
	p := &Pool{Poison: true}
	b := p.Allocate(10_000)
	copy(b, "live data")
	p.Free(b)
	if b[0] != PoisonByte || b[len(b)-1] != PoisonByte || b[:cap(b)][cap(b)-1] != PoisonByte {
		t.Fatalf("a freed buffer still reads %q", b[:9])
	}
}

// TestPoolBoundsFreeLists: the free lists hold at most MaxFree bytes (class sizes); a buffer
// freed beyond that is left to the collector, and the next allocation of its class is fresh.
// Stats count what was allocated fresh and reused.
func TestPoolBoundsFreeLists(t *testing.T) {
	p := &Pool{}
	if p.MaxFree() != DefaultMaxFree {
		t.Fatalf("zero Pool bound %d, want DefaultMaxFree", p.MaxFree())
	}
	const size = 100_000
	_, n, _ := class(size)
	p.SetMaxFree(int64(3*n + n/2)) // room for three buffers of the class
	var bufs [][]byte
	for range 5 {
		bufs = append(bufs, p.Allocate(size))
	}
	if st := p.Stats(); st.Fresh != int64(5*n) || st.Reused != 0 || st.Held != 0 {
		t.Fatalf("after five allocations: %+v", st)
	}
	for _, b := range bufs {
		p.Free(b)
	}
	if p.Stats().Held != int64(3*n) {
		t.Fatalf("free lists hold %d bytes, want three buffers (%d)", p.Stats().Held, 3*n)
	}
	for range 5 {
		p.Allocate(size)
	}
	if st := p.Stats(); st.Fresh != int64(7*n) || st.Reused != int64(3*n) || st.Held != 0 {
		t.Fatalf("after five more allocations: %+v, want 7 fresh and 3 reused buffers of %d", st, n)
	}
	p.SetMaxFree(0) // nothing kept
	p.Free(p.Allocate(size))
	if p.Stats().Held != 0 || p.MaxFree() != 0 {
		t.Fatalf("with no room: held %d, bound %d", p.Stats().Held, p.MaxFree())
	}
}

// TestPoolTrim: a trim drops the buffers a list held through the whole cycle since the
// previous trim (its low-water mark), oldest first, and keeps those taken meanwhile.
func TestPoolTrim(t *testing.T) {
	p := &Pool{}
	const size = 10_000
	_, n, _ := class(size)
	var bufs [][]byte
	for range 4 {
		bufs = append(bufs, p.Allocate(size))
	}
	for _, b := range bufs {
		p.Free(b)
	}
	p.trim() // the first trim only starts the cycle: the list was never observed idle
	if p.Stats().Held != int64(4*n) {
		t.Fatalf("first trim: held %d, want %d", p.Stats().Held, 4*n)
	}
	a, b := p.Allocate(size), p.Allocate(size) // the two most recently freed
	p.Free(b)
	p.Free(a)
	// Two buffers stayed in the list through the cycle (the low-water mark): they go.
	p.trim()
	if p.Stats().Held != int64(2*n) {
		t.Fatalf("second trim: held %d, want %d", p.Stats().Held, 2*n)
	}
	x, y := p.Allocate(size), p.Allocate(size)
	if got := map[*byte]bool{unsafe.SliceData(x): true, unsafe.SliceData(y): true}; !got[unsafe.SliceData(a)] || !got[unsafe.SliceData(b)] {
		t.Fatal("the trim dropped the buffers taken during the cycle")
	}
	p.Free(x)
	p.Free(y)
	p.trim() // the cycle saw the list at 0: nothing to drop
	p.trim() // an idle cycle: everything goes
	if p.Stats().Held != 0 {
		t.Fatalf("after an idle cycle: held %d", p.Stats().Held)
	}
}

// TestPoolTrimsAtGarbageCollections: an idle Pool's free lists are emptied by garbage
// collections (the trim runs in a cleanup after each; the loop bounds collections, not time).
func TestPoolTrimsAtGarbageCollections(t *testing.T) {
	p := &Pool{}
	for range 3 {
		p.Free(p.Allocate(50_000))
	}
	p.Free(p.Allocate(200_000))
	for i := 0; i < 1000 && p.Stats().Held != 0; i++ {
		runtime.GC()
		runtime.Gosched()
	}
	if p.Stats().Held != 0 {
		t.Fatalf("an idle Pool holds %d bytes after 1000 collections", p.Stats().Held)
	}
}

// TestAllocateUninit: a recycled buffer comes back as it was left (poison here), not cleared;
// a fresh one is zeroed; a ledger passes the call to its pool and counts the bytes, and falls
// back to a clearing Allocate over another allocator.
func TestAllocateUninit(t *testing.T) {
	p := &Pool{Poison: true}
	l := New(p, 0)
	b := l.AllocateUninit(10_000)
	if len(b) != 10_000 || cap(b) != 10_000 || !aligned(b) || !bytes.Equal(b, make([]byte, len(b))) {
		t.Fatalf("fresh buffer: len %d cap %d aligned %v, not zeroed", len(b), cap(b), aligned(b))
	}
	if l.Bytes() != 10_000 {
		t.Fatalf("ledger counts %d bytes", l.Bytes())
	}
	l.Free(b)
	again := l.AllocateUninit(9_000) // same class
	if unsafe.SliceData(again) != unsafe.SliceData(b) || again[0] != PoisonByte || again[len(again)-1] != PoisonByte {
		t.Fatal("AllocateUninit did not hand back the recycled buffer as it was left")
	}
	l.Free(again)
	if z := l.Allocate(9_000); z[0] != 0 || z[len(z)-1] != 0 {
		t.Fatal("Allocate of a recycled buffer is not cleared")
	}
	checked := memory.NewCheckedAllocator(memory.NewGoAllocator())
	g := New(checked, 0)
	gb := g.AllocateUninit(5000)
	if len(gb) != 5000 || g.Bytes() != 5000 {
		t.Fatalf("over a Go allocator: len %d, ledger %d", len(gb), g.Bytes())
	}
	g.Free(gb)
	checked.AssertSize(t, 0)
}

// TestFreshBuffersTakeTheirClass: a buffer the Pool allocates from the Go heap takes its
// class's bytes of heap and no more (no alignment padding, which cost a whole page for a
// class that is a multiple of the page size), and is aligned.
func TestFreshBuffersTakeTheirClass(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	for _, size := range []int{MinPooledBytes, 4 << 10, 40 << 10, 112 << 10, 1 << 20} {
		p := &Pool{}
		const k = 64
		keep := make([][]byte, 0, k)
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range k {
			b := p.Allocate(size)
			if !aligned(b) {
				t.Fatalf("Allocate(%d): not aligned", size)
			}
			keep = append(keep, b)
		}
		runtime.ReadMemStats(&after)
		_, n, _ := class(size)
		if grew := after.HeapAlloc - before.HeapAlloc; grew > uint64(k*n)+uint64(k*n)/16 {
			t.Errorf("%d fresh buffers of class %d took %d bytes of heap, %.2f× the class", k, n, grew, float64(grew)/float64(k*n))
		}
		runtime.KeepAlive(keep)
	}
}
