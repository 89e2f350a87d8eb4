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
