// Package query is the engine behind the Flight SQL layer (it implements flightsql.Engine):
// it prepares SQL text with the general binder (package substrait; parameterless statements
// are kept compiled in a statement cache) or validates a client's Substrait plan
// (substrait.PrepareSubstrait), binds it under the session's options (analytical mode, user,
// the planning instant), resolves each routed read's route (partitions, time range, buckets;
// --max-buckets, --max-partitions, the analytical partition discovery), and executes it with
// package scan over the routed tables (package routing), whose pushdown rewrite (package
// pushdown) asks the stores' partial-aggregate ports where they can answer. For multi-endpoint
// results it splits a plan into time windows (Fragments) and executes one (ExecuteFragment).
// It also answers EXPLAIN and EXPLAIN ANALYZE (analyze.go: the query run with its operators
// measured, scan.Analysis), the system views flightsrv.queries and flightsrv.sessions and the
// administrators' flightsrv.cancel_query (system.go, from internal/querylog's Registry), names
// the spans of pushed-down aggregates, records what each query
// read (routing.ReadStats) in the call's query record, and bounds each query's memory, rows and
// CPU time (scan.Options). It executes INSERT (write.go: IsUpdate, ExecuteUpdate) through
// routing.DurableTable.Ingest, all or nothing, and reads the client stream of both write paths
// (WriteStream); the fence's refusals leave it typed, for flightsql to word.
//
// Errors leave this package as gRPC status errors when they are the client's to see
// (planning errors keep their codes and value-free messages; an invalid time range is
// INVALID_ARGUMENT; limits are RESOURCE_EXHAUSTED naming the limit; an unavailable store is
// UNAVAILABLE); any other error is returned as it is, for the Flight SQL layer to log and hide.
package query
