// Package scan is flightsrv's executor: it runs Substrait relations over Arrow record batches,
// lowered onto per-bucket fragments and a coordinator stage (the distributed-plan seed, 002,
// in one process; docs/architecture.md, "The executor and its fragments").
//
// Execute takes a validated plan and a binding of its routed ReadRel (table, partitions,
// finite time range). The per-row part of the plan directly above the read — residual
// filters, projections, a sort, a limit, an aggregation — is inlined into one pipeline over
// the read's base columns, so each fragment reads only the columns its expressions reference:
//
//	fragment (one per bucket): ScanBucket(columns, range, limit hint)
//	    → [Sort on (timestamp, id) when an archive written elsewhere is not stored in order]
//	    → Filter(residual conjuncts) → Project | Select → Rebatch
//	    → partial Aggregate | local TopK | local Limit
//	coordinator: concatenation of the fragments in bucket order → final Aggregate | Window |
//	    TopK | Sort → Fetch
//
// Buckets of one partition never overlap in time, so the ordered k-way merge of bucket
// streams by (timestamp, id) is their concatenation in bound order (reversed for descending
// scans), which costs nothing per row. Fragments start as the coordinator pulls, at most the
// table's fan-out running or holding unconsumed output at once, each buffering at most a few
// batches (fragments ending in a partial aggregate or top-k: at most the fan-out running, up
// to four times it started ahead of the one consumed, the ended ones holding their one
// output until the coordinator reaches them); with a limit over rows in bucket order the first fragment starts alone and others
// only while the rows of the earlier ones fall short of it (the seed's "stop starting buckets
// once earlier ones prove the page full"). Sorts that are not bucket order keep a top k per
// fragment and merge them, or sort everything at the coordinator. Relations above a
// coordinator-side operator run in the coordinator (scan/ops, scan/aggregate). A ProjectRel
// holding window functions always runs there (window.go): one ops.Window per distinct
// partitioning and order, over every row of its input. So does a substrait.ProjectSet
// (projectset.go): one ops.ProjectSet over its lowered input, calling its set-returning
// functions on each row (with a condition, LEFT JOIN LATERAL … ON cond, numbered and kept per
// input row by ops.SetFilter). So does a JoinRel or HashJoinRel
// (join.go): one ops.HashJoin over its two lowered inputs, the equalities between the sides
// its hash keys, the right input buffered under the ledger — or, when both inputs are routed
// reads of one table keyed on their partition columns, one fragment per partition running the
// join over that partition's rows, each bucket read once for both sides where they read the
// same rows (partjoin.go); or, when the left input is a routed read of rows alone, the right
// input hashed once and probed in each of the left input's fragments (fragjoin.go); an
// aggregation directly above either runs partially in those fragments and finally at the
// coordinator (joinagg.go).
//
// Every batch a query builds or holds is allocated through its ledger (scan/ledger), which
// enforces the per-query memory limit (and, through a ledger.Budget, the limit all the
// process's queries share); each fragment holds a reservation released when it ends. Memory
// is reserved before it is spent: projections claim each batch's estimated bytes before
// building it (scan/ops), and a routed read claims, for its whole execution, what the column
// metadata of the batches it may hold costs outside the allocator (heldBatches × columns ×
// ops.ColumnOverhead); a plan whose one-row batches could not fit is refused by Prepare and
// Execute (MaxOutputColumns is the widest output that can). Releasing the result (or cancelling its context) cancels every fragment, waits for
// them and returns their connections and buffers.
//
// Aggregate pushdown is a rewrite of this plan (pushdown.go, Options.Pushdown): a fragment
// whose pipeline is a routed read with only route-implied conjuncts and a partial aggregate of
// count(*), min(timestamp) and max(timestamp), grouped by nothing or one time bin, asks its
// bucket's store for the partial state (routing.DurableTable.AggregateBucket: one key-only
// statement per hot bucket, manifest or trusted statistics per archived bucket) instead of
// reading rows; the coordinator's final aggregate combines store answers and row-reading
// fragments alike, and a bucket whose store cannot answer reads its rows. Such an aggregate
// takes a light coordinator path (storeagg.go): no per-bucket pipeline or batch hand-over —
// the stores are asked at most the fan-out at once, the coordinator's goroutine among the
// askers, and the answers of consecutive buckets reach the final aggregate as one batch. The shapes are
// matched wherever they sit in a plan; others are left unchanged and EXPLAIN says why. For
// MIN/MAX alone a launch policy walks the buckets in time order from the needed end(s) and
// starts none once the walk's extreme is answered. Any other routed partial aggregate whose
// filter, groups and measures have a store-neutral form (hotagg.go: JSON fields, integer
// casts, comparisons, date_trunc bins, sum/count/avg/min/max) takes the same light path: the
// coordinator asks the hot store for 64 buckets' partial states a statement
// (routing.DurableTable.AggregateRows, routes and rows from one snapshot), and a bucket
// answered by no store reads its rows in its fragment.
//
// A Prepared plan is immutable: the query engine keeps the compiled form of a statement
// without parameters and executes it again, concurrently, for later calls. EXPLAIN ANALYZE
// executes one with an Analysis (ExecuteAnalyzed, analyze.go), whose counting readers measure
// each operator's rows, batches and time, and prints the measures on the EXPLAIN lines
// (ExplainAnalyzed).
//
// This package must not import Flight, gRPC or any store driver; it reaches stores only
// through routing.DurableTable.
package scan
