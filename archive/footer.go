package archive

import (
	"encoding/binary"
	"io"
	"math/bits"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"

	"github.com/flightsrv/flightsrv/internal/freelist"
)

// footer is everything a Parquet payload's reads need before touching data pages: the opened
// parquet.File (footer metadata, schema, offset indexes installed in its column chunks), the
// event_time column's raw statistics and column index, and the bytes at the end of the object
// that were fetched to find the footer. A footer is immutable once loaded and shared by
// concurrent requests through the footer cache; payload objects never change under their key.
type footer struct {
	file  *parquet.File
	size  int64 // object size in bytes
	tail  region
	sha   string // lowercase hex SHA-256 of the object when tail holds all of it, else ""
	bytes int64  // approximate memory held, for the cache bound

	numRows  int64
	groups   []groupInfo
	envelope error     // nil when the schema is exactly the envelope (checkEnvelope)
	ts       *tsColumn // nil when there is no usable event_time column
	tsErr    error
	orderOK  bool // event_time's column order is TYPE_DEFINED_ORDER (signed for INT64)

	// keysChecked is set once a read of a file claimed sorted has compared the sort keys of
	// every row, in file order, found them in (event_time, sort_key) order and every key it
	// could emit (every row with an event time) valid UTF-8: the payload is immutable, so
	// later reads of this footer skip the sort-key comparisons and UTF-8 checks (the
	// event-time checks, which cost little, stay). Safe for concurrent use.
	keysChecked atomic.Bool
}

// groupInfo is one row group: its row count and, per leaf column, its chunk, validated offset
// index (nil when absent or inconsistent) and, for event_time only, its statistics and column
// index in raw form.
type groupInfo struct {
	numRows int64
	chunks  []*parquet.FileColumnChunk
	offsets []*format.OffsetIndex
	tsStats *rawStatistics
	tsIndex *format.ColumnIndex
}

// rawStatistics is a column chunk's Statistics (Parquet's format) as the statistics trust
// rules need it: parquet-go's format.Statistics has no is_*_exact fields and cannot tell an
// absent null count from zero, so leafStatistics reads these from the footer's bytes. The
// deprecated min/max fields (1, 2) are not kept because they are never trusted.
type rawStatistics struct {
	NullCount       *int64 `thrift:"3"`
	MaxValue        []byte `thrift:"5"`
	MinValue        []byte `thrift:"6"`
	IsMaxValueExact *bool  `thrift:"7"`
	IsMinValueExact *bool  `thrift:"8"`
}

// parsedFileBytes is the Go heap of an opened parquet.File beyond 4 bytes per footer byte,
// for the footer cache's bound: measured with runtime.MemStats over 400 payloads of bench's
// BenchmarkAnalytical fixture (one row group, five columns, 565-byte footers), a loaded footer
// without its tail held about 8.1 KB, against the 3.6 KB 4*footerLen + 1024 (plus the page
// index bytes) had estimated.
const parsedFileBytes = 6 << 10

// footerLoad holds what loading needs from the reader's options.
type footerLoad struct {
	tailBytes  int64
	readBuffer int
}

// loadFooter fetches and parses the footer of the Parquet payload behind rr. expectSize is the
// manifest's payload_bytes: the object's real size is learnt from the same ranged request that
// fetches the tail, and a difference is ErrPayloadLength. The page index (column and offset
// indexes) is fetched in at most one more request when the tail does not already hold it,
// and the footer itself in one more when it is longer than the tail.
func loadFooter(rr *rangeReader, expectSize int64, opt footerLoad) (*footer, error) {
	if expectSize < 12 {
		// An object that short cannot be Parquet (magic, footer length, magic).
		return nil, ErrPayloadDecode
	}
	tailLen := min(expectSize, opt.tailBytes)
	data, size, err := rr.store.readRangeInto(rr.ctx, rr.key, expectSize-tailLen, tailLen, getTail(int(tailLen)), rr.counter)
	if err == errShortObject || (err == nil && size != expectSize) {
		return nil, ErrPayloadLength
	}
	if err != nil {
		return nil, err
	}
	rr.size = size
	rr.addRegion(size-tailLen, data)
	ft, err := openFooter(rr, opt.readBuffer)
	if err != nil {
		return nil, err
	}
	ft.tail = region{off: size - tailLen, data: data}
	ft.bytes += int64(cap(data)) // the tail buffer's whole room (getTail rounds it up)
	if tailLen == size {
		ft.sha = sha256Hex(data)
	}
	return ft, nil
}

// newFooterFromBytes opens the footer of a whole payload held in memory (full reads and the
// writer's read-back); nothing is fetched. The returned reader serves the payload's bytes.
func newFooterFromBytes(data []byte, readBuffer int) (*footer, *rangeReader, error) {
	rr := &rangeReader{size: int64(len(data))}
	rr.addRegion(0, data)
	ft, err := openFooter(rr, readBuffer)
	if err != nil {
		return nil, nil, err
	}
	ft.sha = sha256Hex(data)
	return ft, rr, nil
}

// openFooter parses the footer found at the end of rr's object (fetching what rr does not hold),
// opens the parquet.File over rr, analyses the schema and loads the per-group view.
func openFooter(rr *rangeReader, readBuffer int) (ft *footer, err error) {
	defer recoverDecode(&err)
	size := rr.size
	if size < 12 {
		return nil, ErrPayloadDecode
	}
	var trailer [8]byte
	if _, err := rr.ReadAt(trailer[:], size-8); err != nil {
		return nil, err
	}
	if string(trailer[4:]) != "PAR1" {
		return nil, ErrPayloadDecode
	}
	footerLen := int64(binary.LittleEndian.Uint32(trailer[:4]))
	footerStart := size - 8 - footerLen
	if footerStart < 4 {
		return nil, ErrPayloadDecode
	}
	if err := rr.prefetch([]byteRange{{footerStart, size - 8}}); err != nil {
		return nil, err
	}
	// A scratch copy: leafStatistics copies out what it keeps, parquet.OpenFile reads its own.
	footerBytes := getTail(int(footerLen))
	defer putTail(footerBytes)
	if _, err := rr.ReadAt(footerBytes, footerStart); err != nil {
		return nil, err
	}
	// The file keeps the reader it was opened with; it is cached beyond this request, so it gets
	// a handle that is cut off once loading is done. Later reads pass their own reader.
	fra := &detachable{ra: rr}
	defer fra.detach()
	f, err := parquet.OpenFile(fra, size,
		parquet.SkipMagicBytes(true),
		parquet.SkipPageIndex(true),
		parquet.SkipBloomFilters(true),
		parquet.ReadBufferSize(readBuffer),
	)
	if err != nil {
		return nil, ErrPayloadDecode
	}
	md := f.Metadata()
	ft = &footer{file: f, size: size, numRows: md.NumRows, bytes: 4*footerLen + parsedFileBytes}
	ft.envelope = checkEnvelope(f)
	ft.ts, ft.tsErr = eventTimeColumn(f)
	if ft.ts != nil && ft.ts.leaf < len(md.ColumnOrders) {
		_, ft.orderOK = md.ColumnOrders[ft.ts.leaf].Value.(*format.TypeDefinedOrder)
	}
	// The footer's statistics of event_time, in the raw form the trust rules need; the rest of
	// the footer is only skipped (parquet.OpenFile parsed it).
	leaf := -1
	if ft.ts != nil {
		leaf = ft.ts.leaf
	}
	tsStats, err := leafStatistics(footerBytes, leaf)
	if err != nil || len(tsStats) != len(md.RowGroups) {
		return nil, ErrPayloadDecode
	}
	if err := ft.loadGroups(rr, tsStats, footerStart); err != nil {
		return nil, err
	}
	return ft, nil
}

// loadGroups builds the per-row-group view and installs validated offset indexes.
func (ft *footer) loadGroups(rr *rangeReader, tsStats []*rawStatistics, footerStart int64) error {
	md := ft.file.Metadata()
	rowGroups := ft.file.RowGroups()
	var total int64
	// Fetch the whole page-index area in one request when it lies before the footer.
	idxLo, idxHi := int64(-1), int64(-1)
	for i := range md.RowGroups {
		for j := range md.RowGroups[i].Columns {
			c := &md.RowGroups[i].Columns[j]
			for _, span := range []struct {
				off int64
				n   int32
			}{{c.OffsetIndexOffset, c.OffsetIndexLength}, {c.ColumnIndexOffset, c.ColumnIndexLength}} {
				if span.off > 0 && span.n > 0 && span.off+int64(span.n) <= footerStart {
					if idxLo < 0 || span.off < idxLo {
						idxLo = span.off
					}
					idxHi = max(idxHi, span.off+int64(span.n))
				}
			}
		}
	}
	if idxLo >= 0 {
		if err := rr.prefetch([]byteRange{{idxLo, idxHi}}); err != nil {
			return err
		}
		ft.bytes += 2 * (idxHi - idxLo)
	}
	ft.groups = make([]groupInfo, len(md.RowGroups))
	// Offset indexes are decoded from one scratch buffer by one reader: a decoded
	// format.OffsetIndex holds no slice of its input (parquet-go installs its own copy).
	var idxBuf []byte
	idxReader := new(thrift.CompactProtocol).NewReaderFromBytes(nil)
	idxDecoder := thrift.NewDecoder(idxReader)
	for i := range md.RowGroups {
		rg := &md.RowGroups[i]
		if rg.NumRows < 0 {
			return ErrPayloadDecode
		}
		total += rg.NumRows
		g := &ft.groups[i]
		g.numRows = rg.NumRows
		chunks := rowGroups[i].ColumnChunks()
		g.chunks = make([]*parquet.FileColumnChunk, len(chunks))
		g.offsets = make([]*format.OffsetIndex, len(chunks))
		for j, cc := range chunks {
			fc, ok := cc.(*parquet.FileColumnChunk)
			if !ok {
				return ErrPayloadDecode
			}
			g.chunks[j] = fc
			c := &rg.Columns[j]
			if c.OffsetIndexOffset <= 0 || c.OffsetIndexLength <= 0 || c.OffsetIndexOffset+int64(c.OffsetIndexLength) > footerStart {
				continue
			}
			idxBuf = slices.Grow(idxBuf[:0], int(c.OffsetIndexLength))[:c.OffsetIndexLength]
			if _, err := rr.ReadAt(idxBuf, c.OffsetIndexOffset); err != nil {
				return err
			}
			oi := new(format.OffsetIndex)
			idxReader.ResetBytes(idxBuf)
			if idxDecoder.Decode(oi) != nil || idxReader.BytesRead() != len(idxBuf) || !validOffsetIndex(oi, c, rg.NumRows) {
				continue
			}
			// parquet-go's page readers get the index when one is opened (pagesFrom): most
			// reads decode pages from their bytes (rawPages) and never open one.
			g.offsets[j] = oi
		}
		if ft.ts == nil {
			continue
		}
		leaf := ft.ts.leaf
		if leaf >= len(rg.Columns) {
			return ErrPayloadDecode
		}
		g.tsStats = tsStats[i]
		c := &rg.Columns[leaf]
		if c.ColumnIndexOffset > 0 && c.ColumnIndexLength > 0 && c.ColumnIndexOffset+int64(c.ColumnIndexLength) <= footerStart && g.offsets[leaf] != nil {
			buf := make([]byte, c.ColumnIndexLength)
			if _, err := rr.ReadAt(buf, c.ColumnIndexOffset); err != nil {
				return err
			}
			var ci format.ColumnIndex
			if thrift.Unmarshal(new(thrift.CompactProtocol), buf, &ci) == nil && consistentColumnIndex(&ci, len(g.offsets[leaf].PageLocations)) {
				g.tsIndex = &ci
			}
		}
	}
	if total != ft.numRows {
		return ErrPayloadDecode
	}
	return nil
}

// pagesFrom returns parquet-go's page reader of leaf in row group g over ra, with the chunk's
// offset index installed first when loadGroups validated one, so that SeekToRow seeks with it.
// The index is installed here rather than when the footer is loaded: parquet-go decodes it
// again from its bytes, and the reads that decode pages from their bytes (rawPages), the
// common case, never need it (bench's BenchmarkAnalytical, 3M rows, cold: about 0.8 MB of heap
// a query for ~1,000 footer loads). Installing is safe for concurrent use (parquet-go keeps
// the first index installed); an index that no longer reads leaves the reader to find its
// pages without it.
func (ft *footer) pagesFrom(ra io.ReaderAt, g, leaf int) parquet.Pages {
	c := ft.groups[g].chunks[leaf]
	if ft.groups[g].offsets[leaf] != nil {
		_, _ = c.OffsetIndexFrom(ra)
	}
	return c.PagesFrom(ra)
}

// chunkBounds returns the byte span of a column chunk: from its dictionary page (when recorded
// and before the first data page) or first data page, for total_compressed_size bytes.
func chunkBounds(c *format.ColumnChunk) (start, end int64) {
	start = c.MetaData.DataPageOffset
	if d := c.MetaData.DictionaryPageOffset; d > 0 && d < start {
		start = d
	}
	return start, start + c.MetaData.TotalCompressedSize
}

// validOffsetIndex checks an offset index before it is trusted for seeking: pages in file
// order inside the chunk, first rows strictly increasing from 0 and below the group's rows.
func validOffsetIndex(oi *format.OffsetIndex, c *format.ColumnChunk, numRows int64) bool {
	pages := oi.PageLocations
	if len(pages) == 0 {
		return numRows == 0
	}
	start, end := chunkBounds(c)
	if pages[0].FirstRowIndex != 0 {
		return false
	}
	for i, p := range pages {
		if p.Offset < start || p.CompressedPageSize <= 0 || p.Offset+int64(p.CompressedPageSize) > end || p.FirstRowIndex >= numRows {
			return false
		}
		if i > 0 && (p.FirstRowIndex <= pages[i-1].FirstRowIndex || p.Offset < pages[i-1].Offset+int64(pages[i-1].CompressedPageSize)) {
			return false
		}
	}
	return true
}

// consistentColumnIndex checks that a column index has one entry per page.
func consistentColumnIndex(ci *format.ColumnIndex, pages int) bool {
	return len(ci.NullPages) == pages && len(ci.MinValues) == pages && len(ci.MaxValues) == pages &&
		(len(ci.NullCounts) == 0 || len(ci.NullCounts) == pages)
}

// pageRows returns the row span [first, end) of page p of an offset index.
func pageRows(oi *format.OffsetIndex, p int, groupRows int64) (int64, int64) {
	first := oi.PageLocations[p].FirstRowIndex
	if p+1 < len(oi.PageLocations) {
		return first, oi.PageLocations[p+1].FirstRowIndex
	}
	return first, groupRows
}

// recoverDecode turns a panic inside parquet-go (malformed files can trigger index errors)
// into ErrPayloadDecode.
func recoverDecode(err *error) {
	if r := recover(); r != nil {
		*err = ErrPayloadDecode
	}
}

// spanRanges returns the byte ranges needed to read rows [s, e) of leaf column leaf in row group
// g: the pages covering the span (from the offset index) plus the chunk's leading dictionary
// area, or the whole chunk without an offset index. pad covers parquet-go's buffered
// read-ahead past a page's end.
func (ft *footer) spanRanges(g, leaf int, s, e int64, pad int64) []byteRange {
	c := &ft.file.Metadata().RowGroups[g].Columns[leaf]
	start, end := chunkBounds(c)
	oi := ft.groups[g].offsets[leaf]
	if oi == nil {
		return []byteRange{{start, end}}
	}
	pages := oi.PageLocations
	p0, p1 := 0, len(pages)-1
	for p0+1 < len(pages) && pages[p0+1].FirstRowIndex <= s {
		p0++
	}
	for p1 > 0 && pages[p1].FirstRowIndex >= e {
		p1--
	}
	out := []byteRange{{pages[p0].Offset, min(pages[p1].Offset+int64(pages[p1].CompressedPageSize)+pad, end)}}
	if pages[0].Offset > start {
		out = append(out, byteRange{start, min(pages[0].Offset+pad, end)})
	}
	return out
}

// check rejects a footer whose object size or row count disagrees with the manifest.
func (ft *footer) check(payloadBytes, recordCount uint64) error {
	if uint64(ft.size) != payloadBytes {
		return ErrPayloadLength
	}
	if uint64(ft.numRows) != recordCount {
		return ErrRecordCount
	}
	return nil
}

// detachable forwards reads to ra until detached, then refuses them.
type detachable struct {
	mu sync.RWMutex
	ra io.ReaderAt
}

func (d *detachable) ReadAt(p []byte, off int64) (int, error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.ra == nil {
		return 0, errDetached
	}
	return d.ra.ReadAt(p, off)
}

func (d *detachable) detach() {
	d.mu.Lock()
	d.ra = nil
	d.mu.Unlock()
}

// Tail buffers. A footer is loaded with the payload's last TailBytes (the whole object when
// it is no larger), and a footer the cache does not keep (its admission policy keeps about a
// quarter of the buckets of an analytical read over the whole range) drops them when its read
// ends. They come from free lists of powers of two kept across garbage collections
// (internal/freelist) instead of the heap: measured on bench's BenchmarkAnalytical fixture (3M
// flights, 1,338 archived buckets of 29 KB on average) under serve's default 40 MiB limit,
// these reads were 23 MB of the 104 MB of heap each query allocated.
var tailLists = func() (l [tailClasses]*freelist.List[[]byte]) {
	for k := range l {
		l[k] = freelist.New[[]byte](4, 0)
	}
	return l
}()

// tailClasses are the buffer sizes of the lists: 1 KiB, 2 KiB, … 1 MiB.
const (
	tailMinShift = 10
	tailClasses  = 11
)

// tailClass returns the list of a buffer of n bytes, false when n is not pooled.
func tailClass(n int) (int, bool) {
	if n <= 0 {
		return 0, false
	}
	k := bits.Len(uint(n-1)) - tailMinShift
	return max(k, 0), k < tailClasses
}

// getTail returns a buffer with room for n bytes (its content is to be overwritten).
func getTail(n int) []byte {
	k, ok := tailClass(n)
	if !ok {
		return make([]byte, n)
	}
	if b, ok := tailLists[k].Get(); ok {
		return b[:n]
	}
	return make([]byte, n, 1<<(k+tailMinShift))
}

// putTail gives back a buffer getTail returned (any slice of it from its start); nothing may
// use it after.
func putTail(b []byte) {
	if k, ok := tailClass(cap(b)); ok && cap(b) == 1<<(k+tailMinShift) {
		if poisonTails {
			full := b[:cap(b)]
			for i := range full {
				full[i] = 0xa5
			}
		}
		tailLists[k].Put(b[:0], 0)
	}
}

// poisonTails makes putTail overwrite what it is given (tests set it), so that a read still
// using a tail after its read ended decodes garbage rather than the bytes it expects.
var poisonTails bool
