// Package routing holds the routed-table model of flightsrv: table definitions, the three
// UTC bucket strategies, route states, the route cache, and the durable-table ports through
// which every read, aggregate and append passes (the reference's DurableTable,
// docs/pulpitum-v4.md §2–§3).
//
// The hot-store adapters live in routing/cockroach (CockroachDB and PostgreSQL over pgx) and
// routing/sqlite (the embedded default); both implement [HotStore] and pass the same
// conformance suite in routing/storetest. Archived buckets are read through [ArchiveReader],
// which the archive package implements.
//
// Rows have one read path per store: Arrow batches, [HotBatchScanner.ScanRange] for a hot
// bucket (route and rows from one statement) and [ArchiveBatchReader.ReadBatches] for an
// archived one, routed by [DurableTable.ScanBucket]. The record-level reads of Pulpitum's
// contract ([DurableTable.QueryPage], [DurableTable.ReadBucket], cursors and limits) are built
// on it ([ReadRecords]), never on a second statement or decoder.
//
// Aggregates a store answers without reading rows go through one partial-aggregate port per
// store (partial.go): [HotStore.AggregateRange] (as Arrow batches of
// [PartialAggregateSchema]) and [ArchiveReader.AggregateGroups] (as [PartialGroup]s) return the
// partial state of the request's typed measures ([Measure]: count(*), min(timestamp),
// max(timestamp)) of one bucket, ungrouped or per time bin, and
// [DurableTable.AggregateGroups] (groups, what the executor asks) and
// [DurableTable.AggregateBucket] (Arrow) route a bucket to the tier that holds it (a bucket
// inside one bin is asked ungrouped). The executor's final aggregate combines these answers with
// those of fragments that read rows; [ErrNoAggregate] sends a bucket back to reading rows.
// A hot store may also run a fragment's filter and partial aggregate over a bucket's rows
// ([RowAggregator], rowagg.go): [DurableTable.AggregateRows] asks it for a [RowAggregate]
// (store-neutral [HotExpr] filters, groups and measures; the answer is the executor's partial
// state) and never asks an archived bucket.
// [Binning] is the one definition of date_trunc and date_bin bins (UTC) shared by every tier
// and the scan path (binning.go).
//
// Writes of a whole request (Flight SQL bulk ingest, INSERT, a `load` file) go through
// [DurableTable.Ingest] (ingest.go): the record rules of the write fence as the records stream,
// then the store's one write port [HotStore.AppendStream], one all-or-nothing transaction over
// every bucket the request touches.
//
// This package must not import Flight, Substrait, SQL planning or any store driver.
package routing
