// Package storetest is the conformance suite every hot-store adapter passes (the CockroachDB/
// PostgreSQL store in routing/cockroach and the SQLite store in routing/sqlite), in the manner
// of one acceptance suite run over several stores. It checks reads (route and rows, orders,
// cursors, limits, sub-ranges, precision), counts and min/max against independently computed
// answers, the write fence (strategy mismatch, read-only buckets, duplicates, invalid
// records), the writable window through routing.DurableTable with an injected clock, the full
// archival state machine (claims, leases, snapshot, publish, hot deletion, deferral, abort,
// lost races, discovery order and limit), isolation of tables sharing partitions and bucket
// keys, concurrent appends, statement counts and error privacy.
//
// The Arrow batch reads (routing.HotBatchScanner, scan.go) are checked with a checked
// allocator that hands out dirty memory and must be back at zero after every read: every
// column subset (none included) and order, both directions, limits (0, 1, exactly a batch,
// more than the rows), clipping and microsecond-grid bounds, never-appended, archiving and
// archived buckets (no reader), batches never empty and within the row and byte limits,
// invalid UTF-8 sort and partition keys, early release and cancellation (the store's
// connections back to zero, through ConnGauge), readers side by side, the snapshot held while
// the bucket is published and its hot rows deleted, statement and row counts, and
// routing.DurableTable.ScanBucket's route decisions; rows are compared with the appended
// records. ScanRange is a store's one read path: the record-level checks (ranges, cursors,
// limits, both orders) read through it too (Records).
//
// Expected answers never come from the store under test, and expected bucket ids are written
// out literally rather than computed with routing's bucket math.
//
// This package is test support: production code must not import it.
package storetest
