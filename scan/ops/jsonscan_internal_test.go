package ops

import (
	"encoding/binary"
	"math/bits"
	"math/rand/v2"
	"testing"
)

// TestSpecialBytes: the first byte specialBytes marks in a word of eight document bytes is
// the first byte strSpecial marks (none marked when there is none), for every byte value at
// every position among bytes that are not special, for each pair of byte values at two
// positions, and for a million random words.
func TestSpecialBytes(t *testing.T) {
	first := func(w uint64) int {
		for k := range 8 {
			if strSpecial[byte(w>>(8*k))] {
				return k
			}
		}
		return 8
	}
	check := func(w uint64) {
		t.Helper()
		got := 8
		if m := specialBytes(w); m != 0 {
			got = bits.TrailingZeros64(m) >> 3
		}
		if want := first(w); got != want {
			var b [8]byte
			binary.LittleEndian.PutUint64(b[:], w)
			t.Fatalf("% x: first special byte %d, specialBytes says %d", b, want, got)
		}
	}
	plain := binary.LittleEndian.Uint64([]byte("abcdefgh"))
	for k := range 8 {
		for c := range 256 {
			check(plain&^(0xff<<(8*k)) | uint64(c)<<(8*k))
		}
	}
	for c1 := range 256 {
		for c2 := range 256 {
			for _, pos := range [][2]int{{0, 1}, {2, 5}, {6, 7}} {
				w := plain &^ (0xff<<(8*pos[0]) | 0xff<<(8*pos[1]))
				check(w | uint64(c1)<<(8*pos[0]) | uint64(c2)<<(8*pos[1]))
			}
		}
	}
	r := rand.New(rand.NewPCG(8, 19))
	for range 1_000_000 {
		check(r.Uint64())
	}
}
