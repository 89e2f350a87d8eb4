package archive

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/parquet-go/parquet-go/encoding/delta"
)

// TestDecodeDeltaLength checks decodeDeltaLength against parquet-go's own
// DELTA_LENGTH_BYTE_ARRAY decoder (the independent reference) on pages parquet-go encodes:
// value counts around the block (128) and miniblock (32) boundaries, lengths from 0 to wide
// (bit widths 0 to 17), with bytes after the values (which both ignore); and that truncations
// of a page (every one of small pages, every 37th byte of larger ones) are refused or decoded
// as parquet-go decodes them, never a panic.
func TestDecodeDeltaLength(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var enc delta.LengthByteArrayEncoding
	counts := []int{0, 1, 2, 31, 32, 33, 127, 128, 129, 130, 255, 256, 257, 1000, 4097}
	letters := make([]byte, 1<<17)
	for i := range letters {
		letters[i] = byte('a' + rng.IntN(26))
	}
	for _, n := range counts {
		for _, maxLen := range []int{0, 1, 12, 300, 100_000} {
			if maxLen > 300 && n > 33 {
				continue // wide lengths: a few values are enough
			}
			var data []byte
			offs := []uint32{0}
			for range n {
				l := 0
				if maxLen > 0 {
					l = rng.IntN(maxLen + 1)
				}
				at := rng.IntN(len(letters) - l + 1)
				data = append(data, letters[at:at+l]...)
				offs = append(offs, uint32(len(data)))
			}
			page, err := enc.EncodeByteArray(nil, data, offs)
			if err != nil {
				t.Fatal(err)
			}
			for _, trailing := range [][]byte{nil, []byte("trailing bytes")} {
				src := append(slices.Clone(page), trailing...)
				name := fmt.Sprintf("n=%d max=%d trailing=%d", n, maxLen, len(trailing))
				vals, _, gotOffs, err := decodeDeltaLength(src, nil, nil)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				wantVals, wantOffs, err := enc.DecodeByteArray(nil, slices.Clone(src), nil)
				if err != nil {
					t.Fatalf("%s: parquet-go: %v", name, err)
				}
				if len(wantOffs) == 0 {
					wantOffs = []uint32{0}
				}
				if !bytes.Equal(vals, wantVals) || !slices.Equal(gotOffs, wantOffs) || !bytes.Equal(vals, data) || !slices.Equal(gotOffs, offs) {
					t.Fatalf("%s: %d value bytes, %d offsets; want %d, %d", name, len(vals), len(gotOffs), len(data), len(offs))
				}
			}
			if n > 300 || maxLen > 300 {
				continue
			}
			step := 1
			if maxLen > 12 {
				step = 37
			}
			for cut := 0; cut < len(page); cut += step {
				src := slices.Clone(page[:cut])
				vals, _, gotOffs, err := decodeDeltaLength(src, nil, nil)
				if err != nil {
					continue
				}
				wantVals, wantOffs, werr := enc.DecodeByteArray(nil, slices.Clone(src), nil)
				if len(wantOffs) == 0 {
					wantOffs = []uint32{0}
				}
				if werr != nil || !bytes.Equal(vals, wantVals) || !slices.Equal(gotOffs, wantOffs) {
					t.Fatalf("n=%d max=%d cut at %d of %d: decoded %d values where parquet-go gives %d (%v)", n, maxLen, cut, len(page), len(gotOffs)-1, len(wantOffs)-1, werr)
				}
			}
		}
	}
}
