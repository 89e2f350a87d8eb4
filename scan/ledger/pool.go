package ledger

import (
	"math/bits"
	"sync"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Pool is a memory.Allocator that recycles the buffers released to it: allocations of
// MinPooledBytes to MaxPooledBytes bytes are rounded up to a power of two (their size class)
// and served from a sync.Pool of that class when one was freed before, so a streaming query
// decodes its next batches into the buffers its earlier batches released once they were
// written to the wire, instead of asking the garbage collector for new zeroed memory per batch.
// Smaller and larger allocations come from the Go heap as memory.GoAllocator's do.
//
// Every buffer is 64-byte aligned and holds zeros, as memory.GoAllocator's: a recycled buffer
// is cleared (the requested bytes only; Reallocate clears what it adds) before it is handed
// out, so arrow-go's builders and kernels, which may rely on zeroed memory, see no difference.
// A buffer keeps its class's capacity through Reallocate within the class, so Free knows its
// class from cap; Free must only be given buffers this Pool allocated (memory.Buffer does so)
// and never touched after. Buffers not freed are reclaimed by the garbage collector, as with
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
	minClassShift = 12 // 4 KiB
	maxClassShift = 26 // 64 MiB
	numClasses    = maxClassShift - minClassShift + 1
	// MinPooledBytes and MaxPooledBytes are the sizes a Pool recycles; outside them a buffer
	// is a plain Go allocation.
	MinPooledBytes = 1 << minClassShift
	MaxPooledBytes = 1 << maxClassShift
	alignment      = 64
)

var _ memory.Allocator = (*Pool)(nil)

// DefaultPool is the process's recycling allocator: the default parent of the query engine's
// ledgers.
var DefaultPool = &Pool{}

// class returns the size class of size (its index in classes) and whether it is pooled.
func class(size int) (int, bool) {
	if size < MinPooledBytes || size > MaxPooledBytes {
		return 0, false
	}
	shift := bits.Len(uint(size - 1)) // the smallest power of two ≥ size
	return max(shift, minClassShift) - minClassShift, true
}

// Allocate returns a zeroed, 64-byte aligned buffer of size bytes.
func (p *Pool) Allocate(size int) []byte {
	c, ok := class(size)
	if !ok {
		return goAllocate(size, size)
	}
	n := 1 << (c + minClassShift)
	if ptr, _ := p.classes[c].Get().(unsafe.Pointer); ptr != nil {
		b := unsafe.Slice((*byte)(ptr), n)[:size]
		clear(b)
		return b
	}
	return goAllocate(size, n)[:size]
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

// Reallocate resizes b to size bytes, keeping its contents (up to size); bytes it adds are
// zero. Within b's capacity b is resliced; beyond it the contents move to a new buffer and b
// is freed.
func (p *Pool) Reallocate(size int, b []byte) []byte {
	if size <= cap(b) {
		if size > len(b) {
			clear(b[len(b):size])
		}
		return b[:size]
	}
	nb := p.Allocate(size)
	copy(nb, b)
	p.Free(b)
	return nb
}

// Free recycles b when it is a pooled buffer (its capacity is a size class); other buffers
// are left to the garbage collector.
func (p *Pool) Free(b []byte) {
	n := cap(b)
	c, ok := class(n)
	if !ok || n != 1<<(c+minClassShift) {
		return
	}
	if p.Poison {
		b = b[:n]
		for i := range b {
			b[i] = PoisonByte
		}
	}
	p.classes[c].Put(unsafe.Pointer(unsafe.SliceData(b[:1])))
}
