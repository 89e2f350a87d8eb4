package archive

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"gocloud.dev/blob"

	"github.com/flightsrv/flightsrv/routing"
)

// WriterOptions configures a Writer. Zero values take the defaults.
type WriterOptions struct {
	// Prefix is the object-key prefix; surrounding slashes are trimmed. It must not be empty
	// after trimming (the reference's default is "showcase").
	Prefix string
	// Format is the payload format of new archives (default FormatParquet; FormatJSON writes
	// what the reference writes by default). Readers follow each manifest's format.
	Format Format
	// OperationTimeout is the deadline of each object-store request (default 30 s).
	OperationTimeout time.Duration
	// RowGroupRows bounds the rows of a Parquet row group (default 16,384, the reference's).
	RowGroupRows int
	// PageBufferBytes bounds the uncompressed size of a Parquet data page (default
	// DefaultPageBufferBytes, 256 KiB).
	PageBufferBytes int
	// MaxKeySegmentBytes bounds each '/'-separated segment of an object key (default
	// DefaultMaxKeySegmentBytes, a file name's limit); MaxKeyBytes bounds a whole key
	// (default DefaultMaxKeyBytes, S3's). A bucket whose keys exceed them fails Put with a
	// *KeyLimitError before anything is written.
	MaxKeySegmentBytes, MaxKeyBytes int
	// TracerProvider supplies the pulpitum.archive.write spans (default: the global provider).
	TracerProvider trace.TracerProvider
}

// Writer writes bucket archives with the reference's write protocol (docs/pulpitum-v4.md
// §1.5): it implements routing.ArchiveWriter. A Writer is safe for concurrent use; it does not
// own the bucket.
type Writer struct {
	store  objectStore
	opts   WriterOptions
	tracer trace.Tracer
}

var _ routing.ArchiveWriter = (*Writer)(nil)

// ErrInvalidBucket is returned by Put for a bucket id that cannot be archived: an unknown
// strategy, a blank key, strings that are not valid UTF-8 or a negative generation.
var ErrInvalidBucket = errors.New("archive: bucket id cannot be archived")

// NewWriter returns a Writer over bucket.
func NewWriter(bucket *blob.Bucket, opts WriterOptions) (*Writer, error) {
	if bucket == nil {
		return nil, errors.New("archive: writer needs a bucket")
	}
	opts.Prefix = strings.Trim(opts.Prefix, "/")
	if opts.Prefix == "" {
		return nil, errors.New("archive: writer needs a non-empty key prefix")
	}
	if opts.Format != FormatParquet && opts.Format != FormatJSON {
		return nil, errors.New("archive: unsupported archive format")
	}
	if opts.OperationTimeout <= 0 {
		opts.OperationTimeout = DefaultOperationTimeout
	}
	if opts.RowGroupRows <= 0 {
		opts.RowGroupRows = DefaultRowGroupRows
	}
	if opts.PageBufferBytes <= 0 {
		opts.PageBufferBytes = DefaultPageBufferBytes
	}
	if opts.MaxKeySegmentBytes <= 0 {
		opts.MaxKeySegmentBytes = DefaultMaxKeySegmentBytes
	}
	if opts.MaxKeyBytes <= 0 {
		opts.MaxKeyBytes = DefaultMaxKeyBytes
	}
	if opts.TracerProvider == nil {
		opts.TracerProvider = otel.GetTracerProvider()
	}
	return &Writer{
		store:  objectStore{bucket: bucket, timeout: opts.OperationTimeout},
		opts:   opts,
		tracer: opts.TracerProvider.Tracer("github.com/flightsrv/flightsrv/archive"),
	}, nil
}

// Put archives recs as generation gen of bucket b and returns the manifest key, following the
// reference's write protocol:
//
//  1. check that every record belongs to b and that they are sorted (ErrRecordOutsideBucket,
//     ErrRecordsUnsorted), serialise the payload and derive its content-addressed key;
//  2. create it if not exists — an existing object is not an error;
//  3. read it back and require byte-identical content (ErrObjectExists otherwise);
//  4. check its length and digest and decode it fully (count, membership, order);
//  5. create the manifest the same way;
//  6. read the manifest back, parse and validate it, and require equality with the intended
//     manifest (ErrManifestMismatch).
//
// Put is idempotent: repeating it with the same records returns the same key. recs is not
// modified.
func (w *Writer) Put(ctx context.Context, b routing.BucketID, gen int64, recs []routing.Record) (key string, err error) {
	ctx, span := w.tracer.Start(ctx, "pulpitum.archive.write", trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(
			attribute.Int("pulpitum.archive.records", len(recs)),
			attribute.String("pulpitum.archive.format", w.opts.Format.String()),
		))
	defer func() {
		if err != nil {
			span.SetStatus(codes.Error, err.Error())
		}
		span.End()
	}()
	if gen < 0 || !b.Strategy.Valid() || strings.TrimSpace(b.Key) == "" || strings.TrimSpace(b.TableID) == "" ||
		!utf8.ValidString(b.TableID) || !utf8.ValidString(b.Key) {
		return "", ErrInvalidBucket
	}
	// Both keys share the bucket's directory; check the longer file name.
	zeros := strings.Repeat("0", 64)
	longest := PayloadKey(w.opts.Prefix, b, gen, zeros, w.opts.Format)
	if m := ManifestKey(w.opts.Prefix, b, gen, zeros); len(m) > len(longest) {
		longest = m
	}
	if err := checkKeyLimits(b, longest, w.opts.MaxKeySegmentBytes, w.opts.MaxKeyBytes); err != nil {
		return "", err
	}
	if err := validateRecords(b, recs); err != nil {
		return "", err
	}
	var payload []byte
	switch w.opts.Format {
	case FormatJSON:
		payload = encodeJSONPayload(recs)
	default:
		if payload, err = encodeParquetPayload(recs, w.opts.RowGroupRows, w.opts.PageBufferBytes); err != nil {
			return "", err
		}
	}
	digest := sha256Hex(payload)
	m := &Manifest{
		Version:       ManifestVersion,
		Format:        w.opts.Format,
		SchemaVersion: RecordSchemaVersion,
		Bucket:        b,
		Generation:    gen,
		PayloadKey:    PayloadKey(w.opts.Prefix, b, gen, digest, w.opts.Format),
		RecordCount:   uint64(len(recs)),
		PayloadBytes:  uint64(len(payload)),
		SHA256:        digest,
		ClusteringKey: clusteringKey,
	}
	body, err := m.MarshalJSON()
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrInvalidBucket, err)
	}
	manifestKey := ManifestKey(w.opts.Prefix, b, gen, sha256Hex(body))

	contentType := "application/vnd.apache.parquet"
	if w.opts.Format == FormatJSON {
		contentType = "application/json"
	}
	uploaded, err := w.createVerified(ctx, m.PayloadKey, payload, contentType)
	if err != nil {
		return "", err
	}
	if _, err := decodeVerified(ctx, m, b, uploaded, 8<<10); err != nil {
		return "", err
	}
	uploadedManifest, err := w.createVerified(ctx, manifestKey, body, "application/json")
	if err != nil {
		return "", err
	}
	got, err := ParseManifest(uploadedManifest)
	if err != nil {
		return "", err
	}
	if err := got.Validate(); err != nil {
		return "", err
	}
	if !got.Equal(m) {
		return "", ErrManifestMismatch
	}
	return manifestKey, nil
}

// createVerified creates key with data unless it exists, then always reads it back and
// requires the same bytes. When both the write and the read fail, the write's error wins.
func (w *Writer) createVerified(ctx context.Context, key string, data []byte, contentType string) ([]byte, error) {
	werr := w.store.createIfNotExists(ctx, key, data, contentType)
	got, rerr := w.store.readAll(ctx, key, nil)
	switch {
	case rerr == nil && bytes.Equal(got, data):
		return got, nil
	case rerr == nil:
		return nil, ErrObjectExists
	case werr != nil:
		return nil, werr
	}
	return nil, rerr
}
