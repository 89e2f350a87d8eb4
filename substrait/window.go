package substrait

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/extensions"
	"github.com/substrait-io/substrait-go/v8/types"
	substraitpb "github.com/substrait-io/substrait-protobuf/go/substraitpb"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/flightsrv/flightsrv/internal/exprs"
)

// Window functions (docs/architecture.md, "The flow of a query"): a call with OVER binds to a
// Substrait WindowFunction expression (functions_arithmetic's row_number, rank, dense_rank,
// percent_rank, cume_dist, ntile, first_value, last_value, nth_value, lead and lag, or one of
// the aggregates count, sum, avg, min, max) carrying its own partition expressions, sort
// fields and frame (bounds type and bounds). A SELECT's window functions are evaluated over
// the relation its select list is evaluated over (the FROM and WHERE, or the aggregate after
// HAVING): each distinct call becomes one expression of a ProjectRel above that relation
// (windowProject), and the select list, ORDER BY keys and DISTINCT reference its columns, as
// PostgreSQL evaluates windows after grouping and before DISTINCT, ORDER BY and LIMIT.
//
// PostgreSQL's rules are kept: the default frame is RANGE BETWEEN UNBOUNDED PRECEDING AND
// CURRENT ROW (the current row's peers included; the whole partition without ORDER BY);
// ranking functions, lag and lead ignore the frame; frame offsets are non-negative integer
// constants; a named window (WINDOW w AS (…)) is referred to as OVER w or refined as
// OVER (w ORDER BY …) under PostgreSQL's copy rules. FILTER (WHERE …) on an aggregate is its
// argument masked to NULL outside the filter (count(*) counts a constant so masked), which is
// exactly the rows the filter keeps. What Substrait's WindowFunction cannot carry or the
// executor does not run is refused by name (UNIMPLEMENTED): RANGE offsets other than
// winrange.go's, DISTINCT or ORDER BY inside a window aggregate, other window functions.
//
// A GROUPS frame and a frame exclusion (EXCLUDE CURRENT ROW | GROUP | TIES), which Substrait's
// WindowFunction has no field for, travel as function options of the call (OptionFrameMode,
// OptionFrameExclusion), as the arithmetic functions' overflow option does.

// The window function options carrying what Substrait's bounds type cannot, each with one
// preference: OptionFrameMode "GROUPS" (the bounds type is RANGE; an offset counts peer groups,
// PostgreSQL's GROUPS mode) and OptionFrameExclusion "CURRENT_ROW", "GROUP" or "TIES"
// (PostgreSQL's frame_exclusion; its absence is EXCLUDE NO OTHERS).
const (
	OptionFrameMode      = "frame_mode"
	OptionFrameExclusion = "frame_exclusion"
)

// WindowFrameOptions reads wf's frame options: whether its frame is in GROUPS mode and its
// exclusion ("" for none, else OptionFrameExclusion's value). A value of these options other
// than theirs is an error; other options are not the frame's.
func WindowFrameOptions(wf *expr.WindowFunction) (groups bool, exclusion string, err error) {
	for _, o := range wf.GetOptions() {
		switch o.Name {
		case OptionFrameMode:
			if !slices.Equal(o.Preference, []string{"GROUPS"}) {
				return false, "", fmt.Errorf("window option %s %v", o.Name, o.Preference)
			}
			groups = true
		case OptionFrameExclusion:
			if len(o.Preference) != 1 || !slices.Contains([]string{"CURRENT_ROW", "GROUP", "TIES"}, o.Preference[0]) {
				return false, "", fmt.Errorf("window option %s %v", o.Name, o.Preference)
			}
			exclusion = o.Preference[0]
		}
	}
	return groups, exclusion, nil
}

// PostgreSQL's frame option bits (nodes/parsenodes.h, FRAMEOPTION_*), as pg_query reports them
// in WindowDef.FrameOptions.
const (
	frameNonDefault      = 0x00001
	frameRange           = 0x00002
	frameRows            = 0x00004
	frameGroups          = 0x00008
	frameStartUnbPrec    = 0x00020
	frameEndUnbPrec      = 0x00040
	frameStartUnbFoll    = 0x00080
	frameEndUnbFoll      = 0x00100
	frameStartCurrent    = 0x00200
	frameEndCurrent      = 0x00400
	frameStartOffPrec    = 0x00800
	frameEndOffPrec      = 0x01000
	frameStartOffFoll    = 0x02000
	frameEndOffFoll      = 0x04000
	frameExcludeCurrent  = 0x08000
	frameExcludeGroup    = 0x10000
	frameExcludeTies     = 0x20000
	frameStartOffsetBits = frameStartOffPrec | frameStartOffFoll
	frameEndOffsetBits   = frameEndOffPrec | frameEndOffFoll
)

// rankingWindowFunctions are the window functions that are not aggregates, with their
// argument counts (lo, hi).
var rankingWindowFunctions = map[string][2]int{
	"row_number": {0, 0}, "rank": {0, 0}, "dense_rank": {0, 0}, "percent_rank": {0, 0}, "cume_dist": {0, 0},
	"ntile": {1, 1}, "lag": {1, 3}, "lead": {1, 3}, "first_value": {1, 1}, "last_value": {1, 1}, "nth_value": {2, 2},
}

// windowWithoutOver reports whether name with n arguments is one of rankingWindowFunctions,
// which PostgreSQL finds and then refuses without an OVER clause (42809).
func windowWithoutOver(name string, n int) bool {
	r, ok := rankingWindowFunctions[name]
	return ok && n >= r[0] && n <= r[1]
}

// winCtx is the window state of the SELECT being bound: its named windows (WINDOW clause).
type winCtx struct {
	named map[string]*pg.WindowDef
}

func newWinCtx(clause []*pg.Node) (*winCtx, error) {
	w := &winCtx{named: map[string]*pg.WindowDef{}}
	for _, n := range clause {
		d := n.GetWindowDef()
		if d == nil {
			return nil, unimplemented("this WINDOW clause item")
		}
		if _, dup := w.named[d.GetName()]; dup {
			return nil, quoting(InvalidArgument, "42P20", "window %q is already defined", d.GetName())
		}
		w.named[d.GetName()] = d
	}
	return w, nil
}

// windowSpec is a resolved window definition: partition and order clauses and frame.
type windowSpec struct {
	partition, order []*pg.Node
	frame            int32
	start, end       *pg.Node
}

// resolve resolves a window definition against the named windows, under PostgreSQL's rules
// for a window referring to another (parse_clause.c's transformWindowDefinitions).
func (w *winCtx) resolve(d *pg.WindowDef, depth int) (windowSpec, error) {
	if depth > len(w.named)+1 {
		return windowSpec{}, errorf(InvalidArgument, "window definitions refer to each other in a cycle")
	}
	if d.GetName() != "" && d.GetRefname() == "" && len(d.GetPartitionClause()) == 0 && len(d.GetOrderClause()) == 0 &&
		d.GetFrameOptions()&frameNonDefault == 0 && depth == 0 {
		// OVER w: the named window as it is (its frame included).
		base, ok := w.named[d.GetName()]
		if !ok {
			return windowSpec{}, quoting(InvalidArgument, "42704", "window %q does not exist", d.GetName())
		}
		return w.resolve(base, depth+1)
	}
	spec := windowSpec{partition: d.GetPartitionClause(), order: d.GetOrderClause(), frame: d.GetFrameOptions(),
		start: d.GetStartOffset(), end: d.GetEndOffset()}
	ref := d.GetRefname()
	if ref == "" {
		return spec, nil
	}
	baseDef, ok := w.named[ref]
	if !ok {
		return windowSpec{}, quoting(InvalidArgument, "42704", "window %q does not exist", ref)
	}
	base, err := w.resolve(baseDef, depth+1)
	if err != nil {
		return windowSpec{}, err
	}
	switch {
	case len(spec.partition) > 0:
		return windowSpec{}, quoting(InvalidArgument, "42P20", "cannot override PARTITION BY clause of window %q", ref)
	case len(spec.order) > 0 && len(base.order) > 0:
		return windowSpec{}, quoting(InvalidArgument, "42P20", "cannot override ORDER BY clause of window %q", ref)
	case base.frame&frameNonDefault != 0:
		return windowSpec{}, quoting(InvalidArgument, "42P20", "cannot copy window %q because it has a frame clause", ref)
	}
	spec.partition = base.partition
	if len(spec.order) == 0 {
		spec.order = base.order
	}
	return spec, nil
}

// containsWindow reports whether n holds a window function call (not looking into subqueries).
func containsWindow(n *pg.Node) bool {
	return anyCall(n, func(fc *pg.FuncCall) bool { return fc.GetOver() != nil })
}

// listHasWindow reports whether a select list or ORDER BY list holds a window function call.
func listHasWindow(list []*pg.Node) bool {
	return slices.ContainsFunc(list, func(n *pg.Node) bool {
		if sb := n.GetSortBy(); sb != nil {
			return containsWindow(sb.GetNode())
		}
		return containsWindow(n)
	})
}

// errWindowHere is PostgreSQL's refusal of a window function where none may be
// (WHERE, GROUP BY, HAVING, a FILTER, a frame offset, a table-less constant list).
func errWindowHere() *Error {
	return &Error{Code: InvalidArgument, SQLState: "42P20", Msg: "window functions are not allowed here"}
}

// windowCall binds a call with OVER over sc (the relation the select list is evaluated over;
// in a grouped SELECT, the aggregate context bd.agg binds aggregate calls and grouping keys in
// its arguments, partitions and order). The WindowFunction is returned inline; windowProject
// moves it into the window ProjectRel.
// windowAggregates are the aggregates that run as window functions (aggregateWindow); the
// other aggregates of aggregateNames are refused by name over a window.
var windowAggregates = map[string]bool{"count": true, "sum": true, "avg": true, "min": true, "max": true,
	"var_samp": true, "var_pop": true, "stddev_samp": true, "stddev_pop": true,
	"bool_and": true, "bool_or": true, "every": true,
	"corr": true, "covar_pop": true, "covar_samp": true, "regr_avgx": true, "regr_avgy": true, "regr_count": true,
	"regr_intercept": true, "regr_r2": true, "regr_slope": true, "regr_sxx": true, "regr_sxy": true, "regr_syy": true,
	"string_agg": true, "array_agg": true}

func (bd *binder) windowCall(fc *pg.FuncCall, sc *scope) (bval, error) {
	if bd.win == nil || bd.inWindow {
		if bd.inWindow {
			return bval{}, &Error{Code: InvalidArgument, SQLState: "42P20", Msg: "window function calls cannot be nested"}
		}
		return bval{}, errWindowHere()
	}
	bd.inWindow = true
	defer func() { bd.inWindow = false }()
	name := funcName(fc)
	_, ranking := rankingWindowFunctions[name]
	variance := slices.Contains(varianceAggregates, cmp.Or(aggregateAliases[name], name))
	var pre *bval // the aggregate's argument, bound once
	if variance && len(fc.GetArgs()) == 1 && !fc.GetAggDistinct() && !fc.GetAggStar() &&
		!(containsAggregate(fc.GetArgs()[0]) && bd.agg == nil) {
		// The variance family of integers and numerics: numericVariance's formula over three
		// window functions of this window (of doubles: aggregateWindow's, below).
		v, err := bd.bindExpr(fc.GetArgs()[0], sc)
		if err != nil {
			return bval{}, err
		}
		pre = &v
		if f := familyOf(v.typ()); !v.untyped() && (f == famInt || f == famNumeric) {
			if v.ds != nil {
				return bval{}, refused(Unimplemented, "0A000", "%s of a numeric whose display scale varies by row (an average, CASE of numerics of different scales) over a window is not supported: cast it to numeric(p,s)", name)
			}
			return bd.numericVariance(cmp.Or(aggregateAliases[name], name), fc, func(n *pg.Node) (bval, error) {
				bd.inWindow = false
				defer func() { bd.inWindow = true }()
				return bd.bindExpr(n, sc)
			})
		}
	}
	if variance {
		name = cmp.Or(aggregateAliases[name], name) // of doubles: aggregateWindow's
	}
	switch {
	case !ranking && !windowAggregates[name]:
		if aggregateNames[name] || unsupportedAggregates[name] {
			return bval{}, refused(Unimplemented, "0A000", "aggregate function %s as a window function is not supported", name)
		}
		return bval{}, quoting(Unimplemented, "0A000", "window function %s is not supported", name)
	case fc.GetAggDistinct():
		return bval{}, &Error{Code: Unimplemented, SQLState: "0A000", Msg: "DISTINCT is not implemented for window functions"}
	case len(fc.GetAggOrder()) > 0 && !fc.GetAggWithinGroup():
		// PostgreSQL's own refusal (transformWindowFuncCall), 0A000.
		return bval{}, &Error{Code: Unimplemented, SQLState: "0A000", Msg: "aggregate ORDER BY is not implemented for window functions"}
	case fc.GetAggWithinGroup():
		return bval{}, unimplementedAre("ordered aggregates as window functions")
	case fc.GetFuncVariadic():
		return bval{}, unimplemented("VARIADIC")
	case ranking && (fc.GetAggStar() || fc.GetAggFilter() != nil):
		if fc.GetAggFilter() != nil {
			return bval{}, errorf(InvalidArgument, "FILTER is not implemented for non-aggregate window functions")
		}
		return bval{}, errorf(InvalidArgument, "%s(*) is not a valid window function", name)
	}
	spec, err := bd.win.resolve(fc.GetOver(), 0)
	if err != nil {
		return bval{}, err
	}
	var ds dscale
	if !ranking && !fc.GetAggStar() && len(fc.GetArgs()) == 1 && !(containsAggregate(fc.GetArgs()[0]) && bd.agg == nil) {
		// Of a numeric whose display scale varies by row (an average, a CASE of numerics of
		// different scales), sum, min and max show each frame's own, which the binder does
		// not follow, and avg's division reads it: as the aggregates (bindfunc.go).
		if pre == nil {
			v, err := bd.bindExpr(fc.GetArgs()[0], sc)
			if err != nil {
				return bval{}, err
			}
			pre = &v
		}
		v := *pre
		if name != "count" && v.ds != nil && !v.untyped() && familyOf(v.typ()) == famNumeric {
			if name == "avg" {
				return bval{}, refused(Unimplemented, "0A000", "avg of a numeric whose display scale varies by row (an average, CASE of numerics of different scales) over a window is not supported: cast it to numeric(p,s)")
			}
			ds = lostScale(name + " of a numeric whose display scale varies by row over a window")
		}
		if name == "avg" && !v.untyped() && familyOf(v.typ()) == famNumeric {
			return bd.numericWindowAvg(fc, sc)
		}
	}
	if (name == "sum" || name == "avg") && pre != nil && isIntervalVal(*pre) {
		return bd.intervalWindow(name == "avg", fc, sc, *pre, spec)
	}
	var wf *expr.WindowFunction
	var value bval // the value argument of first_value, last_value, nth_value, lag and lead
	if ranking {
		wf, ds, err = bd.rankingWindow(name, fc, sc, spec, &value)
	} else {
		wf, err = bd.aggregateWindow(name, fc, sc, pre)
	}
	if err == nil {
		wf, err = bd.placeWindow(wf, spec, sc)
	}
	if err != nil {
		return bval{}, err
	}
	out := typed(wf)
	out.ds = ds
	// A value function answers its argument's values: bytea stays bytea, json json.
	out.bytea, out.json, out.jsonb = value.bytea, value.json, value.jsonb
	if name == "avg" && familyOf(wf.GetType()) == famNumeric {
		out.ds = bd.windowAvgScale(fc, sc)
	}
	return out, nil
}

// placeWindow gives wf the partitions, order and frame of spec, bound over sc.
func (bd *binder) placeWindow(wf *expr.WindowFunction, spec windowSpec, sc *scope) (*expr.WindowFunction, error) {
	for _, p := range spec.partition {
		v, err := bd.bindExpr(p, sc)
		if err != nil {
			return nil, err
		}
		if v.json && !v.domainKey {
			return nil, errJSONEquality
		}
		e, err := bd.defaultType(v)
		if err == nil && v.jsonb && !v.domainKey {
			// jsonb's sort key is equal for equal jsonb values: partitions by value.
			e, err = bd.fn(URNPostgres, "jsonb_sortkey", binType(), e)
		}
		if err != nil {
			return nil, err
		}
		if err := orderable(e, "PARTITION BY"); err != nil {
			return nil, err
		}
		wf.Partitions = append(wf.Partitions, e)
	}
	for _, o := range spec.order {
		sb := o.GetSortBy()
		if sb == nil || sb.GetSortbyDir() == pg.SortByDir_SORTBY_USING {
			return nil, unimplemented("ORDER BY … USING")
		}
		v, err := bd.bindExpr(sb.GetNode(), sc)
		if err != nil {
			return nil, err
		}
		e, err := bd.defaultType(v)
		if err == nil {
			e, err = bd.docSortKey(v, e)
		}
		if err != nil {
			return nil, err
		}
		if err := orderable(e, "ORDER BY"); err != nil {
			return nil, err
		}
		wf.Sorts = append(wf.Sorts, expr.SortField{Expr: e, Kind: sortKind(sb)})
	}
	return bd.frame(wf, spec)
}

// intervalWindow binds sum(x) and avg(x) (avg) OVER (…) of an interval x as the aggregates
// (intervalSum): the months, the days and the time of the frame's values summed apart, each
// the exact numeric sum(bigint) over the window, put back together by make_interval (past a
// field's range 22008 "interval out of range"), and avg that sum divided by the frame's count
// of values (interval_div; NULL over a frame without one). FILTER masks each to NULL, as for
// the other window aggregates.
func (bd *binder) intervalWindow(avg bool, fc *pg.FuncCall, sc *scope, x bval, spec windowSpec) (bval, error) {
	arg, err := bd.intervalValue(x, "argument of sum")
	if err != nil {
		return bval{}, err
	}
	over := func(name, field string, out types.Type) (expr.Expression, error) {
		f, err := bd.fn(URNPostgres, field, out, arg)
		if err != nil {
			return nil, err
		}
		v := typed(f)
		wf, err := bd.aggregateWindow(name, fc, sc, &v)
		if err == nil {
			wf, err = bd.placeWindow(wf, spec, sc)
		}
		return wf, err
	}
	var fields [3]expr.Expression
	for i, field := range []string{"interval_months", "interval_days", "interval_nanos"} {
		if fields[i], err = over("sum", field, i64Type()); err != nil {
			return bval{}, err
		}
	}
	sum, err := bd.fn(URNPostgres, "make_interval", intervalType(), fields[0], fields[1], fields[2])
	if err != nil || !avg {
		return typed(sum), err
	}
	// count(x) over the frame: the values that are not NULL, those of their text.
	cnt, err := over("count", "interval_text", strType())
	if err != nil {
		return bval{}, err
	}
	return bd.intervalOverCount(sum, cnt)
}

// numericWindowAvg binds avg(x) OVER (…) of a numeric x whose values share its type's scale
// as PostgreSQL's numeric_avg computes it over each frame: sum(x) OVER (…) divided by
// count(x) OVER (…) (the same window, FILTER included) with numeric_div, as numericAvg binds
// the aggregate (numericDivide: select_div_scale's display scale per row). A frame without
// values has a NULL sum, so its average is NULL, never a division by zero.
func (bd *binder) numericWindowAvg(fc *pg.FuncCall, sc *scope) (bval, error) {
	vs, err := sumAndCount(fc, func(c *pg.FuncCall) (bval, error) {
		bd.inWindow = false
		defer func() { bd.inWindow = true }()
		return bd.windowCall(c, sc)
	})
	if err != nil {
		return bval{}, err
	}
	return bd.numericBinary("/", vs[0], vs[1])
}

// windowAvgScale is the display scale of avg(x) OVER (…) of integers, the call fc:
// select_div_scale of the frame's exact sum and count (two more window functions over the
// same window and FILTER, bound only when the text is asked for; dscale.go).
func (bd *binder) windowAvgScale(fc *pg.FuncCall, sc *scope) dscale {
	return onceScale(func() (expr.Expression, error) {
		if bd.win == nil {
			return lostScale("avg of integers over a window outside the select list and ORDER BY of its query")()
		}
		return bd.sumCountScale(fc, func(c *pg.FuncCall) (bval, error) { return bd.windowCall(c, sc) })
	})
}

// orderable refuses a partition or order key of a type the executor cannot compare (JSON
// documents are bytea and compare bytewise, as PostgreSQL's bytea does).
func orderable(e expr.Expression, what string) error {
	if isIntervalType(e.GetType()) {
		return unimplemented(what + " of an interval")
	}
	switch familyOf(e.GetType()) {
	case famOther:
		return errorf(InvalidArgument, "could not identify an ordering operator for type %s in %s", typeName(e.GetType()), what)
	}
	return nil
}

// sortKind is an ORDER BY item's direction, with PostgreSQL's default null placement (NULLs
// sort as larger than any value).
func sortKind(sb *pg.SortBy) types.SortDirection {
	desc := sb.GetSortbyDir() == pg.SortByDir_SORTBY_DESC
	nullsFirst := desc
	switch sb.GetSortbyNulls() {
	case pg.SortByNulls_SORTBY_NULLS_FIRST:
		nullsFirst = true
	case pg.SortByNulls_SORTBY_NULLS_LAST:
		nullsFirst = false
	}
	switch {
	case desc && nullsFirst:
		return types.SortDescNullsFirst
	case desc:
		return types.SortDescNullsLast
	case nullsFirst:
		return types.SortAscNullsFirst
	}
	return types.SortAscNullsLast
}

// frame sets wf's bounds type and bounds from PostgreSQL's frame options, and returns it with
// the options of a GROUPS frame or an exclusion (a new WindowFunction then).
func (bd *binder) frame(wf *expr.WindowFunction, spec windowSpec) (*expr.WindowFunction, error) {
	f := spec.frame
	switch {
	case f&frameStartUnbFoll != 0:
		return nil, &Error{Code: InvalidArgument, SQLState: "42P20", Msg: "frame start cannot be UNBOUNDED FOLLOWING"}
	case f&frameEndUnbPrec != 0:
		return nil, &Error{Code: InvalidArgument, SQLState: "42P20", Msg: "frame end cannot be UNBOUNDED PRECEDING"}
	case f&frameStartCurrent != 0 && f&frameEndOffPrec != 0:
		return nil, &Error{Code: InvalidArgument, SQLState: "42P20", Msg: "frame starting from current row cannot have preceding rows"}
	case f&frameStartOffFoll != 0 && f&(frameEndOffPrec|frameEndCurrent) != 0:
		return nil, &Error{Code: InvalidArgument, SQLState: "42P20", Msg: "frame starting from following row cannot have preceding rows"}
	case f&frameGroups != 0 && len(wf.Sorts) == 0:
		// parse_clause.c's transformWindowDefinitions.
		return nil, &Error{Code: InvalidArgument, SQLState: "42P20", Msg: "GROUPS mode requires an ORDER BY clause"}
	}
	if f&frameNonDefault == 0 {
		// RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW: the rows up to the current row's
		// last peer (every row of the partition without ORDER BY).
		wf.BoundsType, wf.LowerBound, wf.UpperBound = types.BoundsTypeRange, expr.Unbounded{}, expr.CurrentRow{}
		return wf, nil
	}
	wf.BoundsType = types.BoundsTypeRows
	if f&(frameRange|frameGroups) != 0 {
		wf.BoundsType = types.BoundsTypeRange
		if f&frameRange != 0 && f&(frameStartOffsetBits|frameEndOffsetBits) != 0 {
			if err := bd.rangeOffsetFrame(wf, spec); err != nil {
				return nil, err
			}
			return bd.frameOptions(wf, f)
		}
	}
	// ROWS and GROUPS offsets: bigint counts of rows or peer groups (coerced to int8 as
	// transformFrameOffset does for both).
	var err error
	if wf.LowerBound, err = bd.bound(f, frameStartUnbPrec, frameStartCurrent, frameStartOffPrec, frameStartOffFoll, spec.start, "starting"); err != nil {
		return nil, err
	}
	if wf.UpperBound, err = bd.bound(f, frameEndUnbFoll, frameEndCurrent, frameEndOffPrec, frameEndOffFoll, spec.end, "ending"); err != nil {
		return nil, err
	}
	return bd.frameOptions(wf, f)
}

// frameOptions returns wf with the options of frame options f's GROUPS mode and exclusion
// (OptionFrameMode, OptionFrameExclusion), or wf itself without either.
func (bd *binder) frameOptions(wf *expr.WindowFunction, f int32) (*expr.WindowFunction, error) {
	var opts []*types.FunctionOption
	if f&frameGroups != 0 {
		opts = append(opts, &types.FunctionOption{Name: OptionFrameMode, Preference: []string{"GROUPS"}})
	}
	switch {
	case f&frameExcludeCurrent != 0:
		opts = append(opts, &types.FunctionOption{Name: OptionFrameExclusion, Preference: []string{"CURRENT_ROW"}})
	case f&frameExcludeGroup != 0:
		opts = append(opts, &types.FunctionOption{Name: OptionFrameExclusion, Preference: []string{"GROUP"}})
	case f&frameExcludeTies != 0:
		opts = append(opts, &types.FunctionOption{Name: OptionFrameExclusion, Preference: []string{"TIES"}})
	}
	if len(opts) == 0 {
		return wf, nil
	}
	v, ok := collection().GetWindowFunc(wf.ID())
	if !ok {
		return nil, fmt.Errorf("bind window function %s: no declaration", wf.Name())
	}
	args := make([]types.FuncArg, wf.NArgs())
	for i := range args {
		args[i] = wf.Arg(i)
	}
	out, err := expr.NewCustomWindowFunc(bd.reg, v, wf.GetType(), opts, wf.Invocation(), wf.Phase(), args...)
	if err != nil {
		return nil, fmt.Errorf("bind window function %s: %w", wf.Name(), err)
	}
	out.Partitions, out.Sorts, out.BoundsType, out.LowerBound, out.UpperBound = wf.Partitions, wf.Sorts, wf.BoundsType, wf.LowerBound, wf.UpperBound
	return out, nil
}

// bound reads one frame bound: unbounded, the current row, or a non-negative integer offset
// (a constant or a parameter, as PostgreSQL allows no column in it).
func (bd *binder) bound(f int32, unb, cur, prec, foll int32, off *pg.Node, which string) (expr.Bound, error) {
	if b, ok, err := fixedBound(f, unb, cur, off); ok || err != nil {
		return b, err
	}
	v, err := bd.bindExpr(off, &scope{})
	if err != nil {
		return nil, err
	}
	e, err := bd.coerce(v, i64Type(), "frame offset")
	if err != nil {
		return nil, err
	}
	if e, err = bd.offsetCasts(e); err != nil {
		return nil, err
	}
	var n int64
	if _, ok := bd.ps.placeholders[e]; ok && bd.ps.vals == nil {
		bd.ps.nullOffset(e, which)
		// Prepare time: the parameter's stand-in (a typed NULL) is any value; its value is
		// checked when bound.
		e = expr.NewPrimitiveLiteral(int64(0), false)
	}
	switch lit := e.(type) {
	case *expr.PrimitiveLiteral[int64]:
		n = lit.Value
	case *expr.NullLiteral:
		return nil, errNullOffset(which)
	default:
		return nil, unimplementedAre("frame offsets other than integer constants")
	}
	if n < 0 {
		return nil, &Error{Code: InvalidArgument, SQLState: "22013", Msg: fmt.Sprintf("frame %s offset must not be negative", which)}
	}
	if f&prec != 0 {
		return expr.PrecedingBound(n), nil
	}
	return expr.FollowingBound(n), nil
}

// offsetCasts folds the integer casts around a frame offset e holding a parameter
// (`?::integer PRECEDING`, foldIntCasts): the parameter's stand-in at prepare time, its value
// (range-checked by the casts: 22003) when bound, a NULL bound the NULL itself.
func (bd *binder) offsetCasts(e expr.Expression) (expr.Expression, error) {
	e, err := bd.foldIntCasts(e)
	if err != nil {
		return nil, err
	}
	if c, ok := e.(*expr.Cast); ok && bd.ps.vals != nil {
		if _, null := c.Input.(*expr.NullLiteral); null {
			return c.Input, nil
		}
	}
	return e, nil
}

// newWindow builds the WindowFunction id(args) returning out, nullable (a frame may be empty,
// an offset past the partition).
func (bd *binder) newWindow(id extensions.ID, out types.Type, args ...types.FuncArg) (*expr.WindowFunction, error) {
	wf, err := expr.NewWindowFunc(bd.reg, id, nil, types.AggInvocationAll, types.AggPhaseInitialToResult, args...)
	if err != nil {
		return nil, fmt.Errorf("bind window function %s: %w", id.Name, err)
	}
	v, ok := collection().GetWindowFunc(wf.ID())
	if !ok {
		return nil, fmt.Errorf("bind window function %s: no declaration", id.Name)
	}
	if out == nil {
		out = wf.GetType()
	}
	return expr.NewCustomWindowFunc(bd.reg, v, out.WithNullability(nullableN), nil, types.AggInvocationAll, types.AggPhaseInitialToResult, args...)
}

// rankingWindow binds a window function that is not an aggregate (functions_arithmetic's
// declarations; output types as PostgreSQL's: bigint ranks, double precision percent_rank and
// cume_dist, integer ntile, the argument's type for the value functions).
//
// value is set to the value argument of first_value, last_value, nth_value, lag and lead
// (whose kind — bytea, json, jsonb — the result keeps).
func (bd *binder) rankingWindow(name string, fc *pg.FuncCall, sc *scope, spec windowSpec, value *bval) (*expr.WindowFunction, dscale, error) {
	raw := fc.GetArgs()
	if n := rankingWindowFunctions[name]; len(raw) < n[0] || len(raw) > n[1] {
		return nil, nil, errorf(InvalidArgument, "function %s with %d arguments does not exist", name, len(raw))
	}
	for _, a := range raw {
		if containsAggregate(a) && bd.agg == nil {
			return nil, nil, errorf(InvalidArgument, "aggregate functions are not allowed here")
		}
	}
	args := make([]bval, len(raw))
	for i, a := range raw {
		v, err := bd.bindExpr(a, sc)
		if err != nil {
			return nil, nil, err
		}
		args[i] = v
		if isIntervalVal(v) {
			return nil, nil, refused(Unimplemented, "0A000", "the window function %s of intervals is not supported", name)
		}
		if v.bpchar > 0 {
			return nil, nil, errBpcharWindow(name)
		}
	}
	for i, v := range args {
		if (name == "ntile" || i == 1) && !v.untyped() && (familyOf(v.typ()) != famInt || numRank(v.typ()) > numRank(i32Type())) {
			// An integer argument (ntile's count, the offset of lag, lead and nth_value):
			// bigint, numeric and the others have no implicit cast to integer.
			return nil, nil, noSuchFunction(name, args)
		}
	}
	switch name {
	case "first_value", "last_value", "nth_value", "lag", "lead":
		*value = args[0]
	}
	// The value functions of a numeric answer one of its values, whose display scale is the
	// argument's: the type's, or, when it varies by row, the same window function over the
	// values' scales (valueScale, below).
	var ds dscale
	id := extensions.ID{URN: URNArithmetic, Name: name}
	switch name {
	case "ntile":
		n, err := bd.coerce(args[0], i32Type(), "ntile")
		if err != nil {
			return nil, nil, err
		}
		id.Name = "ntile:i32"
		wf, err := bd.newWindow(id, i32Type(), n)
		return wf, ds, err
	case "first_value", "last_value", "nth_value":
		v, err := bd.defaultType(args[0])
		if err != nil {
			return nil, nil, err
		}
		fargs := []types.FuncArg{v}
		if name == "nth_value" {
			n, err := bd.coerce(args[1], i32Type(), "nth_value")
			if err != nil {
				return nil, nil, err
			}
			fargs = append(fargs, n)
		}
		wf, err := bd.newWindow(id, v.GetType(), fargs...)
		if err == nil && !args[0].untyped() && familyOf(args[0].typ()) == famNumeric && args[0].ds != nil {
			ds = bd.valueScale(name, id, args, fargs, spec, sc)
		}
		return wf, ds, err
	case "lag", "lead":
		var vals []expr.Expression
		if len(args) == 3 {
			// The value and the default take their common type (lag(anycompatible, integer,
			// anycompatible)).
			common, err := bd.commonType([]bval{args[0], args[2]}, name)
			if err != nil {
				return nil, nil, err
			}
			vals = []expr.Expression{common[0], nil, common[1]}
		} else {
			v, err := bd.defaultType(args[0])
			if err != nil {
				return nil, nil, err
			}
			vals = []expr.Expression{v}
		}
		fargs := []types.FuncArg{vals[0]}
		if len(args) >= 2 {
			off, err := bd.coerce(args[1], i32Type(), name)
			if err != nil {
				return nil, nil, err
			}
			fargs = append(fargs, off)
		}
		if len(args) == 3 {
			fargs = append(fargs, vals[2])
		}
		id.Name += [...]string{":any", ":any_i32", ":any_i32_any"}[len(fargs)-1]
		wf, err := bd.newWindow(id, vals[0].GetType(), fargs...)
		if err == nil && familyOf(vals[0].GetType()) == famNumeric && (args[0].ds != nil || len(args) == 3 && varyingScales([]bval{args[0], args[2]})) {
			ds = bd.valueScale(name, id, args, fargs, spec, sc)
		}
		return wf, ds, err
	}
	wf, err := bd.newWindow(id, nil)
	return wf, nil, err
}

// valueScale is the display scale of a value window function (name: first_value,
// last_value, nth_value, lag or lead; id, bound with fargs from args) of a numeric whose
// display scale varies by row (its value's, or lag's and lead's value and default of
// different scales: lag(x, 1, 1.5) of integers shows 1.5, 1, 2, as PostgreSQL): the same
// window function, over the same window and frame, of the value's (and default's) scale.
func (bd *binder) valueScale(name string, id extensions.ID, args []bval, fargs []types.FuncArg, spec windowSpec, sc *scope) dscale {
	return onceScale(func() (expr.Expression, error) {
		if bd.win == nil {
			return lostScale(name + " of numerics of different display scales outside the select list and ORDER BY of its query")()
		}
		sargs := slices.Clone(fargs)
		for j := 0; j < len(args); j += 2 { // the value, and lag's and lead's default
			e, err := bd.scaleExpr(args[j])
			if err != nil {
				return nil, err
			}
			sargs[j] = e
		}
		wf, err := bd.newWindow(id, i32Type(), sargs...)
		if err != nil {
			return nil, err
		}
		return bd.placeWindow(wf, spec, sc)
	})
}

// aggregateWindow binds count, sum, avg, min or max OVER (…), typed as the aggregates of a
// grouped SELECT are (measure): count bigint, sum of integers bigint and of floats double
// precision, avg double precision, min and max the argument's type.
//
// pre is the argument bound already (windowCall's), nil to bind it here.
func (bd *binder) aggregateWindow(name string, fc *pg.FuncCall, sc *scope, pre *bval) (*expr.WindowFunction, error) {
	raw := fc.GetArgs()
	star := fc.GetAggStar()
	if star && name != "count" {
		return nil, errorf(InvalidArgument, "function %s() does not exist", name)
	}
	regr := slices.Contains(regressionAggregates, name)
	if !star && len(raw) != 1 && !regr && name != "string_agg" {
		return nil, errorf(InvalidArgument, "function %s with %d arguments does not exist", name, len(raw))
	}
	var filter expr.Expression
	if f := fc.GetAggFilter(); f != nil {
		if containsAggregate(f) || containsWindow(f) {
			return nil, errorf(InvalidArgument, "aggregate functions are not allowed in FILTER")
		}
		v, err := bd.bindExpr(f, sc)
		if err != nil {
			return nil, err
		}
		if filter, err = bd.coerce(v, booleanType(), "FILTER"); err != nil {
			return nil, err
		}
	}
	if regr {
		return bd.regrWindow(name, raw, filter, sc)
	}
	if name == "string_agg" || name == "array_agg" {
		return bd.collectWindow(name, fc, filter, sc, pre)
	}
	var arg expr.Expression
	if star {
		if filter == nil {
			return bd.newWindow(extensions.ID{URN: URNAggregate, Name: "count"}, i64Type())
		}
		arg = expr.NewPrimitiveLiteral(true, false)
	} else {
		if containsAggregate(raw[0]) && bd.agg == nil {
			return nil, errorf(InvalidArgument, "aggregate functions are not allowed here")
		}
		var v bval
		if pre != nil {
			v = *pre
		} else {
			var err error
			if v, err = bd.bindExpr(raw[0], sc); err != nil {
				return nil, err
			}
		}
		if v.bpchar > 0 && (name == "min" || name == "max") {
			return nil, errBpcharWindow(name)
		}
		var err error
		if v.untyped() && (name == "bool_and" || name == "bool_or" || name == "every") {
			// A quoted literal reads as the one argument type there is ('t').
			arg, err = bd.coerce(v, booleanType(), "argument of "+name)
		} else {
			arg, err = bd.defaultType(v)
		}
		if err != nil {
			return nil, err
		}
		if isIntervalType(arg.GetType()) {
			return nil, refused(Unimplemented, "0A000", "the window function %s of intervals is not supported", name)
		}
	}
	if filter != nil {
		// Masked to NULL where the filter is not true: the rows an aggregate skips.
		masked, err := bd.ifThen([]expr.IfThenPair{{If: filter, Then: nullable(arg)}}, expr.NewNullLiteral(arg.GetType().WithNullability(nullableN)))
		if err != nil {
			return nil, err
		}
		arg = masked
	}
	at := arg.GetType()
	fam := familyOf(at)
	id := extensions.ID{Name: name}
	var out types.Type
	if fam == famNumeric && name != "count" {
		// functions_arithmetic_decimal's sum, min and max: decimal<38, s> of the argument's
		// scale s, the exact total (ops.Window's decimal sums; past 38 digits 22003) or the
		// extreme value. avg is windowCall's quotient of a sum and a count.
		if name == "avg" {
			return nil, fmt.Errorf("bind window function avg: a numeric average is a quotient (windowCall)")
		}
		scale, _ := numScale(at)
		return bd.newWindow(extensions.ID{URN: extensions.SubstraitDefaultURNPrefix + "functions_arithmetic_decimal", Name: name}, numType(scale), arg)
	}
	switch name {
	case "count":
		id.URN, id.Name = URNAggregate, "count:any"
		out = i64Type()
	case "var_samp", "var_pop", "stddev_samp", "stddev_pop":
		// PostgreSQL's float8 overloads (real and double precision; integers and numerics are
		// windowCall's numericVariance), computed as the aggregate (ops.Float8State).
		if fam != famFloat {
			// In the words the query used (stddev, not stddev_samp), as PostgreSQL's.
			return nil, errorf(InvalidArgument, "function %s(%s) does not exist", funcName(fc), typeName(at))
		}
		if !sameType(at, fp64Type()) {
			var err error
			if arg, err = bd.coerce(typed(arg), fp64Type().WithNullability(at.GetNullability()), ""); err != nil {
				return nil, err
			}
		}
		id.URN, out = URNPostgres, fp64Type()
	case "sum", "avg":
		if fam != famInt && fam != famFloat {
			return nil, errorf(InvalidArgument, "function %s(%s) does not exist", name, typeName(at))
		}
		id.URN = URNArithmetic
		if name == "sum" && isReal(at) {
			// sum(real) is real: float4pl over the frame's values (ops.Window's floatSums).
			return bd.newWindow(id, fp32Type(), arg)
		}
		target := i64Type()
		if name == "avg" && fam == famInt {
			// avg of integers is numeric, as the aggregate (bindfunc.go's avgScale).
			if !sameType(at, target) {
				var err error
				if arg, err = bd.coerce(typed(arg), target.WithNullability(at.GetNullability()), ""); err != nil {
					return nil, err
				}
			}
			id.URN = URNPostgres
			return bd.newWindow(id, numType(avgScale), arg)
		}
		if name == "avg" || fam == famFloat {
			target = fp64Type()
		}
		if name == "sum" && fam == famInt && numRank(at) >= numRank(i64Type()) {
			// sum(bigint) is numeric in PostgreSQL: the exact total, never an overflow.
			id.URN = URNPostgres
			return bd.newWindow(id, numType(0), arg)
		}
		if !sameType(at, target) {
			var err error
			if arg, err = bd.coerce(typed(arg), target.WithNullability(at.GetNullability()), ""); err != nil {
				return nil, err
			}
		}
		out = target
	case "min", "max":
		var ok bool
		if id.URN, ok = minMaxURN(fam); !ok || fam == famBool || fam == famBinary {
			return nil, errorf(InvalidArgument, "function %s(%s) does not exist", name, typeName(at))
		}
		out = at
	case "bool_and", "every", "bool_or":
		// PostgreSQL's booland_statefunc and boolor_statefunc over the frame: true if every
		// (some) non-NULL value is true, NULL over a frame without one — the least (greatest)
		// of the frame's booleans, false before true, as min (max) of booleans computes it.
		if fam != famBool {
			return nil, errorf(InvalidArgument, "function %s(%s) does not exist", funcName(fc), typeName(at))
		}
		id = extensions.ID{URN: URNPostgres, Name: "min"}
		if name == "bool_or" {
			id.Name = "max"
		}
		out = booleanType()
	}
	return bd.newWindow(id, out, arg)
}

// windowProject moves the window functions of es (expressions over base) into a ProjectRel
// above base, one column per distinct call, and returns it with es rewritten to reference
// those columns. Without window functions it returns base and es unchanged.
func (bd *binder) windowProject(base *boundRel, es []expr.Expression) (*boundRel, []expr.Expression, error) {
	var wfs []expr.Expression
	for _, e := range es {
		collectWindows(e, &wfs)
	}
	if len(wfs) == 0 {
		return base, es, nil
	}
	p, err := bd.b.Project(base.rel, wfs...)
	if err != nil {
		return nil, nil, fmt.Errorf("bind window: %w", err)
	}
	sc := &scope{cols: slices.Clone(base.sc.cols)}
	width := len(base.sc.cols)
	for _, wf := range wfs {
		sc.cols = append(sc.cols, col{typ: wf.GetType()})
	}
	out := make([]expr.Expression, len(es))
	for i, e := range es {
		out[i] = ReplaceWindows(e, func(wf *expr.WindowFunction) expr.Expression {
			j := slices.IndexFunc(wfs, func(o expr.Expression) bool { return SameWindow(wf, o) })
			return sc.ref(width + j)
		})
	}
	return &boundRel{rel: p, sc: sc, names: base.names}, out, nil
}

// SameWindow reports whether window function a and expression b are the same call over the
// same window and frame (exprs.SameWindow: never substrait-go's Equals, which compares the
// first call's arguments only and not the bounds type).
func SameWindow(a *expr.WindowFunction, b expr.Expression) bool {
	w, ok := b.(*expr.WindowFunction)
	return ok && exprs.SameWindow(a, w)
}

// collectWindows appends the distinct window functions of e to wfs.
func collectWindows(e expr.Expression, wfs *[]expr.Expression) {
	ReplaceWindows(e, func(wf *expr.WindowFunction) expr.Expression {
		if !slices.ContainsFunc(*wfs, func(o expr.Expression) bool { return SameWindow(wf, o) }) {
			*wfs = append(*wfs, wf)
		}
		return wf
	})
}

// replaceWindows returns e with each window function replaced by with(it) (window functions
// are not looked into).
func ReplaceWindows(e expr.Expression, with func(*expr.WindowFunction) expr.Expression) expr.Expression {
	var visit expr.VisitFunc
	visit = func(x expr.Expression) expr.Expression {
		if wf, ok := x.(*expr.WindowFunction); ok {
			return with(wf)
		}
		return x.Visit(visit)
	}
	return visit(e)
}

// HasWindow reports whether e holds a window function (a ProjectRel expression the executor
// evaluates as a window over its whole input).
func HasWindow(e expr.Expression) bool {
	found := false
	ReplaceWindows(e, func(wf *expr.WindowFunction) expr.Expression {
		found = true
		return wf
	})
	return found
}

// windowPartitionColumns returns the input columns of a ProjectRel over which a filter may
// pass below its window functions: the plain partition keys of every window function of exprs
// (a filter on such a column removes whole partitions and leaves the others' windows
// unchanged). windowed is false when exprs hold no window function.
func windowPartitionColumns(exprs []expr.Expression) (cols map[int]bool, windowed bool) {
	var wfs []expr.Expression
	for _, e := range exprs {
		collectWindows(e, &wfs)
	}
	if len(wfs) == 0 {
		return nil, false
	}
	for i, w := range wfs {
		keys := map[int]bool{}
		for _, p := range w.(*expr.WindowFunction).Partitions {
			if fr, ok := p.(*expr.FieldReference); ok {
				if c, ok := rootFieldIndex(fr); ok {
					keys[c] = true
				}
			}
		}
		if i == 0 {
			cols = keys
			continue
		}
		for c := range cols {
			if !keys[c] {
				delete(cols, c)
			}
		}
	}
	return cols, true
}

// anyCall reports whether a function call of n (an expression; not looking into subqueries)
// satisfies match: calls' arguments, FILTERs and OVER clauses (partition and order keys) are
// walked, and the value an indirection selects from or subscripts ((json_each(…)).key).
func anyCall(n *pg.Node, match func(*pg.FuncCall) bool) bool {
	found := false
	var walk func(n *pg.Node)
	walkAll := func(ns []*pg.Node) {
		for _, a := range ns {
			walk(a)
		}
	}
	walk = func(n *pg.Node) {
		if n == nil || found {
			return
		}
		switch v := n.GetNode().(type) {
		case *pg.Node_FuncCall:
			if match(v.FuncCall) {
				found = true
				return
			}
			walkAll(v.FuncCall.GetArgs())
			walk(v.FuncCall.GetAggFilter())
			if w := v.FuncCall.GetOver(); w != nil {
				walkAll(w.GetPartitionClause())
				walkAll(w.GetOrderClause())
			}
		case *pg.Node_SortBy:
			walk(v.SortBy.GetNode())
		case *pg.Node_ResTarget:
			walk(v.ResTarget.GetVal())
		case *pg.Node_AExpr:
			walk(v.AExpr.GetLexpr())
			walk(v.AExpr.GetRexpr())
		case *pg.Node_BoolExpr:
			walkAll(v.BoolExpr.GetArgs())
		case *pg.Node_TypeCast:
			walk(v.TypeCast.GetArg())
		case *pg.Node_NullTest:
			walk(v.NullTest.GetArg())
		case *pg.Node_BooleanTest:
			walk(v.BooleanTest.GetArg())
		case *pg.Node_CaseExpr:
			walk(v.CaseExpr.GetArg())
			for _, w := range v.CaseExpr.GetArgs() {
				walk(w.GetCaseWhen().GetExpr())
				walk(w.GetCaseWhen().GetResult())
			}
			walk(v.CaseExpr.GetDefresult())
		case *pg.Node_CoalesceExpr:
			walkAll(v.CoalesceExpr.GetArgs())
		case *pg.Node_MinMaxExpr:
			walkAll(v.MinMaxExpr.GetArgs())
		case *pg.Node_List:
			walkAll(v.List.GetItems())
		case *pg.Node_AIndirection:
			// (json_each(…)).key, (regexp_match(…))[1]
			walk(v.AIndirection.GetArg())
		}
	}
	walk(n)
	return found
}

// formatWindow prints a window function for EXPLAIN: its arguments, partition and order keys
// with input column names (literals as <value>) and its frame.
func formatWindow(w *expr.WindowFunction, names []string) string {
	list := func(es []expr.Expression) string {
		out := make([]string, len(es))
		for i, e := range es {
			out[i] = formatExpr(e, names)
		}
		return strings.Join(out, ", ")
	}
	args := make([]expr.Expression, 0, w.NArgs())
	for i := range w.NArgs() {
		if a, ok := w.Arg(i).(expr.Expression); ok {
			args = append(args, a)
		}
	}
	var over []string
	if len(w.Partitions) > 0 {
		over = append(over, "PARTITION BY "+list(w.Partitions))
	}
	if len(w.Sorts) > 0 {
		keys := make([]string, len(w.Sorts))
		for i, s := range w.Sorts {
			keys[i] = formatExpr(s.Expr, names) + " " + map[any]string{
				types.SortAscNullsLast: "ASC", types.SortAscNullsFirst: "ASC NULLS FIRST",
				types.SortDescNullsFirst: "DESC", types.SortDescNullsLast: "DESC NULLS LAST",
			}[s.Kind]
		}
		over = append(over, "ORDER BY "+strings.Join(keys, ", "))
	}
	bound := func(b expr.Bound, def string) string {
		switch b.(type) {
		case nil:
			return def
		case expr.PrecedingBound:
			return "<value> PRECEDING"
		case expr.FollowingBound:
			return "<value> FOLLOWING"
		case expr.CurrentRow:
			return "CURRENT ROW"
		}
		return "UNBOUNDED " + strings.Fields(def)[1]
	}
	kind := "ROWS"
	if w.BoundsType == types.BoundsTypeRange {
		kind = "RANGE"
	}
	groups, exclusion, _ := WindowFrameOptions(w)
	if groups {
		kind = "GROUPS"
	}
	frame := kind + " BETWEEN " + bound(w.LowerBound, "UNBOUNDED PRECEDING") + " AND " + bound(w.UpperBound, "UNBOUNDED FOLLOWING")
	if exclusion != "" {
		frame += " EXCLUDE " + strings.ReplaceAll(exclusion, "_", " ")
	}
	over = append(over, frame)
	return w.Name() + "(" + list(args) + ") OVER (" + strings.Join(over, " ") + ")"
}

// fillWindowTypes gives each window function of a client's ProjectRel expressions (pes, the
// protobuf; es, decoded) whose output type the plan left out (DataFusion writes none) its type
// as the binder types it: bigint ranks, row numbers and counts, double precision percent_rank,
// cume_dist and avg, sum bigint or double precision, ntile its argument's type, the others
// their first argument's; nullable. It reports whether it typed any.
func fillWindowTypes(pes []*substraitpb.Expression, es []expr.Expression) bool {
	changed := false
	for i, e := range es {
		wf, ok := e.(*expr.WindowFunction)
		if !ok || i >= len(pes) || !WindowDeclared(wf) {
			continue
		}
		pw := pes[i].GetWindowFunction()
		if pw == nil || !isPlaceholder(pw.GetOutputType()) {
			continue
		}
		args := wf.GetArgTypes()
		var t types.Type
		switch wf.Name() {
		case "row_number", "rank", "dense_rank", "count":
			t = i64Type()
		case "ntile":
			// integer, as PostgreSQL's ntile and the executor's (DataFusion's is unsigned
			// bigint, of the same values).
			t = i32Type()
		case "percent_rank", "cume_dist", "avg":
			t = fp64Type()
		case "sum":
			t = i64Type()
			if len(args) == 1 && familyOf(args[0]) == famFloat {
				t = fp64Type()
			}
			if len(args) == 1 {
				if d, ok := args[0].(*types.DecimalType); ok {
					// decimal<38,S>, as the aggregate's (plans.go aggregateOutputType).
					t = &types.DecimalType{Precision: 38, Scale: d.Scale}
				}
			}
		default:
			if len(args) > 0 && args[0] != nil && !isPlaceholder(types.TypeToProto(args[0])) {
				t = args[0]
			}
		}
		if t != nil {
			pw.OutputType = types.TypeToProto(t.WithNullability(nullableN))
			changed = true
		}
	}
	return changed
}

// WindowDeclared reports whether wf decoded with its declaration of the plan's extensions
// (substrait-go leaves it nil otherwise, and its Name panics).
func WindowDeclared(wf *expr.WindowFunction) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	_ = wf.Name()
	return true
}

// rewriteWindowRels rewrites, in m (any message of a client's plan), each
// ConsistentPartitionWindowRel into the ProjectRel it stands for (substrait-go v8.1.1 decodes
// no such relation): its input, then one WindowFunction expression per window relation
// function carrying the relation's partition expressions and sorts and the function's own
// bounds, with the relation's emit mapping. Both output the input's columns followed by the
// functions' values.
func rewriteWindowRels(m protoreflect.Message) {
	if r, ok := m.Interface().(*substraitpb.Rel); ok {
		if w := r.GetWindow(); w != nil {
			p := &substraitpb.ProjectRel{Common: w.GetCommon(), Input: w.GetInput(), AdvancedExtension: w.GetAdvancedExtension()}
			for _, f := range w.GetWindowFunctions() {
				wf := &substraitpb.Expression_WindowFunction{
					FunctionReference: f.GetFunctionReference(), Arguments: f.GetArguments(), Options: f.GetOptions(),
					OutputType: f.GetOutputType(), Phase: f.GetPhase(), Invocation: f.GetInvocation(),
					LowerBound: f.GetLowerBound(), UpperBound: f.GetUpperBound(), BoundsType: f.GetBoundsType(),
				}
				for _, e := range w.GetPartitionExpressions() {
					wf.Partitions = append(wf.Partitions, proto.Clone(e).(*substraitpb.Expression))
				}
				for _, s := range w.GetSorts() {
					wf.Sorts = append(wf.Sorts, proto.Clone(s).(*substraitpb.SortField))
				}
				p.Expressions = append(p.Expressions, &substraitpb.Expression{RexType: &substraitpb.Expression_WindowFunction_{WindowFunction: wf}})
			}
			r.RelType = &substraitpb.Rel_Project{Project: p}
		}
	}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsMap():
		case fd.IsList() && fd.Kind() == protoreflect.MessageKind:
			for i := range v.List().Len() {
				rewriteWindowRels(v.List().Get(i).Message())
			}
		case fd.Kind() == protoreflect.MessageKind:
			rewriteWindowRels(v.Message())
		}
		return true
	})
}

// minMaxURN is the extension declaring min and max of a family: functions_arithmetic for
// numbers, functions_datetime for timestamps and dates, URNPostgres for text, bytea, booleans
// and times of day; false for
// others. PostgreSQL has no min or max of boolean, bytea or json (42883): a call written in a
// query is refused for those families before; the binder's own uses (oneRowPerKey) take any.
func minMaxURN(fam family) (string, bool) {
	switch fam {
	case famInt, famFloat:
		return URNArithmetic, true
	case famTimestamp, famDate:
		return URNDatetime, true
	case famString, famBinary, famBool, famTime:
		return URNPostgres, true
	}
	return "", false
}

// regrWindow binds corr, covar_pop, covar_samp or a regr_ aggregate (name) over a window:
// its arguments (Y, X) as the aggregate's (regrArgs), Y masked to NULL where filter (nil:
// none) is not true, so that the pair is left out as the aggregate leaves out the rows FILTER
// rejects; scan/ops evaluates float8_regr_accum over each frame. regr_count is bigint (0 over
// a frame without a pair), the others double precision.
func (bd *binder) regrWindow(name string, raw []*pg.Node, filter expr.Expression, sc *scope) (*expr.WindowFunction, error) {
	if bd.agg == nil && slices.ContainsFunc(raw, containsAggregate) {
		return nil, errorf(InvalidArgument, "aggregate functions are not allowed here")
	}
	vals, err := bd.regrArgs(name, raw, sc)
	if err != nil {
		return nil, err
	}
	if filter != nil {
		if vals[0], err = bd.ifThen([]expr.IfThenPair{{If: filter, Then: nullable(vals[0])}}, expr.NewNullLiteral(vals[0].GetType().WithNullability(nullableN))); err != nil {
			return nil, err
		}
	}
	out := fp64Type()
	if name == "regr_count" {
		out = i64Type()
	}
	return bd.newWindow(extensions.ID{URN: URNPostgres, Name: name}, out, vals[0], vals[1])
}

// collectWindow binds string_agg(x, delimiter) and array_agg(x) over a window, as the
// aggregates take their arguments (stringAggValue, arrayAggElem): string_agg of text with a
// text delimiter read on every row (PostgreSQL's string_agg_transfn appends each value's own
// row's delimiter before it, the first one's cut off), x masked to NULL where filter (nil:
// none) is not true, as string_agg skips NULL values; array_agg of text, integers, bigints,
// doubles and booleans, a list of x's type with NULL elements kept, its FILTER passed
// beside x (the rows it rejects are left out, not made NULLs). scan/ops builds each row's
// answer from its frame (ops.StringAgg, ops.ArrayAgg) within the query's memory limit.
// pre is x already bound by windowCall (nil: bind it here).
func (bd *binder) collectWindow(name string, fc *pg.FuncCall, filter expr.Expression, sc *scope, pre *bval) (*expr.WindowFunction, error) {
	raw := fc.GetArgs()
	want := map[string]int{"string_agg": 2, "array_agg": 1}[name]
	if len(raw) != want {
		return nil, errorf(InvalidArgument, "function %s with %d arguments does not exist", name, len(raw))
	}
	if bd.agg == nil && slices.ContainsFunc(raw, containsAggregate) {
		return nil, errorf(InvalidArgument, "aggregate functions are not allowed here")
	}
	var xv bval
	if pre != nil {
		xv = *pre
	} else {
		var err error
		if xv, err = bd.bindExpr(raw[0], sc); err != nil {
			return nil, err
		}
	}
	id := extensions.ID{URN: URNPostgres, Name: name}
	if name == "array_agg" {
		x, err := bd.arrayAggElem(xv)
		if err != nil {
			return nil, err
		}
		out := &types.ListType{Type: x.GetType().WithNullability(nullableN), Nullability: nullableN}
		if filter != nil {
			// The rows FILTER rejects are left out, not made NULL elements: the filter is the
			// window function's second argument (ops.ArrayAgg).
			return bd.newWindow(id, out, x, filter)
		}
		return bd.newWindow(id, out, x)
	}
	dv, err := bd.bindExpr(raw[1], sc)
	if err != nil {
		return nil, err
	}
	x, err := bd.stringAggValue(xv, typeNameOf(dv))
	if err != nil {
		return nil, err
	}
	if !dv.untyped() && familyOf(dv.typ()) != famString {
		return nil, errorf(InvalidArgument, "function string_agg(%s, %s) does not exist", typeNameOf(xv), typeNameOf(dv))
	}
	delim, err := bd.coerce(dv, strType(), "argument 2 of string_agg")
	if err != nil {
		return nil, err
	}
	if filter != nil {
		if x, err = bd.ifThen([]expr.IfThenPair{{If: filter, Then: nullable(x)}}, expr.NewNullLiteral(strType())); err != nil {
			return nil, err
		}
	}
	return bd.newWindow(id, strType(), x, delim)
}
