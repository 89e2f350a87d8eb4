package archive

import (
	"container/list"
	"sync"
)

// lru is a bounded least-recently-used map from object keys to immutable values, bounded by
// entry count and by a caller-supplied size. It is safe for concurrent use. Entries are only
// ever added after a successful load and validation: failures are never cached.
type lru[V any] struct {
	mu         sync.Mutex
	maxEntries int
	maxBytes   int64
	bytes      int64
	order      *list.List // front = most recently used; elements hold *lruEntry[V]
	entries    map[string]*list.Element
}

type lruEntry[V any] struct {
	key   string
	value V
	size  int64
}

// newLRU returns a cache of at most maxEntries entries and maxBytes total size (maxBytes <= 0:
// no size bound). maxEntries <= 0 disables the cache.
func newLRU[V any](maxEntries int, maxBytes int64) *lru[V] {
	return &lru[V]{maxEntries: maxEntries, maxBytes: maxBytes, order: list.New(), entries: map[string]*list.Element{}}
}

func (c *lru[V]) get(key string) (V, bool) {
	var zero V
	if c.maxEntries <= 0 {
		return zero, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok {
		return zero, false
	}
	c.order.MoveToFront(e)
	return e.Value.(*lruEntry[V]).value, true
}

func (c *lru[V]) put(key string, value V, size int64) {
	if c.maxEntries <= 0 || (c.maxBytes > 0 && size > c.maxBytes) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[key]; ok {
		old := e.Value.(*lruEntry[V])
		c.bytes += size - old.size
		old.value, old.size = value, size
		c.order.MoveToFront(e)
	} else {
		c.entries[key] = c.order.PushFront(&lruEntry[V]{key: key, value: value, size: size})
		c.bytes += size
	}
	for len(c.entries) > c.maxEntries || (c.maxBytes > 0 && c.bytes > c.maxBytes) {
		last := c.order.Back()
		ent := last.Value.(*lruEntry[V])
		c.order.Remove(last)
		delete(c.entries, ent.key)
		c.bytes -= ent.size
	}
}
