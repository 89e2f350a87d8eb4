package substrait

import (
	pg "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// pgWalker is walkPG's traversal. The parse-tree messages every generated statement is made
// of (expressions, constants, column references, lists, casts, calls) are walked through
// their Go fields; any other message through protobuf reflection, which costs about ten times
// as much a node (protoreflect's Range allocates a value per field): the binder walks a WHERE
// clause several times (subqueries, quantified comparisons, placeholders), and for an IN list
// or OR chain of 60,000 constants the reflective walks were 40% of planning. Both visit the
// same nodes in the same order, fields in their declaration order (TestWalkPGMatchesReflection).
type pgWalker struct {
	fn func(n *pg.Node) bool
}

// node calls fn on n and walks below it unless fn returns false or n is a nested SELECT.
func (w pgWalker) node(n *pg.Node) {
	if n == nil {
		return
	}
	if !w.fn(n) || n.GetSelectStmt() != nil {
		return
	}
	w.msg(n)
}

func (w pgWalker) nodes(ns []*pg.Node) {
	for _, n := range ns {
		w.node(n)
	}
}

// msg walks the fields of m (fn is not called on m itself).
func (w pgWalker) msg(m proto.Message) {
	switch m := m.(type) {
	case *pg.Node:
		switch x := m.Node.(type) {
		case *pg.Node_AExpr:
			w.aExpr(x.AExpr)
		case *pg.Node_BoolExpr:
			if x.BoolExpr != nil {
				w.node(x.BoolExpr.Xpr)
				w.nodes(x.BoolExpr.Args)
			}
		case *pg.Node_AConst, *pg.Node_String_, *pg.Node_Integer, *pg.Node_Float, *pg.Node_Boolean,
			*pg.Node_BitString, *pg.Node_ParamRef, *pg.Node_AStar:
			// No nodes below.
		case *pg.Node_ColumnRef:
			if x.ColumnRef != nil {
				w.nodes(x.ColumnRef.Fields)
			}
		case *pg.Node_List:
			if x.List != nil {
				w.nodes(x.List.Items)
			}
		case *pg.Node_TypeCast:
			if x.TypeCast != nil {
				w.node(x.TypeCast.Arg)
				w.typeName(x.TypeCast.TypeName)
			}
		case *pg.Node_FuncCall:
			w.funcCall(x.FuncCall)
		case *pg.Node_ResTarget:
			if x.ResTarget != nil {
				w.nodes(x.ResTarget.Indirection)
				w.node(x.ResTarget.Val)
			}
		case *pg.Node_NullTest:
			if x.NullTest != nil {
				w.node(x.NullTest.Xpr)
				w.node(x.NullTest.Arg)
			}
		default:
			w.reflect(m.ProtoReflect())
		}
	case *pg.A_Expr:
		w.aExpr(m)
	case *pg.TypeName:
		w.typeName(m)
	case *pg.FuncCall:
		w.funcCall(m)
	default:
		w.reflect(m.ProtoReflect())
	}
}

func (w pgWalker) aExpr(e *pg.A_Expr) {
	if e == nil {
		return
	}
	w.nodes(e.Name)
	w.node(e.Lexpr)
	w.node(e.Rexpr)
}

func (w pgWalker) typeName(t *pg.TypeName) {
	if t == nil {
		return
	}
	w.nodes(t.Names)
	w.nodes(t.Typmods)
	w.nodes(t.ArrayBounds)
}

func (w pgWalker) funcCall(f *pg.FuncCall) {
	if f == nil {
		return
	}
	w.nodes(f.Funcname)
	w.nodes(f.Args)
	w.nodes(f.AggOrder)
	w.node(f.AggFilter)
	if f.Over != nil {
		w.msg(f.Over)
	}
}

// reflect walks m's message fields through protobuf reflection, in declaration order.
func (w pgWalker) reflect(m protoreflect.Message) {
	rangeDeclared(m, func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		visit := func(x protoreflect.Message) {
			if n, ok := x.Interface().(*pg.Node); ok {
				w.node(n)
				return
			}
			w.msg(x.Interface())
		}
		switch {
		case fd.IsList() && fd.Kind() == protoreflect.MessageKind:
			for i := range v.List().Len() {
				visit(v.List().Get(i).Message())
			}
		case fd.Kind() == protoreflect.MessageKind && !fd.IsMap():
			visit(v.Message())
		}
		return true
	})
}

// rangeDeclared calls fn for each populated field of m in the order m's message declares
// them, until fn returns false. protoreflect.Message.Range's order is unspecified, and
// protobuf-go swaps a pair of fields in some binaries and not others (chosen from a hash of the
// executable), so a walk through Range visited the nodes in an order that changed with the
// build.
func rangeDeclared(m protoreflect.Message, fn func(protoreflect.FieldDescriptor, protoreflect.Value) bool) {
	fds := m.Descriptor().Fields()
	for i := range fds.Len() {
		if fd := fds.Get(i); m.Has(fd) && !fn(fd, m.Get(fd)) {
			return
		}
	}
}
