package substrait_test

import (
	"strings"
	"testing"

	substraitpb "github.com/substrait-io/substrait-protobuf/go/substraitpb"
	"google.golang.org/protobuf/proto"

	"github.com/flightsrv/flightsrv/substrait"
)

// TestJoinWithoutExpression: a client plan's JoinRel without an expression (DataFusion's CROSS
// JOIN; trial 33 W3: refused with substrait-go's "protobuf Expression is nil") joins every
// pair of rows: it binds as the same join ON true does, to the same output.
func TestJoinWithoutExpression(t *testing.T) {
	env := newFuzzEnv(t)
	const sql = `SELECT count(*) FROM messages a JOIN messages b ON true WHERE a.channel_id = 'x' AND b.channel_id = 'y' AND a.timestamp >= '2026-01-01' AND a.timestamp < '2026-01-02' AND b.timestamp >= '2026-01-01' AND b.timestamp < '2026-01-02'`
	withTrue := substrait.SQLPlanProtoForTest(t, env.cat, sql)
	without := proto.Clone(withTrue).(*substraitpb.Plan)
	if !walkRels(without.GetRelations()[0].GetRoot().GetInput(), func(rel *substraitpb.Rel) bool {
		if j := rel.GetJoin(); j != nil {
			j.Expression = nil
			return true
		}
		return false
	}) {
		t.Fatal("the plan has no JoinRel")
	}
	bind := func(pb *substraitpb.Plan) string {
		raw, err := proto.Marshal(pb)
		if err != nil {
			t.Fatal(err)
		}
		b, err := substrait.PrepareSubstrait(raw, env.cat, substrait.BindOptions{})
		if err != nil {
			t.Fatalf("PrepareSubstrait: %v", err)
		}
		return b.Schema.String()
	}
	if got, want := bind(without), bind(withTrue); got != want {
		t.Fatalf("a join without an expression binds to %s, ON true to %s", got, want)
	}
}

// TestSubqueryExpressionRefusedInOurWords: a client plan's subquery expression (DataFusion's
// IN, EXISTS and scalar subqueries), which substrait-go does not decode, is UNIMPLEMENTED in
// our words, not substrait-go's "subquery converter" (trial 33 W3).
func TestSubqueryExpressionRefusedInOurWords(t *testing.T) {
	env := newFuzzEnv(t)
	pb := substrait.SQLPlanProtoForTest(t, env.cat, `SELECT id FROM messages WHERE channel_id = 'g' AND timestamp >= '2026-01-01' AND timestamp < '2026-01-02'`)
	var input *substraitpb.Rel
	if !walkRels(pb.GetRelations()[0].GetRoot().GetInput(), func(rel *substraitpb.Rel) bool {
		if f := rel.GetFilter(); f != nil {
			input = proto.Clone(f.GetInput()).(*substraitpb.Rel)
			f.Condition = &substraitpb.Expression{RexType: &substraitpb.Expression_Subquery_{Subquery: &substraitpb.Expression_Subquery{
				SubqueryType: &substraitpb.Expression_Subquery_SetPredicate_{SetPredicate: &substraitpb.Expression_Subquery_SetPredicate{
					PredicateOp: substraitpb.Expression_Subquery_SetPredicate_PREDICATE_OP_EXISTS, Tuples: input}}}}}
			return true
		}
		return false
	}) {
		t.Fatal("the plan has no FilterRel")
	}
	raw, err := proto.Marshal(pb)
	if err != nil {
		t.Fatal(err)
	}
	_, err = substrait.PrepareSubstrait(raw, env.cat, substrait.BindOptions{})
	if code, ok := substrait.CodeOf(err); !ok || code != substrait.Unimplemented || !strings.Contains(err.Error(), "subquery expressions in a Substrait plan") {
		t.Fatalf("PrepareSubstrait = %v, want Unimplemented naming subquery expressions", err)
	}
}
