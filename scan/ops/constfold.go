package ops

import (
	"context"
	"errors"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/compute/exprs"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/types"

	"github.com/flightsrv/flightsrv/scan/ledger"
)

// foldErrors raises the data exception of a constant subexpression of e that PostgreSQL's
// planner would fold (eval_const_expressions, in clauses.c), as PostgreSQL raises it while
// planning: whether or not a row reaches it, over no rows at all. The executor evaluates a
// CASE arm only on the rows taking it, so `CASE WHEN x > 0 THEN 1/0 ELSE 1 END` would
// otherwise fail only when a row has x > 0; PostgreSQL fails always. The walk follows the
// planner's order and drops what it drops before folding it:
//
//   - a CASE arm whose condition folds to false or NULL (its result is never folded), and every
//     arm and the ELSE after one whose condition folds to true (COALESCE, which the front end
//     writes as a CASE of IS NOT NULL tests, drops the arguments after a non-null constant
//     alike);
//   - the operands of AND (OR) after one that folds to false (true);
//   - the arguments of the deferred functions (deferred.go), which PostgreSQL evaluates only on
//     the rows a join or correlation pairs.
//
// A constant is a subtree reading no column. Only data exceptions (*DataError) are raised; a
// constant the executor cannot evaluate is left to the compilation of the whole expression.
//
// It returns e with each AND (OR) that an operand folding to false (true) decides replaced by
// that constant, as the planner replaces it, so that the executor, which evaluates every
// operand of AND and OR, never evaluates the operands the planner dropped: `true OR 1/0 = 1`
// is true.
func (c *compiler) foldErrors(e expr.Expression) (expr.Expression, error) {
	f := folder{c: c, constant: map[expr.Expression]bool{}}
	defer f.release()
	f.mark(e)
	if err := f.check(e); err != nil {
		return nil, err
	}
	return f.prune(e), nil
}

// isConstant reports whether e reads no column (mark's answer, computed on first use for a
// subtree prune made).
func (f *folder) isConstant(e expr.Expression) bool {
	if k, ok := f.constant[e]; ok {
		return k
	}
	return f.mark(e)
}

// prune returns e with the AND and OR calls a constant operand decides replaced by it
// (foldErrors), bottom up.
func (f *folder) prune(e expr.Expression) expr.Expression {
	switch v := e.(type) {
	case *expr.ScalarFunction:
		if isDeferredFn(v) {
			return v
		}
		out := v.Visit(f.prune)
		sf, ok := out.(*expr.ScalarFunction)
		if !ok || !isAndOr(sf) {
			return out
		}
		decides := sf.Name() == "or"
		for i := range sf.NArgs() {
			a, ok := sf.Arg(i).(expr.Expression)
			if !ok || !f.isConstant(a) {
				continue
			}
			if b, valid, err := f.evalBool(a); err == nil && valid && b == decides {
				return expr.NewPrimitiveLiteral(decides, sf.GetType().GetNullability() == types.NullabilityNullable)
			}
		}
		return out
	case *expr.Cast, *expr.IfThen, *expr.SingularOrList:
		return v.Visit(f.prune)
	}
	return e
}

// folder walks one expression for foldErrors: constant holds each subtree's constness
// (computed once, bottom up, so the walk stays linear in the expression's size).
type folder struct {
	c        *compiler
	constant map[expr.Expression]bool
	one      arrow.RecordBatch // a row of nulls of the input schema, made on first use
	mem      *ledger.Ledger    // the folds' allocator, bounded by ConstantMemory; made with one
}

// mark records the constness of e and its subtrees and returns e's.
func (f *folder) mark(e expr.Expression) bool {
	k := true
	switch v := e.(type) {
	case expr.Literal:
	case *expr.FieldReference:
		k = false
	case *expr.ScalarFunction:
		if isDeferredFn(v) || isStableFn(v) {
			k = false
			break
		}
		for i := range v.NArgs() {
			if a, ok := v.Arg(i).(expr.Expression); ok {
				k = f.mark(a) && k
			}
		}
	case *expr.Cast:
		k = f.mark(v.Input)
	case *expr.IfThen:
		for i := range v.NIfs() {
			k = f.mark(v.IfPair(i).If) && k
			k = f.mark(v.IfPair(i).Then) && k
		}
		k = f.mark(v.Else()) && k
	case *expr.SingularOrList:
		k = f.mark(v.Value)
		for _, o := range v.Options {
			k = f.mark(o) && k
		}
	default:
		k = false // subqueries and what else the executor reads from rows
	}
	f.constant[e] = k
	return k
}

// check raises the error of the constant subtrees of e the planner folds.
func (f *folder) check(e expr.Expression) error {
	if _, lit := e.(expr.Literal); lit {
		return nil
	}
	if sf, ok := e.(*expr.ScalarFunction); ok && isAndOr(sf) {
		// Operand by operand, as the planner folds them, a constant AND or OR too.
		return f.checkAndOr(sf)
	}
	if f.constant[e] {
		arr, err := f.eval(f.prune(e))
		if arr != nil {
			arr.Release()
		}
		return err
	}
	switch v := e.(type) {
	case *expr.ScalarFunction:
		if isDeferredFn(v) {
			return nil
		}
		for i := range v.NArgs() {
			if a, ok := v.Arg(i).(expr.Expression); ok {
				if err := f.check(a); err != nil {
					return err
				}
			}
		}
	case *expr.Cast:
		return f.check(v.Input)
	case *expr.IfThen:
		for i := range v.NIfs() {
			p := v.IfPair(i)
			if !f.constant[p.If] {
				if err := f.check(p.If); err != nil {
					return err
				}
				if err := f.check(p.Then); err != nil {
					return err
				}
				continue
			}
			b, valid, err := f.constBool(p.If)
			if err != nil {
				return err
			}
			if valid && b {
				return f.check(p.Then)
			}
		}
		return f.check(v.Else())
	case *expr.SingularOrList:
		if err := f.check(v.Value); err != nil {
			return err
		}
		for _, o := range v.Options {
			if err := f.check(o); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkAndOr is check of an AND or OR call: its operands in order, up to the first constant
// one that decides the whole (false for AND, true for OR). An operand that is itself an AND
// (OR) is walked in place, as the planner flattens nested ANDs (ORs) before folding their
// operands (simplify_and_arguments, simplify_or_arguments): `(x > 0 AND 1 = 2) AND 1/0 = 1`
// is false, its 1/0 never folded.
func (f *folder) checkAndOr(v *expr.ScalarFunction) error {
	_, err := f.checkAndOrDecided(v)
	return err
}

// checkAndOrDecided is checkAndOr, reporting whether a constant operand decided v.
func (f *folder) checkAndOrDecided(v *expr.ScalarFunction) (bool, error) {
	args := make([]expr.Expression, 0, v.NArgs())
	for i := range v.NArgs() {
		if a, ok := v.Arg(i).(expr.Expression); ok {
			args = append(args, a)
		}
	}
	return f.checkOperands(v.Name(), args)
}

// checkOperands is checkAndOrDecided of the operands args of an AND or OR (name "and" or
// "or"), in order.
func (f *folder) checkOperands(name string, args []expr.Expression) (bool, error) {
	decides := name == "or"
	for _, a := range args {
		if !f.isConstant(a) {
			if sf, ok := a.(*expr.ScalarFunction); ok && isAndOr(sf) && sf.Name() == name {
				if decided, err := f.checkAndOrDecided(sf); err != nil || decided {
					return decided, err
				}
				continue
			}
			if err := f.check(a); err != nil {
				return false, err
			}
			continue
		}
		b, valid, err := f.constBool(a)
		if err != nil {
			return false, err
		}
		if valid && b == decides {
			return true, nil
		}
	}
	return false, nil
}

// FoldConjuncts is es, the conjuncts of a condition over rows of in (a WHERE split at its
// ANDs, in order), as PostgreSQL's planner folds their conjunction (simplify_and_arguments):
// the data exceptions of each one's folded constants raised in order (a *DataError), up to
// the first conjunct that is a constant folding to false, which decides the whole: es is then
// that false alone, and the conjuncts after it are never folded, so that a caller compiling
// each conjunct alone (ops.FilterAll's stages) raises no error the conjunction does not.
// `1 = 2 AND 1/0 = 1` is false; `1/0 = 1 AND 1 = 2` raises 22012, as in PostgreSQL. ext
// resolves the function anchors, as Compile's.
func FoldConjuncts(es []expr.Expression, in *arrow.Schema, ext expr.ExtensionRegistry) ([]expr.Expression, error) {
	if len(es) < 2 || in == nil {
		return es, nil
	}
	c := newCompiler(in, ext, nil)
	f := folder{c: c, constant: map[expr.Expression]bool{}}
	defer f.release()
	for _, e := range es {
		if e == nil || !e.IsScalar() {
			return es, nil
		}
	}
	decided, err := f.checkOperands("and", es)
	switch {
	case err != nil:
		return nil, err
	case decided:
		return []expr.Expression{expr.NewPrimitiveLiteral(false, false)}, nil
	}
	return es, nil
}

// constBool folds the constant boolean e as the planner does: the errors of its folding
// (check), then its value, with the AND and OR calls inside it decided as the planner decides
// them (prune).
func (f *folder) constBool(e expr.Expression) (b, valid bool, err error) {
	if err := f.check(e); err != nil {
		return false, false, err
	}
	return f.evalBool(f.prune(e))
}

// evalBool evaluates the constant boolean e: its value and whether it is not NULL.
func (f *folder) evalBool(e expr.Expression) (b, valid bool, err error) {
	arr, err := f.eval(e)
	if err != nil || arr == nil {
		return false, false, err
	}
	defer arr.Release()
	v, ok := arr.(*array.Boolean)
	if !ok || v.Len() != 1 || v.IsNull(0) {
		return false, false, nil
	}
	return v.Value(0), true, nil
}

// eval evaluates the constant e on one row, with a compiler of its own (e's compilation leaves
// nothing in f.c), under a ledger bounded by ConstantMemory. It returns the data exception e
// raises; nil and no error when e does not compile or fails otherwise — a constant needing
// more than ConstantMemory among them, left to the execution and its query's ledger.
func (f *folder) eval(e expr.Expression) (arrow.Array, error) {
	if f.one == nil {
		f.mem = constantLedger()
		cols := make([]arrow.Array, f.c.anon.NumFields())
		for i, fd := range f.c.anon.Fields() {
			cols[i] = array.MakeArrayOfNull(memory.DefaultAllocator, fd.Type, 1)
		}
		f.one = array.NewRecordBatch(f.c.anon, cols, 1)
		for _, a := range cols {
			a.Release()
		}
	}
	sub := &compiler{in: f.c.in, anon: f.c.anon, ext: f.c.ext, empty: f.c.empty}
	n, err := sub.compile(e)
	if err != nil {
		return nil, nil
	}
	ctx := exprs.WithExtensionIDSet(compute.WithAllocator(context.Background(), f.mem), f.c.ext)
	d, err := n.eval(ctx, f.one)
	if err != nil {
		var de *DataError
		if errors.As(err, &de) {
			return nil, de
		}
		return nil, nil
	}
	defer d.Release()
	arr, err := toArray(d, 1, f.mem)
	if err != nil {
		return nil, nil
	}
	return arr, nil
}

// release frees the row f made.
func (f *folder) release() {
	if f.one != nil {
		f.one.Release()
	}
}

// isDeferredFn reports whether f is one of the deferred functions (deferred.go) or
// subquery_rows_error, whose arguments are evaluated only where PostgreSQL evaluates them.
// isStableFn reports whether f is URNPostgres' stable_value(x): x, the statement's value of
// a function PostgreSQL marks stable (now(), current_timestamp, current_date), which the binder
// computes once per statement and the executor reads as x. PostgreSQL's planner does not fold
// stable functions (eval_const_expressions folds immutable ones), so neither does foldErrors:
// `CASE WHEN x > 0 THEN now() + interval '1000 years' END` fails only on a row taking the arm,
// as in PostgreSQL, where the sum is evaluated.
func isStableFn(f *expr.ScalarFunction) bool {
	return f.Name() == "stable_value" && f.ID().URN == URNPostgres
}

func isDeferredFn(f *expr.ScalarFunction) bool {
	switch f.Name() {
	case "deferred_value", "deferred_error", "raise_deferred", "raise_deferred_here", "subquery_rows_error":
		return f.ID().URN == URNPostgres
	}
	return false
}
