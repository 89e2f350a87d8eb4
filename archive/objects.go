package archive

import (
	"bytes"
	"context"
	"errors"
	"io"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"go.opentelemetry.io/otel/attribute"
	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"
	"golang.org/x/sync/errgroup"

	"github.com/flightsrv/flightsrv/internal/panics"
	"github.com/flightsrv/flightsrv/routing"
)

// DefaultOperationTimeout is the deadline of each object-store operation
// (docs/pulpitum-v4.md §1.5, "Timeouts").
const DefaultOperationTimeout = 30 * time.Second

// errShortObject reports that an object ended before the requested range did.
var errShortObject = errors.New("archive: object shorter than expected")

// ioCounter counts the object reads of one call (for spans); it is added to alongside the
// request's routing.ReadStats. It also holds the attributes of the call's
// pulpitum.archive.read span learnt before the span ends (setAttrs), which endSpan sets with
// the I/O counts in one call: the span's attribute list is then allocated once, at its final
// size, instead of growing with each SetAttributes (BenchmarkBucketSpans).
type ioCounter struct {
	reads, bytes atomic.Int64
	// attrs is nil when the span records nothing. It is appended to only by the goroutine
	// that starts the call, before the call returns; endSpan reads it after.
	attrs []attribute.KeyValue
}

// readSpanAttrs is the capacity of a recording ioCounter's attrs: the most attributes a
// pulpitum.archive.read span carries (operation, limit, format or count source, four
// pruning counts, bytes, object reads, records), and room for the three a bucket fragment
// adds to the span it gave the read (routing.FragmentSpan, scan/fragspan.go).
const readSpanAttrs = 13

// setAttrs adds kv to the attributes of the call's span, if it records.
func (c *ioCounter) setAttrs(kv ...attribute.KeyValue) {
	if c.attrs != nil {
		c.attrs = append(c.attrs, kv...)
	}
}

func (c *ioCounter) add(ctx context.Context, n int64) {
	if c != nil {
		c.reads.Add(1)
		c.bytes.Add(n)
	}
	routing.StatsFrom(ctx).AddObjectRead(n)
}

// objectStore wraps a blob bucket with a per-operation deadline, key-free errors and read
// accounting. It holds no per-request state and is safe for concurrent use.
type objectStore struct {
	bucket  *blob.Bucket
	timeout time.Duration
	// files, when set (ReaderOptions.FileDir), reads the objects of a file:// bucket whose
	// keys it serves (fileKey) from its directory instead of through the bucket.
	files *fileObjects
}

// direct reports whether key's reads go to s.files.
func (s *objectStore) direct(key string) bool { return s.files != nil && fileKey(key) }

// objectReader is an open object: its bytes from the requested offset and its total size.
type objectReader interface {
	io.ReadCloser
	Size() int64
}

// openDirect opens key's object in s.files for reading n bytes at off (n < 0: to its end),
// its errors mapped as objectError maps the bucket's (fileError).
func (s *objectStore) openDirect(ctx context.Context, key string, off, n int64) (objectReader, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r, err := s.files.openRange(key, off, n)
	if err != nil {
		return nil, fileError(ctx, err)
	}
	return r, nil
}

// readAll reads a whole object in one request.
func (s *objectStore) readAll(ctx context.Context, key string, c *ioCounter) ([]byte, error) {
	var r objectReader
	var err error
	if s.direct(key) {
		r, err = s.openDirect(ctx, key, 0, -1)
	} else {
		opCtx, cancel := context.WithTimeout(ctx, s.timeout)
		defer cancel()
		r, err = s.bucket.NewReader(opCtx, key, nil)
		if err != nil {
			err = objectError(ctx, err)
		}
	}
	if err != nil {
		return nil, err
	}
	defer r.Close()
	buf := bytes.NewBuffer(make([]byte, 0, max(r.Size(), 0)))
	n, err := buf.ReadFrom(r)
	if err != nil {
		return nil, objectError(ctx, err)
	}
	c.add(ctx, n)
	return buf.Bytes(), nil
}

// readRange reads n bytes at off in one ranged request and returns them with the object's
// total size. When the object's size makes the range impossible, it returns the size and
// errShortObject without reading the body, so callers can tell a length mismatch from an I/O
// failure.
func (s *objectStore) readRange(ctx context.Context, key string, off, n int64, c *ioCounter) ([]byte, int64, error) {
	return s.readRangeInto(ctx, key, off, n, nil, c)
}

// readRangeInto is readRange reading into buf when its capacity suffices.
func (s *objectStore) readRangeInto(ctx context.Context, key string, off, n int64, buf []byte, c *ioCounter) ([]byte, int64, error) {
	var r objectReader
	if s.direct(key) {
		var err error
		if r, err = s.openDirect(ctx, key, off, n); err != nil {
			return nil, 0, err
		}
	} else {
		opCtx, cancel := context.WithTimeout(ctx, s.timeout)
		defer cancel()
		br, err := s.bucket.NewRangeReader(opCtx, key, off, n, nil)
		if err != nil {
			if gcerrors.Code(err) != gcerrors.NotFound && ctx.Err() == nil {
				// Some stores reject a range beyond the end of the object outright; ask for the
				// size so that the caller can report a length mismatch instead.
				if attrs, aerr := s.bucket.Attributes(opCtx, key); aerr == nil && attrs.Size < off+n {
					return nil, attrs.Size, errShortObject
				}
			}
			return nil, 0, objectError(ctx, err)
		}
		r = br
	}
	defer r.Close()
	size := r.Size()
	if size < off+n {
		return nil, size, errShortObject
	}
	if int64(cap(buf)) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	got, err := io.ReadFull(r, buf)
	if got > 0 {
		c.add(ctx, int64(got))
	}
	if err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			return nil, size, errShortObject
		}
		return nil, size, objectError(ctx, err)
	}
	return buf, size, nil
}

// createIfNotExists writes data under key unless an object already exists there. An existing
// object is not an error (write protocol step 2); the caller reads it back and compares.
func (s *objectStore) createIfNotExists(ctx context.Context, key string, data []byte, contentType string) error {
	opCtx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	err := s.bucket.WriteAll(opCtx, key, data, &blob.WriterOptions{IfNotExist: true, ContentType: contentType})
	if err == nil || gcerrors.Code(err) == gcerrors.FailedPrecondition {
		return nil
	}
	return objectError(ctx, err)
}

// region is a span of an object's bytes held in memory.
type region struct {
	off  int64
	data []byte
}

func (r region) end() int64 { return r.off + int64(len(r.data)) }

// byteRange is a half-open span [off, end) of an object.
type byteRange struct{ off, end int64 }

// rangeReader is the io.ReaderAt handed to parquet-go for one request on one object: reads
// inside prefetched regions are served from memory, anything else becomes one ranged request
// under the request's context (so cancellation reaches parquet-go's reads) and the
// per-operation deadline. A rangeReader belongs to one request; its methods are safe for the
// concurrent use that prefetching makes of it. A rangeReader without a context serves only
// its regions (a payload held whole in memory).
type rangeReader struct {
	ctx     context.Context
	store   *objectStore
	key     string
	size    int64
	counter *ioCounter
	gap     int64 // ranges closer than this are fetched in one request
	fanout  int   // concurrent prefetch requests

	mu      sync.RWMutex
	regions []region // sorted by off, non-overlapping

	// alloc, when set, makes prefetch read into buffers it allocates, recorded in owned until
	// retainRegions frees them (ReadBatches, which drops regions as it goes: the query's
	// ledger, so the fetched bytes count against its memory and are recycled by its pool).
	alloc memory.Allocator
	owned []region
	// lent is the tail buffer (getTail) of a footer loaded for this read and not cached:
	// freeOwned puts it back (putTail), as nothing reads it once the read has ended.
	lent []byte
}

var errDetached = errors.New("archive: read outside the cached regions of a detached reader")

// ReadAt implements io.ReaderAt.
func (r *rangeReader) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errors.New("archive: negative read offset")
	}
	if off >= r.size {
		return 0, io.EOF
	}
	want := p
	var tailErr error
	if off+int64(len(p)) > r.size {
		want = p[:r.size-off]
		tailErr = io.EOF
	}
	n := r.copyFromRegions(want, off)
	if n < len(want) {
		if r.ctx == nil {
			return n, errDetached
		}
		data, _, err := r.store.readRange(r.ctx, r.key, off+int64(n), int64(len(want)-n), r.counter)
		if err != nil {
			return n, err
		}
		n += copy(want[n:], data)
	}
	return n, tailErr
}

// copyFromRegions copies the longest prefix of [off, off+len(p)) held in memory.
func (r *rangeReader) copyFromRegions(p []byte, off int64) int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	n := 0
	for n < len(p) {
		pos := off + int64(n)
		i, found := slices.BinarySearchFunc(r.regions, pos, func(g region, pos int64) int {
			switch {
			case g.end() <= pos:
				return -1
			case g.off > pos:
				return 1
			}
			return 0
		})
		if !found {
			return n
		}
		g := r.regions[i]
		n += copy(p[n:], g.data[pos-g.off:])
	}
	return n
}

// covered reports whether [off, end) is entirely in memory.
func (r *rangeReader) covered(br byteRange) bool {
	if br.end <= br.off {
		return true
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	pos := br.off
	for _, g := range r.regions {
		if g.end() <= pos {
			continue
		}
		if g.off > pos {
			return false
		}
		pos = g.end()
		if pos >= br.end {
			return true
		}
	}
	return false
}

// addRegion inserts data at off, keeping regions sorted; overlapping parts of the new region
// are dropped in favour of the regions already held (both hold the same immutable bytes).
func (r *rangeReader) addRegion(off int64, data []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.regions = append(r.regions, region{off: off, data: data})
	slices.SortFunc(r.regions, func(a, b region) int {
		switch {
		case a.off < b.off:
			return -1
		case a.off > b.off:
			return 1
		}
		return len(b.data) - len(a.data)
	})
	out := r.regions[:0]
	for _, g := range r.regions {
		if n := len(out); n > 0 && g.off < out[n-1].end() {
			if g.end() <= out[n-1].end() {
				continue
			}
			g = region{off: out[n-1].end(), data: g.data[out[n-1].end()-g.off:]}
		}
		out = append(out, g)
	}
	r.regions = out
}

// prefetch loads the given ranges into memory: ranges are clipped to the object, parts already
// in memory are skipped, the rest is merged when closer than r.gap and fetched with up to
// r.fanout concurrent ranged requests.
func (r *rangeReader) prefetch(ranges []byteRange) error {
	var need []byteRange
	for _, br := range ranges {
		br.off = max(br.off, 0)
		br.end = min(br.end, r.size)
		if br.end > br.off && !r.covered(br) {
			need = append(need, br)
		}
	}
	if len(need) == 0 {
		return nil
	}
	if r.ctx == nil {
		return errDetached
	}
	need = coalesce(need, r.gap)
	g, ctx := errgroup.WithContext(r.ctx)
	g.SetLimit(max(r.fanout, 1))
	for _, br := range need {
		g.Go(func() (err error) {
			defer panics.Recover("archive fetch", &err)
			var buf []byte
			if r.alloc != nil {
				buf = allocateUninit(r.alloc, int(br.end-br.off)) // ReadFull fills it
			}
			data, _, err := r.store.readRangeInto(ctx, r.key, br.off, br.end-br.off, buf, r.counter)
			if err != nil {
				if buf != nil {
					r.alloc.Free(buf)
				}
				return err
			}
			if r.alloc != nil {
				// data is buf: readRangeInto reads into a buffer of exactly the range's length.
				r.mu.Lock()
				r.owned = append(r.owned, region{off: br.off, data: buf})
				r.mu.Unlock()
			}
			r.addRegion(br.off, data)
			return nil
		})
	}
	return g.Wait()
}

// coalesce sorts ranges and merges those that overlap or lie within gap bytes of each other.
func coalesce(ranges []byteRange, gap int64) []byteRange {
	slices.SortFunc(ranges, func(a, b byteRange) int {
		switch {
		case a.off < b.off:
			return -1
		case a.off > b.off:
			return 1
		}
		return 0
	})
	out := ranges[:0]
	for _, br := range ranges {
		if n := len(out); n > 0 && br.off <= out[n-1].end+gap {
			out[n-1].end = max(out[n-1].end, br.end)
			continue
		}
		out = append(out, br)
	}
	return out
}
