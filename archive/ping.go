package archive

import (
	"context"
	"errors"

	"github.com/flightsrv/flightsrv/routing"
)

var _ routing.Pinger = (*Reader)(nil)

// Ping reports whether the archive's object-store bucket is accessible (gocloud.dev/blob's
// IsAccessible: one request that lists or heads nothing of ours), for health checking. Errors
// are the driver's, for logs only.
func (r *Reader) Ping(ctx context.Context) error {
	ok, err := r.store.bucket.IsAccessible(ctx)
	if err != nil {
		return err
	}
	if !ok {
		return errors.New("archive: bucket is not accessible")
	}
	return nil
}
