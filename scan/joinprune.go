package scan

import (
	"fmt"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/extensions"
	"github.com/substrait-io/substrait-go/v8/plan"
	"github.com/substrait-io/substrait-go/v8/types"

	"github.com/flightsrv/flightsrv/scan/ops"
	"github.com/flightsrv/flightsrv/substrait"
)

// Column pruning and expression pushdown across joins (issue 19; docs/architecture.md, "Joins
// run at the coordinator"). Lowering is bottom-up, so before it a walk down the plan
// (needWalk) records, for every JoinRel and HashJoinRel, which of its output columns the
// relations above it read, and which FilterRels sit directly over an inner JoinRel (their
// conjuncts are the join's residual: for an inner join a filter above it and a residual in it
// keep the same pairs). Lowering a join then, for each input that is still a routed per-row
// plan:
//
//   - appends to the input's columns the key expressions that are not plain columns, and the
//     largest pieces of the residual over that input's columns alone that PostgreSQL evaluates
//     on every row of that input too, or that cannot fail (pushable, mayFail: the JSON field of
//     `(f.value->>'delay')::int > o.a`, a semi join's `value->>'destination'`), so that the
//     bucket fragments compute them, where the shredded cache (shredded.go) can serve them; the
//     join reads the new columns instead;
//   - replaces every column that neither the plan above, the keys nor the residual read by a
//     typed NULL, so the fragments do not read its base column (the probe side of a join
//     against an aggregate no longer reads `value` for a count).
//
// The join's output keeps its columns and positions (the pushed columns are dropped after it),
// so nothing above it changes; the columns nothing above reads it leaves NULL
// (ops.JoinSpec.Unused). A residual piece computed below the join is evaluated for every row
// of its input, not only for the rows with a matching key: it is pushed only where PostgreSQL
// evaluates it on every row as well (a failing cast fails both queries alike), or where it
// cannot fail.

// colSet is a set of column positions; all means every column.
type colSet struct {
	all  bool
	cols map[int]bool
}

func (s colSet) has(i int) bool { return s.all || s.cols[i] }

func (s colSet) clone() colSet {
	c := colSet{all: s.all}
	for i := range s.cols {
		c.add(i)
	}
	return c
}

func (s *colSet) add(i int) {
	if s.cols == nil {
		s.cols = map[int]bool{}
	}
	s.cols[i] = true
}

// addRefs adds the root fields e references; a reference of another shape (an outer or
// nested one) makes the set all.
func (s *colSet) addRefs(e expr.Expression) {
	if e == nil || s.all {
		return
	}
	var visit expr.VisitFunc
	visit = func(x expr.Expression) expr.Expression {
		if fr, ok := x.(*expr.FieldReference); ok {
			if i, ok := rootIndex(fr); ok {
				s.add(i)
			} else {
				s.all = true
			}
			return x
		}
		return x.Visit(visit)
	}
	visit(e)
}

// needWalk is the walk down a plan before lowering.
type needWalk struct {
	// joins holds, per join relation, the columns of its output (before its emit mapping)
	// that the plan above reads.
	joins map[plan.Rel]colSet
	// folded are the inner JoinRels whose parent FilterRel's conjuncts join their residual.
	folded map[*plan.JoinRel]bool
}

// foldable reports whether f's conjuncts can run as the residual of the join under it.
func foldable(f *plan.FilterRel) (*plan.JoinRel, bool) {
	j, ok := f.Input().(*plan.JoinRel)
	return j, ok && j.Type() == plan.JoinTypeInner && len(j.OutputMapping()) == 0
}

func width(r plan.Rel) int { return len(r.RecordType().Types()) }

// visit records the needs under rel, of whose output the plan above reads need.
func (w *needWalk) visit(rel plan.Rel, need colSet) {
	direct := need
	if m := rel.OutputMapping(); len(m) > 0 && !need.all {
		direct = colSet{}
		for i := range need.cols {
			if i >= 0 && i < len(m) {
				direct.add(int(m[i]))
			}
		}
	}
	all := colSet{all: true}
	switch r := rel.(type) {
	case *plan.FilterRel:
		if j, ok := foldable(r); ok {
			w.folded[j] = true
			w.join(j, direct, r.Condition())
			return
		}
		direct.addRefs(r.Condition())
		w.visit(r.Input(), direct)
	case *plan.SortRel:
		for _, s := range r.Sorts() {
			direct.addRefs(s.Expr)
		}
		w.visit(r.Input(), direct)
	case *plan.FetchRel:
		w.visit(r.Input(), direct)
	case *plan.ProjectRel:
		if direct.all {
			w.visit(r.Input(), all)
			return
		}
		nIn := width(r.Input())
		in := colSet{}
		for i := range direct.cols {
			switch {
			case i < nIn:
				in.add(i)
			case i-nIn < len(r.Expressions()):
				e := r.Expressions()[i-nIn]
				if substrait.HasWindow(e) {
					in.all = true
				}
				in.addRefs(e)
			}
		}
		w.visit(r.Input(), in)
	case *plan.AggregateRel:
		in := colSet{}
		for _, g := range r.GroupingExpressions() {
			in.addRefs(g)
		}
		for _, m := range r.Measures() {
			if f := m.Measure(); f != nil {
				for i := range f.NArgs() {
					if a, ok := f.Arg(i).(expr.Expression); ok {
						in.addRefs(a)
					}
				}
				for _, s := range f.Sorts {
					in.addRefs(s.Expr)
				}
			}
			in.addRefs(m.Filter())
		}
		w.visit(r.Input(), in)
	case *plan.JoinRel:
		w.join(r, direct, nil)
	case *plan.HashJoinRel:
		w.joins[r] = direct
		in := direct.clone()
		in.addRefs(r.PostJoinFilter())
		nl := width(r.Left())
		for _, k := range r.LeftKeys() {
			in.addRefs(k)
		}
		for _, k := range r.RightKeys() {
			in.addRefs(k)
		}
		w.sides(r.Left(), r.Right(), nl, in)
	default:
		for _, c := range rel.GetInputs() {
			w.visit(c, all)
		}
	}
}

func (w *needWalk) join(r *plan.JoinRel, need colSet, folded expr.Expression) {
	w.joins[r] = need
	in := need.clone()
	in.addRefs(r.Expr())
	in.addRefs(r.PostJoinFilter())
	in.addRefs(folded)
	w.sides(r.Left(), r.Right(), width(r.Left()), in)
}

// sides visits a join's inputs with the parts of in (over left's columns then right's) that
// fall into each.
func (w *needWalk) sides(left, right plan.Rel, nl int, in colSet) {
	ln, rn := colSet{all: in.all}, colSet{all: in.all}
	for i := range in.cols {
		if i < nl {
			ln.add(i)
		} else {
			rn.add(i - nl)
		}
	}
	w.visit(left, ln)
	w.visit(right, rn)
}

// lowWidth is the number of columns of a lowered relation.
func lowWidth(lo *lowered) int {
	if lo.routed != nil {
		return len(lo.routed.cols)
	}
	return lo.node.Schema().NumFields()
}

// pushCol appends e (over lo's columns) to lo's routed columns and returns a reference to
// it, or returns e unchanged when lo is not routed or e is a plain column or a constant.
func pushCol(lo *lowered, e expr.Expression, pushed *int) (expr.Expression, error) {
	rp := lo.routed
	if rp == nil {
		return e, nil
	}
	if _, plain := baseRef(e); plain {
		return e, nil
	}
	var refs colSet
	refs.addRefs(e)
	if len(refs.cols) == 0 || refs.all {
		return e, nil
	}
	rp.cols = append(rp.cols, substitute(e, rp.cols))
	rp.names = append(rp.names, fmt.Sprintf("join%d", len(rp.names)))
	*pushed++
	return expr.NewRootFieldRefFromType(expr.NewStructFieldRef(int32(len(rp.cols)-1)), e.GetType())
}

// rightMark offsets the references of a residual into the right input while the inputs grow
// (pushedJoin): a reference at rightMark+i is the right input's column i.
const rightMark = 1 << 24

// pushedJoin lowers a join of the relations left and right with column pruning and
// expressions pushed into routed inputs (see the top of this file). need is what the plan
// above reads of the join's output. It returns ok false, having changed nothing that
// lowering again would not redo, where the plain lowering (newJoin) is to decide: keys whose
// types differ once compiled, a keyed pair not between the two sides.
func (l *lowerer) pushedJoin(lrel, rrel plan.Rel, t ops.JoinType, need colSet, conj []expr.Expression, keyed ...[2]expr.Expression) (n node, ok bool, err error) {
	mark := len(*l.rewrites)
	defer func() {
		if !ok {
			*l.rewrites = (*l.rewrites)[:mark]
		}
	}()
	left, err := l.lower(lrel)
	if err != nil {
		return nil, false, err
	}
	right, err := l.lower(rrel)
	if err != nil {
		return nil, false, err
	}
	nl, nr := lowWidth(left), lowWidth(right)
	type pair struct {
		a, b     expr.Expression // a over left's columns, b over right's
		nullSafe bool            // IS NOT DISTINCT FROM (a correlated subquery's domain match)
	}
	var pairs []pair
	retry := false
	key := func(a, b expr.Expression, nullSafe bool) bool {
		a, rb, ok := keyPair(a, b, nl)
		if !ok {
			return false
		}
		if !sameType(a.GetType(), rb.GetType()) {
			retry = true // the plain lowering compares the compiled types
			return false
		}
		pairs = append(pairs, pair{a: a, b: rb, nullSafe: nullSafe})
		return true
	}
	// Whatever is not a key here (newJoin refuses it, or takes NOT IN as a residual) is for
	// the plain lowering to decide.
	residual, nullAware, fail := joinCondition(t, conj, keyed, key)
	if fail != keysTaken || retry {
		return nil, false, nil
	}
	pushed := 0
	for i := range pairs {
		if pairs[i].a, err = pushCol(left, pairs[i].a, &pushed); err != nil {
			return nil, false, err
		}
		if pairs[i].b, err = pushCol(right, pairs[i].b, &pushed); err != nil {
			return nil, false, err
		}
	}
	// The residual: its pieces over one routed input pushed where PostgreSQL evaluates them on
	// every row of that input (pushable), its references into the right input marked
	// (rightMark) until the inputs stop growing.
	for i, c := range residual {
		top := true
		var verr error
		var visit expr.VisitFunc
		visit = func(x expr.Expression) expr.Expression {
			isTop := top // x is the conjunct c itself
			top = false
			if verr != nil {
				return x
			}
			if fr, isRef := x.(*expr.FieldReference); isRef {
				j, plain := rootIndex(fr)
				if !plain {
					verr = unsupported("join condition reference of another shape")
					return x
				}
				if j >= nl {
					ref, err := expr.NewRootFieldRefFromType(expr.NewStructFieldRef(int32(rightMark+j-nl)), fr.GetType())
					if err != nil {
						verr = err
					}
					return ref
				}
				return x
			}
			sx := side(x, nl)
			if (sx == 1 && left.routed != nil || sx == 2 && right.routed != nil) && !substrait.HasDeferredRaise(x) &&
				!pushable(t, sx, isTop) && mayFail(x) && !isLiteralOrRef(x) {
				// A piece PostgreSQL evaluates on the pairs alone that may fail: computed by the
				// fragments with its errors deferred, raised on the pairs (deferredPiece).
				y, err := deferredPiece(left, right, x, sx, nl, &pushed)
				if err != nil {
					verr = err
					return x
				}
				return y
			}
			if !substrait.HasDeferredRaise(x) && (pushable(t, sx, isTop) || !mayFail(x)) {
				switch sx {
				case 1:
					if left.routed != nil {
						y, err := pushCol(left, x, &pushed)
						if err != nil {
							verr = err
						}
						return y
					}
				case 2:
					if right.routed != nil {
						rx, err := shiftRefs(x, nl)
						if err != nil {
							verr = err
							return x
						}
						y, err := pushCol(right, rx, &pushed)
						if err != nil {
							verr = err
							return x
						}
						if y != rx {
							j, _ := baseRef(y)
							ref, err := expr.NewRootFieldRefFromType(expr.NewStructFieldRef(int32(rightMark+j)), x.GetType())
							if err != nil {
								verr = err
							}
							return ref
						}
					}
				}
			}
			return x.Visit(visit)
		}
		residual[i] = visit(c)
		if verr != nil {
			return nil, false, verr
		}
	}
	nl2 := lowWidth(left)
	for i, c := range residual {
		var verr error
		var visit expr.VisitFunc
		visit = func(x expr.Expression) expr.Expression {
			if fr, isRef := x.(*expr.FieldReference); isRef {
				if j, _ := rootIndex(fr); j >= rightMark {
					ref, err := expr.NewRootFieldRefFromType(expr.NewStructFieldRef(int32(nl2+j-rightMark)), fr.GetType())
					if err != nil {
						verr = err
					}
					return ref
				}
				return x
			}
			return x.Visit(visit)
		}
		if residual[i] = visit(c); verr != nil {
			return nil, false, verr
		}
	}
	// Pruning: an original column of a routed input that nothing reads becomes a typed NULL.
	var lneed, rneed colSet
	for i := range nl {
		if need.has(i) {
			lneed.add(i)
		}
	}
	if t != ops.JoinSemi && t != ops.JoinAnti {
		for i := range nr {
			if need.has(nl + i) {
				rneed.add(i)
			}
		}
	}
	for _, p := range pairs {
		lneed.addRefs(p.a)
		rneed.addRefs(p.b)
	}
	for _, c := range residual {
		var refs colSet
		refs.addRefs(c)
		for j := range refs.cols {
			if j < nl2 {
				lneed.add(j)
			} else {
				rneed.add(j - nl2)
			}
		}
	}
	for _, s := range []struct {
		lo   *lowered
		n    int
		need colSet
	}{{left, nl, lneed}, {right, nr, rneed}} {
		if s.lo.routed == nil || s.need.all {
			continue
		}
		for i := range s.n {
			if !s.need.has(i) {
				s.lo.routed.cols[i] = expr.NewNullLiteral(s.lo.routed.cols[i].GetType().WithNullability(types.NullabilityNullable))
			}
		}
	}
	ln, err := l.finish(left)
	if err != nil {
		return nil, false, err
	}
	rn, err := l.finish(right)
	if err != nil {
		return nil, false, err
	}
	ls, rs := ln.Schema(), rn.Schema()
	spec := ops.JoinSpec{Type: t, NullAware: nullAware}
	for _, p := range pairs {
		lk, err1 := ops.Compile(p.a, ls, l.ext)
		rk, err2 := ops.Compile(p.b, rs, l.ext)
		if err1 != nil || err2 != nil || !arrow.TypeEqual(lk.Type(), rk.Type()) || !ops.JoinKeyType(lk.Type()) {
			return nil, false, nil
		}
		spec.LeftKeys = append(spec.LeftKeys, lk)
		spec.RightKeys = append(spec.RightKeys, rk)
		spec.NullSafe = append(spec.NullSafe, p.nullSafe)
	}
	if spec.Residual, err = compileResidual(residual, ops.JoinInputSchema(ls, rs), l.ext); err != nil {
		return nil, false, err
	}
	spec.Unused = unusedOutput(need, nl, nl2, nr, lowWidth(right), t)
	out := l.distribute(&joinNode{left: ln, right: rn, spec: spec, schema: ops.JoinSchema(ls, rs, t), keys: len(spec.LeftKeys), pushed: pushed})
	if nl2 == nl && lowWidth(right) == nr {
		return out, true, nil
	}
	idx := make([]int, 0, nl+nr)
	for i := range nl {
		idx = append(idx, i)
	}
	if t != ops.JoinSemi && t != ops.JoinAnti {
		for i := range nr {
			idx = append(idx, nl2+i)
		}
	}
	out, err = newSelect(out, idx)
	return out, err == nil, err
}

// deferredPiece pushes x, a piece of a join's residual over one routed input (sx: 1 the
// left, 2 the right; x over the join's columns, the left's nl first) that may fail, into that
// input as two columns, its deferred_value and deferred_error (scan/ops/deferred.go), and
// returns raise_deferred over them (a right input's references marked with rightMark, as
// pushedJoin's): the fragments compute the piece, where the shredded cache serves its JSON
// fields and a fused cast runs in the scan, and its error is raised on the pairs alone, as
// PostgreSQL raises it.
func deferredPiece(left, right *lowered, x expr.Expression, sx, nl int, pushed *int) (expr.Expression, error) {
	lo, off, mark := left, 0, 0
	if sx == 2 {
		lo, off, mark = right, nl, rightMark
	}
	in, err := shiftRefs(x, off)
	if err != nil {
		return nil, err
	}
	dv, err := ownCall("deferred_value", x.GetType().WithNullability(types.NullabilityNullable), in)
	if err != nil {
		return nil, err
	}
	de, err := ownCall("deferred_error", &types.StringType{Nullability: types.NullabilityNullable}, in)
	if err != nil {
		return nil, err
	}
	ref := func(e expr.Expression) (expr.Expression, error) {
		y, err := pushCol(lo, e, pushed)
		if err != nil {
			return nil, err
		}
		j, _ := baseRef(y)
		return expr.NewRootFieldRefFromType(expr.NewStructFieldRef(int32(mark+j)), e.GetType())
	}
	v, err := ref(dv)
	if err != nil {
		return nil, err
	}
	e, err := ref(de)
	if err != nil {
		return nil, err
	}
	return ownCall("raise_deferred", v.GetType(), e, v)
}

// ownReg registers the functions the lowering adds (ownCall): the executor finds
// scan/ops' own functions by their extension ID, never by the plan's anchors.
var (
	ownReg   = expr.NewEmptyExtensionRegistry(extensions.GetDefaultCollectionWithNoError())
	ownRegMu sync.Mutex
)

// ownCall is a call of scan/ops' function name.
func ownCall(name string, out types.Type, args ...types.FuncArg) (expr.Expression, error) {
	ownRegMu.Lock()
	defer ownRegMu.Unlock()
	return expr.NewCustomScalarFunc(ownReg, extensions.NewScalarFuncVariant(ops.OwnFunctionID(name)), out, nil, args...)
}

// isLiteralOrRef reports a literal or a plain column reference.
func isLiteralOrRef(e expr.Expression) bool {
	if _, ok := e.(expr.Literal); ok {
		return true
	}
	_, plain := baseRef(e)
	return plain
}

// unusedOutput flags the output columns of a join (ops.JoinSpec.Unused) that nothing above it
// reads: those need (over the original nl left and nr right columns) does not hold, and the
// columns pushed into its inputs (the left's past nl of nl2, the right's past nr of nr2), which
// only its keys and residual read. Nil when every column is read.
func unusedOutput(need colSet, nl, nl2, nr, nr2 int, t ops.JoinType) []bool {
	out := make([]bool, 0, nl2+nr2)
	some := false
	add := func(unused bool) {
		out = append(out, unused)
		some = some || unused
	}
	for i := range nl2 {
		add(i >= nl || !need.has(i))
	}
	if t != ops.JoinSemi && t != ops.JoinAnti {
		for i := range nr2 {
			add(i >= nr || !need.has(nl+i))
		}
	}
	if !some {
		return nil
	}
	return out
}

// pushable reports whether a conjunct of a join of type t's condition over one side alone (sx:
// 1 the left, 2 the right; whole: the conjunct itself, not a piece of one) runs on every row
// of that side, as PostgreSQL 15's planner runs it (at that table's scan): a conjunct of an
// inner join's condition (ON, or WHERE folded into it) or of a semi join's over either side,
// of an outer or anti join's over its null-extended side (a LEFT JOIN's right, a RIGHT JOIN's
// left, NOT EXISTS's inside, a scalar subquery's). PostgreSQL evaluates a conjunct over an
// outer join's preserved side, and a piece of a conjunct over both sides, on the joined pairs
// alone: such a piece is pushed only when it cannot fail (mayFail), so that an error (a cast
// of a text that is not a number) fails the query on the rows PostgreSQL's fails it on
// (e2e TestJoinConditionErrorsAsPostgres).
func pushable(t ops.JoinType, sx int, whole bool) bool {
	if !whole {
		return false
	}
	switch sx {
	case 1:
		return t == ops.JoinInner || t == ops.JoinSemi || t == ops.JoinRight
	case 2:
		return t == ops.JoinInner || t == ops.JoinSemi || t == ops.JoinLeft || t == ops.JoinAnti || t == ops.JoinSingle
	}
	return false
}

// neverFail are the functions whose value is defined for every argument of their types:
// comparisons, boolean logic, NULL tests and JSON field access (a stored document is JSON, as
// PostgreSQL's json type holds nothing else).
var neverFail = map[string]bool{
	"equal": true, "not_equal": true, "lt": true, "lte": true, "gt": true, "gte": true,
	"is_null": true, "is_not_null": true, "is_distinct_from": true, "is_not_distinct_from": true,
	"and": true, "or": true, "not": true, "coalesce": true,
	"json_get": true, "json_get_text": true, "json_path_text": true,
}

// mayFail reports whether evaluating e may raise an error on some row (a cast, arithmetic, a
// function not in neverFail), or e is of a shape it does not know: only column references,
// literals and neverFail functions, CASE and IN lists of them cannot.
func mayFail(e expr.Expression) bool {
	switch v := e.(type) {
	case nil: // a CASE without ELSE
		return false
	case *expr.FieldReference:
		_, plain := rootIndex(v)
		return !plain
	case expr.Literal:
		return false
	case *expr.ScalarFunction:
		if !neverFail[v.Name()] {
			return true
		}
		for i := range v.NArgs() {
			a, ok := v.Arg(i).(expr.Expression)
			if ok && mayFail(a) {
				return true
			}
		}
		return false
	case *expr.IfThen:
		for i := range v.NIfs() {
			if mayFail(v.IfPair(i).If) || mayFail(v.IfPair(i).Then) {
				return true
			}
		}
		return mayFail(v.Else())
	case *expr.SingularOrList:
		if mayFail(v.Value) {
			return true
		}
		for _, o := range v.Options {
			if mayFail(o) {
				return true
			}
		}
		return false
	}
	return true
}

// sameType reports whether two Substrait types are equal but for nullability.
func sameType(a, b types.Type) bool {
	return a != nil && b != nil && a.WithNullability(types.NullabilityRequired).Equals(b.WithNullability(types.NullabilityRequired))
}
