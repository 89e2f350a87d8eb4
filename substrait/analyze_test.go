package substrait

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/extensions"
	"github.com/substrait-io/substrait-go/v8/plan"
	"github.com/substrait-io/substrait-go/v8/types"
	"github.com/substrait-io/substrait-protobuf/go/substraitpb"
	"google.golang.org/protobuf/proto"

	"github.com/flightsrv/flightsrv/routing"
)

func marshalPlan(t *testing.T, p *plan.Plan) []byte {
	t.Helper()
	pb, err := p.ToProto()
	if err != nil {
		t.Fatal(err)
	}
	b, err := proto.Marshal(pb)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// clientPlan builds plans the way other producers do, with the substrait-go builder.
type clientPlan struct {
	b    plan.Builder
	read *plan.NamedTableReadRel
}

func newClientPlan(table string, tsType types.Type) *clientPlan {
	b := plan.NewBuilderDefault()
	schema := types.NamedStruct{
		Names: []string{"CHANNEL_ID", "timestamp", "id", "value"},
		Struct: types.StructType{Nullability: types.NullabilityRequired, Types: []types.Type{
			&types.StringType{Nullability: types.NullabilityNullable}, tsType,
			&types.StringType{Nullability: types.NullabilityNullable}, &types.BinaryType{Nullability: types.NullabilityNullable}}},
	}
	return &clientPlan{b: b, read: b.NamedScan([]string{table}, schema)}
}

func (c *clientPlan) ref(rel plan.Rel, i int32) *expr.FieldReference {
	r, err := c.b.RootFieldRef(rel, i)
	if err != nil {
		panic(err)
	}
	return r
}

func (c *clientPlan) fn(t *testing.T, urn, name string, args ...types.FuncArg) *expr.ScalarFunction {
	t.Helper()
	f, err := c.b.ScalarFn(urn, name, nil, args...)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return f
}

// must returns v, panicking on err (test set-up only).

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// clientRoute prepares a client plan (PrepareSubstrait) and returns its one read's route and
// its output names.
func clientRoute(t *testing.T, cat Catalog, p *plan.Plan) (Route, []string, error) {
	t.Helper()
	b, err := PrepareSubstrait(marshalPlan(t, p), cat, BindOptions{})
	if err != nil {
		return Route{}, nil, err
	}
	routes, err := Routes(b.Plan, cat, false)
	if err != nil || len(routes) != 1 {
		t.Fatalf("routes %v, %v", routes, err)
	}
	var names []string
	for _, f := range b.Schema.Fields() {
		names = append(names, f.Name)
	}
	for _, r := range routes {
		return r, names, nil
	}
	panic("unreachable")
}

// checkClientRoute requires the route of partition general over January 2026 and names.
func checkClientRoute(t *testing.T, r Route, names, want []string) {
	t.Helper()
	if len(r.Partitions) != 1 || string(r.Partitions[0]) != "general" || !r.Range.Start.Equal(jan1) || !r.Range.End.Equal(feb1) || !slices.Equal(names, want) {
		t.Errorf("route %q %v, names %v; want general, January 2026, %v", r.Partitions, r.Range, names, want)
	}
}

// TestClientPlanShapes: client-built plans (literals on the left, variadic and, emit
// mappings, aggregates, a ReadRel's own filter) are accepted by PrepareSubstrait with the
// route the SQL binder would give.
func TestClientPlanShapes(t *testing.T) {
	t.Parallel()
	cat := testCatalog(t)
	usTS := substraitTSType
	usLit := func(t time.Time) expr.Literal { return timestampLiteral(t.UnixNano()) }

	t.Run("literal left, microseconds, variadic and, emit", func(t *testing.T) {
		t.Parallel()
		c := newClientPlan("MESSAGES", usTS)
		cond := c.fn(t, URNBoolean, "and",
			c.fn(t, URNComparison, "equal", expr.NewPrimitiveLiteral("general", true), c.ref(c.read, 0)),
			c.fn(t, URNComparison, "lte", usLit(jan1), c.ref(c.read, 1)),
			c.fn(t, URNComparison, "gt", usLit(feb1), c.ref(c.read, 1)))
		filter := must(c.b.Filter(c.read, cond))
		sorts := must(c.b.SortFields(filter, 1, 2))
		for i := range sorts {
			sorts[i].Kind = types.SortDescNullsLast
		}
		sorted := must(c.b.Sort(filter, sorts...))
		proj := must(c.b.Project(sorted, c.ref(sorted, 2)))
		projected := must(proj.Remap(1, 4)) // timestamp, then the id expression
		fetch := must(c.b.Fetch(projected, 0, 7))
		p := must(c.b.Plan(fetch, []string{"ts", "msg"}))
		r, names, err := clientRoute(t, cat, p)
		if err != nil {
			t.Fatal(err)
		}
		checkClientRoute(t, r, names, []string{"ts", "msg"})
	})

	t.Run("aggregate with emit over measures", func(t *testing.T) {
		t.Parallel()
		c := newClientPlan("messages", usTS)
		cond := c.fn(t, URNBoolean, "and",
			c.fn(t, URNComparison, "gte", c.ref(c.read, 1), usLit(jan1)),
			c.fn(t, URNBoolean, "and",
				c.fn(t, URNComparison, "lt", c.ref(c.read, 1), usLit(feb1)),
				c.fn(t, URNComparison, "equal", c.ref(c.read, 0), expr.NewPrimitiveLiteral("general", false))))
		filter := must(c.b.Filter(c.read, cond))
		cnt := must(c.b.AggregateFn(URNAggregate, "count", nil))
		mx := must(c.b.AggregateFn(URNDatetime, "max", nil, c.ref(filter, 1)))
		agg := must(c.b.GetRelBuilder().AggregateRel(filter, []plan.AggRelMeasure{c.b.Measure(cnt, nil), c.b.Measure(mx, nil)}).Build())
		swapped := must(agg.Remap(1, 0))
		p := must(c.b.Plan(swapped, []string{"latest", "n"}))
		r, names, err := clientRoute(t, cat, p)
		if err != nil {
			t.Fatal(err)
		}
		checkClientRoute(t, r, names, []string{"latest", "n"})
	})

	t.Run("ReadRel filter", func(t *testing.T) {
		t.Parallel()
		canonical, err := FromSQL(`SELECT id, timestamp FROM messages`+routedWhere, cat)
		if err != nil {
			t.Fatal(err)
		}
		pb := must(canonical.ToProto())
		project := pb.Relations[0].GetRoot().GetInput().GetProject()
		filter := project.GetInput().GetFilter()
		read := proto.Clone(filter.GetInput()).(*substraitpb.Rel)
		read.GetRead().Filter = filter.GetCondition()
		project.Input = read
		b, err := PrepareSubstrait(must(proto.Marshal(pb)), cat, BindOptions{})
		if err != nil {
			t.Fatal(err)
		}
		r, names, err := clientRoute(t, cat, b.Plan)
		if err != nil {
			t.Fatal(err)
		}
		checkClientRoute(t, r, names, []string{"id", "timestamp"})
		// A projection mask of top-level columns (DataFusion's optimised plans) is a
		// projection above the read: the root's columns are the same.
		read.GetRead().Projection = &substraitpb.Expression_MaskExpression{Select: &substraitpb.Expression_MaskExpression_StructSelect{
			StructItems: []*substraitpb.Expression_MaskExpression_StructItem{{Field: 0}, {Field: 1}, {Field: 2}, {Field: 3}}}}
		b, err = PrepareSubstrait(must(proto.Marshal(pb)), cat, BindOptions{})
		if err != nil {
			t.Fatalf("projection mask: %v", err)
		}
		r, names, err = clientRoute(t, cat, b.Plan)
		if err != nil {
			t.Fatal(err)
		}
		checkClientRoute(t, r, names, []string{"id", "timestamp"})
		// A mask of nested fields is refused.
		read.GetRead().Projection.GetSelect().StructItems[0].Child = &substraitpb.Expression_MaskExpression_Select{}
		_, err = PrepareSubstrait(must(proto.Marshal(pb)), cat, BindOptions{})
		if err == nil || err.(*Error).Msg != "ReadRel projection masks of nested fields are not supported" {
			t.Errorf("nested projection mask: %v", err)
		}
	})
}

// TestClientPlanRefusals: PrepareSubstrait refuses a client plan missing its route (as SQL),
// relations the executor does not run, unknown tables, another base schema, undecodable bytes
// and several roots, each with its code and a value-free message; plans of the general shapes
// (residual OR, strict bounds, grouping, DISTINCT, FILTER, OFFSET, computed projections, other
// sorts, UNION ALL) are accepted.
func TestClientPlanRefusals(t *testing.T) {
	t.Parallel()
	cat := testCatalog(t)
	nsTS := substraitTSType
	lit := func(t time.Time) expr.Literal { return timestampLiteral(t.UnixNano()) }
	// routed returns the client plan's read relation filtered by the routed predicate.
	routed := func(t *testing.T, c *clientPlan) plan.Rel {
		cond := c.fn(t, URNBoolean, "and",
			c.fn(t, URNBoolean, "and",
				c.fn(t, URNComparison, "equal", c.ref(c.read, 0), expr.NewPrimitiveLiteral("general", false)),
				c.fn(t, URNComparison, "gte", c.ref(c.read, 1), lit(jan1))),
			c.fn(t, URNComparison, "lt", c.ref(c.read, 1), lit(feb1)))
		return must(c.b.Filter(c.read, cond))
	}
	names := []string{"channel_id", "timestamp", "id", "value"}
	tests := []struct {
		name  string
		build func(t *testing.T, c *clientPlan) (plan.Rel, []string)
		code  Code
		msg   string
		err   error
	}{
		{"OR predicate", func(t *testing.T, c *clientPlan) (plan.Rel, []string) {
			or := c.fn(t, URNBoolean, "or",
				c.fn(t, URNComparison, "equal", c.ref(c.read, 0), expr.NewPrimitiveLiteral("a", false)),
				c.fn(t, URNComparison, "equal", c.ref(c.read, 2), expr.NewPrimitiveLiteral("b", false)))
			return must(c.b.Filter(routed(t, c), or)), names
		}, 0, "", nil},
		{"OR chain of partition equalities is a partition set, intersected with the pin", func(t *testing.T, c *clientPlan) (plan.Rel, []string) {
			or := c.fn(t, URNBoolean, "or",
				c.fn(t, URNComparison, "equal", c.ref(c.read, 0), expr.NewPrimitiveLiteral("a", false)),
				c.fn(t, URNComparison, "equal", c.ref(c.read, 0), expr.NewPrimitiveLiteral("b", false)))
			return must(c.b.Filter(routed(t, c), or)), names
		}, 0, "", nil}, // an empty route: no rows
		{"strict lower bound", func(t *testing.T, c *clientPlan) (plan.Rel, []string) {
			gt := c.fn(t, URNComparison, "gt", c.ref(c.read, 1), lit(jan1))
			return must(c.b.Filter(routed(t, c), gt)), names
		}, 0, "", nil},
		{"non-literal bound", func(t *testing.T, c *clientPlan) (plan.Rel, []string) {
			f := c.fn(t, URNComparison, "gte", c.ref(c.read, 1), c.ref(c.read, 1))
			return must(c.b.Filter(c.read, f)), names
		}, InvalidArgument, needAll.Msg + notConstantBound, nil},
		{"second lower bound in a second FilterRel", func(t *testing.T, c *clientPlan) (plan.Rel, []string) {
			f := c.fn(t, URNComparison, "gte", c.ref(c.read, 1), lit(jan1))
			return must(c.b.Filter(routed(t, c), f)), names
		}, 0, "", nil},
		{"no filter", func(t *testing.T, c *clientPlan) (plan.Rel, []string) {
			return c.read, names
		}, InvalidArgument, needAll.Msg, nil},
		{"cross join", func(t *testing.T, c *clientPlan) (plan.Rel, []string) {
			r := routed(t, c)
			return must(c.b.Cross(r, r)), append(append([]string(nil), names...), names...)
		}, Unimplemented, "CrossRel is not supported", nil},
		{"union", func(t *testing.T, c *clientPlan) (plan.Rel, []string) {
			r := routed(t, c)
			return must(c.b.Set(plan.SetOpUnionAll, r, r)), names
		}, 0, "", nil},
		{"group by", func(t *testing.T, c *clientPlan) (plan.Rel, []string) {
			r := routed(t, c)
			cnt := must(c.b.AggregateFn(URNAggregate, "count", nil))
			return must(c.b.AggregateColumns(r, []plan.AggRelMeasure{c.b.Measure(cnt, nil)}, 2)), []string{"id", "count"}
		}, 0, "", nil},
		{"count distinct", func(t *testing.T, c *clientPlan) (plan.Rel, []string) {
			r := routed(t, c)
			f := must(expr.NewAggregateFunc(c.b.GetExprBuilder().Reg, extensions.ID{URN: URNAggregate, Name: "count:any"}, nil,
				types.AggInvocationDistinct, types.AggPhaseInitialToResult, nil, c.ref(r, 2)))
			return must(c.b.GetRelBuilder().AggregateRel(r, []plan.AggRelMeasure{c.b.Measure(f, nil)}).Build()), []string{"count"}
		}, 0, "", nil},
		{"aggregate filter", func(t *testing.T, c *clientPlan) (plan.Rel, []string) {
			r := routed(t, c)
			cnt := must(c.b.AggregateFn(URNAggregate, "count", nil))
			cond := c.fn(t, URNComparison, "equal", c.ref(r, 2), expr.NewPrimitiveLiteral("x", false))
			return must(c.b.GetRelBuilder().AggregateRel(r, []plan.AggRelMeasure{c.b.Measure(cnt, cond)}).Build()), []string{"count"}
		}, 0, "", nil},
		{"offset", func(t *testing.T, c *clientPlan) (plan.Rel, []string) {
			return must(c.b.Fetch(routed(t, c), 5, 10)), names
		}, 0, "", nil},
		{"computed projection", func(t *testing.T, c *clientPlan) (plan.Rel, []string) {
			r := routed(t, c)
			e := c.fn(t, URNComparison, "equal", c.ref(r, 2), c.ref(r, 0))
			p := must(c.b.Project(r, e))
			return must(p.Remap(4)), []string{"same"}
		}, 0, "", nil},
		{"sort on id", func(t *testing.T, c *clientPlan) (plan.Rel, []string) {
			r := routed(t, c)
			return must(c.b.Sort(r, must(c.b.SortFields(r, 2))...)), names
		}, 0, "", nil},
		{"filter above fetch", func(t *testing.T, c *clientPlan) (plan.Rel, []string) {
			f := must(c.b.Fetch(routed(t, c), 0, 10))
			return must(c.b.Filter(f, c.fn(t, URNComparison, "equal", c.ref(f, 2), expr.NewPrimitiveLiteral("x", false)))), names
		}, 0, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := newClientPlan("messages", nsTS)
			rel, rootNames := tt.build(t, c)
			p := must(c.b.Plan(rel, rootNames))
			_, err := PrepareSubstrait(marshalPlan(t, p), cat, BindOptions{})
			if tt.code == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) || e.Code != tt.code || e.Msg != tt.msg {
				t.Fatalf("got %v, want %v %q", err, tt.code, tt.msg)
			}
		})
	}

	t.Run("unknown table", func(t *testing.T) {
		t.Parallel()
		c := newClientPlan("nosuch", nsTS)
		p := must(c.b.Plan(c.read, names))
		if _, err := PrepareSubstrait(marshalPlan(t, p), cat, BindOptions{}); err == nil || err.(*Error).Code != NotFound {
			t.Fatalf("got %v, want NotFound", err)
		}
	})
	t.Run("base schema mismatch", func(t *testing.T) {
		t.Parallel()
		c := newClientPlan("messages", &types.Int64Type{})
		p := must(c.b.Plan(c.read, names))
		_, err := PrepareSubstrait(marshalPlan(t, p), cat, BindOptions{})
		if err == nil || err.(*Error).Msg != `ReadRel base schema of table "messages" is not compatible with the table: column timestamp is i64; the plan declares (CHANNEL_ID string, timestamp i64, id string, value binary), the table is (channel_id string NOT NULL, timestamp precision_timestamp_tz<9> NOT NULL (timestamp with time zone; any timestamp of precision up to 9 is accepted), id string NOT NULL, value binary NOT NULL)` {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("undecodable bytes", func(t *testing.T) {
		t.Parallel()
		if _, err := PrepareSubstrait([]byte{0xff, 0x01, 0x02}, cat, BindOptions{}); !errors.Is(err, ErrInvalidPlan) {
			t.Fatalf("got %v, want ErrInvalidPlan", err)
		}
	})
	t.Run("pre-1970 literal does not panic", func(t *testing.T) {
		t.Parallel()
		// substrait-go v8.1.1 decodes negative precision timestamp literals as nil; the
		// plan must be refused, not crash the server.
		p, err := FromSQL(`SELECT * FROM messages WHERE channel_id = 'g' AND timestamp >= '1960-01-01' AND timestamp < '2026-01-01'`, cat)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := PrepareSubstrait(marshalPlan(t, p), cat, BindOptions{}); err == nil {
			t.Fatal("pre-1970 literal accepted after a protobuf round trip")
		}
	})
	t.Run("several roots", func(t *testing.T) {
		t.Parallel()
		c := newClientPlan("messages", nsTS)
		r := routed(t, c)
		p := must(c.b.Plan(r, names))
		pb := must(p.ToProto())
		pb.Relations = append(pb.Relations, pb.Relations[0])
		_, err := PrepareSubstrait(must(proto.Marshal(pb)), cat, BindOptions{})
		if err == nil || err.(*Error).Msg != "a plan without exactly one root relation is not supported" {
			t.Fatalf("got %v", err)
		}
	})
	_ = routing.TimeRange{}
}
