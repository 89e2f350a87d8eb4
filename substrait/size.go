package substrait

import (
	"fmt"

	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/plan"
)

// Plan size limits (issue 16, "work bounded at planning"): a bound statement or a client's
// Substrait plan past one of them is refused before anything runs, naming the limit
// (ErrPlanTooLarge's form: InvalidArgument, SQLSTATE 54000 program_limit_exceeded, as
// PostgreSQL refuses a target list past its own limit). Every query a BI tool or an analyst
// writes is far below them; the queries that reach them are attacks or generator accidents
// (5,000 `SELECT 1` joined by UNION ALL ran 84 s; 2,000 scans of one partition joined by UNION
// ALL held a query slot past two minutes).
const (
	// MaxPlanRelations bounds the relations of one plan (reads, filters, projections,
	// aggregates, sorts, fetches, set operations… each counts one).
	MaxPlanRelations = 4096
	// MaxSetInputs bounds the branches of one set operation: the inputs of a SetRel and of
	// the SetRels of the same operation directly below it (SQL's `a UNION ALL b UNION ALL c`
	// binds to nested two-input SetRels).
	MaxSetInputs = 256
	// MaxOutputColumns bounds the columns a plan returns: PostgreSQL's own limit on a target
	// list ("target lists can have at most 1664 entries"; the binder counts a SELECT's entries
	// as PostgreSQL does, its GROUP BY and ORDER BY expressions too, errTooManyTargets).
	MaxOutputColumns = 1664
	// MaxProjectionExpressions bounds the expressions one projection computes: a target list's
	// entries and the hidden columns the binder computes beside them (each entry's deferred
	// error, its display scale, the sort keys of ORDER BY). Binding and lowering a statement
	// cost about linearly in its width (BenchmarkWideBind, query's BenchmarkWideStatement: a
	// 1,600-column join, GROUP BY or UNION plans in about 0.1 s); they were quadratic (a join
	// of two derived tables of 800 computed columns took 3 minutes and 6.3 GB of RSS on a
	// loaded 2-core machine). PostgreSQL answers joins of wider derived tables under count(*);
	// past this bound (two of 840 columns project 3,360 expressions with their hidden
	// columns) they are refused here (54000) rather than answered.
	MaxProjectionExpressions = MaxOutputColumns
	// MaxExpressionNodes bounds the expression nodes of one plan, all relations together
	// (field references, literals, function calls, casts… each counts one).
	MaxExpressionNodes = 100_000
)

// errPlanTooLarge is the refusal of a plan past one of the size limits; what names the
// construct and the limit.
func errPlanTooLarge(what string, limit int) *Error {
	return &Error{Code: InvalidArgument, SQLState: "54000",
		Msg: fmt.Sprintf("statement too large: %s (at most %d)", what, limit)}
}

// errTooManyRelations is the refusal of a plan of more than MaxPlanRelations relations.
func errTooManyRelations() *Error {
	return errPlanTooLarge("the plan has more relations than the limit (reads, filters, projections, aggregates, sorts, set operations…)", MaxPlanRelations)
}

// errTooManyExpressionNodes is the refusal of a plan of more than MaxExpressionNodes
// expression nodes.
func errTooManyExpressionNodes() *Error {
	return errPlanTooLarge("the plan's expressions have more nodes than the limit", MaxExpressionNodes)
}

// checkPlanSize refuses a plan past one of the size limits (errPlanTooLarge). It walks every
// relation of p's roots once; a plan far past a limit stops at the first count that passes it.
func checkPlanSize(p *plan.Plan) error {
	c := &sizeCounter{}
	for _, root := range p.GetRoots() {
		if n := len(root.Names()); n > MaxOutputColumns {
			return errPlanTooLarge(fmt.Sprintf("the result has %d columns", n), MaxOutputColumns)
		}
		if err := c.rel(root.Input(), nil); err != nil {
			return err
		}
	}
	return nil
}

type sizeCounter struct {
	rels, exprs int
}

// rel counts r and everything below it; parent is r's parent relation (nil for a root).
func (c *sizeCounter) rel(r plan.Rel, parent plan.Rel) error {
	if r == nil {
		return nil
	}
	c.rels++
	if c.rels > MaxPlanRelations {
		return errTooManyRelations()
	}
	inputs := r.GetInputs()
	if set, ok := r.(*plan.SetRel); ok {
		if ps, ok := parent.(*plan.SetRel); !ok || ps.Op() != set.Op() {
			if n := setBranches(set, MaxSetInputs); n > MaxSetInputs {
				return errPlanTooLarge(fmt.Sprintf("a set operation (UNION, INTERSECT, EXCEPT) has more than %d branches", MaxSetInputs), MaxSetInputs)
			}
		}
	}
	if pr, ok := r.(*plan.ProjectRel); ok && len(pr.Expressions()) > MaxProjectionExpressions {
		return errPlanTooLarge(fmt.Sprintf("a projection computes %d expressions", len(pr.Expressions())), MaxProjectionExpressions)
	}
	var tooMany bool
	// The rewrite counts and returns every expression unchanged; the copy it would make is
	// never taken (the original is returned when nothing changed).
	_, err := r.CopyWithExpressionRewrite(func(e expr.Expression) (expr.Expression, error) {
		c.countExpr(e)
		if c.exprs > MaxExpressionNodes {
			tooMany = true
		}
		return e, nil
	}, inputs...)
	if err != nil {
		return nil // not ours to judge: the binder and the executor report it
	}
	if tooMany {
		return errTooManyExpressionNodes()
	}
	for _, in := range inputs {
		if err := c.rel(in, r); err != nil {
			return err
		}
	}
	return nil
}

// countExpr counts e and every expression below it, stopping once past the limit.
func (c *sizeCounter) countExpr(e expr.Expression) {
	if e == nil || c.exprs > MaxExpressionNodes {
		return
	}
	c.exprs++
	e.Visit(func(child expr.Expression) expr.Expression {
		c.countExpr(child)
		return child
	})
}

// setBranches counts the branches of set: its inputs, with those that are SetRels of the same
// operation counted by their own branches; it stops counting once past limit.
func setBranches(set *plan.SetRel, limit int) int {
	n := 0
	for _, in := range set.Inputs() {
		if s, ok := in.(*plan.SetRel); ok && s.Op() == set.Op() {
			n += setBranches(s, limit-n)
		} else {
			n++
		}
		if n > limit {
			break
		}
	}
	return n
}
