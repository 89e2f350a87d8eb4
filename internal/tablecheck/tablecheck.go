// Package tablecheck counts a routed table's records through the durable-table ports, for
// tests that compare what the table answers with a reference (the archival fault tests, the
// loader's tests). It must not be used by the server.
package tablecheck

import (
	"context"

	"github.com/flightsrv/flightsrv/routing"
)

// Count returns the number of records of partition pk inside r, asking each bucket for its
// count (routing.DurableTable.CountBucket: one key-only statement per hot bucket, statistics
// or a manifest count per archived one), and how many buckets each tier answered.
func Count(ctx context.Context, t *routing.DurableTable, pk []byte, r routing.TimeRange) (n uint64, hot, archived int, err error) {
	for _, b := range t.Buckets(pk, r) {
		c, tier, err := t.CountBucket(ctx, b, r)
		if err != nil {
			return 0, 0, 0, err
		}
		n += c
		if tier == routing.TierArchive {
			archived++
		} else {
			hot++
		}
	}
	return n, hot, archived, nil
}
