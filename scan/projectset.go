package scan

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/substrait-io/substrait-go/v8/plan"

	"github.com/flightsrv/flightsrv/scan/ops"
	"github.com/flightsrv/flightsrv/substrait"
)

// projectSetNode calls set-returning functions on each row of its input
// (substrait.ProjectSet, ops.ProjectSet), at the coordinator.
type projectSetNode struct {
	in     node
	def    *substrait.ProjectSet
	calls  []ops.SetCall
	schema *arrow.Schema
	cond   []*ops.Expr // def.Cond's conjuncts, compiled over the calls' output numbered (ordinality last)
}

func (n *projectSetNode) Schema() *arrow.Schema { return n.schema }

func (n *projectSetNode) explain(a *Analysis) []string {
	return append([]string{n.def.String() + a.suffix(n, "")}, indent(n.in.explain(a))...)
}

func (n *projectSetNode) open(ctx context.Context, rt *runtime) (array.RecordReader, error) {
	in, err := openNode(ctx, rt, n.in)
	if err != nil {
		return nil, err
	}
	if n.cond == nil {
		return ops.ProjectSet(ctx, in, n.calls, n.def.Ordinality, n.def.Outer, n.schema, rt.mem), nil
	}
	// LEFT JOIN LATERAL … ON cond: the outer ProjectSet, numbered, filtered per input row.
	nIn := n.in.Schema().NumFields()
	return ops.SetFilter(ctx, ops.ProjectSet(ctx, in, n.calls, true, true, n.cond[0].Schema(), rt.mem), n.cond, nIn, n.def.Ordinality, rt.mem), nil
}

// projectSet lowers a ProjectSet: its input finished into a coordinator node, the calls'
// arguments compiled over it.
func (l *lowerer) projectSet(r *plan.ExtensionSingleRel) (*lowered, error) {
	def, ok := r.Definition().(*substrait.ProjectSet)
	if !ok {
		return nil, unsupported("extension relation %T", r.Definition())
	}
	inLo, err := l.lower(r.Input())
	if err != nil {
		return nil, err
	}
	in, err := l.finish(inLo)
	if err != nil {
		return nil, err
	}
	fields := append([]arrow.Field(nil), in.Schema().Fields()...)
	n := &projectSetNode{in: in, def: def}
	for _, c := range def.Calls {
		args, err := compileAll(c.Args, in.Schema(), l.ext)
		if err != nil {
			return nil, err
		}
		types := make([]arrow.DataType, len(args))
		for i, a := range args {
			types[i] = a.Type()
		}
		out, err := ops.SetFuncOutputs(c.Name, types)
		if err != nil {
			return nil, err
		}
		for i, t := range out {
			fields = append(fields, arrow.Field{Name: fmt.Sprintf("%s%d", c.Name, i), Type: t, Nullable: true})
		}
		n.calls = append(n.calls, ops.SetCall{Name: c.Name, Args: args, Empty: c.Empty})
	}
	ord := arrow.Field{Name: "ordinality", Type: arrow.PrimitiveTypes.Int64, Nullable: true}
	if def.Ordinality {
		fields = append(fields, ord)
	}
	n.schema = arrow.NewSchema(fields, nil)
	if def.Cond != nil {
		if !def.Ordinality {
			fields = append(fields, ord)
		}
		if n.cond, err = compileConjuncts(def.Cond, arrow.NewSchema(fields, nil), l.ext); err != nil {
			return nil, err
		}
	}
	return &lowered{node: n}, nil
}
