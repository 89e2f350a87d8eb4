package scan

import (
	"fmt"
	"math"
	"strings"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/scan/aggregate"
	"github.com/flightsrv/flightsrv/scan/ops"
	"github.com/flightsrv/flightsrv/substrait"
)

// Pushdown as a rewrite of the fragment plan (architecture.md, "The executor and its
// fragments"; the seed's aggregate-pushdown proposal). A fragment whose pipeline is
//
//	routed read → (only route-implied conjuncts) → partial aggregate
//
// whose measures are all count(*), min(timestamp) and max(timestamp), grouped by nothing or by
// one time bin of the timestamp (round_calendar/round_temporal as substrait/timebin.go
// documents), has its read and partial aggregate replaced by one call of the bucket's
// partial-aggregate port (routing.DurableTable.AggregateBucket): a hot bucket answers with one
// key-only statement, an archived one from its manifest or trusted statistics. The store's
// answer has the partial aggregate's schema, so the coordinator's final aggregate combines
// store answers and row-reading fragments alike. A bucket whose store cannot answer without
// rows (routing.ErrNoAggregate) reads its rows in that fragment. Any other shape is left
// unchanged (Mimir's astmapper rule: unsupported subtrees are not an error), and the reason is
// reported in EXPLAIN. The match is made on the lowered relations, wherever the routed
// aggregate sits in the plan (under a Sort, Fetch or Project, on one side of a UNION ALL).

// storeAggregate is the rewrite of one routed aggregate: what each fragment asks its store and
// how the answer's columns map onto the partial-aggregate schema.
type storeAggregate struct {
	bin             *routing.Binning
	count, min, max bool
	// cols are the port answer's columns in aggregate.PartialSchema order.
	cols []int
	// minCol and maxCol are the partial-state columns of the first MIN and MAX measure when
	// every measure is MIN or MAX of the timestamp and the aggregate is ungrouped over one
	// partition: the launch policy then stops starting buckets once earlier ones answered
	// (-1: not asked).
	minCol, maxCol int
	early          bool
	measures       []string
}

// request is the port request of a fragment over rng, its batches allocated from alloc.
func (s *storeAggregate) request(rng routing.TimeRange, alloc memory.Allocator) routing.AggregateRequest {
	return routing.AggregateRequest{Range: rng, Bin: s.bin, Count: s.count, Min: s.min, Max: s.max, Alloc: alloc}
}

// matchStoreAggregate matches a routed aggregate (inputs over the base schema) against the
// shapes the stores answer. It returns the rewrite, or nil and the reason it does not apply
// (a shape, never a value).
func matchStoreAggregate(rp *routedPlan, agg *aggTail, partial *arrow.Schema) (*storeAggregate, string) {
	if len(rp.filters) > 0 {
		return nil, fmt.Sprintf("%d residual conjunct(s) beyond the routed predicate", len(rp.filters))
	}
	spec := agg.spec
	s := &storeAggregate{minCol: -1, maxCol: -1}
	switch len(spec.Groups) {
	case 0:
		if len(spec.Measures) == 0 {
			return nil, "no measure"
		}
	case 1:
		bin, ok := substrait.TimeBinOf(agg.inputs[spec.Groups[0]], rp.src.Table.Def())
		if !ok {
			return nil, "grouping other than one time bin of timestamp"
		}
		s.bin = &bin
	default:
		return nil, fmt.Sprintf("grouping by %d keys", len(spec.Groups))
	}
	grouped := s.bin != nil
	if grouped {
		s.cols = append(s.cols, routing.PartialColumn(true, -1))
	}
	for _, m := range spec.Measures {
		if m.Filter >= 0 {
			return nil, "a measure with a FILTER clause"
		}
		which := -1
		switch m.Func {
		case aggregate.CountStar:
			which, s.count = 0, true
		case aggregate.Min, aggregate.Max:
			if c, ok := baseRef(agg.inputs[m.Arg]); !ok || c != colTimestamp {
				return nil, fmt.Sprintf("%s of anything but timestamp", strings.ToLower(m.Func.String()))
			}
			which, s.min = 1, true
			if m.Func == aggregate.Max {
				which, s.min, s.max = 2, false, true
			}
		default:
			return nil, fmt.Sprintf("measure %s (the stores answer count(*), min(timestamp) and max(timestamp))", m.Func)
		}
		s.measures = append(s.measures, measureName(m.Func))
		s.cols = append(s.cols, routing.PartialColumn(grouped, which))
	}
	s.min = false // a MAX alone must not ask for MIN
	for _, m := range spec.Measures {
		s.min = s.min || m.Func == aggregate.Min
	}
	port := routing.PartialAggregateSchema(grouped)
	if len(s.cols) != partial.NumFields() {
		return nil, "partial state of another width"
	}
	for i, c := range s.cols {
		if !arrow.TypeEqual(port.Field(c).Type, partial.Field(i).Type) {
			return nil, "partial state of other types"
		}
	}
	if !grouped && !s.count && len(rp.src.Partitions) == 1 {
		s.early = true
		off := 0
		for i, m := range spec.Measures {
			switch {
			case m.Func == aggregate.Min && s.minCol < 0:
				s.minCol = off + i
			case m.Func == aggregate.Max && s.maxCol < 0:
				s.maxCol = off + i
			}
		}
	}
	return s, ""
}

func measureName(f aggregate.Func) string {
	switch f {
	case aggregate.Min:
		return "min(timestamp)"
	case aggregate.Max:
		return "max(timestamp)"
	}
	return "count(*)"
}

// explain describes the rewrite (or why there is none) for EXPLAIN: shapes only, never a
// partition value or literal.
func (s *storeAggregate) explain(strategy routing.Strategy) []string {
	what := "[" + strings.Join(s.measures, ", ") + "]"
	if s.bin != nil {
		what += " grouped by " + s.bin.Shape()
	}
	out := []string{
		"StoreAggregate " + what + ": pushed down to the bucket's partial-aggregate port (hot: one key-only statement; archived: manifest record count or trusted statistics, decoding only event_time where they do not settle a row group or page)",
	}
	switch {
	case s.bin != nil && routing.StrategyInsideBins(strategy, *s.bin):
		out = append(out, fmt.Sprintf("  every %s bucket lies inside one bin: each bucket is asked ungrouped (hot count, manifest record count or statistics)", strategy))
	case s.bin != nil:
		out = append(out, "  a bucket whose part of the range lies inside one bin is asked ungrouped; others answer per bin (one GROUP BY statement per hot bucket)")
	}
	if s.early {
		out = append(out, "  buckets start in time order from the ends the measures need; none starts once earlier ones answered")
	}
	return append(out, "  a bucket the store cannot answer without rows (untrusted statistics) reads its rows:")
}

// extremeStop is the MIN/MAX launch policy's state: a walk from the first bucket (time order)
// while MIN is unanswered and one from the last while MAX is, taking turns; minAt is the
// least unit that answered a non-null MIN and maxAt the greatest that answered a non-null
// MAX. Buckets of a partition never overlap in time, so once a MIN is answered no later
// bucket can lower it (symmetrically for MAX): the walks stop and the buckets between them
// never start. next is called by the coordinator only; observe by the fragments.
type extremeStop struct {
	s            *storeAggregate
	minAt, maxAt atomic.Int64
	lo, hi       int // the next unit of each walk
	turn         bool
}

func newExtremeStop(s *storeAggregate, units int) *extremeStop {
	e := &extremeStop{s: s, hi: units - 1}
	e.minAt.Store(math.MaxInt64)
	e.maxAt.Store(-1)
	return e
}

// next returns the next unit to start and whether the MAX walk (from the last bucket) takes
// it, or -1 when no unstarted unit can change the answer.
func (e *extremeStop) next() (int, bool) {
	if e.lo > e.hi {
		return -1, false
	}
	minOpen := e.s.minCol >= 0 && e.minAt.Load() == math.MaxInt64
	maxOpen := e.s.maxCol >= 0 && e.maxAt.Load() < 0
	e.turn = !e.turn
	switch {
	case minOpen && (e.turn || !maxOpen):
		e.lo++
		return e.lo - 1, false
	case maxOpen:
		e.hi--
		return e.hi + 1, true
	}
	return -1, false
}

// observe records what unit u, taken by the MAX walk when fromEnd, answered in its partial
// state b; it reports whether it answered its walk's extreme. Only a walk's own units settle
// it: a MAX found by the MIN walk says nothing of the buckets after it, which the MAX walk has
// not reached.
func (e *extremeStop) observe(u int, fromEnd bool, b arrow.RecordBatch) bool {
	found := false
	if c := e.s.minCol; c >= 0 && !fromEnd && hasValue(b.Column(c)) {
		found = true
		for x := e.minAt.Load(); int64(u) < x && !e.minAt.CompareAndSwap(x, int64(u)); x = e.minAt.Load() {
		}
	}
	if c := e.s.maxCol; c >= 0 && fromEnd && hasValue(b.Column(c)) {
		found = true
		for x := e.maxAt.Load(); int64(u) > x && !e.maxAt.CompareAndSwap(x, int64(u)); x = e.maxAt.Load() {
		}
	}
	return found
}

func hasValue(a arrow.Array) bool { return a.Len() > a.NullN() }

// walks is how many fragments start first: one per end.
func (e *extremeStop) walks() int {
	if e.s.minCol >= 0 && e.s.maxCol >= 0 {
		return 2
	}
	return 1
}

// storeReader conforms a port answer to the partial-aggregate schema.
func (s *storeAggregate) reader(r array.RecordReader, partial *arrow.Schema) array.RecordReader {
	return conform(ops.Select(r, s.cols), partial)
}
