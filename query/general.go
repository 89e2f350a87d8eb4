package query

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/substrait-io/substrait-go/v8/plan"

	"github.com/flightsrv/flightsrv/internal/session"
	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/scan"
	"github.com/flightsrv/flightsrv/scan/ledger"
	"github.com/flightsrv/flightsrv/scan/ops"
	"github.com/flightsrv/flightsrv/substrait"
)

// bindOptions are the settings the general binder runs under: the engine's partition bound,
// the calling session's analytical mode and user (session.From), and the statement's clock
// when a fragment carries one (withClock; else the binder reads time.Now).
func (e *Engine) bindOptions(ctx context.Context) substrait.BindOptions {
	s := session.From(ctx)
	now, _ := ctx.Value(clockKey{}).(time.Time)
	return substrait.BindOptions{MaxPartitions: e.opts.MaxPartitions, Analytical: s.Analytical, User: s.User, Now: now, MaxOutputColumns: e.maxColumns}
}

type clockKey struct{}

// withClock returns ctx under which statements bind now() and current_timestamp to now (UTC):
// the planning instant of a multi-endpoint result, which each of its fragments carries.
func withClock(ctx context.Context, now time.Time) context.Context {
	return context.WithValue(ctx, clockKey{}, now)
}

// explainBound prints a bound plan over tables, from the SQL binder or a client's Substrait
// plan: each routed read bound to its route (substrait.Routes), the partitions of analytical
// reads discovered, then the executor's fragments (explainGeneral); as one JSON document when
// asJSON (EXPLAIN (FORMAT JSON): explainJSON).
func (e *Engine) explainBound(ctx context.Context, b *substrait.Bound, asJSON bool) (array.RecordReader, error) {
	routes, discovered, _, err := e.routes(ctx, b.Plan)
	if err != nil {
		return nil, err
	}
	return e.explainGeneral(b, discovered, e.boundOptions(routes), asJSON)
}

// routes reads the route of every routed read of p (substrait.Routes), discovers the
// partitions of its analytical reads (discover, whose counts per table it returns) and counts
// the buckets they read together (partitions × buckets), for checkBuckets.
func (e *Engine) routes(ctx context.Context, p *plan.Plan) (map[*plan.NamedTableReadRel]substrait.Route, map[string]int, int, error) {
	routes, err := substrait.Routes(p, e.cat, session.From(ctx).Analytical)
	if err != nil {
		return nil, nil, 0, err
	}
	discovered, err := e.discover(ctx, routes)
	if err != nil {
		return nil, nil, 0, err
	}
	total := 0
	for _, r := range routes {
		total += bucketsOf(r)
	}
	return routes, discovered, total, nil
}

// bucketsOf counts the buckets route r spans for --max-buckets: partitions × buckets of its
// range (an analytical read counts every bucket of the partitions it discovered, as the
// limit is documented, though it asks only those with a route row).
func bucketsOf(r substrait.Route) int {
	return routing.BucketCountIn(r.Table.Strategy, r.Pieces()) * len(r.Partitions)
}

// checkBuckets refuses a query reading more than Options.MaxBuckets buckets (partitions ×
// buckets) with a *BucketLimitError. Execute checks it,
// and Fragments (GetFlightInfo) before any endpoint is planned.
func (e *Engine) checkBuckets(n int) error {
	if e.opts.MaxBuckets > 0 && n > e.opts.MaxBuckets {
		return &BucketLimitError{Buckets: n, Limit: e.opts.MaxBuckets}
	}
	return nil
}

// boundOptions binds every routed read of a plan to its route (an analytical read's
// partitions already discovered).
func (e *Engine) boundOptions(routes map[*plan.NamedTableReadRel]substrait.Route) scan.Options {
	return scan.Options{
		Bind: func(r *plan.NamedTableReadRel) (scan.Source, error) {
			rt, ok := routes[r]
			if !ok {
				return scan.Source{}, fmt.Errorf("query: a read of the plan has no route")
			}
			t, ok := e.tables[rt.Table.Name]
			if !ok {
				return scan.Source{}, ErrTableNotFound
			}
			return scan.Source{Table: t, Partitions: rt.Partitions, Present: rt.Present, Range: rt.Range, Ranges: rt.Ranges}, nil
		},
		Alloc:        e.opts.Alloc,
		QueryMemory:  e.opts.QueryMemory,
		Budget:       e.budget,
		QueryMaxRows: e.opts.QueryMaxRows,
		QueryCPU:     e.opts.QueryCPU,
		Pushdown:     e.opts.Pushdown,
		Shred:        e.opts.Shred,
	}
}

// prepareSubstrait validates and binds a client's Substrait plan (substrait.PrepareSubstrait)
// under the session's options, and lowers it once onto the executor so that a relation or an
// expression the executor does not run is refused here, as Unimplemented.
func (e *Engine) prepareSubstrait(ctx context.Context, planBytes []byte) (*substrait.Bound, error) {
	release := planningWeight(len(planBytes))
	b, err := substrait.PrepareSubstrait(planBytes, e.cat, e.bindOptions(ctx))
	release()
	if err != nil {
		return nil, err
	}
	routes, err := substrait.Routes(b.Plan, e.cat, session.From(ctx).Analytical)
	if err != nil {
		return nil, err
	}
	pr, err := scan.Prepare(b.Plan, e.boundOptions(routes))
	if err != nil {
		return nil, unsupportedPlan(err)
	}
	if err := sameColumnTypes(b.Schema, pr.Schema()); err != nil {
		return nil, err
	}
	b.Schema = widenDecimals(b.Schema, pr.Schema())
	return b, nil
}

// widenDecimals returns declared with each decimal column the executor computes at another
// precision of its scale typed as computed: a plan's declared precision is its producer's
// annotation (Isthmus types SUM(DECIMAL(3,0)) DECIMAL(3,0), DataFusion DECIMAL(13,0)), and
// the executor's decimal<38,S> holds the totals PostgreSQL's and DuckDB's sums answer (trial
// 34 D3: a sum past the declared precision was refused 22003). declared itself when nothing
// differs.
func widenDecimals(declared, computed *arrow.Schema) *arrow.Schema {
	if declared == nil || computed == nil || declared.NumFields() != computed.NumFields() {
		return declared
	}
	var fields []arrow.Field
	for i := range declared.NumFields() {
		d, c := declared.Field(i), computed.Field(i)
		if arrow.TypeEqual(d.Type, c.Type) || !ops.SameDecimalScale(c.Type, d.Type) {
			continue
		}
		if fields == nil {
			fields = slices.Clone(declared.Fields())
		}
		fields[i].Type = c.Type
	}
	if fields == nil {
		return declared
	}
	md := declared.Metadata()
	return arrow.NewSchema(fields, &md)
}

// sameColumnTypes refuses a client plan whose declared output types (declared) differ from
// those the executor computes (computed) — a function's declared output type its signature
// does not give, such as count(*) declared i8 or a decimal sum declared i64 — as an invalid
// plan naming the column and both types, at planning rather than as its result's first batch
// fails (trial 33 G5, G6: INTERNAL at DoGet). A decimal declared with another precision of
// its scale is not refused: the result is typed as the executor computes it (widenDecimals),
// so DataFusion's sum of decimal<10,2> declared decimal<20,2> answers; one declared with
// another scale answers at the declared type, rounded (scan.Conform: DataFusion's quotient
// declared decimal<14,6>, which the executor computes decimal<30,22>; trial 34).
func sameColumnTypes(declared, computed *arrow.Schema) error {
	if declared == nil || computed == nil || declared.NumFields() != computed.NumFields() {
		return nil // the executor's own checks name these
	}
	for i := range declared.NumFields() {
		if d, c := declared.Field(i).Type, computed.Field(i).Type; !arrow.TypeEqual(d, c) && !scan.BothDecimal(c, d) {
			return &substrait.Error{Code: substrait.InvalidArgument, SQLState: "42804",
				Msg: fmt.Sprintf("invalid Substrait plan: output column %d is declared %s, but its expression computes %s", i+1, d, c)}
		}
	}
	return nil
}

// executeSubstrait runs a client's Substrait plan on the executor, as SQL runs.
func (e *Engine) executeSubstrait(ctx context.Context, planBytes []byte) (array.RecordReader, error) {
	b, err := e.prepareSubstrait(ctx, planBytes)
	if err != nil {
		return nil, err
	}
	c, _, err := e.compile(ctx, b, nil)
	if err != nil {
		return nil, unsupportedPlan(err)
	}
	return e.start(ctx, c)
}

// discover lists the partitions of every analytical read of routes (no partition pin) from
// its table's stores (routing.DurableTable.Partitions; once per logical query: partitions)
// and sets them as the read's partitions, in byte order. It returns the number discovered per table name, for EXPLAIN. A
// read finding more than AnalyticalMaxPartitions is refused with an *AnalyticalPartitionsError;
// a store failure passes through (routing.ErrUnavailable).
func (e *Engine) discover(ctx context.Context, routes map[*plan.NamedTableReadRel]substrait.Route) (map[string]int, error) {
	found := map[string]int{}
	for rel, r := range routes {
		if r.Partitions != nil {
			continue
		}
		t, ok := e.tables[r.Table.Name]
		if !ok {
			return nil, ErrTableNotFound
		}
		limit := e.opts.AnalyticalMaxPartitions
		if limit > 0 {
			limit++ // one more than the bound tells that it is exceeded
		}
		parts, err := e.partitions(ctx, t, r.Range, limit)
		if err != nil {
			return nil, err
		}
		if e.opts.AnalyticalMaxPartitions > 0 && len(parts) > e.opts.AnalyticalMaxPartitions {
			return nil, &AnalyticalPartitionsError{Table: r.Table.Name, Limit: e.opts.AnalyticalMaxPartitions}
		}
		r.Partitions, r.Present = make([][]byte, len(parts)), make([]routing.BucketSet, len(parts))
		for i, p := range parts {
			r.Partitions[i], r.Present[i] = p.Key, p.Set()
		}
		routes[rel] = r
		found[r.Table.Name] += len(parts)
	}
	return found, nil
}

// explainGeneral prints the plan, each read's route and residual filters, and the executor's
// fragments. discovered counts the partitions the analytical reads found, by table.
func (e *Engine) explainGeneral(b *substrait.Bound, discovered map[string]int, opts scan.Options, asJSON bool) (array.RecordReader, error) {
	lines := explainHead(b.Plan, b.Routes, discovered, e.opts.Pushdown)
	ex, err := scan.Explain(b.Plan, opts)
	if err != nil {
		return nil, err
	}
	if asJSON {
		return e.explainJSON(lines, ex, nil)
	}
	return e.explainLines(explainTail(lines, ex))
}

// explainHead is the start of every EXPLAIN (one notation for every statement): the
// Substrait plan (literals and partition values as <value>: substrait.Explain), "Routes:" —
// per routed read, how many WHERE conjuncts became its route and how many run as filters in
// the fragments, its partitions (counted, never listed) and buckets, and the fan-out — then
// the pushdown setting. discovered counts the partitions analytical reads found, by table.
func explainHead(p *plan.Plan, routes []substrait.RouteInfo, discovered map[string]int, pushdownOn bool) []string {
	lines := strings.Split(strings.TrimRight(substrait.Explain(p), "\n"), "\n")
	lines = append(lines, "Routes:")
	for _, r := range routes {
		if r.Empty {
			lines = append(lines,
				fmt.Sprintf("  read %s: %d WHERE conjunct(s) make an empty route (contradictory partition pins or a time range without an instant): it reads no bucket and answers no rows; %d residual conjunct(s)",
					r.Table.Name, r.RouteConjuncts, r.Residual),
				"  fan-out: 0 fragment(s)")
			continue
		}
		buckets, rng := routing.BucketCount(r.Table.Strategy, r.Range), "a finite range"
		if r.Ranges != nil {
			buckets = routing.BucketCountIn(r.Table.Strategy, r.Ranges)
			rng = fmt.Sprintf("the union of %d disjoint finite ranges", len(r.Ranges))
		}
		parts := fmt.Sprintf("%d partition(s) pinned", len(r.Partitions))
		n := len(r.Partitions)
		if r.Analytical {
			n = discovered[r.Table.Name]
			parts = fmt.Sprintf("analytical mode: no partition pinned, %d partition(s) of the range discovered from the stores' route rows", n)
		}
		lines = append(lines,
			fmt.Sprintf("  read %s: %d WHERE conjunct(s) became the route (%s, %s over %d %s bucket(s)); %d residual conjunct(s) run as filters in the fragments",
				r.Table.Name, r.RouteConjuncts, parts, rng, buckets, r.Table.Strategy, r.Residual),
			fmt.Sprintf("  fan-out: %d fragment(s) (partitions × buckets), each answered by its bucket's store (hot rows or archived Parquet/JSON), at most the table's fan-out at a time", buckets*n))
	}
	if pushdownOn {
		return append(lines, "Pushdown: on",
			"  a fragment whose partial aggregate is count(*), min(timestamp) or max(timestamp), grouped by nothing, the partition column or one time bin (or both), over only the routed predicate asks its bucket's store (the executor's lines give the decision per routed aggregate)")
	}
	return append(lines, "Pushdown: off (--pushdown=false: every fragment reads rows)")
}

// explainTail appends the executor's lines (scan.Explain: fragments and coordinator stage,
// with the decision per routed aggregate) to lines.
func explainTail(lines, executor []string) []string {
	lines = append(lines, "Executor:")
	for _, l := range executor {
		lines = append(lines, "  "+l)
	}
	return lines
}

func (e *Engine) explainLines(lines []string) (array.RecordReader, error) {
	bl := array.NewStringBuilder(e.opts.Alloc)
	defer bl.Release()
	bl.AppendValues(lines, nil)
	col := bl.NewArray()
	defer col.Release()
	rec := array.NewRecordBatch(substrait.ExplainSchema, []arrow.Array{col}, int64(len(lines)))
	defer rec.Release()
	return array.NewRecordReader(substrait.ExplainSchema, []arrow.RecordBatch{rec})
}

// constants evaluates a table-less statement's select list on one row, under a ledger of the
// query's memory limit in the engine's budget (a value of repeat, lpad, format… past it is
// refused before it is built), taken out of the budget once the values are built.
func (e *Engine) constants(ctx context.Context, b *substrait.Bound) (array.RecordReader, error) {
	if b.Rows == 0 {
		return scan.EmptyReader(b.Schema), nil
	}
	mem := ledger.New(e.opts.Alloc, e.opts.QueryMemory)
	mem.SetBudget(e.budget)
	defer mem.Detach()
	cols := make([]arrow.Array, len(b.Constants))
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for i, c := range b.Constants {
		a, err := ops.EvalConstant(ctx, c, b.Registry, mem)
		if err != nil {
			return nil, fmt.Errorf("query: constant: %w", err) // 1/0 is the query's error
		}
		if !arrow.TypeEqual(a.DataType(), b.Schema.Field(i).Type) {
			a.Release()
			return nil, fmt.Errorf("query: constant %d is %s, want %s", i, a.DataType(), b.Schema.Field(i).Type)
		}
		cols[i] = a
	}
	rec := array.NewRecordBatch(b.Schema, cols, 1)
	defer rec.Release()
	return array.NewRecordReader(b.Schema, []arrow.RecordBatch{rec})
}
