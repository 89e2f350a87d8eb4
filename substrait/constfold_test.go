package substrait_test

import (
	"context"
	"errors"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/substrait-io/substrait-go/v8/expr"

	"github.com/flightsrv/flightsrv/scan/ops"
)

// TestConstantFoldingErrors: a residual filter holding a constant PostgreSQL's planner folds
// and that fails is refused when the executor compiles it (ops.Compile), before any row, with
// PostgreSQL's SQLSTATE; the CASE arms, AND/OR operands and conjuncts the planner drops before
// folding them compile and answer as PostgreSQL does (e2e TestConstantFoldingErrorsAsPostgres
// checks the same shapes against PostgreSQL).
func TestConstantFoldingErrors(t *testing.T) {
	const d = "(value->>'delay')::int"
	rec := orBatch(100)
	defer rec.Release()
	for _, tc := range []struct {
		where string
		state string // "" when it compiles
		want  int    // rows selected then
	}{
		{d + " > 1000 AND 1/0 = 1", "22012", 0},
		{"CASE WHEN " + d + " > 1000 THEN 1/0 = 1 ELSE true END", "22012", 0},
		{"coalesce(" + d + " > 1000, 1 % 0 = 1)", "22012", 0},
		{d + " > 1000 OR (2147483647 + 1 > 0)", "22003", 0},
		{d + " > 0 OR (2 > 1 OR 1/0 = 1)", "", 100},
		{d + " > 0 OR (true OR 1/0 = 1)", "", 100},
		{"CASE WHEN false THEN 1/0 = 1 ELSE " + d + " > 1000 END", "", 0},
		{"CASE WHEN 1 < 2 THEN " + d + " < 1000 ELSE 1/0 = 1 END", "", 100},
		{"coalesce(CASE WHEN " + d + " > 1000 THEN true END, true, 1/0 = 1)", "", 100},
		// A nested AND is flattened before its operands fold (simplify_and_arguments).
		{d + " > 0 AND 1 = 2) AND (1/0 = 1", "", 0},
		{d + " > 0 AND 1/0 = 1) AND (1 = 2", "22012", 0},
		{"(" + d + " > 0 OR (" + d + " > 5 OR 1 = 1)) OR 1/0 = 1", "", 100},
	} {
		p, cond := orFilter(t, "SELECT id FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-01-01' AND timestamp < '2001-02-01' AND ("+tc.where+")")
		x, err := ops.Compile(cond, rec.Schema(), p.ExtensionRegistry())
		var de *ops.DataError
		switch {
		case tc.state != "":
			if !errors.As(err, &de) || de.Code != tc.state {
				t.Errorf("%s: %v, want %s when compiled", tc.where, err, tc.state)
			}
			continue
		case err != nil:
			t.Errorf("%s: %v", tc.where, err)
			continue
		}
		got, err := x.Eval(context.Background(), rec, nil)
		if err != nil {
			t.Errorf("%s: %v", tc.where, err)
			continue
		}
		n := 0
		b := got.(*array.Boolean)
		for i := range b.Len() {
			if b.IsValid(i) && b.Value(i) {
				n++
			}
		}
		got.Release()
		if n != tc.want {
			t.Errorf("%s: %d rows, want %d", tc.where, n, tc.want)
		}
	}
}

// TestFoldConjuncts: the conjuncts of a WHERE, split at its ANDs as the executor compiles them
// one by one (a routed read's residual filters, a join's residual), fold as PostgreSQL's
// planner folds their conjunction: a constant false decides it before a later conjunct's
// constant raises (trial 31 D1), a NULL does not, and an error before the false is raised.
func TestFoldConjuncts(t *testing.T) {
	const d = "(value->>'delay')::int"
	rec := orBatch(100)
	defer rec.Release()
	for _, tc := range []struct {
		where string
		state string // "" when it folds
		false bool   // the conjuncts fold to a false alone
	}{
		{"1 = 2 AND 1/0 = 1", "", true},
		{d + " > 0 AND 1 = 2 AND " + d + " > 1/0", "", true},
		{"(" + d + " > 0 AND 1 = 2) AND 1/0 = 1", "", true},
		{"1/0 = 1 AND 1 = 2", "22012", false},
		{d + " > 1/0 AND 1 = 2", "22012", false},
		{"NULL AND 1/0 = 1", "22012", false},
		{"1 = 1 AND " + d + " > 0", "", false},
		{"(1 = 2 OR 1 = 3) AND 2147483647 + 1 > 0", "", true},
	} {
		p, cond := orFilter(t, "SELECT id FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-01-01' AND timestamp < '2001-02-01' AND "+tc.where)
		var conj []expr.Expression
		var split func(expr.Expression)
		split = func(e expr.Expression) {
			if f, ok := e.(*expr.ScalarFunction); ok && f.Name() == "and" {
				for i := range f.NArgs() {
					split(f.Arg(i).(expr.Expression))
				}
				return
			}
			conj = append(conj, e)
		}
		split(cond)
		got, err := ops.FoldConjuncts(conj, rec.Schema(), p.ExtensionRegistry())
		var de *ops.DataError
		switch {
		case tc.state != "":
			if !errors.As(err, &de) || de.Code != tc.state {
				t.Errorf("%s: %v, want %s", tc.where, err, tc.state)
			}
		case err != nil:
			t.Errorf("%s: %v", tc.where, err)
		case tc.false:
			if l, ok := got[0].(*expr.PrimitiveLiteral[bool]); len(got) != 1 || !ok || l.Value {
				t.Errorf("%s: %v, want false alone", tc.where, got)
			}
		case len(got) != len(conj):
			t.Errorf("%s: %d conjuncts, want the %d given", tc.where, len(got), len(conj))
		}
	}
}
