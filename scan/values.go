package scan

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/plan"

	"github.com/flightsrv/flightsrv/scan/ops"
)

// valuesNode is a VirtualTableReadRel: rows of constant expressions, evaluated once when the
// node opens into one batch. The SQL binder reads one row of no columns from it for a
// SELECT without FROM inside a larger statement (an arm of UNION, a subquery), whose
// ProjectRel then evaluates the select list.
type valuesNode struct {
	rows   [][]*ops.Expr
	n      int // rows
	schema *arrow.Schema
}

func (l *lowerer) values(r *plan.VirtualTableReadRel) (*lowered, error) {
	if r.Projection() != nil || r.Filter() != nil || r.BestEffortFilter() != nil {
		return nil, unsupported("VirtualTableReadRel projection masks and filters")
	}
	names := r.BaseSchema().Names
	empty := arrow.NewSchema(nil, nil)
	n := &valuesNode{n: len(r.Values())}
	for _, row := range r.Values() {
		if len(row) != len(names) {
			return nil, unsupported("a virtual table row of %d values for %d columns", len(row), len(names))
		}
		es := make([]expr.Expression, len(row))
		for i, v := range row {
			es[i] = v
		}
		compiled, err := compileAll(es, empty, l.ext)
		if err != nil {
			return nil, err
		}
		n.rows = append(n.rows, compiled)
	}
	if len(names) > 0 && n.n == 0 {
		// Before the fields, which take their types from the first row.
		return nil, unsupported("an empty virtual table")
	}
	fields := make([]arrow.Field, len(names))
	for i, name := range names {
		fields[i] = arrow.Field{Name: name, Type: n.rows[0][i].Type(), Nullable: true}
		for _, row := range n.rows[1:] {
			if !arrow.TypeEqual(row[i].Type(), fields[i].Type) {
				return nil, unsupported("virtual table column %d of several types", i)
			}
		}
	}
	n.schema = arrow.NewSchema(fields, nil)
	return &lowered{node: n}, nil
}

func (n *valuesNode) Schema() *arrow.Schema { return n.schema }

func (n *valuesNode) explain(a *Analysis) []string {
	return []string{fmt.Sprintf("Values %d row(s) of %d constant column(s)", n.n, n.schema.NumFields()) + a.suffix(n, "")}
}

func (n *valuesNode) open(ctx context.Context, rt *runtime) (array.RecordReader, error) {
	if n.n == 0 {
		return EmptyReader(n.schema), nil
	}
	empty := arrow.NewSchema(nil, nil)
	one := array.NewRecordBatch(empty, nil, 1)
	defer one.Release()
	cols := make([]arrow.Array, n.schema.NumFields())
	defer releaseAll(cols)
	for c := range cols {
		parts := make([]arrow.Array, 0, n.n)
		for _, row := range n.rows {
			a, err := row[c].Eval(ctx, one, rt.mem)
			if err != nil {
				releaseAll(parts)
				return nil, err
			}
			parts = append(parts, a)
		}
		col, err := array.Concatenate(parts, rt.mem)
		releaseAll(parts)
		if err != nil {
			return nil, err
		}
		cols[c] = col
	}
	rec := array.NewRecordBatch(n.schema, cols, int64(n.n))
	defer rec.Release()
	return array.NewRecordReader(n.schema, []arrow.RecordBatch{rec})
}

// releaseAll releases the non-nil arrays of as.
func releaseAll(as []arrow.Array) {
	for _, a := range as {
		if a != nil {
			a.Release()
		}
	}
}
