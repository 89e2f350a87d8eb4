package substrait

import (
	"fmt"
	"strings"
	"testing"

	substraitpb "github.com/substrait-io/substrait-protobuf/go/substraitpb"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// sizeRefusal checks that err is the size limit's refusal naming limit.
func sizeRefusal(t *testing.T, what string, err error, limit int) {
	t.Helper()
	e, ok := err.(*Error)
	if !ok || e.Code != InvalidArgument || e.SQLState != "54000" || !strings.Contains(e.Msg, fmt.Sprintf("(at most %d)", limit)) {
		t.Errorf("%s: %v, want the size limit's refusal naming %d", what, err, limit)
	}
}

// TestPlanSizeLimits: statements and client plans past a size limit are refused before
// anything runs, naming the limit; at the limit they bind.
func TestPlanSizeLimits(t *testing.T) {
	t.Parallel()
	cat := testCatalog(t)
	read := `SELECT id FROM messages` + routedWhere
	union := func(n int) string {
		return strings.Repeat(read+" UNION ALL ", n-1) + read
	}
	if _, err := Prepare(union(MaxSetInputs), cat); err != nil {
		t.Errorf("%d UNION ALL branches: %v", MaxSetInputs, err)
	}
	_, err := Prepare(union(MaxSetInputs+1), cat)
	sizeRefusal(t, "UNION ALL past the limit", err, MaxSetInputs)
	_, err = Prepare(strings.Repeat("SELECT 1 UNION ALL ", 4999)+"SELECT 1", cat)
	sizeRefusal(t, "5,000 SELECT 1 joined by UNION ALL", err, MaxSetInputs)

	cols := func(n int) string {
		return "SELECT " + strings.Repeat("id, ", n-1) + "id FROM messages" + routedWhere
	}
	if _, err := Prepare(cols(MaxOutputColumns), cat); err != nil {
		t.Errorf("%d columns: %v", MaxOutputColumns, err)
	}
	// A select list past PostgreSQL's limit is its 54011, in its words.
	for what, q := range map[string]string{
		"a select list past the limit": cols(MaxOutputColumns + 1),
		"50,000 columns":               cols(50_000),
		"2,000 constants":              "SELECT " + strings.Repeat("1, ", 1999) + "1",
		"1,665 columns through *":      "SELECT * FROM (SELECT " + strings.Repeat("1, ", 1663) + "1) a, (SELECT 1) b",
	} {
		_, err = Prepare(q, cat)
		if e, ok := err.(*Error); !ok || e.Code != InvalidArgument || e.SQLState != "54011" || e.Msg != "target lists can have at most 1664 entries" {
			t.Errorf("%s: %v, want PostgreSQL's 54011", what, err)
		}
	}

	_, err = Prepare("SELECT coalesce("+strings.Repeat("length(id), ", MaxExpressionNodes/2)+"0) FROM messages"+routedWhere, cat)
	sizeRefusal(t, "an expression past the node limit", err, MaxExpressionNodes)

	// A client plan: the bound plan of a two-branch UNION ALL with its set inputs repeated.
	st, err := Prepare(union(2), cat)
	if err != nil {
		t.Fatal(err)
	}
	p, err := st.Bind()
	if err != nil {
		t.Fatal(err)
	}
	pb, err := p.ToProto()
	if err != nil {
		t.Fatal(err)
	}
	var set *substraitpb.SetRel
	for r := pb.GetRelations()[0].GetRoot().GetInput(); set == nil; {
		if set = r.GetSet(); set == nil {
			r = r.GetProject().GetInput()
		}
	}
	for len(set.Inputs) <= MaxSetInputs {
		set.Inputs = append(set.Inputs, set.Inputs[0])
	}
	raw, err := proto.Marshal(pb)
	if err != nil {
		t.Fatal(err)
	}
	_, err = PrepareSubstrait(raw, cat, BindOptions{})
	sizeRefusal(t, "a Substrait plan's set operation past the limit", err, MaxSetInputs)
}

// rootCopies returns the serialized plan of a routed read whose root relation is repeated n
// times, with extra non-root copies of its input.
func rootCopies(t testing.TB, n, nonRoots int) []byte {
	t.Helper()
	pb := sqlPlanProto(t, testCatalog(t), `SELECT id FROM messages`+routedWhere)
	root := pb.Relations[0]
	for range n - 1 {
		pb.Relations = append(pb.Relations, root)
	}
	for range nonRoots {
		pb.Relations = append(pb.Relations, &substraitpb.PlanRel{RelType: &substraitpb.PlanRel_Rel{Rel: root.GetRoot().GetInput()}})
	}
	return marshalProto(t, pb)
}

// TestRawPlanRefusals: a client plan of several roots, of non-root relations, or of more
// relations than MaxPlanRelations is refused with checkPlanShape's and checkPlanSize's errors
// from its message as decoded (checkRawPlan), before any conversion.
func TestRawPlanRefusals(t *testing.T) {
	t.Parallel()
	cat := testCatalog(t)
	for _, c := range []struct {
		what           string
		roots, nonRoot int
		msg            string
	}{
		{"two roots", 2, 0, "a plan without exactly one root relation is not supported"},
		{"10,000 roots", 10_000, 0, "a plan without exactly one root relation is not supported"},
		{"a root and a non-root relation", 1, 1, "non-root relations (shared subtrees) are not supported"},
		{"two roots and non-root relations", 2, 3, "a plan without exactly one root relation is not supported"},
	} {
		_, err := PrepareSubstrait(rootCopies(t, c.roots, c.nonRoot), cat, BindOptions{})
		if e, ok := err.(*Error); !ok || e.Code != Unimplemented || e.SQLState != "0A000" || e.Msg != c.msg {
			t.Errorf("%s: %v, want %q", c.what, err, c.msg)
		}
	}

	// One root over a chain of FilterRels past the relation limit.
	raw := rootCopies(t, 1, 0)
	var pb substraitpb.Plan
	if err := proto.Unmarshal(raw, &pb); err != nil {
		t.Fatal(err)
	}
	root := pb.Relations[0].GetRoot()
	for range MaxPlanRelations {
		root.Input = &substraitpb.Rel{RelType: &substraitpb.Rel_Filter{Filter: &substraitpb.FilterRel{
			Input:     root.Input,
			Condition: &substraitpb.Expression{RexType: &substraitpb.Expression_Literal_{Literal: &substraitpb.Expression_Literal{LiteralType: &substraitpb.Expression_Literal_Boolean{Boolean: true}}}},
		}}}
	}
	_, err := PrepareSubstrait(marshalProto(t, &pb), cat, BindOptions{})
	sizeRefusal(t, "a chain of filters past the relation limit", err, MaxPlanRelations)
}

// BenchmarkRawPlanRefusal measures refusing a client plan of 10,000 copies of its root
// relation (trial 33: 6.8 s, converted whole before its roots were counted).
func BenchmarkRawPlanRefusal(b *testing.B) {
	benchRefusal(b, rootCopies(b, 10_000, 0))
}

// benchRefusal measures preparing raw, a client plan that must be refused.
func benchRefusal(b *testing.B, raw []byte) {
	cat := testCatalog(b)
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		if _, err := PrepareSubstrait(raw, cat, BindOptions{}); err == nil {
			b.Fatal("accepted")
		}
	}
}

// valuesPlan returns the serialized plan of SELECT x FROM (VALUES (0), (1), …) AS t(x) (the
// binder's VirtualTableReadRel of literals) with its rows repeated to n.
func valuesPlan(t testing.TB, n int) []byte {
	t.Helper()
	var sb strings.Builder
	sb.WriteString("SELECT x FROM (VALUES ")
	for i := range min(n, 1000) {
		if i > 0 {
			sb.WriteString(", ")
		}
		fmt.Fprintf(&sb, "(%d)", i)
	}
	sb.WriteString(") AS t(x)")
	pb := sqlPlanProto(t, testCatalog(t), sb.String())
	found := false
	eachMessage(pb.ProtoReflect(), func(m protoreflect.Message) {
		if vt, ok := m.Interface().(*substraitpb.ReadRel_VirtualTable); ok {
			found = true
			for i := 0; len(vt.Expressions) < n; i++ {
				vt.Expressions = append(vt.Expressions, vt.Expressions[i])
			}
		}
	})
	if !found {
		t.Fatal("no VirtualTable in the plan")
	}
	return marshalProto(t, pb)
}

// TestClientVirtualTableSize: a client plan's VirtualTable rows count as expression nodes
// (rawCount.check): 1,000 rows are prepared, MaxExpressionNodes+1 are refused with the size
// limit's error before the plan is converted.
func TestClientVirtualTableSize(t *testing.T) {
	t.Parallel()
	cat := testCatalog(t)
	if _, err := PrepareSubstrait(valuesPlan(t, 1000), cat, BindOptions{}); err != nil {
		t.Errorf("1,000 rows: %v", err)
	}
	_, err := PrepareSubstrait(valuesPlan(t, MaxExpressionNodes+1), cat, BindOptions{})
	sizeRefusal(t, "a VirtualTable past the expression node limit", err, MaxExpressionNodes)
}

// BenchmarkClientVirtualTableRefusal measures refusing a client plan whose VirtualTable holds
// 300,000 one-column rows (trial 33: about a minute to plan and stream).
func BenchmarkClientVirtualTableRefusal(b *testing.B) {
	benchRefusal(b, valuesPlan(b, 300_000))
}
