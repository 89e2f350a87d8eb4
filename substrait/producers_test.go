package substrait

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/plan"
	"github.com/substrait-io/substrait-go/v8/types"
	"github.com/substrait-io/substrait-protobuf/go/substraitpb"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

func TestURNOfURI(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		uri, urn string
		ok       bool
	}{
		{"https://github.com/substrait-io/substrait/blob/main/extensions/functions_arithmetic.yaml", URNArithmetic, true},
		{"/functions_comparison.yaml", URNComparison, true},
		{"file:///opt/substrait/extensions/functions_aggregate_generic.yaml", URNAggregate, true},
		{ownExtensionURI, URNPostgres, true},
		{"https://example.com/extensions/functions_mine.yaml", "", false},
		{"https://github.com/substrait-io/substrait/blob/main/extensions/functions_arithmetic", "", false},
		{"", "", false},
	} {
		urn, ok := URNOfURI(tt.uri)
		if urn != tt.urn || ok != tt.ok {
			t.Errorf("URNOfURI(%q) = %q, %v; want %q, %v", tt.uri, urn, ok, tt.urn, tt.ok)
		}
	}
}

// producerPlan is a routed COUNT(*) and COUNT(id) over messages (January 2026, partition
// general, the route written as a producer may: an OR chain of one partition and a between of
// cast string literals) with its protobuf, for the tests to rewrite as producers write it.
func producerPlan(t *testing.T, tsType types.Type) *substraitpb.Plan {
	t.Helper()
	c := newClientPlan("messages", tsType)
	castTS := func(s string) expr.Expression {
		return &expr.Cast{Type: tsType.WithNullability(types.NullabilityRequired), Input: expr.NewPrimitiveLiteral(s, false), FailureBehavior: types.BehaviorThrowException}
	}
	cond := c.fn(t, URNBoolean, "and",
		c.fn(t, URNBoolean, "or", c.fn(t, URNComparison, "equal", c.ref(c.read, 0), expr.NewPrimitiveLiteral("general", false))),
		c.fn(t, URNComparison, "between", c.ref(c.read, 1), castTS("2026-01-01 00:00:00"), castTS("2026-01-31 23:59:59.999999999")))
	f := must(c.b.Filter(c.read, cond))
	countStar := must(c.b.AggregateFn(URNAggregate, "count", nil))
	countID := must(c.b.AggregateFn(URNAggregate, "count:any", nil, c.ref(f, 2)))
	agg := must(c.b.AggregateColumns(f, []plan.AggRelMeasure{c.b.Measure(countStar, nil), c.b.Measure(countID, nil)}))
	pb, err := must(c.b.Plan(agg, []string{"n", "m"})).ToProto()
	if err != nil {
		t.Fatal(err)
	}
	return pb
}

func prepareProto(t *testing.T, pb *substraitpb.Plan) (*Bound, error) {
	t.Helper()
	b, err := proto.Marshal(pb)
	if err != nil {
		t.Fatal(err)
	}
	return PrepareSubstrait(b, testCatalog(t), BindOptions{})
}

// checkProducerRoute requires general over [2026-01-01, 2026-02-01) and two count measures
// with their declarations.
func checkProducerRoute(t *testing.T, b *Bound) {
	t.Helper()
	if len(b.Routes) != 1 || len(b.Routes[0].Partitions) != 1 || string(b.Routes[0].Partitions[0]) != "general" ||
		!b.Routes[0].Range.Start.Equal(jan1) || !b.Routes[0].Range.End.Equal(feb1) {
		t.Fatalf("routes %+v, want general over January 2026", b.Routes)
	}
	agg, ok := b.Plan.GetRoots()[0].Input().(*plan.AggregateRel)
	if !ok {
		t.Fatalf("root %T", b.Plan.GetRoots()[0].Input())
	}
	for i, m := range agg.Measures() {
		if !HasDeclaration(m.Measure()) || m.Measure().Name() != "count" || m.Measure().NArgs() != i {
			t.Fatalf("measure %d: declared %v", i, HasDeclaration(m.Measure()))
		}
	}
}

func TestProducerEncodings(t *testing.T) {
	t.Parallel()
	nsTS := &types.PrecisionTimestampTzType{PrecisionTimestampType: types.PrecisionTimestampType{Precision: types.PrecisionNanoSeconds, Nullability: types.NullabilityNullable}}
	usTS := &types.PrecisionTimestampType{Precision: types.PrecisionMicroSeconds, Nullability: types.NullabilityRequired}

	t.Run("as built", func(t *testing.T) {
		t.Parallel()
		b, err := prepareProto(t, producerPlan(t, nsTS))
		if err != nil {
			t.Fatal(err)
		}
		checkProducerRoute(t, b)
	})
	t.Run("DataFusion: unresolvable URN reference, simple names, no aggregate output types", func(t *testing.T) {
		t.Parallel()
		pb := producerPlan(t, nsTS)
		pb.ExtensionUrns = nil
		for _, d := range pb.Extensions {
			f := d.GetExtensionFunction()
			f.ExtensionUrnReference = NoExtensionReference
			f.Name, _, _ = strings.Cut(f.Name, ":")
		}
		// Both counts on one anchor, as a producer declaring "count" once writes them.
		var anchor uint32
		for _, m := range pb.Relations[0].GetRoot().GetInput().GetAggregate().GetMeasures() {
			if anchor == 0 {
				anchor = m.Measure.FunctionReference
			}
			m.Measure.FunctionReference = anchor
			m.Measure.OutputType = nil
		}
		b, err := prepareProto(t, pb)
		if err != nil {
			t.Fatal(err)
		}
		checkProducerRoute(t, b)
		if got := b.Schema.Field(0).Type.String(); got != "int64" {
			t.Errorf("count's type %s, want int64", got)
		}
	})
	t.Run("ibis-substrait: extension URIs in unknown fields, µs zone-less base schema", func(t *testing.T) {
		t.Parallel()
		pb := producerPlan(t, usTS)
		var raw []byte
		for _, u := range pb.ExtensionUrns {
			var msg []byte
			msg = protowire.AppendTag(msg, 1, protowire.VarintType)
			msg = protowire.AppendVarint(msg, uint64(u.ExtensionUrnAnchor)+10)
			msg = protowire.AppendTag(msg, 2, protowire.BytesType)
			msg = protowire.AppendString(msg, "https://github.com/substrait-io/substrait/blob/main/extensions/"+strings.TrimPrefix(u.Urn, "extension:io.substrait:")+".yaml")
			raw = protowire.AppendTag(raw, 1, protowire.BytesType)
			raw = protowire.AppendBytes(raw, msg)
		}
		pb.ProtoReflect().SetUnknown(raw)
		for _, d := range pb.Extensions {
			f := d.GetExtensionFunction()
			var ref []byte
			ref = protowire.AppendTag(ref, 1, protowire.VarintType)
			ref = protowire.AppendVarint(ref, uint64(f.ExtensionUrnReference)+10)
			f.ProtoReflect().SetUnknown(ref)
			f.ExtensionUrnReference = 0
		}
		pb.ExtensionUrns = nil
		b, err := prepareProto(t, pb)
		if err != nil {
			t.Fatal(err)
		}
		checkProducerRoute(t, b)
		read := b.Plan.GetRoots()[0].Input().GetInputs()[0].GetInputs()[0].(*plan.NamedTableReadRel)
		if got := read.BaseSchema().Struct.Types[1]; !got.Equals(substraitTSType) || read.BaseSchema().Names[0] != "channel_id" {
			t.Errorf("base schema %v, want the table's (timestamp %v)", read.BaseSchema(), substraitTSType)
		}
	})
	t.Run("a function no extension has", func(t *testing.T) {
		t.Parallel()
		pb := producerPlan(t, nsTS)
		pb.ExtensionUrns = nil
		for _, d := range pb.Extensions {
			f := d.GetExtensionFunction()
			f.ExtensionUrnReference = NoExtensionReference
			if strings.HasPrefix(f.Name, "between") {
				f.Name = "betwixt"
			}
		}
		_, err := prepareProto(t, pb)
		var e *Error
		if !errors.As(err, &e) || e.Code != Unimplemented || !strings.Contains(e.Msg, `function "betwixt" (extension function anchor`) {
			t.Fatalf("got %v, want Unimplemented naming betwixt", err)
		}
	})
	t.Run("undecodable bytes say why", func(t *testing.T) {
		t.Parallel()
		_, err := PrepareSubstrait([]byte{0x0a, 0x80}, testCatalog(t), BindOptions{})
		if !errors.Is(err, ErrInvalidPlan) || !strings.Contains(err.Error(), "invalid Substrait plan: the bytes are not a serialized substrait.Plan message (invalid protobuf wire format") {
			t.Fatalf("got %v", err)
		}
	})
}

// TestProducerRouteForms: the route is read in the forms producers write it, with the
// partition set and range the SQL binder would give; what is not a route stays residual.
func TestProducerRouteForms(t *testing.T) {
	t.Parallel()
	cat := testCatalog(t)
	nsTS := &types.PrecisionTimestampTzType{PrecisionTimestampType: types.PrecisionTimestampType{Precision: types.PrecisionNanoSeconds, Nullability: types.NullabilityNullable}}
	str := func(s string) expr.Expression { return expr.NewPrimitiveLiteral(s, false) }
	castStr := func(s string) expr.Expression {
		return &expr.Cast{Type: &types.VarCharType{Length: 10, Nullability: types.NullabilityRequired}, Input: must(expr.NewLiteral(types.FixedChar(s), false)), FailureBehavior: types.BehaviorThrowException}
	}
	lit := func(tm time.Time) expr.Expression { return timestampLiteral(tm.UnixNano()) }
	for _, tt := range []struct {
		name  string
		build func(t *testing.T, c *clientPlan) plan.Rel
		parts []string
	}{{
		name: "OR chain and SingularOrList of cast char literals, intersected",
		build: func(t *testing.T, c *clientPlan) plan.Rel {
			return must(c.b.Filter(c.read, c.fn(t, URNBoolean, "and",
				c.fn(t, URNBoolean, "or",
					c.fn(t, URNComparison, "equal", c.ref(c.read, 0), str("general")),
					c.fn(t, URNComparison, "equal", str("random"), c.ref(c.read, 0)),
					c.fn(t, URNComparison, "equal", c.ref(c.read, 0), str("other"))),
				&expr.SingularOrList{Value: c.ref(c.read, 0), Options: []expr.Expression{castStr("general"), castStr("random")}},
				c.fn(t, URNComparison, "gte", c.ref(c.read, 1), lit(jan1)),
				c.fn(t, URNComparison, "lt", c.ref(c.read, 1), lit(feb1)))))
		},
		parts: []string{"general", "random"},
	}, {
		name: "bounds in nested conjunctions of a filter above a projection, between",
		build: func(t *testing.T, c *clientPlan) plan.Rel {
			inner := must(c.b.Filter(c.read, c.fn(t, URNComparison, "equal", c.ref(c.read, 0), str("general"))))
			// The projection swaps the columns: timestamp first, then channel_id, then a
			// computed column.
			proj := must(c.b.Project(inner, c.ref(inner, 1), c.ref(inner, 0), c.fn(t, URNComparison, "equal", c.ref(inner, 2), str("x"))))
			projected := must(proj.Remap(4, 5, 6))
			return must(c.b.Filter(projected, c.fn(t, URNBoolean, "and",
				c.fn(t, URNBoolean, "and", c.fn(t, URNComparison, "between", c.ref(projected, 0), lit(jan1), lit(feb1.Add(-time.Nanosecond)))),
				c.ref(projected, 2))))
		},
		parts: []string{"general"},
	}} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := newClientPlan("messages", nsTS)
			rel := tt.build(t, c)
			names := []string{"a", "b", "c", "d"}[:len(rel.RecordType().Types())]
			p := must(c.b.Plan(rel, names))
			b, err := PrepareSubstrait(marshalPlan(t, p), cat, BindOptions{})
			if err != nil {
				t.Fatal(err)
			}
			r := b.Routes[0]
			var got []string
			for _, p := range r.Partitions {
				got = append(got, string(p))
			}
			if strings.Join(got, ",") != strings.Join(tt.parts, ",") || !r.Range.Start.Equal(jan1) || !r.Range.End.Equal(feb1) {
				t.Fatalf("route %q %v, want %q over January 2026", got, r.Range, tt.parts)
			}
		})
	}
	t.Run("a bound under an OR is residual", func(t *testing.T) {
		t.Parallel()
		c := newClientPlan("messages", nsTS)
		f := must(c.b.Filter(c.read, c.fn(t, URNBoolean, "and",
			c.fn(t, URNComparison, "equal", c.ref(c.read, 0), str("general")),
			c.fn(t, URNBoolean, "or", c.fn(t, URNComparison, "gte", c.ref(c.read, 1), lit(jan1)), c.fn(t, URNComparison, "equal", c.ref(c.read, 2), str("x"))),
			c.fn(t, URNComparison, "lt", c.ref(c.read, 1), lit(feb1)))))
		_, err := PrepareSubstrait(marshalPlan(t, must(c.b.Plan(f, []string{"a", "b", "c", "d"}))), cat, BindOptions{})
		if err == nil || !strings.Contains(err.Error(), "messages needs timestamp >= <start>") {
			t.Fatalf("got %v, want the missing lower bound", err)
		}
	})
}
