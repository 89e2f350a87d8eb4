// Package routing holds the routed-table model of flightsrv: table definitions, the three
// UTC bucket strategies, route states, the route cache, and the durable-table ports through
// which every read, count and append passes (the reference's DurableTable, pulpitum-reference.md §2–§3),
// including the MIN/MAX(timestamp) port ([DurableTable.MinMax]: buckets walked in time order,
// stopping at the first that answers).
//
// The hot-store adapters live in routing/cockroach (CockroachDB and PostgreSQL over pgx) and
// routing/sqlite (the embedded default); both implement [HotStore] and pass the same
// conformance suite in routing/storetest. Archived buckets are read through [ArchiveReader],
// which the archive package implements.
//
// Histograms (COUNT(*) per time bin) go through [DurableTable.CountByBin]: [Binning] is the
// one definition of date_trunc and date_bin bins (UTC) shared by every tier and the scan
// path; a bucket inside one bin is answered by CountBucket, others by the optional
// [HotBinCounter] and [ArchiveBinCounter] capabilities (or paged record reads without them),
// and the buckets' bins are merged in order (histogram.go).
//
// This package must not import Flight, Substrait, SQL planning or any store driver.
package routing
