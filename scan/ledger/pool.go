package ledger

import (
	"math/bits"
	"sync"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Pool is a memory.Allocator that recycles the buffers released to it: allocations of
// MinPooledBytes to MaxPooledBytes bytes are rounded up to a size class (four per power of two:
// 5/8, 6/8, 7/8 and 8/8 of it, so a buffer wastes less than a quarter of its size) and served
// from a sync.Pool of that class when one was freed before, so a streaming query decodes its
// next batches into the buffers its earlier batches released once they were written to the
// wire, instead of asking the garbage collector for new zeroed memory per batch. Smaller and
// larger allocations come from the Go heap as memory.GoAllocator's do.
//
// Every buffer is 64-byte aligned and holds zeros, as memory.GoAllocator's: a recycled buffer
// is cleared (the requested bytes only; Reallocate clears what it adds) before it is handed
// out, so arrow-go's builders and kernels, which may rely on zeroed memory, see no difference.
// A buffer's capacity is its length, as memory.GoAllocator's (arrow-go's compute kernels write
// up to cap): its class, and so the memory behind it, is known from its capacity, which
// Reallocate keeps within the class. Free must only be given buffers this Pool allocated
// (memory.Buffer does so) and never touched after. Buffers not freed are reclaimed by the garbage collector, as with
// memory.GoAllocator; the recycled ones live in sync.Pools, which the collector empties over
// two cycles when they go unused, so the Pool holds no memory of its own between queries.
//
// Safe for concurrent use. The zero Pool is ready to use.
type Pool struct {
	// Poison, set before the Pool's first use, fills every buffer Free recycles with
	// PoisonByte, so that a reader still using a buffer after its last Release reads garbage
	// rather than the plausible bytes it held (tests set it; it costs a write of every
	// recycled byte).
	Poison bool

	classes [numClasses]sync.Pool // unsafe.Pointer to the first byte of a buffer of the class
}

// PoisonByte is what a poisoning Pool writes over recycled buffers.
const PoisonByte = 0xa5

const (
	// MinPooledBytes and MaxPooledBytes are the sizes a Pool recycles; outside them a buffer
	// is a plain Go allocation.
	MinPooledBytes = 4 << 10
	MaxPooledBytes = 64 << 20
	// Classes are m<<k bytes for m in 5..8: minShift is k of MinPooledBytes (8<<9), maxShift
	// k of MaxPooledBytes (8<<23).
	minShift   = 9
	maxShift   = 23
	numClasses = (maxShift-minShift+1)*4 - 3 // MinPooledBytes is the first class: m = 8 at minShift
	alignment  = 64
)

var _ memory.Allocator = (*Pool)(nil)

// DefaultPool is the process's recycling allocator: the default parent of the query engine's
// ledgers.
var DefaultPool = &Pool{}

// class returns the size class of a buffer of size bytes (its index in classes), the class's
// size, and whether size is pooled.
func class(size int) (idx, n int, ok bool) {
	if size < MinPooledBytes || size > MaxPooledBytes {
		return 0, 0, false
	}
	k := bits.Len(uint(size-1)) - 3 // size-1 < 8<<k, size > 4<<k
	m := (size + 1<<k - 1) >> k     // ceil(size / 2^k), 5..8
	return (k-minShift)*4 + m - 5 - 3, m << k, true
}

// Allocate returns a zeroed, 64-byte aligned buffer of size bytes. Its capacity is size, as
// memory.GoAllocator's: arrow-go's compute kernels take cap of a buffer for the room they may
// write into. A pooled buffer's real capacity, its class size, is known from its size
// (class).
func (p *Pool) Allocate(size int) []byte {
	_, n, ok := class(size)
	if !ok {
		return goAllocate(size, size)
	}
	if b := p.get(size); b != nil {
		clear(b)
		return b
	}
	return goAllocate(size, n)[:size:size]
}

// get returns a recycled buffer of size's class, resliced to size (capacity size), or nil.
func (p *Pool) get(size int) []byte {
	c, n, _ := class(size)
	if ptr, _ := p.classes[c].Get().(unsafe.Pointer); ptr != nil {
		return unsafe.Slice((*byte)(ptr), n)[:size:size]
	}
	return nil
}

// goAllocate returns a zeroed buffer of size bytes and capacity n ≥ size, 64-byte aligned.
func goAllocate(size, n int) []byte {
	buf := make([]byte, n+alignment)
	shift := 0
	if r := int(uintptr(unsafe.Pointer(unsafe.SliceData(buf))) % alignment); r != 0 {
		shift = alignment - r
	}
	return buf[shift : shift+size : shift+n]
}

// room returns the bytes b may grow to in place: the size of the class of cap(b) for a pooled
// buffer (at most its real capacity: a buffer only shrinks within or below the class it was
// allocated in), else cap(b).
func room(b []byte) int {
	if _, n, ok := class(cap(b)); ok {
		return n
	}
	return cap(b)
}

// Reallocate resizes b to size bytes, keeping its contents (up to size); bytes it adds are
// zero. Within the room of b's size class b is resliced (capacity size, as Allocate's);
// beyond it the contents move to a new buffer and b is freed.
func (p *Pool) Reallocate(size int, b []byte) []byte {
	if size <= cap(b) {
		return b[:size:size]
	}
	if size <= room(b) {
		nb := unsafe.Slice(unsafe.SliceData(b), room(b))[:size:size]
		clear(nb[len(b):])
		return nb
	}
	nb := p.Allocate(size)
	copy(nb, b)
	p.Free(b)
	return nb
}

// Free recycles b when it is a pooled buffer (its capacity falls in a size class), in the
// class of its capacity; other buffers are left to the garbage collector.
func (p *Pool) Free(b []byte) {
	c, n, ok := class(cap(b))
	if !ok {
		return
	}
	full := unsafe.Slice(unsafe.SliceData(b), n)
	if p.Poison {
		for i := range full {
			full[i] = PoisonByte
		}
	}
	p.classes[c].Put(unsafe.Pointer(unsafe.SliceData(full)))
}
