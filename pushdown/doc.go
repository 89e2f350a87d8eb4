// Package pushdown holds what the aggregate pushdown of the seed shares between planning and
// the executor: the bucket count of a routed read's range (BucketCount, which --max-buckets
// and EXPLAIN use), and the goldens of the whole decision — the plan the general binder
// produces, its route, and the executor's fragments with pushdown on and off.
//
// The aggregate pushdown itself is a rewrite of the executor's plan, not a separate path:
// scan lowers the relations onto per-bucket fragments and replaces the read and partial
// aggregate of a fragment whose partial state a store answers without reading rows —
// count(*), min(timestamp) and max(timestamp), grouped by nothing or one time bin, over only
// the routed predicate — by one call of the bucket's partial-aggregate port
// (routing.DurableTable.AggregateBucket). Like Grafana Mimir's astmapper, shapes it cannot
// rewrite are left unchanged (their fragments read rows), while relation kinds nobody knows are
// errors.
//
// This package must not import gRPC, Flight, the archive or any store driver.
package pushdown
