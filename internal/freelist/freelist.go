// Package freelist keeps reusable values (scratch buffers, decoders) across garbage
// collections, within a bound.
//
// A sync.Pool is emptied by every two garbage collections, and a server running at its soft
// memory limit collects often: measured on bench's BenchmarkAnalytical fixture (3M flights,
// 1,338 archived buckets) under serve's default 40 MiB limit, count(*) WHERE
// (value->>'delay')::int > 60 ran 66 collections a query, so the archive reader's page
// scratch, its zstd decoders and the JSON extraction's scratch, pooled in sync.Pools, were
// made anew for most buckets (docs/architecture.md, "Decisions and why", 3 and 4). A List
// keeps at most a fixed number of values and a fixed sum of their sizes; what it holds is live
// heap to the collector and counts against the process's memory limit, so its bounds are
// small: a few values per core.
package freelist

import "sync"

// List holds up to max values of T whose sizes (as the caller counts them) sum to at most
// maxBytes. The zero List holds nothing; make one with New. Safe for concurrent use.
type List[T any] struct {
	mu       sync.Mutex
	items    []T
	sizes    []int
	held     int
	max      int
	maxBytes int
}

// New returns a List keeping at most max values and maxBytes bytes of them (maxBytes <= 0:
// no bound on bytes).
func New[T any](max, maxBytes int) *List[T] {
	return &List[T]{max: max, maxBytes: maxBytes}
}

// Get returns the value most recently put, and false when the list is empty.
func (l *List[T]) Get() (T, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var v T
	n := len(l.items)
	if n == 0 {
		return v, false
	}
	v = l.items[n-1]
	l.items[n-1] = *new(T)
	l.held -= l.sizes[n-1]
	l.items, l.sizes = l.items[:n-1], l.sizes[:n-1]
	return v, true
}

// Put keeps v, of size bytes, unless the list is full or v would take it past its byte
// bound; it reports whether v was kept (a value not kept is left to the garbage collector).
func (l *List[T]) Put(v T, size int) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.items) >= l.max || (l.maxBytes > 0 && l.held+size > l.maxBytes) {
		return false
	}
	l.items = append(l.items, v)
	l.sizes = append(l.sizes, size)
	l.held += size
	return true
}

// Held returns the values held and the sum of their sizes.
func (l *List[T]) Held() (n, bytes int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.items), l.held
}
