// Package sqlite is the embedded default hot store of flightsrv: routing.HotStore and
// routing.ArchiveStateStore over SQLite through modernc.org/sqlite (pure Go, no cgo), so a
// single node and the demo need nothing but Go. It passes the same conformance suite
// (routing/storetest) as the CockroachDB store and gives the same answers.
//
// The schema is the Pulpitum v4 logical schema in SQLite types (see BaselineSQL): BLOB for
// bytes, INTEGER 0/1 for booleans, and INTEGER microseconds since the Unix epoch (UTC) for
// every timestamp, the precision of CockroachDB TIMESTAMPTZ, so cursors compare identically on
// both stores. Migrations are numbered and checksummed like the CockroachDB store's, with
// their own numbering starting at 1.
//
// The database runs in WAL mode with a busy timeout and foreign keys on. Writes go through a
// single connection in IMMEDIATE transactions; reads use a small pool of query-only
// connections and are one statement each (Snapshot is one read transaction), so a bucket's
// route and rows come from one snapshot. The store's clock (Config.Clock) is its database
// time: lease expiries and retry times are set and compared with it.
//
// Every statement is counted into the context's routing.ReadStats, including BEGIN and
// COMMIT/ROLLBACK of write transactions.
//
// Arrow reads (ScanRange, routing.HotBatchScanner, scan.go) are one statement per bucket: the
// route row UNION ALL the records, whose ORDER BY SQLite runs as a merge of the two arms with
// the records' arm following the primary key (no temporary B-tree), inside a co-routine that
// returns only the requested columns. The reader keeps the statement, and so its WAL snapshot,
// open between batches and scans each row into reused destinations without conversion
// (database/sql Scanners receive the driver's values; the driver itself still copies each
// BLOB), straight into Arrow buffers. arrowbatch.go, the batch assembly, is shared word for
// word with routing/cockroach.
//
// The partial-aggregate port (routing.HotStore.AggregateRange, aggregate.go) is one statement
// with the route over the primary key: count(*), min and max of the event time, MIN/MAX
// probes, or a GROUP BY per time bin in integer microsecond arithmetic, giving the
// CockroachDB store's answers.
//
// The row-aggregate port (routing.RowAggregator, rowagg.go) runs a fragment's residual filter
// and partial aggregate over one bucket's rows as one statement with its route, declining any
// bucket holding a record SQLite's JSON functions would read otherwise than the executor. It is
// off unless Config.RowAggregates is set (serve --sqlite-row-aggregates): in process, the
// executor reading the rows was measured 12–41× faster.
//
// This package must not import Flight, Substrait, SQL planning or the archive package.
package sqlite
