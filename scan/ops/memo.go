package ops

import (
	"context"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/substrait-io/substrait-go/v8/expr"

	"github.com/flightsrv/flightsrv/internal/exprs"
)

// Common subexpressions: the JSON functions of URNPostgres parse their document on every call,
// so an expression reading one field several times (CASE WHEN (value->>'delay')::int > 15
// THEN (value->>'delay')::int …, an OR of comparisons of one field) would parse each row's
// JSON once per occurrence. Compile gives identical JSON calls of one expression one shared
// memoNode, which Eval evaluates once per batch.

// memoNode is a subtree evaluated at most once per batch of an Eval call: the first
// evaluation's array is kept in the call's memo (context) and shared by the later ones on the
// same batch.
type memoNode struct {
	inner node
	id    int // index in the call's memo
}

type memoKey struct{}

// memo is one Eval call's evaluated shared subtrees, by memoNode.id, each with the batch it
// was evaluated on (CASE evaluates its branches on subsets of the batch, which are other
// batches); owned by that call, which holds the batches it keys by.
type memo struct{ vals []memoVal }

type memoVal struct {
	b arrow.RecordBatch
	a arrow.Array
}

func (m *memo) release() {
	for _, v := range m.vals {
		if v.a != nil {
			v.a.Release()
		}
	}
}

func (n *memoNode) staticType() arrow.DataType {
	if st, ok := n.inner.(staticTyped); ok {
		return st.staticType()
	}
	return nil
}

func (n *memoNode) eval(ctx context.Context, b arrow.RecordBatch) (compute.Datum, error) {
	m, _ := ctx.Value(memoKey{}).(*memo)
	if m == nil {
		return n.inner.eval(ctx, b)
	}
	if v := m.vals[n.id]; v.a != nil && v.b == b {
		return compute.NewDatum(v.a), nil
	}
	d, err := n.inner.eval(ctx, b)
	if err != nil {
		return nil, err
	}
	defer d.Release()
	a, err := toArray(d, int(b.NumRows()), compute.GetAllocator(ctx))
	if err != nil {
		return nil, err
	}
	if old := m.vals[n.id].a; old != nil {
		old.Release()
	}
	m.vals[n.id] = memoVal{b: b, a: a}
	return compute.NewDatum(a), nil
}

// shared returns the memoNode of a JSON call equal to f compiled before in this expression,
// or nil.
func (c *compiler) shared(f *expr.ScalarFunction) *memoNode {
	for _, s := range c.memos {
		if exprs.Same(s.e, f) {
			c.reused = true
			return s.n
		}
	}
	return nil
}

// remember wraps the compiled JSON call f in a memoNode that later equal calls share.
func (c *compiler) remember(f *expr.ScalarFunction, n node) node {
	m := &memoNode{inner: n, id: len(c.memos)}
	c.memos = append(c.memos, memoEntry{e: f, n: m})
	return m
}

type memoEntry struct {
	e *expr.ScalarFunction
	n *memoNode
}

// isJSONCall reports whether f is one of URNPostgres' JSON functions (json_get…).
func isJSONCall(f *expr.ScalarFunction) bool {
	return f.ID().URN == URNPostgres && strings.HasPrefix(f.Name(), "json_")
}
