package substrait

import (
	"fmt"
	"strings"
	"testing"

	substraitpb "github.com/substrait-io/substrait-protobuf/go/substraitpb"
	"google.golang.org/protobuf/proto"
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
