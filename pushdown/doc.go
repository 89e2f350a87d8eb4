// Package pushdown binds a validated Substrait plan's routed read for the executor: the
// pinned partition, the finite range and its bucket count, the output schema and the planning
// decisions EXPLAIN prints. Its output, Physical, carries no Substrait.
//
// The aggregate pushdown of the seed is a rewrite of the executor's plan, not a separate
// path: scan lowers the relations onto per-bucket fragments and replaces the read and partial
// aggregate of a fragment whose partial state a store answers without reading rows —
// count(*), min(timestamp) and max(timestamp), grouped by nothing or one time bin, over only
// the routed predicate — by one call of the bucket's partial-aggregate port
// (routing.DurableTable.AggregateBucket). Like Grafana Mimir's astmapper, shapes it cannot
// rewrite are left unchanged (their fragments read rows), while relation kinds nobody knows are
// errors. This package's tests hold the goldens of the whole decision: the plan, the binding,
// and the executor's fragments with pushdown on and off.
//
// This package must not import gRPC, Flight, the archive or any store driver.
package pushdown
