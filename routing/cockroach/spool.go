package cockroach

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/flightsrv/flightsrv/internal/panics"
	"github.com/flightsrv/flightsrv/routing"
)

// spool keeps the records of one pipelined write request (AppendStream on PostgreSQL) as its
// source yields them, in chunks (the first one smaller), so that the fenced transaction can
// fence each chunk's buckets while the source goes on and then copy the request's records in
// one COPY of the chunks merged (merged), and copy them again when the transaction is retried
// (SQLSTATE 40001) or must name a duplicate's position: the client's stream can be read only
// once. A goroutine (fill) reads the source; the transaction reads the chunks it sealed
// (chunk, rows, merged). Each chunk is sealed in the order of pulpitum_v4_records' primary key
// (partition, bucket, event time, id: merged, the B-tree is then filled in one pass, each leaf
// page once, and the heap holds each bucket's rows together), its records carrying their
// position in the request. The first chunk stays in memory; later ones are written to an
// unlinked temporary file (os.CreateTemp in $TMPDIR, removed at once: a process killed
// mid-request leaves nothing behind) spoolWrite bytes at a time and read back through buffers
// of at most that size, so memory is the open chunk (at most spoolChunkBytes of encoded
// records and two sort indexes of 32 bytes a record), the first chunk and the read buffers
// (spoolMergeRead bytes in all) whatever the request's size, and the file grows to the
// request's encoded records (about their ids' and values' bytes plus 10 a record). Safe for
// one filling goroutine and one reader.
type spool struct {
	tableID  string
	strategy routing.Strategy
	size     int // records a chunk holds (chunk 0 an eighth: limit; the last may hold fewer)
	maxBytes int // encoded bytes after which a chunk is sealed early (spoolChunkBytes)

	mu      sync.Mutex
	changed *sync.Cond
	chunks  []spoolChunk        // sealed chunks, in order
	buckets []*routing.BucketID // buckets of the sealed chunks' records, in first-seen order
	done    bool                // fill has returned
	err     error               // the source's error (or a spool write's), once done

	first []byte        // chunk 0's bytes
	file  *os.File      // chunks 1…, nil until chunk 1 is sealed
	end   int64         // bytes written to file
	read  *bufio.Reader // the transaction's reader of a chunk (rows)
}

// spoolWrite is the bytes of sorted records the seal of a chunk writes to the spool file at a
// time, and the size of the buffer a chunk is read back through.
const spoolWrite = 64 << 10

// spoolChunkBytes bounds the encoded records of one chunk, which fill holds in memory to sort
// them: a chunk of large values is sealed before it has its records.
const spoolChunkBytes = 16 << 20

// spoolChunk is one sealed chunk: records [first, first+n) of the request, encoded at
// [off, off+len) of the file (chunk 0: spool.first), whose buckets are spool.buckets[:buckets].
type spoolChunk struct {
	first, n int64
	off, len int64
	buckets  int
}

// spoolEntry is one record of the open chunk for its sort: its bucket's rank in the primary
// key's order, its event time, and the bounds of its encoding and of its sort key in the
// chunk's buffer.
type spoolEntry struct {
	t        int64
	rank     uint32
	off, end uint32
	sk, skl  uint32
}

func newSpool(tableID string, strategy routing.Strategy, size int) *spool {
	sp := &spool{tableID: tableID, strategy: strategy, size: size, maxBytes: spoolChunkBytes}
	sp.changed = sync.NewCond(&sp.mu)
	return sp
}

// fill reads src to its end into the spool's chunks and returns (the error, if any, is kept
// for chunk). It stops early, keeping no error, once ctx is done while parent is not (the
// transaction gave up: AppendStream cancels ctx); a panic of the source is recovered into
// the error. Records are encoded as uvarint bucket index, varint event time in Unix
// microseconds, uvarint position in the request, uvarint-prefixed sort key and value (the
// partition key is the bucket's, which the fence assigned from it).
func (sp *spool) fill(parent, ctx context.Context, src routing.IngestSource) {
	var err error
	defer func() {
		if p := recover(); p != nil {
			err = panics.FromValue("ingest source", p)
		}
		if err != nil && ctx.Err() != nil && parent.Err() == nil {
			err = nil // stopped by the transaction: its error is the request's
		}
		sp.mu.Lock()
		sp.done, sp.err = true, err
		sp.changed.Broadcast()
		sp.mu.Unlock()
	}()
	index := map[*routing.BucketID]int{}
	var (
		all     []*routing.BucketID // every bucket seen, by index
		pending []*routing.BucketID // buckets first seen in the open chunk
		buf     []byte              // the open chunk's records
		ents    []spoolEntry        // the open chunk's records for their sort
		spare   []spoolEntry        // the sort's second buffer (sortEntries)
		out     []byte              // sorted records on their way to the file
		n       int64               // records in the open chunk
		first   int64               // the open chunk's first record
		pos     int64               // the next record's position in the request
	)
	seal := func() error {
		ranks := bucketRanks(all)
		for i := range ents {
			ents[i].rank = ranks[ents[i].rank] // the bucket's index until now
		}
		sorted := sortEntries(ents, spare, buf, len(all))
		ents, spare = sorted, ents
		c := spoolChunk{first: first, n: n}
		if first == 0 {
			chunk0 := make([]byte, 0, len(buf)) // chunk 0 stays in memory
			for _, e := range sorted {
				chunk0 = append(chunk0, buf[e.off:e.end]...)
			}
			sp.first = chunk0
		} else {
			if sp.file == nil {
				f, err := os.CreateTemp("", "flightsrv-ingest-*")
				if err != nil {
					return fmt.Errorf("%w: ingest: spool file: %w", routing.ErrOperationFailed, err)
				}
				_ = os.Remove(f.Name()) // open, it lives until closed
				sp.file = f
			}
			c.off = sp.end
			for i, e := range sorted {
				out = append(out, buf[e.off:e.end]...)
				if len(out) >= spoolWrite || i == len(sorted)-1 {
					if _, err := sp.file.Write(out); err != nil {
						return fmt.Errorf("%w: ingest: spool file: %w", routing.ErrOperationFailed, err)
					}
					sp.end += int64(len(out))
					out = out[:0]
				}
			}
			c.len = sp.end - c.off
		}
		sp.mu.Lock()
		sp.buckets = append(sp.buckets, pending...)
		c.buckets = len(sp.buckets)
		sp.chunks = append(sp.chunks, c)
		sp.changed.Broadcast()
		sp.mu.Unlock()
		if first == 0 && n == sp.limit(0) {
			// The chunks to come hold size records of about chunk 0's bytes each: their
			// buffers are made that large at once, not grown by doubling (garbage as large).
			buf = make([]byte, 0, min(sp.maxBytes, len(buf)*sp.size/int(n)*9/8))
			ents, spare = make([]spoolEntry, 0, sp.size), make([]spoolEntry, 0, sp.size)
		}
		pending, buf, ents, first, n = pending[:0], buf[:0], ents[:0], first+n, 0
		return nil
	}
	for {
		var b routing.IngestBatch
		if b, err = src.Next(ctx); err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
				if n > 0 {
					err = seal()
				}
			}
			return
		}
		for i := range b.Records {
			r, bk := &b.Records[i], b.Buckets[i]
			k, ok := index[bk]
			if !ok {
				if bk.TableID != sp.tableID || bk.Strategy != sp.strategy {
					err = fmt.Errorf("%w: a record's bucket is not of the request's table", routing.ErrInvalidRecord)
					return
				}
				k = len(index)
				index[bk] = k
				all = append(all, bk)
				pending = append(pending, bk)
			}
			if !bytes.Equal(r.PartitionKey, bk.PartitionKey) {
				err = fmt.Errorf("%w: record %d is not of its bucket's partition", routing.ErrInvalidRecord, pos)
				return
			}
			e := spoolEntry{t: r.EventTime.UnixMicro(), rank: uint32(k), off: uint32(len(buf))}
			buf = binary.AppendUvarint(buf, uint64(k))
			buf = binary.AppendVarint(buf, e.t)
			buf = binary.AppendUvarint(buf, uint64(pos))
			buf = binary.AppendUvarint(buf, uint64(len(r.SortKey)))
			e.sk, e.skl = uint32(len(buf)), uint32(len(r.SortKey))
			buf = append(buf, r.SortKey...)
			buf = binary.AppendUvarint(buf, uint64(len(r.Value)))
			buf = append(buf, r.Value...)
			e.end = uint32(len(buf))
			ents = append(ents, e)
			pos++
			if n++; n == sp.limit(first) || len(buf) >= sp.maxBytes {
				if err = seal(); err != nil {
					return
				}
			}
		}
	}
}

// sortEntries returns the entries of ents, their ranks set, in the primary key's order
// (rank, time, sort key in buf), in spare's storage (grown as needed; ents is left as it
// was): a stable counting sort by rank over ranks [0, ranks), then each rank's run sorted by
// time and sort key only when it is not in that order already, so a stream in time order
// (the usual one, and flights') costs three passes instead of a comparison sort (which took
// 15% of the server's CPU of an ingest).
func sortEntries(ents, spare []spoolEntry, buf []byte, ranks int) []spoolEntry {
	ends := make([]int, ranks+1)
	for _, e := range ents {
		ends[e.rank+1]++
	}
	for r := 1; r <= ranks; r++ {
		ends[r] += ends[r-1]
	}
	out := slices.Grow(spare[:0], len(ents))[:len(ents)]
	for _, e := range ents {
		out[ends[e.rank]] = e
		ends[e.rank]++
	}
	byTimeAndID := func(a, b spoolEntry) int {
		if a.t != b.t {
			return cmp.Compare(a.t, b.t)
		}
		return bytes.Compare(buf[a.sk:a.sk+a.skl], buf[b.sk:b.sk+b.skl])
	}
	start := 0
	for r := range ranks {
		if run := out[start:ends[r]]; !slices.IsSortedFunc(run, byTimeAndID) {
			slices.SortFunc(run, byTimeAndID)
		}
		start = ends[r]
	}
	return out
}

// bucketRanks returns the rank of each bucket of all in the primary key's order of
// pulpitum_v4_records (partition key, then bucket key; the table and strategy are the
// request's).
func bucketRanks(all []*routing.BucketID) []uint32 {
	order := make([]int, len(all))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		if c := bytes.Compare(all[a].PartitionKey, all[b].PartitionKey); c != 0 {
			return c
		}
		return strings.Compare(all[a].Key, all[b].Key)
	})
	ranks := make([]uint32, len(all))
	for r, i := range order {
		ranks[i] = uint32(r)
	}
	return ranks
}

// limit is the records of the chunk starting at record first: an eighth of size for chunk 0,
// so that the transaction starts soon and the chunk kept in memory is small, then size.
func (sp *spool) limit(first int64) int64 {
	if first == 0 {
		return int64(max(1, sp.size/8))
	}
	return int64(sp.size)
}

// chunk waits for chunk i and returns it with the buckets of the chunks up to it; io.EOF when
// the source ended after fewer chunks, the source's error when it failed first, ctx's error
// when ctx is done first.
func (sp *spool) chunk(ctx context.Context, i int) (spoolChunk, []*routing.BucketID, error) {
	stop := context.AfterFunc(ctx, func() {
		sp.mu.Lock()
		sp.changed.Broadcast()
		sp.mu.Unlock()
	})
	defer stop()
	sp.mu.Lock()
	defer sp.mu.Unlock()
	for i >= len(sp.chunks) && !sp.done && ctx.Err() == nil {
		sp.changed.Wait()
	}
	switch {
	case i < len(sp.chunks):
		c := sp.chunks[i]
		return c, sp.buckets[:c.buckets], nil
	case ctx.Err() != nil:
		return spoolChunk{}, nil, ctx.Err()
	case sp.err != nil:
		return spoolChunk{}, nil, sp.err
	}
	return spoolChunk{}, nil, io.EOF
}

// sourceErr is the source's error once fill has returned (nil while it runs).
func (sp *spool) sourceErr() error {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	return sp.err
}

// wait blocks until fill has returned.
func (sp *spool) wait() {
	sp.mu.Lock()
	for !sp.done {
		sp.changed.Wait()
	}
	sp.mu.Unlock()
}

// close releases the spool's file; fill must have returned.
func (sp *spool) close() {
	if sp.file != nil {
		_ = sp.file.Close()
	}
}

// rows returns chunk c's records, in the primary key's order, as a pgx.CopyFromSource of
// pulpitum_v4_records' columns (recordColumns: the table id tableID) or, when staging, of the
// staging table's (stagingColumns, with each record's position in the request); buckets
// indexes its bucket numbers. Read through one buffer of spoolWrite bytes: not for concurrent
// use, the previous chunk's rows are done with when rows is called again.
func (sp *spool) rows(c spoolChunk, buckets []*routing.BucketID, staging bool) *spoolRows {
	if sp.read == nil {
		sp.read = bufio.NewReaderSize(sp.section(c), spoolWrite)
	} else {
		sp.read.Reset(sp.section(c))
	}
	return sp.cursor(c, sp.read, buckets, staging)
}

// section is the reader of chunk c's encoded records.
func (sp *spool) section(c spoolChunk) io.Reader {
	if c.first > 0 {
		return io.NewSectionReader(sp.file, c.off, c.len)
	}
	return bytes.NewReader(sp.first)
}

func (sp *spool) cursor(c spoolChunk, r *bufio.Reader, buckets []*routing.BucketID, staging bool) *spoolRows {
	return &spoolRows{r: r, left: c.n, buckets: buckets, tableID: sp.tableID, staging: staging, scratch: make([]byte, 0, 256)}
}

// spoolMergeRead is the bytes of read buffer all the chunks of a merge share (each chunk's
// at least 4 KiB and at most spoolWrite).
const spoolMergeRead = 4 << 20

// merged returns the records of chunks (all of the request's, in order) merged into the
// primary key's order of the whole request, as a pgx.CopyFromSource of the shape rows gives;
// buckets is every bucket of the chunks, by index. Each chunk is read through its own buffer
// (spoolMergeRead bytes shared among them), the merge a binary heap of the chunks' next
// records: a request is then one COPY whose rows fill the primary key's B-tree in one pass.
// Not for concurrent use with rows.
func (sp *spool) merged(chunks []spoolChunk, buckets []*routing.BucketID, staging bool) *spoolMerge {
	size := min(spoolWrite, max(4<<10, spoolMergeRead/max(1, len(chunks))))
	m := &spoolMerge{ranks: bucketRanks(buckets)}
	for _, c := range chunks {
		cur := sp.cursor(c, bufio.NewReaderSize(sp.section(c), size), buckets, staging)
		if cur.decode() {
			m.cursors = append(m.cursors, cur)
		} else if cur.err != nil {
			m.err = cur.err
		}
	}
	for i := len(m.cursors)/2 - 1; i >= 0; i-- {
		m.down(i)
	}
	return m
}

// spoolMerge is spool.merged's source: cursors is a binary heap by (bucket rank, time, sort
// key) of the chunks' cursors, each holding its next record decoded.
type spoolMerge struct {
	cursors []*spoolRows
	ranks   []uint32
	advance bool // the heap's top was returned by the last Next and is not yet advanced
	row     []any
	err     error
}

func (m *spoolMerge) less(a, b *spoolRows) bool {
	if ra, rb := m.ranks[a.k], m.ranks[b.k]; ra != rb {
		return ra < rb
	}
	if a.t != b.t {
		return a.t < b.t
	}
	return bytes.Compare(a.scratch[a.sk[0]:a.sk[1]], b.scratch[b.sk[0]:b.sk[1]]) < 0
}

func (m *spoolMerge) down(i int) {
	h := m.cursors
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		if r := l + 1; r < len(h) && m.less(h[r], h[l]) {
			l = r
		}
		if !m.less(h[l], h[i]) {
			return
		}
		h[i], h[l] = h[l], h[i]
		i = l
	}
}

func (m *spoolMerge) Next() bool {
	if m.err != nil {
		return false
	}
	if m.advance {
		// The record returned last is encoded by now (pgx reads a row's values before the
		// next Next): its chunk moves on.
		if top := m.cursors[0]; !top.decode() {
			if top.err != nil {
				m.err = top.err
				return false
			}
			n := len(m.cursors) - 1
			m.cursors[0] = m.cursors[n]
			m.cursors = m.cursors[:n]
		}
		if len(m.cursors) > 0 {
			m.down(0)
		}
	}
	if m.advance = len(m.cursors) > 0; !m.advance {
		return false
	}
	m.row = m.cursors[0].values()
	return true
}

func (m *spoolMerge) Values() ([]any, error) { return m.row, nil }
func (m *spoolMerge) Err() error             { return m.err }

// errSpoolDamaged is a spooled chunk that does not decode (or cannot be read back).
var errSpoolDamaged = fmt.Errorf("%w: ingest: spool file unreadable", routing.ErrOperationFailed)

// spoolRows decodes one chunk's records for pgx CopyFrom (spool.rows); the byte columns of a
// row stay valid until the next Next (pgx encodes each row when it is read).
type spoolRows struct {
	r       *bufio.Reader
	left    int64 // records not yet read
	buckets []*routing.BucketID
	tableID string
	staging bool
	row     [6]any
	scratch []byte
	err     error
	// The record decoded last: its bucket's index, event time (Unix µs), position in the
	// request, and the bounds of its sort key and value in scratch.
	k, t, pos int64
	sk, v     [2]int
}

func (r *spoolRows) Next() bool {
	if !r.decode() {
		return false
	}
	r.values()
	return true
}

// decode reads the chunk's next record into the cursor's fields: false at the chunk's end or
// on an error (err).
func (r *spoolRows) decode() bool {
	if r.left == 0 || r.err != nil {
		return false
	}
	r.left--
	r.scratch = r.scratch[:0]
	k := r.uvarint()
	t, err := binary.ReadVarint(r.r)
	if err != nil || k >= uint64(len(r.buckets)) {
		r.err = errSpoolDamaged
	}
	pos := r.uvarint()
	r.sk = r.bytes()
	r.v = r.bytes()
	if r.err != nil {
		return false
	}
	r.k, r.t, r.pos = int64(k), t, int64(pos)
	return true
}

// values makes the decoded record's row (of recordColumns, or stagingColumns when staging).
func (r *spoolRows) values() []any {
	b := r.buckets[r.k]
	sk, v := r.scratch[r.sk[0]:r.sk[1]:r.sk[1]], r.scratch[r.v[0]:r.v[1]:r.v[1]]
	if r.staging {
		r.row = [6]any{b.PartitionKey, b.Key, time.UnixMicro(r.t).UTC(), sk, v, r.pos}
	} else {
		r.row = [6]any{r.tableID, b.PartitionKey, b.Key, time.UnixMicro(r.t).UTC(), sk, v}
	}
	return r.row[:]
}

func (r *spoolRows) uvarint() uint64 {
	x, err := binary.ReadUvarint(r.r)
	if err != nil {
		r.err = errSpoolDamaged
	}
	return x
}

// bytes reads a uvarint-prefixed byte string into the scratch buffer and returns its bounds
// there (slices of a non-nil buffer: never nil, the columns are NOT NULL).
func (r *spoolRows) bytes() [2]int {
	l := r.uvarint()
	if r.err != nil || l > 1<<30 {
		r.err = errSpoolDamaged
		return [2]int{}
	}
	lo := len(r.scratch)
	r.scratch = slices.Grow(r.scratch, int(l))[:lo+int(l)]
	if _, err := io.ReadFull(r.r, r.scratch[lo:]); err != nil {
		r.err = errSpoolDamaged
	}
	return [2]int{lo, len(r.scratch)}
}

func (r *spoolRows) Values() ([]any, error) { return r.row[:], nil }
func (r *spoolRows) Err() error             { return r.err }
