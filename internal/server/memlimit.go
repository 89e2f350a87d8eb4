package server

import (
	"math"
	"runtime/debug"
	"sync"
)

// memoryLimit manages the Go runtime's soft memory limit (debug.SetMemoryLimit) for the
// process: base bytes, plus perStream bytes for every DoGet stream in flight beyond the first.
//
// Without a limit the collector lets the heap grow to twice what was live at the end of the
// previous cycle (GOGC=100), and the scavenger returns freed pages lazily: serving one
// ordered scan, the process held about 2.5 times the batches the scan had in flight. The
// limit makes the collector run earlier and return pages sooner when memory approaches it.
// It is soft: a process that holds more than the limit keeps working, with the collector
// running more often (the runtime caps it at about half the CPU). Growing the limit with the
// streams in flight keeps concurrent queries, which hold more, from reaching that regime.
type memoryLimit struct {
	base, perStream int64
	prev            int64 // the limit before Start, restored by Close

	mu      sync.Mutex
	streams int
	closed  bool
}

// newMemoryLimit applies base (bytes, > 0) and returns the limit, or nil when base is not
// positive (the runtime's limit, GOMEMLIMIT or none, is left alone).
func newMemoryLimit(base, perStream int64) *memoryLimit {
	if base <= 0 {
		return nil
	}
	m := &memoryLimit{base: base, perStream: max(perStream, 0)}
	m.prev = debug.SetMemoryLimit(base)
	return m
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
	debug.SetMemoryLimit(limitFor(m.base, m.perStream, m.streams))
}

// limitFor returns base plus perStream for every stream beyond the first, saturating.
func limitFor(base, perStream int64, streams int) int64 {
	extra := int64(max(streams-1, 0))
	if extra > 0 && perStream > (math.MaxInt64-base)/extra {
		return math.MaxInt64
	}
	return base + perStream*extra
}

// restore puts back the limit the process had before.
func (m *memoryLimit) restore() {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	debug.SetMemoryLimit(m.prev)
}
