package archive

import (
	"container/list"
	"hash/maphash"
	"sync"
)

// lru is a bounded least-recently-used map from object keys to immutable values, bounded by
// entry count and by a caller-supplied size. It is safe for concurrent use. Entries are only
// ever added after a successful load and validation: failures are never cached.
type lru[V any] struct {
	// mu is read-locked by hits that need not move their entry (see get), locked otherwise.
	mu         sync.RWMutex
	maxEntries int
	maxBytes   int64
	bytes      int64
	order      *list.List // front = most recently used; elements hold *lruEntry[V]
	entries    map[string]*list.Element
	// freq, when set, is the admission policy (withAdmission): a key enters a full cache
	// only when it was asked for more often than every entry it would evict.
	freq *sketch
	// moves counts the entries put or moved to the front (under mu locked).
	moves uint64
}

type lruEntry[V any] struct {
	key   string
	value V
	size  int64
	// moved is lru.moves when the entry was last put or moved to the front (written with mu
	// locked, read with it read-locked).
	moved uint64
}

// newLRU returns a cache of at most maxEntries entries and maxBytes total size (maxBytes <= 0:
// no size bound). maxEntries <= 0 disables the cache.
func newLRU[V any](maxEntries int, maxBytes int64) *lru[V] {
	return &lru[V]{maxEntries: maxEntries, maxBytes: maxBytes, order: list.New(), entries: map[string]*list.Element{}}
}

// withAdmission gives c a frequency-based admission policy (TinyLFU's, without its window):
// every get counts its key in a count-min sketch of recent requests (counts halved as the
// requests reach ten times the sketch's width), and a put that would evict entries is refused
// unless its key was asked for clearly more often than each entry it would evict (admit). Under a cyclic scan
// of more keys than the cache holds, LRU evicts every entry before it is asked for again
// (nothing hits); with admission the entries cached first stay and answer on every cycle
// (measured on bench's BenchmarkAnalytical fixture, 1,332 archived buckets of which about 320
// footers fit the default bound: each of issue 19's JSON queries read 1,332 objects under LRU,
// one footer load per bucket, and 1,013 with admission). Returns c.
func (c *lru[V]) withAdmission() *lru[V] {
	if c.maxEntries > 0 {
		c.freq = newSketch(4 * c.maxEntries)
	}
	return c
}

// get returns key's value. A hit moves its entry to the front unless the entry was put or
// moved there within the last quarter of maxEntries moves: such an entry is still far from
// eviction (at least three quarters of the cache would have to be put or moved in front of it),
// so the hit takes the read lock only and concurrent hits do not serialise (an archived
// query asks the manifest of each of its buckets: bench's BenchmarkGroupedCount asks 1,374 at a
// time, from the fan-out's goroutines). A cache with an admission policy counts every get, so
// it always locks.
func (c *lru[V]) get(key string) (V, bool) {
	var zero V
	if c.maxEntries <= 0 {
		return zero, false
	}
	if c.freq == nil {
		c.mu.RLock()
		e, ok := c.entries[key]
		if !ok {
			c.mu.RUnlock()
			return zero, false
		}
		ent := e.Value.(*lruEntry[V])
		v, fresh := ent.value, c.moves-ent.moved < uint64(max(c.maxEntries/4, 1))
		c.mu.RUnlock()
		if fresh {
			return v, true
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.freq != nil {
		c.freq.add(key)
	}
	e, ok := c.entries[key]
	if !ok {
		return zero, false
	}
	c.moveToFront(e)
	return e.Value.(*lruEntry[V]).value, true
}

// moveToFront moves e to the front and stamps it (c.mu is held).
func (c *lru[V]) moveToFront(e *list.Element) {
	c.order.MoveToFront(e)
	c.moves++
	e.Value.(*lruEntry[V]).moved = c.moves
}

// put stores value under key (replacing an entry of the key), evicting the least recently
// used entries beyond the bounds, unless the admission policy refuses it; it reports whether
// value was stored (it may have been evicted again at once when it alone passes the bounds).
func (c *lru[V]) put(key string, value V, size int64) bool {
	if c.maxEntries <= 0 || (c.maxBytes > 0 && size > c.maxBytes) {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[key]; ok {
		old := e.Value.(*lruEntry[V])
		c.bytes += size - old.size
		old.value, old.size = value, size
		c.moveToFront(e)
	} else {
		if c.freq != nil && !c.admit(key, size) {
			return false
		}
		c.moves++
		c.entries[key] = c.order.PushFront(&lruEntry[V]{key: key, value: value, size: size, moved: c.moves})
		c.bytes += size
	}
	for len(c.entries) > c.maxEntries || (c.maxBytes > 0 && c.bytes > c.maxBytes) {
		last := c.order.Back()
		ent := last.Value.(*lruEntry[V])
		c.order.Remove(last)
		delete(c.entries, ent.key)
		c.bytes -= ent.size
	}
	return true
}

// admit reports whether a new entry of key and size may enter: true when it fits without
// evicting, or when its key's count is at least two above that of every entry it would evict
// (least recently used first). Two, not one: in a cyclic scan the least recently used entry is
// one the current cycle has not asked for yet, one count behind a key the cycle has just asked
// for; a margin of one would admit every such key, each evicting the next (LRU's thrashing).
// c.mu is held.
func (c *lru[V]) admit(key string, size int64) bool {
	n, bytes := len(c.entries)+1, c.bytes+size
	want := c.freq.count(key)
	for e := c.order.Back(); e != nil && (n > c.maxEntries || (c.maxBytes > 0 && bytes > c.maxBytes)); e = e.Prev() {
		v := e.Value.(*lruEntry[V])
		if c.freq.count(v.key)+1 >= want {
			return false
		}
		n--
		bytes -= v.size
	}
	return true
}

// sketch is a count-min sketch of 4 rows of 4-bit-range counters (saturating at 15), halved
// once the increments since the last halving reach ten times its width. Not safe for
// concurrent use (the lru's mutex guards it).
type sketch struct {
	seed  maphash.Seed
	rows  [4][]uint8
	mask  uint64
	added int
	reset int
}

func newSketch(width int) *sketch {
	w := 64
	for w < width {
		w <<= 1
	}
	s := &sketch{seed: maphash.MakeSeed(), mask: uint64(w - 1), reset: 10 * w}
	for i := range s.rows {
		s.rows[i] = make([]uint8, w)
	}
	return s
}

func (s *sketch) index(h uint64, i int) uint64 {
	return (h + uint64(i)*((h>>32)|1)) & s.mask
}

func (s *sketch) add(key string) {
	h := maphash.String(s.seed, key)
	for i := range s.rows {
		if c := &s.rows[i][s.index(h, i)]; *c < 15 {
			*c++
		}
	}
	if s.added++; s.added >= s.reset {
		s.added = 0
		for i := range s.rows {
			for j := range s.rows[i] {
				s.rows[i][j] >>= 1
			}
		}
	}
}

func (s *sketch) count(key string) uint8 {
	h := maphash.String(s.seed, key)
	m := uint8(15)
	for i := range s.rows {
		m = min(m, s.rows[i][s.index(h, i)])
	}
	return m
}
