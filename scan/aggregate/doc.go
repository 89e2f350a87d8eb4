// Package aggregate holds flightsrv's hash aggregation over Arrow record batches: grouped and
// ungrouped count(*), count, sum, avg, min and max, with DISTINCT and FILTER (WHERE …), and
// PostgreSQL's var_samp, var_pop, stddev_samp, stddev_pop, bool_and and bool_or (statagg.go),
// in three modes. Group keys may be numerics (decimal128, whose 16 bytes are the key: one
// column's values share its scale); sum, min and max take numerics too (decsum.go: exact
// totals, 22003 past 38 digits), and Measure.Numeric answers a sum of integers as its exact
// decimal128(38, 0) total (SQL's sum(bigint) is numeric). A per-bucket fragment runs Partial over its rows; the coordinator runs Final
// over the union of the fragments' partial outputs; Single does both in one place. The answers
// follow PostgreSQL's semantics (NULL handling, NaN ordering, bytewise "C" collation for text)
// except where the output types say otherwise (see Measure and OutputSchema).
//
// The hash table is ours (arrow-go's compute has no grouped hash aggregation in Go): group keys
// map to dense group indexes, looked up once per row — one fixed-width column through an
// open-addressing table of its values, one or two text or fixed-width columns through dense
// ids of each column's values (text of up to 7 bytes packed into an integer, longer text in a
// Go map) and, for two, an open-addressing table of the pair of ids, anything else through a
// Go map of an encoded key (group.go) — with the accumulators updated per batch by typed loops over the column's values (one type switch per
// column and batch, no per-row boxing). Group keys are kept in Arrow builders allocated from
// the query's ledger; the Go-heap structures (hash table, accumulators, distinct sets) are
// accounted by an estimate checked against the ledger's limit after every input batch.
//
// Output rows come in the order in which their groups first appeared in the input (in Final
// mode: in the concatenated partial input). With fragments that are contiguous runs of one
// ordered input and partial outputs concatenated in fragment order, Partial then Final gives
// the same rows in the same order as Single.
//
// This package must not import routing, the stores, Flight or gRPC: it sees only Arrow record
// readers and the query's ledger (scan/ledger).
package aggregate
