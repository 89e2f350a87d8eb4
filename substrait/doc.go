// Package substrait turns SQL text and client Substrait plans into one validated Substrait
// plan: flightsrv's single logical IR (architecture.md, decision 1).
//
// The SQL front end parses with PostgreSQL's own grammar (pg_query_go; decision 2) and never
// matches SQL text by hand: `?` placeholders are rewritten to `$n` on the token stream of
// PostgreSQL's lexer (Prepare). The supported surface is one SELECT over one routed table:
// columns, `*`, or ungrouped COUNT(*), COUNT(column), MIN(timestamp) and MAX(timestamp); a
// WHERE clause that is exactly the routed predicate; ORDER BY timestamp [, id] in one
// direction; LIMIT; and EXPLAIN of such a query. Histograms are the one grouped shape:
// COUNT(*) grouped by date_trunc(unit, timestamp) or date_bin(INTERVAL stride, timestamp,
// origin) in UTC, ordered by the bin or not, with a LIMIT (Query.Group, groupby.go, which
// also documents how the bins map onto Substrait's round_calendar and round_temporal).
// Client plans (FromSubstrait) are validated by Analyze against the same contract and
// rebuilt in the same canonical form (Build), so the pushdown planner and the executor only
// ever see one shape of plan.
//
// # The routed contract
//
// Every query must pin one partition and a finite half-open time range
// (pulpitum-reference.md §5.2): an AND of `partition_col = 'literal'` and
// `timestamp >= L` / `timestamp < L`, in either operand order. A literal on the left swaps
// the operator (L <= timestamp ⇒ timestamp >= L; L > timestamp ⇒ timestamp < L), avoiding
// the reference implementation's off-by-one quirk; strict lower and inclusive upper bounds
// are refused. Violations are the reference's planning errors (§5.3), exported as sentinels
// (ErrMissingTimestampStart…ErrConflictingTimestampBounds) with fixed messages that carry
// no value.
//
// # Errors
//
// Every planning error is an *Error with a Code:
//
//   - InvalidArgument: routed-contract violations, unknown columns, invalid literals,
//     parameter binding failures, SQL syntax errors (with a position, never the text),
//     undecodable Substrait plans;
//   - Unimplemented: SQL or Substrait constructs outside the supported surface, named in the
//     message ("JOIN is not supported", "GROUP BY id is not supported"…);
//   - NotFound: unknown tables.
//
// An unknown table is NotFound (a missing resource); an unknown column is InvalidArgument
// (PostgreSQL's undefined_column is an error in the query text). Any error that is not an
// *Error is internal.
//
// # Timestamps
//
// The timestamp column is timestamp[ns, tz=UTC] in Arrow and precision_timestamp_tz<9> in
// Substrait, whose literals arrow-go's compute/exprs executes as timestamp[ns, UTC]
// scalars. Literals are read by ParseTimestamp; sessions are UTC.
//
// This package must not import gRPC, Flight, the scan executor, the archive or any store
// driver. It depends on routing only for TableDef and TimeRange.
package substrait
