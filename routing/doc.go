// Package routing holds the routed-table model of flightsrv: table definitions, the three
// UTC bucket strategies, route states, the route cache, and the durable-table ports through
// which every read, count and append passes (the reference's DurableTable, pulpitum-reference.md §2–§3).
//
// The hot-store adapters live in routing/cockroach (CockroachDB and PostgreSQL over pgx) and
// routing/sqlite (the embedded default); both implement [HotStore] and pass the same
// conformance suite in routing/storetest. Archived buckets are read through [ArchiveReader],
// which the archive package implements.
//
// This package must not import Flight, Substrait, SQL planning or any store driver.
package routing
