package substrait

import (
	"fmt"
	"slices"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/plan"
	"github.com/substrait-io/substrait-go/v8/types"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// Set-returning functions over the rows of other FROM items (issue 18): a function in FROM
// after other items — LATERAL implicitly, as PostgreSQL calls it once per row of the items
// before it (FROM flights f, jsonb_each(f.value) AS e), on a join's right side (CROSS JOIN
// LATERAL f(…), JOIN LATERAL f(…) ON cond, LEFT JOIN LATERAL f(…) ON true), with WITH
// ORDINALITY or ROWS FROM (…), or a JSON set-returning function anywhere in FROM, is bound as
// an ExtensionSingleRel whose definition is a *ProjectSet over the items before it (a
// one-row VALUES when it stands alone); the executor runs it as ops.ProjectSet
// (scan/projectset.go). generate_series and unnest of literals alone keep their constant
// form (tablefunc.go) up to MaxSeriesRows rows; a longer generate_series, or one of other
// constant expressions, is a ProjectSet over one row too. The set-returning functions of a select list are rewritten into such
// a ROWS FROM item after the query's FROM (selectSRFs), which is PostgreSQL 10's ProjectSet:
// the functions of one select list zip to the longest.

// ProjectSet defines the relation that calls set-returning functions on each row of its one
// input: its output is the input's columns, then each call's columns (Out), then, when
// Ordinality, the row's ordinality within its input row (bigint). Each input row yields as
// many rows as its longest call (shorter calls NULL-padded); a row for which every call
// yields nothing yields no row, or, when Outer (LEFT JOIN LATERAL … ON true), one row whose
// call columns and ordinality are NULL. Cond, when set (LEFT JOIN LATERAL … ON cond, Outer),
// is a boolean expression over the ProjectSet's output: a row the calls yield is kept when it
// is true, and an input row none of whose rows is kept yields the one NULL-extended row instead
// (PostgreSQL's left join of a function scan). Calls' names and arguments are
// ops.SetFuncOutputs'.
type ProjectSet struct {
	Calls      []SetCall
	Ordinality bool
	Outer      bool
	Cond       expr.Expression
}

// SetCall is a set-returning function call of a ProjectSet: the function's name, its
// arguments (over the input's columns) and the types of the columns it yields.
type SetCall struct {
	Name string
	Args []expr.Expression
	Out  []types.Type
	// Empty marks unnest of an empty array (ARRAY[]::t[]): no row; its one argument is a
	// NULL of t, typing its column.
	Empty bool
}

// Schema is the input's columns, the calls' and the ordinality.
func (p *ProjectSet) Schema(inputs []plan.Rel) types.RecordType {
	ts := slices.Clone(inputs[0].RecordType().Types())
	for _, c := range p.Calls {
		for _, t := range c.Out {
			ts = append(ts, t.WithNullability(nullableN))
		}
	}
	if p.Ordinality {
		ts = append(ts, i64Type())
	}
	return *types.NewRecordTypeFromTypes(ts)
}

// Build describes the relation for the plan's protobuf form (EXPLAIN).
func (p *ProjectSet) Build([]plan.Rel) *anypb.Any {
	a, _ := anypb.New(wrapperspb.String(p.String()))
	return a
}

// String names the calls: "ProjectSet jsonb_each, generate_series [ordinality] [outer]".
func (p *ProjectSet) String() string {
	s := "ProjectSet " + strings.Join(callNames(p), ", ")
	if p.Ordinality {
		s += " with ordinality"
	}
	if p.Outer {
		s += " outer"
	}
	if p.Cond != nil {
		s += " on condition"
	}
	return s
}

// callNames is the names of p's calls.
func callNames(p *ProjectSet) []string {
	names := make([]string, len(p.Calls))
	for i, c := range p.Calls {
		names[i] = c.Name
	}
	return names
}

// inputConjuncts is the conjuncts of above (over r's output) that read only r's input columns,
// which a ProjectSet passes unchanged: over its input.
func inputConjuncts(above []expr.Expression, r *plan.ExtensionSingleRel) (down, kept []expr.Expression) {
	mapping := r.OutputMapping()
	n := len(r.Input().RecordType().Types())
	return remapAll(above, func(i int) (int, bool) {
		if mapping != nil {
			if i < 0 || i >= len(mapping) {
				return 0, false
			}
			i = int(mapping[i])
		}
		return i, i >= 0 && i < n
	}, false)
}

// Expressions is every call's arguments.
func (p *ProjectSet) Expressions([]plan.Rel) []expr.Expression {
	var es []expr.Expression
	for _, c := range p.Calls {
		es = append(es, c.Args...)
	}
	return es
}

// jsonSRFs are the JSON set-returning functions: whether they yield a key, a value, and the
// value as text.
var jsonSRFs = map[string]struct{ key, value, text bool }{
	"json_each": {true, true, false}, "jsonb_each": {true, true, false},
	"json_each_text": {true, true, true}, "jsonb_each_text": {true, true, true},
	"json_array_elements": {false, true, false}, "jsonb_array_elements": {false, true, false},
	"json_array_elements_text": {false, true, true}, "jsonb_array_elements_text": {false, true, true},
	"json_object_keys": {true, false, true}, "jsonb_object_keys": {true, false, true},
}

// needsProjectSet reports whether the function item rf is bound as a ProjectSet: all but
// generate_series and unnest of constants without ORDINALITY or ROWS FROM.
func needsProjectSet(rf *pg.RangeFunction) bool {
	if rf.GetLateral() || rf.GetOrdinality() || rf.GetIsRowsfrom() || len(rf.GetFunctions()) != 1 {
		return true
	}
	items := rf.GetFunctions()[0].GetList().GetItems()
	if len(items) == 0 || items[0].GetFuncCall() == nil {
		return false
	}
	fc := items[0].GetFuncCall()
	if funcName(fc) == "unnest" && len(fc.GetArgs()) > 1 {
		return true // ROWS FROM of each array's unnest (zipUnnest)
	}
	if _, ok := jsonSRFs[funcName(fc)]; ok {
		return true
	}
	refs := false
	for _, a := range fc.GetArgs() {
		deepNodes(a, func(n *pg.Node) bool {
			refs = refs || n.GetColumnRef() != nil
			return !refs
		})
	}
	return refs
}

// readsColumns reports whether n holds a function in FROM (at any depth of its joins) whose
// arguments reference a column.
func readsColumns(n *pg.Node) bool {
	found := false
	deepNodes(n, func(x *pg.Node) bool {
		switch {
		case found || x.GetSelectStmt() != nil || x.GetRangeSubselect() != nil:
			return false
		case x.GetRangeFunction() != nil:
			deepNodes(x, func(y *pg.Node) bool {
				found = found || y.GetColumnRef() != nil
				return !found && y.GetSelectStmt() == nil
			})
			return false
		}
		return true
	})
	return found
}

// projectSet binds the functions of rf over l (their arguments read l's columns): l's columns
// then the functions', qualified by rf's alias (or the function's name).
func (bd *binder) projectSet(l *boundRel, rf *pg.RangeFunction, outer bool) (*boundRel, error) {
	if len(rf.GetColdeflist()) > 0 {
		return nil, unimplementedAre("column definition lists")
	}
	def := &ProjectSet{Ordinality: rf.GetOrdinality(), Outer: outer}
	var cols []col
	qual := ""
	fns := rf.GetFunctions()
	if rf.GetAlias().GetAliasname() != srfAlias {
		fns = zipUnnest(fns)
	}
	for _, f := range fns {
		items := f.GetList().GetItems()
		if len(items) == 0 || items[0].GetFuncCall() == nil {
			return nil, unimplementedAre("table functions")
		}
		if len(items) > 1 && len(items[1].GetList().GetItems()) > 0 {
			return nil, unimplementedAre("column definition lists")
		}
		call, cs, err := bd.setCall(items[0].GetFuncCall(), l.sc)
		if err != nil {
			return nil, err
		}
		def.Calls = append(def.Calls, call)
		cols = append(cols, cs...)
		if qual == "" {
			qual = call.Name
		}
	}
	if def.Ordinality {
		cols = append(cols, col{name: "ordinality", typ: i64Type()})
	}
	if al := rf.GetAlias(); al != nil {
		qual = al.GetAliasname()
		cn := al.GetColnames()
		if len(cn) > len(cols) {
			return nil, quoting(InvalidArgument, "42P10", fmt.Sprintf("table %%q has %d columns available but %d columns specified", len(cols), len(cn)), qual)
		}
		if len(cn) == 0 && len(def.Calls) == 1 && len(def.Calls[0].Out) == 1 && !jsonSRFs[def.Calls[0].Name].value {
			// A function of one column without OUT parameters (json_object_keys,
			// generate_series, unnest) names it after the alias; json_array_elements' is
			// its OUT parameter value.
			cols[0].name = qual
		}
		for i, c := range cn {
			cols[i].name = c.GetString_().GetSval()
		}
	}
	if added := def.Ordinality && bd.domainOrdinality[rf.GetFunctions()[0].GetList().GetItems()[0].GetFuncCall().GetLocation()]; len(def.Calls) == 1 && len(def.Calls[0].Out) == 1 && (!def.Ordinality || added) {
		cols[0].scalar = true
		cols[len(cols)-1].hidden = cols[len(cols)-1].hidden || added
	}
	rel, err := bd.b.ExtensionSingle(l.rel, def)
	if err != nil {
		return nil, fmt.Errorf("bind set-returning function: %w", err)
	}
	ts := rel.RecordType().Types()
	out := &boundRel{rel: rel, sc: &scope{cols: slices.Clone(l.sc.cols)}}
	for i, c := range l.sc.cols {
		if i < len(l.names) {
			out.names = append(out.names, l.names[i])
		} else {
			out.names = append(out.names, c.name)
		}
	}
	for _, c := range cols {
		c.qual = qual
		// The select list's calls (selectSRFs) are reached by their references only, never
		// by *.
		c.hidden = c.hidden || qual == srfAlias
		c.typ = ts[len(out.sc.cols)]
		out.sc.cols = append(out.sc.cols, c)
		out.names = append(out.names, c.name)
	}
	return out, nil
}

// setCall binds the set-returning function call fc, its arguments over sc: the call and the
// columns it yields (named as PostgreSQL names them, json and jsonb marked).
func (bd *binder) setCall(fc *pg.FuncCall, sc *scope) (SetCall, []col, error) {
	name := funcName(fc)
	if fc.GetAggStar() || fc.GetAggDistinct() || fc.GetOver() != nil || len(fc.GetAggOrder()) > 0 || fc.GetAggFilter() != nil || fc.GetFuncVariadic() {
		return SetCall{}, nil, unimplemented("this form of " + name)
	}
	if name == "unnest" {
		return bd.unnestCall(fc, sc)
	}
	args := make([]bval, len(fc.GetArgs()))
	for i, a := range fc.GetArgs() {
		if hasSRF(a) {
			return SetCall{}, nil, unimplementedAre("set-returning functions in the arguments of a set-returning function")
		}
		v, err := bd.bindExpr(a, sc)
		if err != nil {
			return SetCall{}, nil, err
		}
		args[i] = v
	}
	if f, ok := jsonSRFs[name]; ok {
		jsonb := strings.HasPrefix(name, "jsonb")
		if len(args) != 1 {
			names := make([]string, len(args))
			for i, a := range args {
				names[i] = jsonTypeName(a)
			}
			return SetCall{}, nil, refused(InvalidArgument, "42883", "function %s(%s) does not exist", name, strings.Join(names, ", "))
		}
		doc, err := bd.jsonArg(name, args[0], jsonb, args)
		if err != nil {
			return SetCall{}, nil, err
		}
		call := SetCall{Name: name, Args: []expr.Expression{doc}}
		var cols []col
		if f.key {
			kn := "key"
			if !f.value {
				kn = name
			}
			call.Out = append(call.Out, strType())
			cols = append(cols, col{name: kn})
		}
		if f.value {
			c := col{name: "value"}
			if f.text {
				call.Out = append(call.Out, strType())
			} else {
				call.Out = append(call.Out, binType())
				c.json, c.jsonb = !jsonb, jsonb
			}
			cols = append(cols, c)
		}
		return call, cols, nil
	}
	if name != "generate_series" {
		return SetCall{}, nil, refused(Unimplemented, "0A000", "the set-returning function %s is not supported", name)
	}
	if len(args) < 2 || len(args) > 3 {
		return SetCall{}, nil, errorf(InvalidArgument, "function generate_series with %d arguments does not exist", len(args))
	}
	if timeSeriesArgs(args) {
		return bd.timestampSetCall(args)
	}
	t, err := seriesIntType(args)
	if err != nil {
		return SetCall{}, nil, err
	}
	call := SetCall{Name: name, Out: []types.Type{t}}
	for _, a := range args {
		e, err := bd.coerce(a, t, "argument of generate_series")
		if err != nil {
			return SetCall{}, nil, err
		}
		call.Args = append(call.Args, e)
	}
	return call, []col{{name: name}}, nil
}

// timestampSetCall binds generate_series(start, stop, step) of timestamps (timeSeriesArgs):
// the ends as seriesTimestampType's type (a date is midnight UTC, the session's zone), the
// step an interval (an untyped literal reads as one), as the constant series
// (timestampSeries) takes them.
func (bd *binder) timestampSetCall(args []bval) (SetCall, []col, error) {
	if len(args) != 3 {
		return SetCall{}, nil, errorf(InvalidArgument, "function generate_series(timestamp with time zone, timestamp with time zone) does not exist")
	}
	typ := seriesTimestampType(args[:2])
	call := SetCall{Name: "generate_series", Out: []types.Type{typ}}
	for _, a := range args[:2] {
		e, err := bd.coerce(a, typ, "argument of generate_series")
		if err != nil {
			return SetCall{}, nil, err
		}
		call.Args = append(call.Args, e)
	}
	step, err := bd.intervalValue(args[2], "argument 3 of generate_series")
	if err != nil {
		return SetCall{}, nil, err
	}
	call.Args = append(call.Args, step)
	return call, []col{{name: "generate_series"}}, nil
}

// unnestCall binds unnest(ARRAY[…]) (arrayElements') whose elements read sc's columns: one
// row per element; of an empty typed array (ARRAY[]::int[]), none (an Empty call).
func (bd *binder) unnestCall(fc *pg.FuncCall, sc *scope) (SetCall, []col, error) {
	raw := fc.GetArgs()
	if len(raw) != 1 {
		// unnest of several arrays is FROM's ROWS FROM form (zipUnnest); PostgreSQL's
		// unnest(anyarray) function takes one.
		names := make([]string, len(raw))
		for i, a := range raw {
			n, err := bd.arrayTypeName(a, sc)
			if err != nil {
				return SetCall{}, nil, unimplemented(fmt.Sprintf("unnest of %d arrays in a select list", len(raw)))
			}
			names[i] = n
		}
		return SetCall{}, nil, refused(InvalidArgument, "42883", "function unnest(%s) does not exist", strings.Join(names, ", "))
	}
	elems, elem, err := arrayElements(raw[0])
	if err != nil {
		return SetCall{}, nil, err
	}
	if len(elems) > MaxSeriesRows {
		return SetCall{}, nil, errSeriesRows("unnest")
	}
	vals := make([]bval, len(elems))
	for i, el := range elems {
		if hasSRF(el) {
			return SetCall{}, nil, unimplementedAre("set-returning functions in the arguments of a set-returning function")
		}
		v, err := bd.bindExpr(el, sc)
		if err != nil {
			return SetCall{}, nil, err
		}
		if v.json || v.jsonb || v.bytea || v.ds != nil {
			return SetCall{}, nil, unimplemented("unnest of json, jsonb, bytea or numeric values of varying scale")
		}
		vals[i] = v
	}
	if len(vals) == 0 {
		if elem == nil {
			return SetCall{}, nil, errEmptyArray
		}
		t, err := bd.emptyArrayType(elem)
		if err != nil {
			return SetCall{}, nil, err
		}
		return SetCall{Name: "unnest", Args: []expr.Expression{expr.NewNullLiteral(t.WithNullability(nullableN))}, Out: []types.Type{t}, Empty: true}, []col{{name: "unnest"}}, nil
	}
	common, err := bd.commonType(vals, "ARRAY")
	if err != nil {
		return SetCall{}, nil, err
	}
	return SetCall{Name: "unnest", Args: common, Out: []types.Type{common[0].GetType()}}, []col{{name: "unnest"}}, nil
}

// arrayTypeName is the name PostgreSQL gives the type of the array a (arrayElements'),
// its elements bound over sc: integer[], text[] (of untyped literals too), ….
func (bd *binder) arrayTypeName(a *pg.Node, sc *scope) (string, error) {
	elems, elem, err := arrayElements(a)
	if err != nil {
		return "", err
	}
	if len(elems) == 0 {
		if elem == nil {
			return "", errEmptyArray
		}
		t, err := bd.emptyArrayType(elem)
		if err != nil {
			return "", err
		}
		return argTypeName(typed(expr.NewNullLiteral(t))) + "[]", nil
	}
	vals := make([]bval, len(elems))
	for i, el := range elems {
		if vals[i], err = bd.bindExpr(el, sc); err != nil {
			return "", err
		}
	}
	if !slices.ContainsFunc(vals, func(v bval) bool { return !v.untyped() }) {
		return "text[]", nil
	}
	common, err := bd.commonType(vals, "ARRAY")
	if err != nil {
		return "", err
	}
	return argTypeName(typed(common[0])) + "[]", nil
}

// errEmptyArray is PostgreSQL's refusal of ARRAY[] without a type.
var errEmptyArray = refused(InvalidArgument, "42P18", "cannot determine type of empty array")

// arrayElements is the elements unnest yields of its argument n, in order: ARRAY[…]'s; a
// multidimensional ARRAY[[…], […]]'s in row-major order (PostgreSQL's unnest flattens it; its
// sub-arrays of one level must have matching dimensions, else PostgreSQL's 2202E); an
// ARRAY[…]::t[]'s each cast to t, and elem is then t (the type of an empty one). Other
// arguments (an array literal '{…}'::t[], an array column) are refused by name.
func arrayElements(n *pg.Node) (elems []*pg.Node, elem *pg.TypeName, err error) {
	if tc := n.GetTypeCast(); tc != nil && len(tc.GetTypeName().GetArrayBounds()) > 0 {
		inner, _, err := arrayElements(tc.GetArg())
		if err != nil {
			return nil, nil, err
		}
		elem = proto.Clone(tc.GetTypeName()).(*pg.TypeName)
		elem.ArrayBounds = nil
		elems = make([]*pg.Node, len(inner))
		for i, e := range inner {
			elems[i] = &pg.Node{Node: &pg.Node_TypeCast{TypeCast: &pg.TypeCast{Arg: e, TypeName: elem, Location: tc.GetLocation()}}}
		}
		return elems, elem, nil
	}
	arr := n.GetAArrayExpr()
	if arr == nil {
		return nil, nil, unimplementedAre("unnest arguments other than ARRAY[…] and ARRAY[…]::type[]")
	}
	elems, _, err = flattenArray(arr)
	return elems, nil, err
}

// flattenArray is the elements of arr in row-major order and its dimensions.
func flattenArray(arr *pg.A_ArrayExpr) ([]*pg.Node, []int, error) {
	els := arr.GetElements()
	if len(els) == 0 || els[0].GetAArrayExpr() == nil {
		if slices.ContainsFunc(els, func(e *pg.Node) bool { return e.GetAArrayExpr() != nil }) {
			return nil, nil, errArrayDimensions
		}
		return els, []int{len(els)}, nil
	}
	var (
		out  []*pg.Node
		dims []int
	)
	for i, el := range els {
		sub := el.GetAArrayExpr()
		if sub == nil {
			return nil, nil, errArrayDimensions
		}
		e, d, err := flattenArray(sub)
		if err != nil {
			return nil, nil, err
		}
		if i == 0 {
			dims = d
		} else if !slices.Equal(d, dims) {
			return nil, nil, errArrayDimensions
		}
		out = append(out, e...)
	}
	return out, append([]int{len(els)}, dims...), nil
}

// errArrayDimensions is PostgreSQL's refusal of a multidimensional ARRAY[…] whose sub-arrays
// differ in their dimensions (ARRAY[[1, 2], [3]]).
var errArrayDimensions = refused(InvalidArgument, "2202E", "multidimensional arrays must have array expressions with matching dimensions")

// zipUnnest is the functions of rf with each unnest(a, b, …) of several arrays written as
// unnest(a), unnest(b), …: PostgreSQL's unnest of several arrays in FROM is ROWS FROM of
// each's unnest (the arrays side by side, the shorter padded with NULLs).
func zipUnnest(fns []*pg.Node) []*pg.Node {
	var out []*pg.Node
	for _, f := range fns {
		items := f.GetList().GetItems()
		fc := items[0].GetFuncCall()
		if fc == nil || funcName(fc) != "unnest" || len(fc.GetArgs()) < 2 {
			out = append(out, f)
			continue
		}
		for _, a := range fc.GetArgs() {
			one := proto.Clone(fc).(*pg.FuncCall)
			one.Args = []*pg.Node{a}
			out = append(out, &pg.Node{Node: &pg.Node_List{List: &pg.List{Items: append([]*pg.Node{{Node: &pg.Node_FuncCall{FuncCall: one}}}, items[1:]...)}}})
		}
	}
	return out
}

// hasSRF reports whether n calls a set-returning function (outside subqueries).
func hasSRF(n *pg.Node) bool {
	return anyCall(n, func(fc *pg.FuncCall) bool { return setReturning[funcName(fc)] })
}

// standaloneSet binds the function item rf alone in FROM as a ProjectSet over one row.
func (bd *binder) standaloneSet(rf *pg.RangeFunction) (*fromItem, error) {
	one, err := bd.constantColumn([]expr.Expression{expr.NewPrimitiveLiteral(int32(0), false)}, i32Type(), "?one?", "")
	if err != nil {
		return nil, err
	}
	one.sc.cols[0].hidden, one.sc.cols[0].qual = true, subqueryQual
	br, err := bd.projectSet(one.boundRel, rf, false)
	if err != nil {
		return nil, err
	}
	n := len(br.sc.cols)
	mapping := make([]int32, n-1)
	for i := range mapping {
		mapping[i] = int32(i + 1)
	}
	rel, err := br.rel.Remap(mapping...)
	if err != nil {
		return nil, fmt.Errorf("bind set-returning function: %w", err)
	}
	return &fromItem{boundRel: &boundRel{rel: rel, sc: &scope{cols: br.sc.cols[1:]}, names: br.names[1:]}}, nil
}

// isTrueConst reports whether n is the constant true (ON true).
func isTrueConst(n *pg.Node) bool {
	if n == nil {
		return true
	}
	c := n.GetAConst()
	return c != nil && c.GetBoolval() != nil && c.GetBoolval().GetBoolval()
}

// joinSet binds lf JOIN [LATERAL] rf (a function item bound as a ProjectSet, needsProjectSet)
// of type jt: CROSS JOIN and JOIN … ON cond are the ProjectSet over lf filtered by cond; LEFT
// JOIN … ON true the outer ProjectSet (a row of lf without rows of rf is kept, NULL-extended).
// LEFT JOIN with another condition, USING and NATURAL are refused by name; RIGHT and FULL
// JOIN over a LATERAL reference are PostgreSQL's 42P10.
func (bd *binder) joinSet(lf *fromItem, lErr map[int]int, je *pg.JoinExpr, rf *pg.RangeFunction, jt plan.JoinType) (*fromItem, error) {
	switch {
	case len(je.GetUsingClause()) > 0 || je.GetIsNatural():
		return nil, unimplementedAre("set-returning functions joined with USING or NATURAL")
	case (jt == plan.JoinTypeRight || jt == plan.JoinTypeOuter) && readsColumns(je.GetRarg()):
		return nil, &Error{Code: InvalidArgument, SQLState: "42P10", Msg: "the combining JOIN type must be INNER or LEFT for a LATERAL reference"}
	case jt == plan.JoinTypeRight || jt == plan.JoinTypeOuter:
		return nil, unimplementedAre("set-returning functions on the right of a RIGHT or FULL JOIN")
	case jt == plan.JoinTypeLeft && hasSubLink(je.GetQuals()):
		return nil, unimplementedAre("subqueries in the ON condition of a LEFT JOIN of a set-returning function")
	}
	l := lf.boundRel
	if len(lErr) > 0 {
		br, err := bd.raiseColumns(l, lErr)
		if err != nil {
			return nil, err
		}
		l = br
	}
	br, err := bd.projectSet(l, rf, jt == plan.JoinTypeLeft)
	if err != nil {
		return nil, err
	}
	if isTrueConst(je.GetQuals()) {
		return &fromItem{boundRel: br}, nil
	}
	cond, err := bd.onCond(nil, je.GetQuals(), br.sc)
	if err != nil {
		return nil, err
	}
	if jt == plan.JoinTypeLeft {
		br.rel.(*plan.ExtensionSingleRel).Definition().(*ProjectSet).Cond = cond
		return &fromItem{boundRel: br}, nil
	}
	f, err := bd.b.Filter(br.rel, cond)
	if err != nil {
		return nil, fmt.Errorf("bind set-returning function: %w", err)
	}
	return &fromItem{boundRel: &boundRel{rel: f, sc: br.sc, names: br.names}}, nil
}

// srfAlias names the ROWS FROM item selectSRFs adds, and srfColumn its columns: names no
// client identifier can reach unquoted.
const srfAlias = "?srf?"

func srfColumn(k int) string { return fmt.Sprintf("?srf%d?", k+1) }

// srfField names the column field (key or value) of the record-returning call k of the ROWS
// FROM item selectSRFs adds.
func srfField(k int, field string) string { return fmt.Sprintf("?srf%d.%s?", k+1, field) }

// srfRef is a reference to the column col of the ROWS FROM item selectSRFs adds.
func srfRef(col string) *pg.Node_ColumnRef {
	return &pg.Node_ColumnRef{ColumnRef: &pg.ColumnRef{Fields: []*pg.Node{
		{Node: &pg.Node_String_{String_: &pg.String{Sval: srfAlias}}},
		{Node: &pg.Node_String_{String_: &pg.String{Sval: col}}},
	}}}
}

// recordSRF reports whether name is a set-returning function yielding a record (its OUT
// parameters key and value): json_each, jsonb_each, json_each_text, jsonb_each_text.
func recordSRF(name string) bool {
	f, ok := jsonSRFs[name]
	return ok && f.key && f.value
}

// errRecordSRF refuses a record-returning set-returning function (recordSRF) called in a
// select list as a whole value, not one of its fields: PostgreSQL answers the record ((a,1)),
// which has no Arrow form here.
func errRecordSRF(name string) *Error {
	return refused(Unimplemented, "0A000", "%[1]s(...) in a select list returns a record, which is not supported: select (%[1]s(...)).key/.value or call it in FROM", name)
}

// recordField reads n as a field selection from a record-returning set-returning call,
// (json_each(…)).key: the call, the field (key or value) and the indirection after it
// ((jsonb_each(…)).value['a']); ok is false when n is no such selection. PostgreSQL's
// transformIndirection's errors: a field the record lacks is 42703, (f(…)).* inside an
// expression 0A000 (expandRecordStars expands it where it is a select-list item), a subscript
// of the record 42804.
func recordField(n *pg.Node) (fc *pg.FuncCall, field string, rest []*pg.Node, ok bool, err error) {
	ind := n.GetAIndirection()
	fc = ind.GetArg().GetFuncCall()
	if fc == nil || !recordSRF(funcName(fc)) || len(ind.GetIndirection()) == 0 {
		return nil, "", nil, false, nil
	}
	first := ind.GetIndirection()[0]
	switch {
	case first.GetAStar() != nil:
		return nil, "", nil, false, refused(Unimplemented, "0A000", `row expansion via "*" is not supported here`)
	case first.GetString_() == nil:
		return nil, "", nil, false, refused(InvalidArgument, "42804", "cannot subscript type record because it does not support subscripting")
	}
	field = first.GetString_().GetSval()
	if field != "key" && field != "value" {
		return nil, "", nil, false, quoting(InvalidArgument, "42703", "could not identify column %q in record data type", field)
	}
	return fc, field, ind.GetIndirection()[1:], true, nil
}

// expandRecordStars is sel with each select-list item (f(…)).* of a record-returning
// set-returning function (recordSRF) written as its fields, (f(…)).key, (f(…)).value, as
// PostgreSQL's ExpandIndirectionStar expands it (an alias of the item is ignored, as there);
// sel itself when it has none.
func expandRecordStars(sel *pg.SelectStmt) *pg.SelectStmt {
	star := func(t *pg.Node) (*pg.FuncCall, bool) {
		ind := t.GetResTarget().GetVal().GetAIndirection()
		fc := ind.GetArg().GetFuncCall()
		is := ind.GetIndirection()
		return fc, fc != nil && recordSRF(funcName(fc)) && len(is) == 1 && is[0].GetAStar() != nil
	}
	if !slices.ContainsFunc(sel.GetTargetList(), func(t *pg.Node) bool { _, ok := star(t); return ok }) {
		return sel
	}
	sel = proto.Clone(sel).(*pg.SelectStmt)
	var targets []*pg.Node
	for _, t := range sel.GetTargetList() {
		fc, ok := star(t)
		if !ok {
			targets = append(targets, t)
			continue
		}
		for _, field := range []string{"key", "value"} {
			targets = append(targets, &pg.Node{Node: &pg.Node_ResTarget{ResTarget: &pg.ResTarget{
				Val: &pg.Node{Node: &pg.Node_AIndirection{AIndirection: &pg.A_Indirection{
					Arg:         &pg.Node{Node: &pg.Node_FuncCall{FuncCall: proto.Clone(fc).(*pg.FuncCall)}},
					Indirection: []*pg.Node{{Node: &pg.Node_String_{String_: &pg.String{Sval: field}}}},
				}}},
				Location: t.GetResTarget().GetLocation(),
			}}})
		}
	}
	sel.TargetList = targets
	return sel
}

// selectSRFs rewrites the set-returning functions of sel's select list (and the same calls in
// its GROUP BY, ORDER BY and DISTINCT ON, or of its ORDER BY alone) into a LATERAL ROWS FROM
// (…) item after its FROM, each call a column of it (equal calls one column): PostgreSQL 10's
// ProjectSet, whose calls zip to the longest and whose input rows without any row vanish,
// evaluated before grouping, DISTINCT, ORDER BY and LIMIT. Those of a grouped query outside its
// GROUP BY (SELECT generate_series(1, 3), count(*) …) and those beside window functions, which
// PostgreSQL evaluates after the grouping and the windows, are first moved above a derived
// table computing the rest (postponeSRFs); a grouped query's GROUP BY items calling one stay
// below (GROUP BY 1, as in SELECT jsonb_object_keys(value), count(*) … GROUP BY 1), and window
// functions beside those are refused by name, as are calls inside CASE, COALESCE or an
// aggregate. A record-returning function (json[b]_each[_text]) is read through its fields:
// (json_each(v)).key and (json_each(v)).value are the call's two columns (one call for both, as
// PostgreSQL's ProjectSet runs its two equal calls in lockstep), a select-list item
// (json_each(v)).* both (expandRecordStars), and the record as a whole is refused by name
// (errRecordSRF). sel is returned unchanged when it calls none, or its select list calls one
// selectListSRF does not take, which the binder then refuses by name.
func selectSRFs(sel *pg.SelectStmt) (*pg.SelectStmt, error) {
	return selectSRFsAt(sel, 0)
}

// maxPostponements bounds how many times selectSRFsAt may move a select list's set-returning
// functions above a derived table: once leaves no aggregate or window function beside them, so
// a second would be a rewrite that does not converge (an SRF inside an aggregate was one, and
// spun the binder for ever: trial30's H1).
const maxPostponements = 2

// errPostponeLoop refuses a select list whose set-returning functions would be postponed past
// maxPostponements.
var errPostponeLoop = unimplementedAre("set-returning functions placed where they cannot be evaluated after the aggregates and window functions around them")

// srfInAggregate is PostgreSQL's refusal (0A000, check_srf_call_placement and
// check_agg_arguments) of a set-returning function inside an aggregate's arguments or ORDER
// BY, a window function's arguments, or an aggregate's FILTER, in ns (a select list and ORDER
// BY): postponeSRFs would postpone such a call under an aggregation of itself for ever.
func srfInAggregate(ns []*pg.Node) error {
	var err error
	for _, n := range ns {
		anyCall(n, func(fc *pg.FuncCall) bool {
			if err != nil {
				return true
			}
			window := fc.GetOver() != nil && !setReturning[funcName(fc)]
			if !isAggregateCall(fc) && !window {
				return false
			}
			switch {
			case hasSRF(fc.GetAggFilter()):
				err = refused(Unimplemented, "0A000", "set-returning functions are not allowed in FILTER")
			case !slices.ContainsFunc(fc.GetArgs(), hasSRF) && !slices.ContainsFunc(fc.GetAggOrder(), hasSRF):
				return false
			case window:
				err = refused(Unimplemented, "0A000", "window function calls cannot contain set-returning function calls")
			default:
				err = refused(Unimplemented, "0A000", "aggregate function calls cannot contain set-returning function calls")
			}
			return true
		})
	}
	return err
}

// selectSRFsAt is selectSRFs of a select list postponed depth times already.
func selectSRFsAt(sel *pg.SelectStmt, depth int) (*pg.SelectStmt, error) {
	if depth > maxPostponements {
		return nil, errPostponeLoop
	}
	if err := srfInAggregate(append(slices.Clone(sel.GetTargetList()), sel.GetSortClause()...)); err != nil {
		return nil, err
	}
	if !slices.ContainsFunc(sel.GetTargetList(), hasSRF) && !slices.ContainsFunc(sel.GetSortClause(), hasSRF) {
		// ORDER BY alone may call one: PostgreSQL's ProjectSet computes it as a hidden
		// column (below), after the aggregates and windows (postponeSRFs).
		return sel, nil
	}
	overSRF := ""
	var aggSRF error
	for _, n := range append(slices.Clone(sel.GetTargetList()), sel.GetSortClause()...) {
		anyCall(n, func(fc *pg.FuncCall) bool {
			if !setReturning[funcName(fc)] || aggSRF != nil {
				return false
			}
			if fc.GetOver() != nil && overSRF == "" {
				overSRF = funcName(fc)
			}
			// f(*) and f(…) WITHIN GROUP read as aggregates (isAggregateCall): postponeSRFs
			// would postpone such a call below a grouping of itself for ever. PostgreSQL's
			// ParseFuncOrColumn refuses them: f(*) is f() (42883), WITHIN GROUP 42809.
			switch {
			case fc.GetAggStar():
				aggSRF = noSuchFunction(funcName(fc), nil)
			case fc.GetAggWithinGroup():
				aggSRF = refused(InvalidArgument, "42809", "WITHIN GROUP specified, but %s is not an aggregate function", funcName(fc))
			}
			return false
		})
	}
	if aggSRF != nil {
		return nil, aggSRF
	}
	if overSRF != "" {
		// PostgreSQL's ParseFuncOrColumn refuses it (and postponeSRFs would postpone the
		// call, OVER and all, for ever).
		return nil, refused(InvalidArgument, "42809", "OVER specified, but %s is not a window function nor an aggregate function", overSRF)
	}
	sel = expandRecordStars(sel)
	if post, ok, err := postponeSRFs(sel); err != nil || ok {
		if err != nil {
			return nil, err
		}
		return selectSRFsAt(post, depth+1)
	}
	for _, t := range sel.GetTargetList() {
		if anyCall(t, func(fc *pg.FuncCall) bool { return setReturning[funcName(fc)] && !selectListSRF(funcName(fc)) }) {
			return sel, nil // the binder refuses the function by name
		}
	}
	sel = proto.Clone(sel).(*pg.SelectStmt)
	targets := sel.GetTargetList()
	grouped := len(sel.GetGroupClause()) > 0 || hasAggregate(targets) || sel.GetHavingClause() != nil
	for _, t := range targets {
		if anyCall(t, func(fc *pg.FuncCall) bool { return fc.GetOver() != nil }) {
			return nil, unimplementedAre("window functions beside set-returning functions in a select list")
		}
		bad := ""
		deepNodes(t, func(n *pg.Node) bool {
			switch {
			case n.GetSelectStmt() != nil:
				return false
			case (n.GetCaseExpr() != nil || n.GetCoalesceExpr() != nil) && hasSRF(n):
				bad = "set-returning functions inside CASE or COALESCE"
			case n.GetFuncCall() != nil && isAggregateCall(n.GetFuncCall()) && hasSRF(n):
				bad = "set-returning functions inside aggregates"
			}
			return bad == ""
		})
		if bad != "" {
			return nil, unimplementedAre(bad)
		}
	}
	if dc := sel.GetDistinctClause(); len(sel.GetSortClause()) > 0 && (len(dc) > 1 || len(dc) == 1 && dc[0].GetNode() != nil) && !srfKeyed(sel) {
		return nil, errDistinctOnSRF
	}
	var (
		calls []*pg.Node
		bad   error
	)
	// call is the index of fc among calls, added when new: equal calls are one column (or
	// one pair of columns) of the ROWS FROM item.
	call := func(fc *pg.FuncCall) int {
		n := &pg.Node{Node: &pg.Node_FuncCall{FuncCall: fc}}
		k := slices.IndexFunc(calls, func(c *pg.Node) bool { return samePG(c, n) })
		if k < 0 {
			k = len(calls)
			calls = append(calls, n)
		}
		return k
	}
	rewrite := func(root *pg.Node) {
		visit := func(n *pg.Node) bool {
			if bad != nil {
				return false
			}
			if fc, field, rest, ok, err := recordField(n); err != nil || ok {
				bad = err
				if ok {
					// (json_each(…)).key: the call's key column, and any indirection
					// after the field over it.
					n.Node = srfRef(srfField(call(fc), field))
					if len(rest) > 0 {
						n.Node = &pg.Node_AIndirection{AIndirection: &pg.A_Indirection{Arg: &pg.Node{Node: n.Node}, Indirection: rest}}
					}
				}
				return false
			}
			fc := n.GetFuncCall()
			if fc == nil || !setReturning[funcName(fc)] {
				return true
			}
			if recordSRF(funcName(fc)) {
				bad = errRecordSRF(funcName(fc))
				return false
			}
			n.Node = srfRef(srfColumn(call(fc)))
			return false
		}
		if visit(root) {
			walkPG(root.ProtoReflect(), visit)
		}
	}
	for k, t := range targets {
		rt := t.GetResTarget()
		if !hasSRF(rt.GetVal()) {
			continue
		}
		if grouped && !groupedTarget(sel, k) {
			return nil, unimplementedAre("set-returning functions in the select list of a grouped query outside its GROUP BY")
		}
		if rt.GetName() == "" {
			rt.Name = figureColname(rt.GetVal())
		}
		rewrite(rt.Val)
	}
	for _, g := range sel.GetGroupClause() {
		rewrite(g)
	}
	for _, s := range sel.GetSortClause() {
		rewrite(s)
	}
	for _, d := range sel.GetDistinctClause() {
		if d.GetNode() != nil {
			rewrite(d) // DISTINCT ON keys
		}
	}
	if bad != nil {
		return nil, bad
	}
	rf := &pg.RangeFunction{Lateral: true, IsRowsfrom: len(calls) > 1, Alias: &pg.Alias{Aliasname: srfAlias}}
	colname := func(name string) *pg.Node { return &pg.Node{Node: &pg.Node_String_{String_: &pg.String{Sval: name}}} }
	for k, c := range calls {
		rf.Functions = append(rf.Functions, &pg.Node{Node: &pg.Node_List{List: &pg.List{Items: []*pg.Node{c, {Node: &pg.Node_List{List: &pg.List{}}}}}}})
		if recordSRF(funcName(c.GetFuncCall())) {
			rf.Alias.Colnames = append(rf.Alias.Colnames, colname(srfField(k, "key")), colname(srfField(k, "value")))
		} else {
			rf.Alias.Colnames = append(rf.Alias.Colnames, colname(srfColumn(k)))
		}
	}
	sel.FromClause = append(sel.FromClause, &pg.Node{Node: &pg.Node_RangeFunction{RangeFunction: rf}})
	return sel, nil
}

// groupedTarget reports whether sel's GROUP BY groups by its select-list item k: by its
// ordinal, the same expression, or its output name.
func groupedTarget(sel *pg.SelectStmt, k int) bool {
	targets := sel.GetTargetList()
	for _, g := range sel.GetGroupClause() {
		if c := g.GetAConst(); c != nil && c.GetIval() != nil && int(c.GetIval().GetIval()) == k+1 {
			return true
		}
		if samePG(g, targets[k].GetResTarget().GetVal()) {
			return true
		}
		// GROUP BY an output column's name (PostgreSQL's rule: an input column of the
		// name comes first, which the binder applies to the rewritten query).
		if f := g.GetColumnRef().GetFields(); len(f) == 1 && f[0].GetString_().GetSval() == targets[k].GetResTarget().GetName() && targets[k].GetResTarget().GetName() != "" {
			return true
		}
	}
	return false
}

// errDistinctOnSRF refuses SELECT DISTINCT ON … ORDER BY whose set-returning functions in the
// select list are in no ORDER BY or DISTINCT ON key: PostgreSQL's planner then evaluates them
// after the sort and DISTINCT ON (make_sort_input_target postpones them), so DISTINCT ON keeps
// one input row per key and the functions expand it, where selectSRFs' rewrite evaluates them
// first (SELECT DISTINCT ON (a) a, generate_series(1, 3) … ORDER BY a is three rows of each a
// in PostgreSQL).
var errDistinctOnSRF = unimplementedAre("set-returning functions in the select list of SELECT DISTINCT ON … ORDER BY outside its keys")

// srfKeyed reports whether a select-list item of sel that calls a set-returning function is an
// ORDER BY or DISTINCT ON key — by its ordinal, its output name or the same expression, as
// PostgreSQL's findTargetlistEntrySQL92 finds a key's target — which keeps PostgreSQL from
// postponing the functions past the sort (errDistinctOnSRF). A key it does not recognise
// (an expression around the call) answers false: the query is refused rather than answered
// otherwise than PostgreSQL.
func srfKeyed(sel *pg.SelectStmt) bool {
	keys := slices.Clone(sel.GetDistinctClause())
	for _, s := range sel.GetSortClause() {
		keys = append(keys, s.GetSortBy().GetNode())
	}
	for k, t := range sel.GetTargetList() {
		rt := t.GetResTarget()
		if !hasSRF(rt.GetVal()) {
			continue
		}
		name := rt.GetName()
		if name == "" {
			name = figureColname(rt.GetVal())
		}
		for _, key := range keys {
			if c := key.GetAConst(); c != nil && c.GetIval() != nil && int(c.GetIval().GetIval()) == k+1 {
				return true
			}
			if f := key.GetColumnRef().GetFields(); len(f) == 1 && f[0].GetString_().GetSval() == name {
				return true
			}
			if key != nil && samePG(key, rt.GetVal()) {
				return true
			}
		}
	}
	return false
}

// selectListSRF reports whether a select list may call the set-returning function name: the
// JSON ones (json[b]_each[_text] through a field of their record, (json_each(…)).key;
// selectSRFs refuses the record as a whole by name), generate_series and unnest.
func selectListSRF(name string) bool {
	_, ok := jsonSRFs[name]
	return ok || name == "generate_series" || name == "unnest"
}

// samePG reports whether a and b are the same expression, wherever they are written (their
// nodes equal but for their locations in the statement's text).
func samePG(a, b *pg.Node) bool {
	return proto.Equal(withoutLocations(a), withoutLocations(b))
}

// withoutLocations is a copy of n with every location field cleared.
func withoutLocations(n *pg.Node) *pg.Node {
	c := proto.Clone(n).(*pg.Node)
	var clear func(m protoreflect.Message)
	clear = func(m protoreflect.Message) {
		m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			switch {
			case fd.Name() == "location":
				m.Clear(fd)
			case fd.IsList() && fd.Message() != nil:
				for i := range v.List().Len() {
					clear(v.List().Get(i).Message())
				}
			case fd.Message() != nil && !fd.IsMap():
				clear(v.Message())
			}
			return true
		})
	}
	clear(c.ProtoReflect())
	return c
}
