package archive

import (
	"fmt"
	"testing"
)

// cyclicHits runs rounds of a cyclic scan of keys keys (get, put on a miss) over c and returns
// the hits of the rounds after the first.
func cyclicHits(c *lru[int], keys, rounds int) int {
	hits := 0
	for r := range rounds {
		for k := range keys {
			key := fmt.Sprintf("records-%04d.parquet", k)
			if _, ok := c.get(key); ok {
				if r > 0 {
					hits++
				}
				continue
			}
			c.put(key, k, 10)
		}
	}
	return hits
}

// TestLRUAdmissionCyclicScan: a cyclic scan of 1,332 keys over a cache holding 300 (BenchmarkAnalytical's
// footers) never hits under plain LRU and hits about the cache's size per cycle with admission;
// both keep their bounds.
func TestLRUAdmissionCyclicScan(t *testing.T) {
	plain := newLRU[int](1024, 3000)
	if h := cyclicHits(plain, 1332, 4); h != 0 {
		t.Fatalf("plain LRU hit %d times on a cyclic scan", h)
	}
	adm := newLRU[int](1024, 3000).withAdmission()
	h := cyclicHits(adm, 1332, 4)
	if h < 3*250 {
		t.Fatalf("with admission: %d hits over 3 cycles, want about 3×300", h)
	}
	if adm.bytes > 3000 || len(adm.entries) > 300 {
		t.Fatalf("bound: %d bytes, %d entries", adm.bytes, len(adm.entries))
	}
	// A key asked for more often than the residents replaces the least recently used one.
	for range 10 {
		adm.get("hot")
	}
	adm.put("hot", 1, 10)
	if _, ok := adm.get("hot"); !ok {
		t.Fatal("a frequent key was refused")
	}
	// Not full: always admitted.
	small := newLRU[int](10, 0).withAdmission()
	small.put("a", 1, 1)
	if _, ok := small.get("a"); !ok {
		t.Fatal("refused while not full")
	}
}

// TestLRUHitsKeepRecentEntries: a key asked for between puts is never evicted although hits
// of entries put or moved recently do not move them again, a key never asked for again is,
// and concurrent hits and puts keep the bounds (run with -race).
func TestLRUHitsKeepRecentEntries(t *testing.T) {
	c := newLRU[int](8, 0)
	c.put("hot", 0, 1)
	for i := range 100 {
		if _, ok := c.get("hot"); !ok {
			t.Fatalf("the key asked for before put %d was evicted", i)
		}
		c.put(fmt.Sprintf("k%d", i), i, 1)
	}
	if _, ok := c.get("k0"); ok {
		t.Fatal("a key put 99 puts ago in a cache of 8 is still there")
	}
	if len(c.entries) != 8 || c.order.Len() != 8 {
		t.Fatalf("%d entries, %d in order, want 8", len(c.entries), c.order.Len())
	}
	done := make(chan struct{})
	for g := range 4 {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := range 2000 {
				k := fmt.Sprintf("c%d", (i*7+g)%16)
				if _, ok := c.get(k); !ok {
					c.put(k, i, 1)
				}
			}
		}()
	}
	for range 4 {
		<-done
	}
	if len(c.entries) > 8 || len(c.entries) != c.order.Len() {
		t.Fatalf("after concurrent use: %d entries, %d in order", len(c.entries), c.order.Len())
	}
}
