package server

import (
	"math"
	"runtime/debug"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flightsrv/flightsrv/scan/ledger"
)

func TestLimitFor(t *testing.T) {
	for _, c := range []struct {
		base, per, maxExtra int64
		streams             int
		want                int64
	}{
		{40, 32, 0, 0, 40},
		{40, 32, 0, 1, 40},
		{40, 32, 0, 3, 104},
		{40, 0, 0, 9, 40},
		{math.MaxInt64 - 10, 32, 0, 2, math.MaxInt64},
		{40, math.MaxInt64, 0, 3, math.MaxInt64},
		// The streams' growth stops at the queries' total memory.
		{40, 32, 64, 3, 104},
		{40, 32, 64, 5, 104},
		{40, 32, 100, 5, 140},
		{40, math.MaxInt64, 64, 3, 104},
		{math.MaxInt64 - 10, 32, 64, 5, math.MaxInt64},
	} {
		if got := limitFor(c.base, c.per, c.maxExtra, c.streams); got != c.want {
			t.Errorf("limitFor(%d, %d, %d, %d) = %d, want %d", c.base, c.per, c.maxExtra, c.streams, got, c.want)
		}
	}
}

// TestMemoryLimit checks that the limit follows the streams in flight and that restore puts
// the process's previous limit back. It changes a process-wide setting: not parallel.
func TestMemoryLimit(t *testing.T) {
	prev := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(prev)
	if m := newMemoryLimit(0, 1<<20, 0, nil); m != nil {
		t.Fatal("a zero base manages the limit")
	}
	var none *memoryLimit
	none.begin() // a nil limit ignores streams
	none.end()
	none.restore()

	pool := &ledger.Pool{}
	pool.SetMaxFree(3 << 20)
	m := newMemoryLimit(256<<20, 64<<20, 96<<20, pool)
	cur := func() int64 { return debug.SetMemoryLimit(-1) }
	check := func(what string, limit int64) {
		t.Helper()
		if cur() != limit {
			t.Fatalf("limit %d %s, want %d", cur(), what, limit)
		}
		if want := int64(float64(limit) * freeShare); pool.MaxFree() != want {
			t.Fatalf("pool bound %d %s, want %d", pool.MaxFree(), what, want)
		}
	}
	check("after start", 256<<20)
	m.begin()
	m.begin()
	check("with two streams", 320<<20)
	m.begin()
	m.begin()
	check("with four streams, capped by the total query memory", 352<<20)
	m.end()
	m.end()
	m.end()
	check("with one stream", 256<<20)
	m.restore()
	if cur() != prev || pool.MaxFree() != 3<<20 {
		t.Fatalf("limit %d and pool bound %d after restore, want %d and %d", cur(), pool.MaxFree(), prev, 3<<20)
	}
	m.end() // a stream ending after Close leaves the restored limit alone
	if cur() != prev || pool.MaxFree() != 3<<20 {
		t.Fatalf("limit %d and pool bound %d changed after restore", cur(), pool.MaxFree())
	}
}

// TestEnginePool: the pool the server bounds is the one the query engine allocates from.
func TestEnginePool(t *testing.T) {
	p := &ledger.Pool{}
	for _, c := range []struct {
		alloc memory.Allocator
		want  *ledger.Pool
	}{
		{nil, ledger.DefaultPool},
		{memory.DefaultAllocator, ledger.DefaultPool},
		{p, p},
		{memory.NewCheckedAllocator(memory.DefaultAllocator), nil},
	} {
		if got := enginePool(c.alloc); got != c.want {
			t.Errorf("enginePool(%T) = %p, want %p", c.alloc, got, c.want)
		}
	}
}
