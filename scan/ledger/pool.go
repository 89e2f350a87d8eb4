package ledger

import (
	"math/bits"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"
	"weak"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Pool is a memory.Allocator that recycles the buffers released to it: allocations of
// MinPooledBytes to MaxPooledBytes bytes are rounded up to a size class (four per power of two:
// 5/8, 6/8, 7/8 and 8/8 of it, so a buffer wastes less than a quarter of its size) and served
// from a free list of that class when one was freed before, so a streaming query decodes its
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
// (memory.Buffer does so) and never touched after. Buffers not freed are reclaimed by the
// garbage collector, as with memory.GoAllocator.
//
// The free lists are bounded: together they hold at most MaxFree bytes (the size of the
// classes' buffers); a buffer freed beyond that is left to the garbage collector. They are
// plain lists, not sync.Pools: a sync.Pool is emptied by every two garbage collections, and a
// process running near its soft memory limit collects often, so its scans re-allocated (and
// the runtime zeroed) most of their buffers and collected more often still (measured with
// make bench: a fifth of the archived scan's throughput at the default --go-memory-limit). What
// the lists hold is live heap to the collector and counts against the process's memory limit:
// set MaxFree inside it (server does). Buffers that stay unused through a whole
// garbage collection cycle (the least a list held since the previous cycle) are dropped at the
// next one, so an idle process gives them back within two cycles (the runtime forces one at
// least every two minutes).
//
// Safe for concurrent use. The zero Pool is ready to use, with DefaultMaxFree.
type Pool struct {
	// Poison, set before the Pool's first use, fills every buffer Free recycles with
	// PoisonByte, so that a reader still using a buffer after its last Release reads garbage
	// rather than the plausible bytes it held (tests set it; it costs a write of every
	// recycled byte).
	Poison bool

	maxFree atomic.Int64 // bytes; 0: DefaultMaxFree, < 0: nothing is kept
	held    atomic.Int64 // bytes in the free lists
	fresh   atomic.Int64 // bytes of pooled sizes allocated from the Go heap
	reused  atomic.Int64 // bytes of pooled sizes served from the free lists
	hook    sync.Once    // starts the trimming at garbage collections

	classes [numClasses]freeList
}

// freeList holds the recycled buffers of one size class, most recently freed last.
type freeList struct {
	mu   sync.Mutex
	bufs []unsafe.Pointer // first byte of each buffer
	low  int              // the least len(bufs) since the last trim
}

// PoisonByte is what a poisoning Pool writes over recycled buffers.
const PoisonByte = 0xa5

const (
	// MinPooledBytes and MaxPooledBytes are the sizes a Pool recycles; outside them a buffer
	// is a plain Go allocation. Analytical reads of archived buckets of a few hundred rows
	// (bench's BenchmarkAnalytical) allocate most of their Arrow buffers below 4 KiB, the
	// bound before: recycling from 512 bytes cut the heap they allocated per query by about
	// a twentieth and made them about a tenth faster under the default memory limit.
	MinPooledBytes = 512
	MaxPooledBytes = 64 << 20
	// DefaultMaxFree is the bytes a Pool's free lists hold at most unless SetMaxFree says
	// otherwise: about what ORD's ordered scan keeps in flight (see bench/doc.go).
	DefaultMaxFree = 16 << 20
	// Classes are m<<k bytes for m in 5..8: minShift is k of MinPooledBytes (8<<6), maxShift
	// k of MaxPooledBytes (8<<23).
	minShift   = 6
	maxShift   = 23
	numClasses = (maxShift-minShift+1)*4 - 3 // MinPooledBytes is the first class: m = 8 at minShift
	alignment  = 64
)

var _ memory.Allocator = (*Pool)(nil)

// DefaultPool is the process's recycling allocator: the default parent of the query engine's
// ledgers.
var DefaultPool = &Pool{}

// SetMaxFree bounds the bytes the free lists hold (n <= 0: none are kept, every Free leaves
// its buffer to the garbage collector). Lists already beyond the new bound shrink as buffers
// are taken or trimmed. Safe to call at any time.
func (p *Pool) SetMaxFree(n int64) {
	if n <= 0 {
		n = -1
	}
	p.maxFree.Store(n)
}

// MaxFree returns the bound on the bytes the free lists hold (0 when none are kept).
func (p *Pool) MaxFree() int64 {
	switch n := p.maxFree.Load(); {
	case n == 0:
		return DefaultMaxFree
	case n < 0:
		return 0
	default:
		return n
	}
}

// PoolStats is what a Pool did so far: bytes of pooled sizes (counted at their class size)
// that Allocate took from the Go heap (Fresh) and from its free lists (Reused), and the bytes
// the free lists hold now (Held).
type PoolStats struct {
	Fresh, Reused, Held int64
}

// Stats returns what the Pool did so far.
func (p *Pool) Stats() PoolStats {
	return PoolStats{Fresh: p.fresh.Load(), Reused: p.reused.Load(), Held: p.held.Load()}
}

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
func (p *Pool) Allocate(size int) []byte { return p.allocate(size, true) }

// AllocateUninit is Allocate without clearing a recycled buffer: its bytes are whatever the
// buffer held before (PoisonByte in a poisoning Pool). Only for a caller that writes every
// byte before anything reads it; a fresh buffer still comes zeroed from the Go heap.
func (p *Pool) AllocateUninit(size int) []byte { return p.allocate(size, false) }

func (p *Pool) allocate(size int, zero bool) []byte {
	_, n, ok := class(size)
	if !ok {
		return goAllocate(size, size)
	}
	if b := p.get(size); b != nil {
		if zero {
			clear(b)
		}
		p.reused.Add(int64(n))
		return b
	}
	p.fresh.Add(int64(n))
	return goAllocate(size, n)[:size:size]
}

// get returns a recycled buffer of size's class, resliced to size (capacity size), or nil.
func (p *Pool) get(size int) []byte {
	c, n, _ := class(size)
	l := &p.classes[c]
	l.mu.Lock()
	k := len(l.bufs)
	if k == 0 {
		l.mu.Unlock()
		return nil
	}
	ptr := l.bufs[k-1]
	l.bufs[k-1] = nil
	l.bufs = l.bufs[:k-1]
	l.low = min(l.low, k-1)
	l.mu.Unlock()
	p.held.Add(-int64(n))
	return unsafe.Slice((*byte)(ptr), n)[:size:size]
}

// goAllocate returns a zeroed buffer of size bytes and capacity n ≥ size, 64-byte aligned.
// The Go heap places a large object (over 32 KiB) at the start of its own pages and a small
// one at a multiple of its size class from its span's start, so a buffer of n bytes is
// aligned already from 512 bytes on; only one that is not is allocated again with room to
// align it.
// Padding every buffer cost a whole extra page for each class of 32 KiB or more, a multiple
// of the page size (a 112 KiB span column took 120 KiB of heap), which under the soft memory
// limit is that much sooner a garbage collection.
func goAllocate(size, n int) []byte {
	if n >= MinPooledBytes {
		// (Below, size classes are not all multiples of 64 and tiny objects share blocks.)
		if buf := make([]byte, n); uintptr(unsafe.Pointer(unsafe.SliceData(buf)))%alignment == 0 {
			return buf[:size:n]
		}
	}
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
//
// A shrink below b's class moves the contents into a recycled buffer of the smaller class when
// its free list has one (or into a plain Go allocation when size is below the pooled sizes), and
// frees b into its own class. arrow-go's builders reserve a power of two of elements and shrink
// their buffers to the rows appended when they build the array: resliced in place, b would be
// freed into the smaller class of its new capacity, the lists of the classes builders ask for
// would stay empty, and every builder would allocate from the heap. Measured on bench's
// BenchmarkAnalytical fixture (3M rows, cold), the numeric sum's decimal builders took 157 MB a
// query from the heap and ran about 80 collections under the default 40 MiB limit.
func (p *Pool) Reallocate(size int, b []byte) []byte {
	if size <= cap(b) {
		if nb := p.moveDown(size, b); nb != nil {
			return nb
		}
		return b[:size:size]
	}
	if size <= room(b) {
		nb := unsafe.Slice(unsafe.SliceData(b), room(b))[:size:size]
		clear(nb[len(b):])
		return nb
	}
	nb := p.allocate(size, false)
	clear(nb[copy(nb, b):])
	p.Free(b)
	return nb
}

// moveDown returns b's first size bytes (size <= cap(b)) moved into a buffer of a smaller
// class than b's, freeing b, or nil to reslice b in place: when b is not pooled, size is of
// b's class, or size's class has no recycled buffer.
func (p *Pool) moveDown(size int, b []byte) []byte {
	cb, _, ok := class(cap(b))
	if !ok {
		return nil
	}
	var nb []byte
	if size < MinPooledBytes {
		if size == 0 {
			return nil
		}
		nb = goAllocate(size, size)
	} else {
		if cs, n, _ := class(size); cs == cb {
			return nil
		} else if nb = p.get(size); nb == nil {
			return nil
		} else {
			p.reused.Add(int64(n))
		}
	}
	copy(nb, b[:size])
	p.Free(b)
	return nb
}

// Free recycles b when it is a pooled buffer (its capacity falls in a size class) and the
// free lists have room for it, in the class of its capacity; other buffers are left to the
// garbage collector.
func (p *Pool) Free(b []byte) {
	c, n, ok := class(cap(b))
	if !ok {
		return
	}
	if p.held.Add(int64(n)) > p.MaxFree() {
		p.held.Add(-int64(n))
		return
	}
	p.hook.Do(p.startTrimming)
	full := unsafe.Slice(unsafe.SliceData(b), n)
	if p.Poison {
		for i := range full {
			full[i] = PoisonByte
		}
	}
	l := &p.classes[c]
	l.mu.Lock()
	l.bufs = append(l.bufs, unsafe.Pointer(unsafe.SliceData(full)))
	l.mu.Unlock()
}

// trim drops, in every class, the buffers that stayed in the list since the previous trim
// (the least the list held since then), oldest first.
func (p *Pool) trim() {
	for c := range p.classes {
		l := &p.classes[c]
		l.mu.Lock()
		drop := min(l.low, len(l.bufs))
		if drop > 0 {
			k := copy(l.bufs, l.bufs[drop:])
			clear(l.bufs[k:])
			l.bufs = l.bufs[:k]
			if cap(l.bufs) > 4*max(k, 16) {
				l.bufs = append([]unsafe.Pointer(nil), l.bufs...)
			}
		}
		l.low = len(l.bufs)
		l.mu.Unlock()
		if drop > 0 {
			p.held.Add(-int64(drop * classSize(c)))
		}
	}
}

// classSize returns the size of class c.
func classSize(c int) int {
	if c == 0 {
		return MinPooledBytes
	}
	k, m := minShift+(c+3)/4, 5+(c+3)%4
	return m << k
}

// startTrimming calls trim after every garbage collection for as long as p is reachable: a
// cleanup on an unreachable sentinel runs once the collector has found it so, and arms the
// next one. It holds p weakly, so an unreachable Pool stops trimming.
func (p *Pool) startTrimming() { armTrim(weak.Make(p)) }

func armTrim(wp weak.Pointer[Pool]) {
	sentinel := &struct{ _ *byte }{} // holds a pointer: never tiny-allocated with others
	runtime.AddCleanup(sentinel, func(wp weak.Pointer[Pool]) {
		if p := wp.Value(); p != nil {
			p.trim()
			armTrim(wp)
		}
	}, wp)
}
