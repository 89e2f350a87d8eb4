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
// Expected answers never come from the store under test, and expected bucket ids are written
// out literally rather than computed with routing's bucket math.
//
// This package is test support: production code must not import it.
package storetest
