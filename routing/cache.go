package routing

import (
	"container/list"
	"sync"
)

// RouteCache remembers archived routes (manifest keys) per bucket so that reads of archived
// buckets need no database access. Hot and archiving observations are never cached: only the
// terminal archived state is (docs/pulpitum-v4.md §3.2). When full, the entry observed
// longest ago is evicted. A RouteCache is safe for concurrent use; the zero value is not usable,
// use NewRouteCache.
type RouteCache struct {
	mu      sync.RWMutex // read-locked by lookups (Archived, Len), which do not reorder
	max     int
	order   *list.List // of string cache keys, oldest first
	entries map[string]cacheEntry
}

type cacheEntry struct {
	manifestKey string
	// route and generation are RouteID and ManifestGeneration of manifestKey, computed once
	// (the pins of a plan and their checks read them per bucket).
	route      string
	generation int64
	elem       *list.Element
}

// DefaultRouteCacheEntries is the reference's route-cache bound.
const DefaultRouteCacheEntries = 4096

// NewRouteCache returns a cache holding at most max entries; max <= 0 disables caching.
func NewRouteCache(max int) *RouteCache {
	return &RouteCache{max: max, order: list.New(), entries: map[string]cacheEntry{}}
}

// Archived returns the cached manifest key of b, if any.
func (c *RouteCache) Archived(b BucketID) (string, bool) {
	if c == nil || c.max <= 0 {
		return "", false
	}
	e, ok := c.archived(b)
	return e.manifestKey, ok
}

// archived returns b's cached entry, if any.
func (c *RouteCache) archived(b BucketID) (cacheEntry, bool) {
	if c == nil || c.max <= 0 {
		return cacheEntry{}, false
	}
	var buf [128]byte
	k := b.AppendCacheKey(buf[:0])
	c.mu.RLock()
	e, ok := c.entries[string(k)]
	c.mu.RUnlock()
	return e, ok
}

// PutArchived records that b is archived under manifestKey.
func (c *RouteCache) PutArchived(b BucketID, manifestKey string) {
	if c == nil || c.max <= 0 || manifestKey == "" {
		return
	}
	k := b.CacheKey()
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[k]; ok {
		c.order.Remove(e.elem)
	}
	for len(c.entries) >= c.max {
		oldest := c.order.Front()
		c.order.Remove(oldest)
		delete(c.entries, oldest.Value.(string))
	}
	c.entries[k] = cacheEntry{manifestKey: manifestKey, route: RouteID(manifestKey), generation: ManifestGeneration(manifestKey), elem: c.order.PushBack(k)}
}

// Invalidate forgets b; the archiver calls it around every transition of b.
func (c *RouteCache) Invalidate(b BucketID) {
	if c == nil || c.max <= 0 {
		return
	}
	k := b.CacheKey()
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[k]; ok {
		c.order.Remove(e.elem)
		delete(c.entries, k)
	}
}

// Len returns the number of cached routes.
func (c *RouteCache) Len() int {
	if c == nil {
		return 0
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.entries)
}
