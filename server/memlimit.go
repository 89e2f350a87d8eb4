package server

import (
	"math"
	"runtime/debug"
	"sync"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flightsrv/flightsrv/scan/ledger"
)

// memoryLimit manages the Go runtime's soft memory limit (debug.SetMemoryLimit) for the
// process: base bytes, plus perStream bytes for every DoGet stream in flight beyond the first
// but never more than maxExtra bytes in all; and the bound on what the query engine's
// recycling allocator (ledger.Pool) keeps in its free lists: freeShare of the limit.
//
// Without a limit the collector lets the heap grow to twice what was live at the end of the
// previous cycle (GOGC=100), and the scavenger returns freed pages lazily: serving one
// ordered scan, the process held about 2.5 times the batches the scan had in flight. The
// limit makes the collector run earlier and return pages sooner when memory approaches it.
// It is soft: a process that holds more than the limit keeps working, with the collector
// running more often (the runtime caps it at about half the CPU). Growing the limit with the
// streams in flight keeps concurrent queries, which hold more, from reaching that regime.
//
// What the streams hold beyond the runtime's base is mostly their queries' batches, which
// --total-query-memory bounds (query.Options.TotalQueryMemory): past that bound more streams
// add next to nothing live, and a limit that kept growing with them only let garbage pile up.
// So the growth stops at maxExtra, the engine's total query memory. Measured with e2e's
// TestMemoryAttacks (four 1 MB literals and an ordinary scan under a 64 MiB total): the live
// heap peaked at 86 MB, the heap at 112 MB under an uncapped limit of 168 MiB.
//
// The pool's free lists are live heap to the collector, so they are bounded inside the limit:
// a scan then decodes into the buffers the batches before it released, allocates next to
// nothing, and the collector seldom runs although the heap sits near the limit.
type memoryLimit struct {
	base, perStream int64
	maxExtra        int64        // bound on perStream's growth in all; <= 0: none
	prev            int64        // the limit before Start, restored by Close
	pool            *ledger.Pool // nil: no pool to bound
	prevFree        int64        // the pool's bound before Start, restored by Close

	mu      sync.Mutex
	streams int
	closed  bool
}

// freeShare is the part of the memory limit a ledger.Pool's free lists may hold: measured with
// make bench's ordered scan of ORD's archived history under the default 40 MiB limit, the
// query kept 7–9 MB of batches in flight and the free lists settled at 11–13 MB when allowed
// 16 MiB, after which no buffer was allocated from the heap; allowing 8 MiB left a collection
// per query, allowing 24 MiB gained nothing.
const freeShare = 0.4

// newMemoryLimit applies base (bytes, > 0) and bounds pool's free lists (pool may be nil)
// accordingly, and returns the limit, or nil when base is not positive (the runtime's limit,
// GOMEMLIMIT or none, and the pool's bound are left alone). The streams add at most maxExtra
// bytes to base (<= 0: no bound).
func newMemoryLimit(base, perStream, maxExtra int64, pool *ledger.Pool) *memoryLimit {
	if base <= 0 {
		return nil
	}
	m := &memoryLimit{base: base, perStream: max(perStream, 0), maxExtra: maxExtra, pool: pool}
	if pool != nil {
		m.prevFree = pool.MaxFree()
	}
	m.prev = debug.SetMemoryLimit(base)
	m.boundPool(base)
	return m
}

// boundPool bounds the pool's free lists to freeShare of limit; with no limit (math.MaxInt64)
// the pool keeps the bound it had.
func (m *memoryLimit) boundPool(limit int64) {
	if m.pool == nil {
		return
	}
	if limit == math.MaxInt64 {
		m.pool.SetMaxFree(m.prevFree)
		return
	}
	m.pool.SetMaxFree(int64(float64(limit) * freeShare))
}

// begin counts a stream in; end counts it out. Both are no-ops on a nil limit.
func (m *memoryLimit) begin() { m.add(1) }
func (m *memoryLimit) end()   { m.add(-1) }

func (m *memoryLimit) add(d int) {
	if m == nil || m.perStream == 0 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.streams += d
	if m.closed {
		return
	}
	l := limitFor(m.base, m.perStream, m.maxExtra, m.streams)
	debug.SetMemoryLimit(l)
	m.boundPool(l)
}

// limitFor returns base plus perStream for every stream beyond the first, at most maxExtra
// more than base when maxExtra is positive, saturating.
func limitFor(base, perStream, maxExtra int64, streams int) int64 {
	n := int64(max(streams-1, 0))
	extra := int64(math.MaxInt64)
	if n == 0 || perStream <= math.MaxInt64/n {
		extra = perStream * n
	}
	if maxExtra > 0 {
		extra = min(extra, maxExtra)
	}
	if extra > math.MaxInt64-base {
		return math.MaxInt64
	}
	return base + extra
}

// restore puts back the limit the process had before, and the pool's bound.
func (m *memoryLimit) restore() {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	debug.SetMemoryLimit(m.prev)
	if m.pool != nil {
		m.pool.SetMaxFree(m.prevFree)
	}
}

// enginePool returns the recycling allocator the query engine allocates from given the
// server's allocator (query.New: the default allocator means ledger.DefaultPool), or nil when
// it allocates from something else.
func enginePool(alloc memory.Allocator) *ledger.Pool {
	if p, ok := alloc.(*ledger.Pool); ok {
		return p
	}
	if alloc == nil || alloc == memory.DefaultAllocator {
		return ledger.DefaultPool
	}
	return nil
}
