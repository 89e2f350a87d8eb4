package substrait

import (
	"testing"

	"github.com/substrait-io/substrait-protobuf/go/substraitpb"
	extpb "github.com/substrait-io/substrait-protobuf/go/substraitpb/extensions"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// sqlPlanProto returns the message of sql's plan bound over cat.
func sqlPlanProto(t testing.TB, cat Catalog, sql string) *substraitpb.Plan {
	t.Helper()
	p, err := FromSQL(sql, cat)
	if err != nil {
		t.Fatal(err)
	}
	pb, err := p.ToProto()
	if err != nil {
		t.Fatal(err)
	}
	return pb
}

// marshalProto serializes pb.
func marshalProto(t testing.TB, pb *substraitpb.Plan) []byte {
	t.Helper()
	raw, err := proto.Marshal(pb)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// eachMessage calls fn on m and every message below it.
func eachMessage(m protoreflect.Message, fn func(protoreflect.Message)) {
	fn(m)
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.Kind() != protoreflect.MessageKind || fd.IsMap():
		case fd.IsList():
			for i := range v.List().Len() {
				eachMessage(v.List().Get(i).Message(), fn)
			}
		default:
			eachMessage(v.Message(), fn)
		}
		return true
	})
}

// TestMalformedClientPlans: a client plan whose function reference names no declared anchor,
// that declares one anchor twice with different functions, or whose AggregateRel grouping
// references a grouping expression it does not have is malformed: ErrInvalidPlan
// (InvalidArgument) naming the anchor or reference, not Unimplemented (checkAnchors,
// rawCount.check). A declaration repeated as it is stays accepted.
func TestMalformedClientPlans(t *testing.T) {
	t.Parallel()
	cat := testCatalog(t)
	bound := func(sql string) *substraitpb.Plan { return sqlPlanProto(t, cat, sql) }
	prepare := func(pb *substraitpb.Plan) error {
		_, err := PrepareSubstrait(marshalProto(t, pb), cat, BindOptions{})
		return err
	}
	filtered := `SELECT id FROM messages` + routedWhere + ` AND length(id) > 1`
	grouped := `SELECT id, count(*) FROM messages` + routedWhere + ` GROUP BY id`

	// A duplicate of each declaration under the next one's anchor; at the end or first.
	conflicting := func(first bool) *substraitpb.Plan {
		pb := bound(filtered)
		n := len(pb.Extensions)
		for i := range n {
			d := proto.Clone(pb.Extensions[i]).(*extpb.SimpleExtensionDeclaration)
			d.GetExtensionFunction().FunctionAnchor = pb.Extensions[(i+1)%n].GetExtensionFunction().GetFunctionAnchor()
			if first {
				pb.Extensions = append([]*extpb.SimpleExtensionDeclaration{d}, pb.Extensions...)
			} else {
				pb.Extensions = append(pb.Extensions, d)
			}
		}
		return pb
	}
	undeclared := bound(filtered)
	eachMessage(undeclared.ProtoReflect(), func(m protoreflect.Message) {
		if f, ok := m.Interface().(*substraitpb.Expression_ScalarFunction); ok && len(f.GetArguments()) == 1 {
			f.FunctionReference = 999 // length(id)
		}
	})
	undeclaredAgg := bound(grouped)
	eachMessage(undeclaredAgg.ProtoReflect(), func(m protoreflect.Message) {
		if f, ok := m.Interface().(*substraitpb.AggregateFunction); ok {
			f.FunctionReference = 77
		}
	})
	groupRef := bound(grouped)
	eachMessage(groupRef.ProtoReflect(), func(m protoreflect.Message) {
		if g, ok := m.Interface().(*substraitpb.AggregateRel_Grouping); ok {
			g.ExpressionReferences = []uint32{77}
		}
	})
	urns := bound(filtered)
	urns.ExtensionUrns = append(urns.ExtensionUrns, &extpb.SimpleExtensionURN{
		ExtensionUrnAnchor: urns.ExtensionUrns[0].GetExtensionUrnAnchor(), Urn: "extension:io.substrait:functions_arithmetic"})
	if urns.ExtensionUrns[0].GetUrn() == "extension:io.substrait:functions_arithmetic" {
		urns.ExtensionUrns[len(urns.ExtensionUrns)-1].Urn = "extension:io.substrait:functions_string"
	}
	badDecimal := bound(`SELECT CAST(length(id) AS numeric(6, 2)) FROM messages` + routedWhere)
	decimals := 0
	eachMessage(badDecimal.ProtoReflect(), func(m protoreflect.Message) {
		if d, ok := m.Interface().(*substraitpb.Type_Decimal); ok {
			d.Precision, d.Scale = 6, 10
			decimals++
		}
	})
	if decimals == 0 {
		t.Fatal("the plan has no decimal type")
	}
	for _, c := range []struct {
		what string
		pb   *substraitpb.Plan
		msg  string
	}{
		{"a decimal type whose scale passes its precision", badDecimal, "invalid Substrait plan: decimal<6,10> is not a type: a precision is 1 to 38 and a scale 0 to the precision"},
		{"a call of an undeclared anchor", undeclared, "invalid Substrait plan: function anchor 999 is referenced and no extension declaration of the plan defines it"},
		{"an aggregate of an undeclared anchor", undeclaredAgg, "invalid Substrait plan: function anchor 77 is referenced and no extension declaration of the plan defines it"},
		{"an anchor declared twice, the duplicate last", conflicting(false), `invalid Substrait plan: extension function anchor 2 is declared twice ("gte:" and "equal:")`},
		{"an anchor declared twice, the duplicate first", conflicting(true), `invalid Substrait plan: extension function anchor 2 is declared twice ("equal:" and "gte:")`},
		{"a URN anchor declared twice", urns, ""},
		{"a grouping reference out of range", groupRef, "invalid Substrait plan: grouping 0 of an AggregateRel references grouping expression 77, and the relation has 1"},
	} {
		err := prepare(c.pb)
		e, ok := err.(*Error)
		if !ok || e.Code != InvalidArgument || (c.msg != "" && e.Msg != c.msg) {
			t.Errorf("%s: %#v, want InvalidArgument %q", c.what, err, c.msg)
		}
	}

	repeated := bound(filtered)
	repeated.Extensions = append(repeated.Extensions, repeated.Extensions...)
	repeated.ExtensionUrns = append(repeated.ExtensionUrns, repeated.ExtensionUrns...)
	if err := prepare(repeated); err != nil {
		t.Errorf("declarations repeated as they are: %v", err)
	}
}
