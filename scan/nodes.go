package scan

import (
	"context"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/substrait-io/substrait-go/v8/expr"

	"github.com/flightsrv/flightsrv/scan/aggregate"
	"github.com/flightsrv/flightsrv/scan/ops"
)

// node is a coordinator-side operator of a lowered plan: it knows its output schema and opens
// a stream. open may be called once.
type node interface {
	Schema() *arrow.Schema
	open(ctx context.Context, rt *runtime) (array.RecordReader, error)
	// explain describes the node and its inputs for EXPLAIN, one line per operator, inputs
	// indented below.
	explain(a *Analysis) []string
}

// indent prefixes lines with two spaces.
func indent(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = "  " + l
	}
	return out
}

func (n *selectNode) explain(a *Analysis) []string {
	return append([]string{fmt.Sprintf("Select %v", n.cols) + a.suffix(n, "")}, indent(n.in.explain(a))...)
}
func (n *filterNode) explain(a *Analysis) []string {
	return append([]string{"Filter" + a.suffix(n, "")}, indent(n.in.explain(a))...)
}
func (n *projectNode) explain(a *Analysis) []string {
	return append([]string{fmt.Sprintf("Project %d expressions", len(n.exprs)) + a.suffix(n, "")}, indent(n.in.explain(a))...)
}
func (n *sortNode) explain(a *Analysis) []string {
	head := fmt.Sprintf("Sort %d keys", len(n.keys))
	if n.k >= 0 {
		head = fmt.Sprintf("TopK %d by %d keys", n.k, len(n.keys))
	}
	return append([]string{head + a.suffix(n, "")}, indent(n.in.explain(a))...)
}
func (n *fetchNode) explain(a *Analysis) []string {
	return append([]string{fetchText(n.offset, n.count) + a.suffix(n, "")}, indent(n.in.explain(a))...)
}
func (n *aggregateNode) explain(a *Analysis) []string {
	return append([]string{"Aggregate " + aggText(n.spec) + a.suffix(n, "")}, indent(n.in.explain(a))...)
}
func (n *unionNode) explain(a *Analysis) []string {
	out := []string{fmt.Sprintf("UnionAll %d inputs", len(n.in)) + a.suffix(n, "")}
	for _, in := range n.in {
		out = append(out, indent(in.explain(a))...)
	}
	return out
}

func fetchText(offset, count int64) string {
	if count < 0 {
		return fmt.Sprintf("Fetch offset %d", offset)
	}
	return fmt.Sprintf("Fetch offset %d count %d", offset, count)
}

// aggText names an aggregation: its grouping keys and measures.
func aggText(s aggregate.Spec) string {
	var ms []string
	for _, m := range s.Measures {
		t := strings.ToLower(m.Func.String())
		if m.Distinct {
			t += " distinct"
		}
		if m.Filter >= 0 {
			t += " filtered"
		}
		ms = append(ms, t)
	}
	return fmt.Sprintf("%d grouping keys, measures [%s]", len(s.Groups), strings.Join(ms, ", "))
}

// selectNode outputs some input columns (an emit mapping).
type selectNode struct {
	in     node
	cols   []int
	schema *arrow.Schema
}

func newSelect(in node, cols []int) (node, error) {
	s := in.Schema()
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		if c < 0 || c >= s.NumFields() {
			return nil, unsupported("emit index %d out of range", c)
		}
		fields[i] = s.Field(c)
	}
	return &selectNode{in: in, cols: cols, schema: arrow.NewSchema(fields, nil)}, nil
}

func (n *selectNode) Schema() *arrow.Schema { return n.schema }
func (n *selectNode) open(ctx context.Context, rt *runtime) (array.RecordReader, error) {
	in, err := openNode(ctx, rt, n.in)
	if err != nil {
		return nil, err
	}
	return ops.Select(in, n.cols), nil
}

// filterNode keeps the rows where a condition is true: its conjuncts applied in turn, one
// failing on a batch set aside until the others have filtered it (ops.FilterAll).
type filterNode struct {
	in    node
	preds []*ops.Expr
}

func newFilter(in node, cond expr.Expression, ext expr.ExtensionRegistry) (node, error) {
	ps, err := compileConjuncts(cond, in.Schema(), ext)
	if err != nil {
		return nil, err
	}
	return &filterNode{in: in, preds: ps}, nil
}

func (n *filterNode) Schema() *arrow.Schema { return n.in.Schema() }
func (n *filterNode) open(ctx context.Context, rt *runtime) (array.RecordReader, error) {
	in, err := openNode(ctx, rt, n.in)
	if err != nil {
		return nil, err
	}
	return ops.FilterAll(ctx, in, n.preds, nil, rt.mem), nil
}

// projectNode evaluates expressions; a Substrait ProjectRel outputs its input columns followed
// by its expressions (keepInput).
type projectNode struct {
	in     node
	exprs  []*ops.Expr
	cols   []int // input columns kept in front when keepInput
	schema *arrow.Schema
}

func newProject(in node, es []expr.Expression, keepInput bool, ext expr.ExtensionRegistry) (node, error) {
	compiled, err := compileAll(es, in.Schema(), ext)
	if err != nil {
		return nil, err
	}
	n := &projectNode{in: in, exprs: compiled}
	var fields []arrow.Field
	if keepInput {
		for i := range in.Schema().NumFields() {
			n.cols = append(n.cols, i)
			fields = append(fields, in.Schema().Field(i))
		}
	}
	for i, c := range compiled {
		fields = append(fields, arrow.Field{Name: fmt.Sprintf("expr%d", i), Type: c.Type(), Nullable: true})
	}
	n.schema = arrow.NewSchema(fields, nil)
	return n, nil
}

func (n *projectNode) Schema() *arrow.Schema { return n.schema }
func (n *projectNode) open(ctx context.Context, rt *runtime) (array.RecordReader, error) {
	in, err := openNode(ctx, rt, n.in)
	if err != nil {
		return nil, err
	}
	return projectKeeping(ctx, in, n.cols, n.exprs, n.schema, rt), nil
}

// projectKeeping evaluates exprs over in and outputs input columns cols followed by them,
// under schema's names and fields: an ops.Project of the kept columns (bare references,
// shared without a copy) and the expressions, so that it reserves its batches' bytes before
// building them and cuts them by bytes as every projection does.
func projectKeeping(ctx context.Context, in array.RecordReader, cols []int, exprs []*ops.Expr, schema *arrow.Schema, rt *runtime) array.RecordReader {
	all := make([]*ops.Expr, 0, len(cols)+len(exprs))
	for _, c := range cols {
		e, err := ops.Column(in.Schema(), c)
		if err != nil {
			in.Release()
			return ErrReader(schema, err)
		}
		all = append(all, e)
	}
	all = append(all, exprs...)
	names := make([]string, schema.NumFields())
	for i := range names {
		names[i] = schema.Field(i).Name
	}
	return conform(ops.Project(ctx, in, all, names, rt.mem), schema)
}

// sortNode sorts its input by key expressions, keeping the first k rows when k >= 0.
type sortNode struct {
	in    node
	keys  []sortKey
	k     int64
	ext   expr.ExtensionRegistry
	exprs []*ops.Expr // key expressions that are not plain columns, appended before sorting
	cols  []ops.SortKey
}

func newSort(in node, keys []sortKey, k int64, ext expr.ExtensionRegistry) (node, error) {
	n := &sortNode{in: in, keys: keys, k: k, ext: ext}
	width := in.Schema().NumFields()
	for _, key := range keys {
		col, ok := baseRef(key.e)
		if !ok || col >= width {
			c, err := ops.Compile(key.e, in.Schema(), ext)
			if err != nil {
				return nil, err
			}
			col = width + len(n.exprs)
			n.exprs = append(n.exprs, c)
		}
		n.cols = append(n.cols, ops.SortKey{Column: col, Desc: key.desc, NullsFirst: key.nullsFirst})
	}
	return n, nil
}

func (n *sortNode) Schema() *arrow.Schema { return n.in.Schema() }
func (n *sortNode) open(ctx context.Context, rt *runtime) (array.RecordReader, error) {
	in, err := openNode(ctx, rt, n.in)
	if err != nil {
		return nil, err
	}
	return sortStream(ctx, in, n.exprs, n.cols, n.k, rt), nil
}

// sortStream sorts in by keys (over in's columns followed by extra), keeping k rows when
// k >= 0, and drops the extra key columns.
func sortStream(ctx context.Context, in array.RecordReader, extra []*ops.Expr, keys []ops.SortKey, k int64, rt *runtime) array.RecordReader {
	width := in.Schema().NumFields()
	if len(extra) > 0 {
		cols := make([]int, width)
		fields := make([]arrow.Field, 0, width+len(extra))
		for i := range cols {
			cols[i] = i
			fields = append(fields, in.Schema().Field(i))
		}
		for i, e := range extra {
			fields = append(fields, arrow.Field{Name: fmt.Sprintf("sortkey%d", i), Type: e.Type(), Nullable: true})
		}
		in = projectKeeping(ctx, in, cols, extra, arrow.NewSchema(fields, nil), rt)
	}
	var out array.RecordReader
	if k >= 0 {
		out = ops.TopK(ctx, in, keys, k, rt.mem)
	} else {
		out = ops.Sort(ctx, in, keys, rt.mem)
	}
	if len(extra) > 0 {
		cols := make([]int, width)
		for i := range cols {
			cols[i] = i
		}
		out = ops.Select(out, cols)
	}
	return out
}

// fetchNode skips offset rows and outputs at most count (count < 0: all).
type fetchNode struct {
	in            node
	offset, count int64
}

func newFetch(in node, offset, count int64) node {
	return &fetchNode{in: in, offset: offset, count: count}
}

func (n *fetchNode) Schema() *arrow.Schema { return n.in.Schema() }
func (n *fetchNode) open(ctx context.Context, rt *runtime) (array.RecordReader, error) {
	in, err := openNode(ctx, rt, n.in)
	if err != nil {
		return nil, err
	}
	return ops.Fetch(in, n.offset, n.count), nil
}

// aggregateNode aggregates its input in one place (aggregate.Single): input columns are the
// projected grouping expressions and measure arguments.
type aggregateNode struct {
	in     node
	spec   aggregate.Spec
	exprs  []*ops.Expr
	proj   *arrow.Schema
	schema *arrow.Schema
}

func newAggregate(in node, spec aggregate.Spec, inputs []expr.Expression, ext expr.ExtensionRegistry) (node, error) {
	compiled, err := compileAll(inputs, in.Schema(), ext)
	if err != nil {
		return nil, err
	}
	if err := guardAggInputs(spec, compiled); err != nil {
		return nil, err
	}
	proj := exprSchema(compiled, nil)
	out, err := aggregate.OutputSchema(proj, spec)
	if err != nil {
		return nil, err
	}
	return &aggregateNode{in: in, spec: spec, exprs: compiled, proj: proj, schema: out}, nil
}

func (n *aggregateNode) Schema() *arrow.Schema { return n.schema }
func (n *aggregateNode) open(ctx context.Context, rt *runtime) (array.RecordReader, error) {
	in, err := openNode(ctx, rt, n.in)
	if err != nil {
		return nil, err
	}
	p := projectKeeping(ctx, in, nil, n.exprs, n.proj, rt)
	return aggregate.New(ctx, p, n.proj, n.spec, aggregate.Single, rt.mem)
}

// exprSchema is the schema of projected expressions, named by names (or input0…).
func exprSchema(es []*ops.Expr, names []string) *arrow.Schema {
	fields := make([]arrow.Field, len(es))
	for i, e := range es {
		name := fmt.Sprintf("input%d", i)
		if i < len(names) {
			name = names[i]
		}
		fields[i] = arrow.Field{Name: name, Type: e.Type(), Nullable: true}
	}
	return arrow.NewSchema(fields, nil)
}

// unionNode concatenates its inputs (UNION ALL).
type unionNode struct {
	in []node
}

func newUnion(in []node) (node, error) {
	if len(in) == 0 {
		return nil, unsupported("UNION ALL without inputs")
	}
	first := in[0].Schema()
	for _, n := range in[1:] {
		s := n.Schema()
		if s.NumFields() != first.NumFields() {
			return nil, unsupported("UNION ALL inputs of different widths")
		}
		for i := range s.NumFields() {
			if !arrow.TypeEqual(s.Field(i).Type, first.Field(i).Type) {
				return nil, unsupported("UNION ALL inputs of different column types")
			}
		}
	}
	return &unionNode{in: in}, nil
}

func (n *unionNode) Schema() *arrow.Schema { return n.in[0].Schema() }
func (n *unionNode) open(ctx context.Context, rt *runtime) (array.RecordReader, error) {
	readers := make([]array.RecordReader, 0, len(n.in))
	for _, in := range n.in {
		r, err := openNode(ctx, rt, in)
		if err != nil {
			for _, o := range readers {
				o.Release()
			}
			return nil, err
		}
		readers = append(readers, r)
	}
	return ops.UnionAll(readers), nil
}
