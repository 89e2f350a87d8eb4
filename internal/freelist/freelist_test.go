package freelist

import (
	"runtime"
	"testing"
	"time"
)

// TestBoundsAndOrder checks that a List keeps at most its count and bytes and hands back the
// value put last first.
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

// TestTrim checks the trimming policy: a trim drops the values that stayed in the list since
// the previous trim, oldest first, with their bytes, and keeps those taken since.
func TestTrim(t *testing.T) {
	l := New[int](8, 0)
	for v := range 5 {
		l.Put(v, 10)
	}
	l.trim() // the list was empty at first: nothing stayed through a whole cycle
	if n, held := l.Held(); n != 5 || held != 50 {
		t.Fatalf("first trim: held %d values of %d bytes, want 5 of 50", n, held)
	}
	v, _ := l.Get() // 4: the list went down to 4 values, so 4 stayed through the cycle
	l.Put(v, 10)
	l.Put(5, 10)
	l.trim()
	if n, held := l.Held(); n != 2 || held != 20 {
		t.Fatalf("second trim: held %d values of %d bytes, want 2 of 20", n, held)
	}
	for _, want := range []int{5, 4} {
		if got, ok := l.Get(); !ok || got != want {
			t.Fatalf("got %d (%v), want %d", got, ok, want)
		}
	}
	l.trim()
	l.trim()
	if n, _ := l.Held(); n != 0 {
		t.Fatalf("an empty list holds %d values", n)
	}
}

// TestTrimAfterCollections checks that garbage collections trim a List (TestTrim checks which
// values): values left unused are dropped within a few collections, down to the one taken and
// put back between them.
func TestTrimAfterCollections(t *testing.T) {
	l := New[*[]byte](4, 0)
	for range 3 {
		b := make([]byte, 64)
		l.Put(&b, 64)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		runtime.GC()
		time.Sleep(time.Millisecond) // let the collection's cleanup run
		v, ok := l.Get()
		if !ok { // two trims without a Get between them: the value stayed through a cycle
			b := make([]byte, 64)
			v = &b
		}
		l.Put(v, 64)
		if n, _ := l.Held(); n == 1 {
			return
		}
		if time.Now().After(deadline) {
			n, _ := l.Held()
			t.Fatalf("%d values held after collections, want the one in use", n)
		}
	}
}
