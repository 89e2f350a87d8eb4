// Package pushdown decides how a validated Substrait plan executes: which aggregates are
// answered by the durable-table ports without reading records (the aggregate pushdown seed),
// and what the routed scan must do for everything else. Its output, Physical, carries no
// Substrait: the pinned partition, the finite range, the columns, order, limit, aggregate,
// output schema and the human-readable decisions EXPLAIN prints.
//
// Like Grafana Mimir's astmapper, the planner never modifies its input and leaves every
// shape it does not recognise on the scan path unchanged (correct for every supported
// shape), while relation kinds it does not know are errors. Recognition follows the seed
// exactly: COUNT(*) over one routed scan whose only predicate is the routed one → KindCount;
// MIN/MAX(timestamp) are the next candidates (KindMinMax, behind Options.MinMax until the
// executor implements them); COUNT(*) grouped by a time bin of the timestamp (the dashboard
// histogram) → KindHistogram; COUNT(column), SUM and other grouped aggregates are never
// pushed down implicitly.
//
// This package must not import gRPC, Flight, the scan executor, the archive or any store
// driver.
package pushdown
