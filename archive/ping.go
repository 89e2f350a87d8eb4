package archive

import (
	"context"
	"errors"

	"gocloud.dev/blob"

	"github.com/flightsrv/flightsrv/routing"
)

var _ routing.Pinger = (*Reader)(nil)

// pingPrefix is a key prefix no archive object has: listing it is a cheap round trip to the
// object store (for a file:// archive, a directory that does not exist; blob.IsAccessible
// would walk the whole archive there).
const pingPrefix = "flightsrv-health-probe/"

// Ping reports whether the archive can still be read, for health checking: the last manifest
// the reader fetched must still exist (so an archive directory or bucket that moved or lost
// its objects reads as down, not only one that cannot be reached); before any manifest was
// read, a one-entry listing of an empty prefix must succeed. Errors are the driver's or say
// which check failed, for logs only; they never name the key.
func (r *Reader) Ping(ctx context.Context) error {
	if key := r.probeKey.Load(); key != nil {
		ok, err := r.store.bucket.Exists(ctx, *key)
		if err != nil {
			return err
		}
		if !ok {
			return errors.New("archive: the last manifest read is gone")
		}
		return nil
	}
	_, _, err := r.store.bucket.ListPage(ctx, blob.FirstPageToken, 1, &blob.ListOptions{Prefix: pingPrefix})
	return err
}
