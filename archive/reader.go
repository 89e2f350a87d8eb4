package archive

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"gocloud.dev/blob"

	"github.com/flightsrv/flightsrv/routing"
)

// ReaderOptions configures a Reader. Zero values take the defaults.
type ReaderOptions struct {
	// OperationTimeout is the deadline of each object-store request (default 30 s).
	OperationTimeout time.Duration
	// VerifyFully makes every Read, Aggregate and ReadBatches fetch the whole payload, check its
	// length and SHA-256 against the manifest, decode it and check the record count,
	// membership and order — the reference reader's full validation — bypassing the manifest
	// and footer caches. Off by default: see the package documentation for the trade-off.
	VerifyFully bool
	// ManifestCacheEntries bounds the cache of validated manifests (default 4096; negative
	// disables it).
	ManifestCacheEntries int
	// FooterCacheEntries and FooterCacheBytes bound the cache of Parquet footers (defaults
	// 1024 entries and 64 MiB; negative entries disables it).
	FooterCacheEntries int
	FooterCacheBytes   int64
	// TailBytes is how much of a Parquet payload's end the first request fetches to find the
	// footer (default 64 KiB). Payloads no larger than this are read whole by that request,
	// which also verifies their digest.
	TailBytes int64
	// CoalesceGapBytes merges needed byte ranges that are closer than this into one request
	// (default 256 KiB).
	CoalesceGapBytes int64
	// FetchConcurrency bounds the concurrent ranged requests of one call (default 4).
	FetchConcurrency int
	// ReadBufferBytes is parquet-go's read buffer; needed ranges are padded by it
	// (default 8 KiB).
	ReadBufferBytes int
	// BatchSpanRows bounds the rows ReadBatches decodes at once from a Parquet row group whose
	// columns all have offset indexes: the rows to read are cut at event_time page boundaries
	// into spans of at most this many rows (a single page may hold more). Larger spans seek
	// less (a page straddling two spans is decoded twice); smaller ones hold less memory,
	// which matters most for descending reads, which decode a span before emitting its last
	// row first. Default 32,768, so that the writer's default row groups (16,384 rows) are
	// decoded whole.
	BatchSpanRows int
	// PayloadCheckInterval is how long a check that a route's payload exists with the size
	// its manifest recorded is trusted before the next read of the route checks again
	// (payloadcheck.go; default DefaultPayloadCheckInterval, negative: every read checks).
	PayloadCheckInterval time.Duration
	// TracerProvider supplies the pulpitum.archive.read spans (default: the global provider).
	TracerProvider trace.TracerProvider
	// FileDir, when set, is the directory of bucket, a file:// bucket (gocloud's fileblob,
	// opened on that directory): the objects whose keys the archive writes are then read from
	// it directly (an open, fstat and pread each), not through fileblob, which stats each
	// object and reads its .attrs sidecar on every read (fileobjects.go). Writes, listings and
	// any other key still go through the bucket. NewReader fails when it is not a directory.
	FileDir string
}

func (o *ReaderOptions) withDefaults() {
	if o.OperationTimeout <= 0 {
		o.OperationTimeout = DefaultOperationTimeout
	}
	if o.ManifestCacheEntries == 0 {
		o.ManifestCacheEntries = 4096
	}
	if o.FooterCacheEntries == 0 {
		o.FooterCacheEntries = 1024
	}
	if o.FooterCacheBytes <= 0 {
		o.FooterCacheBytes = 64 << 20
	}
	if o.TailBytes <= 0 {
		o.TailBytes = 64 << 10
	}
	if o.CoalesceGapBytes <= 0 {
		o.CoalesceGapBytes = 256 << 10
	}
	if o.FetchConcurrency <= 0 {
		o.FetchConcurrency = 4
	}
	if o.ReadBufferBytes <= 0 {
		o.ReadBufferBytes = 8 << 10
	}
	if o.BatchSpanRows <= 0 {
		o.BatchSpanRows = 4 * routing.MaxBatchRows
	}
	if o.TracerProvider == nil {
		o.TracerProvider = otel.GetTracerProvider()
	}
	if o.PayloadCheckInterval == 0 {
		o.PayloadCheckInterval = DefaultPayloadCheckInterval
	}
}

// Reader reads published archives: it implements routing.ArchiveReader and
// routing.ArchiveBatchReader over a gocloud.dev blob bucket (file://, s3://, gs://, azblob://,
// as the bucket was opened). Every call validates the manifest against the requested bucket
// before touching the payload. A Reader is safe for concurrent use; it does not own the
// bucket.
type Reader struct {
	store objectStore
	opts  ReaderOptions
	// manifests holds validated manifests by key, each with its payload check's deadline.
	manifests *lru[*cachedManifest]
	footers   *lru[*footer]
	tracer    trace.Tracer
	// probeKey is the key of the last manifest read from the object store, which Ping checks
	// still exists (ping.go).
	probeKey atomic.Pointer[string]
}

var _ routing.ArchiveReader = (*Reader)(nil)

// NewReader returns a Reader over bucket.
func NewReader(bucket *blob.Bucket, opts ReaderOptions) (*Reader, error) {
	if bucket == nil {
		return nil, errors.New("archive: reader needs a bucket")
	}
	opts.withDefaults()
	var files *fileObjects
	if opts.FileDir != "" {
		var err error
		if files, err = newFileObjects(opts.FileDir); err != nil {
			return nil, fmt.Errorf("archive: reader's FileDir: %w", err)
		}
	}
	return &Reader{
		store:     objectStore{bucket: bucket, timeout: opts.OperationTimeout, files: files},
		opts:      opts,
		manifests: newLRU[*cachedManifest](opts.ManifestCacheEntries, 0),
		footers:   newLRU[*footer](opts.FooterCacheEntries, opts.FooterCacheBytes).withAdmission(),
		tracer:    opts.TracerProvider.Tracer("github.com/flightsrv/flightsrv/archive"),
	}, nil
}

// Verify reads the manifest and the whole payload of b and runs every check of the reference
// reader (docs/pulpitum-v4.md §1.5, steps 1–6), bypassing the caches. It returns nil or the
// first failure's sentinel.
func (r *Reader) Verify(ctx context.Context, manifestKey string, b routing.BucketID) error {
	c := &ioCounter{}
	m, err := r.loadManifest(ctx, manifestKey, c)
	if err != nil {
		return err
	}
	if !m.Bucket.Equal(b) {
		return ErrBucketMismatch
	}
	_, err = r.fullRecords(ctx, m, b, c)
	return err
}

// manifest returns the validated manifest of key (steps 1–3), from the cache when possible.
func (r *Reader) manifest(ctx context.Context, key string, b routing.BucketID, c *ioCounter) (*Manifest, error) {
	e, ok := r.manifests.get(key)
	if !ok || r.opts.VerifyFully {
		m, err := r.loadManifest(ctx, key, c)
		if err != nil {
			return nil, err
		}
		r.probeKey.Store(&key)
		e = &cachedManifest{m: m}
		if !r.opts.VerifyFully {
			r.manifests.put(key, e, 1)
		}
	}
	if !e.m.Bucket.Equal(b) {
		return nil, ErrBucketMismatch
	}
	if err := r.checkPayload(ctx, e); err != nil {
		return nil, err
	}
	return e.m, nil
}

// loadManifest reads and validates a manifest: the key's digest against the raw bytes
// (step 1), decoding, then the field checks (step 2).
func (r *Reader) loadManifest(ctx context.Context, key string, c *ioCounter) (*Manifest, error) {
	digest, hasDigest, err := manifestKeyDigest(key)
	if err != nil {
		return nil, err
	}
	data, err := r.store.readAll(ctx, key, c)
	if err != nil {
		return nil, err
	}
	if hasDigest && sha256Hex(data) != digest {
		return nil, ErrManifestDigest
	}
	m, err := ParseManifest(data)
	if err != nil {
		return nil, err
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return m, nil
}

// fullRecords returns every record of the payload after the reference's steps 4–6: length and
// digest, decoded count, membership and order. A cached Parquet footer that holds the whole
// payload (a small object) is used instead of a new request unless VerifyFully is set.
func (r *Reader) fullRecords(ctx context.Context, m *Manifest, b routing.BucketID, c *ioCounter) ([]routing.Record, error) {
	if ft, ok := r.footers.get(m.PayloadKey); ok && ft.sha != "" && !r.opts.VerifyFully && m.Format == FormatParquet {
		return decodeVerified(ctx, m, b, ft.tail.data, r.opts.ReadBufferBytes)
	}
	data, err := r.store.readAll(ctx, m.PayloadKey, c)
	if err != nil {
		return nil, err
	}
	return decodeVerified(ctx, m, b, data, r.opts.ReadBufferBytes)
}

// fullRange returns the records of the payload inside rng, read and validated by fullRecords.
// Validation includes the order, so they are one run of the sorted records.
func (r *Reader) fullRange(ctx context.Context, m *Manifest, b routing.BucketID, c *ioCounter, rng routing.TimeRange) ([]routing.Record, error) {
	all, err := r.fullRecords(ctx, m, b, c)
	if err != nil {
		return nil, err
	}
	lo, hi := rangeIndex(all, rng)
	return all[lo:hi], nil
}

// decodeVerified checks a whole payload against its manifest and decodes it, in the reference
// order: length (ErrPayloadLength), digest (ErrPayloadDigest), decoding (ErrPayloadDecode,
// and ErrPayloadSchema for a Parquet payload that is not the envelope), count (ErrRecordCount),
// membership and order (ErrRecordOutsideBucket, ErrRecordsUnsorted).
func decodeVerified(ctx context.Context, m *Manifest, b routing.BucketID, data []byte, readBuffer int) ([]routing.Record, error) {
	if uint64(len(data)) != m.PayloadBytes {
		return nil, ErrPayloadLength
	}
	if sha256Hex(data) != m.SHA256 {
		return nil, ErrPayloadDigest
	}
	var recs []routing.Record
	var err error
	switch m.Format {
	case FormatJSON:
		recs, err = decodeJSONPayload(data)
	default:
		recs, err = decodeParquetPayload(ctx, data, b, readBuffer)
	}
	if err != nil {
		return nil, err
	}
	if uint64(len(recs)) != m.RecordCount {
		return nil, ErrRecordCount
	}
	if err := validateRecords(b, recs); err != nil {
		return nil, err
	}
	return recs, nil
}

// decodeParquetPayload decodes every row of an envelope payload held in memory, without
// membership or order checks (the caller runs them after the count check).
func decodeParquetPayload(ctx context.Context, data []byte, b routing.BucketID, readBuffer int) ([]routing.Record, error) {
	ft, rr, err := newFooterFromBytes(data, readBuffer)
	if err != nil {
		return nil, err
	}
	if ft.envelope != nil {
		return nil, ft.envelope
	}
	d := newEnvelopeDecoder(b, allTimes, false)
	recs := make([]routing.Record, 0, ft.numRows)
	for g := range ft.groups {
		part, _, _, _, err := ft.decodeSpan(ctx, rr, rowSpan{g: g, s: 0, e: ft.groups[g].numRows}, d)
		if err != nil {
			return nil, err
		}
		recs = append(recs, part...)
	}
	return recs, nil
}

// parquetFooter returns the payload's footer (cached per payload key, which names immutable
// content) and a reader for this request that already holds the footer's bytes. It checks the
// object size against payload_bytes and the footer's row count against record_count.
func (r *Reader) parquetFooter(ctx context.Context, m *Manifest, c *ioCounter) (*footer, *rangeReader, error) {
	rr := &rangeReader{
		ctx: ctx, store: &r.store, key: m.PayloadKey, counter: c,
		gap: r.opts.CoalesceGapBytes, fanout: r.opts.FetchConcurrency,
	}
	ft, cached := r.footers.get(m.PayloadKey)
	if cached && !r.opts.VerifyFully {
		rr.size = ft.size
		rr.regions = []region{ft.tail}
	} else {
		var err error
		ft, err = loadFooter(rr, int64(m.PayloadBytes), footerLoad{tailBytes: r.opts.TailBytes, readBuffer: r.opts.ReadBufferBytes})
		if err != nil {
			return nil, nil, err
		}
		cached = false
	}
	if err := ft.check(m.PayloadBytes, m.RecordCount); err != nil {
		return nil, nil, err
	}
	if ft.sha != "" && ft.sha != m.SHA256 {
		// The whole object came with the footer, so its digest is known for free.
		return nil, nil, ErrPayloadDigest
	}
	if !cached {
		// Only a footer that passed the checks is kept: a damaged payload's (the whole object
		// read with it, failing its digest) would keep failing every read of the key after
		// the payload was restored byte for byte (issue 20, --damage-memory).
		if !r.footers.put(m.PayloadKey, ft, ft.bytes) {
			// Not kept: its tail buffer is the read's, recycled when the read ends (freeOwned).
			rr.lent = ft.tail.data
		}
	}
	return ft, rr, nil
}

// selectSpans returns the row spans of group g (in file order) that may hold event times in
// the unit range want: nothing when trusted chunk statistics put the group outside, the whole
// group when they put it inside or cannot say and no page index helps, otherwise the pages
// that are not provably outside, adjacent pages merged. bucket is the bucket in column units.
func (ft *footer) selectSpans(g int, want, bucket unitRange, n *pruning) []rowSpan {
	spans := ft.selectGroupSpans(g, want, bucket, n)
	if len(spans) == 0 {
		n.groupsPruned++
	} else {
		n.groupsRead++
	}
	return spans
}

// pruning counts what selectSpans kept and left out of a payload (routing.ReadStats
// AddPruning).
type pruning struct{ groupsRead, groupsPruned, pagesRead, pagesPruned int64 }

// add adds n to ctx's ReadStats and to the attributes of the bucket's pulpitum.archive.read
// span that c holds (flightsrv.read.row_groups, .row_groups_pruned, .pages, .pages_pruned,
// the names of internal/querylog's call-span attributes; as there, a count of zero is left out).
func (n *pruning) add(ctx context.Context, c *ioCounter) {
	routing.StatsFrom(ctx).AddPruning(n.groupsRead, n.groupsPruned, n.pagesRead, n.pagesPruned)
	setCount(c, "flightsrv.read.row_groups", n.groupsRead)
	setCount(c, "flightsrv.read.row_groups_pruned", n.groupsPruned)
	setCount(c, "flightsrv.read.pages", n.pagesRead)
	setCount(c, "flightsrv.read.pages_pruned", n.pagesPruned)
}

// setCount adds the attribute key=n to c's span when n is not zero.
func setCount(c *ioCounter, key attribute.Key, n int64) {
	if n != 0 {
		c.setAttrs(key.Int64(n))
	}
}

func (ft *footer) selectGroupSpans(g int, want, bucket unitRange, n *pruning) []rowSpan {
	rows := ft.groups[g].numRows
	if rows == 0 {
		return nil
	}
	if gb, ok := ft.groupBounds(g, bucket); ok {
		switch cls, _ := gb.classify(want, rows); cls {
		case outside:
			return nil
		case inside:
			return []rowSpan{{g, 0, rows}}
		}
	}
	oi := ft.groups[g].offsets[ft.ts.leaf]
	if oi == nil || ft.groups[g].tsIndex == nil {
		return []rowSpan{{g, 0, rows}}
	}
	var spans []rowSpan
	for p := range oi.PageLocations {
		s, e := pageRows(oi, p, rows)
		if pb, ok := ft.pageBounds(g, p, bucket); ok {
			if cls, _ := pb.classify(want, e-s); cls == outside {
				n.pagesPruned++
				continue
			}
		}
		n.pagesRead++
		spans = appendSpan(spans, rowSpan{g, s, e})
	}
	return spans
}

// appendSpan appends sp, merging it into the last span when they touch.
func appendSpan(spans []rowSpan, sp rowSpan) []rowSpan {
	if n := len(spans); n > 0 && spans[n-1].g == sp.g && spans[n-1].e == sp.s {
		spans[n-1].e = sp.e
		return spans
	}
	return append(spans, sp)
}

// aggregateParquet is the Parquet walk of the partial-aggregate port (Aggregate): it gives the caller the event times of the payload's records inside
// rng, answered from trusted statistics for whole row groups and pages where the caller can,
// decoded from the event_time column alone for the rest.
//
// Each row group is classified against rng by its trusted bounds (stats.go), then so is each
// page of a group that was neither skipped nor answered whole, when the group has an offset
// index and a column index (otherwise the whole group is decoded):
//
//   - outside: skipped;
//   - inside: offered to answer with its bounds bd and its number n of values in rng (rows
//     minus nulls). answer returns true when it has taken them into account from bd and n
//     alone; false sends a group on to its pages and a page to decoding;
//   - straddling, or without trusted bounds: decoded.
//
// The row spans to decode (adjacent pages merged) are collected over the whole payload and
// their event_time pages fetched together (rr.prefetch) before they are decoded in file order.
// value gets each decoded non-null event time inside rng, in column units (ft.ts.unit); every
// decoded value must lie inside the bucket (ErrRecordOutsideBucket otherwise). Nothing assumes
// the rows or groups are sorted, so answer and value must build an order-independent
// aggregate; after an error it is partial and must be dropped. A payload without a usable
// event_time column gives ft.tsErr.
func (r *Reader) aggregateParquet(ctx context.Context, ft *footer, rr *rangeReader, b routing.BucketID, rng routing.TimeRange,
	answer func(bd bounds, n int64) bool, value func(t int64)) error {
	if ft.ts == nil {
		return ft.tsErr
	}
	want := ft.ts.unitRange(rng)
	bucket := ft.ts.unitRange(b.Range())
	// settled reports whether a group or page of rows rows with trusted bounds bd needs no
	// decoding: it is outside rng, or inside it and answered.
	settled := func(bd bounds, rows int64) bool {
		switch cls, n := bd.classify(want, rows); cls {
		case outside:
			return true
		case inside:
			return answer(bd, n)
		}
		return false
	}
	var work []rowSpan
	for g := range ft.groups {
		rows := ft.groups[g].numRows
		if rows == 0 {
			continue
		}
		if gb, ok := ft.groupBounds(g, bucket); ok && settled(gb, rows) {
			continue
		}
		oi := ft.groups[g].offsets[ft.ts.leaf]
		if oi == nil || ft.groups[g].tsIndex == nil {
			work = append(work, rowSpan{g, 0, rows})
			continue
		}
		for p := range oi.PageLocations {
			s, e := pageRows(oi, p, rows)
			if pb, ok := ft.pageBounds(g, p, bucket); ok && settled(pb, e-s) {
				continue
			}
			work = appendSpan(work, rowSpan{g, s, e})
		}
	}
	if len(work) == 0 {
		return nil
	}
	pad := int64(r.opts.ReadBufferBytes)
	var ranges []byteRange
	for _, sp := range work {
		ranges = append(ranges, ft.spanRanges(sp.g, ft.ts.leaf, sp.s, sp.e, pad)...)
	}
	if err := rr.prefetch(ranges); err != nil {
		return err
	}
	for _, sp := range work {
		if err := ft.decodeEventTimes(ctx, rr, sp, want, bucket, value); err != nil {
			return err
		}
	}
	return nil
}

// endSpan records the I/O of one call on its span, with the attributes c holds, and ends it.
// Keys and partition values are never recorded. records < 0 records none. A span the call
// adopted from its bucket fragment (routing.FragmentSpan) is handed the attributes instead,
// without the records (the fragment's rows count them), and ends with its fragment, with the
// fragment's status.
func endSpan(span trace.Span, c *ioCounter, records int, err error) {
	if !span.IsRecording() {
		span.End()
		return
	}
	c.setAttrs(attribute.Int64("pulpitum.archive.bytes_read", c.bytes.Load()),
		attribute.Int64("pulpitum.archive.object_reads", c.reads.Load()))
	if fs, ok := span.(routing.FragmentSpan); ok {
		fs.EndRead(c.attrs)
		return
	}
	if records >= 0 {
		c.setAttrs(attribute.Int("pulpitum.archive.records", records))
	}
	span.SetAttributes(c.attrs...)
	if err != nil {
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}

// noSpan is a span that records nothing (ending it does nothing).
var noSpan = trace.SpanFromContext(context.Background())

// startSpan starts a pulpitum.archive.read span of operation op with attrs, and returns the
// call's ioCounter, which holds those attributes until endSpan sets them with the rest —
// unless ctx carries a valid span that records nothing: under the parent-based samplers the
// server installs (internal/telemetry: none recorded without an exporter, else a child is
// recorded when its parent is), a child of it would record nothing either, and a query asks up
// to thousands of buckets, each of which would still pay for a span's identifiers and
// options. It then returns ctx and noSpan. When ctx's span is a bucket fragment's that no
// read adopted yet (routing.FragmentSpan), the call adopts it as its pulpitum.archive.read
// span instead of starting a child (it ends with the fragment, with the fragment's internal
// kind). A call without a span in ctx (a direct caller) always starts one.
func (r *Reader) startSpan(ctx context.Context, op string, attrs ...attribute.KeyValue) (context.Context, trace.Span, *ioCounter) {
	c := &ioCounter{}
	parent := trace.SpanFromContext(ctx)
	if parent.SpanContext().IsValid() && !parent.IsRecording() {
		return ctx, noSpan, c
	}
	var span trace.Span
	if fs, ok := parent.(routing.FragmentSpan); ok && fs.AdoptRead(readSpanName) {
		span = fs
	} else {
		ctx, span = r.tracer.Start(ctx, readSpanName, trace.WithSpanKind(trace.SpanKindClient))
	}
	if span.IsRecording() {
		c.attrs = append(make([]attribute.KeyValue, 0, readSpanAttrs), attribute.String("pulpitum.archive.operation", op))
		c.attrs = append(c.attrs, attrs...)
	}
	return ctx, span, c
}

// readSpanName is the name of an archive read's span (docs/pulpitum-v4.md §6.1).
const readSpanName = "pulpitum.archive.read"
