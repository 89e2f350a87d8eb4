package substrait

import (
	"os"
	"slices"
	"strings"
	"testing"

	pg "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// walkPGReflect is walkPG as it was, every message walked through protobuf reflection: the
// reference pgWalker must agree with.
func walkPGReflect(m protoreflect.Message, fn func(n *pg.Node) bool) {
	rangeDeclared(m, func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		visit := func(x protoreflect.Message) {
			if n, ok := x.Interface().(*pg.Node); ok {
				if !fn(n) || n.GetSelectStmt() != nil {
					return
				}
			}
			walkPGReflect(x, fn)
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

// TestWalkPGMatchesReflection: walkPG visits the same nodes in the same order as a walk of
// every message through reflection, over the golden corpus' statements (and their nested
// SELECTs), with and without pruning below some nodes.
func TestWalkPGMatchesReflection(t *testing.T) {
	var stmts []string
	for _, f := range []string{"corpus.sql", "postgres.sql"} {
		b, err := os.ReadFile("../testdata/sql/" + f)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range strings.Split(string(b), "\n\n") {
			var lines []string
			for _, l := range strings.Split(q, "\n") {
				if !strings.HasPrefix(strings.TrimSpace(l), "--") {
					lines = append(lines, l)
				}
			}
			if s := strings.TrimSpace(strings.Join(lines, "\n")); s != "" {
				stmts = append(stmts, s)
			}
		}
	}
	stmts = append(stmts,
		"SELECT x FROM t WHERE x IN (1, 2, 3) OR y = ANY('{1,2}'::int[]) OR z::text[] IS NULL OR f(a ORDER BY b) FILTER (WHERE c) OVER (PARTITION BY d) > 0",
		"SELECT CASE WHEN a THEN (SELECT 1) END, ROW(1, 2), ARRAY[1, $1], a[1:2], b COLLATE \"C\" FROM t, LATERAL (SELECT * FROM u WHERE u.a = t.a) v")
	if len(stmts) < 300 {
		t.Fatalf("%d statements: the corpus was not read", len(stmts))
	}
	walked := 0
	for _, sql := range stmts {
		res, err := pg.Parse(sql)
		if err != nil {
			continue
		}
		for _, prune := range []bool{false, true} {
			var want, got []*pg.Node
			record := func(into *[]*pg.Node) func(*pg.Node) bool {
				return func(n *pg.Node) bool {
					*into = append(*into, n)
					return !prune || (n.GetSubLink() == nil && n.GetFuncCall() == nil)
				}
			}
			for _, st := range res.GetStmts() {
				walkPGReflect(st.GetStmt().ProtoReflect(), record(&want))
				walkPG(st.GetStmt().ProtoReflect(), record(&got))
				if sel := st.GetStmt().GetSelectStmt(); sel != nil {
					walkPGReflect(sel.ProtoReflect(), record(&want))
					walkPG(sel.ProtoReflect(), record(&got))
				}
			}
			if !slices.Equal(want, got) {
				t.Fatalf("%s (prune %v): walkPG visited %d nodes, the reflective walk %d", sql, prune, len(got), len(want))
			}
			walked += len(got)
		}
	}
	t.Logf("%d statements, %d node visits", len(stmts), walked)
}

// TestWalkPGFields: the messages pgWalker walks through their Go fields have no message
// fields beyond those it reads (a new pg_query version adding one fails here).
func TestWalkPGFields(t *testing.T) {
	walked := map[protoreflect.Message][]string{
		(&pg.A_Expr{}).ProtoReflect():    {"name", "lexpr", "rexpr"},
		(&pg.BoolExpr{}).ProtoReflect():  {"xpr", "args"},
		(&pg.ColumnRef{}).ProtoReflect(): {"fields"},
		(&pg.List{}).ProtoReflect():      {"items"},
		(&pg.TypeCast{}).ProtoReflect():  {"arg", "type_name"},
		(&pg.TypeName{}).ProtoReflect():  {"names", "typmods", "array_bounds"},
		(&pg.FuncCall{}).ProtoReflect():  {"funcname", "args", "agg_order", "agg_filter", "over"},
		(&pg.ResTarget{}).ProtoReflect(): {"indirection", "val"},
		(&pg.NullTest{}).ProtoReflect():  {"xpr", "arg"},
		(&pg.A_Const{}).ProtoReflect():   {"ival", "fval", "boolval", "sval", "bsval"},
		(&pg.String{}).ProtoReflect():    nil,
		(&pg.Integer{}).ProtoReflect():   nil,
		(&pg.Float{}).ProtoReflect():     nil,
		(&pg.Boolean{}).ProtoReflect():   nil,
		(&pg.BitString{}).ProtoReflect(): nil,
		(&pg.ParamRef{}).ProtoReflect():  nil,
		(&pg.A_Star{}).ProtoReflect():    nil,
	}
	leaf := map[string]bool{"Integer": true, "Float": true, "Boolean": true, "String": true, "BitString": true}
	for m, want := range walked {
		var got []string
		fds := m.Descriptor().Fields()
		for i := range fds.Len() {
			if fd := fds.Get(i); fd.Kind() == protoreflect.MessageKind {
				got = append(got, string(fd.Name()))
				if m.Descriptor().Name() == "A_Const" && !leaf[string(fd.Message().Name())] {
					t.Errorf("A_Const.%s is a %s, which may hold nodes", fd.Name(), fd.Message().Name())
				}
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: message fields %v, pgWalker reads %v", m.Descriptor().Name(), got, want)
		}
	}
}
