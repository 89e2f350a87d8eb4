package scan_test

import (
	"bytes"
	"slices"
	"testing"

	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/extensions"
	"github.com/substrait-io/substrait-go/v8/plan"
	"github.com/substrait-io/substrait-go/v8/types"

	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/substrait"
)

// Plans the SQL front end does not produce yet (issue 7's binder will), built with
// substrait-go's builder and run through the executor over the hot and the mixed fixture:
// residual filters in the fragments, a sort that is not bucket order (local top k per
// fragment, merged), OFFSET, DISTINCT aggregates (partial and final), UNION ALL.
// Expected rows come from the brute-force records.

func tableSchema() types.NamedStruct {
	req := types.NullabilityRequired
	return types.NamedStruct{
		Names: []string{tableDef.PartitionColumn, "timestamp", "id", "value"},
		Struct: types.StructType{Nullability: req, Types: []types.Type{
			&types.StringType{Nullability: req},
			&types.PrecisionTimestampTzType{PrecisionTimestampType: types.PrecisionTimestampType{Precision: types.PrecisionNanoSeconds, Nullability: req}},
			&types.StringType{Nullability: req},
			&types.BinaryType{Nullability: req}}},
	}
}

func ref(t *testing.T, b plan.Builder, rel plan.Rel, i int32) *expr.FieldReference {
	t.Helper()
	r, err := b.RootFieldRef(rel, i)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func must[T any](t *testing.T) func(v T, err error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func runPlan(t *testing.T, tbl *routing.DurableTable, r routing.TimeRange, p *plan.Plan) [][]any {
	t.Helper()
	rows, _ := runRewrite(t, tbl, r, p, false)
	return rows
}

func TestExecuteRelations(t *testing.T) {
	t.Parallel()
	r := span(days(1), days(40))
	recs := expected(pGeneral, r, false, -1)
	skip := string(recs[7].SortKey)
	for _, f := range fixtures(t) {
		tbl := f.table(t, nil, 3, false)

		// WHERE id <> skip ORDER BY id DESC OFFSET 2 LIMIT 5, selecting id and timestamp.
		b := plan.NewBuilderDefault()
		read := b.NamedScan([]string{tableDef.Name}, tableSchema())
		ne := must[*expr.ScalarFunction](t)(b.ScalarFn(substrait.URNComparison, "not_equal", nil, ref(t, b, read, 2), expr.NewPrimitiveLiteral(skip, false)))
		filt := must[*plan.FilterRel](t)(b.Filter(read, ne))
		srt := must[*plan.SortRel](t)(b.Sort(filt, expr.SortField{Expr: ref(t, b, filt, 2), Kind: types.SortDescNullsLast}))
		fetch := must[*plan.FetchRel](t)(b.Fetch(srt, 2, 5))
		proj := must[*plan.ProjectRel](t)(b.Project(fetch, ref(t, b, fetch, 2), ref(t, b, fetch, 1)))
		out := must[plan.Rel](t)(proj.Remap(4, 5))
		p := must[*plan.Plan](t)(b.Plan(out, []string{"id", "ts"}))
		var want []routing.Record
		for _, rec := range recs {
			if string(rec.SortKey) != skip {
				want = append(want, rec)
			}
		}
		slices.SortStableFunc(want, func(a, b routing.Record) int { return -bytes.Compare(a.SortKey, b.SortKey) })
		sameRows(t, f.name+" top k by id", runPlan(t, tbl, r, p), rowsOf(want[2:7], []string{"id", "timestamp"}))

		// count(*), count(DISTINCT id), min(timestamp), max(timestamp).
		b = plan.NewBuilderDefault()
		read = b.NamedScan([]string{tableDef.Name}, tableSchema())
		cnt := must[*expr.AggregateFunction](t)(b.AggregateFn(substrait.URNAggregate, "count", nil))
		dist := must[*expr.AggregateFunction](t)(expr.NewAggregateFunc(b.GetExprBuilder().Reg,
			extensions.ID{URN: substrait.URNAggregate, Name: "count:any"}, nil,
			types.AggInvocationDistinct, types.AggPhaseInitialToResult, nil, ref(t, b, read, 2)))
		mn := must[*expr.AggregateFunction](t)(b.AggregateFn(substrait.URNDatetime, "min", nil, ref(t, b, read, 1)))
		mx := must[*expr.AggregateFunction](t)(b.AggregateFn(substrait.URNDatetime, "max", nil, ref(t, b, read, 1)))
		agg := must[*plan.AggregateRel](t)(b.GetRelBuilder().AggregateRel(read, []plan.AggRelMeasure{b.Measure(cnt, nil), b.Measure(dist, nil), b.Measure(mn, nil), b.Measure(mx, nil)}).Build())
		p = must[*plan.Plan](t)(b.Plan(agg, []string{"n", "ids", "lo", "hi"}))
		ids := map[string]bool{}
		for _, rec := range recs {
			ids[string(rec.SortKey)] = true
		}
		bounds := rowsOf([]routing.Record{recs[0], recs[len(recs)-1]}, []string{"timestamp"})
		sameRows(t, f.name+" aggregates", runPlan(t, tbl, r, p), [][]any{{int64(len(recs)), int64(len(ids)), bounds[0][0], bounds[1][0]}})

		// (ORDER BY timestamp LIMIT 3) UNION ALL (ORDER BY timestamp DESC LIMIT 2), ids only.
		b = plan.NewBuilderDefault()
		var inputs []plan.Rel
		for _, c := range []struct {
			kind types.SortDirection
			n    int64
		}{{types.SortAscNullsLast, 3}, {types.SortDescNullsFirst, 2}} {
			read := b.NamedScan([]string{tableDef.Name}, tableSchema())
			s := must[*plan.SortRel](t)(b.Sort(read, expr.SortField{Expr: ref(t, b, read, 1), Kind: c.kind}, expr.SortField{Expr: ref(t, b, read, 2), Kind: c.kind}))
			fe := must[*plan.FetchRel](t)(b.Fetch(s, 0, c.n))
			inputs = append(inputs, must[plan.Rel](t)(fe.Remap(2)))
		}
		set := must[*plan.SetRel](t)(b.Set(plan.SetOpUnionAll, inputs...))
		p = must[*plan.Plan](t)(b.Plan(set, []string{"id"}))
		desc := expected(pGeneral, r, true, 2)
		sameRows(t, f.name+" union all", runPlan(t, tbl, r, p), rowsOf(append(slices.Clone(recs[:3]), desc...), []string{"id"}))
	}
}
