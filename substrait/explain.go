package substrait

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/plan"
	"github.com/substrait-io/substrait-go/v8/types"
)

// Explain pretty-prints the relation tree of a plan, root first, one relation per line,
// children indented by two spaces. Field references are printed with the names of the
// input's columns, literals (partition values, time bounds, constants) as <value>, types
// with PostgreSQL's names. For example:
//
//	Root [id, timestamp]
//	  Fetch count=10
//	    Project [id, timestamp]
//	      Sort [timestamp DESC, id DESC]
//	        Filter channel_id = <value> AND timestamp >= <value> AND timestamp < <value>
//	          Read messages [channel_id, timestamp, id, value]
//
// The output holds no value of the query, as the query log holds none; LIMIT and OFFSET
// counts, which shape the plan, print as numbers. Any plan prints, supported or not; unknown
// relations print their kind.
func Explain(p *plan.Plan) string {
	if p == nil {
		return "<nil plan>\n"
	}
	var b strings.Builder
	for _, r := range p.Relations() {
		if root := r.Root(); root != nil {
			fmt.Fprintf(&b, "Root [%s]\n", strings.Join(root.Names(), ", "))
			lines, _ := explainRel(root.Input())
			for _, l := range lines {
				b.WriteString("  " + l + "\n")
			}
			continue
		}
		if r.Rel() != nil {
			lines, _ := explainRel(r.Rel())
			b.WriteString("Relation\n")
			for _, l := range lines {
				b.WriteString("  " + l + "\n")
			}
		}
	}
	return b.String()
}

// explainRel returns the lines of rel's subtree and the names of rel's output columns.
func explainRel(rel plan.Rel) ([]string, []string) {
	var (
		head     string
		children []plan.Rel
		names    []string
	)
	inputNames := func() []string {
		if in := rel.GetInputs(); len(in) == 1 {
			_, n := explainRel(in[0])
			return n
		}
		return nil
	}
	switch r := rel.(type) {
	case *plan.NamedTableReadRel:
		bs := r.BaseSchema()
		names = bs.Names
		head = fmt.Sprintf("Read %s [%s]", strings.Join(r.Names(), "."), strings.Join(names, ", "))
		if f := r.Filter(); f != nil {
			head += " filter: " + formatExpr(f, names)
		}
		if m := r.Projection(); m != nil {
			var sel []string
			var out []string
			for _, it := range m.Select() {
				if int(it.Field()) < len(bs.Names) {
					sel = append(sel, bs.Names[it.Field()])
					out = append(out, bs.Names[it.Field()])
				}
			}
			head += " project: [" + strings.Join(sel, ", ") + "]"
			names = out
		}
	case *plan.FilterRel:
		names = inputNames()
		head = "Filter " + formatExpr(r.Condition(), names)
		children = r.GetInputs()
	case *plan.SortRel:
		names = inputNames()
		var parts []string
		for _, s := range r.Sorts() {
			dir := "ASC"
			if s.Kind == types.SortDescNullsFirst || s.Kind == types.SortDescNullsLast {
				dir = "DESC"
			}
			parts = append(parts, formatExpr(s.Expr, names)+" "+dir)
		}
		head = "Sort [" + strings.Join(parts, ", ") + "]"
		children = r.GetInputs()
	case *plan.ProjectRel:
		in := inputNames()
		names = append([]string(nil), in...)
		var parts []string
		for _, e := range r.Expressions() {
			s := formatExpr(e, in)
			parts = append(parts, s)
			names = append(names, s)
		}
		head = "Project [" + strings.Join(parts, ", ") + "]"
		children = r.GetInputs()
	case *plan.AggregateRel:
		in := inputNames()
		var parts []string
		for _, g := range r.GroupingExpressions() {
			s := formatExpr(g, in)
			names = append(names, s)
			parts = append(parts, "group "+s)
		}
		for _, m := range r.Measures() {
			s := formatAgg(m.Measure(), in)
			names = append(names, s)
			parts = append(parts, s)
		}
		head = "Aggregate [" + strings.Join(parts, ", ") + "]"
		children = r.GetInputs()
	case *plan.FetchRel:
		names = inputNames()
		head = "Fetch count=" + strconv.FormatInt(r.Count(), 10)
		if r.Count() == plan.FETCH_COUNT_ALL_RECORDS {
			head = "Fetch count=ALL"
		}
		if r.Offset() != 0 {
			head += " offset=" + strconv.FormatInt(r.Offset(), 10)
		}
		children = r.GetInputs()
	case *plan.JoinRel:
		_, ln := explainRel(r.Left())
		_, rn := explainRel(r.Right())
		all := append(append([]string(nil), ln...), rn...)
		names = all
		if t := r.Type(); t == plan.JoinTypeLeftSemi || t == plan.JoinTypeLeftAnti {
			names = ln
		}
		head = "Join " + strings.ToLower(strings.TrimPrefix(r.Type().String(), "JOIN_TYPE_")) + " on " + formatExpr(r.Expr(), all)
		children = r.GetInputs()
	case *plan.ExtensionMultiRel:
		head, children = relName(rel), rel.GetInputs()
		if d, ok := r.Definition().(*RecursiveUnion); ok {
			head = "RecursiveUnion UNION ALL"
			if d.Distinct {
				head = "RecursiveUnion UNION"
			}
			_, names = explainRel(children[0])
		}
	case *plan.ExtensionSingleRel:
		head, children = relName(rel), rel.GetInputs()
		if d, ok := r.Definition().(*ProjectSet); ok {
			in := inputNames()
			names = append([]string(nil), in...)
			for i := len(names); i < len(r.Input().RecordType().Types()); i++ {
				names = append(names, fmt.Sprintf("$%d", i)) // the condition reads past them
			}
			var parts []string
			for _, c := range d.Calls {
				args := make([]string, len(c.Args))
				for i, a := range c.Args {
					args[i] = formatExpr(a, in)
				}
				call := c.Name + "(" + strings.Join(args, ", ") + ")"
				parts = append(parts, call)
				for range c.Out {
					names = append(names, call)
				}
			}
			if d.Ordinality {
				names = append(names, "ordinality")
			}
			head = strings.Replace(d.String(), strings.Join(callNames(d), ", "), strings.Join(parts, ", "), 1)
			if d.Cond != nil {
				head = strings.Replace(head, " on condition", " on "+formatExpr(d.Cond, names), 1)
			}
		}
	case *plan.ExtensionLeafRel:
		head = relName(rel)
		if _, ok := r.Definition().(*WorkTable); ok {
			head = "WorkTable"
		}
	default:
		head = relName(rel)
		children = rel.GetInputs()
	}
	if m := rel.OutputMapping(); len(m) > 0 && !emitsExpressions(rel, m) {
		var emit, out []string
		for _, i := range m {
			n := "$" + strconv.Itoa(int(i))
			if int(i) < len(names) {
				n = names[i]
			}
			emit = append(emit, n)
			out = append(out, n)
		}
		head += " emit [" + strings.Join(emit, ", ") + "]"
		names = out
	}
	if m := rel.OutputMapping(); len(m) > 0 && emitsExpressions(rel, m) {
		names = names[len(names)-len(m):]
	}
	lines := []string{head}
	for _, c := range children {
		sub, _ := explainRel(c)
		for _, l := range sub {
			lines = append(lines, "  "+l)
		}
	}
	return lines, names
}

var infixOps = map[string]string{"equal": "=", "not_equal": "<>", "lt": "<", "gt": ">", "lte": "<=", "gte": ">="}

// formatExpr prints an expression with input column names.
func formatExpr(e expr.Expression, names []string) string {
	switch x := e.(type) {
	case *expr.FieldReference:
		if sf, ok := x.Reference.(*expr.StructFieldRef); ok && x.Root == expr.RootReference && sf.Child == nil {
			if int(sf.Field) < len(names) {
				return names[sf.Field]
			}
			return "$" + strconv.Itoa(int(sf.Field))
		}
		return x.String()
	case *expr.ScalarFunction:
		args := make([]string, x.NArgs())
		for i := range x.NArgs() {
			if a, ok := x.Arg(i).(expr.Expression); ok {
				args[i] = formatExpr(a, names)
			} else {
				args[i] = fmt.Sprint(x.Arg(i))
			}
		}
		if op, ok := infixOps[x.Name()]; ok && len(args) == 2 {
			return args[0] + " " + op + " " + args[1]
		}
		switch x.Name() {
		case "and":
			return strings.Join(args, " AND ")
		case "or":
			return "(" + strings.Join(args, " OR ") + ")"
		}
		return x.Name() + "(" + strings.Join(args, ", ") + ")"
	case *expr.WindowFunction:
		return formatWindow(x, names)
	case *expr.Cast:
		return "CAST(" + formatExpr(x.Input, names) + " AS " + typeName(x.Type) + ")"
	case expr.Literal:
		return formatLiteral(x)
	case *expr.SingularOrList:
		opts := make([]string, len(x.Options))
		for i, o := range x.Options {
			opts[i] = formatExpr(o, names)
		}
		return formatExpr(x.Value, names) + " IN (" + strings.Join(opts, ", ") + ")"
	}
	return e.String()
}

// formatLiteral prints a literal as <value>, as the query log would (internal/querylog): no
// literal of the query, partition value or time bound appears in EXPLAIN, which clients and
// tools log. NULL and booleans, which hold nothing, print as they are.
func formatLiteral(l expr.Literal) string {
	switch v := l.(type) {
	case *expr.NullLiteral:
		return "NULL"
	case *expr.PrimitiveLiteral[bool]:
		return strconv.FormatBool(v.Value)
	}
	return "<value>"
}

func formatAgg(f *expr.AggregateFunction, names []string) string {
	if f == nil {
		return "<nil>"
	}
	if f.NArgs() == 0 {
		return f.Name() + "(*)"
	}
	args := make([]string, f.NArgs())
	for i := range f.NArgs() {
		if a, ok := f.Arg(i).(expr.Expression); ok {
			args[i] = formatExpr(a, names)
		}
	}
	s := f.Name() + "(" + strings.Join(args, ", ") + ")"
	if f.Invocation() == types.AggInvocationDistinct {
		s = f.Name() + "(DISTINCT " + strings.Join(args, ", ") + ")"
	}
	return s
}

// emitsExpressions reports whether rel is a ProjectRel whose emit mapping keeps exactly its
// expressions in order (the canonical form), which EXPLAIN does not repeat.
func emitsExpressions(rel plan.Rel, m []int32) bool {
	p, ok := rel.(*plan.ProjectRel)
	if !ok || len(m) != len(p.Expressions()) {
		return false
	}
	base := int32(p.Input().RecordType().FieldCount())
	for i, v := range m {
		if v != base+int32(i) {
			return false
		}
	}
	return true
}
