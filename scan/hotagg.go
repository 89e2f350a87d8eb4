package scan

import (
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/types"

	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/scan/aggregate"
	"github.com/flightsrv/flightsrv/scan/ops"
	"github.com/flightsrv/flightsrv/substrait"
)

// The hot tier's work done where the rows are (issue 19; docs/architecture.md, "The executor
// and its fragments"). A routed partial aggregate the store-aggregate rule (pushdown.go)
// cannot answer from keys — a residual filter, sum/count/avg/min/max over JSON fields, a
// grouping by JSON fields — is translated, when every part of it has a store-neutral form
// (routing.HotExpr), into a routing.RowAggregate whose answer is the fragment's partial state
// itself. The coordinator asks the hot store for it, many buckets a statement
// (routing.DurableTable.AggregateRows: routes and rows from one snapshot; askHot); an
// archived bucket, a store without the port or one that declines (it would not compute the
// state exactly as the executor does) reads its rows as before. The partial state is the
// executor's (scan/aggregate's Partial schema), so the coordinator's final aggregate combines
// store answers and row-reading fragments alike.

// hotAggregate is the row-aggregate rewrite of one routed aggregate.
type hotAggregate struct {
	q routing.RowAggregate
	// from maps each partial-state column to the answer's column, or -1 for the bucket's
	// partition key (a grouping by the partition column: constant in a bucket), or hotZero.
	from []int
}

// hotZero in hotAggregate.from is a float64 column of zeros (avg's Sxx: matchHotAggregate).
const hotZero = -2

// colValue is the routed base schema's value column.
const colValue = 3

// matchHotAggregate translates a routed aggregate (inputs over the base schema) with residual
// filters rp.filters into a row aggregate, or returns nil and the reason it cannot (a shape,
// never a value).
func matchHotAggregate(rp *routedPlan, agg *aggTail, partial *arrow.Schema) (*hotAggregate, string) {
	def := rp.src.Table.Def()
	h := &hotAggregate{q: routing.RowAggregate{Grouped: len(agg.spec.Groups) > 0}}
	tr := hotTranslator{def: def}
	for _, f := range rp.filters {
		e, ok := tr.expr(f)
		if !ok {
			return nil, "a residual filter the stores do not compute as the executor does"
		}
		h.q.Filter = append(h.q.Filter, e)
	}
	var fields []arrow.Field
	col := 0
	for _, g := range agg.spec.Groups {
		in := agg.inputs[g]
		if c, ok := baseRef(in); ok && c == colPartition {
			h.from = append(h.from, -1)
			col++
			continue
		}
		e, ok := tr.expr(in)
		if !ok {
			return nil, "a grouping key the stores do not compute as the executor does"
		}
		switch t := partial.Field(col).Type.ID(); {
		case t == arrow.STRING && e.IsText(), (t == arrow.INT32 || t == arrow.INT64) && e.IsInt(),
			t == arrow.TIMESTAMP && e.Op == routing.HotBin:
		default:
			return nil, "a grouping key of another type"
		}
		h.from = append(h.from, len(fields))
		fields = append(fields, partial.Field(col))
		h.q.Groups = append(h.q.Groups, e)
		col++
	}
	for _, m := range agg.spec.Measures {
		if m.Distinct {
			return nil, "a DISTINCT measure"
		}
		var filter *routing.HotExpr
		if m.Filter >= 0 {
			e, ok := tr.expr(agg.inputs[m.Filter])
			if !ok {
				return nil, "a measure FILTER the stores do not compute as the executor does"
			}
			filter = &e
		}
		var arg *routing.HotExpr
		floatArg := false
		if m.Arg >= 0 {
			in := agg.inputs[m.Arg]
			// A float8 cast of an integer (avg(int) binds to avg(x::float8)): the store
			// aggregates the integers and answers float8 states only where they are exact.
			if c, ok := in.(*expr.Cast); ok {
				if _, ok := c.Type.(*types.Float64Type); ok && c.FailureBehavior != types.BehaviorReturnNil {
					in, floatArg = c.Input, true
				}
			}
			e, ok := tr.expr(in)
			if !ok || floatArg && !e.IsInt() {
				return nil, "a measure argument the stores do not compute as the executor does"
			}
			arg = &e
		}
		var ms []routing.RowMeasure
		switch m.Func {
		case aggregate.CountStar:
			ms = []routing.RowMeasure{{Func: routing.RowCountStar, Filter: filter}}
		case aggregate.Count:
			ms = []routing.RowMeasure{{Func: routing.RowCount, Arg: arg, Filter: filter}}
		case aggregate.Sum:
			ms = []routing.RowMeasure{{Func: routing.RowSum, Arg: arg, Filter: filter}}
		case aggregate.Avg:
			ms = []routing.RowMeasure{{Func: routing.RowSum, Arg: arg, Filter: filter}, {Func: routing.RowCount, Arg: arg, Filter: filter}}
		case aggregate.Min:
			ms = []routing.RowMeasure{{Func: routing.RowMin, Arg: arg, Filter: filter}}
		case aggregate.Max:
			ms = []routing.RowMeasure{{Func: routing.RowMax, Arg: arg, Filter: filter}}
		default:
			return nil, fmt.Sprintf("measure %s", m.Func)
		}
		if (m.Func == aggregate.Sum || m.Func == aggregate.Avg) && !arg.IsInt() {
			return nil, "a sum of anything but integers"
		}
		for _, rm := range ms {
			if col >= partial.NumFields() {
				return nil, "partial state of another width"
			}
			f := partial.Field(col)
			if !hotStateType(rm, f.Type, floatArg) {
				return nil, "partial state of other types"
			}
			h.from = append(h.from, len(fields))
			fields = append(fields, f)
			h.q.Measures = append(h.q.Measures, rm)
			col++
		}
		if m.Func == aggregate.Avg && floatArg {
			// avg of doubles is float8_accum's N, Sx and Sxx (scan/aggregate); the store
			// answers N and Sx. Its values are float8 casts of integers (the stores take
			// int4's: routing.RowSum), whose Sx and Sxx cannot overflow (|x| < 2^63 and
			// N < 2^53: Sxx < 2^232), and avg reads Sx / N alone: the state's Sxx is 0, which
			// raises nothing where states combine (float8_combine).
			if col >= partial.NumFields() || partial.Field(col).Type.ID() != arrow.FLOAT64 {
				return nil, "partial state of other types"
			}
			h.from = append(h.from, hotZero)
			col++
		}
	}
	if col != partial.NumFields() {
		return nil, "partial state of another width"
	}
	h.q.Schema = arrow.NewSchema(fields, nil)
	if err := h.q.Validate(); err != nil {
		return nil, "a shape the stores do not take"
	}
	return h, ""
}

// hotStateType reports whether a store's answer to m fills a partial-state column of type t
// (routing.RowAggregate.Schema's types).
func hotStateType(m routing.RowMeasure, t arrow.DataType, floatArg bool) bool {
	switch m.Func {
	case routing.RowCountStar, routing.RowCount:
		return t.ID() == arrow.INT64
	case routing.RowSum:
		if floatArg {
			return t.ID() == arrow.FLOAT64
		}
		return t.ID() == arrow.DECIMAL128
	}
	switch {
	case floatArg:
		return t.ID() == arrow.FLOAT64
	case m.Arg.IsText():
		return t.ID() == arrow.STRING
	case m.Arg.IsInt():
		return t.ID() == arrow.INT32 || t.ID() == arrow.INT64
	case m.Arg.Op == routing.HotTime || m.Arg.Op == routing.HotBin:
		return t.ID() == arrow.TIMESTAMP
	}
	return false
}

// hotTranslator maps executor expressions over the routed base schema onto routing.HotExpr.
type hotTranslator struct{ def routing.TableDef }

// expr translates e, or reports false when e has no store-neutral form computed exactly as
// the executor computes it.
func (tr hotTranslator) expr(e expr.Expression) (routing.HotExpr, bool) {
	if bin, ok := substrait.TimeBinOf(e, tr.def); ok {
		if bin.Unit == 0 {
			return routing.HotExpr{}, false // date_bin strides stay on the scan path
		}
		return routing.HotExpr{Op: routing.HotBin, Bin: bin}, true
	}
	switch v := e.(type) {
	case *expr.FieldReference:
		if c, ok := baseRef(v); ok && c == colTimestamp {
			return routing.HotExpr{Op: routing.HotTime}, true
		}
	case *expr.PrimitiveLiteral[string]:
		return routing.HotExpr{Op: routing.HotText, Text: v.Value}, true
	case *expr.PrimitiveLiteral[int32]:
		return routing.HotExpr{Op: routing.HotInt, Int: int64(v.Value), IntBits: 32}, true
	case *expr.PrimitiveLiteral[int64]:
		return routing.HotExpr{Op: routing.HotInt, Int: v.Value, IntBits: 64}, true
	case *expr.PrimitiveLiteral[bool]:
		return routing.HotExpr{Op: routing.HotBool, Bool: v.Value}, true
	case *expr.Cast:
		if v.FailureBehavior == types.BehaviorReturnNil {
			break
		}
		in, ok := tr.expr(v.Input)
		if !ok {
			break
		}
		switch v.Type.(type) {
		case *types.Int32Type:
			if in.Op == routing.HotField {
				return routing.HotExpr{Op: routing.HotInt4, Args: []routing.HotExpr{in}}, true
			}
			if in.Op == routing.HotInt4 {
				return in, true
			}
		case *types.Int64Type:
			if in.Op == routing.HotField {
				return routing.HotExpr{Op: routing.HotInt8, Args: []routing.HotExpr{in}}, true
			}
			if in.IsInt() {
				// Widening an integer keeps its value; the store compares and aggregates it
				// as the integer it is.
				return in, true
			}
		}
	case *expr.ScalarFunction:
		return tr.call(v)
	}
	return routing.HotExpr{}, false
}

func (tr hotTranslator) call(f *expr.ScalarFunction) (routing.HotExpr, bool) {
	args := make([]routing.HotExpr, f.NArgs())
	argExpr := func(i int) (expr.Expression, bool) {
		a, ok := f.Arg(i).(expr.Expression)
		return a, ok
	}
	if f.Name() == "json_get_text" && f.NArgs() == 2 {
		doc, ok := argExpr(0)
		if !ok {
			return routing.HotExpr{}, false
		}
		key, ok := argExpr(1)
		if !ok {
			return routing.HotExpr{}, false
		}
		k, ok := key.(*expr.PrimitiveLiteral[string])
		if c, isRef := baseRef(doc); !ok || !isRef || c != colValue {
			return routing.HotExpr{}, false
		}
		return routing.HotExpr{Op: routing.HotField, Key: k.Value}, true
	}
	for i := range args {
		a, ok := argExpr(i)
		if !ok {
			return routing.HotExpr{}, false
		}
		if args[i], ok = tr.expr(a); !ok {
			return routing.HotExpr{}, false
		}
	}
	op, ok := hotOps[f.Name()]
	if !ok {
		return routing.HotExpr{}, false
	}
	switch op {
	case routing.HotEq, routing.HotNe, routing.HotLt, routing.HotLe, routing.HotGt, routing.HotGe:
		// Text with text or integer with integer only: other comparisons (times with
		// constants finer than the store's microseconds, mixed types) stay on the scan path.
		if len(args) != 2 || !(args[0].IsText() && args[1].IsText() || args[0].IsInt() && args[1].IsInt()) {
			return routing.HotExpr{}, false
		}
	case routing.HotAnd, routing.HotOr:
		for _, a := range args {
			if !isBoolExpr(a) {
				return routing.HotExpr{}, false
			}
		}
	case routing.HotNot:
		if len(args) != 1 || !isBoolExpr(args[0]) {
			return routing.HotExpr{}, false
		}
	}
	return routing.HotExpr{Op: op, Args: args}, true
}

// hotOps maps the executor's scalar functions onto the store-neutral operations.
var hotOps = map[string]routing.HotOp{
	"equal": routing.HotEq, "not_equal": routing.HotNe, "lt": routing.HotLt, "lte": routing.HotLe,
	"gt": routing.HotGt, "gte": routing.HotGe, "and": routing.HotAnd, "or": routing.HotOr,
	"not": routing.HotNot, "is_null": routing.HotIsNull, "is_not_null": routing.HotIsNotNull,
}

func isBoolExpr(e routing.HotExpr) bool {
	switch e.Op {
	case routing.HotEq, routing.HotNe, routing.HotLt, routing.HotLe, routing.HotGt, routing.HotGe,
		routing.HotAnd, routing.HotOr, routing.HotNot, routing.HotIsNull, routing.HotIsNotNull, routing.HotBool:
		return true
	}
	return false
}

// hotBatch is how many buckets one row-aggregate request (one statement) asks at most: enough
// that per-statement costs stop dominating a query over many small buckets.
const hotBatch = 64

// hotRequestsPerAsker is how many requests each of the fan-out's askers gets, about, when a
// query's buckets are fewer than hotBatch times that many: buckets differ in size by orders of
// magnitude, so several requests an asker keep every connection busy to the end.
const hotRequestsPerAsker = 4

// hotBatchSize is the request size of a row aggregate over units buckets asked by fanout
// askers: the units spread over about hotRequestsPerAsker requests an asker, at most hotBatch
// buckets a request. Measured (BenchmarkAnalyticalHot's count(*) over the 300,000-row sample's
// 1,332 buckets, four connections, PostgreSQL 15): 48–51 ms of backend CPU a query with 64
// buckets a request against 54–59 ms with 16; a query over one partition's six buckets asks
// each alone, concurrently, as the per-bucket key-only counts do.
func hotBatchSize(units, fanout int) int {
	requests := hotRequestsPerAsker * max(fanout, 1)
	return max(1, min(hotBatch, (units+requests-1)/requests))
}

// askHot asks the hot stores for every unit's partial state, hotBatchSize buckets a request
// and at most the fan-out requests at once (the coordinator's goroutine among the askers) —
// for a count(*) alone over every partition, on a store that sums counts
// (routing.SummedCounter), first all of them in one Summed request, and so only if the store
// refuses it (routing.ErrNotSummed) — then yields them (yieldHot). Each request holds a
// ledger reservation (one fragment) while it runs.
func (s *storeStream) askHot() error {
	units := s.n.units
	h := s.n.hot
	answers := make([]routing.RowAnswer, len(units))
	// ask asks units[lo:hi] in one request (summed: routing.RowAggregate.Summed), its answers
	// into answers[lo:hi].
	ask := func(lo, hi int, summed bool) error {
		// A chunk the route cache knows archived throughout is the partial-aggregate port's
		// (AggregateRows would decline every bucket of it): no request is built.
		archived := true
		for _, u := range units[lo:hi] {
			if _, ok := s.n.src.Table.ArchivedKey(u.bucket); !ok {
				archived = false
				break
			}
		}
		if archived {
			for i := lo; i < hi; i++ {
				answers[i].Declined = true
			}
			return nil
		}
		bs := make([]routing.BucketID, hi-lo)
		for i := range bs {
			bs[i] = units[lo+i].bucket
		}
		s.rt.started.Add(int64(hi - lo))
		res := s.rt.mem.Reserve(0)
		as, err := s.n.src.Table.AggregateRows(s.ctx, bs, h.request(s.n.src.Range, s.rt.mem, summed))
		res.Release()
		switch {
		case errors.Is(err, routing.ErrNoAggregate):
			for i := lo; i < hi; i++ {
				answers[i].Declined = true
			}
		case err != nil:
			s.rt.started.Add(-int64(hi - lo))
			return err
		default:
			copy(answers[lo:hi], as)
		}
		return nil
	}
	if h.summable() && s.n.src.Present != nil && h.q.CountsOnly() && s.n.src.Table.SumsCounts() {
		// Every partition's count(*) in range, merged into one state: first one request,
		// which the store answers with one statement (PostgreSQL: one count of the range,
		// routing/cockroach/rowagg.go, "Summed counts") or refuses (ErrNotSummed); other
		// shapes and stores, and a refusal, go as many requests at once, answered bucket by
		// bucket.
		err := ask(0, len(units), true)
		switch {
		case err == nil:
			return s.yieldHot(answers)
		case !errors.Is(err, routing.ErrNotSummed):
			return err
		}
	}
	batch := hotBatchSize(len(units), s.fanout)
	chunks := (len(units) + batch - 1) / batch
	err := s.each(chunks, "hot row aggregate", func(c int) error {
		return ask(c*batch, min((c+1)*batch, len(units)), false)
	})
	if err != nil {
		routing.ReleaseAnswers(answers)
		return err
	}
	return s.yieldHot(answers)
}

// yieldHot sets out to yield, in unit order, each run of answered buckets' partial states
// (combine) and each run of buckets no store answered (archived, declined): through the
// partial-aggregate port when the node has a store rewrite, else as row-reading fragments
// under the fan-out bound. It takes over the answers' readers.
func (s *storeStream) yieldHot(answers []routing.RowAnswer) error {
	units := s.n.units
	h := s.n.hot
	var outs []array.RecordReader
	for i := 0; i < len(units); {
		if !answers[i].Declined {
			// A run of answered buckets is handed on as few batches (combine): a query over
			// a thousand small buckets would otherwise feed the final aggregate a thousand
			// one-row batches.
			j := i + 1
			for j < len(units) && !answers[j].Declined {
				j++
			}
			for k := i; k < j; k++ {
				s.rt.pushed.Add(1)
				s.rt.countTier(routing.TierHot)
				s.rt.analysis.tier(s.n, opStore, routing.TierHot)
			}
			r, err := h.combine(answers[i:j], units[i:j], s.n.partialSch, s.rt.mem)
			if err != nil {
				routing.ReleaseAnswers(answers[j:])
				for _, o := range outs {
					o.Release()
				}
				return err
			}
			outs = append(outs, s.rt.analysis.track(s.n, opStore, r))
			i = j
			continue
		}
		j := i + 1
		for j < len(units) && answers[j].Declined {
			j++
		}
		// Each of these units was counted as started when asked; its fragment or port ask
		// counts it again.
		s.rt.started.Add(-int64(j - i))
		rest := *s.n
		rest.analyzed = s.n.analysisNode()
		rest.hot, rest.units = nil, units[i:j]
		if s.n.store != nil {
			// A shape the partial-aggregate port answers: archived buckets (and every bucket
			// of a store without the row-aggregate port) are asked there, on this light path.
			outs = append(outs, newStoreStream(s.ctx, s.rt, &rest))
		} else {
			s.rt.fellBack.Add(int64(j - i))
			outs = append(outs, newFragmentStream(s.ctx, s.rt, &rest, s.n.partialSch, -1))
		}
		i = j
	}
	switch len(outs) {
	case 0:
		r, err := array.NewRecordReader(s.n.partialSch, nil)
		if err != nil {
			return err
		}
		s.out = r
	case 1:
		s.out = outs[0]
	default:
		s.out = ops.UnionAll(outs)
	}
	return nil
}

// request is the row-aggregate request of a fragment over rng, its batches allocated from
// alloc; summed as routing.RowAggregate.Summed.
func (h *hotAggregate) request(rng routing.TimeRange, alloc memory.Allocator, summed bool) routing.RowAggregate {
	q := h.q
	q.Range, q.Alloc, q.Summed = rng, alloc, summed
	return q
}

// summable reports whether the buckets' partial states may be answered merged into one
// (routing.RowAggregate.Summed): an ungrouped aggregate, whose final aggregate only merges
// them, and whose state columns are all the store's (no partition key, no hotZero column).
func (h *hotAggregate) summable() bool {
	if h.q.Grouped || len(h.q.Groups) > 0 {
		return false
	}
	for _, c := range h.from {
		if c < 0 {
			return false
		}
	}
	return true
}

// combineRows is the most rows combine puts in one batch.
const combineRows = 1 << 16

// combine reads the answers as (answered buckets, unit for unit) and returns their partial
// states as batches of the partial-aggregate schema partial, up to combineRows rows each
// (an answer is never split), allocated from alloc: the answer's columns as h.from maps
// them, the unit's partition key where the aggregate groups by the partition column. It
// releases every answer's reader. An answer of another schema is ErrOperationFailed.
func (h *hotAggregate) combine(as []routing.RowAnswer, us []unit, partial *arrow.Schema, alloc memory.Allocator) (array.RecordReader, error) {
	var (
		out     []arrow.RecordBatch
		pending [][]arrow.Array // per answer column, the slices of the batch being built
		parts   []string        // per row of the batch being built, its partition key
		rows    int64
	)
	release := func() {
		for _, b := range out {
			b.Release()
		}
		for _, cs := range pending {
			for _, c := range cs {
				c.Release()
			}
		}
	}
	defer routing.ReleaseAnswers(as)
	flush := func() error {
		if rows == 0 {
			return nil
		}
		cols := make([]arrow.Array, len(h.from))
		defer func() {
			for _, c := range cols {
				if c != nil {
					c.Release()
				}
			}
		}()
		for i, c := range h.from {
			if c == hotZero {
				b := array.NewFloat64Builder(alloc)
				b.AppendEmptyValues(int(rows))
				cols[i] = b.NewArray()
				b.Release()
				continue
			}
			if c < 0 {
				b := array.NewStringBuilder(alloc)
				for _, p := range parts {
					b.Append(p)
				}
				cols[i] = b.NewArray()
				b.Release()
				continue
			}
			a, err := array.Concatenate(pending[c], alloc)
			if err != nil {
				return err
			}
			cols[i] = a
		}
		out = append(out, array.NewRecordBatch(partial, cols, rows))
		for _, cs := range pending {
			for _, c := range cs {
				c.Release()
			}
		}
		pending, parts, rows = nil, parts[:0], 0
		return nil
	}
	for k, a := range as {
		if a.Reader == nil {
			continue // merged into another answer's state (RowAnswer.Summed)
		}
		for a.Reader.Next() {
			b := a.Reader.RecordBatch()
			if !b.Schema().Equal(h.q.Schema) {
				release()
				return nil, fmt.Errorf("%w: a partial aggregate of schema %v", routing.ErrOperationFailed, b.Schema())
			}
			if b.NumRows() == 0 {
				continue
			}
			if rows > 0 && rows+b.NumRows() > combineRows {
				if err := flush(); err != nil {
					release()
					return nil, err
				}
			}
			if pending == nil {
				pending = make([][]arrow.Array, h.q.Schema.NumFields())
			}
			for c := range pending {
				col := b.Column(c)
				col.Retain()
				pending[c] = append(pending[c], col)
			}
			for range b.NumRows() {
				parts = append(parts, string(us[k].partition))
			}
			rows += b.NumRows()
		}
		if err := a.Reader.Err(); err != nil {
			release()
			return nil, err
		}
	}
	if err := flush(); err != nil {
		release()
		return nil, err
	}
	r, err := array.NewRecordReader(partial, out)
	for _, b := range out {
		b.Release()
	}
	return r, err
}

// explain describes the rewrite for EXPLAIN: shapes only, never a key, constant or value.
// ported says the buckets no hot statement answered are asked through the partial-aggregate
// port (the node's store rewrite) rather than reading rows.
func (h *hotAggregate) explain(ported bool) []string {
	if ported {
		return []string{
			"HotAggregate " + h.q.Explain() + ": the hot store answers the buckets with their routes (PostgreSQL many a statement, SQLite one a bucket); archived buckets and stores without it ask the partial-aggregate port:",
		}
	}
	return []string{
		"HotAggregate " + h.q.Explain() + ": the hot store runs the filter and partial aggregate over the buckets' rows with their routes (PostgreSQL many buckets a statement, SQLite one a bucket); archived buckets and buckets the store declines read rows:",
	}
}
