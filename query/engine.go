package query

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/substrait-io/substrait-go/v8/plan"
	"go.opentelemetry.io/otel/attribute"
	otelcodes "go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/flightsrv/flightsrv/internal/querylog"
	"github.com/flightsrv/flightsrv/internal/setting"
	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/scan"
	"github.com/flightsrv/flightsrv/scan/ledger"
	"github.com/flightsrv/flightsrv/scan/shred"
	"github.com/flightsrv/flightsrv/substrait"
)

// Options configures an Engine.
type Options struct {
	// Pushdown enables aggregate pushdown (seed rollout: a configuration flag; when off every
	// query runs on the scan path).
	Pushdown bool
	// Shred, when set, is the shredded-column cache every query's fragments share
	// (scan.Options.Shred).
	Shred *shred.Cache
	// Alloc allocates result batches (under each query's ledger); nil or
	// memory.DefaultAllocator uses ledger.DefaultPool, the process's recycling allocator
	// (memory.GoAllocator's zeroed, aligned buffers, with the ones batches released served
	// again to later batches instead of left to the garbage collector).
	Alloc memory.Allocator
	// MaxBuckets bounds the buckets one query's time range may span (default
	// DefaultMaxBuckets; negative means no bound): a query over centuries of day buckets would
	// otherwise occupy the server for minutes. Refusals are RESOURCE_EXHAUSTED.
	MaxBuckets int
	// MaxPartitions bounds the partitions one routed read may list (IN, = ANY); 0 means
	// substrait.DefaultMaxPartitions.
	MaxPartitions int
	// AnalyticalMaxPartitions bounds the partitions one analytical read (no partition pin,
	// session.Settings.Analytical) may discover in its range (default
	// DefaultAnalyticalMaxPartitions; negative means no bound); beyond it the query is refused
	// with RESOURCE_EXHAUSTED. MaxBuckets bounds its partitions × buckets as for pinned reads.
	AnalyticalMaxPartitions int
	// QueryMemory bounds the bytes one query's batches may hold on the scan path (default
	// DefaultQueryMemory; negative means no bound): a sort of too many rows or too many groups
	// is refused with RESOURCE_EXHAUSTED naming the limit.
	QueryMemory int64
	// TotalQueryMemory bounds the bytes all the engine's queries' batches may hold together (their
	// ledgers' allocations and claims, a ledger.Budget; default DefaultTotalMemory; negative
	// means no bound): a query whose next batch would take the total past it is refused with
	// RESOURCE_EXHAUSTED naming the limit, before the batch is built, so the process's memory
	// stays bounded however many queries run at once.
	TotalQueryMemory int64
	// EndpointBuckets is how many consecutive buckets one endpoint of a multi-endpoint
	// result reads at most (default DefaultEndpointBuckets), and MaxEndpoints how many
	// endpoints one result may have (default DefaultMaxEndpoints; groups grow beyond it):
	// see Fragments.
	EndpointBuckets int
	MaxEndpoints    int
	// QueryMaxRows bounds the rows one query's fragments may produce (the rows read, after the
	// residual filters; a fragment that aggregates produces its partial rows: one per bucket
	// for an ungrouped aggregate), with the rows its set-returning functions produce
	// (generate_series…, ledger.Ledger.AddRows) (default DefaultMaxRows; negative: no bound);
	// refusals are RESOURCE_EXHAUSTED naming the limit.
	QueryMaxRows int64
	// QueryCPU bounds the CPU time one query's fragments and coordinator may use in all,
	// measured per batch on their threads (scan.Options.QueryCPU) (default DefaultQueryCPU;
	// negative: no bound, and nothing is measured): the CPU-time twin of the wall-time bound
	// (issue 16). Refusals are RESOURCE_EXHAUSTED naming the limit.
	QueryCPU time.Duration
	// System answers the system views and functions (flightsrv.queries, flightsrv.sessions,
	// flightsrv.cancel_query: system.go); the zero value answers none.
	System System
}

// DefaultQueryCPU is the default per-query CPU time limit: one hour, as the default wall-time
// limit of a query's stream (server.DefaultQueryTimeout).
const DefaultQueryCPU = time.Hour

// DefaultAnalyticalMaxPartitions is the default bound on the partitions an analytical read
// may discover: 4096.
const DefaultAnalyticalMaxPartitions = 4096

// DefaultMaxRows is the default per-query row limit: 100 million rows.
const DefaultMaxRows = 100_000_000

// DefaultQueryMemory is the default per-query memory limit: 256 MiB.
const DefaultQueryMemory = 256 << 20

// DefaultTotalMemory is the default bound on what all queries hold together: 1 GiB, four
// queries at the default per-query limit.
const DefaultTotalMemory = 1 << 30

// DefaultMaxBuckets is the default per-query bucket bound: 20,000 buckets are 54 years of day
// buckets or 1,666 years of month buckets.
const DefaultMaxBuckets = 20000

// Engine plans and executes queries over a fixed set of routed tables. Safe for concurrent
// use.
type Engine struct {
	tables  map[string]*routing.DurableTable // by table name (lower case)
	cat     *substrait.StaticCatalog
	opts    Options
	metrics *metrics
	stmts   *stmtCache
	budget  *ledger.Budget // what all queries hold together (Options.TotalQueryMemory)
	// found keeps the partitions analytical reads discovered, for the DoGets of their
	// logical query (discovery.go).
	found discoveries
	// maxColumns bounds a select list (substrait.BindOptions.MaxOutputColumns): the most
	// output columns whose batches an execution could hold under QueryMemory at the smallest
	// fan-out of the tables (scan.MaxOutputColumns); 0 without a memory bound.
	maxColumns int
}

// withDefaults applies the settings convention (internal/setting) to every bound in one
// place: 0 is the bound's default, a negative value is no bound (0 below this struct).
func (o *Options) withDefaults() {
	o.QueryMemory = setting.Bound(o.QueryMemory, DefaultQueryMemory)
	o.TotalQueryMemory = setting.Bound(o.TotalQueryMemory, DefaultTotalMemory)
	o.MaxBuckets = setting.Bound(o.MaxBuckets, DefaultMaxBuckets)
	o.QueryMaxRows = setting.Bound(o.QueryMaxRows, DefaultMaxRows)
	o.QueryCPU = setting.Bound(o.QueryCPU, DefaultQueryCPU)
	o.AnalyticalMaxPartitions = setting.Bound(o.AnalyticalMaxPartitions, DefaultAnalyticalMaxPartitions)
	o.MaxPartitions = setting.Required(o.MaxPartitions, substrait.DefaultMaxPartitions)
	o.EndpointBuckets = setting.Required(o.EndpointBuckets, DefaultEndpointBuckets)
	o.MaxEndpoints = setting.Required(o.MaxEndpoints, DefaultMaxEndpoints)
}

// New returns an engine over tables; table names must be distinct.
func New(tables []*routing.DurableTable, opts Options) (*Engine, error) {
	if opts.Alloc == nil || opts.Alloc == memory.DefaultAllocator {
		opts.Alloc = ledger.DefaultPool
	}
	opts.withDefaults()
	defs := make([]routing.TableDef, len(tables))
	byName := make(map[string]*routing.DurableTable, len(tables))
	for i, t := range tables {
		defs[i] = t.Def()
		byName[t.Def().Name] = t
	}
	cat, err := substrait.NewCatalog(defs...)
	if err != nil {
		return nil, err
	}
	m, err := newMetrics()
	if err != nil {
		return nil, err
	}
	budget := ledger.NewBudget(opts.TotalQueryMemory)
	pool, _ := opts.Alloc.(*ledger.Pool)
	registerMemoryMetrics(budget, pool)
	return &Engine{tables: byName, cat: cat, opts: opts, metrics: m, stmts: newStmtCache(statementCacheEntries), budget: budget,
		maxColumns: maxColumns(tables, opts.QueryMemory)}, nil
}

// maxColumns returns the bound on select lists under a query memory of limit bytes (<= 0:
// none, 0) over tables: scan.MaxOutputColumns at the smallest fan-out among them, so that no
// select list an execution could hold is refused.
func maxColumns(tables []*routing.DurableTable, limit int64) int {
	if limit <= 0 {
		return 0
	}
	fanout := routing.DefaultFanout
	for i, t := range tables {
		if i == 0 || t.Fanout() < fanout {
			fanout = max(1, t.Fanout())
		}
	}
	return max(1, scan.MaxOutputColumns(limit, fanout))
}

// Tables returns each table's logical Arrow schema by name.
func (e *Engine) Tables() map[string]*arrow.Schema {
	out := make(map[string]*arrow.Schema, len(e.tables))
	for name, t := range e.tables {
		out[name] = substrait.TableSchema(t.Def())
	}
	return out
}

// Prepare plans a query and returns its dataset and parameter schemas. Exactly one of sql and
// substraitPlan must be set; a Substrait plan takes no parameters.
func (e *Engine) Prepare(ctx context.Context, sql string, substraitPlan []byte) (*arrow.Schema, *arrow.Schema, error) {
	if sql == "" && len(substraitPlan) == 0 {
		return nil, nil, ErrEmptyQuery
	}
	if sys, ok, err := e.parseSystem(sql); ok {
		if err != nil {
			querylog.FromContext(ctx).SetStatement(kindSystem)
			return nil, nil, err
		}
		schema, err := e.prepareSystem(ctx, sys)
		return schema, arrow.NewSchema(nil, nil), err
	}
	if sql != "" && substrait.IsSet(sql) {
		// SET and RESET: no rows and no parameters, or refused (ExecuteUpdate).
		noteUnprepared(ctx, sql)
		if err := substrait.CheckSet(sql); err != nil {
			return nil, nil, e.planError(err)
		}
		return arrow.NewSchema(nil, nil), arrow.NewSchema(nil, nil), nil
	}
	if sql != "" && substrait.IsInsert(sql) {
		noteUnprepared(ctx, sql)
		ins, err := e.prepareInsert(sql)
		if err != nil {
			return nil, nil, e.planError(err)
		}
		return arrow.NewSchema(nil, nil), ins.ParameterSchema(), nil
	}
	if sql != "" {
		st, err := e.stmts.prepare(sql, e.cat, e.bindOptions(ctx))
		if err != nil {
			noteUnprepared(ctx, sql)
			return nil, nil, e.planError(err)
		}
		noteStatement(ctx, st)
		return st.DatasetSchema(), st.ParameterSchema(), nil
	}
	noteStatement(ctx, nil)
	b, err := e.prepareSubstrait(ctx, substraitPlan)
	if err != nil {
		return nil, nil, err
	}
	return b.Schema, arrow.NewSchema(nil, nil), nil
}

// TypeParameters returns sql with its parameters declared as the types of a client's binding,
// whose schema is bound (substrait.DeclareParameterTypes: PostgreSQL's parameter types
// declared at Parse; a bound string stays an untyped literal); sql unchanged when it declares
// nothing. Its errors are the planner's (42P18 for a parameter still untyped).
func (e *Engine) TypeParameters(ctx context.Context, sql string, bound *arrow.Schema) (string, error) {
	text, err := substrait.DeclareParameterTypes(sql, e.cat, e.bindOptions(ctx), bound)
	if err != nil {
		return "", e.planError(err)
	}
	return text, nil
}

// TypeUnknownParameters returns sql with the parameters it leaves untyped declared text
// (substrait.DeclareUnknownParameters: PostgreSQL's type for a parameter of type unknown that
// nothing resolves). Its errors are the planner's.
func (e *Engine) TypeUnknownParameters(ctx context.Context, sql string) (string, error) {
	text, err := substrait.DeclareUnknownParameters(sql, e.cat, e.bindOptions(ctx))
	if err != nil {
		return "", e.planError(err)
	}
	return text, nil
}

// Execute plans and runs a query. params, when not nil, holds one row of the statement's
// parameter schema. The returned reader streams the result; releasing it stops the query.
//
// Every SQL statement is bound by the general binder (substrait.PrepareWith), a client's
// Substrait plan by substrait.PrepareSubstrait; both run on the executor (scan). A SQL
// statement without parameters whose binding reads neither the clock nor the session's user,
// with no analytical read and at most compiledMaxBuckets buckets, is compiled once — bound,
// routed and lowered onto fragments (scan.Prepare) — and the compiled form is kept with the
// statement in the statement cache and executed again by later calls with the same text:
// nothing in it depends on the time of the call or on the stores' state (routes are resolved
// per execution); Fragments plans the endpoints of such a statement from it too. Other
// statements and Substrait plans are compiled per call.
func (e *Engine) Execute(ctx context.Context, sql string, substraitPlan []byte, params arrow.RecordBatch) (rdr array.RecordReader, err error) {
	if sql == "" && len(substraitPlan) == 0 {
		return nil, ErrEmptyQuery
	}
	if sys, ok, err := e.parseSystem(sql); ok {
		if err != nil {
			querylog.FromContext(ctx).SetStatement(kindSystem)
			return nil, err
		}
		return e.executeSystem(ctx, sys)
	}
	if sql != "" && substrait.IsSet(sql) {
		// SET and RESET executed as a query: no columns, no rows (CheckSet).
		noteUnprepared(ctx, sql)
		if err := substrait.CheckSet(sql); err != nil {
			return nil, err
		}
		return array.NewRecordReader(arrow.NewSchema(nil, nil), nil)
	}
	if sql != "" && substrait.IsInsert(sql) {
		if _, err := e.prepareInsert(sql); err != nil {
			return nil, err
		}
		return nil, &substrait.Error{Code: substrait.InvalidArgument, Msg: "an INSERT returns no rows: execute it as an update (ExecuteUpdate)"}
	}
	ctx = withReads(ctx)
	defer func() { noteExecution(ctx, rdr) }()
	if sql == "" {
		noteStatement(ctx, nil)
		return e.executeSubstrait(ctx, substraitPlan)
	}
	ent, perr := e.stmts.entry(sql, e.cat, e.bindOptions(ctx))
	if perr != nil {
		noteUnprepared(ctx, sql)
		return nil, e.planError(perr)
	}
	st := ent.st
	noteStatement(ctx, st)
	var b *substrait.Bound
	if params != nil && params.NumRows() > 0 {
		ent = nil // the plan depends on the values bound
		b, err = st.BindGeneralRecord(e.bindOptions(ctx), params, 0)
	} else {
		if c := ent.exec.Load(); c != nil {
			return e.start(ctx, c)
		}
		b, err = ent.bind(e.bindOptions(ctx))
	}
	if err != nil {
		return nil, e.planError(err)
	}
	if b.Plan == nil {
		if st.IsExplain() {
			return e.explainLines([]string{"Result: constants evaluated once, no table read"})
		}
		return e.constants(ctx, b)
	}
	if st.ExplainAnalyze() {
		return e.explainAnalyze(ctx, b, st.ExplainJSON())
	}
	if st.IsExplain() {
		return e.explainBound(ctx, b, st.ExplainJSON())
	}
	c, cacheable, err := e.compile(ctx, b, nil)
	if err != nil {
		return nil, err
	}
	if ent != nil && cacheable && !b.Volatile {
		e.keep(c)
		ent.exec.Store(c)
	}
	return e.start(ctx, c)
}

// compiledMaxBuckets bounds the buckets of a statement whose compiled form the statement cache
// keeps: a compiled plan holds one fragment unit per bucket, and the cache's 1,024 entries
// should stay within a few MiB. Wider statements are compiled per call.
const compiledMaxBuckets = 400

// compiled is a bound plan lowered for execution: the executor's prepared plan (scan.Prepared,
// safe for concurrent executions), its result schema, and the telemetry of its routed
// aggregates the stores can answer (the span's name and attributes when the pushdown rewrite
// applied to them). Immutable once built; shared by the executions of a cached statement.
type compiled struct {
	pr      *scan.Prepared // nil: the plan reads nothing (an empty result)
	schema  *arrow.Schema
	buckets int
	spanOp  string // "" without a rewrite
	table   string // the span's table
	attrs   []attribute.KeyValue
	// candidate is set when the plan has a routed aggregate the stores can answer (counted
	// in the pushdown metrics), grouped when one is grouped by a time bin.
	candidate, grouped bool
	// routes are the plan's routes when compiled without a window. reads are its routed
	// reads over this engine's tables and bucketIDs the buckets they read, in reads' order,
	// partition by partition: what Fragments plans the endpoints of a cached statement from,
	// set by keep before the statement cache shares the compiled plan.
	routes    map[*plan.NamedTableReadRel]substrait.Route
	reads     []read
	bucketIDs []routing.BucketID
}

// keep sets c's reads and buckets from its routes, before the statement cache keeps c.
func (e *Engine) keep(c *compiled) {
	c.reads = e.readsOf(c.routes)
	for _, rd := range c.reads {
		c.bucketIDs = append(c.bucketIDs, rd.buckets()...)
	}
}

// compile routes a bound plan's reads (discovering the partitions of analytical ones),
// checks --max-buckets and lowers it through the executor (scan.Prepare): per-bucket
// fragments, and with pushdown on, fragments whose partial aggregate a store answers ask the
// store (scan's pushdown rewrite). cacheable reports a plan whose routes pin their partitions
// and span at most compiledMaxBuckets buckets.
//
// window, when not nil, restricts every read to that time window (a fragment of a
// multi-endpoint result); a plan reading nothing in it compiles to an empty result.
func (e *Engine) compile(ctx context.Context, b *substrait.Bound, window *routing.TimeRange) (c *compiled, cacheable bool, err error) {
	routes, discovered, total, err := e.routes(ctx, b.Plan)
	if err != nil {
		return nil, false, err
	}
	if window != nil {
		total = 0
		for rel, r := range routes {
			if r = r.Clip(*window); r.Range.Empty() {
				return &compiled{schema: b.Schema}, false, nil
			}
			routes[rel] = r
			total += bucketsOf(r)
		}
	}
	if err := e.checkBuckets(total); err != nil {
		return nil, false, err
	}
	pr, err := scan.Prepare(b.Plan, e.boundOptions(routes))
	if err != nil {
		return nil, false, err
	}
	c = &compiled{pr: pr, schema: b.Schema, buckets: total}
	if window == nil {
		c.routes = routes
	}
	var applied []scan.Rewrite
	for _, rw := range pr.Rewrites() {
		c.candidate = true
		c.grouped = c.grouped || rw.Bin != nil
		if rw.Applied {
			applied = append(applied, rw)
		}
	}
	if op, bin := spanOperation(applied); op != "" {
		c.spanOp, c.table = op, applied[0].Table
		c.attrs = []attribute.KeyValue{
			attribute.String("db.system.name", "flightsrv"),
			attribute.String("db.operation.name", op),
			attribute.String("db.collection.name", c.table),
			attribute.String("pulpitum.sql.mode", "routed_aggregate"),
			attribute.String("pulpitum.aggregate", strings.ToLower(op)),
			attribute.Int("pulpitum.query.buckets_scanned", total),
		}
		if bin != nil {
			c.attrs = append(c.attrs, groupAttr, attribute.String("pulpitum.group.bin", bin.Shape()))
		}
	}
	return c, len(discovered) == 0 && total <= compiledMaxBuckets, nil
}

// start executes a compiled query. A plan whose routed aggregates the executor rewrote onto the
// stores' partial-aggregate ports runs under the seed's "<OP> <table>" span (COUNT, MIN, MAX,
// MINMAX or AGGREGATE; pulpitum.sql.mode=routed_aggregate, pulpitum.aggregate=<op in lower
// case>, and pulpitum.group=time_bin when grouped). Every query with a routed aggregate the
// stores can answer is counted in the pushdown metrics: outcome success when rewritten,
// fallback when its fragments read rows (pushdown off), error when it failed.
func (e *Engine) start(ctx context.Context, c *compiled) (array.RecordReader, error) {
	if c.pr == nil {
		return scan.EmptyReader(c.schema), nil
	}
	start := time.Now()
	var span trace.Span
	if c.spanOp != "" {
		querylog.FromContext(ctx).SetStatement(kindSelect + " " + c.spanOp)
		ctx, span = e.metrics.tracer.Start(ctx, c.spanOp+" "+c.table, trace.WithAttributes(c.attrs...))
	}
	res, err := c.pr.Execute(ctx)
	if err != nil {
		if span != nil {
			span.SetStatus(otelcodes.Error, "aggregate failed")
			span.End()
		}
		return nil, err
	}
	r := &execReader{RecordReader: scan.Conform(res, c.schema), res: res}
	if !c.candidate && span == nil {
		return r, nil
	}
	r.observe = func(err error) {
		hot, archive := res.Tiers()
		source := routing.TierSource(hot, archive)
		outcome := "fallback"
		switch {
		case err != nil:
			outcome = "error"
		case res.Rewritten():
			outcome = "success"
		}
		if span != nil {
			answered, fellBack := res.Pushed()
			span.SetAttributes(attribute.Int("pulpitum.query.hot_buckets", hot), attribute.Int("pulpitum.query.archive_buckets", archive),
				attribute.Int("pulpitum.query.buckets_probed", res.Started()),
				attribute.Int("pulpitum.query.buckets_pushed", answered), attribute.Int("pulpitum.query.buckets_fallback", fellBack))
			if err != nil {
				span.SetStatus(otelcodes.Error, "aggregate failed")
			}
			span.End()
		}
		if c.grouped {
			e.metrics.recordGrouped(ctx, source, outcome, time.Since(start))
			return
		}
		e.metrics.record(ctx, source, outcome, time.Since(start))
	}
	return r, nil
}

// spanOperation names the span of a plan with rewritten aggregates from their measures
// (scan.Operation, the pushdown rule's names); "" without a rewrite. bin is the first grouped
// rewrite's time bin.
func spanOperation(rws []scan.Rewrite) (op string, bin *routing.Binning) {
	for _, rw := range rws {
		if bin == nil {
			bin = rw.Bin
		}
	}
	return scan.Operation(rws), bin
}

// execReader is the result stream of an execution: it keeps the executor's result (the query
// log's read statistics) and calls observe, when set, once when the stream ends (scan-path
// aggregate metrics). Its errors are the executor's, typed as Execute's are.
type execReader struct {
	array.RecordReader
	res     *scan.Result
	ended   bool
	observe func(error)
}

func (r *execReader) Next() bool {
	if r.RecordReader.Next() {
		return true
	}
	if !r.ended {
		r.ended = true
		if r.observe != nil {
			r.observe(r.RecordReader.Err())
		}
	}
	return false
}

// planError returns the error of a statement that could not be planned: a select list too
// wide for any execution under the query memory (*substrait.OutputColumnsError) is that
// limit's refusal (a *ledger.LimitExceededError), before anything is planned; anything else
// (a *substrait.Error, a *substrait.PartitionListError) passes unchanged to the protocol
// boundary.
func (e *Engine) planError(err error) error {
	if oc := (*substrait.OutputColumnsError)(nil); errors.As(err, &oc) {
		return ledger.LimitError(e.opts.QueryMemory)
	}
	return err
}
