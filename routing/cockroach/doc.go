// Package cockroach is the production hot store of flightsrv: routing.HotStore and
// routing.ArchiveStateStore over a jackc/pgx pool on the Pulpitum v4 CockroachDB schema
// (docs/pulpitum-v4.md §1, §3, §4), so an existing Pulpitum v4 deployment is served
// without migration.
//
// Every statement is parameterised and runs unchanged on CockroachDB and PostgreSQL (tests
// run against a real PostgreSQL server started by internal/testsupport/pgtest; CockroachDB cannot be
// installed on our machines). Reads are one statement each: a CTE picks the bucket's route
// (synthesising hot when no metadata row exists) and a LEFT JOIN LATERAL fetches rows, a
// partial aggregate (aggregate.go: count(*), min and max of the event time, two primary-key
// probes with LIMIT 1 when no count is asked, or the same per time bin) only when the bucket
// is not archived, so route and rows come from one MVCC
// snapshot. Mutations run in SERIALIZABLE transactions retried on SQLSTATE 40001. On
// PostgreSQL only, the row-aggregate port (routing.RowAggregator, rowagg.go) runs a
// fragment's residual filter and partial aggregate over a hot bucket's rows, JSON members
// read with the json type's ->> (each document parsed once a row), in the same shape of
// statement with the route; it declines (routing.ErrNoAggregate) what it would not compute
// exactly as the executor does.
//
// The archival state machine (archive.go) is the reference's, statement for statement, with
// one change: lease expiries and retry times are computed by the database (now() plus a
// duration) instead of the application's clock, so only the database's clock decides leases.
// Status reads a bucket's durable archival fields; Product names the server (CockroachDB or
// PostgreSQL).
//
// Timestamps are TIMESTAMPTZ with microsecond precision and are returned in UTC.
//
// Arrow reads (ScanRange, routing.HotBatchScanner, scan.go) are one statement per bucket too,
// but not the LEFT JOIN LATERAL: PostgreSQL keeps only a nested loop's outer order (the one
// route row), so ordering the lateral's rows meant sorting the whole bucket on the server
// (an external merge sort on disk for 150,000 rows) before the first row left. The scan is the
// route row UNION ALL the records, ordered on top, which PostgreSQL runs as a Merge Append of
// the records' primary-key index scan and the route row placed first (TestScanStatementPlan
// checks every variant, custom and generic plans); CockroachDB can run an ordered UNION ALL as
// an ordered synchronizer of ordered inputs, but that plan has not been checked on a cluster.
// The route travels in one text column and the archived check is an index-scan bound, which
// keeps a record row as cheap on the server as in a plain SELECT of its columns. The reader
// keeps the statement open and decodes pgx's raw binary values (TIMESTAMPTZ as int64 µs since
// 2000-01-01, BYTEA as bytes) straight into Arrow buffers, a batch at a time; connections
// configured for the simple protocol or exec mode get text results and a slower decoding
// path. A reader stopped early drains what its limit leaves (up to about 1 MiB) or closes its
// connection. arrowbatch.go, the batch assembly, is shared word for word with routing/sqlite.
//
// Every statement the store sends is counted into the context's routing.ReadStats and traced
// as an OpenTelemetry client span (docs/pulpitum-v4.md §6.1) through a pgx.QueryTracer;
// Config.Tracer adds a caller's tracer behind it.
//
// Migrations are numbered and checksummed (package routing/migration); Migrate
// applies them and Validate is the read-only startup check.
//
// This package must not import Flight, Substrait, SQL planning or the archive package.
package cockroach
