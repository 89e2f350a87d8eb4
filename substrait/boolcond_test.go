package substrait_test

import (
	"errors"
	"testing"

	substraitpb "github.com/substrait-io/substrait-protobuf/go/substraitpb"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/flightsrv/flightsrv/substrait"
)

// TestNonBooleanConditionsRefused: a client plan whose FilterRel condition, an argument of its
// and, or a JoinRel's expression is not boolean (an integer, a string, a typed NULL of
// another type) is refused when it is prepared, InvalidArgument with PostgreSQL's 42804,
// never run into an INTERNAL error (trial 32 F5).
func TestNonBooleanConditionsRefused(t *testing.T) {
	env := newFuzzEnv(t)
	base := func(sql string) *substraitpb.Plan { return substrait.SQLPlanProtoForTest(t, env.cat, sql) }
	lit := map[string]*substraitpb.Expression{
		"i32":    {RexType: &substraitpb.Expression_Literal_{Literal: &substraitpb.Expression_Literal{LiteralType: &substraitpb.Expression_Literal_I32{I32: 1}}}},
		"string": {RexType: &substraitpb.Expression_Literal_{Literal: &substraitpb.Expression_Literal{LiteralType: &substraitpb.Expression_Literal_String_{String_: "t"}}}},
		// A whole-row reference (no segment): type record (trial 33 G4: a recovered panic).
		"record": {RexType: &substraitpb.Expression_Selection{Selection: &substraitpb.Expression_FieldReference{
			RootType: &substraitpb.Expression_FieldReference_RootReference_{RootReference: &substraitpb.Expression_FieldReference_RootReference{}}}}},
		"null i64": {RexType: &substraitpb.Expression_Literal_{Literal: &substraitpb.Expression_Literal{LiteralType: &substraitpb.Expression_Literal_Null{Null: &substraitpb.Type{Kind: &substraitpb.Type_I64_{I64: &substraitpb.Type_I64{Nullability: substraitpb.Type_NULLABILITY_NULLABLE}}}}}}},
	}
	const where = `SELECT id FROM messages WHERE channel_id = 'g' AND timestamp >= '2026-01-01' AND timestamp < '2026-01-02' AND id <> 'x'`
	const join = `SELECT a.id FROM messages a JOIN messages b ON a.id = b.id WHERE a.channel_id = 'x' AND b.channel_id = 'y' AND a.timestamp >= '2026-01-01' AND a.timestamp < '2026-01-02' AND b.timestamp >= '2026-01-01' AND b.timestamp < '2026-01-02'`
	for name, l := range lit {
		for what, mutate := range map[string]func(rel *substraitpb.Rel) bool{
			"a filter's condition": func(rel *substraitpb.Rel) bool {
				if f := rel.GetFilter(); f != nil {
					f.Condition = l
					return true
				}
				return false
			},
			"an argument of a filter's and": func(rel *substraitpb.Rel) bool {
				if f := rel.GetFilter(); f != nil && f.GetCondition().GetScalarFunction() != nil {
					sf := f.GetCondition().GetScalarFunction()
					sf.Arguments = append(sf.Arguments, &substraitpb.FunctionArgument{ArgType: &substraitpb.FunctionArgument_Value{Value: l}})
					return true
				}
				return false
			},
			"a join's expression": func(rel *substraitpb.Rel) bool {
				if j := rel.GetJoin(); j != nil {
					j.Expression = l
					return true
				}
				return false
			},
		} {
			sql := where
			if what == "a join's expression" {
				sql = join
			}
			pb := base(sql)
			if !walkRels(pb.GetRelations()[0].GetRoot().GetInput(), mutate) {
				t.Fatalf("%s: no relation to change in %s", what, sql)
			}
			raw, err := proto.Marshal(pb)
			if err != nil {
				t.Fatal(err)
			}
			t.Run(what+"/"+name, func(t *testing.T) {
				for _, analytical := range []bool{false, true} {
					_, err := substrait.PrepareSubstrait(raw, env.cat, substrait.BindOptions{Analytical: analytical})
					var se *substrait.Error
					if !errors.As(err, &se) || se.SQLState != "42804" || se.Code != substrait.InvalidArgument {
						t.Fatalf("PrepareSubstrait = %v, want InvalidArgument 42804", err)
					}
				}
			})
		}
	}
}

// walkRels calls f on rel and the relations under it, depth first, until f returns true.
func walkRels(rel *substraitpb.Rel, f func(*substraitpb.Rel) bool) bool {
	if rel == nil {
		return false
	}
	if f(rel) {
		return true
	}
	found := false
	proto.Message(rel).ProtoReflect().Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.Kind() == protoreflect.MessageKind && !fd.IsList() && !fd.IsMap() {
			if r, ok := v.Message().Interface().(*substraitpb.Rel); ok {
				found = walkRels(r, f)
			} else {
				found = walkInner(v.Message(), f)
			}
		}
		return !found
	})
	return found
}

// walkInner looks for relations inside a relation kind's message (a FilterRel's input).
func walkInner(m protoreflect.Message, f func(*substraitpb.Rel) bool) bool {
	found := false
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.Kind() == protoreflect.MessageKind && !fd.IsList() && !fd.IsMap() {
			if r, ok := v.Message().Interface().(*substraitpb.Rel); ok {
				found = walkRels(r, f)
			}
		}
		return !found
	})
	return found
}

// TestNegativeFetchRefused: a client plan's FetchRel with a negative offset or a count below
// -1 (Substrait's ALL) is PostgreSQL's 2201X or 2201W, InvalidArgument (trial 32 m1:
// UNIMPLEMENTED).
func TestNegativeFetchRefused(t *testing.T) {
	env := newFuzzEnv(t)
	p, err := substrait.FromSQL(`SELECT id FROM messages WHERE channel_id = 'g' AND timestamp >= '2026-01-01' AND timestamp < '2026-01-02' LIMIT 3 OFFSET 2`, env.cat)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		count, offset int64
		state         string
	}{{3, -7, "2201X"}, {-5, 2, "2201W"}, {-1, 0, ""}} {
		pb, err := p.ToProto()
		if err != nil {
			t.Fatal(err)
		}
		if !walkRels(pb.GetRelations()[0].GetRoot().GetInput(), func(rel *substraitpb.Rel) bool {
			f := rel.GetFetch()
			if f == nil {
				return false
			}
			f.CountMode = &substraitpb.FetchRel_Count{Count: c.count}
			f.OffsetMode = &substraitpb.FetchRel_Offset{Offset: c.offset}
			return true
		}) {
			t.Fatal("no FetchRel")
		}
		raw, err := proto.Marshal(pb)
		if err != nil {
			t.Fatal(err)
		}
		_, err = substrait.PrepareSubstrait(raw, env.cat, substrait.BindOptions{})
		var se *substrait.Error
		switch {
		case c.state == "" && err != nil:
			t.Fatalf("count %d offset %d: %v", c.count, c.offset, err)
		case c.state != "" && (!errors.As(err, &se) || se.SQLState != c.state || se.Code != substrait.InvalidArgument):
			t.Fatalf("count %d offset %d: %v, want InvalidArgument %s", c.count, c.offset, err, c.state)
		}
	}
}
