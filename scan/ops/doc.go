// Package ops holds the executor's scalar expressions and relational operators over Arrow
// record batch streams (array.RecordReader): Compile turns a Substrait scalar expression into an
// Expr evaluated per batch, and Filter, Project, Select, Sort, TopK, Fetch, UnionAll, Merge,
// Rebatch, Window (window.go: PostgreSQL's window functions), HashJoin (join.go: inner,
// outer, semi, anti and single joins on equi-keys plus residual conjuncts) and ProjectSet
// (srf.go: set-returning functions called on each row) are the operators a fragment or the coordinator stacks on the streams the stores
// return.
//
// Expressions evaluate through arrow-go's compute and compute/exprs for everything arrow-go
// supports (comparisons, arithmetic, boolean logic, is_null, casts, set lookup) and through this
// package's kernels for what arrow-go lacks and our plans use: functions_datetime's
// round_calendar and round_temporal (date_trunc and date_bin) over timestamps, Substrait's
// SingularOrList (SQL IN) and and/or of more than two arguments, and PostgreSQL's numeric as
// decimal128(38, s) (numeric.go: exact arithmetic with github.com/cockroachdb/apd/v3, rounding
// half away from zero, PostgreSQL's division scale; a quotient's text or double precision
// operand cast to numeric is read with each value's own display scale), and PostgreSQL's
// regular expressions (regex.go: ~, regexp_replace, an element of regexp_match).
//
// Every operator takes ownership of its input readers (it releases them when it finishes, fails
// or is released), never emits an empty batch, emits batches of at most MaxBatchRows rows,
// MaxBatchBytes bytes of string and binary values and MaxBatchTotalBytes bytes in all its
// buffers (a single row may exceed the latter two; an oversized batch is sliced one piece per
// Next, never all at once), reports errors through Err, allocates through the query's
// *ledger.Ledger and checks its context at least once per input batch. Operators that
// accumulate input (Sort, TopK, Merge) call Ledger.Check after taking each input batch and
// fail with its ErrMemoryLimit error. Project reserves memory before it spends it: it prices
// the rows it is about to evaluate (Expr.EstimateBytes: constants times rows, the input bytes
// the expressions read, fixed widths), evaluates at most MaxBatchTotalBytes of output at once,
// and claims the bytes from the ledger (Ledger.Claim) before allocating them, failing with the
// ErrMemoryLimit error, having allocated nothing, when they do not fit (budget.go). Window,
// which buffers its input as Sort does, claims its Go-heap working set (a few words a row)
// before allocating it; HashJoin claims its hash table's (joinRowBytes a buffered row plus its
// key bytes) as it buffers its right input. The kernels building a value whose size the
// statement sets with a small input (repeat, lpad, rpad, replace, regexp_replace, format,
// jsonb_pretty) claim it before they build it (valuemem.go). The
// errors of this package are prefixed "ops: " and quote no row value; an input's error is
// returned as it is. A SQL data exception of an expression (division by zero, an overflow,
// text that does not parse as its cast's type, a value that is not JSON) is a *DataError
// with PostgreSQL's message and SQLSTATE: the query's error, not the server's. Evaluated
// under deferred_value and deferred_error, an expression's data exceptions are kept per row
// and raised by raise_deferred only on the rows that reach it (deferred.go: a correlated
// subquery's select list, a join residual's pieces, raised on the join's pairs). A constant
// subexpression PostgreSQL's planner folds raises its data exception when compiled, whatever
// the rows (constfold.go); stable_value(x), the statement's now() or current_date, is read as
// x but never folded, as PostgreSQL folds no stable function.
//
// Sort order is PostgreSQL's: per key ascending or descending with nulls first or last as
// asked, strings and binaries bytewise, decimal128 numerically (one column has one scale),
// false before true, NaN above every other float and equal to NaN, -0 equal to 0; comparisons
// of floats in expressions follow the same order (floatcmp.go). Rows are ordered
// and gathered by this package's typed code, which measured several times faster than
// arrow-go's sort_indices and take on string columns; Filter uses compute's filter kernel.
//
// This package must not import routing, the stores, Flight or gRPC: it sees Arrow streams
// and Substrait expressions only.
package ops
