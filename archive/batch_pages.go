package archive

import (
	"encoding/binary"
	"hash/crc32"
	"slices"
	"sort"

	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/encoding"
	"github.com/parquet-go/parquet-go/encoding/rle"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"

	"github.com/flightsrv/flightsrv/internal/freelist"
)

// Page decoding of ReadBatches.
//
// ReadBatches reads the data pages of the requested columns itself whenever a column chunk
// has an offset index and no dictionary (every envelope the Writer produces): the page bytes
// are taken from the fetched regions without a copy, their headers parsed once, the values
// decompressed by a pooled zstd decoder into a page buffer the read reuses (from page to page
// and, through a free list kept across garbage collections, from read to read) with the slack
// the decoder's fast copies need, and decoded in place with parquet-go's encodings. parquet-go's page reader (FilePages)
// decompresses with the same decoder, but adds per page a bufio copy of the compressed bytes,
// new page and header objects and a copy of the decoded values; zstd itself, at about 1 GB/s
// of output per core, is the bulk of what remains. Chunks with a dictionary, without an
// offset index, or with a page this reader does not handle (an index page, a level encoding
// other than RLE, a header that disagrees with the offset index) are read through parquet-go
// as before: pages are located and their headers checked before any of a chunk's rows is
// handed out, so the choice is made per column and span.

// pageView is one data page of a top-level, non-repeated leaf column from the first row a read
// asked for: row r's definition level is defs[r] (defs is nil for a required column, whose
// every row holds a value), and the i-th non-null value is i64[i], i96[i] or
// data[offs[i]:offs[i+1]] — through idx[i] for a dictionary-encoded page, whose dictionary
// values those slices then hold. nvals is the number of non-null values held (len(idx) for a
// dictionary page). A view is valid only until the callback it was handed to returns.
type pageView struct {
	defs  []byte
	idx   []int32
	i64   []int64
	i96   []deprecated.Int96
	data  []byte
	offs  []uint32
	nvals int
}

// pageKind is the physical type a read expects of a leaf's values.
type pageKind uint8

const (
	kindInt64 pageKind = iota
	kindInt96
	kindBytes
)

// viewPage turns a page decoded by parquet-go into a pageView.
func viewPage(p parquet.Page, kind pageKind) pageView {
	var v pageView
	v.defs = p.DefinitionLevels()
	vals := p.Data()
	if d := p.Dictionary(); d != nil {
		v.idx = vals.Int32()
		vals = d.Page().Data()
	}
	switch kind {
	case kindInt64:
		v.i64 = vals.Int64()
		v.nvals = len(v.i64)
	case kindInt96:
		v.i96 = vals.Int96()
		v.nvals = len(v.i96)
	default:
		v.data, v.offs = vals.ByteArray()
		v.nvals = len(v.offs) - 1
	}
	if v.idx != nil {
		v.nvals = len(v.idx)
	}
	return v
}

// dictLen returns the number of dictionary values of a dictionary page's view.
func (v *pageView) dictLen(kind pageKind) int {
	switch kind {
	case kindInt64:
		return len(v.i64)
	case kindInt96:
		return len(v.i96)
	}
	return max(len(v.offs)-1, 0)
}

// check validates the view for its rows leading rows and returns how many non-null values
// they hold: definition levels present exactly for an optional column, enough values,
// dictionary indexes and byte-array offsets within bounds.
func (v *pageView) check(rows int, maxDef byte, kind pageKind) (int, bool) {
	need := rows
	if maxDef > 0 {
		if len(v.defs) < rows {
			return 0, false
		}
		need = 0
		for _, d := range v.defs[:rows] {
			if d == maxDef {
				need++
			}
		}
	} else if len(v.defs) > 0 {
		return 0, false
	}
	if v.nvals < need {
		return 0, false
	}
	if v.idx != nil {
		n := uint32(v.dictLen(kind))
		for _, i := range v.idx[:need] {
			if uint32(i) >= n {
				return 0, false
			}
		}
	}
	if kind == kindBytes {
		if len(v.offs) == 0 || int(v.offs[len(v.offs)-1]) > len(v.data) {
			return 0, false
		}
		if v.idx == nil && need > 0 && v.offs[0] > v.offs[need] {
			return 0, false
		}
	}
	return need, true
}

// value returns the i-th non-null byte-array value of the page.
func (v *pageView) value(i int) []byte {
	if v.idx != nil {
		i = int(v.idx[i])
	}
	return v.data[v.offs[i]:v.offs[i+1]]
}

// rawPage is a data page located through the offset index: its parsed header, its body (the
// bytes after the header, compressed), its first row (row-group relative) and its rows.
type rawPage struct {
	hdr   format.PageHeader
	body  []byte
	first int64
	rows  int64
}

// pageScratch holds the buffers a read reuses from page to page and span to span; the
// ReadBatches source takes one from scratchList and returns it when it is closed, so that
// concurrent reads each have their own and later reads reuse them.
type pageScratch struct {
	pages []rawPage
	page  []byte   // decompressed page
	vals  []byte   // byte-array values of encodings that cannot decode in place
	offs  []uint32 // byte-array offsets
	lens  []int32  // byte-array lengths (DELTA_LENGTH_BYTE_ARRAY)
	i64   []int64
	i96   []deprecated.Int96
	defs  []byte
	hdrIn thrift.BytesReader
	hdr   *thrift.Decoder
	view  pageView // the page handed to the callback

	// Per-span state of the source (batch_parquet.go).
	times []int64
	tnull []bool
	sel   []int32
	prev  []byte
}

// maxPooledScratch bounds the bytes a pooled pageScratch may keep: a read of row groups
// without offset indexes decodes whole row groups at once, and its buffers are dropped rather
// than kept for later reads.
const maxPooledScratch = 16 << 20

// scratchList keeps the scratch of finished reads for later ones, through garbage
// collections (internal/freelist): a few per core, 4 MiB in all (what the lists hold is live
// heap under the memory limit).
var scratchList = freelist.New[*pageScratch](8, 4<<20)

func getScratch() *pageScratch {
	if sc, ok := scratchList.Get(); ok {
		return sc
	}
	sc := &pageScratch{hdrIn: new(thrift.CompactProtocol).NewReaderFromBytes(nil)}
	sc.hdr = thrift.NewDecoder(sc.hdrIn)
	return sc
}

// putScratch returns sc to the pool unless it grew too large; sc must not be used after.
func putScratch(sc *pageScratch) {
	size := cap(sc.page) + cap(sc.vals) + 4*cap(sc.offs) + 4*cap(sc.lens) + 8*cap(sc.i64) + 12*cap(sc.i96) + cap(sc.defs) +
		8*cap(sc.times) + cap(sc.tnull) + 4*cap(sc.sel) + cap(sc.prev)
	if size > maxPooledScratch {
		return
	}
	clear(sc.pages[:cap(sc.pages)]) // drop references to fetched bytes
	sc.pages = sc.pages[:0]
	sc.view = pageView{}
	sc.hdrIn.ResetBytes(nil)
	scratchList.Put(sc, size)
}

// zstdDecoders pools zstd decoders for page decompression (creating one is expensive). They
// decode with DecodeAll only, which starts no goroutine, and are limited to the capacity of
// the destination: a page never decompresses past the uncompressed size its header declares.
// They are kept through garbage collections while in use (internal/freelist), a few per core.
var zstdDecoders = freelist.New[*zstd.Decoder](8, 0)

// getZstd returns a pooled decoder or a new one; putZstd gives it back.
func getZstd() *zstd.Decoder {
	if d, ok := zstdDecoders.Get(); ok {
		return d
	}
	d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecodeAllCapLimit(true))
	if err != nil {
		panic(err) // only invalid options fail
	}
	return d
}

func putZstd(d *zstd.Decoder) { zstdDecoders.Put(d, 0) }

// zstdSlack is the spare capacity given to a zstd page decompression (see decompress).
const zstdSlack = 64

// growBytes returns b with length n, reallocated when its capacity is short.
func growBytes(b []byte, n int) []byte {
	if cap(b) < n {
		return make([]byte, n, n+n/8)
	}
	return b[:n]
}

// isDictionary reports whether enc is a dictionary index encoding.
func isDictionary(enc format.Encoding) bool {
	return enc == format.PlainDictionary || enc == format.RLEDictionary
}

// rawPages reads rows [from, to) of leaf column leaf in row group g as readPages does, from
// the page bytes (see the top of this file). handled is false, with nothing handed to fn,
// when the chunk or one of its pages is not one this reader decodes; the caller then reads
// through parquet-go.
func (s *parquetSource) rawPages(g, leaf int, maxDef byte, kind pageKind, from, to int64, fn func(v *pageView, rows int) error) (handled bool, err error) {
	defer func() {
		if r := recover(); r != nil {
			handled, err = true, ErrPayloadDecode
		}
	}()
	ft, sc := s.ft, s.sc
	gi := &ft.groups[g]
	oi := gi.offsets[leaf]
	if oi == nil || len(oi.PageLocations) == 0 {
		return false, nil
	}
	cm := &ft.file.Metadata().RowGroups[g].Columns[leaf].MetaData
	if cm.DictionaryPageOffset > 0 || slices.ContainsFunc(cm.Encoding, isDictionary) {
		return false, nil
	}
	if cm.Codec != format.Uncompressed && cm.Codec != format.Zstd && parquet.LookupCompressionCodec(cm.Codec).CompressionCodec() != cm.Codec {
		return false, nil
	}

	// Locate the pages and parse their headers before decoding any.
	locs := oi.PageLocations
	p := sort.Search(len(locs), func(i int) bool { return locs[i].FirstRowIndex > from }) - 1
	if p < 0 {
		return false, nil
	}
	pages := sc.pages[:0]
	defer func() {
		clear(pages) // drop references to fetched bytes
		sc.pages, sc.view = pages[:0], pageView{}
	}()
	for ; p < len(locs) && locs[p].FirstRowIndex < to; p++ {
		loc := locs[p]
		first, end := pageRows(oi, p, gi.numRows)
		raw, err := s.rr.bytesAt(loc.Offset, int64(loc.CompressedPageSize))
		if err != nil {
			return true, decodeError(err)
		}
		pages = append(pages, rawPage{first: first, rows: end - first})
		rp := &pages[len(pages)-1]
		if !sc.parseHeader(raw, rp, maxDef) {
			return false, nil
		}
	}

	n := to - from
	for i := range pages {
		if err := s.ctx.Err(); err != nil {
			return true, err
		}
		rp := &pages[i]
		var err error
		v := &sc.view
		if *v, err = sc.decodePage(rp, cm.Codec, maxDef, kind); err != nil {
			return true, err
		}
		skip := 0
		if i == 0 {
			skip = int(from - rp.first)
		}
		if skip > 0 {
			vo := skip
			if maxDef > 0 {
				vo = 0
				for _, d := range v.defs[:skip] {
					if d == maxDef {
						vo++
					}
				}
				v.defs = v.defs[skip:]
			}
			switch kind {
			case kindInt64:
				v.i64 = v.i64[vo:]
			case kindInt96:
				v.i96 = v.i96[vo:]
			default:
				v.offs = v.offs[vo:]
			}
			v.nvals -= vo
		}
		k := min(rp.rows-int64(skip), n)
		if k <= 0 {
			return true, ErrPayloadDecode
		}
		if err := fn(v, int(k)); err != nil {
			return true, err
		}
		n -= k
	}
	if n != 0 {
		return true, ErrPayloadDecode
	}
	return true, nil
}

// parseHeader parses the header at the start of raw (a page located by the offset index,
// header included) into rp and sets rp.body. It reports false when the page is not one
// rawPages decodes: not a data page, dictionary-encoded, levels not RLE, sizes or counts that
// disagree with the offset index.
func (sc *pageScratch) parseHeader(raw []byte, rp *rawPage, maxDef byte) bool {
	sc.hdrIn.ResetBytes(raw)
	h := &rp.hdr
	if sc.hdr.Decode(h) != nil {
		return false
	}
	hl := sc.hdrIn.BytesRead()
	sc.hdrIn.ResetBytes(nil)
	if h.CompressedPageSize < 0 || h.UncompressedPageSize < 0 || int64(hl)+int64(h.CompressedPageSize) > int64(len(raw)) {
		return false
	}
	rp.body = raw[hl : hl+int(h.CompressedPageSize)]
	switch h.Type {
	case format.DataPage:
		if !h.DataPageHeader.Valid {
			return false
		}
		d := &h.DataPageHeader.V
		if int64(d.NumValues) != rp.rows || isDictionary(d.Encoding) || (maxDef > 0 && d.DefinitionLevelEncoding != format.RLE) {
			return false
		}
	case format.DataPageV2:
		if !h.DataPageHeaderV2.Valid {
			return false
		}
		d := &h.DataPageHeaderV2.V
		if int64(d.NumValues) != rp.rows || int64(d.NumRows) != rp.rows || d.NumNulls < 0 || isDictionary(d.Encoding) ||
			d.RepetitionLevelsByteLength < 0 || d.DefinitionLevelsByteLength < 0 ||
			int64(d.RepetitionLevelsByteLength)+int64(d.DefinitionLevelsByteLength) > int64(len(rp.body)) {
			return false
		}
	default:
		return false
	}
	return true
}

// levelDecoder decodes the definition levels of optional top-level columns (bit width 1).
var levelDecoder = rle.Encoding{BitWidth: 1}

// decodePage decompresses and decodes a page located and checked by parseHeader into a view of
// all its rows, held in sc's buffers.
func (sc *pageScratch) decodePage(rp *rawPage, codec format.CompressionCodec, maxDef byte, kind pageKind) (pageView, error) {
	var v pageView
	h := &rp.hdr
	body := rp.body
	if h.CRC != 0 && int32(crc32.ChecksumIEEE(body)) != h.CRC {
		return v, ErrPayloadDecode
	}
	numValues := int(rp.rows)
	var levels, data []byte
	var enc format.Encoding
	compressed := codec != format.Uncompressed
	size := int(h.UncompressedPageSize)
	if h.Type == format.DataPageV2 {
		d := &h.DataPageHeaderV2.V
		enc = d.Encoding
		rl, dl := int(d.RepetitionLevelsByteLength), int(d.DefinitionLevelsByteLength)
		levels, data = body[rl:rl+dl], body[rl+dl:]
		compressed = compressed && (!d.IsCompressed.Valid || d.IsCompressed.V)
		size -= rl + dl
		if maxDef == 0 {
			levels = nil
		}
	} else {
		enc = h.DataPageHeader.V.Encoding
		data = body
	}
	if size < 0 {
		return v, ErrPayloadDecode
	}
	inPlace := false
	if compressed {
		sc.page = growBytes(sc.page, size+zstdSlack)
		var err error
		if data, err = decompress(codec, data, size, sc.page); err != nil {
			return v, err
		}
		inPlace = true // data is sc.page: ours to overwrite
	}
	if h.Type == format.DataPage && maxDef > 0 {
		// Data page v1: the definition levels lead the (decompressed) data, prefixed by their
		// length.
		if len(data) < 4 {
			return v, ErrPayloadDecode
		}
		n := int64(binary.LittleEndian.Uint32(data))
		if 4+n > int64(len(data)) {
			return v, ErrPayloadDecode
		}
		levels, data = data[4:4+n], data[4+n:]
	}
	nvals := numValues
	if maxDef > 0 {
		defs, err := levelDecoder.DecodeLevels(sc.defs[:0], levels)
		sc.defs = defs
		if err != nil || len(defs) < numValues {
			return v, ErrPayloadDecode
		}
		v.defs = defs[:numValues]
		for _, d := range v.defs {
			if d != maxDef {
				nvals--
			}
		}
	}
	e := parquet.LookupEncoding(enc)
	var err error
	switch kind {
	case kindInt64:
		sc.i64, err = e.DecodeInt64(sc.i64[:0], data)
		v.i64, v.nvals = sc.i64, len(sc.i64)
	case kindInt96:
		sc.i96, err = e.DecodeInt96(sc.i96[:0], data)
		v.i96, v.nvals = sc.i96, len(sc.i96)
	default:
		v.data, v.offs, err = decodeByteArray(sc, e, data, inPlace)
		v.nvals = len(v.offs) - 1
	}
	if err != nil || v.nvals < nvals {
		return v, ErrPayloadDecode
	}
	return v, nil
}

// decodeByteArray decodes the byte-array values of a page: in place (over data, which must
// then belong to the read) when the encoding allows it, else into sc.vals.
func decodeByteArray(sc *pageScratch, e encoding.Encoding, data []byte, inPlace bool) ([]byte, []uint32, error) {
	if e.Encoding() == format.DeltaLengthByteArray {
		// The values stay where they are: a view of data.
		vals, lens, offs, err := decodeDeltaLength(data, sc.lens, sc.offs)
		sc.lens, sc.offs = lens, offs
		return vals, offs, err
	}
	dst := sc.vals[:0]
	inPlace = inPlace && e.CanDecodeInPlace()
	if inPlace {
		dst = data[:0]
	}
	vals, offs, err := e.DecodeByteArray(dst, data, sc.offs[:0])
	sc.offs = offs
	if !inPlace && cap(vals) > cap(sc.vals) {
		sc.vals = vals
	}
	if err == nil && len(offs) == 0 {
		// An empty page: no offsets at all.
		sc.offs = append(sc.offs[:0], 0)
		offs = sc.offs
	}
	return vals, offs, err
}

// decompress decompresses a page body of codec into dst (at least size plus zstdSlack bytes
// long) and returns the page, which must come out exactly size bytes long.
func decompress(codec format.CompressionCodec, src []byte, size int, dst []byte) ([]byte, error) {
	if size < 0 || len(dst) < size+zstdSlack {
		return nil, ErrPayloadDecode
	}
	var out []byte
	var err error
	if codec == format.Zstd {
		// The slack past size lets the decoder use its fast copies, which may write up to 16
		// bytes past the output (with room for exactly size bytes it falls back to exact
		// copies, about a third slower); the output stays bounded by the capacity given.
		d := getZstd()
		out, err = d.DecodeAll(src, dst[:0:size+zstdSlack])
		putZstd(d)
	} else {
		out, err = parquet.LookupCompressionCodec(codec).Decode(dst[:0], src)
	}
	if err != nil || len(out) != size {
		return nil, ErrPayloadDecode
	}
	return out, nil
}

// bytesAt returns the object's bytes [off, off+n): a slice of the fetched region that holds
// them all when there is one (never to be written to), else a copy read through ReadAt.
func (r *rangeReader) bytesAt(off, n int64) ([]byte, error) {
	if off < 0 || n < 0 || off+n > r.size {
		return nil, ErrPayloadDecode
	}
	r.mu.RLock()
	i, found := slices.BinarySearchFunc(r.regions, off, func(g region, pos int64) int {
		switch {
		case g.end() <= pos:
			return -1
		case g.off > pos:
			return 1
		}
		return 0
	})
	if found {
		if g := r.regions[i]; off+n <= g.end() {
			r.mu.RUnlock()
			return g.data[off-g.off : off-g.off+n : off-g.off+n], nil
		}
	}
	r.mu.RUnlock()
	buf := make([]byte, n)
	if _, err := r.ReadAt(buf, off); err != nil {
		return nil, err
	}
	return buf, nil
}
