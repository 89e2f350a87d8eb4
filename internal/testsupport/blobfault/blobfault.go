// Package blobfault wraps a gocloud.dev/blob bucket with injectable faults, for fault tests of
// the archive's object-store protocol: an operation can fail before it reaches the store, fail
// after the store did it (an ambiguous outcome: the caller sees an error, the object exists),
// or stall until the caller's context ends (a timeout, before or after the store did it).
//
// The wrapper is a gocloud.dev/blob driver over the inner bucket's public API, so everything
// above it (per-operation deadlines, IfNotExist, ranged reads, listing) runs the real blob
// code. It must not be used outside tests and tools.
package blobfault

import (
	"context"
	"errors"
	"io"

	"gocloud.dev/blob"
	"gocloud.dev/blob/driver"
	"gocloud.dev/gcerrors"
)

// Op names an object-store operation.
type Op string

// Operations that can be faulted.
const (
	OpWrite      Op = "write"      // a whole object write (the fault applies at Close)
	OpRead       Op = "read"       // opening a (ranged) reader
	OpAttributes Op = "attributes" // reading an object's attributes
	OpList       Op = "list"       // one page of a listing
	OpDelete     Op = "delete"     // deleting an object
)

// Fault is what happens to one operation.
type Fault int

// Faults.
const (
	// None lets the operation through.
	None Fault = iota
	// FailBefore returns ErrInjected without doing the operation.
	FailBefore
	// FailAfter does the operation, then returns ErrInjected: an ambiguous outcome.
	FailAfter
	// StallBefore waits until the operation's context ends and returns its error, without
	// doing the operation: a timeout.
	StallBefore
	// StallAfter does the operation, then waits until its context ends and returns its
	// error: a timeout whose operation took effect.
	StallAfter
)

// String returns the fault's name.
func (f Fault) String() string {
	return [...]string{"none", "fail-before", "fail-after", "stall-before", "stall-after"}[f]
}

// ErrInjected is the error of an injected failure. Its gcerrors code is Internal.
var ErrInjected = errors.New("blobfault: injected object-store failure")

// Injector decides the fault of each operation on key. It is called concurrently.
type Injector func(op Op, key string) Fault

// Wrap returns a bucket that performs every operation on inner, subject to inject. Closing it
// does not close inner.
func Wrap(inner *blob.Bucket, inject Injector) *blob.Bucket {
	return blob.NewBucket(&bucket{inner: inner, inject: inject})
}

type bucket struct {
	inner  *blob.Bucket
	inject Injector
}

// around runs do under the fault decided for (op, key).
func (b *bucket) around(ctx context.Context, op Op, key string, do func() error) error {
	f := b.inject(op, key)
	switch f {
	case FailBefore:
		return ErrInjected
	case StallBefore:
		<-ctx.Done()
		return ctx.Err()
	}
	if err := do(); err != nil {
		return err
	}
	switch f {
	case FailAfter:
		return ErrInjected
	case StallAfter:
		<-ctx.Done()
		return ctx.Err()
	}
	return nil
}

func (b *bucket) ErrorCode(err error) gcerrors.ErrorCode {
	switch {
	case errors.Is(err, ErrInjected):
		return gcerrors.Internal
	case errors.Is(err, context.DeadlineExceeded):
		return gcerrors.DeadlineExceeded
	case errors.Is(err, context.Canceled):
		return gcerrors.Canceled
	}
	return gcerrors.Code(err)
}

func (b *bucket) As(any) bool             { return false }
func (b *bucket) ErrorAs(error, any) bool { return false }

func (b *bucket) Attributes(ctx context.Context, key string) (*driver.Attributes, error) {
	var a *blob.Attributes
	err := b.around(ctx, OpAttributes, key, func() (err error) {
		a, err = b.inner.Attributes(ctx, key)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &driver.Attributes{
		CacheControl: a.CacheControl, ContentDisposition: a.ContentDisposition, ContentEncoding: a.ContentEncoding,
		ContentLanguage: a.ContentLanguage, ContentType: a.ContentType, Metadata: a.Metadata,
		CreateTime: a.CreateTime, ModTime: a.ModTime, Size: a.Size, MD5: a.MD5, ETag: a.ETag,
	}, nil
}

func (b *bucket) ListPaged(ctx context.Context, opts *driver.ListOptions) (*driver.ListPage, error) {
	var page driver.ListPage
	err := b.around(ctx, OpList, opts.Prefix, func() error {
		objs, next, err := b.inner.ListPage(ctx, opts.PageToken, max(opts.PageSize, 1),
			&blob.ListOptions{Prefix: opts.Prefix, Delimiter: opts.Delimiter})
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		for _, o := range objs {
			page.Objects = append(page.Objects, &driver.ListObject{Key: o.Key, ModTime: o.ModTime, Size: o.Size, MD5: o.MD5, IsDir: o.IsDir})
		}
		page.NextPageToken = next
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &page, nil
}

func (b *bucket) NewRangeReader(ctx context.Context, key string, offset, length int64, _ *driver.ReaderOptions) (driver.Reader, error) {
	var r *blob.Reader
	err := b.around(ctx, OpRead, key, func() (err error) {
		r, err = b.inner.NewRangeReader(ctx, key, offset, length, nil)
		return err
	})
	if err != nil {
		if r != nil {
			_ = r.Close()
		}
		return nil, err
	}
	return reader{r}, nil
}

type reader struct{ r *blob.Reader }

func (r reader) Read(p []byte) (int, error) { return r.r.Read(p) }
func (r reader) Close() error               { return r.r.Close() }
func (r reader) As(any) bool                { return false }
func (r reader) Attributes() *driver.ReaderAttributes {
	return &driver.ReaderAttributes{ContentType: r.r.ContentType(), ModTime: r.r.ModTime(), Size: r.r.Size()}
}

// NewTypedWriter buffers the object and writes it to inner at Close, where the fault applies.
func (b *bucket) NewTypedWriter(ctx context.Context, key, contentType string, opts *driver.WriterOptions) (driver.Writer, error) {
	return &writer{ctx: ctx, b: b, key: key, opts: &blob.WriterOptions{
		ContentType: contentType, IfNotExist: opts.IfNotExist, Metadata: opts.Metadata,
		CacheControl: opts.CacheControl, ContentEncoding: opts.ContentEncoding,
	}}, nil
}

type writer struct {
	ctx  context.Context
	b    *bucket
	key  string
	opts *blob.WriterOptions
	buf  []byte
}

func (w *writer) Write(p []byte) (int, error) {
	w.buf = append(w.buf, p...)
	return len(p), nil
}

func (w *writer) Close() error {
	return w.b.around(w.ctx, OpWrite, w.key, func() error {
		return w.b.inner.WriteAll(w.ctx, w.key, w.buf, w.opts)
	})
}

func (b *bucket) Copy(ctx context.Context, dstKey, srcKey string, _ *driver.CopyOptions) error {
	return b.around(ctx, OpWrite, dstKey, func() error { return b.inner.Copy(ctx, dstKey, srcKey, nil) })
}

func (b *bucket) Delete(ctx context.Context, key string, _ *driver.DeleteOptions) error {
	return b.around(ctx, OpDelete, key, func() error { return b.inner.Delete(ctx, key) })
}

func (b *bucket) SignedURL(context.Context, string, *driver.SignedURLOptions) (string, error) {
	return "", errors.New("blobfault: signed URLs are not supported")
}

func (b *bucket) Close() error { return nil }
