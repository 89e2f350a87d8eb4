package freelist

import (
	"runtime"
	"testing"
)

// TestBoundsAndOrder checks that a List keeps at most its count and bytes, hands back the value
// put last first, and keeps its values through garbage collections (what sync.Pool does not).
func TestBoundsAndOrder(t *testing.T) {
	l := New[*[]byte](3, 100)
	mk := func(n int) *[]byte { b := make([]byte, n); return &b }
	a, b, c, d := mk(10), mk(20), mk(30), mk(5)
	for i, v := range []*[]byte{a, b, c} {
		if !l.Put(v, len(*v)) {
			t.Fatalf("put %d refused", i)
		}
	}
	if l.Put(d, 5) {
		t.Fatal("a fourth value was kept by a list of three")
	}
	if n, held := l.Held(); n != 3 || held != 60 {
		t.Fatalf("held %d values of %d bytes, want 3 of 60", n, held)
	}
	runtime.GC()
	runtime.GC()
	for _, want := range []*[]byte{c, b, a} {
		got, ok := l.Get()
		if !ok || got != want {
			t.Fatalf("got %p (%v), want %p", got, ok, want)
		}
	}
	if _, ok := l.Get(); ok {
		t.Fatal("an empty list returned a value")
	}
	if !l.Put(mk(100), 100) || l.Put(mk(1), 1) {
		t.Fatal("the byte bound: 100 bytes fit a list of 100, one more does not")
	}
	if n, held := l.Held(); n != 1 || held != 100 {
		t.Fatalf("held %d values of %d bytes, want 1 of 100", n, held)
	}
}
