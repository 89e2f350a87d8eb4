package scan

import (
	"context"
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/plan"

	"github.com/flightsrv/flightsrv/internal/exprs"
	"github.com/flightsrv/flightsrv/scan/ops"
	"github.com/flightsrv/flightsrv/substrait"
)

// joinNode is a hash join at the coordinator (ops.HashJoin): the right input is buffered
// under the query's ledger, the left one streamed.
type joinNode struct {
	left, right node
	spec        ops.JoinSpec
	schema      *arrow.Schema
	// keys is the number of hash keys (0: a nested loop), for EXPLAIN.
	keys int
	// pushed is the number of key and residual expressions its inputs' fragments compute
	// (joinprune.go), for EXPLAIN.
	pushed int
}

func (n *joinNode) Schema() *arrow.Schema { return n.schema }

// unused counts the output columns the join leaves NULL (ops.JoinSpec.Unused).
func (n *joinNode) unused() int {
	u := 0
	for _, f := range n.spec.Unused {
		if f {
			u++
		}
	}
	return u
}

func (n *joinNode) open(ctx context.Context, rt *runtime) (array.RecordReader, error) {
	l, err := openNode(ctx, rt, n.left)
	if err != nil {
		return nil, err
	}
	r, err := openNode(ctx, rt, n.right)
	if err != nil {
		l.Release()
		return nil, err
	}
	return ops.HashJoin(ctx, l, r, n.spec, rt.mem), nil
}

func (n *joinNode) explain(a *Analysis) []string {
	head := fmt.Sprintf("HashJoin %s, %d keys", n.spec.Type, n.keys)
	if n.keys == 0 {
		head = fmt.Sprintf("NestedLoopJoin %s", n.spec.Type)
	}
	if len(n.spec.Residual) > 0 {
		head += fmt.Sprintf(", %d residual conjuncts", len(n.spec.Residual))
	}
	if slices.Contains(n.spec.NullSafe, true) {
		head += ", null-safe keys"
	}
	if n.spec.NullAware {
		head += ", null-aware (NOT IN)"
	}
	if n.pushed > 0 {
		head += fmt.Sprintf(", %d expressions computed by its inputs' fragments", n.pushed)
	}
	if u := n.unused(); u > 0 {
		head += fmt.Sprintf(", %d of %d output columns not gathered", u, len(n.spec.Unused))
	}
	out := []string{head + a.suffix(n, "")}
	out = append(out, indent(n.left.explain(a))...)
	return append(out, indent(n.right.explain(a))...)
}

// joinTypes maps Substrait's join types onto the executor's; the right-hand semi, anti and
// single joins and mark joins are not run.
var joinTypes = map[plan.JoinType]ops.JoinType{
	plan.JoinTypeInner:      ops.JoinInner,
	plan.JoinTypeLeft:       ops.JoinLeft,
	plan.JoinTypeRight:      ops.JoinRight,
	plan.JoinTypeOuter:      ops.JoinFull,
	plan.JoinTypeLeftSemi:   ops.JoinSemi,
	plan.JoinTypeLeftAnti:   ops.JoinAnti,
	plan.JoinTypeLeftSingle: ops.JoinSingle,
}

// hashJoinTypes maps a HashJoinRel's types: substrait-go types the output of every one as
// both inputs' columns, so only the joins whose output that is are run.
var hashJoinTypes = map[plan.HashMergeJoinType]ops.JoinType{
	plan.HashMergeInner: ops.JoinInner,
	plan.HashMergeLeft:  ops.JoinLeft,
	plan.HashMergeRight: ops.JoinRight,
	plan.HashMergeOuter: ops.JoinFull,
}

// sides lowers a join's two inputs to coordinator nodes.
func (l *lowerer) sides(left, right plan.Rel) (node, node, error) {
	var out [2]node
	for i, in := range []plan.Rel{left, right} {
		lo, err := l.lower(in)
		if err != nil {
			return nil, nil, err
		}
		if out[i], err = l.finish(lo); err != nil {
			return nil, nil, err
		}
	}
	return out[0], out[1], nil
}

// join lowers a JoinRel: the equality conjuncts of its condition between an expression of
// the left input and one of the right (of one hashable type) become the hash keys, the
// other conjuncts the residual; its post-join filter filters the output.
// folded are the conjuncts of a FilterRel directly above an inner join (joinprune.go), run
// as its residual.
func (l *lowerer) join(r *plan.JoinRel, folded ...expr.Expression) (*lowered, error) {
	t, ok := joinTypes[r.Type()]
	if !ok {
		return nil, unsupported("join type %v", r.Type())
	}
	conj := append(conjuncts(r.Expr()), folded...)
	need := l.joinNeed(r)
	if f := r.PostJoinFilter(); f != nil && !need.all {
		need = need.clone() // the post-join filter reads the join's output too
		need.addRefs(f)
	}
	n, ok, err := l.pushedJoin(r.Left(), r.Right(), t, need, conj)
	if err != nil {
		return nil, err
	}
	if !ok {
		left, right, err := l.sides(r.Left(), r.Right())
		if err != nil {
			return nil, err
		}
		if n, err = l.newJoin(left, right, t, need, conj); err != nil {
			return nil, err
		}
	}
	return l.postFilter(n, r.PostJoinFilter())
}

// joinNeed is what the plan above a join reads of its output (needWalk), every column when
// the walk did not reach it.
func (l *lowerer) joinNeed(r plan.Rel) colSet {
	if need, ok := l.needs.joins[r]; ok {
		return need
	}
	return colSet{all: true}
}

// hashJoin lowers a HashJoinRel: its key pairs, then its post-join filter as the residual
// (over both inputs, as Substrait defines it for this relation).
func (l *lowerer) hashJoin(r *plan.HashJoinRel) (*lowered, error) {
	t, ok := hashJoinTypes[r.Type()]
	if !ok {
		return nil, unsupported("hash join type %v", r.Type())
	}
	if len(r.LeftKeys()) != len(r.RightKeys()) {
		return nil, unsupported("hash join with %d left and %d right keys", len(r.LeftKeys()), len(r.RightKeys()))
	}
	nl := width(r.Left())
	var conj []expr.Expression
	if f := r.PostJoinFilter(); f != nil && !isTrueLiteral(f) {
		conj = conjuncts(f)
	}
	var pairs [][2]expr.Expression
	for i, lk := range r.LeftKeys() {
		rk, err := shiftRefs(r.RightKeys()[i], -nl)
		if err != nil {
			return nil, err
		}
		pairs = append(pairs, [2]expr.Expression{lk, rk})
	}
	n, ok, err := l.pushedJoin(r.Left(), r.Right(), t, l.joinNeed(r), conj, pairs...)
	if err != nil || ok {
		return &lowered{node: n}, err
	}
	left, right, err := l.sides(r.Left(), r.Right())
	if err != nil {
		return nil, err
	}
	if n, err = l.newJoin(left, right, t, l.joinNeed(r), conj, pairs...); err != nil {
		return nil, err
	}
	return &lowered{node: n}, nil
}

func (l *lowerer) postFilter(n node, f expr.Expression) (*lowered, error) {
	if f == nil || isTrueLiteral(f) {
		return &lowered{node: n}, nil
	}
	fn, err := newFilter(n, f, l.ext)
	if err != nil {
		return nil, err
	}
	return &lowered{node: fn}, nil
}

// side classifies the root references of e: 1 all into the left input (fields < nl), 2 all
// into the right, 0 none, 3 both (or a reference of another shape).
func side(e expr.Expression, nl int) int {
	s := 0
	var visit expr.VisitFunc
	visit = func(x expr.Expression) expr.Expression {
		if fr, ok := x.(*expr.FieldReference); ok {
			i, ok := rootIndex(fr)
			switch {
			case !ok:
				s = 3
			case i < nl:
				s |= 1
			default:
				s |= 2
			}
			return x
		}
		return x.Visit(visit)
	}
	visit(e)
	return s
}

// shiftRefs moves e's root references down by `by` (a right-side expression of a join
// condition onto the right input; a negative by moves them up).
func shiftRefs(e expr.Expression, by int) (expr.Expression, error) {
	var err error
	var visit expr.VisitFunc
	visit = func(x expr.Expression) expr.Expression {
		if fr, ok := x.(*expr.FieldReference); ok {
			i, ok := rootIndex(fr)
			if !ok {
				err = unsupported("join condition reference of another shape")
				return x
			}
			ref, rerr := expr.NewRootFieldRefFromType(expr.NewStructFieldRef(int32(i-by)), fr.GetType())
			if rerr != nil {
				err = rerr
				return x
			}
			return ref
		}
		return x.Visit(visit)
	}
	out := visit(e)
	return out, err
}

// equalArgs returns the two arguments of an equality.
func equalArgs(e expr.Expression) (a, b expr.Expression, ok bool) {
	a, b, nullSafe, ok := keyArgs(e)
	return a, b, ok && !nullSafe
}

// keyArgs returns the two arguments of an equality or of IS NOT DISTINCT FROM (nullSafe: the
// binder's match of an outer row to its correlated subquery's domain, substrait/domain.go).
func keyArgs(e expr.Expression) (a, b expr.Expression, nullSafe, ok bool) {
	f, isFn := e.(*expr.ScalarFunction)
	if !isFn || (f.Name() != "equal" && f.Name() != "is_not_distinct_from") || f.NArgs() != 2 {
		return nil, nil, false, false
	}
	a, ok1 := f.Arg(0).(expr.Expression)
	b, ok2 := f.Arg(1).(expr.Expression)
	if substrait.HasDeferredRaise(a) || substrait.HasDeferredRaise(b) {
		// Evaluated on the pairs (substrait/deferred.go), never as a key of every row.
		return nil, nil, false, false
	}
	return a, b, f.Name() == "is_not_distinct_from", ok1 && ok2
}

// notInCondition recognises the binder's anti-join condition of NOT IN,
// `or(equal(a, b), is_null(a), is_null(b))` ((a = b) IS NOT FALSE), and returns a and b.
func notInCondition(e expr.Expression) (a, b expr.Expression, ok bool) {
	f, isFn := e.(*expr.ScalarFunction)
	if !isFn || f.Name() != "or" || f.NArgs() != 3 {
		return nil, nil, false
	}
	eq, _ := f.Arg(0).(expr.Expression)
	if a, b, ok = equalArgs(eq); !ok {
		return nil, nil, false
	}
	for i, want := range []expr.Expression{a, b} {
		n, isNull := f.Arg(i + 1).(*expr.ScalarFunction)
		if !isNull || n.Name() != "is_null" || n.NArgs() != 1 {
			return nil, nil, false
		}
		if arg, _ := n.Arg(0).(expr.Expression); arg == nil || !exprs.Same(arg, want) {
			return nil, nil, false
		}
	}
	return a, b, true
}

// keyPair orients the two sides of a key equality of a join whose left input has nl
// columns: a over the left input's columns, b over the right's (shifted onto the right
// input); ok is false when one side is not over one input alone.
func keyPair(a, b expr.Expression, nl int) (left, right expr.Expression, ok bool) {
	sa, sb := side(a, nl), side(b, nl)
	if sa == 2 && sb == 1 {
		a, b, sa, sb = b, a, sb, sa
	}
	if sa != 1 || sb != 2 {
		return nil, nil, false
	}
	rb, err := shiftRefs(b, nl)
	return a, rb, err == nil
}

// joinKeysFailure is what of a join's condition joinCondition could not take as a hash key.
type joinKeysFailure int

const (
	keysTaken      joinKeysFailure = iota // every part that must be a key is one
	keyedNotKey                           // a pair of the HashJoinRel's keys
	notInNotKey                           // an anti join's NOT IN condition, left in the residual
	nullSafeNotKey                        // an IS NOT DISTINCT FROM conjunct
)

// joinCondition sorts a join's condition into hash keys and the residual, as newJoin and
// pushedJoin read it: the pairs keyed (a HashJoinRel's), each of which must be a key; an anti
// join's lone NOT IN condition, a null-aware key (nullAware) when it can be one; then each
// conjunct of conj but TRUE, an equality or IS NOT DISTINCT FROM (which must be one) taken as
// a key when it can be, the others the residual. key takes a pair a, b over the join's
// columns (left's, then right's) as a key, or reports that it cannot. It stops at the first
// keyed pair or IS NOT DISTINCT FROM conjunct that is not a key (fail says which); a NOT IN
// that is not a key stays in the residual (notInNotKey).
func joinCondition(t ops.JoinType, conj []expr.Expression, keyed [][2]expr.Expression, key func(a, b expr.Expression, nullSafe bool) bool) (residual []expr.Expression, nullAware bool, fail joinKeysFailure) {
	for _, k := range keyed {
		if !key(k[0], k[1], false) {
			return nil, false, keyedNotKey
		}
	}
	notIn := false
	if t == ops.JoinAnti && len(conj) == 1 {
		if a, b, ok := notInCondition(conj[0]); ok {
			if key(a, b, false) {
				nullAware, conj = true, nil
			} else {
				notIn = true
			}
		}
	}
	for _, c := range conj {
		if isTrueLiteral(c) {
			continue
		}
		a, b, nullSafe, ok := keyArgs(c)
		if ok && key(a, b, nullSafe) {
			continue
		}
		if ok && nullSafe {
			return nil, false, nullSafeNotKey
		}
		residual = append(residual, c)
	}
	if notIn {
		return residual, false, notInNotKey
	}
	return residual, nullAware, keysTaken
}

// newJoin builds the join node of left and right under the conjuncts conj (over left's
// columns then right's) and the equality pairs keyed (a HashJoinRel's, over the joined
// columns: left, then right shifted past the left's); need is what the plan above reads of
// its output.
func (l *lowerer) newJoin(left, right node, t ops.JoinType, need colSet, conj []expr.Expression, keyed ...[2]expr.Expression) (node, error) {
	ls, rs := left.Schema(), right.Schema()
	nl := ls.NumFields()
	spec := ops.JoinSpec{Type: t}
	addKey := func(a, b expr.Expression, nullSafe bool) bool {
		a, rb, ok := keyPair(a, b, nl)
		if !ok {
			return false
		}
		lk, err1 := ops.Compile(a, ls, l.ext)
		rk, err2 := ops.Compile(rb, rs, l.ext)
		if err1 != nil || err2 != nil || !arrow.TypeEqual(lk.Type(), rk.Type()) || !ops.JoinKeyType(lk.Type()) {
			return false
		}
		spec.LeftKeys = append(spec.LeftKeys, lk)
		spec.RightKeys = append(spec.RightKeys, rk)
		spec.NullSafe = append(spec.NullSafe, nullSafe)
		return true
	}
	residual, nullAware, fail := joinCondition(t, conj, keyed, addKey)
	switch fail {
	case keyedNotKey:
		return nil, unsupported("hash join keys of different or unhashable types")
	case nullSafeNotKey:
		return nil, unsupported("IS NOT DISTINCT FROM join keys of different or unhashable types")
	}
	spec.NullAware = nullAware // a NOT IN that is no key (notInNotKey) is a residual
	var err error
	if spec.Residual, err = compileResidual(residual, ops.JoinInputSchema(ls, rs), l.ext); err != nil {
		return nil, err
	}
	spec.Unused = unusedOutput(need, nl, nl, rs.NumFields(), rs.NumFields(), t)
	return l.distribute(&joinNode{left: left, right: right, spec: spec, schema: ops.JoinSchema(ls, rs, t), keys: len(spec.LeftKeys)}), nil
}
