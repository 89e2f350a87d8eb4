// Package substrait turns SQL text and client Substrait plans into one validated Substrait
// plan: flightsrv's single logical IR (docs/architecture.md, decision 1).
//
// The SQL front end parses with PostgreSQL's own grammar (pg_query_go; decision 2) and never
// matches SQL text by hand: `?` placeholders are rewritten to `$n` on the token stream of
// PostgreSQL's lexer (Prepare). Every statement is bound by one binder (bind.go, bindexpr.go,
// bindfunc.go, route.go): pg_query's parse tree to Substrait relations (ReadRel, FilterRel,
// ProjectRel, AggregateRel, SortRel, FetchRel, SetRel, JoinRel, VirtualTableReadRel for VALUES
// (values.go)) with expressions on Substrait's
// standard functions where arrow-go evaluates them and on flightsrv's own extension
// URNPostgres (JSON access, LIKE, string functions, date_part, to_char, AT TIME ZONE
// (timezone.go), regular expressions (regex.go), numeric; evaluated by scan/ops) elsewhere;
// PostgreSQL's numeric is decimal<38, s> with the scale PostgreSQL shows, and what one such
// column cannot hold exactly is refused by name (numeric.go); window functions (OVER) become
// WindowFunction expressions of a ProjectRel below
// the select list (window.go); SELECT DISTINCT ON is row_number() over that relation
// partitioned by its expressions, kept where it is 1 (distincton.go); INTERSECT and EXCEPT
// group a tagged UNION ALL, their ALL forms count equal rows with window functions
// (setops.go); generate_series and unnest of constants in FROM are computed into a
// VirtualTableReadRel (tablefunc.go), other set-returning functions in FROM and the select
// list (the JSON ones, those over other FROM items' rows) are an ExtensionSingleRel whose
// definition is a *ProjectSet (projectset.go; a select list's beside aggregates or window
// functions run over a derived table computing them first, postpone.go); SIMILAR TO is translated to a regular expression and an
// element of regexp_match bound to its kernel (similar.go); joins (JOIN … ON/USING/NATURAL,
// CROSS JOIN, FROM lists) become JoinRels (USING's and NATURAL's merged columns of the two
// sides' common type, using.go), EXISTS and IN (SELECT …) written as WHERE
// conjuncts semi and anti JoinRels, scalar subqueries single JoinRels, decorrelated when their
// only correlations are equalities between an inner and an outer expression in their WHERE,
// their select lists' errors deferred to the join's pairs (deferred.go);
// other shapes are refused by name (join.go); date_trunc and date_bin become round_calendar and
// round_temporal, which the executor's pushdown rewrite recognises as the stores' time bins
// (TimeBinOf); table-less
// statements and SHOW bind to constants (Bound). Client plans (PrepareSubstrait, client.go)
// are rewritten from the encodings of the producers people use (producers.go: DataFusion's
// unresolvable extension references, ibis-substrait's extension URIs, isthmus's microsecond
// zone-less timestamps and functions_datetime comparisons), decoded, their relation tree
// checked (the relations the executor runs, reads of catalog tables with a base schema
// compatible with the table's, rewritten into it) and their reads routed exactly as the
// binder's plans are (Routes), into a Bound for the same executor.
//
// # The routed contract
//
// Every read of a routed table must pin its partitions and a finite half-open time range
// (docs/pulpitum-v4.md §5.2). Before routing, the conjuncts of every FilterRel are pushed
// down the plan as far as they soundly go (pushfilter.go: through projections of plain
// columns, sorts, aggregates' grouping keys, into every set-operation input and through joins
// into a side the join does not NULL-extend, never through LIMIT), so a filter written outside a subquery, a CTE or a UNION — Superset's time filter
// around its virtual dataset — reaches the read; client plans get the same rewrite. The binder
// takes each read's routed predicate from anywhere in the conjunction that reaches it —
// partition equality, IN list or = ANY, timestamp bounds in any comparison form (>=, >, <,
// <=, = as the one-instant range [X, X+1ns), BETWEEN, NOT of a comparison, either operand
// order; a date is converted to timestamp with time zone at midnight UTC, PostgreSQL's
// implicit cast in a UTC session; any expression of constants, the statement's clock and
// parameters is folded by the executor's kernels (boundeval.go); NOT is pushed through the
// comparisons (De Morgan); repeated bounds take
// the tightest, repeated partition sets are intersected) — and places it, normalised
// (partition = or IN, timestamp >= start, timestamp < end), first in the FilterRel above the
// read; the other conjuncts follow as residual filters. Routes reads it back for the executor's binding, and
// ImpliedByRoute tells the executor which conjuncts its route already guarantees. A read
// missing part of its route is refused with one InvalidArgument naming everything missing and
// the table's partition column (`flights needs origin = <value> and timestamp >= <start> AND
// timestamp < <end>`), never a value; analytical reads (BindOptions.Analytical) may leave the
// partition out. An empty range, or partition sets without a common value, is an Empty route
// (RouteInfo.Empty, Route.Empty): the read reads no bucket and answers no rows, as PostgreSQL
// does; bounds beyond the nanosecond range are clamped to it. So is every read under a
// constant false or NULL filter (a LIMIT 0 is one, withoutRows) and on a side a join with such
// a condition does not preserve (filterPusher.nothing), whatever it pins: PostgreSQL runs
// nothing under a one-time filter that is false. An OR's disjuncts that pass no row, double
// negations and scalar subqueries selecting a constant (constsub.go) do not hide a route.
//
// # Errors
//
// Every planning error is an *Error with a Code:
//
//   - InvalidArgument: routed-contract violations, unknown columns, invalid literals,
//     parameter binding failures, SQL syntax errors (PostgreSQL's message, which names the
//     token near the error, and the position), undecodable Substrait plans;
//   - Unimplemented: SQL or Substrait constructs outside the supported surface, named in the
//     message ("LATERAL is not supported", "WITH RECURSIVE is not supported"…);
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
