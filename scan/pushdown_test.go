package scan_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/extensions"
	"github.com/substrait-io/substrait-go/v8/plan"
	"github.com/substrait-io/substrait-go/v8/types"

	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/scan"
	"github.com/flightsrv/flightsrv/substrait"
)

// The pushdown rewrite as Mimir's astmapper tests it: a table of plans, each run with the
// rewrite and without it (every fragment reading rows) over the hot and the mixed fixtures;
// the answers must be identical, and the rewrite must apply exactly to the routed aggregates
// whose partial state a store answers — wherever they sit in the plan — and leave every
// other plan unchanged.

type rewriteCase struct {
	name string
	// build returns the plan; rewritten says whether the rewrite must apply.
	build     func(t *testing.T) *plan.Plan
	rewritten bool
}

// aggPlan builds read → [filter] → aggregate(groups; measures) with outputs named names, then
// wrap (nil: none) above it.
type planParts struct {
	b    plan.Builder
	read *plan.NamedTableReadRel
}

func newParts() *planParts {
	b := plan.NewBuilderDefault()
	return &planParts{b: b, read: b.NamedScan([]string{tableDef.Name}, tableSchema())}
}

func (p *planParts) count(t *testing.T) plan.AggRelMeasure {
	return p.b.Measure(must[*expr.AggregateFunction](t)(p.b.AggregateFn(substrait.URNAggregate, "count", nil)), nil)
}

func (p *planParts) extreme(t *testing.T, name string, in plan.Rel, col int32) plan.AggRelMeasure {
	return p.b.Measure(must[*expr.AggregateFunction](t)(p.b.AggregateFn(substrait.URNDatetime, name, nil, ref(t, p.b, in, col))), nil)
}

// hourBin is date_trunc('hour', timestamp) as the SQL front end encodes it.
func (p *planParts) hourBin(t *testing.T, in plan.Rel) expr.Expression {
	return must[*expr.ScalarFunction](t)(p.b.ScalarFn(substrait.URNDatetime, "round_calendar", nil,
		ref(t, p.b, in, 1), types.Enum("FLOOR"), types.Enum("HOUR"), types.Enum("DAY"),
		expr.NewPrimitiveLiteral(int64(1), false), expr.NewPrimitiveLiteral("UTC", false)))
}

func (p *planParts) aggregate(t *testing.T, in plan.Rel, groups []expr.Expression, ms ...plan.AggRelMeasure) *plan.AggregateRel {
	rb := p.b.GetRelBuilder().AggregateRel(in, ms)
	if len(groups) > 0 {
		var refs []uint32
		for _, g := range groups {
			refs = append(refs, rb.AddExpression(g))
		}
		rb.AddGroupingSet(refs)
	}
	return must[*plan.AggregateRel](t)(rb.Build())
}

func rewriteCases() []rewriteCase {
	return []rewriteCase{
		{"count(*)", func(t *testing.T) *plan.Plan {
			p := newParts()
			agg := p.aggregate(t, p.read, nil, p.count(t))
			return must[*plan.Plan](t)(p.b.Plan(agg, []string{"n"}))
		}, true},
		{"count, min, max under a fetch and a project", func(t *testing.T) *plan.Plan {
			p := newParts()
			agg := p.aggregate(t, p.read, nil, p.extreme(t, "max", p.read, 1), p.count(t), p.extreme(t, "min", p.read, 1))
			fe := must[*plan.FetchRel](t)(p.b.Fetch(agg, 0, 1))
			proj := must[*plan.ProjectRel](t)(p.b.Project(fe, ref(t, p.b, fe, 1)))
			out := must[plan.Rel](t)(proj.Remap(3, 0, 2))
			return must[*plan.Plan](t)(p.b.Plan(out, []string{"n", "hi", "lo"}))
		}, true},
		{"min alone", func(t *testing.T) *plan.Plan {
			p := newParts()
			agg := p.aggregate(t, p.read, nil, p.extreme(t, "min", p.read, 1))
			return must[*plan.Plan](t)(p.b.Plan(agg, []string{"lo"}))
		}, true},
		{"max alone", func(t *testing.T) *plan.Plan {
			p := newParts()
			agg := p.aggregate(t, p.read, nil, p.extreme(t, "max", p.read, 1))
			return must[*plan.Plan](t)(p.b.Plan(agg, []string{"hi"}))
		}, true},
		{"min and max", func(t *testing.T) *plan.Plan {
			p := newParts()
			agg := p.aggregate(t, p.read, nil, p.extreme(t, "min", p.read, 1), p.extreme(t, "max", p.read, 1))
			return must[*plan.Plan](t)(p.b.Plan(agg, []string{"lo", "hi"}))
		}, true},
		{"count and max per hour, sorted descending", func(t *testing.T) *plan.Plan {
			p := newParts()
			agg := p.aggregate(t, p.read, []expr.Expression{p.hourBin(t, p.read)}, p.count(t), p.extreme(t, "max", p.read, 1))
			srt := must[*plan.SortRel](t)(p.b.Sort(agg, expr.SortField{Expr: ref(t, p.b, agg, 0), Kind: types.SortDescNullsLast}))
			return must[*plan.Plan](t)(p.b.Plan(srt, []string{"h", "n", "hi"}))
		}, true},
		{"union all of a count and a grouped count", func(t *testing.T) *plan.Plan {
			p := newParts()
			left := p.aggregate(t, p.read, nil, p.count(t))
			read2 := p.b.NamedScan([]string{tableDef.Name}, tableSchema())
			right := p.aggregate(t, read2, []expr.Expression{p.hourBin(t, read2)}, p.count(t))
			rproj := must[plan.Rel](t)(right.Remap(1))
			set := must[*plan.SetRel](t)(p.b.Set(plan.SetOpUnionAll, left, rproj))
			return must[*plan.Plan](t)(p.b.Plan(set, []string{"n"}))
		}, true},
		{"unchanged: a residual filter", func(t *testing.T) *plan.Plan {
			p := newParts()
			ne := must[*expr.ScalarFunction](t)(p.b.ScalarFn(substrait.URNComparison, "not_equal", nil, ref(t, p.b, p.read, 2), expr.NewPrimitiveLiteral("x", false)))
			filt := must[*plan.FilterRel](t)(p.b.Filter(p.read, ne))
			agg := p.aggregate(t, filt, nil, p.count(t))
			return must[*plan.Plan](t)(p.b.Plan(agg, []string{"n"}))
		}, false},
		{"unchanged: count(id)", func(t *testing.T) *plan.Plan {
			p := newParts()
			agg := p.aggregate(t, p.read, nil, p.count(t), p.b.Measure(must[*expr.AggregateFunction](t)(expr.NewAggregateFunc(p.b.GetExprBuilder().Reg,
				extensions.ID{URN: substrait.URNAggregate, Name: "count:any"}, nil,
				types.AggInvocationAll, types.AggPhaseInitialToResult, nil, ref(t, p.b, p.read, 2))), nil))
			return must[*plan.Plan](t)(p.b.Plan(agg, []string{"n", "ids"}))
		}, false},
		{"unchanged: grouping by id", func(t *testing.T) *plan.Plan {
			p := newParts()
			agg := p.aggregate(t, p.read, []expr.Expression{ref(t, p.b, p.read, 2)}, p.count(t))
			return must[*plan.Plan](t)(p.b.Plan(agg, []string{"id", "n"}))
		}, false},
		{"unchanged: rows", func(t *testing.T) *plan.Plan {
			p := newParts()
			fe := must[*plan.FetchRel](t)(p.b.Fetch(p.read, 0, 50))
			return must[*plan.Plan](t)(p.b.Plan(fe, []string{"channel_id", "timestamp", "id", "value"}))
		}, false},
	}
}

// runRewrite runs p with the rewrite on or off and returns its rows and result.
func runRewrite(t *testing.T, tbl *routing.DurableTable, r routing.TimeRange, p *plan.Plan, on bool) ([][]any, *scan.Result) {
	t.Helper()
	mem := memory.NewCheckedAllocator(testPool)
	res, err := scan.Execute(context.Background(), p, scan.Options{Alloc: mem, Pushdown: on, Bind: func(*plan.NamedTableReadRel) (scan.Source, error) {
		return scan.Source{Table: tbl, Partitions: [][]byte{[]byte(pGeneral)}, Range: r}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	rows, _, err := drain(t, res)
	if err != nil {
		t.Fatal(err)
	}
	res.Release()
	if n := mem.CurrentAlloc(); n != 0 {
		t.Fatalf("%d bytes leaked", n)
	}
	return rows, res
}

// declining is an archive whose partial-aggregate port cannot answer (a payload whose
// statistics cannot be trusted): every archived bucket reads its rows in its fragment.
type declining struct{ routing.ArchiveReader }

func (declining) AggregateGroups(context.Context, string, routing.BucketID, routing.AggregateRequest) ([]routing.PartialGroup, error) {
	return nil, routing.ErrNoAggregate
}

func TestPushdownRewrite(t *testing.T) {
	t.Parallel()
	ranges := []routing.TimeRange{span(0, days(70)), span(days(3)+7, days(45)), span(days(20), days(21)), span(days(500), days(501))}
	type variant struct {
		name     string
		tbl      *routing.DurableTable
		declines bool
	}
	var variants []variant
	for _, f := range fixtures(t) {
		variants = append(variants, variant{f.name, f.table(t, nil, 3, false), false})
		if f.reader != nil {
			tbl, err := routing.NewDurableTable(tableDef, f.store, declining{f.reader}, routing.Options{Fanout: 3, Clock: func() time.Time { return dataEnd }})
			if err != nil {
				t.Fatal(err)
			}
			variants = append(variants, variant{f.name + " declining archive", tbl, true})
		}
	}
	if len(variants) < 3 {
		t.Fatalf("%d fixtures: no archived one", len(variants))
	}
	for _, f := range variants {
		tbl := f.tbl
		fellBackSomewhere := false
		for _, c := range rewriteCases() {
			p := c.build(t)
			for _, r := range ranges {
				what := fmt.Sprintf("%s %s %v", f.name, c.name, r)
				off, resOff := runRewrite(t, tbl, r, p, false)
				on, resOn := runRewrite(t, tbl, r, p, true)
				sameRows(t, what, on, off)
				if resOff.Rewritten() {
					t.Fatalf("%s: rewritten with pushdown off", what)
				}
				if resOn.Rewritten() != c.rewritten {
					t.Fatalf("%s: rewritten %v, want %v", what, resOn.Rewritten(), c.rewritten)
				}
				answered, fellBack := resOn.Pushed()
				if c.rewritten && answered+fellBack == 0 {
					t.Fatalf("%s: no fragment asked a store", what)
				}
				if !c.rewritten && answered+fellBack != 0 {
					t.Fatalf("%s: %d fragments asked a store", what, answered+fellBack)
				}
				if fellBack > 0 && !f.declines {
					t.Fatalf("%s: %d fragments read rows although every store answers", what, fellBack)
				}
				fellBackSomewhere = fellBackSomewhere || fellBack > 0
			}
			ex, err := scan.Explain(p, scan.Options{Pushdown: true, Bind: func(*plan.NamedTableReadRel) (scan.Source, error) {
				return scan.Source{Table: tbl, Partitions: [][]byte{[]byte(pGeneral)}, Range: ranges[0]}, nil
			}})
			if err != nil {
				t.Fatal(err)
			}
			text := strings.Join(ex, "\n")
			if got := strings.Contains(text, "StoreAggregate"); got != c.rewritten {
				t.Fatalf("%s: EXPLAIN shows the rewrite: %v, want %v:\n%s", c.name, got, c.rewritten, text)
			}
			if strings.Contains(text, pGeneral) {
				t.Fatalf("%s: EXPLAIN shows the partition value:\n%s", c.name, text)
			}
		}
		if f.declines && !fellBackSomewhere {
			t.Fatalf("%s: no fragment fell back to reading rows", f.name)
		}
	}
}

// TestExtremeLaunchPolicy: MIN alone starts buckets in time order, one at a time, until one
// answers (exactly one when the first bucket has records), then at most fan-out − 1 more that
// had started once earlier ones came back empty; MAX alone the same from the last bucket; MIN
// and MAX one at each end. Answers equal the rows' (brute force) and pushdown off.
func TestExtremeLaunchPolicy(t *testing.T) {
	t.Parallel()
	for _, f := range fixtures(t) {
		tbl := f.table(t, nil, 4, false)
		for _, c := range []struct {
			name    string
			r       routing.TimeRange
			measure []string
		}{
			{"min", span(0, days(70)), []string{"min"}},
			{"max", span(0, days(70)), []string{"max"}},
			{"min and max", span(0, days(70)), []string{"min", "max"}},
			{"min from before the data", span(-days(30), days(70)), []string{"min"}},
			{"max inside the data", span(days(3), days(20)), []string{"max"}},
		} {
			p := newParts()
			var ms []plan.AggRelMeasure
			for _, m := range c.measure {
				ms = append(ms, p.extreme(t, m, p.read, 1))
			}
			agg := p.aggregate(t, p.read, nil, ms...)
			pl := must[*plan.Plan](t)(p.b.Plan(agg, c.measure))
			on, res := runRewrite(t, tbl, c.r, pl, true)
			off, _ := runRewrite(t, tbl, c.r, pl, false)
			sameRows(t, f.name+" "+c.name, on, off)
			recs := expected(pGeneral, c.r, false, -1)
			bounds := rowsOf([]routing.Record{recs[0], recs[len(recs)-1]}, []string{"timestamp"})
			want := map[string]any{"min": bounds[0][0], "max": bounds[1][0]}
			for i, m := range c.measure {
				if on[0][i] != want[m] {
					t.Fatalf("%s %s: %v, want %v", f.name, c.name, on[0][i], want[m])
				}
			}
			// need: the buckets from each end the measures walk up to the first with records.
			bs := tbl.Buckets([]byte(pGeneral), c.r)
			first := slices.IndexFunc(bs, func(b routing.BucketID) bool { return b.Range().Contains(recs[0].EventTime) })
			last := slices.IndexFunc(bs, func(b routing.BucketID) bool { return b.Range().Contains(recs[len(recs)-1].EventTime) })
			need, ends := 0, 0
			if slices.Contains(c.measure, "min") {
				need, ends = need+first+1, ends+1
			}
			if slices.Contains(c.measure, "max") {
				need, ends = need+len(bs)-last, ends+1
			}
			slack := 0
			if need > ends {
				slack = tbl.Fanout() - 1 // fragments started ahead once an empty bucket came back
			}
			if got := res.Started(); got < need || got > need+slack {
				t.Fatalf("%s %s: %d fragments started, want %d (+ up to %d)", f.name, c.name, got, need, slack)
			}
		}
	}
}

// TestStoreAggregateFanout: a rewritten aggregate asks the stores through the coordinator's
// light path at most the fan-out at a time, with overlapping asks when the fan-out allows
// them, every bucket once, and answers as the scan path does (ungrouped and per hour).
func TestStoreAggregateFanout(t *testing.T) {
	t.Parallel()
	f := fixtures(t)[0]
	r := span(0, days(numDays))
	want := int64(len(expected(pGeneral, r, false, -1)))
	cases := rewriteCases()
	for _, fanout := range []int{1, 4} {
		for _, c := range []rewriteCase{cases[0], cases[5]} {
			p := &probe{HotStore: f.store, aggDelay: 2 * time.Millisecond}
			tbl := f.table(t, p, fanout, false)
			pl := c.build(t)
			on, res := runRewrite(t, tbl, r, pl, true)
			off, _ := runRewrite(t, f.table(t, nil, fanout, false), r, pl, false)
			what := fmt.Sprintf("fanout=%d %s", fanout, c.name)
			sameRows(t, what, on, off)
			if c.name == "count(*)" && (len(on) != 1 || on[0][0] != want) {
				t.Fatalf("%s: %v, want %d", what, on, want)
			}
			if n := p.counts.Load(); n != int64(numDays) || res.Started() != numDays {
				t.Fatalf("%s: %d asks and %d fragments started for %d buckets", what, n, res.Started(), numDays)
			}
			if answered, fellBack := res.Pushed(); answered != numDays || fellBack != 0 {
				t.Fatalf("%s: %d answered, %d fell back", what, answered, fellBack)
			}
			switch m := p.aggMax.Load(); {
			case m > int64(fanout):
				t.Fatalf("%s: %d concurrent asks", what, m)
			case fanout > 1 && m < 2:
				t.Fatalf("%s: asks never overlapped (max %d)", what, m)
			case p.aggCur.Load() != 0:
				t.Fatalf("%s: %d asks still running", what, p.aggCur.Load())
			}
		}
	}
}

// TestStoreAggregateStops: cancelling a rewritten aggregate while its stores are being asked,
// or one store failing, ends it with that error, leaves no ask running, no goroutine of the
// query, no fragment reservation and no buffer.
func TestStoreAggregateStops(t *testing.T) {
	f := fixtures(t)[0]
	r := span(0, days(numDays))
	pl := rewriteCases()[0].build(t)
	baseline := settledGoroutines()
	failDay := day0.AddDate(0, 0, 9)
	for _, fails := range []bool{false, true} {
		p := &probe{HotStore: f.store, aggDelay: 20 * time.Millisecond}
		if fails {
			p.fail = func(b routing.BucketID) error {
				if b.Start.Equal(failDay) {
					return routing.ErrUnavailable
				}
				return nil
			}
		}
		tbl := f.table(t, p, 4, false)
		mem := memory.NewCheckedAllocator(testPool)
		ctx, cancel := context.WithCancel(context.Background())
		if !fails {
			go func() {
				for p.counts.Load() < 6 {
					time.Sleep(time.Millisecond)
				}
				cancel()
			}()
		}
		res, err := scan.Execute(ctx, pl, scan.Options{Alloc: mem, Pushdown: true, Bind: func(*plan.NamedTableReadRel) (scan.Source, error) {
			return scan.Source{Table: tbl, Partitions: [][]byte{[]byte(pGeneral)}, Range: r}, nil
		}})
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = drain(t, res)
		wantErr := context.Canceled
		if fails {
			wantErr = routing.ErrUnavailable
		}
		if !errors.Is(err, wantErr) {
			t.Fatalf("fails=%v: err %v, want %v", fails, err, wantErr)
		}
		res.Release()
		cancel()
		if n := p.aggCur.Load(); n != 0 {
			t.Fatalf("fails=%v: %d asks still running", fails, n)
		}
		if n := p.counts.Load(); n >= int64(numDays) {
			t.Fatalf("fails=%v: %d asks of %d buckets: the error did not stop the fan-out", fails, n, numDays)
		}
		if l := res.Ledger(); l.Outstanding() != 0 || l.Bytes() != 0 {
			t.Fatalf("fails=%v: %d reservations and %d bytes left in the ledger", fails, l.Outstanding(), l.Bytes())
		}
		if n := mem.CurrentAlloc(); n != 0 {
			t.Fatalf("fails=%v: %d bytes leaked", fails, n)
		}
	}
	waitGoroutines(t, baseline, "the stopped aggregates")
}

// TestPreparedExecutesConcurrently: one Prepared plan executed by several goroutines at once
// (as the engine's statement cache does) gives every execution the answer of a lone one, for
// rewritten aggregates, aggregates over rows and ordered scans, over hot and mixed buckets.
func TestPreparedExecutesConcurrently(t *testing.T) {
	t.Parallel()
	r := span(days(3)+7, days(45))
	cases := rewriteCases()
	for _, f := range fixtures(t) {
		tbl := f.table(t, nil, 3, true)
		// A count, per-hour measures, the MIN/MAX launch policy, and rows.
		for _, c := range []rewriteCase{cases[0], cases[5], cases[4], cases[len(cases)-1]} {
			for _, on := range []bool{true, false} {
				pr, err := scan.Prepare(c.build(t), scan.Options{Pushdown: on, Bind: func(*plan.NamedTableReadRel) (scan.Source, error) {
					return scan.Source{Table: tbl, Partitions: [][]byte{[]byte(pGeneral)}, Range: r}, nil
				}})
				if err != nil {
					t.Fatal(err)
				}
				run := func() ([][]any, error) {
					res, err := pr.Execute(context.Background())
					if err != nil {
						return nil, err
					}
					defer res.Release()
					rows, _, err := drain(t, res)
					return rows, err
				}
				want, err := run()
				if err != nil {
					t.Fatal(err)
				}
				const workers = 4
				got := make([][][]any, workers)
				errs := make([]error, workers)
				var wg sync.WaitGroup
				for i := range workers {
					wg.Go(func() { got[i], errs[i] = run() })
				}
				wg.Wait()
				for i := range workers {
					if errs[i] != nil {
						t.Fatalf("%s %s pushdown=%v: execution %d: %v", f.name, c.name, on, i, errs[i])
					}
					sameRows(t, fmt.Sprintf("%s %s pushdown=%v execution %d", f.name, c.name, on, i), got[i], want)
				}
			}
		}
	}
}
