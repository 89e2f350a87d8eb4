package substrait_test

import (
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
