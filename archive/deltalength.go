package archive

import (
	"encoding/binary"
	"errors"
	"math"
	"slices"

	"github.com/parquet-go/parquet-go/encoding/delta"
)

// errDeltaLength is a malformed DELTA_LENGTH_BYTE_ARRAY page (reported as ErrPayloadDecode).
var errDeltaLength = errors.New("archive: malformed DELTA_LENGTH_BYTE_ARRAY page")

// deltaLengths is parquet-go's DELTA_BINARY_PACKED decoder, for the lengths of a
// DELTA_LENGTH_BYTE_ARRAY page.
var deltaLengths delta.BinaryPackedEncoding

// decodeDeltaLength decodes a DELTA_LENGTH_BYTE_ARRAY page (Parquet encodings spec: the
// values' lengths, DELTA_BINARY_PACKED, then the values concatenated) without moving its
// values: it returns the values' bytes as a sub-slice of data, and their offsets into it
// (lens is scratch for the lengths, offs for the offsets; both may be reallocated, the
// reallocated ones returned). Bytes after the values are ignored, as parquet-go does.
// parquet-go's own decoder moves every value to the front of the page; this one finds where
// the lengths end by walking the blocks' headers (deltaBinaryPackedSize).
func decodeDeltaLength(data []byte, lens []int32, offs []uint32) (vals []byte, _ []int32, _ []uint32, err error) {
	n, err := deltaBinaryPackedSize(data)
	if err != nil {
		return nil, lens, offs, err
	}
	if lens, err = deltaLengths.DecodeInt32(lens[:0], data[:n]); err != nil {
		return nil, lens, offs, errDeltaLength
	}
	offs = slices.Grow(offs[:0], len(lens)+1)[:len(lens)+1]
	offs[0] = 0
	// Lengths are int32: summed in 64 bits, neither a negative one nor the total can wrap.
	total, neg := int64(0), int32(0)
	for i, l := range lens {
		neg |= l
		total += int64(l)
		offs[i+1] = uint32(total)
	}
	if neg < 0 || total > int64(len(data)-n) {
		return nil, lens, offs, errDeltaLength
	}
	return data[n : n+int(total)], lens, offs, nil
}

// deltaBinaryPackedSize returns the bytes a DELTA_BINARY_PACKED run at the start of b takes
// (Parquet encodings spec): a header (block size, miniblocks per block, value count, first
// value), then per block of deltas its minimum delta, one bit width per miniblock and the
// miniblocks, each values-per-miniblock × bit width / 8 bytes; miniblocks past the last value
// take no bytes (their bit widths are present all the same).
func deltaBinaryPackedSize(b []byte) (int, error) {
	pos := 0
	uvarint := func() (uint64, error) {
		v, k := binary.Uvarint(b[pos:])
		if k <= 0 {
			return 0, errDeltaLength
		}
		pos += k
		return v, nil
	}
	blockSize, err := uvarint()
	if err != nil {
		return 0, err
	}
	miniBlocks, err := uvarint()
	if err != nil {
		return 0, err
	}
	count, err := uvarint()
	if err != nil {
		return 0, err
	}
	if _, err := uvarint(); err != nil { // the first value (zigzag)
		return 0, err
	}
	if blockSize == 0 || blockSize%128 != 0 || miniBlocks == 0 || blockSize%miniBlocks != 0 ||
		(blockSize/miniBlocks)%32 != 0 || count > math.MaxInt32 || blockSize > 1<<20 {
		return 0, errDeltaLength
	}
	perMini := blockSize / miniBlocks
	for left := count - min(count, 1); left > 0; {
		if _, err := uvarint(); err != nil { // the block's minimum delta (zigzag)
			return 0, err
		}
		if uint64(len(b)-pos) < miniBlocks {
			return 0, errDeltaLength
		}
		widths := b[pos : pos+int(miniBlocks)]
		pos += int(miniBlocks)
		for _, w := range widths {
			if left == 0 {
				break
			}
			if w > 64 {
				return 0, errDeltaLength
			}
			size := perMini * uint64(w) / 8
			if uint64(len(b)-pos) < size {
				return 0, errDeltaLength
			}
			pos += int(size)
			left -= min(left, perMini)
		}
	}
	return pos, nil
}
