// Package freelist keeps reusable values (scratch buffers, decoders) across garbage
// collections, within a bound, for as long as they are used.
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
//
// Values that stay unused through a whole garbage collection cycle are dropped at the next
// collection, as ledger.Pool drops its idle buffers: near the memory limit the heap's room
// above what is live is only a few megabytes (issue 19's cold queries: 26 MB goal, 22 MB live
// after each collection), and a value held idle through a cycle takes its size from that room
// for the cycle, as much as allocating it again would take. Kept for good, the lists' values
// made every query of a server collect more often (bench's BenchmarkAnalytical, 3M rows: a
// grouping's scratch kept in a list raised the live heap after a collection by 0.8 MB and the
// collections of the joins and count(DISTINCT) by 10–40%).
package freelist

import (
	"runtime"
	"sync"
)

// List holds up to max values of T whose sizes (as the caller counts them) sum to at most
// maxBytes. The zero List holds nothing; make one with New. Safe for concurrent use.
type List[T any] struct {
	mu       sync.Mutex
	items    []T // oldest first
	sizes    []int
	held     int
	max      int
	maxBytes int
	low      int  // the least len(items) since the last trim
	hooked   bool // trimmed after every garbage collection (set by the first Put)
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
	l.low = min(l.low, n-1)
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
	if !l.hooked {
		l.hooked = true
		register(l)
	}
	return true
}

// Held returns the values held and the sum of their sizes.
func (l *List[T]) Held() (n, bytes int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.items), l.held
}

// trim drops the values that stayed in the list since the previous trim (the least the list
// held since then), oldest first.
func (l *List[T]) trim() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if drop := min(l.low, len(l.items)); drop > 0 {
		for _, s := range l.sizes[:drop] {
			l.held -= s
		}
		k := copy(l.items, l.items[drop:])
		clear(l.items[k:])
		l.items = l.items[:k]
		l.sizes = l.sizes[:copy(l.sizes, l.sizes[drop:])]
	}
	l.low = len(l.items)
}

// trimmer is a List of any type.
type trimmer interface{ trim() }

// lists are the Lists trimmed after every garbage collection: every List once a value was put
// in it (Lists are package-level variables, kept for the life of the process).
var lists struct {
	sync.Mutex
	all  []trimmer
	once sync.Once
}

// register adds l to the lists trimmed after every collection, starting the trimming the
// first time.
func register(l trimmer) {
	lists.Lock()
	lists.all = append(lists.all, l)
	lists.Unlock()
	lists.once.Do(armTrim)
}

// armTrim trims every registered List once the next garbage collection has run: a cleanup on
// an unreachable sentinel runs once the collector has found it so, and arms the next one.
func armTrim() {
	sentinel := &struct{ _ *byte }{} // holds a pointer: never tiny-allocated with others
	runtime.AddCleanup(sentinel, func(struct{}) {
		lists.Lock()
		all := append([]trimmer(nil), lists.all...)
		lists.Unlock()
		for _, l := range all {
			l.trim()
		}
		armTrim()
	}, struct{}{})
}
