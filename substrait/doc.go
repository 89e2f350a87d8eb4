// Package substrait turns SQL text and client Substrait plans into one validated Substrait
// plan: flightsrv's single logical IR (architecture.md, decision 1).
//
// The SQL front end parses with PostgreSQL's own grammar (pg_query_go; decision 2) and never
// matches SQL text by hand: `?` placeholders are rewritten to `$n` on the token stream of
// PostgreSQL's lexer (Prepare). Statements of the canonical shapes — one routed scan with
// columns or `*`, ungrouped COUNT(*), COUNT(column), MIN(timestamp) and MAX(timestamp),
// ORDER BY timestamp [, id], LIMIT, and the histograms (COUNT(*) grouped by date_trunc or
// date_bin, groupby.go) — are planned by the templates of sql.go into the canonical plan
// (Query, Build) that the executor's pushdown rewrite recognises. Every other SELECT is bound
// by the general binder (bind.go, bindexpr.go, bindfunc.go, route.go): pg_query's parse tree
// to Substrait relations (ReadRel, FilterRel, ProjectRel, AggregateRel, SortRel, FetchRel,
// SetRel) with expressions on Substrait's standard functions where arrow-go evaluates them and
// on flightsrv's own extension URNPostgres (JSON access, LIKE, string functions, date_part,
// to_char; evaluated by scan/ops) elsewhere; table-less statements and SHOW bind to constants
// (Bound). Client plans (PrepareSubstrait, client.go) are decoded, their relation tree
// checked (the relations the executor runs, reads of catalog tables with the table's base
// schema) and their reads routed exactly as the binder's plans are (Routes), into a Bound for
// the same executor. FromSubstrait/Analyze still reduce a canonical client plan to a Query
// (the pushdown planner's and tests' form).
//
// The general binder takes each table read's routed predicate from anywhere in its WHERE's
// conjunction — partition equality, IN list or = ANY, timestamp bounds in any comparison form
// — and places it, normalised (partition = or IN, timestamp >= start, timestamp < end), first
// in the FilterRel above the read; the other conjuncts follow as residual filters. Routes
// reads it back for the executor's binding. A read missing part of its route is refused with
// one InvalidArgument naming everything missing and the table's partition column.
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
//     parameter binding failures, SQL syntax errors (PostgreSQL's message, which names the
//     token near the error, and the position), undecodable Substrait plans;
//   - Unimplemented: SQL or Substrait constructs outside the supported surface, named in the
//     message ("JOIN is not supported", "GROUP BY id is not supported"…);
//   - NotFound: unknown tables.
//
// An unknown table is NotFound (a missing resource); an unknown column is InvalidArgument
// (PostgreSQL's undefined_column is an error in the query text). Any error that is not an
// *Error is internal. A message that quotes the client's own text (an unknown identifier, the
// token of a syntax error) has a value-free log form (Error.LogMsg), and errors with a
// PostgreSQL condition carry its SQLSTATE (Error.SQLState). Messages name types as PostgreSQL
// does (integer, double precision, text, bytea, timestamp with time zone).
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
