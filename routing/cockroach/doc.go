// Package cockroach is the production hot store of flightsrv: routing.HotStore and
// routing.ArchiveStateStore over a jackc/pgx pool on the Pulpitum v4 CockroachDB schema
// (pulpitum-reference.md §1, §3, §4), so an existing Pulpitum v4 deployment is served
// without migration.
//
// Every statement is parameterised and runs unchanged on CockroachDB and PostgreSQL (tests
// run against a real PostgreSQL server started by internal/pgtest; CockroachDB cannot be
// installed on our machines). Reads are one statement each: a CTE picks the bucket's route
// (synthesising hot when no metadata row exists) and a LEFT JOIN LATERAL fetches rows, a
// count, min/max (two primary-key probes with LIMIT 1, no aggregate) or per-bin counts
// (histogram.go) only when the bucket is not archived, so route and rows come from one MVCC
// snapshot. Mutations run in SERIALIZABLE transactions retried on SQLSTATE 40001.
//
// Timestamps are TIMESTAMPTZ with microsecond precision and are returned in UTC.
//
// Every statement the store sends is counted into the context's routing.ReadStats and traced
// as an OpenTelemetry client span (pulpitum-reference.md §6.1) through a pgx.QueryTracer;
// Config.Tracer adds a caller's tracer behind it.
//
// Migrations are numbered and checksummed (package routing/cockroach/migration); Migrate
// applies them and Validate is the read-only startup check.
//
// This package must not import Flight, Substrait, SQL planning or the archive package.
package cockroach
