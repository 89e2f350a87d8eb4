package archive

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/flightsrv/flightsrv/routing"
)

// DefaultPayloadCheckInterval is how long a Reader trusts a payload check (ReaderOptions.
// PayloadCheckInterval): within it, reads of the same route skip the check.
const DefaultPayloadCheckInterval = 10 * time.Second

// cachedManifest is a validated manifest as the manifest cache holds it, with the deadline of
// its payload check: one cache lookup per read finds both (an archived query asks them for
// each of its buckets: 1,374 in bench's BenchmarkGroupedCount).
type cachedManifest struct {
	m *Manifest
	// checkedUntil is when the last successful payload check stops being trusted (Unix ns;
	// 0: not checked). Written by any reader of the entry: atomic.
	checkedUntil atomic.Int64
}

// checkPayload verifies that the payload of the validated manifest e.m exists
// with the payload_bytes the manifest recorded: one metadata request (gocloud.dev's
// Attributes: a stat or HEAD), remembered in the manifest's cache entry — a manifest key names
// one generation of one bucket — for ReaderOptions.PayloadCheckInterval (so not past the
// entry's eviction). Every Read, Aggregate and ReadBatches
// runs it after the manifest checks, so that a count answered from the manifest's
// record_count or from a cached footer fails where a read of the rows would: a deleted
// payload is ErrObjectNotFound, a truncated or extended one ErrPayloadLength (both match
// routing.ErrArchiveDamaged); a store failure is ErrObjectTimeout or
// ErrObjectStoreUnavailable. Failures are not remembered. Under VerifyFully the full read
// checks all of this itself.
func (r *Reader) checkPayload(ctx context.Context, e *cachedManifest) error {
	if r.opts.VerifyFully {
		return nil
	}
	if until := e.checkedUntil.Load(); until != 0 && time.Now().UnixNano() < until {
		return nil
	}
	m := e.m
	size, err := r.store.size(ctx, m.PayloadKey)
	if err != nil {
		return err
	}
	if uint64(size) != m.PayloadBytes {
		return ErrPayloadLength
	}
	if interval := r.opts.PayloadCheckInterval; interval > 0 {
		e.checkedUntil.Store(time.Now().Add(interval).UnixNano())
	}
	return nil
}

// size returns the size of the object at key in bytes, from one metadata request. It is
// counted as an object read of no bytes in the request's routing.ReadStats.
func (s *objectStore) size(ctx context.Context, key string) (int64, error) {
	if s.direct(key) {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		size, err := s.files.size(key)
		if err != nil {
			return 0, fileError(ctx, err)
		}
		routing.StatsFrom(ctx).AddObjectRead(0)
		return size, nil
	}
	opCtx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	attrs, err := s.bucket.Attributes(opCtx, key)
	if err != nil {
		return 0, objectError(ctx, err)
	}
	routing.StatsFrom(ctx).AddObjectRead(0)
	return attrs.Size, nil
}
