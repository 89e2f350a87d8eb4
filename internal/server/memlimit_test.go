package server

import (
	"math"
	"runtime/debug"
	"testing"
)

func TestLimitFor(t *testing.T) {
	for _, c := range []struct {
		base, per int64
		streams   int
		want      int64
	}{
		{40, 32, 0, 40},
		{40, 32, 1, 40},
		{40, 32, 3, 104},
		{40, 0, 9, 40},
		{math.MaxInt64 - 10, 32, 2, math.MaxInt64},
		{40, math.MaxInt64, 3, math.MaxInt64},
	} {
		if got := limitFor(c.base, c.per, c.streams); got != c.want {
			t.Errorf("limitFor(%d, %d, %d) = %d, want %d", c.base, c.per, c.streams, got, c.want)
		}
	}
}

// TestMemoryLimit checks that the limit follows the streams in flight and that restore puts
// the process's previous limit back. It changes a process-wide setting: not parallel.
func TestMemoryLimit(t *testing.T) {
	prev := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(prev)
	if m := newMemoryLimit(0, 1<<20); m != nil {
		t.Fatal("a zero base manages the limit")
	}
	var none *memoryLimit
	none.begin() // a nil limit ignores streams
	none.end()
	none.restore()

	m := newMemoryLimit(256<<20, 64<<20)
	cur := func() int64 { return debug.SetMemoryLimit(-1) }
	if cur() != 256<<20 {
		t.Fatalf("limit %d after start", cur())
	}
	m.begin()
	m.begin()
	if cur() != 320<<20 {
		t.Fatalf("limit %d with two streams", cur())
	}
	m.end()
	if cur() != 256<<20 {
		t.Fatalf("limit %d with one stream", cur())
	}
	m.restore()
	if cur() != prev {
		t.Fatalf("limit %d after restore, want %d", cur(), prev)
	}
	m.end() // a stream ending after Close leaves the restored limit alone
	if cur() != prev {
		t.Fatalf("limit %d changed after restore", cur())
	}
}
