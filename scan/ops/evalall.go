package ops

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/flightsrv/flightsrv/scan/ledger"
)

// evalAll evaluates a projection's expressions on each batch: those that are neither bare
// columns nor guarded share one anonymous batch (Expr.anon) per anonymous schema, the columns
// any of them reads unsliced, built once per batch instead of once per expression, and the
// batch's column types are checked once per input schema: n expressions over n columns cost
// O(n) per batch, not O(n²) (a join of two 832-column derived tables of computed columns
// spent seconds per batch building them). Results are Eval's, expression by expression.
type evalAll struct {
	exprs []*Expr
	// shared[i] is the index in anons of exprs[i]'s anonymous schema; bareExpr for a bare
	// column, guarded for an expression evaluated on its own (Eval).
	shared []int
	anons  []*arrow.Schema
	refs   [][]bool // per anonymous schema: the columns any of its expressions reads
}

// The kinds of evalAll.shared that are not an anonymous schema's index.
const (
	bareExpr = -1
	guarded  = -2
)

// newEvalAll prepares the evaluation of exprs (none nil).
func newEvalAll(exprs []*Expr) *evalAll {
	a := &evalAll{exprs: exprs, shared: make([]int, len(exprs))}
	at := map[*arrow.Schema]int{}
	for i, e := range exprs {
		switch {
		case e.guard != nil:
			a.shared[i] = guarded
			continue
		case e.bare >= 0:
			a.shared[i] = bareExpr
			continue
		}
		k, ok := at[e.anon]
		if !ok {
			k = len(a.anons)
			at[e.anon] = k
			a.anons = append(a.anons, e.anon)
			a.refs = append(a.refs, make([]bool, len(e.refs)))
		}
		for c, r := range e.refs {
			a.refs[k][c] = a.refs[k][c] || r
		}
		a.shared[i] = k
	}
	return a
}

// eval evaluates every expression on batch: one array each, which the caller releases (none
// when it fails).
func (a *evalAll) eval(ctx context.Context, batch arrow.RecordBatch, mem *ledger.Ledger) ([]arrow.Array, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	anons := make([]arrow.RecordBatch, len(a.anons))
	defer func() {
		for _, b := range anons {
			if b != nil {
				b.Release()
			}
		}
	}()
	fitted := map[*arrow.Schema]bool{} // the input schemas batch was found to fit
	cols := make([]arrow.Array, len(a.exprs))
	for i, e := range a.exprs {
		k := a.shared[i]
		if k == guarded {
			v, err := e.Eval(ctx, batch, mem)
			if err != nil {
				releaseArrays(cols)
				return nil, err
			}
			cols[i] = v
			continue
		}
		if !fitted[e.in] {
			if !sameTypes(batch.Schema(), e.in) {
				releaseArrays(cols)
				return nil, fmt.Errorf("ops: evaluate: the batch's columns %s are not the expression's input %s", batch.Schema(), e.in)
			}
			fitted[e.in] = true
		}
		if k == bareExpr {
			cols[i] = array.MakeFromData(batch.Column(e.bare).Data()) // as eval
			continue
		}
		if err := ctxErr(ctx); err != nil {
			releaseArrays(cols)
			return nil, err
		}
		if anons[k] == nil {
			b, err := anonBatch(a.anons[k], batch, a.refs[k], mem)
			if err != nil {
				releaseArrays(cols)
				return nil, err
			}
			anons[k] = b
		}
		v, err := e.evalAnon(ctx, batch, anons[k], mem)
		if err != nil {
			releaseArrays(cols)
			return nil, err
		}
		cols[i] = v
	}
	return cols, nil
}
