package archive

import (
	"bytes"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// reallocCounter counts the Reallocate calls that move a buffer (grow it past its capacity).
type reallocCounter struct {
	memory.Allocator
	moves int
}

func (a *reallocCounter) Reallocate(size int, b []byte) []byte {
	if size > cap(b) {
		a.moves++
	}
	return a.Allocator.Reallocate(size, b)
}

// TestVarColumnGrowth: a column whose hint falls a little short grows once; one whose values
// keep growing (sizes doubling every 100 values, hint zero) moves its data a number of times
// logarithmic in its size, not once per append. Both hold exactly the values appended.
func TestVarColumnGrowth(t *testing.T) {
	for _, c := range []struct {
		name     string
		hint     int
		size     func(i int) int
		maxMoves int
	}{
		{"hint short by a little", 990 * 10, func(int) int { return 10 }, 1},
		{"values doubling", 0, func(i int) int { return 1 << (i / 100) }, 12},
	} {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		alloc := &reallocCounter{Allocator: mem}
		const rows = 1000
		col := newVarColumn(alloc, rows, c.hint)
		var want [][]byte
		for i := range rows {
			v := bytes.Repeat([]byte{byte('a' + i%26)}, c.size(i))
			want = append(want, v)
			if i%2 == 0 {
				col.append(v)
				continue
			}
			// Odd values go through appendRun, as plain pages do: one value, offsets [0, len].
			col.appendRun(v, []uint32{0, uint32(len(v))})
		}
		arr := col.finish(arrow.BinaryTypes.Binary).(*array.Binary)
		if arr.Len() != rows {
			t.Fatalf("%s: %d values", c.name, arr.Len())
		}
		for i, v := range want {
			if !bytes.Equal(arr.Value(i), v) {
				t.Fatalf("%s: value %d differs", c.name, i)
			}
		}
		if alloc.moves > c.maxMoves {
			t.Errorf("%s: data moved %d times, want at most %d", c.name, alloc.moves, c.maxMoves)
		}
		arr.Release()
		mem.AssertSize(t, 0)
	}
}

// TestVarColumnRoomIsAPowerOfTwo: a column's offsets and data start with room for what they
// were sized for, rounded up to a power of two from 512 bytes on (so that spans of buckets of
// different sizes reuse each other's buffers in the recycling allocator), and as requested
// below it.
func TestVarColumnRoomIsAPowerOfTwo(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	for _, c := range []struct{ rows, hint, offs, data int }{
		{10, 100, 64, 128},              // 44 and 100 bytes, rounded to 64 as memory.Buffer does
		{200, 5000, 1024, 8192},         // 804 → 1,024; 5,000 → 8,192
		{2240, 112000, 16384, 131072},   // an average bucket of the analytical fixture
		{8191, 1 << 20, 32768, 1 << 20}, // 32,768 bytes of offsets; a power of two stays
	} {
		col := newVarColumn(mem, c.rows, c.hint)
		if col.offs.Cap() != c.offs || col.data.Cap() != c.data {
			t.Errorf("%d rows, %d bytes: room %d and %d bytes, want %d and %d", c.rows, c.hint, col.offs.Cap(), col.data.Cap(), c.offs, c.data)
		}
		col.release()
	}
}
