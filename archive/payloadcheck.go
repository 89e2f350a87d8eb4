package archive

import (
	"context"
	"time"

	"github.com/flightsrv/flightsrv/routing"
)

// DefaultPayloadCheckInterval is how long a Reader trusts a payload check (ReaderOptions.
// PayloadCheckInterval): within it, reads of the same route skip the check.
const DefaultPayloadCheckInterval = 10 * time.Second

// checkPayload verifies that the payload of the validated manifest m (of manifestKey) exists
// with the payload_bytes the manifest recorded: one metadata request (gocloud.dev's
// Attributes: a stat or HEAD), remembered per manifest key — which names one generation of
// one bucket — for ReaderOptions.PayloadCheckInterval. Every Read, Aggregate and ReadBatches
// runs it after the manifest checks, so that a count answered from the manifest's
// record_count or from a cached footer fails where a read of the rows would: a deleted
// payload is ErrObjectNotFound, a truncated or extended one ErrPayloadLength (both match
// routing.ErrArchiveDamaged); a store failure is ErrObjectTimeout or
// ErrObjectStoreUnavailable. Failures are not remembered. Under VerifyFully the full read
// checks all of this itself.
func (r *Reader) checkPayload(ctx context.Context, manifestKey string, m *Manifest) error {
	if r.opts.VerifyFully {
		return nil
	}
	if until, ok := r.payloadChecks.get(manifestKey); ok && time.Now().Before(until) {
		return nil
	}
	size, err := r.store.size(ctx, m.PayloadKey)
	if err != nil {
		return err
	}
	if uint64(size) != m.PayloadBytes {
		return ErrPayloadLength
	}
	if interval := r.opts.PayloadCheckInterval; interval > 0 {
		r.payloadChecks.put(manifestKey, time.Now().Add(interval), 1)
	}
	return nil
}

// size returns the size of the object at key in bytes, from one metadata request. It is
// counted as an object read of no bytes in the request's routing.ReadStats.
func (s *objectStore) size(ctx context.Context, key string) (int64, error) {
	opCtx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	attrs, err := s.bucket.Attributes(opCtx, key)
	if err != nil {
		return 0, objectError(ctx, err)
	}
	routing.StatsFrom(ctx).AddObjectRead(0)
	return attrs.Size, nil
}
