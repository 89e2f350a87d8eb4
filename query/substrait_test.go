package query_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/extensions"
	"github.com/substrait-io/substrait-go/v8/plan"
	"github.com/substrait-io/substrait-go/v8/types"
	"github.com/substrait-io/substrait-protobuf/go/substraitpb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/flightsrv/flightsrv/internal/session"
	"github.com/flightsrv/flightsrv/query"
	"github.com/flightsrv/flightsrv/substrait"
)

// Client Substrait plans built here with substrait-go's plan builder and the standard
// extension functions only (as a client's producer writes them, not by flightsrv's binder):
// the routed predicate sits anywhere in a filter's conjunction, with residual filters around
// it, under projections with expressions, grouped aggregates, sorts, fetches and set
// operations. Each answer must equal the SQL statement's answer, pushdown on and off.

// The standard extensions' URNs (substrait-go's default collection).
var (
	urnComparison = substrait.URNComparison
	urnBoolean    = substrait.URNBoolean
	urnAggregate  = substrait.URNAggregate
	urnString     = substrait.URNString
	urnDatetime   = substrait.URNDatetime
)

// planMaker builds one client plan over the messages table.
type planMaker struct {
	t *testing.T
	b plan.Builder
}

func newPlanMaker(t *testing.T) *planMaker {
	return &planMaker{t: t, b: plan.NewBuilderDefault()}
}

func (m *planMaker) must(err error) {
	m.t.Helper()
	if err != nil {
		m.t.Fatal(err)
	}
}

// read is a ReadRel of messages with the table's base schema; tsPrecision is the timestamp
// column's declared precision (the table's is nanoseconds).
func (m *planMaker) read(tsPrecision types.TimePrecision) *plan.NamedTableReadRel {
	req := types.NullabilityRequired
	return m.b.NamedScan([]string{"messages"}, types.NamedStruct{
		Names: []string{"channel_id", "timestamp", "id", "value"},
		Struct: types.StructType{Nullability: req, Types: []types.Type{
			&types.StringType{Nullability: req},
			&types.PrecisionTimestampTzType{PrecisionTimestampType: types.PrecisionTimestampType{Precision: tsPrecision, Nullability: req}},
			&types.StringType{Nullability: req},
			&types.BinaryType{Nullability: req},
		}},
	})
}

func (m *planMaker) ref(rel plan.Rel, i int32) *expr.FieldReference {
	m.t.Helper()
	r, err := m.b.RootFieldRef(rel, i)
	m.must(err)
	return r
}

func (m *planMaker) fn(urn, name string, args ...types.FuncArg) *expr.ScalarFunction {
	m.t.Helper()
	f, err := m.b.ScalarFn(urn, name, nil, args...)
	m.must(err)
	return f
}

func (m *planMaker) and(args ...expr.Expression) expr.Expression {
	m.t.Helper()
	e := args[0]
	for _, a := range args[1:] {
		e = m.fn(urnBoolean, "and", e, a)
	}
	return e
}

func tsLit(t time.Time) expr.Expression {
	return expr.NewPrecisionTimestampTzLiteral(t.UnixNano(), types.PrecisionNanoSeconds, types.NullabilityRequired)
}

func strLit(s string) expr.Expression { return expr.NewPrimitiveLiteral(s, false) }

func (m *planMaker) bytes(root plan.Rel, names ...string) []byte {
	m.t.Helper()
	p, err := m.b.Plan(root, names)
	m.must(err)
	pb, err := p.ToProto()
	m.must(err)
	b, err := proto.Marshal(pb)
	m.must(err)
	return b
}

func TestClientSubstraitPlans(t *testing.T) {
	t.Parallel()
	f := buildEngFixture(t, "mixed", true)
	alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
	on, off := f.engines(t, alloc, nil)
	lo, hi := engDay0.AddDate(0, 0, 2), engDay0.AddDate(0, 0, 30)
	rangeSQL := fmt.Sprintf("timestamp >= %s AND timestamp < %s", engLit(lo), engLit(hi))

	cases := []struct {
		name string
		plan func(m *planMaker) []byte
		sql  string
	}{{
		name: "route in the middle of the conjunction, grouped aggregate, sort",
		plan: func(m *planMaker) []byte {
			read := m.read(types.PrecisionNanoSeconds)
			cond := m.and(
				m.fn(urnComparison, "gte", m.ref(read, 1), tsLit(lo)),
				m.fn(urnComparison, "not_equal", m.ref(read, 2), strLit("k00003")),
				&expr.SingularOrList{Value: m.ref(read, 0), Options: []expr.Expression{strLit("random"), strLit("general")}},
				m.fn(urnComparison, "lt", m.ref(read, 1), tsLit(hi)),
			)
			filter, err := m.b.Filter(read, cond)
			m.must(err)
			count, err := m.b.AggregateFn(urnAggregate, "count", nil)
			m.must(err)
			maxTS, err := m.b.AggregateFn(urnDatetime, "max", nil, m.ref(filter, 1))
			m.must(err)
			agg, err := m.b.AggregateColumns(filter, []plan.AggRelMeasure{m.b.Measure(count, nil), m.b.Measure(maxTS, nil)}, 0)
			m.must(err)
			sorts, err := m.b.SortFields(agg, 0)
			m.must(err)
			sorted, err := m.b.Sort(agg, sorts...)
			m.must(err)
			return m.bytes(sorted, "channel_id", "n", "last")
		},
		sql: "SELECT channel_id, count(*) AS n, max(timestamp) AS last FROM messages WHERE " + rangeSQL +
			" AND id <> 'k00003' AND channel_id IN ('general', 'random') GROUP BY 1 ORDER BY 1",
	}, {
		name: "the read's own filter, a projection with an expression, sort, fetch with offset",
		plan: func(m *planMaker) []byte {
			read := m.read(types.PrecisionNanoSeconds)
			// The condition goes into the ReadRel's own filter (moved there in the protobuf
			// below: substrait-go's builder has no setter for it).
			filter, err := m.b.Filter(read, m.and(
				m.fn(urnComparison, "lt", m.ref(read, 1), tsLit(hi)),
				m.fn(urnComparison, "equal", strLit("general"), m.ref(read, 0)),
				m.fn(urnComparison, "lte", tsLit(lo), m.ref(read, 1)),
			))
			m.must(err)
			sorted, err := m.b.Sort(filter,
				expr.SortField{Expr: m.ref(read, 1), Kind: types.SortDescNullsLast},
				expr.SortField{Expr: m.ref(read, 2), Kind: types.SortDescNullsLast})
			m.must(err)
			proj, err := m.b.ProjectRemap(sorted, []int32{2, 4},
				m.fn(urnString, "concat:str", m.ref(sorted, 0), strLit("/"), m.ref(sorted, 2)))
			m.must(err)
			fetch, err := m.b.Fetch(proj, 2, 7)
			m.must(err)
			var pb substraitpb.Plan
			m.must(proto.Unmarshal(m.bytes(fetch, "id", "label"), &pb))
			sort := pb.GetRelations()[0].GetRoot().GetInput().GetFetch().GetInput().GetProject().GetInput().GetSort()
			f := sort.GetInput().GetFilter()
			r := f.GetInput().GetRead()
			r.Filter = f.GetCondition()
			sort.Input = &substraitpb.Rel{RelType: &substraitpb.Rel_Read{Read: r}}
			out, err := proto.Marshal(&pb)
			m.must(err)
			return out
		},
		sql: "SELECT id, channel_id || '/' || id AS label FROM messages WHERE channel_id = 'general' AND " + rangeSQL +
			" ORDER BY timestamp DESC, id DESC LIMIT 7 OFFSET 2",
	}, {
		name: "UNION ALL of two routed reads under an aggregate",
		plan: func(m *planMaker) []byte {
			side := func(channel string) plan.Rel {
				read := m.read(types.PrecisionNanoSeconds)
				filter, err := m.b.Filter(read, m.and(
					m.fn(urnComparison, "equal", m.ref(read, 0), strLit(channel)),
					m.fn(urnComparison, "gte", m.ref(read, 1), tsLit(lo)),
					m.fn(urnComparison, "lt", m.ref(read, 1), tsLit(hi))))
				m.must(err)
				proj, err := m.b.ProjectRemap(filter, []int32{2}, m.ref(filter, 2))
				m.must(err)
				return proj
			}
			set, err := m.b.Set(plan.SetOpUnionAll, side("general"), side("random"))
			m.must(err)
			count, err := m.b.AggregateFn(urnAggregate, "count", nil)
			m.must(err)
			agg, err := m.b.AggregateColumns(set, []plan.AggRelMeasure{m.b.Measure(count, nil)})
			m.must(err)
			return m.bytes(agg, "n")
		},
		sql: "SELECT count(*) AS n FROM (SELECT id FROM messages WHERE channel_id = 'general' AND " + rangeSQL +
			" UNION ALL SELECT id FROM messages WHERE channel_id = 'random' AND " + rangeSQL + ") u",
	}, {
		// substrait-go decodes no ConsistentPartitionWindowRel: it is read as the ProjectRel of
		// WindowFunctions it stands for.
		name: "a ConsistentPartitionWindowRel: row_number and a sliding count per channel",
		plan: func(m *planMaker) []byte {
			read := m.read(types.PrecisionNanoSeconds)
			filter, err := m.b.Filter(read, m.and(
				&expr.SingularOrList{Value: m.ref(read, 0), Options: []expr.Expression{strLit("random"), strLit("general")}},
				m.fn(urnComparison, "gte", m.ref(read, 1), tsLit(lo)),
				m.fn(urnComparison, "lt", m.ref(read, 1), tsLit(hi))))
			m.must(err)
			reg := m.b.GetExprBuilder().Reg
			rn, err := expr.NewWindowFunc(reg, extensions.ID{URN: substrait.URNArithmetic, Name: "row_number"}, nil, types.AggInvocationAll, types.AggPhaseInitialToResult)
			m.must(err)
			cnt, err := expr.NewWindowFunc(reg, extensions.ID{URN: urnAggregate, Name: "count"}, nil, types.AggInvocationAll, types.AggPhaseInitialToResult)
			m.must(err)
			for _, w := range []*expr.WindowFunction{rn, cnt} {
				w.Partitions = []expr.Expression{m.ref(filter, 0)}
				w.Sorts = []expr.SortField{{Expr: m.ref(filter, 1), Kind: types.SortAscNullsLast}, {Expr: m.ref(filter, 2), Kind: types.SortAscNullsLast}}
				w.BoundsType, w.LowerBound, w.UpperBound = types.BoundsTypeRows, expr.Unbounded{}, expr.CurrentRow{}
			}
			cnt.LowerBound = expr.PrecedingBound(2)
			proj, err := m.b.ProjectRemap(filter, []int32{0, 2, 4, 5}, rn, cnt)
			m.must(err)
			sorts, err := m.b.SortFields(proj, 0, 1)
			m.must(err)
			sorted, err := m.b.Sort(proj, sorts...)
			m.must(err)
			var pb substraitpb.Plan
			m.must(proto.Unmarshal(m.bytes(sorted, "channel_id", "id", "rn", "n"), &pb))
			rel := pb.GetRelations()[0].GetRoot().GetInput().GetSort().GetInput()
			p := rel.GetProject()
			w := &substraitpb.ConsistentPartitionWindowRel{Common: p.GetCommon(), Input: p.GetInput()}
			for _, e := range p.GetExpressions() {
				f := e.GetWindowFunction()
				w.PartitionExpressions, w.Sorts = f.GetPartitions(), f.GetSorts()
				w.WindowFunctions = append(w.WindowFunctions, &substraitpb.ConsistentPartitionWindowRel_WindowRelFunction{
					FunctionReference: f.GetFunctionReference(), Arguments: f.GetArguments(), OutputType: f.GetOutputType(),
					Phase: f.GetPhase(), Invocation: f.GetInvocation(), LowerBound: f.GetLowerBound(), UpperBound: f.GetUpperBound(), BoundsType: f.GetBoundsType(),
				})
			}
			rel.RelType = &substraitpb.Rel_Window{Window: w}
			b, err := proto.Marshal(&pb)
			m.must(err)
			return b
		},
		sql: "SELECT channel_id, id, row_number() OVER w AS rn, count(*) OVER (w ROWS 2 PRECEDING) AS n FROM messages WHERE " + rangeSQL +
			" AND channel_id IN ('general', 'random') WINDOW w AS (PARTITION BY channel_id ORDER BY timestamp, id) ORDER BY 1, 2",
	}, {
		// A JoinRel as DataFusion and isthmus send one: both reads' routes written in a
		// FilterRel over the join's output, pushed into each side before routing.
		name: "a JoinRel of two routed reads, routes filtered above the join",
		plan: func(m *planMaker) []byte {
			l, r := m.read(types.PrecisionNanoSeconds), m.read(types.PrecisionNanoSeconds)
			jref := func(i int32) expr.Expression {
				ref, err := m.b.JoinedRecordFieldRef(l, r, i)
				m.must(err)
				return ref
			}
			join, err := m.b.Join(l, r, m.and(
				m.fn(urnComparison, "equal", jref(2), jref(6)),
				m.fn(urnComparison, "lt", jref(1), jref(5))), plan.JoinTypeInner)
			m.must(err)
			filter, err := m.b.Filter(join, m.and(
				m.fn(urnComparison, "equal", m.ref(join, 0), strLit("general")),
				m.fn(urnComparison, "gte", m.ref(join, 1), tsLit(lo)),
				m.fn(urnComparison, "lt", m.ref(join, 1), tsLit(hi)),
				m.fn(urnComparison, "equal", m.ref(join, 4), strLit("random")),
				m.fn(urnComparison, "gte", m.ref(join, 5), tsLit(lo)),
				m.fn(urnComparison, "lt", m.ref(join, 5), tsLit(hi))))
			m.must(err)
			count, err := m.b.AggregateFn(urnAggregate, "count", nil)
			m.must(err)
			agg, err := m.b.AggregateColumns(filter, []plan.AggRelMeasure{m.b.Measure(count, nil)})
			m.must(err)
			return m.bytes(agg, "n")
		},
		sql: "SELECT count(*) AS n FROM messages a JOIN messages b ON a.id = b.id AND a.timestamp < b.timestamp WHERE a.channel_id = 'general' AND b.channel_id = 'random' AND " +
			strings.ReplaceAll(rangeSQL, "timestamp", "a.timestamp") + " AND " + strings.ReplaceAll(rangeSQL, "timestamp", "b.timestamp"),
	}}
	for _, c := range cases {
		planBytes := c.plan(newPlanMaker(t))
		want, err := engRun(t, on, alloc, c.sql, nil)
		if err != nil {
			t.Fatalf("%s: SQL: %v", c.name, err)
		}
		if len(want.rows) == 0 {
			t.Fatalf("%s: the SQL answer is empty: a weak check", c.name)
		}
		data, params, err := on.Prepare(context.Background(), "", planBytes)
		if err != nil || params.NumFields() != 0 || !sameFields(data, want.schema) {
			t.Fatalf("%s: Prepare(plan) = %v, %v, %v; SQL schema %v", c.name, data, params, err, want.schema)
		}
		for name, e := range map[string]*query.Engine{"pushdown on": on, "pushdown off": off} {
			got, err := engRunPlan(t, e, alloc, "", planBytes, nil)
			if err != nil {
				t.Fatalf("%s (%s): %v", c.name, name, err)
			}
			engSameRows(t, c.name+" ("+name+")", got.rows, want.rows)
		}
	}

	// An analytical plan: no partition pin, refused outside the analytical mode.
	m := newPlanMaker(t)
	read := m.read(types.PrecisionNanoSeconds)
	filter, err := m.b.Filter(read, m.and(
		m.fn(urnComparison, "gte", m.ref(read, 1), tsLit(lo)),
		m.fn(urnComparison, "lt", m.ref(read, 1), tsLit(hi))))
	m.must(err)
	count, err := m.b.AggregateFn(urnAggregate, "count", nil)
	m.must(err)
	agg, err := m.b.AggregateColumns(filter, []plan.AggRelMeasure{m.b.Measure(count, nil)}, 0)
	m.must(err)
	sorts, err := m.b.SortFields(agg, 0)
	m.must(err)
	sorted, err := m.b.Sort(agg, sorts...)
	m.must(err)
	analyticalPlan := m.bytes(sorted, "channel_id", "n")
	_, err = engRunPlan(t, on, alloc, "", analyticalPlan, nil)
	if st, _ := status.FromError(wire(err)); st.Code() != codes.InvalidArgument || !strings.Contains(st.Message(), "messages needs channel_id = <value>") {
		t.Fatalf("analytical plan outside the mode: %v", err)
	}
	ctx := session.With(context.Background(), session.Settings{Analytical: true})
	want, err := engRunCtx(ctx, t, on, alloc, "SELECT channel_id, count(*) AS n FROM messages WHERE "+rangeSQL+" GROUP BY 1 ORDER BY 1", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := engRunCtx(ctx, t, off, alloc, "", analyticalPlan, nil)
	if err != nil {
		t.Fatal(err)
	}
	engSameRows(t, "analytical plan", got.rows, want.rows)

	// Refusals: what the executor does not run, a base schema that is not the table's, a
	// missing route, an unknown table.
	refusals := []struct {
		name string
		plan func(m *planMaker) []byte
		code codes.Code
		msg  string
	}{{
		name: "a join of reads without routes",
		plan: func(m *planMaker) []byte {
			l, r := m.read(types.PrecisionNanoSeconds), m.read(types.PrecisionNanoSeconds)
			j, err := m.b.Join(l, r, expr.NewPrimitiveLiteral(true, false), plan.JoinTypeInner)
			m.must(err)
			return m.bytes(j, "a", "b", "c", "d", "e", "f", "g", "h")
		},
		code: codes.InvalidArgument, msg: "messages needs channel_id = <value> and timestamp >= <start> AND timestamp < <end> (several partitions: channel_id IN (…) or = ANY($1); every partition of the range: the analytical mode, session option analytical = on)",
	}, {
		name: "picosecond timestamp column",
		plan: func(m *planMaker) []byte {
			read := m.read(types.TimePrecision(12))
			return m.bytes(read, "channel_id", "timestamp", "id", "value")
		},
		code: codes.InvalidArgument, msg: `ReadRel base schema of table "messages" is not compatible with the table: column timestamp is precision_timestamp_tz<12> NOT NULL; the plan declares (channel_id string NOT NULL, timestamp precision_timestamp_tz<12> NOT NULL, id string NOT NULL, value binary NOT NULL), the table is (channel_id string NOT NULL, timestamp precision_timestamp_tz<9> NOT NULL (timestamp with time zone; any timestamp of precision up to 9 is accepted), id string NOT NULL, value binary NOT NULL)`,
	}, {
		name: "no time range",
		plan: func(m *planMaker) []byte {
			read := m.read(types.PrecisionNanoSeconds)
			f, err := m.b.Filter(read, m.fn(urnComparison, "equal", m.ref(read, 0), strLit("general")))
			m.must(err)
			return m.bytes(f, "channel_id", "timestamp", "id", "value")
		},
		code: codes.InvalidArgument, msg: "messages needs timestamp >= <start> AND timestamp < <end>",
	}, {
		name: "unknown function",
		plan: func(m *planMaker) []byte {
			read := m.read(types.PrecisionNanoSeconds)
			f, err := m.b.Filter(read, m.and(
				m.fn(urnComparison, "equal", m.ref(read, 0), strLit("general")),
				m.fn(urnComparison, "gte", m.ref(read, 1), tsLit(lo)),
				m.fn(urnComparison, "lt", m.ref(read, 1), tsLit(hi))))
			m.must(err)
			p, err := m.b.ProjectRemap(f, []int32{4}, m.fn(urnDatetime, "extract", types.Enum("YEAR"), m.ref(f, 1), expr.NewPrimitiveLiteral("UTC", false)))
			m.must(err)
			return m.bytes(p, "y")
		},
		code: codes.Unimplemented, msg: "the Substrait plan uses a relation, expression or function the executor does not run: function extract(enum, precision_timestamp_tz<9>, string) (extension:io.substrait:functions_datetime) is not supported",
	}}
	for _, r := range refusals {
		_, err := engRunPlan(t, on, alloc, "", r.plan(newPlanMaker(t)), nil)
		if st, _ := status.FromError(wire(err)); st.Code() != r.code || st.Message() != r.msg {
			t.Errorf("%s: %v, want %v %q", r.name, err, r.code, r.msg)
		}
	}
	alloc.AssertSize(t, 0)
}

// sameFields compares two schemas' field names and types (a client plan's types carry the
// producer's nullability).
func sameFields(a, b *arrow.Schema) bool {
	if a == nil || b == nil || a.NumFields() != b.NumFields() {
		return false
	}
	for i := range a.NumFields() {
		if a.Field(i).Name != b.Field(i).Name || !arrow.TypeEqual(a.Field(i).Type, b.Field(i).Type) {
			return false
		}
	}
	return true
}
