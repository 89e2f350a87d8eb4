package query

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/substrait-io/substrait-go/v8/plan"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/flightsrv/flightsrv/pushdown"
	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/scan"
	"github.com/flightsrv/flightsrv/substrait"
)

// Options configures an Engine.
type Options struct {
	// Pushdown enables aggregate pushdown (seed rollout: a configuration flag; when off every
	// query runs on the scan path).
	Pushdown bool
	// Alloc allocates result batches; nil uses memory.DefaultAllocator.
	Alloc memory.Allocator
	// Logger receives store errors that are hidden from clients; nil uses slog.Default().
	Logger *slog.Logger
	// MaxBuckets bounds the buckets one query's time range may span (default
	// DefaultMaxBuckets; negative means no bound): a query over centuries of day buckets would
	// otherwise occupy the server for minutes. Refusals are RESOURCE_EXHAUSTED.
	MaxBuckets int
}

// DefaultMaxBuckets is the default per-query bucket bound: 20,000 buckets are 54 years of day
// buckets or 1,666 years of month buckets.
const DefaultMaxBuckets = 20000

// errEmptyQuery answers a statement with neither SQL text nor a Substrait plan.
var errEmptyQuery = status.Error(codes.InvalidArgument, "empty query")

// Engine plans and executes queries over a fixed set of routed tables. Safe for concurrent
// use.
type Engine struct {
	tables  map[string]*routing.DurableTable // by table name (lower case)
	cat     *substrait.StaticCatalog
	opts    Options
	metrics *metrics
	stmts   *stmtCache
}

// New returns an engine over tables; table names must be distinct.
func New(tables []*routing.DurableTable, opts Options) (*Engine, error) {
	if opts.Alloc == nil {
		opts.Alloc = memory.DefaultAllocator
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.MaxBuckets == 0 {
		opts.MaxBuckets = DefaultMaxBuckets
	}
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
	return &Engine{tables: byName, cat: cat, opts: opts, metrics: m, stmts: newStmtCache(statementCacheEntries)}, nil
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
func (e *Engine) Prepare(_ context.Context, sql string, substraitPlan []byte) (*arrow.Schema, *arrow.Schema, error) {
	if sql == "" && len(substraitPlan) == 0 {
		return nil, nil, errEmptyQuery
	}
	if sql != "" {
		st, err := e.stmts.prepare(sql, e.cat)
		if err != nil {
			return nil, nil, planError(err)
		}
		return st.DatasetSchema(), st.ParameterSchema(), nil
	}
	p, err := substrait.FromSubstrait(substraitPlan, e.cat)
	if err != nil {
		return nil, nil, planError(err)
	}
	q, err := substrait.Analyze(p, e.cat)
	if err != nil {
		return nil, nil, planError(err)
	}
	return q.Schema(), arrow.NewSchema(nil, nil), nil
}

// Execute plans and runs a query. params, when not nil, holds one row of the statement's
// parameter schema. The returned reader streams the result; releasing it stops the query.
func (e *Engine) Execute(ctx context.Context, sql string, substraitPlan []byte, params arrow.RecordBatch) (array.RecordReader, error) {
	if sql == "" && len(substraitPlan) == 0 {
		return nil, errEmptyQuery
	}
	var (
		p       *plan.Plan
		err     error
		explain bool
	)
	if sql != "" {
		st, perr := e.stmts.prepare(sql, e.cat)
		if perr != nil {
			return nil, planError(perr)
		}
		explain = st.IsExplain()
		switch {
		case params != nil && params.NumRows() > 0:
			p, err = st.BindRecord(params, 0)
		default:
			p, err = st.Bind()
		}
	} else {
		p, err = substrait.FromSubstrait(substraitPlan, e.cat)
	}
	if err != nil {
		return nil, planError(err)
	}
	ph, err := pushdown.Plan(p, e.cat, pushdown.Options{Pushdown: e.opts.Pushdown, MinMax: true})
	if err != nil {
		return nil, planError(err)
	}
	if explain {
		return e.explain(p, ph), nil
	}
	if e.opts.MaxBuckets > 0 && ph.Buckets > e.opts.MaxBuckets {
		return nil, status.Errorf(codes.ResourceExhausted, "the time range spans %d buckets, more than this server's limit of %d: narrow the range", ph.Buckets, e.opts.MaxBuckets)
	}
	return e.run(ctx, ph)
}

// explain renders the Substrait plan and the pushdown decisions as EXPLAIN output.
func (e *Engine) explain(p *plan.Plan, ph *pushdown.Physical) array.RecordReader {
	lines := strings.Split(strings.TrimRight(substrait.Explain(p), "\n"), "\n")
	lines = append(lines, "Physical: "+ph.Kind.String())
	for _, d := range ph.Decisions {
		lines = append(lines, "  "+d)
	}
	b := array.NewStringBuilder(e.opts.Alloc)
	defer b.Release()
	b.AppendValues(lines, nil)
	col := b.NewArray()
	defer col.Release()
	rec := array.NewRecordBatch(substrait.ExplainSchema, []arrow.Array{col}, int64(len(lines)))
	defer rec.Release()
	r, _ := array.NewRecordReader(substrait.ExplainSchema, []arrow.RecordBatch{rec})
	return r
}

func (e *Engine) table(ph *pushdown.Physical) (*routing.DurableTable, error) {
	t, ok := e.tables[ph.Table.Name]
	if !ok {
		return nil, status.Error(codes.NotFound, "table not found")
	}
	return t, nil
}

// run executes a physical plan.
func (e *Engine) run(ctx context.Context, ph *pushdown.Physical) (array.RecordReader, error) {
	t, err := e.table(ph)
	if err != nil {
		return nil, err
	}
	spec := &scan.Spec{Table: t, Partition: ph.Partition, Range: ph.Range, Columns: ph.Columns, Desc: ph.Desc, Limit: ph.Limit, Schema: ph.Schema}
	switch {
	case ph.Kind == pushdown.KindCount:
		res, err := e.countPushdown(ctx, t, ph)
		if err != nil {
			return nil, e.execError(err)
		}
		return e.aggregateResult(ph, scan.Summary{Rows: res.Count})
	case ph.Kind == pushdown.KindMinMax:
		return e.minMaxPushdown(ctx, t, ph)
	case ph.Kind == pushdown.KindHistogram:
		return e.histogramPushdown(ctx, t, ph)
	case ph.Group != nil:
		return e.histogramScan(ctx, t, ph)
	case ph.Aggregate != nil:
		start := time.Now()
		sum, err := scan.Summarize(ctx, &scan.Spec{Table: t, Partition: ph.Partition, Range: ph.Range})
		e.metrics.observeScanAggregate(ctx, sum.Source(), time.Since(start), err)
		if err != nil {
			return nil, e.execError(err)
		}
		return e.aggregateResult(ph, sum)
	}
	rdr, err := scan.Scan(ctx, spec, e.opts.Alloc)
	if err != nil {
		return nil, err
	}
	return &execReader{RecordReader: rdr, e: e}, nil
}

// execReader classifies the error of a result stream with execError, as for errors returned
// by Execute: a store failure met while streaming rows is UNAVAILABLE too, not an internal
// error.
type execReader struct {
	array.RecordReader
	e   *Engine
	err error
}

func (r *execReader) Err() error {
	if r.err == nil {
		if err := r.RecordReader.Err(); err != nil {
			r.err = r.e.execError(err)
		}
	}
	return r.err
}

// aggregateResult builds the one-row result of ungrouped aggregates (none when LIMIT 0).
func (e *Engine) aggregateResult(ph *pushdown.Physical, sum scan.Summary) (array.RecordReader, error) {
	if ph.Limit == 0 {
		return scan.EmptyReader(ph.Schema), nil
	}
	b := array.NewRecordBuilder(e.opts.Alloc, ph.Schema)
	defer b.Release()
	for i, m := range ph.Aggregate.Measures {
		switch m.Func {
		case substrait.CountStar, substrait.Count:
			b.Field(i).(*array.Int64Builder).Append(int64(sum.Rows))
		case substrait.Min, substrait.Max:
			tb := b.Field(i).(*array.TimestampBuilder)
			if sum.Rows == 0 {
				tb.AppendNull()
				continue
			}
			t := sum.Min
			if m.Func == substrait.Max {
				t = sum.Max
			}
			tb.Append(arrow.Timestamp(t.UnixNano()))
		default:
			return nil, fmt.Errorf("query: aggregate %s has no executor", m)
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	return array.NewRecordReader(ph.Schema, []arrow.RecordBatch{rec})
}

// planError converts a planning error to a gRPC status error; internal errors pass through.
func planError(err error) error {
	var pe *substrait.Error
	if !errors.As(err, &pe) {
		return err
	}
	code := codes.Internal
	switch pe.Code {
	case substrait.InvalidArgument:
		code = codes.InvalidArgument
	case substrait.Unimplemented:
		code = codes.Unimplemented
	case substrait.NotFound:
		code = codes.NotFound
	}
	return status.Error(code, pe.Msg)
}

// execError classifies an execution error: the client sees a fixed message for the classes
// it can act on; anything else passes through to be logged and hidden by the Flight layer.
func (e *Engine) execError(err error) error {
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	case errors.Is(err, routing.ErrInvalidTimeRange):
		return status.Error(codes.InvalidArgument, "invalid time range")
	case errors.Is(err, routing.ErrUnavailable):
		e.opts.Logger.Warn("store unavailable", "err", err)
		return status.Error(codes.Unavailable, "store unavailable, retry later")
	}
	return err
}
