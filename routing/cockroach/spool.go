package cockroach

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/flightsrv/flightsrv/internal/panics"
	"github.com/flightsrv/flightsrv/routing"
)

// spool keeps the records of one pipelined write request (AppendStream on PostgreSQL) as its
// source yields them, in chunks of a fixed number of records (the first one smaller), so that
// the fenced transaction can copy and move each chunk while the source goes on, and copy every
// chunk again when the transaction is retried (SQLSTATE 40001) or must name a duplicate's
// position: the client's stream can be read only once. A goroutine (fill) reads the source;
// the transaction reads the chunks it sealed (chunk, rows). The first chunk stays in memory;
// later ones are written to an unlinked temporary file (os.CreateTemp in $TMPDIR, removed at
// once: a process killed mid-request leaves nothing behind) spoolWrite bytes at a time and
// read back through a buffer of that size, so memory is the first chunk and two such buffers
// whatever the request's size, and the file grows to the request's encoded records (about
// their bytes plus 10 a record). Safe for one filling goroutine and one reader.
type spool struct {
	tableID  string
	strategy routing.Strategy
	size     int // records a chunk holds (chunk 0 an eighth: limit; the last may hold fewer)

	mu      sync.Mutex
	changed *sync.Cond
	chunks  []spoolChunk        // sealed chunks, in order
	buckets []*routing.BucketID // buckets of the sealed chunks' records, in first-seen order
	done    bool                // fill has returned
	err     error               // the source's error (or a spool write's), once done

	first []byte        // chunk 0's bytes
	file  *os.File      // chunks 1…, nil until chunk 1 has spoolWrite bytes or is sealed
	end   int64         // bytes written to file
	read  *bufio.Reader // the transaction's reader of a chunk (rows)
}

// spoolWrite is the bytes of records fill gathers before writing them to the spool file, and
// the size of the buffer a chunk is read back through.
const spoolWrite = 64 << 10

// spoolChunk is one sealed chunk: records [first, first+n) of the request, encoded at
// [off, off+len) of the file (chunk 0: spool.first), whose buckets are spool.buckets[:buckets].
type spoolChunk struct {
	first, n int64
	off, len int64
	buckets  int
}

func newSpool(tableID string, strategy routing.Strategy, size int) *spool {
	sp := &spool{tableID: tableID, strategy: strategy, size: size}
	sp.changed = sync.NewCond(&sp.mu)
	return sp
}

// fill reads src to its end into the spool's chunks and returns (the error, if any, is kept
// for chunk). It stops early, keeping no error, once ctx is done while parent is not (the
// transaction gave up: AppendStream cancels ctx); a panic of the source is recovered into
// the error. Records are encoded as uvarint-prefixed partition key, uvarint bucket index,
// varint event time in Unix microseconds, uvarint-prefixed sort key and value.
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
		pending []*routing.BucketID // buckets first seen in the open chunk
		buf     []byte
		n       int64 // records in the open chunk
		first   int64 // the open chunk's first record
	)
	// flush writes buf, records of a chunk after chunk 0, to the file.
	flush := func() error {
		if sp.file == nil {
			f, err := os.CreateTemp("", "flightsrv-ingest-*")
			if err != nil {
				return fmt.Errorf("%w: ingest: spool file: %w", routing.ErrOperationFailed, err)
			}
			_ = os.Remove(f.Name()) // open, it lives until closed
			sp.file = f
		}
		if _, err := sp.file.Write(buf); err != nil {
			return fmt.Errorf("%w: ingest: spool file: %w", routing.ErrOperationFailed, err)
		}
		sp.end += int64(len(buf))
		buf = buf[:0]
		return nil
	}
	var start int64 // the open chunk's offset in the file
	seal := func() error {
		c := spoolChunk{first: first, n: n}
		if first == 0 {
			sp.first, buf = buf, nil // chunk 0 stays in memory
		} else {
			if err := flush(); err != nil {
				return err
			}
			c.off, c.len, start = start, sp.end-start, sp.end
		}
		sp.mu.Lock()
		sp.buckets = append(sp.buckets, pending...)
		c.buckets = len(sp.buckets)
		sp.chunks = append(sp.chunks, c)
		sp.changed.Broadcast()
		sp.mu.Unlock()
		pending, first, n = pending[:0], first+n, 0
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
				pending = append(pending, bk)
			}
			buf = binary.AppendUvarint(buf, uint64(len(r.PartitionKey)))
			buf = append(buf, r.PartitionKey...)
			buf = binary.AppendUvarint(buf, uint64(k))
			buf = binary.AppendVarint(buf, r.EventTime.UnixMicro())
			buf = binary.AppendUvarint(buf, uint64(len(r.SortKey)))
			buf = append(buf, r.SortKey...)
			buf = binary.AppendUvarint(buf, uint64(len(r.Value)))
			buf = append(buf, r.Value...)
			if n++; n == sp.limit(first) {
				err = seal()
			} else if first > 0 && len(buf) >= spoolWrite {
				err = flush()
			}
			if err != nil {
				return
			}
		}
	}
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

// rows returns chunk c's records as a pgx.CopyFromSource of the staging table's columns
// (partition_key, bucket_key, event_time, sort_key, value, pos), buckets indexing its bucket
// numbers, read through one buffer of spoolWrite bytes. Not for concurrent use: the previous
// chunk's rows are done with when rows is called again.
func (sp *spool) rows(c spoolChunk, buckets []*routing.BucketID) *spoolRows {
	var r io.Reader = bytes.NewReader(sp.first)
	if c.first > 0 {
		r = io.NewSectionReader(sp.file, c.off, c.len)
	}
	if sp.read == nil {
		sp.read = bufio.NewReaderSize(r, spoolWrite)
	} else {
		sp.read.Reset(r)
	}
	return &spoolRows{r: sp.read, left: c.n, buckets: buckets, pos: c.first - 1, scratch: make([]byte, 0, 256)}
}

// errSpoolDamaged is a spooled chunk that does not decode (or cannot be read back).
var errSpoolDamaged = fmt.Errorf("%w: ingest: spool file unreadable", routing.ErrOperationFailed)

// spoolRows decodes one chunk's records for pgx CopyFrom (spool.rows); the byte columns of a
// row stay valid until the next Next (pgx encodes each row when it is read).
type spoolRows struct {
	r       *bufio.Reader
	left    int64 // records not yet read
	buckets []*routing.BucketID
	pos     int64
	row     [6]any
	scratch []byte
	err     error
}

func (r *spoolRows) Next() bool {
	if r.left == 0 || r.err != nil {
		return false
	}
	r.left--
	r.scratch = r.scratch[:0]
	pk := r.bytes()
	k := r.uvarint()
	t, err := binary.ReadVarint(r.r)
	if err != nil || k >= uint64(len(r.buckets)) {
		r.err = errSpoolDamaged
	}
	sk := r.bytes()
	v := r.bytes()
	if r.err != nil {
		return false
	}
	r.pos++
	r.row = [6]any{r.scratch[pk[0]:pk[1]:pk[1]], r.buckets[k].Key, time.UnixMicro(t).UTC(),
		r.scratch[sk[0]:sk[1]:sk[1]], r.scratch[v[0]:v[1]:v[1]], r.pos}
	return true
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
