// Package pushdown is the store-aggregate rule of the aggregate-pushdown seed: which routed
// partial aggregates the stores answer without shipping rows, and how.
//
// The executor (scan) lowers a plan onto per-bucket fragments; for a fragment whose pipeline
// is a routed read followed by a partial aggregate it builds the narrow Shape of that
// aggregate (its grouping keys, its measures, the residual conjuncts beyond the routed
// predicate) and calls Match. A Rewrite says what every bucket is asked — typed measures
// (routing.Measure: count(*), min(timestamp), max(timestamp)), an optional time bin — and how
// the fragment's partial state is built from the store's answer and, for a grouping by the
// partition column, the bucket's partition key (a bucket holds one partition). The executor
// then replaces the fragment's read and partial aggregate by one call of the bucket's
// partial-aggregate port (routing.DurableTable.AggregateGroups): a hot bucket answers with one
// key-only statement, an archived one from its manifest or trusted footer and page statistics.
// A Rewrite also names its span operation (Operation) and describes itself for EXPLAIN
// (Explain); StartOrder is the start-order policy for extremes (MIN/MAX of one partition stop
// starting buckets once earlier ones answered). Shapes Match cannot rewrite are left to read
// rows, with the reason in EXPLAIN (Grafana Mimir's astmapper rule).
//
// Adding a pushed-down aggregate is one routing.MeasureFunc (with its Validate case and
// partial-state Field), one case in Match, one statement or statistics rule per store
// (routing/cockroach, routing/sqlite, archive), and one case of the conformance suite
// (routing/storetest).
//
// The tests here are the goldens of the whole decision: the plan the general binder produces,
// its route, and the executor's fragments with pushdown on and off.
//
// The hot tier's row aggregates (filters and aggregates over a hot bucket's rows, run by the
// store) are not a rule of this package: scan/hotagg.go translates them into
// routing.RowAggregate, since they need the expressions themselves, not a narrow shape.
//
// This package must not import gRPC, Flight, the archive, the executor or any store driver.
package pushdown
